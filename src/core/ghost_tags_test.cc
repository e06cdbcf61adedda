#include "src/core/ghost_tags.h"

#include <gtest/gtest.h>

#include <random>

namespace damselfly::core {
namespace {

TEST(GhostTagsTest, RemembersUntilTakenOrOverwritten) {
  GhostTags ghosts;
  EXPECT_EQ(ghosts.Take(42), 0);  // before Resize
  ghosts.Resize(4096);
  EXPECT_EQ(ghosts.bytes(), 2048 * sizeof(uint32_t));
  std::mt19937_64 random(1);
  const uint64_t a = random(), b = random();
  ghosts.Remember(a, 4);
  ghosts.Remember(a, 8);  // adds
  ghosts.Remember(b, 3);
  EXPECT_EQ(ghosts.Take(random()), 0);  // never remembered
  EXPECT_EQ(ghosts.Take(a), 12);
  EXPECT_EQ(ghosts.Take(a), 0);  // taken
  // A key of the same slot overwrites b.
  const uint64_t same_slot = b ^ (uint64_t(1) << 60);
  ghosts.Remember(same_slot, 1);
  EXPECT_EQ(ghosts.Take(b), 0);
  EXPECT_EQ(ghosts.Take(same_slot), 1);
}

TEST(GhostTagsTest, RemembersAboutItsSizeInRecentKeys) {
  GhostTags ghosts;
  ghosts.Resize(8192);  // 4096 slots
  std::mt19937_64 random(2);
  std::vector<uint64_t> keys(20000);
  for (uint64_t& key : keys) ghosts.Remember(key = random(), 1);
  int recent = 0, old = 0;
  for (int i = 0; i < 1000; ++i) old += ghosts.Take(keys[i]) != 0;
  for (int i = 19000; i < 20000; ++i) recent += ghosts.Take(keys[i]) != 0;
  EXPECT_LE(old, 30);  // e^-(19000/4096) of the first thousand, by chance
  EXPECT_GE(recent, 780);  // e^-(1000/4096) of the last thousand are not overwritten
  int false_hits = 0;
  for (int i = 0; i < 100000; ++i) false_hits += ghosts.Take(random()) != 0;
  EXPECT_EQ(false_hits, 0);
}

}  // namespace
}  // namespace damselfly::core
