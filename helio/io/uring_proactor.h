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
#include <memory>
#include <vector>

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
    uint32_t cqe_flags = 0;  // the completion's flags (IORING_CQE_F_MORE, buffer id)
    void (*on_complete)(Request* request) = nullptr;
  };

  // Provided receive buffers (a registered buffer ring) for multishot receives: the
  // kernel picks one per completion and names it in the completion's flags; its owner
  // copies the bytes out and gives it back at once, so the ring stays full.
  static constexpr uint16_t kRecvBufferGroup = 0;
  static constexpr unsigned kRecvBufferCount = 256;
  static constexpr unsigned kRecvBufferBytes = 4096;

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

  // Own thread. Registered files: a socket that holds a slot of the ring's file table
  // names it in its requests (IOSQE_FIXED_FILE), which spares the kernel a lookup and a
  // reference count of the file per request. RegisterFile returns the slot, or -1 when
  // the table is full or missing (the socket then names its fd). UnregisterFile empties
  // the slot at once, so that close(2) on the fd really closes the socket; the slot is
  // handed out again only after the next submission, so that a request prepared for the
  // old socket and not yet submitted fails with EBADF instead of reaching a new one.
  int RegisterFile(int fd);
  void UnregisterFile(int slot);

  // Rings initialised after SetRecvBuffersEnabled(false) have no provided buffers, so
  // their sockets take the single-shot receive path that kernels before 6.0 use (for
  // tests of that path). Call before the pool starts.
  static void SetRecvBuffersEnabled(bool enabled);

  // Own thread. Whether the ring has the provided receive buffers (used from Linux 6.0).
  bool has_recv_buffers() const { return recv_buffer_ring_ != nullptr; }
  // The bytes of provided buffer `id`, and giving it back to the kernel.
  const uint8_t* RecvBuffer(uint16_t id) const {
    return recv_buffers_.get() + size_t(id) * kRecvBufferBytes;
  }
  void ReturnRecvBuffer(uint16_t id);

  // Whether io_uring can be used here, with the operations helio needs. Fails with a
  // reason under kernels without io_uring and seccomp profiles that block it (Docker's
  // default: EPERM, podman's: ENOSYS).
  static absl::Status CheckAvailable();

 protected:
  void PollEvents(fibers::Clock::time_point deadline, bool may_block) override;
  void Interrupt() override;
  // Completions in the ring, or task work the kernel deferred to our next enter
  // (IORING_SQ_TASKRUN: a receive's data under DEFER_TASKRUN) are read from shared memory.
  bool CanPollIdle() const override { return true; }
  bool EventsPending() override;
  void SubmitPending() override;

 private:
  // Completions the kernel holds until we enter it (deferred task work, CQ overflow).
  bool KernelHasEvents() const;
  void ArmWakeRead();
  void ReapCompletions();
  void InitFileTable();
  void InitRecvBuffers();

  // The registered file table: slots never used start at next_file_slot_; freed ones
  // wait in retired_file_slots_ for a submission, then go to free_file_slots_.
  unsigned file_table_size_ = 0;
  unsigned next_file_slot_ = 0;
  std::vector<int> free_file_slots_;
  std::vector<int> retired_file_slots_;

  io_uring_buf_ring* recv_buffer_ring_ = nullptr;  // mmap'ed; null: no provided buffers
  std::unique_ptr<uint8_t[]> recv_buffers_;

  const unsigned ring_entries_;
  io_uring ring_{};
  bool ring_ready_ = false;
  int wake_fd_ = -1;
  uint64_t wake_value_ = 0;  // target of the pending eventfd read
};

}  // namespace helio::io
