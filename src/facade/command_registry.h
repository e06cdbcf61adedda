// CommandRegistry: the commands a server knows, with the metadata Redis publishes for
// them (arity, flags, key positions, ACL categories). It drives dispatch (lookup, arity
// and unknown-command errors with Redis's texts) and the COMMAND command.
//
// Thread-safety: filled once at start-up, then read-only; lookups from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "helio/base/strings.h"
#include "src/facade/command_docs.h"
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
  kCmdBlocking = 1 << 12,  // may block the client (BLPOP, XREAD BLOCK...)
  // Runs as a whole-shard transaction (FLUSHALL, SWAPDB): EXEC holding one locks every
  // shard. Internal: COMMAND INFO does not list it.
  kCmdWholeShard = 1 << 13,
  kCmdSkipSlowlog = 1 << 14,  // EXEC: the commands it runs are logged instead
  kCmdPubSub = 1 << 15,
  kCmdNoMandatoryKeys = 1 << 16,  // may take no keys though it has key specs (EVAL)
  // Runs a script on the connection's fiber, which makes its own hops (EVAL, FCALL):
  // never squashed into a shard hop, also inside EXEC. Internal.
  kCmdScript = 1 << 17,
  // Not a write, but may make one in Redis's replication stream (PUBLISH, PFCOUNT, EVAL
  // and FCALL of a script without flags): held by CLIENT PAUSE WRITE, refused inside a
  // read-only script. Internal, as in Redis's COMMAND INFO.
  kCmdMayReplicate = 1 << 18,
};

// Flags of a key spec, as Redis 7 names them (COMMAND INFO, COMMAND GETKEYSANDFLAGS).
// kKeyRO keys are locked shared by transactions, all others exclusive.
enum KeyFlag : uint32_t {
  kKeyRO = 1 << 0,  // read only
  kKeyRW = 1 << 1,  // read and written
  kKeyOW = 1 << 2,  // overwritten, not read
  kKeyRM = 1 << 3,  // removed
  kKeyAccess = 1 << 4,
  kKeyUpdate = 1 << 5,
  kKeyInsert = 1 << 6,
  kKeyDelete = 1 << 7,
  kKeyNotKey = 1 << 8,
  kKeyIncomplete = 1 << 9,
  kKeyVariableFlags = 1 << 10,
};

// Where a command's keys are, as Redis 7's key specs say it: a begin search (an index,
// or a keyword searched for) and a find-keys rule (a range, or a count of keys read from
// an argument). Examples:
//   GET key                       {.begin_index = 1}
//   MSET k v [k v ...]            {.begin_index = 1, .last_key = -1, .key_step = 2}
//   ZUNIONSTORE dst n k1..kn      {.begin_index = 1} + {.begin_index = 2, .keynum = true}
//   XREAD ... STREAMS k1 k2 id1 id2
//                                 {.keyword = "STREAMS", .begin_index = 1,
//                                  .last_key = -1, .limit = 2}
struct KeySpec {
  // KeyFlag. 0 in a registration: as the command's flags say (see CommandRegistry::Add).
  uint32_t flags = 0;
  // begin_search. Without a keyword: the first key's position. With one: the position
  // to search from (negative: from the end, backwards); the begin is the argument after
  // the keyword. No keyword found: no keys from this spec.
  int begin_index = 0;
  const char* keyword = nullptr;
  // find_keys, range: the last key relative to the begin (negative: from the end of
  // the arguments, -1 the last one), every key_step, and with limit > 1 only the first
  // 1/limit of the remaining arguments.
  int last_key = 0;
  int key_step = 1;
  int limit = 0;
  // find_keys, keynum: the number of keys is the argument at begin + keynum_index, the
  // first key at begin + first_key_index, then every key_step.
  bool keynum = false;
  int keynum_index = 0;
  int first_key_index = 1;
  // Redis's "unknown" begin search and find keys: the keys cannot be found from the spec
  // (SORT's BY/GET patterns and STORE); the command's KeyFinder finds them. `notes` says
  // why, as COMMAND INFO shows it.
  bool unknown = false;
  const char* notes = nullptr;

  // This spec with `key_flags`, for registration lines: Keys(1, -1).WithFlags(kKeyRO).
  constexpr KeySpec WithFlags(uint32_t key_flags) const {
    KeySpec spec = *this;
    spec.flags = key_flags;
    return spec;
  }
};

// The keys at positions first..last (absolute; negative: from the end, -1 the last
// argument), every step: one index-and-range key spec, with the default flags.
constexpr KeySpec Keys(int first, int last, int step = 1) {
  return KeySpec{
      .begin_index = first, .last_key = last >= 0 ? last - first : last, .key_step = step};
}
// The single key at `position`.
constexpr KeySpec Keys(int position) { return Keys(position, position); }

// A spec Redis marks "unknown" (see KeySpec::unknown), with its flags and notes.
constexpr KeySpec UnknownKeys(uint32_t key_flags, const char* notes) {
  return KeySpec{.flags = key_flags, .unknown = true, .notes = notes};
}

// Finds the keys of a call whose specs cannot (SORT's STORE key, which may follow any
// option): calls fn(position, key flags) for each, in argument order, as
// CommandId::ForEachKey does, and gives none for arguments it cannot parse.
using KeyFinder = void (*)(CmdArgList args, absl::FunctionRef<void(size_t, uint32_t)> fn);

// A command's key specs, as a registration line gives them: kNoKeys, one spec
// (Keys(1)) or several (KeySpecs{Keys(1).WithFlags(...), Keys(2).WithFlags(...)}), and
// for a command with "unknown" specs the KeyFinder that finds its keys instead.
struct KeySpecs {
  KeySpecs() = default;
  KeySpecs(KeySpec spec) : specs{spec} {}  // implicit: a registration line passes Keys(1)
  KeySpecs(std::initializer_list<KeySpec> list) : specs(list) {}
  KeySpecs(std::initializer_list<KeySpec> list, KeyFinder finder) : specs(list), finder(finder) {}

  std::vector<KeySpec> specs;
  KeyFinder finder = nullptr;
};
inline const KeySpecs kNoKeys;

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
  kAclList = 1 << 10,
  kAclHash = 1 << 11,
  kAclSet = 1 << 12,
  kAclSortedSet = 1 << 13,
  kAclPubSub = 1 << 14,
  kAclBlocking = 1 << 15,
  kAclStream = 1 << 16,
  kAclBitmap = 1 << 17,
  kAclHyperLogLog = 1 << 18,
  kAclGeo = 1 << 19,
  kAclScripting = 1 << 20,
};

// A command implementation. args[0] is the command name as the client sent it.
using CommandHandler = std::function<void(CmdArgList args, ConnectionContext* cntx)>;

// A subcommand of a container command (CLIENT LIST, OBJECT ENCODING): Redis checks its
// existence and arity before running the container's handler.
struct SubcommandSpec {
  std::string name;  // upper case
  int arity = 0;     // counts the container's name and the subcommand's
  // ACL categories (AclCategory), Redis's for the subcommand: a container's own are
  // only @slow (@slow @connection for COMMAND), and ACL rules reach a subcommand by its own.
  uint32_t acl = 0;
  // The arguments after the subcommand (see command_docs.h); set by CommandRegistry::Add
  // from the "CONTAINER|SUB" doc entry.
  std::string syntax;
  // Dense, shared with CommandId::index (assigned by Add): subcommands have their
  // own counters, as in Redis's commandstats ("config|get").
  uint16_t index = 0;
};

struct CommandId {
  std::string name;  // upper case
  // Redis's rename-command: the command answers only to the name it was given
  // (CommandRegistry::Rename), or to none.
  bool renamed = false;
  // Dense, assigned by CommandRegistry::Add: indexes per-command counters.
  uint16_t index = 0;
  // Redis arity: N means exactly N arguments (name included), -N means at least N.
  int arity = 0;
  uint32_t flags = 0;
  // The legacy key range COMMAND INFO prints: first, last (-1: the last argument, -2:
  // the one before...) and step; 0 0 0 for commands without plain index-and-range specs.
  // Add derives it from key_specs as Redis 7 does.
  int first_key = 0;
  int last_key = 0;
  int key_step = 0;
  // Where the keys are (see KeySpec); empty: no keys.
  std::vector<KeySpec> key_specs;
  // Set by Add: the keys are one plain range (an index begin, a range find), the
  // common case ForEachKey walks without the general search.
  bool single_range = false;
  // From KeySpecs::finder: when set, ForEachKey asks it rather than the specs.
  KeyFinder key_finder = nullptr;
  // When set and true for a call, the call runs as a whole-shard transaction (as
  // kCmdWholeShard commands always do): routed to the connection's fiber, and EXEC
  // becomes whole-shard when it queues one. SORT with BY/GET patterns reads keys it
  // cannot name in advance.
  bool (*whole_shard_if)(CmdArgList args) = nullptr;
  // For a command whose key spec has kKeyVariableFlags (SET, BITFIELD): the flags of its
  // key in the call `args`, as COMMAND GETKEYSANDFLAGS reports them.
  uint32_t (*variable_key_flags)(CmdArgList args) = nullptr;
  uint32_t acl = 0;
  // From the command's CommandDoc (see command_docs.h).
  std::string group;
  std::string summary;
  std::string since;
  std::string syntax;

  // Runs on the thread of the shard that owns all the command's keys (or, for commands
  // without keys, or with keys on several shards, on the connection's fiber). Must not
  // suspend when it runs on the keys' shard. A command that may have keys on several
  // shards reaches them through a CommandTransaction (server/transaction.h), which
  // makes its hops inline in the first case and across shards in the second.
  CommandHandler handler = nullptr;
  // Non-empty for container commands; the handler sees only validated subcommands.
  std::vector<SubcommandSpec> subcommands;

  bool takes_keys() const { return !key_specs.empty(); }
  bool IsWholeShard(CmdArgList args) const {
    return (flags & kCmdWholeShard) != 0 || (whole_shard_if != nullptr && whole_shard_if(args));
  }
  // Whether the keys' positions depend on the arguments (Redis's "movablekeys").
  bool movable_keys() const;
  bool IsArityValid(size_t argc) const {
    return arity >= 0 ? argc == size_t(arity) : argc >= size_t(-arity);
  }
  // Calls fn(position, key flags) for each key of the call `args`, spec by spec, in
  // argument order within a spec. A keynum that is not a number, or asks for more
  // arguments than there are, gives no keys from that spec (the handler then replies
  // the error).
  template <typename Fn>
  void ForEachKey(CmdArgList args, Fn&& fn) const;
  // The first key's position (0: none); the prefetcher's and the router's quick look.
  size_t FirstKeyIndex(CmdArgList args) const;
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
  // The longest name Find looks up (rename-command's names included).
  static constexpr size_t kMaxNameLength = 128;

  // Adds documentation entries, which Add merges into the commands by name.
  // REQUIRES: `docs` outlives the registry; names not added before.
  void AddDocs(std::span<const CommandDoc> docs);

  // Registers a command: one line of a family's registration table, e.g.
  //   r->Add("GET", 2, kCmdReadOnly | kCmdFast, Keys(1), kAclRead | kAclString | kAclFast,
  //          CmdGet);
  // A key spec with flags 0 gets RW|access|update for a kCmdWrite command, RO|access
  // otherwise; the legacy key range comes from the specs. A container lists its
  // subcommands' names and arities: {{"GET", -3}, {"HELP", 2}}.
  // REQUIRES: a new upper-case name; a doc entry added by AddDocs for the command and for
  // each subcommand ("CONFIG|GET"), else a CHECK failure at start-up.
  // Returns the new command, for the rare attribute a line does not give
  // (CommandId::whole_shard_if); valid until the next Add.
  CommandId& Add(std::string_view name, int arity, uint32_t flags, const KeySpecs& keys,
                 uint32_t acl, CommandHandler handler, std::vector<SubcommandSpec> subcommands = {});

  // CHECK-fails when a doc entry has no command, so docs and registrations cannot drift.
  // Call once every family has registered.
  void CheckEveryDocUsed() const;

  // Redis's rename-command: `name` (a command, not a subcommand) answers only to
  // `new_name` from now on, or to no name when `new_name` is empty. False with Redis's
  // reason ("No such command in rename-command", "Target command name already exists").
  // REQUIRES: before any client is served (the registry is read without locks).
  bool Rename(std::string_view name, std::string_view new_name, std::string* error);

  // A command by the name it was registered with, whatever rename-command did (ACL rules
  // name commands so, as Redis's do); case-insensitive; nullptr when unknown.
  const CommandId* FindRegistered(std::string_view name) const;

  // Case-insensitive; nullptr when unknown. `hint`, a command of this registry or nullptr,
  // is compared first: a pipeline mostly repeats its last command, and comparing one name
  // costs less than hashing it.
  const CommandId* Find(std::string_view name, const CommandId* hint = nullptr) const;

  size_t size() const { return commands_.size(); }

  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const auto& [name, command] : commands_) fn(command);
  }
  // Calls fn(command, name, acl) for every command and then each of its subcommands, with
  // the names COMMAND LIST and ACL CAT give: lower case, "config|get" for a subcommand
  // (whose command is its container), and the ACL categories of each.
  template <typename Fn>
  void ForEachName(Fn&& fn) const {
    for (const auto& [upper, command] : commands_) {
      const std::string name = helio::AsciiStrToLower(command.name);
      fn(command, name, command.acl);
      for (const SubcommandSpec& sub : command.subcommands) {
        fn(command, helio::StrCat(name, "|", helio::AsciiStrToLower(sub.name)), sub.acl);
      }
    }
  }

  // Redis's errors: "ERR unknown command '<name>', with args beginning with: '<a>' ...",
  // "ERR wrong number of arguments for '<name>' command" (name lower-cased; for a
  // subcommand "container|sub") and "ERR unknown subcommand '<sub>'. Try <NAME> HELP.".
  static std::string UnknownCommandError(CmdArgList args);
  static std::string WrongArityError(std::string_view name);
  static std::string WrongArityError(std::string_view container, std::string_view subcommand);
  static std::string UnknownSubcommandError(std::string_view container, std::string_view sub);

  // Checks a call's command name, subcommand and arity; returns the command, or nullptr
  // with Redis's error text in *error. `hint` as for Find.
  const CommandId* Validate(CmdArgList args, std::string* error,
                            const CommandId* hint = nullptr) const;

  // The flag and ACL category names, as COMMAND INFO lists them.
  static std::vector<std::string_view> FlagNames(uint32_t flags);
  static std::vector<std::string> AclNames(uint32_t acl);
  // The category named `name` ("hash", any case, without '@'); 0 when there is none.
  static uint32_t AclCategory(std::string_view name);
  // Every category, in Redis's order (acl.c): {kAclKeyspace, "keyspace"}, ...
  static std::span<const std::pair<uint32_t, std::string_view>> AclCategories();

 private:
  struct DocEntry {
    const CommandDoc* doc;
    bool used = false;
  };
  // The doc entry for `name` ("SET", "CONFIG|GET"), marked used; CHECK-fails when none.
  const CommandDoc& TakeDoc(const std::string& name);

  absl::flat_hash_map<std::string, CommandId, helio::StringViewHash, helio::StringViewEq>
      commands_;
  // rename-command's new names (upper case), of commands_' entries.
  absl::flat_hash_map<std::string, const CommandId*, helio::StringViewHash, helio::StringViewEq>
      renamed_;
  absl::flat_hash_map<std::string_view, DocEntry> docs_;
  size_t next_index_ = 0;
};

// The begin of `spec` in `args`, or 0 when it has none (keyword missing).
int KeySpecBegin(const KeySpec& spec, CmdArgList args);
// For a keynum spec: the number of keys, or -1 when the argument is not a valid count.
int KeySpecKeynum(const KeySpec& spec, CmdArgList args, int begin);

template <typename Fn>
void CommandId::ForEachKey(CmdArgList args, Fn&& fn) const {
  const int argc = int(args.size());
  if (single_range) {
    const KeySpec& spec = key_specs.front();
    const int begin = spec.begin_index;
    int last = spec.last_key >= 0 ? begin + spec.last_key : argc + spec.last_key;
    if (spec.limit > 1) last = begin + (argc - begin) / spec.limit - 1;
    for (int i = begin; i <= last && i < argc; i += spec.key_step) fn(size_t(i), spec.flags);
    return;
  }
  if (key_finder != nullptr) return key_finder(args, fn);
  for (const KeySpec& spec : key_specs) {
    const int begin = KeySpecBegin(spec, args);
    if (begin <= 0 || begin >= argc) continue;
    if (spec.keynum) {
      const int count = KeySpecKeynum(spec, args, begin);
      if (count < 0) continue;
      const int first = begin + spec.first_key_index;
      for (int n = 0, i = first; n < count; ++n, i += spec.key_step) fn(size_t(i), spec.flags);
      continue;
    }
    int last = spec.last_key >= 0 ? begin + spec.last_key : argc + spec.last_key;
    if (spec.limit > 1) last = begin + (argc - begin) / spec.limit - 1;
    for (int i = begin; i <= last && i < argc; i += spec.key_step) fn(size_t(i), spec.flags);
  }
}

}  // namespace damselfly::facade
