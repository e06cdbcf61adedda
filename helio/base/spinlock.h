// A test-and-test-and-set spinlock for critical sections of a few instructions.
//
// Thread-safe. Satisfies Lockable, so it pairs with boost::fibers::condition_variable_any:
// unlike a fiber mutex it never suspends the caller, which makes it usable from the
// scheduler's dispatcher context (proactor tasks), where suspending is not allowed.
#pragma once

#include <atomic>

namespace helio {

class SpinLock {
 public:
  void lock() noexcept {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) __builtin_ia32_pause();
    }
  }
  bool try_lock() noexcept { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace helio
