#include "src/server/db_slice.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/server/lookup_prefetcher.h"
#include "src/server/watch_table.h"

namespace damselfly {
namespace {

bool kAnyKey(std::string_view) { return true; }

void Put(DbSlice* slice, std::string_view key, std::string_view value = "v", DbIndex db = 0) {
  DbSlice::Update entry = slice->AddOrFind(db, key);
  entry->SetString(value);
  entry.Changed("set");
}

void SetExpire(DbSlice* slice, std::string_view key, int64_t at_ms) {
  DbSlice::Update entry = slice->FindMutable(0, key);
  ASSERT_TRUE(entry);
  entry.SetExpire(at_ms);
  entry.Changed("expire");
}

// Records what the write path reports.
struct ChangeLog {
  explicit ChangeLog(DbSlice* slice) : slice_(slice) {
    id_ = slice->AddChangeListener([this](const KeyChange& change) {
      events.push_back(helio::StrCat(change.db, ":", change.key, ":", change.event));
      kinds.push_back(change.kind);
    });
  }
  ~ChangeLog() { slice_->RemoveChangeListener(id_); }
  std::vector<std::string> Take() {
    kinds.clear();
    return std::exchange(events, {});
  }

  std::vector<std::string> events;
  std::vector<KeyChangeKind> kinds;  // of `events`
  DbSlice* slice_;
  uint64_t id_;
};

std::string Get(DbSlice* slice, std::string_view key) {
  std::string scratch;
  return std::string(slice->Find(0, key)->GetString(&scratch));
}

TEST(DbSliceTest, FindInsertErase) {
  DbSlice slice(2);
  EXPECT_EQ(slice.Find(0, "a"), nullptr);
  {
    DbSlice::Update entry = slice.AddOrFind(0, "a");
    EXPECT_TRUE(entry.inserted());
    entry->SetString("1");
    entry.Changed("set");
  }
  EXPECT_EQ(Get(&slice, "a"), "1");
  EXPECT_EQ(slice.Find(1, "a"), nullptr);  // databases are separate
  EXPECT_FALSE(slice.AddOrFind(0, "a").inserted());
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
        const PrimeValue* value = slice.Find(db, keys[i]);
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
  DbSlice plain(1);  // the default sequence
  EXPECT_EQ(plain.NextCas(), 1u);
  EXPECT_EQ(plain.NextCas(), 2u);
}

// Memcached metadata belongs to the value it was set for: it can be updated in place
// (mg's access record), and a later write through the value makes a new item without it.
TEST(DbSliceTest, McMetaLivesWithItsValue) {
  DbSlice slice(1);
  Put(&slice, "k");
  DbSlice::Update item = slice.FindMutable(0, "k");
  PrimeValue* value = &item.value();
  EXPECT_EQ(slice.FindMcMeta(0, "k", *value), nullptr);
  slice.SetMcMeta(0, "k", value, McMeta{.flags = 5, .access_s = 100});
  McMeta* meta = slice.FindMcMeta(0, "k", *value);
  ASSERT_NE(meta, nullptr);
  meta->fetched = true;
  const DbSlice& const_slice = slice;
  const McMeta* seen = const_slice.FindMcMeta(0, "k", *value);
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->flags, 5u);
  EXPECT_EQ(seen->access_s, 100u);
  EXPECT_TRUE(seen->fetched);
  item->SetString("new");
  item.Changed("set");
  EXPECT_EQ(slice.FindMcMeta(0, "k", *value), nullptr);
}

TEST(DbSliceTest, LazyExpiryDeletesOnAccess) {
  DbSlice slice(1);
  Put(&slice, "gone");
  Put(&slice, "kept");
  SetExpire(&slice, "gone", UnixTimeMs() - 1);
  SetExpire(&slice, "kept", UnixTimeMs() + 60000);
  EXPECT_EQ(slice.ExpireSize(0), 2u);
  EXPECT_EQ(slice.Find(0, "gone"), nullptr);
  EXPECT_NE(slice.Find(0, "kept"), nullptr);
  EXPECT_EQ(slice.DbSize(0), 1u);
  EXPECT_EQ(slice.ExpireSize(0), 1u);
  EXPECT_EQ(slice.stats().expired_keys, 1u);
  SetExpire(&slice, "kept", 0);  // PERSIST
  EXPECT_EQ(slice.ExpireSize(0), 0u);
  EXPECT_EQ(slice.GetExpire(0, "kept"), 0);
}

// CLIENT PAUSE: expired keys read as missing but stay until the pause ends; an insertion
// replaces one (the table cannot hold a key twice).
TEST(DbSliceTest, KeepExpiredUntilHoldsExpiredKeys) {
  DbSlice slice(1);
  Put(&slice, "a");
  Put(&slice, "b");
  SetExpire(&slice, "a", UnixTimeMs() - 1);
  SetExpire(&slice, "b", UnixTimeMs() - 1);
  slice.KeepExpiredUntil(UnixTimeMs() + 60000);
  EXPECT_EQ(slice.Find(0, "a"), nullptr);
  EXPECT_FALSE(slice.FindMutable(0, "a"));
  EXPECT_EQ(slice.ActiveExpire(100, kAnyKey), std::make_pair(size_t(0), size_t(0)));
  EXPECT_EQ(slice.DbSize(0), 2u);
  EXPECT_EQ(slice.stats().expired_keys, 0u);
  Put(&slice, "b", "new");
  EXPECT_NE(slice.Find(0, "b"), nullptr);
  EXPECT_EQ(slice.DbSize(0), 2u);
  EXPECT_EQ(slice.stats().expired_keys, 1u);
  slice.KeepExpiredUntil(0);
  EXPECT_EQ(slice.Find(0, "a"), nullptr);
  EXPECT_EQ(slice.DbSize(0), 1u);
  EXPECT_EQ(slice.stats().expired_keys, 2u);
}

// Active expiry reaches every expired key within a bounded number of rounds without any
// access, and leaves keys without a TTL or with a future one alone.
TEST(DbSliceTest, ActiveExpiryWalksTheWholeTable) {
  DbSlice slice(1);
  for (int i = 0; i < 5000; ++i) {
    std::string key = helio::StrCat("k", i);
    Put(&slice, key);
    if (i % 2 == 0) SetExpire(&slice, key, UnixTimeMs() - 1);
    if (i % 10 == 1) SetExpire(&slice, key, UnixTimeMs() + 60000);
  }
  size_t rounds = 0;
  while (slice.ExpireSize(0) > 500 && rounds < 10000) {
    slice.ActiveExpire(20, kAnyKey);
    ++rounds;
  }
  EXPECT_EQ(slice.DbSize(0), 2500u);
  EXPECT_EQ(slice.ExpireSize(0), 500u);
  EXPECT_EQ(slice.stats().expired_keys, 2500u);
}

// Keys the shard keeps (a transaction holds them) outlive their deadline in active expiry
// and go in a later round once released.
TEST(DbSliceTest, ActiveExpirySkipsKeysItMayNotDelete) {
  DbSlice slice(1);
  Put(&slice, "held");
  Put(&slice, "free");
  SetExpire(&slice, "held", UnixTimeMs() - 1);
  SetExpire(&slice, "free", UnixTimeMs() - 1);
  auto [checked, deleted] =
      slice.ActiveExpire(100, [](std::string_view key) { return key != "held"; });
  EXPECT_EQ(checked, 2u);
  EXPECT_EQ(deleted, 1u);
  EXPECT_EQ(slice.ExpireSize(0), 1u);
  EXPECT_EQ(slice.stats().expired_keys, 1u);
  EXPECT_EQ(slice.ActiveExpire(100, kAnyKey), std::make_pair(size_t(1), size_t(1)));
  EXPECT_EQ(slice.DbSize(0), 0u);
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
  SetExpire(&slice, "dead", UnixTimeMs() - 1);
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

// The write path reports real changes only, with the command's event name.
TEST(DbSliceTest, UpdatesReportRealChangesOnly) {
  DbSlice slice(2);
  ChangeLog log(&slice);
  Put(&slice, "a");
  EXPECT_EQ(log.Take(), (std::vector<std::string>{"0:a:new", "0:a:set"}));

  {  // SET NX of an existing key: an Update that changes nothing
    DbSlice::Update entry = slice.AddOrFind(0, "a");
    EXPECT_FALSE(entry.inserted());
  }
  {  // an insert never set (SET XX of a missing key) leaves no key and no event
    DbSlice::Update entry = slice.AddOrFind(0, "b");
    EXPECT_TRUE(entry.inserted());
  }
  EXPECT_EQ(slice.Find(0, "b"), nullptr);
  EXPECT_FALSE(slice.Erase(0, "missing"));
  EXPECT_FALSE(slice.FindMutable(0, "missing"));
  EXPECT_TRUE(log.Take().empty());

  EXPECT_TRUE(slice.Erase(0, "a"));
  Put(&slice, "c");
  SetExpire(&slice, "c", UnixTimeMs() - 1);
  EXPECT_EQ(slice.Find(0, "c"), nullptr);
  EXPECT_EQ(log.Take(), (std::vector<std::string>{"0:a:del", "0:c:new", "0:c:set", "0:c:expire",
                                                  "0:c:expired"}));

  {  // erasing through the Update reports what it recorded, then the delete
    Put(&slice, "d");
    log.Take();
    DbSlice::Update entry = slice.FindMutable(0, "d");
    entry.Changed("lpop");
    entry.Erase("del");
  }
  EXPECT_EQ(log.kinds, (std::vector<KeyChangeKind>{KeyChangeKind::kSet, KeyChangeKind::kDel}));
  EXPECT_EQ(log.Take(), (std::vector<std::string>{"0:d:lpop", "0:d:del"}));
  {  // a key created and deleted by one Update never existed for the listeners
    DbSlice::Update entry = slice.AddOrFind(0, "e");
    entry->SetString("v");
    entry.Changed("set");
    entry.Erase("del");
  }
  EXPECT_TRUE(log.Take().empty());
}

// One Update reports each event it recorded, in order, after "new" for a key it created
// (Redis's SET with EX: new, set, expire); moving an Update moves them.
TEST(DbSliceTest, UpdatesReportEveryEventInOrder) {
  DbSlice slice(1);
  ChangeLog log(&slice);
  {
    DbSlice::Update entry = slice.AddOrFind(0, "k");
    entry->SetString("v");
    entry.Changed("set");
    entry.SetExpire(UnixTimeMs() + 60000);
    entry.Changed("expire");
    DbSlice::Update moved = std::move(entry);
    EXPECT_FALSE(entry.changed());
    EXPECT_TRUE(moved.changed());
  }
  EXPECT_EQ(log.Take(), (std::vector<std::string>{"0:k:new", "0:k:set", "0:k:expire"}));
  {
    DbSlice::Update entry = slice.AddOrFind(0, "k");
    entry->SetString("w");
    entry.Changed("set");
    for (int i = 0; i < 5; ++i) entry.Changed("expire");  // repeated at once: one change
  }
  EXPECT_EQ(log.Take(), (std::vector<std::string>{"0:k:set", "0:k:expire"}));
}

// Reads of missing keys go to the miss listener, writes' lookups do not.
TEST(DbSliceTest, MissListenerHearsReadsOfMissingKeys) {
  DbSlice slice(1);
  std::vector<std::string> misses;
  slice.SetMissListener(
      [&](DbIndex db, std::string_view key) { misses.push_back(helio::StrCat(db, ":", key)); });
  Put(&slice, "here");
  EXPECT_EQ(slice.FindRead(0, "nothing"), nullptr);
  EXPECT_NE(slice.FindRead(0, "here"), nullptr);
  EXPECT_EQ(slice.FindRead(0, "gone", false), nullptr);
  slice.CountRead(0, "mc", false);
  slice.CountRead(0, "here", true);
  EXPECT_EQ(slice.Find(0, "silent"), nullptr);
  EXPECT_FALSE(slice.FindMutable(0, "silent"));
  EXPECT_EQ(misses, (std::vector<std::string>{"0:nothing", "0:gone", "0:mc"}));
  EXPECT_EQ(slice.stats().keyspace_misses, 3u);
  EXPECT_EQ(slice.stats().keyspace_hits, 2u);
  slice.SetMissListener(nullptr);
  EXPECT_EQ(slice.FindRead(0, "nothing"), nullptr);
  EXPECT_EQ(misses.size(), 3u);
}

TEST(DbSliceTest, FindTypedDecidesWrongType) {
  DbSlice slice(1);
  Put(&slice, "s");
  EXPECT_EQ(slice.FindTyped(0, "none", ObjType::kString).status(), OpStatus::kKeyNotFound);
  EXPECT_TRUE(slice.FindTyped(0, "s", ObjType::kString).ok());
  EXPECT_EQ(slice.FindTyped(0, "s", ObjType::kList).status(), OpStatus::kWrongType);
  EXPECT_EQ(slice.FindMutableTyped(0, "s", ObjType::kHash).status(), OpStatus::kWrongType);
  EXPECT_EQ(slice.FindMutableTyped(0, "none", ObjType::kHash).status(), OpStatus::kKeyNotFound);
}

// A list-like test type: the server's seams (ownership, type, encoding, memory, moves,
// serialized moves) before the first real collection lands.
class TestList : public core::TypedObject {
 public:
  static inline int live = 0;
  explicit TestList(std::string items) : items_(std::move(items)) { ++live; }
  ~TestList() override { --live; }
  size_t MallocUsed() const override { return core::ObjUsableSize(const_cast<TestList*>(this)) + 1000; }
  void Serialize(std::string* out) const override { out->append(items_); }
  size_t FreeEffort() const override { return items_.size(); }  // one free per item
  const std::string& items() const { return items_; }

  static core::TypedObject* Make(ObjEncoding, std::string_view form) {
    return core::TypedObject::Make<TestList>(std::string(form));
  }

 private:
  std::string items_;
};

void PutList(DbSlice* slice, std::string_view key, std::string items, DbIndex db = 0,
             ObjEncoding encoding = ObjEncoding::kListpack) {
  DbSlice::Update entry = slice->AddOrFind(db, key);
  entry->SetObject(ObjType::kList, encoding, core::TypedObject::Make<TestList>(std::move(items)));
  entry.Changed("lpush");
}

TEST(DbSliceTest, TypedValuesMoveWithoutCopies) {
  RegisterTypedObjectFactory(ObjType::kList, ObjectFactory<ObjType::kList, TestList::Make>);
  {
    DbSlice slice(2);
    ChangeLog log(&slice);
    PutList(&slice, "l", "abc");
    const PrimeValue* value = slice.Find(0, "l");
    ASSERT_NE(value, nullptr);
    EXPECT_EQ(value->type(), ObjType::kList);
    EXPECT_STREQ(ObjTypeName(value->type()), "list");
    EXPECT_STREQ(value->EncodingName(), "listpack");
    EXPECT_GE(value->MallocUsed(), 1000u);
    EXPECT_GT(slice.MemoryUsage(0, "l"), 1000u);
    const TestList* object = value->GetObjectAs<TestList>();

    SetExpire(&slice, "l", UnixTimeMs() + 60000);
    Put(&slice, "target");
    log.Take();
    ASSERT_EQ(slice.Rename(0, "l", "target", false), OpStatus::kOk);
    EXPECT_EQ(log.kinds,
              (std::vector<KeyChangeKind>{KeyChangeKind::kSet, KeyChangeKind::kRenamedFrom,
                                          KeyChangeKind::kRenamedTo}));
    EXPECT_EQ(slice.Find(0, "l"), nullptr);
    value = slice.Find(0, "target");
    ASSERT_NE(value, nullptr);
    EXPECT_EQ(value->GetObjectAs<TestList>(), object) << "the object itself moved";
    EXPECT_GT(slice.GetExpire(0, "target"), UnixTimeMs());
    EXPECT_EQ(TestList::live, 1);
    // As Redis: the replaced target is "new" again, before the two halves of the rename.
    EXPECT_EQ(log.Take(),
              (std::vector<std::string>{"0:target:new", "0:l:rename_from", "0:target:rename_to"}));
    EXPECT_EQ(slice.ExpireSize(0), 1u) << "the old name's deadline left with it";
    EXPECT_EQ(slice.GetExpire(0, "l"), 0);

    Put(&slice, "other");
    EXPECT_EQ(slice.Rename(0, "target", "other", true), OpStatus::kSkipped);
    EXPECT_EQ(slice.Rename(0, "nothing", "x", false), OpStatus::kKeyNotFound);

    // MOVE: to another database of the shard, deadline kept; refused onto an existing key.
    log.Take();
    ASSERT_EQ(slice.MoveToDb(0, 1, "target"), OpStatus::kOk);
    EXPECT_EQ(slice.Find(0, "target"), nullptr);
    EXPECT_EQ(slice.Find(1, "target")->GetObjectAs<TestList>(), object);
    EXPECT_GT(slice.GetExpire(1, "target"), UnixTimeMs());
    EXPECT_EQ(log.Take(),
              (std::vector<std::string>{"1:target:new", "0:target:move_from", "1:target:move_to"}));
    EXPECT_EQ(slice.ExpireSize(0), 0u);
    EXPECT_EQ(slice.ExpireSize(1), 1u);
    Put(&slice, "other", "v", 1);
    EXPECT_EQ(slice.MoveToDb(0, 1, "other"), OpStatus::kSkipped);

    // Across shards a value travels serialized.
    std::string form;
    slice.Find(1, "target")->Serialize(&form);
    DbSlice elsewhere(2);
    ASSERT_TRUE(elsewhere.PutSerialized(0, "copy", form, 0, "copy_to"));
    const PrimeValue* copy = elsewhere.Find(0, "copy");
    ASSERT_NE(copy, nullptr);
    EXPECT_EQ(copy->type(), ObjType::kList);
    EXPECT_EQ(copy->GetObjectAs<TestList>()->items(), "abc");
    EXPECT_FALSE(elsewhere.PutSerialized(0, "bad", "", 0, "copy_to"));
    EXPECT_EQ(TestList::live, 2);
  }
  EXPECT_EQ(TestList::live, 0) << "destroying the slice destroys its objects";
}

TEST(DbSliceTest, LazyFreeDetachesThenFreesInSteps) {
  {
    DbSlice slice(2);
    int detached = 0;
    slice.SetDetachListener([&] { ++detached; });
    ChangeLog log(&slice);
    // UNLINK: a large collection (more than 64 frees) waits for FreeDetached; a small one
    // and a string go at once.
    const std::string items(65, 'i');
    PutList(&slice, "big", items, 0, ObjEncoding::kQuicklist);
    PutList(&slice, "small", std::string(64, 'i'), 0, ObjEncoding::kQuicklist);
    Put(&slice, "s");
    log.Take();
    EXPECT_TRUE(slice.Unlink(0, "big"));
    EXPECT_TRUE(slice.Unlink(0, "small"));
    EXPECT_TRUE(slice.Unlink(0, "s"));
    EXPECT_FALSE(slice.Unlink(0, "none"));
    EXPECT_EQ(log.Take(), (std::vector<std::string>{"0:big:del", "0:small:del", "0:s:del"}));
    EXPECT_EQ(slice.Find(0, "big"), nullptr);
    EXPECT_EQ(TestList::live, 1);
    EXPECT_EQ(detached, 1);
    EXPECT_EQ(slice.lazyfree_pending(), 1u);

    // FLUSHDB ASYNC: the keys leave at once; their memory goes one table block per step.
    for (int i = 0; i < 30000; ++i) Put(&slice, helio::StrCat("k", i));
    PutList(&slice, "bigger", items, 0, ObjEncoding::kQuicklist);
    SetExpire(&slice, "bigger", UnixTimeMs() + 60000);
    slice.FlushDb(0, /*lazily=*/true);
    EXPECT_EQ(slice.DbSize(0), 0u);
    EXPECT_EQ(slice.ExpireSize(0), 0u);
    EXPECT_EQ(slice.Find(0, "k1"), nullptr);
    EXPECT_EQ(detached, 2);
    EXPECT_EQ(slice.lazyfree_pending(), 1u + 30001u);
    Put(&slice, "after");  // the database is usable at once
    EXPECT_EQ(Get(&slice, "after"), "v");
    slice.FlushDb(1, /*lazily=*/true);  // never made: nothing to detach
    EXPECT_EQ(detached, 2);

    size_t steps = 0;
    while (slice.FreeDetached(std::chrono::nanoseconds(0))) ++steps;
    EXPECT_GT(steps, 30u);  // 30,000 keys fill dozens of blocks
    EXPECT_EQ(slice.lazyfree_pending(), 0u);
    EXPECT_EQ(slice.lazyfreed(), 1u + 30001u);
    EXPECT_EQ(TestList::live, 0);
    EXPECT_FALSE(slice.FreeDetached(std::chrono::nanoseconds(0)));

    // What is still detached when the slice goes is freed with it.
    PutList(&slice, "last", items, 0, ObjEncoding::kHashtable);
    EXPECT_TRUE(slice.Unlink(0, "last"));
    EXPECT_EQ(TestList::live, 1);
    slice.ResetStats();
    EXPECT_EQ(slice.lazyfreed(), 0u);
  }
  EXPECT_EQ(TestList::live, 0);
}

TEST(DbSliceTest, SwapDbTradesContents) {
  DbSlice slice(3);
  ChangeLog log(&slice);
  Put(&slice, "a", "in0", 0);
  Put(&slice, "b", "in1", 1);
  log.Take();
  slice.SwapDb(0, 1);
  EXPECT_EQ(slice.Find(0, "a"), nullptr);
  EXPECT_NE(slice.Find(1, "a"), nullptr);
  EXPECT_NE(slice.Find(0, "b"), nullptr);
  EXPECT_EQ(log.Take(), (std::vector<std::string>{"0::swapdb", "1::swapdb"}));
  // Expiry after the swap reports the key's new database.
  DbSlice::Update entry = slice.FindMutable(0, "b");
  entry.SetExpire(UnixTimeMs() - 1);
  entry.Finish();
  EXPECT_EQ(slice.Find(0, "b"), nullptr);
  EXPECT_EQ(log.Take(), std::vector<std::string>{"0:b:expired"});
  slice.SwapDb(2, 0);  // with an empty database
  EXPECT_EQ(slice.DbSize(0), 0u);
  EXPECT_EQ(slice.DbSize(2), 0u);
}

// The tables of a database swapped to an index never used before still count.
TEST(DbSliceTest, UsedBytesFollowASwapToAnUnusedIndex) {
  DbSlice slice(16);
  for (int i = 0; i < 1000; ++i) Put(&slice, "k" + std::to_string(i), "v", 0);
  const uint64_t used = slice.UsedBytes();
  slice.SwapDb(0, 15);
  EXPECT_EQ(slice.UsedBytes(), used);
  EXPECT_EQ(slice.DbSize(15), 1000u);
}

TEST(DbSliceTest, WatchedKeysAreMarkedOnRealChanges) {
  DbSlice slice(2);
  WatchTable watches(&slice);
  std::atomic<bool> a_flag{false}, b_flag{false};
  watches.Watch(0, "a", &a_flag);
  watches.Watch(0, "b", &b_flag);
  EXPECT_EQ(watches.size(), 2u);
  Put(&slice, "other");
  Put(&slice, "a", "v", 1);  // another database's "a"
  EXPECT_FALSE(a_flag || b_flag);
  EXPECT_FALSE(slice.Erase(0, "a"));  // deleting a missing key changes nothing
  slice.AddOrFind(0, "a");           // nor does an insert that is never set
  EXPECT_FALSE(a_flag);
  Put(&slice, "a");
  EXPECT_TRUE(a_flag);
  EXPECT_FALSE(b_flag);

  Put(&slice, "b");
  b_flag = false;
  SetExpire(&slice, "b", UnixTimeMs() - 1);
  b_flag = false;
  EXPECT_EQ(slice.Find(0, "b"), nullptr);  // lazy expiry counts as a change
  EXPECT_TRUE(b_flag);

  a_flag = b_flag = false;
  slice.FlushDb(0);  // marks the watched keys that existed, and keeps the watches
  EXPECT_TRUE(a_flag);
  EXPECT_FALSE(b_flag);
  a_flag = false;
  Put(&slice, "a");
  EXPECT_TRUE(a_flag);

  std::atomic<bool> c_flag{false};
  watches.Watch(0, "c", &c_flag);
  Put(&slice, "b", "v", 1);
  slice.Erase(0, "a");
  a_flag = b_flag = false;
  slice.SwapDb(0, 1);  // "a" and "b" exist in db 1: marked; "c" exists in neither
  EXPECT_TRUE(a_flag);
  EXPECT_TRUE(b_flag);
  EXPECT_FALSE(c_flag);
  watches.Unwatch(0, "c", &c_flag);

  a_flag = false;
  watches.Unwatch(0, "a", &a_flag);
  Put(&slice, "a");
  EXPECT_FALSE(a_flag);
  watches.Unwatch(0, "b", &b_flag);
  EXPECT_EQ(watches.size(), 0u);
}

}  // namespace
}  // namespace damselfly
