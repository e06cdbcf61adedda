#include "src/server/acl_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "helio/base/strings.h"
#include "src/core/replace_file.h"

namespace damselfly {

namespace {

using facade::AclUser;

bool HasSpaces(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return c == 0 || c == ' ' || (c >= '\t' && c <= '\r');
  });
}

std::string_view Trim(std::string_view s, std::string_view chars) {
  const size_t first = s.find_first_not_of(chars);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(chars) - first + 1);
}

// `text` cut at every `separator`: runs give empty pieces, as sdssplitlen's do.
std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  size_t start = 0;
  for (size_t end; (end = text.find(separator, start)) != std::string_view::npos;
       start = end + 1) {
    pieces.push_back(text.substr(start, end - start));
  }
  pieces.push_back(text.substr(start));
  return pieces;
}

// The `user` lines of the configuration file, checked, in order (start-up only).
std::vector<std::vector<std::string>>& ConfiguredUsers() {
  static std::vector<std::vector<std::string>> users;
  return users;
}

}  // namespace

std::string ReadAclFile(const std::string& path, const facade::AclRuleContext& context,
                        std::vector<AclUser>* users) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return helio::StrCat("Error loading ACLs, opening file '", path, "': ", std::strerror(errno));
  }
  std::stringstream contents;
  contents << in.rdbuf();
  return ParseAclFile(contents.str(), path, context, users);
}

std::string ParseAclFile(std::string_view text, std::string_view path,
                         const facade::AclRuleContext& context, std::vector<AclUser>* users) {
  std::string errors;
  int line_number = 0;
  for (std::string_view line : Split(text, '\n')) {
    ++line_number;
    line = Trim(line, " \t\r\n");
    if (line.empty()) continue;
    // Split on single spaces, as Redis does: no quoting, and runs of spaces give empty
    // words, which are no-ops.
    std::vector<std::string_view> words = Split(line, ' ');
    if (words[0] != "user" || words.size() < 2) {
      helio::StrAppend(&errors, path, ":", line_number,
                       " should start with user keyword followed by the username. ");
      continue;
    }
    const std::string_view name = words[1];
    if (HasSpaces(name)) {
      helio::StrAppend(&errors, "'", path, ":", line_number, ": username '", name,
                       "' contains invalid characters. ");
      continue;
    }
    if (std::any_of(users->begin(), users->end(),
                    [&](const AclUser& user) { return user.name() == name; })) {
      helio::StrAppend(&errors, "WARNING: Duplicate user '", name, "' found on line ",
                       line_number, ". ");
      continue;
    }
    AclUser user{std::string(name), context};
    size_t unmatched = 0;
    std::optional<std::vector<std::string>> rules = AclUser::MergeSelectorArgs(
        std::vector<std::string_view>(words.begin() + 2, words.end()), &unmatched);
    if (!rules) {
      // (Redis 7.0 crashes here.)
      helio::StrAppend(&errors, path, ":", line_number,
                       ": Unmatched parenthesis in selector definition.");
      continue;
    }
    bool reported = false;
    for (const std::string& rule : *rules) {
      const std::string_view op = Trim(rule, "\t\r\n");
      std::string_view error;
      if (user.Apply(op, context, &error)) continue;
      if (error == "Unknown command or category name in ACL") {
        helio::StrAppend(&errors, path, ":", line_number, ": Error in applying operation '", op,
                         "': ", error, ". ");
      } else if (!reported) {  // later errors may follow from this one
        helio::StrAppend(&errors, path, ":", line_number, ": ", error, ". ");
        reported = true;
      }
    }
    if (errors.empty()) users->push_back(std::move(user));
  }
  if (!errors.empty()) {
    users->clear();
    return errors +
           "WARNING: ACL errors detected, no change to the previously active ACL rules was "
           "performed";
  }
  if (std::none_of(users->begin(), users->end(),
                   [](const AclUser& user) { return user.name() == "default"; })) {
    users->push_back(AclUser::Default(context));
  }
  return "";
}

int WriteAclFile(const std::string& path, const std::vector<const AclUser*>& users,
                 const facade::CommandRegistry& registry) {
  std::string contents;
  for (const AclUser* user : users) {
    helio::StrAppend(&contents, "user ", user->name(), " ", user->Describe(registry), "\n");
  }
  return core::ReplaceFileContents(path, contents);
}

std::string AddConfiguredUser(const std::vector<std::string>& args,
                              const facade::AclRuleContext& context) {
  const std::string& name = args[0];
  for (const std::vector<std::string>& user : ConfiguredUsers()) {
    if (user[0] == name) {
      return helio::StrCat("Error in user declaration '", name,
                           "': Duplicate user found. A user can only be defined once in config "
                           "files");
    }
  }
  size_t unmatched = 0;
  std::optional<std::vector<std::string>> rules = AclUser::MergeSelectorArgs(
      std::vector<std::string_view>(args.begin() + 1, args.end()), &unmatched);
  if (!rules) {
    const std::string& named = unmatched == 0 ? std::string("user") : args[unmatched - 1];
    return helio::StrCat("Error in user declaration '", named,
                         "': Unmatched parenthesis in selector definition");
  }
  AclUser trial{name, context};
  for (size_t j = 0; j < rules->size(); ++j) {
    std::string_view error;
    if (!trial.Apply((*rules)[j], context, &error)) {
      // Redis names the j-th word of the whole line ("user", the name, the rules...),
      // which is the rule's only when j counts from "user": kept, as its text.
      const std::string& named = j == 0 ? std::string("user") : args[j - 1];
      return helio::StrCat("Error in user declaration '", named, "': ", error);
    }
  }
  std::vector<std::string> user = {name};
  user.insert(user.end(), rules->begin(), rules->end());
  ConfiguredUsers().push_back(std::move(user));
  return "";
}

bool HasConfiguredUsers() { return !ConfiguredUsers().empty(); }

std::string ApplyConfiguredUsers(const facade::AclRuleContext& context,
                                 std::vector<AclUser>* users) {
  for (const std::vector<std::string>& rules : ConfiguredUsers()) {
    const std::string& name = rules[0];
    if (HasSpaces(name)) return "Spaces not allowed in ACL usernames";
    auto existing = std::find_if(users->begin(), users->end(),
                                 [&](const AclUser& user) { return user.name() == name; });
    AclUser user{name, context};
    std::string_view error;
    if (existing != users->end()) {
      user = std::move(*existing);
      user.Apply("reset", context, &error);  // only the default user exists before
    }
    for (size_t i = 1; i < rules.size(); ++i) {
      if (!user.Apply(rules[i], context, &error)) {
        return helio::StrCat("Error loading ACL rule '", rules[i], "' for the user named '",
                             name, "': ", error);
      }
    }
    if (existing != users->end()) {
      *existing = std::move(user);
    } else {
      users->push_back(std::move(user));
    }
  }
  return "";
}

}  // namespace damselfly
