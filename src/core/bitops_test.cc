#include "src/core/bitops.h"

#include <gtest/gtest.h>

#include <random>

namespace damselfly::core {
namespace {

// The reference model: a bitmap as one bool per bit, in Redis's order.
std::vector<bool> Bits(const std::string& s) {
  std::vector<bool> bits;
  for (unsigned char c : s) {
    for (int i = 7; i >= 0; --i) bits.push_back((c >> i) & 1);
  }
  return bits;
}

const uint8_t* U8(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

std::string RandomBytes(std::mt19937_64& rng, size_t len, int density) {
  std::string s(len, '\0');
  for (char& c : s) {
    // density 0: sparse (mostly zero bytes), 1: uniform, 2: mostly 0xFF.
    const uint8_t r = rng();
    c = char(density == 0   ? (rng() % 16 == 0 ? r : 0)
             : density == 1 ? r
                            : (rng() % 16 == 0 ? r : 0xFF));
  }
  return s;
}

TEST(BitopsTest, CountAndFindMatchModel) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 3000; ++round) {
    const size_t len = 1 + rng() % 100;
    const std::string s = RandomBytes(rng, len, round % 3);
    const std::vector<bool> bits = Bits(s);
    uint64_t a = rng() % bits.size(), b = rng() % bits.size();
    if (a > b) std::swap(a, b);
    uint64_t count = 0;
    int64_t first_set = -1, first_clear = -1;
    for (uint64_t i = a; i <= b; ++i) {
      count += bits[i];
      if (bits[i] && first_set < 0) first_set = i;
      if (!bits[i] && first_clear < 0) first_clear = i;
    }
    ASSERT_EQ(CountBits(U8(s), len, a, b), count) << a << " " << b;
    ASSERT_EQ(FindBit(U8(s), len, true, a, b), first_set) << a << " " << b;
    ASSERT_EQ(FindBit(U8(s), len, false, a, b), first_clear) << a << " " << b;
  }
}

TEST(BitopsTest, CountWholeLargeBitmap) {
  std::string s(1 << 20, '\0');
  s[0] = '\x80';
  s[12345] = '\x0F';
  s.back() = '\x01';
  EXPECT_EQ(CountBits(U8(s), s.size(), 0, s.size() * 8 - 1), 6u);
  EXPECT_EQ(FindBit(U8(s), s.size(), true, 1, s.size() * 8 - 1), 12345 * 8 + 4);
  EXPECT_EQ(FindBit(U8(s), s.size(), true, s.size() * 8 - 1, s.size() * 8 - 1),
            int64_t(s.size()) * 8 - 1);
  std::string ones(4096, '\xFF');
  EXPECT_EQ(FindBit(U8(ones), ones.size(), false, 0, ones.size() * 8 - 1), -1);
  ones[4000] = '\xFE';
  EXPECT_EQ(FindBit(U8(ones), ones.size(), false, 0, ones.size() * 8 - 1), 4000 * 8 + 7);
}

TEST(BitopsTest, GetAndSetBit) {
  std::string s(2, '\0');
  auto* p = reinterpret_cast<uint8_t*>(s.data());
  EXPECT_FALSE(SetBit(p, 1, true));
  EXPECT_EQ(s[0], '\x40');
  EXPECT_TRUE(SetBit(p, 1, true));
  EXPECT_FALSE(SetBit(p, 15, true));
  EXPECT_EQ(s[1], '\x01');
  EXPECT_TRUE(GetBit(p, 2, 15));
  EXPECT_FALSE(GetBit(p, 2, 16));  // past the end
  EXPECT_FALSE(GetBit(p, 2, uint64_t{1} << 40));
  EXPECT_TRUE(SetBit(p, 15, false));
  EXPECT_EQ(s[1], '\0');
}

// The model of a field: the bits one by one, most significant first.
uint64_t ModelField(const std::vector<bool>& bits, uint64_t offset, unsigned width) {
  uint64_t value = 0;
  for (unsigned i = 0; i < width; ++i) {
    const uint64_t at = offset + i;
    value = (value << 1) | (at < bits.size() ? bits[at] : 0);
  }
  return value;
}

TEST(BitopsTest, FieldsMatchModel) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 20000; ++round) {
    const size_t len = 1 + rng() % 20;
    std::string s = RandomBytes(rng, len, 1);
    const unsigned width = 1 + rng() % 64;
    const uint64_t offset = rng() % (len * 8 + 16);  // may run past the end
    const std::vector<bool> bits = Bits(s);
    const uint64_t expected = ModelField(bits, offset, width);
    ASSERT_EQ(GetUnsignedField(U8(s), len, offset, width), expected);
    int64_t signed_expected = int64_t(expected);
    if (width < 64 && (expected >> (width - 1)) & 1) {
      signed_expected = int64_t(expected - (uint64_t{1} << width));  // two's complement
    }
    ASSERT_EQ(GetSignedField(U8(s), len, offset, width), signed_expected);

    if (offset + width > len * 8) continue;
    const uint64_t value = rng();
    SetField(reinterpret_cast<uint8_t*>(s.data()), offset, width, value);
    std::vector<bool> after = Bits(s);
    for (uint64_t i = 0; i < after.size(); ++i) {
      const bool inside = i >= offset && i < offset + width;
      const bool want = inside ? (value >> (width - 1 - (i - offset))) & 1 : bits[i];
      ASSERT_EQ(after[i], want) << "bit " << i << " width " << width << " offset " << offset;
    }
  }
}

TEST(BitopsTest, SignedOverflow) {
  int64_t r;
  EXPECT_TRUE(AddSigned(100, 27, 8, FieldOverflow::kWrap, &r));
  EXPECT_EQ(r, 127);
  EXPECT_FALSE(AddSigned(100, 28, 8, FieldOverflow::kWrap, &r));
  EXPECT_EQ(r, -128);
  EXPECT_FALSE(AddSigned(100, 28, 8, FieldOverflow::kSat, &r));
  EXPECT_EQ(r, 127);
  EXPECT_FALSE(AddSigned(-100, -29, 8, FieldOverflow::kSat, &r));
  EXPECT_EQ(r, -128);
  EXPECT_FALSE(AddSigned(-100, -29, 8, FieldOverflow::kWrap, &r));
  EXPECT_EQ(r, 127);
  EXPECT_FALSE(AddSigned(200, 0, 8, FieldOverflow::kWrap, &r));  // SET i8 200
  EXPECT_EQ(r, -56);
  EXPECT_FALSE(AddSigned(INT64_MAX, 1, 64, FieldOverflow::kWrap, &r));
  EXPECT_EQ(r, INT64_MIN);
  EXPECT_FALSE(AddSigned(INT64_MIN, -1, 64, FieldOverflow::kSat, &r));
  EXPECT_EQ(r, INT64_MIN);
  EXPECT_TRUE(AddSigned(INT64_MIN, INT64_MAX, 64, FieldOverflow::kFail, &r));
  EXPECT_EQ(r, -1);
  EXPECT_FALSE(AddSigned(0, 1, 1, FieldOverflow::kWrap, &r));  // i1 holds -1 and 0
  EXPECT_EQ(r, -1);
}

TEST(BitopsTest, UnsignedOverflow) {
  uint64_t r;
  EXPECT_TRUE(AddUnsigned(250, 5, 8, FieldOverflow::kWrap, &r));
  EXPECT_EQ(r, 255u);
  EXPECT_FALSE(AddUnsigned(250, 10, 8, FieldOverflow::kWrap, &r));
  EXPECT_EQ(r, 4u);
  EXPECT_FALSE(AddUnsigned(250, 10, 8, FieldOverflow::kSat, &r));
  EXPECT_EQ(r, 255u);
  EXPECT_FALSE(AddUnsigned(5, -10, 8, FieldOverflow::kSat, &r));
  EXPECT_EQ(r, 0u);
  EXPECT_FALSE(AddUnsigned(5, -10, 8, FieldOverflow::kWrap, &r));
  EXPECT_EQ(r, 251u);
  // SET u8 -5: the bits of -5 are far above 255.
  EXPECT_FALSE(AddUnsigned(uint64_t(-5), 0, 8, FieldOverflow::kSat, &r));
  EXPECT_EQ(r, 255u);
  EXPECT_FALSE(AddUnsigned(uint64_t(-5), 0, 8, FieldOverflow::kWrap, &r));
  EXPECT_EQ(r, 251u);
  EXPECT_FALSE(AddUnsigned(INT64_MAX, 1, 63, FieldOverflow::kWrap, &r));
  EXPECT_EQ(r, 0u);
}

TEST(BitopsTest, CombineMatchesModel) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 500; ++round) {
    const BitOp op = BitOp(rng() % 4);
    const size_t n = op == BitOp::kNot ? 1 : 1 + rng() % 4;
    std::vector<std::string> strings;
    size_t len = 0;
    for (size_t i = 0; i < n; ++i) {
      strings.push_back(RandomBytes(rng, rng() % 40, 1));
      len = std::max(len, strings.back().size());
    }
    std::string expected(len, '\0');
    for (size_t i = 0; i < len; ++i) {
      auto byte = [&](size_t s) -> uint8_t {
        return i < strings[s].size() ? uint8_t(strings[s][i]) : 0;
      };
      uint8_t v = byte(0);
      for (size_t s = 1; s < n; ++s) {
        v = op == BitOp::kAnd ? v & byte(s) : op == BitOp::kOr ? v | byte(s) : v ^ byte(s);
      }
      expected[i] = char(op == BitOp::kNot ? uint8_t(~v) : v);
    }
    std::vector<std::string_view> views(strings.begin(), strings.end());
    std::string out = "garbage";
    CombineBits(op, views, &out);
    ASSERT_EQ(out, expected) << int(op);
  }
}

}  // namespace
}  // namespace damselfly::core
