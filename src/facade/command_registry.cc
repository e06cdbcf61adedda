#include "src/facade/command_registry.h"

#include <glog/logging.h>

#include "helio/base/strings.h"
#include "src/facade/error.h"

namespace damselfly::facade {

void CommandRegistry::Register(CommandId command) {
  std::string name = command.name;
  DCHECK_EQ(name, helio::AsciiStrToUpper(name));
  DCHECK(command.handler) << name;
  if (command.key_specs.empty() && command.first_key > 0) {
    const bool writes = command.flags & kCmdWrite;
    command.key_specs.push_back(KeySpec{
        .flags = writes ? (kKeyRW | kKeyAccess | kKeyUpdate) : (kKeyRO | kKeyAccess),
        .begin_index = command.first_key,
        .last_key = command.last_key >= 0 ? command.last_key - command.first_key : command.last_key,
        .key_step = command.key_step});
  }
  command.single_range = command.key_specs.size() == 1 &&
                         command.key_specs[0].keyword == nullptr && !command.key_specs[0].keynum;
  command.index = next_index_++;
  for (SubcommandSpec& sub : command.subcommands) sub.index = next_index_++;
  CHECK_LE(next_index_, kMaxCommands) << "raise CommandRegistry::kMaxCommands";
  auto [it, inserted] = commands_.emplace(std::move(name), std::move(command));
  CHECK(inserted) << "command registered twice: " << it->first;
}

const CommandId* CommandRegistry::Find(std::string_view name) const {
  char upper[32];
  if (name.size() > sizeof(upper)) return nullptr;  // no command name is that long
  for (size_t i = 0; i < name.size(); ++i) upper[i] = helio::AsciiToUpper(name[i]);
  auto it = commands_.find(std::string_view(upper, name.size()));
  return it == commands_.end() ? nullptr : &it->second;
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
  const int64_t first = begin + spec.first_key_index;
  if (count > 0 && first + (count - 1) * spec.key_step >= int64_t(args.size())) return -1;
  return int(count);
}

bool CommandId::movable_keys() const {
  for (const KeySpec& spec : key_specs) {
    if (spec.keyword != nullptr || spec.keynum) return true;
  }
  return false;
}

size_t CommandId::FirstKeyIndex(CmdArgList args) const {
  if (key_specs.size() == 1 && key_specs[0].keyword == nullptr && !key_specs[0].keynum) {
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

const CommandId* CommandRegistry::Validate(CmdArgList args, std::string* error) const {
  const CommandId* cid = Find(args[0]);
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
      {kCmdAdmin, "admin"},         {kCmdNoScript, "noscript"}, {kCmdLoading, "loading"},
      {kCmdStale, "stale"},         {kCmdSkipMonitor, "skip_monitor"},
      {kCmdSkipSlowlog, "skip_slowlog"}, {kCmdNoAuth, "no_auth"},
      {kCmdAllowBusy, "allow_busy"}, {kCmdNoMulti, "no_multi"},
      {kCmdFast, "fast"},           {kCmdBlocking, "blocking"},
  };
  std::vector<std::string_view> names;
  for (const auto& [bit, name] : kNames) {
    if (flags & bit) names.push_back(name);
  }
  return names;
}

std::vector<std::string> CommandRegistry::AclNames(uint32_t acl) {
  static constexpr std::pair<uint32_t, std::string_view> kNames[] = {
      {kAclKeyspace, "keyspace"}, {kAclRead, "read"},   {kAclWrite, "write"},
      {kAclString, "string"},     {kAclFast, "fast"},   {kAclSlow, "slow"},
      {kAclAdmin, "admin"},       {kAclDangerous, "dangerous"}, {kAclConnection, "connection"},
      {kAclTransaction, "transaction"},
  };
  std::vector<std::string> names;
  for (const auto& [bit, name] : kNames) {
    if (acl & bit) names.push_back(helio::StrCat("@", name));
  }
  return names;
}

}  // namespace damselfly::facade
