// Tests for ParseMemcacheAuth. Every reply and limit below was first observed on a live
// memcached 1.6.18 started with -Y (an auth file holding default:secret).
#include "src/facade/memcache_auth.h"

#include <gtest/gtest.h>

#include <string>

namespace damselfly::facade {
namespace {

using Kind = MemcacheAuthStep::Kind;

constexpr char kUnauthenticated[] = "CLIENT_ERROR unauthenticated";
constexpr char kBadFormat[] = "CLIENT_ERROR bad authentication token format";
constexpr char kFailure[] = "CLIENT_ERROR authentication failure";
constexpr char kBadTermination[] = "CLIENT_ERROR bad command line termination";

MemcacheAuthStep Step(std::string_view input) { return ParseMemcacheAuth(input, "secret"); }

void ExpectReply(std::string_view input, std::string_view reply, size_t consumed) {
  MemcacheAuthStep step = Step(input);
  EXPECT_EQ(step.kind, Kind::kReply) << input;
  EXPECT_EQ(step.reply, reply) << input;
  EXPECT_EQ(step.consumed, consumed) << input;
}

TEST(MemcacheAuthTest, DefaultUserAndPassword) {
  std::string request = "set anykey 0 0 14\r\ndefault secret\r\n";
  MemcacheAuthStep step = Step(request + "get a\r\n");
  EXPECT_EQ(step.kind, Kind::kAuthenticated);
  EXPECT_EQ(step.reply, "STORED");
  EXPECT_EQ(step.consumed, request.size());
  EXPECT_TRUE(step.attempt);
  // The key, flags and exptime are not looked at; noreply is ignored; a bare "\n" ends
  // the line; the words of the data may have more spaces around them, and more words.
  for (std::string_view ok :
       {"set k x y 14 noreply\r\ndefault secret\r\n", "set k 0 0 14\ndefault secret\r\n",
        " set  k 0 0 14\r\ndefault secret\r\n", "set k 0 0 16\r\n default  secret\r\n",
        "set k 0 0 20\r\ndefault secret extra\r\n"}) {
    EXPECT_EQ(Step(ok).kind, Kind::kAuthenticated) << ok;
  }
}

TEST(MemcacheAuthTest, WrongCredentials) {
  for (std::string_view request :
       {"set k 0 0 11\r\ndefault bad\r\n", "set k 0 0 12\r\nother secret\r\n",
        "set k 0 0 14\r\nDEFAULT secret\r\n"}) {
    MemcacheAuthStep step = Step(request);
    EXPECT_EQ(step.kind, Kind::kReply) << request;
    EXPECT_EQ(step.reply, kFailure) << request;
    EXPECT_TRUE(step.attempt);
  }
}

TEST(MemcacheAuthTest, MalformedData) {
  // One word (a tab is not a separator), or none.
  ExpectReply("set k 0 0 6\r\nsecret\r\n", kBadFormat, 21);
  ExpectReply("set k 0 0 14\r\ndefault\tsecret\r\n", kBadFormat, 30);
  ExpectReply("set k 0 0 7\r\n secret\r\n", kBadFormat, 22);
  ExpectReply("set k 0 0 0\r\n\r\n", kBadFormat, 15);
  EXPECT_FALSE(Step("set k 0 0 6\r\nsecret\r\n").attempt);
  // The block must end with "\r\n".
  ExpectReply("set k 0 0 4\r\nabcdXY", kBadTermination, 19);
  ExpectReply("set k 0 0 14\r\ndefault secret\n\n", kBadTermination, 30);
}

TEST(MemcacheAuthTest, EveryOtherLineIsRefused) {
  for (std::string_view line :
       {"version\r\n", "get a\r\n", "quit\r\n", "mn\r\n", "mg a v\r\n", "ms a 2\r\n",
        "add k 0 0 14\r\n", "SET k 0 0 14\r\n", "setx k 0 0 14\r\n", "set k 0 14\r\n",
        "set k 0 0 -1\r\n", "set k 0 0 14x\r\n", "set k 0 0 4294967296\r\n", "\r\n", "\n"}) {
    ExpectReply(line, kUnauthenticated, line.size());
  }
  // The line only: what follows is the next request.
  ExpectReply("add k 0 0 14\r\ndefault secret\r\n", kUnauthenticated, 14);
}

TEST(MemcacheAuthTest, Incomplete) {
  for (std::string_view partial :
       {"", "set", "set k 0 0 14\r", "set k 0 0 14\r\n", "set k 0 0 14\r\ndefault secret\r"}) {
    MemcacheAuthStep step = Step(partial);
    EXPECT_EQ(step.kind, Kind::kNeedMore) << partial;
    EXPECT_EQ(step.consumed, 0u);
  }
}

TEST(MemcacheAuthTest, Limits) {
  // A line without a newline: waits up to 2048 bytes, then closes.
  EXPECT_EQ(Step(std::string(2048, 'x')).kind, Kind::kNeedMore);
  EXPECT_EQ(Step(std::string(2049, 'x')).kind, Kind::kClose);
  EXPECT_EQ(Step("set k 0 0 14" + std::string(3000, ' ') + "\r\ndefault secret\r\n").kind,
            Kind::kAuthenticated);
  // A block and its "\r\n" must fit memcached's 16 KiB read buffer.
  std::string data = "default secret" + std::string(16382 - 14, ' ');
  EXPECT_EQ(Step("set k 0 0 16382\r\n" + data + "\r\n").kind, Kind::kAuthenticated);
  EXPECT_EQ(Step("set k 0 0 16383\r\n").kind, Kind::kClose);
}

}  // namespace
}  // namespace damselfly::facade
