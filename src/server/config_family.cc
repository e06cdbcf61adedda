#include "src/server/acl_family.h"
#include "src/server/acl_users.h"
#include "src/server/aof.h"
#include "src/server/aof_writer.h"
#include "src/server/tracking.h"
#include "src/server/config_family.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "helio/base/strings.h"
#include "src/core/glob_matcher.h"
#include "src/facade/client_admission.h"
#include "src/facade/client_connection.h"
#include "src/facade/error.h"
#include "src/facade/push_queue.h"
#include "src/server/arg_parsing.h"
#include "src/server/command_accounting.h"
#include "src/server/config_rewrite.h"
#include "src/server/connection_family.h"
#include "src/server/engine_shard.h"
#include "src/server/engine_shard_set.h"
#include "src/server/lazy_free.h"
#include "src/server/eviction.h"
#include "src/server/keyspace_events.h"
#include "src/server/persistence_family.h"
#include "src/server/replica.h"
#include "src/server/replication.h"
#include "src/server/latency_monitor.h"
#include "src/server/open_files_limit.h"
#include "src/server/cgroup_limits.h"
#include "src/server/collection_limits.h"
#include "src/server/server_stats.h"
#include "src/server/startup_config.h"
#include "src/server/script_runner.h"

DEFINE_string(maxmemory, "0",
              "Memory limit (e.g. 4gb): past it, keys are evicted as --maxmemory_policy or "
              "--cache_mode say; with noeviction, commands that add data get -OOM. 0: none; "
              "left at its default inside a container with a memory limit (cgroup), 90% of "
              "that limit, leaving room for connection buffers and the process itself");
DEFINE_string(maxmemory_policy, "noeviction",
              "What to do past maxmemory (Redis's maxmemory-policy): noeviction (writes get "
              "-OOM), allkeys-lru, allkeys-lfu, allkeys-random, volatile-lru, volatile-lfu, "
              "volatile-random, volatile-ttl");
DEFINE_bool(cache_mode, false,
            "Run as a cache: past maxmemory, evict any key (of the buckets a write lands "
            "in, the least often used lately, a count that fades while the key is idle, so "
            "that scans do not flush the hot set and a hot set that moves gets in) instead "
            "of the maxmemory-policy; writes never get -OOM");
DEFINE_uint32(maxmemory_samples, 5, "Keys the LRU, LFU and TTL policies sample per eviction");
DEFINE_uint32(lfu_log_factor, 10, "How slowly LFU counters grow (Redis's lfu-log-factor)");
DEFINE_uint32(lfu_decay_time, 1,
              "Minutes per decrement of an idle key's LFU counter (Redis's lfu-decay-time; "
              "0: never)");
DEFINE_bool(lazyfree_lazy_user_del, false,
            "DEL frees a large value after its reply, in steps, as UNLINK does (Redis's "
            "lazyfree-lazy-user-del)");
DEFINE_bool(lazyfree_lazy_user_flush, false,
            "FLUSHALL and FLUSHDB without SYNC or ASYNC run as ASYNC (Redis's "
            "lazyfree-lazy-user-flush; SCRIPT FLUSH and FUNCTION FLUSH free at once either way)");
DEFINE_bool(lazyfree_lazy_expire, false,
            "A large value whose key expires is freed after, in steps (Redis's "
            "lazyfree-lazy-expire)");
DEFINE_bool(lazyfree_lazy_eviction, false,
            "A large value that maxmemory evicts is freed after, in steps (Redis's "
            "lazyfree-lazy-eviction)");
DEFINE_string(client_output_buffer_limit,
              "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
              "Redis's client-output-buffer-limit: <class> <hard> <soft> <soft seconds>... for "
              "the classes normal, replica (slave) and pubsub; a subscriber or monitor whose "
              "unsent output passes its hard limit, or stays over its soft limit that long, is "
              "disconnected (0: no limit)");
DECLARE_uint32(port);
DECLARE_string(bind);
DECLARE_uint32(dbnum);
DECLARE_int32(tcp_backlog);
DECLARE_uint64(proto_max_bulk_len);
DECLARE_bool(enable_protected_configs);

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

std::atomic<uint64_t> maxmemory_bytes{0};
// protected-mode: off by default, unlike Redis (as its Docker image runs it), so that a
// server started without a configuration file serves other machines as it always did.
std::atomic<bool> protected_mode{false};

// Protected mode holds while it is on and the default user has no password.


// Checks `value` for a parameter; returns the reason it is refused, or "" when valid.
// With apply, also makes it the parameter's value (only called once all are valid).
using Setter = std::function<std::string(std::string_view value, bool apply)>;

struct ConfigParam {
  std::string_view name;
  std::function<std::string()> get;
  Setter set;  // nullptr: immutable
  bool hidden = false;  // a test knob: CONFIG GET lists it only when named, as Redis
  // CONFIG SET refuses it unless --enable_protected_configs (a configuration file may set
  // it), as Redis's protected configs.
  bool protected_config = false;
  // For a Redis parameter damselfly has no use for: why. CONFIG GET shows the value set,
  // CONFIG SET checks it as Redis does; setting it in a configuration file says why it
  // changes nothing.
  std::string_view no_effect = {};
  // Set only at start-up (a configuration file): CONFIG SET refuses it as immutable, as
  // Redis does.
  bool startup_only = false;
};

std::string RangeError(int64_t min, int64_t max) {
  return helio::StrCat("argument must be between ", min, " and ", max, " inclusive");
}

// A yes/no parameter; `store` applies it.
Setter YesNoSetter(std::function<void(bool)> store) {
  return [=](std::string_view value, bool apply) -> std::string {
    const bool yes = helio::EqualsIgnoreCase(value, "yes");
    if (!yes && !helio::EqualsIgnoreCase(value, "no")) return "argument must be 'yes' or 'no'";
    if (apply) store(yes);
    return "";
  };
}

// A yes/no field of LazyFreeConfig.
ConfigParam LazyFreeParam(const char* name, bool LazyFreeConfig::*field) {
  return {name, [field] { return std::string(LoadLazyFreeConfig().*field ? "yes" : "no"); },
          YesNoSetter([field](bool on) {
            LazyFreeConfig config = LoadLazyFreeConfig();
            config.*field = on;
            StoreLazyFreeConfig(config);
          })};
}

// An integer parameter within [min, max]; `store` applies it.
Setter IntegerSetter(int64_t min, int64_t max, std::function<void(int64_t)> store) {
  return [=](std::string_view value, bool apply) -> std::string {
    std::optional<int64_t> parsed = ParseInt64(value);
    if (!parsed) return "argument couldn't be parsed into an integer";
    if (*parsed < min || *parsed > max) return RangeError(min, max);
    if (apply) store(*parsed);
    return "";
  };
}

// A parameter over one of the collection limits (collection_limits.h), within [min, max].
template <typename T>
ConfigParam LimitParam(std::string_view name, std::atomic<T>* value, int64_t min, int64_t max) {
  return {name, [value] { return helio::StrCat(value->load(std::memory_order_relaxed)); },
          IntegerSetter(min, max, [value](int64_t v) { value->store(T(v), std::memory_order_relaxed); })};
}

// A collection limit in bytes that takes Redis's memory units ("3kb"), within [0, 2^63).
ConfigParam MemoryLimitParam(std::string_view name, std::atomic<uint64_t>* value) {
  return {name, [value] { return helio::StrCat(value->load(std::memory_order_relaxed)); },
          [value](std::string_view text, bool apply) -> std::string {
            std::optional<uint64_t> bytes = ParseMemoryValue(text);
            if (!bytes) return "argument must be a memory value";
            if (*bytes > uint64_t(std::numeric_limits<int64_t>::max())) {
              return RangeError(0, std::numeric_limits<int64_t>::max());
            }
            if (apply) value->store(*bytes, std::memory_order_relaxed);
            return "";
          }};
}

// A value CONFIG SET stores and CONFIG GET shows, for a parameter without effect.
class StoredValue {
 public:
  explicit StoredValue(std::string_view initial) : value_(initial) {}
  std::string Get() const {
    std::lock_guard lock(mu_);
    return value_;
  }
  void Set(std::string_view value) {
    std::lock_guard lock(mu_);
    value_ = std::string(value);
  }

 private:
  mutable std::mutex mu_;
  std::string value_;
};

// What a value of an inert parameter must be (`check`: Redis's refusal, or "" when
// valid), and whether it is a word kept in lower case ("YES" is shown as "yes").
struct ValueCheck {
  std::function<std::string(std::string_view)> check;
  bool fold_case = true;
};

ValueCheck YesNo() {
  return {[](std::string_view value) -> std::string {
    return helio::EqualsIgnoreCase(value, "yes") || helio::EqualsIgnoreCase(value, "no")
               ? ""
               : "argument must be 'yes' or 'no'";
  }};
}

ValueCheck Integer(int64_t min, int64_t max) {
  return {[=](std::string_view value) -> std::string {
    std::optional<int64_t> parsed = ParseInt64(value);
    if (!parsed) return "argument couldn't be parsed into an integer";
    return *parsed < min || *parsed > max ? RangeError(min, max) : "";
  }};
}

ValueCheck OneOf(std::vector<std::string_view> choices) {
  return {[=](std::string_view value) -> std::string {
    for (std::string_view choice : choices) {
      if (helio::EqualsIgnoreCase(value, choice)) return "";
    }
    std::string list;
    for (std::string_view choice : choices) {
      helio::StrAppend(&list, list.empty() ? "" : ", ", choice);
    }
    return helio::StrCat("argument(s) must be one of the following: ", list);
  }};
}

ValueCheck AnyText() {
  return {[](std::string_view) { return std::string(); }, /*fold_case=*/false};
}

// A Redis parameter that changes nothing here, and why (docs/architecture.md,
// "Configuration").
ConfigParam InertParam(std::string_view name, std::string_view initial, ValueCheck check,
                       std::string_view why, bool startup_only = false) {
  auto stored = std::make_shared<StoredValue>(initial);
  return {name, [stored] { return stored->Get(); },
          [stored, check](std::string_view value, bool apply) -> std::string {
            std::string error = check.check(value);
            if (error.empty() && apply) {
              stored->Set(check.fold_case ? helio::AsciiStrToLower(value) : std::string(value));
            }
            return error;
          },
          false, false, why, startup_only};
}

// One that Redis sets only at start-up.
ConfigParam StartupInertParam(std::string_view name, std::string_view initial, ValueCheck check,
                              std::string_view why) {
  return InertParam(name, initial, std::move(check), why, /*startup_only=*/true);
}

ConfigParam Renamed(ConfigParam param, std::string_view name) {
  param.name = name;
  return param;
}

// Redis 7.0 parameters (those of its default redis.conf and a few more) that damselfly
// accepts so that an existing configuration loads, but has no use for: the work they
// tune is not done here, or is done another way.
std::vector<ConfigParam> InertParams() {
  constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  constexpr std::string_view kNoFork =
      "damselfly never forks: snapshots are taken by the shards in place";
  const ConfigParam priority =
      InertParam("replica-priority", "100", Integer(0, kMaxInt),
                 "for Redis Sentinel, which damselfly does not serve; INFO shows 100");
  return {
      InertParam("activerehashing", "yes", YesNo(),
                 "Dash tables grow one segment at a time; there is no rehash to pace"),
      StartupInertParam("always-show-logo", "no", YesNo(), "damselfly prints no logo"),
      StartupInertParam("set-proc-title", "yes", YesNo(), "the process title is left as started"),
      InertParam("proc-title-template", "{title} {listen-addr} {server-mode}", AnyText(),
                 "the process title is left as started"),
      InertParam("dynamic-hz", "yes", YesNo(), "each shard runs hz cycles a second"),
      InertParam("jemalloc-bg-thread", "yes", YesNo(),
                 "damselfly allocates with mimalloc and returns memory every "
                 "--memory_release_ms"),
      StartupInertParam("disable-thp", "yes", YesNo(), kNoFork),
      InertParam("oom-score-adj", "no", OneOf({"no", "yes", "relative", "absolute"}),
                 "damselfly leaves its OOM score as the system sets it"),
      InertParam("oom-score-adj-values", "0 200 800", AnyText(),
                 "damselfly leaves its OOM score as the system sets it"),
      InertParam("no-appendfsync-on-rewrite", "no", YesNo(),
                 "the AOF writer thread keeps appendfsync's policy during rewrites"),
      InertParam("aof-rewrite-incremental-fsync", "yes", YesNo(),
                 "a rewrite's base is written as a snapshot, fsynced once at its end"),
      InertParam("rdb-save-incremental-fsync", "yes", YesNo(),
                 "a snapshot is fsynced once at its end"),
      InertParam("rdb-del-sync-files", "no", YesNo(),
                 "the files of replicas' full syncs are always deleted after the sync"),
      InertParam("repl-diskless-sync", "yes", YesNo(),
                 "a full sync's snapshot always goes through a file in dir"),
      InertParam("repl-diskless-sync-delay", "5", Integer(0, kMaxInt),
                 "a full sync's snapshot always goes through a file in dir"),
      InertParam("repl-diskless-sync-max-replicas", "0", Integer(0, kMaxInt),
                 "a full sync's snapshot always goes through a file in dir"),
      InertParam("repl-diskless-load", "disabled", OneOf({"disabled", "on-empty-db", "swapdb"}),
                 "a replica always loads its master's snapshot from a file"),
      InertParam("repl-disable-tcp-nodelay", "no", YesNo(),
                 "the stream is sent as the merge fiber batches it"),
      priority,
      Renamed(priority, "slave-priority"),  // the same value under Redis's old name
      InertParam("replica-lazy-flush", "no", YesNo(),
                 "a replica empties its databases in one hop before loading"),
      InertParam("lazyfree-lazy-server-del", "no", YesNo(),
                 "values the server deletes are freed at once"),
      StartupInertParam("io-threads", "1", Integer(1, 128),
                 "damselfly's threads are --proactor_threads, one per core by default"),
      StartupInertParam("io-threads-do-reads", "no", YesNo(),
                 "damselfly's threads are --proactor_threads, one per core by default"),
      InertParam("crash-log-enabled", "yes", YesNo(), "a crash prints its stack trace"),
      InertParam("crash-memcheck-enabled", "yes", YesNo(), "a crash prints its stack trace"),
      InertParam("active-expire-effort", "1", Integer(1, 10),
                 "each shard's expiry cycle samples as it does"),
      InertParam("maxmemory-eviction-tenacity", "10", Integer(0, 100),
                 "eviction runs as writes land in full buckets (eviction.h)"),
      InertParam("activedefrag", "no", YesNo(), "mimalloc's pages are not defragmented"),
      InertParam("lua-replicate-commands", "yes", OneOf({"yes"}),
                 "scripts are always replicated as their effects"),
      StartupInertParam("enable-debug-command", "yes", OneOf({"yes", "no", "local"}),
                 "DEBUG is always offered"),
      StartupInertParam("enable-module-command", "no", OneOf({"yes", "no", "local"}),
                 "modules are not offered"),
      StartupInertParam("syslog-enabled", "no", OneOf({"no"}),
                 "damselfly logs to stderr or logfile, not to syslog"),
      StartupInertParam("syslog-ident", "redis", AnyText(), "damselfly does not log to syslog"),
      StartupInertParam("syslog-facility", "local0", AnyText(), "damselfly does not log to syslog"),
      StartupInertParam("cluster-enabled", "no", OneOf({"no"}), "Redis Cluster is not offered"),
      StartupInertParam("unixsocket", "", OneOf({""}), "Unix sockets are not offered: use TCP"),
      StartupInertParam("unixsocketperm", "0", AnyText(), "Unix sockets are not offered: use TCP"),
      InertParam("tls-port", "0", OneOf({"0"}), "TLS is not offered"),
      InertParam("replica-announce-ip", "", AnyText(),
                 "a replica announces the address its master sees"),
      InertParam("replica-announce-port", "0", Integer(0, 65535),
                 "a replica announces its --port"),
      InertParam("replica-announced", "yes", YesNo(), "for Redis Sentinel"),
      InertParam("shutdown-timeout", "10", Integer(0, kMaxInt),
                 "SHUTDOWN does not wait for replicas to catch up"),
  };
}

// The collection limits under their Redis 7 names and the Redis 6 (*-ziplist-*) aliases,
// which CONFIG GET lists too, as Redis 7.0 does.
std::vector<ConfigParam> CollectionLimitParams() {
  using namespace collection_limits_internal;
  constexpr int64_t kMaxLong = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMinInt = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
  return {
      LimitParam("list-max-listpack-size", &list_max_listpack_size, kMinInt, kMaxInt),
      LimitParam("list-max-ziplist-size", &list_max_listpack_size, kMinInt, kMaxInt),
      LimitParam("list-compress-depth", &list_compress_depth, 0, kMaxInt),
      LimitParam("hash-max-listpack-entries", &hash_max_listpack_entries, 0, kMaxLong),
      LimitParam("hash-max-ziplist-entries", &hash_max_listpack_entries, 0, kMaxLong),
      LimitParam("hash-max-listpack-value", &hash_max_listpack_value, 0, kMaxLong),
      LimitParam("hash-max-ziplist-value", &hash_max_listpack_value, 0, kMaxLong),
      LimitParam("set-max-intset-entries", &set_max_intset_entries, 0, kMaxLong),
      LimitParam("set-max-listpack-entries", &set_max_listpack_entries, 0, kMaxLong),
      LimitParam("set-max-listpack-value", &set_max_listpack_value, 0, kMaxLong),
      LimitParam("zset-max-listpack-entries", &zset_max_listpack_entries, 0, kMaxLong),
      LimitParam("zset-max-ziplist-entries", &zset_max_listpack_entries, 0, kMaxLong),
      LimitParam("zset-max-listpack-value", &zset_max_listpack_value, 0, kMaxLong),
      LimitParam("zset-max-ziplist-value", &zset_max_listpack_value, 0, kMaxLong),
      LimitParam("stream-node-max-bytes", &stream_node_max_bytes, 0, kMaxLong),
      LimitParam("stream-node-max-entries", &stream_node_max_entries, 0, kMaxLong),
      MemoryLimitParam("hll-sparse-max-bytes", &hll_sparse_max_bytes),
  };
}

// client-output-buffer-limit as Redis writes it: "normal 0 0 0 slave ... pubsub ...".
std::string OutputBufferLimits() {
  using facade::ClientClass;
  std::string text;
  for (auto [cls, name] : {std::pair{ClientClass::kNormal, "normal"},
                           std::pair{ClientClass::kReplica, "slave"},
                           std::pair{ClientClass::kPubSub, "pubsub"}}) {
    facade::OutputBufferLimit limit = facade::GetOutputBufferLimit(cls);
    helio::StrAppend(&text, text.empty() ? "" : " ", name, " ", limit.hard_bytes, " ",
                     limit.soft_bytes, " ", limit.soft_seconds);
  }
  return text;
}

// Parses "<class> <hard> <soft> <seconds>..." (memory units allowed, as Redis's); with
// apply, sets the classes given. Returns Redis's reason for a refusal, or "".
std::string SetOutputBufferLimits(std::string_view value, bool apply) {
  using facade::ClientClass;
  std::vector<std::string_view> words = helio::SplitAny(value, " \t");
  if (words.size() % 4 != 0) return "Wrong number of arguments in buffer limit configuration.";
  std::vector<std::pair<ClientClass, facade::OutputBufferLimit>> limits;
  for (size_t i = 0; i < words.size(); i += 4) {
    ClientClass cls;
    if (ArgIs(words[i], "NORMAL")) {
      cls = ClientClass::kNormal;
    } else if (ArgIs(words[i], "SLAVE") || ArgIs(words[i], "REPLICA")) {
      cls = ClientClass::kReplica;
    } else if (ArgIs(words[i], "PUBSUB")) {
      cls = ClientClass::kPubSub;
    } else {
      return "Invalid client class specified in buffer limit configuration.";
    }
    std::optional<uint64_t> hard = ParseMemoryValue(words[i + 1]);
    std::optional<uint64_t> soft = ParseMemoryValue(words[i + 2]);
    std::optional<int64_t> seconds = ParseInt64(words[i + 3]);
    if (!hard || !soft || !seconds || *seconds < 0) {
      return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
    }
    limits.emplace_back(cls, facade::OutputBufferLimit{*hard, *soft, uint64_t(*seconds)});
  }
  if (apply) {
    for (const auto& [cls, limit] : limits) facade::SetOutputBufferLimit(cls, limit);
  }
  return "";
}

// maxclients: a raise must fit the open-file limit (raised if it can be); lowering it
// closes nobody, as in Redis.
std::string SetMaxClients(std::string_view value, bool apply) {
  std::optional<int64_t> parsed = ParseInt64(value);
  if (!parsed) return "argument couldn't be parsed into an integer";
  if (*parsed < 1 || *parsed > int64_t(UINT32_MAX)) return RangeError(1, UINT32_MAX);
  const uint64_t max_clients = uint64_t(*parsed);
  // Before start-up (a configuration file) FitMaxClientsAtStartup checks it instead.
  if (max_clients > facade::ClientAdmission::MaxClients() && shard_set != nullptr) {
    uint64_t fitting = FitMaxClients(max_clients, ReservedFds(shard_set->pool()->size()));
    if (fitting < max_clients) {
      return helio::StrCat(
          "The operating system is not able to handle the specified number of clients, try "
          "with ",
          fitting);
    }
  }
  if (apply) facade::ClientAdmission::SetMaxClients(max_clients);
  return "";
}

// A parameter of the eviction configuration (eviction.h): `store` changes a copy.
Setter EvictionSetter(int64_t min, int64_t max, void (*store)(EvictionConfig*, int64_t)) {
  return IntegerSetter(min, max, [store](int64_t value) {
    EvictionConfig config = LoadEvictionConfig();
    store(&config, value);
    StoreEvictionConfig(config);
  });
}

const std::vector<ConfigParam>& Params() {
  constexpr int64_t kMaxLong = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMinQueryBufferLimit = 1 << 20;  // Redis's minimum
  static std::vector<ConfigParam> params = {
      {"maxmemory", [] { return helio::StrCat(MaxMemoryBytes()); },
       [](std::string_view value, bool apply) -> std::string {
         std::optional<uint64_t> bytes = ParseMemoryValue(value);
         if (!bytes) return "argument must be a memory value";
         if (apply) maxmemory_bytes.store(*bytes, std::memory_order_relaxed);
         return "";
       }},
      {"maxmemory-policy", [] { return MaxMemoryPolicy(); },
       [](std::string_view value, bool apply) -> std::string {
         std::optional<EvictionPolicy> policy = ParseEvictionPolicy(value);
         if (!policy) {
           return helio::StrCat("argument(s) must be one of the following: ",
                                EvictionPolicyChoices());
         }
         if (apply) {
           EvictionConfig config = LoadEvictionConfig();
           config.policy = *policy;
           StoreEvictionConfig(config);
         }
         return "";
       }},
      {"maxmemory-samples", [] { return helio::StrCat(LoadEvictionConfig().samples); },
       EvictionSetter(1, std::numeric_limits<int32_t>::max(),
                      [](EvictionConfig* c, int64_t v) { c->samples = uint32_t(v); })},
      // Redis 7's client eviction is not offered: its off value, which CONFIG SET may set
      // again, and nothing else (client-output-buffer-limit and the query buffer limit
      // bound clients instead).
      {"maxmemory-clients", [] { return std::string("0"); },
       [](std::string_view value, bool apply) -> std::string {
         std::optional<uint64_t> bytes = ParseMemoryValue(value);
         if ((bytes && *bytes == 0) || value == "0%") return "";
         return "client eviction is not offered: maxmemory-clients stays 0";
       }},
      // The process (startup_config.h): set in a configuration file or on the command line.
      {"daemonize", [] { return std::string(Daemonized() ? "yes" : "no"); }, nullptr},
      {"pidfile", PidFilePath, nullptr},
      {"logfile", LogFilePath, nullptr},
      {"loglevel", LogLevelName, SetLogLevel},
      {"supervised", SupervisedMode, nullptr},
      {"lfu-log-factor", [] { return helio::StrCat(LoadEvictionConfig().lfu_log_factor); },
       EvictionSetter(0, std::numeric_limits<int32_t>::max(),
                      [](EvictionConfig* c, int64_t v) { c->lfu_log_factor = uint32_t(v); })},
      {"lfu-decay-time", [] { return helio::StrCat(LoadEvictionConfig().lfu_decay_minutes); },
       EvictionSetter(0, std::numeric_limits<int32_t>::max(),
                      [](EvictionConfig* c, int64_t v) { c->lfu_decay_minutes = uint32_t(v); })},
      // damselfly's own (--cache_mode): overrides maxmemory-policy (eviction.h).
      {"cache_mode", [] { return std::string(LoadEvictionConfig().cache_mode ? "yes" : "no"); },
       YesNoSetter([](bool on) {
         EvictionConfig config = LoadEvictionConfig();
         config.cache_mode = on;
         StoreEvictionConfig(config);
       })},
      // lazy_free.h; the shards take expire and eviction at their next RefreshEviction.
      LazyFreeParam("lazyfree-lazy-user-del", &LazyFreeConfig::user_del),
      LazyFreeParam("lazyfree-lazy-user-flush", &LazyFreeConfig::user_flush),
      LazyFreeParam("lazyfree-lazy-expire", &LazyFreeConfig::expire),
      LazyFreeParam("lazyfree-lazy-eviction", &LazyFreeConfig::eviction),
      {"requirepass", [] { return RequirePass(); },
       [](std::string_view value, bool apply) -> std::string {
         if (apply) SetRequirePass(value);  // also protected-mode's condition
         return "";
       }},
      // ACL users (acl_users.h); the file is read at start-up and by ACL LOAD.
      {"aclfile", [] { return AclFile(); }, nullptr},
      {"acl-pubsub-default",
       [] { return std::string(AclPubsubDefault() ? "allchannels" : "resetchannels"); },
       [](std::string_view value, bool apply) -> std::string {
         const bool all = helio::EqualsIgnoreCase(value, "allchannels");
         if (!all && !helio::EqualsIgnoreCase(value, "resetchannels")) {
           return "argument(s) must be one of the following: allchannels, resetchannels";
         }
         if (apply) SetAclPubsubDefault(all);
         return "";
       }},
      {"acllog-max-len", [] { return helio::StrCat(AclLogMaxLen()); },
       IntegerSetter(0, kMaxLong, [](int64_t value) { SetAclLogMaxLen(size_t(value)); })},
      {"protected-mode", [] { return std::string(protected_mode.load() ? "yes" : "no"); },
       YesNoSetter([](bool on) {
         protected_mode.store(on, std::memory_order_relaxed);
         UpdateLoopbackOnly();
       })},
      {"hz", [] { return helio::StrCat(EngineShard::hz()); },
       IntegerSetter(0, std::numeric_limits<int32_t>::max(),
                     [](int64_t hz) { EngineShard::set_hz(unsigned(hz)); })},
      {"slowlog-log-slower-than", [] { return helio::StrCat(SlowlogThresholdUs()); },
       IntegerSetter(-1, kMaxLong, SetSlowlogThresholdUs)},
      {"slowlog-max-len", [] { return helio::StrCat(SlowlogMaxLen()); },
       IntegerSetter(0, kMaxLong, SetSlowlogMaxLen)},
      {"latency-monitor-threshold", [] { return helio::StrCat(LatencyThresholdMs()); },
       IntegerSetter(0, kMaxLong, [](int64_t ms) { SetLatencyThresholdMs(uint64_t(ms)); })},
      {"client-output-buffer-limit", OutputBufferLimits, SetOutputBufferLimits},
      {"notify-keyspace-events", [] { return KeyspaceEventFlagsString(KeyspaceEventFlags()); },
       [](std::string_view value, bool apply) -> std::string {
         std::optional<uint32_t> flags = ParseKeyspaceEventFlags(value);
         if (!flags) return "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";
         if (apply) SetKeyspaceEventFlags(*flags);
         return "";
       }},
      {"tracking-table-max-keys", [] { return helio::StrCat(TrackingTableMaxKeys()); },
       IntegerSetter(0, kMaxLong, SetTrackingTableMaxKeys)},
      {"port", [] { return helio::StrCat(FLAGS_port); }, nullptr},
      {"bind", [] { return FLAGS_bind.empty() ? std::string("* -::*") : FLAGS_bind; }, nullptr},
      {"databases", [] { return helio::StrCat(FLAGS_dbnum); }, nullptr},
      {"tcp-backlog", [] { return helio::StrCat(FLAGS_tcp_backlog); }, nullptr},
      {"proto-max-bulk-len", [] { return helio::StrCat(FLAGS_proto_max_bulk_len); }, nullptr},
      // Snapshots (persistence_family.h).
      {"dir", [] {
         char buf[4096];
         return std::string(getcwd(buf, sizeof(buf)) ? buf : "");
       }, SetDir, false, /*protected_config=*/true},
      {"dbfilename", GetDbFilename, SetDbFilename, false, /*protected_config=*/true},
      {"save", GetSaveRules, SetSaveRules},
      {"snapshot_cron", GetSnapshotCron, SetSnapshotCron},
      {"key-load-delay", [] { return helio::StrCat(KeyLoadDelayUs()); },
       IntegerSetter(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                     SetKeyLoadDelayUs),
       /*hidden=*/true},
      {"rdbcompression", [] { return std::string(RdbCompression() ? "yes" : "no"); },
       YesNoSetter(SetRdbCompression)},
      {"rdbchecksum", [] { return std::string(RdbChecksum() ? "yes" : "no"); },
       YesNoSetter(SetRdbChecksum)},
      {"stop-writes-on-bgsave-error",
       [] { return std::string(StopWritesOnBgsaveError() ? "yes" : "no"); },
       YesNoSetter(SetStopWritesOnBgsaveError)},
      // The append-only file (aof.h).
      {"appendonly", [] { return std::string(AofEnabled() ? "yes" : "no"); }, SetAppendOnly},
      {"appendfsync", GetAppendFsync, SetAppendFsync},
      {"appendfilename", AppendFilename, nullptr},
      {"appenddirname", AppendDirname, nullptr},
      {"auto-aof-rewrite-percentage", [] { return helio::StrCat(AutoAofRewritePercentage()); },
       IntegerSetter(0, std::numeric_limits<int32_t>::max(), SetAutoAofRewritePercentage)},
      {"auto-aof-rewrite-min-size", [] { return helio::StrCat(AutoAofRewriteMinSize()); },
       [](std::string_view text, bool apply) -> std::string {
         std::optional<uint64_t> bytes = ParseMemoryValue(text);
         if (!bytes || *bytes > uint64_t(kMaxLong)) return "argument must be a memory value";
         if (apply) SetAutoAofRewriteMinSize(int64_t(*bytes));
         return "";
       }},
      {"aof-load-truncated", [] { return std::string(AofLoadTruncated() ? "yes" : "no"); },
       YesNoSetter(SetAofLoadTruncated)},
      {"aof-buffer-limit", [] { return helio::StrCat(AofBufferLimit()); },
       [](std::string_view text, bool apply) -> std::string {
         std::optional<uint64_t> bytes = ParseMemoryValue(text);
         if (!bytes || *bytes > uint64_t(kMaxLong)) return "argument must be a memory value";
         if (apply) SetAofBufferLimit(*bytes);
         return "";
       }},
      {"aof-write-delay", [] { return helio::StrCat(AofWriteDelayUs()); },
       IntegerSetter(0, 10'000'000, SetAofWriteDelayUs), /*hidden=*/true},
      // The base is always an RDB snapshot; no timestamp annotations.
      {"aof-use-rdb-preamble", [] { return std::string("yes"); }, nullptr},
      {"aof-timestamp-enabled", [] { return std::string("no"); }, nullptr},
      {"timeout", [] { return helio::StrCat(facade::ClientConnection::IdleTimeoutSeconds()); },
       IntegerSetter(0, std::numeric_limits<int32_t>::max(),
                     facade::ClientConnection::SetIdleTimeoutSeconds)},
      {"tcp-keepalive",
       [] { return helio::StrCat(facade::ClientConnection::TcpKeepaliveSeconds()); },
       IntegerSetter(0, std::numeric_limits<int32_t>::max(),
                     facade::ClientConnection::SetTcpKeepaliveSeconds)},
      {"maxclients", [] { return helio::StrCat(facade::ClientAdmission::MaxClients()); },
       SetMaxClients},
      {"client-query-buffer-limit",
       [] { return helio::StrCat(facade::ClientConnection::QueryBufferLimit()); },
       [](std::string_view text, bool apply) -> std::string {
         std::optional<uint64_t> bytes = ParseMemoryValue(text);
         if (!bytes) return "argument must be a memory value";
         if (*bytes < uint64_t(kMinQueryBufferLimit) || *bytes > uint64_t(kMaxLong)) {
           return RangeError(kMinQueryBufferLimit, kMaxLong);
         }
         if (apply) facade::ClientConnection::SetQueryBufferLimit(*bytes);
         return "";
       }},
      // Scripts running longer make the server answer -BUSY (script_runner.h).
      {"busy-reply-threshold", [] { return helio::StrCat(BusyReplyThresholdMs()); },
       IntegerSetter(0, kMaxLong, SetBusyReplyThresholdMs)},
      {"lua-time-limit", [] { return helio::StrCat(BusyReplyThresholdMs()); },
       IntegerSetter(0, kMaxLong, SetBusyReplyThresholdMs)},
      // The replication stream (replication.h).
      {"repl-ping-replica-period", [] { return helio::StrCat(ReplPingPeriodS()); },
       IntegerSetter(1, std::numeric_limits<int32_t>::max(), SetReplPingPeriodS)},
      {"repl-backlog-size", [] { return helio::StrCat(ReplBacklogBytes()); },
       [](std::string_view text, bool apply) -> std::string {
         std::optional<uint64_t> bytes = ParseMemoryValue(text);
         if (!bytes) return "argument must be a memory value";
         if (*bytes < 1 || *bytes > uint64_t(kMaxLong)) return RangeError(1, kMaxLong);
         if (apply) SetReplBacklogBytes(int64_t(*bytes));
         return "";
       }},
      {"repl-backlog-ttl", [] { return helio::StrCat(ReplBacklogTtlS()); },
       IntegerSetter(0, std::numeric_limits<int32_t>::max(), SetReplBacklogTtlS)},
      {"min-replicas-to-write", [] { return helio::StrCat(MinReplicasToWrite()); },
       IntegerSetter(0, std::numeric_limits<int32_t>::max(), SetMinReplicasToWrite)},
      {"min-slaves-to-write", [] { return helio::StrCat(MinReplicasToWrite()); },
       IntegerSetter(0, std::numeric_limits<int32_t>::max(), SetMinReplicasToWrite)},
      {"min-replicas-max-lag", [] { return helio::StrCat(MinReplicasMaxLagS()); },
       IntegerSetter(0, std::numeric_limits<int32_t>::max(), SetMinReplicasMaxLagS)},
      {"min-slaves-max-lag", [] { return helio::StrCat(MinReplicasMaxLagS()); },
       IntegerSetter(0, std::numeric_limits<int32_t>::max(), SetMinReplicasMaxLagS)},
      // Following a master (replica.h).
      {"replicaof", ReplicaOfConfig, nullptr},
      {"slaveof", ReplicaOfConfig, nullptr},
      {"replica-read-only", [] { return std::string(ReplicaReadOnlyConfig() ? "yes" : "no"); },
       YesNoSetter(SetReplicaReadOnlyConfig)},
      {"slave-read-only", [] { return std::string(ReplicaReadOnlyConfig() ? "yes" : "no"); },
       YesNoSetter(SetReplicaReadOnlyConfig)},
      {"replica-serve-stale-data",
       [] { return std::string(ReplicaServeStaleConfig() ? "yes" : "no"); },
       YesNoSetter(SetReplicaServeStaleConfig)},
      {"slave-serve-stale-data",
       [] { return std::string(ReplicaServeStaleConfig() ? "yes" : "no"); },
       YesNoSetter(SetReplicaServeStaleConfig)},
      {"masterauth", MasterAuth,
       [](std::string_view value, bool apply) -> std::string {
         if (apply) SetMasterAuth(value);
         return "";
       }},
      {"masteruser", MasterUser,
       [](std::string_view value, bool apply) -> std::string {
         if (apply) SetMasterUser(value);
         return "";
       }},
      {"repl-timeout", [] { return helio::StrCat(ReplTimeoutS()); },
       IntegerSetter(1, std::numeric_limits<int32_t>::max(), SetReplTimeoutS)},
      // INFO latencystats: always on, with Redis 7's default percentiles.
      {"latency-tracking", [] { return std::string("yes"); }, nullptr},
      {"latency-tracking-info-percentiles", [] { return std::string("50 99 99.9"); }, nullptr},
  };
  static const bool added = [] {
    for (ConfigParam& param : CollectionLimitParams()) params.push_back(std::move(param));
    for (ConfigParam& param : InertParams()) params.push_back(std::move(param));
    return true;
  }();
  (void)added;
  return params;
}

const ConfigParam* FindParam(std::string_view name) {
  for (const ConfigParam& param : Params()) {
    if (helio::EqualsIgnoreCase(param.name, name)) return &param;
  }
  return nullptr;
}

bool IsGlob(std::string_view pattern) { return pattern.find_first_of("*?[") != std::string_view::npos; }

// CONFIG GET pattern [pattern ...]: each matching parameter once. A pattern without glob
// characters is looked up case-insensitively and echoed as given, as Redis does.
void ConfigGet(CmdArgList args, ReplyBuilder* rb) {
  std::vector<std::pair<std::string, std::string>> found;
  std::vector<const ConfigParam*> seen;
  auto add = [&](const ConfigParam* param, std::string_view shown_name) {
    if (std::find(seen.begin(), seen.end(), param) != seen.end()) return;
    seen.push_back(param);
    found.emplace_back(std::string(shown_name), param->get());
  };
  for (size_t i = 2; i < args.size(); ++i) {
    if (!IsGlob(args[i])) {
      if (const ConfigParam* param = FindParam(args[i])) add(param, args[i]);
      continue;
    }
    for (const ConfigParam& param : Params()) {
      if (!param.hidden && core::GlobMatch(args[i], param.name, true)) add(&param, param.name);
    }
  }
  rb->StartMap(found.size());
  for (const auto& [name, value] : found) {
    rb->SendBulk(name);
    rb->SendBulk(value);
  }
}

// CONFIG SET name value [name value ...]: all or nothing.
void ConfigSet(CmdArgList args, ReplyBuilder* rb) {
  if (args.size() % 2 != 0) return rb->SendError(facade::kSyntaxErr);
  std::vector<const ConfigParam*> params;
  auto failed = [&](std::string_view name, std::string_view reason) {
    rb->SendError(helio::StrCat("ERR CONFIG SET failed (possibly related to argument '",
                                facade::AsCString(name), "') - ", reason));
  };
  for (size_t i = 2; i < args.size(); i += 2) {
    const ConfigParam* param = FindParam(args[i]);
    if (param == nullptr) {
      return rb->SendError(
          helio::StrCat("ERR Unknown option or number of arguments for CONFIG SET - '",
                        facade::AsCString(args[i]), "'"));
    }
    if (std::find(params.begin(), params.end(), param) != params.end()) {
      return failed(args[i], "duplicate parameter");
    }
    if (!param->set || param->startup_only) {
      return failed(args[i], "can't set immutable config");
    }
    if (param->protected_config && !FLAGS_enable_protected_configs) {
      return failed(args[i], "can't set protected config");
    }
    params.push_back(param);
  }
  for (size_t i = 0; i < params.size(); ++i) {
    std::string error = params[i]->set(args[2 + 2 * i + 1], false);
    if (!error.empty()) return failed(args[2 + 2 * i], error);
  }
  for (size_t i = 0; i < params.size(); ++i) params[i]->set(args[2 + 2 * i + 1], true);
  // Eviction settings apply at once, not at the shards' next cycle.
  if (shard_set) shard_set->RunOnAll([](EngineShard* shard) { shard->RefreshEviction(); });
  rb->SendOk();
}

void CmdConfig(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view sub = args[1];  // validated by the dispatcher (see Register)
  if (ArgIs(sub, "GET")) return ConfigGet(args, rb);
  if (ArgIs(sub, "SET")) return ConfigSet(args, rb);
  if (ArgIs(sub, "RESETSTAT")) {
    ResetStats();
    return rb->SendOk();
  }
  if (ArgIs(sub, "REWRITE")) {
    std::string error = RewriteConfigFile();
    return error.empty() ? rb->SendOk() : rb->SendError(error);
  }
  static constexpr std::string_view kHelp[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
      "HELP",
      "    Prints this help.",
  };
  rb->SendSimpleStringArray(kHelp);
}

}  // namespace

std::optional<ConfigParamInfo> FindConfigParam(std::string_view name) {
  const ConfigParam* param = FindParam(name);
  if (param == nullptr) return std::nullopt;
  return ConfigParamInfo{param->name, param->set != nullptr, param->no_effect, param->hidden};
}

std::vector<ConfigParamInfo> ConfigParams() {
  std::vector<ConfigParamInfo> out;
  for (const ConfigParam& param : Params()) {
    out.push_back({param.name, param.set != nullptr, param.no_effect, param.hidden});
  }
  return out;
}

std::string_view CanonicalConfigName(std::string_view name) {
  static constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
      {"slaveof", "replicaof"},
      {"slave-read-only", "replica-read-only"},
      {"slave-serve-stale-data", "replica-serve-stale-data"},
      {"slave-priority", "replica-priority"},
      {"min-slaves-to-write", "min-replicas-to-write"},
      {"min-slaves-max-lag", "min-replicas-max-lag"},
      {"lua-time-limit", "busy-reply-threshold"},
      {"list-max-ziplist-size", "list-max-listpack-size"},
      {"hash-max-ziplist-entries", "hash-max-listpack-entries"},
      {"hash-max-ziplist-value", "hash-max-listpack-value"},
      {"zset-max-ziplist-entries", "zset-max-listpack-entries"},
      {"zset-max-ziplist-value", "zset-max-listpack-value"},
  };
  for (auto [alias, canonical] : kAliases) {
    if (helio::EqualsIgnoreCase(name, alias)) return canonical;
  }
  return name;
}

bool ConfigParamTakesWords(std::string_view name) {
  const std::string_view canonical = CanonicalConfigName(name);
  for (std::string_view words : {"save", "client-output-buffer-limit", "bind", "replicaof",
                                 "oom-score-adj-values", "latency-tracking-info-percentiles"}) {
    if (canonical == words) return true;
  }
  return false;
}

void UpdateLoopbackOnly() {
  // As Redis: protected while the default user needs no password.
  facade::ClientAdmission::SetLoopbackOnly(protected_mode.load(std::memory_order_relaxed) &&
                                           DefaultUserNopass());
}

std::string ConfigFlagName(std::string_view name) {
  std::string flag(CanonicalConfigName(name));
  if (flag == "databases") flag = "dbnum";
  if (flag == "client-query-buffer-limit") flag = "max_client_query_buffer";
  std::replace(flag.begin(), flag.end(), '-', '_');
  gflags::CommandLineFlagInfo info;
  return gflags::GetCommandLineFlagInfo(flag.c_str(), &info) ? flag : "";
}

std::string CheckConfigParam(std::string_view name, std::string_view value) {
  const ConfigParam* param = FindParam(name);
  if (param == nullptr) return "Bad directive or wrong number of arguments";
  if (param->set) return param->set(value, false);
  const std::string fixed = param->get();
  return helio::EqualsIgnoreCase(fixed, value)
             ? ""
             : helio::StrCat("damselfly's ", param->name, " is always \"", fixed, "\"");
}

void SetConfigParam(std::string_view name, std::string_view value) {
  const ConfigParam* param = FindParam(name);
  CHECK(param != nullptr && param->set) << name;
  param->set(value, true);
}

std::string GetConfigParam(std::string_view name) {
  const ConfigParam* param = FindParam(name);
  return param ? param->get() : std::string();
}

uint64_t MaxMemoryBytes() { return maxmemory_bytes.load(std::memory_order_relaxed); }

bool OverMaxMemory() {
  uint64_t limit = MaxMemoryBytes();
  if (limit == 0) return false;
  const EvictionConfig config = LoadEvictionConfig();
  if (config.cache_mode) return false;  // a cache never refuses a write: it evicts
  if (config.policy == EvictionPolicy::kNoEviction) return shard_set->UsedMemory() > limit;
  return shard_set->EvictionStuck();  // over, and nothing the policy may evict
}

std::string MaxMemoryPolicy() {
  return std::string(EvictionPolicyName(LoadEvictionConfig().policy));
}

void ConfigFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  std::optional<uint64_t> maxmemory = ParseMemoryValue(FLAGS_maxmemory);
  CHECK(maxmemory) << "--maxmemory: not a memory value: " << FLAGS_maxmemory;
  std::optional<uint64_t> cgroup_limit = CgroupMemoryLimit();
  if (gflags::GetCommandLineFlagInfoOrDie("maxmemory").is_default && cgroup_limit) {
    maxmemory = *cgroup_limit / 10 * 9;
    LOG(INFO) << "maxmemory " << *maxmemory << " bytes: 90% of the cgroup memory limit";
  }
  maxmemory_bytes.store(*maxmemory, std::memory_order_relaxed);
  std::optional<EvictionPolicy> policy = ParseEvictionPolicy(FLAGS_maxmemory_policy);
  CHECK(policy) << "--maxmemory_policy: one of " << EvictionPolicyChoices();
  CHECK_GE(FLAGS_maxmemory_samples, 1u) << "--maxmemory_samples";
  StoreEvictionConfig({*policy, FLAGS_cache_mode, FLAGS_maxmemory_samples, FLAGS_lfu_log_factor,
                       FLAGS_lfu_decay_time});
  StoreLazyFreeConfig({FLAGS_lazyfree_lazy_user_del, FLAGS_lazyfree_lazy_user_flush,
                       FLAGS_lazyfree_lazy_expire, FLAGS_lazyfree_lazy_eviction});
  std::string limits_error = SetOutputBufferLimits(FLAGS_client_output_buffer_limit, true);
  CHECK(limits_error.empty()) << "--client_output_buffer_limit: " << limits_error;
  InitCommandAccounting();
  InitCollectionLimits();
  registry->Add("CONFIG", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, kNoKeys, kAclSlow,
                CmdConfig,
                {{"GET", -3, kAclAdmin | kAclSlow | kAclDangerous},
                 {"SET", -4, kAclAdmin | kAclSlow | kAclDangerous},
                 {"RESETSTAT", 2, kAclAdmin | kAclSlow | kAclDangerous},
                 {"REWRITE", 2, kAclAdmin | kAclSlow | kAclDangerous},
                 {"HELP", 2, kAclSlow}});
}

}  // namespace damselfly
