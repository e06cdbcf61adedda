#include "src/server/latency_monitor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

namespace damselfly {
namespace {

std::vector<LatencySample> Expected(std::initializer_list<std::pair<int64_t, uint32_t>> list) {
  std::vector<LatencySample> out;
  for (auto [t, ms] : list) out.push_back({t, ms});
  return out;
}

TEST(LatencySeriesTest, OneSamplePerSecondKeepsTheWorst) {
  LatencySeries series;
  series.Add(100, 5);
  series.Add(100, 9);
  series.Add(100, 7);
  series.Add(101, 3);
  EXPECT_EQ(series.Samples(), Expected({{100, 9}, {101, 3}}));
  EXPECT_EQ(series.max_ms(), 9u);
}

TEST(LatencySeriesTest, KeepsTheNewestSeconds) {
  LatencySeries series;
  const size_t total = LatencySeries::kCapacity + 25;
  for (size_t i = 0; i < total; ++i) series.Add(int64_t(1000 + i), uint32_t(i + 1));
  std::vector<LatencySample> samples = series.Samples();
  ASSERT_EQ(samples.size(), LatencySeries::kCapacity);
  EXPECT_EQ(samples.front().time_s, int64_t(1000 + total - LatencySeries::kCapacity));
  EXPECT_EQ(samples.back().time_s, int64_t(1000 + total - 1));
  EXPECT_EQ(series.max_ms(), uint32_t(total));  // the maximum outlives its sample
}

TEST(LatencySeriesTest, OnlyTheNewestSampleAbsorbsItsSecond) {
  // As in Redis: a second that is not the newest sample's takes a slot of its own.
  LatencySeries series;
  series.Add(10, 1);
  series.Add(11, 1);
  series.Add(10, 4);
  EXPECT_EQ(series.Samples(), Expected({{10, 1}, {11, 1}, {10, 4}}));
}

TEST(LatencyMergeTest, WorstPerSecondAcrossThreads) {
  LatencySeries a, b;
  a.Add(1, 5);
  a.Add(3, 2);
  b.Add(2, 7);
  b.Add(3, 6);
  b.Add(4, 1);
  const LatencySeries* both[] = {&a, &b};
  MergedLatencySeries merged = MergeLatencySeries(both);
  EXPECT_EQ(merged.samples, Expected({{1, 5}, {2, 7}, {3, 6}, {4, 1}}));
  EXPECT_EQ(merged.max_ms, 7u);
}

// Threads recording random events merge to what one series fed with all of them in time
// order holds.
TEST(LatencyMergeTest, EqualsOneProcessWideSeries) {
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    constexpr int kThreads = 4;
    std::vector<LatencySeries> threads(kThreads);
    LatencySeries process;
    const int seconds = 100 + int(rng() % 400);
    for (int64_t t = 1; t <= seconds; ++t) {
      const int events = int(rng() % 4);
      for (int i = 0; i < events; ++i) {
        const uint32_t ms = 1 + rng() % 1000;
        threads[rng() % kThreads].Add(t, ms);
        process.Add(t, ms);
      }
    }
    std::vector<const LatencySeries*> pointers;
    for (const LatencySeries& s : threads) pointers.push_back(&s);
    MergedLatencySeries merged = MergeLatencySeries(pointers);
    EXPECT_EQ(merged.samples, process.Samples());
    EXPECT_EQ(merged.max_ms, process.max_ms());
  }
}

TEST(LatencyEventsTest, ResetForgetsOneEvent) {
  LatencyEvents events;
  EXPECT_EQ(events.Find(LatencyEvent::kCommand), nullptr);
  events.Add(LatencyEvent::kCommand, 5, 10);
  events.Add(LatencyEvent::kExpireCycle, 5, 30);
  ASSERT_NE(events.Find(LatencyEvent::kCommand), nullptr);
  EXPECT_TRUE(events.Reset(LatencyEvent::kCommand));
  EXPECT_FALSE(events.Reset(LatencyEvent::kCommand));
  EXPECT_EQ(events.Find(LatencyEvent::kCommand), nullptr);
  EXPECT_EQ(events.Find(LatencyEvent::kExpireCycle)->max_ms(), 30u);
}

TEST(LatencyEventsTest, NamesAreExact) {
  EXPECT_EQ(FindLatencyEvent("fast-command"), LatencyEvent::kFastCommand);
  EXPECT_EQ(FindLatencyEvent("expire-cycle"), LatencyEvent::kExpireCycle);
  EXPECT_EQ(FindLatencyEvent("Command"), std::nullopt);
  EXPECT_EQ(LatencyEventName(LatencyEvent::kCommand), "command");
}

}  // namespace
}  // namespace damselfly
