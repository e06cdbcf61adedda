#include "src/server/arg_parsing.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "src/facade/error.h"

namespace damselfly {

std::optional<int64_t> ParseInt64(std::string_view text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  size_t i = 0;
  bool negative = text[0] == '-';
  if (negative && text.size() == 1) return std::nullopt;
  i = negative ? 1 : 0;
  if (text[i] == '0') {
    if (text.size() == 1) return 0;
    return std::nullopt;  // "01", "-0" are not canonical
  }
  // Twenty digits are past 2^63 (out of range either way); nineteen cannot overflow a
  // uint64_t, so the loop needs no overflow check (nor a division per digit).
  if (text.size() - i > 19) return std::nullopt;
  uint64_t magnitude = 0;
  for (; i < text.size(); ++i) {
    const unsigned digit = static_cast<unsigned char>(text[i]) - unsigned{'0'};
    if (digit > 9) return std::nullopt;
    magnitude = magnitude * 10 + digit;
  }
  if (negative) {
    if (magnitude > uint64_t(INT64_MAX) + 1) return std::nullopt;
    return int64_t(0 - magnitude);
  }
  if (magnitude > uint64_t(INT64_MAX)) return std::nullopt;
  return int64_t(magnitude);
}

std::string_view ParseScanOptions(absl::Span<const std::string_view> args, bool allow_type,
                                  ScanOptions* options) {
  for (size_t i = 0; i < args.size(); ++i) {
    const bool has_next = i + 1 < args.size();
    if (ArgIs(args[i], "MATCH") && has_next) {
      options->pattern = args[++i];
      if (*options->pattern == "*") options->pattern.reset();
    } else if (ArgIs(args[i], "COUNT") && has_next) {
      std::optional<int64_t> count = ParseInt64(args[++i]);
      if (!count) return facade::kInvalidIntErr;
      if (*count < 1) return facade::kSyntaxErr;
      options->count = *count;
    } else if (allow_type && ArgIs(args[i], "TYPE") && has_next) {
      options->type = args[++i];
    } else {
      return facade::kSyntaxErr;
    }
  }
  return "";
}

std::optional<uint64_t> ParseScanCursor(std::string_view text) {
  text = facade::AsCString(text);
  size_t i = 0;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) i = 1;
  const bool negative = i == 1 && text[0] == '-';
  if (i == 1 && text.size() == 1) return std::nullopt;  // a sign without digits
  uint64_t value = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t digit = c - '0';
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return negative ? 0 - value : value;
}

std::optional<uint32_t> ParseDbIndex(std::string_view text, uint32_t dbnum,
                                     std::string_view* error) {
  std::optional<int64_t> number = ParseInt64(text);
  if (!number) {
    *error = facade::kInvalidIntErr;
    return std::nullopt;
  }
  if (*number < INT32_MIN || *number > INT32_MAX) {
    *error = facade::kIntRangeErr;
    return std::nullopt;
  }
  if (*number < 0 || *number >= int64_t(dbnum)) {
    *error = facade::kDbIndexOutOfRangeErr;
    return std::nullopt;
  }
  return uint32_t(*number);
}

std::optional<long double> ParseLongDouble(std::string_view text) {
  constexpr size_t kMaxChars = 5 * 1024;
  if (text.empty() || text.size() > kMaxChars || std::isspace(static_cast<unsigned char>(text[0]))) {
    return std::nullopt;
  }
  std::string buf(text);  // strtold needs a terminator
  char* end = nullptr;
  errno = 0;
  long double value = strtold(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size() || std::isnan(value)) return std::nullopt;
  if (errno == ERANGE && (value == HUGE_VALL || value == -HUGE_VALL || value == 0)) {
    return std::nullopt;
  }
  return value;
}

std::optional<double> ParseDouble(std::string_view text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  // strtod needs a terminator: coordinates and radii fit the stack buffer.
  char small[64];
  std::string large;
  const char* c = small;
  if (text.size() < sizeof(small)) {
    memcpy(small, text.data(), text.size());
    small[text.size()] = '\0';
  } else {
    large.assign(text);
    c = large.c_str();
  }
  char* end = nullptr;
  errno = 0;
  double value = strtod(c, &end);
  if (size_t(end - c) != text.size() || std::isnan(value)) return std::nullopt;
  if (errno == ERANGE && (value == HUGE_VAL || value == -HUGE_VAL || value == 0)) {
    return std::nullopt;
  }
  return value;
}

std::string FormatLongDouble(long double value) {
  char buf[5 * 1024 + 32];
  int len = snprintf(buf, sizeof(buf), "%.17Lf", value);
  if (len <= 0 || size_t(len) >= sizeof(buf)) return "0";
  std::string out(buf, len);
  if (out.find('.') != std::string::npos) {
    while (!out.empty() && out.back() == '0') out.pop_back();
    if (!out.empty() && out.back() == '.') out.pop_back();
  }
  if (out == "-0") out = "0";
  return out;
}

std::optional<uint64_t> ParseMemoryValue(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::string_view unit = text.substr(digits);
  uint64_t multiplier = 0;
  struct Unit {
    std::string_view name;
    uint64_t multiplier;
  } constexpr kUnits[] = {{"", 1},         {"b", 1},          {"k", 1000},
                          {"kb", 1024},    {"m", 1000000},    {"mb", 1 << 20},
                          {"g", 1000000000}, {"gb", 1ull << 30}};
  for (const Unit& u : kUnits) {
    if (helio::EqualsIgnoreCase(unit, u.name)) multiplier = u.multiplier;
  }
  uint64_t value = 0;
  if (digits == 0 || multiplier == 0 || !helio::SimpleAtoi(text.substr(0, digits), &value)) {
    return std::nullopt;
  }
  if (value > std::numeric_limits<uint64_t>::max() / multiplier) return std::nullopt;
  return value * multiplier;
}

}  // namespace damselfly
