#include "src/facade/command_registry.h"

#include <gtest/gtest.h>

namespace damselfly::facade {
namespace {

void Noop(CmdArgList, ConnectionContext*) {}

constexpr CommandDoc kDocs[] = {
    {"GET", "string", "Get the value of a key", "1.0.0", "key"},
    {"MSET", "string", "Set multiple keys to multiple values", "1.0.1",
     "key value [key value ...]"},
    {"RENAME", "generic", "Rename a key", "1.0.0", "key newkey"},
    {"ZUNIONSTORE", "sorted-set", "Add multiple sorted sets", "2.0.0", "destination numkeys key"},
    {"CONFIG", "server", "A container for server configuration commands", "2.0.0", ""},
    {.name = "CONFIG|GET", .syntax = "parameter [parameter ...]"},
    {.name = "CONFIG|HELP"},
};

class CommandRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.AddDocs(kDocs);
    registry_.Add("GET", 2, kCmdReadOnly | kCmdFast, Keys(1), kAclRead, Noop);
    registry_.Add("MSET", -3, kCmdWrite, Keys(1, -1, 2), kAclWrite, Noop);
    registry_.Add("RENAME", 3, kCmdWrite,
                  KeySpecs{Keys(1).WithFlags(kKeyRW | kKeyAccess | kKeyDelete),
                           Keys(2).WithFlags(kKeyOW | kKeyUpdate)},
                  kAclWrite, Noop);
    registry_.Add("ZUNIONSTORE", -4, kCmdWrite,
                  KeySpecs{Keys(1).WithFlags(kKeyOW | kKeyUpdate),
                           KeySpec{.flags = kKeyRO | kKeyAccess, .begin_index = 2, .keynum = true}},
                  kAclWrite, Noop);
    registry_.Add("CONFIG", -2, kCmdAdmin, kNoKeys, kAclAdmin, Noop,
                  {{"GET", -3, kAclAdmin}, {"HELP", 2, kAclSlow}});
  }

  CommandRegistry registry_;
};

TEST_F(CommandRegistryTest, MergesDocsByName) {
  registry_.CheckEveryDocUsed();
  const CommandId* get = registry_.Find("get");
  ASSERT_NE(get, nullptr);
  EXPECT_EQ(get->group, "string");
  EXPECT_EQ(get->summary, "Get the value of a key");
  EXPECT_EQ(get->since, "1.0.0");
  EXPECT_EQ(get->syntax, "key");
  const CommandId* config = registry_.Find("CONFIG");
  ASSERT_NE(config, nullptr);
  EXPECT_EQ(config->FindSubcommand("get")->syntax, "parameter [parameter ...]");
  EXPECT_EQ(config->FindSubcommand("help")->syntax, "");
}

// The hint is an answer only when its name matches (in any case); otherwise the lookup
// goes on as without one.
TEST_F(CommandRegistryTest, FindWithHint) {
  const CommandId* get = registry_.Find("GET");
  const CommandId* mset = registry_.Find("MSET");
  EXPECT_EQ(registry_.Find("gEt", get), get);
  EXPECT_EQ(registry_.Find("mset", get), mset);  // another name
  EXPECT_EQ(registry_.Find("RENAME", get), registry_.Find("RENAME"));
  EXPECT_EQ(registry_.Find("GETX", get), nullptr);
  EXPECT_EQ(registry_.Find("GE", get), nullptr);
  std::string error;
  std::string_view unknown[] = {"SET", "k", "v"};
  EXPECT_EQ(registry_.Validate(unknown, &error, get), nullptr);
  EXPECT_EQ(error, "ERR unknown command 'SET', with args beginning with: 'k' 'v' ");
  std::string_view bad_arity[] = {"get"};
  EXPECT_EQ(registry_.Validate(bad_arity, &error, get), nullptr);
  EXPECT_EQ(error, "ERR wrong number of arguments for 'get' command");
}

TEST_F(CommandRegistryTest, RenamedCommandsAnswerOnlyToTheirNewName) {
  const CommandId* get = registry_.Find("GET");
  std::string error;
  ASSERT_TRUE(registry_.Rename("get", "fetch", &error)) << error;
  EXPECT_EQ(registry_.Find("GET"), nullptr);
  EXPECT_EQ(registry_.Find("GET", get), nullptr);  // the hint does not bring the old name back
  EXPECT_EQ(registry_.Find("Fetch"), get);
  EXPECT_EQ(registry_.Find("fetch", get), get);
  ASSERT_TRUE(registry_.Rename("FETCH", "grab", &error));  // renamed again: one name only
  EXPECT_EQ(registry_.Find("FETCH"), nullptr);
  EXPECT_EQ(registry_.Find("GRAB"), get);
  ASSERT_TRUE(registry_.Rename("MSET", "", &error));  // removed
  EXPECT_EQ(registry_.Find("MSET"), nullptr);
  EXPECT_FALSE(registry_.Rename("NOPE", "x", &error));
  EXPECT_EQ(error, "No such command in rename-command");
  EXPECT_FALSE(registry_.Rename("RENAME", "grab", &error));
  EXPECT_EQ(error, "Target command name already exists");
  EXPECT_FALSE(registry_.Rename("RENAME", std::string(200, 'x'), &error));
  const std::string long_name(CommandRegistry::kMaxNameLength, 'y');
  ASSERT_TRUE(registry_.Rename("RENAME", long_name, &error));
  EXPECT_EQ(registry_.Find(long_name), registry_.Find(long_name));
  EXPECT_NE(registry_.Find(long_name), nullptr);
}

TEST_F(CommandRegistryTest, KeySpecFlagsFollowTheCommand) {
  const CommandId* get = registry_.Find("GET");
  ASSERT_EQ(get->key_specs.size(), 1u);
  EXPECT_EQ(get->key_specs[0].flags, kKeyRO | kKeyAccess);
  const CommandId* mset = registry_.Find("MSET");
  ASSERT_EQ(mset->key_specs.size(), 1u);
  EXPECT_EQ(mset->key_specs[0].flags, kKeyRW | kKeyAccess | kKeyUpdate);
  EXPECT_EQ(mset->key_specs[0].last_key, -1);
  EXPECT_EQ(mset->key_specs[0].key_step, 2);
  const CommandId* rename = registry_.Find("RENAME");
  ASSERT_EQ(rename->key_specs.size(), 2u);
  EXPECT_EQ(rename->key_specs[0].flags, kKeyRW | kKeyAccess | kKeyDelete);
  EXPECT_EQ(rename->key_specs[1].flags, kKeyOW | kKeyUpdate);
  EXPECT_EQ(rename->key_specs[1].begin_index, 2);
  EXPECT_EQ(rename->key_specs[1].last_key, 0);
}

// COMMAND INFO's first, last and step, as Redis 7 derives them from the key specs.
TEST_F(CommandRegistryTest, LegacyKeyRange) {
  auto range = [&](std::string_view name) {
    const CommandId* cid = registry_.Find(name);
    return std::vector<int>{cid->first_key, cid->last_key, cid->key_step};
  };
  EXPECT_EQ(range("GET"), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(range("MSET"), (std::vector<int>{1, -1, 2}));
  EXPECT_EQ(range("RENAME"), (std::vector<int>{1, 2, 1}));
  EXPECT_EQ(range("ZUNIONSTORE"), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(range("CONFIG"), (std::vector<int>{0, 0, 0}));
}

TEST(CommandRegistryDeathTest, CommandWithoutDoc) {
  CommandRegistry registry;
  registry.AddDocs(kDocs);
  EXPECT_DEATH(registry.Add("SET", -3, kCmdWrite, Keys(1), kAclWrite, Noop),
               "no doc entry for SET");
  EXPECT_DEATH(registry.Add("CONFIG", -2, kCmdAdmin, kNoKeys, kAclAdmin, Noop, {{"SET", -4}}),
               "no doc entry for CONFIG\\|SET");
}

TEST(CommandRegistryDeathTest, DocWithoutCommand) {
  CommandRegistry registry;
  registry.AddDocs(kDocs);
  registry.Add("GET", 2, kCmdReadOnly, Keys(1), kAclRead, Noop);
  EXPECT_DEATH(registry.CheckEveryDocUsed(), "doc entry without a command");
}

}  // namespace
}  // namespace damselfly::facade
