#include "src/server/command_accounting.h"

#include <gflags/gflags.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "helio/base/strings.h"
#include "helio/base/time.h"
#include "src/server/latency_monitor.h"
#include "src/server/monitor.h"
#include "src/server/redaction.h"
#include "src/server/server_state.h"
#include "src/server/tracking.h"
#include "src/server/transaction.h"

DEFINE_int64(slowlog_log_slower_than, 10000,
             "Commands running at least this many microseconds enter the slow log; "
             "negative disables it, 0 logs every command");
DEFINE_int64(slowlog_max_len, 128, "Entries the slow log keeps");

namespace damselfly {

namespace {

// Redis's bounds on what an entry keeps of a command.
constexpr size_t kSlowlogMaxArgs = 32;
constexpr size_t kSlowlogMaxArgBytes = 128;

// Mirrors of the flags that CONFIG SET can change while other threads read them.
std::atomic<int64_t> slowlog_threshold_us{10000};
std::atomic<int64_t> slowlog_max_len{128};
std::atomic<uint64_t> next_slowlog_id{0};

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The command clock: the TSC when the kernel uses it as its own clocksource (then it is
// invariant and synchronised between CPUs), at a rate measured against CLOCK_MONOTONIC;
// otherwise CLOCK_MONOTONIC itself. Written once before serving, then read-only.
struct CommandClock {
  bool use_tsc = false;
  double ns_per_tick = 1.0;
} command_clock;

void CalibrateCommandClock() {
#if defined(__x86_64__)
  std::ifstream source("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string name;
  if (!(source >> name) || name != "tsc") return;
  constexpr auto kCalibrationTime = std::chrono::milliseconds(20);
  uint64_t ns0 = MonotonicNs(), tsc0 = __rdtsc();
  std::this_thread::sleep_for(kCalibrationTime);
  uint64_t ns1 = MonotonicNs(), tsc1 = __rdtsc();
  if (tsc1 <= tsc0) return;
  command_clock.ns_per_tick = double(ns1 - ns0) / double(tsc1 - tsc0);
  command_clock.use_tsc = true;
#endif
}

std::vector<std::string> SlowlogArgs(const facade::CommandId* cid, facade::CmdArgList args) {
  size_t kept = std::min(args.size(), kSlowlogMaxArgs);
  std::vector<std::string> out;
  out.reserve(kept);
  for (size_t i = 0; i < kept; ++i) {
    if (i == kSlowlogMaxArgs - 1 && args.size() > kSlowlogMaxArgs) {
      out.push_back(helio::StrCat("... (", args.size() - kept + 1, " more arguments)"));
      break;
    }
    std::string_view arg = IsCredentialArg(cid, args, i) ? "(redacted)" : args[i];
    if (arg.size() > kSlowlogMaxArgBytes) {
      out.push_back(helio::StrCat(arg.substr(0, kSlowlogMaxArgBytes), "... (",
                                  arg.size() - kSlowlogMaxArgBytes, " more bytes)"));
    } else {
      out.emplace_back(arg);
    }
  }
  return out;
}

void RecordSlow(const facade::CommandId* cid, facade::CmdArgList args,
                facade::ConnectionContext* cntx, uint64_t duration_us) {
  int64_t max_len = SlowlogMaxLen();
  if (max_len <= 0) return;
  std::deque<SlowLogEntry>& log = ServerState::tlocal()->slowlog;
  log.push_front(SlowLogEntry{
      .id = next_slowlog_id.fetch_add(1, std::memory_order_relaxed),
      .unix_time_s = helio::UnixTimeMs() / 1000,
      .duration_us = duration_us,
      .args = SlowlogArgs(cid, args),
      .client_addr = cntx->owner()->peer_address(),
      .client_name = cntx->name,
  });
  while (int64_t(log.size()) > max_len) log.pop_back();
}

}  // namespace

uint64_t CommandClockTicks() {
#if defined(__x86_64__)
  if (command_clock.use_tsc) return __rdtsc();
#endif
  return MonotonicNs();
}

uint64_t RunCommand(const facade::CommandId* cid, const facade::CommandHandler& handler,
                    facade::CmdArgList args, facade::ConnectionContext* cntx,
                    uint64_t start_ticks) {
  uint64_t errors_before = cntx->reply_builder()->errors_sent();
  // While replicas follow, a command running on its keys' shard records what it changed.
  std::optional<JournalScope> journal;
  if (ShardJournal::recording() != nullptr && ShardLocalScope::active()) [[unlikely]] {
    journal.emplace(cid, args, cntx->db_index);
  }
  if (cntx->tracking_state) [[unlikely]] {
    TrackingBeforeCommand(cid, args, cntx);
    handler(args, cntx);
    TrackingAfterCommand(cid, cntx);
  } else {
    handler(args, cntx);
  }
  uint64_t end_ticks = CommandClockTicks();
  uint64_t duration_ns = uint64_t(double(end_ticks - start_ticks) * command_clock.ns_per_tick);
  ServerState* state = ServerState::tlocal();
  const size_t index = cid->StatsIndex(args);
  CommandCounters& counters = state->commands[index];
  ++counters.calls;
  counters.duration_ns += duration_ns;
  std::unique_ptr<LatencyHistogram>& latency = state->latency[index];
  if (!latency) [[unlikely]] {
    latency = std::make_unique<LatencyHistogram>();
  }
  latency->Record(duration_ns);
  counters.failed += cntx->reply_builder()->errors_sent() != errors_before;
  RecordLatencyIfNeeded(
      (cid->flags & facade::kCmdFast) ? LatencyEvent::kFastCommand : LatencyEvent::kCommand,
      duration_ns);
  if (MonitorsActive()) [[unlikely]] {
    FeedMonitors(cid, args, cntx);
  }
  int64_t threshold_us = SlowlogThresholdUs();
  // AUTH and HELLO carry passwords: they stay out of the log (other credentials are
  // redacted in it: redaction.h).
  if (threshold_us >= 0 && duration_ns >= uint64_t(threshold_us) * 1000 &&
      !(cid->flags & (facade::kCmdNoAuth | facade::kCmdSkipSlowlog))) {
    RecordSlow(cid, args, cntx, duration_ns / 1000);
  }
  return end_ticks;
}

void CountRejected(const facade::CommandId* cid, facade::CmdArgList args) {
  ++ServerState::tlocal()->commands[cid->StatsIndex(args)].rejected;
}

void InitCommandAccounting() {
  CalibrateCommandClock();
  SetSlowlogThresholdUs(FLAGS_slowlog_log_slower_than);
  SetSlowlogMaxLen(FLAGS_slowlog_max_len);
}

int64_t SlowlogThresholdUs() { return slowlog_threshold_us.load(std::memory_order_relaxed); }

void SetSlowlogThresholdUs(int64_t us) {
  slowlog_threshold_us.store(us < 0 ? -1 : us, std::memory_order_relaxed);
}

int64_t SlowlogMaxLen() { return slowlog_max_len.load(std::memory_order_relaxed); }

void SetSlowlogMaxLen(int64_t len) {
  slowlog_max_len.store(std::max<int64_t>(0, len), std::memory_order_relaxed);
}

}  // namespace damselfly
