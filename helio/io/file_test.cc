// ReadAt, WriteAt and Fsync from proactor fibers (io_uring and epoll) and from a plain thread.
#include "helio/io/file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "helio/io/proactor_pool.h"

namespace helio::io {
namespace {

class FileTest : public testing::TestWithParam<ProactorKind> {
 protected:
  void SetUp() override {
    char path[] = "/tmp/helio_file_test_XXXXXX";
    fd_ = mkstemp(path);
    ASSERT_GE(fd_, 0);
    unlink(path);
  }
  void TearDown() override { close(fd_); }

  std::string ReadAll() {
    std::string out(size_t(lseek(fd_, 0, SEEK_END)), '\0');
    EXPECT_EQ(pread(fd_, out.data(), out.size(), 0), ssize_t(out.size()));
    return out;
  }

  int fd_ = -1;
};

INSTANTIATE_TEST_SUITE_P(Kinds, FileTest,
                         testing::Values(ProactorKind::kUring, ProactorKind::kEpoll),
                         [](const auto& info) { return ProactorKindName(info.param); });

TEST_P(FileTest, FibersOfSeveralThreadsWriteDisjointRanges) {
  ProactorPool pool(2, GetParam(), 64);
  pool.Run();
  // Each thread writes every other 1 MiB block of a 8 MiB file, each block from its own
  // fiber; block b is filled with the letter 'a' + b.
  constexpr size_t kBlock = 1 << 20, kBlocks = 8;
  pool.AwaitFiberOnAll([&](unsigned index, Proactor*) {
    for (size_t b = index; b < kBlocks; b += 2) {
      std::string block(kBlock, char('a' + b));
      ASSERT_TRUE(WriteAt(fd_, block, b * kBlock).ok());
    }
    ASSERT_TRUE(Fsync(fd_).ok());
  });
  pool.Stop();
  std::string all = ReadAll();
  ASSERT_EQ(all.size(), kBlock * kBlocks);
  for (size_t b = 0; b < kBlocks; ++b) {
    EXPECT_EQ(all.substr(b * kBlock, kBlock), std::string(kBlock, char('a' + b))) << b;
  }
}

TEST_P(FileTest, FibersReadBackWhatTheyWroteAndStopAtTheEnd) {
  std::string data(3 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = char(i * 131 + (i >> 12));
  ASSERT_EQ(pwrite(fd_, data.data(), data.size(), 0), ssize_t(data.size()));
  ProactorPool pool(2, GetParam(), 64);
  pool.Run();
  pool.AwaitFiberOnAll([&](unsigned index, Proactor*) {
    // Each thread reads the whole file in odd-sized pieces, the last one short.
    std::string read;
    const size_t piece = 100'003 + index;
    std::string buf(piece, '\0');
    for (;;) {
      absl::StatusOr<size_t> got = ReadAt(fd_, buf.data(), piece, read.size());
      ASSERT_TRUE(got.ok()) << got.status();
      read.append(buf, 0, *got);
      if (*got < piece) break;
    }
    EXPECT_TRUE(read == data);
    absl::StatusOr<size_t> past = ReadAt(fd_, buf.data(), piece, data.size() + 10);
    ASSERT_TRUE(past.ok());
    EXPECT_EQ(*past, 0u);
  });
  pool.Stop();
}

TEST(FileWithoutProactorTest, BlockingWritesAndErrors) {
  char path[] = "/tmp/helio_file_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  ASSERT_TRUE(WriteAt(fd, "world", 6).ok());
  ASSERT_TRUE(WriteAt(fd, "hello ", 0).ok());
  ASSERT_TRUE(Fsync(fd).ok());
  char buf[11];
  ASSERT_EQ(pread(fd, buf, sizeof(buf), 0), 11);
  EXPECT_EQ(std::string(buf, 11), "hello world");
  close(fd);
  EXPECT_FALSE(WriteAt(fd, "x", 0).ok());  // closed
  EXPECT_FALSE(Fsync(fd).ok());
  EXPECT_FALSE(ReadAt(fd, buf, 1, 0).ok());
}

}  // namespace
}  // namespace helio::io
