#include "helio/fibers/scheduler.h"

#include <boost/fiber/context.hpp>

namespace helio::fibers {

void ProactorScheduler::awakened(boost::fibers::context* ctx) noexcept {
  ctx->ready_link(ready_queue_);
}

boost::fibers::context* ProactorScheduler::pick_next() noexcept {
  if (ready_queue_.empty()) return nullptr;
  // Never return nullptr while fibers are ready: the dispatcher may itself be queued, and
  // Boost would then resume it twice. Poll when the dispatcher's own loop asks instead.
  if (InDispatcherContext()) loop_->RunOnce(Clock::now(), true);
  boost::fibers::context* ctx = &ready_queue_.front();
  ready_queue_.pop_front();
  return ctx;
}

void ProactorScheduler::suspend_until(Clock::time_point const& deadline) noexcept {
  loop_->RunOnce(deadline, !ready_queue_.empty());
}

bool InDispatcherContext() {
  boost::fibers::context* ctx = boost::fibers::context::active();
  return ctx && ctx->is_context(boost::fibers::type::dispatcher_context);
}

}  // namespace helio::fibers
