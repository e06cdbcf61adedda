// ServerState: what each proactor thread keeps about the clients it serves: its live
// connections and its counters. INFO, CLIENT LIST and CLIENT KILL visit every thread
// (ProactorPool::AwaitOnAll) to read them, so no counter is shared between threads.
//
// Thread-safety: one instance per proactor thread, touched only by that thread.
#pragma once

#include <cstdint>

#include "absl/container/flat_hash_set.h"
#include "src/facade/resp_connection.h"

namespace damselfly {

struct ThreadStats {
  uint64_t commands_processed = 0;
  uint64_t connections_received = 0;
  uint64_t shard_hops = 0;       // hops to another thread's shard
  uint64_t remote_commands = 0;  // commands run in those hops (squashed ones included)
};

class ServerState {
 public:
  // This thread's state (created on first use).
  static ServerState* tlocal();

  absl::flat_hash_set<facade::RespConnection*> connections;
  ThreadStats stats;
};

}  // namespace damselfly
