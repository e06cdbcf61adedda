// DUMP and RESTORE: a key's value as Redis's serialized payload (RDB value encoding,
// RDB version 10 and CRC64: rdb_save.h, rdb_load.h) and back, so that a value moves
// between redis-server and damselfly either way. RESTORE takes REPLACE, ABSTTL,
// IDLETIME and FREQ as Redis 7.0 does; FREQ is checked and then has no effect, as
// damselfly keeps no LFU counters (OBJECT FREQ answers as for a non-LFU policy).
//
// Both run on the key's shard thread; the value is rebuilt in that shard's heap.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class DumpFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
