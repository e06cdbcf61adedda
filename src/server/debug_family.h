// Introspection and test-support commands: DEBUG (POPULATE, OBJECT, DIGEST, DIGEST-VALUE,
// KEYSHARD, PROTOCOL, SLEEP, HELP...). DEBUG runs on the
// connection's fiber: POPULATE launches a fiber on every shard and waits for them;
// DIGEST sums every shard's keys in one whole-shard transaction (dataset_digest.h);
// OBJECT and DIGEST-VALUE read each key in one hop to its shard, outside any
// transaction (a debugging view, not atomic with multi-key commands).
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class DebugFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
