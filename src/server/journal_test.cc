// The replication journal in process: what each kind of write leaves in a shard's
// records (journal.h). The stream that merges them is tested over the wire, with a
// redis-server replica (tests/test_replication.py).
#include "src/server/journal.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
#include "helio/base/strings.h"
#include "src/server/engine_shard_set.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;
using testing::IsEmpty;
using testing::MatchesRegex;

// Splits a record's RESP commands into "NAME arg arg" lines (binary args kept as they are;
// the stream keeps a command's name as the client sent it).
std::vector<std::string> Decode(std::string_view resp) {
  std::vector<std::string> lines;
  auto number = [&](char kind) {
    EXPECT_EQ(resp.front(), kind);
    size_t end = resp.find("\r\n");
    size_t n = std::stoul(std::string(resp.substr(1, end - 1)));
    resp.remove_prefix(end + 2);
    return n;
  };
  while (!resp.empty()) {
    std::string line;
    for (size_t args = number('*'); args > 0; --args) {
      size_t size = number('$');
      if (line.empty()) {  // the name as the client sent it: upper case here
        line = helio::AsciiStrToUpper(resp.substr(0, size));
      } else {
        line += ' ';
        line.append(resp.substr(0, size));
      }
      resp.remove_prefix(size + 2);
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

class JournalTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    std::lock_guard guard(mu_);
    records_.assign(num_shards(), {});
  }
  void TearDown() override {
    StopRecording();
    ServiceTest::TearDown();
  }

  void StartRecording() {
    SetJournalActive(true);  // transactions take group ids
    shard_set->RunOnAll([this](EngineShard* shard) {
      shard->journal().Cut(kGeneration, /*token=*/7,
                           [this](uint16_t id, uint64_t, std::vector<JournalRecord> records) {
                             std::lock_guard guard(mu_);
                             for (JournalRecord& r : records) records_[id].push_back(std::move(r));
                           });
    });
    // Every shard's first record is the cut.
    for (const auto& shard_records : Take()) {
      ASSERT_EQ(shard_records.size(), 1u);
      EXPECT_EQ(shard_records[0], "cut 7");
    }
  }
  void StopRecording() {
    shard_set->RunOnAll([](EngineShard* shard) { shard->journal().Stop(kGeneration); });
    SetJournalActive(false);
  }

  // Each shard's records since the last call, as lines: "db0: NAME args" for commands,
  // "barrier db0: NAME args", "cut <token>", "begin <parts>" and "end" around a group's
  // part.
  std::vector<std::vector<std::string>> Take() {
    shard_set->RunOnAll([](EngineShard* shard) { shard->journal().Flush(); });
    std::lock_guard guard(mu_);
    std::vector<std::vector<std::string>> out(num_shards());
    for (size_t shard = 0; shard < records_.size(); ++shard) {
      for (const JournalRecord& r : records_[shard]) {
        if (r.kind == JournalRecord::Kind::kCut) {
          out[shard].push_back(helio::StrCat("cut ", r.token));
          continue;
        }
        if (r.kind == JournalRecord::Kind::kGroupStart) {
          out[shard].push_back(helio::StrCat("begin ", r.parts));
          continue;
        }
        if (r.kind == JournalRecord::Kind::kGroupEnd) {
          out[shard].push_back("end");
          continue;
        }
        const char* prefix = r.kind == JournalRecord::Kind::kBarrier ? "barrier db" : "db";
        for (const std::string& line : Decode(r.resp)) {
          out[shard].push_back(helio::StrCat(prefix, r.db, ": ", line));
        }
      }
      records_[shard].clear();
    }
    return out;
  }
  // All shards' records since the last call, shard by shard.
  std::vector<std::string> TakeAll() {
    std::vector<std::string> all;
    for (auto& records : Take()) all.insert(all.end(), records.begin(), records.end());
    return all;
  }

  static constexpr uint64_t kGeneration = 1;
  std::mutex mu_;
  std::vector<std::vector<JournalRecord>> records_;
};

TEST_P(JournalTest, NothingWhileNotRecording) {
  EXPECT_EQ(Run({"lpush", "l", "a"}), 1);
  EXPECT_THAT(TakeAll(), IsEmpty());
  StartRecording();
  StopRecording();
  EXPECT_EQ(Run({"lpush", "l", "b"}), 2);
  EXPECT_THAT(TakeAll(), IsEmpty());
}

TEST_P(JournalTest, DeterministicCommandsAsSent) {
  StartRecording();
  EXPECT_EQ(Run({"lpush", "l", "a", "b"}), 2);
  EXPECT_EQ(Run({"hset", "h", "f", "v"}), 1);
  EXPECT_EQ(Run({"incr", "n"}), 1);
  EXPECT_EQ(Run({"set", "s", "v", "KEEPTTL"}), "OK");
  EXPECT_EQ(Run({"zadd", "z", "1.5", "m"}), 1);
  EXPECT_THAT(TakeAll(), testing::UnorderedElementsAre(
                             "db0: LPUSH l a b", "db0: HSET h f v", "db0: INCR n",
                             "db0: SET s v KEEPTTL", "db0: ZADD z 1.5 m"));
  // A write that changed nothing leaves nothing.
  EXPECT_THAT(Run({"set", "s", "w", "NX"}), IsNil());
  EXPECT_EQ(Run({"del", "missing"}), 0);
  EXPECT_THAT(TakeAll(), IsEmpty());
  EXPECT_EQ(Run({"select", "3"}), "OK");
  EXPECT_EQ(Run({"rpush", "l", "x"}), 1);
  EXPECT_THAT(TakeAll(), ElementsAre("db3: RPUSH l x"));
}

TEST_P(JournalTest, OtherWritesAsTheirEffects) {
  StartRecording();
  EXPECT_EQ(Run({"set", "e", "v", "ex", "100"}), "OK");
  EXPECT_THAT(TakeAll(), ElementsAre(MatchesRegex("db0: SET e v PXAT [0-9]{13}")));
  EXPECT_EQ(Run({"sadd", "t", "a", "b", "c"}), 3);
  EXPECT_EQ(TakeAll().size(), 1u);
  Run({"srandmember", "t"});
  Run({"sintercard", "1", "t"});
  EXPECT_THAT(TakeAll(), IsEmpty());
  Run({"spop", "t", "3"});
  EXPECT_THAT(TakeAll(), ElementsAre("db0: DEL t"));
  EXPECT_EQ(Run({"rpush", "{l}", "3", "1", "2"}), 3);
  EXPECT_EQ(Run({"sort", "{l}", "store", "{l}sorted"}), 3);
  // The stored list's new state, as a DUMP payload with no deadline.
  EXPECT_THAT(TakeAll(),
              ElementsAre("db0: RPUSH {l} 3 1 2",
                          testing::AllOf(testing::StartsWith("db0: RESTORE {l}sorted 0 "),
                                         testing::EndsWith(" REPLACE ABSTTL"))));
}

TEST_P(JournalTest, RewritesAsRedisPropagates) {
  StartRecording();
  EXPECT_EQ(Run({"incrbyfloat", "f", "1.5"}), "1.5");
  EXPECT_EQ(Run({"hincrbyfloat", "h", "g", "0.25"}), "0.25");
  EXPECT_THAT(TakeAll(), testing::UnorderedElementsAre("db0: SET f 1.5 KEEPTTL",
                                                       "db0: HSET h g 0.25"));
  EXPECT_EQ(Run({"sadd", "s", "only"}), 1);
  EXPECT_EQ(Run({"spop", "s"}), "only");
  EXPECT_THAT(TakeAll(), ElementsAre("db0: SADD s only", "db0: SREM s only"));
  // XADD with the ID it took; an approximate trim as the length it left.
  EXPECT_EQ(Run({"xadd", "x", "*", "f", "v"}).type, RespValue::Type::kBulk);
  EXPECT_THAT(TakeAll(), ElementsAre(MatchesRegex("db0: XADD x [0-9]{13}-0 f v")));
  for (int i = 0; i < 250; ++i) Run({"xadd", "y", "1-" + std::to_string(i + 1), "f", "v"});
  TakeAll();
  EXPECT_EQ(Run({"xadd", "y", "maxlen", "~", "10", "limit", "200", "5-*", "f", "v"}), "5-0");
  EXPECT_THAT(TakeAll(), ElementsAre("db0: XADD y MAXLEN = 51 5-0 f v"));
  EXPECT_EQ(Run({"xtrim", "y", "minid", "~", "5"}), 0);
  EXPECT_EQ(Run({"xtrim", "y", "minid", "5"}), 50);
  EXPECT_THAT(TakeAll(), ElementsAre("db0: XTRIM y MAXLEN = 1"));
  // Pops of the blocking and multi-key forms as the pops they made.
  EXPECT_EQ(Run({"rpush", "q", "a", "b", "c"}), 3);
  EXPECT_THAT(Run({"blpop", "q", "0"}), RespArray(ElementsAre("q", "a")));
  EXPECT_THAT(Run({"blmpop", "0", "1", "q", "right", "count", "5"}),
              RespArray(ElementsAre("q", RespArray(ElementsAre("c", "b")))));
  EXPECT_THAT(TakeAll(), ElementsAre("db0: RPUSH q a b c", "db0: LPOP q 1", "db0: RPOP q 2"));
  EXPECT_EQ(Run({"zadd", "z", "1", "a", "2", "b"}), 2);
  EXPECT_THAT(Run({"bzpopmax", "z", "0"}), RespArray(ElementsAre("z", "b", "2")));
  EXPECT_THAT(TakeAll(), ElementsAre("db0: ZADD z 1 a 2 b", "db0: ZPOPMAX z 1"));
  EXPECT_EQ(Run({"sadd", "t", "a", "b", "c"}), 3);
  TakeAll();
  RespValue popped = Run({"spop", "t", "2"});
  ASSERT_EQ(popped.elements.size(), 2u);
  EXPECT_THAT(TakeAll(), ElementsAre(helio::StrCat("db0: SREM t ", popped.elements[0].str, " ",
                                                   popped.elements[1].str)));
  // A rewrite is only recorded when the command changed something.
  EXPECT_THAT(Run({"spop", "missing"}), IsNil());
  EXPECT_THAT(Run({"incrbyfloat", "h", "1"}), ErrArg("WRONGTYPE"));
  EXPECT_THAT(TakeAll(), IsEmpty());
}

TEST_P(JournalTest, DeadlinesAreAbsolute) {
  StartRecording();
  EXPECT_EQ(Run({"set", "k", "v"}), "OK");
  EXPECT_EQ(Run({"expire", "k", "100"}), 1);
  EXPECT_EQ(Run({"getex", "k", "persist"}), "v");
  EXPECT_EQ(Run({"pexpire", "k", "100000"}), 1);
  EXPECT_EQ(Run({"expire", "k", "-1"}), 1);
  EXPECT_THAT(TakeAll(), ElementsAre("db0: SET k v", MatchesRegex("db0: PEXPIREAT k [0-9]{13}"),
                                     "db0: PERSIST k", MatchesRegex("db0: PEXPIREAT k [0-9]{13}"),
                                     "db0: DEL k"));
}

TEST_P(JournalTest, ExpiredKeysAreDeleted) {
  StartRecording();
  EXPECT_EQ(Run({"set", "k", "v", "px", "1"}), "OK");
  TakeAll();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_THAT(Run({"get", "k"}), IsNil());
  EXPECT_THAT(TakeAll(), ElementsAre("db0: DEL k"));
}

TEST_P(JournalTest, FlushesAreBarriersOnEveryShard) {
  StartRecording();
  EXPECT_EQ(Run({"set", "k", "v"}), "OK");
  TakeAll();
  EXPECT_EQ(Run({"flushall"}), "OK");
  for (const auto& shard_records : Take()) {
    EXPECT_THAT(shard_records, ElementsAre("barrier db0: FLUSHALL"));
  }
  EXPECT_EQ(Run({"swapdb", "0", "1"}), "OK");
  for (const auto& shard_records : Take()) {
    EXPECT_THAT(shard_records, ElementsAre("barrier db0: SWAPDB 0 1"));
  }
}

// The shards that hold some of `keys`.
size_t ShardsOf(std::initializer_list<std::string_view> keys) {
  std::vector<ShardId> shards;
  for (std::string_view key : keys) shards.push_back(shard_set->ShardOf(key));
  std::sort(shards.begin(), shards.end());
  return std::unique(shards.begin(), shards.end()) - shards.begin();
}

TEST_P(JournalTest, CommandsAcrossShardsAsEachShardsEffectsInOneGroup) {
  StartRecording();
  EXPECT_EQ(Run({"mset", "a", "1", "b", "2", "c", "3", "d", "4"}), "OK");
  if (num_shards() == 1) {
    EXPECT_THAT(TakeAll(), ElementsAre("db0: MSET a 1 b 2 c 3 d 4"));
  } else {
    // Each shard of the keys hands over its part of the group: its keys' states.
    const size_t parts = ShardsOf({"a", "b", "c", "d"});
    std::vector<std::string> commands;
    size_t begins = 0;
    for (const auto& shard_records : Take()) {
      if (shard_records.empty()) continue;
      EXPECT_EQ(shard_records.front(), helio::StrCat("begin ", parts));
      EXPECT_EQ(shard_records.back(), "end");
      ++begins;
      commands.insert(commands.end(), shard_records.begin() + 1, shard_records.end() - 1);
    }
    EXPECT_EQ(begins, parts);
    // Each part is an MSET of its shard's pairs; together they set every key.
    std::vector<std::string> pairs;
    for (const std::string& command : commands) {
      ASSERT_TRUE(command.starts_with("db0: MSET ")) << command;
      std::vector<std::string> words = absl::StrSplit(command.substr(10), ' ');
      for (size_t i = 0; i + 1 < words.size(); i += 2) {
        pairs.push_back(words[i] + "=" + words[i + 1]);
      }
    }
    EXPECT_THAT(pairs, testing::UnorderedElementsAre("a=1", "b=2", "c=3", "d=4"));
  }
  // DEL likewise; a shard whose keys did not exist writes nothing.
  EXPECT_EQ(Run({"del", "a", "b", "c", "d", "nope1", "nope2"}), 4);
  std::vector<std::string> dels;
  for (const std::string& line : TakeAll()) {
    if (line.starts_with("db0: ")) dels.push_back(line);
  }
  if (num_shards() == 1) {
    EXPECT_THAT(dels, ElementsAre("db0: DEL a b c d nope1 nope2"));
  } else {
    std::vector<std::string> deleted;
    for (const std::string& line : dels) {
      ASSERT_TRUE(line.starts_with("db0: DEL ")) << line;
      std::vector<std::string> words = absl::StrSplit(line.substr(9), ' ');
      deleted.insert(deleted.end(), words.begin(), words.end());
    }
    for (const char* key : {"a", "b", "c", "d"}) EXPECT_THAT(deleted, testing::Contains(key));
  }
}

// The commands of each part of a group that holds some, and any commands outside groups,
// in order; a script that runs on every shard leaves an empty part on those it did not
// write on.
std::vector<std::vector<std::string>> CommandUnits(const std::vector<std::string>& lines) {
  std::vector<std::vector<std::string>> units;
  bool in_part = false;
  std::vector<std::string> part;
  for (const std::string& line : lines) {
    if (line.starts_with("begin ")) {
      in_part = true;
    } else if (line == "end") {
      if (!part.empty()) units.push_back(std::move(part));
      part.clear();
      in_part = false;
    } else if (in_part) {
      part.push_back(line);
    } else {
      units.push_back({line});
    }
  }
  return units;
}

TEST_P(JournalTest, TransactionsAndScriptsAsGroups) {
  StartRecording();
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"incr", "a"}), "QUEUED");
  EXPECT_EQ(Run({"get", "a"}), "QUEUED");
  EXPECT_EQ(Run({"del", "b"}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre(1, "1", 0)));
  std::vector<std::string> all = TakeAll();
  const std::string begin = helio::StrCat("begin ", ShardsOf({"a", "b"}));
  EXPECT_THAT(all, testing::Contains("db0: INCR a"));
  EXPECT_EQ(std::count(all.begin(), all.end(), begin), ShardsOf({"a", "b"}));
  EXPECT_EQ(std::count(all.begin(), all.end(), "end"), ShardsOf({"a", "b"}));
  EXPECT_EQ(all.size(), 1 + 2 * ShardsOf({"a", "b"}));  // DEL of a missing key: nothing

  // A script's writes: its commands as they ran, in one part (its keys share a shard).
  EXPECT_THAT(Run({"eval", "redis.call('set', KEYS[1], 1); redis.call('lpush', KEYS[2], 'x')",
                   "2", "{s}1", "{s}2"}),
              IsNil());
  std::vector<std::string> lines = TakeAll();
  EXPECT_THAT(CommandUnits(lines),
              ElementsAre(ElementsAre("db0: SET {s}1 1", "db0: LPUSH {s}2 x")));
  EXPECT_EQ(lines.front().substr(0, 6), "begin ");
  // Reads only: nothing (a MULTI/EXEC of reads takes no group at all).
  Run({"eval", "return redis.call('get', KEYS[1])", "1", "{s}1"});
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"get", "a"}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre("1")));
  EXPECT_THAT(CommandUnits(TakeAll()), IsEmpty());
}

TEST_P(JournalTest, ConsumerGroupStateReachesTheJournal) {
  EXPECT_THAT(Run({"xadd", "x", "1-1", "a", "b"}), "1-1");
  EXPECT_EQ(Run({"xgroup", "create", "x", "g", "0"}), "OK");
  EXPECT_EQ(Run({"xgroup", "createconsumer", "x", "g", "c"}), 1);
  StartRecording();
  // Changes Redis neither signals nor notifies, but propagates.
  Run({"xreadgroup", "group", "g", "c", "streams", "x", ">"});
  EXPECT_THAT(TakeAll(),
              ElementsAre(MatchesRegex("db0: XCLAIM x g c 0 1-1 TIME [0-9]{13} RETRYCOUNT 1 "
                                       "FORCE JUSTID"),
                          "db0: XGROUP SETID x g 1-1 ENTRIESREAD 1"));
  Run({"xclaim", "x", "g", "d", "0", "1-1", "retrycount", "5"});
  EXPECT_THAT(TakeAll(), ElementsAre("db0: XGROUP CREATECONSUMER x g d",
                                     MatchesRegex("db0: XCLAIM x g d 0 1-1 TIME [0-9]{13} "
                                                  "RETRYCOUNT 5 FORCE JUSTID")));
  EXPECT_EQ(Run({"xack", "x", "g", "1-1"}), 1);
  EXPECT_THAT(TakeAll(), ElementsAre("db0: XACK x g 1-1"));
  EXPECT_EQ(Run({"xack", "x", "g", "1-1"}), 0);
  EXPECT_THAT(TakeAll(), IsEmpty());
}

TEST_P(JournalTest, ServedBlockedClientLeavesItsPop) {
  StartRecording();
  std::unique_ptr<TestConnection> waiting = Connect(0);
  waiting->Start({"blpop", "q", "0"});
  WaitBlocked(1);
  EXPECT_EQ(Run({"rpush", "q", "x"}), 1);
  EXPECT_THAT(waiting->Finish(), RespArray(ElementsAre("q", "x")));
  EXPECT_THAT(TakeAll(), ElementsAre("db0: RPUSH q x", "db0: LPOP q 1"));
}

INSTANTIATE_SHARD_COUNTS(JournalTest);

}  // namespace
}  // namespace damselfly
