#include "src/core/cron_schedule.h"

#include <time.h>

#include <array>
#include <vector>

#include "helio/base/strings.h"

namespace damselfly::core {
namespace {

constexpr std::array<std::string_view, 12> kMonthNames = {
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<std::string_view, 7> kDayNames = {"sun", "mon", "tue", "wed",
                                                       "thu", "fri", "sat"};

struct FieldSpec {
  int low, high;                     // the values a field may hold
  const std::string_view* names;     // names[i] is low + i, or nullptr
  size_t name_count;
};

bool ParseValue(std::string_view text, const FieldSpec& spec, int* value) {
  if (spec.names != nullptr) {
    const std::string lower = helio::AsciiStrToLower(text);
    for (size_t i = 0; i < spec.name_count; ++i) {
      if (lower == spec.names[i]) {
        *value = spec.low + int(i);
        return true;
      }
    }
  }
  return helio::SimpleAtoi(text, value) && *value >= spec.low && *value <= spec.high;
}

// Sets bits[v] for each value the field selects; false when malformed.
template <size_t N>
bool ParseField(std::string_view text, const FieldSpec& spec, std::bitset<N>* bits) {
  for (;;) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    int step = 1;
    if (size_t slash = item.find('/'); slash != std::string_view::npos) {
      if (!helio::SimpleAtoi(item.substr(slash + 1), &step) || step < 1) return false;
      item = item.substr(0, slash);
    }
    int from = spec.low, to = spec.high;
    if (item != "*") {
      const size_t dash = item.find('-');
      if (!ParseValue(item.substr(0, dash), spec, &from)) return false;
      if (dash == std::string_view::npos) {
        to = step > 1 ? spec.high : from;  // "5/15": from 5 on, as cron does
      } else if (!ParseValue(item.substr(dash + 1), spec, &to) || to < from) {
        return false;
      }
    }
    for (int v = from; v <= to; v += step) bits->set(size_t(v));
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

std::optional<CronSchedule> CronSchedule::Parse(std::string_view text, std::string* error) {
  std::vector<std::string_view> words = helio::SplitAny(text, " \t");
  std::string expanded = words.size() == 1 ? std::string(words[0]) : std::string(text);
  if (expanded == "@yearly" || expanded == "@annually") expanded = "0 0 1 1 *";
  if (expanded == "@monthly") expanded = "0 0 1 * *";
  if (expanded == "@weekly") expanded = "0 0 * * 0";
  if (expanded == "@daily" || expanded == "@midnight") expanded = "0 0 * * *";
  if (expanded == "@hourly") expanded = "0 * * * *";
  std::vector<std::string_view> fields = helio::SplitAny(expanded, " \t");
  auto fail = [error](std::string message) -> std::optional<CronSchedule> {
    if (error != nullptr) *error = std::move(message);
    return std::nullopt;
  };
  if (fields.size() != 5) {
    return fail("a cron expression has 5 fields: minute hour day-of-month month day-of-week");
  }
  CronSchedule schedule;
  static const FieldSpec kMinute{0, 59, nullptr, 0};
  static const FieldSpec kHour{0, 23, nullptr, 0};
  static const FieldSpec kMday{1, 31, nullptr, 0};
  static const FieldSpec kMonth{1, 12, kMonthNames.data(), kMonthNames.size()};
  static const FieldSpec kWday{0, 7, kDayNames.data(), kDayNames.size()};
  std::bitset<8> wdays;  // 7 is Sunday too
  if (!ParseField(fields[0], kMinute, &schedule.minutes_)) return fail("invalid minute field");
  if (!ParseField(fields[1], kHour, &schedule.hours_)) return fail("invalid hour field");
  if (!ParseField(fields[2], kMday, &schedule.mdays_)) return fail("invalid day-of-month field");
  if (!ParseField(fields[3], kMonth, &schedule.months_)) return fail("invalid month field");
  if (!ParseField(fields[4], kWday, &wdays)) return fail("invalid day-of-week field");
  for (int d = 0; d < 7; ++d) schedule.wdays_[size_t(d)] = wdays[size_t(d)];
  if (wdays[7]) schedule.wdays_.set(0);
  schedule.mday_any_ = fields[2][0] == '*';
  schedule.wday_any_ = fields[4][0] == '*';
  return schedule;
}

bool CronSchedule::DayMatches(int mday, int wday) const {
  const bool by_mday = mdays_[size_t(mday)], by_wday = wdays_[size_t(wday)];
  if (!mday_any_ && !wday_any_) return by_mday || by_wday;
  return by_mday && by_wday;
}

std::optional<int64_t> CronSchedule::Next(int64_t after) const {
  // Steps through local time, a field at a time: a month that does not match skips to
  // the next month's start, a day to the next day, and so on; mktime normalizes.
  time_t t = time_t(after - after % 60 + 60);
  const time_t limit = time_t(after + 5 * 366 * 86400LL);
  struct tm tm;
  while (t <= limit) {
    localtime_r(&t, &tm);
    tm.tm_isdst = -1;
    if (!months_[size_t(tm.tm_mon + 1)]) {
      tm.tm_mon += 1;
      tm.tm_mday = 1;
      tm.tm_hour = tm.tm_min = 0;
    } else if (!DayMatches(tm.tm_mday, tm.tm_wday)) {
      tm.tm_mday += 1;
      tm.tm_hour = tm.tm_min = 0;
    } else if (!hours_[size_t(tm.tm_hour)]) {
      tm.tm_hour += 1;
      tm.tm_min = 0;
    } else if (!minutes_[size_t(tm.tm_min)]) {
      tm.tm_min += 1;
    } else {
      return int64_t(t);
    }
    tm.tm_sec = 0;
    const time_t next = mktime(&tm);
    t = next > t ? next : t + 60;  // a DST gap never stalls the walk
  }
  return std::nullopt;
}

}  // namespace damselfly::core
