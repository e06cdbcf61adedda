#include "src/server/aof.h"
#include "src/server/server_family.h"

#include <algorithm>

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <optional>


#include "helio/base/strings.h"

#include "src/core/glob_matcher.h"
#include "src/core/obj_malloc.h"
#include "src/facade/client_admission.h"
#include "src/facade/command_docs.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/config_family.h"
#include "src/server/connection_family.h"
#include "src/server/engine_shard_set.h"
#include "src/server/lazy_free.h"
#include "src/server/persistence_family.h"
#include "src/server/replica.h"
#include "src/server/replication.h"
#include "src/server/main_service.h"
#include "src/server/function_family.h"
#include "src/server/script_family.h"
#include "src/server/channel_store.h"
#include "src/server/monitor.h"
#include "src/server/server_state.h"
#include "src/server/tracking.h"
#include "src/server/transaction.h"
#include "src/server/server_stats.h"
#include "src/server/startup_config.h"
#include "src/server/command_accounting.h"

DECLARE_uint32(port);
DECLARE_uint32(dbnum);

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::CommandHandler;
using facade::CommandId;
using facade::CommandRegistry;
using facade::ConnectionContext;
using facade::ReplyBuilder;

// printf-style formatting of one double, e.g. FormatDouble("%.2f", 1.5).
std::string FormatDouble(const char* format, double value) {
  char buf[64];
  int len = snprintf(buf, sizeof(buf), format, value);
  return std::string(buf, std::max(0, std::min<int>(len, sizeof(buf) - 1)));
}

std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"B", "K", "M", "G", "T", "P"};
  double value = bytes;
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? helio::StrCat(bytes, "B") : helio::StrCat(FormatDouble("%.2f", value), units[unit]);
}

// A stable 40-hex-digit id for this process, like Redis's run_id.
const std::string& RunId() {
  static const std::string id = [] {
    absl::BitGen rng;
    std::string hex;
    for (int i = 0; i < 40; ++i) hex += "0123456789abcdef"[absl::Uniform(rng, 0, 16)];
    return hex;
  }();
  return id;
}

// INFO [section ...]: Redis's sections and field names.
void CmdInfo(Service* service, CmdArgList args, ConnectionContext* cntx) {
  std::vector<std::string> wanted;
  for (size_t i = 1; i < args.size(); ++i) wanted.push_back(helio::AsciiStrToLower(args[i]));
  // No argument means "default"; "all" and "everything" add the sections outside it.
  auto named = [&](std::string_view section, bool in_default) {
    if (wanted.empty()) return in_default;
    for (const std::string& w : wanted) {
      if (w == section || w == "all" || w == "everything" || (in_default && w == "default")) {
        return true;
      }
    }
    return false;
  };
  auto show = [&](std::string_view section) { return named(section, true); };
  auto show_extra = [&](std::string_view section) { return named(section, false); };
  StatsSnapshot stats = GatherStats();
  const ThreadSnapshot& totals = stats.total;
  std::string out;
  auto field = [&](std::string_view name, const auto& value) { helio::StrAppend(&out, name, ":", value, "\r\n"); };
  // Asked of the replication stream once (a hop to its thread), by the first section
  // that shows it.
  std::optional<ReplicationStatus> replication_status;
  auto replication = [&]() -> const ReplicationStatus& {
    if (!replication_status) replication_status = GetReplicationStatus();
    return *replication_status;
  };
  auto header = [&](std::string_view title) {
    if (!out.empty()) out += "\r\n";
    helio::StrAppend(&out, "# ", title, "\r\n");
  };
  const int64_t uptime_s = UptimeSeconds();

  if (show("server")) {
    utsname name{};
    uname(&name);
    header("Server");
    field("redis_version", kRedisCompatVersion);
    field("redis_git_sha1", "00000000");
    field("redis_git_dirty", 0);
    field("redis_build_id", "0");
    field("redis_mode", "standalone");
    field("os", helio::StrCat(name.sysname, " ", name.release, " ", name.machine));
    field("arch_bits", 64);
    field("monotonic_clock", "POSIX clock_gettime");
    field("multiplexing_api", helio::io::ProactorKindName(service->pool()->kind()));
    field("gcc_version", helio::StrCat(__GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__));
    field("process_id", getpid());
    field("process_supervised", "no");
    field("run_id", RunId());
    field("tcp_port", FLAGS_port);
    field("server_time_usec", UnixTimeMs() * 1000);
    field("uptime_in_seconds", uptime_s);
    field("uptime_in_days", uptime_s / 86400);
    field("hz", EngineShard::hz());
    field("configured_hz", EngineShard::hz());
    field("executable", "damselfly");
    field("config_file", ConfigFilePath());
    field("damselfly_version", kDamselflyVersion);
    field("proactor_threads", service->pool()->size());
    field("num_shards", shard_set->size());
  }
  if (show("clients")) {
    header("Clients");
    // Replicas are not clients here, as in Redis (INFO replication lists them).
    field("connected_clients",
          int64_t(totals.connected_clients) - int64_t(replication().replicas.size()));
    field("cluster_connections", 0);
    field("maxclients", facade::ClientAdmission::MaxClients());
    field("client_recent_max_input_buffer", 0);
    field("client_recent_max_output_buffer", 0);
    field("blocked_clients", totals.blocked_clients);
    field("tracking_clients", CountTracking().clients);
    field("clients_in_timeout_table", 0);
  }
  if (show("memory")) {
    // used_memory: what the shards hold (keys, values, tables). Connection buffers and
    // the process's own structures show up in RSS only.
    uint64_t used = totals.used_memory();
    uint64_t rss = RssBytes(), total = TotalSystemMemory();
    uint64_t peak = UpdateUsedMemoryPeak(used);
    header("Memory");
    field("used_memory", used);
    field("used_memory_human", HumanBytes(used));
    field("used_memory_rss", rss);
    field("used_memory_rss_human", HumanBytes(rss));
    field("used_memory_peak", peak);
    field("used_memory_peak_human", HumanBytes(peak));
    field("used_memory_peak_perc", FormatDouble("%.2f%%", peak ? 100.0 * used / peak : 0.0));
    // Overhead: the tables' own bytes; the dataset: what the keys and values take.
    const uint64_t overhead = std::min<uint64_t>(totals.table_bytes, used);
    field("used_memory_overhead", overhead);
    field("used_memory_dataset", used - overhead);
    field("used_memory_dataset_perc",
          FormatDouble("%.2f%%", used ? 100.0 * (used - overhead) / used : 0.0));
    field("total_system_memory", total);
    field("total_system_memory_human", HumanBytes(total));
    field("maxmemory", MaxMemoryBytes());
    field("maxmemory_human", HumanBytes(MaxMemoryBytes()));
    field("maxmemory_policy", MaxMemoryPolicy());
    field("mem_fragmentation_ratio", FormatDouble("%.2f", used ? double(rss) / used : 0.0));
    field("mem_fragmentation_bytes", int64_t(rss) - int64_t(used));
    // Nothing outside used_memory is spared from eviction: 0 rather than absent, so that
    // tools reading it work.
    field("mem_not_counted_for_evict", 0);
    field("mem_replication_backlog", replication().backlog_histlen);
    field("mem_clients_slaves", 0);
    field("mem_aof_buffer", AofBufferedBytes());  // the stream waiting for the AOF's disk
    field("mem_allocator", "mimalloc");
    field("active_defrag_running", 0);
    field("lazyfree_pending_objects", totals.lazyfree_pending);
    field("lazyfreed_objects", totals.lazyfreed);
    field("number_of_cached_scripts", ScriptFamily::CachedScripts());
    field("number_of_functions", FunctionFamily::FunctionCount());
    field("number_of_libraries", FunctionFamily::LibraryCount());
    field("table_used_memory", totals.table_bytes);
    field("num_buckets", totals.buckets);
    field("num_entries", totals.entries);
    field("inline_keys", totals.inline_keys);
    field("compressed_strings", totals.compressed_strings);
    field("compressed_strings_bytes", totals.compressed_string_bytes);
    field("compressed_strings_used_memory", totals.compressed_block_bytes);
  }
  if (show("persistence")) {
    header("Persistence");
    out.append(PersistenceInfo());
    out.append(AofInfo());
  }
  if (show("stats")) {
    header("Stats");
    field("total_connections_received", totals.connections_received);
    field("total_commands_processed", totals.commands_processed);
    field("instantaneous_ops_per_sec", 0);
    field("total_net_input_bytes", totals.net_input_bytes);
    field("total_net_output_bytes", totals.net_output_bytes);
    field("rejected_connections", facade::ClientAdmission::Rejected(facade::ClientProtocol::kResp));
    field("expired_keys", totals.expired);
    field("evicted_keys", totals.evicted);
    field("keyspace_hits", totals.hits);
    field("keyspace_misses", totals.misses);
    field("pubsub_channels", NumActive(ChannelKind::kChannel));
    field("pubsub_patterns", NumActive(ChannelKind::kPattern));
    field("pubsubshard_channels", NumActive(ChannelKind::kShard));
    field("latest_fork_usec", 0);
    field("total_forks", 0);
    TrackingCounts tracking = CountTracking();
    field("tracking_total_keys", tracking.keys);
    field("tracking_total_items", tracking.items);
    field("tracking_total_prefixes", tracking.prefixes);
    field("total_error_replies", totals.error_replies);
    // damselfly's own: hops to other threads' shards, and the commands they carried
    // (more commands than hops means pipelines were squashed).
    field("total_shard_hops", totals.shard_hops);
    field("total_remote_commands", totals.remote_commands);
    // Scripts that used keys they did not declare; those re-run as whole-shard
    // transactions because such a key was held; all whole-shard runs (script_runner.h).
    field("scripts_undeclared_keys", totals.scripts_undeclared_keys);
    field("scripts_rerun_whole_shard", totals.scripts_rerun_whole_shard);
    field("scripts_whole_shard", totals.scripts_whole_shard);
  }
  if (show("replication")) {
    header("Replication");
    const ReplicationStatus& repl = replication();
    const MasterLinkStatus link = GetMasterLinkStatus();
    field("role", link.following ? "slave" : "master");
    if (link.following) {
      field("master_host", link.host);
      field("master_port", link.port);
      field("master_link_status", link.state == "connected" ? "up" : "down");
      field("master_last_io_seconds_ago", link.last_io_s);
      field("master_sync_in_progress", link.syncing ? 1 : 0);
      field("slave_read_repl_offset", link.offset);
      field("slave_repl_offset", link.offset);
      if (link.syncing) {
        field("master_sync_total_bytes", link.sync_total_bytes);
        field("master_sync_read_bytes", link.sync_read_bytes);
        field("master_sync_left_bytes",
              link.sync_total_bytes < 0 ? -1 : link.sync_total_bytes - link.sync_read_bytes);
        field("master_sync_perc",
              FormatDouble("%.2f", link.sync_total_bytes <= 0 ? 0.0
                                   : 100.0 * double(link.sync_read_bytes) /
                                         double(link.sync_total_bytes)));
        field("master_sync_last_io_seconds_ago", link.last_io_s);
      }
      if (link.state != "connected") {
        field("master_link_down_since_seconds", link.link_down_since_s);
      }
      field("slave_priority", 100);
      field("slave_read_only", ReplicaReadOnlyConfig() ? 1 : 0);
      field("replica_announced", 1);
    }
    field("connected_slaves", repl.replicas.size());
    if (MinReplicasToWrite() > 0 && MinReplicasMaxLagS() > 0) {
      field("min_slaves_good_slaves", repl.good_replicas);
    }
    for (size_t i = 0; i < repl.replicas.size(); ++i) {
      const ReplicaStatus& r = repl.replicas[i];
      field(helio::StrCat("slave", i),
            helio::StrCat("ip=", r.ip, ",port=", r.port, ",state=", r.state,
                          ",offset=", r.ack_offset, ",lag=", r.lag_s));
    }
    field("master_failover_state", "no-failover");
    // A replica shows the stream it follows, as Redis's replicas share their master's.
    const bool followed = link.following && !link.master_replid.empty();
    field("master_replid", followed ? link.master_replid : repl.replid);
    field("master_replid2", std::string(40, '0'));
    field("master_repl_offset", followed ? link.offset : repl.offset);
    field("second_repl_offset", -1);
    field("repl_backlog_active", repl.backlog_active ? 1 : 0);
    field("repl_backlog_size", repl.backlog_size);
    field("repl_backlog_first_byte_offset", repl.backlog_first_byte);
    field("repl_backlog_histlen", repl.backlog_histlen);
  }
  if (show("cpu")) {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](timeval tv) { return FormatDouble("%.6f", tv.tv_sec + tv.tv_usec / 1e6); };
    header("CPU");
    field("used_cpu_sys", seconds(usage.ru_stime));
    field("used_cpu_user", seconds(usage.ru_utime));
    field("used_cpu_sys_children", "0.000000");
    field("used_cpu_user_children", "0.000000");
  }
  if (show("modules")) header("Modules");
  // Not in the default set, as with Redis: only named, "all" or "everything".
  if (show_extra("commandstats")) {
    header("Commandstats");
    ForEachCommandStat(service->registry(), stats, [&](const std::string& name,
                                                       const CommandCounters& c) {
      uint64_t usec = c.duration_ns / 1000;
      field(helio::StrCat("cmdstat_", name),
            helio::StrCat("calls=", c.calls, ",usec=", usec, ",usec_per_call=",
                          FormatDouble("%.2f", c.calls ? double(usec) / c.calls : 0.0),
                          ",rejected_calls=", c.rejected, ",failed_calls=", c.failed));
    });
  }
  if (show("errorstats")) {
    header("Errorstats");
    for (const auto& [code, count] : stats.errors_by_code) {
      field(helio::StrCat("errorstat_", code), helio::StrCat("count=", count));
    }
  }
  if (show("cluster")) {
    header("Cluster");
    field("cluster_enabled", 0);
  }
  if (show("keyspace")) {
    header("Keyspace");
    for (size_t db = 0; db < stats.keyspace.size(); ++db) {
      auto [keys, expires] = stats.keyspace[db];
      if (keys == 0) continue;
      field(helio::StrCat("db", db), helio::StrCat("keys=", keys, ",expires=", expires, ",avg_ttl=0"));
    }
  }
  // Not in the default set either; Redis 7's default percentiles (latency-tracking-info-
  // percentiles "50 99 99.9").
  if (show_extra("latencystats")) {
    header("Latencystats");
    const std::vector<std::unique_ptr<LatencyHistogram>> latency = GatherLatency();
    ForEachCommandName(service->registry(), [&](const std::string& name, uint16_t index) {
      const std::unique_ptr<LatencyHistogram>& h = latency[index];
      if (!h || h->count() == 0) return;
      field(helio::StrCat("latency_percentiles_usec_", name),
            helio::StrCat("p50=", FormatDouble("%.3f", h->PercentileUs(50)),
                          ",p99=", FormatDouble("%.3f", h->PercentileUs(99)),
                          ",p99.9=", FormatDouble("%.3f", h->PercentileUs(99.9))));
    });
  }
  cntx->reply_builder()->SendVerbatim(out);
}

void CmdDbSize(CmdArgList args, ConnectionContext* cntx) {
  std::atomic<uint64_t> total{0};
  DbIndex db = cntx->db_index;
  shard_set->RunOnAll([&](EngineShard* shard) { total += shard->db_slice().DbSize(db); });
  cntx->reply_builder()->SendLong(total);
}

// FLUSHDB / FLUSHALL [ASYNC | SYNC]
void Flush(CmdArgList args, ConnectionContext* cntx, bool all) {
  if (args.size() > 2 || (args.size() == 2 && !ArgIs(args[1], "ASYNC") && !ArgIs(args[1], "SYNC"))) {
    return cntx->reply_builder()->SendError(facade::kSyntaxErr);
  }
  DbIndex db = cntx->db_index;
  const bool lazily =
      args.size() == 2 ? ArgIs(args[1], "ASYNC") : LoadLazyFreeConfig().user_flush;
  RunWholeShard(cntx, [&](EngineShard* shard) {
    ShardJournal::Barrier(db, args);
    DbSlice& slice = shard->db_slice();
    if (!all) return slice.FlushDb(db, lazily);
    slice.FlushAll(lazily);
  });
  TrackingFlushAll(cntx);  // as Redis: "flush everything" for FLUSHDB too
  cntx->reply_builder()->SendOk();
}

void CmdFlushDb(CmdArgList args, ConnectionContext* cntx) { Flush(args, cntx, false); }
void CmdFlushAll(CmdArgList args, ConnectionContext* cntx) { Flush(args, cntx, true); }

void CmdTime(CmdArgList args, ConnectionContext* cntx) {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ReplyBuilder* rb = cntx->reply_builder();
  rb->StartArray(2);
  rb->SendBulk(helio::StrCat(ts.tv_sec));
  rb->SendBulk(helio::StrCat(ts.tv_nsec / 1000));
}

// SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] [ABORT]: with SAVE, or with save rules set and
// neither, the snapshot is written first (persistence_family.h); if it fails the server
// goes on, unless FORCE. On success the client gets no reply, as with Redis.
void CmdShutdown(Service* service, CmdArgList args, ConnectionContext* cntx) {
  bool abort = false, force = false;
  std::string_view mode;
  for (size_t i = 1; i < args.size(); ++i) {
    if (ArgIs(args[i], "ABORT")) {
      abort = true;
    } else if (ArgIs(args[i], "NOSAVE") || ArgIs(args[i], "SAVE")) {
      if (!mode.empty()) return cntx->reply_builder()->SendError(facade::kSyntaxErr);
      mode = ArgIs(args[i], "SAVE") ? "save" : "nosave";
    } else if (ArgIs(args[i], "FORCE")) {
      force = true;
    } else if (!ArgIs(args[i], "NOW")) {
      return cntx->reply_builder()->SendError(facade::kSyntaxErr);
    }
  }
  if (abort) {
    if (args.size() > 2) return cntx->reply_builder()->SendError(facade::kSyntaxErr);
    return cntx->reply_builder()->SendError("ERR No shutdown in progress.");
  }
  if (!SaveBeforeShutdown(mode) && !force) {
    return cntx->reply_builder()->SendError("ERR Errors trying to SHUTDOWN. Check logs.");
  }
  LOG(INFO) << "SHUTDOWN requested by client " << cntx->id();
  cntx->close_after_reply = true;
  service->RequestShutdown();
}

// --- COMMAND

// The names of a key spec's flags, as COMMAND INFO and GETKEYSANDFLAGS print them.
std::vector<std::string_view> KeyFlagNames(uint32_t flags) {
  static constexpr std::pair<uint32_t, std::string_view> kNames[] = {
      {facade::kKeyRO, "RO"},         {facade::kKeyRW, "RW"},
      {facade::kKeyOW, "OW"},         {facade::kKeyRM, "RM"},
      {facade::kKeyAccess, "access"}, {facade::kKeyUpdate, "update"},
      {facade::kKeyInsert, "insert"}, {facade::kKeyDelete, "delete"},
      {facade::kKeyNotKey, "not_key"}, {facade::kKeyIncomplete, "incomplete"},
      {facade::kKeyVariableFlags, "variable_flags"},
  };
  std::vector<std::string_view> names;
  for (const auto& [bit, name] : kNames) {
    if (flags & bit) names.push_back(name);
  }
  return names;
}

void SendKeySpec(const facade::KeySpec& spec, ReplyBuilder* rb) {
  rb->StartMap(spec.notes ? 4 : 3);
  if (spec.notes) {
    rb->SendBulk("notes");
    rb->SendBulk(spec.notes);
  }
  rb->SendBulk("flags");
  auto flags = KeyFlagNames(spec.flags);
  rb->StartSet(flags.size());
  for (std::string_view flag : flags) rb->SendSimpleString(flag);
  rb->SendBulk("begin_search");
  rb->StartMap(2);
  if (spec.unknown) {  // both searches: {type: unknown, spec: {}}
    auto send_unknown = [rb] {
      rb->SendBulk("type");
      rb->SendBulk("unknown");
      rb->SendBulk("spec");
      rb->StartMap(0);
    };
    send_unknown();
    rb->SendBulk("find_keys");
    rb->StartMap(2);
    send_unknown();
    return;
  }
  rb->SendBulk("type");
  rb->SendBulk(spec.keyword ? "keyword" : "index");
  rb->SendBulk("spec");
  if (spec.keyword) {
    rb->StartMap(2);
    rb->SendBulk("keyword");
    rb->SendBulk(spec.keyword);
    rb->SendBulk("startfrom");
    rb->SendLong(spec.begin_index);
  } else {
    rb->StartMap(1);
    rb->SendBulk("index");
    rb->SendLong(spec.begin_index);
  }
  rb->SendBulk("find_keys");
  rb->StartMap(2);
  rb->SendBulk("type");
  rb->SendBulk(spec.keynum ? "keynum" : "range");
  rb->SendBulk("spec");
  rb->StartMap(3);
  if (spec.keynum) {
    rb->SendBulk("keynumidx");
    rb->SendLong(spec.keynum_index);
    rb->SendBulk("firstkey");
    rb->SendLong(spec.first_key_index);
    rb->SendBulk("keystep");
    rb->SendLong(spec.key_step);
  } else {
    rb->SendBulk("lastkey");
    rb->SendLong(spec.last_key);
    rb->SendBulk("keystep");
    rb->SendLong(spec.key_step);
    rb->SendBulk("limit");
    rb->SendLong(spec.limit);
  }
}

void SendCommandInfo(const CommandId& cid, ReplyBuilder* rb) {
  rb->StartArray(10);
  rb->SendBulk(helio::AsciiStrToLower(cid.name));
  rb->SendLong(cid.arity);
  auto flags = CommandRegistry::FlagNames(cid.flags);
  if (cid.movable_keys()) flags.push_back("movablekeys");
  rb->StartSet(flags.size());
  for (std::string_view flag : flags) rb->SendSimpleString(flag);
  rb->SendLong(cid.first_key);
  rb->SendLong(cid.last_key);
  rb->SendLong(cid.key_step);
  auto acl = CommandRegistry::AclNames(cid.acl);
  rb->StartSet(acl.size());
  for (const std::string& category : acl) rb->SendSimpleString(category);
  rb->StartSet(0);  // tips
  rb->StartArray(cid.key_specs.size());
  for (const facade::KeySpec& spec : cid.key_specs) SendKeySpec(spec, rb);
  rb->StartArray(0);  // subcommands
}

// COMMAND GETKEYS / GETKEYSANDFLAGS command [arg ...]: the keys the registry's key specs
// find in the call, with Redis 7.0's errors.
void SendKeysOfCall(const facade::CommandRegistry& registry, CmdArgList call, bool with_flags,
                    ReplyBuilder* rb) {
  const CommandId* cid = registry.Find(call[0]);
  if (!cid) return rb->SendError("ERR Invalid command specified");
  if (!cid->IsArityValid(call.size())) {
    return rb->SendError("ERR Invalid number of arguments specified for command");
  }
  if (!cid->takes_keys()) return rb->SendError("ERR The command has no key arguments");
  for (const facade::KeySpec& spec : cid->key_specs) {
    const int begin = facade::KeySpecBegin(spec, call);
    if (spec.keynum && begin > 0 && facade::KeySpecKeynum(spec, call, begin) < 0) {
      return rb->SendError("ERR Invalid arguments specified for command");
    }
  }
  std::vector<std::pair<std::string_view, uint32_t>> keys;
  cid->ForEachKey(call, [&](size_t index, uint32_t flags) {
    if ((flags & facade::kKeyVariableFlags) && cid->variable_key_flags) {
      flags = cid->variable_key_flags(call);
    }
    keys.emplace_back(call[index], flags);
  });
  if (keys.empty()) {
    // EVAL and FCALL may name no key: none is an answer for them, as in Redis.
    if (cid->flags & facade::kCmdNoMandatoryKeys) return rb->SendEmptyArray();
    return rb->SendError("ERR Invalid arguments specified for command");
  }
  rb->StartArray(keys.size());
  for (const auto& [key, flags] : keys) {
    if (!with_flags) {
      rb->SendBulk(key);
      continue;
    }
    rb->StartArray(2);
    rb->SendBulk(key);
    auto names = KeyFlagNames(flags);
    rb->StartArray(names.size());
    for (std::string_view name : names) rb->SendSimpleString(name);
  }
}

// One COMMAND DOCS entry: name, then a map of summary, since, group, complexity,
// arguments (from the syntax) and, for containers, the subcommands' own entries.
void SendDocsEntry(std::string_view name, std::string_view summary, std::string_view since,
                   std::string_view group, std::string_view syntax, const CommandId* container,
                   ReplyBuilder* rb) {
  std::vector<facade::DocArg> args = facade::ParseSyntax(syntax);
  bool has_subcommands = container && !container->subcommands.empty();
  rb->SendBulk(name);
  rb->StartMap(4 + !args.empty() + has_subcommands);
  rb->SendBulk("summary");
  rb->SendBulk(summary);
  rb->SendBulk("since");
  rb->SendBulk(since);
  rb->SendBulk("group");
  rb->SendBulk(group);
  rb->SendBulk("complexity");
  rb->SendBulk("O(1)");
  if (!args.empty()) {
    rb->SendBulk("arguments");
    facade::SendDocArgs(args, rb);
  }
  if (has_subcommands) {
    rb->SendBulk("subcommands");
    rb->StartMap(container->subcommands.size());
    for (const facade::SubcommandSpec& sub : container->subcommands) {
      std::string full = helio::StrCat(helio::AsciiStrToLower(container->name), "|",
                                       helio::AsciiStrToLower(sub.name));
      SendDocsEntry(full, helio::StrCat(sub.name, " subcommand of ", container->name), since,
                    group, sub.syntax, nullptr, rb);
    }
  }
}

void SendCommandDocs(const CommandId& cid, ReplyBuilder* rb) {
  SendDocsEntry(helio::AsciiStrToLower(cid.name), cid.summary, cid.since, cid.group, cid.syntax,
                &cid, rb);
}

// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]: the names of
// the commands and of their subcommands ("config|get"). A subcommand is in an ACL
// category when its container is (subcommands have no categories of their own here). No
// command comes from a module.
void SendCommandList(const CommandRegistry& registry, CmdArgList filter, ReplyBuilder* rb) {
  enum class By { kAll, kModule, kAclCategory, kPattern } by = By::kAll;
  if (!filter.empty()) {
    if (filter.size() != 3 || !ArgIs(filter[0], "FILTERBY")) {
      return rb->SendError(facade::kSyntaxErr);
    }
    if (ArgIs(filter[1], "MODULE")) {
      by = By::kModule;
    } else if (ArgIs(filter[1], "ACLCAT")) {
      by = By::kAclCategory;
    } else if (ArgIs(filter[1], "PATTERN")) {
      by = By::kPattern;
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  const uint32_t category = by == By::kAclCategory ? CommandRegistry::AclCategory(filter[2]) : 0;
  std::vector<std::string> names;
  registry.ForEachName([&](const CommandId&, const std::string& name, uint32_t acl) {
    bool keep = by == By::kAll || (by == By::kAclCategory && (acl & category)) ||
                (by == By::kPattern && core::GlobMatch(filter[2], name, /*nocase=*/true));
    if (keep) names.push_back(name);
  });
  rb->SendBulkArray(names);
}

void CmdCommand(Service* service, CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  const CommandRegistry& registry = service->registry();
  if (args.size() == 1) {
    rb->StartArray(registry.size());
    registry.ForEach([&](const CommandId& cid) { SendCommandInfo(cid, rb); });
    return;
  }
  std::string_view sub = args[1];  // validated by the dispatcher (see Register)
  if (ArgIs(sub, "COUNT")) return rb->SendLong(registry.size());
  if (ArgIs(sub, "INFO")) {
    if (args.size() == 2) {
      rb->StartArray(registry.size());
      registry.ForEach([&](const CommandId& cid) { SendCommandInfo(cid, rb); });
      return;
    }
    rb->StartArray(args.size() - 2);
    for (size_t i = 2; i < args.size(); ++i) {
      const CommandId* cid = registry.Find(args[i]);
      cid ? SendCommandInfo(*cid, rb) : rb->SendNullArray();
    }
    return;
  }
  if (ArgIs(sub, "DOCS")) {
    std::vector<const CommandId*> chosen;
    if (args.size() == 2) {
      registry.ForEach([&](const CommandId& cid) { chosen.push_back(&cid); });
    } else {
      for (size_t i = 2; i < args.size(); ++i) {
        if (const CommandId* cid = registry.Find(args[i])) chosen.push_back(cid);
      }
    }
    rb->StartMap(chosen.size());
    for (const CommandId* cid : chosen) SendCommandDocs(*cid, rb);
    return;
  }
  if (ArgIs(sub, "LIST")) return SendCommandList(registry, args.subspan(2), rb);
  if (ArgIs(sub, "GETKEYS") || ArgIs(sub, "GETKEYSANDFLAGS")) {
    return SendKeysOfCall(registry, args.subspan(2), ArgIs(sub, "GETKEYSANDFLAGS"), rb);
  }
  static constexpr std::string_view kHelp[] = {
      "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "(no subcommand)", "    Return details about all Redis commands.",
      "COUNT", "    Return the total number of commands in this Redis server.",
      "LIST", "    Return a list of all commands in this Redis server.",
      "INFO [<command-name> ...]", "    Return details about multiple Redis commands.",
      "DOCS [<command-name> ...]", "    Return documentation details about multiple Redis commands.",
      "GETKEYS <full-command>", "    Return the keys from a full Redis command.",
      "GETKEYSANDFLAGS <full-command>",
      "    Return the keys and the access flags from a full Redis command.",
      "HELP", "    Prints this help.",
  };
  rb->SendSimpleStringArray(kHelp);
}

}  // namespace

void ServerFamily::Register(Service* service, facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  auto with_service = [service](void (*fn)(Service*, CmdArgList, ConnectionContext*)) {
    return [service, fn](CmdArgList args, ConnectionContext* cntx) { fn(service, args, cntx); };
  };
  constexpr uint32_t kAnytime = kCmdLoading | kCmdStale;
  constexpr uint32_t kAdmin = kCmdAdmin | kCmdNoScript | kAnytime;
  constexpr uint32_t kAclAdminCmd = kAclAdmin | kAclSlow | kAclDangerous;
  constexpr uint32_t kAclFlush = kAclKeyspace | kAclWrite | kAclSlow | kAclDangerous;
  r.Add("INFO", -1, kAnytime, kNoKeys, kAclSlow | kAclDangerous, with_service(CmdInfo));
  r.Add("DBSIZE", 1, kCmdReadOnly | kCmdFast, kNoKeys, kAclKeyspace | kAclRead | kAclFast,
        CmdDbSize);
  r.Add("FLUSHDB", -1, kCmdWrite | kCmdWholeShard, kNoKeys, kAclFlush, CmdFlushDb);
  r.Add("FLUSHALL", -1, kCmdWrite | kCmdWholeShard, kNoKeys, kAclFlush, CmdFlushAll);
  r.Add("TIME", 1, kAnytime | kCmdFast, kNoKeys, kAclFast, CmdTime);
  r.Add("SHUTDOWN", -1, kAdmin | kCmdNoMulti | kCmdAllowBusy, kNoKeys, kAclAdminCmd,
        with_service(CmdShutdown));
  r.Add("MONITOR", 1, kAdmin, kNoKeys, kAclAdminCmd,
        [](CmdArgList, ConnectionContext* cntx) { StartMonitor(cntx); });
  r.Add("COMMAND", -1, kAnytime, kNoKeys, kAclSlow | kAclConnection, with_service(CmdCommand),
        {{"COUNT", 2, kAclSlow | kAclConnection},
         {"INFO", -2, kAclSlow | kAclConnection},
         {"DOCS", -2, kAclSlow | kAclConnection},
         {"LIST", -2, kAclSlow | kAclConnection},
         {"GETKEYS", -4, kAclSlow | kAclConnection},
         {"GETKEYSANDFLAGS", -4, kAclSlow | kAclConnection},
         {"HELP", 2, kAclSlow | kAclConnection}});
}

}  // namespace damselfly
