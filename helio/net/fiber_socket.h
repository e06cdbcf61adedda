// FiberSocket: a TCP socket whose operations suspend the calling fiber, not the thread.
//
// Contracts:
//  - A socket belongs to the proactor it was created on. All calls are for fibers of
//    that proactor's thread, except Shutdown() and CancelIo(), which may also run in
//    one of its tasks (so another thread can stop a connection through Dispatch/Await).
//  - At most one fiber reads (Recv, StartRecv to FinishRecv, Accept) and one fiber writes
//    (Send/Writev/Connect) at a time: a connection may read and write concurrently from
//    two fibers.
//  - Writes use MSG_NOSIGNAL: a closed peer is an EPIPE, never a SIGPIPE.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <system_error>

#include "absl/types/span.h"
#include "helio/io/proactor.h"
#include "helio/net/result.h"
#include "helio/net/socket_address.h"

namespace helio::net {

class FiberSocket {
 public:
  // Subclasses close in their own destructor (OnClose is virtual); this one only
  // catches what they left open.
  virtual ~FiberSocket();
  FiberSocket(const FiberSocket&) = delete;
  FiberSocket& operator=(const FiberSocket&) = delete;

  int fd() const { return fd_; }
  io::Proactor* proactor() const { return proactor_; }
  bool is_open() const { return fd_ >= 0; }

  // Receives up to buf.size() bytes; 0 means the peer closed its side.
  virtual Result<size_t> Recv(absl::Span<uint8_t> buf) = 0;

  // Recv in two steps: StartRecv arms the receive into `buf` without waiting, FinishRecv
  // waits for it and returns what Recv would have. A request/response connection arms
  // its next receive before it sends a reply, so that what the peer sends in answer is
  // taken in the order it arrives among this thread's sockets even when the fiber is
  // slow to come back (io_uring sees only the receives that are armed: a socket that was
  // not armed when its bytes came is served after an armed one whose bytes came later;
  // epoll reports readiness in arrival order, so there both calls simply run Recv).
  // `buf` belongs to the socket until FinishRecv returns. InterruptRecv and CancelIo
  // end an armed receive as they end a pending Recv.
  // REQUIRES: no other receive pending; FinishRecv runs before the socket is closed
  // (after CancelIo or InterruptRecv if the bytes may never come).
  virtual void StartRecv(absl::Span<uint8_t> buf) { started_recv_buf_ = buf; }
  virtual Result<size_t> FinishRecv() { return Recv(started_recv_buf_); }

  // Sends some of the bytes in iov (at least one unless it fails); returns how many.
  virtual Result<size_t> WriteSome(const iovec* iov, size_t iov_count) = 0;

  // Accepts a connection on a listening socket; returns its fd (close-on-exec). Adopt
  // it on any proactor with CreateSocket.
  virtual Result<int> AcceptFd() = 0;

  // Connects to `address`.
  virtual std::error_code Connect(const SocketAddress& address) = 0;

  // Fails the pending and all later I/O on this socket with ECANCELED.
  virtual void CancelIo() = 0;
  // Whether CancelIo was called.
  bool io_cancelled() const { return cancelled_; }

  // Makes the pending Recv, or the next one when none is pending, fail with ECANCELED,
  // once (a Recv that already has its bytes returns them instead); unlike CancelIo, later
  // I/O works. For a connection that stops waiting with a buffer to wait with
  // NotifyWhenReadable instead. Own thread, any context.
  virtual void InterruptRecv() = 0;

  // A wait for input that holds no fiber and no buffer: `on_readable` runs once, on the
  // socket's thread in the dispatcher context or a fiber (it must not suspend; it
  // typically launches the fiber that calls Recv), when bytes, a close or an error can be
  // read, or when CancelIo is called (also if it was called before). Connections that
  // sit idle wait this way (see Connection::HandleRequests).
  // REQUIRES: no Recv pending and no other such wait armed; the socket outlives the call.
  virtual void NotifyWhenReadable(std::function<void()> on_readable) = 0;

  // Suspends until the peer hangs up (closes or shuts down its side; an error counts)
  // and returns true, or until CancelHangupWait() from another fiber or task of this
  // thread and returns false. Data that arrives meanwhile stays unread in the socket.
  // It counts as the socket's reader: no Recv may run while it waits. For a connection
  // whose fiber is busy with one long command (a blocked BLPOP) and must still learn
  // that its client left.
  virtual bool WaitHangup() = 0;
  virtual void CancelHangupWait() = 0;

  // Sends all of buf / all of the iovecs, across as many partial writes as it takes.
  std::error_code Send(absl::Span<const uint8_t> buf);
  std::error_code Writev(const iovec* iov, size_t iov_count);

  // Receives exactly buf.size() bytes; an early close is ECONNRESET.
  std::error_code RecvExact(absl::Span<uint8_t> buf);

  // shutdown(2): a pending Recv returns 0, a pending or later write fails.
  std::error_code Shutdown(int how);

  // Closes the fd now (also done by the destructor).
  void Close();

 protected:
  FiberSocket(io::Proactor* proactor, int fd) : proactor_(proactor), fd_(fd) {}
  // Detaches the fd from the proactor (epoll registration, in-flight io_uring requests)
  // just before close(2).
  virtual void OnClose() {}

  bool cancelled_ = false;
  bool recv_interrupted_ = false;         // InterruptRecv
  absl::Span<uint8_t> started_recv_buf_;  // StartRecv's buffer
  std::function<void()> on_readable_;     // NotifyWhenReadable

 private:
  io::Proactor* const proactor_;
  int fd_;
};

// Wraps `fd` (a connected, listening or fresh TCP socket) for `proactor`. Call on that
// proactor's thread.
std::unique_ptr<FiberSocket> CreateSocket(io::Proactor* proactor, int fd);

// Fiber on a proactor thread: connects a new socket of that proactor to `address`.
Result<std::unique_ptr<FiberSocket>> ConnectTcp(const SocketAddress& address);

// Fiber on a proactor thread: wraps a fresh listening socket.
absl::StatusOr<std::unique_ptr<FiberSocket>> ListenOn(const SocketAddress& address,
                                                      int backlog);

}  // namespace helio::net
