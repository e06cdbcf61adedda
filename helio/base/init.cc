#include "helio/base/init.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/resource.h>

namespace helio {

MainInitGuard::MainInitGuard(int* argc, char*** argv) {
  gflags::ParseCommandLineFlags(argc, argv, true);
  if (FLAGS_log_dir.empty()) FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
  RaiseOpenFileLimit();
}

MainInitGuard::~MainInitGuard() {
  google::ShutdownGoogleLogging();
  gflags::ShutDownCommandLineFlags();
}

unsigned long RaiseOpenFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) PLOG(WARNING) << "setrlimit(RLIMIT_NOFILE)";
  }
  return lim.rlim_cur;
}

}  // namespace helio
