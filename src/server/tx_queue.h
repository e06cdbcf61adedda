// ShardTxQueue: one shard's side of VLL scheduling, independent of threads so that its
// interleavings can be tested directly (tx_queue_test.cc).
//
// A transaction is present on each shard it touches as a ShardTxEntry: its txid, the
// keys it locks there and the state of its current hop. The queue:
//  1. Schedule(entry): takes the entry's intent locks in one step (never waiting) and
//     appends it. If every lock was free, no earlier transaction on this shard touches
//     the entry's keys, and no later one can run before the entry releases them (its
//     locks make those later ones wait), so the entry may run *out of order*: at once,
//     whatever sits ahead of it. A multi-shard schedule is refused when an entry with a
//     larger txid was already scheduled here; the coordinator then undoes it on every
//     shard (Cancel) and retries with a fresh txid. That keeps each queue in txid order,
//     so all shards agree on the order of any two transactions: no deadlock.
//  2. Arm(entry, last): the coordinator asks for the entry's next hop. It runs at once
//     when the entry is out of order or at the head of the queue; otherwise it runs when
//     the entries ahead of it have left. After its last hop the entry releases its locks
//     and leaves the queue, which may let the next head run its armed hop.
//  Between the hops of a multi-hop transaction its entries keep their locks and their
//  place, so the keys cannot change under it.
//  2b. LockLate(entry, tag, mode): a running script reached a key it did not declare.
//     - Free: taken at once (an entry not queued here yet joins out of order): nothing
//       scheduled holds it, so nothing that ran touched it mid-transaction, and
//       everything scheduled later that wants it finds it locked and waits.
//     - Held by younger entries only, none of which has run a hop here: the script goes
//       first. It takes the key and joins the queue just ahead of the first of them (if
//       it is not queued here yet), and they lose their out-of-order right, so they wait
//       for it as if it had been scheduled here with the key. This is only done when
//       every entry from that place on that waits for its turn is younger: the new
//       waits all point from younger to older, as VLL's own do, so they close no cycle.
//     - Held by an older entry: the script may wait (kWait) and ask again, unless that
//       entry waits behind the script here (then, as for a younger holder that already
//       ran here, which may be anywhere in its transaction, kConflict: the script must
//       restart or fail, see script_runner.h).
//  3. Whole-shard entries lock the shard rather than keys: never out of order (they
//     wait for everything scheduled before them to leave), and while one is queued no
//     later entry runs out of order and the fast path is closed (no_locks() and IsFree
//     say no), so everything after it waits for it.
//
// Thread-safety: one queue per shard thread; every call from that thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/container/inlined_vector.h"

#include "src/server/intent_lock.h"

namespace damselfly {

class ShardTxEntry {
 public:
  virtual ~ShardTxEntry() = default;

  uint64_t txid = 0;
  // The keys locked on this shard, each once, with the strongest mode needed.
  absl::InlinedVector<std::pair<LockTag, LockMode>, 4> locks;
  // A whole-shard entry (FLUSHALL, SWAPDB, MOVE...): it conflicts with every other entry
  // and every fast-path command, so it runs alone, at the head of the queue.
  bool whole_shard = false;

  bool out_of_order() const { return out_of_order_; }
  bool queued() const { return queued_; }

  // A one-hop entry that AbortWaiting may take out of the queue before it runs.
  bool abortable = false;
  // Never out of order (set before Schedule): the transaction's shards must all end it
  // in their queues' order, which the replication stream relies on for the groups that
  // span shards (journal.h).
  bool in_order = false;

 protected:
  // Runs the armed hop on this shard. Must not suspend.
  virtual void RunHop() = 0;
  // Called instead of RunHop when AbortWaiting took the entry out (abortable only).
  virtual void Abort() {}

 private:
  friend class ShardTxQueue;
  ShardTxEntry* prev_ = nullptr;  // the queue is an intrusive list: no node to allocate
  ShardTxEntry* next_ = nullptr;
  bool queued_ = false;
  bool out_of_order_ = false;
  bool armed_ = false;
  bool last_hop_ = false;
  bool ran_ = false;  // a hop of it ran on this shard
};

// What LockLate did (tx_queue.h, 2b).
enum class LateLock : uint8_t { kTaken, kWait, kConflict };

class ShardTxQueue {
 public:
  // Locks the entry's keys and appends it. With `check_order` (multi-shard
  // transactions), refuses without side effects, returning false, when a larger txid
  // was scheduled here before.
  bool Schedule(ShardTxEntry* entry, bool check_order);
  // Undoes Schedule of an entry that has not run: releases its locks, leaves the queue.
  void Cancel(ShardTxEntry* entry);
  // See 2b: takes `tag` in `mode` for `entry` (queueing the entry if it was not queued
  // here), or says why not, taking nothing. A key held only by `entry` itself counts as
  // free.
  LateLock LockLate(ShardTxEntry* entry, LockTag tag, LockMode mode);
  // A script went busy (script_runner.h): the abortable entries waiting behind others
  // leave the queue unrun, so their clients get -BUSY instead of waiting for it.
  void AbortWaiting();
  // Requests the entry's next hop (the last when `last_hop`); runs it, and any hop it
  // unblocks, before returning when possible.
  void Arm(ShardTxEntry* entry, bool last_hop);

  // The single-shard fast path: true when `key` may be used in `mode` right now,
  // without queueing.
  bool IsFree(std::string_view key, LockMode mode) const {
    return whole_shard_entries_ == 0 && (locks_.empty() || locks_.IsFree(LockTagOf(key), mode));
  }
  bool no_locks() const { return locks_.empty() && whole_shard_entries_ == 0; }
  size_t size() const { return size_; }

 private:
  // Runs the armed hop of `entry`; concludes it after its last hop.
  void Run(ShardTxEntry* entry);
  void Append(ShardTxEntry* entry);
  // Links a new entry into the queue just before `next`.
  void InsertBefore(ShardTxEntry* entry, ShardTxEntry* next);
  void Remove(ShardTxEntry* entry);
  // Runs the armed hops of successive queue heads.
  void RunHeads();

  ShardTxEntry* head_ = nullptr;
  ShardTxEntry* tail_ = nullptr;
  size_t size_ = 0;
  IntentLockTable locks_;
  uint64_t max_scheduled_txid_ = 0;
  size_t whole_shard_entries_ = 0;  // queued whole-shard entries
};

}  // namespace damselfly
