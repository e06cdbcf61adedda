#include "helio/base/strings.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace helio {
namespace {

bool ReferenceEqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiToLower(a[i]) != AsciiToLower(b[i])) return false;
  }
  return true;
}

TEST(EqualsIgnoreCaseTest, EveryPairOfBytes) {
  for (int x = 0; x < 256; ++x) {
    for (int y = 0; y < 256; ++y) {
      const std::string a(1, char(x)), b(1, char(y));
      ASSERT_EQ(EqualsIgnoreCase(a, b), ReferenceEqualsIgnoreCase(a, b)) << x << " " << y;
      // The same pair at every position of longer strings (the word paths).
      for (size_t len : {4u, 7u, 8u, 9u, 16u, 23u}) {
        for (size_t at = 0; at < len; at += 3) {
          std::string la(len, 'q'), lb(len, 'Q');
          la[at] = char(x);
          lb[at] = char(y);
          ASSERT_EQ(EqualsIgnoreCase(la, lb), ReferenceEqualsIgnoreCase(la, lb))
              << x << " " << y << " len " << len << " at " << at;
        }
      }
    }
  }
}

TEST(EqualsIgnoreCaseTest, RandomStringsAgreeWithTheReference) {
  std::mt19937 rng(7);
  // Letters and their neighbours in ASCII ('@', '[', '`', '{'), digits, high bytes.
  const std::string alphabet = "aAzZbBmM@[`{09_-|\x80\xc1\xe1\xff";
  for (int round = 0; round < 200000; ++round) {
    const size_t len = rng() % 41;
    std::string a(len, ' ');
    for (char& c : a) c = alphabet[rng() % alphabet.size()];
    std::string b = a;
    for (char& c : b) {
      if (rng() % 2) c = AsciiToUpper(c);
      else c = AsciiToLower(c);
    }
    if (len > 0 && rng() % 3 == 0) b[rng() % len] = alphabet[rng() % alphabet.size()];
    ASSERT_EQ(EqualsIgnoreCase(a, b), ReferenceEqualsIgnoreCase(a, b)) << a << " / " << b;
  }
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("get", "gets"));
  EXPECT_TRUE(EqualsIgnoreCase("zrangebyscore", "ZRANGEBYSCORE"));
  EXPECT_FALSE(EqualsIgnoreCase("zrangebyscorE", "ZRANGEBYSCORf"));
}

}  // namespace
}  // namespace helio
