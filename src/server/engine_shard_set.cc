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
  // Before any client: the footprint the correction leaves room for (it is updated on
  // the shards, which start below).
  rss_corrector_ = std::make_unique<RssCorrection>(RssBytes());
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

void EngineShardSet::UpdateRssCorrection(uint64_t maxmemory) {
  if (maxmemory != 0 && !rss_corrector_->bounds_whole_rss(maxmemory) &&
      maxmemory != warned_maxmemory_) {
    LOG(WARNING) << "maxmemory " << maxmemory << " is under 4x the start-up footprint of "
                 << rss_corrector_->startup_rss() << " bytes: it bounds the data and RSS's "
                 << "growth over the footprint, so RSS may pass it by the footprint";
    warned_maxmemory_ = maxmemory;
  }
  const uint64_t correction = rss_corrector_->Update(maxmemory, RssBytes(), UsedMemory());
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
