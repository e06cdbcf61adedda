// HashView and HashRef over a PrimeValue: random writes against a std::map model across
// the listpack-to-hashtable conversion, the memory a small hash takes (its listpack block
// and nothing else), and the cross-shard form in both encodings.
#include "src/server/hash_object.h"

#include <map>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "helio/base/strings.h"
#include "src/core/obj_malloc.h"
#include "src/server/collection_limits.h"

namespace damselfly {
namespace {

using Model = std::map<std::string, std::string>;

Model Contents(const PrimeValue& value) {
  Model out;
  HashView(value).ForEach([&](std::string_view f, std::string_view v) { out.emplace(f, v); });
  return out;
}

class HashObjectTest : public testing::Test {
 protected:
  void SetLimits(uint64_t entries, uint64_t value_len) {
    collection_limits_internal::hash_max_listpack_entries = entries;
    collection_limits_internal::hash_max_listpack_value = value_len;
  }
  // The hash family registers its factory at start-up; here the test does.
  void SetUp() override { RegisterTypedObjectFactory(ObjType::kHash, MakeHashFromForm); }
  void TearDown() override { SetLimits(512, 64); }
};

TEST_F(HashObjectTest, SmallHashIsItsPackBlockAlone) {
  const size_t baseline = core::ThreadObjHeapUsedBytes();
  {
    PrimeValue value;
    HashRef::MakeEmpty(&value);
    EXPECT_TRUE(value.holds_block());
    EXPECT_EQ(value.type(), ObjType::kHash);
    HashRef hash(&value);
    for (int i = 0; i < 10; ++i) hash.Set(helio::StrCat("f", i), helio::StrCat("v", i));
    // 4 header bytes, 20 elements of 3 bytes (no back-lengths).
    core::PairPack pack = core::PairPack::Adopt(value.block());
    EXPECT_EQ(pack.ByteSize(), 64u);
    EXPECT_EQ(pack.Size(), 10u);
    pack.Release();
    EXPECT_EQ(value.MallocUsed(), core::ObjUsableSize(value.block().data));
    EXPECT_EQ(core::ThreadObjHeapUsedBytes() - baseline, value.MallocUsed())
        << "no object around the pack";
    EXPECT_LE(value.MallocUsed(), 64u);
    // RDB and DUMP get Redis's listpack: 6 header bytes, 20 entries of 4, a terminator.
    std::string listpack;
    hash.AppendListpack(&listpack);
    ASSERT_EQ(listpack.size(), 87u);
    ASSERT_TRUE(core::Listpack::Validate(listpack));
    core::Listpack lp = core::Listpack::FromBytes(listpack);
    EXPECT_EQ(lp.Get(lp.Seek(18)).ToString(), "f9");
    EXPECT_EQ(lp.Get(lp.Seek(19)).ToString(), "v9");
  }
  EXPECT_EQ(core::ThreadObjHeapUsedBytes(), baseline);
}

// Random HSET/HDEL (and reads between them) against a model, with limits low enough
// that the hash converts during the run; the value's encoding byte follows.
TEST_F(HashObjectTest, RandomWritesMatchAModel) {
  SetLimits(16, 8);
  std::mt19937_64 rng(7);
  const size_t baseline = core::ThreadObjHeapUsedBytes();
  for (int round = 0; round < 200; ++round) {
    PrimeValue value;
    HashRef::MakeEmpty(&value);
    Model model;
    const int ops = 1 + rng() % 60;
    for (int op = 0; op < ops; ++op) {
      std::string field = helio::StrCat("f", rng() % 24);
      // Mostly short values; now and then one past the value limit, or an integer.
      std::string text = rng() % 20 == 0   ? std::string(9, 'x')
                         : rng() % 3 == 0 ? helio::StrCat(int64_t(rng() % 2000) - 1000)
                                          : helio::StrCat("v", rng() % 100);
      HashRef hash(&value);
      if (rng() % 4 == 0) {
        EXPECT_EQ(hash.Remove(field), model.erase(field) == 1);
      } else {
        EXPECT_EQ(hash.Set(field, text), !model.count(field));
        model[field] = text;
      }
      ASSERT_EQ(hash.Size(), model.size());
      EXPECT_EQ(value.object_encoding(), hash.encoding());
      EXPECT_EQ(value.holds_block(), hash.encoding() == ObjEncoding::kListpack);
      std::string scratch;
      auto got = HashView(value).Get(field, &scratch);
      EXPECT_EQ(got.has_value(), model.count(field) == 1);
      if (got) {
        EXPECT_EQ(*got, model[field]);
      }
    }
    ASSERT_EQ(Contents(value), model);
    // A listpack never holds more than the limits allow (conversion is one way).
    if (value.holds_block()) {
      EXPECT_LE(model.size(), 16u);
    }
  }
  EXPECT_EQ(core::ThreadObjHeapUsedBytes(), baseline);
}

TEST_F(HashObjectTest, FormRoundTripsInBothEncodings) {
  SetLimits(4, 64);
  for (int fields : {3, 9}) {
    PrimeValue value;
    HashRef::MakeEmpty(&value);
    HashRef hash(&value);
    for (int i = 0; i < fields; ++i) hash.Set(helio::StrCat("f", i), helio::StrCat(i * 7));
    std::string form;
    value.Serialize(&form);
    PrimeValue copy;
    ASSERT_TRUE(copy.Deserialize(form));
    EXPECT_EQ(copy.object_encoding(), value.object_encoding());
    EXPECT_EQ(copy.holds_block(), fields == 3);
    EXPECT_EQ(Contents(copy), Contents(value));
  }
  PrimeValue bad;
  std::string odd = {char(ObjType::kHash), char(ObjEncoding::kListpack)};
  // A pack whose header says one pair over a single element: not a hash.
  odd.append({11, 0, 0x10, 0});
  odd.append("\x86lonely");
  EXPECT_FALSE(bad.Deserialize(odd));
  odd[2] = 12;  // a header that says more bytes than the form has
  EXPECT_FALSE(bad.Deserialize(odd));
  EXPECT_EQ(bad.type(), ObjType::kString) << "a refused form leaves the value as it was";
}

}  // namespace
}  // namespace damselfly
