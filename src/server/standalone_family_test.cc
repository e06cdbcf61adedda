// REPLICAOF, FAILOVER, CLUSTER and MODULE, in process. A replica that follows a master is
// tested over the wire (tests/test_replica.py).
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
  EXPECT_THAT(Run({"failover"}), ErrArg("FAILOVER requires connected replicas."));
  EXPECT_THAT(Run({"failover", "abort"}), ErrArg("No failover in progress."));
  EXPECT_THAT(Run({"failover", "force", "force"}), ErrArg("syntax error"));
  EXPECT_THAT(Run({"failover", "timeout", "0"}), ErrArg("timeout must be greater than 0"));
}

// A master nobody listens for: the link stays down, and the server is a read-only replica
// until REPLICAOF NO ONE.
TEST_P(StandaloneFamilyTest, ReplicaOfAMasterThatIsDown) {
  EXPECT_EQ(Run({"set", "kept", "1"}), "OK");
  EXPECT_EQ(Run({"replicaof", "127.0.0.1", "1"}), "OK");
  EXPECT_EQ(Run({"slaveof", "127.0.0.1", "1"}), "OK Already connected to specified master");
  RespValue role = Run({"role"});
  ASSERT_THAT(role, ArrLen(5));
  EXPECT_EQ(role.elements[0], "slave");
  EXPECT_EQ(role.elements[1], "127.0.0.1");
  EXPECT_EQ(role.elements[2], 1);
  EXPECT_EQ(role.elements[4], -1);
  std::string info = Run({"info", "replication"}).str;
  EXPECT_THAT(info, testing::HasSubstr("role:slave\r\nmaster_host:127.0.0.1\r\n"));
  EXPECT_THAT(info, testing::HasSubstr("master_link_status:down\r\n"));
  EXPECT_THAT(info, testing::HasSubstr("master_link_down_since_seconds:"));
  EXPECT_THAT(Run({"set", "k", "v"}),
              ErrArg("READONLY You can't write against a read only replica."));
  EXPECT_EQ(Run({"get", "kept"}), "1");  // stale data is served
  EXPECT_THAT(Run({"config", "get", "replicaof"}),
              RespArray(ElementsAre("replicaof", "127.0.0.1 1")));
  EXPECT_EQ(Run({"replicaof", "no", "one"}), "OK");
  EXPECT_EQ(Run({"role"}).elements[0], "master");
  EXPECT_EQ(Run({"set", "k", "v"}), "OK");
  EXPECT_EQ(Run({"get", "kept"}), "1");
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
