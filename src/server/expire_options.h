// The expiry options of SET, GETEX, SETEX and PSETEX (EX, PX, EXAT, PXAT, PERSIST,
// KEEPTTL), and the conditions of EXPIRE and its variants (NX, XX, GT, LT), validated as
// Redis validates them. Value types; their functions are pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/types/span.h"

namespace damselfly {

struct ExpireSpec {
  enum Kind { kNone, kRelative, kAbsolute, kKeepTtl, kPersist } kind = kNone;
  std::string_view value;  // the number as the client sent it (kRelative, kAbsolute)
  bool in_seconds = false;

  bool has_deadline() const { return kind == kRelative || kind == kAbsolute; }

  // REQUIRES: has_deadline(). Sets *deadline_ms (unix ms) from the value and now_ms, or
  // returns false with Redis's error text: "ERR value is not an integer or out of range",
  // or "ERR invalid expire time in '<command>' command" for a value that is not positive
  // or overflows.
  bool Resolve(std::string_view command, int64_t now_ms, int64_t* deadline_ms,
               std::string* error) const;
};

// EXPIRE key seconds [NX | XX | GT | LT], and PEXPIRE, EXPIREAT, PEXPIREAT.
struct ExpireCondition {
  bool nx = false, xx = false, gt = false, lt = false;

  // Parses the options after the time. Redis reads them before the time, so their errors
  // come first: "ERR Unsupported option <arg>" (the argument up to a NUL), then "ERR NX
  // and XX, GT or LT options at the same time are not compatible", then "ERR GT and LT
  // options at the same time are not compatible". Repeating an option is allowed.
  static std::optional<ExpireCondition> Parse(absl::Span<const std::string_view> options,
                                              std::string* error);

  // Whether a key whose deadline is `current_ms` (0: none, an infinite TTL) may take
  // `deadline_ms`: NX needs no deadline, XX one, GT a later one than the current (never
  // true without a deadline), LT an earlier one (always true without a deadline).
  bool Allows(int64_t current_ms, int64_t deadline_ms) const;
};

}  // namespace damselfly
