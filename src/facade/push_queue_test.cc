#include "src/facade/push_queue.h"

#include <gtest/gtest.h>

#include <string>

namespace damselfly::facade {
namespace {

// Sets a class's limits for one test and restores them after.
class ScopedLimit {
 public:
  ScopedLimit(ClientClass cls, OutputBufferLimit limit)
      : cls_(cls), saved_(GetOutputBufferLimit(cls)) {
    SetOutputBufferLimit(cls, limit);
  }
  ~ScopedLimit() { SetOutputBufferLimit(cls_, saved_); }

 private:
  ClientClass cls_;
  OutputBufferLimit saved_;
};

TEST(PushQueueTest, DefaultsAreRedis70s) {
  OutputBufferLimit normal = GetOutputBufferLimit(ClientClass::kNormal);
  OutputBufferLimit pubsub = GetOutputBufferLimit(ClientClass::kPubSub);
  OutputBufferLimit replica = GetOutputBufferLimit(ClientClass::kReplica);
  EXPECT_EQ(normal.hard_bytes + normal.soft_bytes + normal.soft_seconds, 0u);
  EXPECT_EQ(pubsub.hard_bytes, 32u << 20);
  EXPECT_EQ(pubsub.soft_bytes, 8u << 20);
  EXPECT_EQ(pubsub.soft_seconds, 60u);
  EXPECT_EQ(replica.hard_bytes, 256u << 20);
  EXPECT_EQ(replica.soft_bytes, 64u << 20);
}

TEST(PushQueueTest, KeepsBytesInOrderAndCountsThem) {
  PushQueue queue(ClientClass::kPubSub, 0, -1);
  EXPECT_TRUE(queue.Push("ab"));
  EXPECT_TRUE(queue.Push("cd"));
  EXPECT_EQ(queue.queued_bytes(), 4u);
  EXPECT_EQ(queue.TakeQueued(), "abcd");
  EXPECT_EQ(queue.queued_bytes(), 0u);
}

TEST(PushQueueTest, HardLimitClosesAndDropsTheBytes) {
  ScopedLimit limit(ClientClass::kPubSub, {.hard_bytes = 10});
  PushQueue queue(ClientClass::kPubSub, 0, -1);
  EXPECT_TRUE(queue.Push("0123456789"));
  EXPECT_FALSE(queue.Push("x"));
  EXPECT_TRUE(queue.closed());
  EXPECT_EQ(queue.TakeQueued(), "");
  EXPECT_FALSE(queue.Push("y"));  // refused for good
}

TEST(PushQueueTest, UnlimitedClassUsesTheQueuesOwnCap) {
  ScopedLimit limit(ClientClass::kNormal, {});
  PushQueue capped(ClientClass::kNormal, 4, -1);
  EXPECT_TRUE(capped.Push("1234"));
  EXPECT_FALSE(capped.Push("5"));
  PushQueue unbounded(ClientClass::kNormal, 0, -1);
  EXPECT_TRUE(unbounded.Push(std::string(1 << 20, 'x')));
  EXPECT_FALSE(unbounded.closed());
}

TEST(PushQueueTest, ClassChangesTheLimitInForce) {
  ScopedLimit pubsub(ClientClass::kPubSub, {.hard_bytes = 4});
  ScopedLimit normal(ClientClass::kNormal, {});
  PushQueue queue(ClientClass::kNormal, 0, -1);
  EXPECT_TRUE(queue.Push("12345"));
  queue.set_client_class(ClientClass::kPubSub);
  EXPECT_FALSE(queue.Push("6"));
}

TEST(PushQueueTest, SoftLimitAloneToleratesTheFirstSecond) {
  ScopedLimit limit(ClientClass::kPubSub, {.soft_bytes = 2, .soft_seconds = 5});
  PushQueue queue(ClientClass::kPubSub, 0, -1);
  EXPECT_TRUE(queue.Push("123"));  // over the soft limit, for less than 5 s
  EXPECT_TRUE(queue.Push("456"));
  EXPECT_FALSE(queue.closed());
}

TEST(PushQueueTest, StopRefusesFurtherBytes) {
  PushQueue queue(ClientClass::kPubSub, 0, -1);
  EXPECT_TRUE(queue.Push("a"));
  queue.Stop();
  EXPECT_FALSE(queue.Push("b"));
  EXPECT_FALSE(queue.closed());  // stopped, not overflowed
  EXPECT_EQ(queue.TakeQueued(), "a");
}

}  // namespace
}  // namespace damselfly::facade
