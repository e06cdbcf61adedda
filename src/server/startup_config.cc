#include "src/server/startup_config.h"

#include <fcntl.h>
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <signal.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "helio/base/strings.h"
#include "src/core/redis_args.h"
#include "src/server/arg_parsing.h"
#include "src/server/acl_file.h"
#include "src/server/acl_users.h"
#include "src/server/config_family.h"
#include "src/server/config_rewrite.h"
#include "src/server/connection_family.h"

namespace damselfly {

namespace {

// The process settings, written on the main thread before any other thread starts.
struct ProcessSettings {
  std::string config_file;  // absolute
  bool daemonize = false;
  std::string pid_file;
  std::string log_file;
  std::string supervised = "no";
};
ProcessSettings& settings() {
  static ProcessSettings s;
  return s;
}

constexpr std::string_view kLogLevels[] = {"debug", "verbose", "notice", "warning"};
std::atomic<unsigned> log_level{2};  // notice: glog's INFO and up

// Directives Redis takes that damselfly refuses, rather than start without what they ask.
std::string_view NotOffered(std::string_view name) {
  if (name == "loadmodule") return "modules are not offered";
  if (name == "sentinel") return "Redis Sentinel is not offered";
  return {};
}

// Sets a flag from a directive's value; Redis's reason when the value does not fit.
std::string SetFlag(const std::string& flag, const std::string& value) {
  gflags::CommandLineFlagInfo info;
  gflags::GetCommandLineFlagInfo(flag.c_str(), &info);
  if (!gflags::SetCommandLineOption(flag.c_str(), value.c_str()).empty()) return "";
  if (info.type == "bool") return "argument must be 'yes' or 'no'";
  // An integer flag of a parameter Redis gives in memory units ("64mb").
  if (std::optional<uint64_t> bytes = ParseMemoryValue(value)) {
    if (!gflags::SetCommandLineOption(flag.c_str(), std::to_string(*bytes).c_str()).empty()) {
      return "";
    }
  }
  return info.type == "string" ? "Invalid argument" : "argument couldn't be parsed into an integer";
}

std::string Joined(const std::vector<std::string>& args) {
  std::string value;
  for (size_t i = 1; i < args.size(); ++i) helio::StrAppend(&value, i > 1 ? " " : "", args[i]);
  return value;
}

bool IsFlag(std::string_view name) {
  gflags::CommandLineFlagInfo info;
  if (gflags::GetCommandLineFlagInfo(std::string(name).c_str(), &info)) return true;
  return name.substr(0, 2) == "no" &&  // --noflag for a bool flag
         gflags::GetCommandLineFlagInfo(std::string(name.substr(2)).c_str(), &info) &&
         info.type == "bool";
}

}  // namespace

StartupConfig StartupConfig::TakeArgs(int* argc, char*** argv) {
  StartupConfig config;
  std::vector<char*> kept = {(*argv)[0]};
  int i = 1;
  if (*argc > 1 && ((*argv)[1][0] != '-' || std::string_view((*argv)[1]) == "-")) {
    config.path_ = (*argv)[1];
    i = 2;
  }
  auto is_option = [](std::string_view arg) { return arg.size() > 2 && arg.substr(0, 2) == "--"; };
  while (i < *argc) {
    std::string_view arg = (*argv)[i];
    if (!is_option(arg)) {
      kept.push_back((*argv)[i++]);  // gflags' to judge (a single dash), or refused later
      continue;
    }
    std::string_view name = arg.substr(2, arg.find('=') - 2);
    const bool has_value = arg.find('=') != std::string_view::npos;
    std::vector<std::string> words;  // the arguments up to the next option
    for (++i; i < *argc && !is_option((*argv)[i]); ++i) words.emplace_back((*argv)[i]);
    if (IsFlag(name)) {
      // gflags' own syntax, or redis-server's ("--save 60 1", "--appendonly no") given as
      // --name=value: a bool flag would take "no" as an argument of its own.
      if (has_value || words.empty()) {
        kept.push_back(const_cast<char*>(arg.data()));
        // Words after --name=value: left to main, which refuses them.
        for (size_t w = 0; w < words.size(); ++w) kept.push_back((*argv)[i - words.size() + w]);
      } else {
        std::vector<std::string> directive = {std::string(name)};
        directive.insert(directive.end(), words.begin(), words.end());
        kept.push_back(config.rewritten_.emplace_back(
            helio::StrCat("--", name, "=", Joined(directive))).data());
      }
      continue;
    }
    // A Redis option: its arguments run to the next option, as redis-server reads them.
    std::vector<std::string> directive = {helio::AsciiStrToLower(name)};
    if (has_value) directive.emplace_back(arg.substr(arg.find('=') + 1));
    directive.insert(directive.end(), words.begin(), words.end());
    config.options_.push_back(std::move(directive));
  }
  kept.push_back(nullptr);
  std::copy(kept.begin(), kept.end(), *argv);
  *argc = int(kept.size() - 1);
  return config;
}

bool StartupConfig::Fail(const core::ConfigDirective& directive, const std::string& reason) const {
  std::cerr << "\n*** FATAL CONFIG FILE ERROR (damselfly " << kDamselflyVersion << ", Redis "
            << kRedisCompatVersion << " compatible) ***\n"
            << "Reading the configuration file, at line " << directive.line_number << "\n"
            << ">>> '" << directive.line << "'\n"
            << reason << std::endl;
  return false;
}

bool StartupConfig::Load() {
  RecordDefaultsOfUnflaggedParams();
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    if (!flag.is_default) explicit_flags_.push_back(flag.name);
  }
  std::vector<core::ConfigDirective> directives;
  int file_lines = 0;
  if (!path_.empty()) {
    core::ConfigError error;
    if (!core::ReadConfigFile(path_, &directives, &error, &file_lines)) {
      if (error.line_number == 0) {
        std::cerr << error.reason << std::endl;
        return false;
      }
      return Fail({{}, error.line, error.line_number}, error.reason);
    }
    char resolved[PATH_MAX];
    settings().config_file =
        path_ == "-" ? "" : (realpath(path_.c_str(), resolved) ? resolved : path_);
  }
  const size_t from_file = directives.size();
  // Redis numbers the options after the file's lines and a line between.
  for (size_t k = 0; k < options_.size(); ++k) {
    core::ConfigDirective directive{options_[k], options_[k][0], file_lines + 2 + int(k)};
    for (size_t a = 1; a < options_[k].size(); ++a) {
      helio::StrAppend(&directive.line, " ", core::QuoteRedisArg(options_[k][a]));
    }
    directives.push_back(std::move(directive));
  }
  for (size_t k = 0; k < directives.size(); ++k) {
    if (!LoadDirective(directives[k], k < from_file)) return false;
  }
  return true;
}

bool StartupConfig::LoadProcessDirective(const core::ConfigDirective& directive, bool* handled) {
  const std::string& name = directive.args[0];
  *handled = true;
  if (std::string_view why = NotOffered(name); !why.empty()) {
    return Fail(directive, helio::StrCat(name, ": ", why));
  }
  if (name == "rename-command") {  // once the commands are registered (Apply)
    if (directive.args.size() != 3) return Fail(directive, "wrong number of arguments");
    renames_.push_back(directive);
    return true;
  }
  if (name == "user") {  // its rules name commands: checked in Apply
    if (directive.args.size() < 2) {
      return Fail(directive, "Bad directive or wrong number of arguments");
    }
    users_.push_back(directive);
    return true;
  }
  const bool process = name == "daemonize" || name == "pidfile" || name == "logfile" ||
                       name == "loglevel" || name == "supervised";
  if (!process) {
    *handled = false;
    return true;
  }
  if (directive.args.size() != 2) return Fail(directive, "wrong number of arguments");
  const std::string& value = directive.args[1];
  ProcessSettings& s = settings();
  if (name == "daemonize") {
    if (!helio::EqualsIgnoreCase(value, "yes") && !helio::EqualsIgnoreCase(value, "no")) {
      return Fail(directive, "argument must be 'yes' or 'no'");
    }
    s.daemonize = helio::EqualsIgnoreCase(value, "yes");
  } else if (name == "pidfile") {
    s.pid_file = value;
  } else if (name == "logfile") {
    s.log_file = value;
  } else if (name == "loglevel") {
    if (std::string error = SetLogLevel(value, true); !error.empty()) return Fail(directive, error);
  } else {
    std::string mode = helio::AsciiStrToLower(value);
    if (mode != "no" && mode != "upstart" && mode != "systemd" && mode != "auto") {
      return Fail(directive,
                  "argument(s) must be one of the following: upstart, systemd, auto, no");
    }
    s.supervised = mode;
  }
  return true;
}

bool StartupConfig::LoadDirective(const core::ConfigDirective& directive, bool from_file) {
  bool handled = false;
  if (!LoadProcessDirective(directive, &handled)) return false;
  if (handled) return true;
  const std::string& name = directive.args[0];
  std::optional<ConfigParamInfo> param = FindConfigParam(name);
  if (!param) return Fail(directive, "Bad directive or wrong number of arguments");
  if (directive.args.size() < 2 || (!ConfigParamTakesWords(param->name) && directive.args.size() != 2)) {
    return Fail(directive, "wrong number of arguments");
  }
  std::string value = Joined(directive.args);
  // save and client-output-buffer-limit lines add up, as in Redis; save "" clears.
  if (param->name == "save") {
    save_rules_ = !save_seen_ || value.empty() ? value : helio::StrCat(save_rules_, " ", value);
    save_seen_ = true;
    value = save_rules_;
  } else if (param->name == "client-output-buffer-limit") {
    if (output_limits_.empty()) output_limits_ = GetConfigParam(param->name);
    helio::StrAppend(&output_limits_, " ", value);
    value = output_limits_;
  }
  const std::string flag = ConfigFlagName(param->name);
  if (param->settable || flag.empty()) {
    std::string error = CheckConfigParam(param->name, value);
    if (!error.empty()) {
      if (!param->no_effect.empty()) helio::StrAppend(&error, " (", param->no_effect, ")");
      return Fail(directive, error);
    }
  }
  if (!param->no_effect.empty() && !helio::EqualsIgnoreCase(value, GetConfigParam(param->name))) {
    notes_.push_back(helio::StrCat("'", directive.line, "' has no effect in damselfly: ",
                                   param->no_effect));
  }
  if (flag.empty()) {
    if (param->settable) deferred_.emplace_back(param->name, value);
    return true;
  }
  const bool command_line_wins =
      from_file &&
      std::find(explicit_flags_.begin(), explicit_flags_.end(), flag) != explicit_flags_.end();
  std::string command_line_value;
  if (command_line_wins) gflags::GetCommandLineOption(flag.c_str(), &command_line_value);
  if (std::string error = SetFlag(flag, value); !error.empty()) return Fail(directive, error);
  if (command_line_wins) {  // checked as Redis checks every line, then put back
    gflags::SetCommandLineOption(flag.c_str(), command_line_value.c_str());
    notes_.push_back(helio::StrCat("'", directive.line, "': --", flag,
                                   " on the command line wins over the configuration file"));
  }
  return true;
}

bool StartupConfig::Detach() {
  ProcessSettings& s = settings();
  int log_fd = -1;
  if (!s.log_file.empty()) {
    log_fd = open(s.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      std::cerr << "Can't open the log file: " << strerror(errno) << std::endl;
      return false;
    }
  }
  if (s.daemonize) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::cerr << "fork: " << strerror(errno) << std::endl;
      return false;
    }
    if (pid > 0) _exit(0);  // the parent's part is done
    setsid();
    const int null_fd = open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      dup2(null_fd, STDIN_FILENO);
      if (log_fd < 0) {
        dup2(null_fd, STDOUT_FILENO);
        dup2(null_fd, STDERR_FILENO);
      }
      if (null_fd > STDERR_FILENO) close(null_fd);
    }
    if (s.pid_file.empty()) s.pid_file = "/var/run/redis.pid";  // Redis's default when daemonized
  }
  if (log_fd >= 0) {
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    close(log_fd);
  }
  if (!s.pid_file.empty()) {
    if (FILE* file = fopen(s.pid_file.c_str(), "w")) {
      fprintf(file, "%d\n", int(getpid()));
      fclose(file);
    } else {
      LOG(WARNING) << "Failed to write PID file: " << strerror(errno);
    }
  }
  return true;
}

bool StartupConfig::Apply(facade::CommandRegistry* registry) {
  RecordDefaultsOfFlaggedParams();
  for (const core::ConfigDirective& rename : renames_) {
    std::string error;
    if (!registry->Rename(rename.args[1], rename.args[2], &error)) return Fail(rename, error);
  }
  if (!settings().config_file.empty()) {
    LOG(INFO) << "configuration loaded from " << settings().config_file;
  }
  for (const std::string& note : notes_) LOG(WARNING) << note;
  for (const auto& [name, value] : deferred_) SetConfigParam(name, value);
  for (const core::ConfigDirective& user : users_) {
    const std::vector<std::string> args(user.args.begin() + 1, user.args.end());
    if (std::string error = AddConfiguredUser(args, AclContext()); !error.empty()) {
      return Fail(user, error);
    }
  }
  return true;
}

void StartupConfig::NotifyReady() {
  const std::string& mode = settings().supervised;
  const char* socket_path = getenv("NOTIFY_SOCKET");
  if (mode == "upstart" || (mode == "auto" && getenv("UPSTART_JOB") != nullptr)) {
    raise(SIGSTOP);  // upstart's "expect stop"
    return;
  }
  if ((mode != "systemd" && mode != "auto") || socket_path == nullptr || socket_path[0] == 0) {
    return;
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const size_t length = strnlen(socket_path, sizeof(address.sun_path));
  if (length == sizeof(address.sun_path)) return;
  memcpy(address.sun_path, socket_path, length);
  if (address.sun_path[0] == '@') address.sun_path[0] = 0;  // an abstract socket
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  constexpr std::string_view kReady = "STATUS=Ready to accept connections\nREADY=1\n";
  if (sendto(fd, kReady.data(), kReady.size(), 0, reinterpret_cast<sockaddr*>(&address),
             socklen_t(offsetof(sockaddr_un, sun_path) + length)) < 0) {
    LOG(WARNING) << "systemd notification failed: " << strerror(errno);
  } else {
    LOG(INFO) << "supervised by systemd: told it the server is ready";
  }
  close(fd);
}

void StartupConfig::Cleanup() {
  if (!settings().pid_file.empty()) unlink(settings().pid_file.c_str());
}

bool Daemonized() { return settings().daemonize; }
std::string PidFilePath() { return settings().pid_file; }
std::string LogFilePath() { return settings().log_file; }
std::string SupervisedMode() { return settings().supervised; }
std::string ConfigFilePath() { return settings().config_file; }

std::string LogLevelName() {
  return std::string(kLogLevels[log_level.load(std::memory_order_relaxed)]);
}

std::string SetLogLevel(std::string_view value, bool apply) {
  for (unsigned i = 0; i < std::size(kLogLevels); ++i) {
    if (!helio::EqualsIgnoreCase(value, kLogLevels[i])) continue;
    if (apply) {
      log_level.store(i, std::memory_order_relaxed);
      FLAGS_minloglevel = i < 3 ? google::GLOG_INFO : google::GLOG_WARNING;
    }
    return "";
  }
  return "argument(s) must be one of the following: debug, verbose, notice, warning";
}

}  // namespace damselfly
