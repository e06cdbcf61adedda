// WATCH bookkeeping shared by the dispatcher, transactions and MULTI/EXEC.
//
// A connection's watches live in two places: its ConnTxState lists the (db, key) pairs,
// and each key's shard maps the key to the connection's watch_dirty flag (DbSlice::Watch).
// Writes mark the flags; EXEC reads its own.
#pragma once

#include "src/facade/command_registry.h"
#include "src/facade/conn_context.h"
#include "src/server/engine_shard.h"

namespace damselfly {

// After a write command ran on `shard` (this thread's): marks the watchers of its keys.
// One branch for reads, one per key when nothing is watched.
inline void NotifyWrite(EngineShard* shard, const facade::CommandId* cid,
                        facade::CmdArgList args, DbIndex db) {
  if (!(cid->flags & facade::kCmdWrite)) return;
  DbSlice& slice = shard->db_slice();
  cid->ForEachKeyIndex(args.size(), [&](size_t index) { slice.NotifyChanged(db, args[index]); });
}

// Drops every watch of the connection (UNWATCH, EXEC, DISCARD, RESET, disconnect).
// Connection fiber; hops to the shards that hold its watches.
void UnwatchAll(facade::ConnectionContext* cntx);

}  // namespace damselfly
