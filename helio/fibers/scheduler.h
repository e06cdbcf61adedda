// ProactorScheduler: a Boost.Fiber scheduling algorithm that hands the thread to an event
// loop (a proactor) whenever no fiber is ready.
//
// How a proactor thread runs:
//  1. The thread installs ProactorScheduler and parks its main fiber until stop.
//  2. Boost's dispatcher fiber asks pick_next() for the next ready fiber and runs it until
//     it suspends (I/O, sleep, mutex, condition variable) or yields.
//  3. When no fiber is ready, the dispatcher calls suspend_until(deadline): we call
//     EventLoop::RunOnce, which submits pending I/O, blocks in io_uring/epoll until a
//     completion, a cross-thread wake-up or the earliest fiber deadline, and makes the
//     fibers whose I/O completed ready again.
//  4. Fibers made ready on another thread reach us through Boost's remote-ready queue and
//     notify(), which wakes a blocked RunOnce through the loop's eventfd.
// Under constant load (fibers always ready) step 3 would never run. But Boost's dispatcher
// queues itself behind the fibers it resumes, so it comes round once per cycle through
// the ready queue; when it then asks pick_next() for work while fibers are ready, we
// first run a non-blocking RunOnce. I/O and tasks are polled once per cycle, never starved.
//
// Thread-safety: one instance per thread; only notify() is called from other threads.
#pragma once

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/scheduler.hpp>
#include <chrono>

namespace helio::fibers {

using Clock = std::chrono::steady_clock;

// The event source behind a ProactorScheduler.
class EventLoop {
 public:
  virtual ~EventLoop() = default;

  // Runs on the loop's thread in the dispatcher context, so it must not suspend. Processes
  // I/O completions and queued tasks. Blocks until `deadline` or an event only when
  // `fibers_ready` is false.
  virtual void RunOnce(Clock::time_point deadline, bool fibers_ready) = 0;

  // Thread-safe. Makes a blocked (or the next) RunOnce return promptly.
  virtual void Notify() = 0;
};

class ProactorScheduler final : public boost::fibers::algo::algorithm {
 public:
  explicit ProactorScheduler(EventLoop* loop) : loop_(loop) {}

  void awakened(boost::fibers::context* ctx) noexcept override;
  boost::fibers::context* pick_next() noexcept override;
  bool has_ready_fibers() const noexcept override { return !ready_queue_.empty(); }
  void suspend_until(Clock::time_point const& deadline) noexcept override;
  void notify() noexcept override { loop_->Notify(); }

 private:
  EventLoop* loop_;
  boost::fibers::scheduler::ready_queue_type ready_queue_;
};

// True when the caller runs in a scheduler's dispatcher context (a proactor task), where
// suspending is forbidden.
bool InDispatcherContext();

}  // namespace helio::fibers
