#include "src/facade/command_docs.h"

#include <gtest/gtest.h>

namespace damselfly::facade {
namespace {

TEST(CommandDocsTest, PlainArgumentsAndTypes) {
  auto args = ParseSyntax("key seconds value");
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0].name, "key");
  EXPECT_EQ(args[0].type, "key");
  EXPECT_EQ(args[1].type, "integer");
  EXPECT_EQ(args[2].type, "string");
  EXPECT_TRUE(ParseSyntax("").empty());
}

TEST(CommandDocsTest, OptionalTokensAndAlternatives) {
  auto args = ParseSyntax(
      "key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | "
      "KEEPTTL]");
  ASSERT_EQ(args.size(), 5u);
  const DocArg& condition = args[2];
  EXPECT_EQ(condition.type, "oneof");
  EXPECT_TRUE(condition.optional);
  ASSERT_EQ(condition.children.size(), 2u);
  EXPECT_EQ(condition.children[0].type, "pure-token");
  EXPECT_EQ(condition.children[0].token, "NX");
  EXPECT_EQ(args[3].token, "GET");
  EXPECT_TRUE(args[3].optional);
  const DocArg& expiry = args[4];
  ASSERT_EQ(expiry.children.size(), 4u);
  EXPECT_EQ(expiry.children[0].token, "EX");
  EXPECT_EQ(expiry.children[0].name, "seconds");
  EXPECT_EQ(expiry.children[0].type, "integer");
  EXPECT_EQ(expiry.children[2].type, "unix-time");
  EXPECT_EQ(expiry.children[3].type, "pure-token");
}

TEST(CommandDocsTest, RepetitionAndNestedBlocks) {
  auto args = ParseSyntax("key [key ...]");  // one repeating argument, as in Redis's docs
  ASSERT_EQ(args.size(), 1u);
  EXPECT_FALSE(args[0].optional);
  EXPECT_TRUE(args[0].multiple);

  args = ParseSyntax("[section [section ...]]");
  ASSERT_EQ(args.size(), 1u);
  EXPECT_TRUE(args[0].optional);
  EXPECT_TRUE(args[0].multiple);

  args = ParseSyntax("[protover [AUTH username password] [SETNAME clientname]]");
  ASSERT_EQ(args.size(), 1u);
  EXPECT_EQ(args[0].type, "block");
  EXPECT_TRUE(args[0].optional);
  ASSERT_EQ(args[0].children.size(), 3u);
  EXPECT_EQ(args[0].children[1].type, "block");  // AUTH username password
  EXPECT_EQ(args[0].children[1].children[0].token, "AUTH");
  EXPECT_EQ(args[0].children[1].children[0].name, "username");
}

TEST(CommandDocsTest, RequiredGroups) {
  auto args = ParseSyntax("key <BEFORE | AFTER> pivot element");
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[1].type, "oneof");
  EXPECT_FALSE(args[1].optional);
  ASSERT_EQ(args[1].children.size(), 2u);
  EXPECT_EQ(args[1].children[1].token, "AFTER");
  EXPECT_EQ(args[2].name, "pivot");
  args = ParseSyntax("numkeys key [key ...] <LEFT | RIGHT> [COUNT count]");
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[2].type, "oneof");
  EXPECT_EQ(args[3].token, "COUNT");
}

TEST(CommandDocsTest, TopLevelAlternatives) {
  auto args = ParseSyntax("LIB-NAME libname | LIB-VER libver");
  ASSERT_EQ(args.size(), 1u);
  EXPECT_EQ(args[0].type, "oneof");
  EXPECT_FALSE(args[0].optional);
  EXPECT_EQ(args[0].children[1].token, "LIB-VER");
}

TEST(CommandDocsTest, SerialisesAsMaps) {
  ReplyBuilder rb;
  rb.set_protocol(RespVersion::kResp3);
  SendDocArgs(ParseSyntax("[GET]"), &rb);
  EXPECT_EQ(rb.output(),
            "*1\r\n%4\r\n$4\r\nname\r\n$3\r\nget\r\n$4\r\ntype\r\n$10\r\npure-token\r\n"
            "$5\r\ntoken\r\n$3\r\nGET\r\n$5\r\nflags\r\n~1\r\n+optional\r\n");
}

}  // namespace
}  // namespace damselfly::facade
