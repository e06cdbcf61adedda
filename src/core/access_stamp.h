// AccessStamp: when a key was last used, in 13 bits, for OBJECT IDLETIME (and the
// eviction policies to come).
//
// The problem. Redis keeps 24 bits of seconds per object (194 days before it wraps). A
// damselfly entry has 13 spare bits (the key's flag byte and five of the value's), so a
// plain clock in seconds would wrap after 2 h 16 min, and one in minutes could not tell
// 1 s from 59 s.
//
// The design: a stamp is a 2-bit scale and an 11-bit time in that scale's unit (seconds,
// minutes, hours, days), modulo 2048. Using a key writes a stamp in seconds. A sweep
// over the table (Age) rewrites stamps that are more than 1024 units old in the next
// coarser unit, before they could wrap: a key is exact to the second while idle under
// 17 minutes (1024 s), then known to the minute under 17 hours (1024 min), to the hour
// under 42 days (1024 h), then in days, saturating at 1024 days. The sweep must visit every key at least every 1024
// seconds (DbSlice does it every 10 minutes); idle times are then never wrapped.
//
// Clock: seconds since some origin, as a uint32 (the caller's; DbSlice uses its start).
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstdint>

namespace damselfly::core {

class AccessStamp {
 public:
  static constexpr int kBits = 13;

  // The stamp of a use at now_s.
  static uint16_t Now(uint32_t now_s) { return uint16_t(now_s % kRange); }

  // Seconds since the use `stamp` records, at now_s (approximate beyond 17 minutes, see
  // above).
  static uint32_t IdleSeconds(uint16_t stamp, uint32_t now_s) {
    const unsigned scale = stamp >> kValueBits;
    return IdleUnits(stamp, now_s) * kUnitSeconds[scale];
  }

  // The stamp of a use idle_s seconds before now_s (RESTORE's IDLETIME), in the finest
  // unit that holds it, as Age would have left it; beyond 1024 days, 1024 days.
  static uint16_t Backdated(uint32_t idle_s, uint32_t now_s) {
    for (unsigned scale = 0;; ++scale) {
      const uint32_t idle_units = idle_s / kUnitSeconds[scale];
      if (idle_units < kRange / 2 || scale + 1 == kScales) {
        return Make(scale, now_s / kUnitSeconds[scale] - std::min(idle_units, kRange / 2));
      }
    }
  }

  // The stamp rewritten in a coarser unit when it is old enough to need it (see above);
  // else `stamp` itself.
  static uint16_t Age(uint16_t stamp, uint32_t now_s) {
    unsigned scale = stamp >> kValueBits;
    uint32_t idle_units = IdleUnits(stamp, now_s);
    while (idle_units >= kRange / 2) {
      if (scale + 1 == kScales) {  // days: saturate at 1024
        return Make(scale, now_s / kUnitSeconds[scale] - kRange / 2);
      }
      const uint32_t idle_s = idle_units * kUnitSeconds[scale];
      ++scale;
      idle_units = idle_s / kUnitSeconds[scale];
      stamp = Make(scale, now_s / kUnitSeconds[scale] - idle_units);
    }
    return stamp;
  }

 private:
  static constexpr int kValueBits = 11;
  static constexpr uint32_t kRange = 1u << kValueBits;  // 2048
  static constexpr unsigned kScales = 4;
  static constexpr uint32_t kUnitSeconds[kScales] = {1, 60, 3600, 86400};

  static uint16_t Make(unsigned scale, uint32_t units) {
    return uint16_t(scale << kValueBits | (units % kRange));
  }
  static uint32_t IdleUnits(uint16_t stamp, uint32_t now_s) {
    const unsigned scale = stamp >> kValueBits;
    const uint32_t now_units = now_s / kUnitSeconds[scale];
    return (now_units - (stamp & (kRange - 1))) % kRange;
  }
};

}  // namespace damselfly::core
