// The string commands: SET, GET, GETSET, GETDEL, GETEX, SETNX, SETEX, PSETEX, APPEND,
// STRLEN, INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT, GETRANGE, SUBSTR, SETRANGE.
// Each touches one key and runs on that key's shard thread.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class StringFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
