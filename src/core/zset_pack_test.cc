// ZSetPack against a std::set<(score, member)> model under random operations, its
// listpack form, and the score texts Redis writes.
#include "src/core/zset_pack.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/core/obj_malloc.h"

namespace damselfly::core {
namespace {

std::string Text(double score) {
  char buf[kMaxScoreChars];
  return std::string(FormatScore(score, buf));
}

TEST(ZSetPackTest, ScoreTextIsRedisForm) {
  EXPECT_EQ(Text(1), "1");
  EXPECT_EQ(Text(-3), "-3");
  EXPECT_EQ(Text(1.5), "1.5");
  EXPECT_EQ(Text(1e-5), "1.0000000000000001e-05");
  EXPECT_EQ(Text(0.1), "0.10000000000000001");
  EXPECT_EQ(Text(1e20), "1e+20");
  EXPECT_EQ(Text(-0.0), "0");
  EXPECT_EQ(Text(123456789012345678.0), "123456789012345680");
  EXPECT_EQ(Text(-4611686018427387904.0), "-4611686018427387904");
  EXPECT_EQ(Text(9223372036854775807.0), "9.2233720368547758e+18");
  EXPECT_EQ(Text(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(Text(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(Text(4503599627370496.0), "4503599627370496");
}

// The listpack made for RDB and DUMP holds what Redis's does: integer members and
// integral scores as listpack integers, other scores as d2string's text.
TEST(ZSetPackTest, IntegerScoresAndMembersAreListpackIntegers) {
  PairPack pack;
  ZSetPack z(&pack);
  EXPECT_TRUE(z.Set("12", 7));
  EXPECT_TRUE(z.Set("a", 1.5));
  std::string bytes;
  z.AppendListpack(&bytes);
  ASSERT_TRUE(Listpack::Validate(bytes));
  Listpack lp = Listpack::FromBytes(bytes);
  // a 1.5 | 12 7 : integers stored as such, the texts come back.
  EXPECT_TRUE(lp.Get(lp.Seek(2)).is_int);
  EXPECT_TRUE(lp.Get(lp.Seek(3)).is_int);
  EXPECT_FALSE(lp.Get(lp.Seek(1)).is_int);
  EXPECT_EQ(lp.Get(lp.Seek(1)).ToString(), "1.5");
  EXPECT_EQ(z.Score("12"), 7);
  EXPECT_EQ(z.Rank("12"), 1u);
  char buf[kMaxScoreChars];
  EXPECT_EQ(z.At(1, buf).first, "12");
  EXPECT_FALSE(z.Set("12", 7));   // unchanged
  EXPECT_FALSE(z.Set("12", -1));  // moved first
  EXPECT_EQ(z.Rank("12"), 0u);
}

TEST(ZSetPackTest, EqualScoresOrderByMemberBytes) {
  PairPack pack;
  ZSetPack z(&pack);
  for (const std::string& m :
       std::vector<std::string>{"b", "a", std::string("a\0", 2), "\xff", "ab", ""}) {
    z.Set(m, 0);
  }
  std::vector<std::string> order;
  z.Walk(0, z.Size(), false, [&](std::string_view m, double) {
    order.emplace_back(m);
    return true;
  });
  EXPECT_EQ(order, (std::vector<std::string>{"", "a", std::string("a\0", 2), "ab", "b", "\xff"}));
}

TEST(ZSetPackTest, RandomOperationsMatchModel) {
  std::mt19937 rng(7);
  PairPack pack;
  ZSetPack z(&pack);
  std::map<std::string, double> scores;
  std::set<std::pair<double, std::string>> order;
  // Every kind of code: small and large differences, integers past 2^53 and 2^28, negative
  // and fractional scores, infinities, -0.
  const double kScores[] = {-std::numeric_limits<double>::infinity(),
                            -2.5,
                            -1,
                            0,
                            1,
                            1.5,
                            2,
                            300,
                            70000,
                            1e7,
                            268435456,
                            1732752000123,
                            9007199254740992.0,
                            9007199254740994.0,
                            -0.0,
                            std::numeric_limits<double>::infinity()};
  constexpr size_t kScoreCount = sizeof(kScores) / sizeof(kScores[0]);
  auto member = [&] { return std::to_string(rng() % 40) + (rng() % 2 ? "x" : ""); };
  for (int step = 0; step < 20000; ++step) {
    std::string m = member();
    switch (rng() % 6) {
      case 0:
      case 1:
      case 2: {
        double s = kScores[rng() % kScoreCount];
        if (s == 0) s = 0;  // the model keeps -0 as 0 too
        auto it = scores.find(m);
        bool is_new = it == scores.end();
        if (!is_new && it->second == s) {
          ASSERT_FALSE(z.Set(m, s));
          break;
        }
        if (!is_new) order.erase({it->second, m});
        scores[m] = s;
        order.insert({s, m});
        ASSERT_EQ(z.Set(m, s), is_new);
        break;
      }
      case 3: {
        auto it = scores.find(m);
        bool present = it != scores.end();
        if (present) {
          order.erase({it->second, m});
          scores.erase(it);
        }
        ASSERT_EQ(z.Remove(m), present);
        break;
      }
      case 4: {
        // Ranges by score and lex against the model's counts.
        ScoreBound lo{kScores[rng() % kScoreCount], bool(rng() % 2)};
        ScoreBound hi{kScores[rng() % kScoreCount], bool(rng() % 2)};
        size_t below = 0, at_most = 0;
        for (const auto& [s, name] : order) {
          below += lo.exclusive ? s <= lo.value : s < lo.value;
          at_most += hi.exclusive ? s < hi.value : s <= hi.value;
        }
        ASSERT_EQ(z.CountScoreBelow(lo), below);
        ASSERT_EQ(z.CountScoreAtMost(hi), at_most);
        break;
      }
      case 5: {
        if (order.empty()) break;
        size_t start = rng() % order.size(), end = start + rng() % (order.size() - start + 1);
        if (rng() % 4 == 0) {
          auto first = std::next(order.begin(), start), last = std::next(order.begin(), end);
          for (auto it = first; it != last; ++it) scores.erase(it->second);
          order.erase(first, last);
          ASSERT_EQ(z.EraseRanks(start, end), end - start);
        }
        break;
      }
    }
    ASSERT_EQ(z.Size(), order.size());
    if (step % 97 == 0) {
      size_t rank = 0;
      for (const auto& [s, name] : order) {
        ASSERT_EQ(z.Rank(name), rank);
        ASSERT_EQ(z.Score(name), s);
        ++rank;
      }
      std::vector<std::pair<double, std::string>> walked;
      z.Walk(0, z.Size(), true, [&](std::string_view m, double s) {
        walked.emplace_back(s, std::string(m));
        return true;
      });
      ASSERT_TRUE(std::equal(walked.begin(), walked.end(), order.rbegin(), order.rend()));
      // Through Redis's listpack and back.
      std::string bytes;
      z.AppendListpack(&bytes);
      ASSERT_TRUE(Listpack::Validate(bytes));
      PairPack back;
      ASSERT_TRUE(ZSetPack::FromListpack(Listpack::FromBytes(bytes), &back));
      ASSERT_EQ(std::string_view(reinterpret_cast<const char*>(back.data()), back.ByteSize()),
                std::string_view(reinterpret_cast<const char*>(pack.data()), pack.ByteSize()));
      ASSERT_TRUE(ZSetPack(&back).Valid());
    }
  }
}

// Close integer scores cost a byte or two: 100 members "m<j>" with scores below 10^6
// (the memory benchmark's sorted sets) fit a 640-byte block, where Redis's listpack takes
// about 1000 bytes; Unix times in milliseconds a minute apart cost 2-3 bytes each.
TEST(ZSetPackTest, CloseIntegerScoresAreSmall) {
  std::mt19937 rng(3);
  const size_t baseline = ThreadObjHeapUsedBytes();
  {
    PairPack pack;
    ZSetPack z(&pack);
    for (int j = 0; j < 100; ++j) z.InsertNew(absl::StrCat("m", j), double(rng() % 1000000));
    EXPECT_LE(pack.ByteSize(), 640u);
    std::string bytes;
    z.AppendListpack(&bytes);
    EXPECT_GE(bytes.size(), 900u);
    PairPack times;
    ZSetPack t(&times);
    for (int j = 0; j < 100; ++j) t.InsertNew(absl::StrCat("job:", j), 1732752000000.0 + 60000 * j);
    EXPECT_LE(times.ByteSize(), 4u + 100 * (1 + 6) + 100 * 3);
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline);
}

TEST(ZSetPackTest, MalformedListpacksAreRefused) {
  auto from = [](const std::vector<std::string>& elements) {
    Listpack lp;
    for (const std::string& e : elements) lp.Append(e);
    PairPack pack;
    return ZSetPack::FromListpack(lp, &pack);
  };
  EXPECT_TRUE(from({"a", "1", "b", "1.5", "c", "inf"}));
  EXPECT_FALSE(from({"a", "1", "b"}));                // odd count
  EXPECT_FALSE(from({"a", "x"}));                     // no number
  EXPECT_FALSE(from({"a", "nan"}));                   // NaN
  EXPECT_FALSE(from({"a", "2", "b", "1"}));           // out of order
  EXPECT_FALSE(from({"b", "1", "a", "1"}));           // equal scores out of member order
  EXPECT_FALSE(from({"a", "1", "a", "1"}));           // a repeated member
}

TEST(ZSetPackTest, LexCounts) {
  PairPack pack;
  ZSetPack z(&pack);
  for (const char* m : {"a", "b", "c", "d"}) z.Set(m, 0);
  EXPECT_EQ(z.CountLexBelow({LexBound::kMin, ""}), 0u);
  EXPECT_EQ(z.CountLexBelow({LexBound::kInclusive, "b"}), 1u);
  EXPECT_EQ(z.CountLexBelow({LexBound::kExclusive, "b"}), 2u);
  EXPECT_EQ(z.CountLexAtMost({LexBound::kInclusive, "c"}), 3u);
  EXPECT_EQ(z.CountLexAtMost({LexBound::kExclusive, "c"}), 2u);
  EXPECT_EQ(z.CountLexAtMost({LexBound::kMax, ""}), 4u);
  EXPECT_EQ(z.CountLexBelow({LexBound::kMax, ""}), 4u);
}

}  // namespace
}  // namespace damselfly::core
