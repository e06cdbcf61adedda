// Set commands through the Service, with 1, 2 and 4 shards (test_utils.h). Keys named
// a_ and b_ live on different shards whenever there are two or more; a_ and a2_ always
// share one. Error texts are Redis 7.0's (tests/test_sets.py checks them over the wire
// against redis-server too).
#include <set>
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;
using testing::IsSupersetOf;
using testing::UnorderedElementsAre;
using testing::UnorderedElementsAreArray;

class SetFamilyTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    a_ = KeyOnShard(0, "a");
    a2_ = KeyOnShard(0, "a2");
    b_ = KeyOnShard(num_shards() - 1, "b");
    c_ = KeyOnShard(num_shards() / 2, "c");
  }

  // The members of a set, read with SMEMBERS.
  std::vector<std::string> Members(std::string_view key) {
    RespValue reply = Run({"smembers", key});
    std::vector<std::string> out;
    for (const RespValue& element : reply.elements) out.push_back(element.str);
    return out;
  }

  RespValue Encoding(std::string_view key) { return Run({"object", "encoding", key}); }

  // Runs CONFIG SET name value (the suite's server keeps it: tests restore it).
  void Config(std::string_view name, std::string_view value) {
    ASSERT_EQ(Run({"config", "set", name, value}), "OK");
  }

  std::string a_, a2_, b_, c_;
};

TEST_P(SetFamilyTest, AddRemoveCard) {
  EXPECT_EQ(Run({"sadd", "s", "a", "b", "a"}), 2);
  EXPECT_EQ(Run({"sadd", "s", "b", "c"}), 1);
  EXPECT_EQ(Run({"scard", "s"}), 3);
  EXPECT_EQ(Run({"type", "s"}), "set");
  EXPECT_THAT(Members("s"), UnorderedElementsAre("a", "b", "c"));
  EXPECT_EQ(Run({"srem", "s", "a", "x", "a"}), 1);
  EXPECT_EQ(Run({"sismember", "s", "b"}), 1);
  EXPECT_EQ(Run({"sismember", "s", "a"}), 0);
  EXPECT_THAT(Run({"smismember", "s", "a", "b", "c"}), RespArray(ElementsAre(0, 1, 1)));
  EXPECT_THAT(Run({"smismember", "missing", "a"}), RespArray(ElementsAre(0)));
  // Emptying a set deletes it.
  EXPECT_EQ(Run({"srem", "s", "b", "c"}), 2);
  EXPECT_EQ(Run({"exists", "s"}), 0);
  EXPECT_EQ(Run({"scard", "s"}), 0);
  EXPECT_EQ(Run({"srem", "s", "b"}), 0);
  EXPECT_THAT(Run({"smembers", "s"}), ArrLen(0));
}

TEST_P(SetFamilyTest, ErrorsAndArity) {
  EXPECT_EQ(Run({"set", "str", "v"}), "OK");
  for (const std::vector<std::string_view>& command :
       std::vector<std::vector<std::string_view>>{{"sadd", "str", "a"},
                                                  {"srem", "str", "a"},
                                                  {"smembers", "str"},
                                                  {"sismember", "str", "a"},
                                                  {"smismember", "str", "a"},
                                                  {"scard", "str"},
                                                  {"spop", "str"},
                                                  {"spop", "str", "1"},
                                                  {"srandmember", "str"},
                                                  {"srandmember", "str", "2"},
                                                  {"sscan", "str", "0"},
                                                  {"sinter", "missing", "str"},
                                                  {"sunion", "str"},
                                                  {"sdiff", "missing", "str"},
                                                  {"sintercard", "2", "missing", "str"},
                                                  {"sinterstore", "d", "missing", "str"},
                                                  {"sunionstore", "d", "str"},
                                                  {"sdiffstore", "d", "missing", "str"},
                                                  {"smove", "str", "d", "a"}}) {
    SCOPED_TRACE(command[0]);
    EXPECT_THAT(Run(command), ErrArg(kWrongTypeText));
  }
  EXPECT_EQ(Run({"get", "str"}), "v");
  EXPECT_EQ(Run({"exists", "d"}), 0);
  EXPECT_THAT(Run({"sadd", "s"}), ErrArg(ArityError("sadd")));
  EXPECT_THAT(Run({"srem", "s"}), ErrArg(ArityError("srem")));
  EXPECT_THAT(Run({"scard"}), ErrArg(ArityError("scard")));
  EXPECT_THAT(Run({"smove", "a", "b"}), ErrArg(ArityError("smove")));
  EXPECT_THAT(Run({"sintercard", "1"}), ErrArg(ArityError("sintercard")));
  EXPECT_THAT(Run({"sinterstore", "d"}), ErrArg(ArityError("sinterstore")));
  EXPECT_THAT(Run({"spop", "s", "1", "2"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"srandmember", "s", "1", "2"}), ErrArg("ERR syntax error"));
}

TEST_P(SetFamilyTest, Encodings) {
  EXPECT_EQ(Run({"sadd", "ints", "1", "2", "-3"}), 3);
  EXPECT_EQ(Encoding("ints"), "intset");
  EXPECT_EQ(Run({"sadd", "ints", "x"}), 1);
  EXPECT_EQ(Encoding("ints"), "listpack");
  EXPECT_EQ(Run({"sadd", "strs", "a", "1"}), 2);
  EXPECT_EQ(Encoding("strs"), "listpack");
  EXPECT_EQ(Run({"sadd", "big", std::string(65, 'x')}), 1);
  EXPECT_EQ(Encoding("big"), "hashtable");
  EXPECT_EQ(Run({"srem", "big", std::string(65, 'x')}), 1);
  EXPECT_EQ(Run({"exists", "big"}), 0);
}

// Conversions at and around each threshold, with the thresholds lowered by CONFIG SET.
TEST_P(SetFamilyTest, ConversionThresholds) {
  Config("set-max-intset-entries", "4");
  Config("set-max-listpack-entries", "3");
  Config("set-max-listpack-value", "5");
  EXPECT_EQ(Run({"sadd", "i", "1", "2", "3", "4"}), 4);
  EXPECT_EQ(Encoding("i"), "intset");
  EXPECT_EQ(Run({"sadd", "i", "4"}), 0);
  EXPECT_EQ(Encoding("i"), "intset");
  EXPECT_EQ(Run({"sadd", "i", "5"}), 1);
  EXPECT_EQ(Encoding("i"), "hashtable");
  EXPECT_EQ(Run({"srem", "i", "1", "2", "3", "4"}), 4);
  EXPECT_EQ(Encoding("i"), "hashtable");  // never back

  EXPECT_EQ(Run({"sadd", "l", "a", "bb", "12345"}), 3);
  EXPECT_EQ(Encoding("l"), "listpack");
  EXPECT_EQ(Run({"sadd", "l", "d"}), 1);
  EXPECT_EQ(Encoding("l"), "hashtable");
  EXPECT_EQ(Run({"sadd", "v", "123456"}), 1);  // an integer: intset, whatever its length
  EXPECT_EQ(Encoding("v"), "intset");
  EXPECT_EQ(Run({"sadd", "v", "a"}), 1);  // the integer is too long for a listpack
  EXPECT_EQ(Encoding("v"), "hashtable");
  EXPECT_EQ(Run({"sadd", "w", "abcdef"}), 1);
  EXPECT_EQ(Encoding("w"), "hashtable");
  // SADD with more members than a small encoding holds converts up front (Redis 7.2).
  EXPECT_EQ(Run({"sadd", "m", "a", "a", "a", "a"}), 1);
  EXPECT_EQ(Encoding("m"), "hashtable");
  // Results built fresh take the encoding their content calls for.
  EXPECT_EQ(Run({"sadd", "h", "1", "2", "5", "x", "y"}), 5);
  EXPECT_EQ(Encoding("h"), "hashtable");
  EXPECT_EQ(Run({"sinterstore", "r", "h", "i"}), 1);  // {5}
  EXPECT_EQ(Encoding("r"), "intset");
  EXPECT_EQ(Run({"sdiffstore", "r", "h", "i"}), 4);
  EXPECT_EQ(Encoding("r"), "hashtable");
  EXPECT_EQ(Run({"srem", "h", "1", "y"}), 2);
  EXPECT_EQ(Run({"sunionstore", "r", "h"}), 3);  // {2, 5, x}
  EXPECT_EQ(Encoding("r"), "listpack");
  EXPECT_EQ(Run({"srem", "h", "x"}), 1);
  EXPECT_EQ(Run({"sunionstore", "r", "h"}), 2);
  EXPECT_EQ(Encoding("r"), "intset");

  Config("set-max-intset-entries", "512");
  Config("set-max-listpack-entries", "128");
  Config("set-max-listpack-value", "64");
}

TEST_P(SetFamilyTest, Pop) {
  EXPECT_THAT(Run({"spop", "missing"}), IsNil());
  EXPECT_THAT(Run({"spop", "missing", "3"}), ArrLen(0));
  EXPECT_THAT(Run({"spop", "s", "-1"}), ErrArg("ERR value is out of range, must be positive"));
  EXPECT_THAT(Run({"spop", "s", "x"}), ErrArg("ERR value is out of range, must be positive"));
  for (const char* encoding_member : {"1", "a"}) {
    SCOPED_TRACE(encoding_member);
    EXPECT_EQ(Run({"sadd", "s", encoding_member, "2", "3", "4", "5"}), 5);
    std::vector<std::string> popped;
    RespValue one = Run({"spop", "s"});
    ASSERT_EQ(one.type, RespValue::Type::kBulk);
    popped.push_back(one.str);
    EXPECT_THAT(Run({"spop", "s", "0"}), ArrLen(0));
    RespValue two = Run({"spop", "s", "2"});
    ASSERT_THAT(two, ArrLen(2));
    for (const RespValue& v : two.elements) popped.push_back(v.str);
    EXPECT_EQ(Run({"scard", "s"}), 2);
    RespValue rest = Run({"spop", "s", "10"});
    ASSERT_THAT(rest, ArrLen(2));
    for (const RespValue& v : rest.elements) popped.push_back(v.str);
    EXPECT_THAT(popped, UnorderedElementsAre(encoding_member, "2", "3", "4", "5"));
    EXPECT_EQ(Run({"exists", "s"}), 0);
  }
  // A large set.
  std::vector<std::string_view> add = {"sadd", "big"};
  std::vector<std::string> members;
  for (int i = 0; i < 1000; ++i) members.push_back(helio::StrCat("m", i));
  add.insert(add.end(), members.begin(), members.end());
  EXPECT_EQ(Run(add), 1000);
  EXPECT_EQ(Encoding("big"), "hashtable");
  std::vector<std::string> popped;
  for (int i = 0; i < 10; ++i) {
    RespValue batch = Run({"spop", "big", "100"});
    for (const RespValue& v : batch.elements) popped.push_back(v.str);
  }
  EXPECT_THAT(popped, UnorderedElementsAreArray(members));
  EXPECT_EQ(Run({"exists", "big"}), 0);
}

TEST_P(SetFamilyTest, RandMember) {
  EXPECT_THAT(Run({"srandmember", "missing"}), IsNil());
  EXPECT_THAT(Run({"srandmember", "missing", "5"}), ArrLen(0));
  EXPECT_THAT(Run({"srandmember", "s", "x"}), ErrArg("ERR value is not an integer"));
  EXPECT_THAT(Run({"srandmember", "s", "-9223372036854775808"}), ErrArg("value is out of range"));
  EXPECT_EQ(Run({"sadd", "one", "a"}), 1);
  EXPECT_THAT(Run({"srandmember", "one", "-67108865"}), ErrArg("ERR value is out of range"));
  for (const char* first : {"1", "a"}) {
    SCOPED_TRACE(first);
    EXPECT_EQ(Run({"del", "s"}), 0 + (first[0] == 'a'));
    EXPECT_EQ(Run({"sadd", "s", first, "2", "3"}), 3);
    std::vector<std::string> all = {first, "2", "3"};
    EXPECT_THAT(Run({"srandmember", "s"}).str, testing::AnyOfArray(all));
    EXPECT_THAT(Run({"srandmember", "s", "0"}), ArrLen(0));
    RespValue two = Run({"srandmember", "s", "2"});
    ASSERT_THAT(two, ArrLen(2));
    EXPECT_NE(two.elements[0].str, two.elements[1].str);
    RespValue whole = Run({"srandmember", "s", "10"});
    EXPECT_THAT(whole, RespArray(UnorderedElementsAreArray({first, "2", "3"})));
    RespValue repeats = Run({"srandmember", "s", "-20"});
    ASSERT_THAT(repeats, ArrLen(20));
    for (const RespValue& v : repeats.elements) EXPECT_THAT(v.str, testing::AnyOfArray(all));
    EXPECT_EQ(Run({"scard", "s"}), 3);
  }
  // Distinct members from a large set, both strategies (a few, and most of it).
  std::vector<std::string_view> add = {"sadd", "big"};
  std::vector<std::string> members;
  for (int i = 0; i < 300; ++i) members.push_back(helio::StrCat("m", i));
  add.insert(add.end(), members.begin(), members.end());
  EXPECT_EQ(Run(add), 300);
  for (const char* count : {"10", "250"}) {
    RespValue reply = Run({"srandmember", "big", count});
    std::set<std::string> distinct;
    for (const RespValue& v : reply.elements) distinct.insert(v.str);
    EXPECT_EQ(distinct.size(), std::stoul(count));
  }
}

TEST_P(SetFamilyTest, Scan) {
  EXPECT_THAT(Run({"sscan", "missing", "0"}), RespArray(ElementsAre("0", ArrLen(0))));
  EXPECT_THAT(Run({"sscan", "missing", "0", "count", "0"}), RespArray(ElementsAre("0", ArrLen(0))));
  EXPECT_THAT(Run({"sscan", "s", "x"}), ErrArg("ERR invalid cursor"));
  EXPECT_EQ(Run({"sadd", "s", "a1", "a2", "b1"}), 3);
  EXPECT_THAT(Run({"sscan", "s", "0", "match", "a*"}),
              RespArray(ElementsAre("0", RespArray(UnorderedElementsAre("a1", "a2")))));
  EXPECT_THAT(Run({"sscan", "s", "0", "count", "0"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"sscan", "s", "0", "count", "x"}), ErrArg("ERR value is not an integer"));
  EXPECT_THAT(Run({"sscan", "s", "0", "type", "set"}), ErrArg("ERR syntax error"));
  // A hash table scans in steps; every member comes back.
  std::vector<std::string_view> add = {"sadd", "big"};
  std::vector<std::string> members;
  for (int i = 0; i < 500; ++i) members.push_back(helio::StrCat("m", i));
  add.insert(add.end(), members.begin(), members.end());
  EXPECT_EQ(Run(add), 500);
  std::set<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    RespValue reply = Run({"sscan", "big", cursor, "count", "20"});
    ASSERT_THAT(reply, ArrLen(2));
    cursor = reply.elements[0].str;
    for (const RespValue& v : reply.elements[1].elements) seen.insert(v.str);
    ++calls;
  } while (cursor != "0");
  EXPECT_GT(calls, 5);
  EXPECT_EQ(seen, std::set<std::string>(members.begin(), members.end()));
}

// SINTER, SUNION, SDIFF and their STORE forms over keys on one shard and on several.
TEST_P(SetFamilyTest, Algebra) {
  EXPECT_EQ(Run({"sadd", a_, "1", "2", "3", "x"}), 4);
  EXPECT_EQ(Run({"sadd", a2_, "2", "3", "4"}), 3);
  EXPECT_EQ(Run({"sadd", b_, "3", "x", "y"}), 3);
  for (const std::string& other : {a2_, b_}) {
    SCOPED_TRACE(other);
    EXPECT_THAT(
        Run({"sinter", a_, other}),
        RespArray(UnorderedElementsAreArray(other == a2_ ? std::vector<std::string>{"2", "3"}
                                                         : std::vector<std::string>{"3", "x"})));
  }
  EXPECT_THAT(Run({"sinter", a_, a2_, b_}), RespArray(ElementsAre("3")));
  EXPECT_THAT(Run({"sinter", a_, "missing"}), ArrLen(0));
  EXPECT_THAT(Run({"sunion", a_, b_, "missing"}),
              RespArray(UnorderedElementsAre("1", "2", "3", "x", "y")));
  EXPECT_THAT(Run({"sdiff", a_, a2_, b_}), RespArray(ElementsAre("1")));
  EXPECT_THAT(Run({"sdiff", "missing", a_}), ArrLen(0));
  EXPECT_THAT(Run({"sdiff", a_, a_}), ArrLen(0));
  EXPECT_EQ(Run({"sintercard", "3", a_, a2_, b_}), 1);
  EXPECT_EQ(Run({"sintercard", "2", a_, b_, "limit", "1"}), 1);
  EXPECT_EQ(Run({"sintercard", "2", a_, b_, "limit", "0"}), 2);
  EXPECT_EQ(Run({"sintercard", "1", a_, "LIMIT", "2", "LIMIT", "3"}), 3);
  EXPECT_THAT(Run({"sintercard", "0", a_}), ErrArg("ERR numkeys should be greater than 0"));
  EXPECT_THAT(Run({"sintercard", "x", a_}), ErrArg("ERR numkeys should be greater than 0"));
  EXPECT_THAT(Run({"sintercard", "3", a_, b_}),
              ErrArg("ERR Number of keys can't be greater than number of args"));
  EXPECT_THAT(Run({"sintercard", "1", a_, "limit", "-1"}), ErrArg("ERR LIMIT can't be negative"));
  EXPECT_THAT(Run({"sintercard", "1", a_, "limit"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"sintercard", "1", a_, "foo"}), ErrArg("ERR syntax error"));

  // Destinations on every shard; a STORE replaces any type and drops the TTL.
  for (const std::string& dst : {KeyOnShard(0, "d"), KeyOnShard(num_shards() - 1, "e"), c_}) {
    SCOPED_TRACE(dst);
    EXPECT_EQ(Run({"set", dst, "old", "EX", "100"}), "OK");
    EXPECT_EQ(Run({"sunionstore", dst, a_, b_}), 5);
    EXPECT_THAT(Members(dst), UnorderedElementsAre("1", "2", "3", "x", "y"));
    EXPECT_EQ(Run({"ttl", dst}), -1);
    EXPECT_EQ(Run({"sinterstore", dst, a_, b_}), 2);
    EXPECT_THAT(Members(dst), UnorderedElementsAre("3", "x"));
    EXPECT_EQ(Run({"sdiffstore", dst, a_, b_}), 2);
    EXPECT_THAT(Members(dst), UnorderedElementsAre("1", "2"));
    // The destination may be a source.
    EXPECT_EQ(Run({"sunionstore", dst, dst, b_}), 5);
    // An empty result deletes the destination.
    EXPECT_EQ(Run({"sinterstore", dst, a_, "missing"}), 0);
    EXPECT_EQ(Run({"exists", dst}), 0);
  }
  // A type error anywhere changes nothing.
  EXPECT_EQ(Run({"set", "str", "v"}), "OK");
  EXPECT_EQ(Run({"sadd", c_, "keep"}), 1);
  EXPECT_THAT(Run({"sunionstore", c_, a_, b_, "str"}), ErrArg(kWrongTypeText));
  EXPECT_THAT(Members(c_), ElementsAre("keep"));
}

TEST_P(SetFamilyTest, Move) {
  EXPECT_EQ(Run({"sadd", a_, "1", "2", "x"}), 3);
  EXPECT_EQ(Run({"sadd", b_, "3"}), 1);
  EXPECT_EQ(Run({"set", "str", "v"}), "OK");
  EXPECT_EQ(Run({"smove", "missing", "str", "1"}), 0);  // no source: 0 before types
  EXPECT_THAT(Run({"smove", a_, "str", "1"}), ErrArg(kWrongTypeText));
  EXPECT_THAT(Run({"smove", "str", a_, "1"}), ErrArg(kWrongTypeText));
  EXPECT_EQ(Run({"smove", a_, a_, "1"}), 1);
  EXPECT_EQ(Run({"smove", a_, a_, "9"}), 0);
  EXPECT_EQ(Run({"smove", a_, b_, "9"}), 0);
  for (const std::string& dst : {a2_, b_}) {
    SCOPED_TRACE(dst);
    EXPECT_EQ(Run({"smove", a_, dst, "1"}), 1);
    EXPECT_EQ(Run({"sismember", dst, "1"}), 1);
    EXPECT_EQ(Run({"sismember", a_, "1"}), 0);
    EXPECT_EQ(Run({"smove", dst, a_, "1"}), 1);
  }
  // A member already in the destination still leaves the source.
  EXPECT_EQ(Run({"sadd", b_, "2"}), 1);
  EXPECT_EQ(Run({"smove", a_, b_, "2"}), 1);
  EXPECT_THAT(Members(a_), UnorderedElementsAre("1", "x"));
  EXPECT_THAT(Members(b_), UnorderedElementsAre("2", "3"));
  // Moving the last member deletes the source and creates the destination.
  EXPECT_EQ(Run({"srem", a_, "1"}), 1);
  EXPECT_EQ(Run({"smove", a_, c_, "x"}), 1);
  EXPECT_EQ(Run({"exists", a_}), 0);
  EXPECT_THAT(Members(c_), ElementsAre("x"));
  EXPECT_EQ(Encoding(c_), "listpack");
}

// RENAME, COPY and MOVE carry every encoding within a shard and across shards.
TEST_P(SetFamilyTest, RenameCopyMove) {
  std::vector<std::string_view> big = {"sadd", a_};
  std::vector<std::string> members;
  for (int i = 0; i < 200; ++i) members.push_back(helio::StrCat("m", i));
  big.insert(big.end(), members.begin(), members.end());
  for (const std::vector<std::string_view>& add :
       {std::vector<std::string_view>{"sadd", a_, "1", "2"},
        std::vector<std::string_view>{"sadd", a_, "x", "2"}, big}) {
    ASSERT_EQ(Run({"del", a_, a2_, b_}).type, RespValue::Type::kInt);
    ASSERT_GT(Run(add).integer, 0);
    const RespValue encoding = Encoding(a_);
    const std::vector<std::string> content = Members(a_);
    SCOPED_TRACE(encoding.str);
    EXPECT_EQ(Run({"copy", a_, b_}), 1);
    EXPECT_EQ(Encoding(b_), encoding.str);
    EXPECT_THAT(Members(b_), UnorderedElementsAreArray(content));
    EXPECT_EQ(Run({"rename", b_, a2_}), "OK");
    EXPECT_THAT(Members(a2_), UnorderedElementsAreArray(content));
    EXPECT_EQ(Run({"rename", a2_, b_}), "OK");
    EXPECT_EQ(Run({"sadd", b_, "new"}), 1);  // the copy is a set of its own
    EXPECT_EQ(Run({"sismember", a_, "new"}), 0);
    EXPECT_EQ(Run({"move", a_, "1"}), 1);
    EXPECT_EQ(Run({"exists", a_}), 0);
    EXPECT_EQ(Run({"select", "1"}), "OK");
    EXPECT_THAT(Members(a_), UnorderedElementsAreArray(content));
    EXPECT_EQ(Run({"del", a_}), 1);
    EXPECT_EQ(Run({"select", "0"}), "OK");
  }
}

TEST_P(SetFamilyTest, TypeScanMemory) {
  EXPECT_EQ(Run({"sadd", "s1", "a"}), 1);
  EXPECT_EQ(Run({"sadd", "s2", "1"}), 1);
  EXPECT_EQ(Run({"set", "str", "v"}), "OK");
  RespValue scan = Run({"scan", "0", "type", "set", "count", "100"});
  ASSERT_THAT(scan, ArrLen(2));
  EXPECT_THAT(scan.elements[1], RespArray(UnorderedElementsAre("s1", "s2")));
  RespValue small = Run({"memory", "usage", "s1"});
  std::vector<std::string_view> add = {"sadd", "s1"};
  std::vector<std::string> members;
  for (int i = 0; i < 1000; ++i) members.push_back(helio::StrCat("member:", i));
  add.insert(add.end(), members.begin(), members.end());
  EXPECT_EQ(Run(add), 1000);
  RespValue large = Run({"memory", "usage", "s1"});
  EXPECT_GT(large.integer, small.integer + 1000 * 8);
}

// RESP3: SMEMBERS, SINTER, SUNION, SDIFF and SPOP with a count reply sets; SRANDMEMBER
// and SSCAN arrays.
TEST_P(SetFamilyTest, Resp3Sets) {
  EXPECT_EQ(Run({"sadd", a_, "1", "2"}), 2);
  EXPECT_EQ(Run({"sadd", b_, "2"}), 1);
  ASSERT_EQ(Run({"hello", "3"}).type, RespValue::Type::kMap);
  EXPECT_EQ(Run({"smembers", a_}).type, RespValue::Type::kSet);
  EXPECT_EQ(Run({"smembers", "missing"}).type, RespValue::Type::kSet);
  EXPECT_EQ(Run({"sinter", a_, b_}).type, RespValue::Type::kSet);
  EXPECT_EQ(Run({"sunion", a_, b_}).type, RespValue::Type::kSet);
  EXPECT_EQ(Run({"sdiff", a_, b_}).type, RespValue::Type::kSet);
  EXPECT_EQ(Run({"spop", "missing", "1"}).type, RespValue::Type::kSet);
  EXPECT_EQ(Run({"srandmember", a_, "1"}).type, RespValue::Type::kArray);
  EXPECT_EQ(Run({"spop", a_, "1"}).type, RespValue::Type::kSet);
}

// Inside MULTI/EXEC, the cross-shard commands bind to EXEC's transaction.
TEST_P(SetFamilyTest, InMulti) {
  EXPECT_EQ(Run({"sadd", a_, "1", "2"}), 2);
  EXPECT_EQ(Run({"sadd", b_, "2", "3"}), 2);
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"smove", a_, b_, "1"}), "QUEUED");
  EXPECT_EQ(Run({"sinterstore", c_, a_, b_}), "QUEUED");
  EXPECT_EQ(Run({"scard", b_}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre(1, 1, 3)));
  EXPECT_THAT(Members(c_), ElementsAre("2"));
}

INSTANTIATE_SHARD_COUNTS(SetFamilyTest);

}  // namespace
}  // namespace damselfly
