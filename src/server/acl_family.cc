#include "src/server/acl_family.h"

#include <gflags/gflags.h>
#include <openssl/rand.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include <glog/logging.h>
#include "helio/base/strings.h"
#include "helio/base/time.h"
#include "src/facade/acl_user.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/acl_file.h"
#include "src/server/acl_users.h"
#include "src/server/arg_parsing.h"
#include "src/server/connection_family.h"
#include "src/server/multi_exec.h"

DEFINE_string(aclfile, "",
              "The ACL file: users loaded at start-up and by ACL LOAD, written by ACL SAVE "
              "(Redis's aclfile; none: users come from the configuration file's user lines)");

namespace damselfly {

namespace {

using facade::AclDenial;
using facade::AclUser;
using facade::AclVerdict;
using facade::CmdArgList;
using facade::CommandId;
using facade::CommandRegistry;
using facade::ConnectionContext;
using facade::ReplyBuilder;

// Redis groups an event with an earlier one of the same kind this recent, among the
// newest ten.
constexpr int64_t kLogGroupingMs = 60000;
constexpr size_t kLogGroupingScan = 10;

enum class LogReason : uint8_t { kCommand, kKey, kChannel, kAuth };
enum class LogContext : uint8_t { kToplevel, kMulti, kLua };

struct LogEntry {
  LogReason reason;
  LogContext context;
  std::string object;  // the command, key or channel; for auth the command as typed
  std::string username;
  std::string client_info;
  int64_t count = 1;
  int64_t updated_ms = 0;
};

std::atomic<size_t> log_max_len{128};

// Newest first.
struct AclLog {
  std::mutex mu;
  std::deque<LogEntry> entries;
};

AclLog& Log() {
  static AclLog* log = new AclLog;  // never destroyed: threads may log until exit
  return *log;
}

void AddLogEntry(LogEntry entry) {
  entry.updated_ms = helio::UnixTimeMs();
  AclLog& log = Log();
  std::lock_guard lock(log.mu);
  const size_t scan = std::min(log.entries.size(), kLogGroupingScan);
  for (size_t i = 0; i < scan; ++i) {
    LogEntry& known = log.entries[i];
    if (known.reason == entry.reason && known.context == entry.context &&
        known.object == entry.object && known.username == entry.username &&
        entry.updated_ms - known.updated_ms <= kLogGroupingMs) {
      entry.count = known.count + 1;
      log.entries.erase(log.entries.begin() + i);
      break;
    }
  }
  log.entries.push_front(std::move(entry));
  while (log.entries.size() > AclLogMaxLen()) log.entries.pop_back();
}

std::string_view ReasonName(LogReason reason) {
  switch (reason) {
    case LogReason::kCommand: return "command";
    case LogReason::kKey: return "key";
    case LogReason::kChannel: return "channel";
    case LogReason::kAuth: return "auth";
  }
  return "unknown";
}

std::string_view ContextName(LogContext context) {
  switch (context) {
    case LogContext::kToplevel: return "toplevel";
    case LogContext::kMulti: return "multi";
    case LogContext::kLua: return "lua";
  }
  return "unknown";
}

// ACL GETUSER's commands, keys and channels of a selector.
void SendSelectorFields(const facade::AclSelector& selector, const CommandRegistry& registry,
                        ReplyBuilder* rb) {
  rb->SendBulk("commands");
  rb->SendBulk(selector.DescribeCommands(registry));
  rb->SendBulk("keys");
  rb->SendBulk(selector.DescribeKeys());
  rb->SendBulk("channels");
  rb->SendBulk(selector.DescribeChannels());
}

void AclGetUser(CmdArgList args, ReplyBuilder* rb) {
  AclUserPtr user = FindAclUser(args[2]);
  if (user == nullptr) return rb->SendNull();
  const CommandRegistry& registry = AclRegistry();
  rb->StartMap(6);
  rb->SendBulk("flags");
  std::vector<std::string_view> flags = user->Flags();
  rb->StartSet(flags.size());
  for (std::string_view flag : flags) rb->SendBulk(flag);
  rb->SendBulk("passwords");
  rb->SendBulkArray(user->password_hashes());
  SendSelectorFields(user->selectors().front(), registry, rb);
  rb->SendBulk("selectors");
  rb->StartArray(user->selectors().size() - 1);
  for (size_t i = 1; i < user->selectors().size(); ++i) {
    rb->StartMap(3);
    SendSelectorFields(user->selectors()[i], registry, rb);
  }
}

void AclList(ReplyBuilder* rb) {
  const CommandRegistry& registry = AclRegistry();
  std::vector<AclUserPtr> users = AllAclUsers();
  rb->StartArray(users.size());
  for (const AclUserPtr& user : users) {
    rb->SendBulk(helio::StrCat("user ", user->name(), " ", user->Describe(registry)));
  }
}

void AclUsers(ReplyBuilder* rb) {
  std::vector<AclUserPtr> users = AllAclUsers();
  rb->StartArray(users.size());
  for (const AclUserPtr& user : users) rb->SendBulk(user->name());
}

void AclCat(const CommandRegistry& registry, CmdArgList args, ReplyBuilder* rb) {
  if (args.size() == 2) {
    std::vector<std::string_view> categories;
    for (const auto& [bit, name] : CommandRegistry::AclCategories()) categories.push_back(name);
    return rb->SendBulkArray(categories);
  }
  const uint32_t category = CommandRegistry::AclCategory(args[2]);
  if (category == 0) {
    return rb->SendError(helio::StrCat("ERR Unknown category '", args[2].substr(0, 128), "'"));
  }
  std::vector<std::string> names;
  registry.ForEachName([&](const CommandId&, const std::string& name, uint32_t acl) {
    if (acl & category) names.push_back(name);
  });
  rb->SendBulkArray(names);
}

void AclSetUser(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  const std::string_view name = args[2];
  if (facade::AclHasSpaces(name)) {
    return rb->SendError("ERR Usernames can't contain spaces or null characters");
  }
  size_t unmatched = 0;
  std::optional<std::vector<std::string>> rules = AclUser::MergeSelectorArgs(
      std::vector<std::string_view>(args.begin() + 3, args.end()), &unmatched);
  if (!rules) {
    return rb->SendError(helio::StrCat("ERR Unmatched parenthesis in acl selector starting at '",
                                       args[3 + unmatched], "'."));
  }
  std::string error = SetAclUser(name, *rules, cntx);
  if (!error.empty()) return rb->SendError(error);
  rb->SendOk();
}

void AclDelUser(CmdArgList args, ConnectionContext* cntx) {
  std::vector<std::string_view> names(args.begin() + 2, args.end());
  if (std::find(names.begin(), names.end(), "default") != names.end()) {
    return cntx->reply_builder()->SendError("ERR The 'default' user cannot be removed");
  }
  cntx->reply_builder()->SendLong(int64_t(DeleteAclUsers(names, cntx)));
}

// DRYRUN user command [arg ...]: the verdict as a plain string (not an error), after
// Redis's checks of the command and its arity.
void AclDryRun(const CommandRegistry& registry, CmdArgList args, ReplyBuilder* rb) {
  AclUserPtr user = FindAclUser(args[2]);
  if (user == nullptr) {
    return rb->SendError(helio::StrCat("ERR User '", args[2], "' not found"));
  }
  CmdArgList call = args.subspan(3);
  const CommandId* cid = registry.Find(call[0]);
  bool known = cid != nullptr && (cid->subcommands.empty() || call.size() < 2 ||
                                  cid->FindSubcommand(call[1]) != nullptr);
  if (!known) return rb->SendError(helio::StrCat("ERR Command '", call[0], "' not found"));
  std::string error;
  if (!registry.Validate(call, &error)) return rb->SendError(error);
  const AclVerdict verdict = user->Check(*cid, call);
  switch (verdict.denial) {
    case AclDenial::kNone:
      return rb->SendOk();
    case AclDenial::kCommand:
      return rb->SendBulk(helio::StrCat("This user has no permissions to run the '",
                                        facade::AclCommandName(*cid, call), "' command"));
    case AclDenial::kKey:
      return rb->SendBulk(helio::StrCat("This user has no permissions to access the '",
                                        call[verdict.arg], "' key"));
    case AclDenial::kChannel:
      return rb->SendBulk(helio::StrCat("This user has no permissions to access the '",
                                        call[verdict.arg], "' channel"));
  }
}

void AclLogCmd(CmdArgList args, ReplyBuilder* rb) {
  AclLog& log = Log();
  size_t count = 10;
  if (args.size() == 3) {
    if (ArgIs(args[2], "RESET")) {
      std::lock_guard lock(log.mu);
      log.entries.clear();
      return rb->SendOk();
    }
    std::optional<int64_t> parsed = ParseInt64(args[2]);
    if (!parsed) return rb->SendError(facade::kInvalidIntErr);
    count = size_t(std::max<int64_t>(*parsed, 0));
  } else if (args.size() > 3) {
    return rb->SendError(facade::kSyntaxErr);
  }
  std::vector<LogEntry> shown;
  {
    std::lock_guard lock(log.mu);
    count = std::min(count, log.entries.size());
    shown.assign(log.entries.begin(), log.entries.begin() + count);
  }
  const int64_t now_ms = helio::UnixTimeMs();
  rb->StartArray(shown.size());
  for (const LogEntry& entry : shown) {
    rb->StartMap(7);
    rb->SendBulk("count");
    rb->SendLong(entry.count);
    rb->SendBulk("reason");
    rb->SendBulk(ReasonName(entry.reason));
    rb->SendBulk("context");
    rb->SendBulk(ContextName(entry.context));
    rb->SendBulk("object");
    rb->SendBulk(entry.object);
    rb->SendBulk("username");
    rb->SendBulk(entry.username);
    rb->SendBulk("age-seconds");
    rb->SendDouble(double(now_ms - entry.updated_ms) / 1000);
    rb->SendBulk("client-info");
    rb->SendBulk(entry.client_info);
  }
}

void AclGenPass(CmdArgList args, ReplyBuilder* rb) {
  int64_t bits = 256;
  if (args.size() == 3) {
    std::optional<int64_t> parsed = ParseInt64(args[2]);
    if (!parsed) return rb->SendError(facade::kInvalidIntErr);
    bits = *parsed;
  }
  if (bits <= 0 || bits > 4096) {
    return rb->SendError(
        "ERR ACL GENPASS argument must be the number of bits for the output password, a "
        "positive number up to 4096");
  }
  const size_t chars = size_t(bits + 3) / 4;
  unsigned char random[512];
  if (RAND_bytes(random, int((chars + 1) / 2)) != 1) {
    return rb->SendError("ERR failed to generate random bytes");
  }
  std::string password = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<char*>(random), (chars + 1) / 2));
  password.resize(chars);
  rb->SendBulk(password);
}

void AclLoad(ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::vector<AclUser> users;
  std::string errors = ReadAclFile(AclFile(), AclContext(), &users);
  if (!errors.empty()) return rb->SendError(helio::StrCat("ERR ", errors));
  ReplaceAclUsers(std::move(users), cntx);
  rb->SendOk();
}

void AclSave(ReplyBuilder* rb) {
  std::vector<AclUserPtr> users = AllAclUsers();
  std::vector<const AclUser*> listed;
  for (const AclUserPtr& user : users) listed.push_back(user.get());
  if (int error = WriteAclFile(AclFile(), listed, AclRegistry()); error != 0) {
    LOG(WARNING) << "ACL SAVE could not write " << AclFile() << ": " << std::strerror(error);
    return rb->SendError(
        "ERR There was an error trying to save the ACLs. Please check the server logs for "
        "more information");
  }
  rb->SendOk();
}

void CmdAcl(const CommandRegistry& registry, CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view sub = args[1];  // validated by the dispatcher
  if (ArgIs(sub, "WHOAMI")) return rb->SendBulk(AclUserName(cntx));
  if (ArgIs(sub, "USERS")) return AclUsers(rb);
  if (ArgIs(sub, "LIST")) return AclList(rb);
  if (ArgIs(sub, "GETUSER")) return AclGetUser(args, rb);
  if (ArgIs(sub, "CAT")) return AclCat(registry, args, rb);
  if (ArgIs(sub, "DRYRUN")) return AclDryRun(registry, args, rb);
  if (ArgIs(sub, "LOG")) return AclLogCmd(args, rb);
  if (ArgIs(sub, "GENPASS")) return AclGenPass(args, rb);
  if (ArgIs(sub, "DELUSER")) return AclDelUser(args, cntx);
  if (ArgIs(sub, "SETUSER")) return AclSetUser(args, cntx);
  if (ArgIs(sub, "LOAD") || ArgIs(sub, "SAVE")) {
    if (AclFile().empty()) {
      return rb->SendError(
          "ERR This Redis instance is not configured to use an ACL file. You may want to "
          "specify users via the ACL SETUSER command and then issue a CONFIG REWRITE "
          "(assuming you have a Redis configuration file set) in order to store users in the "
          "Redis configuration.");
    }
    return ArgIs(sub, "LOAD") ? AclLoad(cntx) : AclSave(rb);
  }
  static constexpr std::string_view kHelp[] = {
      "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CAT [<category>]",
      "    List all commands that belong to <category>, or all command categories",
      "    when no category is specified.",
      "DELUSER <username> [<username> ...]",
      "    Delete a list of users.",
      "DRYRUN <username> <command> [<arg> ...]",
      "    Returns whether the user can execute the given command without executing the "
      "command.",
      "GETUSER <username>",
      "    Get the user's details.",
      "GENPASS [<bits>]",
      "    Generate a secure 256-bit user password. The optional `bits` argument can",
      "    be used to specify a different size.",
      "LIST",
      "    Show users details in config file format.",
      "LOAD",
      "    Reload users from the ACL file.",
      "LOG [<count> | RESET]",
      "    Show the ACL log entries.",
      "SAVE",
      "    Save the current config to the ACL file.",
      "SETUSER <username> <attribute> [<attribute> ...]",
      "    Create or modify a user with the specified attributes.",
      "USERS",
      "    List all the registered usernames.",
      "WHOAMI",
      "    Return the current connection username.",
      "HELP",
      "    Prints this help.",
  };
  rb->SendSimpleStringArray(kHelp);
}

}  // namespace

std::string AclRefusal(ConnectionContext* cntx, const CommandId& cid, CmdArgList args,
                       AclSite site) {
  const AclUser& user = CurrentAclUser(cntx);
  const AclVerdict verdict = user.Check(cid, args);
  if (verdict.allowed()) return "";
  // Redis's texts for each kind of denial: at the top level (or when queued), at EXEC,
  // and in a script.
  struct Texts {
    LogReason reason;
    std::string_view toplevel, exec, script;
  };
  static constexpr Texts kCommand = {
      LogReason::kCommand, "", "no permission to execute the command or subcommand",
      "can't run this command or subcommand"};
  static constexpr Texts kKey = {
      LogReason::kKey, "access one of the keys used as arguments",
      "no permission to touch the specified keys",
      "can't access at least one of the keys mentioned in the command arguments"};
  static constexpr Texts kChannel = {
      LogReason::kChannel, "access one of the channels used as arguments",
      "no permission to access one of the channels used as arguments",
      "can't publish to the channel mentioned in the command"};
  const Texts& texts = verdict.denial == AclDenial::kKey       ? kKey
                       : verdict.denial == AclDenial::kChannel ? kChannel
                                                               : kCommand;
  const std::string command = facade::AclCommandName(cid, args);
  const bool in_multi =
      site == AclSite::kExec || (site == AclSite::kToplevel && MultiExec::InMulti(cntx));
  AddLogEntry(LogEntry{
      .reason = texts.reason,
      .context = site == AclSite::kScript ? LogContext::kLua
                 : in_multi               ? LogContext::kMulti
                                          : LogContext::kToplevel,
      .object = texts.reason == LogReason::kCommand ? command : std::string(args[verdict.arg]),
      .username = user.name(),
      .client_info = ClientInfoLine(cntx)});
  switch (site) {
    case AclSite::kToplevel:
      if (texts.reason == LogReason::kCommand) {
        return helio::StrCat("NOPERM this user has no permissions to run the '", command,
                             "' command");
      }
      return helio::StrCat("NOPERM this user has no permissions to ", texts.toplevel);
    case AclSite::kExec:
      return helio::StrCat(
          "NOPERM ACLs rules changed between the moment the transaction was accumulated and "
          "the EXEC call. This command is no longer allowed for the following reason: ",
          texts.exec);
    case AclSite::kScript:
      return helio::StrCat("ERR The user executing the script ", texts.script);
  }
  return "NOPERM";
}

void LogAuthFailure(std::string_view command, std::string_view user, bool in_multi,
                    std::string client_info) {
  AddLogEntry(LogEntry{.reason = LogReason::kAuth,
                       .context = in_multi ? LogContext::kMulti : LogContext::kToplevel,
                       .object = std::string(command),
                       .username = std::string(user),
                       .client_info = std::move(client_info)});
}

std::string AclFile() { return FLAGS_aclfile; }

size_t AclLogMaxLen() { return log_max_len.load(std::memory_order_relaxed); }

void SetAclLogMaxLen(size_t entries) {
  log_max_len.store(entries, std::memory_order_relaxed);
  AclLog& log = Log();
  std::lock_guard lock(log.mu);
  while (log.entries.size() > entries) log.entries.pop_back();
}

std::string LoadAclUsersAtStartup() {
  const facade::AclRuleContext context = AclContext();
  if (!AclFile().empty() && HasConfiguredUsers()) {
    return "Configuring Redis with users defined in redis.conf and at the same setting an ACL "
           "file path is invalid. This setup is very likely to lead to configuration errors "
           "and security holes, please define either an ACL file or declare users directly in "
           "your redis.conf, but not both.";
  }
  std::vector<AclUser> users;
  if (HasConfiguredUsers()) {
    users.push_back(*FindAclUser("default"));
    if (std::string error = ApplyConfiguredUsers(context, &users); !error.empty()) {
      return helio::StrCat(error, "\nCritical error while loading ACLs. Exiting.");
    }
  } else if (!AclFile().empty()) {
    if (std::string errors = ReadAclFile(AclFile(), context, &users); !errors.empty()) {
      return helio::StrCat("Aborting Redis startup because of ACL errors: ", errors);
    }
  } else {
    return "";
  }
  for (const AclUser& user : users) {
    if (!user.enabled()) {
      LOG(INFO) << "The user '" << user.name()
                << "' is disabled (there is no 'on' modifier in the user description). Make "
                   "sure this is not a configuration error.";
    }
  }
  ReplaceAclUsers(std::move(users), nullptr);
  return "";
}

void AclFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  const CommandRegistry* commands = registry;
  registry->Add(
      "ACL", -2, kCmdNoScript | kCmdLoading | kCmdStale, kNoKeys, kAclSlow,
      [commands](CmdArgList args, ConnectionContext* cntx) { CmdAcl(*commands, args, cntx); },
      {{"CAT", -2, kAclSlow},
       {"DELUSER", -3, kAclAdmin | kAclSlow | kAclDangerous},
       {"DRYRUN", -4, kAclAdmin | kAclSlow | kAclDangerous},
       {"GENPASS", -2, kAclSlow},
       {"GETUSER", 3, kAclAdmin | kAclSlow | kAclDangerous},
       {"HELP", 2, kAclSlow},
       {"LIST", 2, kAclAdmin | kAclSlow | kAclDangerous},
       {"LOAD", 2, kAclAdmin | kAclSlow | kAclDangerous},
       {"LOG", -2, kAclAdmin | kAclSlow | kAclDangerous},
       {"SAVE", 2, kAclAdmin | kAclSlow | kAclDangerous},
       {"SETUSER", -3, kAclAdmin | kAclSlow | kAclDangerous},
       {"USERS", 2, kAclAdmin | kAclSlow | kAclDangerous},
       {"WHOAMI", 2, kAclSlow}});
}

}  // namespace damselfly
