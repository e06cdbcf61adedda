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
// protected_fixedsize_stack).
//
// Under AddressSanitizer it also clears the stack's shadow memory when the stack is
// handed out and when it is freed. ASan does not see Boost.Context's stack switches
// (Debian builds it with fcontext, which has no ASan hooks), so the redzones of a dead
// fiber's frames would stay poisoned after munmap, and the next mapping at that address
// (another stack, an io_uring ring) would be reported as a stack-buffer-underflow.
class StackAllocator {
 public:
  explicit StackAllocator(size_t stack_bytes) : impl_(stack_bytes) {}

  boost::context::stack_context allocate() {
    boost::context::stack_context stack = impl_.allocate();
    Unpoison(stack);
    return stack;
  }

  void deallocate(boost::context::stack_context& stack) noexcept {
    Unpoison(stack);
    impl_.deallocate(stack);
  }

 private:
  static void Unpoison(const boost::context::stack_context& stack) {
#if defined(__SANITIZE_ADDRESS__)
    __asan_unpoison_memory_region(static_cast<char*>(stack.sp) - stack.size, stack.size);
#endif
  }

  boost::context::protected_fixedsize_stack impl_;
};

// Starts `fn` as a new fiber of the calling thread (scheduled, not run yet). The
// returned fiber must be joined or detached.
template <typename Fn>
boost::fibers::fiber Launch(Fn&& fn, size_t stack_bytes = kDefaultStackBytes) {
  return boost::fibers::fiber(std::allocator_arg, StackAllocator(stack_bytes),
                              std::forward<Fn>(fn));
}

}  // namespace helio::fibers
