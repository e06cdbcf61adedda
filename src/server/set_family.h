// The set commands: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP, SRANDMEMBER,
// SMOVE, SINTER, SUNION, SDIFF, SINTERSTORE, SUNIONSTORE, SDIFFSTORE, SINTERCARD, SSCAN.
// Values are core::SetObject (intset, listpack or hash table, core/set_object.h), with
// the thresholds of collection_limits.h read afresh by each command.
//
// Single-key commands run on the key's shard thread. SMOVE, SINTER & co run against a
// CommandTransaction: inline when all their keys share a shard, else a read hop that
// copies the members of each source (a set's blocks belong to its shard's thread), the
// result computed on the connection's fiber, and for SMOVE and the STORE variants a
// write hop on the destination's shard. Type errors are found in the read hop, so a
// command that fails changes nothing.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class SetFamily {
 public:
  // Registers the commands and the factory that rebuilds sets moved across shards.
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
