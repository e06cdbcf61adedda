// AclUser: a Redis 7.0 ACL user. It is on or off, has passwords (kept as SHA-256 hex) or
// nopass, and selectors: the root one and any added in parentheses, each allowing some
// commands (by command, subcommand, category, or a command's first argument), keys (by
// glob pattern, for reading, writing or both) and Pub/Sub channels. A call is allowed when
// one selector allows all of it.
//
//   AclUser alice("alice", context);
//   alice.Apply("on", ...); alice.Apply(">secret", ...); alice.Apply("~cache:*", ...);
//   alice.Apply("+@read", ...);
//   alice.Describe(registry)  -> "on #2bb80d... ~cache:* resetchannels -@all +@read"
//   alice.Check(*get_cid, {"GET", "cache:1"})  -> allowed
//
// Rules are ACL SETUSER's words with Redis's meanings and error reasons; Describe gives
// them back as ACL LIST does (Redis's greedy choice of categories, then single commands,
// in name order where Redis follows its hash table's). Commands are named by the names
// they were registered with, whatever rename-command did.
//
// Thread-safety: a value; server/acl_users.h publishes users as immutable snapshots that
// any thread may Check without locks.
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "src/facade/command_registry.h"

namespace damselfly::facade {

// Why a call is refused; a later kind wins when selectors disagree (Redis's choice).
enum class AclDenial : uint8_t { kNone, kCommand, kKey, kChannel };

struct AclVerdict {
  AclDenial denial = AclDenial::kNone;
  size_t arg = 0;  // kKey, kChannel: the position of the argument refused
  bool allowed() const { return denial == AclDenial::kNone; }
};

// What rules depend on besides the rule: the commands, and acl-pubsub-default (whether
// a new user or selector starts with every channel allowed).
struct AclRuleContext {
  const CommandRegistry* registry = nullptr;
  bool all_channels_by_default = false;
};

class AclSelector {
 public:
  AclSelector(bool root, bool all_channels);

  // One selector rule: +cmd -cmd +cmd|sub +cmd|firstarg +@cat -@cat allcommands nocommands
  // ~pattern %R~ %W~ %RW~ allkeys resetkeys &pattern allchannels resetchannels. False with
  // Redis's reason in *error.
  bool Apply(std::string_view op, const AclRuleContext& context, std::string_view* error);

  // "~k* resetchannels &ch -@all +get" (ACL LIST); and its parts, as ACL GETUSER gives them.
  std::string Describe(const CommandRegistry& registry) const;
  std::string DescribeCommands(const CommandRegistry& registry) const;
  std::string DescribeKeys() const;
  std::string DescribeChannels() const;

  AclVerdict Check(const CommandId& cid, CmdArgList args) const;
  // A channel (or, with is_pattern, a PSUBSCRIBE pattern, which must appear literally).
  bool AllowsChannel(std::string_view channel, bool is_pattern) const;

  bool root() const { return root_; }
  bool allows_everything() const { return all_commands_ && all_keys_ && all_channels_; }
  bool all_channels() const { return all_channels_; }
  const std::vector<std::string>& channels() const { return channels_; }

 private:
  enum : uint8_t { kRead = 1, kWrite = 2 };
  struct KeyPattern {
    std::string pattern;
    uint8_t permissions;  // kRead | kWrite
  };

  bool command_bit(uint16_t index) const { return allowed_[index]; }
  void SetBit(uint16_t index, bool allow);
  // A command and, for a container, every subcommand; forgets its first arguments.
  void ChangeCommand(const CommandId& cid, bool allow);
  void ChangeCategory(const CommandRegistry& registry, uint32_t category, bool allow);
  // Commands (and subcommands) in `category` that this selector allows and denies.
  void CountCategory(const CommandRegistry& registry, uint32_t category, size_t* on,
                     size_t* off) const;
  bool AllowsKey(std::string_view key, uint8_t permissions) const;

  std::bitset<CommandRegistry::kMaxCommands> allowed_;
  // Redis's reserved bit: set by +@all, which also allows commands to come.
  bool future_commands_ = false;
  bool all_commands_ = false;  // skip the bits (+@all, until a command is removed)
  bool all_keys_ = false;
  bool all_channels_ = false;
  bool root_ = false;
  // Allowed first arguments of otherwise denied commands, by command index ("select|0").
  absl::flat_hash_map<uint16_t, std::vector<std::string>> first_args_;
  std::vector<KeyPattern> keys_;
  std::vector<std::string> channels_;
};

class AclUser {
 public:
  // A new user as ACL SETUSER creates it: off, no password, no permissions.
  AclUser(std::string name, const AclRuleContext& context);
  // The default user: on, nopass, every command, key and channel.
  static AclUser Default(const AclRuleContext& context);

  // One ACL SETUSER rule (a selector's words apply to the root selector). False with
  // Redis's reason in *error; the user may then be half changed (callers work on a copy).
  bool Apply(std::string_view op, const AclRuleContext& context, std::string_view* error);

  // ACL SETUSER's arguments with a selector written over several words joined ("(~a"
  // "+get)" -> "(~a +get)"); nullopt with the position of an unclosed "(" in *unmatched.
  static std::optional<std::vector<std::string>> MergeSelectorArgs(
      const std::vector<std::string_view>& args, size_t* unmatched);

  // Whether AUTH with this password logs in: the user is on and nopass, or has it.
  bool Authenticates(std::string_view password) const;
  AclVerdict Check(const CommandId& cid, CmdArgList args) const;
  bool AllowsChannel(std::string_view channel, bool is_pattern) const;

  // ACL LIST's line after "user <name> ".
  std::string Describe(const CommandRegistry& registry) const;
  // ACL GETUSER's flags, in Redis's order: on/off, nopass, (skip-)sanitize-payload.
  std::vector<std::string_view> Flags() const;

  const std::string& name() const { return name_; }
  void Rename(std::string name) { name_ = std::move(name); }
  bool enabled() const { return enabled_; }
  bool nopass() const { return nopass_; }
  const std::vector<std::string>& password_hashes() const { return passwords_; }
  const std::vector<AclSelector>& selectors() const { return selectors_; }
  // Whether Check can be skipped: the root selector allows every command, key and channel.
  bool unrestricted() const { return unrestricted_; }

 private:
  enum class Sanitize : uint8_t { kUnset, kSanitize, kSkip };

  std::string name_;
  bool enabled_ = false;
  bool nopass_ = false;
  bool unrestricted_ = false;
  Sanitize sanitize_ = Sanitize::kUnset;
  std::vector<std::string> passwords_;  // SHA-256 hex, in the order added
  std::vector<AclSelector> selectors_;  // the root one first
};

// Whether `s` has a space (any ASCII blank) or a NUL, which Redis refuses in user names
// and in key and channel patterns.
bool AclHasSpaces(std::string_view s);

// SHA-256 of `text`, as 64 lower-case hex digits (how ACL keeps passwords).
std::string AclPasswordHash(std::string_view text);

// The name Redis gives a call's command in NOPERM errors and ACL LOG: "get", "config|get".
std::string AclCommandName(const CommandId& cid, CmdArgList args);

}  // namespace damselfly::facade
