// The list commands: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LRANGE, LINDEX, LSET,
// LINSERT, LREM, LTRIM, LPOS, LMOVE, RPOPLPUSH, LMPOP, with Redis 7.0's replies and error
// texts. Values are lists as list_object.h keeps them. Single-key commands run on the key's
// shard thread; LMOVE, RPOPLPUSH and LMPOP too when their keys share a shard, else as
// one VLL transaction (transaction.h) that checks every key before changing any.
//
// Every write goes through a DbSlice::Update and reports Redis's keyspace event name
// (lpush, rpush, lpop, rpop, lset, linsert, lrem, ltrim); a list emptied by a command is
// deleted ("del"). A push reports kSet on its key: the hook blocked pops are to wake on.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class ListFamily {
 public:
  // Registers the commands and the list factory (RegisterTypedObjectFactory), which
  // rebuilds lists moved across shards. Call once at start-up.
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
