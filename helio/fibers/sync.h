// Cross-thread fiber synchronisation that never suspends the notifying side.
//
// Boost.Fiber's mutex and condition_variable already work between fibers of one thread
// (and across threads). What they cannot do is be *signalled* from a proactor task,
// which runs in the dispatcher context and must not suspend: notifying under a fiber
// mutex may suspend on contention. These primitives guard their state with a SpinLock
// instead, held for a few instructions, and wake waiters through
// condition_variable_any, which reaches a fiber on another thread via Boost's
// remote-ready queue and the waiter's EventLoop::Notify().
#pragma once

#include <boost/fiber/condition_variable.hpp>
#include <cstdint>
#include <mutex>

#include "helio/base/spinlock.h"

namespace helio::fibers {

// A one-shot event. Wait() from one or more fibers (or plain threads); Notify() once,
// from anywhere, including proactor tasks.
class Done {
 public:
  // Notifies under the lock: a waiter that sees ready_ may destroy *this at once, so
  // nothing may touch the object after the lock is released.
  void Notify() {
    std::lock_guard guard(lock_);
    ready_ = true;
    cv_.notify_all();
  }

  void Wait() {
    std::unique_lock guard(lock_);
    cv_.wait(guard, [this] { return ready_; });
  }

  // Returns false on timeout.
  template <typename Duration>
  bool WaitFor(Duration timeout) {
    std::unique_lock guard(lock_);
    return cv_.wait_for(guard, timeout, [this] { return ready_; });
  }

 private:
  SpinLock lock_;
  bool ready_ = false;
  boost::fibers::condition_variable_any cv_;
};

// A re-armable wake-up for one waiting fiber: Notify() from anywhere (including proactor
// tasks) sets it, Wait() sleeps until it is set and clears it. Notifications that come
// while nobody waits are merged into one.
class Wakeup {
 public:
  void Notify() {
    std::lock_guard guard(lock_);
    set_ = true;
    cv_.notify_one();
  }

  void Wait() {
    std::unique_lock guard(lock_);
    cv_.wait(guard, [this] { return set_; });
    set_ = false;
  }

  // Wait, giving up after `timeout`; false when it timed out.
  template <typename Duration>
  bool WaitFor(Duration timeout) {
    std::unique_lock guard(lock_);
    bool set = cv_.wait_for(guard, timeout, [this] { return set_; });
    set_ = false;
    return set;
  }

 private:
  SpinLock lock_;
  bool set_ = false;
  boost::fibers::condition_variable_any cv_;
};

// Counts outstanding work; Wait() returns once the count is zero. Add/Dec from anywhere.
class BlockingCounter {
 public:
  explicit BlockingCounter(int64_t initial = 0) : count_(initial) {}

  void Add(int64_t n = 1) {
    std::lock_guard guard(lock_);
    count_ += n;
  }

  void Dec() {
    std::lock_guard guard(lock_);  // see Done::Notify
    if (--count_ == 0) cv_.notify_all();
  }

  int64_t count() {
    std::lock_guard guard(lock_);
    return count_;
  }

  void Wait() {
    std::unique_lock guard(lock_);
    cv_.wait(guard, [this] { return count_ == 0; });
  }

 private:
  SpinLock lock_;
  int64_t count_;
  boost::fibers::condition_variable_any cv_;
};

}  // namespace helio::fibers
