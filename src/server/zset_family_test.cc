// Sorted-set commands through the Service, with 1, 2 and 4 shards (test_utils.h): both
// encodings and the conversions between them, cross-shard *STORE/ZMPOP/RENAME, and the
// error texts of Redis 7.0 (checked against redis-server 7.0.15; tests/test_zsets.py
// checks the wire too).
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;

class ZSetFamilyTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    a_ = KeyOnShard(0, "a");
    a2_ = KeyOnShard(0, "a2");
    b_ = KeyOnShard(num_shards() - 1, "b");
  }
  // Sets zset-max-listpack-entries for the test, restoring 128 at its end.
  void SetMaxEntries(int entries) {
    EXPECT_EQ(Run({"config", "set", "zset-max-listpack-entries", std::to_string(entries)}), "OK");
  }
  void TearDown() override {
    Run({"config", "set", "zset-max-listpack-entries", "128"});
    Run({"config", "set", "zset-max-listpack-value", "64"});
    ServiceTest::TearDown();
  }
  std::string Encoding(std::string_view key) { return Run({"object", "encoding", key}).str; }

  std::string a_, a2_, b_;
};

TEST_P(ZSetFamilyTest, AddScoreRangeInBothEncodings) {
  for (int entries : {128, 0}) {
    SCOPED_TRACE(entries);
    SetMaxEntries(entries);
    EXPECT_EQ(Run({"zadd", "z", "1", "a", "2", "b", "1e-5", "c", "-inf", "m", "+inf", "p"}), 5);
    EXPECT_EQ(Encoding("z"), entries ? "listpack" : "skiplist");
    EXPECT_EQ(Run({"zscore", "z", "c"}), "1.0000000000000001e-05");
    EXPECT_EQ(Run({"zscore", "z", "m"}), "-inf");
    EXPECT_EQ(Run({"zincrby", "z", "0.5", "a"}), "1.5");
    EXPECT_THAT(Run({"zrange", "z", "0", "-1", "withscores"}),
                RespArray(ElementsAre("m", "-inf", "c", "1.0000000000000001e-05", "a", "1.5", "b",
                                      "2", "p", "inf")));
    EXPECT_THAT(Run({"zrangebyscore", "z", "(0", "2", "limit", "1", "5"}),
                RespArray(ElementsAre("a", "b")));
    EXPECT_THAT(Run({"zrevrange", "z", "0", "1"}), RespArray(ElementsAre("p", "b")));
    EXPECT_EQ(Run({"zrank", "z", "b"}), 3);
    EXPECT_EQ(Run({"zrevrank", "z", "b"}), 1);
    EXPECT_EQ(Run({"zcount", "z", "-inf", "(2"}), 3);
    EXPECT_EQ(Run({"zcard", "z"}), 5);
    EXPECT_EQ(Run({"zrem", "z", "a", "b", "nope"}), 2);
    EXPECT_EQ(Run({"zremrangebyscore", "z", "-inf", "+inf"}), 3);
    EXPECT_EQ(Run({"exists", "z"}), 0);
  }
}

TEST_P(ZSetFamilyTest, AddFlagsAndErrors) {
  EXPECT_EQ(Run({"zadd", "z", "1", "a"}), 1);
  EXPECT_EQ(Run({"zadd", "z", "nx", "5", "a", "2", "b"}), 1);
  EXPECT_EQ(Run({"zadd", "z", "xx", "ch", "5", "a", "3", "c"}), 1);
  EXPECT_EQ(Run({"zadd", "z", "gt", "ch", "4", "a"}), 0);
  EXPECT_EQ(Run({"zadd", "z", "lt", "ch", "4", "a"}), 1);
  EXPECT_THAT(Run({"zadd", "z", "nx", "incr", "1", "a"}), IsNil());
  EXPECT_EQ(Run({"zadd", "z", "incr", "1", "a"}), "5");
  EXPECT_THAT(Run({"zadd", "z", "xx", "incr", "1", "new"}), IsNil());
  EXPECT_THAT(Run({"zadd", "x", "xx", "1", "a"}), IntArg(0));
  EXPECT_EQ(Run({"exists", "x"}), 0);
  EXPECT_THAT(Run({"zadd", "z", "nx", "xx", "1", "a"}),
              ErrArg("ERR XX and NX options at the same time are not compatible"));
  EXPECT_THAT(Run({"zadd", "z", "gt", "lt", "1", "a"}),
              ErrArg("ERR GT, LT, and/or NX options at the same time are not compatible"));
  EXPECT_THAT(Run({"zadd", "z", "incr", "1", "a", "2", "b"}),
              ErrArg("ERR INCR option supports a single increment-element pair"));
  EXPECT_THAT(Run({"zadd", "z", "1", "a", "2"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"zadd", "z", "nan", "a"}), ErrArg("ERR value is not a valid float"));
  EXPECT_THAT(Run({"zadd", "z", "1", "a", "x", "b"}), ErrArg("ERR value is not a valid float"));
  EXPECT_EQ(Run({"zadd", "z", "inf", "a"}), 0);
  EXPECT_THAT(Run({"zincrby", "z", "-inf", "a"}),
              ErrArg("ERR resulting score is not a number (NaN)"));
  EXPECT_THAT(Run({"zadd", "z"}), ErrArg(ArityError("zadd")));
  EXPECT_EQ(Run({"set", "s", "v"}), "OK");
  EXPECT_THAT(Run({"zadd", "s", "1", "a"}), ErrArg("WRONGTYPE"));
  EXPECT_THAT(Run({"zrange", "s", "0", "-1"}), ErrArg("WRONGTYPE"));
}

TEST_P(ZSetFamilyTest, ConversionAtThresholds) {
  SetMaxEntries(3);
  EXPECT_EQ(Run({"zadd", "z", "1", "a", "2", "b", "3", "c"}), 3);
  EXPECT_EQ(Encoding("z"), "listpack");
  EXPECT_EQ(Run({"zadd", "z", "4", "d"}), 1);
  EXPECT_EQ(Encoding("z"), "skiplist");
  EXPECT_EQ(Run({"zrem", "z", "a", "b"}), 2);
  EXPECT_EQ(Encoding("z"), "skiplist");  // no way back, as in Redis
  // A result built whole takes the encoding its size calls for.
  EXPECT_EQ(Run({"zunionstore", "d", "1", "z"}), 2);
  EXPECT_EQ(Encoding("d"), "listpack");
  EXPECT_EQ(Run({"config", "set", "zset-max-listpack-value", "3"}), "OK");
  EXPECT_EQ(Run({"zadd", "v", "1", "abc"}), 1);
  EXPECT_EQ(Encoding("v"), "listpack");
  EXPECT_EQ(Run({"zadd", "v", "1", "abcd"}), 1);
  EXPECT_EQ(Encoding("v"), "skiplist");
  EXPECT_THAT(Run({"zrange", "v", "0", "-1"}), RespArray(ElementsAre("abc", "abcd")));
}

TEST_P(ZSetFamilyTest, LexRanges) {
  EXPECT_EQ(Run({"zadd", "z", "0", "a", "0", "b", "0", "c", "0", "d"}), 4);
  EXPECT_THAT(Run({"zrangebylex", "z", "[b", "(d"}), RespArray(ElementsAre("b", "c")));
  EXPECT_THAT(Run({"zrevrangebylex", "z", "+", "(b"}), RespArray(ElementsAre("d", "c")));
  EXPECT_THAT(Run({"zrange", "z", "-", "+", "bylex", "limit", "1", "2"}),
              RespArray(ElementsAre("b", "c")));
  EXPECT_EQ(Run({"zlexcount", "z", "-", "[c"}), 3);
  EXPECT_THAT(Run({"zrangebylex", "z", "b", "d"}),
              ErrArg("ERR min or max not valid string range item"));
  EXPECT_THAT(Run({"zrangebyscore", "z", "x", "1"}), ErrArg("ERR min or max is not a float"));
  EXPECT_EQ(Run({"zremrangebylex", "z", "(a", "[c"}), 2);
  EXPECT_THAT(Run({"zrange", "z", "0", "-1"}), RespArray(ElementsAre("a", "d")));
}

TEST_P(ZSetFamilyTest, PopsAndResp3) {
  EXPECT_EQ(Run({"zadd", "z", "1", "a", "2", "b", "3", "c"}), 3);
  EXPECT_THAT(Run({"zpopmin", "z"}), RespArray(ElementsAre("a", "1")));
  EXPECT_THAT(Run({"zpopmax", "z", "5"}), RespArray(ElementsAre("c", "3", "b", "2")));
  EXPECT_EQ(Run({"exists", "z"}), 0);
  EXPECT_THAT(Run({"zpopmin", "z", "-1"}), ErrArg("ERR value is out of range, must be positive"));
  EXPECT_EQ(Run({"zadd", "z", "1", "a", "2", "b"}), 2);
  EXPECT_EQ(Run({"hello", "3"}).type, RespValue::Type::kMap);
  RespValue score = Run({"zscore", "z", "a"});
  EXPECT_EQ(score.type, RespValue::Type::kDouble);
  EXPECT_EQ(score, "1");
  RespValue pairs = Run({"zrange", "z", "0", "-1", "withscores"});
  ASSERT_EQ(pairs.elements.size(), 2u);
  EXPECT_THAT(pairs.elements[0], RespArray(ElementsAre("a", "1")));
  EXPECT_THAT(Run({"zpopmin", "z"}), RespArray(ElementsAre("a", "1")));  // flat without count
  RespValue popped = Run({"zpopmin", "z", "1"});
  ASSERT_EQ(popped.elements.size(), 1u);
  EXPECT_THAT(popped.elements[0], RespArray(ElementsAre("b", "2")));
}

// The multi-key commands with their keys on one shard and on different ones.
TEST_P(ZSetFamilyTest, StoreAcrossShards) {
  for (const std::string& other : {a2_, b_}) {
    SCOPED_TRACE(other);
    FlushAll();
    EXPECT_EQ(Run({"zadd", a_, "1", "x", "2", "y"}), 2);
    EXPECT_EQ(Run({"zadd", other, "10", "y", "20", "z"}), 2);
    EXPECT_EQ(Run({"zunionstore", "dst", "2", a_, other, "weights", "2", "1"}), 3);
    EXPECT_THAT(Run({"zrange", "dst", "0", "-1", "withscores"}),
                RespArray(ElementsAre("x", "2", "y", "14", "z", "20")));
    EXPECT_EQ(Run({"zinterstore", "dst", "2", a_, other, "aggregate", "max"}), 1);
    EXPECT_THAT(Run({"zrange", "dst", "0", "-1", "withscores"}), RespArray(ElementsAre("y", "10")));
    EXPECT_EQ(Run({"zdiffstore", other, "2", a_, other}), 1);  // dst is also an input
    EXPECT_THAT(Run({"zrange", other, "0", "-1"}), RespArray(ElementsAre("x")));
    EXPECT_THAT(Run({"zunion", "2", a_, other, "withscores"}),
                RespArray(ElementsAre("x", "2", "y", "2")));
    EXPECT_EQ(Run({"zintercard", "2", a_, other}), 1);
    EXPECT_EQ(Run({"zrangestore", other, a_, "(1", "+inf", "byscore"}), 1);
    EXPECT_THAT(Run({"zrange", other, "0", "-1"}), RespArray(ElementsAre("y")));
    // An empty result deletes the destination.
    EXPECT_EQ(Run({"zinterstore", other, "2", a_, "missing"}), 0);
    EXPECT_EQ(Run({"exists", other}), 0);
    // WRONGTYPE (before an option error) and syntax errors change nothing.
    EXPECT_EQ(Run({"set", other, "str"}), "OK");
    EXPECT_THAT(Run({"zunionstore", "dst", "2", a_, other}), ErrArg("WRONGTYPE"));
    EXPECT_THAT(Run({"zunion", "2", a_, other, "weights", "x", "1"}), ErrArg("WRONGTYPE"));
    EXPECT_THAT(Run({"zunion", "2", a_, a_, "weights", "x", "1"}),
                ErrArg("ERR weight value is not a float"));
    EXPECT_THAT(Run({"zrange", "dst", "0", "-1"}), RespArray(ElementsAre("y")));
    EXPECT_THAT(Run({"zunionstore", "dst", "0", a_}),
                ErrArg("ERR at least 1 input key is needed for 'zunionstore' command"));
    EXPECT_THAT(Run({"zunionstore", "dst", "3", a_}), ErrArg("ERR syntax error"));
    // ZMPOP takes from the first non-empty key, wherever it lives.
    EXPECT_EQ(Run({"del", other}), 1);
    EXPECT_EQ(Run({"zadd", other, "5", "q"}), 1);
    EXPECT_THAT(
        Run({"zmpop", "3", "missing", other, a_, "max", "count", "5"}),
        RespArray(ElementsAre(other, RespArray(ElementsAre(RespArray(ElementsAre("q", "5")))))));
    EXPECT_EQ(Run({"exists", other}), 0);
    EXPECT_THAT(Run({"zmpop", "1", "missing", "min"}), IsNil());
  }
}

// Plain sets count as sorted sets whose members all score 1, wherever they live.
TEST_P(ZSetFamilyTest, PlainSetInputs) {
  EXPECT_EQ(Run({"zadd", a_, "1", "x", "2", "y"}), 2);
  EXPECT_EQ(Run({"sadd", b_, "y", "z"}), 2);
  EXPECT_THAT(Run({"zunion", "2", a_, b_, "withscores"}),
              RespArray(ElementsAre("x", "1", "z", "1", "y", "3")));
  EXPECT_EQ(Run({"zinterstore", "dst", "2", a_, b_, "weights", "1", "5"}), 1);
  EXPECT_EQ(Run({"zscore", "dst", "y"}), "7");
  EXPECT_THAT(Run({"zdiff", "2", b_, a_}), RespArray(ElementsAre("z")));
  EXPECT_THAT(Run({"zrange", b_, "0", "-1"}), ErrArg("WRONGTYPE"));
}

// RENAME, COPY and MOVE carry both encodings, within a shard and across shards.
TEST_P(ZSetFamilyTest, RenameCopyMove) {
  for (int entries : {128, 2}) {
    SetMaxEntries(entries);
    for (const std::string& dst : {a2_, b_}) {
      SCOPED_TRACE(dst);
      FlushAll();
      EXPECT_EQ(Run({"zadd", a_, "1", "x", "2.5", "y", "-inf", "z"}), 3);
      const std::string encoding = Encoding(a_);
      EXPECT_EQ(Run({"rename", a_, dst}), "OK");
      EXPECT_EQ(Encoding(dst), encoding);
      EXPECT_THAT(Run({"zrange", dst, "0", "-1", "withscores"}),
                  RespArray(ElementsAre("z", "-inf", "x", "1", "y", "2.5")));
      EXPECT_EQ(Run({"copy", dst, a_}), 1);
      EXPECT_EQ(Run({"zscore", a_, "y"}), "2.5");
      EXPECT_EQ(Encoding(a_), encoding);
      EXPECT_EQ(Run({"move", a_, "1"}), 1);
      EXPECT_EQ(Run({"select", "1"}), "OK");
      EXPECT_EQ(Run({"zcard", a_}), 3);
      EXPECT_EQ(Run({"type", a_}), "zset");
      EXPECT_EQ(Run({"select", "0"}), "OK");
    }
  }
}

TEST_P(ZSetFamilyTest, RandMemberAndScan) {
  EXPECT_EQ(Run({"zadd", "z", "1", "a", "2", "b", "3", "c"}), 3);
  EXPECT_THAT(Run({"zrandmember", "z", "5"}), ArrLen(3));
  EXPECT_THAT(Run({"zrandmember", "z", "-5", "withscores"}), ArrLen(10));
  EXPECT_THAT(Run({"zrandmember", "z", "2"}), ArrLen(2));
  EXPECT_THAT(Run({"zrandmember", "missing"}), IsNil());
  RespValue scan = Run({"zscan", "z", "0", "match", "[ab]"});
  ASSERT_EQ(scan.elements.size(), 2u);
  EXPECT_EQ(scan.elements[0], "0");
  EXPECT_THAT(scan.elements[1], RespArray(ElementsAre("a", "1", "b", "2")));
  SetMaxEntries(0);
  std::vector<std::string> add = {"zadd", "big"};
  for (int i = 0; i < 300; ++i) {
    add.push_back(std::to_string(i));
    add.push_back("m" + std::to_string(i));
  }
  std::vector<std::string_view> views(add.begin(), add.end());
  EXPECT_EQ(Run(views), 300);
  size_t seen = 0;
  std::string cursor = "0";
  do {
    RespValue page = Run({"zscan", "big", cursor, "count", "50"});
    cursor = page.elements[0].str;
    seen += page.elements[1].elements.size() / 2;
  } while (cursor != "0");
  EXPECT_GE(seen, 300u);
  EXPECT_THAT(Run({"zrange", "big", "298", "1000", "withscores"}),
              RespArray(ElementsAre("m298", "298", "m299", "299")));
  EXPECT_EQ(Run({"zremrangebyrank", "big", "0", "-2"}), 299);
  EXPECT_THAT(Run({"zrange", "big", "0", "-1"}), RespArray(ElementsAre("m299")));
}

TEST_P(ZSetFamilyTest, InsideMulti) {
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"zadd", a_, "1", "x"}), "QUEUED");
  EXPECT_EQ(Run({"zadd", b_, "2", "x"}), "QUEUED");
  EXPECT_EQ(Run({"zunionstore", "dst", "2", a_, b_}), "QUEUED");
  EXPECT_EQ(Run({"zscore", "dst", "x"}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre(1, 1, 1, "3")));
}

INSTANTIATE_SHARD_COUNTS(ZSetFamilyTest);

}  // namespace
}  // namespace damselfly
