#include "src/server/engine_shard_set.h"

#include <glog/logging.h>

#include <algorithm>

#include "absl/hash/hash.h"
#include "src/server/server_stats.h"

namespace damselfly {

EngineShardSet* shard_set = nullptr;

void EngineShardSet::Init(unsigned num_shards, unsigned dbnum, unsigned hz) {
  CHECK_GE(num_shards, 1u);
  CHECK_LE(num_shards, pool_->size());
  size_ = num_shards;
  used_memory_ = std::make_unique<std::atomic<uint64_t>[]>(num_shards);
  eviction_stuck_ = std::make_unique<std::atomic<bool>[]>(num_shards);
  // Before any client: the footprint UpdateRssCorrection leaves room for (it runs on the
  // shards, which start below).
  startup_rss_ = std::max<uint64_t>(1, RssBytes());
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
  // The footprint before the shards started (code, libraries, thread stacks, rings:
  // ~11 MiB with two threads, docs/benchmarks.md) is part of RSS that no
  // eviction can lower: maxmemory leaves room for it, as Redis's used_memory counts its
  // own start-up overhead, so that maxmemory bounds the whole RSS. Below 4x the footprint
  // that would take a quarter of maxmemory or more from the data (and break the small
  // limits Redis's own tests set, used_memory plus a few bytes): there maxmemory bounds
  // the data and what RSS grows over the footprint, as Redis bounds used_memory, and RSS
  // may pass it by the footprint. That is logged once per maxmemory.
  const bool whole_rss = maxmemory >= 4 * startup_rss_;
  if (maxmemory != 0 && !whole_rss && maxmemory != warned_maxmemory_) {
    LOG(WARNING) << "maxmemory " << maxmemory << " is under 4x the start-up footprint of "
                 << startup_rss_ << " bytes: it bounds the data and RSS's growth over the "
                 << "footprint, so RSS may pass it by the footprint";
    warned_maxmemory_ = maxmemory;
  }
  if (first_cycle_rss_ == 0) first_cycle_rss_ = rss;
  const uint64_t floor = whole_rss ? startup_rss_ : 0;
  if (!whole_rss) rss -= std::min(rss, first_cycle_rss_);  // the shards' own start-up too
  // While RSS passes maxmemory and still grows, the shards' shares shrink by a quarter of
  // the excess per cycle; once RSS is back under 95% they grow back an eighth of the
  // correction over the footprint per cycle. RSS that passes maxmemory but no longer grows
  // adds nothing: mimalloc keeps the pages it freed (evicting more would not lower RSS,
  // and new values reuse them), so correcting on would empty the cache for nothing. Never
  // more than half of maxmemory.
  uint64_t correction = std::max(rss_correction(), floor);
  if (maxmemory == 0) {
    correction = 0;
  } else if (rss > maxmemory && rss > last_rss_) {
    correction = std::min(maxmemory / 2, correction + (rss - maxmemory) / 4);
  } else if (rss < maxmemory / 20 * 19) {
    const uint64_t over = correction - floor;
    correction -= over / 8 + (over < 8 ? over : 0);
  }
  last_rss_ = rss;
  rss_correction_.store(std::min(correction, maxmemory / 2), std::memory_order_relaxed);
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
