#include "src/server/open_files_limit.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace damselfly {
namespace {

// A process limit in memory: raising the hard limit needs `privileged`, and no limit
// may pass `nr_open` (the kernel's fs.nr_open).
struct FakeLimit {
  FileLimit limit;
  bool privileged = false;
  uint64_t nr_open = 1 << 20;
  int sets = 0;

  FileLimitOps Ops() {
    return {.get = [this] { return limit; },
            .set =
                [this](FileLimit wanted) {
                  ++sets;
                  if (wanted.soft > wanted.hard) return EINVAL;
                  if (wanted.hard > limit.hard && (!privileged || wanted.hard > nr_open)) {
                    return EPERM;
                  }
                  limit = wanted;
                  return 0;
                }};
  }
};

TEST(OpenFilesLimitTest, EnoughAlready) {
  FakeLimit fake{.limit = {20000, 20000}};
  EXPECT_EQ(FitMaxClients(10000, 32, fake.Ops()), 10000u);
  EXPECT_EQ(fake.sets, 0);
  EXPECT_EQ(fake.limit.soft, 20000u);
}

TEST(OpenFilesLimitTest, RaisesTheSoftLimit) {
  FakeLimit fake{.limit = {1024, 524288}};
  EXPECT_EQ(FitMaxClients(10000, 32, fake.Ops()), 10000u);
  EXPECT_EQ(fake.limit.soft, 10032u);
}

TEST(OpenFilesLimitTest, PrivilegedRaisesTheHardLimit) {
  FakeLimit fake{.limit = {1024, 4096}, .privileged = true};
  EXPECT_EQ(FitMaxClients(10000, 32, fake.Ops()), 10000u);
  EXPECT_EQ(fake.limit.soft, 10032u);
  EXPECT_EQ(fake.limit.hard, 10032u);
}

TEST(OpenFilesLimitTest, PrivilegedStopsAtNrOpen) {
  FakeLimit fake{.limit = {1024, 4096}, .privileged = true, .nr_open = 5000};
  EXPECT_EQ(FitMaxClients(10000, 32, fake.Ops()), 5000u - 32);
  EXPECT_EQ(fake.limit.soft, 5000u);
  EXPECT_LT(fake.sets, 20);
}

TEST(OpenFilesLimitTest, LowersMaxClientsToTheHardLimit) {
  // Redis 7.0 with soft 1000 and hard 2000: maxclients 1968.
  FakeLimit fake{.limit = {1000, 2000}};
  EXPECT_EQ(FitMaxClients(10000, 32, fake.Ops()), 1968u);
  EXPECT_EQ(fake.limit.soft, 2000u);
  FakeLimit fixed{.limit = {1000, 1000}};
  EXPECT_EQ(FitMaxClients(10000, 32, fixed.Ops()), 968u);
}

TEST(OpenFilesLimitTest, NoRoomAtAll) {
  FakeLimit fake{.limit = {20, 20}};
  EXPECT_EQ(FitMaxClients(10000, 32, fake.Ops()), 0u);
}

TEST(OpenFilesLimitTest, Unlimited) {
  constexpr uint64_t kInfinity = UINT64_MAX;
  FakeLimit fake{.limit = {1024, kInfinity}};
  EXPECT_EQ(FitMaxClients(10000, 32, fake.Ops()), 10000u);
  EXPECT_EQ(fake.limit.hard, kInfinity);
}

}  // namespace
}  // namespace damselfly
