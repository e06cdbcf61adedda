#include "src/core/score_tree.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "src/core/obj_malloc.h"

namespace damselfly::core {
namespace {

using Element = std::pair<double, std::string>;
using Model = std::set<Element>;

// Owns the blocks of a tree under test.
class TreeFixture {
 public:
  ~TreeFixture() {
    tree.ForEach([](const ScoredMember* m) { ScoredMember::Free(m); });
  }
  void Insert(double score, const std::string& member) {
    tree.Insert(ScoredMember::Make(member, score));
    model.emplace(score, member);
  }
  bool Erase(double score, const std::string& member) {
    const ScoredMember* m = tree.Erase(score, member);
    bool in_model = model.erase({score, member}) > 0;
    EXPECT_EQ(m != nullptr, in_model) << member;
    if (m == nullptr) return false;
    EXPECT_EQ(m->member(), member);
    ScoredMember::Free(m);
    return true;
  }
  std::vector<Element> Contents() const {
    std::vector<Element> out;
    tree.ForEach([&out](const ScoredMember* m) { out.emplace_back(m->score(), m->member()); });
    return out;
  }
  void ExpectMatches() {
    ASSERT_TRUE(tree.Validate());
    ASSERT_EQ(tree.Size(), model.size());
    ASSERT_EQ(Contents(), std::vector<Element>(model.begin(), model.end()));
  }

  ScoreTree tree;
  Model model;
};

TEST(ScoredMemberTest, Layout) {
  for (size_t len : {0, 1, 10, 127, 128, 300, 16383, 16384, 100000}) {
    std::string member(len, 'x');
    if (len > 0) member[len / 2] = '\0';
    ScoredMember* m = ScoredMember::Make(member, -2.5);
    EXPECT_EQ(m->member(), member) << len;
    EXPECT_EQ(m->score(), -2.5);
    EXPECT_GE(m->MallocUsed(), 8 + len + 1);
    ScoredMember::Free(m);
  }
  // A 10-byte member takes 8 (score) + 1 (length) + 10 bytes.
  ScoredMember* m = ScoredMember::Make("0123456789", 1);
  EXPECT_EQ(m->MallocUsed(), ObjGoodSize(19));
  ScoredMember::Free(m);
}

TEST(ScoreTreeTest, Empty) {
  TreeFixture f;
  f.ExpectMatches();
  EXPECT_EQ(f.tree.CountBefore(0, "a"), 0u);
  EXPECT_EQ(f.tree.CountScoreBelow(1, true), 0u);
  EXPECT_EQ(f.tree.CountMemberBelow("a", true), 0u);
  EXPECT_EQ(f.tree.Erase(0, "a"), nullptr);
  EXPECT_EQ(f.tree.EraseRanks(0, 10, [](const ScoredMember*) { FAIL(); }), 0u);
}

TEST(ScoreTreeTest, AscendingAndDescendingLoadsFillLeaves) {
  for (bool ascending : {true, false}) {
    TreeFixture f;
    const int n = 63 * 100;
    for (int i = 0; i < n; ++i) f.Insert(ascending ? i : n - i, "m");
    f.ExpectMatches();
    // 100 full leaves, plus the inner nodes (at most 1/7 of that, +1).
    EXPECT_LE(f.tree.NodeMallocUsed(), 512u * (101 + 16)) << ascending;
  }
}

TEST(ScoreTreeTest, EqualScoresOrderByMemberBytes) {
  TreeFixture f;
  std::vector<std::string> members = {"",
                                      std::string(1, '\0'),
                                      std::string("a\0b", 3),
                                      "a",
                                      "ab",
                                      "\xff",
                                      "\x80",
                                      "b",
                                      std::string("a\0", 2),
                                      "\x7f\xff"};
  for (const auto& m : members) f.Insert(0.0, m);
  f.Insert(-0.0, "c");  // -0.0 equals 0.0: ordered among them by member
  f.ExpectMatches();
  std::vector<Element> contents = f.Contents();
  for (size_t i = 1; i < contents.size(); ++i) {
    EXPECT_LT(contents[i - 1].second, contents[i].second);  // std::string: unsigned bytes
  }
  EXPECT_EQ(f.tree.CountMemberBelow("a", false), 2u);  // "" and "\0"
  EXPECT_EQ(f.tree.CountMemberBelow("a", true), 3u);
  EXPECT_EQ(f.tree.CountBefore(0.0, "b"), f.tree.CountBefore(-0.0, "b"));
  EXPECT_EQ(f.tree.CountScoreBelow(-0.0, false), 0u);
  EXPECT_EQ(f.tree.CountScoreBelow(0.0, true), members.size() + 1);
}

// Random inserts, erases and range erases checked against std::set, at several sizes.
void RandomOps(size_t target, uint32_t seed) {
  std::mt19937_64 rng(seed);
  TreeFixture f;
  // Few distinct scores so that many elements tie and members decide.
  auto random_score = [&]() -> double {
    switch (rng() % 8) {
      case 0:
        return -std::numeric_limits<double>::infinity();
      case 1:
        return std::numeric_limits<double>::infinity();
      case 2:
        return rng() % 2 ? 0.0 : -0.0;
      default:
        return static_cast<double>(static_cast<int>(rng() % 200) - 100) / 4;
    }
  };
  auto random_member = [&]() {
    std::string m(rng() % 6, 'a');
    for (char& c : m) c = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : 'a' + rng() % 3);
    return m;
  };
  size_t steps = target * 4 + 2000;
  for (size_t step = 0; step < steps; ++step) {
    unsigned op = rng() % 100;
    bool grow = f.model.size() < target;
    if (op < (grow ? 70u : 45u)) {
      double score = random_score();
      std::string member = random_member();
      if (f.model.count({score, member}) == 0) f.Insert(score, member);
    } else if (op < 92 && !f.model.empty()) {
      auto it = f.model.begin();
      std::advance(it, rng() % std::min<size_t>(f.model.size(), 64));
      if (rng() % 2)
        it = std::prev(f.model.end(), 1 + rng() % std::min<size_t>(f.model.size(), 64));
      if (rng() % 2) {
        Element e = *it;
        f.Erase(e.first, e.second);
      } else {
        Element e = {random_score(), random_member()};
        f.Erase(e.first, e.second);
      }
    } else if (!f.model.empty()) {
      size_t start = rng() % f.model.size();
      size_t len = rng() % 3 == 0 ? rng() % 300 : rng() % 8;
      auto it = std::next(f.model.begin(), start);
      std::vector<Element> expect;
      for (size_t i = 0; i < len && it != f.model.end(); ++i) expect.push_back(*it++);
      std::vector<Element> got;
      size_t removed = f.tree.EraseRanks(start, start + len, [&got](const ScoredMember* m) {
        got.emplace_back(m->score(), m->member());
        ScoredMember::Free(m);
      });
      ASSERT_EQ(removed, expect.size());
      ASSERT_EQ(got, expect);
      for (const Element& e : expect) f.model.erase(e);
    }
    if (step % (target / 4 + 50) == 0) {
      ASSERT_NO_FATAL_FAILURE(f.ExpectMatches());
    }
  }
  ASSERT_NO_FATAL_FAILURE(f.ExpectMatches());
  // Ranks, At and the counts for every element and for probes around them.
  std::vector<Element> all(f.model.begin(), f.model.end());
  for (size_t i = 0; i < all.size(); i += 1 + all.size() / 2000) {
    const Element& e = all[i];
    ASSERT_EQ(f.tree.CountBefore(e.first, e.second), i);
    const ScoredMember* m = f.tree.At(i);
    ASSERT_EQ(m->score(), e.first);
    ASSERT_EQ(m->member(), e.second);
  }
  for (int probe = 0; probe < 300; ++probe) {
    double score = random_score();
    for (bool or_equal : {false, true}) {
      size_t expect = 0;
      for (const Element& e : all) expect += or_equal ? e.first <= score : e.first < score;
      ASSERT_EQ(f.tree.CountScoreBelow(score, or_equal), expect) << score;
    }
    std::string member = random_member();
    auto lower = f.model.lower_bound({score, member});
    ASSERT_EQ(f.tree.CountBefore(score, member),
              static_cast<size_t>(std::distance(f.model.begin(), lower)));
  }
  // Cursors both ways from random ranks.
  for (int probe = 0; probe < 50 && !all.empty(); ++probe) {
    size_t rank = rng() % all.size();
    ScoreTree::Cursor forward(f.tree, rank);
    for (size_t i = rank; i < all.size(); ++i) {
      ASSERT_EQ(forward.Get()->member(), all[i].second);
      ASSERT_EQ(forward.Next(), i + 1 < all.size());
    }
    ScoreTree::Cursor backward(f.tree, rank);
    for (size_t i = rank + 1; i-- > 0;) {
      ASSERT_EQ(backward.Get()->member(), all[i].second);
      ASSERT_EQ(backward.Prev(), i > 0);
    }
  }
}

TEST(ScoreTreeTest, RandomSmall) {
  for (size_t target : {0, 1, 5, 63, 64, 130}) RandomOps(target, 7 + target);
}

TEST(ScoreTreeTest, RandomMedium) { RandomOps(5000, 11); }

TEST(ScoreTreeTest, RandomLarge) { RandomOps(100000, 13); }

TEST(ScoreTreeTest, LexCountsOnEqualScores) {
  TreeFixture f;
  std::mt19937 rng(3);
  for (int i = 0; i < 20000; ++i) {
    std::string m = std::to_string(rng() % 100000);
    if (f.model.count({1.0, m}) == 0) f.Insert(1.0, m);
  }
  f.ExpectMatches();
  std::set<std::string> members;
  for (const auto& e : f.model) members.insert(e.second);
  for (int probe = 0; probe < 500; ++probe) {
    std::string m = std::to_string(rng() % 100000);
    EXPECT_EQ(f.tree.CountMemberBelow(m, false),
              static_cast<size_t>(std::distance(members.begin(), members.lower_bound(m))));
    EXPECT_EQ(f.tree.CountMemberBelow(m, true),
              static_cast<size_t>(std::distance(members.begin(), members.upper_bound(m))));
  }
}

TEST(ScoreTreeTest, EraseEverythingByRanges) {
  TreeFixture f;
  for (int i = 0; i < 20000; ++i) f.Insert(i % 97, std::to_string(i));
  f.ExpectMatches();
  size_t removed =
      f.tree.EraseRanks(100, 19900, [](const ScoredMember* m) { ScoredMember::Free(m); });
  EXPECT_EQ(removed, 19800u);
  EXPECT_TRUE(f.tree.Validate());
  EXPECT_EQ(f.tree.Size(), 200u);
  f.tree.EraseRanks(0, 1000, [](const ScoredMember* m) { ScoredMember::Free(m); });
  EXPECT_TRUE(f.tree.Validate());
  EXPECT_EQ(f.tree.Size(), 0u);
  EXPECT_EQ(f.tree.NodeMallocUsed(), ObjGoodSize(512));
  f.model.clear();
}

// Prints the node bytes per element for 100K elements loaded in random and ascending order,
// then after erasing a random half (the figures behind the node sizes in score_tree.h).
TEST(ScoreTreeTest, NodeBytesPerElement) {
  for (bool ascending : {false, true}) {
    TreeFixture f;
    std::mt19937_64 rng(9);
    for (int i = 0; i < 100000; ++i) {
      double score = ascending ? i : static_cast<double>(rng() % 1000000000);
      std::string member = std::to_string(i);
      if (f.model.emplace(score, member).second) f.tree.Insert(ScoredMember::Make(member, score));
    }
    double loaded = static_cast<double>(f.tree.NodeMallocUsed()) / f.tree.Size();
    std::vector<Element> all(f.model.begin(), f.model.end());
    for (const Element& e : all) {
      if (rng() % 2) f.Erase(e.first, e.second);
    }
    double half = static_cast<double>(f.tree.NodeMallocUsed()) / f.tree.Size();
    printf("%s load: %.1f node bytes per element; %.1f after erasing half at random\n",
           ascending ? "ascending" : "random", loaded, half);
    EXPECT_LE(loaded, ascending ? 10.0 : 12.0);
    EXPECT_LE(half, 20.0);
    ASSERT_NO_FATAL_FAILURE(f.ExpectMatches());
  }
}

}  // namespace
}  // namespace damselfly::core
