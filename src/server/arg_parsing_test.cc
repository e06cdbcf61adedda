// Unit tests for the argument parsers whose acceptance rules Redis defines (each case
// checked against redis-server 7.0 first), and EXPIRE's conditions.
#include "src/server/arg_parsing.h"

#include <gtest/gtest.h>

#include "src/facade/error.h"
#include "src/server/expire_options.h"

namespace damselfly {
namespace {

using namespace std::literals;

// Redis's string2ll: canonical decimal only, the whole int64 range, nothing past it.
TEST(ParseInt64Test, AcceptsCanonicalDecimalsInRange) {
  EXPECT_EQ(ParseInt64("0"), 0);
  EXPECT_EQ(ParseInt64("1"), 1);
  EXPECT_EQ(ParseInt64("-1"), -1);
  EXPECT_EQ(ParseInt64("8191"), 8191);
  EXPECT_EQ(ParseInt64("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParseInt64("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(ParseInt64("999999999999999999"), 999999999999999999);
  EXPECT_EQ(ParseInt64("-1000000000000000000"), -1000000000000000000);
}

TEST(ParseInt64Test, RejectsAnythingElse) {
  for (std::string_view bad :
       {""sv, "-"sv, "+1"sv, "01"sv, "-0"sv, "00"sv, " 1"sv, "1 "sv, "1.0"sv, "1e3"sv, "0x1"sv,
        "9223372036854775808"sv, "-9223372036854775809"sv, "9999999999999999999"sv,
        "18446744073709551616"sv, "99999999999999999999"sv, "-99999999999999999999"sv,
        "123456789012345678901"sv, "1\0"sv, "\xff"sv, "1/"sv, "1:"sv}) {
    EXPECT_EQ(ParseInt64(bad), std::nullopt) << bad;
  }
}

TEST(ParseScanCursorTest, AcceptsWhatStrtoulAccepts) {
  EXPECT_EQ(ParseScanCursor("0"), 0u);
  EXPECT_EQ(ParseScanCursor(""), 0u);
  EXPECT_EQ(ParseScanCursor("+12"), 12u);
  EXPECT_EQ(ParseScanCursor("007"), 7u);
  EXPECT_EQ(ParseScanCursor("-0"), 0u);
  EXPECT_EQ(ParseScanCursor("-1"), UINT64_MAX);
  EXPECT_EQ(ParseScanCursor("-18446744073709551615"), 1u);
  EXPECT_EQ(ParseScanCursor("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseScanCursor("12\0junk"sv), 12u);
  EXPECT_EQ(ParseScanCursor("\0 1"sv), 0u);
}

TEST(ParseScanCursorTest, Rejects) {
  for (std::string_view bad :
       {"abc"sv, " 1"sv, "\t1"sv, "1 "sv, "1.5"sv, "0x10"sv, "-"sv, "+"sv, "+-1"sv, "--1"sv,
        "1e3"sv, "18446744073709551616"sv, "-18446744073709551616"sv, "1\n"sv}) {
    EXPECT_FALSE(ParseScanCursor(bad).has_value()) << bad;
  }
}

TEST(ParseDbIndexTest, ErrorsInRedisOrder) {
  std::string_view error;
  EXPECT_EQ(ParseDbIndex("15", 16, &error), 15u);
  EXPECT_EQ(ParseDbIndex("0", 16, &error), 0u);
  EXPECT_FALSE(ParseDbIndex("abc", 16, &error));
  EXPECT_EQ(error, facade::kInvalidIntErr);
  EXPECT_FALSE(ParseDbIndex("01", 16, &error));
  EXPECT_EQ(error, facade::kInvalidIntErr);
  EXPECT_FALSE(ParseDbIndex("100000000000", 16, &error));
  EXPECT_EQ(error, facade::kIntRangeErr);
  EXPECT_FALSE(ParseDbIndex("-2147483649", 16, &error));
  EXPECT_EQ(error, facade::kIntRangeErr);
  EXPECT_FALSE(ParseDbIndex("2147483647", 16, &error));
  EXPECT_EQ(error, facade::kDbIndexOutOfRangeErr);
  EXPECT_FALSE(ParseDbIndex("-1", 16, &error));
  EXPECT_EQ(error, facade::kDbIndexOutOfRangeErr);
  EXPECT_FALSE(ParseDbIndex("16", 16, &error));
  EXPECT_EQ(error, facade::kDbIndexOutOfRangeErr);
}

TEST(AsCStringTest, EndsAtNul) {
  EXPECT_EQ(facade::AsCString("abc"), "abc");
  EXPECT_EQ(facade::AsCString("ab\0c"sv), "ab");
  EXPECT_EQ(facade::AsCString("\0"sv), "");
  EXPECT_EQ(facade::AsCString(""), "");
}

std::optional<ExpireCondition> ParseCondition(std::initializer_list<std::string_view> options,
                                              std::string* error) {
  return ExpireCondition::Parse({options.begin(), options.size()}, error);
}

TEST(ExpireConditionTest, ParseErrorsInRedisOrder) {
  std::string error;
  EXPECT_FALSE(ParseCondition({"NX", "XX", "BOGUS"}, &error));
  EXPECT_EQ(error, "ERR Unsupported option BOGUS");
  EXPECT_FALSE(ParseCondition({"bo\0gus"sv}, &error));
  EXPECT_EQ(error, "ERR Unsupported option bo");
  EXPECT_FALSE(ParseCondition({"GT", "LT", "NX"}, &error));
  EXPECT_EQ(error, "ERR NX and XX, GT or LT options at the same time are not compatible");
  EXPECT_FALSE(ParseCondition({"gt", "lt"}, &error));
  EXPECT_EQ(error, "ERR GT and LT options at the same time are not compatible");
  EXPECT_TRUE(ParseCondition({"xx", "GT", "gt"}, &error));
  EXPECT_TRUE(ParseCondition({}, &error));
}

TEST(ExpireConditionTest, Allows) {
  std::string error;
  constexpr int64_t kNone = 0;
  ExpireCondition nx = *ParseCondition({"NX"}, &error);
  EXPECT_TRUE(nx.Allows(kNone, 100));
  EXPECT_FALSE(nx.Allows(50, 100));
  ExpireCondition xx = *ParseCondition({"XX"}, &error);
  EXPECT_FALSE(xx.Allows(kNone, 100));
  EXPECT_TRUE(xx.Allows(50, 100));
  ExpireCondition gt = *ParseCondition({"GT"}, &error);
  EXPECT_FALSE(gt.Allows(kNone, 100));  // no deadline is an infinite one
  EXPECT_FALSE(gt.Allows(100, 100));
  EXPECT_TRUE(gt.Allows(50, 100));
  ExpireCondition lt = *ParseCondition({"LT"}, &error);
  EXPECT_TRUE(lt.Allows(kNone, 100));
  EXPECT_FALSE(lt.Allows(100, 100));
  EXPECT_TRUE(lt.Allows(150, 100));
  ExpireCondition xx_gt = *ParseCondition({"XX", "GT"}, &error);
  EXPECT_FALSE(xx_gt.Allows(kNone, 100));
  EXPECT_TRUE(xx_gt.Allows(50, 100));
}

}  // namespace
}  // namespace damselfly
