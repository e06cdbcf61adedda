#include "src/core/pair_pack.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "src/core/obj_malloc.h"

namespace damselfly::core {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

std::string Hex(std::string_view bytes) {
  return absl::BytesToHexString(absl::string_view(bytes.data(), bytes.size()));
}

std::string Bytes(const PairPack& pack) {
  return {reinterpret_cast<const char*>(pack.data()), pack.ByteSize()};
}

Pairs Contents(const PairPack& pack) {
  Pairs out;
  for (PairPack::Pos pos = pack.First(); pos != PairPack::kNoPos;) {
    PairPack::Pos second = pack.Next(pos);
    out.emplace_back(pack.Get(pos).ToString(), pack.Get(second).ToString());
    pos = pack.Next(second);
  }
  return out;
}

TEST(PairPackTest, EmptyPack) {
  PairPack pack;
  EXPECT_EQ(Hex(Bytes(pack)), "04000000");
  EXPECT_EQ(pack.Size(), 0u);
  EXPECT_EQ(pack.First(), PairPack::kNoPos);
  EXPECT_EQ(pack.Find("a"), PairPack::kNoPos);
  std::string lp;
  pack.AppendListpack(&lp);
  EXPECT_EQ(Hex(lp), "070000000000ff");
}

// The elements are listpack's, without back-lengths; the listpack made for RDB and DUMP
// is the one redis-server 7.0 DUMPs for `HSET h a 1 b hello` (see listpack_test.cc).
TEST(PairPackTest, ElementsAreListpacksWithoutBacklengths) {
  PairPack pack;
  pack.Append("a", "1");
  pack.Append("b", "hello");
  EXPECT_EQ(Hex(Bytes(pack)), "0f002000" "8161018162" "8568656c6c6f");
  std::string lp;
  pack.AppendListpack(&lp);
  EXPECT_EQ(Hex(lp), "16000000040081610201018162028568656c6c6f06ff");
  ASSERT_TRUE(Listpack::Validate(lp));
  PairPack back = PairPack::FromListpack(Listpack::FromBytes(lp));
  EXPECT_EQ(Bytes(back), Bytes(pack));
}

TEST(PairPackTest, FindReplaceErase) {
  PairPack pack;
  pack.Append("f", "v");
  pack.Append("12", "x");  // an integer field matches only its canonical text
  EXPECT_EQ(pack.Find("012"), PairPack::kNoPos);
  PairPack::Pos pos = pack.Find("12");
  ASSERT_NE(pos, PairPack::kNoPos);
  EXPECT_EQ(pack.Find("v"), PairPack::kNoPos) << "values are not fields";
  pack.ReplaceSecond(pos, std::string(100, 'y'));
  EXPECT_EQ(pack.Get(pack.After(pack.Find("12"))).ToString(), std::string(100, 'y'));
  pack.ErasePair(pack.Find("f"));
  EXPECT_EQ(Contents(pack), (Pairs{{"12", std::string(100, 'y')}}));
  EXPECT_TRUE(pack.ValidStringPairs());
}

// Random appends, replacements, erasures and lookups against a model; after every step
// the pack's contents, size and listpack form match it, and the pack round-trips through
// its listpack and its bytes.
TEST(PairPackTest, RandomOperationsMatchAModel) {
  std::mt19937_64 rng(11);
  auto random_text = [&]() -> std::string {
    switch (rng() % 5) {
      case 0:
        return absl::StrCat(int64_t(rng()) >> (rng() % 64));  // integers of every width
      case 1:
        return std::string(rng() % 5000, char('a' + rng() % 26));  // 1- to 5-byte headers
      case 2:
        return "";
      default:
        return absl::StrCat("k", rng() % 40);
    }
  };
  const size_t baseline = ThreadObjHeapUsedBytes();
  for (int round = 0; round < 50; ++round) {
    PairPack pack;
    Pairs model;
    for (int op = 0; op < 200; ++op) {
      std::string field = rng() % 3 ? absl::StrCat("k", rng() % 40) : random_text();
      PairPack::Pos pos = pack.Find(field);
      auto it = std::find_if(model.begin(), model.end(),
                             [&](const auto& p) { return p.first == field; });
      ASSERT_EQ(pos != PairPack::kNoPos, it != model.end()) << field;
      if (rng() % 3 == 0) {
        if (it != model.end()) {
          pack.ErasePair(pos);
          model.erase(it);
        }
      } else {
        std::string value = random_text();
        if (!PairPack::Fits(pack.ByteSize(), field.size() + value.size() + 10)) continue;
        if (it != model.end()) {
          pack.ReplaceSecond(pos, value);
          it->second = value;
        } else {
          pack.Append(field, value);
          model.emplace_back(field, value);
        }
      }
      ASSERT_EQ(pack.Size(), model.size());
      ASSERT_EQ(Contents(pack), model);
      ASSERT_TRUE(pack.ValidStringPairs());
    }
    std::string lp;
    pack.AppendListpack(&lp);
    ASSERT_TRUE(Listpack::Validate(lp));
    Listpack listpack = Listpack::FromBytes(lp);
    ASSERT_EQ(listpack.Size(), 2 * model.size());
    ASSERT_TRUE(PairPack::ListpackFits(listpack));
    EXPECT_EQ(Contents(PairPack::FromListpack(listpack)), model);
    std::optional<PairPack> copy = PairPack::FromBytes(Bytes(pack));
    ASSERT_TRUE(copy.has_value());
    EXPECT_EQ(Contents(*copy), model);
    if (!model.empty()) {
      size_t index = rng() % model.size();
      EXPECT_EQ(pack.Get(pack.SeekPair(index)).ToString(), model[index].first);
    }
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline) << "every block freed";
}

// The header: total bytes in 20 bits, pairs in 12.
TEST(PairPackTest, HeaderHoldsAMebibyteAnd4095Pairs) {
  PairPack pack;
  const std::string big(60000, 'x');
  for (int i = 0; i < 17; ++i) pack.Append(absl::StrCat("f", i), big);
  EXPECT_GT(pack.ByteSize(), 1000000u);
  EXPECT_EQ(pack.Size(), 17u);
  EXPECT_TRUE(pack.ValidStringPairs());
  EXPECT_FALSE(PairPack::Fits(pack.ByteSize(), 60010));
  PairPack many;
  for (size_t i = 0; i < PairPack::kMaxPairs; ++i) many.Append(absl::StrCat(i), "");
  EXPECT_EQ(many.Size(), PairPack::kMaxPairs);
  EXPECT_EQ(many.Get(many.SeekPair(4094)).ToString(), "4094");
}

TEST(PairPackTest, ShrinkingGivesMemoryBack) {
  PairPack pack;
  for (int i = 0; i < 100; ++i) pack.Append(absl::StrCat("field", i), std::string(50, 'v'));
  const uint32_t grown = pack.block().capacity;
  for (int i = 0; i < 95; ++i) pack.ErasePair(pack.First());
  EXPECT_LT(pack.block().capacity, grown / 4);
  EXPECT_GE(pack.block().capacity, pack.ByteSize());
}

TEST(PairPackTest, MalformedBytesAreRefused) {
  EXPECT_FALSE(PairPack::FromBytes(std::string_view("\x04\x00", 2)).has_value());
  EXPECT_FALSE(PairPack::FromBytes(std::string_view("\x05\x00\x00\x00", 4)).has_value());
  // One pair announced, one element there; an element running past the end.
  for (std::string_view bytes : {std::string_view("\x06\x00\x10\x00\x81\x61", 6),
                                 std::string_view("\x06\x00\x10\x00\x85\x61", 6),
                                 std::string_view("\x06\x00\x00\x00\xff\x61", 6)}) {
    std::optional<PairPack> pack = PairPack::FromBytes(bytes);
    ASSERT_TRUE(pack.has_value());
    EXPECT_FALSE(pack->ValidStringPairs()) << Hex(bytes);
  }
}

}  // namespace
}  // namespace damselfly::core
