// The commands of Redis's replication, cluster and module systems, answered as a Redis
// 7.0 master that has none of them answers: damselfly is one standalone master with no
// replicas, cluster mode off and no modules loaded (docs/architecture.md, "A standalone
// master").
//
//   ROLE                      master, offset 0, no replicas
//   WAIT numreplicas timeout  no replica ever acknowledges: 0 at once when numreplicas
//                             <= 0 or inside MULTI, else after the timeout (0: until
//                             CLIENT UNBLOCK or the client hangs up), as Redis without
//                             replicas
//   REPLICAOF / SLAVEOF       NO ONE: OK (already a master); host port: refused
//   FAILOVER                  "requires connected replicas", after Redis's parsing
//   CLUSTER *, READONLY, READWRITE, ASKING
//                             "This instance has cluster support disabled"
//   MODULE LIST / HELP        no modules; LOAD, LOADEX, UNLOAD refused
//
// Handlers run on the connection's fiber; none touches a shard.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class StandaloneFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
