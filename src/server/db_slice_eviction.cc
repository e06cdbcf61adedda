// DbSlice's eviction (see eviction.h for the design): the check before a write, the
// policies' choice of a victim, and the per-key bits LFU and cache mode keep.
#include <glog/logging.h>

#include <algorithm>
#include <limits>

#include "src/core/obj_malloc.h"
#include "src/server/db_slice.h"

namespace damselfly {

void DbSlice::SetEviction(const EvictionSettings& settings) {
  eviction_ = settings;
  report_step_ = settings.limit_bytes / 16;  // also under noeviction, whose -OOM needs it
  reported_tables_ = TableBytes();
  if (eviction_.policy == EvictionPolicy::kNoEviction) eviction_.limit_bytes = 0;
  if (eviction_.limit_bytes == 0) eviction_stuck_ = false;
  stamp_mode_ = IsLfu(eviction_.policy)                         ? StampMode::kLfu
                : eviction_.policy == EvictionPolicy::kCacheMode ? StampMode::kCacheMode
                                                                 : StampMode::kStamp;
  lfu_minutes_ = NowMinutes();
  if (stamp_mode_ != StampMode::kCacheMode) {
    sketch_ = {};
    ghosts_ = {};
    cache_decay_level_ = kCacheDecayStartLevel;
    decay_balance_ = 0;
    cache_clock_.Stop();
  } else if (!cache_clock_.started()) {
    cache_clock_.Start(clock_s_);
    OnCacheTick();
  }
}

void DbSlice::OnCacheTick() {
  size_t keys = 0;
  for (const auto& d : dbs_) keys += d ? d->main.size() : 0;
  cache_keys_ = keys;
  cache_clock_.SetKeys(keys);
  // The sketch follows the shard's size up (while it fills; the counts start over) and
  // down by more than 8x (after FLUSHALL or a lowered limit).
  const size_t capacity = sketch_.capacity();
  if (keys > capacity || capacity == 0 || (capacity > 1024 && keys * 8 < capacity)) {
    sketch_.Resize(keys);
    ghosts_.Resize(keys);
  }
  // 256 ticks see every key, far within the kMaxIdleTicks a stamp may age unseen.
  SweepStamps(keys / 256 + 1);
}

uint64_t DbSlice::UsedBytes() const { return core::ThreadObjHeapUsedBytes() + TableBytes(); }

size_t DbSlice::TableBytes() const {
  size_t bytes = sizeof(*this) + dbs_.capacity() * sizeof(dbs_[0]);
  for (size_t i = 0; i < dbs_end_; ++i) {
    const Db* d = dbs_[i].get();
    if (d) bytes += sizeof(Db) + d->main.mem_usage() + d->expire.mem_usage();
  }
  return bytes + sketch_.bytes() + ghosts_.bytes() + cache_clock_.bytes();
}

std::pair<size_t, size_t> DbSlice::DbTableBytes(DbIndex db) const {
  const Db* d = db < dbs_.size() ? dbs_[db].get() : nullptr;
  return d ? std::pair<size_t, size_t>(d->main.mem_usage(), d->expire.mem_usage())
           : std::pair<size_t, size_t>(0, 0);
}

void DbSlice::EvictBeforeWrite(Db& d, uint64_t hash) {
  // Erasing never shrinks a table, so its bytes hold for the whole loop.
  const uint64_t tables = TableBytes();
  auto used = [&] { return core::ThreadObjHeapUsedBytes() + tables; };
  auto over = [&] { return used() > eviction_.limit_bytes; };
  if (!over()) {
    eviction_stuck_ = false;
    return ReportMemory(used());
  }
  const uint64_t before = used();
  unsigned evicted = 0;
  do {
    MainTable::Handle victim = PickVictim(d, evicted == 0 ? &hash : nullptr);
    if (!victim) break;
    EvictEntry(d, victim);
  } while (++evicted < kMaxEvictionsPerWrite && over());
  eviction_stuck_ = evicted == 0;
  evicted_since_report_ += before - used();
  ReportMemory(used());
}

void DbSlice::ReportMemory(uint64_t used) {
  const uint64_t step = report_step_ + 1;
  const bool moved = used >= reported_used_ + step || used + step <= reported_used_ ||
                     evicted_since_report_ >= step;
  if (!memory_listener_ || (!moved && eviction_stuck_ == reported_stuck_)) return;
  reported_used_ = used;
  reported_tables_ = TableBytes();
  reported_stuck_ = eviction_stuck_;
  evicted_since_report_ = 0;
  memory_listener_();
}

size_t DbSlice::EvictOverLimit(size_t max_keys) {
  if (eviction_.limit_bytes == 0) return 0;
  const uint64_t tables = TableBytes();
  auto over = [&] { return core::ThreadObjHeapUsedBytes() + tables > eviction_.limit_bytes; };
  size_t evicted = 0;
  bool progress = true;
  while (progress && evicted < max_keys && over()) {
    progress = false;
    for (auto& d : dbs_) {  // a key of each database in turn, as Redis samples them all
      if (!d || d->main.empty() || !over()) continue;
      if (MainTable::Handle victim = PickVictim(*d, nullptr)) {
        EvictEntry(*d, victim);
        ++evicted;
        progress = true;
      }
    }
  }
  eviction_stuck_ = !progress && over();
  return evicted;
}

DbSlice::MainTable::Handle DbSlice::PickVictim(Db& d, const uint64_t* near_hash) {
  auto random = [this] { return NextRandom(); };
  const EvictionPolicy policy = eviction_.policy;
  MainTable::Handle best;
  uint64_t best_score = 0;
  auto consider = [&](MainTable::Handle handle, uint64_t score) {
    if (!best || score > best_score) {
      best = handle;
      best_score = score;
    }
  };
  switch (policy) {
    case EvictionPolicy::kNoEviction:
      return {};
    case EvictionPolicy::kAllKeysRandom:
      return d.main.RandomEntry(random);
    case EvictionPolicy::kCacheMode:
      return PickCacheVictim(d, near_hash);
    case EvictionPolicy::kAllKeysLru:
    case EvictionPolicy::kAllKeysLfu:
      for (uint32_t i = 0; i < eviction_.samples; ++i) {
        MainTable::Handle handle = d.main.RandomEntry(random);
        if (!handle) break;
        consider(handle, EvictionScore(handle));
      }
      return best;
    case EvictionPolicy::kVolatileLru:
    case EvictionPolicy::kVolatileLfu:
    case EvictionPolicy::kVolatileRandom:
    case EvictionPolicy::kVolatileTtl:
      // Sampled from the expire table: only keys with a TTL may go.
      for (uint32_t i = 0; i < eviction_.samples; ++i) {
        ExpireTable::Handle deadline = d.expire.RandomEntry(random);
        if (!deadline) break;
        MainTable::Handle handle = d.main.Find(deadline.key());
        DCHECK(handle);
        if (!handle) continue;
        if (policy == EvictionPolicy::kVolatileRandom) return handle;
        if (policy == EvictionPolicy::kVolatileTtl) {  // the nearest deadline first
          consider(handle, uint64_t(std::numeric_limits<int64_t>::max()) -
                               uint64_t(std::max<int64_t>(deadline.value(), 0)));
        } else {
          consider(handle, EvictionScore(handle));
        }
      }
      return best;
  }
  return {};
}

uint64_t DbSlice::EvictionScore(MainTable::Handle handle) const {
  const uint16_t bits = StampOf(handle);
  switch (stamp_mode_) {
    case StampMode::kLfu:
      return 255 - LfuBits::Counter(bits, lfu_minutes_, eviction_.lfu_decay_minutes);
    case StampMode::kStamp:
      return core::AccessStamp::IdleSeconds(bits, clock_s_);
    case StampMode::kCacheMode:
      break;
  }
  return CacheScore(CacheUseOf(handle), cache_decay_level_);
}

DbSlice::CacheUse DbSlice::CacheUseOf(MainTable::Handle handle) const {
  const uint16_t bits = StampOf(handle);
  return {sketch_.Estimate(handle.key().Hash()), cache_clock_.IdleHits(bits),
          cache_clock_.IdleTicks(bits)};
}

uint64_t DbSlice::CacheScore(const CacheUse& use, unsigned level) const {
  if (use.idle_ticks == 0) return 0;  // grace for the newest uses
  // The estimate halves for every 4 / quarters of the key's mean gap between hits (the
  // sketch's window over the estimate) that it has been idle: halvings = idle / gap =
  // quarters * idle_hits * estimate / (4 * window), found by comparisons: a division for
  // each of the ~40 candidates and 3 levels of every eviction took 5% of the server's time
  // in a write flood.
  const uint64_t idle = uint64_t(kCacheDecayQuarters[level]) * use.idle_hits *
                        std::max(use.estimate, 1u);
  const uint64_t gap = 4 * sketch_.window();
  const unsigned halvings =
      idle < 2 * gap ? (idle >= gap) : 2 + (idle >= 3 * gap) + (idle >= 4 * gap);
  const unsigned decayed = halvings >= 4 ? 0 : use.estimate >> halvings;
  return uint64_t(core::FrequencySketch::kMaxCount - decayed) << 32 | use.idle_ticks;
}

DbSlice::MainTable::Handle DbSlice::PickCacheVictim(Db& d, const uint64_t* near_hash) {
  // The victims under the strength in force and its two neighbours, from one look at
  // each candidate.
  const unsigned levels[3] = {cache_decay_level_ == 0 ? 0 : cache_decay_level_ - 1,
                              cache_decay_level_,
                              std::min(cache_decay_level_ + 1, kCacheDecayTopLevel)};
  MainTable::Handle best[3];
  uint64_t best_score[3] = {0, 0, 0};
  auto each = [&](MainTable::Handle handle) {
    const CacheUse use = CacheUseOf(handle);
    for (int i = 0; i < 3; ++i) {
      const uint64_t score = CacheScore(use, levels[i]);
      if (!best[i] || score > best_score[i]) {
        best[i] = handle;
        best_score[i] = score;
      }
    }
  };
  if (near_hash) d.main.ForEachInInsertBuckets(*near_hash, each);
  // A key in its grace (score 0) goes only if a few random buckets offer no other.
  for (int tries = 0; tries < 4 && (!best[1] || best_score[1] == 0); ++tries) {
    d.main.ForEachInRandomBucket([this] { return NextRandom(); }, each);
  }
  MainTable::Handle victim = best[1];
  if (!victim) return victim;
  auto same = [](MainTable::Handle a, MainTable::Handle b) { return &a.key() == &b.key(); };
  uint8_t victim_tags = 0;
  if (!same(best[0], victim)) {
    victim_tags |= kWeakerDecayKeeps;
    ghosts_.Remember(best[0].key().Hash(), kWeakerDecayEvicts);
  }
  if (!same(best[2], victim)) {
    victim_tags |= kStrongerDecayKeeps;
    const uint8_t tags = same(best[2], best[0]) ? kStrongerDecayEvicts | kWeakerDecayEvicts
                                                : kStrongerDecayEvicts;
    ghosts_.Remember(best[2].key().Hash(), tags);
  }
  if (victim_tags != 0) ghosts_.Remember(victim.key().Hash(), victim_tags);
  return victim;
}

void DbSlice::LearnDecay(uint8_t tags) {
  // A key asked for again: the choice that would have kept it gains.
  decay_balance_ += bool(tags & kStrongerDecayKeeps) - bool(tags & kStrongerDecayEvicts) -
                    bool(tags & kWeakerDecayKeeps) + bool(tags & kWeakerDecayEvicts);
  if (decay_balance_ >= kCacheDecayEvidence) {
    cache_decay_level_ = std::min(cache_decay_level_ + 1, kCacheDecayTopLevel);
    decay_balance_ = 0;
  } else if (decay_balance_ <= -kCacheDecayEvidence) {
    cache_decay_level_ = cache_decay_level_ == 0 ? 0 : cache_decay_level_ - 1;
    decay_balance_ = 0;
  }
}

void DbSlice::EvictEntry(Db& d, MainTable::Handle handle) {
  std::string key;  // the entry's own key dies with it; the listeners need it after
  handle.key().GetString(&key);
  EraseEntry(d, handle, key, lazy_free_.eviction);
  ++stats_.evicted_keys;
  Report(KeyChangeKind::kEvicted, d.index, key, "evicted");
}

void DbSlice::TouchSlow(MainTable::Handle handle, uint64_t hash) {
  if (stamp_mode_ == StampMode::kCacheMode) {
    CountCacheHit(hash);
    return SetStamp(handle, cache_clock_.stamp());
  }
  const double random01 = double(NextRandom() >> 11) * 0x1.0p-53;
  SetStamp(handle, LfuBits::Accessed(StampOf(handle), lfu_minutes_, eviction_.lfu_decay_minutes,
                                     eviction_.lfu_log_factor, random01));
}

void DbSlice::TouchNewSlow(MainTable::Handle handle) {
  if (stamp_mode_ == StampMode::kLfu) {
    return SetStamp(handle, LfuBits::New(lfu_minutes_, eviction_.lfu_decay_minutes));
  }
  if (cache_clock_.Insert(clock_s_)) [[unlikely]]
    OnCacheTick();
  SetStamp(handle, cache_clock_.stamp());
}

void DbSlice::SetLfuCounter(DbIndex index, std::string_view key, uint8_t counter) {
  Db* d = db(index);
  MainTable::Handle handle = d ? FindLive(*d, key, core::HashKey(key)) : MainTable::Handle();
  if (!handle || stamp_mode_ != StampMode::kLfu) return;
  SetStamp(handle, LfuBits::WithCounter(counter, lfu_minutes_, eviction_.lfu_decay_minutes));
}

std::optional<uint8_t> DbSlice::LfuCounter(DbIndex index, std::string_view key) {
  Db* d = db(index);
  MainTable::Handle handle = d ? FindLive(*d, key, core::HashKey(key)) : MainTable::Handle();
  if (!handle) return std::nullopt;
  return LfuBits::Counter(StampOf(handle), lfu_minutes_, eviction_.lfu_decay_minutes);
}

}  // namespace damselfly
