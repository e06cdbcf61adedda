// SYNC, PSYNC, REPLCONF, ROLE and WAIT, in process. A replica that follows the stream is
// tested over the wire (tests/test_replication.py, with redis-server as the replica).
#include <chrono>
#include <memory>
#include <string>

#include "helio/base/strings.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;
using testing::IsEmpty;

class ReplicationFamilyTest : public ServiceTest {};

TEST_P(ReplicationFamilyTest, RoleIsAMasterWithoutReplicas) {
  EXPECT_THAT(Run({"role"}), RespArray(ElementsAre("master", 0, RespArray(IsEmpty()))));
  EXPECT_THAT(Run({"role", "x"}), ErrArg("wrong number of arguments for 'role'"));
}

TEST_P(ReplicationFamilyTest, WaitWithoutReplicas) {
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

TEST_P(ReplicationFamilyTest, WaitForeverEndsOnClientUnblock) {
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

TEST_P(ReplicationFamilyTest, ReplconfOptions) {
  EXPECT_EQ(Run({"replconf", "listening-port", "6380"}), "OK");
  EXPECT_EQ(Run({"replconf", "capa", "eof", "capa", "psync2"}), "OK");
  EXPECT_EQ(Run({"replconf", "ip-address", "10.0.0.1", "rdb-only", "0"}), "OK");
  EXPECT_EQ(Run({"replconf"}), "OK");
  EXPECT_THAT(Run({"replconf", "listening-port"}), ErrArg("syntax error"));
  EXPECT_THAT(Run({"replconf", "listening-port", "x"}),
              ErrArg("value is not an integer or out of range"));
  EXPECT_THAT(Run({"replconf", "rdb-only", "2"}),
              ErrArg("value is not an integer or out of range"));
  EXPECT_THAT(Run({"replconf", "nonsense", "1"}),
              ErrArg("Unrecognized REPLCONF option: nonsense"));
  EXPECT_THAT(Run({"replconf", "ip-address", std::string(46, 'a')}),
              ErrArg("ip-address provided by replica instance is too long: 46 bytes"));
  EXPECT_THAT(Run({"psync", "?"}), ErrArg("wrong number of arguments for 'psync'"));
  EXPECT_THAT(Run({"psync", "?", "x"}), ErrArg("value is not an integer or out of range"));
  EXPECT_THAT(Run({"sync", "x"}), ErrArg("wrong number of arguments for 'sync'"));
  // Not a replica yet: the stream has none.
  EXPECT_THAT(Run({"role"}), RespArray(ElementsAre("master", 0, RespArray(IsEmpty()))));
}

INSTANTIATE_SHARD_COUNTS(ReplicationFamilyTest);

}  // namespace
}  // namespace damselfly
