#include "src/core/aof_manifest.h"

#include <gtest/gtest.h>

namespace damselfly::core {
namespace {

TEST(AofManifestTest, ReadsWhatRedisWrites) {
  absl::StatusOr<AofManifest> manifest = AofManifest::Parse(
      "file appendonly.aof.2.base.rdb seq 2 type b\n"
      "file appendonly.aof.1.base.rdb seq 1 type h\n"
      "# a comment\n"
      "file appendonly.aof.3.incr.aof seq 3 type i\n"
      "file appendonly.aof.4.incr.aof seq 4 type i\n");
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  ASSERT_TRUE(manifest->base());
  EXPECT_EQ(manifest->base()->name, "appendonly.aof.2.base.rdb");
  EXPECT_EQ(manifest->base()->seq, 2);
  ASSERT_EQ(manifest->history().size(), 1u);
  ASSERT_EQ(manifest->incrs().size(), 2u);
  EXPECT_EQ(manifest->incrs()[1].name, "appendonly.aof.4.incr.aof");
  EXPECT_EQ(manifest->NextBaseSeq(), 3);
  EXPECT_EQ(manifest->Serialize(),
            "file appendonly.aof.2.base.rdb seq 2 type b\n"
            "file appendonly.aof.1.base.rdb seq 1 type h\n"
            "file appendonly.aof.3.incr.aof seq 3 type i\n"
            "file appendonly.aof.4.incr.aof seq 4 type i\n");
}

TEST(AofManifestTest, QuotesNamesThatNeedIt) {
  AofManifest manifest;
  AofFileInfo incr = manifest.AddIncr("my file\n\x01");
  EXPECT_EQ(incr.seq, 1);
  EXPECT_EQ(manifest.Serialize(), "file \"my file\\n\\x01.1.incr.aof\" seq 1 type i\n");
  absl::StatusOr<AofManifest> back = AofManifest::Parse(manifest.Serialize());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->incrs()[0].name, "my file\n\x01.1.incr.aof");
  // Unknown keys are kept for later versions' sake and ignored.
  back = AofManifest::Parse("file 'a b' seq 5 type i startoffset 10\n");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->incrs()[0].name, "a b");
}

TEST(AofManifestTest, RefusesWhatRedisRefuses) {
  auto error = [](std::string_view text) {
    absl::StatusOr<AofManifest> manifest = AofManifest::Parse(text);
    return manifest.ok() ? std::string("ok") : std::string(manifest.status().message());
  };
  EXPECT_EQ(error(""), "Found an empty AOF manifest");
  EXPECT_EQ(error("# only a comment\n"), "Found an empty AOF manifest");
  EXPECT_EQ(error("file a seq 1 type b"), "The AOF manifest file contains too long line");
  EXPECT_EQ(error("file a seq 1 type b\n\n"), "Invalid AOF manifest file format");
  EXPECT_EQ(error("file a seq 1\n"), "Invalid AOF manifest file format");
  EXPECT_EQ(error("file a seq x type b\n"), "Invalid AOF manifest file format");
  EXPECT_EQ(error("file \"a seq 1 type b\n"), "Invalid AOF manifest file format");
  EXPECT_EQ(error("file a seq 1 type q\n"), "Unknown AOF file type");
  EXPECT_EQ(error("file a seq 1 type b\nfile b seq 2 type b\n"),
            "Found duplicate base file information");
  EXPECT_EQ(error("file a seq 2 type i\nfile b seq 2 type i\n"),
            "Found a non-monotonic sequence number");
  EXPECT_EQ(error("file " + std::string(1100, 'a') + " seq 1 type b\n"),
            "The AOF manifest file contains too long line");
}

TEST(AofManifestTest, ARewriteMovesTheOldFilesToTheHistory) {
  AofManifest manifest;
  AofFileInfo first = manifest.AddIncr("appendonly.aof");
  manifest.ReplaceBase({AofManifest::BaseName("appendonly.aof", 1, true), 1}, first.seq);
  EXPECT_EQ(manifest.Serialize(),
            "file appendonly.aof.1.base.rdb seq 1 type b\n"
            "file appendonly.aof.1.incr.aof seq 1 type i\n");
  AofFileInfo second = manifest.AddIncr("appendonly.aof");
  EXPECT_EQ(second.name, "appendonly.aof.2.incr.aof");
  manifest.ReplaceBase({AofManifest::BaseName("appendonly.aof", manifest.NextBaseSeq(), true),
                        manifest.NextBaseSeq()},
                       second.seq);
  EXPECT_EQ(manifest.Serialize(),
            "file appendonly.aof.2.base.rdb seq 2 type b\n"
            "file appendonly.aof.1.base.rdb seq 1 type h\n"
            "file appendonly.aof.1.incr.aof seq 1 type h\n"
            "file appendonly.aof.2.incr.aof seq 2 type i\n");
  manifest.ClearHistory();
  EXPECT_EQ(manifest.history().size(), 0u);
}

}  // namespace
}  // namespace damselfly::core
