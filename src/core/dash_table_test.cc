// DashTable tests against a reference map, with hash policies that force splits,
// stash use, displacement and fingerprint collisions.
#include "src/core/dash_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_map>

#include "absl/hash/hash.h"

namespace damselfly::core {
namespace {

struct StringPolicy {
  static uint64_t Hash(const std::string& key) { return absl::Hash<std::string>{}(key); }
  static bool Equal(const std::string& a, const std::string& b) { return a == b; }
};

// Integer keys hashed by a mask: with few hash bits many keys collide on fingerprint,
// home bucket and segment prefix, which exercises the stash and repeated splits.
template <uint64_t kMask>
struct MaskedPolicy {
  static uint64_t Mix(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
  }
  static uint64_t Hash(uint64_t key) { return Mix(key) & kMask; }
  static bool Equal(uint64_t a, uint64_t b) { return a == b; }
};

using StringTable = DashTable<std::string, std::string, StringPolicy>;

TEST(DashTableTest, InsertFindErase) {
  StringTable table;
  EXPECT_TRUE(table.empty());
  auto [handle, inserted] = table.Insert("a", "1");
  EXPECT_TRUE(inserted);
  EXPECT_EQ(handle.value(), "1");
  EXPECT_FALSE(table.Insert("a", "2").second);  // present: not replaced
  EXPECT_EQ(table.Find(std::string("a")).value(), "1");
  EXPECT_FALSE(table.Find(std::string("b")));
  EXPECT_TRUE(table.Erase(std::string("a")));
  EXPECT_FALSE(table.Erase(std::string("a")));
  EXPECT_EQ(table.size(), 0u);
}

// The batched-lookup hints read only the table's own memory (ASAN checks that) and
// change nothing, at every size and with colliding fingerprints.
TEST(DashTableTest, PrefetchHintsChangeNothing) {
  using Table = DashTable<uint64_t, uint64_t, MaskedPolicy<0xffff'ffff'0000'0fffull>>;
  Table table;
  for (uint64_t key = 0; key < 50'000; ++key) {
    const uint64_t hash = MaskedPolicy<0xffff'ffff'0000'0fffull>::Hash(key);
    table.PrefetchBuckets(hash);
    table.PrefetchSlots(hash);
    table.Insert(key, key * 3);
    table.PrefetchBuckets(hash);
    table.PrefetchSlots(hash);
    if (key % 997 == 0) {
      for (uint64_t k = 0; k <= key; k += 101) ASSERT_EQ(table.Find(k).value(), k * 3);
    }
  }
  EXPECT_EQ(table.size(), 50'000u);
}

// Millions of random operations checked against std::unordered_map after every step
// that touches a key, and in full at checkpoints.
TEST(DashTableTest, RandomOperationsMatchReferenceMap) {
  DashTable<uint64_t, uint64_t, MaskedPolicy<~0ull>> table;
  std::unordered_map<uint64_t, uint64_t> reference;
  std::mt19937_64 rng(42);
  constexpr int kOps = 2'000'000;
  for (int op = 0; op < kOps; ++op) {
    uint64_t key = rng() % 300'000;
    switch (rng() % 4) {
      case 0:
      case 1: {
        bool inserted = table.Insert(key, key * 3).second;
        ASSERT_EQ(inserted, reference.emplace(key, key * 3).second) << "op " << op;
        break;
      }
      case 2:
        ASSERT_EQ(table.Erase(key), reference.erase(key) == 1) << "op " << op;
        break;
      default: {
        auto handle = table.Find(key);
        auto it = reference.find(key);
        ASSERT_EQ(bool(handle), it != reference.end()) << "op " << op;
        if (handle) {
          ASSERT_EQ(handle.value(), it->second);
        }
      }
    }
    ASSERT_EQ(table.size(), reference.size());
  }
  size_t seen = 0;
  table.ForEach([&](auto handle) {
    ++seen;
    ASSERT_EQ(reference.at(handle.key()), handle.value());
  });
  EXPECT_EQ(seen, reference.size());
  EXPECT_GT(table.block_count(), 100u);
  EXPECT_GE(table.segment_count(), 4u);
}

// Every growth step and split keeps every entry findable, and the load at which
// segments grow is high (that is what the stash and displacement buy).
TEST(DashTableTest, EveryGrowthAndSplitKeepsEntries) {
  DashTable<uint64_t, uint64_t, MaskedPolicy<~0ull>> table;
  size_t blocks = table.block_count(), splits = 0, segments = table.segment_count();
  for (uint64_t key = 0; key < 200'000; ++key) {
    table.Insert(key, key);
    if (table.block_count() != blocks) {
      blocks = table.block_count();
      if (table.segment_count() != segments) ++splits;
      segments = table.segment_count();
      for (uint64_t check = 0; check <= key; check += (key < 5000 ? 1 : 97)) {
        ASSERT_TRUE(table.Find(check)) << "lost " << check << " after growth to " << blocks;
      }
    }
  }
  for (uint64_t key = 0; key < 200'000; ++key) ASSERT_EQ(table.Find(key).value(), key);
  EXPECT_GE(splits, 5u);
  EXPECT_EQ(table.reinserted_entries(), 0u) << "a uniform hash should never need reinsertion";
}

// 16-byte keys and values, the shape of the server's table (CompactObj keys and values).
using Pair = std::array<uint64_t, 2>;
struct PairPolicy {
  static uint64_t Hash(const Pair& key) { return MaskedPolicy<~0ull>::Mix(key[0] * 0x9e3779b97f4a7c15ull); }
  static bool Equal(const Pair& a, const Pair& b) { return a == b; }
};

// Fills a table with `n` random keys; returns the lowest and highest load from 200,000
// entries on and the largest share of the table's memory that one insert added.
template <typename Table, typename MakeKey>
std::array<double, 3> LoadBand(size_t n, MakeKey make_key) {
  Table table;
  std::array<double, 3> band = {1, 0, 0};
  std::mt19937_64 rng(3);
  for (size_t i = 1; i <= n; ++i) {
    size_t before = table.mem_usage();
    table.Insert(make_key(rng()), {});
    if (i < 200'000) continue;
    double load = double(table.size()) / table.slot_capacity();
    band[0] = std::min(band[0], load);
    band[1] = std::max(band[1], load);
    band[2] = std::max(band[2], double(table.mem_usage() - before) / before);
  }
  std::printf("load %.3f-%.3f, largest step %.4f of the table\n", band[0], band[1], band[2]);
  return band;
}

// The table grows in small steps at every size: from 200,000 entries on the load stays
// above ~0.84 (not the ~0.45 a doubling split wave leaves), and no insert adds more than
// 1% to the table's memory. The bounds are the measured minimum (0.847 and 0.836) less a
// little: a change that makes growth coarser fails here.
TEST(DashTableTest, LoadStaysHighAtEverySize) {
  auto server_shape = LoadBand<DashTable<Pair, Pair, PairPolicy>>(
      1'500'000, [](uint64_t r) { return Pair{r, 0}; });
  EXPECT_GT(server_shape[0], 0.84);
  EXPECT_LT(server_shape[2], 0.01);
  auto small_entries = LoadBand<DashTable<uint64_t, uint64_t, MaskedPolicy<~0ull>>>(
      1'500'000, [](uint64_t r) { return r; });
  EXPECT_GT(small_entries[0], 0.825);
  EXPECT_LT(small_entries[2], 0.01);
}

// 12 low hash bits (of the 16-bit fingerprint: homes only in the first 1/16 of a
// segment's buckets) and 12 prefix bits: thousands of keys share fingerprints and home
// buckets, so lookups must compare keys rather than trust fingerprints, and much lands
// in the stash.
TEST(DashTableTest, FingerprintCollisionsAndStash) {
  DashTable<uint64_t, uint64_t, MaskedPolicy<0xfffull | (0xfffull << 52)>> table;
  for (uint64_t key = 0; key < 5000; ++key) table.Insert(key, key + 1);
  for (uint64_t key = 0; key < 5000; ++key) ASSERT_EQ(table.Find(key).value(), key + 1);
  for (uint64_t key = 0; key < 5000; key += 2) ASSERT_TRUE(table.Erase(key));
  for (uint64_t key = 0; key < 5000; ++key) ASSERT_EQ(bool(table.Find(key)), key % 2 == 1);
  EXPECT_EQ(table.size(), 2500u);
}

// Only 4 fingerprint bits: every key of a segment has one of 16 fingerprints and the
// same home, so each probe matches many slots whose keys differ.
TEST(DashTableTest, FingerprintCollisionsInEveryProbe) {
  DashTable<uint64_t, uint64_t, MaskedPolicy<0xfull | (0xffffull << 48)>> table;
  std::unordered_map<uint64_t, uint64_t> reference;
  std::mt19937_64 rng(5);
  for (int op = 0; op < 200'000; ++op) {
    uint64_t key = rng() % 3000;
    if (rng() % 3) {
      ASSERT_EQ(table.Insert(key, op).second, reference.emplace(key, op).second);
    } else {
      ASSERT_EQ(table.Erase(key), reference.erase(key) == 1);
    }
  }
  for (auto [key, value] : reference) ASSERT_EQ(table.Find(key).value(), value);
  EXPECT_EQ(table.size(), reference.size());
}

// A hash whose top bit is always clear: the first split moves every entry into the lower
// segment, which has fewer blocks than the full one, so entries are left over and
// inserted again (growing it back); the next splits, by varying bits, then balance.
TEST(DashTableTest, SkewedSplitReinsertsWhatDoesNotFit) {
  DashTable<uint64_t, uint64_t, MaskedPolicy<(0x7full << 56) | 0xffffffffull>> table;
  for (uint64_t key = 0; key < 60'000; ++key) table.Insert(key, key * 7);
  EXPECT_GT(table.reinserted_entries(), 0u) << "the test did not reach the spill path";
  EXPECT_EQ(table.size(), 60'000u);
  for (uint64_t key = 0; key < 60'000; ++key) ASSERT_EQ(table.Find(key).value(), key * 7);
  size_t seen = 0;
  table.ForEach([&](auto) { ++seen; });
  EXPECT_EQ(seen, 60'000u);
}

std::set<std::string> ScanAll(StringTable& table, std::function<void()> between_steps) {
  std::set<std::string> seen;
  uint64_t cursor = 0;
  do {
    cursor = table.TraverseStep(cursor, [&](auto handle) { seen.insert(handle.key()); });
    between_steps();
  } while (cursor != 0);
  return seen;
}

TEST(DashTableTest, ScanVisitsEveryEntry) {
  StringTable table;
  for (int i = 0; i < 50'000; ++i) table.Insert("k" + std::to_string(i), "v");
  std::set<std::string> seen = ScanAll(table, [] {});
  EXPECT_EQ(seen.size(), 50'000u);
}

// Keys present for the whole scan are all returned although segments grow and split
// between cursor calls (the table grows from ~1k to ~60k entries during the scan).
TEST(DashTableTest, ScanGuaranteeWhileTableGrows) {
  StringTable table;
  for (int i = 0; i < 1000; ++i) table.Insert("orig" + std::to_string(i), "v");
  size_t start_blocks = table.block_count();
  int added = 0, steps = 0;
  std::set<std::string> seen = ScanAll(table, [&] {
    // The number of steps follows the per-process hash seed; a burst early in the scan
    // makes the growth (and the splits) certain whatever it is.
    const int burst = ++steps == 3 ? 30'000 : 30;
    for (int j = 0; j < burst; ++j) table.Insert("new" + std::to_string(added++), "v");
  });
  EXPECT_GT(table.block_count(), 20 * start_blocks) << "the test did not grow much";
  EXPECT_GE(table.segment_count(), 4u) << "the test did not split";
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.count("orig" + std::to_string(i))) << i;
}

// The same guarantee under random interleavings of scan steps with inserts and erases,
// with a uniform hash and with one that makes splits spill: every key present from the
// scan's start to its end is returned.
template <typename Policy>
void CheckScanGuaranteeUnderChurn(uint64_t seed) {
  DashTable<uint64_t, uint64_t, Policy> table;
  std::mt19937_64 rng(seed);
  uint64_t next_key = 0;
  for (int i = 0; i < 2000; ++i) table.Insert(next_key++, 0);
  std::set<uint64_t> stable, erased;
  table.ForEach([&](auto h) { stable.insert(h.key()); });
  std::set<uint64_t> seen;
  uint64_t cursor = 0;
  do {
    cursor = table.TraverseStep(cursor, [&](auto h) { seen.insert(h.key()); });
    ASSERT_LT(cursor, uint64_t(1) << 48);
    for (int burst = rng() % 60; burst > 0; --burst) table.Insert(next_key++, 0);
    if (rng() % 4 == 0 && !stable.empty()) {  // erase an original key; it leaves the guarantee
      auto it = stable.lower_bound(rng() % 2000);
      if (it == stable.end()) it = stable.begin();
      ASSERT_TRUE(table.Erase(*it));
      stable.erase(it);
    }
  } while (cursor != 0);
  EXPECT_GT(next_key, 10'000u);
  for (uint64_t key : stable) ASSERT_TRUE(seen.count(key)) << "missed " << key << " seed " << seed;
}

TEST(DashTableTest, ScanGuaranteeUnderChurn) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    CheckScanGuaranteeUnderChurn<MaskedPolicy<~0ull>>(seed);
    CheckScanGuaranteeUnderChurn<MaskedPolicy<(0x7full << 56) | 0xffffffffull>>(seed);
  }
}

// Entries erased during a scan are simply not returned; others still are.
TEST(DashTableTest, ScanWhileErasing) {
  StringTable table;
  for (int i = 0; i < 20'000; ++i) table.Insert("k" + std::to_string(i), "v");
  int next_erase = 0;
  std::set<std::string> seen = ScanAll(table, [&] {
    if (next_erase < 10'000) table.Erase("k" + std::to_string(next_erase++));
  });
  for (int i = 10'000; i < 20'000; ++i) EXPECT_TRUE(seen.count("k" + std::to_string(i))) << i;
}

TEST(DashTableTest, BucketVersionsAndMemory) {
  StringTable table;
  auto handle = table.Insert("a", "1").first;
  EXPECT_EQ(handle.bucket_version(), 0u) << "only a hook's owner sets versions";
  table.Insert("b", "2");
  table.TraverseBuckets(0, [](StringTable::BucketRef bucket) { bucket.set_version(1000); });
  EXPECT_EQ(table.Find(std::string("a")).bucket_version(), 1000u);
  size_t small = table.mem_usage();
  for (int i = 0; i < 100'000; ++i) table.Insert("k" + std::to_string(i), "v");
  EXPECT_GT(table.mem_usage(), small);
  EXPECT_GE(table.mem_usage(), table.block_count() * table.block_bytes());
  EXPECT_EQ(table.bucket_count(), table.block_count() * table.kBlockBuckets);
}

TEST(DashTableTest, RandomEntryAndClear) {
  StringTable table;
  std::mt19937_64 rng(7);
  EXPECT_FALSE(table.RandomEntry(rng));
  for (int i = 0; i < 1000; ++i) table.Insert("k" + std::to_string(i), "v");
  std::set<std::string> picked;
  for (int i = 0; i < 3000; ++i) picked.insert(table.RandomEntry(rng).key());
  EXPECT_GT(picked.size(), 500u);
  table.Clear();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.segment_count(), 1u);
  EXPECT_FALSE(table.Find(std::string("k1")));
  table.Insert("again", "v");
  EXPECT_TRUE(table.Find(std::string("again")));
}

TEST(DashTableTest, DestroyedInSteps) {
  StringTable table;
  for (int i = 0; i < 20000; ++i) table.Insert("k" + std::to_string(i), std::string(40, 'v'));
  const size_t segments = table.segment_count();
  ASSERT_GE(segments, 2u);
  const size_t blocks = table.block_count();
  size_t destroyed = 0, steps = 0;
  while (table.segment_count() > 0) {
    const size_t before = table.block_count();
    destroyed += table.DestroySomeBlocks(3);
    EXPECT_EQ(table.block_count(), before - std::min<size_t>(before, 3));
    EXPECT_EQ(table.size(), 20000 - destroyed);
    ++steps;
  }
  EXPECT_EQ(destroyed, 20000u);
  EXPECT_EQ(steps, (blocks + 2) / 3);
  EXPECT_EQ(table.block_count(), 0u);
  EXPECT_EQ(table.DestroySomeBlocks(3), 0u);
  table.Clear();  // usable again
  table.Insert("again", "v");
  EXPECT_TRUE(table.Find(std::string("again")));
}

// A point-in-time snapshot built on the pre-change hook, as the snapshot issue will: an
// epoch above every version, each bucket serialized once, before it changes or when the
// walk reaches it. Writes of every kind (inserts that grow and split segments, erases,
// in-place changes) run between the walk's steps and inside the hook's reach. The
// snapshot must hold exactly the entries present at its start, with their values then,
// each once.
TEST(DashTableTest, SnapshotThroughPreChangeHookIsPointInTime) {
  for (uint64_t seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
    const bool by_block = seed > 3;  // TraverseBlocks, with fewer writes per step
    StringTable table;
    std::mt19937_64 rng(seed);
    std::map<std::string, std::string> at_start;
    for (int i = 0; i < 20'000; ++i) {
      std::string key = "k" + std::to_string(i);
      table.Insert(key, "v0");
      at_start[key] = "v0";
    }
    const uint64_t epoch = 1;  // above every version: all are 0
    const size_t segments_at_start = table.segment_count();
    const size_t blocks_at_start = table.block_count();
    std::map<std::string, std::string> snapshot;
    size_t duplicates = 0;
    auto serialize = [&](StringTable::BucketRef bucket) {
      if (bucket.version() >= epoch) return;
      bucket.ForEachEntry([&](const std::string& key, const std::string& value) {
        duplicates += !snapshot.emplace(key, value).second;
      });
      bucket.set_version(epoch);
    };
    table.SetPreChangeHook(serialize);
    int next_key = 20'000;
    uint64_t cursor = 0;
    do {
      cursor = by_block ? table.TraverseBlocks(cursor, serialize)
                        : table.TraverseBuckets(cursor, serialize);
      for (int w = 0; w < (by_block ? 400 : 4000); ++w) {
        const uint64_t pick = rng() % 100;
        if (pick < 60) {  // inserts: the table grows by rebuilds and splits meanwhile
          table.Insert("n" + std::to_string(next_key++), "new");
        } else if (pick < 80) {
          table.Erase("k" + std::to_string(rng() % 20'000));
        } else {
          auto handle = table.Find("k" + std::to_string(rng() % 20'000));
          if (!handle) continue;
          table.BeforeChange(handle);
          handle.value() = "changed";
        }
      }
    } while (cursor != 0);
    table.SetPreChangeHook(nullptr);
    EXPECT_GT(table.segment_count(), segments_at_start) << "the walk must have seen splits";
    EXPECT_GT(table.block_count(), blocks_at_start);
    EXPECT_EQ(duplicates, 0u);
    EXPECT_EQ(snapshot, at_start) << "seed " << seed;
  }
}

// Eviction's candidates: the buckets an insert of a hash writes to (and one stash bucket
// of the home's overflow) hold the entry of an equal hash, and a random bucket gives at
// most kSlots entries, all present.
TEST(DashTableTest, EvictionCandidates) {
  StringTable table;
  for (int i = 0; i < 5000; ++i) table.Insert(std::to_string(i), "v");
  for (int i = 0; i < 5000; i += 97) {
    const std::string key = std::to_string(i);
    bool seen = false;
    size_t candidates = 0;
    table.ForEachInInsertBuckets(StringPolicy::Hash(key), [&](StringTable::Handle h) {
      seen |= h.key() == key;
      ++candidates;
    });
    // A key displaced to another of the home's stash buckets is not among them; most are.
    EXPECT_LE(candidates, 3 * StringTable::kSlots);
    if (!seen) {
      EXPECT_TRUE(table.Find(key));
    }
  }
  std::mt19937_64 rng(7);
  for (int round = 0; round < 100; ++round) {
    size_t n = 0;
    table.ForEachInRandomBucket(rng, [&](StringTable::Handle h) {
      EXPECT_TRUE(table.Find(h.key()));
      ++n;
    });
    EXPECT_GE(n, 1u);
    EXPECT_LE(n, StringTable::kSlots);
  }
  StringTable empty;
  empty.ForEachInRandomBucket(rng, [](StringTable::Handle) { FAIL(); });
}

}  // namespace
}  // namespace damselfly::core
