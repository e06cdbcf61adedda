// UringSocket: FiberSocket over io_uring requests (recv, sendmsg, accept, connect).
// See fiber_socket.h for the threading contract.
#pragma once

#include "helio/io/uring_proactor.h"
#include "helio/net/fiber_socket.h"
#include "helio/net/uring_multishot_recv.h"

namespace helio::net {

class UringSocket final : public FiberSocket {
 public:
  // Takes ownership of `fd` and switches it to blocking mode: io_uring waits for
  // readiness itself, while a non-blocking fd would hand EAGAIN back to us.
  UringSocket(io::UringProactor* proactor, int fd);

  // Closes here, not in ~FiberSocket, where OnClose would no longer reach this class.
  ~UringSocket() override { Close(); }

  Result<size_t> Recv(absl::Span<uint8_t> buf) override;
  void StartRecv(absl::Span<uint8_t> buf) override;
  Result<size_t> FinishRecv() override;
  Result<size_t> WriteSome(const iovec* iov, size_t iov_count) override;
  Result<int> AcceptFd() override;
  std::error_code Connect(const SocketAddress& address) override;
  void CancelIo() override;
  bool WaitHangup() override;
  void CancelHangupWait() override;
  void InterruptRecv() override;
  void NotifyWhenReadable(std::function<void()> on_readable) override;

 protected:
  // A request in flight holds its own reference to the file, so closing the fd would
  // not end it: cancel it, and its fiber wakes with ECANCELED.
  // Empties the socket's registered file slot too: the table's reference would keep
  // the socket open after close(2).
  void OnClose() override;

 private:
  io::UringProactor* uring() const { return static_cast<io::UringProactor*>(proactor()); }
  // Runs the request prepared in `sqe` as this socket's read or write request, so that
  // CancelIo can find it.
  int Execute(io_uring_sqe* sqe, io::UringProactor::Request** slot);
  // Makes the prepared `sqe` name this socket by its registered slot, when it has one.
  void NameFile(io_uring_sqe* sqe) const;

  struct ReadablePoll : io::UringProactor::Request {
    UringSocket* socket = nullptr;
  };
  static void OnReadable(io::UringProactor::Request* request);

  // StartRecv's request: completes while its fiber may be busy elsewhere (sending), so
  // it records the result for FinishRecv and wakes the fiber only if it waits there.
  struct StartedRecv : io::UringProactor::Request {
    boost::fibers::context* fiber = nullptr;  // waiting in FinishRecv
    bool done = false;
    bool poll_first = false;
  };
  static void OnStartedRecv(io::UringProactor::Request* request);
  // Whether the next receive should arm its poll first (see recv_drained_).
  bool PollFirst() const;

  io::UringProactor::Request* pending_read_ = nullptr;
  // NotifyWhenReadable's poll; armed while readable_poll_.on_complete is set.
  ReadablePoll readable_poll_;
  io::UringProactor::Request* pending_write_ = nullptr;
  io::UringProactor::Request* pending_hangup_ = nullptr;  // WaitHangup's poll
  // The last Recv returned less than it asked for: the socket is likely empty, so the
  // next one arms its poll first instead of trying an inline receive that would fail.
  bool recv_drained_ = false;
  StartedRecv started_recv_;
  int file_slot_ = -1;  // in the proactor's registered file table; -1: none
  // Receives through one multishot request when the ring has provided buffers (created
  // by the first receive); the receive above is the fallback. Released on close.
  MultishotRecv* multishot_ = nullptr;
  MultishotRecv* multishot();
};

}  // namespace helio::net
