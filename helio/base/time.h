// Wall-clock time for things clients see in unix time (expiry deadlines, CLIENT LIST ages).
// Thread-safe: a pure read of CLOCK_REALTIME (a vDSO call, no syscall).
#pragma once

#include <time.h>

#include <cstdint>

namespace helio {

inline int64_t UnixTimeMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace helio
