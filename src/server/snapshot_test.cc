// Snapshots in-process: every type through SAVE and a load, and the point-in-time cut
// while writers run on every thread (snapshot.h).
#include "src/server/snapshot.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gflags/gflags.h"
#include "helio/base/strings.h"
#include "src/server/persistence_family.h"
#include "src/server/rdb_load.h"
#include "src/server/test_utils.h"

DECLARE_bool(enable_protected_configs);

namespace damselfly {
namespace {

class SnapshotTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    FLAGS_enable_protected_configs = true;  // CONFIG SET dir
    char dir[] = "/tmp/damselfly_snapshot_test_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    ASSERT_EQ(Run({"config", "set", "dir", dir_}), "OK");
    path_ = dir_ + "/dump.rdb";
  }
  void TearDown() override {
    while (SaveInProgress()) usleep(1000);  // a BGSAVE must not outlive the shards
    unlink(path_.c_str());
    rmdir(dir_.c_str());
    ServiceTest::TearDown();
  }

  // Empties the server and loads the file back.
  LoadResult Reload() {
    FlushAll();
    LoadResult result;
    absl::Status status = LoadSnapshot(path_, &result);
    EXPECT_TRUE(status.ok()) << status;
    return result;
  }

  std::string dir_, path_;
};

TEST_P(SnapshotTest, EveryTypeSurvivesSaveAndLoad) {
  Run({"set", "str", "hello"});
  Run({"set", "int", "12345"});
  Run({"set", "big", std::string(5000, 'x')});
  Run({"set", "ttl", "v", "ex", "1000"});
  Run({"rpush", "list", "a", "b", "c"});
  Run({"hset", "hash", "f1", "v1", "f2", "v2"});
  Run({"sadd", "set", "1", "2", "3"});
  Run({"sadd", "sset", "x", "y"});
  Run({"zadd", "zset", "1.5", "m1", "-2", "m2"});
  Run({"xadd", "stream", "1-1", "f", "v"});
  Run({"select", "3"});
  Run({"set", "db3key", "in db 3"});
  Run({"select", "0"});
  const std::vector<std::string_view> keys = {"str",  "int", "big",  "ttl",  "list",
                                              "hash", "set", "sset", "zset", "stream"};
  std::vector<std::string_view> digest_args = {"debug", "digest-value"};
  digest_args.insert(digest_args.end(), keys.begin(), keys.end());
  RespValue before = Run(digest_args);

  EXPECT_EQ(Run({"save"}), "OK");
  LoadResult loaded = Reload();
  EXPECT_EQ(loaded.keys, keys.size() + 1);
  EXPECT_EQ(testing::PrintToString(Run(digest_args)), testing::PrintToString(before));
  EXPECT_THAT(Run({"ttl", "ttl"}), IntArg(1000));
  EXPECT_EQ(Run({"object", "encoding", "int"}), "int");
  Run({"select", "3"});
  EXPECT_EQ(Run({"get", "db3key"}), "in db 3");
  Run({"select", "0"});
  EXPECT_THAT(Run({"lastsave"}).integer, testing::Gt(0));
}

TEST_P(SnapshotTest, DebugReloadKeepsKeysAndFunctions) {
  EXPECT_EQ(Run({"function", "load",
                 "#!lua name=lib\nredis.register_function('hello', function() return 'hi' end)"}),
            "lib");
  Run({"set", "k", "v"});
  EXPECT_EQ(Run({"debug", "reload"}), "OK");
  EXPECT_EQ(Run({"get", "k"}), "v");
  EXPECT_EQ(Run({"fcall", "hello", "0"}), "hi");
  // NOSAVE loads the file as it is: the key set since is gone, the function is back.
  Run({"set", "later", "x"});
  Run({"function", "flush"});
  EXPECT_EQ(Run({"debug", "reload", "nosave"}), "OK");
  EXPECT_THAT(Run({"exists", "later"}), IntArg(0));
  EXPECT_EQ(Run({"fcall", "hello", "0"}), "hi");
  // NOFLUSH loads on top: an existing key (or library) fails it, unless MERGE.
  EXPECT_THAT(Run({"debug", "reload", "noflush"}),
              ErrArg("ERR Error trying to load the RDB dump, check server logs."));
  EXPECT_EQ(Run({"debug", "reload", "noflush", "merge"}), "OK");
  EXPECT_EQ(Run({"fcall", "hello", "0"}), "hi");
  EXPECT_THAT(Run({"debug", "reload", "bogus"}),
              ErrArg("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."));
  Run({"function", "flush"});
}

TEST_P(SnapshotTest, ExpiredKeysAreDroppedOnLoad) {
  Run({"debug", "set-active-expire", "0"});  // "gone" must still be there for the save
  Run({"set", "gone", "v", "px", "50"});
  Run({"set", "kept", "v"});
  EXPECT_EQ(Run({"save"}), "OK");
  usleep(100'000);
  LoadResult loaded = Reload();
  EXPECT_EQ(loaded.keys, 1u);
  EXPECT_EQ(loaded.expired + loaded.keys, 2u);
  EXPECT_THAT(Run({"exists", "gone", "kept"}), IntArg(1));
  Run({"debug", "set-active-expire", "1"});
}

TEST_P(SnapshotTest, SecondSaveWhileOneRunsIsRefused) {
  EXPECT_EQ(Run({"debug", "populate", "20000", "k", "100"}), "OK");
  EXPECT_EQ(Run({"bgsave"}), "Background saving started");
  RespValue second = Run({"save"});
  RespValue scheduled = Run({"bgsave", "schedule"});
  // The first may already be done on a fast machine; then both simply succeed.
  if (second.type == RespValue::Type::kError) {
    EXPECT_THAT(second, ErrArg("ERR Background save already in progress"));
  }
  EXPECT_THAT(scheduled.str, testing::AnyOf(std::string("Background saving scheduled"),
                                            std::string("Background saving started")));
  EXPECT_THAT(Run({"bgsave", "now"}), ErrArg("ERR syntax error"));
}

// A BGSAVE counts as running from its reply on, before its fiber has begun the save:
// INFO says so, and a BGSAVE or SAVE sent right after is refused (as Redis, which has
// forked by then). The save of 200,000 keys takes far longer than the next command.
TEST_P(SnapshotTest, BgsaveRunsFromItsReplyOn) {
  EXPECT_EQ(Run({"debug", "populate", "200000", "k", "100"}), "OK");
  EXPECT_EQ(Run({"bgsave"}), "Background saving started");
  EXPECT_THAT(Run({"info", "persistence"}).str, testing::HasSubstr("rdb_bgsave_in_progress:1"));
  EXPECT_THAT(Run({"bgsave"}), ErrArg("ERR Background save already in progress"));
  EXPECT_THAT(Run({"save"}), ErrArg("ERR Background save already in progress"));
  while (SaveInProgress()) usleep(1000);
  EXPECT_THAT(Run({"info", "persistence"}).str,
              testing::HasSubstr("rdb_changes_since_last_save:0"));
}

// While a snapshot runs, writers on every thread change keys of every shard. The file
// must hold the keyspace as it was at one instant:
//  - pairs written together (MSET across shards) are equal, or both absent;
//  - keys created one after another by one writer form a prefix (none missing before
//    the last one in the file), and keys deleted one after another a suffix;
//  - no key appears twice (the loader counts every entry).
TEST_P(SnapshotTest, CutIsPointInTimeUnderConcurrentWrites) {
  constexpr int kPairs = 2000, kDeletes = 3000;
  std::vector<std::string> left, right;
  std::vector<std::string> command = {"mset"};
  for (int j = 0; j < kPairs; ++j) {
    left.push_back(KeyOnShard(j % num_shards(), helio::StrCat("l", j)));
    right.push_back(KeyOnShard((j + 1) % num_shards(), helio::StrCat("r", j)));
    command.insert(command.end(), {left[j], "0", right[j], "0"});
  }
  for (int j = 0; j < kDeletes; ++j) command.insert(command.end(), {helio::StrCat("d:", j), "x"});
  Run(std::vector<std::string_view>(command.begin(), command.end()));
  EXPECT_EQ(Run({"debug", "populate", "30000", "pad", "64"}), "OK");
  std::atomic<bool> stop{false};
  std::atomic<int> created{0}, deleted{0};
  std::vector<std::thread> writers;
  const unsigned threads = std::max(2u, num_shards());
  for (unsigned w = 0; w < threads; ++w) {
    writers.emplace_back([&, w] {
      std::unique_ptr<TestConnection> conn = Connect(w % num_shards());
      for (int round = 1; !stop.load(); ++round) {
        const int j = (round * 7919 + int(w) * 104729) % kPairs;
        const std::string value = helio::StrCat(w, ":", round);
        conn->Run({"mset", left[j], value, right[j], value});
        if (w == 0) {  // one creator, growing the tables
          conn->Run({"set", helio::StrCat("c:", created.load()), "x"});
          created.fetch_add(1);
        } else if (w == 1 && deleted.load() < kDeletes) {
          conn->Run({"del", helio::StrCat("d:", deleted.load())});
          deleted.fetch_add(1);
        } else if (round % 3 == 0) {
          conn->Run({"del", left[j], right[j]});
        }
      }
    });
  }
  while (created.load() < 200) usleep(1000);
  EXPECT_EQ(Run({"save"}), "OK");
  stop = true;
  for (std::thread& t : writers) t.join();

  LoadResult loaded = Reload();
  // Whether each of `keys` exists, with one MGET.
  auto exist = [&](const std::vector<std::string>& keys) {
    std::vector<std::string_view> mget = {"mget"};
    mget.insert(mget.end(), keys.begin(), keys.end());
    std::vector<bool> out;
    for (const RespValue& value : Run(mget).elements)
      out.push_back(value.type != RespValue::Type::kNull);
    return out;
  };
  int present_pairs = 0;
  for (int j = 0; j < kPairs; ++j) {
    RespValue values = Run({"mget", left[j], right[j]});
    ASSERT_EQ(values.elements.size(), 2u);
    EXPECT_EQ(testing::PrintToString(values.elements[0]),
              testing::PrintToString(values.elements[1]))
        << "pair " << j << " cut in half";
    present_pairs += values.elements[0].type != RespValue::Type::kNull;
  }
  std::vector<std::string> names;
  for (int j = 0; j < created.load(); ++j) names.push_back(helio::StrCat("c:", j));
  std::vector<bool> created_present = exist(names);
  const int created_in_file = int(std::count(created_present.begin(), created_present.end(), true));
  for (int j = 0; j < created_in_file; ++j)
    ASSERT_TRUE(created_present[j]) << "c:" << j << " missing";
  names.clear();
  for (int j = 0; j < kDeletes; ++j) names.push_back(helio::StrCat("d:", j));
  std::vector<bool> kept = exist(names);
  const int kept_in_file = int(std::count(kept.begin(), kept.end(), true));
  for (int j = kDeletes - kept_in_file; j < kDeletes; ++j)
    ASSERT_TRUE(kept[j]) << "d:" << j << " missing";
  EXPECT_EQ(loaded.keys, uint64_t(2 * present_pairs + created_in_file + kept_in_file + 30000))
      << "a key written twice or one missing";
}

// Keys expiring (actively, hz 500) while a snapshot runs: each key is written at most
// once, and every key whose deadline comes after the save is in the file, with it.
TEST_P(SnapshotTest, CutUnderActiveExpiry) {
  constexpr int kExpiring = 4000;
  ASSERT_EQ(Run({"config", "set", "hz", "500"}), "OK");
  EXPECT_EQ(Run({"debug", "populate", "100000", "pad", "64"}), "OK");
  std::vector<int64_t> deadline(kExpiring);
  for (int i = 0; i < kExpiring; ++i) {
    deadline[i] = UnixTimeMs() + 200 + (i * 37) % 3000;  // over 3 s, from 200 ms on
    Run({"set", helio::StrCat("e:", i), "v", "pxat", helio::StrCat(deadline[i])});
  }
  // Some have expired, more go during the save, and the rest later.
  usleep(600'000);
  EXPECT_EQ(Run({"save"}), "OK");
  const int64_t saved_ms = UnixTimeMs();
  ASSERT_EQ(Run({"config", "set", "hz", "10"}), "OK");

  std::string file;
  {
    FILE* f = fopen(path_.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    char buf[1 << 16];
    for (size_t n; (n = fread(buf, 1, sizeof(buf), f)) > 0;) file.append(buf, n);
    fclose(f);
  }
  StringSource source(file);
  RdbLoader loader(&source);
  ASSERT_TRUE(loader.LoadHeader());
  std::vector<int> seen(kExpiring, 0);
  size_t pads = 0;
  RdbEntry entry;
  while (loader.Next(&entry)) {
    if (entry.key.rfind("e:", 0) == 0) {
      const int i = std::stoi(entry.key.substr(2));
      ++seen[i];
      EXPECT_EQ(entry.expire_ms, deadline[i]) << entry.key;
    } else {
      ++pads;
    }
  }
  ASSERT_EQ(loader.error(), "");
  EXPECT_EQ(pads, 100000u);
  int later = 0;
  for (int i = 0; i < kExpiring; ++i) {
    ASSERT_LE(seen[i], 1) << "e:" << i << " written twice";
    if (deadline[i] > saved_ms) {
      ASSERT_EQ(seen[i], 1) << "e:" << i << " expires after the save but is missing";
      ++later;
    }
  }
  EXPECT_GT(later, 0);
}

INSTANTIATE_SHARD_COUNTS(SnapshotTest);

}  // namespace
}  // namespace damselfly
