// Argument parsing with Redis's exact acceptance rules. Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "helio/base/strings.h"

namespace damselfly {

// A 64-bit integer as Redis's string2ll reads it: optional '-', digits, no '+', no
// spaces, no leading zeros, no overflow.
std::optional<int64_t> ParseInt64(std::string_view text);

// A long double as Redis's string2ld reads it: the whole text, no leading space, not NaN
// (infinities are accepted), at most 5 KiB.
std::optional<long double> ParseLongDouble(std::string_view text);

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
