#include "src/server/multi_exec.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/facade/conn_context.h"
#include "src/server/acl_family.h"
#include "src/server/acl_users.h"
#include "src/server/command_accounting.h"
#include "src/facade/error.h"
#include "src/server/config_family.h"
#include "src/server/conn_tx_state.h"
#include "src/server/engine_shard_set.h"
#include "src/server/journal.h"
#include "src/server/transaction.h"
#include "src/server/watch.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::CommandId;
using facade::ConnectionContext;
using facade::ReplyBuilder;

// Commands that run at once inside MULTI instead of being queued, as in Redis.
bool RunsInsideMulti(const CommandId* cid) {
  const std::string& name = cid->name;
  return name == "EXEC" || name == "DISCARD" || name == "MULTI" || name == "WATCH" ||
         name == "QUIT" || name == "RESET";
}

void ClearMulti(ConnTxState* state) {
  state->in_multi = false;
  state->exec_abort = false;
  state->queued.clear();
}

// --- WATCH, UNWATCH

// Registers the keys at `indices` of args on this shard and returns the ones it added.
// Shard thread. Hops on several shards run at once, so this only reads state->watched;
// the coordinator appends what each shard added once the hop is done.
std::vector<std::string_view> WatchHere(ConnTxState* state, DbIndex db, CmdArgList args,
                                        absl::Span<const uint32_t> indices) {
  EngineShard* shard = EngineShard::tlocal();
  std::vector<std::string_view> added;
  for (uint32_t index : indices) {
    std::string_view key = args[index];
    bool known = std::find(added.begin(), added.end(), key) != added.end();
    for (const auto& [watched_db, watched_key] : state->watched) {
      known |= watched_db == db && watched_key == key;
    }
    if (known) continue;
    shard->db_slice().Find(db, key);  // a key that has already expired goes now, not later
    shard->watches().Watch(db, key, &state->watch_dirty);
    added.push_back(key);
  }
  return added;
}

void CmdWatch(CmdArgList args, ConnectionContext* cntx) {
  ConnTxState* state = ConnTxState::Get(cntx);
  if (state->in_multi) return cntx->reply_builder()->SendError("ERR WATCH inside MULTI is not allowed");
  CommandTransaction tx(args, cntx);
  std::vector<std::vector<std::string_view>> added(shard_set->size());
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        added[shard->shard_id()] = WatchHere(state, t->db(), args, t->KeyIndices(shard->shard_id()));
      },
      true);
  for (const auto& keys : added) {
    for (std::string_view key : keys) state->watched.emplace_back(cntx->db_index, std::string(key));
  }
  cntx->reply_builder()->SendOk();
}

void CmdUnwatch(CmdArgList, ConnectionContext* cntx) {
  UnwatchAll(cntx);
  cntx->reply_builder()->SendOk();
}

// --- MULTI, DISCARD, EXEC

void CmdMulti(CmdArgList, ConnectionContext* cntx) {
  ConnTxState* state = ConnTxState::Get(cntx);
  if (state->in_multi) return cntx->reply_builder()->SendError("ERR MULTI calls can not be nested");
  state->in_multi = true;
  cntx->reply_builder()->SendOk();
}

void CmdDiscard(CmdArgList, ConnectionContext* cntx) {
  ConnTxState* state = ConnTxState::Find(cntx);
  if (!state || !state->in_multi) {
    return cntx->reply_builder()->SendError("ERR DISCARD without MULTI");
  }
  ClearMulti(state);
  UnwatchAll(cntx);
  cntx->reply_builder()->SendOk();
}

enum class Placement { kNoKeys, kOneShard, kManyShards };

Placement PlacementOf(const CommandId* cid, CmdArgList args) {
  Placement placement = Placement::kNoKeys;
  // Makes its hops on every shard through EXEC's (whole-shard) transaction.
  if (cid->whole_shard_if != nullptr && cid->whole_shard_if(args)) return Placement::kNoKeys;
  // A script makes its own hops, from the fiber, through EXEC's transaction.
  if (cid->flags & facade::kCmdScript) return Placement::kManyShards;
  ShardId first = 0;
  cid->ForEachKey(args, [&](size_t index, uint32_t) {
    ShardId shard = shard_set->ShardOf(args[index]);
    if (placement == Placement::kNoKeys) {
      placement = Placement::kOneShard;
      first = shard;
    } else if (shard != first) {
      placement = Placement::kManyShards;
    }
  });
  return placement;
}

void CmdExec(CmdArgList, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  ConnTxState* state = ConnTxState::Find(cntx);
  if (!state || !state->in_multi) return rb->SendError("ERR EXEC without MULTI");
  if (state->exec_abort) {
    ClearMulti(state);
    UnwatchAll(cntx);
    return rb->SendError("EXECABORT Transaction discarded because of previous errors.");
  }
  // The queued commands move out of the state: a command inside may reset it (RESET is
  // not queued, but UNWATCH is).
  std::vector<ConnTxState::QueuedCommand> queued = std::move(state->queued);
  ClearMulti(state);
  std::vector<std::vector<std::string_view>> views(queued.size());
  bool any_keys = !state->watched.empty();
  bool whole_shard = false;
  bool may_write = false;
  for (size_t i = 0; i < queued.size(); ++i) {
    views[i].assign(queued[i].args.begin(), queued[i].args.end());
    any_keys |= queued[i].cid->takes_keys();
    whole_shard |= queued[i].cid->IsWholeShard(views[i]);
    may_write |= (queued[i].cid->flags & (facade::kCmdWrite | facade::kCmdScript)) != 0;
  }

  // A copy: the locks view these keys, and UNWATCH (queued) or the end of EXEC drop the
  // connection's list before the locks are released.
  const std::vector<std::pair<DbIndex, std::string>> watched = state->watched;
  std::optional<Transaction> tx;
  if (whole_shard) {
    tx.emplace(Transaction::WholeShards{}, cntx->db_index, /*multi=*/true);
  } else if (any_keys) {
    tx.emplace(cntx->db_index);
  }
  if (tx) {
    // What the transaction writes reaches the replicas as one unit, as in Redis.
    if (may_write) tx->set_journal_group(NewJournalGroup());
    for (size_t i = 0; i < queued.size(); ++i) tx->AddLocks(queued[i].cid, views[i]);
    for (const auto& [db, key] : watched) tx->AddLock(key, LockMode::kShared);
    tx->Schedule();
  }
  if (!watched.empty()) {
    // Every write to a watched key that came before this transaction has run by now (the
    // hop runs at the head of the queues, or out of order when nothing held the keys);
    // none can come after it before it ends. A watched key that expired counts as changed.
    tx->ExecuteOnAll(
        [&watched](Transaction*, EngineShard* shard) {
          for (const auto& [db, key] : watched) {
            if (shard_set->ShardOf(key) == shard->shard_id()) shard->db_slice().Find(db, key);
          }
        },
        false);
    const bool dirty = state->watch_dirty.load(std::memory_order_relaxed);
    UnwatchAll(cntx);
    if (dirty) {
      tx->Conclude();
      return rb->SendNullArray();
    }
  }
  state->exec_tx = tx ? &*tx : nullptr;
  state->executing = true;
  rb->StartArray(queued.size());
  for (size_t i = 0; i < queued.size(); ++i) {
    // The user's rules may have changed since the command was queued.
    if (!CurrentAclUser(cntx).unrestricted()) [[unlikely]] {
      std::string refusal = AclRefusal(cntx, *queued[i].cid, views[i], AclSite::kExec);
      if (!refusal.empty()) {
        rb->SendError(refusal);
        continue;
      }
    }
    RunInTransaction(queued[i].cid, views[i], state->exec_tx, cntx);
  }
  state->executing = false;
  state->exec_tx = nullptr;
  if (tx) tx->Conclude();
}

}  // namespace

void RunInTransaction(const CommandId* cid, CmdArgList args, Transaction* tx, ConnectionContext* cntx) {
  cntx->last_command = cid;
  cntx->last_subcommand =
      cid->subcommands.empty() || args.size() < 2 ? nullptr : cid->FindSubcommand(args[1]);
  switch (PlacementOf(cid, args)) {
    case Placement::kNoKeys:
      RunCommand(cid, cid->handler, args, cntx, CommandClockTicks());
      return;
    case Placement::kOneShard:
      tx->BindCommand(cid, args, cntx->db_index);
      return tx->Execute(
          [&](Transaction*, EngineShard*) {
            ShardLocalScope local;
            ConnTxState* state = ConnTxState::Find(cntx);
            DbSlice::FrozenClock clock(state ? state->script_clock_ms : 0);
            RunCommand(cid, cid->handler, args, cntx, CommandClockTicks());
          },
          true);
    case Placement::kManyShards:
      // Binds tx via CommandTransaction.
      RunCommand(cid, cid->handler, args, cntx, CommandClockTicks());
      return;
  }
}

void UnwatchAll(ConnectionContext* cntx) {
  ConnTxState* state = ConnTxState::Find(cntx);
  if (!state || state->watched.empty()) return;
  for (ShardId shard = 0; shard < shard_set->size(); ++shard) {
    bool any = false;
    for (const auto& [db, key] : state->watched) any |= shard_set->ShardOf(key) == shard;
    if (!any) continue;
    shard_set->Await(shard, [&] {
      WatchTable& watches = EngineShard::tlocal()->watches();
      for (const auto& [db, key] : state->watched) {
        if (shard_set->ShardOf(key) == shard) watches.Unwatch(db, key, &state->watch_dirty);
      }
    });
  }
  state->watched.clear();
  state->watch_dirty.store(false, std::memory_order_relaxed);
}

void MultiExec::QueuedFlags(ConnectionContext* cntx, uint32_t* any, uint32_t* all) {
  ConnTxState* state = ConnTxState::Find(cntx);
  if (!state || !state->in_multi) return;
  for (const ConnTxState::QueuedCommand& queued : state->queued) {
    *any |= queued.cid->flags;
    *all &= queued.cid->flags;
  }
}

bool MultiExec::InMulti(ConnectionContext* cntx) {
  ConnTxState* state = ConnTxState::Find(cntx);
  return state && state->in_multi;
}

bool MultiExec::InterceptInMulti(const CommandId* cid, CmdArgList args, ConnectionContext* cntx) {
  ConnTxState* state = ConnTxState::Find(cntx);
  if (cid && cid->name == "RESET") {
    ClearMulti(state);
    UnwatchAll(cntx);
    return false;
  }
  if (!state->in_multi) return false;
  if (cid == nullptr) {
    state->exec_abort = true;
    return true;
  }
  if (cid->flags & facade::kCmdNoMulti) {
    state->exec_abort = true;
    cntx->reply_builder()->SendError("ERR Command not allowed inside a transaction");
    return true;
  }
  // Past maxmemory, as Redis's processCommand: nothing is queued, since queuing takes
  // memory (denyoom commands were refused before they got here), and an EXEC that would
  // run a denyoom command is refused, which discards the transaction. DISCARD and QUIT
  // go through (RESET went above).
  if (cid->name != "DISCARD" && cid->name != "QUIT" && OverMaxMemory()) {
    if (cid->name != "EXEC") {
      CountRejected(cid, args);
      state->exec_abort = true;
      cntx->reply_builder()->SendError(facade::kOomErr);
      return true;
    }
    if (std::any_of(state->queued.begin(), state->queued.end(), [](const auto& queued) {
          return (queued.cid->flags & facade::kCmdDenyOom) != 0;
        })) {
      CountRejected(cid, args);
      AbortExec(cntx, facade::kOomErr);
      return true;
    }
  }
  if (RunsInsideMulti(cid)) return false;
  state->queued.push_back({cid, std::vector<std::string>(args.begin(), args.end())});
  cntx->reply_builder()->SendSimpleString("QUEUED");
  return true;
}

void MultiExec::AbortExec(ConnectionContext* cntx, std::string_view error) {
  // Redis formats its own refusals (arity, subscribed mode) without a code; those with
  // one (BUSY, LOADING, NOAUTH, OOM) keep it.
  if (error.starts_with("ERR ")) error.remove_prefix(4);
  if (ConnTxState* state = ConnTxState::Find(cntx)) {
    ClearMulti(state);
    UnwatchAll(cntx);
  }
  cntx->reply_builder()->SendError(
      helio::StrCat("EXECABORT Transaction discarded because of: ", error));
}

void MultiExec::OnConnectionClose(ConnectionContext* cntx) {
  ConnTxState* state = ConnTxState::Find(cntx);
  if (!state) return;
  ClearMulti(state);
  UnwatchAll(cntx);
}

void MultiExec::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  constexpr uint32_t kFlags = kCmdNoScript | kCmdLoading | kCmdStale;
  constexpr uint32_t kFastFlags = kFlags | kCmdFast | kCmdAllowBusy;
  constexpr uint32_t kAclFastTx = kAclFast | kAclTransaction;
  r.Add("MULTI", 1, kFastFlags, kNoKeys, kAclFastTx, CmdMulti);
  r.Add("EXEC", 1, kFlags | kCmdSkipSlowlog, kNoKeys, kAclSlow | kAclTransaction, CmdExec);
  r.Add("DISCARD", 1, kFastFlags, kNoKeys, kAclFastTx, CmdDiscard);
  r.Add("WATCH", -2, kFastFlags, Keys(1, -1).WithFlags(kKeyRO), kAclFastTx, CmdWatch);
  r.Add("UNWATCH", 1, kFastFlags, kNoKeys, kAclFastTx, CmdUnwatch);
}

}  // namespace damselfly
