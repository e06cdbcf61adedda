// Fuzzes ACL rules (src/facade/acl_user.h) and the ACL file (src/server/acl_file.h), over a
// small registry with a container, subcommands, key specs and pub/sub commands.
//
// Input: the text of an ACL file ("user name rule rule ...", a line each).
//
// Oracles besides the sanitizers:
//  - a file that loads, saved (each user's ACL LIST line) and loaded again, gives users
//    with the same descriptions, which allow exactly the same calls;
//  - every input line's words, applied to a user one by one as ACL SETUSER applies them,
//    describe a user whose description, applied again, describes itself.
// (Both but for users whose selectors have words that make their parentheses ambiguous,
// which Redis's lines have too: see Ambiguous.)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "helio/base/strings.h"
#include "src/facade/acl_user.h"
#include "src/server/acl_file.h"

namespace {

using damselfly::facade::AclRuleContext;
using damselfly::facade::AclUser;
using damselfly::facade::CmdArgList;
using damselfly::facade::CommandDoc;
using damselfly::facade::CommandId;
using damselfly::facade::CommandRegistry;
using damselfly::facade::ConnectionContext;
using damselfly::facade::Keys;
using damselfly::facade::KeySpecs;
using damselfly::facade::kNoKeys;
namespace facade = damselfly::facade;

void Check(bool condition) {
  if (!condition) abort();
}

void Noop(CmdArgList, ConnectionContext*) {}

constexpr CommandDoc kDocs[] = {
    {"GET", "string", "Get", "1.0.0", "key"},
    {"SET", "string", "Set", "1.0.0", "key value"},
    {"COPY", "generic", "Copy", "6.2.0", "source destination"},
    {"SELECT", "connection", "Select", "1.0.0", "index"},
    {"PUBLISH", "pubsub", "Publish", "2.0.0", "channel message"},
    {"PSUBSCRIBE", "pubsub", "Psubscribe", "2.0.0", "pattern [pattern ...]"},
    {"CONFIG", "server", "Config", "2.0.0", ""},
    {.name = "CONFIG|GET", .syntax = "parameter"},
    {.name = "CONFIG|SET", .syntax = "parameter value"},
    {.name = "CONFIG|HELP"},
};

const CommandRegistry& Registry() {
  static const CommandRegistry* registry = [] {
    auto* r = new CommandRegistry;
    r->AddDocs(kDocs);
    r->Add("GET", 2, facade::kCmdReadOnly, Keys(1), facade::kAclRead | facade::kAclString, Noop);
    r->Add("SET", 3, facade::kCmdWrite, Keys(1), facade::kAclWrite | facade::kAclString, Noop);
    r->Add("COPY", 3, facade::kCmdWrite,
           KeySpecs{Keys(1).WithFlags(facade::kKeyRO | facade::kKeyAccess),
                    Keys(2).WithFlags(facade::kKeyOW | facade::kKeyUpdate)},
           facade::kAclKeyspace | facade::kAclWrite, Noop);
    r->Add("SELECT", 2, facade::kCmdFast, kNoKeys, facade::kAclFast | facade::kAclConnection,
           Noop);
    r->Add("PUBLISH", 3, facade::kCmdPubSub, kNoKeys, facade::kAclPubSub, Noop);
    r->Add("PSUBSCRIBE", -2, facade::kCmdPubSub, kNoKeys, facade::kAclPubSub, Noop);
    r->Add("CONFIG", -2, facade::kCmdAdmin, kNoKeys, facade::kAclSlow, Noop,
           {{"GET", -3, facade::kAclAdmin | facade::kAclSlow},
            {"SET", -4, facade::kAclAdmin | facade::kAclSlow | facade::kAclDangerous},
            {"HELP", 2, facade::kAclSlow}});
    return r;
  }();
  return *registry;
}

// Calls whose verdicts two users must agree on.
const std::vector<std::vector<std::string_view>>& Calls() {
  static const std::vector<std::vector<std::string_view>> calls = {
      {"GET", "a"},          {"GET", "key:1"},       {"SET", "a", "v"},
      {"SET", "b*", "v"},    {"COPY", "a", "b"},     {"COPY", "key:1", "x"},
      {"SELECT", "0"},       {"SELECT", "1"},        {"PUBLISH", "news", "m"},
      {"PUBLISH", "c", "m"}, {"PSUBSCRIBE", "n*"},   {"PSUBSCRIBE", "news"},
      {"CONFIG", "GET", "x"}, {"CONFIG", "SET", "x", "y"}, {"CONFIG", "HELP"},
  };
  return calls;
}

void CheckSameVerdicts(const AclUser& a, const AclUser& b) {
  for (const std::vector<std::string_view>& call : Calls()) {
    const CommandId* cid = Registry().Find(call[0]);
    const CmdArgList args(call.data(), call.size());
    Check(a.Check(*cid, args).allowed() == b.Check(*cid, args).allowed());
  }
}

// Whether the user's description cannot be read back, as in Redis: a word of a selector
// (a key or channel pattern, a first argument) that starts with '(' or ends with ')'
// makes the selector's parentheses ambiguous ("(~a) -@all)"). Redis accepts such rules
// and writes such lines; the oracles leave these users out.
bool Ambiguous(const AclUser& user) {
  for (size_t i = 1; i < user.selectors().size(); ++i) {
    const std::string words = user.selectors()[i].Describe(Registry());
    for (std::string_view word : helio::SplitAny(words, " ")) {
      if (!word.empty() && (word.front() == '(' || word.back() == ')')) return true;
    }
  }
  return false;
}

// The user `description` (an ACL LIST line's rules) builds.
AclUser Rebuild(const std::string& description, const AclRuleContext& context) {
  AclUser user("again", context);
  std::vector<std::string_view> words = helio::SplitAny(description, " ");
  size_t unmatched = 0;
  auto rules = AclUser::MergeSelectorArgs(words, &unmatched);
  Check(rules.has_value());
  for (const std::string& rule : *rules) {
    std::string_view error;
    Check(user.Apply(rule, context, &error));
  }
  return user;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const AclRuleContext context{&Registry(), size % 2 == 1};

  std::vector<AclUser> users;
  if (damselfly::ParseAclFile(text, "fuzz.acl", context, &users).empty() &&
      std::none_of(users.begin(), users.end(), Ambiguous)) {
    std::string saved;
    for (const AclUser& user : users) {
      helio::StrAppend(&saved, "user ", user.name(), " ", user.Describe(Registry()), "\n");
    }
    std::vector<AclUser> loaded;
    Check(damselfly::ParseAclFile(saved, "fuzz.acl", context, &loaded).empty());
    Check(loaded.size() == users.size());
    for (size_t i = 0; i < users.size(); ++i) {
      Check(loaded[i].Describe(Registry()) == users[i].Describe(Registry()));
      CheckSameVerdicts(users[i], loaded[i]);
    }
  }

  for (std::string_view line : helio::SplitAny(text, "\n")) {
    AclUser user("u", context);
    std::vector<std::string_view> words = helio::SplitAny(line, " ");
    size_t unmatched = 0;
    auto rules = AclUser::MergeSelectorArgs(words, &unmatched);
    if (!rules) continue;
    for (const std::string& rule : *rules) {
      std::string_view error;
      user.Apply(rule, context, &error);  // ACL SETUSER stops at an error; go on instead
    }
    if (Ambiguous(user)) continue;
    const std::string description = user.Describe(Registry());
    AclUser again = Rebuild(description, context);
    Check(again.Describe(Registry()) == description);
    CheckSameVerdicts(user, again);
  }
  return 0;
}
