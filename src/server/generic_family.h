// The keyspace commands: DEL, UNLINK, EXISTS, TOUCH, TYPE, EXPIRE, PEXPIRE, EXPIREAT,
// PEXPIREAT, TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST, KEYS, SCAN, RANDOMKEY, RENAME,
// RENAMENX, OBJECT.
//
// Multi-key commands (DEL, EXISTS, ...) whose keys span shards hop to each shard in turn
// and add up the counts; they are not atomic across shards until the transaction issue.
// Single-shard handlers run on the key's shard thread and must not suspend; KEYS, SCAN
// and RANDOMKEY run on the connection's fiber and visit the shards.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class GenericFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
