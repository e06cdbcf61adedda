#include "src/server/tx_queue.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace damselfly
