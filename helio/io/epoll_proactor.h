// EpollProactor: the Proactor interface over epoll and non-blocking file descriptors,
// for kernels and container profiles without io_uring.
//
// A socket registers its fd once, edge-triggered for reading and writing, with a
// Waiters record. Its fibers try the syscall first and only on EAGAIN park in the
// record until the next readiness edge. Edges are processed only between fibers, so an
// edge can never slip between a fiber's EAGAIN and its parking. The loop blocks in
// epoll_pwait2 (nanosecond timeouts) until an edge, the eventfd that other threads
// write, or the earliest fiber deadline.
//
// Thread-safety: everything but the Proactor base's thread-safe calls is for the owning
// thread only.
#pragma once

#include <boost/fiber/context.hpp>

#include "helio/io/proactor.h"

namespace helio::io {

class EpollProactor final : public Proactor {
 public:
  // The fibers parked on one fd. Owned by the socket; must outlive its registration.
  // Instead of a reader fiber, on_readable may wait for the next readable edge (see
  // NotifyReadable).
  struct Waiters {
    boost::fibers::context* reader = nullptr;
    boost::fibers::context* writer = nullptr;
    void (*on_readable)(Waiters* waiters) = nullptr;
  };

  EpollProactor(unsigned index, size_t task_queue_capacity);
  ~EpollProactor() override;

  ProactorKind kind() const override { return ProactorKind::kEpoll; }
  absl::Status Init() override;

  // Own thread. Adds `fd` to the epoll set, edge-triggered, reporting to `waiters`.
  absl::Status Register(int fd, Waiters* waiters);
  // Own thread. Removes `fd`; call before closing it.
  void Unregister(int fd);

  // Fiber on the own thread: park until the fd becomes readable/writable (or fails, or
  // WakeAll is called). At most one reader and one writer per fd.
  void WaitReadable(Waiters* waiters);
  void WaitWritable(Waiters* waiters);

  // Own thread, any context: calls on_readable(waiters) once, on this thread, at the next
  // readable edge or WakeAll, in whatever context delivers it (it must not suspend; it
  // may launch a fiber). The caller checks for bytes that arrived before it armed this.
  // REQUIRES: no reader fiber parked, no other on_readable armed.
  void NotifyReadable(Waiters* waiters, void (*on_readable)(Waiters* waiters));

  // Own thread, any context: wake both parked fibers now, and run an armed on_readable
  // (used by cancellation).
  void WakeAll(Waiters* waiters);

 protected:
  void PollEvents(fibers::Clock::time_point deadline, bool may_block) override;
  void Interrupt() override;

 private:
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
};

}  // namespace helio::io
