// The commands of replication, the master's side (replication.h has the stream).
//
//   SYNC, PSYNC replid offset   a replica's request: full resync, or a continuation from
//                               the backlog (PSYNC); the connection then carries the stream
//   REPLCONF option value ...   listening-port, ip-address, capa, rdb-only: OK;
//                               ACK offset and GETACK: no reply, as in Redis
//   ROLE                        master, the stream's offset, the replicas with their ACKs
//   WAIT numreplicas timeout    until that many replicas acknowledged the writes so far
//                               (numreplicas <= 0 or inside MULTI: the count at once; timeout
//                               0: until CLIENT UNBLOCK or the client hangs up)
//
// Handlers run on the connection's fiber; the stream lives on proactor 0.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class ReplicationFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
