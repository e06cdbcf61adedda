#include "src/server/aof_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace damselfly {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

class AofWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/aof-writer-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    SetAofFsyncPolicy(AofFsync::kEverysec);
    SetAofWriteDelayUs(0);
    std::system(("rm -rf " + dir_).c_str());
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string dir_;
};

TEST_F(AofWriterTest, OperationsRunInTheOrderAsked) {
  {
    AofWriter writer;
    writer.Append("dropped: no file is open yet");
    writer.OpenFile(Path("a"));
    writer.Append("one ");
    writer.Append("two ");
    writer.ReplaceFile(Path("manifest"), "first");
    writer.OpenFile(Path("b"));
    writer.Append("three");
    writer.ReplaceFile(Path("manifest"), "second");
    writer.Remove(Path("gone"));
    writer.Sync();
    EXPECT_TRUE(writer.last_write_ok());
    EXPECT_EQ(writer.buffered_bytes(), 0u);
    EXPECT_EQ(ReadFile(Path("a")), "one two ");
    EXPECT_EQ(ReadFile(Path("b")), "three");
    EXPECT_EQ(ReadFile(Path("manifest")), "second");
    EXPECT_NE(access(Path("temp-manifest").c_str(), F_OK), 0);
    writer.Append(" four");
  }  // the destructor writes what was asked
  EXPECT_EQ(ReadFile(Path("b")), "three four");
  // A file opened again is appended to; one created again starts empty.
  AofWriter writer;
  writer.OpenFile(Path("a"));
  writer.Append("five");
  writer.CreateFile(Path("b"));
  writer.Append("six");
  writer.Sync();
  EXPECT_EQ(ReadFile(Path("a")), "one two five");
  EXPECT_EQ(ReadFile(Path("b")), "six");
}

TEST_F(AofWriterTest, AlwaysReportsWhatIsOnDisk) {
  SetAofFsyncPolicy(AofFsync::kAlways);
  std::atomic<uint64_t> reported{0};
  AofWriter writer({.on_durable = [&](uint64_t on_disk) { reported.store(on_disk); },
                    .on_error = nullptr});
  writer.OpenFile(Path("incr"));
  for (int i = 0; i < 100; ++i) writer.Append("0123456789");
  EXPECT_EQ(writer.appended(), 1000u);
  for (int i = 0; i < 500 && reported.load() < 1000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(reported.load(), 1000u);
  EXPECT_EQ(writer.durable(), 1000u);
  EXPECT_EQ(ReadFile(Path("incr")).size(), 1000u);
}

TEST_F(AofWriterTest, AFailedWriteIsReportedAndRetried) {
  std::atomic<int> error{-1};
  AofWriter writer({.on_durable = nullptr, .on_error = [&](int e) { error.store(e); }});
  ASSERT_EQ(symlink("/dev/full", Path("full").c_str()), 0);
  writer.OpenFile(Path("full"));
  writer.Append("no space for this");
  writer.Sync();
  EXPECT_FALSE(writer.last_write_ok());
  EXPECT_EQ(error.load(), ENOSPC);
  EXPECT_EQ(writer.buffered_bytes(), 17u);
  // What follows waits behind the failed write, in order.
  writer.OpenFile(Path("next"));
  writer.Append("later");
  writer.Sync();
  EXPECT_NE(access(Path("next").c_str(), F_OK), 0);
}

TEST_F(AofWriterTest, ASlowDiskBuffers) {
  SetAofWriteDelayUs(50'000);
  AofWriter writer;
  writer.OpenFile(Path("slow"));
  writer.Append("x");
  EXPECT_EQ(writer.buffered_bytes(), 1u);
  writer.Sync();
  EXPECT_EQ(writer.buffered_bytes(), 0u);
  EXPECT_EQ(ReadFile(Path("slow")), "x");
}

// WaitForDrain: true while more than the limit waits, and then on_drained comes once, when
// no more than the limit does; false (and no call) when the backlog is under it already.
TEST_F(AofWriterTest, DrainIsReportedOnceUnderTheLimit) {
  std::atomic<int> drained{0};
  AofWriter writer({.on_drained = [&] { ++drained; }});
  writer.OpenFile(Path("f"));
  writer.Sync();
  EXPECT_FALSE(writer.WaitForDrain(0));
  SetAofWriteDelayUs(50'000);
  writer.Append(std::string(1000, 'a'));
  writer.Append(std::string(1000, 'b'));
  ASSERT_GE(writer.buffered_bytes(), 1000u);  // the writer sleeps 50 ms before writing
  EXPECT_TRUE(writer.WaitForDrain(100));
  writer.Sync();
  EXPECT_EQ(writer.buffered_bytes(), 0u);
  EXPECT_EQ(drained.load(), 1);
  EXPECT_FALSE(writer.WaitForDrain(100));
  writer.Sync();
  EXPECT_EQ(drained.load(), 1);
}

}  // namespace
}  // namespace damselfly
