// Key commands (generic family) and MULTI/EXEC/WATCH through the Service, with 1, 2 and
// 4 shards (test_utils.h). Two keys named `a` and `b` below live on different shards
// whenever there are two or more; `a` and `a2` always share one. Error texts are
// Redis 7.0's (tests/test_keys.py and test_transactions.py check them over the wire).
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "helio/base/strings.h"
#include "helio/base/time.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;
using testing::UnorderedElementsAreArray;

constexpr std::string_view kNoSuchKey = "ERR no such key";
constexpr std::string_view kNotInt = "ERR value is not an integer or out of range";

class GenericFamilyTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    a_ = KeyOnShard(0, "a");
    a2_ = KeyOnShard(0, "a2");
    b_ = KeyOnShard(num_shards() - 1, "b");
  }

  // Keys spread over the shards in turn: key i on shard i % num_shards().
  std::vector<std::string> SpreadKeys(int count, std::string_view prefix) const {
    std::vector<std::string> keys;
    for (int i = 0; i < count; ++i) {
      keys.push_back(KeyOnShard(i % num_shards(), helio::StrCat(prefix, i)));
    }
    return keys;
  }

  std::string a_, a2_, b_;
};

TEST_P(GenericFamilyTest, DelExistsTouchAcrossShards) {
  std::vector<std::string> keys = SpreadKeys(6, "k");
  for (const std::string& key : keys) EXPECT_EQ(Run({"set", key, "v"}), "OK");
  std::vector<std::string_view> exists = {"exists"};
  exists.insert(exists.end(), keys.begin(), keys.end());
  exists.insert(exists.end(), {keys[0], "missing"});
  EXPECT_EQ(Run(exists), 7);  // a repeated key counts twice
  exists[0] = "touch";
  EXPECT_EQ(Run(exists), 7);
  EXPECT_EQ(Run({"del", keys[0], keys[1], keys[1], "missing"}), 2);
  EXPECT_EQ(Run({"unlink", keys[2], keys[3], keys[4], keys[5]}), 4);
  EXPECT_EQ(Run({"exists", keys[0], keys[5]}), 0);
  EXPECT_EQ(Run({"dbsize"}), 0);
  EXPECT_THAT(Run({"del"}), ErrArg(ArityError("del")));
  EXPECT_THAT(Run({"exists"}), ErrArg(ArityError("exists")));
}

TEST_P(GenericFamilyTest, Type) {
  EXPECT_EQ(Run({"set", "s", "v"}), "OK");
  EXPECT_EQ(Run({"set", "n", "123"}), "OK");
  EXPECT_EQ(Run({"type", "s"}), "string");
  EXPECT_EQ(Run({"type", "n"}), "string");
  EXPECT_EQ(Run({"type", "missing"}), "none");
  EXPECT_EQ(Run({"type", "s"}).type, RespValue::Type::kStatus);
  EXPECT_THAT(Run({"type"}), ErrArg(ArityError("type")));
}

// RENAME within a shard and across shards moves the value and the TTL, and replaces the
// destination (with its TTL).
TEST_P(GenericFamilyTest, Rename) {
  for (const std::string& dst : {a2_, b_}) {
    SCOPED_TRACE(dst);
    EXPECT_EQ(Run({"set", a_, "payload", "PX", "100000"}), "OK");
    EXPECT_EQ(Run({"set", dst, "old", "EX", "50"}), "OK");
    EXPECT_EQ(Run({"rename", a_, dst}), "OK");
    EXPECT_EQ(Run({"exists", a_}), 0);
    EXPECT_EQ(Run({"get", dst}), "payload");
    RespValue pttl = Run({"pttl", dst});
    EXPECT_GT(pttl.integer, 99000);
    EXPECT_LE(pttl.integer, 100000);
    EXPECT_THAT(Run({"rename", a_, dst}), ErrArg(kNoSuchKey));
    EXPECT_EQ(Run({"set", a_, "plain"}), "OK");
    EXPECT_EQ(Run({"rename", a_, dst}), "OK");
    EXPECT_EQ(Run({"ttl", dst}), -1);
    EXPECT_EQ(Run({"dbsize"}), 1);
    EXPECT_EQ(Run({"del", dst}), 1);
  }
  EXPECT_EQ(Run({"set", a_, "v"}), "OK");
  EXPECT_EQ(Run({"rename", a_, a_}), "OK");
  EXPECT_EQ(Run({"get", a_}), "v");
  EXPECT_THAT(Run({"rename", "missing", "missing"}), ErrArg(kNoSuchKey));
  EXPECT_THAT(Run({"rename", a_}), ErrArg(ArityError("rename")));
}

TEST_P(GenericFamilyTest, RenameNx) {
  for (const std::string& dst : {a2_, b_}) {
    SCOPED_TRACE(dst);
    EXPECT_THAT(Run({"renamenx", a_, dst}), ErrArg(kNoSuchKey));
    EXPECT_EQ(Run({"mset", a_, "1", dst, "2"}), "OK");
    EXPECT_EQ(Run({"renamenx", a_, dst}), 0);
    EXPECT_THAT(Run({"mget", a_, dst}), RespArray(ElementsAre("1", "2")));
    EXPECT_EQ(Run({"del", dst}), 1);
    EXPECT_EQ(Run({"renamenx", a_, dst}), 1);
    EXPECT_THAT(Run({"mget", a_, dst}), RespArray(ElementsAre(IsNil(), "1")));
    EXPECT_EQ(Run({"renamenx", dst, dst}), 0);
    EXPECT_EQ(Run({"del", dst}), 1);
  }
}

// COPY within and across shards, into another database, with REPLACE, and its errors.
TEST_P(GenericFamilyTest, Copy) {
  for (const std::string& dst : {a2_, b_}) {
    SCOPED_TRACE(dst);
    EXPECT_EQ(Run({"copy", a_, dst}), 0);
    EXPECT_EQ(Run({"set", a_, "v", "PX", "100000"}), "OK");
    EXPECT_EQ(Run({"copy", a_, dst}), 1);
    EXPECT_THAT(Run({"mget", a_, dst}), RespArray(ElementsAre("v", "v")));
    EXPECT_GT(Run({"pttl", dst}).integer, 99000);
    EXPECT_EQ(Run({"set", a_, "w"}), "OK");
    EXPECT_EQ(Run({"copy", a_, dst}), 0);
    EXPECT_EQ(Run({"copy", a_, dst, "REPLACE"}), 1);
    EXPECT_EQ(Run({"get", dst}), "w");
    EXPECT_EQ(Run({"pttl", dst}), -1);
    EXPECT_EQ(Run({"copy", a_, dst, "DB", "1"}), 1);
    EXPECT_EQ(Run({"del", a_, dst}), 2);
  }
  EXPECT_EQ(Run({"select", "1"}), "OK");
  EXPECT_THAT(Run({"mget", a2_, b_}), RespArray(ElementsAre("w", "w")));
  EXPECT_EQ(Run({"set", a_, "v"}), "OK");
  EXPECT_THAT(Run({"copy", a_, a_}), ErrArg("ERR source and destination objects are the same"));
  EXPECT_EQ(Run({"copy", a_, a_, "DB", "0"}), 1);
  EXPECT_THAT(Run({"copy", a_, b_, "DB", "x"}), ErrArg(kNotInt));
  EXPECT_THAT(Run({"copy", a_, b_, "DB", "16"}), ErrArg("ERR DB index is out of range"));
  EXPECT_THAT(Run({"copy", a_, b_, "FOO"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"copy", a_, b_, "DB"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"copy", a_}), ErrArg(ArityError("copy")));
}

TEST_P(GenericFamilyTest, ExpireTtlPersist) {
  EXPECT_EQ(Run({"set", "k", "v"}), "OK");
  EXPECT_EQ(Run({"ttl", "k"}), -1);
  EXPECT_EQ(Run({"pttl", "missing"}), -2);
  EXPECT_EQ(Run({"expire", "k", "100"}), 1);
  EXPECT_EQ(Run({"ttl", "k"}), 100);
  EXPECT_EQ(Run({"pexpire", "k", "50000"}), 1);
  EXPECT_EQ(Run({"ttl", "k"}), 50);
  EXPECT_EQ(Run({"expireat", "k", "4000000000"}), 1);
  EXPECT_EQ(Run({"expiretime", "k"}), 4000000000);
  EXPECT_EQ(Run({"pexpireat", "k", "4000000000123"}), 1);
  EXPECT_EQ(Run({"pexpiretime", "k"}), 4000000000123);
  EXPECT_EQ(Run({"persist", "k"}), 1);
  EXPECT_EQ(Run({"persist", "k"}), 0);
  EXPECT_EQ(Run({"expiretime", "k"}), -1);
  EXPECT_EQ(Run({"expiretime", "missing"}), -2);
  EXPECT_EQ(Run({"expire", "missing", "10"}), 0);
  EXPECT_EQ(Run({"persist", "missing"}), 0);
}

TEST_P(GenericFamilyTest, ExpireConditions) {
  EXPECT_EQ(Run({"set", "k", "v"}), "OK");
  EXPECT_EQ(Run({"expire", "k", "100", "XX"}), 0);
  EXPECT_EQ(Run({"expire", "k", "50", "GT"}), 0);  // no TTL counts as infinite
  EXPECT_EQ(Run({"expire", "k", "100", "NX"}), 1);
  EXPECT_EQ(Run({"expire", "k", "200", "NX"}), 0);
  EXPECT_EQ(Run({"expire", "k", "70", "lt"}), 1);
  EXPECT_EQ(Run({"expire", "k", "80", "LT"}), 0);
  EXPECT_EQ(Run({"expire", "k", "90", "XX", "GT"}), 1);
  EXPECT_EQ(Run({"ttl", "k"}), 90);
  EXPECT_THAT(Run({"expire", "k", "10", "NX", "XX"}),
              ErrArg("ERR NX and XX, GT or LT options at the same time are not compatible"));
  EXPECT_THAT(Run({"pexpire", "k", "10", "GT", "LT"}),
              ErrArg("ERR GT and LT options at the same time are not compatible"));
  EXPECT_THAT(Run({"expire", "k", "10", "FOO"}), ErrArg("ERR Unsupported option FOO"));
  EXPECT_THAT(Run({"expire", "k", "abc"}), ErrArg(kNotInt));
  EXPECT_THAT(Run({"expire", "k", "9223372036854775807"}),
              ErrArg("ERR invalid expire time in 'expire' command"));
  EXPECT_THAT(Run({"pexpireat", "k"}), ErrArg(ArityError("pexpireat")));
  EXPECT_EQ(Run({"ttl", "k"}), 90);
}

// A deadline in the past deletes at once; a short TTL ends on the first access after it.
TEST_P(GenericFamilyTest, ExpiryDeletes) {
  for (std::vector<std::string_view> expire : std::vector<std::vector<std::string_view>>{
           {"expire", "k", "0"}, {"pexpire", "k", "-100"}, {"expireat", "k", "1"}}) {
    EXPECT_EQ(Run({"set", "k", "v"}), "OK");
    EXPECT_EQ(Run(expire), 1) << expire[0];
    EXPECT_EQ(Run({"exists", "k"}), 0) << expire[0];
  }
  std::vector<std::string> keys = SpreadKeys(4, "short");
  for (const std::string& key : keys) EXPECT_EQ(Run({"set", key, "v", "PX", "20"}), "OK");
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(Run({"exists", keys[0], keys[1], keys[2], keys[3]}), 0);
  EXPECT_THAT(Run({"mget", keys[0], keys[3]}), RespArray(ElementsAre(IsNil(), IsNil())));
}

TEST_P(GenericFamilyTest, KeysScanDbsizeAcrossShards) {
  std::vector<std::string> keys = SpreadKeys(50, "user:");
  for (const std::string& key : keys) EXPECT_EQ(Run({"set", key, "v"}), "OK");
  EXPECT_EQ(Run({"set", "other", "v"}), "OK");
  EXPECT_EQ(Run({"dbsize"}), 51);
  EXPECT_THAT(Run({"keys", "user:*"}), RespArray(UnorderedElementsAreArray(keys)));

  std::vector<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    RespValue reply = Run({"scan", cursor, "MATCH", "user:*", "COUNT", "7"});
    ASSERT_THAT(reply, ArrLen(2));
    cursor = reply.elements[0].str;
    for (const RespValue& key : reply.elements[1].elements) seen.push_back(key.str);
  } while (cursor != "0" && ++calls < 1000);
  EXPECT_THAT(seen, UnorderedElementsAreArray(keys));
  EXPECT_THAT(Run({"scan", "abc"}), ErrArg("ERR invalid cursor"));
}

TEST_P(GenericFamilyTest, DatabasesAreSeparate) {
  std::unique_ptr<TestConnection> other = Connect(num_shards() - 1);
  EXPECT_EQ(Run({"set", a_, "db0"}), "OK");
  EXPECT_EQ(Run({"select", "1"}), "OK");
  EXPECT_EQ(Run({"exists", a_}), 0);
  EXPECT_EQ(Run({"mset", a_, "db1", b_, "db1"}), "OK");
  EXPECT_EQ(Run({"dbsize"}), 2);
  EXPECT_EQ(other->Run({"get", a_}), "db0");  // another connection: still in db 0
  EXPECT_EQ(Run({"flushdb"}), "OK");
  EXPECT_EQ(Run({"dbsize"}), 0);
  EXPECT_EQ(other->Run({"dbsize"}), 1);
  EXPECT_THAT(Run({"select", "16"}), ErrArg("ERR DB index is out of range"));
}

TEST_P(GenericFamilyTest, MoveAndSwapDb) {
  EXPECT_EQ(Run({"set", a_, "1", "EX", "100"}), "OK");
  EXPECT_EQ(Run({"move", a_, "1"}), 1);
  EXPECT_EQ(Run({"move", a_, "1"}), 0);  // gone from db 0
  EXPECT_EQ(Run({"move", "missing", "1"}), 0);
  EXPECT_THAT(Run({"move", a_, "16"}), ErrArg("ERR DB index is out of range"));
  EXPECT_THAT(Run({"move", a_, "x"}), ErrArg(kNotInt));
  EXPECT_EQ(Run({"set", a_, "0"}), "OK");
  EXPECT_EQ(Run({"move", a_, "1"}), 0);  // db 1 has it already
  EXPECT_EQ(Run({"select", "1"}), "OK");
  EXPECT_EQ(Run({"get", a_}), "1");
  EXPECT_EQ(Run({"ttl", a_}), 100);  // the TTL moves with the key
  EXPECT_THAT(Run({"move", a_, "1"}), ErrArg("ERR source and destination objects are the same"));

  // SWAPDB swaps what every connection sees, on every shard.
  std::unique_ptr<TestConnection> other = Connect(num_shards() - 1);
  EXPECT_EQ(Run({"set", b_, "db1"}), "OK");
  EXPECT_EQ(Run({"swapdb", "0", "1"}), "OK");
  EXPECT_THAT(other->Run({"mget", a_, b_}), RespArray(ElementsAre("1", "db1")));
  EXPECT_THAT(Run({"mget", a_, b_}), RespArray(ElementsAre("0", IsNil())));
  EXPECT_THAT(Run({"swapdb", "0", "16"}), ErrArg("ERR DB index is out of range"));
  EXPECT_THAT(Run({"swapdb", "x", "1"}), ErrArg("ERR invalid first DB index"));
}

// ------------------------------------------------------------------ MULTI / EXEC / WATCH

TEST_P(GenericFamilyTest, MultiExecRepliesInOrder) {
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"set", a_, "1"}), "QUEUED");
  EXPECT_EQ(Run({"incr", a_}), "QUEUED");
  EXPECT_EQ(Run({"mset", b_, "x", a2_, "y"}), "QUEUED");
  EXPECT_EQ(Run({"rename", a2_, "renamed"}), "QUEUED");
  EXPECT_EQ(Run({"mget", a_, b_, "renamed"}), "QUEUED");
  EXPECT_EQ(Run({"ping"}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre("OK", 2, "OK", "OK",
                                                   RespArray(ElementsAre("2", "x", "y")), "PONG")));
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_THAT(Run({"exec"}), ArrLen(0));
}

TEST_P(GenericFamilyTest, MultiErrors) {
  EXPECT_THAT(Run({"exec"}), ErrArg("ERR EXEC without MULTI"));
  EXPECT_THAT(Run({"discard"}), ErrArg("ERR DISCARD without MULTI"));
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_THAT(Run({"multi"}), ErrArg("ERR MULTI calls can not be nested"));
  EXPECT_THAT(Run({"watch", a_}), ErrArg("ERR WATCH inside MULTI is not allowed"));
  EXPECT_EQ(Run({"set", a_, "1"}), "QUEUED");
  EXPECT_THAT(Run({"get"}), ErrArg(ArityError("get")));  // a queuing error aborts EXEC
  EXPECT_THAT(Run({"exec"}), ErrArg("EXECABORT Transaction discarded because of previous errors."));
  EXPECT_EQ(Run({"exists", a_}), 0);

  // An EXEC refused before it runs ends the transaction with the reason.
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"set", a_, "1"}), "QUEUED");
  EXPECT_THAT(Run({"exec", "x"}), ErrArg("EXECABORT Transaction discarded because of: wrong "
                                         "number of arguments for 'exec' command"));
  EXPECT_THAT(Run({"exec"}), ErrArg("ERR EXEC without MULTI"));
  EXPECT_EQ(Run({"exists", a_}), 0);

  // Run-time errors only fill their slot of EXEC's reply.
  EXPECT_EQ(Run({"set", a_, "text"}), "OK");
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"incr", a_}), "QUEUED");
  EXPECT_EQ(Run({"set", b_, "1"}), "QUEUED");
  EXPECT_EQ(Run({"rename", "missing", b_}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre(ErrArg(kNotInt), "OK", ErrArg(kNoSuchKey))));

  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"set", b_, "2"}), "QUEUED");
  EXPECT_EQ(Run({"discard"}), "OK");
  EXPECT_EQ(Run({"get", b_}), "1");
}

// A watched key written by another connection (on another thread, so the write hops
// from there) makes EXEC reply nil and run nothing; EXEC forgets the watches.
TEST_P(GenericFamilyTest, WatchedKeyChangedByAnotherConnection) {
  std::unique_ptr<TestConnection> other = Connect(num_shards() - 1);
  EXPECT_EQ(Run({"watch", a_, b_}), "OK");
  EXPECT_EQ(other->Run({"set", b_, "theirs"}), "OK");
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"set", a_, "mine"}), "QUEUED");
  RespValue exec = Run({"exec"});
  EXPECT_EQ(exec.type, RespValue::Type::kNullArray);
  EXPECT_EQ(Run({"exists", a_}), 0);

  EXPECT_EQ(other->Run({"set", b_, "again"}), "OK");  // not watched any more
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"set", a_, "mine"}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre("OK")));

  // A multi-key write from the other connection touching one watched key also counts.
  EXPECT_EQ(Run({"watch", b_}), "OK");
  EXPECT_EQ(other->Run({"mset", a_, "1", b_, "2"}), "OK");
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"get", a_}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), IsNil());
}

TEST_P(GenericFamilyTest, WatchUnchangedOrForgotten) {
  std::unique_ptr<TestConnection> other = Connect(num_shards() - 1);
  EXPECT_EQ(Run({"set", a_, "1"}), "OK");
  EXPECT_EQ(Run({"watch", a_, b_}), "OK");
  EXPECT_EQ(other->Run({"get", a_}), "1");         // reads do not invalidate
  EXPECT_EQ(other->Run({"set", a2_, "x"}), "OK");  // nor writes to other keys
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"set", b_, "2"}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre("OK")));

  EXPECT_EQ(Run({"watch", a_}), "OK");
  EXPECT_EQ(Run({"unwatch"}), "OK");
  EXPECT_EQ(other->Run({"set", a_, "changed"}), "OK");
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"get", a_}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre("changed")));

  // A watch in another database is another key.
  EXPECT_EQ(Run({"watch", a_}), "OK");
  EXPECT_EQ(other->Run({"select", "1"}), "OK");
  EXPECT_EQ(other->Run({"set", a_, "db1"}), "OK");
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"get", a_}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre("changed")));
}

INSTANTIATE_SHARD_COUNTS(GenericFamilyTest);

}  // namespace
}  // namespace damselfly
