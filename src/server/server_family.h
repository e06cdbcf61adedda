// Server commands: INFO, DBSIZE, FLUSHDB, FLUSHALL, TIME, SHUTDOWN, MONITOR, COMMAND.
// They run on the connection's fiber and visit the shards they need.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class Service;

class ServerFamily {
 public:
  static void Register(Service* service, facade::CommandRegistry* registry);
};

}  // namespace damselfly
