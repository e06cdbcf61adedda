// Server statistics gathered from every thread, for INFO and /metrics.
//
// GatherStats runs one short task on each proactor thread (ProactorPool::AwaitOnAll):
// each copies its own counters into its slot, so nothing is locked or shared and no
// shard stops for longer than the copy.
//
// Thread-safety: GatherStats from a fiber (it waits for the threads), never from a task.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/server/memcache_family.h"
#include "src/server/server_state.h"

namespace damselfly {

// One thread's figures (or, in StatsSnapshot::total, their sum).
struct ThreadSnapshot {
  uint64_t connected_clients = 0, connections_received = 0, commands_processed = 0;
  uint64_t blocked_clients = 0;  // held back by CLIENT PAUSE or in a blocking command
  uint64_t shard_hops = 0, remote_commands = 0;
  uint64_t scripts_undeclared_keys = 0, scripts_rerun_whole_shard = 0, scripts_whole_shard = 0;
  uint64_t hits = 0, misses = 0, expired = 0, evicted = 0;
  uint64_t lazyfree_pending = 0, lazyfreed = 0;  // DbSlice::lazyfree_pending(), lazyfreed()
  uint64_t net_input_bytes = 0, net_output_bytes = 0, error_replies = 0;
  uint64_t tasks_run = 0;  // cross-thread tasks the thread ran (hops it served)
  // The event loop: sleeps in the kernel, idle spells that polling ended or gave up on.
  uint64_t loop_sleeps = 0, idle_polls_won = 0, idle_polls_lost = 0;
  // Memory: keys and values (the shard's object heap) and the tables holding them.
  uint64_t object_bytes = 0, table_bytes = 0, buckets = 0, entries = 0, inline_keys = 0;
  // Strings held LZF-compressed: how many, their length, their blocks (in object_bytes).
  uint64_t compressed_strings = 0, compressed_string_bytes = 0, compressed_block_bytes = 0;
  uint64_t keys = 0;  // over all databases: the shard's size
  bool has_shard = false;

  uint64_t used_memory() const { return object_bytes + table_bytes; }
};

struct StatsSnapshot {
  ThreadSnapshot total;
  std::vector<ThreadSnapshot> threads;                 // by proactor index
  std::vector<std::pair<uint64_t, uint64_t>> keyspace;  // per db: keys, keys with a TTL
  std::vector<std::pair<uint64_t, uint64_t>> db_tables;  // per db: main, expire table bytes
  std::vector<CommandCounters> commands;               // by CommandId::index, summed
  std::vector<std::pair<std::string, uint64_t>> errors_by_code;  // sorted by code
  McStats memcache;                                            // summed over the threads
};

StatsSnapshot GatherStats();

// Calls fn(name, counters) for every command and subcommand with calls or rejections
// in `stats`; names as commandstats shows them: "get", "config|get".
void ForEachCommandStat(const facade::CommandRegistry& registry, const StatsSnapshot& stats,
                        const std::function<void(const std::string&, const CommandCounters&)>& fn);

// Calls fn(name, index) for every command and subcommand in `registry`: names as
// commandstats shows them, index as CommandId::index (StatsIndex).
void ForEachCommandName(const facade::CommandRegistry& registry,
                        const std::function<void(const std::string&, uint16_t)>& fn);

// Every thread's latency histograms, merged per command (by CommandId::index); null for
// commands that have not run since start-up or CONFIG RESETSTAT. From a fiber.
std::vector<std::unique_ptr<LatencyHistogram>> GatherLatency();

// CONFIG RESETSTAT: zeroes the counters INFO stats/commandstats/errorstats/latencystats
// show.
void ResetStats();

// Process figures shared by INFO and /metrics.
int64_t UptimeSeconds();
uint64_t RssBytes();
uint64_t TotalSystemMemory();
// The highest used_memory seen so far, after taking `used` into account.
uint64_t UpdateUsedMemoryPeak(uint64_t used);

}  // namespace damselfly
