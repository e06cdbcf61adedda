// maxclients and the open-file limit: every client holds a file descriptor, so
// maxclients only means something if the process may open that many (RLIMIT_NOFILE).
// At start-up and on CONFIG SET maxclients, FitMaxClients raises the soft limit (and
// the hard one, when the process may) to maxclients plus the descriptors the server
// needs for itself; when it cannot, it says so in the log in Redis's words and gives
// the maxclients that fits, as Redis's start-up does.
//
// Thread-safety: FitMaxClients changes a process-wide limit; call it from one thread
// at a time (main, or a CONFIG SET).
#pragma once

#include <cstdint>
#include <functional>

namespace damselfly {

struct FileLimit {
  uint64_t soft = 0, hard = 0;  // RLIM_INFINITY is UINT64_MAX
};

// How FitMaxClients reads and sets the limit (tests replace them). `set` returns 0, or
// the errno of its failure.
struct FileLimitOps {
  std::function<FileLimit()> get;
  std::function<int(FileLimit)> set;
  static FileLimitOps Process();  // getrlimit / setrlimit(RLIMIT_NOFILE)
};

// Descriptors the server keeps for itself beside its clients: Redis's 32 (listeners,
// snapshot files, logs), and per proactor thread its ring and wake-up descriptors.
uint64_t ReservedFds(unsigned threads);

// Makes room for `max_clients` clients plus `reserved` descriptors; returns how many
// clients fit (max_clients when the limit holds them, else fewer, logged; 0 when not
// even one does).
uint64_t FitMaxClients(uint64_t max_clients, uint64_t reserved,
                       const FileLimitOps& ops = FileLimitOps::Process());

// Start-up: fits --maxclients and makes the result maxclients. False (logged) when the
// limit holds no client at all: the server must not start.
bool FitMaxClientsAtStartup(unsigned threads);

}  // namespace damselfly
