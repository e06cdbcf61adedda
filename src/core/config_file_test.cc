#include "src/core/config_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>

#include "src/core/redis_args.h"

namespace damselfly::core {
namespace {

std::vector<std::string> Split(std::string_view line) {
  std::vector<std::string> words;
  EXPECT_TRUE(SplitRedisArgs(line, &words)) << line;
  return words;
}

bool Splits(std::string_view line) {
  std::vector<std::string> words;
  return SplitRedisArgs(line, &words);
}

TEST(RedisArgsTest, SplitsAsSdssplitargs) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Split("  save  900 1 "), (V{"save", "900", "1"}));
  EXPECT_EQ(Split(R"(requirepass "pa ss\x21\n\"q\"\\")"), (V{"requirepass", "pa ss!\n\"q\"\\"}));
  EXPECT_EQ(Split(R"(a 'it\'s' "" '')"), (V{"a", "it's", "", ""}));
  EXPECT_EQ(Split(R"(foo"bar baz" x)"), (V{"foobar baz", "x"}));  // a quote inside a word
  EXPECT_EQ(Split(R"("\x4" "\q")"), (V{"x4", "q"}));              // not an \xHH: the char
  EXPECT_EQ(Split(""), V{});
  EXPECT_FALSE(Splits(R"(save "900 1)"));
  EXPECT_FALSE(Splits(R"(a 'b)"));
  EXPECT_FALSE(Splits(R"("a"b)"));  // a closing quote followed by a non-blank
  EXPECT_FALSE(Splits(R"('a'b)"));
  EXPECT_FALSE(Splits(R"("a\")"));
}

TEST(RedisArgsTest, QuotesWhatSplitReadsBack) {
  for (std::string arg : {std::string("plain"), std::string(""), std::string("a b"),
                          std::string("q\"'\\"), std::string("\x01\xff\n\t", 4)}) {
    std::vector<std::string> words;
    ASSERT_TRUE(SplitRedisArgs("x " + QuoteRedisArgIfNeeded(arg), &words)) << arg;
    ASSERT_EQ(words.size(), 2u);
    EXPECT_EQ(words[1], arg);
  }
  EXPECT_EQ(QuoteRedisArgIfNeeded("plain"), "plain");
  EXPECT_EQ(QuoteRedisArgIfNeeded(""), "\"\"");
  EXPECT_EQ(QuoteRedisArg("a\x01"), "\"a\\x01\"");
}

TEST(ConfigFileTest, ReadsDirectivesSkippingCommentsAndBlankLines) {
  std::vector<ConfigDirective> out;
  ConfigError error;
  ASSERT_TRUE(ParseConfigText("# comment\n\n  PORT 7000\r\n\t# indented comment\n"
                              "save \"\"\nbind 127.0.0.1 -::1",
                              &out, &error));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].args, (std::vector<std::string>{"port", "7000"}));  // the name lowercased
  EXPECT_EQ(out[0].line, "PORT 7000");
  EXPECT_EQ(out[0].line_number, 3);
  EXPECT_EQ(out[1].args, (std::vector<std::string>{"save", ""}));
  EXPECT_EQ(out[2].line_number, 6);
  EXPECT_EQ(out[2].args.size(), 3u);
}

TEST(ConfigFileTest, ReportsTheLineOfAnUnbalancedQuote) {
  std::vector<ConfigDirective> out;
  ConfigError error;
  EXPECT_FALSE(ParseConfigText("port 1\nsave \"900 1\n", &out, &error));
  EXPECT_EQ(error.line_number, 2);
  EXPECT_EQ(error.line, "save \"900 1");
  EXPECT_EQ(error.reason, "Unbalanced quotes in configuration line");
}

class ConfigFileIncludeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/config_file_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf " + dir_).c_str()), 0); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
};

TEST_F(ConfigFileIncludeTest, IncludesFilesInPlaceAndGlobsInNameOrder) {
  Write("b.conf", "hz 20\n");
  Write("a.conf", "hz 30\ninclude " + dir_ + "/b.conf\n");
  Write("frag-2.conf", "maxmemory 2mb\n");
  Write("frag-1.conf", "maxmemory 1mb");
  std::string main = Write("main.conf", "port 1\ninclude " + dir_ + "/a.conf\ninclude " + dir_ +
                                            "/frag-*.conf\ntimeout 5\n");
  std::vector<ConfigDirective> out;
  ConfigError error;
  int lines = 0;
  ASSERT_TRUE(ReadConfigFile(main, &out, &error, &lines)) << error.reason;
  std::vector<std::string> seen;
  for (const ConfigDirective& d : out) seen.push_back(d.args[0] + " " + d.args[1]);
  EXPECT_EQ(seen, (std::vector<std::string>{"port 1", "hz 30", "hz 20", "maxmemory 1mb",
                                            "maxmemory 2mb", "timeout 5"}));
  EXPECT_EQ(lines, 4);
}

TEST_F(ConfigFileIncludeTest, AFileThatCannotBeOpenedIsNamedWithItsReason) {
  std::vector<ConfigDirective> out;
  ConfigError error;
  EXPECT_FALSE(ReadConfigFile(dir_ + "/missing.conf", &out, &error));
  EXPECT_EQ(error.line_number, 0);
  EXPECT_EQ(error.reason, "Fatal error, can't open config file '" + dir_ +
                              "/missing.conf': No such file or directory");
  std::string main = Write("main.conf", "include " + dir_ + "/missing.conf\n");
  EXPECT_FALSE(ReadConfigFile(main, &out, &error));
  EXPECT_NE(error.reason.find("missing.conf"), std::string::npos);
}

TEST_F(ConfigFileIncludeTest, AnIncludeLoopStops) {
  std::string self = Write("self.conf", "include " + dir_ + "/self.conf\n");
  std::vector<ConfigDirective> out;
  ConfigError error;
  EXPECT_FALSE(ReadConfigFile(self, &out, &error));
  EXPECT_EQ(error.reason, "Too many nested includes");
}

TEST_F(ConfigFileIncludeTest, AGlobMatchingNothingIncludesNothing) {
  std::string main = Write("main.conf", "include " + dir_ + "/none-*.conf\nport 2\n");
  std::vector<ConfigDirective> out;
  ConfigError error;
  ASSERT_TRUE(ReadConfigFile(main, &out, &error));
  ASSERT_EQ(out.size(), 1u);
}

}  // namespace
}  // namespace damselfly::core
