// DashTable tests against a reference map, with hash policies that force splits,
// stash use, displacement and fingerprint collisions.
#include "src/core/dash_table.h"

#include <gtest/gtest.h>

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
  EXPECT_GT(table.segment_count(), 100u);
}

// Every split keeps every entry findable, and the load at which segments split is high
// (that is what the stash and displacement buy).
TEST(DashTableTest, EverySplitKeepsEntriesAndLoadIsHigh) {
  DashTable<uint64_t, uint64_t, MaskedPolicy<~0ull>> table;
  size_t segments = table.segment_count();
  for (uint64_t key = 0; key < 200'000; ++key) {
    table.Insert(key, key);
    if (table.segment_count() != segments) {
      segments = table.segment_count();
      for (uint64_t check = 0; check <= key; check += (key < 5000 ? 1 : 97)) {
        ASSERT_TRUE(table.Find(check)) << "lost " << check << " after split to " << segments;
      }
    }
  }
  for (uint64_t key = 0; key < 200'000; ++key) ASSERT_EQ(table.Find(key).value(), key);
  double load = double(table.size()) / table.slot_capacity();
  EXPECT_GT(load, 0.6) << "segments split too early";
}

// 12 low hash bits (8 of fingerprint, 4 of home bucket: 16 of 55 buckets in use) and 12
// prefix bits: thousands of keys share fingerprints and home buckets, so lookups must
// compare keys rather than trust fingerprints, and much lands in the stash.
TEST(DashTableTest, FingerprintCollisionsAndStash) {
  DashTable<uint64_t, uint64_t, MaskedPolicy<0xfffull | (0xfffull << 52)>> table;
  std::set<uint64_t> keys;
  for (uint64_t key = 0; key < 5000; ++key) {
    table.Insert(key, key + 1);
    keys.insert(key);
  }
  for (uint64_t key = 0; key < 5000; ++key) ASSERT_EQ(table.Find(key).value(), key + 1);
  for (uint64_t key = 0; key < 5000; key += 2) ASSERT_TRUE(table.Erase(key));
  for (uint64_t key = 0; key < 5000; ++key) ASSERT_EQ(bool(table.Find(key)), key % 2 == 1);
  EXPECT_EQ(table.size(), 2500u);
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

// Keys present for the whole scan are all returned although segments split between
// cursor calls (the table grows from ~1k to ~60k entries during the scan).
TEST(DashTableTest, ScanGuaranteeWhileTableGrows) {
  StringTable table;
  for (int i = 0; i < 1000; ++i) table.Insert("orig" + std::to_string(i), "v");
  size_t start_segments = table.segment_count();
  int added = 0;
  std::set<std::string> seen = ScanAll(table, [&] {
    for (int j = 0; j < 30; ++j) table.Insert("new" + std::to_string(added++), "v");
  });
  EXPECT_GT(table.segment_count(), 20 * start_segments) << "the test did not split much";
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.count("orig" + std::to_string(i))) << i;
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
  uint64_t version = handle.bucket_version();
  EXPECT_GT(version, 0u);
  table.Insert("b", "2");
  handle = table.Find(std::string("a"));
  handle.set_bucket_version(1000);
  EXPECT_EQ(table.Find(std::string("a")).bucket_version(), 1000u);
  size_t small = table.mem_usage();
  for (int i = 0; i < 100'000; ++i) table.Insert("k" + std::to_string(i), "v");
  EXPECT_GT(table.mem_usage(), small);
  EXPECT_EQ(table.mem_usage() / table.segment_count() >= sizeof(void*), true);
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

}  // namespace
}  // namespace damselfly::core
