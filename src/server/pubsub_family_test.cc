#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "src/server/engine_shard_set.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;
using testing::UnorderedElementsAre;

class PubSubFamilyTest : public ServiceTest {};

constexpr std::string_view kContextErr =
    "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
    "are allowed in this context";

TEST_P(PubSubFamilyTest, SubscribeConfirmationsAndCounts) {
  auto sub = Connect(num_shards() - 1);
  std::vector<RespValue> replies = sub->RunPipeline({{"subscribe", "a", "b", "a"}});
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_THAT(replies[0], RespArray(ElementsAre("subscribe", "a", 1)));
  EXPECT_THAT(replies[2], RespArray(ElementsAre("subscribe", "a", 2)));
  EXPECT_THAT(sub->Run({"psubscribe", "x*"}), RespArray(ElementsAre("psubscribe", "x*", 3)));
  EXPECT_THAT(sub->Run({"ssubscribe", "s"}), RespArray(ElementsAre("ssubscribe", "s", 1)));
  EXPECT_THAT(sub->Run({"get", "k"}), ErrArg(kContextErr));
  EXPECT_THAT(sub->Run({"ping"}), RespArray(ElementsAre("pong", "")));
  EXPECT_THAT(sub->Run({"punsubscribe", "nope"}),
              RespArray(ElementsAre("punsubscribe", "nope", 3)));
  EXPECT_THAT(sub->Run({"unsubscribe", "b"}), RespArray(ElementsAre("unsubscribe", "b", 2)));
  EXPECT_EQ(Run({"reset"}), "RESET");  // another connection's RESET changes nothing here
  EXPECT_EQ(Run({"pubsub", "numpat"}), 1);
  EXPECT_THAT(Run({"pubsub", "numsub", "a", "b"}), RespArray(ElementsAre("a", 1, "b", 0)));
  EXPECT_EQ(sub->Run({"reset"}), "RESET");
  EXPECT_EQ(Run({"pubsub", "numpat"}), 0);
  EXPECT_THAT(Run({"pubsub", "channels"}), ArrLen(0));
  EXPECT_EQ(sub->Run({"get", "k"}).type, RespValue::Type::kNull);
}

// A subscription's confirmation does not wait for the other threads to let go of the old
// channel maps (channel_store.h, point 3): it comes while another thread is busy. Only
// UNSUBSCRIBE's waits, and it ends once that thread runs again.
TEST_P(PubSubFamilyTest, SubscribeDoesNotWaitForOtherThreads) {
  if (num_shards() < 2) GTEST_SKIP() << "needs a second thread";
  using Clock = std::chrono::steady_clock;
  auto sub = Connect(0);
  std::atomic<bool> release{false};
  // Holds thread 1 in a task, for 5 s at most: a confirmation that waits shows as slow.
  const Clock::time_point held_until = Clock::now() + std::chrono::seconds(5);
  shard_set->pool()->at(1)->Dispatch([&release, held_until] {
    while (!release.load() && Clock::now() < held_until) std::this_thread::yield();
  });
  const Clock::time_point start = Clock::now();
  EXPECT_THAT(sub->Run({"subscribe", "c"}), RespArray(ElementsAre("subscribe", "c", 1)));
  EXPECT_THAT(sub->Run({"psubscribe", "c*"}), RespArray(ElementsAre("psubscribe", "c*", 2)));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2)) << "SUBSCRIBE waited for thread 1";
  sub->Start({"unsubscribe", "c"});
  release = true;
  EXPECT_THAT(sub->Finish(), RespArray(ElementsAre("unsubscribe", "c", 1)));
  EXPECT_EQ(RunOnThread(1, {"publish", "c", "m"}), 1);  // the pattern only
}

TEST_P(PubSubFamilyTest, UnsubscribeWhenNotSubscribed) {
  EXPECT_THAT(Run({"unsubscribe"}), RespArray(ElementsAre("unsubscribe", IsNil(), 0)));
  EXPECT_THAT(Run({"sunsubscribe", "x"}), RespArray(ElementsAre("sunsubscribe", "x", 0)));
}

TEST_P(PubSubFamilyTest, PublishReachesSubscribersOnEveryThread) {
  std::vector<std::unique_ptr<TestConnection>> subs;
  for (unsigned t = 0; t < num_shards(); ++t) {
    subs.push_back(Connect(t));
    subs.back()->Run({"subscribe", "news"});
  }
  auto pattern = Connect(0);
  pattern->Run({"psubscribe", "n*"});
  auto shard = Connect(num_shards() - 1);
  shard->Run({"ssubscribe", "news"});
  EXPECT_EQ(RunOnThread(num_shards() - 1, {"publish", "news", "hi"}), int64_t(num_shards() + 1));
  for (auto& sub : subs) {
    EXPECT_THAT(sub->TakePushes(), ElementsAre(RespArray(ElementsAre("message", "news", "hi"))));
  }
  EXPECT_THAT(pattern->TakePushes(),
              ElementsAre(RespArray(ElementsAre("pmessage", "n*", "news", "hi"))));
  EXPECT_THAT(shard->TakePushes(), ElementsAre());
  EXPECT_EQ(Run({"spublish", "news", "s"}), 1);
  EXPECT_THAT(shard->TakePushes(), ElementsAre(RespArray(ElementsAre("smessage", "news", "s"))));
  EXPECT_THAT(Run({"pubsub", "channels"}), RespArray(UnorderedElementsAre("news")));
  EXPECT_THAT(Run({"pubsub", "shardchannels", "n*"}), RespArray(ElementsAre("news")));
  subs.clear();  // closing unsubscribes
  EXPECT_EQ(Run({"publish", "news", "x"}), 1);
}

TEST_P(PubSubFamilyTest, Resp3PushesAndNoRestriction) {
  auto sub = Connect(0);
  sub->Run({"hello", "3"});
  RespValue confirmation = sub->Run({"subscribe", "c"});
  EXPECT_EQ(confirmation.type, RespValue::Type::kPush);
  EXPECT_EQ(sub->Run({"ping"}), "PONG");
  EXPECT_EQ(sub->Run({"get", "k"}).type, RespValue::Type::kNull);
  EXPECT_EQ(Run({"publish", "c", "m"}), 1);
  std::vector<RespValue> pushes = sub->TakePushes();
  ASSERT_EQ(pushes.size(), 1u);
  EXPECT_EQ(pushes[0].type, RespValue::Type::kPush);
  EXPECT_THAT(pushes[0], RespArray(ElementsAre("message", "c", "m")));
}

TEST_P(PubSubFamilyTest, ArityAndHelp) {
  EXPECT_THAT(Run({"subscribe"}), ErrArg(ArityError("subscribe")));
  EXPECT_THAT(Run({"publish", "a"}), ErrArg(ArityError("publish")));
  EXPECT_THAT(Run({"pubsub", "foo"}), ErrArg("ERR unknown subcommand 'foo'. Try PUBSUB HELP."));
  EXPECT_THAT(Run({"pubsub", "channels", "a", "b"}),
              ErrArg("ERR unknown subcommand or wrong number of arguments for 'channels'. Try "
                     "PUBSUB HELP."));
  EXPECT_THAT(Run({"pubsub", "help"}), ArrLen(14));
}

INSTANTIATE_SHARD_COUNTS(PubSubFamilyTest);

}  // namespace
}  // namespace damselfly
