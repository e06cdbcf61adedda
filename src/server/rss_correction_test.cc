// RssCorrection: the shares it leaves keep RSS within maxmemory, and RSS that stays while
// the data shrinks does not empty the cache.
#include "src/server/rss_correction.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace damselfly {
namespace {

constexpr uint64_t kMiB = 1 << 20;

TEST(RssCorrectionTest, LeavesTheFootprintWhileRssIsLow) {
  RssCorrection correction(10 * kMiB);
  EXPECT_EQ(correction.Update(100 * kMiB, 30 * kMiB, 20 * kMiB), 10 * kMiB);
  EXPECT_EQ(correction.Update(100 * kMiB, 40 * kMiB, 25 * kMiB), 10 * kMiB);
  EXPECT_EQ(correction.Update(0, 40 * kMiB, 25 * kMiB), 0u);
}

TEST(RssCorrectionTest, LeavesRoomForTheRssEachByteTakes) {
  RssCorrection correction(10 * kMiB);
  correction.Update(100 * kMiB, 30 * kMiB, 16 * kMiB);
  // 50 MiB of RSS over the footprint for 40 MiB used: 1.25 per byte, so the data's share
  // is 90 / 1.25 = 72 MiB, which then fills RSS to exactly 100 MiB.
  EXPECT_EQ(correction.Update(100 * kMiB, 60 * kMiB, 40 * kMiB), 28 * kMiB);
  // Under one RSS byte per byte used counts as one.
  EXPECT_EQ(correction.Update(100 * kMiB, 70 * kMiB, 70 * kMiB), 10 * kMiB);
  // Never more than half of maxmemory.
  RssCorrection bloated(10 * kMiB);
  EXPECT_EQ(bloated.Update(100 * kMiB, 80 * kMiB, 10 * kMiB), 50 * kMiB);
}

TEST(RssCorrectionTest, RssThatStaysWhileUsedFallsChangesNothing) {
  RssCorrection correction(10 * kMiB);
  // Full: 90 MiB over the footprint for 72 MiB used, 1.25 per byte.
  ASSERT_EQ(correction.Update(100 * kMiB, 100 * kMiB, 72 * kMiB), 28 * kMiB);
  // Evictions and DELs free blocks whose pages the allocator keeps.
  EXPECT_EQ(correction.Update(100 * kMiB, 100 * kMiB, 50 * kMiB), 28 * kMiB);
  EXPECT_EQ(correction.Update(100 * kMiB, 96 * kMiB, 5 * kMiB), 28 * kMiB);
}

// Connection buffers and stacks move RSS by a page or two between updates. Were RSS per
// byte read against what the data uses now, each such page would raise the correction,
// evict, and raise it again at the next: the cache would empty itself.
TEST(RssCorrectionTest, APageOfRssAfterEvictionsEvictsNoMore) {
  RssCorrection correction(10 * kMiB);
  ASSERT_EQ(correction.Update(100 * kMiB, 100 * kMiB, 72 * kMiB), 28 * kMiB);
  uint64_t used = 72 * kMiB;
  for (int i = 1; i <= 100; ++i) {
    used -= used / 50;  // evicted down to the share
    correction.Update(100 * kMiB, 100 * kMiB + i * 4096, used);
  }
  EXPECT_LT(correction.correction(), 28 * kMiB + kMiB / 2);
}

TEST(RssCorrectionTest, ShrinksBackOnceRssIsUnder95Percent) {
  RssCorrection correction(10 * kMiB);
  ASSERT_EQ(correction.Update(100 * kMiB, 100 * kMiB, 72 * kMiB), 28 * kMiB);
  // A FLUSHALL: RSS falls, the correction over the footprint shrinks by an eighth per
  // update back to the footprint.
  EXPECT_EQ(correction.Update(100 * kMiB, 20 * kMiB, 0), 10 * kMiB + 18 * kMiB * 7 / 8);
  uint64_t last = correction.correction();
  for (int i = 0; i < 300; ++i) last = correction.Update(100 * kMiB, 20 * kMiB, 0);
  EXPECT_EQ(last, 10 * kMiB);
  // RSS under half of maxmemory, growing: no estimate yet, and still shrinking.
  ASSERT_EQ(correction.Update(100 * kMiB, 100 * kMiB, 72 * kMiB), 28 * kMiB);
  EXPECT_LT(correction.Update(100 * kMiB, 30 * kMiB, 8 * kMiB), 28 * kMiB);
}

TEST(RssCorrectionTest, SmallLimitsBoundTheGrowthOverTheFirstRss) {
  // 30 MiB < 4 x 10 MiB: no footprint is set aside; RSS counts from the first update's.
  RssCorrection correction(10 * kMiB);
  EXPECT_FALSE(correction.bounds_whole_rss(30 * kMiB));
  EXPECT_EQ(correction.Update(30 * kMiB, 12 * kMiB, 1 * kMiB), 0u);
  // 25 MiB over the first RSS for 20 MiB used is within the limit.
  EXPECT_EQ(correction.Update(30 * kMiB, 37 * kMiB, 20 * kMiB), 0u);
  // 38 MiB over it, growing: a quarter of the 8 MiB excess.
  EXPECT_EQ(correction.Update(30 * kMiB, 50 * kMiB, 29 * kMiB), 2 * kMiB);
  EXPECT_EQ(correction.Update(30 * kMiB, 50 * kMiB, 27 * kMiB), 2 * kMiB);
  EXPECT_EQ(correction.Update(30 * kMiB, 54 * kMiB, 28 * kMiB), 5 * kMiB);
}

// A write flood in a model of the shards and the allocator: every 64 KiB of writes (the
// db slice's reports) the correction is updated and the data evicted down to its share.
// The allocator takes 1.1 bytes of RSS per byte used while the data grows, and keeps the
// pages of what is evicted for the values that follow; churn fragments a further 4%
// over time. RSS stays within 1% of maxmemory, and the data keeps at least 80% of it.
TEST(RssCorrectionTest, AFloodStaysWithinMaxmemory) {
  const uint64_t maxmemory = 64 * kMiB, startup = 11 * kMiB;
  RssCorrection correction(startup);
  uint64_t used = 0, data_pages = 0, peak_rss = 0;
  double overhead = 1.10;
  for (int step = 0; step < 3 * 1024; ++step) {
    const uint64_t share = maxmemory - correction.Update(maxmemory, startup + data_pages, used);
    used = std::min(used + 64 * 1024, share);
    overhead = std::min(1.14, overhead + 0.00005);
    data_pages = std::max(data_pages, uint64_t(double(used) * overhead));
    peak_rss = std::max(peak_rss, startup + data_pages);
  }
  EXPECT_LE(peak_rss, maxmemory + maxmemory / 100);
  EXPECT_GE(used, (maxmemory - startup) * 8 / 10);
}

}  // namespace
}  // namespace damselfly
