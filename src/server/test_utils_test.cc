// Tests of the harness itself: the reply parser against ReplyBuilder's bytes, and the
// harness's connections (threads, pipelines, per-connection state, big replies).
#include "src/server/test_utils.h"

#include <gtest/gtest-spi.h>

#include <string>

#include "helio/base/strings.h"
#include "src/facade/reply_builder.h"

namespace damselfly {
namespace {

using facade::ReplyBuilder;
using facade::RespVersion;
using testing::ElementsAre;
using testing::UnorderedElementsAre;
using Type = RespValue::Type;

TEST(ParseRepliesTest, Resp2Types) {
  ReplyBuilder rb;
  rb.SendOk();
  rb.SendError("ERR bad\r\nthing");
  rb.SendLong(-7);
  rb.SendBulk(std::string("a\0b", 3));
  rb.SendNull();
  rb.SendNullArray();
  rb.StartArray(2);
  rb.SendBulk("x");
  rb.StartArray(0);
  rb.StartMap(1);  // RESP2: a flat array
  rb.SendBulk("k");
  rb.SendDouble(1.5);  // RESP2: a bulk string
  std::vector<RespValue> replies = ParseReplies(rb.output());
  ASSERT_EQ(replies.size(), 8u);
  EXPECT_EQ(replies[0], "OK");
  EXPECT_EQ(replies[0].type, Type::kStatus);
  EXPECT_THAT(replies[1], ErrArg("ERR bad  thing"));
  EXPECT_FALSE(replies[1] == "ERR bad  thing");  // errors never equal plain text
  EXPECT_EQ(replies[2], -7);
  EXPECT_EQ(replies[3], std::string_view("a\0b", 3));
  EXPECT_EQ(replies[4].type, Type::kNull);
  EXPECT_EQ(replies[5].type, Type::kNullArray);
  EXPECT_THAT(replies[4], IsNil());
  EXPECT_THAT(replies[5], IsNil());
  EXPECT_THAT(replies[6], RespArray(ElementsAre("x", ArrLen(0))));
  EXPECT_THAT(replies[7], RespArray(ElementsAre("k", "1.5")));
}

TEST(ParseRepliesTest, Resp3Types) {
  ReplyBuilder rb;
  rb.set_protocol(RespVersion::kResp3);
  rb.StartMap(2);
  rb.SendBulk("a");
  rb.SendLong(1);
  rb.SendBulk("b");
  rb.StartSet(1);
  rb.SendBulk("m");
  rb.SendDouble(2.5);
  rb.SendBool(true);
  rb.SendNull();
  rb.SendBigNumber("12345678901234567890");
  rb.SendVerbatim("line\r\n");
  rb.StartPush(1);
  rb.SendSimpleString("message");
  std::vector<RespValue> replies = ParseReplies(rb.output());
  ASSERT_EQ(replies.size(), 7u);
  EXPECT_EQ(replies[0].type, Type::kMap);
  EXPECT_THAT(replies[0], RespArray(ElementsAre("a", 1, "b", ArrLen(1))));
  EXPECT_EQ(replies[0].elements[3].type, Type::kSet);
  EXPECT_EQ(replies[1].type, Type::kDouble);
  EXPECT_EQ(replies[1], "2.5");
  EXPECT_EQ(replies[2].type, Type::kBool);
  EXPECT_EQ(replies[2].integer, 1);
  EXPECT_THAT(replies[3], IsNil());
  EXPECT_EQ(replies[4], "12345678901234567890");
  EXPECT_EQ(replies[5].type, Type::kVerbatim);
  EXPECT_EQ(replies[5], "line\r\n");
  EXPECT_EQ(replies[6].type, Type::kPush);
  EXPECT_EQ(testing::PrintToString(replies[0]), "{\"a\": (integer) 1, \"b\": (set) [\"m\"]}");
}

TEST(ParseRepliesTest, MalformedFailsTheTest) {
  EXPECT_NONFATAL_FAILURE(ParseReplies("$5\r\nab\r\n"), "malformed reply at byte 0");
  EXPECT_NONFATAL_FAILURE(ParseReplies("+OK\r\n:x\r\n"), "malformed reply at byte 5");
}

class ServiceTestTest : public ServiceTest {};

// Every thread's connection reaches every shard: inline on the shard's own thread, by a
// hop from the others.
TEST_P(ServiceTestTest, EveryThreadReachesEveryShard) {
  for (unsigned thread = 0; thread < num_shards(); ++thread) {
    for (ShardId shard = 0; shard < num_shards(); ++shard) {
      std::string key = KeyOnShard(shard, helio::StrCat("t", thread));
      EXPECT_EQ(RunOnThread(thread, {"set", key, helio::StrCat(thread)}), "OK");
      EXPECT_EQ(RunOnThread((thread + 1) % num_shards(), {"get", key}), helio::StrCat(thread));
    }
  }
  EXPECT_EQ(Run({"dbsize"}), int64_t(num_shards() * num_shards()));
}

TEST_P(ServiceTestTest, KeyOnShardPicksThatShard) {
  std::string first = KeyOnShard(0, "a"), last = KeyOnShard(num_shards() - 1, "a");
  EXPECT_EQ(Run({"debug", "keyshard", first}), 0);
  EXPECT_EQ(Run({"debug", "keyshard", last}), int64_t(num_shards() - 1));
}

// A pipeline gets one reply per command, in order, whichever shards they go to.
TEST_P(ServiceTestTest, PipelineRepliesInOrder) {
  std::vector<std::vector<std::string_view>> commands;
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) keys.push_back(KeyOnShard(i % num_shards(), helio::StrCat("p", i)));
  for (const std::string& key : keys) commands.push_back({"incr", key});
  commands.push_back({"get"});  // an error in the middle does not stop the batch
  for (const std::string& key : keys) commands.push_back({"incrby", key, "10"});
  std::vector<RespValue> replies = Connect(num_shards() - 1)->RunPipeline(commands);
  ASSERT_EQ(replies.size(), 81u);
  for (size_t i = 0; i < 40; ++i) {
    EXPECT_EQ(replies[i], 1) << i;
    EXPECT_EQ(replies[41 + i], 11) << i;
  }
  EXPECT_THAT(replies[40], ErrArg("ERR wrong number of arguments for 'get' command"));
}

// Replies past the 64 KiB flush threshold stay whole (a test connection has no socket
// to flush to).
TEST_P(ServiceTestTest, BigRepliesStayWhole) {
  std::string value(100 << 10, 'v');
  std::vector<std::string_view> mget = {"mget"};
  std::vector<std::string> keys;
  for (int i = 0; i < 4; ++i) keys.push_back(KeyOnShard(i % num_shards(), helio::StrCat("big", i)));
  for (const std::string& key : keys) {
    EXPECT_EQ(Run({"set", key, value}), "OK");
    mget.push_back(key);
  }
  RespValue reply = Run(mget);
  ASSERT_THAT(reply, ArrLen(4));
  for (const RespValue& element : reply.elements) EXPECT_EQ(element, value);
  std::vector<RespValue> replies = Connect(0)->RunPipeline({mget, mget, {"ping"}});
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_THAT(replies[1], ArrLen(4));
  EXPECT_EQ(replies[2], "PONG");
}

// Each connection has its own database, name, protocol and MULTI state; CLIENT LIST sees
// them all.
TEST_P(ServiceTestTest, ConnectionsKeepTheirOwnState) {
  std::unique_ptr<TestConnection> other = Connect(num_shards() - 1);
  EXPECT_EQ(Run({"select", "1"}), "OK");
  EXPECT_EQ(Run({"set", "k", "db1"}), "OK");
  EXPECT_EQ(other->Run({"set", "k", "db0"}), "OK");
  EXPECT_EQ(Run({"get", "k"}), "db1");
  EXPECT_EQ(other->Run({"get", "k"}), "db0");
  EXPECT_EQ(Run({"client", "setname", "first"}), "OK");
  EXPECT_EQ(other->Run({"client", "getname"}).type, Type::kNull);
  EXPECT_EQ(other->context()->db_index, 0);

  RespValue hello = other->Run({"hello", "3"});
  EXPECT_EQ(hello.type, Type::kMap);
  EXPECT_EQ(other->Run({"client", "info"}).type, Type::kVerbatim);
  EXPECT_EQ(Run({"client", "info"}).type, Type::kBulk);  // still RESP2

  EXPECT_EQ(other->Run({"multi"}), "OK");
  EXPECT_EQ(Run({"get", "k"}), "db1");  // not queued: another connection
  EXPECT_EQ(other->Run({"get", "k"}), "QUEUED");
  EXPECT_THAT(other->Run({"exec"}), RespArray(ElementsAre("db0")));

  RespValue list = Run({"client", "list"});
  ASSERT_EQ(list.type, Type::kBulk);
  EXPECT_NE(list.str.find("name=first"), std::string::npos) << list.str;
  EXPECT_NE(list.str.find("resp=3"), std::string::npos) << list.str;
}

TEST_P(ServiceTestTest, QuitEndsTheConnection) {
  std::unique_ptr<TestConnection> conn = Connect(0);
  EXPECT_EQ(conn->Run({"quit"}), "OK");
  EXPECT_TRUE(conn->context()->close_after_reply);
  EXPECT_NONFATAL_FAILURE(conn->Run({"ping"}), "0 replies to \"ping\"");
}

INSTANTIATE_SHARD_COUNTS(ServiceTestTest);

}  // namespace
}  // namespace damselfly
