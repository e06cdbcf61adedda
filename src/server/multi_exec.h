// MULTI, EXEC, DISCARD, WATCH, UNWATCH with Redis's semantics.
//
// MULTI makes the dispatcher queue the connection's commands (InterceptInMulti) instead
// of running them; a command refused while queuing (unknown, wrong arity, NOAUTH, not
// allowed in MULTI, and past maxmemory any command, since queuing takes memory) gets its
// error and makes EXEC fail with EXECABORT. Past maxmemory an EXEC whose queue holds a
// denyoom command is refused too, which discards the transaction (Redis's processCommand). EXEC runs the
// queue as one Transaction (transaction.h) that locks every key of every queued command,
// so the block is atomic as a whole even when its keys live on many shards; a command
// failing at run time only puts its error in EXEC's reply array. WATCH registers keys
// whose change (a write command, expiry, FLUSHDB/FLUSHALL while the key exists) makes
// the next EXEC reply nil. EXEC checks the watches after its transaction reached the head
// of every queue with the watched keys locked, so no write can slip in between the check
// and the commands.
//
// Difference from Redis: a write command that leaves a watched key unchanged (SET NX on
// an existing key, DEL of a missing key) also invalidates the watch.
//
// Thread-safety: the dispatcher hooks run on the connection's fiber.
#pragma once

#include <string_view>

#include "src/facade/command_registry.h"

namespace damselfly {

class MultiExec {
 public:
  static void Register(facade::CommandRegistry* registry);

  // Dispatcher hook for a connection with transaction state, before routing `cid`
  // (nullptr: the command failed validation and got its error). Returns true when the
  // command was handled here (queued, or refused inside MULTI).
  static bool InterceptInMulti(const facade::CommandId* cid, facade::CmdArgList args,
                               facade::ConnectionContext* cntx);

  // Folds the flags of the commands queued since MULTI into `any` (OR) and `all` (AND):
  // EXEC writes when any of them does, and is stale-safe when all of them are.
  static void QueuedFlags(facade::ConnectionContext* cntx, uint32_t* any, uint32_t* all);

  // True between MULTI and EXEC/DISCARD: commands must not be squashed into shard hops.
  static bool InMulti(facade::ConnectionContext* cntx);
  // EXEC refused before it ran (BUSY, LOADING, NOAUTH...): replies EXECABORT with
  // `error` as the reason (less an "ERR " code) and discards the transaction and the
  // watches, as Redis does, also for an EXEC outside MULTI.
  static void AbortExec(facade::ConnectionContext* cntx, std::string_view error);

  // Drops the connection's queued commands and watches.
  static void OnConnectionClose(facade::ConnectionContext* cntx);
};

class Transaction;

// Runs one command inside a running MULTI-style transaction `tx` (EXEC's, or a script's;
// null when EXEC's commands have no keys) whose locks cover the command's keys: on its
// keys' shard in one hop, on the fiber when it has none or several shards. As in Redis,
// each one counts as a call of its own: command stats, the slow log (EXEC itself stays
// out of it) and MONITOR, which shows them before the EXEC.
void RunInTransaction(const facade::CommandId* cid, facade::CmdArgList args, Transaction* tx,
                      facade::ConnectionContext* cntx);

}  // namespace damselfly
