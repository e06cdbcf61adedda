#include "helio/io/proactor.h"

#include <glog/logging.h>

#include <boost/fiber/operations.hpp>

#include <sched.h>
#include <algorithm>

namespace helio::io {

namespace {
thread_local Proactor* tl_proactor = nullptr;
std::chrono::nanoseconds idle_poll_budget{0};
// Polling checks between clock reads and yields: each check is a few loads and a pause
// (~50 ns), so the loop looks at the clock and lets other threads run about every us.
constexpr unsigned kChecksPerYield = 16;
}  // namespace

void Proactor::SetIdlePoll(std::chrono::nanoseconds budget) { idle_poll_budget = budget; }

const char* ProactorKindName(ProactorKind kind) {
  return kind == ProactorKind::kUring ? "io_uring" : "epoll";
}

Proactor::Proactor(unsigned index, size_t task_queue_capacity)
    : index_(index), task_queue_(task_queue_capacity) {
  DCHECK_GE(task_queue_capacity, 2u);
  DCHECK_EQ(task_queue_capacity & (task_queue_capacity - 1), 0u);
}

Proactor::~Proactor() = default;

Proactor* Proactor::me() { return tl_proactor; }

void Proactor::Run() {
  CHECK(tl_proactor == nullptr) << "one proactor per thread";
  tl_proactor = this;
  boost::fibers::use_scheduling_algorithm<fibers::ProactorScheduler>(this);
  // The main fiber parks here; the scheduler's dispatcher now runs fibers and RunOnce().
  stop_.Wait();
}

void Proactor::Stop() {
  Dispatch([this] { stop_.Notify(); });
}

void Proactor::Notify() {
  if (wake_state_.exchange(kNotified, std::memory_order_acq_rel) == kSleeping) Interrupt();
}

void Proactor::RunOnce(fibers::Clock::time_point deadline, bool fibers_ready) {
  bool may_block = !fibers_ready && task_queue_.Empty();
  // Idle polling (see the contract in proactor.h). The spell is timed from here, so that
  // a poll that gave up and then slept briefly does not count as a short spell.
  fibers::Clock::time_point idle_start{};
  if (may_block && idle_poll_budget.count() > 0 && CanPollIdle()) {
    idle_start = fibers::Clock::now();
    if (poll_next_idle_) {
      if (PollIdle(idle_start, deadline)) {
        idle_polls_won_.fetch_add(1, std::memory_order_relaxed);
        may_block = false;
      } else {
        idle_polls_lost_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  if (may_block) {
    uint32_t expected = kRunning;
    if (!wake_state_.compare_exchange_strong(expected, kSleeping, std::memory_order_acq_rel)) {
      may_block = false;  // notified since the last poll: there is work, do not sleep
    }
  }
  if (!may_block) wake_state_.store(kRunning, std::memory_order_relaxed);

  PollEvents(deadline, may_block);

  if (may_block) {
    sleeps_.fetch_add(1, std::memory_order_relaxed);
    // Notifications that raced with waking up are covered: tasks are drained below and
    // remote-ready fibers by Boost's dispatcher right after we return.
    wake_state_.store(kRunning, std::memory_order_release);
    if (idle_start != fibers::Clock::time_point{}) {
      poll_next_idle_ = fibers::Clock::now() - idle_start <= idle_poll_budget;
    }
  }
  RunTasks();
}

bool Proactor::PollIdle(fibers::Clock::time_point start, fibers::Clock::time_point deadline) {
  SubmitPending();
  const fibers::Clock::time_point until = std::min(deadline, start + idle_poll_budget);
  // The loop stays kRunning meanwhile: a notifier then only sets kNotified, no eventfd.
  for (unsigned checks = 1;; ++checks) {
    if (EventsPending() || wake_state_.load(std::memory_order_acquire) == kNotified) return true;
    if (checks % kChecksPerYield == 0) {
      fibers::Clock::time_point now = fibers::Clock::now();
      if (now >= until) return now >= deadline;
      sched_yield();  // a client sharing this CPU runs now, not at the end of our slice
    } else {
      __builtin_ia32_pause();
    }
  }
}

void Proactor::RunTasks() {
  unsigned ran = 0;
  for (Task task; ran < kMaxTasksPerRun && task_queue_.TryPop(&task); ++ran) {
    task();
    task = Task();  // release the closure's captures now, not at the next pop
  }
  if (ran == 0) return;
  tasks_run_.fetch_add(ran, std::memory_order_relaxed);
  // Pairs with the fence in DispatchSlow: either we see the producer's count, or it sees
  // the cells we just freed.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (blocked_producers_.load(std::memory_order_relaxed) > 0) {
    std::lock_guard guard(space_lock_);
    space_cv_.notify_all();
  }
}

void Proactor::DispatchSlow(Task task) {
  DCHECK(!fibers::InDispatcherContext()) << "a task must not Dispatch to a full queue";
  std::unique_lock guard(space_lock_);
  blocked_producers_.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  while (!task_queue_.TryPush(std::move(task))) {
    Notify();  // the consumer may be asleep with a full queue of our tasks to run
    space_cv_.wait(guard);
  }
  blocked_producers_.fetch_sub(1, std::memory_order_relaxed);
  guard.unlock();
  Notify();
}

}  // namespace helio::io
