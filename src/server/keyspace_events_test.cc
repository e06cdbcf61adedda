// Keyspace notifications through the Service, with 1, 2 and 4 shards (test_utils.h): the
// event stream each family's commands produce, in Redis 7.0's names and order (the
// expected streams were recorded from redis-server 7.0; tests/test_keyspace_events.py
// checks the same over the wire). A recording publisher stands in for pub/sub on every
// shard, but in PublishedToSubscribers, which goes through the server's pub/sub. Keys of
// one test share a hash tag, so they live on one shard and their events arrive in one
// order.
#include "src/server/keyspace_events.h"

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "helio/base/strings.h"
#include "src/server/engine_shard_set.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;
using testing::IsEmpty;

std::mutex recorded_mu;
std::vector<std::string> recorded;  // "channel message"

size_t Record(std::string_view channel, std::string_view message) {
  std::lock_guard lock(recorded_mu);
  recorded.push_back(helio::StrCat(channel, " ", message));
  return 0;
}

class KeyspaceEventsTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    shard_set->RunOnAll([](EngineShard* shard) { shard->keyspace_events().set_publisher(Record); });
    Events();
  }
  void TearDown() override {
    EXPECT_EQ(Run({"config", "set", "notify-keyspace-events", ""}), "OK");
    shard_set->RunOnAll(
        [](EngineShard* shard) { shard->keyspace_events().set_publisher(nullptr); });
    ServiceTest::TearDown();
  }

  // Sets notify-keyspace-events.
  void Notify(std::string_view flags) {
    ASSERT_EQ(Run({"config", "set", "notify-keyspace-events", flags}), "OK");
  }

  // The messages published since the last call.
  static std::vector<std::string> Events() {
    std::lock_guard lock(recorded_mu);
    return std::exchange(recorded, {});
  }

  // Runs `commands` with classes `flags` on the keyspace channel only and returns the
  // events as "key event" (db 0).
  std::vector<std::string> KeyspaceOf(std::string_view flags,
                                      std::vector<std::vector<std::string_view>> commands) {
    Notify(helio::StrCat("K", flags));
    Events();
    for (const auto& command : commands) Run(command);
    std::vector<std::string> out;
    for (std::string& event : Events()) {
      constexpr std::string_view kPrefix = "__keyspace@0__:";
      EXPECT_TRUE(event.starts_with(kPrefix)) << event;
      out.push_back(event.substr(kPrefix.size()));
    }
    Notify("");
    return out;
  }
};

TEST_P(KeyspaceEventsTest, ConfigGetSet) {
  auto config_get = [this] { return Run({"config", "get", "notify-keyspace-events"}); };
  EXPECT_THAT(config_get(), RespArray(ElementsAre("notify-keyspace-events", "")));
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"KEA", "AKE"},      {"gKE", "gKE"}, {"$lshzxeKE", "$lshzxeKE"},
      {"KA", "AK"},        {"EA", "AE"},   {"AKEnm", "AKEm"},
      {"g$lshzxetd", "A"}, {"KEn", "nKE"}, {"Et", "tE"},
      {"m", "m"},          {"AAg", "A"},   {"", ""},
  };
  for (const auto& [set, shown] : cases) {
    Notify(set);
    EXPECT_THAT(config_get(), RespArray(ElementsAre("notify-keyspace-events", shown))) << set;
  }
  Notify("KEg");
  for (std::string_view bad : {"Q", "Kx?", "kea", " K"}) {
    EXPECT_THAT(Run({"config", "set", "notify-keyspace-events", bad}),
                ErrArg("ERR CONFIG SET failed (possibly related to argument "
                       "'notify-keyspace-events') - Invalid event class character. Use "
                       "'Ag$lshzxeKEtmdn'."));
  }
  EXPECT_THAT(config_get(), RespArray(ElementsAre("notify-keyspace-events", "gKE")));
}

TEST_P(KeyspaceEventsTest, BothChannelsAndMasks) {
  Notify("KEA");
  Run({"set", "foo", "bar"});
  EXPECT_THAT(Events(), ElementsAre("__keyspace@0__:foo set", "__keyevent@0__:set foo"));
  Notify("EA");
  Run({"select", "3"});
  Run({"set", "foo", "bar"});
  EXPECT_THAT(Events(), ElementsAre("__keyevent@3__:set foo"));
  Run({"select", "0"});
  Notify("KEl");  // lists only
  Run({"set", "foo", "bar"});
  Run({"lpush", "mylist", "a"});
  EXPECT_THAT(Events(), ElementsAre("__keyspace@0__:mylist lpush", "__keyevent@0__:lpush mylist"));
  Notify("A");  // classes without a channel: nothing
  Run({"set", "foo", "bar"});
  Notify("KE");  // channels without a class: nothing
  Run({"set", "foo", "bar"});
  EXPECT_THAT(Events(), IsEmpty());
}

TEST_P(KeyspaceEventsTest, Strings) {
  EXPECT_THAT(KeyspaceOf("An", {{"set", "k", "v"}, {"set", "k", "w"}, {"set", "k", "x", "NX"}}),
              ElementsAre("k new", "k set", "k set"));
  EXPECT_THAT(KeyspaceOf("A", {{"set", "k", "v", "EX", "100"},
                               {"set", "k", "w", "KEEPTTL"},
                               {"set", "k", "w", "GET"},
                               {"setex", "k", "100", "v"},
                               {"psetex", "k", "100000", "v"},
                               {"set", "k", "v"}}),
              ElementsAre("k set", "k expire", "k set", "k set", "k set", "k expire", "k set",
                          "k expire", "k set"));
  Run({"del", "k"});
  EXPECT_THAT(KeyspaceOf("An", {{"setnx", "k", "v"}, {"setnx", "k", "v"}, {"getset", "k", "w"}}),
              ElementsAre("k new", "k set", "k set"));
  EXPECT_THAT(
      KeyspaceOf("An", {{"mset", "{t}a", "1", "{t}b", "2"}, {"msetnx", "{t}c", "1", "{t}a", "1"}}),
      ElementsAre("{t}a new", "{t}a set", "{t}b new", "{t}b set"));
  Run({"del", "k"});
  EXPECT_THAT(KeyspaceOf("An", {{"setrange", "k", "2", "xy"},
                                {"setrange", "k", "0", "z"},
                                {"setrange", "k", "0", ""},
                                {"append", "k", "ab"}}),
              ElementsAre("k new", "k setrange", "k setrange", "k append"));
  Run({"del", "k"});
  EXPECT_THAT(KeyspaceOf("A", {{"incr", "k"},
                               {"incrby", "k", "5"},
                               {"decr", "k"},
                               {"decrby", "k", "2"},
                               {"incrbyfloat", "k", "1.5"}}),
              ElementsAre("k incrby", "k incrby", "k incrby", "k incrby", "k incrbyfloat"));
  EXPECT_THAT(KeyspaceOf("A", {{"getex", "k", "EX", "100"},
                               {"getex", "k", "PERSIST"},
                               {"getex", "k", "PERSIST"},
                               {"getex", "k"},
                               {"getdel", "k"},
                               {"getdel", "k"}}),
              ElementsAre("k expire", "k persist", "k del"));
}

TEST_P(KeyspaceEventsTest, Generic) {
  Run({"mset", "{t}a", "1", "{t}b", "2"});
  EXPECT_THAT(KeyspaceOf("A", {{"del", "{t}a", "{t}b", "{t}c"}, {"unlink", "{t}x"}}),
              ElementsAre("{t}a del", "{t}b del"));
  Run({"set", "k", "v"});
  EXPECT_THAT(KeyspaceOf("A", {{"expire", "k", "100"},
                               {"pexpire", "k", "100000"},
                               {"expire", "k", "100", "NX"},
                               {"persist", "k"},
                               {"persist", "k"},
                               {"expire", "k", "-1"},
                               {"expire", "k", "100"}}),
              ElementsAre("k expire", "k expire", "k persist", "k del"));
  Run({"mset", "{t}a", "1", "{t}b", "2"});
  EXPECT_THAT(KeyspaceOf("An", {{"rename", "{t}a", "{t}c"}, {"rename", "{t}c", "{t}b"}}),
              ElementsAre("{t}c new", "{t}a rename_from", "{t}c rename_to", "{t}b new",
                          "{t}c rename_from", "{t}b rename_to"));
  EXPECT_THAT(KeyspaceOf("An", {{"renamenx", "{t}b", "{t}a"}, {"rename", "{t}a", "{t}a"}}),
              ElementsAre("{t}a new", "{t}b rename_from", "{t}a rename_to"));
  EXPECT_THAT(KeyspaceOf("An", {{"copy", "{t}a", "{t}b"}, {"copy", "{t}a", "{t}b", "REPLACE"}}),
              ElementsAre("{t}b new", "{t}b copy_to", "{t}b new", "{t}b copy_to"));
  Notify("KEAn");
  Run({"move", "{t}a", "1"});
  EXPECT_THAT(Events(),
              ElementsAre("__keyspace@1__:{t}a new", "__keyevent@1__:new {t}a",
                          "__keyspace@0__:{t}a move_from", "__keyevent@0__:move_from {t}a",
                          "__keyspace@1__:{t}a move_to", "__keyevent@1__:move_to {t}a"));
  Run({"copy", "{t}b", "{t}c", "DB", "2"});
  EXPECT_THAT(Events(), ElementsAre("__keyspace@2__:{t}c new", "__keyevent@2__:new {t}c",
                                    "__keyspace@2__:{t}c copy_to", "__keyevent@2__:copy_to {t}c"));
  // Whole databases change silently, as in Redis.
  Run({"swapdb", "0", "1"});
  Run({"flushall"});
  EXPECT_THAT(Events(), IsEmpty());
}

TEST_P(KeyspaceEventsTest, Lists) {
  EXPECT_THAT(KeyspaceOf("An", {{"lpush", "l", "a", "b"},
                                {"rpush", "l", "c"},
                                {"lpushx", "l", "d"},
                                {"rpushx", "l", "e"},
                                {"lpushx", "m", "x"}}),
              ElementsAre("l new", "l lpush", "l rpush", "l lpush", "l rpush"));
  Run({"del", "l"});
  Run({"rpush", "l", "a", "b", "c"});
  EXPECT_THAT(KeyspaceOf("A", {{"rpop", "l", "2"}, {"lpop", "l"}, {"lpop", "l"}}),
              ElementsAre("l rpop", "l lpop", "l del"));
  Run({"rpush", "l", "a", "b", "a"});
  EXPECT_THAT(KeyspaceOf("A", {{"lset", "l", "0", "x"},
                               {"linsert", "l", "BEFORE", "x", "y"},
                               {"linsert", "l", "AFTER", "zz", "y"},
                               {"lrem", "l", "0", "zz"},
                               {"lrem", "l", "1", "a"},
                               {"ltrim", "l", "0", "-1"},
                               {"ltrim", "l", "5", "6"}}),
              ElementsAre("l lset", "l linsert", "l lrem", "l ltrim", "l ltrim", "l del"));
  Run({"rpush", "{t}s", "a", "b"});
  EXPECT_THAT(KeyspaceOf("An", {{"rpoplpush", "{t}s", "{t}d"},
                                {"lmove", "{t}s", "{t}d", "LEFT", "RIGHT"},
                                {"rpoplpush", "{t}d", "{t}d"}}),
              ElementsAre("{t}d new", "{t}d lpush", "{t}s rpop", "{t}d rpush", "{t}s lpop",
                          "{t}s del", "{t}d lpush", "{t}d rpop"));
  Run({"rpush", "{t}l", "a", "b"});
  EXPECT_THAT(KeyspaceOf("A", {{"lmpop", "2", "{t}x", "{t}l", "LEFT"},
                               {"lmpop", "1", "{t}l", "RIGHT", "COUNT", "5"}}),
              ElementsAre("{t}l lpop", "{t}l rpop", "{t}l del"));
  Run({"rpush", "{t}l", "3", "1", "2"});
  EXPECT_THAT(
      KeyspaceOf("An", {{"sort", "{t}l", "STORE", "{t}out"}, {"sort", "{t}x", "STORE", "{t}out"}}),
      ElementsAre("{t}out new", "{t}out sortstore", "{t}out del"));
}

TEST_P(KeyspaceEventsTest, Hashes) {
  EXPECT_THAT(KeyspaceOf("An", {{"hset", "h", "a", "1", "b", "2"},
                                {"hset", "h", "a", "1"},
                                {"hmset", "h", "c", "1"},
                                {"hsetnx", "h", "c", "1"},
                                {"hsetnx", "h", "d", "1"},
                                {"hincrby", "h", "n", "1"},
                                {"hincrbyfloat", "h", "f", "1.5"},
                                {"hdel", "h", "zz"},
                                {"hdel", "h", "a", "b", "c"},
                                {"hdel", "h", "d", "n", "f"}}),
              ElementsAre("h new", "h hset", "h hset", "h hset", "h hset", "h hincrby",
                          "h hincrbyfloat", "h hdel", "h hdel", "h del"));
}

TEST_P(KeyspaceEventsTest, Sets) {
  EXPECT_THAT(KeyspaceOf("An", {{"sadd", "s", "a", "b"},
                                {"sadd", "s", "a"},
                                {"srem", "s", "zz"},
                                {"srem", "s", "a"},
                                {"srem", "s", "b"}}),
              ElementsAre("s new", "s sadd", "s srem", "s srem", "s del"));
  Run({"sadd", "s", "a", "b", "c"});
  EXPECT_THAT(KeyspaceOf("A", {{"spop", "s"}, {"spop", "s", "1"}, {"spop", "s", "5"}}),
              ElementsAre("s spop", "s spop", "s spop", "s del"));
  Run({"sadd", "s", "a"});
  EXPECT_THAT(KeyspaceOf("A", {{"spop", "s"}}), ElementsAre("s spop", "s del"));
  Run({"sadd", "{t}s", "a", "b"});
  EXPECT_THAT(
      KeyspaceOf("An", {{"smove", "{t}s", "{t}d", "a"},
                        {"smove", "{t}s", "{t}d", "b"},
                        {"smove", "{t}d", "{t}e", "zz"}}),
      ElementsAre("{t}s srem", "{t}d new", "{t}d sadd", "{t}s srem", "{t}s del", "{t}d sadd"));
  Run({"sadd", "{t}a", "1", "2"});
  Run({"sadd", "{t}b", "2", "3"});
  EXPECT_THAT(KeyspaceOf("An", {{"sinterstore", "{t}x", "{t}a", "{t}b"},
                                {"sunionstore", "{t}x", "{t}a", "{t}b"},
                                {"sdiffstore", "{t}x", "{t}a", "{t}b"},
                                {"sinterstore", "{t}x", "{t}a", "{t}zz"},
                                {"sinterstore", "{t}x", "{t}a", "{t}zz"}}),
              ElementsAre("{t}x new", "{t}x sinterstore", "{t}x sunionstore", "{t}x sdiffstore",
                          "{t}x del"));
}

TEST_P(KeyspaceEventsTest, SortedSets) {
  EXPECT_THAT(KeyspaceOf("An", {{"zadd", "z", "1", "a", "2", "b"},
                                {"zadd", "z", "1", "a"},
                                {"zadd", "z", "INCR", "5", "a"},
                                {"zincrby", "z", "1", "b"},
                                {"zadd", "z", "NX", "1", "a"},
                                {"zadd", "z", "5", "c"},
                                {"zrem", "z", "zz"},
                                {"zrem", "z", "c"}}),
              ElementsAre("z new", "z zadd", "z zincr", "z zincr", "z zadd", "z zrem"));
  Run({"zadd", "z", "3", "c", "4", "d", "5", "e"});
  EXPECT_THAT(KeyspaceOf("A", {{"zremrangebyscore", "z", "1", "1"},
                               {"zremrangebyrank", "z", "0", "0"},
                               {"zpopmin", "z"},
                               {"zpopmax", "z"},
                               {"zmpop", "1", "z", "MIN"},
                               {"zremrangebylex", "z", "-", "+"}}),
              ElementsAre("z zremrangebyrank", "z zpopmin", "z zpopmax", "z zpopmin",
                          "z zremrangebylex", "z del"));
  Run({"zadd", "{t}a", "1", "x", "2", "y"});
  Run({"zadd", "{t}b", "2", "y", "3", "w"});
  EXPECT_THAT(KeyspaceOf("An", {{"zunionstore", "{t}d", "2", "{t}a", "{t}b"},
                                {"zinterstore", "{t}d", "2", "{t}a", "{t}b"},
                                {"zdiffstore", "{t}d", "2", "{t}a", "{t}b"},
                                {"zrangestore", "{t}e", "{t}a", "0", "-1"},
                                {"zinterstore", "{t}d", "2", "{t}a", "{t}zz"},
                                {"zrangestore", "{t}e", "{t}a", "5", "6"}}),
              ElementsAre("{t}d new", "{t}d zunionstore", "{t}d zinterstore", "{t}d zdiffstore",
                          "{t}e new", "{t}e zrangestore", "{t}d del", "{t}e del"));
}

// Keys on different shards (when there are several): each shard publishes its own keys'
// events, in Redis's order per key; across keys the order is the shards'.
TEST_P(KeyspaceEventsTest, MultiKeyCommandsAcrossShards) {
  const std::string a = KeyOnShard(0, "a"), b = KeyOnShard(num_shards() - 1, "b");
  Run({"rpush", a, "x", "y"});
  Notify("KAn");
  Run({"rpoplpush", a, b});
  Run({"lmove", a, b, "LEFT", "LEFT"});
  Run({"rename", b, a});
  Run({"copy", a, b});
  Run({"del", a, b});
  using testing::UnorderedElementsAreArray;
  auto in = [](const std::string& key, std::string_view event) {
    return helio::StrCat("__keyspace@0__:", key, " ", event);
  };
  EXPECT_THAT(Events(), UnorderedElementsAreArray({
                            in(b, "new"), in(b, "lpush"), in(a, "rpop"),             // RPOPLPUSH
                            in(b, "lpush"), in(a, "lpop"), in(a, "del"),             // LMOVE
                            in(a, "new"), in(b, "rename_from"), in(a, "rename_to"),  // RENAME
                            in(b, "new"), in(b, "copy_to"),                          // COPY
                            in(a, "del"), in(b, "del"),                              // DEL
                        }));
}

TEST_P(KeyspaceEventsTest, NewKeysOnly) {
  Notify("En");
  Run({"set", "foo", "bar"});
  Run({"set", "foo", "baz"});
  Run({"set", "bar", "bar"});
  Run({"set", "baz", "v", "XX"});  // inserted, refused, taken out: never existed
  EXPECT_THAT(Events(), ElementsAre("__keyevent@0__:new foo", "__keyevent@0__:new bar"));
}

TEST_P(KeyspaceEventsTest, KeyMiss) {
  Run({"set", "s", "v"});
  Notify("Em");
  Run({"get", "m"});
  Run({"get", "s"});
  Run({"exists", "m"});
  Run({"type", "m"});
  Run({"ttl", "m"});
  Run({"set", "m4", "v", "GET"});
  EXPECT_THAT(Events(), ElementsAre("__keyevent@0__:keymiss m", "__keyevent@0__:keymiss m",
                                    "__keyevent@0__:keymiss m", "__keyevent@0__:keymiss m",
                                    "__keyevent@0__:keymiss m4"));
  // Writes look keys up without a miss.
  Run({"incr", "m2"});
  Run({"set", "m3", "v", "NX"});
  Run({"del", "mm"});
  Run({"lpushx", "m5", "x"});
  EXPECT_THAT(Events(), IsEmpty());
  Notify("KEA");  // m is not in A
  Run({"get", "m"});
  EXPECT_THAT(Events(), IsEmpty());
}

TEST_P(KeyspaceEventsTest, Expired) {
  Notify("Ex");
  Run({"debug", "set-active-expire", "0"});
  Run({"psetex", "lazy", "1", "v"});
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_THAT(Events(), IsEmpty());
  EXPECT_THAT(Run({"get", "lazy"}), IsNil());
  EXPECT_THAT(Events(), ElementsAre("__keyevent@0__:expired lazy"));
  Run({"debug", "set-active-expire", "1"});
  Run({"psetex", "active", "1", "v"});
  std::vector<std::string> events;
  for (int i = 0; i < 200 && events.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    events = Events();
  }
  EXPECT_THAT(events, ElementsAre("__keyevent@0__:expired active"));
}

// Which commands count a read of a missing key (a keymiss and a keyspace miss), as
// redis-server 7.0 does: reads do, writes' look-ups do not (LMOVE's source, SMOVE's,
// LMPOP's), COPY's source does.
TEST_P(KeyspaceEventsTest, KeyMissPerCommand) {
  Notify("Em");
  const std::vector<std::pair<int, std::vector<std::string_view>>> cases = {
      {0, {"lmpop", "1", "{t}m", "LEFT"}},
      {0, {"zmpop", "1", "{t}m", "MIN"}},
      {0, {"lpop", "{t}m"}},
      {0, {"zpopmin", "{t}m"}},
      {0, {"rpoplpush", "{t}m", "{t}d"}},
      {0, {"smove", "{t}m", "{t}d", "x"}},
      {1, {"copy", "{t}m", "{t}d"}},
      {1, {"srandmember", "{t}m"}},
      {0, {"spop", "{t}m"}},
      {1, {"hrandfield", "{t}m"}},
      {1, {"zrandmember", "{t}m"}},
      {1, {"sintercard", "1", "{t}m"}},
      {1, {"zintercard", "1", "{t}m"}},
      {1, {"zrangestore", "{t}d", "{t}m", "0", "1"}},
      {1, {"sort", "{t}m", "STORE", "{t}d"}},
      {1, {"sort_ro", "{t}m"}},
      {1, {"sscan", "{t}m", "0"}},
      {1, {"hscan", "{t}m", "0"}},
      {1, {"zscan", "{t}m", "0"}},
      {1, {"smembers", "{t}m"}},
      {1, {"scard", "{t}m"}},
      {1, {"hlen", "{t}m"}},
      {1, {"zcard", "{t}m"}},
      {1, {"lindex", "{t}m", "0"}},
      {1, {"hexists", "{t}m", "f"}},
      {1, {"hkeys", "{t}m"}},
      {1, {"zcount", "{t}m", "0", "1"}},
      {1, {"zrank", "{t}m", "x"}},
      {1, {"smismember", "{t}m", "x"}},
      {1, {"zmscore", "{t}m", "x"}},
      {1, {"hmget", "{t}m", "f"}},
      {1, {"hstrlen", "{t}m", "f"}},
      {1, {"zlexcount", "{t}m", "-", "+"}},
      {1, {"zrangebyscore", "{t}m", "0", "1"}},
      {1, {"zdiff", "1", "{t}m"}},
      {1, {"zunion", "1", "{t}m"}},
      {1, {"zinter", "1", "{t}m"}},
      {1, {"sinter", "{t}m"}},
      {1, {"pexpiretime", "{t}m"}},
      {1, {"substr", "{t}m", "0", "1"}},
      {0, {"hincrby", "{t}h", "f", "1"}},
      {0, {"linsert", "{t}m", "BEFORE", "a", "b"}},
      {0, {"lrem", "{t}m", "0", "x"}},
      {0, {"ltrim", "{t}m", "0", "1"}},
      {0, {"srem", "{t}m", "x"}},
      {0, {"zrem", "{t}m", "x"}},
      {0, {"hdel", "{t}m", "x"}},
      {0, {"persist", "{t}m"}},
  };
  for (const auto& [misses, command] : cases) {
    Run(command);
    EXPECT_EQ(Events().size(), size_t(misses)) << command[0];
  }
}

TEST_P(KeyspaceEventsTest, FireAsCommandsRunInMulti) {
  Notify("KA");
  Run({"multi"});
  Run({"set", "a", "1"});
  Run({"lpush", "l", "x"});
  Run({"del", "a"});
  EXPECT_THAT(Events(), IsEmpty());
  EXPECT_THAT(Run({"exec"}), ArrLen(3));
  EXPECT_THAT(Events(), ElementsAre("__keyspace@0__:a set", "__keyspace@0__:l lpush",
                                    "__keyspace@0__:a del"));
}

// Through the server's pub/sub: a PSUBSCRIBEd connection (on another thread than the
// writer when there are several) gets pmessages.
TEST_P(KeyspaceEventsTest, PublishedToSubscribers) {
  shard_set->RunOnAll([](EngineShard* shard) { shard->keyspace_events().set_publisher(nullptr); });
  std::unique_ptr<TestConnection> subscriber = Connect(num_shards() - 1);
  EXPECT_THAT(subscriber->Run({"psubscribe", "__key*@*__:*"}), ArrLen(3));
  Notify("KEA");
  Run({"set", "foo", "bar"});
  Run({"lpush", "{t}l", "a"});
  Run({"lpop", "{t}l"});
  auto pmessage = [](std::string_view channel, std::string_view message) {
    return RespArray(ElementsAre("pmessage", "__key*@*__:*", channel, message));
  };
  EXPECT_THAT(
      subscriber->TakePushes(),
      ElementsAre(pmessage("__keyspace@0__:foo", "set"), pmessage("__keyevent@0__:set", "foo"),
                  pmessage("__keyspace@0__:{t}l", "lpush"),
                  pmessage("__keyevent@0__:lpush", "{t}l"), pmessage("__keyspace@0__:{t}l", "lpop"),
                  pmessage("__keyevent@0__:lpop", "{t}l"), pmessage("__keyspace@0__:{t}l", "del"),
                  pmessage("__keyevent@0__:del", "{t}l")));
  EXPECT_THAT(subscriber->Run({"punsubscribe"}), ArrLen(3));
}

TEST_P(KeyspaceEventsTest, StartUpFlagValue) {
  EXPECT_EQ(KeyspaceEventFlagsString(*ParseKeyspaceEventFlags("Kx$")), "$xK");
  EXPECT_FALSE(ParseKeyspaceEventFlags("KEA!"));
  EXPECT_EQ(KeyspaceEventClass("flushdb"), 0u);
  EXPECT_EQ(KeyspaceEventClass("sortstore"), keyspace_events::kList);
}

INSTANTIATE_SHARD_COUNTS(KeyspaceEventsTest);

}  // namespace
}  // namespace damselfly
