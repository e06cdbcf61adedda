// Proactor: one thread's event loop. It owns the thread's fibers, its kernel I/O queue
// (an io_uring or an epoll set) and a bounded task queue through which other threads ask
// it to run code.
//
// Contracts:
//  - A proactor runs on exactly one thread (the one that calls Run()); I/O objects bound
//    to it (sockets) are used only from fibers of that thread.
//  - Tasks given to Dispatch/Await run in the scheduler's dispatcher context, between
//    fibers: they must not suspend (no socket I/O, no sleep, no fiber mutex, no Await,
//    no Dispatch to a queue that may be full). To block, a task launches a fiber
//    (LaunchFiber).
//  - Dispatch never drops a task and never blocks a thread: when the target queue is
//    full the calling *fiber* waits for space while its thread runs other fibers.
//  - An idle proactor sleeps in the kernel. Only one in a quick exchange (its last idle
//    spell ended within --proactor_idle_poll_us) first polls its queues for that long,
//    yielding the CPU to other runnable threads as it goes (RunOnce): a request that
//    arrives then costs no sleep and no wake-up. A server without traffic never polls.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "helio/base/mpsc_queue.h"
#include "helio/base/spinlock.h"
#include "helio/base/task.h"
#include "helio/fibers/fiber.h"
#include "helio/fibers/scheduler.h"
#include "helio/fibers/sync.h"

namespace helio::io {

enum class ProactorKind { kUring, kEpoll };
const char* ProactorKindName(ProactorKind kind);

class Proactor : public fibers::EventLoop {
 public:
  static constexpr size_t kDefaultTaskQueueCapacity = 512;

  // REQUIRES: task_queue_capacity is a power of two.
  Proactor(unsigned index, size_t task_queue_capacity);
  ~Proactor() override;
  Proactor(const Proactor&) = delete;
  Proactor& operator=(const Proactor&) = delete;

  virtual ProactorKind kind() const = 0;
  unsigned index() const { return index_; }

  // Sets up the kernel side. Call on the thread that will call Run(), before it.
  virtual absl::Status Init() = 0;

  // Runs the loop on the calling thread until Stop(). Fibers still alive then keep the
  // thread's scheduler busy until they end: stop them first (see AcceptServer::Stop).
  void Run();

  // Thread-safe. Makes Run() return.
  void Stop();

  // The proactor whose loop runs on the calling thread, or nullptr.
  static Proactor* me();
  bool InMyThread() const { return me() == this; }

  // Thread-safe. Queues `fn` to run on this proactor's thread (see the contract above).
  template <typename Fn>
  void Dispatch(Fn&& fn);

  // Thread-safe; call from a fiber or a plain thread, never from a task. Runs `fn` on this
  // proactor's thread and returns its result; the caller's fiber sleeps meanwhile. On the
  // proactor's own thread `fn` runs inline.
  template <typename Fn>
  std::invoke_result_t<Fn&> Await(Fn&& fn);

  // Thread-safe. Starts `fn` as a detached fiber on this proactor's thread.
  template <typename Fn>
  void LaunchFiber(Fn&& fn);

  // Tasks run so far (read from any thread, approximately).
  uint64_t tasks_run() const { return tasks_run_.load(std::memory_order_relaxed); }
  // Times the loop blocked in the kernel waiting for events.
  uint64_t sleeps() const { return sleeps_.load(std::memory_order_relaxed); }
  // Idle spells that polling ended (work arrived), and those it gave up on (then slept).
  uint64_t idle_polls_won() const { return idle_polls_won_.load(std::memory_order_relaxed); }
  uint64_t idle_polls_lost() const { return idle_polls_lost_.load(std::memory_order_relaxed); }

  // How long an idle loop polls before it sleeps (see the contract above); 0: never.
  // Set before the proactors start (--proactor_idle_poll_us).
  static void SetIdlePoll(std::chrono::nanoseconds budget);

  // fibers::EventLoop
  void RunOnce(fibers::Clock::time_point deadline, bool fibers_ready) final;
  void Notify() final;

 protected:
  // Submits queued I/O, then processes completions/readiness and makes the waiting
  // fibers ready. When may_block, waits for at least one event or until `deadline`.
  virtual void PollEvents(fibers::Clock::time_point deadline, bool may_block) = 0;

  // Thread-safe. Makes a blocked PollEvents return (an eventfd write).
  virtual void Interrupt() = 0;

  // For idle polling, on the proactor's own thread (from RunOnce): whether this proactor
  // can see waiting events without entering the kernel (EventsPending); SubmitPending
  // sends the queued I/O first, so that replies do not wait for the poll to end. A
  // proactor that cannot (epoll) never polls.
  virtual bool CanPollIdle() const { return false; }
  virtual bool EventsPending() { return false; }
  virtual void SubmitPending() {}

 private:
  // Wake-up protocol between Notify() (any thread) and RunOnce() (own thread):
  // RunOnce moves kRunning -> kSleeping before it blocks; Notify swaps in kNotified and
  // interrupts the kernel wait only when it found kSleeping. So a sleeping loop costs its
  // notifiers one syscall, a running one none, and no notification is lost.
  enum WakeState : uint32_t { kRunning = 0, kSleeping = 1, kNotified = 2 };

  static constexpr unsigned kMaxTasksPerRun = 256;

  void DispatchSlow(Task task);
  void RunTasks();
  // Own thread. Polls, from `start`, until an event, a task or a notification arrives
  // (true), or the idle-poll budget passes (false; RunOnce then sleeps and, timing the
  // spell, turns polling off). Reaching `deadline` (a timer is due) counts as work.
  bool PollIdle(fibers::Clock::time_point start, fibers::Clock::time_point deadline);

  const unsigned index_;
  BoundedMpscQueue<Task> task_queue_;
  std::atomic<uint32_t> wake_state_{kRunning};

  // Back-pressure: producers that found the queue full wait on space_cv_.
  std::atomic<uint32_t> blocked_producers_{0};
  SpinLock space_lock_;
  boost::fibers::condition_variable_any space_cv_;

  fibers::Done stop_;
  std::atomic<uint64_t> tasks_run_{0};
  std::atomic<uint64_t> sleeps_{0};
  std::atomic<uint64_t> idle_polls_won_{0}, idle_polls_lost_{0};
  bool poll_next_idle_ = false;  // the last idle spell was shorter than the budget
};

template <typename Fn>
void Proactor::Dispatch(Fn&& fn) {
  Task task(std::forward<Fn>(fn));
  if (!task_queue_.TryPush(std::move(task))) return DispatchSlow(std::move(task));
  Notify();
}

template <typename Fn>
std::invoke_result_t<Fn&> Proactor::Await(Fn&& fn) {
  using Result = std::invoke_result_t<Fn&>;
  if (InMyThread()) return fn();
  fibers::Done done;
  if constexpr (std::is_void_v<Result>) {
    Dispatch([&] {
      fn();
      done.Notify();
    });
    done.Wait();
  } else {
    std::optional<Result> result;
    Dispatch([&] {
      result.emplace(fn());
      done.Notify();
    });
    done.Wait();
    return std::move(*result);
  }
}

template <typename Fn>
void Proactor::LaunchFiber(Fn&& fn) {
  if (InMyThread()) {
    fibers::Launch(std::forward<Fn>(fn)).detach();
  } else {
    Dispatch([fn = std::forward<Fn>(fn)]() mutable { fibers::Launch(std::move(fn)).detach(); });
  }
}

}  // namespace helio::io
