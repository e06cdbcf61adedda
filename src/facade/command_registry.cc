#include "src/facade/command_registry.h"

#include <glog/logging.h>

#include <algorithm>
#include <climits>

#include "helio/base/strings.h"
#include "src/facade/error.h"

namespace damselfly::facade {

namespace {

// Redis 7's legacy key range (COMMAND INFO's first, last, step) from the key specs: a
// single index-and-range spec as it is; else the span of the step-1 index-and-range specs
// that follow each other; 0 0 0 when there are none.
void SetLegacyKeyRange(CommandId* command) {
  auto plain = [](const KeySpec& spec) {
    return spec.keyword == nullptr && !spec.keynum && !spec.unknown;
  };
  auto absolute_last = [](const KeySpec& spec) {
    return spec.last_key >= 0 ? spec.begin_index + spec.last_key : spec.last_key;
  };
  const std::vector<KeySpec>& specs = command->key_specs;
  if (specs.size() == 1 && plain(specs[0])) {
    command->first_key = specs[0].begin_index;
    command->last_key = absolute_last(specs[0]);
    command->key_step = specs[0].key_step;
    return;
  }
  int first = INT_MAX;
  unsigned last = 0;  // unsigned: a last counted from the end (negative) is the greatest
  int previous_last = 0;
  for (const KeySpec& spec : specs) {
    if (!plain(spec) || spec.key_step != 1 ||
        (previous_last != 0 && previous_last != spec.begin_index - 1)) {
      continue;
    }
    first = std::min(first, spec.begin_index);
    last = std::max(last, unsigned(absolute_last(spec)));
    previous_last = int(last);
  }
  if (first == INT_MAX) return;
  command->first_key = first;
  command->last_key = int(last);
  command->key_step = 1;
}

}  // namespace

void CommandRegistry::AddDocs(std::span<const CommandDoc> docs) {
  for (const CommandDoc& doc : docs) {
    DCHECK_EQ(doc.name, helio::AsciiStrToUpper(doc.name));
    auto [it, inserted] = docs_.emplace(doc.name, DocEntry{.doc = &doc});
    CHECK(inserted) << "two doc entries for " << doc.name;
  }
}

const CommandDoc& CommandRegistry::TakeDoc(const std::string& name) {
  auto it = docs_.find(name);
  CHECK(it != docs_.end()) << "no doc entry for " << name << " (see command_docs_table.cc)";
  it->second.used = true;
  return *it->second.doc;
}

CommandId& CommandRegistry::Add(std::string_view name, int arity, uint32_t flags,
                                const KeySpecs& keys, uint32_t acl, CommandHandler handler,
                                std::vector<SubcommandSpec> subcommands) {
  CommandId command{.name = std::string(name),
                    .arity = arity,
                    .flags = flags,
                    .key_specs = keys.specs,
                    .key_finder = keys.finder,
                    .acl = acl,
                    .handler = std::move(handler),
                    .subcommands = std::move(subcommands)};
  DCHECK_EQ(command.name, helio::AsciiStrToUpper(name));
  DCHECK(command.handler) << name;
  const CommandDoc& doc = TakeDoc(command.name);
  DCHECK(!doc.group.empty() && !doc.summary.empty() && !doc.since.empty()) << name;
  command.group = doc.group;
  command.summary = doc.summary;
  command.since = doc.since;
  command.syntax = doc.syntax;
  for (SubcommandSpec& sub : command.subcommands) {
    const CommandDoc& sub_doc = TakeDoc(helio::StrCat(command.name, "|", sub.name));
    DCHECK(sub_doc.group.empty() && sub_doc.summary.empty() && sub_doc.since.empty())
        << sub_doc.name << ": a subcommand's doc gives only its syntax";
    sub.syntax = sub_doc.syntax;
    DCHECK(sub.acl != 0) << sub_doc.name << ": a subcommand names its ACL categories";
  }
  const uint32_t default_key_flags =
      flags & kCmdWrite ? (kKeyRW | kKeyAccess | kKeyUpdate) : (kKeyRO | kKeyAccess);
  for (KeySpec& spec : command.key_specs) {
    if (spec.flags == 0) spec.flags = default_key_flags;
  }
  SetLegacyKeyRange(&command);
  command.single_range = command.key_specs.size() == 1 && command.key_finder == nullptr &&
                         command.key_specs[0].keyword == nullptr &&
                         !command.key_specs[0].keynum && !command.key_specs[0].unknown;
  DCHECK_EQ(command.key_finder != nullptr,
            std::any_of(command.key_specs.begin(), command.key_specs.end(),
                        [](const KeySpec& spec) { return spec.unknown; }))
      << name << ": \"unknown\" key specs go with a KeyFinder";
  command.index = next_index_++;
  for (SubcommandSpec& sub : command.subcommands) sub.index = next_index_++;
  CHECK_LE(next_index_, kMaxCommands) << "raise CommandRegistry::kMaxCommands";
  std::string key = command.name;
  auto [it, inserted] = commands_.emplace(std::move(key), std::move(command));
  CHECK(inserted) << "command registered twice: " << it->first;
  return it->second;
}

void CommandRegistry::CheckEveryDocUsed() const {
  for (const auto& [name, entry] : docs_) {
    CHECK(entry.used) << "doc entry without a command: " << name;
  }
}

const CommandId* CommandRegistry::Find(std::string_view name, const CommandId* hint) const {
  if (hint != nullptr && !hint->renamed && helio::EqualsIgnoreCase(hint->name, name)) return hint;
  char upper[kMaxNameLength];
  if (name.size() > sizeof(upper)) return nullptr;  // no command name is that long
  for (size_t i = 0; i < name.size(); ++i) upper[i] = helio::AsciiToUpper(name[i]);
  const std::string_view key(upper, name.size());
  if (auto it = commands_.find(key); it != commands_.end() && !it->second.renamed) {
    return &it->second;
  }
  if (renamed_.empty()) [[likely]] return nullptr;
  auto it = renamed_.find(key);
  return it == renamed_.end() ? nullptr : it->second;
}

const CommandId* CommandRegistry::FindRegistered(std::string_view name) const {
  if (name.size() > kMaxNameLength) return nullptr;
  auto it = commands_.find(helio::AsciiStrToUpper(name));
  return it == commands_.end() ? nullptr : &it->second;
}

bool CommandRegistry::Rename(std::string_view name, std::string_view new_name,
                             std::string* error) {
  const CommandId* found = Find(name);
  if (found == nullptr) {
    *error = "No such command in rename-command";
    return false;
  }
  const std::string upper = helio::AsciiStrToUpper(new_name);
  if (upper.size() > kMaxNameLength) {
    *error = helio::StrCat("Target command name is longer than ", kMaxNameLength, " bytes");
    return false;
  }
  if (!upper.empty() && Find(upper) != nullptr) {
    *error = "Target command name already exists";
    return false;
  }
  CommandId& command = commands_.find(found->name)->second;
  absl::erase_if(renamed_, [&](const auto& entry) { return entry.second == &command; });
  command.renamed = true;
  if (!upper.empty()) renamed_.emplace(upper, &command);
  return true;
}

std::string CommandRegistry::UnknownCommandError(CmdArgList args) {
  // As Redis: the name clipped to 128 bytes, then quoted arguments while the list is
  // shorter than 128 bytes, the last one clipped to fit; each as a C string (up to a NUL).
  std::string quoted;
  for (size_t i = 1; i < args.size() && quoted.size() < 128; ++i) {
    helio::StrAppend(&quoted, "'", AsCString(args[i]).substr(0, 128 - quoted.size()), "' ");
  }
  return helio::StrCat("ERR unknown command '", AsCString(args[0]).substr(0, 128),
                       "', with args beginning with: ", quoted);
}

std::string CommandRegistry::WrongArityError(std::string_view name) {
  return helio::StrCat("ERR wrong number of arguments for '", helio::AsciiStrToLower(name),
                       "' command");
}

std::string CommandRegistry::WrongArityError(std::string_view container,
                                             std::string_view subcommand) {
  return helio::StrCat("ERR wrong number of arguments for '", helio::AsciiStrToLower(container),
                       "|", helio::AsciiStrToLower(subcommand), "' command");
}

std::string CommandRegistry::UnknownSubcommandError(std::string_view container,
                                                    std::string_view sub) {
  return helio::StrCat("ERR unknown subcommand '", AsCString(sub).substr(0, 128), "'. Try ",
                       helio::AsciiStrToUpper(container), " HELP.");
}

int KeySpecBegin(const KeySpec& spec, CmdArgList args) {
  if (spec.keyword == nullptr) return spec.begin_index;
  const int argc = int(args.size());
  if (spec.begin_index >= 0) {
    for (int i = spec.begin_index; i < argc; ++i) {
      if (helio::EqualsIgnoreCase(args[i], spec.keyword)) return i + 1;
    }
  } else {
    for (int i = argc + spec.begin_index; i > 0; --i) {
      if (helio::EqualsIgnoreCase(args[i], spec.keyword)) return i + 1;
    }
  }
  return 0;
}

int KeySpecKeynum(const KeySpec& spec, CmdArgList args, int begin) {
  const int at = begin + spec.keynum_index;
  int64_t count;
  if (at >= int(args.size()) || !helio::SimpleAtoi(args[at], &count) || count < 0) return -1;
  if (count > int64_t(args.size())) return -1;  // more keys than arguments (and no overflow below)
  const int64_t first = begin + spec.first_key_index;
  if (count > 0 && first + (count - 1) * spec.key_step >= int64_t(args.size())) return -1;
  return int(count);
}

bool CommandId::movable_keys() const {
  for (const KeySpec& spec : key_specs) {
    if (spec.keyword != nullptr || spec.keynum || spec.unknown) return true;
  }
  return false;
}

size_t CommandId::FirstKeyIndex(CmdArgList args) const {
  if (single_range) {
    return size_t(key_specs[0].begin_index) < args.size() ? key_specs[0].begin_index : 0;
  }
  size_t first = 0;
  ForEachKey(args, [&](size_t index, uint32_t) {
    if (first == 0) first = index;
  });
  return first;
}

const SubcommandSpec* CommandId::FindSubcommand(std::string_view sub) const {
  for (const SubcommandSpec& spec : subcommands) {
    if (helio::EqualsIgnoreCase(spec.name, sub)) return &spec;
  }
  return nullptr;
}

const CommandId* CommandRegistry::Validate(CmdArgList args, std::string* error,
                                           const CommandId* hint) const {
  const CommandId* cid = Find(args[0], hint);
  if (cid == nullptr) {
    *error = UnknownCommandError(args);
    return nullptr;
  }
  if (!cid->subcommands.empty() && args.size() >= 2) {
    const SubcommandSpec* sub = cid->FindSubcommand(args[1]);
    if (sub == nullptr) {
      *error = UnknownSubcommandError(cid->name, args[1]);
      return nullptr;
    }
    bool arity_ok = sub->arity >= 0 ? args.size() == size_t(sub->arity)
                                    : args.size() >= size_t(-sub->arity);
    if (!arity_ok) {
      *error = WrongArityError(cid->name, sub->name);
      return nullptr;
    }
    return cid;
  }
  if (!cid->IsArityValid(args.size())) {
    *error = WrongArityError(cid->name);
    return nullptr;
  }
  return cid;
}

std::vector<std::string_view> CommandRegistry::FlagNames(uint32_t flags) {
  static constexpr std::pair<uint32_t, std::string_view> kNames[] = {
      {kCmdWrite, "write"},         {kCmdReadOnly, "readonly"}, {kCmdDenyOom, "denyoom"},
      {kCmdAdmin, "admin"},         {kCmdPubSub, "pubsub"},     {kCmdNoScript, "noscript"},
      {kCmdLoading, "loading"},     {kCmdStale, "stale"},       {kCmdSkipMonitor, "skip_monitor"},
      {kCmdSkipSlowlog, "skip_slowlog"}, {kCmdNoAuth, "no_auth"},
      {kCmdAllowBusy, "allow_busy"}, {kCmdNoMulti, "no_multi"},
      {kCmdFast, "fast"},           {kCmdBlocking, "blocking"},
      {kCmdNoMandatoryKeys, "no_mandatory_keys"},
  };
  std::vector<std::string_view> names;
  for (const auto& [bit, name] : kNames) {
    if (flags & bit) names.push_back(name);
  }
  return names;
}

namespace {

// In Redis's order (acl.c), which COMMAND INFO and ACL CAT follow: "@write @set @fast".
constexpr std::pair<uint32_t, std::string_view> kAclCategoryNames[] = {
    {kAclKeyspace, "keyspace"}, {kAclRead, "read"},         {kAclWrite, "write"},
    {kAclSet, "set"},           {kAclSortedSet, "sortedset"}, {kAclList, "list"},
    {kAclHash, "hash"},         {kAclString, "string"},     {kAclBitmap, "bitmap"},
    {kAclHyperLogLog, "hyperloglog"},
    {kAclGeo, "geo"},
    {kAclStream, "stream"},
    {kAclPubSub, "pubsub"},
    {kAclAdmin, "admin"},
    {kAclFast, "fast"},         {kAclSlow, "slow"},         {kAclBlocking, "blocking"},
    {kAclDangerous, "dangerous"},
    {kAclConnection, "connection"}, {kAclTransaction, "transaction"},
    {kAclScripting, "scripting"},
};

}  // namespace

std::vector<std::string> CommandRegistry::AclNames(uint32_t acl) {
  std::vector<std::string> names;
  for (const auto& [bit, name] : kAclCategoryNames) {
    if (acl & bit) names.push_back(helio::StrCat("@", name));
  }
  return names;
}

uint32_t CommandRegistry::AclCategory(std::string_view name) {
  for (const auto& [bit, category] : kAclCategoryNames) {
    if (helio::EqualsIgnoreCase(name, category)) return bit;
  }
  return 0;
}

std::span<const std::pair<uint32_t, std::string_view>> CommandRegistry::AclCategories() {
  return kAclCategoryNames;
}

}  // namespace damselfly::facade
