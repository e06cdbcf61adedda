#include "src/server/latency_family.h"

#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>

#include "helio/base/strings.h"
#include "src/facade/conn_context.h"
#include "src/server/arg_parsing.h"
#include "src/server/command_accounting.h"
#include "src/server/engine_shard.h"
#include "src/server/engine_shard_set.h"
#include "src/server/latency_monitor.h"
#include "src/server/server_state.h"
#include "src/server/server_stats.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::CommandRegistry;
using facade::ConnectionContext;
using facade::ReplyBuilder;

// Redis's graph geometry: 80 columns, 4 rows of 3 levels each.
constexpr size_t kGraphColumns = 80;
constexpr int kGraphRows = 4;
constexpr std::string_view kGraphLevels = "_o#";

// Per event, the merged series of all threads; nullopt for events without samples.
using EventSeries = std::array<std::optional<MergedLatencySeries>, kLatencyEventCount>;

EventSeries GatherEvents() {
  std::vector<LatencyEvents> per_thread(shard_set->pool()->size());
  shard_set->pool()->AwaitOnAll([&](unsigned index, helio::io::Proactor*) {
    per_thread[index] = ServerState::tlocal()->latency_events;
  });
  EventSeries merged;
  for (size_t e = 0; e < kLatencyEventCount; ++e) {
    std::vector<const LatencySeries*> series;
    for (const LatencyEvents& events : per_thread) {
      if (const LatencySeries* one = events.Find(LatencyEvent(e))) series.push_back(one);
    }
    if (!series.empty()) merged[e] = MergeLatencySeries(series);
  }
  return merged;
}

void ReplyLatest(ReplyBuilder* rb) {
  const EventSeries events = GatherEvents();
  size_t count = 0;
  for (const auto& series : events) count += series.has_value();
  rb->StartArray(count);
  for (size_t e = 0; e < kLatencyEventCount; ++e) {
    if (!events[e]) continue;
    const LatencySample& latest = events[e]->samples.back();
    rb->StartArray(4);
    rb->SendBulk(LatencyEventName(LatencyEvent(e)));
    rb->SendLong(latest.time_s);
    rb->SendLong(latest.latency_ms);
    rb->SendLong(events[e]->max_ms);
  }
}

void ReplyHistory(std::string_view name, ReplyBuilder* rb) {
  std::optional<LatencyEvent> event = FindLatencyEvent(name);
  const EventSeries events = GatherEvents();
  if (!event || !events[size_t(*event)]) return rb->SendEmptyArray();
  const std::vector<LatencySample>& samples = events[size_t(*event)]->samples;
  rb->StartArray(samples.size());
  for (const LatencySample& sample : samples) {
    rb->StartArray(2);
    rb->SendLong(sample.time_s);
    rb->SendLong(sample.latency_ms);
  }
}

// LATENCY RESET [event ...]: the number of event classes that had samples and were reset;
// names are compared case-insensitively, as Redis does here (and only here).
void ReplyReset(CmdArgList args, ReplyBuilder* rb) {
  std::array<bool, kLatencyEventCount> selected{};
  std::vector<std::optional<LatencyEvent>> named;
  if (args.size() == 2) {
    selected.fill(true);
  } else {
    for (size_t i = 2; i < args.size(); ++i) {
      std::optional<LatencyEvent> event = FindLatencyEvent(helio::AsciiStrToLower(args[i]));
      if (event) selected[size_t(*event)] = true;
    }
  }
  std::vector<std::array<bool, kLatencyEventCount>> had(shard_set->pool()->size());
  shard_set->pool()->AwaitOnAll([&](unsigned index, helio::io::Proactor*) {
    LatencyEvents& events = ServerState::tlocal()->latency_events;
    for (size_t e = 0; e < kLatencyEventCount; ++e) {
      if (selected[e]) had[index][e] = events.Reset(LatencyEvent(e));
    }
  });
  int64_t resets = 0;
  for (size_t e = 0; e < kLatencyEventCount; ++e) {
    bool any = false;
    for (const auto& thread : had) any = any || thread[e];
    resets += any;
  }
  rb->SendLong(resets);
}

// "<n>s", "<n>m", "<n>h" or "<n>d": how long ago a sample was taken.
std::string AgeLabel(int64_t elapsed_s) {
  if (elapsed_s < 60) return helio::StrCat(elapsed_s, "s");
  if (elapsed_s < 3600) return helio::StrCat(elapsed_s / 60, "m");
  if (elapsed_s < 86400) return helio::StrCat(elapsed_s / 3600, "h");
  return helio::StrCat(elapsed_s / 86400, "d");
}

// Redis's sparkline of samples [from, from + len): kGraphRows rows of bars scaled between
// the lowest and highest latency of the whole series, then a blank row, then each
// sample's age label written vertically.
void AppendGraphColumns(const std::vector<LatencySample>& samples,
                        const std::vector<std::string>& labels, size_t from, size_t len,
                        uint32_t low, uint32_t high, std::string* out) {
  const int levels = int(kGraphLevels.size()) * kGraphRows;
  const double range = high == low ? 1.0 : double(high - low);
  std::vector<int> level(len);
  for (size_t j = 0; j < len; ++j) {
    const double above_low = double(samples[from + j].latency_ms - low);
    // Redis truncates twice: the scaled value, then its ratio to the range.
    level[j] = std::clamp(int(double(int(above_low * levels)) / range), 0, levels - 1);
  }
  for (int row = 0; row < kGraphRows; ++row) {
    std::string line(len, ' ');
    for (size_t j = 0; j < len; ++j) {
      const int index = level[j] - (kGraphRows - row - 1) * int(kGraphLevels.size());
      if (index >= int(kGraphLevels.size())) {
        line[j] = '|';
      } else if (index >= 0) {
        line[j] = kGraphLevels[index];
      }
    }
    helio::StrAppend(out, line, "\n");
  }
  helio::StrAppend(out, std::string(len, ' '), "\n");
  for (size_t c = 0;; ++c) {
    std::string line(len, ' ');
    bool any = false;
    for (size_t j = 0; j < len; ++j) {
      const std::string& label = labels[from + j];
      if (c < label.size()) {
        line[j] = label[c];
        any = true;
      }
    }
    if (!any) break;
    helio::StrAppend(out, line, "\n");
  }
}

std::string RenderGraph(std::string_view name, const MergedLatencySeries& series, int64_t now_s) {
  const std::vector<LatencySample>& samples = series.samples;
  uint32_t low = samples.front().latency_ms, high = low;
  std::vector<std::string> labels;
  for (const LatencySample& sample : samples) {
    low = std::min(low, sample.latency_ms);
    high = std::max(high, sample.latency_ms);
    labels.push_back(AgeLabel(now_s - sample.time_s));
  }
  std::string out = helio::StrCat(name, " - high ", high, " ms, low ", low, " ms (all time high ",
                                  series.max_ms, " ms)\n", std::string(kGraphColumns, '-'), "\n");
  for (size_t from = 0; from < samples.size(); from += kGraphColumns) {
    if (from != 0) out += "\n";
    AppendGraphColumns(samples, labels, from, std::min(kGraphColumns, samples.size() - from), low,
                       high, &out);
  }
  return out;
}

void ReplyGraph(std::string_view name, ReplyBuilder* rb) {
  std::optional<LatencyEvent> event = FindLatencyEvent(name);
  const EventSeries events = GatherEvents();
  if (!event || !events[size_t(*event)]) {
    return rb->SendError(helio::StrCat("ERR No samples available for event '", name, "'"));
  }
  rb->SendVerbatim(RenderGraph(name, *events[size_t(*event)], std::time(nullptr)));
}

// Bytes of transparent huge pages this process maps (AnonHugePages in /proc/self/smaps):
// LATENCY DOCTOR advises against them.
uint64_t AnonHugePagesBytes() {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  uint64_t kb = 0;
  while (std::getline(smaps, line)) {
    constexpr std::string_view kField = "AnonHugePages:";
    if (line.compare(0, kField.size(), kField) != 0) continue;
    kb += std::strtoull(line.c_str() + kField.size(), nullptr, 10);
  }
  return kb * 1024;
}

// LATENCY DOCTOR: Redis's report, for the event classes damselfly records.
std::string DoctorReport() {
  const EventSeries events = GatherEvents();
  const uint64_t threshold_ms = LatencyThresholdMs();
  bool any_event = false;
  for (const auto& series : events) any_event = any_event || series.has_value();
  if (!any_event && threshold_ms == 0) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
           "instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in "
           "order to enable it. If we weren't in a deep space mission I'd suggest to take a "
           "look at https://redis.io/topics/latency-monitor.\n";
  }
  std::string report;
  bool slowlog_enable = false, slowlog_tuning = false, slowlog_inspect = false;
  bool scheduler = false, hz = false, large_objects = false, thp = false;
  int advices = 0, number = 0;
  const int64_t now_s = std::time(nullptr);
  for (size_t e = 0; e < kLatencyEventCount; ++e) {
    if (!events[e]) continue;
    if (++number == 1) {
      report +=
          "Dave, I have observed latency spikes in this Redis instance. You don't mind "
          "talking about it, do you Dave?\n\n";
    }
    const std::vector<LatencySample>& samples = events[e]->samples;
    uint64_t sum = 0;
    int64_t oldest_s = samples.front().time_s;
    for (const LatencySample& sample : samples) {
      sum += sample.latency_ms;
      oldest_s = std::min(oldest_s, sample.time_s);
    }
    const uint64_t average = sum / samples.size();
    uint64_t deviation_sum = 0;
    for (const LatencySample& sample : samples) {
      deviation_sum += uint64_t(std::abs(int64_t(average) - int64_t(sample.latency_ms)));
    }
    int64_t period_s = now_s - oldest_s;
    if (period_s == 0) period_s = 1;
    char period[64];
    std::snprintf(period, sizeof(period), "%.2f", double(period_s) / double(samples.size()));
    const LatencyEvent event = LatencyEvent(e);
    helio::StrAppend(&report, number, ". ", LatencyEventName(event), ": ", samples.size(),
                     " latency spikes (average ", average, "ms, mean deviation ",
                     deviation_sum / samples.size(), "ms, period ", period,
                     " sec). Worst all time event ", events[e]->max_ms, "ms.");
    if (event == LatencyEvent::kCommand) {
      const int64_t slowlog_us = SlowlogThresholdUs();
      if (slowlog_us < 0) {
        slowlog_enable = true;
        ++advices;
      } else if (slowlog_us / 1000 > int64_t(threshold_ms)) {
        slowlog_tuning = true;
        ++advices;
      }
      slowlog_inspect = large_objects = true;
      advices += 2;
    } else if (event == LatencyEvent::kFastCommand) {
      scheduler = true;
      ++advices;
    } else if (event == LatencyEvent::kExpireCycle) {
      hz = large_objects = true;
      advices += 2;
    }
    report += "\n";
  }
  if (AnonHugePagesBytes() > 0) {
    thp = true;
    ++advices;
  }
  if (number == 0 && advices == 0) {
    return report +
           "Dave, no latency spike was observed during the lifetime of this Redis "
           "instance, not in the slightest bit. I honestly think you ought to sit "
           "down calmly, take a stress pill, and think things over.\n";
  }
  if (advices == 0) {
    return report +
           "\nWhile there are latency events logged, I'm not able to suggest any "
           "easy fix. Please use the Redis community to get some help, providing "
           "this report in your request.\n";
  }
  report += "\nI have a few advices for you:\n\n";
  if (slowlog_enable) {
    helio::StrAppend(&report,
                     "- There are latency issues with potentially slow commands you are using. "
                     "Try to enable the Slow Log Redis feature using the command 'CONFIG SET "
                     "slowlog-log-slower-than ",
                     threshold_ms * 1000,
                     "'. If the Slow log is disabled Redis is not able to log slow commands "
                     "execution for you.\n");
  }
  if (slowlog_tuning) {
    helio::StrAppend(&report,
                     "- Your current Slow Log configuration only logs events that are slower "
                     "than your configured latency monitor threshold. Please use 'CONFIG SET "
                     "slowlog-log-slower-than ",
                     threshold_ms * 1000, "'.\n");
  }
  if (slowlog_inspect) {
    report +=
        "- Check your Slow Log to understand what are the commands you are running "
        "which are too slow to execute. Please check https://redis.io/commands/slowlog "
        "for more information.\n";
  }
  if (scheduler) {
    report +=
        "- The system is slow to execute Redis code paths not containing system calls. "
        "This usually means the system does not provide Redis CPU time to run for long "
        "periods. You should try to:\n"
        "  1) Lower the system load.\n"
        "  2) Use a computer / VM just for Redis if you are running other software in "
        "the same system.\n"
        "  3) Check if you have a \"noisy neighbour\" problem.\n"
        "  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic "
        "latency in your system.\n"
        "  5) Check if the problem is allocator-related by recompiling Redis with "
        "MALLOC=libc, if you are using Jemalloc. However this may create fragmentation "
        "problems.\n";
  }
  if (hz && EngineShard::hz() < 100) {
    report +=
        "- In order to make the Redis keys expiring process more incremental, try to "
        "set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n";
  }
  if (large_objects) {
    report +=
        "- Deleting, expiring or evicting (because of maxmemory policy) large objects "
        "is a blocking operation. If you have very large objects that are often "
        "deleted, expired, or evicted, try to fragment those objects into multiple "
        "smaller objects.\n";
  }
  if (thp) {
    report +=
        "- I detected a non zero amount of anonymous huge pages used by your process. "
        "This creates very serious latency events in different conditions, especially "
        "when Redis is persisting on disk. To disable THP support use the command 'echo "
        "never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it "
        "into /etc/rc.local so that the command will be executed again after a reboot. "
        "Note that even if you have already disabled THP, you still need to restart the "
        "Redis process to get the huge pages freed.\n";
  }
  return report;
}

// One command's entry of LATENCY HISTOGRAM: its name, then {calls, histogram_usec}.
void ReplyCommandHistogram(const std::string& name, const LatencyHistogram& histogram,
                           ReplyBuilder* rb) {
  rb->SendBulk(name);
  rb->StartMap(2);
  rb->SendBulk("calls");
  rb->SendLong(histogram.count());
  rb->SendBulk("histogram_usec");
  const std::vector<std::pair<uint64_t, uint64_t>> cdf = histogram.CumulativeUsec();
  rb->StartMap(cdf.size());
  for (const auto& [usec, count] : cdf) {
    rb->SendLong(usec);
    rb->SendLong(count);
  }
}

// LATENCY HISTOGRAM [command ...]: every command that ran since the last CONFIG RESETSTAT,
// or the named ones ("client" names its subcommands, "client|id" one of them; unknown
// names are skipped, repeated ones repeated).
void ReplyHistogram(const CommandRegistry& registry, CmdArgList args, ReplyBuilder* rb) {
  const std::vector<std::unique_ptr<LatencyHistogram>> latency = GatherLatency();
  std::vector<std::pair<std::string, uint16_t>> selected;
  auto add = [&](const std::string& name, uint16_t index) {
    if (latency[index] && latency[index]->count() > 0) selected.emplace_back(name, index);
  };
  if (args.size() == 2) {
    ForEachCommandName(registry, add);
  }
  for (size_t i = 2; i < args.size(); ++i) {
    std::string_view name = args[i];
    const size_t bar = name.find('|');
    const facade::CommandId* cid = registry.Find(name.substr(0, bar));
    if (cid == nullptr) continue;
    const std::string container = helio::AsciiStrToLower(cid->name);
    if (bar != std::string_view::npos) {
      const facade::SubcommandSpec* sub = cid->FindSubcommand(name.substr(bar + 1));
      if (sub != nullptr)
        add(helio::StrCat(container, "|", helio::AsciiStrToLower(sub->name)), sub->index);
      continue;
    }
    add(container, cid->index);
    for (const facade::SubcommandSpec& sub : cid->subcommands) {
      add(helio::StrCat(container, "|", helio::AsciiStrToLower(sub.name)), sub.index);
    }
  }
  rb->StartMap(selected.size());
  for (const auto& [name, index] : selected) ReplyCommandHistogram(name, *latency[index], rb);
}

void CmdLatency(const CommandRegistry& registry, CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view sub = args[1];  // validated by the dispatcher (see Register)
  if (ArgIs(sub, "LATEST")) return ReplyLatest(rb);
  if (ArgIs(sub, "HISTORY")) return ReplyHistory(args[2], rb);
  if (ArgIs(sub, "RESET")) return ReplyReset(args, rb);
  if (ArgIs(sub, "GRAPH")) return ReplyGraph(args[2], rb);
  if (ArgIs(sub, "DOCTOR")) return rb->SendVerbatim(DoctorReport());
  if (ArgIs(sub, "HISTOGRAM")) return ReplyHistogram(registry, args, rb);
  static constexpr std::string_view kHelp[] = {
      "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return a human readable latency analysis report.",
      "GRAPH <event>",
      "    Return an ASCII latency graph for the <event> class.",
      "HISTORY <event>",
      "    Return time-latency samples for the <event> class.",
      "LATEST",
      "    Return the latest latency samples for all events.",
      "RESET [<event> ...]",
      "    Reset latency data of one or more <event> classes.",
      "    (default: reset all data for all event classes)",
      "HISTOGRAM [COMMAND ...]",
      "    Return a cumulative distribution of latencies in the format of a histogram for "
      "the specified command names.",
      "    If no commands are specified then all histograms are replied.",
      "HELP",
      "    Prints this help.",
  };
  rb->SendSimpleStringArray(kHelp);
}

}  // namespace

void LatencyFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  InitLatencyMonitor();
  registry->Add(
      "LATENCY", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, kNoKeys, kAclSlow,
      [registry](CmdArgList args, ConnectionContext* cntx) { CmdLatency(*registry, args, cntx); },
      {{"DOCTOR", 2, kAclAdmin | kAclSlow | kAclDangerous},
       {"GRAPH", 3, kAclAdmin | kAclSlow | kAclDangerous},
       {"HISTORY", 3, kAclAdmin | kAclSlow | kAclDangerous},
       {"LATEST", 2, kAclAdmin | kAclSlow | kAclDangerous},
       {"RESET", -2, kAclAdmin | kAclSlow | kAclDangerous},
       {"HISTOGRAM", -2, kAclAdmin | kAclSlow | kAclDangerous},
       {"HELP", 2, kAclSlow}});
}

}  // namespace damselfly
