// UringProactor: a Proactor over one io_uring per thread.
//
// A fiber prepares a submission entry, then Execute() suspends it until the matching
// completion arrives; the loop submits all entries prepared since its last poll in one
// io_uring_enter, so many fibers' requests share a syscall. The loop blocks with
// io_uring_submit_and_wait_timeout, whose timeout is the earliest fiber deadline
// (fiber sleep and timed waits therefore run through the ring). Other threads wake it
// through an eventfd that always has a read request pending in the ring.
//
// Thread-safety: everything but the Proactor base's thread-safe calls is for the owning
// thread only.
#pragma once

#include <liburing.h>

#include <boost/fiber/context.hpp>

#include "helio/io/proactor.h"

namespace helio::io {

class UringProactor final : public Proactor {
 public:
  // An I/O request in flight. It lives on the waiting fiber's stack until its completion
  // arrives (also when cancelled: cancellation completes the request with -ECANCELED).
  // A request started with Submit has no fiber: it lives in its owner and its
  // on_complete runs instead.
  struct Request {
    boost::fibers::context* waiter = nullptr;
    int32_t result = 0;
    void (*on_complete)(Request* request) = nullptr;
  };

  UringProactor(unsigned index, size_t task_queue_capacity, unsigned ring_entries = 1024);
  ~UringProactor() override;

  ProactorKind kind() const override { return ProactorKind::kUring; }
  absl::Status Init() override;

  // Own thread. Returns a submission entry to fill; never null (a full submission queue
  // is flushed first). The entry goes to the kernel with the loop's next batch.
  io_uring_sqe* GetSqe();

  // Fiber on the own thread. Binds the filled `sqe` to `request`, suspends the calling
  // fiber until the request completes and returns the completion's result (>= 0, or
  // -errno).
  int Execute(io_uring_sqe* sqe, Request* request);

  // Own thread, any context. Binds the filled `sqe` to `request` without suspending
  // anything: when the request completes, request->on_complete(request) runs on this
  // thread in the dispatcher context (it must not suspend; it may launch a fiber).
  // REQUIRES: request->on_complete is set; *request outlives the completion.
  void Submit(io_uring_sqe* sqe, Request* request);

  // Own thread, any context. Asks the kernel to cancel `request` if it is still in
  // flight; its fiber then wakes with -ECANCELED (or with its result if it won the race).
  void Cancel(Request* request);

  // Whether io_uring can be used here, with the operations helio needs. Fails with a
  // reason under kernels without io_uring and seccomp profiles that block it (Docker's
  // default: EPERM, podman's: ENOSYS).
  static absl::Status CheckAvailable();

 protected:
  void PollEvents(fibers::Clock::time_point deadline, bool may_block) override;
  void Interrupt() override;

 private:
  void ArmWakeRead();
  void ReapCompletions();

  const unsigned ring_entries_;
  io_uring ring_{};
  bool ring_ready_ = false;
  int wake_fd_ = -1;
  uint64_t wake_value_ = 0;  // target of the pending eventfd read
};

}  // namespace helio::io
