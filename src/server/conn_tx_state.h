// ConnTxState: a connection's MULTI/EXEC and WATCH state. Created on the first MULTI or
// WATCH, kept in ConnectionContext::transaction_state.
//
// Thread-safety: owned by the connection's fiber. `watch_dirty` is the exception: shard
// threads set it when a watched key changes (watch.h), and the connection reads it.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "src/facade/command_registry.h"
#include "src/facade/conn_context.h"
#include "src/server/db_slice.h"

namespace damselfly {

class Transaction;

struct ConnTxState final : facade::ConnectionContext::TransactionState {
  // The connection's state, or nullptr when it never used MULTI or WATCH.
  static ConnTxState* Find(facade::ConnectionContext* cntx) {
    return static_cast<ConnTxState*>(cntx->transaction_state.get());
  }
  // The connection's state, created when missing.
  static ConnTxState* Get(facade::ConnectionContext* cntx) {
    if (!cntx->transaction_state) cntx->transaction_state = std::make_unique<ConnTxState>();
    return Find(cntx);
  }

  struct QueuedCommand {
    const facade::CommandId* cid;
    std::vector<std::string> args;
  };

  bool in_multi = false;
  bool exec_abort = false;  // a command was refused while queuing: EXEC will fail
  std::vector<QueuedCommand> queued;

  std::vector<std::pair<DbIndex, std::string>> watched;  // WATCH order, no duplicates
  std::atomic<bool> watch_dirty{false};

  Transaction* exec_tx = nullptr;  // while EXEC runs
  bool executing = false;          // while EXEC runs its commands
  // While a script runs: the time its keys expire by (DbSlice::FrozenClock).
  int64_t script_clock_ms = 0;
  bool in_script = false;  // while a script runs (commands that behave differently there)
  // While a script runs: the keys it declared, which CLIENT TRACKING remembers when the
  // script calls a read-only command (Redis 7.0: the caller's keys, not the command's).
  facade::CmdArgList script_keys;
};

}  // namespace damselfly
