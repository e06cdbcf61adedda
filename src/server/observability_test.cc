// Unit tests for the pure parts of the observability commands: CONFIG's memory values
// and MONITOR's line format (both checked against redis-server 7.0 by hand first).
#include <gtest/gtest.h>

#include "src/server/arg_parsing.h"
#include "src/server/monitor.h"

namespace damselfly {
namespace {

TEST(ParseMemoryValueTest, UnitsAsRedis) {
  EXPECT_EQ(ParseMemoryValue("0"), 0u);
  EXPECT_EQ(ParseMemoryValue("123"), 123u);
  EXPECT_EQ(ParseMemoryValue("10b"), 10u);
  EXPECT_EQ(ParseMemoryValue("10k"), 10000u);
  EXPECT_EQ(ParseMemoryValue("10K"), 10000u);
  EXPECT_EQ(ParseMemoryValue("10kb"), 10240u);
  EXPECT_EQ(ParseMemoryValue("2m"), 2000000u);
  EXPECT_EQ(ParseMemoryValue("2MB"), 2u << 20);
  EXPECT_EQ(ParseMemoryValue("1g"), 1000000000u);
  EXPECT_EQ(ParseMemoryValue("1gb"), 1u << 30);
}

TEST(ParseMemoryValueTest, Rejects) {
  for (const char* bad : {"", "abc", "-1", "10xb", "kb", " 1", "1 ", "1.5gb", "99999999999999999999",
                          "18446744073709551615gb"}) {
    EXPECT_FALSE(ParseMemoryValue(bad).has_value()) << bad;
  }
}

TEST(MonitorLineTest, QuotesEscapesAndRedacts) {
  facade::CommandId set{.name = "SET"};
  std::string_view args[] = {"set", "k", "a\"b\\c\n\r\t\a\b\x01\xff"};
  EXPECT_EQ(FormatMonitorLine(1700000000123456, &set, args, 3, "127.0.0.1:5000"),
            "1700000000.123456 [3 127.0.0.1:5000] \"set\" \"k\" "
            "\"a\\\"b\\\\c\\n\\r\\t\\a\\b\\x01\\xff\"");

  facade::CommandId auth{.name = "AUTH"};
  std::string_view auth_args[] = {"AUTH", "user", "pass"};
  EXPECT_EQ(FormatMonitorLine(1000000, &auth, auth_args, 0, "[::1]:1"),
            "1.000000 [0 [::1]:1] \"AUTH\" \"(redacted)\" \"(redacted)\"");

  facade::CommandId hello{.name = "HELLO"};
  std::string_view hello_args[] = {"HELLO", "3", "AUTH", "default", "pw", "SETNAME", "x"};
  EXPECT_EQ(FormatMonitorLine(5, &hello, hello_args, 0, "a:1"),
            "0.000005 [0 a:1] \"HELLO\" \"3\" \"AUTH\" \"(redacted)\" \"(redacted)\" "
            "\"SETNAME\" \"x\"");

  facade::CommandId acl{.name = "ACL"};
  std::string_view acl_args[] = {"acl", "setuser", "bob", "on", ">pw"};
  EXPECT_EQ(FormatMonitorLine(5, &acl, acl_args, 0, "a:1"),
            "0.000005 [0 a:1] \"acl\" \"setuser\" \"(redacted)\" \"(redacted)\" "
            "\"(redacted)\"");
  std::string_view whoami_args[] = {"acl", "whoami"};
  EXPECT_EQ(FormatMonitorLine(5, &acl, whoami_args, 0, "a:1"),
            "0.000005 [0 a:1] \"acl\" \"whoami\"");

  facade::CommandId config{.name = "CONFIG"};
  std::string_view config_args[] = {"config", "set", "hz", "10", "requirepass", "pw"};
  EXPECT_EQ(FormatMonitorLine(5, &config, config_args, 0, "a:1"),
            "0.000005 [0 a:1] \"config\" \"set\" \"hz\" \"10\" \"requirepass\" "
            "\"(redacted)\"");
}

}  // namespace
}  // namespace damselfly
