// Argument parsing with Redis's exact acceptance rules. Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/types/span.h"
#include "helio/base/strings.h"

namespace damselfly {

// A 64-bit integer as Redis's string2ll reads it: optional '-', digits, no '+', no
// spaces, no leading zeros, no overflow.
std::optional<int64_t> ParseInt64(std::string_view text);

// A SCAN, HSCAN, SSCAN or ZSCAN cursor as Redis reads it (strtoul on the argument as a
// C string): the bytes before the first NUL, no leading white space, an optional sign
// ('-' wraps around, so "-1" is 2^64 - 1), decimal digits, nothing after them; an empty
// text is cursor 0. Nullopt, for Redis's "ERR invalid cursor", otherwise or past 2^64 - 1.
std::optional<uint64_t> ParseScanCursor(std::string_view text);

// The options of SCAN, HSCAN, SSCAN and ZSCAN after the cursor: MATCH pattern, COUNT n
// (at least 1) and, for SCAN, TYPE name; the last of a repeated option wins.
struct ScanOptions {
  std::optional<std::string_view> pattern;  // unset for no pattern (or "*")
  int64_t count = 10;
  std::optional<std::string_view> type;
};
// Parses `args` (the arguments after the cursor) into *options; returns Redis's error
// text ("ERR syntax error", "ERR value is not an integer...") or "" when valid.
std::string_view ParseScanOptions(absl::Span<const std::string_view> args, bool allow_type,
                                  ScanOptions* options);

// A database index as SELECT and COPY ... DB read it (Redis's getIntFromObjectOrReply,
// then the range check). Nullopt with *error set to Redis's text: not an integer
// (kInvalidIntErr), outside int's range, or not below `dbnum` (kDbIndexOutOfRangeErr).
std::optional<uint32_t> ParseDbIndex(std::string_view text, uint32_t dbnum,
                                     std::string_view* error);

// A long double as Redis's string2ld reads it: the whole text, no leading space, not NaN
// (infinities are accepted), at most 5 KiB.
std::optional<long double> ParseLongDouble(std::string_view text);

// A double as Redis's getDoubleFromObject reads it: strtod over the whole text (a NUL
// byte inside fails), no leading space, not NaN, no overflow or underflow to
// zero (infinities are accepted).
std::optional<double> ParseDouble(std::string_view text);

// Formats a long double as Redis does for INCRBYFLOAT (17 decimals, trailing zeros and
// a trailing point removed; integral values without exponent).
std::string FormatLongDouble(long double value);

// A memory value as Redis's memtoull reads it: digits with an optional unit (b, k, kb,
// m, mb, g, gb; k = 1000, kb = 1024; case-insensitive). CONFIG SET maxmemory, --maxmemory.
std::optional<uint64_t> ParseMemoryValue(std::string_view text);

inline bool ArgIs(std::string_view arg, std::string_view upper_name) {
  return helio::EqualsIgnoreCase(arg, upper_name);
}

}  // namespace damselfly
