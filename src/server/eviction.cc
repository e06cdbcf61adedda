#include "src/server/eviction.h"

#include <atomic>
#include <utility>

#include "helio/base/strings.h"

namespace damselfly {

namespace {
// In maxmemory-policy's order (CONFIG SET's error lists them so).
constexpr std::pair<std::string_view, EvictionPolicy> kNames[] = {
    {"volatile-lru", EvictionPolicy::kVolatileLru},
    {"volatile-lfu", EvictionPolicy::kVolatileLfu},
    {"volatile-random", EvictionPolicy::kVolatileRandom},
    {"volatile-ttl", EvictionPolicy::kVolatileTtl},
    {"allkeys-lru", EvictionPolicy::kAllKeysLru},
    {"allkeys-lfu", EvictionPolicy::kAllKeysLfu},
    {"allkeys-random", EvictionPolicy::kAllKeysRandom},
    {"noeviction", EvictionPolicy::kNoEviction},
};
std::atomic<EvictionPolicy> configured_policy{EvictionPolicy::kNoEviction};
std::atomic<bool> configured_cache_mode{false};
std::atomic<uint32_t> configured_samples{5};
std::atomic<uint32_t> configured_lfu_log_factor{10};
std::atomic<uint32_t> configured_lfu_decay_minutes{1};
}  // namespace

EvictionConfig LoadEvictionConfig() {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  return {configured_policy.load(kRelaxed), configured_cache_mode.load(kRelaxed),
          configured_samples.load(kRelaxed), configured_lfu_log_factor.load(kRelaxed),
          configured_lfu_decay_minutes.load(kRelaxed)};
}

void StoreEvictionConfig(const EvictionConfig& config) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  configured_policy.store(config.policy, kRelaxed);
  configured_cache_mode.store(config.cache_mode, kRelaxed);
  configured_samples.store(config.samples, kRelaxed);
  configured_lfu_log_factor.store(config.lfu_log_factor, kRelaxed);
  configured_lfu_decay_minutes.store(config.lfu_decay_minutes, kRelaxed);
}

std::string_view EvictionPolicyName(EvictionPolicy policy) {
  for (const auto& [name, p] : kNames) {
    if (p == policy) return name;
  }
  return "cache_mode";
}

std::optional<EvictionPolicy> ParseEvictionPolicy(std::string_view name) {
  for (const auto& [n, p] : kNames) {
    if (helio::EqualsIgnoreCase(name, n)) return p;
  }
  return std::nullopt;
}

std::string EvictionPolicyChoices() {
  std::string choices;
  for (const auto& [name, p] : kNames) helio::StrAppend(&choices, choices.empty() ? "" : ", ", name);
  return choices;
}

}  // namespace damselfly
