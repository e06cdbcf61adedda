// List commands through the Service, with 1, 2 and 4 shards (test_utils.h). Error texts
// are Redis 7.0's (tests/test_lists.py checks them against redis-server over the wire).
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;

constexpr std::string_view kNotInt = "ERR value is not an integer or out of range";

class ListFamilyTest : public ServiceTest {
 protected:
  // Sets a list limit for the test and restores it afterwards (server-wide setting).
  void SetConfig(std::string_view name, std::string_view value) {
    RespValue old = Run({"config", "get", name});
    saved_.emplace_back(std::string(name), old.elements.at(1).str);
    ASSERT_EQ(Run({"config", "set", name, value}), "OK");
  }
  void TearDown() override {
    for (auto& [name, value] : saved_) Run({"config", "set", name, value});
    ServiceTest::TearDown();
  }

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST_P(ListFamilyTest, PushPopAndLength) {
  EXPECT_EQ(Run({"rpush", "l", "a", "b", "c"}), 3);
  EXPECT_EQ(Run({"lpush", "l", "z", "y"}), 5);
  EXPECT_THAT(Run({"lrange", "l", "0", "-1"}), RespArray(ElementsAre("y", "z", "a", "b", "c")));
  EXPECT_EQ(Run({"llen", "l"}), 5);
  EXPECT_EQ(Run({"lpop", "l"}), "y");
  EXPECT_EQ(Run({"rpop", "l"}), "c");
  EXPECT_THAT(Run({"lpop", "l", "2"}), RespArray(ElementsAre("z", "a")));
  EXPECT_THAT(Run({"rpop", "l", "10"}), RespArray(ElementsAre("b")));
  EXPECT_EQ(Run({"exists", "l"}), 0) << "an emptied list is deleted";
  EXPECT_THAT(Run({"lpop", "l"}), IsNil());
  EXPECT_THAT(Run({"lpop", "l", "2"}), IsNil());
  EXPECT_EQ(Run({"llen", "l"}), 0);
  EXPECT_EQ(Run({"lpushx", "l", "a"}), 0);
  EXPECT_EQ(Run({"exists", "l"}), 0);
  EXPECT_EQ(Run({"rpush", "l", "1"}), 1);
  EXPECT_EQ(Run({"rpushx", "l", "2", "3"}), 3);
  EXPECT_EQ(Run({"lpushx", "l", "0"}), 4);
  EXPECT_THAT(Run({"lpop", "l", "0"}), ArrLen(0));
  EXPECT_THAT(Run({"lpop", "l", "-1"}), ErrArg("ERR value is out of range, must be positive"));
  EXPECT_THAT(Run({"lpop", "l", "1", "2"}), ErrArg(ArityError("lpop")));
  EXPECT_THAT(Run({"lpush", "l"}), ErrArg(ArityError("lpush")));
  EXPECT_EQ(Run({"set", "s", "v"}), "OK");
  for (auto cmd : {"lpush", "rpush", "lpushx", "rpushx"}) {
    EXPECT_THAT(Run({cmd, "s", "x"}), ErrArg(kWrongTypeText)) << cmd;
  }
  EXPECT_THAT(Run({"lpop", "s"}), ErrArg(kWrongTypeText));
  EXPECT_THAT(Run({"llen", "s"}), ErrArg(kWrongTypeText));
  EXPECT_EQ(Run({"get", "s"}), "v");
}

TEST_P(ListFamilyTest, Resp3Nulls) {
  EXPECT_EQ(Run({"hello", "3"}).type, RespValue::Type::kMap);
  EXPECT_EQ(Run({"lpop", "missing"}).type, RespValue::Type::kNull);
  EXPECT_EQ(Run({"lpop", "missing", "1"}).type, RespValue::Type::kNull);
  EXPECT_EQ(Run({"lmpop", "1", "missing", "left"}).type, RespValue::Type::kNull);
}

TEST_P(ListFamilyTest, IndexSetRangeTrim) {
  EXPECT_EQ(Run({"rpush", "l", "a", "b", "c", "d", "e"}), 5);
  EXPECT_EQ(Run({"lindex", "l", "0"}), "a");
  EXPECT_EQ(Run({"lindex", "l", "-1"}), "e");
  EXPECT_THAT(Run({"lindex", "l", "5"}), IsNil());
  EXPECT_THAT(Run({"lindex", "l", "x"}), ErrArg(kNotInt));
  EXPECT_THAT(Run({"lindex", "missing", "x"}), IsNil());
  EXPECT_EQ(Run({"lset", "l", "-2", "D"}), "OK");
  EXPECT_THAT(Run({"lset", "l", "5", "x"}), ErrArg("ERR index out of range"));
  EXPECT_THAT(Run({"lset", "missing", "0", "x"}), ErrArg("ERR no such key"));
  EXPECT_THAT(Run({"lrange", "l", "-100", "100"}), RespArray(ElementsAre("a", "b", "c", "D", "e")));
  EXPECT_THAT(Run({"lrange", "l", "3", "1"}), ArrLen(0));
  EXPECT_THAT(Run({"lrange", "l", "a", "1"}), ErrArg(kNotInt));
  EXPECT_EQ(Run({"ltrim", "l", "1", "-2"}), "OK");
  EXPECT_THAT(Run({"lrange", "l", "0", "-1"}), RespArray(ElementsAre("b", "c", "D")));
  EXPECT_EQ(Run({"ltrim", "l", "5", "10"}), "OK");
  EXPECT_EQ(Run({"exists", "l"}), 0);
  EXPECT_EQ(Run({"ltrim", "missing", "0", "1"}), "OK");
}

TEST_P(ListFamilyTest, InsertRemovePos) {
  EXPECT_EQ(Run({"rpush", "l", "a", "b", "a", "c", "a"}), 5);
  EXPECT_EQ(Run({"linsert", "l", "before", "b", "x"}), 6);
  EXPECT_EQ(Run({"linsert", "l", "AFTER", "c", "y"}), 7);
  EXPECT_EQ(Run({"linsert", "l", "after", "nope", "y"}), -1);
  EXPECT_EQ(Run({"linsert", "missing", "after", "a", "y"}), 0);
  EXPECT_THAT(Run({"linsert", "l", "middle", "a", "y"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"lrange", "l", "0", "-1"}),
              RespArray(ElementsAre("a", "x", "b", "a", "c", "y", "a")));
  EXPECT_EQ(Run({"lpos", "l", "a"}), 0);
  EXPECT_EQ(Run({"lpos", "l", "a", "rank", "2"}), 3);
  EXPECT_EQ(Run({"lpos", "l", "a", "rank", "-1"}), 6);
  EXPECT_THAT(Run({"lpos", "l", "a", "count", "0"}), RespArray(ElementsAre(0, 3, 6)));
  EXPECT_THAT(Run({"lpos", "l", "a", "count", "2", "rank", "-1"}), RespArray(ElementsAre(6, 3)));
  EXPECT_THAT(Run({"lpos", "l", "a", "count", "0", "maxlen", "4"}), RespArray(ElementsAre(0, 3)));
  EXPECT_THAT(Run({"lpos", "l", "zz"}), IsNil());
  EXPECT_THAT(Run({"lpos", "missing", "a", "count", "1"}), ArrLen(0));
  EXPECT_THAT(Run({"lpos", "l", "a", "rank", "0"}), ErrArg("ERR RANK can't be zero"));
  EXPECT_THAT(Run({"lpos", "l", "a", "count", "-1"}), ErrArg("ERR COUNT can't be negative"));
  EXPECT_THAT(Run({"lpos", "l", "a", "maxlen", "-1"}), ErrArg("ERR MAXLEN can't be negative"));
  EXPECT_THAT(Run({"lpos", "l", "a", "rank"}), ErrArg("ERR syntax error"));
  EXPECT_EQ(Run({"lrem", "l", "-1", "a"}), 1);
  EXPECT_THAT(Run({"lrange", "l", "0", "-1"}),
              RespArray(ElementsAre("a", "x", "b", "a", "c", "y")));
  EXPECT_EQ(Run({"lrem", "l", "0", "a"}), 2);
  EXPECT_EQ(Run({"lrem", "l", "1", "x"}), 1);
  EXPECT_THAT(Run({"lrange", "l", "0", "-1"}), RespArray(ElementsAre("b", "c", "y")));
  EXPECT_THAT(Run({"lrem", "l", "x", "a"}), ErrArg(kNotInt));
  EXPECT_EQ(Run({"lrem", "missing", "1", "a"}), 0);
}

TEST_P(ListFamilyTest, EncodingsAndCompressedNodes) {
  // Redis 7.0 says quicklist for every list (list_object_test.cc covers the listpack
  // and quicklist forms inside and the conversions between them).
  SetConfig("list-max-listpack-size", "4");
  EXPECT_EQ(Run({"rpush", "l", "1", "2", "3", "4"}), 4);
  EXPECT_EQ(Run({"object", "encoding", "l"}), "quicklist");
  EXPECT_EQ(Run({"rpush", "l", "5"}), 5);
  EXPECT_THAT(Run({"rpop", "l", "3"}), RespArray(ElementsAre("5", "4", "3")));
  EXPECT_THAT(Run({"lrange", "l", "0", "-1"}), RespArray(ElementsAre("1", "2")));
  EXPECT_EQ(Run({"object", "encoding", "l"}), "quicklist");

  // Compressed interior nodes read and change like the others.
  SetConfig("list-max-listpack-size", "2");
  SetConfig("list-compress-depth", "1");
  std::vector<std::string> values;
  for (int i = 0; i < 20; ++i) values.push_back(std::string(100, 'a' + i));
  for (const std::string& v : values) Run({"rpush", "big", v});
  EXPECT_EQ(Run({"object", "encoding", "big"}), "quicklist");
  EXPECT_EQ(Run({"lindex", "big", "10"}), values[10]);
  EXPECT_EQ(Run({"lset", "big", "11", "short"}), "OK");
  EXPECT_EQ(Run({"linsert", "big", "before", values[9], "ins"}), 21);
  EXPECT_EQ(Run({"lrem", "big", "0", values[12]}), 1);
  RespValue all = Run({"lrange", "big", "0", "-1"});
  ASSERT_EQ(all.elements.size(), 20u);
  EXPECT_EQ(all.elements[9], "ins");
  EXPECT_EQ(all.elements[10], values[9]);
  EXPECT_EQ(all.elements[12], "short");
  EXPECT_EQ(all.elements[13], values[13]);
  // A copy to another shard rebuilds the quicklist.
  EXPECT_EQ(Run({"copy", "big", KeyOnShard(num_shards() - 1, "copy")}), 1);
  RespValue copy = Run({"lrange", KeyOnShard(num_shards() - 1, "copy"), "0", "-1"});
  ASSERT_EQ(copy.elements.size(), 20u);
  for (size_t i = 0; i < 20; ++i) EXPECT_EQ(copy.elements[i], all.elements[i].str);
}

TEST_P(ListFamilyTest, MoveAcrossShards) {
  const std::string a = KeyOnShard(0, "a");
  const std::string b = KeyOnShard(num_shards() - 1, "b");
  EXPECT_EQ(Run({"rpush", a, "1", "2", "3"}), 3);
  EXPECT_EQ(Run({"lmove", a, b, "left", "right"}), "1");
  EXPECT_EQ(Run({"rpoplpush", a, b}), "3");
  EXPECT_THAT(Run({"lrange", b, "0", "-1"}), RespArray(ElementsAre("3", "1")));
  EXPECT_EQ(Run({"lmove", a, b, "RIGHT", "LEFT"}), "2");
  EXPECT_EQ(Run({"exists", a}), 0);
  EXPECT_THAT(Run({"lmove", a, b, "left", "left"}), IsNil());
  EXPECT_THAT(Run({"lmove", a, b, "up", "left"}), ErrArg("ERR syntax error"));
  // A WRONGTYPE destination leaves the source untouched.
  EXPECT_EQ(Run({"set", a, "str"}), "OK");
  EXPECT_THAT(Run({"rpoplpush", b, a}), ErrArg(kWrongTypeText));
  EXPECT_EQ(Run({"llen", b}), 3);
  EXPECT_THAT(Run({"rpoplpush", a, b}), ErrArg(kWrongTypeText));
  // The same key: a rotation.
  EXPECT_EQ(Run({"rpoplpush", b, b}), "1");
  EXPECT_THAT(Run({"lrange", b, "0", "-1"}), RespArray(ElementsAre("1", "2", "3")));
  // From another thread: hops for keys of remote shards.
  EXPECT_EQ(RunOnThread(num_shards() - 1, {"lmove", b, a + "x", "left", "left"}), "1");
}

TEST_P(ListFamilyTest, LMPop) {
  const std::string a = KeyOnShard(0, "a");
  const std::string b = KeyOnShard(num_shards() - 1, "b");
  EXPECT_EQ(Run({"rpush", b, "1", "2", "3"}), 3);
  EXPECT_THAT(Run({"lmpop", "2", a, b, "left"}),
              RespArray(ElementsAre(b, RespArray(ElementsAre("1")))));
  EXPECT_THAT(Run({"lmpop", "2", a, b, "right", "count", "5"}),
              RespArray(ElementsAre(b, RespArray(ElementsAre("3", "2")))));
  EXPECT_THAT(Run({"lmpop", "2", a, b, "right"}), IsNil());
  EXPECT_EQ(Run({"set", a, "x"}), "OK");
  EXPECT_THAT(Run({"lmpop", "2", a, b, "right"}), ErrArg(kWrongTypeText));
  EXPECT_THAT(Run({"lmpop", "0", a, "left"}), ErrArg("ERR numkeys should be greater than 0"));
  EXPECT_THAT(Run({"lmpop", "5", a, "left"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"lmpop", "1", a, "up"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"lmpop", "1", a, "left", "count", "0"}),
              ErrArg("ERR count should be greater than 0"));
  EXPECT_THAT(Run({"lmpop", "1", a, "left", "count", "1", "count", "1"}),
              ErrArg("ERR syntax error"));
}

TEST_P(ListFamilyTest, KeyCommandsSeeLists) {
  const std::string a = KeyOnShard(0, "a");
  const std::string b = KeyOnShard(num_shards() - 1, "b");
  EXPECT_EQ(Run({"rpush", a, "x", "y"}), 2);
  EXPECT_EQ(Run({"type", a}), "list");
  EXPECT_GT(Run({"memory", "usage", a}).integer, 0);
  EXPECT_THAT(Run({"scan", "0", "type", "list"}),
              RespArray(ElementsAre("0", RespArray(ElementsAre(a)))));
  EXPECT_EQ(Run({"copy", a, b}), 1);
  EXPECT_THAT(Run({"lrange", b, "0", "-1"}), RespArray(ElementsAre("x", "y")));
  EXPECT_EQ(Run({"del", a}), 1);
  EXPECT_EQ(Run({"rename", b, a}), "OK");
  EXPECT_THAT(Run({"lrange", a, "0", "-1"}), RespArray(ElementsAre("x", "y")));
  EXPECT_EQ(Run({"move", a, "1"}), 1);
  EXPECT_EQ(Run({"select", "1"}), "OK");
  EXPECT_EQ(Run({"lpop", a}), "x");
}

INSTANTIATE_SHARD_COUNTS(ListFamilyTest);

}  // namespace
}  // namespace damselfly
