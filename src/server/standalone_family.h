// The commands of Redis's replica side, cluster and module systems, answered as a Redis
// 7.0 master that has none of them answers: damselfly is a master (replication_family.h
// serves its replicas) that never becomes a replica, cluster mode is off and no modules
// load (docs/architecture.md, "A master").
//
//   REPLICAOF / SLAVEOF       NO ONE: OK (already a master); host port: refused
//   FAILOVER                  "requires connected replicas" after Redis's parsing; with
//                             replicas, refused: no replica can take over
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
