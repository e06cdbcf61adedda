#include "src/server/server_stats.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>

#include "helio/base/strings.h"
#include "helio/base/time.h"
#include "src/core/compact_object.h"
#include "src/core/obj_malloc.h"
#include "src/facade/client_admission.h"
#include "src/facade/facade_stats.h"
#include "src/server/blocking_controller.h"
#include "src/server/client_pause.h"
#include "src/server/engine_shard_set.h"

DECLARE_uint32(dbnum);

namespace damselfly {

namespace {

const int64_t kStartTimeMs = helio::UnixTimeMs();
std::atomic<uint64_t> used_memory_peak{0};

void AddInto(const ThreadSnapshot& t, ThreadSnapshot* sum) {
  sum->connected_clients += t.connected_clients;
  sum->blocked_clients += t.blocked_clients;
  sum->connections_received += t.connections_received;
  sum->commands_processed += t.commands_processed;
  sum->shard_hops += t.shard_hops;
  sum->remote_commands += t.remote_commands;
  sum->scripts_undeclared_keys += t.scripts_undeclared_keys;
  sum->scripts_rerun_whole_shard += t.scripts_rerun_whole_shard;
  sum->scripts_whole_shard += t.scripts_whole_shard;
  sum->hits += t.hits;
  sum->misses += t.misses;
  sum->expired += t.expired;
  sum->evicted += t.evicted;
  sum->lazyfree_pending += t.lazyfree_pending;
  sum->lazyfreed += t.lazyfreed;
  sum->net_input_bytes += t.net_input_bytes;
  sum->net_output_bytes += t.net_output_bytes;
  sum->error_replies += t.error_replies;
  sum->tasks_run += t.tasks_run;
  sum->loop_sleeps += t.loop_sleeps;
  sum->idle_polls_won += t.idle_polls_won;
  sum->idle_polls_lost += t.idle_polls_lost;
  sum->object_bytes += t.object_bytes;
  sum->table_bytes += t.table_bytes;
  sum->buckets += t.buckets;
  sum->entries += t.entries;
  sum->inline_keys += t.inline_keys;
  sum->compressed_strings += t.compressed_strings;
  sum->compressed_string_bytes += t.compressed_string_bytes;
  sum->compressed_block_bytes += t.compressed_block_bytes;
  sum->keys += t.keys;
}

}  // namespace

StatsSnapshot GatherStats() {
  helio::io::ProactorPool* pool = shard_set->pool();
  struct PerThread {
    ThreadSnapshot snapshot;
    std::vector<std::pair<uint64_t, uint64_t>> keyspace, db_tables;
    std::vector<CommandCounters> commands;
    std::vector<std::pair<std::string, uint64_t>> errors;
    McStats memcache;
  };
  std::vector<PerThread> per_thread(pool->size());
  pool->AwaitOnAll([&](unsigned index, helio::io::Proactor* proactor) {
    PerThread& mine = per_thread[index];
    ThreadSnapshot& s = mine.snapshot;
    ServerState* state = ServerState::tlocal();
    s.connected_clients = state->connections.size();
    s.blocked_clients = ClientPause::ParkedHere() + blocking::BlockedClientsHere();
    s.connections_received = state->stats.connections_received;
    s.commands_processed = state->stats.commands_processed;
    s.shard_hops = state->stats.shard_hops;
    s.remote_commands = state->stats.remote_commands;
    s.scripts_undeclared_keys = state->stats.scripts_undeclared_keys;
    s.scripts_rerun_whole_shard = state->stats.scripts_rerun_whole_shard;
    s.scripts_whole_shard = state->stats.scripts_whole_shard;
    s.tasks_run = proactor->tasks_run();
    s.loop_sleeps = proactor->sleeps();
    s.idle_polls_won = proactor->idle_polls_won();
    s.idle_polls_lost = proactor->idle_polls_lost();
    mine.commands.assign(state->commands.begin(), state->commands.end());
    const facade::FacadeStats* facade_stats = facade::FacadeStats::tlocal();
    s.net_input_bytes = facade_stats->net_input_bytes;
    s.net_output_bytes = facade_stats->net_output_bytes;
    s.error_replies = facade_stats->error_replies;
    mine.errors.assign(facade_stats->errors_by_code.begin(), facade_stats->errors_by_code.end());
    mine.memcache = McStats::tlocal();
    EngineShard* shard = EngineShard::tlocal();
    if (!shard) return;
    s.has_shard = true;
    const DbSlice& slice = shard->db_slice();
    s.hits = slice.stats().keyspace_hits;
    s.misses = slice.stats().keyspace_misses;
    s.expired = slice.stats().expired_keys;
    s.evicted = slice.stats().evicted_keys;
    s.lazyfree_pending = slice.lazyfree_pending();
    s.lazyfreed = slice.lazyfreed();
    DbSlice::TableStats tables = slice.table_stats();
    s.object_bytes = core::ThreadObjHeapUsedBytes();
    s.table_bytes = tables.table_bytes;
    s.buckets = tables.buckets;
    s.entries = tables.entries;
    s.inline_keys = tables.inline_keys;
    const core::CompactObj::CompressionStats compressed = core::CompactObj::ThreadCompressionStats();
    s.compressed_strings = compressed.strings;
    s.compressed_string_bytes = compressed.string_bytes;
    s.compressed_block_bytes = compressed.block_bytes;
    for (DbIndex db = 0; db < slice.dbnum(); ++db) {
      mine.keyspace.emplace_back(slice.DbSize(db), slice.ExpireSize(db));
      mine.db_tables.push_back(slice.DbTableBytes(db));
      s.keys += slice.DbSize(db);
    }
  });

  StatsSnapshot out;
  out.keyspace.assign(FLAGS_dbnum, {0, 0});
  out.db_tables.assign(FLAGS_dbnum, {0, 0});
  out.commands.resize(facade::CommandRegistry::kMaxCommands);
  std::vector<std::pair<std::string, uint64_t>> errors;
  for (PerThread& t : per_thread) {
    AddInto(t.snapshot, &out.total);
    out.total.has_shard |= t.snapshot.has_shard;
    out.threads.push_back(t.snapshot);
    for (size_t db = 0; db < t.keyspace.size() && db < out.keyspace.size(); ++db) {
      out.keyspace[db].first += t.keyspace[db].first;
      out.keyspace[db].second += t.keyspace[db].second;
      out.db_tables[db].first += t.db_tables[db].first;
      out.db_tables[db].second += t.db_tables[db].second;
    }
    for (size_t i = 0; i < t.commands.size(); ++i) {
      CommandCounters& sum = out.commands[i];
      sum.calls += t.commands[i].calls;
      sum.duration_ns += t.commands[i].duration_ns;
      sum.rejected += t.commands[i].rejected;
      sum.failed += t.commands[i].failed;
    }
    errors.insert(errors.end(), t.errors.begin(), t.errors.end());
    out.memcache.Add(t.memcache);
  }
  std::sort(errors.begin(), errors.end());
  for (auto& [code, count] : errors) {
    if (!out.errors_by_code.empty() && out.errors_by_code.back().first == code) {
      out.errors_by_code.back().second += count;
    } else {
      out.errors_by_code.emplace_back(std::move(code), count);
    }
  }
  return out;
}

void ForEachCommandName(const facade::CommandRegistry& registry,
                        const std::function<void(const std::string&, uint16_t)>& fn) {
  registry.ForEach([&](const facade::CommandId& cid) {
    std::string name = helio::AsciiStrToLower(cid.name);
    fn(name, cid.index);
    for (const facade::SubcommandSpec& sub : cid.subcommands) {
      fn(helio::StrCat(name, "|", helio::AsciiStrToLower(sub.name)), sub.index);
    }
  });
}

void ForEachCommandStat(const facade::CommandRegistry& registry, const StatsSnapshot& stats,
                        const std::function<void(const std::string&, const CommandCounters&)>& fn) {
  ForEachCommandName(registry, [&](const std::string& name, uint16_t index) {
    const CommandCounters& c = stats.commands[index];
    if (c.calls || c.rejected || c.failed) fn(name, c);
  });
}

std::vector<std::unique_ptr<LatencyHistogram>> GatherLatency() {
  helio::io::ProactorPool* pool = shard_set->pool();
  // Copies of the histograms a thread has, with their command indexes.
  using Copies = std::vector<std::pair<size_t, LatencyHistogram>>;
  std::vector<Copies> per_thread(pool->size());
  pool->AwaitOnAll([&](unsigned index, helio::io::Proactor*) {
    const ServerState* state = ServerState::tlocal();
    for (size_t i = 0; i < state->latency.size(); ++i) {
      if (state->latency[i]) per_thread[index].emplace_back(i, *state->latency[i]);
    }
  });
  std::vector<std::unique_ptr<LatencyHistogram>> merged(facade::CommandRegistry::kMaxCommands);
  for (const Copies& copies : per_thread) {
    for (const auto& [i, histogram] : copies) {
      if (!merged[i]) merged[i] = std::make_unique<LatencyHistogram>();
      merged[i]->Merge(histogram);
    }
  }
  return merged;
}

void ResetStats() {
  shard_set->pool()->AwaitOnAll([](unsigned, helio::io::Proactor*) {
    ServerState* state = ServerState::tlocal();
    state->stats.commands_processed = 0;
    state->stats.connections_received = 0;
    state->stats.shard_hops = 0;
    state->stats.remote_commands = 0;
    state->stats.scripts_undeclared_keys = 0;
    state->stats.scripts_rerun_whole_shard = 0;
    state->stats.scripts_whole_shard = 0;
    state->commands.fill(CommandCounters{});
    for (auto& latency : state->latency) latency.reset();
    facade::FacadeStats* facade_stats = facade::FacadeStats::tlocal();
    facade_stats->net_input_bytes = facade_stats->net_output_bytes = 0;
    facade_stats->ResetErrors();
    if (EngineShard* shard = EngineShard::tlocal()) shard->db_slice().ResetStats();
  });
  used_memory_peak.store(0, std::memory_order_relaxed);
  facade::ClientAdmission::ResetRejected(facade::ClientProtocol::kResp);
}

int64_t UptimeSeconds() { return (helio::UnixTimeMs() - kStartTimeMs) / 1000; }

uint64_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

uint64_t TotalSystemMemory() { return uint64_t(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE); }

uint64_t UpdateUsedMemoryPeak(uint64_t used) {
  uint64_t peak = used_memory_peak.load(std::memory_order_relaxed);
  while (used > peak && !used_memory_peak.compare_exchange_weak(peak, used)) {
  }
  return std::max(peak, used);
}

}  // namespace damselfly
