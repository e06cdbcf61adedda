// MEMORY: USAGE (on the key's shard thread), STATS and DOCTOR (the figures INFO memory
// shows, gathered from every thread, in Redis 7.0's fields and texts), PURGE (every
// thread's mimalloc heaps give back their free pages), MALLOC-STATS (mimalloc's report).
//
// Where Redis reports jemalloc's allocated / active / resident bytes, damselfly reports
// used_memory (what the shards hold, as INFO's used_memory) for the first two and the
// process's RSS for the third; startup.allocated is 0 (used_memory counts the data only),
// and client buffers show in RSS only, as in INFO (clients.normal 0).
//
// Thread-safety: USAGE runs on its key's shard thread (the dispatcher routes it there by
// its key); the others run on the connection's fiber and wait for a hop to every thread
// (GatherStats, the purge) and to proactor 0 (the AOF's buffer).
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class MemoryFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
