// Introspection and test-support commands: DEBUG (POPULATE, OBJECT, SLEEP, HELP) and
// MEMORY (USAGE, HELP).
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class DebugFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
