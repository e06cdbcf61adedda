#include "src/server/lazy_free.h"

#include <atomic>

namespace damselfly {
namespace {

std::atomic<bool> user_del{false}, user_flush{false}, expire{false}, eviction{false};

}  // namespace

LazyFreeConfig LoadLazyFreeConfig() {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  return {user_del.load(kRelaxed), user_flush.load(kRelaxed), expire.load(kRelaxed),
          eviction.load(kRelaxed)};
}

void StoreLazyFreeConfig(const LazyFreeConfig& config) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  user_del.store(config.user_del, kRelaxed);
  user_flush.store(config.user_flush, kRelaxed);
  expire.store(config.expire, kRelaxed);
  eviction.store(config.eviction, kRelaxed);
}

}  // namespace damselfly
