// The HyperLogLog commands: PFADD, PFCOUNT, PFMERGE, PFDEBUG, PFSELFTEST. An HLL is a
// string value in Redis's byte format (core/hyperloglog.h): TYPE says string, GET returns
// redis-server's bytes, and a value SET from redis-server's bytes is an HLL here.
//
// Writes change a dense value in place when it is stored as plain heap bytes (any value
// this family wrote: it stores with SetBuiltString, uncompressed and marked raw, so
// OBJECT ENCODING says raw as Redis's does); other values (sparse ones, which change
// length, and values SET by a client) are copied, changed and stored whole.
//
// PFADD and one-key PFCOUNT run on the key's shard. PFCOUNT of several keys and PFMERGE
// run against a CommandTransaction: one read hop merges each shard's keys into a
// register array (one atomic read of every shard), and PFMERGE then writes its
// destination in a second hop. Errors are found in the read hop, so a failed PFMERGE
// changes nothing; of several bad keys the first in argument order gives the error.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class HllFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
