// EngineShardSet: the shards of the process and how keys map to them.
//
// Shard i lives on proactor thread i. A key belongs to shard hash(key) % size(), where
// only the part between the first '{' and the next '}' is hashed when it is not empty
// (Redis Cluster's hash tags), so related keys can be placed together.
//
// Thread-safety: routing calls from any thread after Init().
#pragma once

#include <atomic>
#include <memory>
#include <string_view>

#include "helio/io/proactor_pool.h"
#include "src/server/engine_shard.h"
#include "src/server/rss_correction.h"

namespace damselfly {

class EngineShardSet {
 public:
  explicit EngineShardSet(helio::io::ProactorPool* pool) : pool_(pool) {}

  // Creates num_shards shards (at most one per proactor) and starts their housekeeping.
  void Init(unsigned num_shards, unsigned dbnum, unsigned hz);
  // Destroys the shards.
  void Shutdown();

  unsigned size() const { return size_; }

  // used_memory as the shards last published it (each does so 'hz' times a second), for
  // the maxmemory check; any thread.
  uint64_t UsedMemory() const;
  // Shard `id`'s thread: its current used_memory (objects and tables) and whether its
  // eviction is stuck (DbSlice::eviction_stuck).
  void PublishUsedMemory(ShardId id, uint64_t bytes, bool eviction_stuck = false) {
    used_memory_[id].store(bytes, std::memory_order_relaxed);
    eviction_stuck_[id].store(eviction_stuck, std::memory_order_relaxed);
  }
  // Whether a shard last published that it is over its share with nothing to evict.
  bool EvictionStuck() const;
  // How much the shards' shares of maxmemory are lowered so that it bounds RSS
  // (rss_correction.h); any thread. UpdateRssCorrection samples RSS and the published
  // used memory; shard 0's thread only: its housekeeping cycle and, for limits that
  // bound the whole RSS, its writes' reports.
  uint64_t rss_correction() const { return rss_correction_.load(std::memory_order_relaxed); }
  void UpdateRssCorrection(uint64_t maxmemory);
  // Whether `maxmemory` bounds the whole RSS, or (a small limit) the data and RSS's growth.
  // Any thread after Init (it reads the start-up footprint, fixed there).
  bool RssBoundsWhole(uint64_t maxmemory) const {
    return rss_corrector_->bounds_whole_rss(maxmemory);
  }
  helio::io::ProactorPool* pool() const { return pool_; }

  ShardId ShardOf(std::string_view key) const;
  // The part of `key` that decides its shard.
  static std::string_view HashTag(std::string_view key);

  // True when the caller runs on shard `id`'s thread.
  bool IsLocal(ShardId id) const { return pool_->at(id)->InMyThread(); }

  // Runs fn() on shard `id`'s thread (inline when already there); see Proactor::Await.
  template <typename Fn>
  auto Await(ShardId id, Fn&& fn) {
    return pool_->at(id)->Await(std::forward<Fn>(fn));
  }

  // Runs fn(EngineShard*) on every shard in parallel as tasks (must not suspend) and
  // returns when all have finished. Fiber or plain thread; not from a task.
  template <typename Fn>
  void RunOnAll(Fn&& fn);

 private:
  helio::io::ProactorPool* pool_;
  unsigned size_ = 0;
  std::unique_ptr<std::atomic<uint64_t>[]> used_memory_;  // per shard
  std::unique_ptr<std::atomic<bool>[]> eviction_stuck_;   // per shard
  std::atomic<uint64_t> rss_correction_{0};
  // UpdateRssCorrection's (shard 0's thread only); made by Init before the shards start.
  std::unique_ptr<RssCorrection> rss_corrector_;
  uint64_t warned_maxmemory_ = 0;  // likewise: the maxmemory last warned about
};

// The process's shard set, set by main() before serving and immutable afterwards.
extern EngineShardSet* shard_set;

template <typename Fn>
void EngineShardSet::RunOnAll(Fn&& fn) {
  helio::fibers::BlockingCounter pending(size_);
  for (ShardId id = 0; id < size_; ++id) {
    pool_->at(id)->Dispatch([&fn, &pending] {
      fn(EngineShard::tlocal());
      pending.Dec();
    });
  }
  pending.Wait();
}

}  // namespace damselfly
