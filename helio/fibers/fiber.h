// Launching fibers with the stacks helio uses.
#pragma once

#include <boost/fiber/fiber.hpp>
#include <boost/fiber/protected_fixedsize_stack.hpp>
#include <cstddef>
#include <utility>

namespace helio::fibers {

// Connection handlers parse and build replies on their stack; 128 KiB leaves room for
// that with sanitizers on, and the guard page turns an overflow into a clean crash
// instead of silent heap corruption. Pages are touched lazily, so idle connections
// cost little resident memory.
inline constexpr size_t kDefaultStackBytes = 128 * 1024;

// Starts `fn` as a new fiber of the calling thread (scheduled, not run yet). The
// returned fiber must be joined or detached.
template <typename Fn>
boost::fibers::fiber Launch(Fn&& fn, size_t stack_bytes = kDefaultStackBytes) {
  return boost::fibers::fiber(std::allocator_arg,
                              boost::fibers::protected_fixedsize_stack(stack_bytes),
                              std::forward<Fn>(fn));
}

}  // namespace helio::fibers
