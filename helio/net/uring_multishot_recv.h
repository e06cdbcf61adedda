// MultishotRecv: the receiving side of a UringSocket whose ring has provided buffers.
//
// One multishot receive stays armed on the socket for as long as someone reads it: the
// kernel keeps its readiness poll registered and posts a completion per arrival, with
// the bytes in one of the proactor's provided buffers. A request/response connection
// therefore costs no submission and no poll arm per request, which a plain receive
// (re-armed after every request) does. Each completion's bytes are copied at once into
// the buffer of the receive that waits (StartRecv's), or else into a small inbox, and
// the provided buffer goes straight back to the kernel.
//
// Big reads: while the bytes stream in (receives have brought kStreamingBytes or more
// on average: big requests or deep pipelines), and for a receive with room for more than
// kDirectBytes (a big request on its way), a plain receive reads straight into the
// receive's buffer, as the fallback path does. The multishot receive is cancelled first
// (only one receive is ever in flight, so bytes keep their order) and armed again by the
// next small receive. Through provided buffers such a read would cost a completion and a
// copy per 4 KiB.
//
// Lifetime: the socket owns this object until it closes; then Release hands it to itself
// (its request may still be in flight) and it is freed when the kernel ends the request.
//
// Bounds: the inbox holds at most about kInboxBytes; when it fills (a client that
// pipelines while its connection is busy elsewhere), the receive is cancelled and armed
// again only once the inbox has been read, so the kernel's socket buffer, not this
// process, takes the backlog, as with a plain receive.
//
// Threading: everything runs on the socket's proactor thread. Start/Finish follow
// FiberSocket's StartRecv/FinishRecv contract; Interrupt, Cancel and NotifyWhenReadable
// those of InterruptRecv, CancelIo and NotifyWhenReadable.
#pragma once

#include <boost/fiber/context.hpp>
#include <functional>
#include <string>

#include "absl/types/span.h"
#include "helio/io/uring_proactor.h"
#include "helio/net/result.h"

namespace helio::net {

class MultishotRecv {
 public:
  static constexpr size_t kInboxBytes = 64 * 1024;
  static constexpr size_t kDirectBytes = 32 * 1024;
  static constexpr size_t kStreamingBytes = 2048;

  // `file_slot` is the socket's registered file slot, or -1 to name it by `fd`.
  MultishotRecv(io::UringProactor* proactor, int fd, int file_slot);
  // Only through Release, or for a released one when its thread exits.
  ~MultishotRecv() = default;
  MultishotRecv(const MultishotRecv&) = delete;
  MultishotRecv& operator=(const MultishotRecv&) = delete;

  void Start(absl::Span<uint8_t> buf);
  Result<size_t> Finish();
  void Interrupt();
  void NotifyWhenReadable(std::function<void()> on_readable);
  // The socket's I/O ends: the waiting receive and all later ones fail with ECANCELED.
  void Cancel();

  // The socket closes: cancels the receive and frees this object once the kernel has
  // ended it (at once if it is not armed). The caller must not use it any more.
  static void Release(MultishotRecv* recv);

 private:
  struct Request : io::UringProactor::Request {
    MultishotRecv* owner = nullptr;
  };
  static void OnComplete(io::UringProactor::Request* request);
  static void OnDirectComplete(io::UringProactor::Request* request);

  void Arm();
  void SubmitDirect();
  // Records the end of all receiving: 0 for the peer's close, or -errno.
  void End(int result);
  // Released and nothing in flight: deletes this.
  bool DeleteIfDone();
  void CancelRequest();
  // Copies arrived bytes into the started receive's buffer, the rest into the inbox.
  void Deliver(const uint8_t* data, size_t size);
  // Moves inbox bytes into the started receive's buffer.
  void TakeFromInbox();
  size_t inbox_size() const { return inbox_.size() - inbox_head_; }
  // Wakes the fiber in Finish and runs NotifyWhenReadable's callback, if any.
  void Wake();

  io::UringProactor* const proactor_;
  const int fd_;
  const int file_slot_;
  Request request_;         // the multishot receive
  Request direct_;          // a plain receive into the started buffer
  bool armed_ = false;        // request_ is in flight
  bool direct_armed_ = false; // direct_ is in flight
  bool want_direct_ = false;  // the started receive reads directly once request_ ends
  // Bytes per completion, a moving average over about the last 8 (multishot or direct).
  size_t average_received_ = 0;
  void NoteReceived(size_t bytes) {
    average_received_ = average_received_ - average_received_ / 8 + bytes / 8;
  }
  bool Streaming() const { return average_received_ >= kStreamingBytes; }
  bool cancel_sent_ = false;  // for the armed request
  bool cancelled_ = false;    // Cancel was called
  bool released_ = false;     // Release was called: nobody reads any more

  // The started receive.
  bool started_ = false;
  absl::Span<uint8_t> buf_;
  size_t filled_ = 0;
  boost::fibers::context* waiter_ = nullptr;  // suspended in Finish
  bool interrupted_ = false;

  std::string inbox_;  // bytes from inbox_head_ on are unread
  size_t inbox_head_ = 0;
  // The receive's end, reported once the inbox is empty: 0 for the peer's close, or -errno.
  bool ended_ = false;
  int end_result_ = 0;
  std::function<void()> on_readable_;
};

}  // namespace helio::net
