// Transaction: runs a command whose keys live on several shards (or a MULTI/EXEC block)
// atomically, without a mutex on the data path, following VLL (Ren, Thomson, Abadi,
// VLDB 2013). The shard side is ShardTxQueue (tx_queue.h); this is the coordinator side,
// which runs on the client connection's fiber.
//
//  1. Keys. The constructor groups the command's keys by shard; each shard gets the
//     intent locks the command needs there (exclusive for writes, shared for reads).
//  2. Schedule hop. Schedule() takes a global txid and, on every involved shard at once,
//     takes the locks and appends the transaction to the shard's queue. A shard that
//     already queued a larger txid refuses; the transaction is then withdrawn everywhere
//     and retried with a new txid, so every queue is ordered by txid and no two shards
//     disagree on which of two transactions goes first (no deadlock). A one-shard
//     transaction has no order to agree on and is never refused. Nothing runs before the
//     schedule hop completed everywhere: a hop run on shard A while shard B had not yet
//     queued the transaction would let a later one (an MGET) see A's new value and B's
//     old one.
//  3. Execution hops. Execute(fn, last) runs fn on each shard holding keys of the current
//     command and waits for all of them. A shard runs the hop when the transaction is at
//     the head of its queue, or at once when all its locks were free at schedule time
//     (nothing queued before it touches its keys, and everything queued after it and
//     touching them waits for its locks). A transaction may make several hops — read on
//     some shards, then write on others (MSETNX, RENAME) — and keeps its locks and queue
//     places in between, so no other client sees or changes its keys meanwhile. After the
//     last hop each shard releases the locks and the next transaction may run.
//  4. Single-shard fast path (main_service.cc): a command whose keys all live on one
//     shard and are not locked runs at once, with no txid and no queue. Only when a key
//     is locked does it become a one-shard Transaction and wait its turn.
//  4b. One handler per command. A multi-key command's handler is written once, against
//     a CommandTransaction: it calls Execute with its shard code and replies from the
//     results. When the dispatcher runs it on the shard that owns all its keys (the fast
//     path, or the hop of a queued one-shard command), a ShardLocalScope is open and the
//     transaction is *inline*: Execute runs the hop at once, on this thread, with no
//     txid, queue or wait. Across shards the same code makes real hops.
//  4c. Whole-shard transactions (Transaction(WholeShards{}, db)) lock every shard rather
//     than keys (tx_queue.h, point 3): FLUSHALL, FLUSHDB, SWAPDB, later a snapshot's
//     cut. They run alone; ExecuteOnAll makes their hops. (MOVE needs none: its key's
//     lock covers the key in every database.)
//  5. MULTI/EXEC (multi_exec.cc): one Transaction locks the keys of every queued command
//     (and the WATCHed ones), then runs the commands one by one, each with hops on its
//     own shards; multi-shard commands inside reuse it (CommandTransaction). Its locks
//     are released by Conclude() after the last command.
// A client that disconnects cannot leave locks behind: the coordinator is the client's
// fiber, which finishes the command it is running before it notices the disconnect, and
// the destructor concludes a transaction its command left unfinished.
//
// Thread-safety: the coordinator methods run on one fiber; the hop functions run on the
// shard threads while that fiber waits, and may write the connection's replies then.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "src/facade/command_registry.h"
#include "src/server/engine_shard.h"
#include "src/server/tx_queue.h"

namespace damselfly {

class Transaction {
 public:
  using HopFn = absl::FunctionRef<void(Transaction* tx, EngineShard* shard)>;

  // A transaction for one command (cid, args) on database `db`.
  Transaction(const facade::CommandId* cid, facade::CmdArgList args, DbIndex db);
  // A MULTI/EXEC transaction: add the queued commands with AddLocks, then Schedule, then
  // BindCommand before each command's hops.
  explicit Transaction(DbIndex db);
  // Concludes a scheduled transaction that has not had its last hop.
  ~Transaction();

  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // A whole-shard transaction on every shard (see 4c); make its hops with ExecuteOnAll.
  // A MULTI/EXEC one (multi = true) may add key locks and bind commands like the other.
  struct WholeShards {};
  Transaction(WholeShards, DbIndex db, bool multi = false);
  // An inline transaction (see 4b) for (cid, args) on this thread's shard, which owns
  // all its keys. Only CommandTransaction makes these, inside a ShardLocalScope.
  struct Inline {};
  Transaction(Inline, const facade::CommandId* cid, facade::CmdArgList args, DbIndex db);

  // MULTI/EXEC: also lock the keys of (cid, args) (which must outlive the transaction),
  // or one `key` in `mode`.
  void AddLocks(const facade::CommandId* cid, facade::CmdArgList args);
  void AddLock(std::string_view key, LockMode mode);
  // MULTI/EXEC: the next hops are for (cid, args) on database `db`.
  void BindCommand(const facade::CommandId* cid, facade::CmdArgList args, DbIndex db);

  // Before Schedule: what the transaction writes reaches the replication stream as one
  // unit, group `group` (journal.h; 0: no group). A group over several shards makes the
  // transaction run in its queues' order.
  void set_journal_group(uint64_t group) { journal_group_ = group; }
  // The schedule hop (step 2). REQUIRES: not scheduled yet.
  void Schedule();
  // A hop (step 3) on every shard holding keys of the bound command. `last`: release
  // the locks afterwards (ignored in MULTI/EXEC, see Conclude).
  void Execute(HopFn fn, bool last);
  // Schedule + Execute(fn, true).
  void ScheduleSingleHop(HopFn fn) {
    Schedule();
    Execute(fn, true);
  }
  // A hop on every scheduled shard, `fn` optional; with `last`, releases all the locks.
  void ExecuteOnAll(std::optional<HopFn> fn, bool last);
  // A script reached `key`, which it did not declare: locks it in `mode` on its shard, or
  // says whether waiting and asking again is safe (tx_queue.h, 2b). REQUIRES:
  // scheduled, multi.
  LateLock LockLate(std::string_view key, LockMode mode);
  // Locks every shard (WholeShards): any key may be used without LockLate.
  bool whole_shard() const { return !shards_.empty() && shards_[0].whole_shard; }
  // Releases every lock of a scheduled transaction (MULTI/EXEC's end).
  void Conclude() { ExecuteOnAll(std::nullopt, true); }

  // Inside hops: the bound command, its database and the positions in args() of its
  // keys on `shard`, in argument order.
  facade::CmdArgList args() const { return args_; }
  const facade::CommandId* cid() const { return cid_; }
  DbIndex db() const { return db_; }
  absl::Span<const uint32_t> KeyIndices(ShardId shard) const {
    return inline_ ? absl::Span<const uint32_t>(inline_indices_) : shards_[shard].key_indices;
  }
  uint64_t txid() const { return txid_; }
  // How many shards it locks keys on (before Schedule: for the keys added so far).
  size_t shards_with_locks() const {
    return std::count_if(shards_.begin(), shards_.end(),
                         [](const Entry& e) { return !e.locks.empty(); });
  }
  bool scheduled() const { return scheduled_; }
  // Whether hops run at once on this thread (see 4b): a hop may then write replies in
  // order as it goes, where a multi-shard hop must collect results for the coordinator.
  bool is_inline() const { return inline_; }
  // A queued one-shard command (RunQueuedOnShard) that a busy script made leave its queue
  // unrun (ShardTxQueue::AbortWaiting).
  bool aborted() const { return aborted_; }
  // Before Schedule: the entries may be aborted so (one-hop, one-shard commands only).
  void MakeAbortable() {
    for (Entry& entry : shards_) entry.abortable = true;
  }

 private:
  class Entry final : public ShardTxEntry {
   public:
    Transaction* tx = nullptr;
    ShardId shard = 0;
    absl::InlinedVector<uint32_t, 4> key_indices;  // of the bound command
    bool scheduled = false;
    bool schedule_ok = false;
    bool last_hop = false;  // the armed hop releases the locks

   protected:
    void RunHop() override;
    void Abort() override;
  };

  void InitShards();
  // Runs fn(entry) as a task on each shard whose entry passes `select`, and waits.
  template <typename Select, typename Fn>
  void OnShards(Select&& select, Fn&& fn);
  // Arms a hop (hop_) on each shard whose entry passes `select` and waits for them all.
  template <typename Select>
  void ArmHop(Select&& select, bool last);
  // Sorts and deduplicates each shard's locks, keeping the strongest mode.
  void NormalizeLocks();

  const facade::CommandId* cid_ = nullptr;
  facade::CmdArgList args_;
  DbIndex db_ = 0;
  const bool multi_;
  bool inline_ = false;
  // Inline: every key position; room for 16 without an allocation (an MGET or MSET of
  // that many keys on one shard allocates nothing).
  absl::InlinedVector<uint32_t, 16> inline_indices_;
  bool scheduled_ = false;
  bool concluded_ = false;
  bool aborted_ = false;
  uint64_t txid_ = 0;
  uint64_t journal_group_ = 0;
  uint16_t group_parts_ = 0;  // the shards of the last hop: each hands over a part
  // One per shard of the process, never moved once scheduled (the queues point here).
  absl::InlinedVector<Entry, 4> shards_;
  // The running hop.
  const HopFn* hop_ = nullptr;
  helio::fibers::BlockingCounter* pending_ = nullptr;
};

// The transaction a multi-key command's handler runs its hops in: inline inside a
// ShardLocalScope (see 4b); inside EXEC, the EXEC's transaction (already scheduled, bound
// to this command); otherwise a new one for (cntx->last_command, args), scheduled on
// first use.
class CommandTransaction {
 public:
  CommandTransaction(facade::CmdArgList args, facade::ConnectionContext* cntx);
  Transaction* operator->() { return Get(); }
  Transaction* Get();

 private:
  std::optional<Transaction> own_;
  Transaction* tx_ = nullptr;
};

// Open while a command handler runs on the shard that owns all its keys, with the right
// to touch them (the dispatcher's fast path, a queued one-shard command's hop, EXEC's
// hop for a one-shard command): CommandTransactions made inside are inline. Scopes nest.
// Shard thread; must not span a suspension.
class ShardLocalScope {
 public:
  ShardLocalScope() : saved_(active_) { active_ = true; }
  ~ShardLocalScope() { active_ = saved_; }
  static bool active() { return active_; }

 private:
  static thread_local bool active_;
  const bool saved_;
};

// Runs fn on every shard as one whole-shard transaction (FLUSHALL, FLUSHDB, SWAPDB):
// alone, after every transaction scheduled before it and before every one after. Inside
// EXEC, as a hop of EXEC's transaction, which is itself whole-shard when it holds such a
// command (kCmdWholeShard). Connection fiber.
void RunWholeShard(facade::ConnectionContext* cntx, absl::FunctionRef<void(EngineShard*)> fn);

// The hops of a whole-shard command that needs several (SORT with BY/GET patterns, whose
// later hops read keys the first one found): one whole-shard transaction, as
// RunWholeShard's, scheduled by the constructor and released by the destructor; inside
// EXEC, EXEC's. Connection fiber.
class WholeShardHops {
 public:
  explicit WholeShardHops(facade::ConnectionContext* cntx);
  ~WholeShardHops();
  WholeShardHops(const WholeShardHops&) = delete;
  WholeShardHops& operator=(const WholeShardHops&) = delete;

  // Runs fn on every shard, at once, and waits for them all.
  void Run(absl::FunctionRef<void(EngineShard*)> fn);

 private:
  std::optional<Transaction> own_;
  Transaction* tx_;
};

// The hops of a command that looks at its keys, decides, then acts (the pops of LMPOP,
// ZMPOP, LMOVE and their blocking forms, which register a waiter when there is nothing
// to pop): `look` on every shard of the keys, `decide` on the fiber, `act` as the last
// hop. With `one_shard` (every key on one shard) it is one hop, `decide` running inside
// it: half the hops for a single-key BLPOP.
void LookThenAct(Transaction* tx, bool one_shard, Transaction::HopFn look,
                 absl::FunctionRef<void()> decide, Transaction::HopFn act);
// Whether the keys at [begin, end) of args live on one shard.
bool OnOneShard(facade::CmdArgList args, size_t begin, size_t end);

// Runs a single-shard command whose keys were locked: as a one-shard transaction, once
// the transactions ahead of it are done. Connection fiber.
void RunQueuedOnShard(const facade::CommandId* cid, facade::CmdArgList args,
                      facade::ConnectionContext* cntx);

// The fast-path test: every key of (cid, args) is free on `shard` (this thread's) for
// the command's mode.
bool KeysFreeForFastPath(EngineShard* shard, const facade::CommandId* cid,
                         facade::CmdArgList args);

}  // namespace damselfly
