// The expiry options of SET and GETEX (EX, PX, EXAT, PXAT, PERSIST, KEEPTTL), parsed
// as Redis parses them.
#pragma once

#include <cstdint>
#include <string_view>

namespace damselfly {

struct ExpireSpec {
  enum Kind { kNone, kRelativeMs, kAbsoluteMs, kKeepTtl, kPersist } kind = kNone;
  int64_t value_ms = 0;  // for kRelativeMs / kAbsoluteMs

  // The absolute deadline in unix ms for now_ms, or -1 when it overflows.
  int64_t DeadlineMs(int64_t now_ms) const;
};

// Validates a number of seconds (or ms) for an expiry option: false with Redis's error
// in *error ("ERR value is not an integer..." or "ERR invalid expire time in '<cmd>'
// command") when it is not a positive integer that fits in ms.
bool ParseExpireValue(std::string_view text, bool seconds, std::string_view command,
                      int64_t* value_ms, std::string* error);

}  // namespace damselfly
