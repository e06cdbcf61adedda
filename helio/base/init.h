// Process start-up shared by every helio binary: flags, logging, resource limits.
#pragma once

#include <string_view>

namespace helio {

// Parses flags (gflags), starts glog (to stderr unless --log_dir is given) and raises the
// soft RLIMIT_NOFILE to the hard limit, since a server holds a socket per client. Call
// once, first thing in main(), on the main thread.
//
// With an env_prefix such as "DAMSELFLY_", a variable <prefix><flag> (the flag's name as
// written, or in upper case) sets that flag; the command line and --flagfile override
// the environment.
class MainInitGuard {
 public:
  MainInitGuard(int* argc, char*** argv, std::string_view env_prefix = "");
  ~MainInitGuard();
  MainInitGuard(const MainInitGuard&) = delete;
  MainInitGuard& operator=(const MainInitGuard&) = delete;
};

// Raises the soft limit on open files to the hard limit; returns the new soft limit.
unsigned long RaiseOpenFileLimit();

}  // namespace helio
