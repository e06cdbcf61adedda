// Launching fibers, and the stacks they run on.
#pragma once

#include <boost/fiber/fiber.hpp>
#include <boost/fiber/protected_fixedsize_stack.hpp>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif
#include <cstddef>
#include <utility>

namespace helio::fibers {

// Connection handlers parse and build replies on their stack; 128 KiB leaves room for
// that with sanitizers on, and the guard page turns an overflow into a clean crash
// instead of silent heap corruption. Pages are touched lazily, so idle connections
// cost little resident memory.
inline constexpr size_t kDefaultStackBytes = 128 * 1024;

// Allocates fiber stacks: mmap'ed, with a guard page below (Boost's
// protected_fixedsize_stack). Each thread keeps up to kCachedStacks freed stacks of each
// of the two sizes the server uses (kDefaultStackBytes, kSmallStackBytes) for reuse:
// short-lived fibers (a blocked client's hang-up watch, a parked connection waking up)
// would otherwise cost an mmap, an mprotect and a munmap each, and every munmap a TLB
// shootdown across the proactor threads. 64 covers a burst of fibers alive at once: a
// script whose keys are on another thread runs on a fiber there, and pipelined clients
// keep dozens in flight (with 8, two threads ran such scripts 3x slower than one). The
// cache holds at most kCachedStacks * (128 + 16) KiB of address space per thread, and
// only the pages those fibers touched stay resident.
//
// Under AddressSanitizer it also clears the stack's shadow memory when the stack is
// handed out and when it is freed. ASan does not see Boost.Context's stack switches
// (Debian builds it with fcontext, which has no ASan hooks), so the redzones of a dead
// fiber's frames would stay poisoned after munmap, and the next mapping at that address
// (another stack, an io_uring ring) would be reported as a stack-buffer-underflow.
inline constexpr size_t kSmallStackBytes = 16 * 1024;

class StackAllocator {
 public:
  static constexpr size_t kCachedStacks = 64;

  explicit StackAllocator(size_t stack_bytes) : impl_(stack_bytes), bytes_(stack_bytes) {}

  boost::context::stack_context allocate() {
    boost::context::stack_context stack;
    StackCache* cache = CacheFor(bytes_);
    if (cache != nullptr && cache->count > 0) {
      stack = cache->stacks[--cache->count];
    } else {
      stack = impl_.allocate();
    }
    Unpoison(stack);
    return stack;
  }

  void deallocate(boost::context::stack_context& stack) noexcept {
    Unpoison(stack);
    StackCache* cache = CacheFor(bytes_);
    if (cache != nullptr && cache->count < kCachedStacks) {
      cache->stacks[cache->count++] = stack;
    } else {
      impl_.deallocate(stack);
    }
  }

 private:
  // Freed stacks of one size on this thread. Trivially destructible on purpose: fibers
  // may still be freed while the thread's thread_locals are destroyed, so the cache is
  // never torn down (proactor threads end only when the process does).
  struct StackCache {
    boost::context::stack_context stacks[kCachedStacks];
    size_t count = 0;
  };

  static StackCache* CacheFor(size_t bytes) {
    thread_local StackCache default_stacks, small_stacks;
    if (bytes == kDefaultStackBytes) return &default_stacks;
    if (bytes == kSmallStackBytes) return &small_stacks;
    return nullptr;
  }

  static void Unpoison(const boost::context::stack_context& stack) {
#if defined(__SANITIZE_ADDRESS__)
    __asan_unpoison_memory_region(static_cast<char*>(stack.sp) - stack.size, stack.size);
#endif
  }

  boost::context::protected_fixedsize_stack impl_;
  size_t bytes_;
};

// Starts `fn` as a new fiber of the calling thread (scheduled, not run yet). The
// returned fiber must be joined or detached.
template <typename Fn>
boost::fibers::fiber Launch(Fn&& fn, size_t stack_bytes = kDefaultStackBytes) {
  return boost::fibers::fiber(std::allocator_arg, StackAllocator(stack_bytes),
                              std::forward<Fn>(fn));
}

}  // namespace helio::fibers
