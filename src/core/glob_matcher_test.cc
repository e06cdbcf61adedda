#include "src/core/glob_matcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace damselfly::core {
namespace {

TEST(GlobMatchTest, Basics) {
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("*", "anything"));
  EXPECT_TRUE(GlobMatch("h?llo", "hello"));
  EXPECT_FALSE(GlobMatch("h?llo", "hllo"));
  EXPECT_TRUE(GlobMatch("h*llo", "hllo"));
  EXPECT_TRUE(GlobMatch("h*llo", "heeeello"));
  EXPECT_TRUE(GlobMatch("user:*:name", "user:42:name"));
  EXPECT_FALSE(GlobMatch("user:*:name", "user:42:age"));
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_FALSE(GlobMatch("", "a"));
  EXPECT_FALSE(GlobMatch("a", ""));
  EXPECT_TRUE(GlobMatch("a**b", "ab"));
}

TEST(GlobMatchTest, Sets) {
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[ae]llo", "hillo"));
  EXPECT_TRUE(GlobMatch("h[^e]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[^e]llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[!e]llo", "hello"));  // '!' is a member, not a negation
  EXPECT_TRUE(GlobMatch("h[!e]llo", "h!llo"));
  EXPECT_FALSE(GlobMatch("h[!e]llo", "hallo"));
  EXPECT_TRUE(GlobMatch("h[a-b]llo", "hbllo"));
  EXPECT_TRUE(GlobMatch("h[b-a]llo", "hbllo"));  // reversed ranges work as in Redis
  EXPECT_FALSE(GlobMatch("h[a-b]llo", "hcllo"));
  EXPECT_TRUE(GlobMatch("[\\]]", "]"));
  EXPECT_TRUE(GlobMatch("[a-]", "-"));
}

TEST(GlobMatchTest, EscapesAndBinary) {
  EXPECT_TRUE(GlobMatch("a\\*b", "a*b"));
  EXPECT_FALSE(GlobMatch("a\\*b", "axb"));
  EXPECT_TRUE(GlobMatch("\\?", "?"));
  EXPECT_TRUE(GlobMatch(std::string_view("a\0*", 3), std::string_view("a\0xyz", 5)));
  EXPECT_TRUE(GlobMatch("*\r\n", "line\r\n"));
}

TEST(GlobMatchTest, NoCase) {
  EXPECT_TRUE(GlobMatch("HeLLo", "hello", true));
  EXPECT_TRUE(GlobMatch("h[A-C]llo", "hbllo", true));
  EXPECT_FALSE(GlobMatch("HeLLo", "hello", false));
}

// Many stars against a near-miss must stay fast (a naive matcher is exponential here).
TEST(GlobMatchTest, ManyStarsAreLinear) {
  std::string pattern;
  for (int i = 0; i < 30; ++i) pattern += "*a";
  pattern += "b";
  std::string subject(10000, 'a');
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(GlobMatch(pattern, subject));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

}  // namespace
}  // namespace damselfly::core
