// The expiry options of SET, GETEX, SETEX and PSETEX (EX, PX, EXAT, PXAT, PERSIST,
// KEEPTTL), validated as Redis validates them. A value type; Resolve is pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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

}  // namespace damselfly
