// The latency monitor behind LATENCY LATEST / HISTORY / GRAPH / DOCTOR / RESET: for each
// event class ("command", "fast-command", "expire-cycle"), the newest kCapacity seconds in
// which the event took at least latency-monitor-threshold milliseconds, with the worst
// latency of each such second, and the worst latency since the last reset.
//
// Redis keeps one series per event for the process. Here events happen on every proactor
// thread (a command on the thread of the shard that runs it, an expiry cycle on its shard's
// thread), so each thread records into its own LatencyEvents (ServerState::latency_events)
// with no lock and no atomic read-modify-write, and LATENCY merges copies of them
// (MergeLatencySeries): a second's sample is the worst over the threads, and the merged
// series keeps the newest kCapacity seconds. That is exactly what one process-wide series
// would hold: a second among the newest kCapacity of all threads is also among the newest
// kCapacity of every thread that recorded in it.
//
// Cost on the command path while the monitor is off (threshold 0, the default): one relaxed
// load and one compare (RecordLatencyIfNeeded).
//
// Thread-safety: LatencySeries and LatencyEvents are not thread-safe (one per thread); the
// threshold functions may be called from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/types/span.h"

namespace damselfly {

enum class LatencyEvent : uint8_t { kCommand, kFastCommand, kExpireCycle };
inline constexpr size_t kLatencyEventCount = 3;

// Redis's name of an event class ("command", "fast-command", "expire-cycle").
std::string_view LatencyEventName(LatencyEvent event);
// The event class named `name` (exact match, as Redis's event table compares names), or
// nullopt.
std::optional<LatencyEvent> FindLatencyEvent(std::string_view name);

struct LatencySample {
  int64_t time_s = 0;  // Unix time, seconds
  uint32_t latency_ms = 0;

  bool operator==(const LatencySample&) const = default;
};

// One event's samples on one thread: at most one per second (the worst of that second),
// the newest kCapacity of them, and the worst ever added.
class LatencySeries {
 public:
  static constexpr size_t kCapacity = 160;

  // Adds a latency measured at `now_s`. As in Redis, a latency in the same second as the
  // newest sample only raises that sample; another second takes a new slot, dropping the
  // oldest sample when all kCapacity are in use.
  void Add(int64_t now_s, uint32_t latency_ms);

  // Oldest first (the order they were added).
  std::vector<LatencySample> Samples() const;
  uint32_t max_ms() const { return max_ms_; }

 private:
  std::array<LatencySample, kCapacity> ring_{};
  size_t size_ = 0;
  size_t next_ = 0;  // the slot the next new second takes
  uint32_t max_ms_ = 0;
};

// The process-wide view of one event.
struct MergedLatencySeries {
  std::vector<LatencySample> samples;  // by time, one per second, at most kCapacity
  uint32_t max_ms = 0;
};

// Merges the series of one event from several threads: per second the worst latency, the
// newest LatencySeries::kCapacity seconds, the worst maximum.
MergedLatencySeries MergeLatencySeries(absl::Span<const LatencySeries* const> series);

// One thread's series, one per event class that has samples since the last reset.
class LatencyEvents {
 public:
  void Add(LatencyEvent event, int64_t now_s, uint32_t latency_ms);
  // nullptr when the event has no samples on this thread.
  const LatencySeries* Find(LatencyEvent event) const;
  // Forgets the event's samples; returns whether it had any.
  bool Reset(LatencyEvent event);

 private:
  std::array<std::optional<LatencySeries>, kLatencyEventCount> series_;
};

// latency-monitor-threshold (ms): events that take at least this long are recorded;
// 0 turns the monitor off. Initialised from --latency_monitor_threshold by
// InitLatencyMonitor, changed by CONFIG SET. Thread-safe.
namespace latency_internal {
extern std::atomic<uint64_t> threshold_ms;
}  // namespace latency_internal

inline uint64_t LatencyThresholdMs() {
  return latency_internal::threshold_ms.load(std::memory_order_relaxed);
}
void SetLatencyThresholdMs(uint64_t ms);
// Reads --latency_monitor_threshold. Call once at start-up.
void InitLatencyMonitor();

// Records `latency_ms` for `event` in this thread's series (ServerState) now. REQUIRES: a
// proactor thread.
void RecordLatency(LatencyEvent event, uint64_t latency_ms);

// Records an event that took `duration_ns` when the monitor is on and it reaches the
// threshold in whole milliseconds (Redis's latencyAddSampleIfNeeded). Proactor threads.
inline void RecordLatencyIfNeeded(LatencyEvent event, uint64_t duration_ns) {
  const uint64_t threshold = LatencyThresholdMs();
  if (threshold != 0) [[unlikely]] {
    const uint64_t latency_ms = duration_ns / 1000000;
    if (latency_ms >= threshold) RecordLatency(event, latency_ms);
  }
}

}  // namespace damselfly
