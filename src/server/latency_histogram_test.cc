#include "src/server/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace damselfly {
namespace {

TEST(LatencyHistogramTest, EmptyReportsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.PercentileUs(50), 0);
}

TEST(LatencyHistogramTest, SmallDurationsAreExact) {
  LatencyHistogram h;
  for (uint64_t ns = 1; ns <= 63; ++ns) h.Record(ns);
  EXPECT_EQ(h.count(), 63u);
  EXPECT_DOUBLE_EQ(h.PercentileUs(100), 0.063);
  EXPECT_DOUBLE_EQ(h.PercentileUs(50), 0.032);  // rank 32 of 63
  EXPECT_DOUBLE_EQ(h.PercentileUs(0.1), 0.001);
}

// Against the exact percentiles of random durations over nine orders of magnitude: the
// reported value is never below the true one and at most 1/32 above it.
TEST(LatencyHistogramTest, PercentilesWithinOneThirtySecond) {
  std::mt19937_64 rng(5);
  std::vector<uint64_t> durations;
  LatencyHistogram h;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t ns = uint64_t(std::exp2(std::uniform_real_distribution<double>(0, 38)(rng)));
    durations.push_back(ns);
    h.Record(ns);
  }
  std::sort(durations.begin(), durations.end());
  for (double p : {1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    const size_t rank = std::max<size_t>(1, size_t(std::ceil(p / 100 * durations.size())));
    const double exact_us = durations[rank - 1] / 1000.0;
    const double reported = h.PercentileUs(p);
    EXPECT_GE(reported, exact_us) << p;
    EXPECT_LE(reported, exact_us * (1 + 1.0 / 32) + 0.001) << p;
  }
}

TEST(LatencyHistogramTest, EveryPowerOfTwoBoundary) {
  for (int bits = 6; bits < 40; ++bits) {
    for (uint64_t ns : {(uint64_t{1} << bits) - 1, uint64_t{1} << bits, (uint64_t{1} << bits) + 1}) {
      LatencyHistogram h;
      h.Record(ns);
      const double reported_ns = h.PercentileUs(50) * 1000;
      EXPECT_GE(reported_ns, double(ns) - 0.5) << ns;
      EXPECT_LE(reported_ns, double(ns) * (1 + 1.0 / 32) + 0.5) << ns;
    }
  }
}

TEST(LatencyHistogramTest, HugeDurationsShareTheLastBucket) {
  LatencyHistogram h;
  h.Record(uint64_t{1} << 50);
  h.Record(UINT64_MAX);
  EXPECT_EQ(h.count(), 2u);
  EXPECT_DOUBLE_EQ(h.PercentileUs(100), double((uint64_t{1} << 40) - 1) / 1000);
}

TEST(LatencyHistogramTest, CountAtMostCountsWholeBuckets) {
  LatencyHistogram h;
  for (uint64_t ns : {10, 63, 64, 1000, 1000, 5000, 1000000}) h.Record(ns);
  EXPECT_EQ(h.sum_ns(), 10u + 63 + 64 + 1000 + 1000 + 5000 + 1000000);
  EXPECT_EQ(h.CountAtMost(0), 0u);
  EXPECT_EQ(h.CountAtMost(10), 1u);
  EXPECT_EQ(h.CountAtMost(64), 2u);  // 64 is in the bucket [64, 65]
  EXPECT_EQ(h.CountAtMost(65), 3u);
  EXPECT_EQ(h.CountAtMost(2000), 5u);
  EXPECT_EQ(h.CountAtMost(1000000 * 33 / 32), 7u);
  EXPECT_EQ(h.CountAtMost(UINT64_MAX), 7u);
  // 1000 ns lies in the bucket [992, 1007]: a bound inside it counts it above.
  EXPECT_EQ(h.CountAtMost(1000), 3u);
}

TEST(LatencyHistogramTest, MergeAddsCounts) {
  LatencyHistogram a, b;
  for (int i = 0; i < 90; ++i) a.Record(1000);
  for (int i = 0; i < 10; ++i) b.Record(1000000);
  a.Merge(b);
  EXPECT_EQ(a.count(), 100u);
  EXPECT_EQ(a.sum_ns(), 90u * 1000 + 10u * 1000000);
  EXPECT_NEAR(a.PercentileUs(50), 1.0, 0.04);
  EXPECT_NEAR(a.PercentileUs(95), 1000.0, 40);
}

// Labels as Redis 7 prints them: the end of its HdrHistogram bucket of each power of two
// from 1024 ns, in microseconds; durations past 1 s count at the last power.
TEST(LatencyHistogramTest, CumulativeUsecAsRedisReportsIt) {
  LatencyHistogram h;
  EXPECT_TRUE(h.CumulativeUsec().empty());
  for (uint64_t ns : {300, 500, 1500, 3000, 3000, 20000}) h.Record(ns);
  h.Record(uint64_t{5} * 1000000000);
  using Cdf = std::vector<std::pair<uint64_t, uint64_t>>;
  EXPECT_EQ(h.CumulativeUsec(), (Cdf{{1, 2}, {2, 3}, {4, 5}, {33, 6}, {1082130, 7}}));
  LatencyHistogram fast;
  fast.Record(100);
  EXPECT_EQ(fast.CumulativeUsec(), (Cdf{{1, 1}}));
}

}  // namespace
}  // namespace damselfly
