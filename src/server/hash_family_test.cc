// Hash commands through the Service, with 1, 2 and 4 shards (test_utils.h). Error texts
// are Redis 7.0's (checked against redis-server 7.0.15; tests/test_hashes.py checks them
// over the wire too).
#include <set>
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;
using testing::UnorderedElementsAre;

class HashFamilyTest : public ServiceTest {
 protected:
  // Restores the listpack limits a test lowered.
  void TearDown() override {
    Run({"config", "set", "hash-max-listpack-entries", "512"});
    Run({"config", "set", "hash-max-listpack-value", "64"});
    ServiceTest::TearDown();
  }
};

TEST_P(HashFamilyTest, SetGet) {
  EXPECT_EQ(Run({"hset", "h", "a", "1", "b", "2"}), 2);
  EXPECT_EQ(Run({"hset", "h", "a", "x", "c", "3"}), 1);
  EXPECT_EQ(Run({"hget", "h", "a"}), "x");
  EXPECT_EQ(Run({"hget", "h", "b"}), "2");
  EXPECT_THAT(Run({"hget", "h", "zz"}), IsNil());
  EXPECT_THAT(Run({"hget", "missing", "a"}), IsNil());
  EXPECT_EQ(Run({"hmset", "h", "d", "4"}), "OK");
  EXPECT_EQ(Run({"hlen", "h"}), 4);
  EXPECT_EQ(Run({"hlen", "missing"}), 0);
  EXPECT_THAT(Run({"hmget", "h", "a", "zz", "d"}), RespArray(ElementsAre("x", IsNil(), "4")));
  EXPECT_THAT(Run({"hmget", "missing", "a", "b"}), RespArray(ElementsAre(IsNil(), IsNil())));
  EXPECT_EQ(Run({"type", "h"}), "hash");
  EXPECT_EQ(Run({"object", "encoding", "h"}), "listpack");
  EXPECT_THAT(Run({"hset", "h", "a"}), ErrArg(ArityError("hset")));
  EXPECT_THAT(Run({"hset", "h", "a", "1", "b"}), ErrArg(ArityError("hset")));
  EXPECT_THAT(Run({"hmset", "h", "a", "1", "b"}), ErrArg(ArityError("hmset")));
  EXPECT_THAT(Run({"hget", "h"}), ErrArg(ArityError("hget")));
}

TEST_P(HashFamilyTest, WrongType) {
  Run({"set", "s", "v"});
  for (std::vector<std::string_view> cmd :
       std::vector<std::vector<std::string_view>>{{"hset", "s", "a", "1"},
                                                  {"hsetnx", "s", "a", "1"},
                                                  {"hget", "s", "a"},
                                                  {"hmget", "s", "a"},
                                                  {"hdel", "s", "a"},
                                                  {"hlen", "s"},
                                                  {"hexists", "s", "a"},
                                                  {"hstrlen", "s", "a"},
                                                  {"hincrby", "s", "a", "1"},
                                                  {"hincrbyfloat", "s", "a", "1"},
                                                  {"hkeys", "s"},
                                                  {"hvals", "s"},
                                                  {"hgetall", "s"},
                                                  {"hrandfield", "s"},
                                                  {"hrandfield", "s", "2"},
                                                  {"hscan", "s", "0"}}) {
    EXPECT_THAT(Run(cmd), ErrArg(kWrongTypeText)) << cmd[0];
  }
  Run({"hset", "h", "a", "1"});
  EXPECT_THAT(Run({"get", "h"}), ErrArg(kWrongTypeText));
  EXPECT_EQ(Run({"get", "s"}), "v");
}

TEST_P(HashFamilyTest, SetNxExistsStrLen) {
  EXPECT_EQ(Run({"hsetnx", "h", "a", "1"}), 1);
  EXPECT_EQ(Run({"hsetnx", "h", "a", "2"}), 0);
  EXPECT_EQ(Run({"hget", "h", "a"}), "1");
  EXPECT_EQ(Run({"hexists", "h", "a"}), 1);
  EXPECT_EQ(Run({"hexists", "h", "b"}), 0);
  EXPECT_EQ(Run({"hexists", "missing", "b"}), 0);
  Run({"hset", "h", "n", "-12345", "s", "hello"});
  EXPECT_EQ(Run({"hstrlen", "h", "n"}), 6);
  EXPECT_EQ(Run({"hstrlen", "h", "s"}), 5);
  EXPECT_EQ(Run({"hstrlen", "h", "zz"}), 0);
  EXPECT_EQ(Run({"hstrlen", "missing", "zz"}), 0);
}

TEST_P(HashFamilyTest, DelDeletesEmptiedHash) {
  Run({"hset", "h", "a", "1", "b", "2", "c", "3"});
  EXPECT_EQ(Run({"hdel", "h", "a", "zz", "a"}), 1);
  EXPECT_EQ(Run({"hdel", "missing", "a"}), 0);
  EXPECT_EQ(Run({"hdel", "h", "b", "c"}), 2);
  EXPECT_EQ(Run({"exists", "h"}), 0);
  // Same in the hashtable encoding.
  Run({"hset", "big", "f", std::string(100, 'x')});
  EXPECT_EQ(Run({"object", "encoding", "big"}), "hashtable");
  EXPECT_EQ(Run({"hdel", "big", "f"}), 1);
  EXPECT_EQ(Run({"exists", "big"}), 0);
}

TEST_P(HashFamilyTest, IncrBy) {
  EXPECT_EQ(Run({"hincrby", "h", "a", "5"}), 5);
  EXPECT_EQ(Run({"hincrby", "h", "a", "-7"}), -2);
  Run({"hset", "h", "s", "abc", "big", "9223372036854775806"});
  EXPECT_THAT(Run({"hincrby", "h", "s", "1"}), ErrArg("ERR hash value is not an integer"));
  EXPECT_THAT(Run({"hincrby", "h", "a", "x"}),
              ErrArg("ERR value is not an integer or out of range"));
  EXPECT_EQ(Run({"hincrby", "h", "big", "1"}), 9223372036854775807);
  EXPECT_THAT(Run({"hincrby", "h", "big", "1"}),
              ErrArg("ERR increment or decrement would overflow"));
  // A failed increment of a new key leaves no key behind.
  EXPECT_THAT(Run({"hincrby", "new", "a", "x"}), ErrArg("not an integer"));
  EXPECT_EQ(Run({"exists", "new"}), 0);
}

TEST_P(HashFamilyTest, IncrByFloat) {
  EXPECT_EQ(Run({"hincrbyfloat", "h", "a", "10.5"}), "10.5");
  EXPECT_EQ(Run({"hincrbyfloat", "h", "a", "0.1"}), "10.6");
  EXPECT_EQ(Run({"hincrbyfloat", "h", "b", "5.0e3"}), "5000");
  EXPECT_EQ(Run({"hincrbyfloat", "h", "c", "1e20"}), "100000000000000000000");
  EXPECT_THAT(Run({"hincrbyfloat", "h", "a", "inf"}), ErrArg("ERR value is NaN or Infinity"));
  EXPECT_THAT(Run({"hincrbyfloat", "h", "a", "nan"}), ErrArg("ERR value is not a valid float"));
  EXPECT_THAT(Run({"hincrbyfloat", "h", "a", "x"}), ErrArg("ERR value is not a valid float"));
  Run({"hset", "h", "s", "abc"});
  EXPECT_THAT(Run({"hincrbyfloat", "h", "s", "1"}), ErrArg("ERR hash value is not a float"));
  Run({"hset", "h", "m", "1e308"});
  EXPECT_EQ(Run({"hincrbyfloat", "h", "m", "1e308"}).str.substr(0, 3), "199");
}

TEST_P(HashFamilyTest, GetAllKeysVals) {
  Run({"hset", "h", "a", "1", "b", "2"});
  EXPECT_THAT(Run({"hgetall", "h"}), RespArray(ElementsAre("a", "1", "b", "2")));
  EXPECT_THAT(Run({"hkeys", "h"}), RespArray(ElementsAre("a", "b")));
  EXPECT_THAT(Run({"hvals", "h"}), RespArray(ElementsAre("1", "2")));
  EXPECT_THAT(Run({"hgetall", "missing"}), ArrLen(0));
  EXPECT_THAT(Run({"hkeys", "missing"}), ArrLen(0));
  Run({"hello", "3"});
  RespValue all = Run({"hgetall", "h"});
  EXPECT_EQ(all.type, RespValue::Type::kMap);
  EXPECT_THAT(all, RespArray(ElementsAre("a", "1", "b", "2")));
}

TEST_P(HashFamilyTest, Conversion) {
  Run({"config", "set", "hash-max-listpack-entries", "4"});
  Run({"hset", "h", "1", "a", "2", "b", "3", "c", "4", "d"});
  EXPECT_EQ(Run({"object", "encoding", "h"}), "listpack");
  Run({"hset", "h", "4", "dd"});  // an update does not convert
  EXPECT_EQ(Run({"object", "encoding", "h"}), "listpack");
  Run({"hset", "h", "5", "e"});
  EXPECT_EQ(Run({"object", "encoding", "h"}), "hashtable");
  EXPECT_EQ(Run({"hlen", "h"}), 5);
  EXPECT_EQ(Run({"hget", "h", "4"}), "dd");
  Run({"hdel", "h", "1", "2", "3"});
  EXPECT_EQ(Run({"object", "encoding", "h"}), "hashtable");  // never back

  Run({"config", "set", "hash-max-listpack-value", "8"});
  Run({"hset", "v", "f", "12345678"});
  EXPECT_EQ(Run({"object", "encoding", "v"}), "listpack");
  Run({"hsetnx", "v", "f", "123456789"});  // HSETNX of an existing field converts nothing
  EXPECT_EQ(Run({"object", "encoding", "v"}), "listpack");
  Run({"hsetnx", "v", "g", "123456789"});
  EXPECT_EQ(Run({"object", "encoding", "v"}), "hashtable");
  EXPECT_EQ(Run({"hget", "v", "f"}), "12345678");
  Run({"hincrby", "w", "123456789", "1"});  // a long field through HINCRBY
  EXPECT_EQ(Run({"object", "encoding", "w"}), "hashtable");
  Run({"hincrbyfloat", "x", "f", "1.5"});
  EXPECT_EQ(Run({"object", "encoding", "x"}), "listpack");
}

TEST_P(HashFamilyTest, RandField) {
  EXPECT_THAT(Run({"hrandfield", "missing"}), IsNil());
  EXPECT_THAT(Run({"hrandfield", "missing", "3"}), ArrLen(0));
  EXPECT_THAT(Run({"hrandfield", "missing", "x"}),
              ErrArg("ERR value is not an integer or out of range"));
  Run({"hset", "h", "a", "1", "b", "2", "c", "3"});
  EXPECT_THAT(Run({"hrandfield", "h", "1", "foo"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"hrandfield", "h", "1", "withvalues", "x"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"hrandfield", "h", "-9223372036854775808"}),
              ErrArg("ERR value is out of range"));
  EXPECT_THAT(Run({"hrandfield", "h", "-9223372036854770000", "withvalues"}),
              ErrArg("ERR value is out of range"));
  EXPECT_THAT(Run({"hrandfield", "h", "0"}), ArrLen(0));
  EXPECT_THAT(Run({"hrandfield", "h", "10"}), RespArray(UnorderedElementsAre("a", "b", "c")));
  EXPECT_THAT(Run({"hrandfield", "h", "-10"}), ArrLen(10));
  EXPECT_THAT(Run({"hrandfield", "h", "-4", "withvalues"}), ArrLen(8));
  EXPECT_THAT(Run({"hrandfield", "h", "2", "withvalues"}), ArrLen(4));
  std::string one = Run({"hrandfield", "h"}).str;
  EXPECT_TRUE(one == "a" || one == "b" || one == "c");
  Run({"hello", "3"});
  RespValue pairs = Run({"hrandfield", "h", "-3", "withvalues"});
  ASSERT_THAT(pairs, ArrLen(3));
  EXPECT_THAT(pairs.elements[0], ArrLen(2));
}

TEST_P(HashFamilyTest, RandFieldDistinctInHashtable) {
  std::vector<std::string> args = {"hset", "h"};
  for (int i = 0; i < 1000; ++i) {
    args.push_back(helio::StrCat("f", i));
    args.push_back(helio::StrCat(i));
  }
  Run(std::vector<std::string_view>(args.begin(), args.end()));
  EXPECT_EQ(Run({"object", "encoding", "h"}), "hashtable");
  for (const char* count : {"10", "500", "999", "1000", "5000"}) {
    RespValue reply = Run({"hrandfield", "h", count});
    std::set<std::string> distinct;
    for (const RespValue& v : reply.elements) distinct.insert(v.str);
    EXPECT_EQ(distinct.size(), std::min<size_t>(std::stoul(count), 1000)) << count;
    EXPECT_EQ(reply.elements.size(), distinct.size());
  }
}

TEST_P(HashFamilyTest, Scan) {
  Run({"hset", "h", "a", "1", "b", "2", "ab", "3"});
  EXPECT_THAT(Run({"hscan", "h", "0"}),
              RespArray(ElementsAre("0", RespArray(ElementsAre("a", "1", "b", "2", "ab", "3")))));
  EXPECT_THAT(Run({"hscan", "h", "0", "match", "a*", "count", "1"}),
              RespArray(ElementsAre("0", RespArray(ElementsAre("a", "1", "ab", "3")))));
  EXPECT_THAT(Run({"hscan", "h", "x"}), ErrArg("ERR invalid cursor"));
  EXPECT_THAT(Run({"hscan", "h", "0", "count", "0"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"hscan", "h", "0", "type", "hash"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"hscan", "missing", "0", "count", "x"}), RespArray(ElementsAre("0", ArrLen(0))));
  // A hash table is walked in steps; every field comes back.
  std::vector<std::string> args = {"hset", "big"};
  for (int i = 0; i < 2000; ++i) {
    args.push_back(helio::StrCat("f", i));
    args.push_back("v");
  }
  Run(std::vector<std::string_view>(args.begin(), args.end()));
  std::set<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    RespValue reply = Run({"hscan", "big", cursor, "count", "50"});
    cursor = reply.elements[0].str;
    for (size_t i = 0; i < reply.elements[1].elements.size(); i += 2) {
      seen.insert(reply.elements[1].elements[i].str);
    }
    ++calls;
  } while (cursor != "0");
  EXPECT_EQ(seen.size(), 2000u);
  EXPECT_GT(calls, 10);
}

// RENAME, MOVE and COPY of hashes, on one shard and across shards (Serialize + factory).
TEST_P(HashFamilyTest, RenameCopyMove) {
  std::string a = KeyOnShard(0, "a"), b = KeyOnShard(num_shards() - 1, "b");
  Run({"hset", a, "f", "1", "g", "2"});
  EXPECT_EQ(Run({"rename", a, b}), "OK");
  EXPECT_THAT(Run({"hgetall", b}), RespArray(ElementsAre("f", "1", "g", "2")));
  EXPECT_EQ(Run({"copy", b, a}), 1);
  EXPECT_EQ(Run({"hset", a, "h", "3"}), 1);
  EXPECT_EQ(Run({"hlen", b}), 2);
  EXPECT_EQ(Run({"hlen", a}), 3);
  // The hashtable encoding travels too.
  Run({"hset", a, "long", std::string(100, 'x')});
  EXPECT_EQ(Run({"copy", a, b, "replace"}), 1);
  EXPECT_EQ(Run({"object", "encoding", b}), "hashtable");
  EXPECT_EQ(Run({"hget", b, "long"}), std::string(100, 'x'));
  EXPECT_EQ(Run({"hlen", b}), 4);
  EXPECT_EQ(Run({"move", b, "1"}), 1);
  Run({"select", "1"});
  EXPECT_EQ(Run({"hget", b, "h"}), "3");
  EXPECT_EQ(Run({"type", b}), "hash");
}

TEST_P(HashFamilyTest, MemoryUsageAndScanType) {
  Run({"hset", "h", "a", "1"});
  Run({"set", "s", "v"});
  EXPECT_GT(Run({"memory", "usage", "h"}).integer, 0);
  EXPECT_THAT(Run({"scan", "0", "type", "hash", "count", "100"}),
              RespArray(ElementsAre("0", RespArray(ElementsAre("h")))));
}

INSTANTIATE_SHARD_COUNTS(HashFamilyTest);

}  // namespace
}  // namespace damselfly
