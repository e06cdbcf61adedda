// ZSetView and ZSetRef over a PrimeValue: random writes against a model across the
// listpack-to-skiplist conversion, the memory a small set takes (its listpack block and
// nothing else), Store's choice of encoding, and the cross-shard form of both encodings.
#include "src/server/zset_object.h"

#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "gtest/gtest.h"
#include "helio/base/strings.h"
#include "src/core/obj_malloc.h"
#include "src/server/collection_limits.h"

namespace damselfly {
namespace {

using Model = std::map<std::string, double>;
using SortedPairs = ZSetView::SortedPairs;

// The model's pairs in (score, member) order.
SortedPairs Ordered(const Model& model) {
  std::set<std::pair<double, std::string>> by_score;
  for (const auto& [member, score] : model) by_score.emplace(score, member);
  SortedPairs out;
  for (const auto& [score, member] : by_score) out.emplace_back(member, score);
  return out;
}

SortedPairs Contents(const PrimeValue& value) {
  const ZSetView zset(value);
  SortedPairs out;
  zset.Walk(0, zset.Size(), false, [&](std::string_view m, double s) {
    out.emplace_back(m, s);
    return true;
  });
  return out;
}

class ZSetObjectTest : public testing::Test {
 protected:
  void SetLimits(uint64_t entries, uint64_t value_len) {
    collection_limits_internal::zset_max_listpack_entries = entries;
    collection_limits_internal::zset_max_listpack_value = value_len;
  }
  // The sorted-set family registers the factory at start-up; here the test does.
  void SetUp() override { RegisterZSetFactory(); }
  void TearDown() override { SetLimits(128, 64); }
};

TEST_F(ZSetObjectTest, SmallSetIsItsPackBlockAlone) {
  const size_t baseline = core::ThreadObjHeapUsedBytes();
  {
    PrimeValue value;
    ZSetRef::MakeEmpty(&value);
    EXPECT_TRUE(value.holds_block());
    EXPECT_EQ(value.type(), ObjType::kZSet);
    ZSetRef zset(&value);
    for (int i = 0; i < 10; ++i) zset.Set(helio::StrCat("m", i), i * 1000);
    // 4 header bytes; per member 3 bytes of member and 2 of score (1000 more than the last).
    core::PairPack pack = core::PairPack::Adopt(value.block());
    EXPECT_EQ(pack.ByteSize(), 4u + 10 * 3 + 1 + 9 * 2);
    pack.Release();
    EXPECT_EQ(core::ThreadObjHeapUsedBytes() - baseline, value.MallocUsed())
        << "no object around the pack";
    EXPECT_EQ(value.MallocUsed(), core::ObjUsableSize(value.block().data));
  }
  EXPECT_EQ(core::ThreadObjHeapUsedBytes(), baseline);
}

TEST_F(ZSetObjectTest, RandomWritesMatchAModel) {
  SetLimits(16, 8);
  std::mt19937_64 rng(11);
  const size_t baseline = core::ThreadObjHeapUsedBytes();
  for (int round = 0; round < 200; ++round) {
    PrimeValue value;
    ZSetRef::MakeEmpty(&value);
    Model model;
    const int ops = 1 + rng() % 60;
    for (int op = 0; op < ops; ++op) {
      // Now and then a member past the value limit.
      std::string member = rng() % 25 == 0 ? std::string(9, 'x') : helio::StrCat("m", rng() % 24);
      const double score = double(rng() % 50) / 4;
      ZSetRef zset(&value);
      switch (rng() % 5) {
        case 0:
          EXPECT_EQ(zset.Remove(member), model.erase(member) == 1);
          break;
        case 1: {  // erase a rank range, as ZREMRANGEBYRANK
          if (model.empty()) break;
          const size_t start = rng() % model.size();
          const size_t end = std::min(model.size(), start + 1 + rng() % 3);
          SortedPairs ordered = Ordered(model);
          EXPECT_EQ(zset.EraseRanks(start, end), end - start);
          for (size_t i = start; i < end; ++i) model.erase(ordered[i].first);
          break;
        }
        default:
          EXPECT_EQ(zset.Set(member, score), !model.count(member));
          model[member] = score;
      }
      ASSERT_EQ(zset.Size(), model.size());
      EXPECT_EQ(value.object_encoding(), zset.encoding());
      EXPECT_EQ(value.holds_block(), zset.encoding() == ObjEncoding::kListpack);
      std::optional<double> got = ZSetView(value).Score(member);
      EXPECT_EQ(got.has_value(), model.count(member) == 1);
      if (got) {
        EXPECT_EQ(*got, model[member]);
      }
    }
    ASSERT_EQ(Contents(value), Ordered(model));
    if (value.holds_block()) {
      EXPECT_LE(model.size(), 16u);
    }
  }
  EXPECT_EQ(core::ThreadObjHeapUsedBytes(), baseline);
}

TEST_F(ZSetObjectTest, StoreAndFormRoundTrip) {
  SetLimits(4, 64);
  for (int members : {3, 9}) {
    SortedPairs pairs;
    for (int i = 0; i < members; ++i) pairs.emplace_back(helio::StrCat("m", i), i * 0.5);
    PrimeValue value;
    ZSetRef::Store(pairs, &value);
    EXPECT_EQ(value.holds_block(), members == 3);
    EXPECT_EQ(value.object_encoding(),
              members == 3 ? ObjEncoding::kListpack : ObjEncoding::kSkiplist);
    EXPECT_EQ(Contents(value), pairs);
    std::string form;
    value.Serialize(&form);
    PrimeValue copy;
    ASSERT_TRUE(copy.Deserialize(form));
    EXPECT_EQ(copy.object_encoding(), value.object_encoding());
    EXPECT_EQ(Contents(copy), pairs);
  }
}

}  // namespace
}  // namespace damselfly
