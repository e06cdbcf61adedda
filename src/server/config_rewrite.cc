#include "src/server/config_rewrite.h"

#include <gflags/gflags.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "helio/base/strings.h"
#include "src/core/config_rewrite.h"
#include "src/core/redis_args.h"
#include "src/core/replace_file.h"
#include "src/server/acl_family.h"
#include "src/server/acl_users.h"
#include "src/server/config_family.h"
#include "src/server/startup_config.h"

namespace damselfly {

namespace {

std::map<std::string, std::string, std::less<>>& defaults() {
  static std::map<std::string, std::string, std::less<>> values;
  return values;
}

// Parameters Redis writes quoted, whatever their value.
bool IsText(std::string_view name) {
  for (std::string_view text : {"dir", "dbfilename", "pidfile", "logfile", "appendfilename",
                                "appenddirname", "requirepass", "masterauth", "masteruser",
                                "notify-keyspace-events", "proc-title-template", "unixsocket",
                                "aclfile", "syslog-ident", "replica-announce-ip",
                                "snapshot_cron"}) {
    if (name == text) return true;
  }
  return false;
}

// Parameters in bytes, which Redis writes in the largest unit that divides them.
bool IsMemory(std::string_view name) {
  for (std::string_view memory : {"maxmemory", "client-query-buffer-limit", "proto-max-bulk-len",
                                  "aof-buffer-limit",
                                  "auto-aof-rewrite-min-size", "repl-backlog-size",
                                  "hll-sparse-max-bytes", "stream-node-max-bytes"}) {
    if (name == memory) return true;
  }
  return false;
}

std::string MemoryText(std::string_view bytes_text) {
  uint64_t bytes = 0;
  if (!helio::SimpleAtoi(bytes_text, &bytes) || bytes == 0) return std::string(bytes_text);
  for (auto [unit, size] : {std::pair{"gb", 1ull << 30}, std::pair{"mb", 1ull << 20},
                            std::pair{"kb", 1ull << 10}}) {
    if (bytes % size == 0) return helio::StrCat(bytes / size, unit);
  }
  return std::string(bytes_text);
}

// Splits "normal 0 0 0 slave ..." into its classes' lines' values, as Redis writes them
// ("replica 256mb 64mb 60").
std::vector<std::string> GroupsOfFour(std::string_view text) {
  std::vector<std::string_view> words = helio::SplitAny(text, " ");
  std::vector<std::string> groups;
  for (size_t i = 0; i + 3 < words.size(); i += 4) {
    groups.push_back(helio::StrCat(words[i] == "slave" ? "replica" : words[i], " ",
                                   MemoryText(words[i + 1]), " ", MemoryText(words[i + 2]), " ",
                                   words[i + 3]));
  }
  return groups;
}

core::RewrittenOption OptionOf(std::string_view name, const std::string& value,
                               const std::string& default_value) {
  core::RewrittenOption option{std::string(name), {}};
  const bool changed = !helio::EqualsIgnoreCase(value, default_value);
  if (name == "save") {  // one line per rule, always written, as Redis
    std::vector<std::string_view> words = helio::SplitAny(value, " ");
    for (size_t i = 0; i + 1 < words.size(); i += 2) {
      option.lines.push_back({helio::StrCat("save ", words[i], " ", words[i + 1]), true});
    }
    if (option.lines.empty()) option.lines.push_back({"save \"\"", true});
  } else if (name == "client-output-buffer-limit") {  // one line per class
    std::vector<std::string> now = GroupsOfFour(value), then = GroupsOfFour(default_value);
    for (size_t i = 0; i < now.size(); ++i) {
      const bool class_changed = i >= then.size() || now[i] != then[i];
      option.lines.push_back({helio::StrCat(name, " ", now[i]), class_changed});
    }
  } else if (ConfigParamTakesWords(name)) {  // written as they are
    if (!value.empty()) option.lines.push_back({helio::StrCat(name, " ", value), changed});
  } else {
    // dir always, as Redis: a relative one in the file would be read from another cwd.
    const std::string shown = IsText(name)     ? core::QuoteRedisArg(value)
                              : IsMemory(name) ? MemoryText(value)
                                               : core::QuoteRedisArgIfNeeded(value);
    option.lines.push_back({helio::StrCat(name, " ", shown), changed || name == "dir"});
  }
  return option;
}

// What CONFIG GET shows for a flag's default value.
std::string FlagDefaultAsConfig(std::string_view name, const std::string& flag) {
  gflags::CommandLineFlagInfo info;
  gflags::GetCommandLineFlagInfo(flag.c_str(), &info);
  if (info.type == "bool") return info.default_value == "true" ? "yes" : "no";
  if (name == "bind" && info.default_value.empty()) return "* -::*";
  return info.default_value;
}

}  // namespace

void RecordDefaultsOfUnflaggedParams() {
  for (const ConfigParamInfo& param : ConfigParams()) {
    if (ConfigFlagName(param.name).empty()) {
      defaults()[std::string(param.name)] = GetConfigParam(param.name);
    }
  }
}

void RecordDefaultsOfFlaggedParams() {
  for (const ConfigParamInfo& param : ConfigParams()) {
    const std::string flag = ConfigFlagName(param.name);
    if (flag.empty()) continue;
    gflags::CommandLineFlagInfo info;
    gflags::GetCommandLineFlagInfo(flag.c_str(), &info);
    defaults()[std::string(param.name)] =
        info.is_default ? GetConfigParam(param.name) : FlagDefaultAsConfig(param.name, flag);
  }
}

std::string RewriteConfigFile() {
  const std::string path = ConfigFilePath();
  if (path.empty()) return "ERR The server is running without a config file";
  std::string old_text;
  struct stat info {};
  mode_t mode = 0644;
  if (std::ifstream in(path, std::ios::binary); in) {
    std::ostringstream buffer;
    buffer << in.rdbuf();
    old_text = buffer.str();
    if (stat(path.c_str(), &info) == 0) mode = info.st_mode & 07777;
  }
  std::vector<core::RewrittenOption> options;
  for (const ConfigParamInfo& param : ConfigParams()) {
    if (param.hidden || CanonicalConfigName(param.name) != param.name) continue;
    auto it = defaults().find(param.name);
    const std::string value = GetConfigParam(param.name);
    options.push_back(OptionOf(param.name, value, it == defaults().end() ? value : it->second));
  }
  // ACL users, a line each (the default one too), unless an ACL file keeps them.
  core::RewrittenOption users{"user", {}};
  if (AclFile().empty()) {
    for (const AclUserPtr& user : AllAclUsers()) {
      users.lines.push_back(
          {helio::StrCat("user ", user->name(), " ", user->Describe(AclRegistry())), true});
    }
  }
  options.push_back(std::move(users));
  auto canonical = [](std::string_view name) -> std::string {
    if (name == "user") return "user";
    std::optional<ConfigParamInfo> param = FindConfigParam(name);
    return param ? std::string(CanonicalConfigName(param->name)) : std::string();
  };
  const std::string text = core::RewriteConfigText(old_text, options, canonical);
  if (int error = core::ReplaceFileContents(path, text, mode); error != 0) {
    return helio::StrCat("ERR Rewriting config file: ", strerror(error));
  }
  return "";
}

}  // namespace damselfly
