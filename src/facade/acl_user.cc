#include "src/facade/acl_user.h"

#include <openssl/evp.h>

#include <algorithm>

#include "absl/strings/escaping.h"
#include "helio/base/strings.h"
#include "src/core/glob_matcher.h"
#include "src/core/redis_args.h"

namespace damselfly::facade {

namespace {

// Redis's reasons (ACLSetUserStringError), by what went wrong.
constexpr std::string_view kSyntaxError = "Syntax error";
constexpr std::string_view kUnknownName = "Unknown command or category name in ACL";
constexpr std::string_view kKeyAfterAll =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not "
    "have any effect. Try 'resetkeys' to start with an empty list of patterns";
constexpr std::string_view kChannelAfterAll =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does "
    "not have any effect. Try 'resetchannels' to start with an empty list of channels";
constexpr std::string_view kNoSuchPassword =
    "The password you are trying to remove from the user does not exist";
constexpr std::string_view kBadHash =
    "The password hash must be exactly 64 characters and contain only lowercase hexadecimal "
    "characters";
constexpr std::string_view kFirstArgOfSubcommand =
    "Allowing first-arg of a subcommand is not supported";

constexpr size_t kHashLength = 64;

bool Is(std::string_view op, std::string_view word) { return helio::EqualsIgnoreCase(op, word); }

bool IsValidHash(std::string_view hash) {
  return hash.size() == kHashLength && std::all_of(hash.begin(), hash.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The hash a password rule names: of the plain text after '>' or '<', or the hex after
// '#' or '!' (nullopt with Redis's reason when that is not a hash).
std::optional<std::string> PasswordHashOf(std::string_view op, std::string_view* error) {
  const std::string_view rest = op.substr(1);
  if (op[0] == '>' || op[0] == '<') return AclPasswordHash(rest);
  if (IsValidHash(rest)) return std::string(rest);
  *error = kBadHash;
  return std::nullopt;
}

// Constant time for equal lengths (all hashes have one length).
bool SameHash(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// A command or "container|sub" by its registered name: the command, and the subcommand
// when one is named. Nothing for an unknown name or "a|b|c".
struct NamedCommand {
  const CommandId* cid = nullptr;
  const SubcommandSpec* sub = nullptr;
};
NamedCommand LookupCommand(const CommandRegistry& registry, std::string_view name) {
  const size_t bar = name.find('|');
  if (bar == std::string_view::npos) return {registry.FindRegistered(name), nullptr};
  const std::string_view sub_name = name.substr(bar + 1);
  if (sub_name.find('|') != std::string_view::npos) return {};
  const CommandId* cid = registry.FindRegistered(name.substr(0, bar));
  if (cid == nullptr || cid->subcommands.empty()) return {};
  const SubcommandSpec* sub = cid->FindSubcommand(sub_name);
  return sub == nullptr ? NamedCommand{} : NamedCommand{cid, sub};
}

// The registry's commands by name, and each one's subcommands by name: the order in which
// rules are described.
std::vector<const CommandId*> CommandsByName(const CommandRegistry& registry) {
  std::vector<const CommandId*> commands;
  registry.ForEach([&](const CommandId& cid) { commands.push_back(&cid); });
  std::sort(commands.begin(), commands.end(),
            [](const CommandId* a, const CommandId* b) { return a->name < b->name; });
  return commands;
}
std::vector<const SubcommandSpec*> SubcommandsByName(const CommandId& cid) {
  std::vector<const SubcommandSpec*> subs;
  for (const SubcommandSpec& sub : cid.subcommands) subs.push_back(&sub);
  std::sort(subs.begin(), subs.end(),
            [](const SubcommandSpec* a, const SubcommandSpec* b) { return a->name < b->name; });
  return subs;
}

std::string LowerName(const CommandId& cid, const SubcommandSpec* sub) {
  std::string name = helio::AsciiStrToLower(cid.name);
  if (sub != nullptr) helio::StrAppend(&name, "|", helio::AsciiStrToLower(sub->name));
  return name;
}

// The channels a call names, as Redis's channel specs give them: PUBLISH's and SPUBLISH's
// first argument, every argument of SUBSCRIBE and SSUBSCRIBE, PSUBSCRIBE's as patterns.
// Unsubscribing is never refused.
struct ChannelArgs {
  size_t first = 0, last = 0;  // 0: none
  bool patterns = false;
};
ChannelArgs ChannelsOf(const CommandId& cid, CmdArgList args) {
  if (!(cid.flags & kCmdPubSub) || args.size() < 2) return {};
  const std::string& name = cid.name;
  if (name == "PUBLISH" || name == "SPUBLISH") return {1, 1, false};
  if (name == "SUBSCRIBE" || name == "SSUBSCRIBE") return {1, args.size() - 1, false};
  if (name == "PSUBSCRIBE") return {1, args.size() - 1, true};
  return {};
}

}  // namespace

bool AclHasSpaces(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return c == 0 || c == ' ' || (c >= '\t' && c <= '\r');
  });
}

std::string AclPasswordHash(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), length));
}

std::string AclCommandName(const CommandId& cid, CmdArgList args) {
  const SubcommandSpec* sub =
      cid.subcommands.empty() || args.size() < 2 ? nullptr : cid.FindSubcommand(args[1]);
  return LowerName(cid, sub);
}

// ---------------------------------------------------------------------------------------
// AclSelector

AclSelector::AclSelector(bool root, bool all_channels) : all_channels_(all_channels), root_(root) {}

void AclSelector::SetBit(uint16_t index, bool allow) {
  allowed_[index] = allow;
  if (!allow) all_commands_ = false;
}

void AclSelector::ChangeCommand(const CommandId& cid, bool allow) {
  SetBit(cid.index, allow);
  first_args_.erase(cid.index);
  for (const SubcommandSpec& sub : cid.subcommands) SetBit(sub.index, allow);
}

void AclSelector::ChangeCategory(const CommandRegistry& registry, uint32_t category, bool allow) {
  registry.ForEach([&](const CommandId& cid) {
    if (cid.acl & category) ChangeCommand(cid, allow);
    for (const SubcommandSpec& sub : cid.subcommands) {
      if (sub.acl & category) SetBit(sub.index, allow);
    }
  });
}

void AclSelector::CountCategory(const CommandRegistry& registry, uint32_t category, size_t* on,
                                size_t* off) const {
  *on = *off = 0;
  registry.ForEach([&](const CommandId& cid) {
    if (cid.acl & category) ++*(command_bit(cid.index) ? on : off);
    for (const SubcommandSpec& sub : cid.subcommands) {
      if (sub.acl & category) ++*(command_bit(sub.index) ? on : off);
    }
  });
}

bool AclSelector::Apply(std::string_view op, const AclRuleContext& context,
                        std::string_view* error) {
  const CommandRegistry& registry = *context.registry;
  if (op.empty()) {  // a selector's "" word
    *error = kSyntaxError;
    return false;
  }
  if (Is(op, "allkeys") || Is(op, "~*")) {
    all_keys_ = true;
    keys_.clear();
  } else if (Is(op, "resetkeys")) {
    all_keys_ = false;
    keys_.clear();
  } else if (Is(op, "allchannels") || Is(op, "&*")) {
    all_channels_ = true;
    channels_.clear();
  } else if (Is(op, "resetchannels")) {
    all_channels_ = false;
    channels_.clear();
  } else if (Is(op, "allcommands") || Is(op, "+@all")) {
    allowed_.set();
    future_commands_ = all_commands_ = true;
    first_args_.clear();
  } else if (Is(op, "nocommands") || Is(op, "-@all")) {
    allowed_.reset();
    future_commands_ = all_commands_ = false;
    first_args_.clear();
  } else if (op[0] == '~' || op[0] == '%') {
    if (all_keys_) {
      *error = kKeyAfterAll;
      return false;
    }
    uint8_t permissions = kRead | kWrite;
    size_t offset = 1;
    if (op[0] == '%') {
      permissions = 0;
      bool closed = false;
      for (; offset < op.size() && !closed; ++offset) {
        const char c = helio::AsciiToUpper(op[offset]);
        if (c == 'R' && !(permissions & kRead)) {
          permissions |= kRead;
        } else if (c == 'W' && !(permissions & kWrite)) {
          permissions |= kWrite;
        } else if (op[offset] == '~') {
          closed = true;
        } else {
          *error = kSyntaxError;
          return false;
        }
      }
      // Redis 7.0 takes "%R" as the empty pattern (and crashes describing "%~x"): refused.
      if (!closed || permissions == 0) {
        *error = kSyntaxError;
        return false;
      }
    }
    const std::string_view pattern = op.substr(offset);
    if (AclHasSpaces(pattern)) {
      *error = kSyntaxError;
      return false;
    }
    auto same = std::find_if(keys_.begin(), keys_.end(),
                             [&](const KeyPattern& key) { return key.pattern == pattern; });
    if (same == keys_.end()) {
      keys_.push_back({std::string(pattern), permissions});
    } else {
      same->permissions |= permissions;
    }
  } else if (op[0] == '&') {
    if (all_channels_) {
      *error = kChannelAfterAll;
      return false;
    }
    const std::string_view pattern = op.substr(1);
    if (AclHasSpaces(pattern)) {
      *error = kSyntaxError;
      return false;
    }
    if (std::find(channels_.begin(), channels_.end(), pattern) == channels_.end()) {
      channels_.emplace_back(pattern);
    }
  } else if ((op[0] == '+' || op[0] == '-') && op.size() > 1 && op[1] == '@') {
    const uint32_t category = CommandRegistry::AclCategory(op.substr(2));
    if (category == 0) {
      *error = kUnknownName;
      return false;
    }
    ChangeCategory(registry, category, op[0] == '+');
  } else if (op[0] == '+') {
    const std::string_view name = op.substr(1);
    const size_t bar = name.rfind('|');
    if (bar == std::string_view::npos) {
      const CommandId* cid = registry.FindRegistered(name);
      if (cid == nullptr) {
        *error = kUnknownName;
        return false;
      }
      ChangeCommand(*cid, true);
      return true;
    }
    const NamedCommand base = LookupCommand(registry, name.substr(0, bar));
    if (base.cid == nullptr) {
      *error = kUnknownName;
      return false;
    }
    if (base.sub != nullptr) {
      *error = kFirstArgOfSubcommand;
      return false;
    }
    const std::string_view first_arg = name.substr(bar + 1);
    if (first_arg.empty()) {
      *error = kSyntaxError;
      return false;
    }
    if (!base.cid->subcommands.empty()) {
      const SubcommandSpec* sub = base.cid->FindSubcommand(first_arg);
      if (sub == nullptr) {
        *error = kUnknownName;
        return false;
      }
      SetBit(sub->index, true);
      return true;
    }
    // Allowing one first argument of a command otherwise denied (SELECT|0), which
    // Redis 7.0 deprecates but keeps.
    std::vector<std::string>& allowed = first_args_[base.cid->index];
    auto known = std::find_if(allowed.begin(), allowed.end(), [&](const std::string& arg) {
      return helio::EqualsIgnoreCase(arg, first_arg);
    });
    if (known == allowed.end()) allowed.emplace_back(first_arg);
  } else if (op[0] == '-') {
    const NamedCommand named = LookupCommand(registry, op.substr(1));
    if (named.cid == nullptr) {
      *error = kUnknownName;
      return false;
    }
    if (named.sub != nullptr) {
      SetBit(named.sub->index, false);
    } else {
      ChangeCommand(*named.cid, false);
    }
  } else {
    *error = kSyntaxError;
    return false;
  }
  return true;
}

std::string AclSelector::DescribeKeys() const {
  if (all_keys_) return "~*";
  std::string out;
  for (const KeyPattern& key : keys_) {
    if (!out.empty()) out += ' ';
    out += key.permissions == (kRead | kWrite) ? "~" : key.permissions == kRead ? "%R~" : "%W~";
    out += key.pattern;
  }
  return out;
}

std::string AclSelector::DescribeChannels() const {
  if (all_channels_) return "&*";
  std::string out;
  for (const std::string& channel : channels_) {
    if (!out.empty()) out += ' ';
    helio::StrAppend(&out, "&", channel);
  }
  return out;
}

// Redis's algorithm (ACLDescribeSelectorCommandRules): start from +@all or -@all, add the
// categories that match the commands best while more of them match than not, then the
// single commands still different. `fake` replays the rules as they are emitted.
std::string AclSelector::DescribeCommands(const CommandRegistry& registry) const {
  const bool additive = !future_commands_;
  AclRuleContext context{.registry = &registry};
  std::string_view ignored;
  AclSelector fake(false, false);
  std::string rules = additive ? "-@all " : "+@all ";
  fake.Apply(additive ? "-@all" : "+@all", context, &ignored);

  AclSelector remaining(false, false);  // this selector's bits, as categories are taken
  remaining.allowed_ = allowed_;
  const auto categories = CommandRegistry::AclCategories();
  std::vector<bool> applied(categories.size(), false);
  while (true) {
    int best = -1;
    size_t min_diff = SIZE_MAX, max_same = 0;
    for (size_t i = 0; i < categories.size(); ++i) {
      if (applied[i]) continue;
      size_t on, off;
      remaining.CountCategory(registry, categories[i].first, &on, &off);
      const size_t diff = additive ? off : on, same = additive ? on : off;
      if (same > diff && (diff < min_diff || (diff == min_diff && same > max_same))) {
        best = int(i);
        min_diff = diff;
        max_same = same;
      }
    }
    if (best < 0) break;
    const uint32_t category = categories[best].first;
    fake.ChangeCategory(registry, category, additive);
    remaining.ChangeCategory(registry, category, !additive);
    helio::StrAppend(&rules, additive ? "+@" : "-@", categories[best].second, " ");
    applied[best] = true;
  }

  for (const CommandId* cid : CommandsByName(registry)) {
    const bool bit = command_bit(cid->index);
    if (bit != fake.command_bit(cid->index)) {
      helio::StrAppend(&rules, bit ? "+" : "-", LowerName(*cid, nullptr), " ");
      fake.ChangeCommand(*cid, bit);
    }
    for (const SubcommandSpec* sub : SubcommandsByName(*cid)) {
      const bool sub_bit = command_bit(sub->index);
      if (sub_bit != fake.command_bit(sub->index)) {
        helio::StrAppend(&rules, sub_bit ? "+" : "-", LowerName(*cid, sub), " ");
        fake.SetBit(sub->index, sub_bit);
      }
    }
    if (!bit) {
      if (auto it = first_args_.find(cid->index); it != first_args_.end()) {
        for (const std::string& arg : it->second) {
          helio::StrAppend(&rules, "+", LowerName(*cid, nullptr), "|", arg, " ");
        }
      }
    }
  }
  rules.pop_back();
  return rules;
}

std::string AclSelector::Describe(const CommandRegistry& registry) const {
  std::string out;
  if (std::string keys = DescribeKeys(); !keys.empty()) helio::StrAppend(&out, keys, " ");
  if (!all_channels_) out += "resetchannels ";
  if (std::string channels = DescribeChannels(); !channels.empty()) {
    helio::StrAppend(&out, channels, " ");
  }
  out += DescribeCommands(registry);
  return out;
}

bool AclSelector::AllowsKey(std::string_view key, uint8_t permissions) const {
  if (all_keys_) return true;
  for (const KeyPattern& pattern : keys_) {
    if ((pattern.permissions & permissions) != permissions) continue;
    if (core::GlobMatch(pattern.pattern, key)) return true;
  }
  return false;
}

bool AclSelector::AllowsChannel(std::string_view channel, bool is_pattern) const {
  if (all_channels_) return true;
  for (const std::string& pattern : channels_) {
    if (is_pattern ? pattern == channel : core::GlobMatch(pattern, channel)) return true;
  }
  return false;
}

AclVerdict AclSelector::Check(const CommandId& cid, CmdArgList args) const {
  if (!all_commands_ && !(cid.flags & kCmdNoAuth)) {
    const SubcommandSpec* sub =
        cid.subcommands.empty() || args.size() < 2 ? nullptr : cid.FindSubcommand(args[1]);
    if (!command_bit(sub != nullptr ? sub->index : cid.index)) {
      // Perhaps allowed with this first argument (never for a subcommand).
      auto it = sub == nullptr && args.size() >= 2 ? first_args_.find(cid.index)
                                                   : first_args_.end();
      if (it == first_args_.end() ||
          std::none_of(it->second.begin(), it->second.end(), [&](const std::string& arg) {
            return helio::EqualsIgnoreCase(arg, args[1]);
          })) {
        return {AclDenial::kCommand, 0};
      }
    }
  }
  if (!all_keys_ && (cid.takes_keys() || cid.key_finder != nullptr)) {
    AclVerdict verdict;
    cid.ForEachKey(args, [&](size_t position, uint32_t flags) {
      if (!verdict.allowed()) return;
      if ((flags & kKeyVariableFlags) && cid.variable_key_flags != nullptr) {
        flags = cid.variable_key_flags(args);
      }
      if (flags & kKeyNotKey) return;
      uint8_t needed = 0;
      if (flags & kKeyAccess) needed |= kRead;
      if (flags & (kKeyInsert | kKeyDelete | kKeyUpdate)) needed |= kWrite;
      if (!AllowsKey(args[position], needed)) verdict = {AclDenial::kKey, position};
    });
    if (!verdict.allowed()) return verdict;
  }
  if (!all_channels_) {
    const ChannelArgs channels = ChannelsOf(cid, args);
    for (size_t i = channels.first; i != 0 && i <= channels.last; ++i) {
      if (!AllowsChannel(args[i], channels.patterns)) return {AclDenial::kChannel, i};
    }
  }
  return {};
}

// ---------------------------------------------------------------------------------------
// AclUser

AclUser::AclUser(std::string name, const AclRuleContext& context) : name_(std::move(name)) {
  selectors_.emplace_back(/*root=*/true, context.all_channels_by_default);
}

AclUser AclUser::Default(const AclRuleContext& context) {
  AclUser user("default", context);
  std::string_view ignored;
  for (std::string_view op : {"+@all", "~*", "&*", "on", "nopass"}) {
    user.Apply(op, context, &ignored);
  }
  return user;
}

bool AclUser::Apply(std::string_view op, const AclRuleContext& context, std::string_view* error) {
  bool ok = true;
  if (op.empty()) {
    // A no-op, as in Redis.
  } else if (Is(op, "on")) {
    enabled_ = true;
  } else if (Is(op, "off")) {
    enabled_ = false;
  } else if (Is(op, "skip-sanitize-payload")) {
    sanitize_ = Sanitize::kSkip;
  } else if (Is(op, "sanitize-payload")) {
    sanitize_ = Sanitize::kSanitize;
  } else if (Is(op, "nopass")) {
    nopass_ = true;
    passwords_.clear();
  } else if (Is(op, "resetpass")) {
    nopass_ = false;
    passwords_.clear();
  } else if (op[0] == '>' || op[0] == '#') {
    std::optional<std::string> hash = PasswordHashOf(op, error);
    if (!hash) return false;
    if (std::find(passwords_.begin(), passwords_.end(), *hash) == passwords_.end()) {
      passwords_.push_back(std::move(*hash));
    }
    nopass_ = false;
  } else if (op[0] == '<' || op[0] == '!') {
    std::optional<std::string> hash = PasswordHashOf(op, error);
    if (!hash) return false;
    auto it = std::find(passwords_.begin(), passwords_.end(), *hash);
    if (it == passwords_.end()) {
      *error = kNoSuchPassword;
      return false;
    }
    passwords_.erase(it);
  } else if (op[0] == '(' && op.back() == ')') {
    AclSelector selector(/*root=*/false, context.all_channels_by_default);
    std::vector<std::string> words;
    core::SplitRedisArgs(op.substr(1, op.size() - 2), &words);  // unbalanced: no words
    for (const std::string& word : words) {
      if (!selector.Apply(word, context, error)) return false;
    }
    selectors_.push_back(std::move(selector));
  } else if (Is(op, "clearselectors")) {
    selectors_.erase(selectors_.begin() + 1, selectors_.end());
  } else if (Is(op, "reset")) {
    for (std::string_view step :
         {"resetpass", "resetkeys", "resetchannels", "off", "sanitize-payload", "clearselectors",
          "-@all"}) {
      Apply(step, context, error);
    }
    if (context.all_channels_by_default) Apply("allchannels", context, error);
  } else {
    ok = selectors_.front().Apply(op, context, error);
  }
  unrestricted_ = selectors_.front().allows_everything();
  return ok;
}

std::optional<std::vector<std::string>> AclUser::MergeSelectorArgs(
    const std::vector<std::string_view>& args, size_t* unmatched) {
  std::vector<std::string> merged;
  std::optional<size_t> open;
  std::string selector;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view op = args[i];
    if (!open && !op.empty() && op.front() == '(' && op.back() != ')') {
      open = i;
      selector = std::string(op);
      continue;
    }
    if (open) {
      helio::StrAppend(&selector, " ", op);
      if (!op.empty() && op.back() == ')') {
        merged.push_back(std::move(selector));
        open.reset();
      }
      continue;
    }
    merged.emplace_back(op);
  }
  if (open) {
    *unmatched = *open;
    return std::nullopt;
  }
  return merged;
}

bool AclUser::Authenticates(std::string_view password) const {
  if (!enabled_) return false;
  if (nopass_) return true;
  const std::string hash = AclPasswordHash(password);
  bool found = false;
  for (const std::string& known : passwords_) found |= SameHash(hash, known);
  return found;
}

AclVerdict AclUser::Check(const CommandId& cid, CmdArgList args) const {
  // Redis reports, among the selectors' refusals, the most specific kind (a channel over a
  // key over the command), and of one kind the last argument.
  AclVerdict relevant{AclDenial::kCommand, 0};
  for (const AclSelector& selector : selectors_) {
    const AclVerdict verdict = selector.Check(cid, args);
    if (verdict.allowed()) return verdict;
    if (verdict.denial > relevant.denial ||
        (verdict.denial == relevant.denial && verdict.arg > relevant.arg)) {
      relevant = verdict;
    }
  }
  return relevant;
}

bool AclUser::AllowsChannel(std::string_view channel, bool is_pattern) const {
  return std::any_of(selectors_.begin(), selectors_.end(), [&](const AclSelector& selector) {
    return selector.AllowsChannel(channel, is_pattern);
  });
}

std::vector<std::string_view> AclUser::Flags() const {
  std::vector<std::string_view> flags = {enabled_ ? "on" : "off"};
  if (nopass_) flags.push_back("nopass");
  if (sanitize_ == Sanitize::kSkip) flags.push_back("skip-sanitize-payload");
  if (sanitize_ == Sanitize::kSanitize) flags.push_back("sanitize-payload");
  return flags;
}

std::string AclUser::Describe(const CommandRegistry& registry) const {
  std::string out;
  for (std::string_view flag : Flags()) helio::StrAppend(&out, flag, " ");
  for (const std::string& hash : passwords_) helio::StrAppend(&out, "#", hash, " ");
  out += selectors_.front().Describe(registry);
  for (size_t i = 1; i < selectors_.size(); ++i) {
    helio::StrAppend(&out, " (", selectors_[i].Describe(registry), ")");
  }
  return out;
}

}  // namespace damselfly::facade
