#include "helio/base/mpsc_queue.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "helio/base/task.h"

namespace helio {
namespace {

TEST(BoundedMpscQueueTest, FifoAndFull) {
  BoundedMpscQueue<int> q(4);
  for (int i = 0; i < 4; ++i) {
    int v = i;
    EXPECT_TRUE(q.TryPush(std::move(v)));
  }
  int extra = 99;
  EXPECT_FALSE(q.TryPush(std::move(extra)));
  EXPECT_EQ(extra, 99);  // a failed push leaves the value with the caller
  int out = -1;
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(q.TryPop(&out));
    EXPECT_EQ(out, i);
  }
  EXPECT_FALSE(q.TryPop(&out));
  EXPECT_TRUE(q.Empty());
}

// Four producers push disjoint ranges through a small queue; the consumer must see every
// value exactly once, and each producer's values in the order it pushed them.
TEST(BoundedMpscQueueTest, ManyProducersNoLossNoDuplicates) {
  constexpr int kProducers = 4, kPerProducer = 200000;
  BoundedMpscQueue<uint64_t> q(64);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&q, p] {
      for (uint64_t i = 0; i < kPerProducer; ++i) {
        uint64_t v = (uint64_t(p) << 32) | i;
        while (!q.TryPush(std::move(v))) std::this_thread::yield();
      }
    });
  }
  std::vector<uint64_t> next(kProducers, 0);
  uint64_t received = 0, v = 0;
  while (received < uint64_t(kProducers) * kPerProducer) {
    if (!q.TryPop(&v)) continue;
    unsigned p = v >> 32;
    ASSERT_LT(p, unsigned(kProducers));
    ASSERT_EQ(v & 0xffffffff, next[p]) << "producer " << p;
    ++next[p];
    ++received;
  }
  for (auto& t : producers) t.join();
  EXPECT_FALSE(q.TryPop(&v));
}

TEST(TaskTest, InlineAndHeapClosures) {
  int calls = 0;
  Task small([&calls] { ++calls; });
  small();
  struct Big {
    char pad[200];
  } big{};
  big.pad[7] = 3;
  Task large([&calls, big] { calls += big.pad[7]; });
  Task moved = std::move(large);
  EXPECT_FALSE(large);
  moved();
  EXPECT_EQ(calls, 4);

  auto owned = std::make_shared<int>(5);
  {
    Task holder([owned] {});
    EXPECT_EQ(owned.use_count(), 2);
    Task other = std::move(holder);
    EXPECT_EQ(owned.use_count(), 2);
  }
  EXPECT_EQ(owned.use_count(), 1);  // destroyed exactly once
}

}  // namespace
}  // namespace helio
