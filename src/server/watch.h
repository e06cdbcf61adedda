// WATCH bookkeeping shared by the dispatcher, transactions and MULTI/EXEC.
//
// A connection's watches live in two places: its ConnTxState lists the (db, key) pairs,
// and each key's shard maps the key to the connection's watch_dirty flag (WatchTable).
// Real changes mark the flags (the write path's events); EXEC reads its own.
#pragma once

#include "src/facade/conn_context.h"

namespace damselfly {

// Drops every watch of the connection (UNWATCH, EXEC, DISCARD, RESET, disconnect).
// Connection fiber; hops to the shards that hold its watches.
void UnwatchAll(facade::ConnectionContext* cntx);

}  // namespace damselfly
