// ROLE, WAIT, REPLICAOF, FAILOVER, CLUSTER and MODULE on a standalone master, in process.
#include <chrono>
#include <memory>
#include <string>

#include "helio/base/strings.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;
using testing::IsEmpty;

class StandaloneFamilyTest : public ServiceTest {};

TEST_P(StandaloneFamilyTest, RoleIsAMasterWithoutReplicas) {
  EXPECT_THAT(Run({"role"}), RespArray(ElementsAre("master", 0, RespArray(IsEmpty()))));
  EXPECT_THAT(Run({"role", "x"}), ErrArg("wrong number of arguments for 'role'"));
}

TEST_P(StandaloneFamilyTest, WaitWithoutReplicas) {
  EXPECT_EQ(Run({"wait", "0", "0"}), 0);
  EXPECT_EQ(Run({"wait", "-3", "0"}), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Run({"wait", "1", "20"}), 0);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
  EXPECT_THAT(Run({"wait", "x", "0"}), ErrArg("value is not an integer or out of range"));
  EXPECT_THAT(Run({"wait", "1", "0.5"}), ErrArg("timeout is not an integer or out of range"));
  EXPECT_THAT(Run({"wait", "1", "-1"}), ErrArg("timeout is negative"));
  // Inside MULTI it does not block: the count at once.
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"wait", "1", "0"}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre(0)));
}

TEST_P(StandaloneFamilyTest, WaitForeverEndsOnClientUnblock) {
  std::unique_ptr<TestConnection> waiting = Connect(num_shards() - 1);
  const std::string id = helio::StrCat(waiting->context()->id());
  waiting->Start({"wait", "1", "0"});
  WaitBlocked(1);
  EXPECT_EQ(Run({"client", "unblock", id}), 1);
  EXPECT_EQ(waiting->Finish(), 0);
  waiting->Start({"wait", "2", "0"});
  WaitBlocked(1);
  EXPECT_EQ(Run({"client", "unblock", id, "error"}), 1);
  EXPECT_THAT(waiting->Finish(), ErrArg("UNBLOCKED client unblocked via CLIENT UNBLOCK"));
  EXPECT_EQ(BlockedClients(), 0);
}

TEST_P(StandaloneFamilyTest, ReplicaOfAndFailover) {
  EXPECT_EQ(Run({"replicaof", "no", "one"}), "OK");
  EXPECT_EQ(Run({"slaveof", "NO", "ONE"}), "OK");
  EXPECT_THAT(Run({"replicaof", "no", "two"}), ErrArg("Invalid master port"));
  EXPECT_THAT(Run({"replicaof", "localhost", "6379"}), ErrArg("does not replicate"));
  EXPECT_THAT(Run({"failover"}), ErrArg("FAILOVER requires connected replicas."));
  EXPECT_THAT(Run({"failover", "abort"}), ErrArg("No failover in progress."));
  EXPECT_THAT(Run({"failover", "force", "force"}), ErrArg("syntax error"));
  EXPECT_THAT(Run({"failover", "timeout", "0"}), ErrArg("timeout must be greater than 0"));
}

TEST_P(StandaloneFamilyTest, ClusterAndModules) {
  EXPECT_THAT(Run({"cluster", "info"}), ErrArg("This instance has cluster support disabled"));
  EXPECT_THAT(Run({"readonly"}), ErrArg("This instance has cluster support disabled"));
  EXPECT_THAT(Run({"cluster", "keyslot"}),
              ErrArg("wrong number of arguments for 'cluster|keyslot'"));
  EXPECT_THAT(Run({"module", "list"}), RespArray(IsEmpty()));
  EXPECT_THAT(Run({"module", "load", "/tmp/x.so"}), ErrArg("does not load modules"));
}

INSTANTIATE_SHARD_COUNTS(StandaloneFamilyTest);

}  // namespace
}  // namespace damselfly
