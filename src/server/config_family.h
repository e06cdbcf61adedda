// CONFIG GET / SET / RESETSTAT / HELP with Redis's replies and error texts, over the
// settings damselfly has. Settable at run time: maxmemory, maxmemory-policy,
// maxmemory-samples, lfu-log-factor, lfu-decay-time, cache_mode (eviction.h),
// requirepass, hz, slowlog-log-slower-than, slowlog-max-len, client-output-buffer-limit
// (a monitor or subscriber whose push queue passes its class's limits is disconnected,
// see src/facade/push_queue.h), notify-keyspace-events (keyspace_events.h), the
// collection limits. The others are reported
// and refused as immutable.
//
// Thread-safety: the handlers run on connection fibers; every settable value lives in
// an atomic or behind a lock, since any thread may read it.
#pragma once

#include <cstdint>
#include <string>

#include "src/facade/command_registry.h"

namespace damselfly {

class ConfigFamily {
 public:
  // Also applies --maxmemory and the slow log flags (see InitCommandAccounting).
  static void Register(facade::CommandRegistry* registry);
};

// maxmemory in bytes (0: no limit) and maxmemory-policy, for INFO and /metrics. Past
// maxmemory the shards evict as the policy or cache mode says (eviction.h).
uint64_t MaxMemoryBytes();
// Whether commands that add data must fail with -OOM: under noeviction, used_memory as
// the shards last published it (see EngineShardSet::UsedMemory) is past maxmemory; under
// another policy, a shard is over its share with nothing it may evict; in cache mode,
// never. Any thread.
bool OverMaxMemory();
std::string MaxMemoryPolicy();

}  // namespace damselfly
