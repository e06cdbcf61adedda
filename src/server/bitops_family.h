// The bitmap commands on string values: SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD
// BITFIELD_RO. The bit arithmetic is core/bitops.h; this family finds the strings and
// changes them in place (PrimeValue::GetMutableBytes: a string stored packed, compressed
// or as an int is decoded once, then every later SETBIT writes its byte where it is).
// Every command but BITOP has one key and runs on its shard's thread; BITOP reads its
// sources in one hop of a multi-key transaction and writes the destination in a second,
// so it is atomic across shards. Writes report Redis's keyspace events: setbit (SETBIT,
// BITFIELD), set or del (BITOP's destination).
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class BitopsFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
