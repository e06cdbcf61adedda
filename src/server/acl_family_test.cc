// ACL with the default user, in process.
#include <string>

#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;
using testing::IsEmpty;

class AclFamilyTest : public ServiceTest {};

TEST_P(AclFamilyTest, DefaultUser) {
  EXPECT_EQ(Run({"acl", "whoami"}), "default");
  EXPECT_THAT(Run({"acl", "users"}), RespArray(ElementsAre("default")));
  EXPECT_THAT(Run({"acl", "list"}),
              RespArray(ElementsAre("user default on nopass ~* &* +@all")));
  EXPECT_THAT(Run({"acl", "getuser", "nobody"}), IsNil());
  EXPECT_THAT(Run({"acl", "setuser", "bob"}), ErrArg("ACL SETUSER is not supported"));
  EXPECT_THAT(Run({"acl", "deluser", "default"}), ErrArg("cannot be removed"));
  EXPECT_EQ(Run({"acl", "deluser", "bob"}), 0);
}

TEST_P(AclFamilyTest, DryRunAndCat) {
  EXPECT_EQ(Run({"acl", "dryrun", "default", "set", "k", "v"}), "OK");
  EXPECT_THAT(Run({"acl", "dryrun", "default", "set", "k"}),
              ErrArg("wrong number of arguments for 'set'"));
  EXPECT_THAT(Run({"acl", "dryrun", "default", "nosuch"}), ErrArg("Command 'nosuch' not found"));
  EXPECT_THAT(Run({"acl", "cat", "nope"}), ErrArg("Unknown category 'nope'"));
  EXPECT_THAT(Run({"acl", "cat", "geo"}), RespArray(testing::Contains("geoadd")));
}

TEST_P(AclFamilyTest, LogOfFailedAuth) {
  EXPECT_EQ(Run({"acl", "log", "reset"}), "OK");
  EXPECT_THAT(Run({"acl", "log"}), RespArray(IsEmpty()));
  EXPECT_THAT(Run({"auth", "bob", "x"}), ErrArg("WRONGPASS"));
  EXPECT_THAT(Run({"auth", "bob", "x"}), ErrArg("WRONGPASS"));
  RespValue log = Run({"acl", "log"});
  ASSERT_EQ(log.elements.size(), 1u);
  ASSERT_GE(log.elements[0].elements.size(), 2u);
  EXPECT_EQ(log.elements[0].elements[0], "count");
  EXPECT_EQ(log.elements[0].elements[1], 2);  // grouped
  EXPECT_EQ(Run({"acl", "log", "reset"}), "OK");
}

INSTANTIATE_SHARD_COUNTS(AclFamilyTest);

}  // namespace
}  // namespace damselfly
