// Blocking commands through the Service, with 1, 2 and 4 shards (test_utils.h): waiters
// and pushers on chosen threads and keys on chosen shards. Replies and error texts are
// checked against redis-server by tests/test_blocking.py.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;

class BlockingTest : public ServiceTest {
 protected:
  // A new connection on thread `thread` (modulo the shard count) that starts `command`
  // and is counted as blocked before this returns.
  std::unique_ptr<TestConnection> Block(unsigned thread, std::vector<std::string> command) {
    const int before = BlockedClients();
    std::unique_ptr<TestConnection> conn = Connect(thread % num_shards());
    conn->Start(std::move(command));
    WaitBlocked(before + 1);
    return conn;
  }
};

TEST_P(BlockingTest, FairnessOrderOfThreeWaiters) {
  const std::string key = KeyOnShard(num_shards() - 1, "queue");
  std::vector<std::unique_ptr<TestConnection>> waiters;
  for (unsigned i = 0; i < 3; ++i) waiters.push_back(Block(i, {"blpop", key, "10"}));
  EXPECT_EQ(Run({"rpush", key, "e1", "e2", "e3", "e4"}), 4);
  for (unsigned i = 0; i < 3; ++i) {
    EXPECT_THAT(waiters[i]->Finish(), RespArray(ElementsAre(key, helio::StrCat("e", i + 1))));
  }
  EXPECT_THAT(Run({"lrange", key, "0", "-1"}), RespArray(ElementsAre("e4")));
  EXPECT_EQ(BlockedClients(), 0);
}

TEST_P(BlockingTest, WakeUpFromAPushOnAnotherShard) {
  const std::string first = KeyOnShard(0, "a");
  const std::string second = KeyOnShard(num_shards() - 1, "b");
  std::unique_ptr<TestConnection> waiter = Block(0, {"brpop", first, second, "10"});
  EXPECT_EQ(RunOnThread(num_shards() - 1, {"rpush", second, "x", "y"}), 2);
  EXPECT_THAT(waiter->Finish(), RespArray(ElementsAre(second, "y")));
  EXPECT_THAT(Run({"lrange", second, "0", "-1"}), RespArray(ElementsAre("x")));
}

// Two shards fill a waiter's two keys at once (one EXEC): exactly one serves it.
TEST_P(BlockingTest, WaiterOnTwoShardsIsServedOnce) {
  const std::string first = KeyOnShard(0, "a");
  const std::string second = KeyOnShard(num_shards() - 1, "b");
  std::unique_ptr<TestConnection> waiter = Block(1, {"blpop", first, second, "10"});
  std::unique_ptr<TestConnection> pusher = Connect(0);
  ASSERT_EQ(pusher->Run({"multi"}), "OK");
  pusher->Run({"rpush", first, "1"});
  pusher->Run({"rpush", second, "2"});
  EXPECT_THAT(pusher->Run({"exec"}), RespArray(ElementsAre(1, 1)));
  RespValue served = waiter->Finish();
  ASSERT_THAT(served, ArrLen(2));
  const bool took_first = served.elements[0] == first;
  EXPECT_EQ(Run({"llen", first}), took_first ? 0 : 1);
  EXPECT_EQ(Run({"llen", second}), took_first ? 1 : 0);
  EXPECT_EQ(BlockedClients(), 0);
}

TEST_P(BlockingTest, PushInsideMultiServesAfterExec) {
  const std::string key = KeyOnShard(num_shards() - 1);
  std::unique_ptr<TestConnection> waiter = Block(0, {"blpop", key, "10"});
  ASSERT_EQ(Run({"multi"}), "OK");
  Run({"rpush", key, "a", "b"});
  Run({"llen", key});
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre(2, 2)));
  EXPECT_THAT(waiter->Finish(), RespArray(ElementsAre(key, "a")));
  EXPECT_THAT(Run({"lrange", key, "0", "-1"}), RespArray(ElementsAre("b")));
}

TEST_P(BlockingTest, BLMoveAcrossShards) {
  const std::string source = KeyOnShard(0, "src");
  const std::string destination = KeyOnShard(num_shards() - 1, "dst");
  std::unique_ptr<TestConnection> waiter =
      Block(1, {"blmove", source, destination, "RIGHT", "LEFT", "10"});
  // A second waiter on the destination is served by the moved element.
  std::unique_ptr<TestConnection> second = Block(2, {"blpop", destination, "10"});
  EXPECT_EQ(Run({"rpush", source, "keep", "moved"}), 2);
  EXPECT_EQ(waiter->Finish(), "moved");
  EXPECT_THAT(second->Finish(), RespArray(ElementsAre(destination, "moved")));
  EXPECT_THAT(Run({"lrange", source, "0", "-1"}), RespArray(ElementsAre("keep")));
  EXPECT_EQ(Run({"exists", destination}), 0);
}

TEST_P(BlockingTest, SortedSetWaiters) {
  const std::string key = KeyOnShard(num_shards() - 1, "z");
  std::unique_ptr<TestConnection> min = Block(0, {"bzpopmin", key, "10"});
  std::unique_ptr<TestConnection> mpop = Block(1, {"bzmpop", "10", "1", key, "MAX", "COUNT", "2"});
  EXPECT_EQ(Run({"zadd", key, "1", "a", "2", "b", "3", "c", "4", "d"}), 4);
  EXPECT_THAT(min->Finish(), RespArray(ElementsAre(key, "a", "1")));
  EXPECT_THAT(mpop->Finish(), RespArray(ElementsAre(
                                  key, RespArray(ElementsAre(RespArray(ElementsAre("d", "4")),
                                                             RespArray(ElementsAre("c", "3")))))));
  EXPECT_EQ(Run({"zcard", key}), 1);
}

TEST_P(BlockingTest, WaiterKeepsWaitingForItsType) {
  const std::string key = KeyOnShard(0);
  std::unique_ptr<TestConnection> waiter = Block(1, {"blpop", key, "10"});
  Run({"set", key, "string"});
  Run({"del", key});
  Run({"zadd", key, "1", "m"});
  EXPECT_EQ(BlockedClients(), 1);
  Run({"del", key});
  Run({"flushall"});
  EXPECT_EQ(BlockedClients(), 1);
  Run({"lpush", key, "v"});
  EXPECT_THAT(waiter->Finish(), RespArray(ElementsAre(key, "v")));
}

TEST_P(BlockingTest, TimeoutAndClientUnblock) {
  const std::string key = KeyOnShard(num_shards() - 1);
  EXPECT_THAT(Run({"blpop", key, "0.01"}), IsNil());
  std::unique_ptr<TestConnection> waiter = Block(1, {"brpop", key, "0"});
  const std::string id = helio::StrCat(waiter->context()->id());
  EXPECT_EQ(Run({"client", "unblock", id}), 1);
  EXPECT_THAT(waiter->Finish(), IsNil());
  waiter->Start({"bzpopmax", key, "0"});
  WaitBlocked(1);
  EXPECT_EQ(Run({"client", "unblock", id, "error"}), 1);
  EXPECT_THAT(waiter->Finish(), ErrArg("UNBLOCKED client unblocked via CLIENT UNBLOCK"));
  EXPECT_EQ(Run({"client", "unblock", id}), 0);
  EXPECT_EQ(Run({"rpush", key, "v"}), 1) << "no waiter left behind";
}

TEST_P(BlockingTest, InsideMultiNothingBlocks) {
  const std::string key = KeyOnShard(0);
  ASSERT_EQ(Run({"multi"}), "OK");
  Run({"blpop", key, "0"});
  Run({"bzmpop", "0", "1", key, "MIN"});
  Run({"brpoplpush", key, "other", "0"});
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre(IsNil(), IsNil(), IsNil())));
}

TEST_P(BlockingTest, ManyWaitersEveryElementOnce) {
  const std::string key = KeyOnShard(num_shards() - 1, "jobs");
  std::vector<std::unique_ptr<TestConnection>> waiters;
  for (unsigned i = 0; i < 20; ++i) {
    waiters.push_back(Connect(i % num_shards()));
    waiters.back()->Start({"blpop", key, "10"});
  }
  WaitBlocked(20);
  for (unsigned i = 0; i < 20; ++i) RunOnThread(i % num_shards(), {"rpush", key, helio::StrCat(i)});
  std::vector<std::string> got;
  for (auto& waiter : waiters) got.push_back(waiter->Finish().elements.at(1).str);
  std::sort(got.begin(), got.end());
  std::vector<std::string> expected;
  for (unsigned i = 0; i < 20; ++i) expected.push_back(helio::StrCat(i));
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(got, expected);
  EXPECT_EQ(Run({"exists", key}), 0);
}

INSTANTIATE_SHARD_COUNTS(BlockingTest);

}  // namespace
}  // namespace damselfly
