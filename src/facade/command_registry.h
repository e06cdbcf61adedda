// CommandRegistry: the commands a server knows, with the metadata Redis publishes for
// them (arity, flags, key positions, ACL categories). It drives dispatch (lookup, arity
// and unknown-command errors with Redis's texts) and the COMMAND command.
//
// Thread-safety: filled once at start-up, then read-only; lookups from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "helio/base/strings.h"
#include "src/facade/resp_parser.h"

namespace damselfly::facade {

class ConnectionContext;

// Command flags; the names COMMAND INFO prints are in command_registry.cc.
enum CommandFlag : uint32_t {
  kCmdWrite = 1 << 0,
  kCmdReadOnly = 1 << 1,
  kCmdDenyOom = 1 << 2,
  kCmdAdmin = 1 << 3,
  kCmdFast = 1 << 4,
  kCmdNoAuth = 1 << 5,      // allowed before AUTH
  kCmdLoading = 1 << 6,
  kCmdStale = 1 << 7,
  kCmdNoScript = 1 << 8,
  kCmdAllowBusy = 1 << 9,
  kCmdSkipMonitor = 1 << 10,
  kCmdNoMulti = 1 << 11,
};

// ACL categories (@keyspace, @read, ...); the names are in command_registry.cc.
enum AclCategory : uint32_t {
  kAclKeyspace = 1 << 0,
  kAclRead = 1 << 1,
  kAclWrite = 1 << 2,
  kAclString = 1 << 3,
  kAclFast = 1 << 4,
  kAclSlow = 1 << 5,
  kAclAdmin = 1 << 6,
  kAclDangerous = 1 << 7,
  kAclConnection = 1 << 8,
  kAclTransaction = 1 << 9,
};

// A command implementation. args[0] is the command name as the client sent it.
using CommandHandler = std::function<void(CmdArgList args, ConnectionContext* cntx)>;

// A subcommand of a container command (CLIENT LIST, OBJECT ENCODING): Redis checks its
// existence and arity before running the container's handler.
struct SubcommandSpec {
  std::string name;    // upper case
  int arity = 0;       // counts the container's name and the subcommand's
  std::string syntax;  // the arguments after the subcommand, see command_docs.h
  // Dense, shared with CommandId::index (assigned by Register): subcommands have their
  // own counters, as in Redis's commandstats ("config|get").
  uint16_t index = 0;
};

struct CommandId {
  std::string name;  // upper case
  // Dense, assigned by CommandRegistry::Register: indexes per-command counters.
  uint16_t index = 0;
  // Redis arity: N means exactly N arguments (name included), -N means at least N.
  int arity = 0;
  uint32_t flags = 0;
  // Key positions: first, last (-1: the last argument, -2: the one before...) and step.
  // first_key 0 means the command takes no keys.
  int first_key = 0;
  int last_key = 0;
  int key_step = 0;
  uint32_t acl = 0;
  std::string group;    // COMMAND DOCS group: "string", "generic", "connection", "server"
  std::string summary;  // COMMAND DOCS summary
  std::string since;    // first Redis version with the command
  std::string syntax;   // the arguments, in Redis docs' notation (see command_docs.h)

  // Runs on the thread of the shard that owns all the command's keys (or, for commands
  // without keys, on the connection's fiber). Must not suspend when it has keys.
  CommandHandler handler = nullptr;
  // Optional. Runs on the connection's fiber when the keys live on several shards.
  CommandHandler cross_shard_handler = nullptr;
  // Non-empty for container commands; the handler sees only validated subcommands.
  std::vector<SubcommandSpec> subcommands;

  bool takes_keys() const { return first_key > 0; }
  bool IsArityValid(size_t argc) const {
    return arity >= 0 ? argc == size_t(arity) : argc >= size_t(-arity);
  }
  // Positions of the keys in a call with `argc` arguments, in order.
  template <typename Fn>
  void ForEachKeyIndex(size_t argc, Fn&& fn) const;
  // Case-insensitive; nullptr when this container has no such subcommand.
  const SubcommandSpec* FindSubcommand(std::string_view name) const;
  // The counters slot of a call: its subcommand's when it names a known one, else this
  // command's.
  uint16_t StatsIndex(CmdArgList args) const {
    if (subcommands.empty() || args.size() < 2) return index;
    const SubcommandSpec* sub = FindSubcommand(args[1]);
    return sub ? sub->index : index;
  }
};

class CommandRegistry {
 public:
  // Bounds CommandId::index and SubcommandSpec::index.
  static constexpr size_t kMaxCommands = 512;

  // REQUIRES: a new name.
  void Register(CommandId command);

  // Case-insensitive; nullptr when unknown.
  const CommandId* Find(std::string_view name) const;

  size_t size() const { return commands_.size(); }

  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const auto& [name, command] : commands_) fn(command);
  }

  // Redis's errors: "ERR unknown command '<name>', with args beginning with: '<a>' ...",
  // "ERR wrong number of arguments for '<name>' command" (name lower-cased; for a
  // subcommand "container|sub") and "ERR unknown subcommand '<sub>'. Try <NAME> HELP.".
  static std::string UnknownCommandError(CmdArgList args);
  static std::string WrongArityError(std::string_view name);
  static std::string WrongArityError(std::string_view container, std::string_view subcommand);
  static std::string UnknownSubcommandError(std::string_view container, std::string_view sub);

  // Checks a call's command name, subcommand and arity; returns the command, or nullptr
  // with Redis's error text in *error.
  const CommandId* Validate(CmdArgList args, std::string* error) const;

  // The flag and ACL category names, as COMMAND INFO lists them.
  static std::vector<std::string_view> FlagNames(uint32_t flags);
  static std::vector<std::string> AclNames(uint32_t acl);

 private:
  absl::flat_hash_map<std::string, CommandId, helio::StringViewHash, helio::StringViewEq>
      commands_;
  size_t next_index_ = 0;
};

template <typename Fn>
void CommandId::ForEachKeyIndex(size_t argc, Fn&& fn) const {
  if (first_key <= 0) return;
  int last = last_key >= 0 ? last_key : int(argc) + last_key;
  for (int i = first_key; i <= last && i < int(argc); i += key_step) fn(size_t(i));
}

}  // namespace damselfly::facade
