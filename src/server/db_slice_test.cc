#include "src/server/db_slice.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/server/lookup_prefetcher.h"

namespace damselfly {
namespace {

void Put(DbSlice* slice, std::string_view key, std::string_view value = "v") {
  slice->FindOrInsert(0, key).first->SetString(value);
}

std::string Get(DbSlice* slice, std::string_view key) {
  std::string scratch;
  return std::string(slice->Find(0, key)->GetString(&scratch));
}

TEST(DbSliceTest, FindInsertErase) {
  DbSlice slice(2);
  EXPECT_EQ(slice.Find(0, "a"), nullptr);
  auto [value, inserted] = slice.FindOrInsert(0, "a");
  EXPECT_TRUE(inserted);
  value->SetString("1");
  EXPECT_EQ(Get(&slice, "a"), "1");
  EXPECT_EQ(slice.Find(1, "a"), nullptr);  // databases are separate
  EXPECT_FALSE(slice.FindOrInsert(0, "a").second);
  EXPECT_EQ(slice.DbSize(0), 1u);
  EXPECT_TRUE(slice.Erase(0, "a"));
  EXPECT_FALSE(slice.Erase(0, "a"));
  EXPECT_EQ(slice.DbSize(0), 0u);
}

// LookupPrefetcher only hints: a sequence of lookups with writes in between (which may
// grow the table under the hints) gives the same answers, present keys and absent keys,
// for every length around the window size; it stays off for an empty database.
TEST(DbSliceTest, PrefetchedLookupsAnswerAsPlainOnes) {
  constexpr int kRange = 80'000;  // half of it present: above the prefetcher's minimum
  DbSlice slice(2);
  for (int i = 0; i < kRange; i += 2) Put(&slice, helio::StrCat("key:", i), helio::StrCat("value:", i));
  for (size_t count : {0u, 1u, 2u, 15u, 16u, 17u, 33u, 200u}) {
    std::vector<std::string> keys;
    for (size_t i = 0; i < count; ++i) keys.push_back(helio::StrCat("key:", (i * 7919) % kRange));
    for (DbIndex db : {DbIndex{0}, DbIndex{1}}) {
      LookupPrefetcher prefetcher(slice, db, keys.size(), [&](size_t i) { return keys[i]; });
      EXPECT_EQ(prefetcher.active(), db == 0 && count >= 2);  // db 1 is empty: too small
      for (size_t i = 0; i < keys.size(); ++i) {
        prefetcher.Before(i);
        const int n = (i * 7919) % kRange;
        PrimeValue* value = slice.Find(db, keys[i]);
        if (db == 0 && n % 2 == 0) {
          ASSERT_NE(value, nullptr) << keys[i];
          std::string scratch;
          EXPECT_EQ(value->GetString(&scratch), helio::StrCat("value:", n));
        } else {
          EXPECT_EQ(value, nullptr) << keys[i];
        }
        // Writes between the lookups, as a pipeline of SETs makes them.
        Put(&slice, helio::StrCat("new:", count, ":", i));
      }
    }
  }
}

// Shards hand out disjoint cas sequences, and a client's chosen cas (ms E) moves a
// sequence past it without leaving it.
TEST(DbSliceTest, CasUniquesDisjointAcrossShards) {
  constexpr unsigned kShards = 3;
  std::vector<std::unique_ptr<DbSlice>> shards;
  std::set<uint64_t> seen;
  for (unsigned id = 0; id < kShards; ++id) {
    shards.push_back(std::make_unique<DbSlice>(1));
    shards.back()->SetCasSequence(id + 1, kShards);
  }
  for (int round = 0; round < 100; ++round) {
    for (unsigned id = 0; id < kShards; ++id) {
      uint64_t cas = shards[id]->NextCas();
      EXPECT_EQ(cas % kShards, (id + 1) % kShards);
      EXPECT_TRUE(seen.insert(cas).second) << cas;
    }
  }
  shards[1]->NoteCas(1000);
  const uint64_t next = shards[1]->NextCas();
  EXPECT_GT(next, 1000u);
  EXPECT_LE(next, 1000u + kShards);
  EXPECT_EQ(next % kShards, 2u);
  shards[1]->NoteCas(5);  // below what it already handed out: no effect
  EXPECT_EQ(shards[1]->NextCas(), next + kShards);
  DbSlice plain(1);  // the default sequence
  EXPECT_EQ(plain.NextCas(), 1u);
  plain.NoteCas(7);
  EXPECT_EQ(plain.NextCas(), 8u);
}

TEST(DbSliceTest, LazyExpiryDeletesOnAccess) {
  DbSlice slice(1);
  Put(&slice, "gone");
  Put(&slice, "kept");
  slice.SetExpire(0, "gone", UnixTimeMs() - 1);
  slice.SetExpire(0, "kept", UnixTimeMs() + 60000);
  EXPECT_EQ(slice.ExpireSize(0), 2u);
  EXPECT_EQ(slice.Find(0, "gone"), nullptr);
  EXPECT_NE(slice.Find(0, "kept"), nullptr);
  EXPECT_EQ(slice.DbSize(0), 1u);
  EXPECT_EQ(slice.ExpireSize(0), 1u);
  EXPECT_EQ(slice.stats().expired_keys, 1u);
  slice.SetExpire(0, "kept", 0);  // PERSIST
  EXPECT_EQ(slice.ExpireSize(0), 0u);
  EXPECT_EQ(slice.GetExpire(0, "kept"), 0);
}

// Active expiry reaches every expired key within a bounded number of rounds without any
// access, and leaves keys without a TTL or with a future one alone.
TEST(DbSliceTest, ActiveExpiryWalksTheWholeTable) {
  DbSlice slice(1);
  for (int i = 0; i < 5000; ++i) {
    std::string key = helio::StrCat("k", i);
    Put(&slice, key);
    if (i % 2 == 0) slice.SetExpire(0, key, UnixTimeMs() - 1);
    if (i % 10 == 1) slice.SetExpire(0, key, UnixTimeMs() + 60000);
  }
  size_t rounds = 0;
  while (slice.ExpireSize(0) > 500 && rounds < 10000) {
    slice.ActiveExpire(20);
    ++rounds;
  }
  EXPECT_EQ(slice.DbSize(0), 2500u);
  EXPECT_EQ(slice.ExpireSize(0), 500u);
  EXPECT_EQ(slice.stats().expired_keys, 2500u);
}

// SCAN returns every key present for the whole scan at least once, and finishes, even
// when segments split between calls: 8 keys inserted after every call of COUNT 10, and
// 700 more after the 10th, take the table from 1,000 keys past what two 826-slot
// segments hold while the scan runs. (The burst makes that independent of the hash seed,
// which decides how many calls the scan takes: with 8 keys per call alone, a run ended
// 12 keys short.)
TEST(DbSliceTest, ScanSurvivesGrowthBetweenCalls) {
  DbSlice slice(1);
  std::set<std::string> original;
  for (int i = 0; i < 1000; ++i) {
    original.insert(helio::StrCat("orig:", i));
    Put(&slice, helio::StrCat("orig:", i));
  }
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int calls = 0, added = 0;
  do {
    cursor = slice.Scan(0, cursor, 10, [&](std::string_view key, const PrimeValue&) {
      seen.emplace(key);
    });
    ++calls;
    const int batch = calls == 10 ? 708 : 8;
    for (int i = 0; i < batch; ++i) Put(&slice, helio::StrCat("new:", added++));
  } while (cursor != 0 && calls < 100000);
  EXPECT_EQ(cursor, 0u);
  EXPECT_GT(calls, 10) << "the burst came before the scan ended";
  EXPECT_GT(1000 + added, 2 * 826);  // so segments split mid-scan
  for (const std::string& key : original) EXPECT_TRUE(seen.count(key)) << key;
}

TEST(DbSliceTest, ScanSkipsExpiredAndFlushClears) {
  DbSlice slice(1);
  Put(&slice, "live");
  Put(&slice, "dead");
  slice.SetExpire(0, "dead", UnixTimeMs() - 1);
  std::set<std::string> seen;
  uint64_t cursor = 0;
  do {
    cursor = slice.Scan(0, cursor, 100, [&](std::string_view key, const PrimeValue&) { seen.emplace(key); });
  } while (cursor != 0);
  EXPECT_EQ(seen, std::set<std::string>{"live"});
  slice.FlushDb(0);
  EXPECT_EQ(slice.DbSize(0), 0u);
  EXPECT_EQ(slice.ExpireSize(0), 0u);
}

TEST(DbSliceTest, RandomKeyFindsKeysAndSkipsExpired) {
  DbSlice slice(1);
  absl::BitGen rng;
  EXPECT_FALSE(slice.RandomKey(0, &rng).has_value());
  Put(&slice, "only");
  EXPECT_EQ(slice.RandomKey(0, &rng), "only");
  for (int i = 0; i < 100; ++i) Put(&slice, helio::StrCat("x", i));
  std::set<std::string> picked;
  for (int i = 0; i < 2000; ++i) picked.insert(*slice.RandomKey(0, &rng));
  EXPECT_GT(picked.size(), 50u);  // spread over the keys, not stuck on a few
}

TEST(DbSliceTest, WatchedKeysAreMarkedOnChangeExpiryAndFlush) {
  DbSlice slice(2);
  std::atomic<bool> a_flag{false}, b_flag{false};
  EXPECT_FALSE(slice.has_watches());
  slice.Watch(0, "a", &a_flag);
  slice.Watch(0, "b", &b_flag);
  EXPECT_TRUE(slice.has_watches());
  slice.NotifyChanged(0, "other");
  slice.NotifyChanged(1, "a");  // another database's "a"
  EXPECT_FALSE(a_flag || b_flag);
  slice.NotifyChanged(0, "a");
  EXPECT_TRUE(a_flag);
  EXPECT_FALSE(b_flag);

  Put(&slice, "b");
  slice.SetExpire(0, "b", UnixTimeMs() - 1);
  EXPECT_EQ(slice.Find(0, "b"), nullptr);  // lazy expiry counts as a change
  EXPECT_TRUE(b_flag);

  a_flag = b_flag = false;
  Put(&slice, "a");
  slice.FlushDb(0);  // marks the watched keys that existed, and keeps the watches
  EXPECT_TRUE(a_flag);
  EXPECT_FALSE(b_flag);
  a_flag = false;
  slice.NotifyChanged(0, "a");
  EXPECT_TRUE(a_flag);

  a_flag = false;
  slice.Unwatch(0, "a", &a_flag);
  slice.NotifyChanged(0, "a");
  EXPECT_FALSE(a_flag);
  slice.Unwatch(0, "b", &b_flag);
  EXPECT_FALSE(slice.has_watches());
}

}  // namespace
}  // namespace damselfly
