// DEBUG DIGEST and DEBUG DIGEST-VALUE through the Service, with 1, 2 and 4 shards
// (test_utils.h). The digests expected are redis-server 7.0.15's for the same commands
// (tests/test_digest.py compares the two servers over the wire, for more shapes).
#include "src/server/dataset_digest.h"

#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;

constexpr std::string_view kZeros = "0000000000000000000000000000000000000000";

class DatasetDigestTest : public ServiceTest {
 protected:
  // Runs a command built at run time (many arguments).
  RespValue RunOwned(const std::vector<std::string>& owned) {
    std::vector<std::string_view> args(owned.begin(), owned.end());
    return Run(args);
  }

  RespValue Digest() { return Run({"debug", "digest"}); }
  RespValue DigestValue(std::string_view key) {
    RespValue reply = Run({"debug", "digest-value", key});
    EXPECT_EQ(reply.type, RespValue::Type::kArray);
    return reply.elements.empty() ? reply : reply.elements[0];
  }

  // One key of each type (redis-server digested the same commands).
  void FillSmall() {
    Run({"set", "str", "hello"});
    Run({"set", "int", "12345"});
    Run({"set", "neg", "-7"});
    Run({"rpush", "list", "a", "1", "bb", "-2"});
    Run({"sadd", "intset", "3", "1", "2"});
    Run({"sadd", "strset", "x", "y", "10"});
    Run({"hset", "hash", "f", "v", "n", "5"});
    Run({"zadd", "zset", "1.5", "a", "-2", "b", "0.1", "c", "inf", "d", "3", "7"});
    Run({"xadd", "stream", "1-1", "f", "v"});
    Run({"xadd", "stream", "2-0", "f", "w", "g", "x"});
    Run({"set", "ttl", "v", "EX", "1000"});
  }
};

TEST_P(DatasetDigestTest, EmptyDatasetIsZeros) {
  RespValue reply = Digest();
  EXPECT_EQ(reply.type, RespValue::Type::kStatus);  // +..., as Redis replies
  EXPECT_EQ(reply, kZeros);
  Run({"set", "k", "v"});
  Run({"del", "k"});
  EXPECT_EQ(Digest(), kZeros);
}

TEST_P(DatasetDigestTest, ValuesOfEveryTypeAsRedis) {
  FillSmall();
  EXPECT_EQ(DigestValue("str"), "36b23a1456b2dce2c3ed252c456761301dba8060");
  EXPECT_EQ(DigestValue("int"), "e1cf90774e995ae03de66e8109dc5cb9d9c2dc83");
  EXPECT_EQ(DigestValue("neg"), "220f87802dc1eca9ffb9dd7f52e30f559e135f81");
  EXPECT_EQ(DigestValue("list"), "cf58175a18127d90eb253ebf697a635fd5aa2f65");
  EXPECT_EQ(DigestValue("intset"), "2a462a3f51a1db89738ebbeef0c47ce1bbc85246");
  EXPECT_EQ(DigestValue("strset"), "8751179b83232410bda829b71469cce4387dd93b");
  EXPECT_EQ(DigestValue("hash"), "cb57dbe608c2b2a06dad28cc683f351c38cd44cf");
  EXPECT_EQ(DigestValue("zset"), "485c0ac38777ed5c6e300f7698ea850aea3e7a0a");
  EXPECT_EQ(DigestValue("stream"), "18cea585ea49c9e076e0db73edd526ecdcb424ae");
  EXPECT_EQ(DigestValue("ttl"), "311b17018163335616e089f6b951c82c477335ac");
  EXPECT_EQ(DigestValue("missing"), kZeros);
  EXPECT_EQ(Digest(), "41d923dbb8be175295472352d94a747649b32820");
}

TEST_P(DatasetDigestTest, DatabasesAreChainedInOrder) {
  FillSmall();
  Run({"select", "3"});
  Run({"set", "three", "3"});
  EXPECT_EQ(Digest(), "5511124191d6ed779743a0e9bd0e081ccd60bfa4");
  Run({"select", "0"});
  Run({"flushdb"});
  EXPECT_EQ(Digest(), "49c9b147b4f6c0b49d4f03b52b7006c5ad79d127");
}

TEST_P(DatasetDigestTest, LargeEncodingsAsRedis) {
  std::vector<std::string> list = {"rpush", "biglist"}, set = {"sadd", "bigset"},
                           strset = {"sadd", "strset"}, hash = {"hset", "bighash"},
                           zset = {"zadd", "bigzset"};
  for (int i = 0; i < 1000; ++i) list.push_back(helio::StrCat(i));
  for (int i = 0; i < 600; ++i) set.push_back(helio::StrCat(i));
  for (int i = 0; i < 300; ++i) {
    strset.push_back(helio::StrCat("m", i));
    hash.push_back(helio::StrCat("f", i));
    hash.push_back(helio::StrCat("v", i));
    char score[32];
    std::snprintf(score, sizeof(score), "%.17g", i / 7.0);
    zset.push_back(score);
    zset.push_back(helio::StrCat("m", i));
  }
  for (const auto* command : {&list, &set, &strset, &hash, &zset}) RunOwned(*command);
  for (int i = 0; i < 1000; ++i) {
    std::string id = helio::StrCat(1000 + i / 3, "-", i % 3), n = helio::StrCat(i);
    if (i % 5 != 0) {
      std::string other = helio::StrCat("value", i % 7);
      Run({"xadd", "bigstream", id, "field", n, "other", other});
    } else {
      Run({"xadd", "bigstream", id, "x", n});
    }
  }
  EXPECT_EQ(Run({"object", "encoding", "biglist"}), "quicklist");
  EXPECT_EQ(Run({"object", "encoding", "bigset"}), "hashtable");
  EXPECT_EQ(Run({"object", "encoding", "bigzset"}), "skiplist");
  EXPECT_EQ(DigestValue("biglist"), "0fb1ae3843061dbdad9bccec9138b2a3d8196ab5");
  EXPECT_EQ(DigestValue("bigset"), "04d81c0962ffde34acf89d01fe2057bd59abc03f");
  EXPECT_EQ(DigestValue("strset"), "d13aaa731d622ad768ec25a6f062fea0c039fe97");
  EXPECT_EQ(DigestValue("bighash"), "f1e9df12592447a271740bdfa422b91b55b71363");
  EXPECT_EQ(DigestValue("bigzset"), "ad2be37aff6564c8ed60f6a7ffeb368f89adb9b1");
  EXPECT_EQ(DigestValue("bigstream"), "a334e9c24a08d3d4142b67afa4fe86ca15700b7b");
  EXPECT_EQ(Digest(), "1a2e29e689a622102aa84a1d10309e37febec0bf");
}

TEST_P(DatasetDigestTest, PopulatedKeysOnEveryShardAsRedis) {
  EXPECT_EQ(Run({"debug", "populate", "1000"}), "OK");
  EXPECT_EQ(Digest(), "de87cf36afa8c921f610de73147c3c9363f314a3");
  FlushAll();
  EXPECT_EQ(Run({"debug", "populate", "100", "p", "20"}), "OK");  // zero-padded values
  EXPECT_EQ(Digest(), "66185e0f32f27b99576468ac985d4553ec17e356");
}

TEST_P(DatasetDigestTest, DigestFromEveryThreadAndInsideExec) {
  Run({"set", "k", "v"});
  for (unsigned thread = 0; thread < num_shards(); ++thread) {
    EXPECT_EQ(RunOnThread(thread, {"debug", "digest"}), "264ccf65edec66bccfa7cc659414ccca432057d2");
  }
  Run({"del", "k"});
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"set", "k", "v"}), "QUEUED");
  EXPECT_EQ(Run({"debug", "digest"}), "QUEUED");
  EXPECT_EQ(Run({"set", KeyOnShard(num_shards() - 1, "other"), "x"}), "QUEUED");
  EXPECT_EQ(Run({"del", KeyOnShard(num_shards() - 1, "other")}), "QUEUED");
  EXPECT_EQ(Run({"debug", "digest"}), "QUEUED");
  EXPECT_THAT(Run({"exec"}),
              RespArray(ElementsAre("OK", "264ccf65edec66bccfa7cc659414ccca432057d2", "OK", 1,
                                    "264ccf65edec66bccfa7cc659414ccca432057d2")));
}

TEST_P(DatasetDigestTest, ArgumentsAndErrors) {
  EXPECT_THAT(Run({"debug", "digest-value"}), ArrLen(0));
  Run({"set", "k", "v"});
  EXPECT_THAT(Run({"debug", "digest-value", "k", "missing", "k"}),
              RespArray(ElementsAre("d79ee9fe5d5ad902d7f6620efc3b07b75ddd742f", kZeros,
                                    "d79ee9fe5d5ad902d7f6620efc3b07b75ddd742f")));
  EXPECT_THAT(Run({"debug", "digest", "k"}),
              ErrArg("ERR unknown subcommand or wrong number of arguments for 'digest'. Try "
                     "DEBUG HELP."));
  EXPECT_THAT(Run({"debug"}), ErrArg(ArityError("debug")));
}

TEST_P(DatasetDigestTest, KeyOrderDoesNotCountButExpiryDoes) {
  for (int i = 0; i < 100; ++i) Run({"set", helio::StrCat("k", i), helio::StrCat(i)});
  const RespValue forward = Digest();
  FlushAll();
  for (int i = 99; i >= 0; --i) Run({"set", helio::StrCat("k", i), helio::StrCat(i)});
  EXPECT_EQ(Digest(), forward.str);
  Run({"expire", "k5", "100"});
  const RespValue with_ttl = Digest();
  EXPECT_NE(with_ttl.str, forward.str);
  Run({"expire", "k5", "1000"});  // only whether there is a deadline counts
  EXPECT_EQ(Digest(), with_ttl.str);
  Run({"persist", "k5"});
  EXPECT_EQ(Digest(), forward.str);
}

// The arithmetic alone: mix keeps order, xor does not.
TEST(DigestArithmetic, MixKeepsOrderXorDoesNot) {
  damselfly::Digest ab{}, ba{};
  MixDigest(&ab, "a");
  MixDigest(&ab, "b");
  MixDigest(&ba, "b");
  MixDigest(&ba, "a");
  EXPECT_NE(DigestHex(ab), DigestHex(ba));
  damselfly::Digest xab{}, xba{};
  XorDigest(&xab, "a");
  XorDigest(&xab, "b");
  XorDigest(&xba, "b");
  XorDigest(&xba, "a");
  EXPECT_EQ(DigestHex(xab), DigestHex(xba));
  // SHA1("abc"), the FIPS 180 test vector, XORed into zeros.
  damselfly::Digest abc{};
  XorDigest(&abc, "abc");
  EXPECT_EQ(DigestHex(abc), "a9993e364706816aba3e25717850c26c9cd0d89d");
}

TEST(DigestArithmetic, ShardsCombineInAnyOrder) {
  damselfly::Digest k1{}, k2{};
  XorDigest(&k1, "one");
  XorDigest(&k2, "two");
  const ShardDigest a = {k1, std::nullopt, k2}, b = {k2, std::nullopt, std::nullopt};
  const ShardDigest empty(3);
  EXPECT_EQ(CombineShardDigests({a, b}), CombineShardDigests({b, a}));
  EXPECT_EQ(CombineShardDigests({a, b, empty}), CombineShardDigests({a, b}));
  EXPECT_EQ(DigestHex(CombineShardDigests({empty, empty})), kZeros);
}

INSTANTIATE_SHARD_COUNTS(DatasetDigestTest);

}  // namespace
}  // namespace damselfly
