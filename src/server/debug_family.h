// Introspection and test-support commands: DEBUG (POPULATE, OBJECT, SLEEP, HELP) and
// MEMORY (USAGE, HELP). DEBUG runs on the connection's fiber (POPULATE launches a fiber
// on every shard and waits for them); MEMORY USAGE runs on the key's shard thread.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class DebugFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
