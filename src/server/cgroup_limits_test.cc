#include "src/server/cgroup_limits.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace damselfly {
namespace {

namespace fs = std::filesystem;

class CgroupLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("cgroup_limits_test_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const std::string& relative, const std::string& text) {
    fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  std::optional<uint64_t> Limit() {
    return CgroupMemoryLimit((root_ / "fs").string(), (root_ / "self").string());
  }
  std::optional<double> Cpus() {
    return CgroupCpuLimit((root_ / "fs").string(), (root_ / "self").string());
  }

  fs::path root_;
};

TEST_F(CgroupLimitsTest, V2ContainerLimitAtTheRoot) {
  Write("self", "0::/\n");
  Write("fs/memory.max", "268435456\n");
  EXPECT_EQ(Limit(), 268435456u);
}

TEST_F(CgroupLimitsTest, V2UnlimitedIsNone) {
  Write("self", "0::/\n");
  Write("fs/memory.max", "max\n");
  EXPECT_EQ(Limit(), std::nullopt);
}

TEST_F(CgroupLimitsTest, V2HostProcessUsesItsOwnCgroup) {
  Write("self", "0::/system.slice/app.service\n");
  Write("fs/system.slice/app.service/memory.max", "1048576\n");
  EXPECT_EQ(Limit(), 1048576u);
}

TEST_F(CgroupLimitsTest, V1MemoryHierarchyAmongOthers) {
  Write("self", "12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/\n");
  Write("fs/memory/docker/abc/memory.limit_in_bytes", "536870912\n");
  EXPECT_EQ(Limit(), 536870912u);
}

TEST_F(CgroupLimitsTest, V1NoLimitIsAHugeNumber) {
  Write("self", "4:memory:/\n");
  Write("fs/memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(Limit(), std::nullopt);
}

TEST_F(CgroupLimitsTest, TightestLimitWins) {
  Write("self", "4:memory:/a\n0::/b\n");
  Write("fs/memory/a/memory.limit_in_bytes", "4096\n");
  Write("fs/b/memory.max", "8192\n");
  EXPECT_EQ(Limit(), 4096u);
}

TEST_F(CgroupLimitsTest, NothingReadable) {
  EXPECT_EQ(Limit(), std::nullopt);
  EXPECT_EQ(Cpus(), std::nullopt);
  EXPECT_GT(PhysicalMemory(), 0u);
}

TEST_F(CgroupLimitsTest, V2CpuMax) {
  Write("self", "0::/\n");
  Write("fs/cpu.max", "150000 100000\n");
  EXPECT_EQ(Cpus(), 1.5);
  Write("fs/cpu.max", "max 100000\n");
  EXPECT_EQ(Cpus(), std::nullopt);
}

TEST_F(CgroupLimitsTest, V2HostProcessCpuLimitInItsOwnCgroup) {
  Write("self", "0::/system.slice/app.service\n");
  Write("fs/system.slice/app.service/cpu.max", "50000 100000\n");
  EXPECT_EQ(Cpus(), 0.5);
}

TEST_F(CgroupLimitsTest, V1CfsQuota) {
  // The form of the machines this project runs on: "N:cpu:/" among other hierarchies.
  Write("self", "4:memory:/x\n1:cpu:/\n2:cpuacct:/\n0::/\n");
  Write("fs/cpu/cpu.cfs_quota_us", "200000\n");
  Write("fs/cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(Cpus(), 2.0);
  Write("fs/cpu/cpu.cfs_quota_us", "-1\n");  // no limit
  EXPECT_EQ(Cpus(), std::nullopt);
}

TEST_F(CgroupLimitsTest, V1CombinedHierarchyAndTightestWins) {
  Write("self", "12:cpu,cpuacct:/docker/abc\n0::/b\n");
  Write("fs/cpu/docker/abc/cpu.cfs_quota_us", "300000\n");
  Write("fs/cpu/docker/abc/cpu.cfs_period_us", "100000\n");
  Write("fs/b/cpu.max", "100000 100000\n");
  EXPECT_EQ(Cpus(), 1.0);
}

TEST(CpusWithinLimitTest, CapsByTheLimitRoundedUp) {
  EXPECT_EQ(CpusWithinLimit(8, std::nullopt), 8u);
  EXPECT_EQ(CpusWithinLimit(8, 1.0), 1u);
  EXPECT_EQ(CpusWithinLimit(8, 1.5), 2u);
  EXPECT_EQ(CpusWithinLimit(8, 2.0000000001), 2u);  // a quota a hair off an integer
  EXPECT_EQ(CpusWithinLimit(8, 0.1), 1u);           // never below one thread
  EXPECT_EQ(CpusWithinLimit(2, 16.0), 2u);          // the affinity caps, too
  EXPECT_EQ(CpusWithinLimit(0, std::nullopt), 1u);
}

}  // namespace
}  // namespace damselfly
