#include "src/server/open_files_limit.h"

#include <glog/logging.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>

#include "src/facade/client_admission.h"

namespace damselfly {

FileLimitOps FileLimitOps::Process() {
  return {.get =
              [] {
                rlimit limit{};
                getrlimit(RLIMIT_NOFILE, &limit);
                return FileLimit{uint64_t(limit.rlim_cur), uint64_t(limit.rlim_max)};
              },
          .set =
              [](FileLimit wanted) {
                rlimit limit{.rlim_cur = rlim_t(wanted.soft), .rlim_max = rlim_t(wanted.hard)};
                return setrlimit(RLIMIT_NOFILE, &limit) == 0 ? 0 : errno;
              }};
}

uint64_t ReservedFds(unsigned threads) {
  constexpr uint64_t kServerFds = 32;  // Redis's CONFIG_MIN_RESERVED_FDS
  constexpr uint64_t kFdsPerThread = 2;
  return kServerFds + kFdsPerThread * threads;
}

uint64_t FitMaxClients(uint64_t max_clients, uint64_t reserved, const FileLimitOps& ops) {
  const uint64_t wanted = max_clients + reserved;
  const FileLimit old_limit = ops.get();
  if (old_limit.soft >= wanted) return max_clients;

  // Past the hard limit only a privileged process may go, and not past the kernel's
  // fs.nr_open: when the limit wanted cannot be had, take the highest that can, found by
  // bisection (whether a limit can be set only changes once, from yes to no).
  int error = ops.set({wanted, std::max(old_limit.hard, wanted)});
  if (error != 0) {
    uint64_t can = old_limit.soft, cannot = wanted;
    while (cannot - can > 1) {
      const uint64_t mid = can + (cannot - can) / 2;
      (ops.set({mid, std::max(old_limit.hard, mid)}) == 0 ? can : cannot) = mid;
    }
  }
  const uint64_t open_files = ops.get().soft;
  if (open_files >= wanted) {
    LOG(INFO) << "Increased maximum number of open files to " << wanted
              << " (it was originally set to " << old_limit.soft << ").";
    return max_clients;
  }
  const uint64_t fitting = open_files > reserved ? open_files - reserved : 0;
  LOG(WARNING) << "You requested maxclients of " << max_clients << " requiring at least " << wanted
               << " max file descriptors.";
  LOG(WARNING) << "Server can't set maximum open files to " << wanted
               << " because of OS error: " << strerror(error ? error : EPERM) << ".";
  if (fitting > 0) {
    LOG(WARNING) << "Current maximum open files is " << open_files
                 << ". maxclients has been reduced to " << fitting
                 << " to compensate for low ulimit. If you need higher maxclients increase "
                    "'ulimit -n'.";
  }
  return fitting;
}

bool FitMaxClientsAtStartup(unsigned threads) {
  const uint64_t requested = facade::ClientAdmission::MaxClients();
  if (requested == 0) {
    LOG(ERROR) << "--maxclients must be at least 1 (Redis's range: 1 to 4294967295)";
    return false;
  }
  const uint64_t reserved = ReservedFds(threads);
  const uint64_t fitting = FitMaxClients(requested, reserved);
  if (fitting == 0) {
    LOG(ERROR) << "Your current 'ulimit -n' of " << FileLimitOps::Process().get().soft
               << " is not enough for the server to start. Please increase your open file "
                  "limit to at least "
               << requested + reserved << ". Exiting.";
    return false;
  }
  facade::ClientAdmission::SetMaxClients(fitting);
  return true;
}

}  // namespace damselfly
