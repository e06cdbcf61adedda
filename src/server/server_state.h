// ServerState: what each proactor thread keeps about the clients it serves and the
// commands it runs: its live connections, its counters, its slow log and its latency
// monitor samples. INFO, CLIENT LIST, CLIENT KILL, LATENCY and /metrics visit every thread
// (ProactorPool::AwaitOnAll) to read them, so no counter is shared between threads.
//
// Thread-safety: one instance per proactor thread, touched only by that thread.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "src/facade/command_registry.h"
#include "src/facade/resp_connection.h"
#include "src/server/latency_histogram.h"
#include "src/server/latency_monitor.h"

namespace damselfly {

struct ThreadStats {
  uint64_t commands_processed = 0;
  uint64_t connections_received = 0;
  uint64_t shard_hops = 0;       // hops to another thread's shard
  uint64_t remote_commands = 0;  // commands run in those hops (squashed ones included)
  // Script runs that used keys they did not declare, those that had to run again
  // whole-shard, and all whole-shard runs (script_runner.h).
  uint64_t scripts_undeclared_keys = 0;
  uint64_t scripts_rerun_whole_shard = 0;
  uint64_t scripts_whole_shard = 0;
};

// One command's figures on one thread: where it ran (a command that hopped counts on the
// shard's thread), or, for rejections, where it was refused.
struct CommandCounters {
  uint64_t calls = 0;
  uint64_t duration_ns = 0;
  uint64_t rejected = 0;  // refused before running: arity, authentication
  uint64_t failed = 0;    // ran and replied with an error
};

// A command that ran longer than --slowlog_log_slower_than (SLOWLOG GET's fields).
struct SlowLogEntry {
  uint64_t id = 0;
  int64_t unix_time_s = 0;
  uint64_t duration_us = 0;
  std::vector<std::string> args;  // already shortened as Redis does
  std::string client_addr, client_name;
};

class ServerState {
 public:
  // This thread's state (created on first use).
  static ServerState* tlocal();

  absl::flat_hash_set<facade::RespConnection*> connections;
  ThreadStats stats;
  std::array<CommandCounters, facade::CommandRegistry::kMaxCommands> commands{};
  // Per command, as `commands`; made when the command first runs on this thread (9 KiB
  // each, so only the commands in use cost memory).
  std::array<std::unique_ptr<LatencyHistogram>, facade::CommandRegistry::kMaxCommands> latency;
  std::deque<SlowLogEntry> slowlog;  // newest first, at most --slowlog_max_len
  LatencyEvents latency_events;      // the LATENCY monitor's samples of this thread
};

}  // namespace damselfly
