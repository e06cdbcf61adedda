// A cron schedule: the five fields of crontab(5) (minute hour day-of-month month
// day-of-week), for --snapshot_cron. Each field is `*`, a number, a range `a-b`, a step
// `*/n` or `a-b/n`, or a comma-separated list of those; months and week days also take
// their three-letter English names (JAN, MON), Sunday is 0 or 7. As in cron, when both
// day fields are restricted a day matches either; @yearly @monthly @weekly @daily @hourly
// are accepted. Times are the process's local time (the container's TZ, usually UTC).
//
// Thread-safety: a value type; const methods may be called from any thread.
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace damselfly::core {

class CronSchedule {
 public:
  // nullopt, with *error set when given, for a malformed expression.
  static std::optional<CronSchedule> Parse(std::string_view text, std::string* error = nullptr);

  // The first minute strictly after `after` (unix seconds) that the schedule selects, as
  // unix seconds; nullopt when none comes within the next five years ("0 0 31 2 *").
  std::optional<int64_t> Next(int64_t after) const;

 private:
  bool DayMatches(int mday, int wday) const;

  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> mdays_;   // 1..31
  std::bitset<13> months_;  // 1..12
  std::bitset<7> wdays_;    // 0 (Sunday)..6
  bool mday_any_ = true, wday_any_ = true;
};

}  // namespace damselfly::core
