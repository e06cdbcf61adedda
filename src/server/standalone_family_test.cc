// REPLICAOF, FAILOVER, CLUSTER and MODULE on a master, in process.
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

TEST_P(StandaloneFamilyTest, ReplicaOfAndFailover) {
  EXPECT_EQ(Run({"replicaof", "no", "one"}), "OK");
  EXPECT_EQ(Run({"slaveof", "NO", "ONE"}), "OK");
  EXPECT_THAT(Run({"replicaof", "no", "two"}), ErrArg("Invalid master port"));
  EXPECT_THAT(Run({"replicaof", "localhost", "6379"}), ErrArg("is a master only"));
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
