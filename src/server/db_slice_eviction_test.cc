// Eviction on the table (eviction.h): what each policy evicts first, with the shard's
// limit set to its usage so that each new key must make room.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/server/db_slice.h"

namespace damselfly {
namespace {

// 200 bytes that neither pack nor compress.
std::string Value(int seed) {
  std::string value(200, 0);
  uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
  for (char& c : value) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = char(x);
  }
  return value;
}

void Put(DbSlice* slice, std::string_view key, int seed, int64_t deadline_ms = 0) {
  DbSlice::Update entry = slice->AddOrFind(0, key);
  entry->SetString(Value(seed));
  entry.SetExpire(deadline_ms);
  entry.Changed("set");
}

EvictionSettings Policy(EvictionPolicy policy, uint64_t limit, uint32_t samples = 5) {
  EvictionSettings settings;
  settings.policy = policy;
  settings.limit_bytes = limit;
  settings.samples = samples;
  settings.lfu_log_factor = 0;  // LFU counters count every access
  return settings;
}

std::string Key(std::string_view prefix, int i) { return helio::StrCat(prefix, i); }

// Fills `slice` with `n` keys "<prefix><i>", then caps it at its usage.
void FillAndCap(DbSlice* slice, EvictionSettings settings) {
  settings.limit_bytes = slice->UsedBytes();
  slice->SetEviction(settings);
}

int CountPresent(DbSlice* slice, std::string_view prefix, int n) {
  int present = 0;
  for (int i = 0; i < n; ++i) present += slice->Find(0, Key(prefix, i)) != nullptr;
  return present;
}

TEST(DbSliceEvictionTest, NoEvictionNeverEvicts) {
  DbSlice slice(1);
  for (int i = 0; i < 100; ++i) Put(&slice, Key("k", i), i);
  FillAndCap(&slice, Policy(EvictionPolicy::kNoEviction, 0));
  for (int i = 0; i < 100; ++i) Put(&slice, Key("new", i), i);
  EXPECT_EQ(slice.DbSize(0), 200u);
  EXPECT_EQ(slice.stats().evicted_keys, 0u);
  EXPECT_FALSE(slice.eviction_stuck());
}

// Writes tell the shard to publish its memory once per 16th of the limit it grows by, and
// when it becomes stuck over the limit: the -OOM check elsewhere then lags by that much at
// most, not by a housekeeping cycle.
TEST(DbSliceEvictionTest, WritesReportMemoryEverySixteenthOfTheLimit) {
  DbSlice slice(1);
  int reports = 0;
  slice.SetMemoryListener([&] { ++reports; });
  const uint64_t limit = slice.UsedBytes() + (1 << 20);
  slice.SetEviction(Policy(EvictionPolicy::kNoEviction, limit));
  // 4000 values of 200 bytes (~1 MiB with their blocks and table slots): about 16 steps
  // of 64 KiB, the first write included.
  for (int i = 0; i < 4000; ++i) Put(&slice, Key("k", i), i);
  EXPECT_GE(reports, 10);
  EXPECT_LE(reports, 24);
  // Under an evicting policy that finds nothing to evict (no key has a TTL): stuck,
  // reported once, not on every write.
  slice.SetEviction(Policy(EvictionPolicy::kVolatileLru, slice.UsedBytes() - 1000));
  const int before = reports;
  Put(&slice, "one more", 1);
  ASSERT_TRUE(slice.eviction_stuck());
  EXPECT_EQ(reports, before + 1);
  Put(&slice, "and another", 2);
  EXPECT_EQ(reports, before + 1);
}

// Once full, usage stays at the limit: the writes' evictions are reported instead, so that
// the shard follows RSS through a flood that only replaces keys.
TEST(DbSliceEvictionTest, EvictionsReportEverySixteenthOfTheLimit) {
  DbSlice slice(1);
  for (int i = 0; i < 4000; ++i) Put(&slice, Key("k", i), i);
  FillAndCap(&slice, Policy(EvictionPolicy::kAllKeysRandom, 0));
  int reports = 0;
  slice.SetMemoryListener([&] { ++reports; });
  // 4000 more keys replace about as many: ~16 steps of a 16th of the limit.
  for (int i = 0; i < 4000; ++i) Put(&slice, Key("new", i), i);
  EXPECT_GE(slice.stats().evicted_keys, 3900u);
  EXPECT_GE(reports, 10);
  EXPECT_LE(reports, 24);
}

TEST(DbSliceEvictionTest, UsageStaysAtTheLimit) {
  DbSlice slice(1);
  for (int i = 0; i < 1000; ++i) Put(&slice, Key("k", i), i);
  FillAndCap(&slice, Policy(EvictionPolicy::kAllKeysRandom, 0));
  const uint64_t limit = slice.eviction().limit_bytes;
  for (int i = 0; i < 2000; ++i) Put(&slice, Key("new", i), i);
  // Each write evicts before it adds: at most one value over the limit, plus table growth.
  EXPECT_LE(slice.UsedBytes(), limit + 1024 + 24 * 1024);
  EXPECT_GE(slice.stats().evicted_keys, 1900u);
  EXPECT_LT(slice.DbSize(0), 1100u);
}

TEST(DbSliceEvictionTest, VolatilePoliciesEvictOnlyKeysWithATtl) {
  for (EvictionPolicy policy : {EvictionPolicy::kVolatileLru, EvictionPolicy::kVolatileLfu,
                                EvictionPolicy::kVolatileRandom, EvictionPolicy::kVolatileTtl}) {
    SCOPED_TRACE(EvictionPolicyName(policy));
    DbSlice slice(1);
    const int64_t later = UnixTimeMs() + 3600'000;
    for (int i = 0; i < 300; ++i) Put(&slice, Key("persistent", i), i);
    for (int i = 0; i < 300; ++i) Put(&slice, Key("volatile", i), i, later + i);
    FillAndCap(&slice, Policy(policy, 0));
    for (int i = 0; i < 200; ++i) Put(&slice, Key("new", i), i);
    EXPECT_EQ(CountPresent(&slice, "persistent", 300), 300);
    EXPECT_EQ(CountPresent(&slice, "new", 200), 200);
    EXPECT_LE(CountPresent(&slice, "volatile", 300), 101);  // the first write fits
    // Once no key has a TTL, nothing may go: the slice says so (writes then get -OOM).
    for (int i = 0; i < 400; ++i) Put(&slice, Key("more", i), i);
    EXPECT_EQ(CountPresent(&slice, "volatile", 300), 0);
    EXPECT_EQ(CountPresent(&slice, "persistent", 300), 300);
    EXPECT_TRUE(slice.eviction_stuck());
  }
}

TEST(DbSliceEvictionTest, VolatileTtlEvictsTheNearestDeadlinesFirst) {
  DbSlice slice(1);
  const int64_t now = UnixTimeMs();
  for (int i = 0; i < 200; ++i) Put(&slice, Key("k", i), i, now + 3600'000 + 1000 * i);
  FillAndCap(&slice, Policy(EvictionPolicy::kVolatileTtl, 0, /*samples=*/64));
  for (int i = 0; i < 50; ++i) Put(&slice, Key("new", i), i);
  // 64 samples of 200 keys: the evicted ones are among the earliest deadlines.
  EXPECT_LE(CountPresent(&slice, "k", 60), 15);
  EXPECT_EQ(CountPresent(&slice, "k", 200) - CountPresent(&slice, "k", 100), 100);
}

TEST(DbSliceEvictionTest, AllKeysLruKeepsRecentlyReadKeys) {
  DbSlice slice(1);
  for (int i = 0; i < 400; ++i) Put(&slice, Key("k", i), i);
  // Every key was last used 100 s ago; then the even ones are read now.
  for (int i = 0; i < 400; ++i) slice.SetIdleSeconds(0, Key("k", i), 100);
  for (int i = 0; i < 400; i += 2) ASSERT_TRUE(slice.FindRead(0, Key("k", i)));
  EXPECT_EQ(slice.IdleSeconds(0, "k1"), 100u);
  FillAndCap(&slice, Policy(EvictionPolicy::kAllKeysLru, 0, /*samples=*/16));
  for (int i = 0; i < 150; ++i) Put(&slice, Key("new", i), i);
  int read_left = 0, unread_left = 0;
  for (int i = 0; i < 400; ++i) (i % 2 ? unread_left : read_left) += bool(slice.Find(0, Key("k", i)));
  EXPECT_GE(read_left, 185);
  EXPECT_LE(unread_left, 80);
}

TEST(DbSliceEvictionTest, AllKeysLfuKeepsFrequentlyReadKeys) {
  DbSlice slice(1);
  slice.SetEviction(Policy(EvictionPolicy::kAllKeysLfu, 0));  // counters from creation on
  for (int i = 0; i < 400; ++i) Put(&slice, Key("k", i), i);
  EXPECT_EQ(slice.LfuCounter(0, "k1"), LfuBits::kInitialCounter);
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 400; i += 2) ASSERT_TRUE(slice.FindRead(0, Key("k", i)));
  }
  EXPECT_EQ(slice.LfuCounter(0, "k0"), LfuBits::kInitialCounter + 5);
  FillAndCap(&slice, Policy(EvictionPolicy::kAllKeysLfu, 0, /*samples=*/16));
  for (int i = 0; i < 150; ++i) Put(&slice, Key("new", i), i);
  // New keys start at the unread keys' counter: those two go, in any order.
  int read_left = 0, unread_left = 0;
  for (int i = 0; i < 400; ++i) (i % 2 ? unread_left : read_left) += bool(slice.Find(0, Key("k", i)));
  EXPECT_GE(read_left, 195);
  EXPECT_LE(unread_left + CountPresent(&slice, "new", 150), 210);
}

// Cache mode counts uses from the moment it is on: the tests switch it on before reading.
void StartCacheMode(DbSlice* slice) { slice->SetEviction(Policy(EvictionPolicy::kCacheMode, 0)); }

TEST(DbSliceEvictionTest, CacheModeKeepsAReadKeyThroughAStreamOfOneOffKeys) {
  DbSlice slice(1);
  StartCacheMode(&slice);
  for (int i = 0; i < 2000; ++i) Put(&slice, Key("k", i), i);
  for (int round = 0; round < 8; ++round) {
    for (int i = 0; i < 2000; i += 4) ASSERT_TRUE(slice.FindRead(0, Key("k", i)));
  }
  FillAndCap(&slice, Policy(EvictionPolicy::kCacheMode, 0));
  // A scan of twice as many new keys, each read once (a miss) and stored: each evicts the
  // least used entry of the buckets it lands in, never a key read eight times (but for
  // the sketch's collisions: its 2048 counters a row see 6000 keys here).
  for (int i = 0; i < 4000; ++i) {
    ASSERT_FALSE(slice.FindRead(0, Key("scan", i)));
    Put(&slice, Key("scan", i), i);
  }
  int hot_left = 0;
  for (int i = 0; i < 2000; i += 4) hot_left += bool(slice.Find(0, Key("k", i)));
  EXPECT_GE(hot_left, 495);
  EXPECT_GE(slice.stats().evicted_keys, 3900u);
  // Among the keys seen once, the more recent stay.
  EXPECT_GT(CountPresent(&slice, "scan", 4000) - CountPresent(&slice, "scan", 3000),
            CountPresent(&slice, "scan", 1000));
}

// Reads each of `keys` keys "<prefix><i>" `rounds` times, storing it on a miss (a cache
// client's get-miss-then-set); returns the hits.
int ReadOften(DbSlice* slice, std::string_view prefix, int keys, int rounds) {
  int hits = 0;
  for (int round = 0; round < rounds; ++round) {
    for (int i = 0; i < keys; ++i) {
      if (slice->FindRead(0, Key(prefix, i))) {
        ++hits;
      } else {
        Put(slice, Key(prefix, i), i);
      }
    }
  }
  return hits;
}

TEST(DbSliceEvictionTest, CacheModeLearnsToLetHotSetsThatMoveAwayGo) {
  DbSlice slice(1);
  StartCacheMode(&slice);
  for (int i = 0; i < 2000; ++i) Put(&slice, Key("k", i), i);
  FillAndCap(&slice, Policy(EvictionPolicy::kCacheMode, 0));
  // A hot set of 300 keys, read 10 times each, moves on to new keys again and again: a
  // key's count tells nothing once its set moved on, its idle time tells all. The keys
  // asked for again are those a stronger decay would have kept: the shard raises it.
  int last_hits = 0;
  for (int set = 0; set < 200; ++set) last_hits = ReadOften(&slice, Key("set", set) + ":", 300, 10);
  EXPECT_GT(slice.cache_decay_level(), kCacheDecayStartLevel);
  EXPECT_GE(last_hits, 2600);  // all but the first read of each key, and a few more
}

TEST(DbSliceEvictionTest, CacheModeDoesNotRaiseTheDecayForASteadyPopularity) {
  DbSlice slice(1);
  StartCacheMode(&slice);
  for (int i = 0; i < 2000; ++i) Put(&slice, Key("k", i), i);
  FillAndCap(&slice, Policy(EvictionPolicy::kCacheMode, 0));
  // Zipf 0.99 over 20,000 keys: a key's idle time says little of its rate, its count
  // more; stronger decay is not asked for. (Here levels 0-2 hold about 0.72 of the
  // requests, 3 0.71, 4 0.69. The shard ends at 3, sometimes 1, 2 or 4: its evidence is
  // biased a little towards decay, measured at full scale in docs/benchmarks.md.)
  std::vector<double> cdf(20000);
  double sum = 0;
  for (int i = 0; i < 20000; ++i) cdf[i] = sum += 1 / std::pow(i + 1, 0.99);
  std::mt19937_64 random(1);
  std::uniform_real_distribution<double> uniform(0, sum);
  int hits = 0;
  for (int request = 0; request < 400000; ++request) {
    const int i = int(std::lower_bound(cdf.begin(), cdf.end(), uniform(random)) - cdf.begin());
    if (slice.FindRead(0, Key("z", i))) {
      hits += request >= 200000;
    } else {
      Put(&slice, Key("z", i), i);
    }
  }
  EXPECT_LE(slice.cache_decay_level(), kCacheDecayStartLevel + 1);
  EXPECT_GE(hits, 0.70 * 200000);
}

TEST(DbSliceEvictionTest, CacheModeLowersTheDecayWhenItsVictimsComeBack) {
  DbSlice slice(1);
  StartCacheMode(&slice);
  for (int i = 0; i < 2000; ++i) Put(&slice, Key("k", i), i);
  FillAndCap(&slice, Policy(EvictionPolicy::kCacheMode, 0));
  // 1000 keys read once a round, each round also reading 600 busy keys 10 times and 300
  // keys never seen again. The steady keys' counts are high but they wait 6000 hits
  // between two reads: decay at the start level takes them below the one-off keys, they
  // are evicted and come back. A weaker decay would have kept them: the shard lowers it.
  ReadOften(&slice, "steady", 1000, 16);
  unsigned lowest = kCacheDecayStartLevel;
  for (int round = 0; round < 40; ++round) {
    ReadOften(&slice, "steady", 1000, 1);
    ReadOften(&slice, "busy", 600, 10);
    ReadOften(&slice, Key("once", round) + ":", 300, 1);
    lowest = std::min(lowest, slice.cache_decay_level());
  }
  EXPECT_LT(lowest, kCacheDecayStartLevel);
}

TEST(DbSliceEvictionTest, CacheModeKeepsTheKeyJustWrittenThroughEvictionOverTheLimit) {
  DbSlice slice(1);
  StartCacheMode(&slice);
  for (int i = 0; i < 100; ++i) Put(&slice, Key("k", i), i);
  // Every key written once within a second: the same count, near the same age. After
  // each new key the limit drops by more than a value, and the periodic cycle evicts
  // from random buckets down to it; it never takes the key just written, which is there
  // to be read.
  for (int i = 0; i < 60; ++i) {
    Put(&slice, Key("new", i), i);
    EvictionSettings settings = Policy(EvictionPolicy::kCacheMode, 0);
    settings.limit_bytes = slice.UsedBytes() - 300;
    slice.SetEviction(settings);
    EXPECT_GE(slice.EvictOverLimit(100), 2u);
    ASSERT_TRUE(slice.Find(0, Key("new", i))) << i;
  }
  EXPECT_LE(slice.DbSize(0), 40u);
}

TEST(DbSliceEvictionTest, CacheModeIdleTimeInSeconds) {
  DbSlice slice(1);
  StartCacheMode(&slice);
  Put(&slice, "k", 1);
  EXPECT_EQ(slice.IdleSeconds(0, "k"), 0u);
  slice.SetIdleSeconds(0, "k", 100);  // older than the clock: its oldest stamp
  EXPECT_EQ(slice.IdleSeconds(0, "k"), 0u);
  EXPECT_EQ(slice.IdleSeconds(0, "missing"), std::nullopt);
}

TEST(CacheClockTest, TicksByAccessesAndSecondsAndClampsOldStamps) {
  CacheClock clock;
  clock.Start(10);
  clock.SetKeys(32 * 100);  // a tick every 100 accesses
  const uint16_t first = clock.stamp();
  int ticks = 0;
  for (int i = 0; i < 1000; ++i) ticks += clock.Hit(10);
  EXPECT_EQ(ticks, 10);
  EXPECT_EQ(clock.IdleTicks(first), 10u);
  EXPECT_EQ(clock.IdleHits(first), 1000u);
  // Inserts advance the ticks (recency) but are no hits (the policy's idle measure).
  for (int i = 0; i < 100; ++i) ticks += clock.Insert(10);
  EXPECT_EQ(ticks, 11);
  EXPECT_EQ(clock.IdleTicks(first), 11u);
  EXPECT_EQ(clock.IdleHits(first), 1000u);
  EXPECT_FALSE(clock.Second(10));
  EXPECT_TRUE(clock.Second(12));
  const uint16_t at12 = clock.stamp();
  EXPECT_TRUE(clock.Second(15));
  EXPECT_EQ(clock.IdleSeconds(at12, 15), 3u);
  EXPECT_EQ(clock.IdleSeconds(first, 15), 5u);
  EXPECT_EQ(clock.Backdated(3, 15), at12);
  EXPECT_EQ(clock.Clamped(first), first);
  for (uint32_t s = 16; s < 16 + CacheClock::kMaxIdleTicks; ++s) clock.Second(s);
  EXPECT_EQ(clock.IdleTicks(clock.Clamped(first)), CacheClock::kMaxIdleTicks);
}

TEST(DbSliceEvictionTest, EvictionIsReportedAsEvicted) {
  DbSlice slice(1);
  std::vector<std::string> evicted;
  slice.AddChangeListener([&](const KeyChange& change) {
    if (change.kind == KeyChangeKind::kEvicted) {
      EXPECT_EQ(change.event, "evicted");
      evicted.emplace_back(change.key);
    }
  });
  for (int i = 0; i < 100; ++i) Put(&slice, Key("k", i), i);
  FillAndCap(&slice, Policy(EvictionPolicy::kAllKeysRandom, 0));
  for (int i = 0; i < 20; ++i) Put(&slice, Key("new", i), i);
  ASSERT_FALSE(evicted.empty());
  EXPECT_EQ(evicted.size(), slice.stats().evicted_keys);
  for (const std::string& key : evicted) EXPECT_EQ(slice.Find(0, key), nullptr);
}

TEST(DbSliceEvictionTest, BackgroundEvictionReachesTheLimit) {
  DbSlice slice(2);
  for (int i = 0; i < 500; ++i) Put(&slice, Key("k", i), i);
  {
    DbSlice::Update entry = slice.AddOrFind(1, "other-db");
    entry->SetString(Value(1));
    entry.Changed("set");
  }
  EvictionSettings settings = Policy(EvictionPolicy::kAllKeysLru, slice.UsedBytes() / 2);
  slice.SetEviction(settings);
  EXPECT_GT(slice.EvictOverLimit(1000), 100u);
  EXPECT_LE(slice.UsedBytes(), settings.limit_bytes);
  EXPECT_FALSE(slice.eviction_stuck());
}

TEST(LfuBitsTest, CounterGrowsLogarithmicallyAndDecays) {
  const uint32_t now = 1000;
  uint16_t bits = LfuBits::New(now, 1);
  EXPECT_EQ(LfuBits::Counter(bits, now, 1), 5);
  // log factor 0: every access counts; 10: the probability falls as the counter grows.
  EXPECT_EQ(LfuBits::Counter(LfuBits::Accessed(bits, now, 1, 0, 0.99), now, 1), 6);
  uint16_t high = bits;
  for (int i = 0; i < 300; ++i) high = LfuBits::Accessed(high, now, 1, 0, 0.5);
  EXPECT_EQ(LfuBits::Counter(high, now, 1), 255);
  uint16_t slow = LfuBits::Accessed(LfuBits::Accessed(bits, now, 1, 10, 0.0), now, 1, 10, 0.5);
  EXPECT_EQ(LfuBits::Counter(slow, now, 1), 6);  // at 6 an access counts with p = 1/11
  // One decrement per lfu-decay-time minutes idle; none with decay time 0.
  EXPECT_EQ(LfuBits::Counter(high, now + 3, 1), 252);
  EXPECT_EQ(LfuBits::Counter(high, now + 10, 5), 253);
  EXPECT_EQ(LfuBits::Counter(LfuBits::New(now, 0), now + 100, 0), 5);
  EXPECT_EQ(LfuBits::Counter(bits, now + 20, 1), 0);
  // The sweep applies the decay and restarts the period count.
  uint16_t aged = LfuBits::Aged(high, now + 20, 1);
  EXPECT_EQ(LfuBits::Counter(aged, now + 20, 1), 235);
  EXPECT_EQ(LfuBits::Counter(aged, now + 40, 1), 215);
}

TEST(EvictionPolicyTest, NamesAsRedis) {
  EXPECT_EQ(ParseEvictionPolicy("ALLKEYS-LRU"), EvictionPolicy::kAllKeysLru);
  EXPECT_EQ(ParseEvictionPolicy("volatile-ttl"), EvictionPolicy::kVolatileTtl);
  EXPECT_EQ(ParseEvictionPolicy("lru"), std::nullopt);
  EXPECT_EQ(EvictionPolicyName(EvictionPolicy::kNoEviction), "noeviction");
  EXPECT_EQ(EvictionPolicyChoices(),
            "volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, "
            "allkeys-lfu, allkeys-random, noeviction");
}

}  // namespace
}  // namespace damselfly
