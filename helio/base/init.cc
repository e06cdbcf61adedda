#include "helio/base/init.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/resource.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "helio/base/strings.h"

namespace helio {

namespace {

void ApplyEnvironment(std::string_view prefix) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  for (const auto& flag : flags) {
    for (std::string name : {flag.name, helio::AsciiStrToUpper(flag.name)}) {
      const char* value = getenv(helio::StrCat(prefix, name).c_str());
      if (value == nullptr) continue;
      if (gflags::SetCommandLineOption(flag.name.c_str(), value).empty()) {
        std::cerr << "invalid value for " << prefix << name << ": " << value << "\n";
        exit(1);
      }
      break;
    }
  }
}

}  // namespace

MainInitGuard::MainInitGuard(int* argc, char*** argv, std::string_view env_prefix) {
  if (!env_prefix.empty()) ApplyEnvironment(env_prefix);
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
