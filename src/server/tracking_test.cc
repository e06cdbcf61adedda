#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;
using testing::UnorderedElementsAreArray;

class TrackingTest : public ServiceTest {};

// The keys of RESP3 invalidation pushes, in order.
std::vector<std::string> InvalidatedKeys(const std::vector<RespValue>& pushes) {
  std::vector<std::string> keys;
  for (const RespValue& push : pushes) {
    EXPECT_EQ(push.type, RespValue::Type::kPush);
    EXPECT_EQ(push.elements.size(), 2u);
    EXPECT_EQ(push.elements[0], "invalidate");
    for (const RespValue& key : push.elements[1].elements) keys.push_back(key.str);
  }
  return keys;
}

TEST_P(TrackingTest, ReadsOnEveryShardInvalidatedFromAnotherThread) {
  auto reader = Connect(0);
  reader->Run({"hello", "3"});
  EXPECT_EQ(reader->Run({"client", "tracking", "on"}), "OK");
  std::vector<std::string> keys;
  for (int i = 0; i < 8; ++i) keys.push_back("key" + std::to_string(i));
  for (const std::string& key : keys) reader->Run({"get", key});
  for (const std::string& key : keys) RunOnThread(num_shards() - 1, {"set", key, "v"});
  EXPECT_THAT(InvalidatedKeys(reader->TakePushes()), UnorderedElementsAreArray(keys));
  // Forgotten once invalidated.
  for (const std::string& key : keys) RunOnThread(num_shards() - 1, {"set", key, "w"});
  EXPECT_THAT(reader->TakePushes(), ElementsAre());
}

TEST_P(TrackingTest, MultiShardReadAndDeleteAndFlush) {
  auto reader = Connect(num_shards() - 1);
  reader->Run({"hello", "3"});
  reader->Run({"client", "tracking", "on"});
  reader->Run({"mget", "a", "b", "c", "d"});
  Run({"del", "a", "b", "c", "d"});  // nothing there: no change, no invalidation
  EXPECT_THAT(reader->TakePushes(), ElementsAre());
  Run({"mset", "a", "1", "b", "2", "c", "3", "d", "4"});
  EXPECT_THAT(InvalidatedKeys(reader->TakePushes()),
              UnorderedElementsAreArray({"a", "b", "c", "d"}));
  reader->Run({"get", "a"});
  EXPECT_EQ(Run({"flushall"}), "OK");
  std::vector<RespValue> pushes = reader->TakePushes();
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_EQ(pushes[0].elements[1].type, RespValue::Type::kNull);
  Run({"set", "a", "again"});  // the flush emptied the tables
  EXPECT_THAT(reader->TakePushes(), ElementsAre());
}

TEST_P(TrackingTest, BcastPrefixesAndOptin) {
  auto bcast = Connect(0);
  bcast->Run({"hello", "3"});
  EXPECT_EQ(bcast->Run({"client", "tracking", "on", "bcast", "prefix", "user:"}), "OK");
  Run({"mset", "user:1", "a", "item:1", "b"});
  EXPECT_THAT(InvalidatedKeys(bcast->TakePushes()), ElementsAre("user:1"));
  auto optin = Connect(num_shards() - 1);
  optin->Run({"hello", "3"});
  optin->Run({"client", "tracking", "on", "optin"});
  optin->Run({"get", "x"});
  optin->Run({"client", "caching", "yes"});
  optin->Run({"get", "y"});
  Run({"mset", "x", "1", "y", "2"});
  EXPECT_THAT(InvalidatedKeys(optin->TakePushes()), ElementsAre("y"));
}

// A RESP3 client that neither tracks nor subscribes, on another thread than the client
// that names it in REDIRECT: it gets a push queue then, and the invalidations.
TEST_P(TrackingTest, Resp3RedirectTargetWithoutSubscriptions) {
  auto target = Connect(num_shards() - 1);
  target->Run({"hello", "3"});
  const std::string target_id = std::to_string(target->Run({"client", "id"}).integer);
  auto reader = Connect(0);
  EXPECT_EQ(reader->Run({"client", "tracking", "on", "redirect", target_id}), "OK");
  reader->Run({"get", "a"});
  reader->Run({"get", "b"});
  Run({"mset", "a", "1", "b", "2"});
  EXPECT_THAT(InvalidatedKeys(target->TakePushes()), UnorderedElementsAreArray({"a", "b"}));
  EXPECT_THAT(reader->TakePushes(), ElementsAre());
}

TEST_P(TrackingTest, Arity) {
  EXPECT_THAT(Run({"client", "tracking"}), ErrArg(ArityError("client|tracking")));
  EXPECT_THAT(Run({"client", "caching", "yes", "no"}), ErrArg(ArityError("client|caching")));
  EXPECT_THAT(Run({"client", "trackinginfo", "x"}), ErrArg(ArityError("client|trackinginfo")));
  EXPECT_EQ(Run({"client", "getredir"}), -1);
}

INSTANTIATE_SHARD_COUNTS(TrackingTest);

}  // namespace
}  // namespace damselfly
