// Runs command handlers and accounts for them on the executing thread: calls, time and
// failures per command (INFO commandstats, /metrics), and the slow log.
//
// Cost on the hot path: one monotonic clock read per command (a run of squashed commands
// shares the reads: each command's end is the next one's start), a few increments in a
// thread-local array indexed by CommandId::index, and a relaxed atomic load for the slow
// log threshold. No lock, no allocation unless the command is slow.
//
// Thread-safety: the functions run on any proactor thread and touch only its state;
// the settings are atomics that CONFIG SET may change from any thread.
#pragma once

#include <cstdint>

#include "src/facade/command_registry.h"
#include "src/facade/conn_context.h"

namespace damselfly {

// Monotonic nanoseconds (CLOCK_MONOTONIC, a vDSO read).
uint64_t MonotonicNs();

// Runs `handler` (cid's handler or cross-shard handler, started at start_ns) and records
// it as a call of cid; returns the time it ended.
uint64_t RunCommand(const facade::CommandId* cid, const facade::CommandHandler& handler,
                    facade::CmdArgList args, facade::ConnectionContext* cntx, uint64_t start_ns);

// A known command refused before it ran (wrong arity, not authenticated).
void CountRejected(const facade::CommandId* cid, facade::CmdArgList args);

// Reads --slowlog_log_slower_than and --slowlog_max_len; call once at start-up.
void InitSlowlogFromFlags();
// Slow log settings (CONFIG GET/SET slowlog-log-slower-than, slowlog-max-len); a
// negative threshold disables the log, 0 logs every command.
int64_t SlowlogThresholdUs();
void SetSlowlogThresholdUs(int64_t us);
int64_t SlowlogMaxLen();
void SetSlowlogMaxLen(int64_t len);

}  // namespace damselfly
