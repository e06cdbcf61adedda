// CONFIG GET / SET / RESETSTAT / REWRITE / HELP with Redis's replies and error texts,
// over the settings damselfly has. Settable at run time, among others: maxmemory,
// maxmemory-policy, maxmemory-samples, lfu-log-factor, lfu-decay-time, cache_mode
// (eviction.h), requirepass, protected-mode, tcp-keepalive, hz, slowlog-*,
// client-output-buffer-limit (a monitor or subscriber whose push queue passes its class's
// limits is disconnected, see src/facade/push_queue.h), notify-keyspace-events
// (keyspace_events.h), the collection limits, save and the AOF's. The others are reported
// and refused as immutable. Redis parameters damselfly has no use for (InertParams) are
// kept as values, with the reason. CONFIG REWRITE: config_rewrite.h.
//
// Thread-safety: the handlers run on connection fibers; every settable value lives in
// an atomic or behind a lock, since any thread may read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/facade/command_registry.h"

namespace damselfly {

class ConfigFamily {
 public:
  // Also applies --maxmemory and the slow log flags (see InitCommandAccounting).
  static void Register(facade::CommandRegistry* registry);
};

// The parameters as a configuration file names them (startup_config.h). Any thread.
struct ConfigParamInfo {
  std::string_view name;       // as CONFIG GET lists it
  bool settable = false;       // CONFIG SET takes it
  std::string_view no_effect;  // for a Redis parameter damselfly has no use for: why
  bool hidden = false;         // a test knob, listed by CONFIG GET only when named
};
std::optional<ConfigParamInfo> FindConfigParam(std::string_view name);
std::vector<ConfigParamInfo> ConfigParams();  // every one, aliases too
// The name an alias stands for ("slaveof": "replicaof"), else `name`.
std::string_view CanonicalConfigName(std::string_view name);
// Whether a parameter's value is several words (save, bind, replicaof,
// client-output-buffer-limit...): a configuration file's line gives it as several
// arguments, joined by spaces. The others take one argument.
bool ConfigParamTakesWords(std::string_view name);
// The flag that sets a parameter at start-up ("databases": "dbnum"), or "" when none.
std::string ConfigFlagName(std::string_view name);
// CONFIG SET's check of `value`, without the protection CONFIG SET adds; for an immutable
// parameter, whether `value` is the value it has. "" when valid, else Redis's reason.
std::string CheckConfigParam(std::string_view name, std::string_view value);
// CONFIG SET's change. REQUIRES: a settable parameter, `value` checked.
void SetConfigParam(std::string_view name, std::string_view value);
std::string GetConfigParam(std::string_view name);

// maxmemory in bytes (0: no limit) and maxmemory-policy, for INFO and /metrics. Past
// maxmemory the shards evict as the policy or cache mode says (eviction.h).
uint64_t MaxMemoryBytes();
// Whether commands that add data must fail with -OOM: under noeviction, used_memory as
// the shards last published it (see EngineShardSet::UsedMemory) is past maxmemory; under
// another policy, a shard is over its share with nothing it may evict; in cache mode,
// never. Any thread.
bool OverMaxMemory();
std::string MaxMemoryPolicy();

// protected-mode: refuses connections from beyond the loopback while it is on and the
// default ACL user needs no password. Called when either changes.
void UpdateLoopbackOnly();

}  // namespace damselfly
