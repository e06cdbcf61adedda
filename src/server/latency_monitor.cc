#include "src/server/latency_monitor.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <ctime>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "src/server/server_state.h"

DEFINE_int64(latency_monitor_threshold, 0,
             "LATENCY monitor: record events (commands, expiry cycles) that take at least this "
             "many milliseconds; 0 disables the monitor");

namespace damselfly {

namespace latency_internal {
std::atomic<uint64_t> threshold_ms{0};
}  // namespace latency_internal

namespace {
constexpr std::string_view kEventNames[kLatencyEventCount] = {"command", "fast-command",
                                                              "expire-cycle"};
}  // namespace

std::string_view LatencyEventName(LatencyEvent event) { return kEventNames[size_t(event)]; }

std::optional<LatencyEvent> FindLatencyEvent(std::string_view name) {
  for (size_t i = 0; i < kLatencyEventCount; ++i) {
    if (kEventNames[i] == name) return LatencyEvent(i);
  }
  return std::nullopt;
}

void LatencySeries::Add(int64_t now_s, uint32_t latency_ms) {
  max_ms_ = std::max(max_ms_, latency_ms);
  if (size_ > 0) {
    LatencySample& newest = ring_[(next_ + kCapacity - 1) % kCapacity];
    if (newest.time_s == now_s) {
      newest.latency_ms = std::max(newest.latency_ms, latency_ms);
      return;
    }
  }
  ring_[next_] = {now_s, latency_ms};
  next_ = (next_ + 1) % kCapacity;
  size_ = std::min(size_ + 1, kCapacity);
}

std::vector<LatencySample> LatencySeries::Samples() const {
  std::vector<LatencySample> out;
  out.reserve(size_);
  for (size_t i = 0; i < size_; ++i)
    out.push_back(ring_[(next_ + kCapacity - size_ + i) % kCapacity]);
  return out;
}

MergedLatencySeries MergeLatencySeries(absl::Span<const LatencySeries* const> series) {
  MergedLatencySeries merged;
  absl::flat_hash_map<int64_t, uint32_t> worst_by_second;
  for (const LatencySeries* one : series) {
    merged.max_ms = std::max(merged.max_ms, one->max_ms());
    for (const LatencySample& sample : one->Samples()) {
      uint32_t& worst = worst_by_second[sample.time_s];
      worst = std::max(worst, sample.latency_ms);
    }
  }
  merged.samples.reserve(worst_by_second.size());
  for (const auto& [time_s, latency_ms] : worst_by_second) {
    merged.samples.push_back({time_s, latency_ms});
  }
  std::sort(merged.samples.begin(), merged.samples.end(),
            [](const LatencySample& a, const LatencySample& b) { return a.time_s < b.time_s; });
  if (merged.samples.size() > LatencySeries::kCapacity) {
    merged.samples.erase(merged.samples.begin(), merged.samples.end() - LatencySeries::kCapacity);
  }
  return merged;
}

void LatencyEvents::Add(LatencyEvent event, int64_t now_s, uint32_t latency_ms) {
  std::optional<LatencySeries>& series = series_[size_t(event)];
  if (!series) series.emplace();
  series->Add(now_s, latency_ms);
}

const LatencySeries* LatencyEvents::Find(LatencyEvent event) const {
  const std::optional<LatencySeries>& series = series_[size_t(event)];
  return series ? &*series : nullptr;
}

bool LatencyEvents::Reset(LatencyEvent event) {
  std::optional<LatencySeries>& series = series_[size_t(event)];
  const bool had = series.has_value();
  series.reset();
  return had;
}

void SetLatencyThresholdMs(uint64_t ms) {
  latency_internal::threshold_ms.store(ms, std::memory_order_relaxed);
}

void InitLatencyMonitor() {
  CHECK_GE(FLAGS_latency_monitor_threshold, 0) << "--latency_monitor_threshold must be >= 0";
  SetLatencyThresholdMs(uint64_t(FLAGS_latency_monitor_threshold));
}

void RecordLatency(LatencyEvent event, uint64_t latency_ms) {
  // Redis keeps 32-bit latencies.
  const uint32_t clamped =
      uint32_t(std::min<uint64_t>(latency_ms, std::numeric_limits<uint32_t>::max()));
  ServerState::tlocal()->latency_events.Add(event, std::time(nullptr), clamped);
}

}  // namespace damselfly
