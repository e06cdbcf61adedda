// The hash commands: HSET HSETNX HGET HMGET HMSET HDEL HLEN HEXISTS HINCRBY HINCRBYFLOAT
// HKEYS HVALS HGETALL HSTRLEN HRANDFIELD HSCAN. Each has one key and runs on its shard's
// thread. Values are hashes as hash_object.h keeps them (listpack or hashtable, Redis
// 7.0's conversion rules); writes report Redis's keyspace event names (hset, hdel, hincrby,
// hincrbyfloat), and a hash emptied by HDEL is deleted.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class HashFamily {
 public:
  // Registers the commands and the hash's TypedObject factory (RENAME, MOVE and COPY
  // across shards rebuild hashes with it).
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
