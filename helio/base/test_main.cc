// main() for helio and damselfly unit tests: flags, logging and fd limits as in a server.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <gtest/gtest.h>

#include "helio/base/init.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  helio::RaiseOpenFileLimit();
  return RUN_ALL_TESTS();
}
