// The keyspace commands: DEL, UNLINK, EXISTS, TOUCH, TYPE, EXPIRE, PEXPIRE, EXPIREAT,
// PEXPIREAT, TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST, KEYS, SCAN, RANDOMKEY, RENAME,
// RENAMENX, COPY, OBJECT.
//
// Multi-key commands (DEL, EXISTS, RENAME, COPY...) whose keys span shards run as one VLL
// transaction (transaction.h), atomic across shards.
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
