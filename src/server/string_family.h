// The string commands: SET, GET, GETSET, GETDEL, GETEX, SETNX, SETEX, PSETEX, APPEND,
// STRLEN, INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT, GETRANGE, SUBSTR, SETRANGE, MSET,
// MSETNX, MGET. Single-key commands run on the key's shard thread; MSET, MSETNX and MGET
// too when all their keys live on one shard, else as one VLL transaction (transaction.h).
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class StringFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
