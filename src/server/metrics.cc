#include "src/server/metrics.h"

#include <gflags/gflags.h>
#include <sys/resource.h>

#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/mutex.hpp>
#include <cstdio>
#include <memory>
#include <mutex>

#include "helio/base/strings.h"
#include "src/facade/client_admission.h"
#include "src/server/main_service.h"
#include "src/server/config_family.h"
#include "src/server/connection_family.h"
#include "src/server/persistence_family.h"
#include "src/server/server_stats.h"

// 0 by default, so that a scrape always reflects every command answered before it was
// sent (as INFO does): a pipelining client is already cheap without an interval.
DEFINE_uint32(metrics_cache_ms, 0,
              "A thread answers HTTP requests for /metrics and the status page with the page "
              "it rendered less than this many milliseconds ago, so that many scrapers cost one "
              "render per interval and thread (0: only requests that arrived before that "
              "render started share it)");

namespace damselfly {

namespace {

using Clock = std::chrono::steady_clock;

// The last page a thread rendered for one route, and the render in progress. Lives on
// one thread; its fibers suspend on its mutex and condition variable.
class PageCache {
 public:
  // A page that answers a request received at `received_at`, rendering one with
  // `render` when the last is neither newer than the request nor younger than `max_age`.
  template <typename Render>
  std::shared_ptr<const std::string> Get(Clock::time_point received_at, Clock::duration max_age,
                                         const Render& render) {
    std::unique_lock lock(mutex_);
    while (true) {
      if (page_ && (started_ >= received_at || Clock::now() - started_ < max_age)) return page_;
      if (!rendering_) break;
      rendered_.wait(lock);  // that render may have started after this request came
    }
    rendering_ = true;
    const Clock::time_point started = Clock::now();
    lock.unlock();
    auto page = std::make_shared<const std::string>(render());
    lock.lock();
    page_ = page;
    started_ = started;
    rendering_ = false;
    rendered_.notify_all();
    return page;
  }

 private:
  boost::fibers::mutex mutex_;
  boost::fibers::condition_variable rendered_;
  std::shared_ptr<const std::string> page_;
  Clock::time_point started_;
  bool rendering_ = false;
};

// Writes one metric family at a time in the text exposition format.
class MetricsWriter {
 public:
  // Starts a family: its HELP and TYPE lines ("counter" or "gauge").
  void Family(std::string_view name, std::string_view type, std::string_view help) {
    helio::StrAppend(&out_, "# HELP damselfly_", name, " ", help, "\n# TYPE damselfly_", name,
                     " ", type, "\n");
    name_ = name;
  }
  // A sample of the current family; `labels` is "" or `key="value",...` (escaped).
  void Sample(std::string_view labels, double value) { SuffixedSample("", labels, value); }
  // A sample named after the family plus `suffix` (a histogram's _bucket, _sum, _count).
  void SuffixedSample(std::string_view suffix, std::string_view labels, double value) {
    helio::StrAppend(&out_, "damselfly_", name_, suffix);
    if (!labels.empty()) helio::StrAppend(&out_, "{", labels, "}");
    char buf[40];
    snprintf(buf, sizeof(buf), " %.17g\n", value);
    out_ += buf;
  }
  // A family with one unlabelled sample.
  void Single(std::string_view name, std::string_view type, std::string_view help, double value) {
    Family(name, type, help);
    Sample("", value);
  }

  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
  std::string name_;
};

// key="value" with the value escaped as the format requires.
std::string Label(std::string_view key, std::string_view value) {
  std::string out = helio::StrCat(key, "=\"");
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

double Seconds(timeval tv) { return tv.tv_sec + tv.tv_usec / 1e6; }

// A histogram bound as Prometheus clients print them: "1e-06", "2.5e-05", "0.001", "1".
std::string FormatBound(double seconds) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%g", seconds);
  return buf;
}

std::string RenderStatusPage() {
  StatsSnapshot stats = GatherStats();
  const ThreadSnapshot& t = stats.total;
  std::string rows;
  auto row = [&](std::string_view name, const auto& value) {
    helio::StrAppend(&rows, "<tr><th>", name, "</th><td>", value, "</td></tr>\n");
  };
  row("version", helio::StrCat(kDamselflyVersion, " (Redis ", kRedisCompatVersion, " compatible)"));
  row("uptime_in_seconds", UptimeSeconds());
  row("role", "master");
  row("used_memory", t.used_memory());
  row("used_memory_rss", RssBytes());
  row("connected_clients", t.connected_clients);
  row("keys", t.keys);
  row("total_commands_processed", t.commands_processed);
  row("threads", stats.threads.size());
  return helio::StrCat(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>damselfly</title></head>\n"
      "<body><h1>damselfly</h1>\n<table>\n", rows,
      "</table>\n<p><a href=\"/metrics\">/metrics</a></p></body></html>\n");
}

}  // namespace

std::string RenderMetrics(Service* service) {
  StatsSnapshot stats = GatherStats();
  const ThreadSnapshot& t = stats.total;
  MetricsWriter w;
  w.Family("instance_info", "gauge", "Version and role of this server; the value is always 1.");
  w.Sample(helio::StrCat(Label("version", kDamselflyVersion), ",",
                         Label("redis_version", kRedisCompatVersion), ",", Label("role", "master")),
           1);
  w.Single("uptime_in_seconds", "gauge", "Seconds since the server started.", UptimeSeconds());
  w.Single("connected_clients", "gauge", "Client connections open now.", t.connected_clients);
  w.Single("blocked_clients", "gauge", "Clients waiting in a blocking command.",
           t.blocked_clients);
  w.Single("memory_used_bytes", "gauge",
           "Memory the keyspace uses: keys, values and hash tables (INFO used_memory).",
           t.used_memory());
  w.Single("memory_used_peak_bytes", "gauge", "The highest memory_used_bytes observed.",
           UpdateUsedMemoryPeak(t.used_memory()));
  w.Single("memory_used_rss_bytes", "gauge", "Resident set size of the process.", RssBytes());
  w.Single("memory_max_bytes", "gauge", "The maxmemory limit; 0 means none.", MaxMemoryBytes());
  w.Single("compressed_strings", "gauge",
           "Keys and values held LZF-compressed (--compress_values).", t.compressed_strings);
  w.Single("compressed_strings_bytes", "gauge",
           "The length of the compressed strings, uncompressed, in total.",
           t.compressed_string_bytes);
  w.Single("compressed_strings_memory_bytes", "gauge",
           "The memory the compressed strings take (part of memory_used_bytes).",
           t.compressed_block_bytes);
  w.Single("commands_processed_total", "counter", "Commands received, errors included.",
           t.commands_processed);

  w.Family("commands_total", "counter", "Calls of each command that ran.");
  auto for_each_called = [&](auto&& fn) {
    ForEachCommandStat(service->registry(), stats,
                       [&](const std::string& name, const CommandCounters& c) { fn(Label("cmd", name), c); });
  };
  for_each_called([&](const std::string& label, const CommandCounters& c) { w.Sample(label, c.calls); });
  w.Family("commands_duration_seconds_total", "counter", "Time spent running each command.");
  for_each_called([&](const std::string& label, const CommandCounters& c) {
    w.Sample(label, c.duration_ns / 1e9);
  });
  w.Family("commands_rejected_calls_total", "counter",
           "Calls refused before running (wrong arity, not authenticated), per command.");
  for_each_called([&](const std::string& label, const CommandCounters& c) { w.Sample(label, c.rejected); });
  w.Family("commands_failed_calls_total", "counter", "Calls that replied with an error, per command.");
  for_each_called([&](const std::string& label, const CommandCounters& c) { w.Sample(label, c.failed); });

  // Latency per command as a Prometheus histogram, from the same histograms as INFO
  // latencystats: histogram_quantile() over rate() of these gives windowed percentiles.
  // Bounds from 100 ns to 1 s in 1-2.5-5 steps: a GET runs in well under 1 us.
  w.Family("commands_latency_seconds", "histogram",
           "Time each command took to run (counts per bound within 1/32 of the bound).");
  static constexpr double kBoundsUs[] = {0.1,  0.25, 0.5,  1,     2.5,   5,     10,    25,
                                         50,   100,  250,  500,   1000,  2500,  5000,  1e4,
                                         2.5e4, 5e4, 1e5,  2.5e5, 5e5,   1e6};
  const std::vector<std::unique_ptr<LatencyHistogram>> latency = GatherLatency();
  ForEachCommandName(service->registry(), [&](const std::string& name, uint16_t index) {
    const std::unique_ptr<LatencyHistogram>& h = latency[index];
    if (!h || h->count() == 0) return;
    const std::string cmd = Label("cmd", name);
    for (double bound_us : kBoundsUs) {
      w.SuffixedSample("_bucket", helio::StrCat(cmd, ",", Label("le", FormatBound(bound_us / 1e6))),
                       h->CountAtMost(uint64_t(bound_us * 1000)));
    }
    w.SuffixedSample("_bucket", helio::StrCat(cmd, ",", Label("le", "+Inf")), h->count());
    w.SuffixedSample("_sum", cmd, h->sum_ns() / 1e9);
    w.SuffixedSample("_count", cmd, h->count());
  });

  w.Single("keyspace_hits_total", "counter", "Key lookups that found the key.", t.hits);
  w.Single("keyspace_misses_total", "counter", "Key lookups that did not find the key.", t.misses);
  w.Single("expired_keys_total", "counter", "Keys deleted because their TTL passed.", t.expired);
  w.Single("evicted_keys_total", "counter", "Keys evicted to stay under maxmemory.", t.evicted);
  w.Family("db_keys", "gauge", "Keys in each database (db0 and every non-empty one).");
  for (size_t db = 0; db < stats.keyspace.size(); ++db) {
    if (db == 0 || stats.keyspace[db].first) w.Sample(Label("db", helio::StrCat("db", db)), stats.keyspace[db].first);
  }
  w.Family("db_keys_expiring", "gauge", "Keys with a TTL in each database.");
  for (size_t db = 0; db < stats.keyspace.size(); ++db) {
    if (db == 0 || stats.keyspace[db].first) w.Sample(Label("db", helio::StrCat("db", db)), stats.keyspace[db].second);
  }
  // Snapshots, named as redis_exporter names INFO persistence's fields.
  const PersistenceStats p = GetPersistenceStats();
  w.Single("loading_dump_file", "gauge", "1 while the start-up snapshot load runs.", p.loading);
  w.Single("rdb_changes_since_last_save", "gauge", "Keys changed since the last snapshot.",
           p.changes_since_last_save);
  w.Single("rdb_bgsave_in_progress", "gauge", "1 while a snapshot is being written.",
           p.bgsave_in_progress);
  w.Single("rdb_last_save_timestamp_seconds", "gauge",
           "Unix time of the last successful snapshot (or of the start).", p.last_save_time);
  w.Single("rdb_last_bgsave_status", "gauge", "1 when the last background save succeeded.",
           p.last_bgsave_ok);
  w.Single("rdb_last_bgsave_duration_seconds", "gauge",
           "Seconds the last background save took (-1: none yet).", p.last_bgsave_secs);
  w.Single("rdb_current_bgsave_duration_seconds", "gauge",
           "Seconds the running background save has taken (-1: none runs).",
           p.current_bgsave_secs);
  w.Single("rdb_saves_total", "counter", "Snapshots written since the start.", p.saves);
  w.Single("rdb_last_load_loaded_keys", "gauge", "Keys the last snapshot load loaded.",
           p.last_load_keys);
  w.Single("rdb_last_load_expired_keys", "gauge",
           "Keys the last snapshot load dropped because their TTL had passed.",
           p.last_load_expired);
  w.Single("net_input_bytes_total", "counter", "Bytes read from clients.", t.net_input_bytes);
  w.Single("net_output_bytes_total", "counter", "Bytes written to clients.", t.net_output_bytes);
  w.Single("connections_received_total", "counter", "Client connections accepted.",
           t.connections_received);
  w.Single("rejected_connections_total", "counter",
           "Connections to the RESP ports refused (maxclients).",
           facade::ClientAdmission::Rejected(facade::ClientProtocol::kResp));
  w.Family("errors_total", "counter", "Error replies by error code (the first word of the error).");
  for (const auto& [code, count] : stats.errors_by_code) w.Sample(Label("err", code), count);

  // The memcached port: memcached's `stats` counters, labelled as memcached_exporter
  // labels them, so that dashboards made for memcached read them with a prefix change.
  const McStats& mc = stats.memcache;
  w.Single("memcache_current_connections", "gauge", "Connections open on --memcached_port.",
           mc.curr_connections);
  w.Single("memcache_connections_total", "counter",
           "Connections accepted on --memcached_port.", mc.total_connections);
  w.Single("memcache_rejected_connections_total", "counter",
           "Connections to --memcached_port refused (maxclients).",
           facade::ClientAdmission::Rejected(facade::ClientProtocol::kMemcache));
  w.Family("memcache_commands_total", "counter",
           "memcached commands by command and outcome (memcached's stats cmd_*, *_hits, "
           "*_misses, cas_badval).");
  const std::pair<const char*, uint64_t> by_outcome[] = {
      {"command=\"get\",status=\"hit\"", mc.get_hits},
      {"command=\"get\",status=\"miss\"", mc.get_misses},
      {"command=\"set\",status=\"hit\"", mc.cmd_set},
      {"command=\"delete\",status=\"hit\"", mc.delete_hits},
      {"command=\"delete\",status=\"miss\"", mc.delete_misses},
      {"command=\"incr\",status=\"hit\"", mc.incr_hits},
      {"command=\"incr\",status=\"miss\"", mc.incr_misses},
      {"command=\"decr\",status=\"hit\"", mc.decr_hits},
      {"command=\"decr\",status=\"miss\"", mc.decr_misses},
      {"command=\"cas\",status=\"hit\"", mc.cas_hits},
      {"command=\"cas\",status=\"miss\"", mc.cas_misses},
      {"command=\"cas\",status=\"badval\"", mc.cas_badval},
      {"command=\"touch\",status=\"hit\"", mc.touch_hits},
      {"command=\"touch\",status=\"miss\"", mc.touch_misses},
      {"command=\"flush\",status=\"hit\"", mc.cmd_flush},
  };
  for (const auto& [labels, value] : by_outcome) w.Sample(labels, value);
  w.Single("memcache_items_total", "counter",
           "Items stored through --memcached_port (memcached's total_items).", mc.total_items);

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  w.Single("cpu_sys_seconds_total", "counter", "System CPU time of the process.", Seconds(usage.ru_stime));
  w.Single("cpu_user_seconds_total", "counter", "User CPU time of the process.", Seconds(usage.ru_utime));

  // Per thread: the spread between threads shows an imbalance between shards.
  auto per_thread = [&](std::string_view name, std::string_view type, std::string_view help,
                        auto value_of, bool shards_only) {
    w.Family(name, type, help);
    for (size_t i = 0; i < stats.threads.size(); ++i) {
      if (shards_only && !stats.threads[i].has_shard) continue;
      w.Sample(Label("thread", helio::StrCat(i)), value_of(stats.threads[i]));
    }
  };
  per_thread("thread_commands_processed_total", "counter",
             "Commands received by the connections of each thread.",
             [](const ThreadSnapshot& s) { return s.commands_processed; }, false);
  per_thread("thread_connected_clients", "gauge", "Client connections served by each thread.",
             [](const ThreadSnapshot& s) { return s.connected_clients; }, false);
  per_thread("thread_tasks_total", "counter",
             "Cross-thread tasks each thread ran (hops to its shard, stats gathering).",
             [](const ThreadSnapshot& s) { return s.tasks_run; }, false);
  per_thread("thread_loop_sleeps_total", "counter",
             "Times each thread's event loop slept in the kernel waiting for work.",
             [](const ThreadSnapshot& s) { return s.loop_sleeps; }, false);
  per_thread("thread_idle_polls_won_total", "counter",
             "Idle spells of each thread that ended while it polled (no sleep, no wake-up).",
             [](const ThreadSnapshot& s) { return s.idle_polls_won; }, false);
  per_thread("thread_idle_polls_lost_total", "counter",
             "Idle spells of each thread that outlasted --proactor_idle_poll_us of polling.",
             [](const ThreadSnapshot& s) { return s.idle_polls_lost; }, false);
  per_thread("thread_shard_hops_total", "counter",
             "Hops the connections of each thread made to other threads' shards.",
             [](const ThreadSnapshot& s) { return s.shard_hops; }, false);
  per_thread("shard_keys", "gauge", "Keys in each thread's shard, over all databases.",
             [](const ThreadSnapshot& s) { return s.keys; }, true);
  per_thread("shard_memory_used_bytes", "gauge", "memory_used_bytes of each thread's shard.",
             [](const ThreadSnapshot& s) { return s.used_memory(); }, true);
  per_thread("shard_keyspace_hits_total", "counter", "Key lookups that found the key, per shard.",
             [](const ThreadSnapshot& s) { return s.hits; }, true);
  return w.Take();
}

void RegisterHttpRoutes(Service* service, facade::HttpRouter* router) {
  router->Register(
      "/metrics", [service](const facade::HttpRequest&, Clock::time_point received_at) {
        static thread_local PageCache cache;
        return facade::HttpResponse{
            .content_type = "text/plain; version=0.0.4; charset=utf-8",
            .body = cache.Get(received_at, std::chrono::milliseconds(FLAGS_metrics_cache_ms),
                              [service] { return RenderMetrics(service); })};
      });
  router->Register("/", [](const facade::HttpRequest&, Clock::time_point received_at) {
    static thread_local PageCache cache;
    return facade::HttpResponse{
        .content_type = "text/html; charset=utf-8",
        .body = cache.Get(received_at, std::chrono::milliseconds(FLAGS_metrics_cache_ms),
                          RenderStatusPage)};
  });
}

}  // namespace damselfly
