#include "src/server/engine_shard_set.h"

#include <glog/logging.h>

#include "absl/hash/hash.h"

namespace damselfly {

EngineShardSet* shard_set = nullptr;

void EngineShardSet::Init(unsigned num_shards, unsigned dbnum, unsigned hz) {
  CHECK_GE(num_shards, 1u);
  CHECK_LE(num_shards, pool_->size());
  size_ = num_shards;
  used_memory_ = std::make_unique<std::atomic<uint64_t>[]>(num_shards);
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
