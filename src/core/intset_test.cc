#include "src/core/intset.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "src/core/obj_malloc.h"

namespace damselfly::core {
namespace {

using std::string;

string Hex(std::string_view bytes) {
  return absl::BytesToHexString(absl::string_view(bytes.data(), bytes.size()));
}

string Bytes(std::string_view hex) {
  return absl::HexStringToBytes(absl::string_view(hex.data(), hex.size()));
}

Intset Make(const std::vector<int64_t>& values) {
  Intset is;
  for (int64_t v : values) EXPECT_TRUE(is.Add(v)) << v;
  return is;
}

std::vector<int64_t> Elements(const Intset& is) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < is.Size(); ++i) out.push_back(is.Get(i));
  return out;
}

// The intset bytes a model set encodes to with element width `width`, written without the
// class: little-endian two's complement, ascending.
string Encode(const std::set<int64_t>& model, uint32_t width) {
  string out;
  auto put = [&out](uint64_t v, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  };
  put(width, 4);
  put(model.size(), 4);
  for (int64_t v : model) put(static_cast<uint64_t>(v), width);
  return out;
}

uint32_t WidthFor(int64_t v) {
  if (v >= INT16_MIN && v <= INT16_MAX) return 2;
  if (v >= INT32_MIN && v <= INT32_MAX) return 4;
  return 8;
}

TEST(IntsetTest, Empty) {
  Intset is;
  EXPECT_EQ(Hex(is.bytes()), "0200000000000000");
  EXPECT_EQ(is.ByteSize(), 8u);
  EXPECT_EQ(is.Size(), 0u);
  EXPECT_TRUE(is.Empty());
  EXPECT_EQ(is.Encoding(), 2u);
  EXPECT_FALSE(is.Contains(0));
  EXPECT_FALSE(is.Remove(0));
  // Redis never stores an empty set, and its loader rejects an empty intset.
  EXPECT_FALSE(Intset::Validate(is.bytes()));
}

// The blobs below are the RDB_TYPE_SET_INTSET strings of DUMP payloads from
// redis-server 7.0 (--rdbcompression no), after SADD of the values named.
TEST(IntsetTest, RedisSmallSet) {
  // SADD s 1 2 3
  Intset is = Make({1, 2, 3});
  EXPECT_EQ(Hex(is.bytes()), "0200000003000000010002000300");
  EXPECT_TRUE(Intset::Validate(is.bytes()));
}

TEST(IntsetTest, Redis16BitBoundaries) {
  // SADD s16 -32768 32767 5
  Intset is = Make({-32768, 32767, 5});
  EXPECT_EQ(Hex(is.bytes()), "020000000300000000800500ff7f");
  EXPECT_EQ(is.Min(), -32768);
  EXPECT_EQ(is.Max(), 32767);
}

TEST(IntsetTest, Redis32Bit) {
  // SADD s32 1 32768 -2: 32768 upgrades to 4 bytes, appended at the end.
  EXPECT_EQ(Hex(Make({1, 32768, -2}).bytes()), "0400000003000000feffffff0100000000800000");
  // SADD s32n -32769 7: -32769 upgrades, prepended.
  EXPECT_EQ(Hex(Make({-32769, 7}).bytes()), "0400000002000000ff7fffff07000000");
  // SADD s32b -2147483648 2147483647 0
  EXPECT_EQ(Hex(Make({INT32_MIN, INT32_MAX, 0}).bytes()),
            "04000000030000000000008000000000ffffff7f");
}

TEST(IntsetTest, Redis64Bit) {
  // SADD s64 3 2147483648 -9223372036854775808 9223372036854775807
  Intset is = Make({3, 2147483648LL, INT64_MIN, INT64_MAX});
  EXPECT_EQ(Hex(is.bytes()),
            "0800000004000000000000000000008003000000000000000000008000000000"
            "ffffffffffffff7f");
  EXPECT_EQ(is.Min(), INT64_MIN);
  EXPECT_EQ(is.Max(), INT64_MAX);
  // SADD s64n -2147483649 1
  EXPECT_EQ(Hex(Make({-2147483649LL, 1}).bytes()),
            "0800000002000000ffffff7fffffffff0100000000000000");
}

TEST(IntsetTest, RedisKeepsEncodingAfterRemove) {
  // SADD r 1 2 3 70000; SREM r 70000: Redis keeps 4-byte elements.
  Intset is = Make({1, 2, 3, 70000});
  EXPECT_TRUE(is.Remove(70000));
  EXPECT_EQ(Hex(is.bytes()), "0400000003000000010000000200000003000000");
  EXPECT_TRUE(Intset::Validate(is.bytes()));
}

TEST(IntsetTest, RedisLargerSet) {
  // SADD big 100 97 ... -200 (seq 100 -3 -200): 101 elements, added in descending order.
  Intset is;
  for (int v = 100; v >= -200; v -= 3) ASSERT_TRUE(is.Add(v));
  const string expected =
      "020000006500000038ff3bff3eff41ff44ff47ff4aff4dff50ff53ff56ff59ff5cff5fff62ff65ff68ff6bff"
      "6eff71ff74ff77ff7aff7dff80ff83ff86ff89ff8cff8fff92ff95ff98ff9bff9effa1ffa4ffa7ffaaffadff"
      "b0ffb3ffb6ffb9ffbcffbfffc2ffc5ffc8ffcbffceffd1ffd4ffd7ffdaffddffe0ffe3ffe6ffe9ffecffefff"
      "f2fff5fff8fffbfffeff0100040007000a000d0010001300160019001c001f002200250028002b002e003100"
      "340037003a003d0040004300460049004c004f005200550058005b005e0061006400";
  EXPECT_EQ(Hex(is.bytes()), expected);
  EXPECT_EQ(is.Size(), 101u);
  EXPECT_EQ(is.ByteSize(), 8u + 202u);
}

TEST(IntsetTest, AddRemoveContains) {
  Intset is;
  EXPECT_TRUE(is.Add(5));
  EXPECT_TRUE(is.Add(6));
  EXPECT_TRUE(is.Add(4));
  EXPECT_FALSE(is.Add(4));
  EXPECT_EQ(Elements(is), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_TRUE(is.Contains(5));
  EXPECT_FALSE(is.Contains(7));
  // Values wider than the encoding are never present.
  EXPECT_FALSE(is.Contains(INT64_MAX));
  EXPECT_FALSE(is.Remove(INT64_MIN));
  EXPECT_TRUE(is.Remove(5));
  EXPECT_FALSE(is.Remove(5));
  EXPECT_EQ(Elements(is), (std::vector<int64_t>{4, 6}));
  EXPECT_TRUE(is.Remove(4));
  EXPECT_TRUE(is.Remove(6));
  EXPECT_TRUE(is.Empty());
  EXPECT_EQ(Hex(is.bytes()), "0200000000000000");
}

// Each boundary of each width, approached from both sides, upgrades exactly when the value
// leaves the narrower range; the old elements keep their values and order.
TEST(IntsetTest, UpgradeBoundaries) {
  struct Case {
    std::vector<int64_t> start;
    int64_t value;
    uint32_t width;
  };
  const std::vector<Case> cases = {
      {{32}, 32767, 2},
      {{32}, 32768, 4},
      {{32}, -32768, 2},
      {{32}, -32769, 4},
      {{32}, 65535, 4},
      {{32}, -65535, 4},
      {{32}, 4294967295LL, 8},
      {{32}, -4294967295LL, 8},
      {{-1, 0, 1}, INT32_MAX, 4},
      {{-1, 0, 1}, INT32_MIN, 4},
      {{-1, 0, 1}, 2147483648LL, 8},
      {{-1, 0, 1}, -2147483649LL, 8},
      {{65535}, 4294967295LL, 8},
      {{65535}, -4294967295LL, 8},
      {{-70000, 70000}, INT64_MAX, 8},
      {{-70000, 70000}, INT64_MIN, 8},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("adding ", c.value));
    Intset is = Make(c.start);
    ASSERT_TRUE(is.Add(c.value));
    std::set<int64_t> model(c.start.begin(), c.start.end());
    model.insert(c.value);
    EXPECT_EQ(is.Encoding(), c.width);
    EXPECT_EQ(Hex(is.bytes()), Hex(Encode(model, c.width)));
    for (int64_t v : model) EXPECT_TRUE(is.Contains(v));
    EXPECT_FALSE(is.Add(c.value));
  }
}

// Random adds and removes against std::set, with values clustered at the 16/32/64-bit
// boundaries so that every upgrade path is taken, and the intset restarted now and then
// so that upgrades keep happening. Checks the exact bytes after every step.
TEST(IntsetTest, RandomAgainstStdSet) {
  std::vector<int64_t> pivots = {0,         INT16_MIN, INT16_MAX, INT32_MIN,
                                 INT32_MAX, INT64_MIN, INT64_MAX};
  std::mt19937_64 rng(3);
  auto value = [&]() -> int64_t {
    switch (rng() % 4) {
      case 0:
        return static_cast<int64_t>(rng());
      case 1:
        return static_cast<int64_t>(rng() % 200) - 100;
      default: {
        // Within 3 of a boundary; wraps around at the int64 ends, which is fine.
        int64_t delta = static_cast<int64_t>(rng() % 7) - 3;
        return static_cast<int64_t>(static_cast<uint64_t>(pivots[rng() % pivots.size()]) +
                                    static_cast<uint64_t>(delta));
      }
    }
  };
  Intset is;
  std::set<int64_t> model;
  uint32_t width = 2;
  size_t upgrades = 0;
  for (int step = 0; step < 20000; ++step) {
    SCOPED_TRACE(absl::StrCat("step ", step));
    // A third of the operations pick a present element.
    int64_t v = value();
    if (rng() % 3 == 0 && !model.empty()) v = *std::next(model.begin(), rng() % model.size());
    if (rng() % 5 < 3) {
      bool added = model.insert(v).second;
      ASSERT_EQ(is.Add(v), added);
      if (WidthFor(v) > width) {
        width = WidthFor(v);
        ++upgrades;
      }
    } else {
      ASSERT_EQ(is.Remove(v), model.erase(v) == 1);
    }
    ASSERT_EQ(is.Encoding(), width);
    ASSERT_EQ(is.Size(), model.size());
    ASSERT_EQ(is.bytes(), Encode(model, width));
    const int64_t probe = value();
    ASSERT_EQ(is.Contains(probe), model.count(probe) == 1);
    if (!model.empty()) {
      ASSERT_EQ(is.Min(), *model.begin());
      ASSERT_EQ(is.Max(), *model.rbegin());
      ASSERT_TRUE(Intset::Validate(is.bytes()));
    }
    if (model.size() > 80 || rng() % 200 == 0) {
      is = Intset();
      model.clear();
      width = 2;
    }
  }
  EXPECT_GT(upgrades, 100u);
}

TEST(IntsetTest, RandomIsUniform) {
  Intset is = Make({-5, 0, 70000, INT64_MAX});
  std::mt19937_64 rng(5);
  std::vector<int> seen(4);
  for (int i = 0; i < 4000; ++i) {
    int64_t v = is.Random(rng);
    size_t index = v == -5 ? 0 : v == 0 ? 1 : v == 70000 ? 2 : 3;
    ASSERT_TRUE(is.Contains(v));
    ++seen[index];
  }
  for (int n : seen) {
    EXPECT_GT(n, 850);
    EXPECT_LT(n, 1150);
  }
  Intset one = Make({42});
  EXPECT_EQ(one.Random(rng), 42);
}

TEST(IntsetTest, MoveAndFromBytes) {
  Intset a = Make({1, 70000});
  Intset b = std::move(a);
  Intset c = Intset::FromBytes(b.bytes());
  EXPECT_EQ(c.bytes(), b.bytes());
  EXPECT_TRUE(c.Add(-3));
  EXPECT_EQ(Elements(c), (std::vector<int64_t>{-3, 1, 70000}));
  a = std::move(c);
  EXPECT_EQ(a.Size(), 3u);
  // A blob with a wider encoding than its elements need (Redis accepts it) stays as is.
  Intset wide = Intset::FromBytes(Bytes("08000000010000000100000000000000"));
  EXPECT_EQ(wide.Encoding(), 8u);
  EXPECT_TRUE(wide.Add(2));
  EXPECT_EQ(Hex(wide.bytes()), "080000000200000001000000000000000200000000000000");
}

// Every allocation goes through ObjMalloc and is returned: the thread's counter is back
// where it started once the intsets are gone.
TEST(IntsetTest, MemoryAccounting) {
  const size_t before = ThreadObjHeapUsedBytes();
  {
    Intset is;
    for (int i = 0; i < 300; ++i) is.Add(i * 1000003LL);
    EXPECT_GE(ThreadObjHeapUsedBytes() - before, is.ByteSize());
    for (int i = 0; i < 300; ++i) is.Remove(i * 1000003LL);
    // A shrunk intset gives most of its block back.
    EXPECT_LT(ThreadObjHeapUsedBytes() - before, 64u);
    Intset copy = Intset::FromBytes(Make({1, 2}).bytes());
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), before);
}

TEST(IntsetTest, ValidateRejects) {
  EXPECT_TRUE(Intset::Validate(Bytes("020000000100000007ff")));
  EXPECT_FALSE(Intset::Validate(""));
  EXPECT_FALSE(Intset::Validate(Bytes("0200000001000000")));        // element missing
  EXPECT_FALSE(Intset::Validate(Bytes("02000000000000")));          // short header
  EXPECT_FALSE(Intset::Validate(Bytes("0200000000000000")));        // empty
  EXPECT_FALSE(Intset::Validate(Bytes("020000000100000007ff00")));  // trailing byte
  EXPECT_FALSE(Intset::Validate(Bytes("010000000100000007")));      // encoding 1
  EXPECT_FALSE(Intset::Validate(Bytes("030000000100000007ff00")));  // encoding 3
  EXPECT_FALSE(Intset::Validate(Bytes("100000000100000007ff0000000000000000000000000000")));
  EXPECT_FALSE(Intset::Validate(Bytes("02000100010000000700")));      // encoding 65538
  EXPECT_FALSE(Intset::Validate(Bytes("020000000200000007000700")));  // duplicate
  EXPECT_FALSE(Intset::Validate(Bytes("020000000200000008000700")));  // descending
  EXPECT_TRUE(Intset::Validate(Bytes("0200000002000000ffff0000")));   // -1 < 0
  EXPECT_FALSE(Intset::Validate(Bytes("02000000020000000000ffff")));  // 0 > -1
  // A count whose byte size would overflow 32 bits is a mismatch, not a wrap-around.
  EXPECT_FALSE(Intset::Validate(Bytes("08000000ffffffff0100000000000000")));
  EXPECT_FALSE(Intset::Validate(Bytes("0800000000000020")));
  // Wider than needed is accepted, as by Redis.
  EXPECT_TRUE(Intset::Validate(Bytes("04000000020000000100000002000000")));
}

// Every single-byte change of valid intsets of each width, and random multi-byte
// corruptions, truncations and extensions: Validate must answer without reading outside
// the blob (ASAN checks this, since each blob is copied into an exactly sized heap
// buffer), and whatever it accepts must behave as a set.
TEST(IntsetTest, ValidateFuzz) {
  std::mt19937_64 rng(11);
  std::vector<string> seeds;
  for (const std::vector<int64_t>& values :
       std::vector<std::vector<int64_t>>{{7},
                                         {-3, 1, 2, 300},
                                         {-32769, 0, 5, 32768},
                                         {INT64_MIN, -1, 1, INT64_MAX},
                                         {1LL << 40, 1LL << 41}}) {
    seeds.emplace_back(Make(values).bytes());
  }
  auto check = [](const string& blob) {
    char* heap = new char[blob.size()];
    std::copy(blob.begin(), blob.end(), heap);
    std::string_view view(heap, blob.size());
    if (Intset::Validate(view)) {
      Intset is = Intset::FromBytes(view);
      EXPECT_EQ(is.bytes(), view);
      for (size_t i = 0; i < is.Size(); ++i) {
        if (i > 0) {
          EXPECT_LT(is.Get(i - 1), is.Get(i));
        }
        EXPECT_TRUE(is.Contains(is.Get(i)));
      }
      if (is.Min() != INT64_MIN || is.Max() != INT64_MAX) {
        const int64_t fresh = is.Max() == INT64_MAX ? is.Min() - 1 : is.Max() + 1;
        EXPECT_TRUE(is.Add(fresh));
        EXPECT_TRUE(is.Remove(fresh));
      }
      EXPECT_TRUE(is.Remove(is.Get(0)));
    }
    delete[] heap;
  };
  size_t accepted_changes = 0;
  for (const string& seed : seeds) {
    for (size_t i = 0; i < seed.size(); ++i) {
      for (int b = 0; b < 256; ++b) {
        string blob = seed;
        blob[i] = static_cast<char>(b);
        if (blob != seed && Intset::Validate(blob)) ++accepted_changes;
        check(blob);
      }
    }
    for (int k = 0; k < 3000; ++k) {
      string blob = seed;
      int flips = 1 + rng() % 4;
      for (int f = 0; f < flips; ++f) blob[rng() % blob.size()] = static_cast<char>(rng());
      if (rng() % 4 == 0) blob.resize(rng() % (blob.size() + 10));
      check(blob);
    }
  }
  // Element bytes can change without breaking the order, so some changes are accepted.
  EXPECT_GT(accepted_changes, 0u);
}

}  // namespace
}  // namespace damselfly::core
