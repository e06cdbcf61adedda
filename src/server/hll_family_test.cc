// HyperLogLog commands through the Service, with 1, 2 and 4 shards (test_utils.h). Keys
// a_ and b_ live on different shards whenever there are two or more. The bytes and
// counts expected are redis-server 7.0.15's for the same commands (see also
// core/hyperloglog_test.cc and tests/test_hll.py); error texts are Redis's.
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/core/crc64.h"
#include "src/core/hyperloglog.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;

constexpr std::string_view kNotHll = "WRONGTYPE Key is not a valid HyperLogLog string value.";
constexpr std::string_view kCorrupt = "INVALIDOBJ Corrupted HLL object detected";

// redis-server's bytes for PFADD of nothing, and of "a" "b" "c" before and after PFCOUNT.
const std::string kEmptyHll("HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80\x7f\xff", 18);
const std::string kAbcHll(
    "HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80\x60\xf3\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a", 27);
const std::string kAbcCountedHll(
    "HYLL\x01\0\0\0\x03\0\0\0\0\0\0\0\x60\xf3\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a", 27);

class HllFamilyTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    a_ = KeyOnShard(0, "a");
    b_ = KeyOnShard(num_shards() - 1, "b");
    c_ = KeyOnShard(num_shards() / 2, "c");
  }

  // PFADD key <prefix>0 .. <prefix>(n-1), in one command.
  RespValue AddMany(std::string_view key, std::string_view prefix, int n) {
    std::vector<std::string> owned;
    for (int i = 0; i < n; ++i) owned.push_back(helio::StrCat(prefix, i));
    std::vector<std::string_view> args = {"pfadd", key};
    for (const std::string& element : owned) args.push_back(element);
    return Run(args);
  }

  uint64_t Crc(std::string_view key) { return core::Crc64(0, Run({"get", key}).str); }

  std::string a_, b_, c_;
};

TEST_P(HllFamilyTest, PfAddCreatesAnHll) {
  EXPECT_EQ(Run({"pfadd", "h"}), 1);
  EXPECT_EQ(Run({"pfadd", "h"}), 0);
  EXPECT_EQ(Run({"type", "h"}), "string");
  EXPECT_EQ(Run({"get", "h"}), kEmptyHll);
  EXPECT_EQ(Run({"pfcount", "h"}), 0);
  EXPECT_EQ(Run({"pfadd", "h2", "a", "b", "c"}), 1);
  EXPECT_EQ(Run({"get", "h2"}), kAbcHll);
  EXPECT_EQ(Run({"pfadd", "h2", "a", "b", "c"}), 0);
  EXPECT_EQ(Run({"pfcount", "h2"}), 3);
  EXPECT_EQ(Run({"get", "h2"}), kAbcCountedHll);  // the cache written back
  EXPECT_EQ(Run({"object", "encoding", "h2"}), "raw");
  EXPECT_EQ(Run({"pfadd", "h2", "d"}), 1);
  EXPECT_EQ(Run({"getrange", "h2", "15", "15"}), "\x80");
  EXPECT_EQ(Run({"pfcount", "h2"}), 4);
}

TEST_P(HllFamilyTest, ArityAndTypeErrors) {
  EXPECT_THAT(Run({"pfadd"}), ErrArg(ArityError("pfadd")));
  EXPECT_THAT(Run({"pfcount"}), ErrArg(ArityError("pfcount")));
  EXPECT_THAT(Run({"pfmerge"}), ErrArg(ArityError("pfmerge")));
  EXPECT_THAT(Run({"pfdebug", "getreg"}), ErrArg(ArityError("pfdebug")));
  EXPECT_THAT(Run({"pfdebug", "getreg", "k", "x"}), ErrArg(ArityError("pfdebug")));
  EXPECT_THAT(Run({"pfselftest", "x"}), ErrArg(ArityError("pfselftest")));

  EXPECT_EQ(Run({"set", a_, "bar"}), "OK");
  EXPECT_EQ(Run({"set", "int", "12345"}), "OK");
  EXPECT_EQ(Run({"lpush", b_, "x"}), 1);
  EXPECT_THAT(Run({"pfadd", a_, "1"}), ErrArg(kNotHll));
  EXPECT_THAT(Run({"pfadd", "int", "1"}), ErrArg(kNotHll));
  EXPECT_THAT(Run({"pfcount", a_}), ErrArg(kNotHll));
  EXPECT_THAT(Run({"pfadd", b_, "1"}), ErrArg(kWrongTypeText));
  EXPECT_THAT(Run({"pfcount", b_}), ErrArg(kWrongTypeText));
  EXPECT_THAT(Run({"pfmerge", c_, a_}), ErrArg(kNotHll));
  EXPECT_THAT(Run({"pfmerge", a_, c_}), ErrArg(kNotHll));
  EXPECT_THAT(Run({"pfdebug", "encoding", a_}), ErrArg(kNotHll));
  EXPECT_EQ(Run({"get", a_}), "bar");
  EXPECT_EQ(Run({"exists", c_}), 0);  // a failed PFMERGE creates nothing
  // Of several bad keys, the first in argument order gives the error.
  EXPECT_THAT(Run({"pfcount", c_, b_, a_}), ErrArg(kWrongTypeText));
  EXPECT_THAT(Run({"pfcount", c_, a_, b_}), ErrArg(kNotHll));
  EXPECT_THAT(Run({"pfmerge", c_, b_, a_}), ErrArg(kWrongTypeText));
}

TEST_P(HllFamilyTest, CorruptValuesAreDetected) {
  // Redis's own cases (unit/hyperloglog.tcl).
  EXPECT_EQ(Run({"pfadd", "h", "a", "b", "c"}), 1);
  EXPECT_EQ(Run({"append", "h", "hello"}), 32);
  EXPECT_THAT(Run({"pfcount", "h"}), ErrArg(kCorrupt));
  EXPECT_THAT(Run({"pfcount", "h", "missing"}), ErrArg(kCorrupt));
  EXPECT_THAT(Run({"pfmerge", "dst", "h"}), ErrArg(kCorrupt));
  EXPECT_THAT(Run({"pfdebug", "todense", "h"}), ErrArg(kCorrupt));
  EXPECT_EQ(Run({"exists", "dst"}), 0);

  EXPECT_EQ(Run({"del", "h"}), 1);
  EXPECT_EQ(Run({"pfadd", "h", "a", "b", "c"}), 1);
  EXPECT_EQ(Run({"setrange", "h", "0", "0123"}), 27);
  EXPECT_THAT(Run({"pfcount", "h"}), ErrArg(kNotHll));
  EXPECT_EQ(Run({"del", "h"}), 1);
  EXPECT_EQ(Run({"pfadd", "h", "a", "b", "c"}), 1);
  EXPECT_EQ(Run({"setrange", "h", "4", "x"}), 27);
  EXPECT_THAT(Run({"pfcount", "h"}), ErrArg(kNotHll));
  EXPECT_EQ(Run({"setrange", "h", "4", std::string_view("\0", 1)}), 27);  // dense, too short
  EXPECT_THAT(Run({"pfcount", "h"}), ErrArg(kNotHll));
  EXPECT_THAT(Run({"pfadd", "h", "x"}), ErrArg(kNotHll));
}

TEST_P(HllFamilyTest, ValuesFromRedisServerAreHlls) {
  EXPECT_EQ(Run({"set", "h", kAbcHll}), "OK");
  EXPECT_EQ(Run({"object", "encoding", "h"}), "embstr");
  EXPECT_EQ(Run({"pfadd", "h", "a"}), 0);
  EXPECT_EQ(Run({"object", "encoding", "h"}), "raw");  // unshared, as Redis does
  EXPECT_EQ(Run({"pfcount", "h"}), 3);
  EXPECT_EQ(Run({"get", "h"}), kAbcCountedHll);
}

TEST_P(HllFamilyTest, DenseBytesEqualRedisAndChangeInPlace) {
  EXPECT_EQ(AddMany("d", "d:", 5000), 1);
  EXPECT_EQ(Run({"pfdebug", "encoding", "d"}), "dense");
  EXPECT_EQ(Run({"strlen", "d"}), int64_t(core::hll::kDenseBytes));
  EXPECT_EQ(Crc("d"), 0x656658e7c3fc418eu);
  EXPECT_EQ(Run({"pfcount", "d"}), 4954);
  EXPECT_EQ(Run({"pfcount", "d"}), 4954);  // cached

  // The same elements added one PFADD at a time give the same bytes.
  for (int i = 0; i < 5000; i += 250) {
    std::vector<std::string> owned;
    std::vector<std::string_view> args = {"pfadd", "d2"};
    for (int j = i; j < i + 250; ++j) owned.push_back(helio::StrCat("d:", j));
    for (const std::string& element : owned) args.push_back(element);
    Run(args);
  }
  EXPECT_EQ(Crc("d2"), 0x656658e7c3fc418eu);
  EXPECT_EQ(Run({"pfcount", "d2"}), 4954);

  // A value a client SET (possibly compressed) is rebuilt, then changed in place.
  std::string bytes = Run({"get", "d"}).str;
  EXPECT_EQ(Run({"set", "d3", bytes}), "OK");
  EXPECT_EQ(Run({"pfadd", "d3", "d:1"}), 0);
  EXPECT_EQ(Run({"pfadd", "d3", "extra"}).integer, Run({"pfadd", "d", "extra"}).integer);
  EXPECT_EQ(Run({"get", "d3"}).str, Run({"get", "d"}).str);
  EXPECT_EQ(Run({"pfcount", "d3"}).integer, Run({"pfcount", "d"}).integer);
}

TEST_P(HllFamilyTest, SparseMaxBytesConfig) {
  EXPECT_THAT(Run({"config", "get", "hll-sparse-max-bytes"}),
              RespArray(ElementsAre("hll-sparse-max-bytes", "3000")));
  EXPECT_EQ(Run({"config", "set", "hll-sparse-max-bytes", "100"}), "OK");
  for (int i = 0; i < 50; ++i) Run({"pfadd", "s", helio::StrCat("s:", i)});
  EXPECT_EQ(Run({"pfdebug", "encoding", "s"}), "dense");
  EXPECT_EQ(Crc("s"), 0xaceec292b1d53c3cu);
  EXPECT_EQ(Run({"config", "set", "hll-sparse-max-bytes", "3kb"}), "OK");
  EXPECT_THAT(Run({"config", "get", "hll-sparse-max-bytes"}),
              RespArray(ElementsAre("hll-sparse-max-bytes", "3072")));
  EXPECT_THAT(Run({"config", "set", "hll-sparse-max-bytes", "abc"}),
              ErrArg("argument must be a memory value"));
  EXPECT_EQ(Run({"config", "set", "hll-sparse-max-bytes", "3000"}), "OK");
}

TEST_P(HllFamilyTest, CountAndMergeAcrossShards) {
  EXPECT_EQ(Run({"pfadd", a_, "a", "b", "c"}), 1);
  EXPECT_EQ(AddMany(b_, "e:", 300), 1);
  EXPECT_EQ(Run({"pfcount", a_, b_}), 304);
  EXPECT_EQ(Run({"pfcount", a_, b_, "missing"}), 304);
  EXPECT_EQ(Run({"pfmerge", c_, a_, b_}), "OK");
  EXPECT_EQ(Run({"strlen", c_}), 692);
  EXPECT_EQ(Crc(c_), 0xee101c64f95eb27cu);  // redis-server's PFMERGE bytes
  EXPECT_EQ(Run({"pfcount", c_}), 304);

  // A dense source makes the destination dense; the destination is a source too.
  EXPECT_EQ(AddMany(a_, "d:", 5000), 1);
  EXPECT_EQ(Run({"pfmerge", c_, a_}), "OK");
  EXPECT_EQ(Run({"pfdebug", "encoding", c_}), "dense");
  EXPECT_EQ(Run({"pfcount", c_}).integer, Run({"pfcount", a_, b_}).integer);
  // PFMERGE of nothing but the destination creates an empty HLL.
  EXPECT_EQ(Run({"pfmerge", "fresh"}), "OK");
  EXPECT_EQ(Run({"pfcount", "fresh"}), 0);
}

TEST_P(HllFamilyTest, PfDebug) {
  EXPECT_THAT(Run({"pfdebug", "encoding", "missing"}),
              ErrArg("ERR The specified key does not exist"));
  EXPECT_THAT(Run({"pfdebug", "nosuch", "missing"}),
              ErrArg("ERR The specified key does not exist"));
  EXPECT_EQ(Run({"pfadd", "h", "a", "b", "c"}), 1);
  EXPECT_THAT(Run({"pfdebug", "nosuch", "h"}), ErrArg("ERR Unknown PFDEBUG subcommand 'nosuch'"));
  EXPECT_EQ(Run({"pfdebug", "encoding", "h"}), "sparse");
  EXPECT_EQ(Run({"pfdebug", "decode", "h"}), "Z:8436 v:1,1 Z:4274 v:2,1 Z:3068 v:1,1 Z:603");
  EXPECT_EQ(Run({"pfdebug", "TODENSE", "h"}), 1);
  EXPECT_EQ(Run({"pfdebug", "todense", "h"}), 0);
  EXPECT_EQ(Run({"pfdebug", "encoding", "h"}), "dense");
  EXPECT_THAT(Run({"pfdebug", "decode", "h"}), ErrArg("ERR HLL encoding is not sparse"));
  RespValue registers = Run({"pfdebug", "getreg", "h"});
  ASSERT_EQ(registers.elements.size(), core::hll::kRegisters);
  EXPECT_EQ(registers.elements[8436], 1);
  EXPECT_EQ(registers.elements[12711], 2);
  EXPECT_EQ(registers.elements[15780], 1);
  EXPECT_EQ(registers.elements[0], 0);
  EXPECT_EQ(Run({"pfcount", "h"}), 3);
}

TEST_P(HllFamilyTest, PfCountWriteBackTouchesWatchedKeys) {
  EXPECT_EQ(Run({"pfadd", "h", "a"}), 1);
  EXPECT_EQ(Run({"watch", "h"}), "OK");
  EXPECT_EQ(Run({"pfcount", "h"}), 1);  // writes the cache: a change, as in Redis
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"ping"}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), IsNil());
  EXPECT_EQ(Run({"watch", "h"}), "OK");
  EXPECT_EQ(Run({"pfcount", "h"}), 1);  // cached: no change
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"ping"}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre("PONG")));
}

TEST_P(HllFamilyTest, InMulti) {
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"pfadd", a_, "x", "y"}), "QUEUED");
  EXPECT_EQ(Run({"pfadd", b_, "y", "z"}), "QUEUED");
  EXPECT_EQ(Run({"pfmerge", c_, a_, b_}), "QUEUED");
  EXPECT_EQ(Run({"pfcount", a_, b_}), "QUEUED");
  EXPECT_EQ(Run({"pfcount", c_}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre(1, 1, "OK", 3, 3)));
}

TEST_P(HllFamilyTest, SelfTest) { EXPECT_EQ(Run({"pfselftest"}), "OK"); }

INSTANTIATE_SHARD_COUNTS(HllFamilyTest);

}  // namespace
}  // namespace damselfly
