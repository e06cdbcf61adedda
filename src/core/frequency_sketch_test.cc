#include "src/core/frequency_sketch.h"

#include <gtest/gtest.h>

#include <random>

namespace damselfly::core {
namespace {

TEST(FrequencySketchTest, EstimatesCountsAndSaturates) {
  FrequencySketch sketch;
  EXPECT_EQ(sketch.Estimate(42), 0u);  // before Resize
  sketch.Resize(1000);
  EXPECT_EQ(sketch.capacity(), 1024u);
  EXPECT_EQ(sketch.bytes(), 2048u);  // 2 bytes per key of capacity
  for (int i = 0; i < 7; ++i) sketch.Increment(42);
  EXPECT_EQ(sketch.Estimate(42), 7u);
  for (int i = 0; i < 20; ++i) sketch.Increment(42);
  EXPECT_EQ(sketch.Estimate(42), FrequencySketch::kMaxCount);
}

TEST(FrequencySketchTest, OneOffKeysStayLowAndCountsHalve) {
  FrequencySketch sketch;
  sketch.Resize(4096);
  std::mt19937_64 random(1);
  const uint64_t hot = random();
  for (int i = 0; i < 10; ++i) sketch.Increment(hot);
  // A key's capacity of one-off keys: conservative updates keep almost all of them at 1.
  std::vector<uint64_t> once(4096);
  for (uint64_t& h : once) sketch.Increment(h = random());
  int above_two = 0;
  for (uint64_t h : once) above_two += sketch.Estimate(h) > 2;
  EXPECT_LT(above_two, 40);
  EXPECT_GE(sketch.Estimate(hot), 10u);
  // window() aging increments halve every counter; increments that do not age never do.
  EXPECT_EQ(sketch.window(), 10u * 4096);
  for (size_t i = 0; i < 2 * sketch.window(); ++i) sketch.Increment(random(), /*ages=*/false);
  EXPECT_GE(sketch.Estimate(hot), 10u);
  for (size_t i = 0; i < sketch.window(); ++i) sketch.Increment(random());
  EXPECT_LE(sketch.Estimate(hot), 7u);
  EXPECT_GE(sketch.Estimate(hot), 5u);
}

}  // namespace
}  // namespace damselfly::core
