#include "src/server/acl_family.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "helio/base/strings.h"
#include "helio/base/time.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/connection_family.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::CommandId;
using facade::CommandRegistry;
using facade::ConnectionContext;
using facade::ReplyBuilder;

constexpr std::string_view kDefaultUser = "default";
// Redis groups a failure with an earlier one of the same user and command this recent.
constexpr int64_t kLogGroupingMs = 60000;

struct LogEntry {
  std::string object;  // the command, as typed
  std::string username;
  std::string client_info;
  int64_t count = 1;
  int64_t updated_ms = 0;
};

// Newest first.
struct AclLog {
  std::mutex mu;
  std::deque<LogEntry> entries;
};

AclLog& Log() {
  static AclLog* log = new AclLog;  // never destroyed: threads may log until exit
  return *log;
}

std::string HexSha256(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), length));
}

// The default user's password hashes: one, or none (nopass).
std::vector<std::string> PasswordHashes() {
  std::string password = RequirePass();
  if (password.empty()) return {};
  return {HexSha256(password)};
}

bool IsDefaultUser(std::string_view name) { return name == kDefaultUser; }

void AclCat(const CommandRegistry& registry, CmdArgList args, ReplyBuilder* rb) {
  if (args.size() == 2) {
    std::vector<std::string> categories = CommandRegistry::AclNames(~uint32_t{0});
    for (std::string& name : categories) name.erase(0, 1);  // "@hash" -> "hash"
    return rb->SendBulkArray(categories);
  }
  const uint32_t category = CommandRegistry::AclCategory(args[2]);
  if (category == 0) return rb->SendError(helio::StrCat("ERR Unknown category '", args[2], "'"));
  std::vector<std::string> names;
  registry.ForEachName([&](const CommandId&, const std::string& name, uint32_t acl) {
    if (acl & category) names.push_back(name);
  });
  rb->SendBulkArray(names);
}

void AclGetUser(CmdArgList args, ReplyBuilder* rb) {
  if (!IsDefaultUser(args[2])) return rb->SendNull();
  std::vector<std::string> hashes = PasswordHashes();
  rb->StartMap(6);
  rb->SendBulk("flags");
  rb->StartSet(hashes.empty() ? 2 : 1);
  rb->SendBulk("on");
  if (hashes.empty()) rb->SendBulk("nopass");
  rb->SendBulk("passwords");
  rb->SendBulkArray(hashes);
  rb->SendBulk("commands");
  rb->SendBulk("+@all");
  rb->SendBulk("keys");
  rb->SendBulk("~*");
  rb->SendBulk("channels");
  rb->SendBulk("&*");
  rb->SendBulk("selectors");
  rb->SendEmptyArray();
}

void AclList(ReplyBuilder* rb) {
  std::vector<std::string> hashes = PasswordHashes();
  std::string password = hashes.empty() ? "nopass" : helio::StrCat("#", hashes[0]);
  std::string line = helio::StrCat("user default on ", password, " ~* &* +@all");
  rb->StartArray(1);
  rb->SendBulk(line);
}

// DRYRUN user command [arg ...]: the default user may run anything, so the answer is
// OK once the command (and subcommand) exists and its arity fits, with Redis's errors
// otherwise: the registry's own check (CommandRegistry::Validate), but "not found" for
// an unknown name.
void AclDryRun(const CommandRegistry& registry, CmdArgList args, ReplyBuilder* rb) {
  if (!IsDefaultUser(args[2])) {
    return rb->SendError(helio::StrCat("ERR User '", args[2], "' not found"));
  }
  CmdArgList call = args.subspan(3);
  const CommandId* cid = registry.Find(call[0]);
  bool known = cid != nullptr && (cid->subcommands.empty() || call.size() < 2 ||
                                  cid->FindSubcommand(call[1]) != nullptr);
  if (!known) return rb->SendError(helio::StrCat("ERR Command '", call[0], "' not found"));
  std::string error;
  if (!registry.Validate(call, &error)) return rb->SendError(error);
  rb->SendOk();
}

void AclLogCmd(CmdArgList args, ReplyBuilder* rb) {
  AclLog& log = Log();
  size_t count = kAclLogMaxLen;
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
    rb->SendBulk("auth");
    rb->SendBulk("context");
    rb->SendBulk("toplevel");
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

void CmdAcl(const CommandRegistry& registry, CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view sub = args[1];  // validated by the dispatcher
  if (ArgIs(sub, "WHOAMI")) return rb->SendBulk(kDefaultUser);
  if (ArgIs(sub, "USERS")) {
    std::string_view users[] = {kDefaultUser};
    return rb->SendBulkArray(users);
  }
  if (ArgIs(sub, "LIST")) return AclList(rb);
  if (ArgIs(sub, "GETUSER")) return AclGetUser(args, rb);
  if (ArgIs(sub, "CAT")) return AclCat(registry, args, rb);
  if (ArgIs(sub, "DRYRUN")) return AclDryRun(registry, args, rb);
  if (ArgIs(sub, "LOG")) return AclLogCmd(args, rb);
  if (ArgIs(sub, "GENPASS")) return AclGenPass(args, rb);
  if (ArgIs(sub, "DELUSER")) {
    for (size_t i = 2; i < args.size(); ++i) {
      if (IsDefaultUser(args[i])) return rb->SendError("ERR The 'default' user cannot be removed");
    }
    return rb->SendLong(0);  // no other user exists
  }
  if (ArgIs(sub, "SETUSER")) {
    return rb->SendError(
        "ERR damselfly has one user, 'default', whose password is requirepass: ACL SETUSER "
        "is not supported");
  }
  if (ArgIs(sub, "LOAD") || ArgIs(sub, "SAVE")) {
    return rb->SendError(
        "ERR This Redis instance is not configured to use an ACL file. You may want to "
        "specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming "
        "you have a Redis configuration file set) in order to store users in the Redis "
        "configuration.");
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

void LogAuthFailure(std::string_view command, std::string_view user, std::string client_info) {
  const int64_t now_ms = helio::UnixTimeMs();
  AclLog& log = Log();
  std::lock_guard lock(log.mu);
  auto similar = std::find_if(log.entries.begin(), log.entries.end(), [&](const LogEntry& e) {
    return e.object == command && e.username == user && now_ms - e.updated_ms <= kLogGroupingMs;
  });
  LogEntry entry;
  if (similar != log.entries.end()) {
    entry = std::move(*similar);
    log.entries.erase(similar);
    ++entry.count;
  } else {
    entry.object = std::string(command);
    entry.username = std::string(user);
  }
  entry.client_info = std::move(client_info);
  entry.updated_ms = now_ms;
  log.entries.push_front(std::move(entry));
  if (log.entries.size() > kAclLogMaxLen) log.entries.pop_back();
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
