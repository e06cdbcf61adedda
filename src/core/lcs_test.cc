#include "src/core/lcs.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace damselfly::core {
namespace {

LcsResult Compute(std::string_view a, std::string_view b, uint64_t min_match_len = 0) {
  std::optional<LcsResult> result = ComputeLcs(
      a, b, {.want_subsequence = true, .want_matches = true, .min_match_len = min_match_len});
  EXPECT_TRUE(result.has_value());
  return result.value_or(LcsResult{});
}

bool IsSubsequence(std::string_view sub, std::string_view of) {
  size_t at = 0;
  for (char c : of) {
    if (at < sub.size() && sub[at] == c) ++at;
  }
  return at == sub.size();
}

// The longest common subsequence's length by trying every subsequence of a.
uint32_t BruteForceLength(std::string_view a, std::string_view b) {
  uint32_t best = 0;
  for (uint32_t mask = 0; mask < (1u << a.size()); ++mask) {
    std::string sub;
    for (size_t i = 0; i < a.size(); ++i) {
      if (mask & (1u << i)) sub += a[i];
    }
    if (sub.size() > best && IsSubsequence(sub, b)) best = uint32_t(sub.size());
  }
  return best;
}

// What Redis replies for its documentation's example (LCS key1 key2 IDX WITHMATCHLEN).
TEST(LcsTest, RedisExample) {
  LcsResult r = Compute("ohmytext", "mynewtext");
  EXPECT_EQ(r.length, 6u);
  EXPECT_EQ(r.subsequence, "mytext");
  ASSERT_EQ(r.matches.size(), 2u);
  EXPECT_EQ(r.matches[0], (LcsMatch{4, 7, 5, 8}));
  EXPECT_EQ(r.matches[1], (LcsMatch{2, 3, 0, 1}));
  LcsResult long_runs = Compute("ohmytext", "mynewtext", 4);
  ASSERT_EQ(long_runs.matches.size(), 1u);
  EXPECT_EQ(long_runs.matches[0].length(), 4u);
}

TEST(LcsTest, EmptyAndDisjoint) {
  EXPECT_EQ(Compute("", "").length, 0u);
  EXPECT_EQ(Compute("abc", "").subsequence, "");
  LcsResult r = Compute("abc", "xyz");
  EXPECT_EQ(r.length, 0u);
  EXPECT_TRUE(r.matches.empty());
}

TEST(LcsTest, LengthOnlySkipsTheWalk) {
  std::optional<LcsResult> r = ComputeLcs("ohmytext", "mynewtext", {.want_subsequence = false});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->length, 6u);
  EXPECT_TRUE(r->subsequence.empty());
  EXPECT_TRUE(r->matches.empty());
}

TEST(LcsTest, TableBytes) {
  EXPECT_EQ(LcsTableBytes(0, 0), 4u);
  EXPECT_EQ(LcsTableBytes(99999, 99999), uint64_t{100000} * 100000 * 4);
  EXPECT_EQ(LcsTableBytes(uint64_t{1} << 32, 1), std::nullopt);
}

// Random strings over small alphabets (many matches) and over all 256 byte values: the
// length is the brute-force one, the subsequence is common to both, and the runs are
// equal bytes, disjoint, from the end backwards, and together spell the subsequence.
TEST(LcsTest, AgainstBruteForce) {
  std::mt19937 rng(11);
  for (int round = 0; round < 3000; ++round) {
    const int alphabet = round % 3 == 0 ? 256 : 2 + round % 4;
    auto random_string = [&] {
      std::string s(rng() % 11, '\0');
      for (char& c : s) c = char(rng() % alphabet);
      return s;
    };
    const std::string a = random_string(), b = random_string();
    LcsResult r = Compute(a, b);
    ASSERT_EQ(r.length, BruteForceLength(a, b)) << round;
    ASSERT_EQ(r.subsequence.size(), r.length);
    ASSERT_TRUE(IsSubsequence(r.subsequence, a) && IsSubsequence(r.subsequence, b));
    std::string spelled;
    uint32_t a_limit = uint32_t(a.size()), b_limit = uint32_t(b.size());
    for (const LcsMatch& m : r.matches) {
      ASSERT_LE(m.a_start, m.a_end);
      ASSERT_EQ(m.a_end - m.a_start, m.b_end - m.b_start);
      ASSERT_LT(m.a_end, a_limit);
      ASSERT_LT(m.b_end, b_limit);
      ASSERT_EQ(a.substr(m.a_start, m.length()), b.substr(m.b_start, m.length()));
      spelled.insert(0, a.substr(m.a_start, m.length()));
      a_limit = m.a_start;
      b_limit = m.b_start;
    }
    ASSERT_EQ(spelled, r.subsequence);
    // MINMATCHLEN keeps the same runs minus the short ones.
    LcsResult long_runs = Compute(a, b, 2);
    std::vector<LcsMatch> expected;
    for (const LcsMatch& m : r.matches) {
      if (m.length() >= 2) expected.push_back(m);
    }
    ASSERT_EQ(long_runs.matches, expected);
  }
}

}  // namespace
}  // namespace damselfly::core
