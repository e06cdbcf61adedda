// Process start-up shared by every helio binary: flags, logging, resource limits.
#pragma once

namespace helio {

// Parses command-line flags (gflags), starts glog (to stderr unless --log_dir is given)
// and raises the soft RLIMIT_NOFILE to the hard limit, since a server holds a socket per
// client. Call once, first thing in main(), on the main thread.
class MainInitGuard {
 public:
  MainInitGuard(int* argc, char*** argv);
  ~MainInitGuard();
  MainInitGuard(const MainInitGuard&) = delete;
  MainInitGuard& operator=(const MainInitGuard&) = delete;
};

// Raises the soft limit on open files to the hard limit; returns the new soft limit.
unsigned long RaiseOpenFileLimit();

}  // namespace helio
