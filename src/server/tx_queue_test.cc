#include "src/server/tx_queue.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace damselfly {
namespace {

// A transaction's entry that records when its hops run.
class FakeEntry final : public ShardTxEntry {
 public:
  FakeEntry(std::string name, uint64_t id, std::vector<std::pair<std::string_view, LockMode>> keys,
            std::vector<std::string>* log)
      : name_(std::move(name)), log_(log) {
    txid = id;
    for (auto [key, mode] : keys) locks.emplace_back(LockTagOf(key), mode);
  }

 protected:
  void RunHop() override { log_->push_back(name_); }

 private:
  std::string name_;
  std::vector<std::string>* log_;
};

constexpr LockMode kS = LockMode::kShared;
constexpr LockMode kX = LockMode::kExclusive;

TEST(IntentLockTest, SharedAndExclusive) {
  IntentLockTable table;
  const LockTag a = LockTagOf("a");
  EXPECT_TRUE(table.empty());
  EXPECT_TRUE(table.Acquire(a, kS));
  EXPECT_TRUE(table.Acquire(a, kS));  // readers share
  EXPECT_FALSE(table.IsFree(a, kX));
  EXPECT_TRUE(table.IsFree(a, kS));
  EXPECT_TRUE(table.IsFree(LockTagOf("b"), kX));
  EXPECT_FALSE(table.Acquire(a, kX));  // counted anyway: taking a lock never waits
  EXPECT_FALSE(table.IsFree(a, kS));
  table.Release(a, kS);
  table.Release(a, kS);
  EXPECT_FALSE(table.IsFree(a, kS));
  table.Release(a, kX);
  EXPECT_TRUE(table.IsFree(a, kX));
  EXPECT_TRUE(table.empty());  // unused counters are dropped
}

TEST(IntentLockTest, EmptyTableGivesBackALargeCapacity) {
  IntentLockTable table;
  for (int i = 0; i < 100000; ++i) table.Acquire(LockTagOf(std::to_string(i)), kX);
  EXPECT_GT(table.capacity(), IntentLockTable::kKeptCapacity);
  for (int i = 0; i < 100000; ++i) table.Release(LockTagOf(std::to_string(i)), kX);
  EXPECT_TRUE(table.empty());
  EXPECT_LE(table.capacity(), IntentLockTable::kKeptCapacity);
}

TEST(ShardTxQueueTest, FreeLocksRunOutOfOrder) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry head("head", 1, {{"a", kX}}, &log);
  FakeEntry other("other", 2, {{"b", kX}}, &log);
  ASSERT_TRUE(queue.Schedule(&head, true));
  ASSERT_TRUE(queue.Schedule(&other, true));
  EXPECT_TRUE(head.out_of_order());
  EXPECT_TRUE(other.out_of_order());
  // The head has not asked for its hop; `other` touches other keys and need not wait.
  queue.Arm(&other, true);
  EXPECT_EQ(log, std::vector<std::string>{"other"});
  EXPECT_FALSE(other.queued());
  queue.Arm(&head, true);
  EXPECT_EQ(log, (std::vector<std::string>{"other", "head"}));
  EXPECT_EQ(queue.size(), 0u);
  EXPECT_TRUE(queue.no_locks());
}

TEST(ShardTxQueueTest, InOrderEntryWaitsForTheHeadEvenWithFreeLocks) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry head("head", 1, {{"a", kX}}, &log);
  FakeEntry ordered("ordered", 2, {{"b", kX}}, &log);
  ordered.in_order = true;  // a group of the replication stream spanning shards
  ASSERT_TRUE(queue.Schedule(&head, true));
  ASSERT_TRUE(queue.Schedule(&ordered, true));
  EXPECT_FALSE(ordered.out_of_order());
  queue.Arm(&ordered, true);
  EXPECT_TRUE(log.empty());  // ends after every older entry, on every shard alike
  queue.Arm(&head, true);
  EXPECT_EQ(log, (std::vector<std::string>{"head", "ordered"}));
  EXPECT_TRUE(queue.no_locks());
}

TEST(ShardTxQueueTest, ConflictWaitsForTheHead) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry first("first", 1, {{"a", kX}}, &log);
  FakeEntry second("second", 2, {{"a", kS}, {"c", kX}}, &log);
  ASSERT_TRUE(queue.Schedule(&first, true));
  ASSERT_TRUE(queue.Schedule(&second, true));
  EXPECT_FALSE(second.out_of_order());
  EXPECT_FALSE(queue.IsFree("a", kS));
  EXPECT_FALSE(queue.IsFree("c", kS));
  EXPECT_TRUE(queue.IsFree("b", kX));
  queue.Arm(&second, true);
  EXPECT_TRUE(log.empty());  // must not overtake `first`, which writes "a"
  queue.Arm(&first, true);   // first runs, leaves, and second runs behind it
  EXPECT_EQ(log, (std::vector<std::string>{"first", "second"}));
  EXPECT_TRUE(queue.no_locks());
}

TEST(ShardTxQueueTest, SharedLocksDoNotConflict) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry reader1("r1", 1, {{"a", kS}}, &log);
  FakeEntry reader2("r2", 2, {{"a", kS}}, &log);
  FakeEntry writer("w", 3, {{"a", kX}}, &log);
  ASSERT_TRUE(queue.Schedule(&reader1, true));
  ASSERT_TRUE(queue.Schedule(&reader2, true));
  ASSERT_TRUE(queue.Schedule(&writer, true));
  EXPECT_TRUE(reader2.out_of_order());
  EXPECT_FALSE(writer.out_of_order());
  queue.Arm(&writer, true);
  queue.Arm(&reader2, true);
  EXPECT_EQ(log, std::vector<std::string>{"r2"});
  queue.Arm(&reader1, true);
  EXPECT_EQ(log, (std::vector<std::string>{"r2", "r1", "w"}));
}

TEST(ShardTxQueueTest, MultiHopKeepsLocksAndPlace) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry multi("multi", 1, {{"a", kX}}, &log);
  FakeEntry later("later", 2, {{"a", kX}}, &log);
  ASSERT_TRUE(queue.Schedule(&multi, true));
  queue.Arm(&multi, false);  // first hop: keeps its locks
  EXPECT_EQ(log, std::vector<std::string>{"multi"});
  EXPECT_TRUE(multi.queued());
  ASSERT_TRUE(queue.Schedule(&later, true));
  EXPECT_FALSE(later.out_of_order());  // "a" is still locked between the hops
  queue.Arm(&later, true);
  EXPECT_EQ(log.size(), 1u);
  queue.Arm(&multi, true);  // last hop: releases, and `later` runs
  EXPECT_EQ(log, (std::vector<std::string>{"multi", "multi", "later"}));
}

TEST(ShardTxQueueTest, OlderTxidIsRefusedAndCancelUnblocks) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry newer("newer", 5, {{"a", kX}}, &log);
  FakeEntry older("older", 4, {{"a", kX}}, &log);
  FakeEntry single("single", 3, {{"b", kX}}, &log);
  ASSERT_TRUE(queue.Schedule(&newer, true));
  EXPECT_FALSE(queue.Schedule(&older, true));  // would break txid order across shards
  EXPECT_FALSE(older.queued());
  EXPECT_FALSE(queue.IsFree("a", kS));
  EXPECT_TRUE(queue.Schedule(&single, false));  // one-shard: any order is consistent
  // `waiting` conflicted at schedule time, so it runs in queue order only: after `newer`
  // was withdrawn, still behind `single`, although they share no key.
  FakeEntry waiting("waiting", 6, {{"a", kX}}, &log);
  ASSERT_TRUE(queue.Schedule(&waiting, true));
  queue.Arm(&waiting, true);
  queue.Cancel(&newer);
  EXPECT_TRUE(log.empty());
  queue.Arm(&single, true);
  EXPECT_EQ(log, (std::vector<std::string>{"single", "waiting"}));
  EXPECT_TRUE(queue.no_locks());
}

// Two shards, two transactions touching both: whatever order their schedules arrive
// in, both queues end up in the same order, so neither waits for the other forever.
TEST(ShardTxQueueTest, TwoShardsAgreeOnOrder) {
  std::vector<std::string> log;
  ShardTxQueue shard0, shard1;
  FakeEntry t1_0("t1", 1, {{"a", kX}}, &log), t1_1("t1", 1, {{"b", kX}}, &log);
  FakeEntry t2_0("t2", 2, {{"a", kX}}, &log), t2_1("t2", 2, {{"b", kX}}, &log);
  ASSERT_TRUE(shard0.Schedule(&t1_0, true));
  ASSERT_TRUE(shard1.Schedule(&t2_1, true));   // t2 reached shard 1 first
  ASSERT_TRUE(shard0.Schedule(&t2_0, true));
  ASSERT_FALSE(shard1.Schedule(&t1_1, true));  // t1 is refused there...
  shard0.Cancel(&t1_0);                        // ...withdrawn everywhere...
  t1_0.txid = t1_1.txid = 3;                   // ...and retried with a new txid
  ASSERT_TRUE(shard0.Schedule(&t1_0, true));
  ASSERT_TRUE(shard1.Schedule(&t1_1, true));
  for (auto* e : {&t1_0, &t2_0}) shard0.Arm(e, true);
  for (auto* e : {&t1_1, &t2_1}) shard1.Arm(e, true);
  // Each shard runs t2 then t1 (t1 was armed first on both, but waits its turn).
  EXPECT_EQ(log, (std::vector<std::string>{"t2", "t1", "t2", "t1"}));
}


// Random interleavings of many multi-shard, multi-hop transactions, driven the way the
// coordinators drive the queues: schedule on every shard (withdraw and retry with a new
// txid when a shard refuses), then each hop armed on every shard, the next hop only once
// the previous one ran everywhere. The shards process these requests in a random global
// order. Checks that everything finishes (no deadlock), that no conflicting hop runs on a
// shard between two hops of a transaction, and that conflicts order the transactions the
// same way on every shard (serializable).
class SimTx;

struct HopRecord {
  int tx;
  int hop;
};

class SimEntry final : public ShardTxEntry {
 public:
  SimTx* tx = nullptr;
  int shard = 0;
  std::vector<HopRecord>* log = nullptr;
  int hops_run = 0;

 protected:
  void RunHop() override;
};

class SimTx {
 public:
  int id = 0;
  int hops = 1;
  std::map<int, SimEntry> entries;  // by shard
  // The coordinator's state: 0 scheduling, 1.. running hop n, hops + 1 done.
  int phase = 0;
  std::set<int> pending;  // shards whose request of the current phase is still queued
  std::set<int> refused, accepted;
  int waiting_hops = 0;   // hops armed and not run yet
  void HopRan() { --waiting_hops; }
};

void SimEntry::RunHop() {
  log->push_back({tx->id, hops_run++});
  tx->HopRan();
}

TEST(ShardTxQueueTest, WholeShardEntryRunsAlone) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry before("before", 1, {{"a", kX}}, &log);
  FakeEntry flush("flush", 2, {}, &log);
  flush.whole_shard = true;
  FakeEntry after("after", 3, {{"b", kX}}, &log);
  ASSERT_TRUE(queue.Schedule(&before, true));
  EXPECT_TRUE(queue.IsFree("b", kX));
  ASSERT_TRUE(queue.Schedule(&flush, true));
  EXPECT_FALSE(flush.out_of_order()) << "a whole-shard entry waits for the head";
  EXPECT_FALSE(queue.no_locks());
  EXPECT_FALSE(queue.IsFree("b", kX)) << "the fast path is closed, also for unlocked keys";
  ASSERT_TRUE(queue.Schedule(&after, true));
  EXPECT_FALSE(after.out_of_order()) << "free keys do not jump a whole-shard entry";

  queue.Arm(&after, true);
  queue.Arm(&flush, true);
  EXPECT_TRUE(log.empty());
  queue.Arm(&before, true);
  EXPECT_EQ(log, (std::vector<std::string>{"before", "flush", "after"}));
  EXPECT_TRUE(queue.no_locks());
  EXPECT_EQ(queue.size(), 0u);
}

// LockLate (tx_queue.h, 2b): a running script reaches a key it did not declare.
TEST(ShardTxQueueTest, LateLockOfAFreeKeyJoinsOutOfOrder) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry head("head", 1, {{"a", kX}}, &log);
  FakeEntry script("script", 2, {}, &log);
  ASSERT_TRUE(queue.Schedule(&head, true));
  EXPECT_EQ(queue.LockLate(&script, LockTagOf("b"), kX), LateLock::kTaken);
  EXPECT_TRUE(script.queued());
  EXPECT_TRUE(script.out_of_order());
  EXPECT_FALSE(queue.IsFree("b", kS));
  EXPECT_EQ(queue.LockLate(&script, LockTagOf("b"), kX), LateLock::kTaken)  // its own
      << "a key held only by the script itself is free to it";
  queue.Arm(&script, true);
  EXPECT_EQ(log, std::vector<std::string>{"script"});
  queue.Arm(&head, true);
  EXPECT_TRUE(queue.no_locks());
}

TEST(ShardTxQueueTest, LateLockWaitsForAnOlderHolder) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry older("older", 1, {{"a", kX}}, &log);
  FakeEntry script("script", 2, {}, &log);
  ASSERT_TRUE(queue.Schedule(&older, true));
  EXPECT_EQ(queue.LockLate(&script, LockTagOf("a"), kX), LateLock::kWait);
  EXPECT_FALSE(script.queued()) << "nothing taken";
  EXPECT_EQ(queue.LockLate(&script, LockTagOf("a"), kS), LateLock::kWait);
  queue.Arm(&older, true);
  EXPECT_EQ(queue.LockLate(&script, LockTagOf("a"), kX), LateLock::kTaken);
}

TEST(ShardTxQueueTest, LateLockGoesAheadOfYoungerHoldersThatHaveNotRun) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry other("other", 1, {{"z", kX}}, &log);
  FakeEntry script("script", 2, {}, &log);
  FakeEntry younger("younger", 3, {{"a", kX}}, &log);
  FakeEntry youngest("youngest", 4, {{"a", kS}, {"c", kX}}, &log);
  ASSERT_TRUE(queue.Schedule(&other, true));
  ASSERT_TRUE(queue.Schedule(&younger, true));
  ASSERT_TRUE(queue.Schedule(&youngest, true));
  EXPECT_TRUE(younger.out_of_order());
  EXPECT_EQ(queue.LockLate(&script, LockTagOf("a"), kX), LateLock::kTaken);
  EXPECT_TRUE(script.out_of_order());
  EXPECT_FALSE(younger.out_of_order()) << "it now waits for the script";
  EXPECT_FALSE(youngest.out_of_order());
  queue.Arm(&younger, true);
  queue.Arm(&youngest, true);
  queue.Arm(&script, false);  // the script's call on "a", ahead of both
  EXPECT_EQ(log, std::vector<std::string>{"script"});
  queue.Arm(&script, true);   // its end: the others wait for `other`, now the head
  queue.Arm(&other, true);
  EXPECT_EQ(log, (std::vector<std::string>{"script", "script", "other", "younger",
                                           "youngest"}));
  EXPECT_TRUE(queue.no_locks());
}

TEST(ShardTxQueueTest, LateLockConflictsWithAYoungerHolderThatRan) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry script("script", 1, {}, &log);
  FakeEntry younger("younger", 2, {{"a", kX}}, &log);
  ASSERT_TRUE(queue.Schedule(&younger, true));
  queue.Arm(&younger, false);  // a first hop ran: it may have read or written "a"
  EXPECT_EQ(queue.LockLate(&script, LockTagOf("a"), kX), LateLock::kConflict);
  EXPECT_FALSE(script.queued());
  queue.Arm(&younger, true);
  EXPECT_EQ(queue.LockLate(&script, LockTagOf("a"), kX), LateLock::kTaken);
}

TEST(ShardTxQueueTest, LateLockConflictsWithAnOlderHolderWaitingBehindIt) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry script("script", 5, {{"s", kX}}, &log);
  FakeEntry older("older", 3, {{"s", kX}, {"a", kX}}, &log);
  ASSERT_TRUE(queue.Schedule(&script, true));
  ASSERT_TRUE(queue.Schedule(&older, false));  // one-shard: queued after a younger one
  EXPECT_FALSE(older.out_of_order());
  queue.Arm(&script, false);
  // Waiting for `older` would never end: it waits for the script (queue order).
  EXPECT_EQ(queue.LockLate(&script, LockTagOf("a"), kX), LateLock::kConflict);
}

TEST(ShardTxQueueTest, LateLockDoesNotGoAheadOfAnOlderEntry) {
  std::vector<std::string> log;
  ShardTxQueue queue;
  FakeEntry younger("younger", 4, {{"a", kX}, {"b", kX}}, &log);
  FakeEntry older_single("older", 2, {{"b", kX}}, &log);
  FakeEntry script("script", 3, {}, &log);
  ASSERT_TRUE(queue.Schedule(&younger, true));
  ASSERT_TRUE(queue.Schedule(&older_single, false));
  EXPECT_FALSE(older_single.out_of_order());
  // Joining ahead of `younger` would put the script ahead of `older` too: a wait from an
  // older entry to a younger one, which could close a cycle.
  EXPECT_EQ(queue.LockLate(&script, LockTagOf("a"), kX), LateLock::kConflict);
  EXPECT_TRUE(younger.out_of_order()) << "nothing changed";
}

TEST(ShardTxQueueTest, RandomInterleavingsAreSerializable) {
  constexpr int kShards = 4, kKeys = 6, kTxs = 40;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    std::vector<ShardTxQueue> shards(kShards);
    std::vector<std::vector<HopRecord>> logs(kShards);
    std::vector<SimTx> txs(kTxs);
    uint64_t next_txid = 1;
    // Key k lives on shard k % kShards; each transaction touches 1-3 random keys.
    std::map<std::pair<int, int>, LockMode> modes;  // (tx, key) -> mode
    for (int t = 0; t < kTxs; ++t) {
      SimTx& tx = txs[t];
      tx.id = t;
      tx.hops = 1 + rng() % 3;
      int keys = 1 + rng() % 3;
      for (int i = 0; i < keys; ++i) {
        int key = rng() % kKeys;
        LockMode mode = rng() % 3 == 0 ? LockMode::kShared : LockMode::kExclusive;
        if (modes.count({t, key})) continue;
        modes[{t, key}] = mode;
        SimEntry& entry = tx.entries[key % kShards];
        entry.tx = &tx;
        entry.shard = key % kShards;
        entry.log = &logs[key % kShards];
        entry.locks.emplace_back(LockTagOf(std::to_string(key)), mode);
      }
    }
    auto start_phase = [&](SimTx& tx) {
      tx.pending.clear();
      for (auto& [shard, entry] : tx.entries) tx.pending.insert(shard);
      if (tx.phase == 0) {
        for (auto& [shard, entry] : tx.entries) entry.txid = next_txid;
        ++next_txid;
        tx.refused.clear();
        tx.accepted.clear();
      } else {
        tx.waiting_hops = tx.entries.size();
      }
    };
    for (SimTx& tx : txs) start_phase(tx);
    int steps = 0;
    while (true) {
      // Requests that can be delivered now: one per (transaction, pending shard).
      std::vector<std::pair<int, int>> ready;
      for (SimTx& tx : txs) {
        if (tx.phase > tx.hops) continue;
        for (int shard : tx.pending) ready.push_back({tx.id, shard});
      }
      bool all_done = true;
      for (SimTx& tx : txs) all_done &= tx.phase > tx.hops;
      if (all_done) break;
      ASSERT_LT(++steps, 100000) << "seed " << seed << ": no progress (deadlock?)";
      if (!ready.empty()) {
        auto [t, shard] = ready[rng() % ready.size()];
        SimTx& tx = txs[t];
        SimEntry& entry = tx.entries[shard];
        tx.pending.erase(shard);
        const bool check_order = tx.entries.size() > 1;
        if (tx.phase == 0) {
          (shards[shard].Schedule(&entry, check_order) ? tx.accepted : tx.refused).insert(shard);
        } else {
          shards[shard].Arm(&entry, tx.phase == tx.hops);
        }
      }
      // Coordinators whose phase completed move on.
      for (SimTx& tx : txs) {
        if (tx.phase > tx.hops || !tx.pending.empty()) continue;
        if (tx.phase == 0) {
          if (!tx.refused.empty()) {
            for (int shard : tx.accepted) shards[shard].Cancel(&tx.entries[shard]);
            start_phase(tx);  // again, with a new txid
            continue;
          }
          tx.phase = 1;
          start_phase(tx);
        } else if (tx.waiting_hops == 0) {
          ++tx.phase;
          if (tx.phase <= tx.hops) start_phase(tx);
        }
      }
    }
    // Per shard: conflicting transactions do not interleave, and give an order.
    std::set<std::pair<int, int>> before;  // (a, b): a ran before b on a shared key
    for (int shard = 0; shard < kShards; ++shard) {
      EXPECT_EQ(shards[shard].size(), 0u);
      EXPECT_TRUE(shards[shard].no_locks());
      const auto& log = logs[shard];
      for (size_t i = 0; i < log.size(); ++i) {
        for (size_t j = i + 1; j < log.size(); ++j) {
          int a = log[i].tx, b = log[j].tx;
          if (a == b) continue;
          bool conflict = false;
          for (int key = shard; key < kKeys; key += kShards) {
            auto ma = modes.find({a, key}), mb = modes.find({b, key});
            if (ma == modes.end() || mb == modes.end()) continue;
            conflict |= ma->second == LockMode::kExclusive || mb->second == LockMode::kExclusive;
          }
          if (!conflict) continue;
          before.insert({a, b});
          ASSERT_FALSE(before.count({b, a}))
              << "seed " << seed << ": transactions " << a << " and " << b
              << " interleave on shard " << shard;
        }
      }
    }
    // No cycle across shards: a topological order of `before` exists.
    std::map<int, int> indegree;
    for (auto [a, b] : before) ++indegree[b];
    std::vector<int> free_nodes;
    for (int t = 0; t < kTxs; ++t) {
      if (!indegree.count(t)) free_nodes.push_back(t);
    }
    size_t ordered = 0;
    while (!free_nodes.empty()) {
      int t = free_nodes.back();
      free_nodes.pop_back();
      ++ordered;
      for (auto [a, b] : before) {
        if (a == t && --indegree[b] == 0) free_nodes.push_back(b);
      }
    }
    ASSERT_EQ(ordered, size_t(kTxs)) << "seed " << seed << ": conflicting orders across shards";
  }
}

}  // namespace
}  // namespace damselfly
