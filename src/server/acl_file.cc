#include "src/server/acl_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "helio/base/strings.h"
#include "src/core/redis_args.h"
#include "src/core/replace_file.h"

namespace damselfly {

namespace {

using facade::AclUser;

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

// Redis names a bad rule of a `user` line by its index among the rules, read as an index
// into the whole line ("user", the name, the rules...): the word it names, kept so.
std::string_view LineWord(const std::vector<std::string>& args, size_t index) {
  return index == 0 ? std::string_view("user") : std::string_view(args[index - 1]);
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
    line = core::TrimBlanks(line);
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
    if (facade::AclHasSpaces(name)) {
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
      const std::string_view op = core::TrimBlanks(rule);  // words hold no spaces
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
    return helio::StrCat("Error in user declaration '", LineWord(args, unmatched),
                         "': Unmatched parenthesis in selector definition");
  }
  AclUser trial{name, context};
  for (size_t j = 0; j < rules->size(); ++j) {
    std::string_view error;
    if (!trial.Apply((*rules)[j], context, &error)) {
      return helio::StrCat("Error in user declaration '", LineWord(args, j), "': ", error);
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
    if (facade::AclHasSpaces(name)) return "Spaces not allowed in ACL usernames";
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
