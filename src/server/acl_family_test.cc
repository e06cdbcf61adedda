// ACL users and their checks, in process.
#include <random>
#include <string>

#include "helio/base/strings.h"
#include "src/server/acl_users.h"
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
  EXPECT_THAT(Run({"acl", "deluser", "default"}), ErrArg("cannot be removed"));
  EXPECT_EQ(Run({"acl", "deluser", "bob"}), 0);
}

TEST_P(AclFamilyTest, SetUserAllOrNothing) {
  EXPECT_EQ(Run({"acl", "setuser", "bob"}), "OK");
  EXPECT_THAT(Run({"acl", "list"}), RespArray(ElementsAre("user bob off resetchannels -@all",
                                                          "user default on nopass ~* &* +@all")));
  EXPECT_THAT(Run({"acl", "setuser", "bob", "on", "+nosuch"}),
              ErrArg("ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category "
                     "name in ACL"));
  EXPECT_THAT(Run({"acl", "getuser", "bob"}).elements[1], RespArray(ElementsAre("off")));
  EXPECT_THAT(Run({"acl", "setuser", "bob", "(~a", "+get"}),
              ErrArg("Unmatched parenthesis in acl selector starting at '(~a'."));
  EXPECT_EQ(Run({"acl", "deluser", "bob"}), 1);
  EXPECT_THAT(Run({"acl", "users"}), RespArray(ElementsAre("default")));
}

// Keys on every shard: a call is refused whole when one of its keys is not allowed, and
// nothing of it runs.
TEST_P(AclFamilyTest, KeysAcrossShards) {
  EXPECT_EQ(Run({"acl", "setuser", "app", "on", ">pw", "~app:*", "+@all"}), "OK");
  EXPECT_EQ(Run({"auth", "app", "pw"}), "OK");
  EXPECT_EQ(Run({"acl", "whoami"}), "app");
  EXPECT_EQ(Run({"mset", "app:1", "a", "app:2", "b", "app:3", "c"}), "OK");
  EXPECT_THAT(Run({"mset", "app:4", "d", "other", "e"}),
              ErrArg("NOPERM this user has no permissions to access one of the keys used as "
                     "arguments"));
  EXPECT_THAT(Run({"exists", "app:4"}), IntArg(0));
  EXPECT_THAT(Run({"mget", "app:1", "app:3"}), RespArray(ElementsAre("a", "c")));
}

TEST_P(AclFamilyTest, CommandsInMultiExecAndScripts) {
  EXPECT_EQ(Run({"acl", "setuser", "ro", "on", "nopass", "allkeys", "+@all", "-set"}), "OK");
  EXPECT_EQ(Run({"auth", "ro", "x"}), "OK");
  EXPECT_THAT(Run({"set", "k", "v"}),
              ErrArg("NOPERM this user has no permissions to run the 'set' command"));
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_THAT(Run({"set", "k", "v"}), ErrArg("NOPERM"));
  EXPECT_THAT(Run({"exec"}), ErrArg("EXECABORT"));
  EXPECT_THAT(Run({"eval", "return redis.call('set', KEYS[1], 'v')", "1", "k"}),
              ErrArg("The user executing the script can't run this command or subcommand"));
  EXPECT_THAT(Run({"get", "k"}), IsNil());
  EXPECT_EQ(Run({"auth", "default", "x"}), "OK");
  RespValue log = Run({"acl", "log", "1"});
  ASSERT_EQ(log.elements.size(), 1u);
  ASSERT_GE(log.elements[0].elements.size(), 6u);
  EXPECT_EQ(log.elements[0].elements[5], "lua");  // context
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

// ACL LIST's description of random command rules, over the server's real commands and
// categories, read back as rules, gives a user that allows exactly the same commands and
// subcommands (Redis aborts when its description would not).
TEST_P(AclFamilyTest, DescribedRulesRebuildTheSameUser) {
  const facade::CommandRegistry& registry = AclRegistry();
  const facade::AclRuleContext context{&registry, false};
  std::vector<std::string> pool = {"allcommands", "nocommands", "+config|get", "-config|set",
                                   "+client", "-client|kill", "+select|0", "+debug|object",
                                   "-get", "+get", "+set", "-hset", "+acl|whoami", "-object"};
  for (const auto& [bit, name] : facade::CommandRegistry::AclCategories()) {
    pool.push_back(helio::StrCat("+@", name));
    pool.push_back(helio::StrCat("-@", name));
  }
  std::mt19937 random(42);
  for (int round = 0; round < 300; ++round) {
    facade::AclUser first("a", context);
    std::string_view error;
    ASSERT_TRUE(first.Apply("allkeys", context, &error));
    ASSERT_TRUE(first.Apply("allchannels", context, &error));
    const size_t count = 1 + random() % 8;
    std::string rules;
    for (size_t i = 0; i < count; ++i) {
      const std::string& rule = pool[random() % pool.size()];
      helio::StrAppend(&rules, rule, " ");
      ASSERT_TRUE(first.Apply(rule, context, &error)) << rule << ": " << error;
    }
    const std::string description = first.Describe(registry);
    facade::AclUser second("b", context);
    for (std::string_view word : helio::SplitAny(description, " ")) {
      ASSERT_TRUE(second.Apply(word, context, &error)) << word << ": " << error;
    }
    EXPECT_EQ(second.Describe(registry), description) << "rules: " << rules;
    registry.ForEach([&](const facade::CommandId& cid) {
      std::vector<std::string_view> call = {cid.name, "0"};
      EXPECT_EQ(first.Check(cid, call).allowed(), second.Check(cid, call).allowed())
          << cid.name << " after " << rules << "-> " << description;
      for (const facade::SubcommandSpec& sub : cid.subcommands) {
        std::vector<std::string_view> sub_call = {cid.name, sub.name, "x", "y"};
        EXPECT_EQ(first.Check(cid, sub_call).allowed(), second.Check(cid, sub_call).allowed())
            << cid.name << "|" << sub.name << " after " << rules << "-> " << description;
      }
    });
  }
}

INSTANTIATE_SHARD_COUNTS(AclFamilyTest);

}  // namespace
}  // namespace damselfly
