// The configuration the server starts with, taken as redis-server takes it:
//
//   damselfly [/path/to/redis.conf | -] [--flag=value ...] [--redis-name arg ...]
//
// A first argument that is not an option is a Redis configuration file (core/config_file.h;
// "-": standard input). Its directives are CONFIG's parameters (config_family.h): one
// with a flag of its own (`port`, `dir`, `maxmemory`, `hash-max-ziplist-entries`...) sets
// that flag, so it is read at start-up as if given on the command line, where a flag given
// explicitly (or through a DAMSELFLY_ environment variable) wins over the file; any other
// is set as CONFIG SET would, once the commands are registered. Options after the file
// that are not flags (`--maxmemory-policy allkeys-lru`, `--save 900 1`) are directives
// too, read after the file's, as Redis reads them. The process directives are this
// file's: daemonize, pidfile, logfile, loglevel and supervised (systemd's READY=1);
// rename-command renames in the command registry. A
// directive that is unknown, has a wrong value or asks for what damselfly does not offer
// (loadmodule, user, cluster-enabled yes...) stops the start with Redis's
// "FATAL CONFIG FILE ERROR" block; one damselfly has no use for (activerehashing...)
// is kept for CONFIG GET and logged with the reason.
//
// Thread-safety: TakeArgs, Load and Detach run on the main thread before any other
// starts; Apply before clients connect. The getters below may run on any thread.
#pragma once

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "src/core/config_file.h"
#include "src/facade/command_registry.h"

namespace damselfly {

class StartupConfig {
 public:
  // Takes the configuration file's path and the options that are not flags out of argv,
  // before gflags parses it.
  static StartupConfig TakeArgs(int* argc, char*** argv);

  // Once the flags are parsed: reads the file and checks every directive, sets the flags
  // they name and keeps the others for Apply. False after printing why to stderr.
  bool Load();
  // logfile, loglevel, daemonize and pidfile. Before any thread starts (fork).
  bool Detach();
  // Once the commands are registered: rename-command, the parameters without a flag.
  // False after printing why to stderr.
  bool Apply(facade::CommandRegistry* registry);
  // The server accepts clients: tells systemd when supervised by it.
  static void NotifyReady();
  // At exit: removes the pid file.
  static void Cleanup();

 private:
  bool Fail(const core::ConfigDirective& directive, const std::string& reason) const;
  bool LoadDirective(const core::ConfigDirective& directive, bool from_file);
  bool LoadProcessDirective(const core::ConfigDirective& directive, bool* handled);

  std::string path_;                                  // "" when no file
  std::vector<std::vector<std::string>> options_;     // Redis-style command-line options
  std::vector<std::string> explicit_flags_;           // set before the file was read
  std::vector<std::pair<std::string, std::string>> deferred_;  // parameter, value
  std::string save_rules_;    // the save lines read so far, joined
  bool save_seen_ = false;
  std::string output_limits_;  // client-output-buffer-limit lines so far
  std::vector<std::string> notes_;  // logged by Apply, once logging goes where it should
  std::vector<core::ConfigDirective> renames_;  // rename-command lines, for Apply
  std::vector<core::ConfigDirective> users_;    // user lines, for Apply
  std::deque<std::string> rewritten_;  // "--flag=value" arguments argv points to
};

// For CONFIG GET and INFO (any thread, after Detach).
bool Daemonized();
std::string PidFilePath();
std::string LogFilePath();
std::string SupervisedMode();
std::string ConfigFilePath();  // absolute; "" without one
// loglevel: debug, verbose, notice (glog's INFO and up) or warning (WARNING and up).
std::string LogLevelName();
std::string SetLogLevel(std::string_view value, bool apply);

}  // namespace damselfly
