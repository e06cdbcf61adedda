#include "src/server/engine_shard_set.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/hash/hash.h"

namespace damselfly {

EngineShardSet* shard_set = nullptr;

void EngineShardSet::Init(unsigned num_shards, unsigned dbnum, unsigned hz) {
  CHECK_GE(num_shards, 1u);
  CHECK_LE(num_shards, pool_->size());
  size_ = num_shards;
  used_memory_ = std::make_unique<std::atomic<uint64_t>[]>(num_shards);
  eviction_stuck_ = std::make_unique<std::atomic<bool>[]>(num_shards);
  pool_->AwaitFiberOnAll([&](unsigned index, helio::io::Proactor*) {
    if (index < num_shards) EngineShard::InitThreadLocal(ShardId(index), num_shards, dbnum, hz);
  });
}

void EngineShardSet::Shutdown() {
  pool_->AwaitFiberOnAll([](unsigned, helio::io::Proactor*) { EngineShard::DestroyThreadLocal(); });
}

uint64_t EngineShardSet::UsedMemory() const {
  uint64_t total = 0;
  for (unsigned i = 0; i < size_; ++i) total += used_memory_[i].load(std::memory_order_relaxed);
  return total;
}

bool EngineShardSet::EvictionStuck() const {
  for (unsigned i = 0; i < size_; ++i) {
    if (eviction_stuck_[i].load(std::memory_order_relaxed)) return true;
  }
  return false;
}

void EngineShardSet::UpdateRssCorrection(uint64_t maxmemory, uint64_t rss) {
  // The RSS of the first call (code, thread stacks, rings: ~11 MiB with two threads) is
  // not counted: no eviction can lower it, and with a small maxmemory it would otherwise
  // take half the cache.
  if (startup_rss_ == 0) startup_rss_ = rss;
  rss -= std::min(rss, startup_rss_);
  // While RSS passes maxmemory and still grows, the shards' shares shrink by a quarter of
  // the excess per cycle; once RSS is back under 95% they grow back an eighth of the
  // correction per cycle. RSS that passes maxmemory but no longer grows adds nothing:
  // mimalloc keeps the pages it freed (evicting more would not lower RSS, and new values
  // reuse them), so correcting on would empty the cache for nothing. Never more than half
  // of maxmemory.
  uint64_t correction = rss_correction();
  if (maxmemory == 0) {
    correction = 0;
  } else if (rss > maxmemory && rss > last_rss_) {
    correction = std::min(maxmemory / 2, correction + (rss - maxmemory) / 4);
  } else if (rss < maxmemory / 20 * 19) {
    correction -= correction / 8 + (correction < 8 ? correction : 0);
  }
  last_rss_ = rss;
  rss_correction_.store(correction, std::memory_order_relaxed);
}

std::string_view EngineShardSet::HashTag(std::string_view key) {
  size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

ShardId EngineShardSet::ShardOf(std::string_view key) const {
  if (size_ == 1) return 0;
  return ShardId(absl::Hash<std::string_view>{}(HashTag(key)) % size_);
}

}  // namespace damselfly
