#include "src/core/cron_schedule.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

namespace damselfly::core {
namespace {

class CronScheduleTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("TZ", "UTC", 1);
    tzset();
  }

  // Unix seconds of a UTC date and time.
  static int64_t At(int year, int month, int day, int hour, int minute) {
    struct tm tm = {};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    return int64_t(timegm(&tm));
  }

  static std::optional<int64_t> Next(std::string_view expr, int64_t after) {
    std::optional<CronSchedule> schedule = CronSchedule::Parse(expr);
    EXPECT_TRUE(schedule.has_value()) << expr;
    return schedule ? schedule->Next(after) : std::nullopt;
  }
};

TEST_F(CronScheduleTest, EveryFieldKind) {
  const int64_t t = At(2026, 11, 26, 5, 7);  // a Thursday
  EXPECT_EQ(Next("* * * * *", t), At(2026, 11, 26, 5, 8));
  EXPECT_EQ(Next("* * * * *", t + 30), At(2026, 11, 26, 5, 8));  // strictly after
  EXPECT_EQ(Next("*/5 * * * *", t), At(2026, 11, 26, 5, 10));
  EXPECT_EQ(Next("7 * * * *", t), At(2026, 11, 26, 6, 7));  // not the current minute
  EXPECT_EQ(Next("0 3 * * *", t), At(2026, 11, 27, 3, 0));
  EXPECT_EQ(Next("30 4-6 * * *", t), At(2026, 11, 26, 5, 30));
  EXPECT_EQ(Next("0,45 5 * * *", t), At(2026, 11, 26, 5, 45));
  EXPECT_EQ(Next("10-40/15 * * * *", t), At(2026, 11, 26, 5, 10));
  EXPECT_EQ(Next("5/20 * * * *", t), At(2026, 11, 26, 5, 25));
  EXPECT_EQ(Next("0 0 1 * *", t), At(2026, 12, 1, 0, 0));
  EXPECT_EQ(Next("0 0 1 jan *", t), At(2027, 1, 1, 0, 0));
  EXPECT_EQ(Next("0 12 * * SUN", t), At(2026, 11, 29, 12, 0));
  EXPECT_EQ(Next("0 12 * * 7", t), At(2026, 11, 29, 12, 0));
  EXPECT_EQ(Next("0 0 29 2 *", t), At(2028, 2, 29, 0, 0));
  EXPECT_EQ(Next("@hourly", t), At(2026, 11, 26, 6, 0));
  EXPECT_EQ(Next("@daily", t), At(2026, 11, 27, 0, 0));
  EXPECT_EQ(Next("@weekly", t), At(2026, 11, 29, 0, 0));
}

TEST_F(CronScheduleTest, BothDayFieldsRestrictedMatchEither) {
  // The 1st of the month or any Monday: Monday the 30th comes first.
  EXPECT_EQ(Next("0 0 1 * mon", At(2026, 11, 26, 5, 7)), At(2026, 11, 30, 0, 0));
  // Only the day of the month restricted: Mondays do not count.
  EXPECT_EQ(Next("0 0 1 * *", At(2026, 11, 26, 5, 7)), At(2026, 12, 1, 0, 0));
}

TEST_F(CronScheduleTest, NeverIsNullopt) {
  EXPECT_EQ(Next("0 0 31 2 *", At(2026, 1, 1, 0, 0)), std::nullopt);
}

TEST_F(CronScheduleTest, MalformedExpressionsAreRefused) {
  for (const char* bad : {"", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *",
                          "* * 0 * *", "* * * 13 *", "* * * * 8", "*/0 * * * *", "5-1 * * * *",
                          "a * * * *", "1,,2 * * * *", "* * * foo *", "-1 * * * *"}) {
    std::string error;
    EXPECT_FALSE(CronSchedule::Parse(bad, &error).has_value()) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

}  // namespace
}  // namespace damselfly::core
