#include "src/server/main_service.h"

#include <glog/logging.h>

#include "absl/container/inlined_vector.h"
#include "src/facade/error.h"
#include "src/facade/resp_connection.h"
#include "src/server/aof.h"
#include "src/server/bitops_family.h"
#include "src/server/client_pause.h"
#include "src/server/command_accounting.h"
#include "src/server/command_docs_table.h"
#include "src/server/config_family.h"
#include "src/server/connection_family.h"
#include "src/server/debug_family.h"
#include "src/server/dump_family.h"
#include "src/server/engine_shard_set.h"
#include "src/server/function_family.h"
#include "src/server/generic_family.h"
#include "src/server/geo_family.h"
#include "src/server/hash_family.h"
#include "src/server/hll_family.h"
#include "src/server/latency_family.h"
#include "src/server/list_family.h"
#include "src/server/lookup_prefetcher.h"
#include "src/server/memory_family.h"
#include "src/server/monitor.h"
#include "src/server/multi_exec.h"
#include "src/server/persistence_family.h"
#include "src/server/pubsub_family.h"
#include "src/server/script_family.h"
#include "src/server/script_runner.h"
#include "src/server/server_family.h"
#include "src/server/server_state.h"
#include "src/server/set_family.h"
#include "src/server/sort_family.h"
#include "src/server/stream_family.h"
#include "src/server/slowlog_family.h"
#include "src/server/replica.h"
#include "src/server/replication.h"
#include "src/server/replication_family.h"
#include "src/server/standalone_family.h"
#include "src/server/acl_family.h"
#include "src/server/acl_users.h"
#include "src/server/string_family.h"
#include "src/server/zset_family.h"
#include "src/server/tracking.h"
#include "src/server/transaction.h"

namespace damselfly {

using facade::CmdArgList;
using facade::CommandId;
using facade::ConnectionContext;

namespace {
// Longest run of commands squashed into one hop; bounds the time a shard spends on one
// connection before others get a turn.
constexpr size_t kMaxSquashedRun = 64;
}  // namespace

Service::Service(helio::io::ProactorPool* pool) : pool_(pool) {
  SetReplicaService(this);
  SetAofService(this);
}

void Service::RegisterCommands() {
  AddCommandDocs(&registry_);
  ConnectionFamily::Register(&registry_);
  ServerFamily::Register(this, &registry_);
  ConfigFamily::Register(&registry_);
  SlowlogFamily::Register(&registry_);
  ReplicationFamily::Register(&registry_);
  StandaloneFamily::Register(&registry_);
  AclFamily::Register(&registry_);
  LatencyFamily::Register(&registry_);
  StringFamily::Register(&registry_);
  ZSetFamily::Register(&registry_);
  GeoFamily::Register(&registry_);
  GenericFamily::Register(&registry_);
  DumpFamily::Register(&registry_);
  HashFamily::Register(&registry_);
  ListFamily::Register(&registry_);
  SetFamily::Register(&registry_);
  SortFamily::Register(&registry_);
  StreamFamily::Register(&registry_);
  HllFamily::Register(&registry_);
  BitopsFamily::Register(&registry_);
  DebugFamily::Register(&registry_);
  MemoryFamily::Register(&registry_);
  MultiExec::Register(&registry_);
  PubSubFamily::Register(&registry_);
  ScriptFamily::Register(&registry_);
  FunctionFamily::Register(&registry_);
  PersistenceFamily::Register(&registry_);
  AofFamily::Register(&registry_);
  registry_.CheckEveryDocUsed();
  InitAclUsers(&registry_);
}

const CommandId* Service::Validate(CmdArgList args, ConnectionContext* cntx) {
  // A refused EXEC also ends the transaction, with EXECABORT and the reason (Redis's
  // rejectCommand); the refusal of a command queued after MULTI marks it for EXECABORT
  // (MultiExec::InterceptInMulti).
  auto reject = [&](const CommandId* known, std::string_view error) -> const CommandId* {
    if (known != nullptr && known->name == "EXEC") {
      MultiExec::AbortExec(cntx, error);
    } else {
      cntx->reply_builder()->SendError(error);
    }
    if (known != nullptr) CountRejected(known, args);
    return nullptr;
  };
  std::string error;
  const CommandId* cid = registry_.Validate(args, &error, cntx->last_command);
  if (cid == nullptr) return reject(registry_.Find(args[0]), error);
  if (!cntx->authenticated && !(cid->flags & facade::kCmdNoAuth)) {
    return reject(cid, facade::kNoAuthErr);
  }
  if (!CurrentAclUser(cntx).unrestricted()) [[unlikely]] {
    std::string refusal = AclRefusal(cntx, *cid, args, AclSite::kToplevel);
    if (!refusal.empty()) return reject(cid, refusal);
  }
  // The master's writes are refused neither for memory nor for being on a replica.
  if ((cid->flags & facade::kCmdDenyOom) && !cntx->master_link && OverMaxMemory()) {
    return reject(cid, facade::kOomErr);
  }
  const uint8_t refusals = ReplicaRefusals();
  if (refusals != 0 && !cntx->master_link) [[unlikely]] {
    uint32_t any_flags = cid->flags, all_flags = cid->flags;
    // EXEC is refused as its queued commands would be now (Redis's processCommand).
    if (cid->name == "EXEC") MultiExec::QueuedFlags(cntx, &any_flags, &all_flags);
    if ((refusals & kRefuseDiskError) && ((any_flags & facade::kCmdWrite) || cid->name == "PING")) {
      return reject(cid, DiskErrorRefusal());
    }
    if ((refusals & kRefuseNoReplicas) && (any_flags & facade::kCmdWrite)) {
      return reject(cid, kNoReplicasErr);
    }
    if ((refusals & kRefuseWrites) && (any_flags & facade::kCmdWrite)) {
      return reject(cid, kReadOnlyReplicaErr);
    }
    if ((refusals & kRefuseStale) && !(all_flags & facade::kCmdStale)) {
      return reject(cid, kMasterDownErr);
    }
  }
  if (Loading() && !(cid->flags & facade::kCmdLoading) && !cntx->aof_loading) [[unlikely]] {
    return reject(cid, facade::kLoadingErr);
  }
  if (IsSubscribed(cntx) && cntx->reply_builder()->protocol() == facade::RespVersion::kResp2) {
    const facade::SubcommandSpec* sub =
        cid->subcommands.empty() ? nullptr : cid->FindSubcommand(args[1]);
    if (std::string error = SubscribedModeError(cntx, cid, sub); !error.empty()) {
      return reject(cid, error);
    }
  }
  if (ScriptsBusy()) [[unlikely]] {
    if (std::string error = BusyScriptError(cid, args); !error.empty()) return reject(cid, error);
  }
  // A monitoring connection counts as a replica in Redis, which keeps it off the keys.
  if (IsMonitoring(cntx) && (cid->flags & (facade::kCmdWrite | facade::kCmdReadOnly))) {
    return reject(cid, "ERR Replica can't interact with the keyspace");
  }
  return cid;
}

Service::Route Service::RouteOf(const CommandId* cid, CmdArgList args) {
  Route route;
  // Runs its own whole-shard transaction from the fiber.
  if (cid->whole_shard_if != nullptr && cid->whole_shard_if(args)) return route;
  // Sleeps on the fiber (blocking_controller.h), which a hop must not do.
  if (cid->flags & facade::kCmdBlocking) return {Route::kCrossShard, 0};
  // Runs a script, which hops as it goes (script_runner.h).
  if (cid->flags & facade::kCmdScript) return {Route::kCrossShard, 0};
  bool first = true;
  cid->ForEachKey(args, [&](size_t index, uint32_t) {
    ShardId shard = shard_set->ShardOf(args[index]);
    if (first) {
      route = {Route::kShard, shard};
      first = false;
    } else if (route.kind == Route::kShard && shard != route.shard) {
      route.kind = Route::kCrossShard;
    }
  });
  return route;
}

void Service::DispatchMany(absl::Span<const CmdArgList> commands, ConnectionContext* cntx) {
  if (AofHoldsReplies() && !cntx->aof_loading) [[unlikely]] return DispatchDurably(commands, cntx);
  DispatchBatch(commands, cntx, false);
}

void Service::DispatchDurably(absl::Span<const CmdArgList> commands, ConnectionContext* cntx) {
  // Writes, and the commands that run others (EXEC, EVAL, FCALL...), whose flags say
  // nothing of it; an unknown command writes nothing.
  bool may_write = false;
  for (CmdArgList args : commands) {
    const CommandId* cid = registry_.Find(args[0]);
    if (cid != nullptr &&
        ((cid->flags & (facade::kCmdWrite | facade::kCmdScript)) || cid->name == "EXEC")) {
      may_write = true;
    }
  }
  DispatchBatch(commands, cntx, may_write);
  if (may_write) AwaitAofWrites();
}

void Service::DispatchBatch(absl::Span<const CmdArgList> commands, ConnectionContext* cntx,
                            bool durable) {
  // current_args views the caller's buffers: never leave it set past this call.
  struct ClearCurrentArgs {
    ConnectionContext* cntx;
    ~ClearCurrentArgs() { cntx->current_args = {}; }
  } clear_current_args{cntx};
  ThreadStats& stats = ServerState::tlocal()->stats;
  absl::InlinedVector<const CommandId*, kMaxSquashedRun> run_cids;  // no allocation per run
  // Squashed commands skip Validate: while over maxmemory, on a replica that refuses
  // them or on a master short of good replicas, writes are not squashed (on a stale
  // replica, nothing is).
  const bool over_maxmemory = OverMaxMemory();
  const uint8_t refusals = cntx->master_link ? 0 : ReplicaRefusals();
  size_t i = 0;
  while (i < commands.size() && !cntx->close_after_reply) {
    CmdArgList args = commands[i];
    size_t output_before = cntx->reply_builder()->output_size();  // for CLIENT REPLY
    cntx->current_args = args;
    const CommandId* cid = Validate(args, cntx);
    ++stats.commands_processed;
    if (cid != nullptr && ClientPause::MustWait(cid, args, cntx)) [[unlikely]] {
      cntx->last_command = cid;
      if (!cntx->Flush()) return;
      output_before = 0;
      ClientPause::Wait(cid, args, cntx);
      if (cntx->owner()->killed()) return;
    }
    if (cntx->transaction_state && MultiExec::InterceptInMulti(cid, args, cntx)) {
      cntx->FinishReply(output_before);
      ++i;
      continue;
    }
    if (cid == nullptr) {
      cntx->FinishReply(output_before);
      ++i;
      continue;
    }
    cntx->last_command = cid;
    cntx->last_subcommand =
        cid->subcommands.empty() || args.size() < 2 ? nullptr : cid->FindSubcommand(args[1]);
    Route route = RouteOf(cid, args);
    if (route.kind != Route::kShard) {
      RunCommand(cid, cid->handler, args, cntx, CommandClockTicks());
      ++i;
    } else {
      // Gather the following commands for the same shard that need no error reply.
      run_cids.assign(1, cid);
      size_t end = i + 1;
      // WATCH inside MULTI runs (to refuse); what follows it must be queued, not squashed.
      // Nor may what follows a WATCH of a monitor skip the monitor's check in Validate.
      // A reply CLIENT REPLY SKIP drops must be the run's only one.
      const bool alone = (cntx->transaction_state && MultiExec::InMulti(cntx)) ||
                         cntx->skipping_reply() || IsMonitoring(cntx);
      while (!alone && end < commands.size() && run_cids.size() < kMaxSquashedRun) {
        // Keyed commands are never containers, so name and arity are the whole check. A
        // pipeline repeats a name byte for byte: that needs no case-blind lookup.
        const std::string_view name = commands[end][0];
        const CommandId* next = name == commands[end - 1][0]
                                    ? run_cids.back()
                                    : registry_.Find(name, run_cids.back());
        if (next == nullptr || !next->subcommands.empty() ||
            !next->IsArityValid(commands[end].size()) ||
            (!cntx->authenticated && !(next->flags & facade::kCmdNoAuth)) ||
            (!cntx->acl_user->unrestricted() &&
             !cntx->acl_user->Check(*next, commands[end]).allowed()) ||
            ((next->flags & facade::kCmdDenyOom) && over_maxmemory) ||
            ((next->flags & facade::kCmdWrite) &&
             (refusals & (kRefuseWrites | kRefuseNoReplicas | kRefuseDiskError))) ||
            (refusals & kRefuseStale) ||
            ClientPause::MustWait(next, commands[end], cntx)) {
          break;
        }
        Route next_route = RouteOf(next, commands[end]);
        if (next_route.kind != Route::kShard || next_route.shard != route.shard) break;
        run_cids.push_back(next);
        ++end;
      }
      bool locked = false;
      size_t ran = RunOnShard(route.shard, commands.subspan(i, end - i), run_cids, cntx, &locked);
      if (locked) {  // commands [i, i + ran) ran; the next one waits for a transaction
        cntx->last_command = run_cids[ran];
        RunQueuedOnShard(run_cids[ran], commands[i + ran], cntx);
        ++ran;
      }
      stats.commands_processed += ran - 1;
      cntx->last_command = run_cids[ran - 1];
      cntx->last_subcommand = nullptr;
      i += ran;
    }
    cntx->FinishReply(output_before);
    if (cntx->reply_builder()->output_size() > facade::ClientConnection::kFlushThresholdBytes) {
      if (durable) AwaitAofWrites();
      if (!cntx->Flush()) return;
    }
  }
}

size_t Service::RunOnShard(uint16_t shard, absl::Span<const CmdArgList> run,
                           absl::Span<const CommandId* const> cids, ConnectionContext* cntx,
                           bool* locked) {
  const bool remote = !shard_set->IsLocal(shard);
  auto execute = [&] {
    ShardLocalScope local;
    EngineShard* engine_shard = EngineShard::tlocal();
    // Nothing here can suspend, so no transaction can lock keys during the run (but a
    // WATCH in the run may add watches).
    const bool no_locks = engine_shard->tx_queue().no_locks();
    DbSlice& slice = engine_shard->db_slice();
    // Every command of a run takes keys; their first keys are what a pipeline of GETs
    // and SETs looks up.
    LookupPrefetcher prefetcher(slice, cntx->db_index, run.size(),
                                [&](size_t i) { return run[i][cids[i]->FirstKeyIndex(run[i])]; });
    size_t ran = 0;
    uint64_t now = CommandClockTicks();
    for (; ran < run.size(); ++ran) {
      prefetcher.Before(ran);
      // A hop that reaches a shard while a script is busy gets -BUSY (it was validated
      // before the script went past the threshold).
      if (ScriptsBusy()) [[unlikely]] {
        if (std::string error = BusyScriptError(cids[ran], run[ran]); !error.empty()) {
          cntx->reply_builder()->SendError(error);
          continue;
        }
      }
      if (!no_locks && !KeysFreeForFastPath(engine_shard, cids[ran], run[ran])) {
        *locked = true;
        return ran;
      }
      cntx->last_command = cids[ran];  // CommandTransaction binds to it
      if (!(cids[ran]->flags & facade::kCmdWrite)) slice.EvictBeforeRead();
      now = RunCommand(cids[ran], cids[ran]->handler, run[ran], cntx, now);
      // Clients blocked on keys the command filled are served before anything else.
      engine_shard->blocking().ServeReady();
      if (cntx->reply_builder()->output_size() > facade::ClientConnection::kFlushThresholdBytes) {
        return ran + 1;
      }
    }
    return ran;
  };
  if (!remote) return execute();
  size_t ran = shard_set->Await(shard, execute);
  ThreadStats& stats = ServerState::tlocal()->stats;
  ++stats.shard_hops;
  stats.remote_commands += ran;
  return ran;
}

void Service::OnConnectionOpen(ConnectionContext* cntx) {
  ServerState* state = ServerState::tlocal();
  state->connections.insert(cntx->owner());
  RegisterClient(cntx);
  ++state->stats.connections_received;
}

void Service::OnConnectionClose(ConnectionContext* cntx) {
  UnregisterClient(cntx);  // first: no invalidation may reach its queue any more
  UnsubscribeAll(cntx);
  StopMonitor(cntx);
  MultiExec::OnConnectionClose(cntx);
  OnReplicaConnectionClose(cntx);
  ServerState::tlocal()->connections.erase(cntx->owner());
}

}  // namespace damselfly
