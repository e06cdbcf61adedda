#include "src/server/memory_limit.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace damselfly {
namespace {

namespace fs = std::filesystem;

class MemoryLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("memory_limit_test_" + std::to_string(getpid()));
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

  fs::path root_;
};

TEST_F(MemoryLimitTest, V2ContainerLimitAtTheRoot) {
  Write("self", "0::/\n");
  Write("fs/memory.max", "268435456\n");
  EXPECT_EQ(Limit(), 268435456u);
}

TEST_F(MemoryLimitTest, V2UnlimitedIsNone) {
  Write("self", "0::/\n");
  Write("fs/memory.max", "max\n");
  EXPECT_EQ(Limit(), std::nullopt);
}

TEST_F(MemoryLimitTest, V2HostProcessUsesItsOwnCgroup) {
  Write("self", "0::/system.slice/app.service\n");
  Write("fs/system.slice/app.service/memory.max", "1048576\n");
  EXPECT_EQ(Limit(), 1048576u);
}

TEST_F(MemoryLimitTest, V1MemoryHierarchyAmongOthers) {
  Write("self", "12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/\n");
  Write("fs/memory/docker/abc/memory.limit_in_bytes", "536870912\n");
  EXPECT_EQ(Limit(), 536870912u);
}

TEST_F(MemoryLimitTest, V1NoLimitIsAHugeNumber) {
  Write("self", "4:memory:/\n");
  Write("fs/memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(Limit(), std::nullopt);
}

TEST_F(MemoryLimitTest, TightestLimitWins) {
  Write("self", "4:memory:/a\n0::/b\n");
  Write("fs/memory/a/memory.limit_in_bytes", "4096\n");
  Write("fs/b/memory.max", "8192\n");
  EXPECT_EQ(Limit(), 4096u);
}

TEST_F(MemoryLimitTest, NothingReadable) {
  EXPECT_EQ(Limit(), std::nullopt);
  EXPECT_GT(PhysicalMemory(), 0u);
}

}  // namespace
}  // namespace damselfly
