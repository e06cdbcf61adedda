#include "src/core/sorted_set.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "src/core/obj_malloc.h"

namespace damselfly::core {
namespace {

using Element = std::pair<double, std::string>;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The reference: ordered elements plus member -> score.
struct Model {
  std::set<Element> ordered;
  std::map<std::string, double> scores;

  bool Add(const std::string& member, double score) {
    auto it = scores.find(member);
    if (it != scores.end()) {
      if (it->second == score) return false;
      ordered.erase({it->second, member});
      it->second = score;
      ordered.emplace(score, member);
      return false;
    }
    scores.emplace(member, score);
    ordered.emplace(score, member);
    return true;
  }
  bool Remove(const std::string& member) {
    auto it = scores.find(member);
    if (it == scores.end()) return false;
    ordered.erase({it->second, member});
    scores.erase(it);
    return true;
  }
  std::vector<Element> Vector() const { return {ordered.begin(), ordered.end()}; }
};

std::vector<Element> Contents(const SortedSet& set) {
  std::vector<Element> out;
  set.Walk(0, set.Size(), false, [&out](std::string_view m, double s) {
    out.emplace_back(s, std::string(m));
    return true;
  });
  return out;
}

void ExpectSame(const SortedSet& set, const Model& model) {
  ASSERT_TRUE(set.Validate());
  ASSERT_EQ(set.Size(), model.ordered.size());
  ASSERT_EQ(Contents(set), model.Vector());
}

// Counts with the model: elements of `all` below a score bound, as the API defines them.
size_t ModelScoreBelow(const std::vector<Element>& all, ScoreBound min) {
  size_t n = 0;
  for (const Element& e : all) n += min.exclusive ? e.first <= min.value : e.first < min.value;
  return n;
}

size_t ModelScoreAtMost(const std::vector<Element>& all, ScoreBound max) {
  size_t n = 0;
  for (const Element& e : all) n += max.exclusive ? e.first < max.value : e.first <= max.value;
  return n;
}

TEST(SortedSetTest, Basics) {
  SortedSet set;
  EXPECT_EQ(set.Size(), 0u);
  EXPECT_FALSE(set.Score("a").has_value());
  EXPECT_FALSE(set.Rank("a").has_value());
  EXPECT_FALSE(set.Remove("a"));
  EXPECT_EQ(set.EraseRanks(0, 5), 0u);
  EXPECT_TRUE(set.Add("b", 2));
  EXPECT_TRUE(set.Add("a", 2));
  EXPECT_TRUE(set.Add("c", 1));
  EXPECT_FALSE(set.Add("c", 3));  // update: not new
  EXPECT_EQ(set.Score("c"), 3);
  EXPECT_EQ(set.Rank("a"), 0u);
  EXPECT_EQ(set.Rank("b"), 1u);
  EXPECT_EQ(set.Rank("c"), 2u);
  EXPECT_EQ(set.At(2).first, "c");
  EXPECT_EQ(set.At(2).second, 3);
  // -0.0 equals 0.0: no update, the first score stays.
  EXPECT_TRUE(set.Add("z", 0.0));
  EXPECT_FALSE(set.Add("z", -0.0));
  EXPECT_FALSE(std::signbit(*set.Score("z")));
  EXPECT_TRUE(set.Add("y", -0.0));
  EXPECT_TRUE(std::signbit(*set.Score("y")));
  EXPECT_EQ(set.Rank("y"), 0u);  // ("y", -0) before ("z", 0): equal scores, member order
  EXPECT_EQ(set.CountScoreBelow({0.0, false}), 0u);
  EXPECT_EQ(set.CountScoreAtMost({-0.0, false}), 2u);
  EXPECT_TRUE(set.Remove("y"));
  EXPECT_FALSE(set.Remove("y"));
  EXPECT_TRUE(set.Validate());
  EXPECT_EQ(set.Size(), 4u);
}

TEST(SortedSetTest, InfinitiesAndBounds) {
  SortedSet set;
  set.Add("neg", -kInf);
  set.Add("one", 1);
  set.Add("two", 2);
  set.Add("pos", kInf);
  EXPECT_EQ(set.CountScoreBelow({-kInf, false}), 0u);
  EXPECT_EQ(set.CountScoreBelow({-kInf, true}), 1u);
  EXPECT_EQ(set.CountScoreAtMost({kInf, false}), 4u);
  EXPECT_EQ(set.CountScoreAtMost({kInf, true}), 3u);
  EXPECT_EQ(set.CountScoreBelow({1, false}), 1u);
  EXPECT_EQ(set.CountScoreBelow({1, true}), 2u);
  EXPECT_EQ(set.CountScoreAtMost({2, false}), 3u);
  EXPECT_EQ(set.CountScoreAtMost({2, true}), 2u);
  // (1 (2 is empty: the end is not above the start.
  EXPECT_LE(set.CountScoreAtMost({2, true}), set.CountScoreBelow({1, true}));
}

TEST(SortedSetTest, LexBoundsOnEqualScores) {
  SortedSet set;
  std::vector<std::string> members = {
      "", std::string(1, '\0'), std::string("a\0", 2), "a", "b", "ba", "\xff", "c"};
  for (const auto& m : members) set.Add(m, 0);
  std::set<std::string> sorted(members.begin(), members.end());
  ASSERT_EQ(set.Size(), sorted.size());
  EXPECT_EQ(set.CountLexBelow({LexBound::kMin, ""}), 0u);
  EXPECT_EQ(set.CountLexBelow({LexBound::kMax, ""}), set.Size());
  EXPECT_EQ(set.CountLexAtMost({LexBound::kMax, ""}), set.Size());
  EXPECT_EQ(set.CountLexAtMost({LexBound::kMin, ""}), 0u);
  auto below = [&](const std::string& v) {
    return static_cast<size_t>(std::distance(sorted.begin(), sorted.lower_bound(v)));
  };
  auto at_most = [&](const std::string& v) {
    return static_cast<size_t>(std::distance(sorted.begin(), sorted.upper_bound(v)));
  };
  for (const std::string& v :
       {std::string(), std::string(1, '\0'), std::string("a"), std::string("a\0", 2),
        std::string("bb"), std::string("\xff"), std::string("\xff\xff")}) {
    EXPECT_EQ(set.CountLexBelow({LexBound::kInclusive, v}), below(v));     // [v as min
    EXPECT_EQ(set.CountLexBelow({LexBound::kExclusive, v}), at_most(v));   // (v as min
    EXPECT_EQ(set.CountLexAtMost({LexBound::kInclusive, v}), at_most(v));  // [v as max
    EXPECT_EQ(set.CountLexAtMost({LexBound::kExclusive, v}), below(v));    // (v as max
  }
}

TEST(SortedSetTest, WalkBothWaysWithEarlyStop) {
  SortedSet set;
  Model model;
  for (int i = 0; i < 1000; ++i) {
    std::string m = "m" + std::to_string(i);
    set.Add(m, i % 37);
    model.Add(m, i % 37);
  }
  std::vector<Element> all = model.Vector();
  for (auto [start, end] : std::vector<std::pair<size_t, size_t>>{
           {0, 1000}, {0, 1}, {999, 1000}, {10, 700}, {500, 5000}, {7, 7}, {8, 3}}) {
    for (bool reverse : {false, true}) {
      std::vector<Element> got;
      set.Walk(start, end, reverse, [&](std::string_view m, double s) {
        got.emplace_back(s, std::string(m));
        return true;
      });
      std::vector<Element> expect;
      for (size_t r = start; r < std::min<size_t>(end, all.size()); ++r) expect.push_back(all[r]);
      if (reverse) std::reverse(expect.begin(), expect.end());
      EXPECT_EQ(got, expect) << start << ".." << end << " reverse " << reverse;
      // Early stop after 3 elements.
      size_t visits = 0;
      set.Walk(start, end, reverse, [&](std::string_view, double) { return ++visits < 3; });
      EXPECT_EQ(visits, std::min<size_t>(3, expect.size()));
    }
  }
}

TEST(SortedSetTest, ScanVisitsEveryMember) {
  SortedSet set;
  for (int i = 0; i < 5000; ++i) set.Add("k" + std::to_string(i), i);
  std::unordered_set<std::string> seen;
  uint64_t cursor = 0;
  do {
    cursor = set.Scan(cursor, 10, [&](std::string_view m, double s) {
      EXPECT_EQ(set.Score(m), s);
      seen.emplace(m);
    });
  } while (cursor != 0);
  EXPECT_EQ(seen.size(), 5000u);
}

TEST(SortedSetTest, RandomReachesMembers) {
  SortedSet set;
  for (int i = 0; i < 50; ++i) set.Add("r" + std::to_string(i), i);
  std::mt19937_64 rng(5);
  std::set<std::string> seen;
  for (int i = 0; i < 5000; ++i) {
    auto [member, score] = set.Random(rng());
    EXPECT_EQ(set.Score(member), score);
    seen.emplace(member);
  }
  EXPECT_EQ(seen.size(), 50u);
}

TEST(SortedSetTest, FreeSomeInSteps) {
  const size_t before = ThreadObjHeapUsedBytes();
  for (size_t stop_at : {0u, 700u}) {  // all in steps, or the rest by the destructor
    SortedSet set;
    for (int i = 0; i < 3000; ++i) set.Add("m" + std::to_string(i), i % 97);
    size_t steps = 0;
    while (set.FreeSome(256)) {
      if (++steps * 256 >= 3000 - stop_at) break;
    }
    EXPECT_EQ(steps, stop_at == 0 ? 11u : 9u);
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), before);
}

TEST(SortedSetTest, MoveAndMemoryAccounting) {
  size_t before = ThreadObjHeapUsedBytes();
  {
    SortedSet set;
    for (int i = 0; i < 3000; ++i) set.Add(std::string(i % 200, 'x') + std::to_string(i), i);
    for (int i = 0; i < 3000; i += 3) set.Add(std::string(i % 200, 'x') + std::to_string(i), -i);
    EXPECT_EQ(ThreadObjHeapUsedBytes() - before, set.MallocUsed());
    SortedSet moved(std::move(set));
    EXPECT_EQ(moved.Size(), 3000u);
    EXPECT_TRUE(moved.Validate());
    SortedSet other;
    other.Add("x", 1);
    other = std::move(moved);
    EXPECT_EQ(other.Size(), 3000u);
    EXPECT_EQ(ThreadObjHeapUsedBytes() - before, other.MallocUsed());
    other.EraseRanks(0, 2990);
    EXPECT_EQ(ThreadObjHeapUsedBytes() - before, other.MallocUsed());
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), before);
}

// Random operations against the model; checks every query kind along the way.
void RandomOps(size_t target, uint32_t seed) {
  std::mt19937_64 rng(seed);
  SortedSet set;
  Model model;
  size_t members_space = target * 2 + 10;
  auto random_member = [&]() {
    uint64_t k = rng() % members_space;
    std::string m = "m" + std::to_string(k);
    if (k % 7 == 0) m.push_back('\0');  // embedded NULs and high bytes
    if (k % 11 == 0) m.insert(0, "\xfe");
    return m;
  };
  auto random_score = [&]() -> double {
    switch (rng() % 10) {
      case 0:
        return -kInf;
      case 1:
        return kInf;
      case 2:
        return rng() % 2 ? 0.0 : -0.0;
      case 3:
        return std::ldexp(static_cast<double>(rng() % 1000), -30);
      default:
        return static_cast<double>(static_cast<int>(rng() % 100) - 50) / 2;
    }
  };
  auto random_bound = [&]() { return ScoreBound{random_score(), rng() % 2 == 0}; };
  // Checks everything against a snapshot of the model.
  auto check = [&]() {
    ASSERT_NO_FATAL_FAILURE(ExpectSame(set, model));
    std::vector<Element> all = model.Vector();
    for (int probe = 0; probe < 30; ++probe) {
      ScoreBound min = random_bound(), max = random_bound();
      ASSERT_EQ(set.CountScoreBelow(min), ModelScoreBelow(all, min))
          << min.value << " " << min.exclusive;
      ASSERT_EQ(set.CountScoreAtMost(max), ModelScoreAtMost(all, max))
          << max.value << " " << max.exclusive;
    }
    if (all.empty()) return;
    for (int probe = 0; probe < 200; ++probe) {
      size_t r = rng() % all.size();
      ASSERT_EQ(set.Rank(all[r].second), r);
      auto [m, s] = set.At(r);
      ASSERT_EQ(m, all[r].second);
      ASSERT_EQ(s, all[r].first);
    }
    size_t start = rng() % all.size();
    size_t end = start + rng() % 100;
    for (bool reverse : {false, true}) {
      std::vector<Element> got;
      set.Walk(start, end, reverse, [&](std::string_view m, double s) {
        got.emplace_back(s, std::string(m));
        return true;
      });
      std::vector<Element> expect(all.begin() + start, all.begin() + std::min(end, all.size()));
      if (reverse) std::reverse(expect.begin(), expect.end());
      ASSERT_EQ(got, expect);
    }
  };
  // Fill to ~90% of the target, then mix every operation around it.
  while (model.scores.size() < target * 9 / 10) {
    std::string m = random_member();
    double s = random_score();
    ASSERT_EQ(set.Add(m, s), model.Add(m, s)) << m;
  }
  ASSERT_NO_FATAL_FAILURE(check());
  size_t steps = target + 3000;
  for (size_t step = 0; step < steps; ++step) {
    unsigned op = rng() % 1000;
    bool grow = model.scores.size() < target;
    if (op < (grow ? 600u : 400u)) {
      std::string m = random_member();
      double s = random_score();
      ASSERT_EQ(set.Add(m, s), model.Add(m, s)) << m;
    } else if (op < 800) {
      std::string m = random_member();
      ASSERT_EQ(set.Remove(m), model.Remove(m));
    } else if (op < 995) {
      std::string m = random_member();
      auto it = model.scores.find(m);
      std::optional<double> score = set.Score(m);
      if (it == model.scores.end()) {
        ASSERT_FALSE(score.has_value());
        ASSERT_FALSE(set.Rank(m).has_value());
      } else {
        ASSERT_EQ(score, it->second);
        ASSERT_EQ(std::signbit(*score), std::signbit(it->second));
      }
    } else {
      // Mostly near either end (ZPOPMIN/ZPOPMAX-like: the model's iterators walk from
      // there), sometimes anywhere.
      size_t n = model.ordered.size();
      size_t start = rng() % (n + 1);
      if (rng() % 8 != 0)
        start = rng() % 2 ? std::min<size_t>(n, rng() % 100) : n - std::min<size_t>(n, rng() % 100);
      size_t len = rng() % 4 == 0 ? rng() % 300 : rng() % 5;
      auto it = start <= n / 2 ? std::next(model.ordered.begin(), start)
                               : std::prev(model.ordered.end(), n - start);
      std::vector<std::string> removed;
      for (size_t i = 0; i < len && it != model.ordered.end(); ++i, ++it) {
        removed.push_back(it->second);
      }
      ASSERT_EQ(set.EraseRanks(start, start + len), removed.size());
      for (const std::string& m : removed) model.Remove(m);
    }
    if (step % (steps / 8 + 1) == 0) {
      ASSERT_NO_FATAL_FAILURE(check());
    }
  }
  ASSERT_NO_FATAL_FAILURE(check());
  if (target >= 1000) {
    EXPECT_GE(model.scores.size(), target * 8 / 10);
  }
}

TEST(SortedSetTest, RandomOpsSmall) {
  for (size_t target : {0, 1, 2, 10, 64, 200}) RandomOps(target, 100 + target);
}

TEST(SortedSetTest, RandomOpsMedium) { RandomOps(3000, 17); }

TEST(SortedSetTest, RandomOpsLarge) { RandomOps(100000, 19); }

// Memory and speed for one set of 100K members of ~10 bytes ("m:1234567x", as loaded into
// redis-server with ZADD for the comparison in docs/benchmarks.md) with random scores.
TEST(SortedSetTest, MemoryPerMember) {
  constexpr int kMembers = 100000;
  std::mt19937_64 rng(1);
  std::vector<std::string> members;
  std::unordered_set<std::string> unique;
  while (members.size() < kMembers) {
    char buf[16];
    snprintf(buf, sizeof(buf), "m:%07dx", static_cast<int>(rng() % 10000000));
    if (unique.insert(buf).second) members.push_back(buf);
  }
  std::vector<double> scores;
  for (int i = 0; i < kMembers; ++i) scores.push_back(static_cast<double>(rng() % 1000000) / 1000);
  size_t before = ThreadObjHeapUsedBytes();
  auto t0 = std::chrono::steady_clock::now();
  SortedSet set;
  for (int i = 0; i < kMembers; ++i) set.Add(members[i], scores[i]);
  auto t1 = std::chrono::steady_clock::now();
  size_t used = ThreadObjHeapUsedBytes() - before;
  EXPECT_EQ(used, set.MallocUsed());
  double found = 0;
  for (int i = 0; i < kMembers; ++i) found += *set.Score(members[i]);
  auto t2 = std::chrono::steady_clock::now();
  size_t rank_sum = 0;
  for (int i = 0; i < kMembers; ++i) rank_sum += *set.Rank(members[i]);
  auto t3 = std::chrono::steady_clock::now();
  for (int i = 0; i < kMembers; ++i) set.Add(members[i], scores[kMembers - 1 - i] + 0.5);
  auto t4 = std::chrono::steady_clock::now();
  EXPECT_EQ(set.Size(), size_t{kMembers});
  auto ns = [](auto a, auto b) {
    return std::chrono::duration<double, std::nano>(b - a).count() / kMembers;
  };
  EXPECT_EQ(ThreadObjHeapUsedBytes() - before, set.MallocUsed());
  EXPECT_GT(found, 0);
  EXPECT_EQ(rank_sum, size_t{kMembers} * (kMembers - 1) / 2);
  // redis-server 7.0 took 112.5 bytes per member for the same load (used_memory delta,
  // ZADD z <score> m:NNNNNNNx x 100K; MEMORY USAGE says 103.8).
  constexpr double kRedisBytesPerMember = 112.5;
  double per_member = static_cast<double>(used) / kMembers;
  printf("sorted set of %d members: %.1f bytes/member, %.2fx redis-server's %.1f\n", kMembers,
         per_member, per_member / kRedisBytesPerMember, kRedisBytesPerMember);
  printf("per member: insert %.0f ns, score lookup %.0f ns, rank %.0f ns, score update %.0f ns\n",
         ns(t0, t1), ns(t1, t2), ns(t2, t3), ns(t3, t4));
  EXPECT_LE(per_member, 0.6 * kRedisBytesPerMember);
}

}  // namespace
}  // namespace damselfly::core
