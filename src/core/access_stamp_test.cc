#include "src/core/access_stamp.h"

#include <gtest/gtest.h>

#include <random>

namespace damselfly::core {
namespace {

// Ages a stamp as the sweep does: every `period` seconds from `used` to `now`.
uint16_t SweptStamp(uint32_t used, uint32_t now, uint32_t period) {
  uint16_t stamp = AccessStamp::Now(used);
  for (uint32_t t = used + period; t <= now; t += period) stamp = AccessStamp::Age(stamp, t);
  return AccessStamp::Age(stamp, now);
}

TEST(AccessStampTest, FitsThirteenBits) {
  std::mt19937 rng(1);
  for (int i = 0; i < 10000; ++i) {
    uint32_t now = rng();
    EXPECT_LT(AccessStamp::Now(now), 1u << AccessStamp::kBits);
    EXPECT_LT(AccessStamp::Age(rng() % (1u << AccessStamp::kBits), now), 1u << AccessStamp::kBits);
  }
}

TEST(AccessStampTest, ExactToTheSecondWhileFresh) {
  for (uint32_t origin : {0u, 1000u, 4294967000u - 5000u}) {
    for (uint32_t idle = 0; idle < 1024; idle += 7) {
      EXPECT_EQ(AccessStamp::IdleSeconds(AccessStamp::Now(origin), origin + idle), idle);
      EXPECT_EQ(AccessStamp::IdleSeconds(SweptStamp(origin, origin + idle, 600), origin + idle), idle);
    }
  }
}

// With the sweep's period of 10 minutes, idle times never wrap and stay within the
// precision of their scale, from a second to years.
TEST(AccessStampTest, SweptStampsKeepTheirIdleTime) {
  std::mt19937 rng(7);
  for (int i = 0; i < 300; ++i) {
    const uint32_t used = rng() % 100000;
    const uint32_t idle = i < 100 ? rng() % 7200 : i < 200 ? rng() % 400000 : rng() % 90000000;
    const uint32_t got = AccessStamp::IdleSeconds(SweptStamp(used, used + idle, 600), used + idle);
    const uint32_t tolerance = idle < 1024 ? 0 : idle < 61440 ? 120 : idle < 3686400 ? 7200 : 172800;
    const uint32_t cap = 1024u * 86400;
    const uint32_t expected = idle < cap ? idle : cap;
    EXPECT_LE(got, expected + tolerance) << "idle " << idle;
    EXPECT_GE(got + tolerance, expected) << "idle " << idle;
  }
}

TEST(AccessStampTest, UseResetsTheStamp) {
  uint16_t stamp = SweptStamp(0, 100000, 600);  // coarse by now
  EXPECT_GT(AccessStamp::IdleSeconds(stamp, 100000), 90000u);
  stamp = AccessStamp::Now(100000);
  EXPECT_EQ(AccessStamp::IdleSeconds(stamp, 100003), 3u);
}

}  // namespace
}  // namespace damselfly::core
