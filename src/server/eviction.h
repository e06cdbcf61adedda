// Eviction: which keys a shard over its share of maxmemory deletes, and the per-key bits
// the policies read.
//
// Where it runs. Each shard evicts its own keys: DbSlice::AddOrFind (the door of every
// write that may add a key or grow a value) first checks the shard's exact usage (its
// object heap counter plus its tables, both O(1)) against the shard's share of the limit,
// and while over it deletes at most kMaxEvictionsPerWrite keys of that database. So the
// cost is bounded per write and spread over the writes that need the room: no latency
// cliff when the server fills. A command that writes nothing, run on a shard over its
// share, first evicts as many from any database (DbSlice::EvictBeforeRead), as Redis
// evicts before every command. The shard's housekeeping cycle (hz times a second) also
// evicts from every database while the shard is over its share, which catches a limit
// lowered at run time, the RSS correction below and writes that found nothing to evict in
// their own database.
//
// The shard's share: (maxmemory - correction) / shards, so that maxmemory bounds the
// process's RSS, not only the tables: the correction is the process's start-up footprint
// plus room for what RSS takes beyond the bytes the shards count (rss_correction.h).
//
// Per-key bits. A key has 13 spare bits (core/access_stamp.h). Under the LRU policies and
// noeviction they hold the access stamp (OBJECT IDLETIME). Under the LFU policies they
// hold Redis's logarithmic access counter (8 bits, LFU_INIT_VAL 5 for new keys) and the
// time of its last decay in units of lfu-decay-time minutes, modulo 32 (5 bits); the
// access-stamp sweep, which sees every key within 10 minutes, applies the decay before
// that time could wrap. Under cache mode they hold the tick of the shard's CacheClock at
// the key's last use. As in Redis, switching policies at run time reads the other's bits
// until keys are used again.
//
// Cache mode (--cache_mode): a policy of its own over every key, with no per-key memory
// beyond the 13 bits, in the spirit of W-TinyLFU (Einziger et al.). The victim is chosen
// among the entries of the two buckets where the new key lands and one stash bucket of
// their overflow (up to 42, already in the cache for the insert), else of a random
// bucket, as the one with the lowest decayed frequency, the least recently used on a tie:
//   frequency  the shard's core::FrequencySketch (count-min, 4-bit counters, 2 bytes per
//              key of the shard, halved every 10 x keys hits) counts every read, hit or
//              miss, and every change of an existing key; a key seen once, as a scan's or
//              a one-off miss's, counts 1 against a hot key's up to 15;
//   decay      a key idle for a while may be worth less than its count says: the
//              estimate halves for every 1/d of the key's own mean gap between uses
//              (the sketch's window / its estimate) that it has been idle, counted in the
//              shard's hits (CacheClock; misses move neither the clock nor the sketch's
//              halving, so a scan of new keys, all misses, ages no hot key). The strength
//              d, from 0 to 6 (kCacheDecayQuarters), is the shard's to learn, in the
//              way ARC learns its balance from ghosts: where d one level weaker or
//              stronger would have chosen another victim, core::GhostTags remember both
//              keys (2 bytes per key of the shard), and whichever of them is asked for
//              again says which choice was right; 32 such answers move d by a level.
//              When popularity is steady (Zipf) a key's idle time says little of its
//              rate and weak decay wins, as Redis's LFU; when a hot set moves, strong
//              decay lets the old one go within a pass over the cache, as LRU would;
//   recency    the CacheClock tick of the last use, which also lets a new key (frequency
//              1, idle 0) outlive older one-off keys until it is read again;
//   grace      a key used in the clock's current tick (the last keys / 32 uses, at least
//              1) goes only if every candidate was: a key just written is there to be
//              read (as W-TinyLFU's window admits new keys before its filter judges).
// Measured with tools/cache-bench.sh: docs/benchmarks.md "Cache hit rate and write flood".
//
// Thread-safety: plain values and pure functions, but for CacheClock (a shard's).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace damselfly {

enum class EvictionPolicy : uint8_t {
  kNoEviction,
  kAllKeysLru,
  kAllKeysLfu,
  kAllKeysRandom,
  kVolatileLru,
  kVolatileLfu,
  kVolatileRandom,
  kVolatileTtl,
  kCacheMode,  // --cache_mode: every key, bucket-local decayed frequency, then recency
};

// maxmemory-policy's name of `policy` (kCacheMode has none: it is not a maxmemory-policy).
std::string_view EvictionPolicyName(EvictionPolicy policy);
// The policy named `name` (case-insensitive), if maxmemory-policy accepts it.
std::optional<EvictionPolicy> ParseEvictionPolicy(std::string_view name);
// The maxmemory-policy names, comma-separated in Redis's order (CONFIG SET's error).
std::string EvictionPolicyChoices();

inline bool IsLfu(EvictionPolicy p) {
  return p == EvictionPolicy::kAllKeysLfu || p == EvictionPolicy::kVolatileLfu;
}
inline bool IsVolatile(EvictionPolicy p) {
  return p == EvictionPolicy::kVolatileLru || p == EvictionPolicy::kVolatileLfu ||
         p == EvictionPolicy::kVolatileRandom || p == EvictionPolicy::kVolatileTtl;
}

// What a shard needs to evict; EngineShard derives it from the configuration.
struct EvictionSettings {
  uint64_t limit_bytes = 0;  // the shard's share; 0: never evict
  EvictionPolicy policy = EvictionPolicy::kNoEviction;
  uint32_t samples = 5;            // maxmemory-samples
  uint32_t lfu_log_factor = 10;    // lfu-log-factor
  uint32_t lfu_decay_minutes = 1;  // lfu-decay-time (0: counters never decay)
};

// The process's eviction configuration (flags, CONFIG SET); each shard derives its
// EvictionSettings from it at every housekeeping cycle and when CONFIG SET changes it.
struct EvictionConfig {
  EvictionPolicy policy = EvictionPolicy::kNoEviction;  // maxmemory-policy
  bool cache_mode = false;                              // overrides the policy
  uint32_t samples = 5;
  uint32_t lfu_log_factor = 10;
  uint32_t lfu_decay_minutes = 1;
};
// Any thread; each field is read and written atomically on its own.
EvictionConfig LoadEvictionConfig();
void StoreEvictionConfig(const EvictionConfig& config);

// Cache mode's clock: ticks that advance every `keys / 32` uses of the shard (hits: reads
// that found their key and changes of existing keys; and inserts; at least 1) and at
// least once a second, so that a key's 13-bit stamp (the tick of its last use) tells how
// long it was idle both in hits (the policy's measure: a run of seconds would leave every
// key with one value, and counting misses or inserts would let a scan age the hot set),
// in ticks (recency, and the current tick's keys are the newest few) and in seconds
// (OBJECT IDLETIME, through each tick's starting second). Idle times are exact while
// under kTicks / 2 ticks: DbSlice rewrites older stamps to that age (a sweep of
// keys / 256 entries at every tick) before the modular tick could wrap.
// Thread-safety: none; one shard's object. Memory: 2 rings of kTicks uint32 (64 KiB).
class CacheClock {
 public:
  static constexpr uint32_t kTicks = 1u << 13;
  static constexpr uint32_t kMaxIdleTicks = kTicks / 2;

  // Starts the clock (allocates its rings) at `now_s`; stamps made before mean nothing.
  void Start(uint32_t now_s) {
    tick_second_.assign(kTicks, now_s);
    tick_hits_.assign(kTicks, 0);
    tick_ = 0;
    hits_ = 0;
  }
  // Frees the rings (cache mode switched off).
  void Stop() {
    tick_second_ = {};
    tick_hits_ = {};
  }
  bool started() const { return !tick_second_.empty(); }
  size_t bytes() const { return (tick_second_.capacity() + tick_hits_.capacity()) * 4; }
  // The ticks advance every keys / 32 uses.
  void SetKeys(size_t keys) { per_tick_ = uint32_t(std::max<size_t>(1, keys / 32)); }

  // The stamp of a use now.
  uint16_t stamp() const { return uint16_t(tick_ % kTicks); }
  // Counts one hit; true when it began a new tick.
  bool Hit(uint32_t now_s) {
    ++hits_;
    return Insert(now_s);
  }
  // Counts the insert of a new key, a use that is no hit; true when it began a new tick.
  bool Insert(uint32_t now_s) {
    if (++uses_in_tick_ < per_tick_) return false;
    Advance(now_s);
    return true;
  }
  // Begins a new tick if now_s is past the current tick's second; true if it did.
  bool Second(uint32_t now_s) {
    if (now_s <= tick_second_[tick_ % kTicks]) return false;
    Advance(now_s);
    return true;
  }

  uint32_t IdleTicks(uint16_t stamp) const { return (tick_ - stamp) % kTicks; }
  uint32_t IdleHits(uint16_t stamp) const { return hits_ - tick_hits_[stamp]; }
  uint32_t IdleSeconds(uint16_t stamp, uint32_t now_s) const {
    return now_s - std::min(now_s, tick_second_[stamp]);
  }
  // The stamp of a use idle_s seconds before now_s (RESTORE's IDLETIME): the last tick
  // begun by then, at most kMaxIdleTicks old. O(kMaxIdleTicks).
  uint16_t Backdated(uint32_t idle_s, uint32_t now_s) const {
    uint32_t ticks = 0;
    while (ticks < kMaxIdleTicks && tick_second_[(tick_ - ticks) % kTicks] + idle_s > now_s) {
      ++ticks;
    }
    return uint16_t((tick_ - ticks) % kTicks);
  }
  // `stamp`, or the stamp kMaxIdleTicks old if it is older (the sweep's rewrite).
  uint16_t Clamped(uint16_t stamp) const {
    return IdleTicks(stamp) <= kMaxIdleTicks ? stamp : uint16_t((tick_ - kMaxIdleTicks) % kTicks);
  }

 private:
  void Advance(uint32_t now_s) {
    ++tick_;
    uses_in_tick_ = 0;
    tick_second_[tick_ % kTicks] = now_s;
    tick_hits_[tick_ % kTicks] = hits_;
  }

  std::vector<uint32_t> tick_second_;  // per tick: the second it began (clock_s_)
  std::vector<uint32_t> tick_hits_;    // per tick: hits_ when it began (modular)
  uint32_t tick_ = 0;
  uint32_t hits_ = 0;  // modular
  uint32_t uses_in_tick_ = 0;
  uint32_t per_tick_ = 1;
};

// Cache mode's decay strengths ("Cache mode" above): an estimate halves for every
// 4 / kCacheDecayQuarters[level] of its key's mean gap that it has been idle.
inline constexpr uint8_t kCacheDecayQuarters[] = {0, 1, 2, 4, 8, 12, 16, 24};
inline constexpr unsigned kCacheDecayStartLevel = 3;  // a halving per mean gap
inline constexpr unsigned kCacheDecayTopLevel = std::size(kCacheDecayQuarters) - 1;
// Cache mode's ghost tags (core::GhostTags), set where a strength one stronger or one
// weaker would have chosen another victim: on the victim, which it would have kept, and on
// the key it would have evicted instead. Whichever of the two is asked for again first
// says which choice was right; kCacheDecayEvidence such answers move the strength a level.
inline constexpr uint8_t kStrongerDecayKeeps = 1;   // asked again: stronger was right
inline constexpr uint8_t kStrongerDecayEvicts = 2;  // asked again: the strength in force was
inline constexpr uint8_t kWeakerDecayKeeps = 4;     // asked again: weaker was right
inline constexpr uint8_t kWeakerDecayEvicts = 8;    // asked again: the strength in force was
inline constexpr int kCacheDecayEvidence = 32;

// At most this many keys are evicted before one write.
inline constexpr unsigned kMaxEvictionsPerWrite = 16;

// Redis's LFU counter in the 13 access bits: counter in the low 8, decay time above.
class LfuBits {
 public:
  static constexpr uint8_t kInitialCounter = 5;  // Redis's LFU_INIT_VAL

  // The bits of a key created at `now_minutes`.
  static uint16_t New(uint32_t now_minutes, uint32_t decay_minutes) {
    return Make(kInitialCounter, Period(now_minutes, decay_minutes));
  }
  // The counter after the decay due at now_minutes (OBJECT FREQ, eviction).
  static uint8_t Counter(uint16_t bits, uint32_t now_minutes, uint32_t decay_minutes) {
    const uint8_t counter = uint8_t(bits);
    if (decay_minutes == 0) return counter;
    const uint32_t periods = (Period(now_minutes, decay_minutes) - (bits >> 8)) % kPeriods;
    return periods >= counter ? 0 : uint8_t(counter - periods);
  }
  // The bits after an access: decayed, then incremented with probability
  // 1 / ((counter - 5) * log_factor + 1), as Redis's LFULogIncr. `random01` in [0, 1).
  static uint16_t Accessed(uint16_t bits, uint32_t now_minutes, uint32_t decay_minutes,
                           uint32_t log_factor, double random01) {
    uint8_t counter = Counter(bits, now_minutes, decay_minutes);
    if (counter < 255) {
      const double base = counter > kInitialCounter ? counter - kInitialCounter : 0;
      if (random01 < 1.0 / (base * log_factor + 1)) ++counter;
    }
    return Make(counter, Period(now_minutes, decay_minutes));
  }
  // The bits of a counter set at now_minutes (RESTORE's FREQ).
  static uint16_t WithCounter(uint8_t counter, uint32_t now_minutes, uint32_t decay_minutes) {
    return Make(counter, Period(now_minutes, decay_minutes));
  }
  // The bits with the decay due applied, so the 5-bit time never wraps (the sweep's job).
  static uint16_t Aged(uint16_t bits, uint32_t now_minutes, uint32_t decay_minutes) {
    return Make(Counter(bits, now_minutes, decay_minutes), Period(now_minutes, decay_minutes));
  }

 private:
  static constexpr uint32_t kPeriods = 32;
  static uint32_t Period(uint32_t now_minutes, uint32_t decay_minutes) {
    return decay_minutes == 0 ? 0 : (now_minutes / decay_minutes) % kPeriods;
  }
  static uint16_t Make(uint8_t counter, uint32_t period) { return uint16_t(period << 8 | counter); }
};

}  // namespace damselfly
