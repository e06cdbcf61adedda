#include "src/server/transaction.h"

#include <glog/logging.h>

#include <algorithm>
#include <atomic>

#include "src/server/conn_tx_state.h"
#include "src/server/engine_shard_set.h"
#include "src/server/journal.h"
#include "src/server/script_runner.h"

namespace damselfly {

using facade::CmdArgList;
using facade::CommandId;
using facade::ConnectionContext;

namespace {

// The global txid. One increment per multi-shard (or queued) command: the fast path
// never touches it.
std::atomic<uint64_t> next_txid{1};

LockMode ModeOf(uint32_t key_flags) {
  return (key_flags & facade::kKeyRO) ? LockMode::kShared : LockMode::kExclusive;
}

}  // namespace

Transaction::Transaction(const CommandId* cid, CmdArgList args, DbIndex db) : multi_(false) {
  InitShards();
  AddLocks(cid, args);
  BindCommand(cid, args, db);
}

Transaction::Transaction(DbIndex db) : db_(db), multi_(true) { InitShards(); }

Transaction::Transaction(WholeShards, DbIndex db, bool multi) : db_(db), multi_(multi) {
  InitShards();
  for (Entry& entry : shards_) entry.whole_shard = true;
}

Transaction::Transaction(Inline, const CommandId* cid, CmdArgList args, DbIndex db)
    : cid_(cid), args_(args), db_(db), multi_(false), inline_(true) {
  cid->ForEachKey(args, [&](size_t index, uint32_t) { inline_indices_.push_back(uint32_t(index)); });
  scheduled_ = true;
}

thread_local bool ShardLocalScope::active_ = false;

Transaction::~Transaction() {
  if (scheduled_ && !concluded_ && !inline_) Conclude();
}

void Transaction::InitShards() {
  shards_.resize(shard_set->size());
  for (ShardId id = 0; id < shards_.size(); ++id) {
    shards_[id].tx = this;
    shards_[id].shard = id;
  }
}

void Transaction::AddLocks(const CommandId* cid, CmdArgList args) {
  DCHECK(!scheduled_);
  cid->ForEachKey(args, [&](size_t index, uint32_t flags) { AddLock(args[index], ModeOf(flags)); });
}

void Transaction::AddLock(std::string_view key, LockMode mode) {
  shards_[shard_set->ShardOf(key)].locks.emplace_back(LockTagOf(key), mode);
}

void Transaction::BindCommand(const CommandId* cid, CmdArgList args, DbIndex db) {
  cid_ = cid;
  args_ = args;
  db_ = db;
  for (Entry& entry : shards_) entry.key_indices.clear();
  cid->ForEachKey(args, [&](size_t index, uint32_t) {
    shards_[shard_set->ShardOf(args[index])].key_indices.push_back(uint32_t(index));
  });
  for (Entry& entry : shards_) {
    DCHECK(entry.key_indices.empty() || !scheduled_ || entry.scheduled)
        << "a MULTI command's keys must have been locked";
  }
}

void Transaction::NormalizeLocks() {
  for (Entry& entry : shards_) {
    auto& locks = entry.locks;
    if (locks.size() < 2) continue;
    std::sort(locks.begin(), locks.end());  // per tag, kShared before kExclusive
    // Keep the last (strongest) mode of each tag.
    size_t out = 0;
    for (size_t i = 0; i < locks.size(); ++i) {
      if (i + 1 < locks.size() && locks[i + 1].first == locks[i].first) continue;
      locks[out++] = locks[i];
    }
    locks.resize(out);
  }
}

template <typename Select, typename Fn>
void Transaction::OnShards(Select&& select, Fn&& fn) {
  size_t count = 0;
  for (Entry& entry : shards_) count += select(entry);
  if (count == 0) return;
  helio::fibers::BlockingCounter pending(count);
  for (Entry& entry : shards_) {
    if (!select(entry)) continue;
    Entry* target = &entry;
    auto task = [target, &fn, &pending] {
      fn(target);
      pending.Dec();
    };
    if (shard_set->IsLocal(entry.shard)) {
      task();
    } else {
      shard_set->pool()->at(entry.shard)->Dispatch(task);
    }
  }
  pending.Wait();
}

void Transaction::Schedule() {
  DCHECK(!scheduled_);
  NormalizeLocks();
  size_t shard_count = 0;
  for (Entry& entry : shards_) {
    entry.scheduled = !entry.locks.empty() || entry.whole_shard;
    shard_count += entry.scheduled;
  }
  for (Entry& entry : shards_) entry.in_order = journal_group_ != 0 && shard_count > 1;
  // A one-shard transaction cannot be ordered inconsistently with anything: it may join
  // its queue whatever txids the queue holds.
  const bool check_order = shard_count > 1;
  auto scheduled = [](const Entry& entry) { return entry.scheduled; };
  while (true) {
    txid_ = next_txid.fetch_add(1, std::memory_order_relaxed);
    for (Entry& entry : shards_) entry.txid = txid_;
    OnShards(scheduled, [check_order](Entry* entry) {
      entry->schedule_ok = EngineShard::tlocal()->tx_queue().Schedule(entry, check_order);
    });
    bool all_ok = std::all_of(shards_.begin(), shards_.end(),
                              [](const Entry& e) { return !e.scheduled || e.schedule_ok; });
    if (all_ok) break;
    OnShards([](const Entry& e) { return e.scheduled && e.schedule_ok; },
             [](Entry* entry) { EngineShard::tlocal()->tx_queue().Cancel(entry); });
  }
  scheduled_ = true;
}

LateLock Transaction::LockLate(std::string_view key, LockMode mode) {
  DCHECK(scheduled_ && multi_ && !inline_);
  Entry& entry = shards_[shard_set->ShardOf(key)];
  const LockTag tag = LockTagOf(key);
  LateLock result = LateLock::kConflict;
  entry.txid = txid_;
  OnShards([&](const Entry& e) { return &e == &entry; },
           [&](Entry* target) {
             result = EngineShard::tlocal()->tx_queue().LockLate(target, tag, mode);
           });
  if (result == LateLock::kTaken) entry.scheduled = true;
  return result;
}

void Transaction::Entry::RunHop() {
  if (tx->hop_) {
    JournalGroupScope group(tx->journal_group_);
    JournalScope journal(tx->cid(), tx->args(), tx->db());
    (*tx->hop_)(tx, EngineShard::tlocal());
  }
  if (last_hop) {
    if (tx->journal_group_ != 0) ShardJournal::EndGroup(tx->journal_group_, tx->group_parts_);
    // Clients blocked on keys the transaction filled are served as it ends (so pushes in
    // MULTI serve them after EXEC), before the next transaction runs.
    EngineShard::tlocal()->blocking().ServeReady();
  }
  // The coordinator may go on (and destroy the transaction) once this is counted.
  tx->pending_->Dec();
}

void Transaction::Entry::Abort() {
  tx->aborted_ = true;
  tx->pending_->Dec();
}

void Transaction::Execute(HopFn fn, bool last) {
  if (inline_) return fn(this, EngineShard::tlocal());
  hop_ = &fn;
  const bool release = last && !multi_;
  ArmHop([](const Entry& e) { return !e.key_indices.empty(); }, release);
}

void Transaction::ExecuteOnAll(std::optional<HopFn> fn, bool last) {
  hop_ = fn ? &*fn : nullptr;
  ArmHop([](const Entry& e) { return e.scheduled; }, last);
}

template <typename Select>
void Transaction::ArmHop(Select&& select, bool last) {
  DCHECK(scheduled_ && !concluded_);
  size_t count = 0;
  for (Entry& entry : shards_) count += select(entry);
  if (last) group_parts_ = uint16_t(count);
  helio::fibers::BlockingCounter pending(count);
  pending_ = &pending;
  for (Entry& entry : shards_) {
    if (!select(entry)) continue;
    Entry* target = &entry;
    auto arm = [target, last] {
      target->last_hop = last;
      EngineShard::tlocal()->tx_queue().Arm(target, last);
    };
    if (shard_set->IsLocal(entry.shard)) {
      arm();
    } else {
      shard_set->pool()->at(entry.shard)->Dispatch(arm);
    }
  }
  pending.Wait();
  hop_ = nullptr;
  pending_ = nullptr;
  if (last) concluded_ = true;
}

CommandTransaction::CommandTransaction(CmdArgList args, ConnectionContext* cntx) {
  if (ShardLocalScope::active()) {
    tx_ = &own_.emplace(Transaction::Inline{}, cntx->last_command, args, cntx->db_index);
    return;
  }
  ConnTxState* state = ConnTxState::Find(cntx);
  if (state && state->exec_tx) {
    tx_ = state->exec_tx;
    tx_->BindCommand(cntx->last_command, args, cntx->db_index);
  } else {
    tx_ = &own_.emplace(cntx->last_command, args, cntx->db_index);
    // A write spanning shards reaches the replicas whole (on one shard, its hop's
    // records are together anyway).
    if ((cntx->last_command->flags & facade::kCmdWrite) && own_->shards_with_locks() > 1) {
      own_->set_journal_group(NewJournalGroup());
    }
  }
}

Transaction* CommandTransaction::Get() {
  if (own_ && !own_->scheduled()) own_->Schedule();
  return tx_;
}

void RunWholeShard(ConnectionContext* cntx, absl::FunctionRef<void(EngineShard*)> fn) {
  auto hop = [&](Transaction*, EngineShard* shard) { fn(shard); };
  ConnTxState* state = ConnTxState::Find(cntx);
  if (state && state->exec_tx) return state->exec_tx->ExecuteOnAll(hop, false);
  Transaction tx(Transaction::WholeShards{}, cntx->db_index);
  tx.Schedule();
  tx.ExecuteOnAll(hop, true);
}

WholeShardHops::WholeShardHops(ConnectionContext* cntx) {
  ConnTxState* state = ConnTxState::Find(cntx);
  if (state && state->exec_tx) {
    tx_ = state->exec_tx;
    return;
  }
  own_.emplace(Transaction::WholeShards{}, cntx->db_index);
  own_->Schedule();
  tx_ = &*own_;
}

WholeShardHops::~WholeShardHops() {
  if (own_) own_->Conclude();
}

void WholeShardHops::Run(absl::FunctionRef<void(EngineShard*)> fn) {
  tx_->ExecuteOnAll([&](Transaction*, EngineShard* shard) { fn(shard); }, false);
}

void LookThenAct(Transaction* tx, bool one_shard, Transaction::HopFn look,
                 absl::FunctionRef<void()> decide, Transaction::HopFn act) {
  if (one_shard) {
    return tx->Execute(
        [&](Transaction* t, EngineShard* shard) {
          look(t, shard);
          decide();
          act(t, shard);
        },
        true);
  }
  tx->Execute(look, false);
  decide();
  tx->Execute(act, true);
}

bool OnOneShard(CmdArgList args, size_t begin, size_t end) {
  for (size_t i = begin + 1; i < end; ++i) {
    if (shard_set->ShardOf(args[i]) != shard_set->ShardOf(args[begin])) return false;
  }
  return true;
}

void RunQueuedOnShard(const CommandId* cid, CmdArgList args, ConnectionContext* cntx) {
  Transaction tx(cid, args, cntx->db_index);
  // Waits for the transactions ahead, or leaves with -BUSY if a script holding its keys
  // runs past the busy threshold meanwhile (Redis answers -BUSY to everything then).
  if (!(cid->flags & facade::kCmdAllowBusy)) tx.MakeAbortable();
  tx.ScheduleSingleHop([&](Transaction*, EngineShard*) {
    ShardLocalScope local;
    cid->handler(args, cntx);
  });
  if (tx.aborted()) {
    std::string error = BusyScriptError(cid, args);
    cntx->reply_builder()->SendError(
        error.empty() ? "BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                        "SHUTDOWN NOSAVE."
                      : error);
  }
}

bool KeysFreeForFastPath(EngineShard* shard, const CommandId* cid, CmdArgList args) {
  const ShardTxQueue& queue = shard->tx_queue();
  if (queue.no_locks()) return true;
  bool free = true;
  cid->ForEachKey(args, [&](size_t index, uint32_t flags) {
    free &= queue.IsFree(args[index], ModeOf(flags));
  });
  return free;
}

}  // namespace damselfly
