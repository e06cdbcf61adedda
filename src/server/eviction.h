// Eviction: which keys a shard over its share of maxmemory deletes, and the per-key bits
// the policies read.
//
// Where it runs. Each shard evicts its own keys: DbSlice::AddOrFind (the door of every
// write that may add a key or grow a value) first checks the shard's exact usage (its
// object heap counter plus its tables, both O(1)) against the shard's share of the limit,
// and while over it deletes at most kMaxEvictionsPerWrite keys of that database. So the
// cost is bounded per write and spread over the writes that need the room: no latency
// cliff when the server fills. The shard's housekeeping cycle (hz times a second) also
// evicts from every database while the shard is over its share, which catches a limit
// lowered at run time, the RSS correction below and writes that found nothing to evict in
// their own database.
//
// The shard's share: (maxmemory - correction) / shards. The correction grows while the
// process's RSS (less its RSS at start-up, which no eviction can lower) passes maxmemory
// and still grows (connection buffers, fibers, allocator fragmentation), so maxmemory
// bounds RSS, not only the tables; it shrinks back once RSS is under 95% of maxmemory, and
// never passes half of maxmemory (EngineShardSet::UpdateRssCorrection).
//
// Per-key bits. A key has 13 spare bits (core/access_stamp.h). Under the LRU policies,
// noeviction and cache mode they hold the access stamp (OBJECT IDLETIME). Under the LFU
// policies they hold Redis's logarithmic access counter (8 bits, LFU_INIT_VAL 5 for new
// keys) and the time of its last decay in units of lfu-decay-time minutes, modulo 32
// (5 bits); the access-stamp sweep, which sees every key within 10 minutes, applies the
// decay before that time could wrap. As in Redis, switching between LRU and LFU at run
// time reads the other's bits until keys are used again.
//
// Cache mode (--cache_mode): a policy of its own over every key, with no sample of
// random keys: the victim is the least recently used entry of the two buckets where the
// new key lands (up to 28 entries, already in the cache for the insert), else of a
// random bucket. Scan resistance comes from midpoint insertion: a new key's stamp is set
// back by half the idle time of the keys recently evicted (a running average), so a key
// seen once (a scan, a one-off miss) is evicted before any key that was read again within
// that time, and a hot set that shifts still gets in: its keys are promoted to "now" by
// their second read. See docs/architecture.md "Eviction".
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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
  kCacheMode,  // --cache_mode: every key, bucket-local LRU with midpoint insertion
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
