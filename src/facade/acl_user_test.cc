#include "src/facade/acl_user.h"

#include <gtest/gtest.h>

#include <initializer_list>

namespace damselfly::facade {
namespace {

void Noop(CmdArgList, ConnectionContext*) {}

constexpr CommandDoc kDocs[] = {
    {"GET", "string", "Get", "1.0.0", "key"},
    {"SET", "string", "Set", "1.0.0", "key value"},
    {"COPY", "generic", "Copy", "6.2.0", "source destination"},
    {"SELECT", "connection", "Select", "1.0.0", "index"},
    {"AUTH", "connection", "Auth", "1.0.0", "password"},
    {"PUBLISH", "pubsub", "Publish", "2.0.0", "channel message"},
    {"PSUBSCRIBE", "pubsub", "Psubscribe", "2.0.0", "pattern [pattern ...]"},
    {"CONFIG", "server", "Config", "2.0.0", ""},
    {.name = "CONFIG|GET", .syntax = "parameter"},
    {.name = "CONFIG|SET", .syntax = "parameter value"},
    {.name = "CONFIG|HELP"},
};

class AclUserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.AddDocs(kDocs);
    registry_.Add("GET", 2, kCmdReadOnly | kCmdFast, Keys(1), kAclRead | kAclString | kAclFast,
                  Noop);
    registry_.Add("SET", 3, kCmdWrite, Keys(1).WithFlags(kKeyRW | kKeyUpdate),
                  kAclWrite | kAclString | kAclSlow, Noop);
    registry_.Add("COPY", 3, kCmdWrite,
                  KeySpecs{Keys(1).WithFlags(kKeyRO | kKeyAccess),
                           Keys(2).WithFlags(kKeyOW | kKeyUpdate)},
                  kAclKeyspace | kAclWrite | kAclSlow, Noop);
    registry_.Add("SELECT", 2, kCmdFast, kNoKeys, kAclFast | kAclConnection, Noop);
    registry_.Add("AUTH", -2, kCmdNoAuth, kNoKeys, kAclFast | kAclConnection, Noop);
    registry_.Add("PUBLISH", 3, kCmdPubSub, kNoKeys, kAclPubSub | kAclFast, Noop);
    registry_.Add("PSUBSCRIBE", -2, kCmdPubSub, kNoKeys, kAclPubSub | kAclSlow, Noop);
    registry_.Add("CONFIG", -2, kCmdAdmin, kNoKeys, kAclSlow, Noop,
                  {{"GET", -3, kAclAdmin | kAclSlow | kAclDangerous},
                   {"SET", -4, kAclAdmin | kAclSlow | kAclDangerous},
                   {"HELP", 2, kAclSlow}});
    context_.registry = &registry_;
  }

  // A user after `rules`; fails the test on a refused rule.
  AclUser Make(std::initializer_list<std::string_view> rules) {
    AclUser user("u", context_);
    for (std::string_view rule : rules) {
      std::string_view error;
      EXPECT_TRUE(user.Apply(rule, context_, &error)) << rule << ": " << error;
    }
    return user;
  }

  // The reason a rule is refused ("" when it is not).
  std::string Refusal(std::string_view rule) {
    AclUser user("u", context_);
    std::string_view error;
    return user.Apply(rule, context_, &error) ? "" : std::string(error);
  }

  AclVerdict Check(const AclUser& user, std::initializer_list<std::string_view> call) {
    std::vector<std::string_view> args(call);
    return user.Check(*registry_.Find(args[0]), CmdArgList(args.data(), args.size()));
  }

  CommandRegistry registry_;
  AclRuleContext context_;
};

TEST_F(AclUserTest, NewAndDefaultUsers) {
  AclUser fresh("u", context_);
  EXPECT_EQ(fresh.Describe(registry_), "off resetchannels -@all");
  EXPECT_FALSE(fresh.Authenticates(""));
  AclUser def = AclUser::Default(context_);
  EXPECT_EQ(def.Describe(registry_), "on nopass ~* &* +@all");
  EXPECT_TRUE(def.unrestricted());
  EXPECT_TRUE(def.Authenticates("anything"));
  context_.all_channels_by_default = true;
  EXPECT_EQ(AclUser("u", context_).Describe(registry_), "off &* -@all");
}

TEST_F(AclUserTest, Passwords) {
  AclUser user = Make({"on", ">secret", ">secret", ">other"});
  EXPECT_EQ(user.password_hashes().size(), 2u);
  EXPECT_EQ(user.password_hashes()[0], AclPasswordHash("secret"));
  EXPECT_TRUE(user.Authenticates("secret"));
  EXPECT_TRUE(user.Authenticates("other"));
  EXPECT_FALSE(user.Authenticates("nope"));
  std::string_view error;
  ASSERT_TRUE(user.Apply("<other", context_, &error));
  EXPECT_FALSE(user.Authenticates("other"));
  EXPECT_FALSE(user.Apply("<other", context_, &error));
  EXPECT_EQ(error, "The password you are trying to remove from the user does not exist");
  ASSERT_TRUE(user.Apply("off", context_, &error));
  EXPECT_FALSE(user.Authenticates("secret"));  // a disabled user cannot log in
  AclUser hashed = Make({"on", "#" + AclPasswordHash("x")});
  EXPECT_TRUE(hashed.Authenticates("x"));
  EXPECT_EQ(Refusal("#abc"),
            "The password hash must be exactly 64 characters and contain only lowercase "
            "hexadecimal characters");
  EXPECT_EQ(Refusal("!" + std::string(64, 'A')), Refusal("#abc"));
  AclUser open = Make({"on", ">a", "nopass"});
  EXPECT_TRUE(open.password_hashes().empty());
  EXPECT_TRUE(open.Authenticates("whatever"));
  EXPECT_FALSE(Make({"on", "nopass", "resetpass"}).Authenticates("whatever"));
}

TEST_F(AclUserTest, CommandsCategoriesAndSubcommands) {
  AclUser user = Make({"on", "allkeys", "+@read", "+config|get", "+select|0"});
  EXPECT_TRUE(Check(user, {"GET", "k"}).allowed());
  EXPECT_EQ(Check(user, {"SET", "k", "v"}).denial, AclDenial::kCommand);
  EXPECT_TRUE(Check(user, {"CONFIG", "GET", "x"}).allowed());
  EXPECT_EQ(Check(user, {"CONFIG", "SET", "x", "y"}).denial, AclDenial::kCommand);
  EXPECT_TRUE(Check(user, {"SELECT", "0"}).allowed());
  EXPECT_EQ(Check(user, {"SELECT", "1"}).denial, AclDenial::kCommand);
  EXPECT_TRUE(Check(user, {"AUTH", "p"}).allowed());  // no-auth commands always are
  EXPECT_EQ(user.Describe(registry_),
            "on ~* resetchannels -@all +@read +config|get +select|0");

  // A container's rule covers its subcommands; a category reaches a subcommand by its own.
  AclUser admin = Make({"+@admin"});
  EXPECT_EQ(admin.Describe(registry_), "off resetchannels -@all +@admin");
  EXPECT_EQ(Check(admin, {"CONFIG", "HELP"}).denial, AclDenial::kCommand);
  AclUser config = Make({"+config", "-config|set"});
  EXPECT_TRUE(Check(config, {"CONFIG", "HELP"}).allowed());
  EXPECT_EQ(Check(config, {"CONFIG", "SET", "a", "b"}).denial, AclDenial::kCommand);

  AclUser all_but = Make({"+@all", "-set"});
  EXPECT_EQ(all_but.Describe(registry_), "off resetchannels +@all -set");
  EXPECT_FALSE(all_but.unrestricted());
  EXPECT_EQ(Make({"+@all", "-@string"}).Describe(registry_),
            "off resetchannels +@all -@string");
}

TEST_F(AclUserTest, RuleErrors) {
  constexpr std::string_view kUnknown = "Unknown command or category name in ACL";
  EXPECT_EQ(Refusal("foo"), "Syntax error");
  EXPECT_EQ(Refusal("+nosuch"), kUnknown);
  EXPECT_EQ(Refusal("-nosuch"), kUnknown);
  EXPECT_EQ(Refusal("+@nosuch"), kUnknown);
  EXPECT_EQ(Refusal("+config|nosuch"), kUnknown);
  EXPECT_EQ(Refusal("-select|0"), kUnknown);
  EXPECT_EQ(Refusal("+config|get|x"), "Allowing first-arg of a subcommand is not supported");
  EXPECT_EQ(Refusal("+select|"), "Syntax error");
  EXPECT_EQ(Refusal("~a b"), "Syntax error");
  EXPECT_EQ(Refusal("%X~a"), "Syntax error");
  EXPECT_EQ(Refusal("%R"), "Syntax error");
  EXPECT_EQ(Refusal(""), "");  // a no-op, as in Redis
  EXPECT_EQ(Refusal("(\"\" +get)"), "Syntax error");  // but not inside a selector
  AclUser user = Make({"allkeys", "allchannels"});
  std::string_view error;
  EXPECT_FALSE(user.Apply("~x", context_, &error));
  EXPECT_NE(error.find("'allkeys' flag"), std::string_view::npos);
  EXPECT_FALSE(user.Apply("&x", context_, &error));
  EXPECT_NE(error.find("'allchannels' flag"), std::string_view::npos);
}

TEST_F(AclUserTest, KeysByPermission) {
  AclUser user = Make({"on", "+@all", "%R~read:*", "%W~write:*", "~both:*", "%RW~both:*"});
  EXPECT_EQ(user.Describe(registry_),
            "on %R~read:* %W~write:* ~both:* resetchannels +@all");
  EXPECT_TRUE(Check(user, {"GET", "read:1"}).allowed());
  AclVerdict denied = Check(user, {"SET", "read:1", "v"});
  EXPECT_EQ(denied.denial, AclDenial::kKey);
  EXPECT_EQ(denied.arg, 1u);
  EXPECT_TRUE(Check(user, {"SET", "write:1", "v"}).allowed());
  EXPECT_EQ(Check(user, {"GET", "write:1"}).denial, AclDenial::kKey);
  EXPECT_TRUE(Check(user, {"COPY", "read:1", "write:1"}).allowed());
  denied = Check(user, {"COPY", "write:1", "read:1"});
  EXPECT_EQ(denied.denial, AclDenial::kKey);
  EXPECT_EQ(denied.arg, 1u);
  EXPECT_TRUE(Check(user, {"COPY", "both:1", "both:2"}).allowed());
}

TEST_F(AclUserTest, Channels) {
  AclUser user = Make({"on", "+@all", "allkeys", "&news.*"});
  EXPECT_TRUE(Check(user, {"PUBLISH", "news.sport", "m"}).allowed());
  AclVerdict denied = Check(user, {"PUBLISH", "other", "m"});
  EXPECT_EQ(denied.denial, AclDenial::kChannel);
  EXPECT_EQ(denied.arg, 1u);
  // A pattern is allowed only as written in the rules.
  EXPECT_TRUE(Check(user, {"PSUBSCRIBE", "news.*"}).allowed());
  EXPECT_EQ(Check(user, {"PSUBSCRIBE", "news.s*"}).denial, AclDenial::kChannel);
  EXPECT_EQ(user.Describe(registry_), "on ~* resetchannels &news.* +@all");
}

TEST_F(AclUserTest, Selectors) {
  AclUser user = Make({"on", "+get", "~a*", "(+set ~b*)", "(%R~c* +@all)"});
  EXPECT_EQ(user.Describe(registry_),
            "on ~a* resetchannels -@all +@read (~b* resetchannels -@all +set) "
            "(%R~c* resetchannels +@all)");
  EXPECT_TRUE(Check(user, {"GET", "a1"}).allowed());
  EXPECT_TRUE(Check(user, {"SET", "b1", "v"}).allowed());
  EXPECT_TRUE(Check(user, {"GET", "c1"}).allowed());
  // The most specific refusal is reported: a key over a command.
  AclVerdict denied = Check(user, {"SET", "a1", "v"});
  EXPECT_EQ(denied.denial, AclDenial::kKey);
  // A selector allowing every command allows the keyless ones whatever its patterns.
  EXPECT_TRUE(Check(user, {"CONFIG", "GET", "x"}).allowed());
  std::string_view error;
  ASSERT_TRUE(user.Apply("clearselectors", context_, &error));
  EXPECT_EQ(user.Describe(registry_), "on ~a* resetchannels -@all +@read");
  EXPECT_EQ(Check(user, {"SET", "b1", "v"}).denial, AclDenial::kCommand);
  EXPECT_FALSE(user.Apply("(+nosuch)", context_, &error));
  EXPECT_EQ(error, "Unknown command or category name in ACL");
}

TEST_F(AclUserTest, MergeSelectorArgs) {
  size_t unmatched = 0;
  auto merged = AclUser::MergeSelectorArgs({"on", "(~a", "+get", "+set)", "(~b)"}, &unmatched);
  ASSERT_TRUE(merged);
  EXPECT_EQ(*merged, (std::vector<std::string>{"on", "(~a +get +set)", "(~b)"}));
  EXPECT_FALSE(AclUser::MergeSelectorArgs({"on", "(~a", "+get"}, &unmatched));
  EXPECT_EQ(unmatched, 1u);
}

TEST_F(AclUserTest, ResetReturnsToNew) {
  AclUser user = Make({"on", ">p", "~*", "&*", "+@all", "(~x +get)", "reset"});
  EXPECT_EQ(user.Describe(registry_), "off sanitize-payload resetchannels -@all");
  EXPECT_EQ(user.selectors().size(), 1u);
}

}  // namespace
}  // namespace damselfly::facade
