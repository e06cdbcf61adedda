#include "src/server/engine_shard.h"

#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "boost/fiber/operations.hpp"
#include "helio/fibers/fiber.h"
#include "src/core/obj_malloc.h"
#include "src/server/config_family.h"
#include "src/server/engine_shard_set.h"
#include "src/server/lazy_free.h"
#include "src/server/server_stats.h"
#include "src/server/latency_monitor.h"

namespace damselfly {

namespace {
thread_local EngineShard* tl_shard = nullptr;
std::atomic<unsigned> configured_hz{10};
std::atomic<bool> active_expire_enabled{true};
std::atomic<bool> cron_paused_flag{false};

// Active expiry, as in Redis: sample keys with a TTL; while more than a quarter of a
// sample had expired, the keyspace likely holds many more, so sample again, within a
// time budget that keeps the shard's latency low.
constexpr size_t kSamplesPerRound = 20;
constexpr auto kCycleBudget = std::chrono::microseconds(1000);
// Eviction in the cycle catches what writes leave (eviction.h); bounded like expiry.
constexpr size_t kMaxEvictionsPerCycle = 1000;
}  // namespace

void EngineShard::InitThreadLocal(ShardId id, unsigned num_shards, unsigned dbnum, unsigned hz) {
  CHECK(tl_shard == nullptr);
  core::InitThreadObjHeap();  // before any key or value is allocated here
  set_hz(hz);
  tl_shard = new EngineShard(id, num_shards, dbnum);
  tl_shard->db_slice_.SetCasSequence(id + 1, num_shards);
  tl_shard->keyspace_events_.SetFlags(KeyspaceEventFlags());
  tl_shard->RefreshEviction();
  tl_shard->db_slice_.SetMemoryListener([shard = tl_shard] {
    shard->PublishMemory();
    // A write flood fills maxmemory within a few housekeeping cycles: the correction and
    // the shares follow its reports too. Not under a small limit, whose excess law adds a
    // quarter of RSS's excess per update: a report per write (its 16th of the share is a
    // few KiB) would add it at every page RSS grows by.
    const uint64_t maxmemory = MaxMemoryBytes();
    if (shard->shard_id_ == 0 && shard_set->RssBoundsWhole(maxmemory)) {
      shard_set->UpdateRssCorrection(maxmemory);
    }
    shard->RefreshEviction();
  });
  tl_shard->expiry_fiber_ = helio::fibers::Launch([shard = tl_shard] { shard->RunExpiryCycles(); });
  tl_shard->db_slice_.SetDetachListener([shard = tl_shard] { shard->lazy_free_wakeup_.Notify(); });
  tl_shard->lazy_free_fiber_ = helio::fibers::Launch([shard = tl_shard] { shard->RunLazyFree(); });
}

void EngineShard::DestroyThreadLocal() {
  EngineShard* shard = tl_shard;
  if (!shard) return;
  shard->stop_expiry_.Notify();
  shard->expiry_fiber_.join();
  shard->stop_lazy_free_ = true;  // what is left goes with the db slice
  shard->lazy_free_wakeup_.Notify();
  shard->lazy_free_fiber_.join();
  tl_shard = nullptr;
  delete shard;
  core::DestroyThreadObjHeap();
}

EngineShard* EngineShard::tlocal() { return tl_shard; }

uint64_t EngineShard::UsedMemory() const {
  return core::ThreadObjHeapUsedBytes() + db_slice_.table_stats().table_bytes;
}

void EngineShard::RefreshEviction() {
  const EvictionConfig config = LoadEvictionConfig();
  EvictionSettings settings;
  settings.policy = config.cache_mode ? EvictionPolicy::kCacheMode : config.policy;
  settings.samples = config.samples;
  settings.lfu_log_factor = config.lfu_log_factor;
  settings.lfu_decay_minutes = config.lfu_decay_minutes;
  if (const uint64_t maxmemory = MaxMemoryBytes()) {
    const uint64_t correction = shard_set ? shard_set->rss_correction() : 0;
    settings.limit_bytes = std::max<uint64_t>(1, (maxmemory - correction) / num_shards_);
  }
  db_slice_.SetEviction(settings);
  db_slice_.SetLazyFree(LoadLazyFreeConfig());
}

void EngineShard::PublishMemory() {
  shard_set->PublishUsedMemory(shard_id_, UsedMemory(), db_slice_.eviction_stuck());
}

unsigned EngineShard::hz() { return configured_hz.load(std::memory_order_relaxed); }

bool EngineShard::active_expire() { return active_expire_enabled.load(std::memory_order_relaxed); }

void EngineShard::set_active_expire(bool enabled) {
  active_expire_enabled.store(enabled, std::memory_order_relaxed);
}

bool EngineShard::cron_paused() { return cron_paused_flag.load(std::memory_order_relaxed); }

void EngineShard::set_cron_paused(bool paused) {
  cron_paused_flag.store(paused, std::memory_order_relaxed);
}

void EngineShard::set_hz(unsigned hz) {
  configured_hz.store(std::clamp(hz, 1u, 500u), std::memory_order_relaxed);
}

void EngineShard::RunLazyFree() {
  // As a snapshot's steps: other fibers and the thread's I/O run between them.
  constexpr auto kStep = std::chrono::microseconds(200);
  while (true) {
    lazy_free_wakeup_.Wait();
    while (!stop_lazy_free_ && db_slice_.FreeDetached(kStep)) boost::this_fiber::yield();
    if (stop_lazy_free_) return;
  }
}

void EngineShard::RunExpiryCycles() {
  while (!stop_expiry_.WaitFor(std::chrono::microseconds(1000000 / hz()))) {
    if (cron_paused()) continue;
    if (shard_id_ == 0) shard_set->UpdateRssCorrection(MaxMemoryBytes());
    RefreshEviction();
    db_slice_.EvictOverLimit(kMaxEvictionsPerCycle);
    PublishMemory();
    if (flush_at_ms_ != 0 && UnixTimeMs() >= flush_at_ms_) {
      db_slice_.FlushDb(flush_db_, /*lazily=*/true);  // memcached flushes at once
      flush_at_ms_ = 0;
    }
    // Every access stamp is seen within 10 minutes (core/access_stamp.h needs 1024 s).
    size_t keys = 0;
    for (DbIndex db = 0; db < db_slice_.dbnum(); ++db) keys += db_slice_.DbSize(db);
    db_slice_.AgeAccessStamps(std::max<size_t>(64, keys / (600 * hz()) + 1));
    auto start = std::chrono::steady_clock::now();
    while (active_expire()) {
      auto may_delete = [this](std::string_view key) { return MayExpire(key); };
      auto [checked, deleted] = db_slice_.ActiveExpire(kSamplesPerRound, may_delete);
      if (checked == 0 || deleted * 4 <= checked) break;
      if (std::chrono::steady_clock::now() - start > kCycleBudget) break;
    }
    // The budget is checked between rounds, so deleting a large value can overrun it.
    if (LatencyThresholdMs() != 0) {
      RecordLatencyIfNeeded(LatencyEvent::kExpireCycle,
                            std::chrono::nanoseconds(std::chrono::steady_clock::now() - start).count());
    }
  }
}

}  // namespace damselfly
