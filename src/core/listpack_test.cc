#include "src/core/listpack.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace damselfly::core {
namespace {

using std::string;

string Hex(std::string_view bytes) {
  return absl::BytesToHexString(absl::string_view(bytes.data(), bytes.size()));
}

string Repeat(const string& hex, int n) {
  string out;
  for (int i = 0; i < n; ++i) out += hex;
  return out;
}

Listpack Make(const std::vector<string>& values) {
  Listpack lp;
  for (const string& v : values) lp.Append(v);
  return lp;
}

std::vector<string> Elements(const Listpack& lp) {
  std::vector<string> out;
  for (Listpack::Pos p = lp.First(); p != Listpack::kNoPos; p = lp.Next(p)) {
    out.push_back(lp.Get(p).ToString());
  }
  return out;
}

TEST(ListpackTest, EmptyBytes) {
  Listpack lp;
  EXPECT_EQ(Hex(lp.bytes()), "070000000000ff");
  EXPECT_EQ(lp.Size(), 0u);
  EXPECT_TRUE(lp.Empty());
  EXPECT_EQ(lp.First(), Listpack::kNoPos);
  EXPECT_EQ(lp.Last(), Listpack::kNoPos);
  EXPECT_EQ(lp.Seek(0), Listpack::kNoPos);
  EXPECT_EQ(lp.Seek(-1), Listpack::kNoPos);
  EXPECT_TRUE(Listpack::Validate(lp.bytes()));
}

// The listpack of `HSET h a 1 b hello` as redis-server 7.0 DUMPs it (type 16, hash
// listpack; the RDB string length byte 0x16 precedes these 22 bytes).
TEST(ListpackTest, RedisSmallHash) {
  Listpack lp = Make({"a", "1", "b", "hello"});
  EXPECT_EQ(Hex(lp.bytes()), "16000000040081610201018162028568656c6c6f06ff");
}

// `HSET h2 -1 -4096 4095 32767 -32769 8388607 <63 x> 2147483648 -2147483648
// 9223372036854775807 -0 05`, DUMPed by redis-server 7.0 with rdbcompression off.
TEST(ListpackTest, RedisIntegerBoundaries) {
  Listpack lp = Make({"-1", "-4096", "4095", "32767", "-32769", "8388607", string(63, 'x'),
                      "2147483648", "-2147483648", "9223372036854775807", "-0", "05"});
  const string expected =
      "810000000c00dfff02d00002cfff02f1ff7f03f2ff7fff04f2ffff7f04bf" + Repeat("78", 63) +
      "40f4000000800000000009f30000008005f4ffffffffffffff7f09822d300382303503ff";
  EXPECT_EQ(Hex(lp.bytes()), expected);
  EXPECT_TRUE(Listpack::Validate(lp.bytes()));
  EXPECT_EQ(lp.Size(), 12u);
  EXPECT_EQ(Elements(lp), (std::vector<string>{"-1", "-4096", "4095", "32767", "-32769", "8388607",
                                               string(63, 'x'), "2147483648", "-2147483648",
                                               "9223372036854775807", "-0", "05"}));
}

// The single quicklist node of `RPUSH l2 <64 y> <200 z> -9223372036854775808 127 128
// -4097 -8388609` (type 18, quicklist 2, container PACKED), from redis-server 7.0.
TEST(ListpackTest, RedisListNode) {
  Listpack lp = Make({string(64, 'y'), string(200, 'z'), "-9223372036854775808", "127", "128",
                      "-4097", "-8388609"});
  const string expected = "2f0100000700e040" + Repeat("79", 64) + "42e0c8" + Repeat("7a", 200) +
                          "01caf40000000000000080097f01c08002f1ffef03f3ffff7fff05ff";
  EXPECT_EQ(Hex(lp.bytes()), expected);
}

// String length and backlen boundaries, computed from the format and checked against the
// single-element lists redis-server 7.0 DUMPs.
TEST(ListpackTest, StringEncodings) {
  {
    Listpack lp = Make({string(4095, 's')});
    // 2 + 4095 = 4097 bytes: backlen 4097 = 0b100000_0000001 -> 20 81.
    string h = Hex(lp.bytes());
    EXPECT_EQ(h.substr(0, 16), "0a1000000100efff");
    EXPECT_EQ(h.substr(h.size() - 6), "2081ff");
  }
  {
    Listpack lp = Make({string(4096, 's')});
    string h = Hex(lp.bytes());
    EXPECT_EQ(h.substr(0, 22), "0e1000000100f000100000");
    EXPECT_EQ(h.substr(h.size() - 6), "2085ff");  // 4101
  }
  {
    // 5 + 16378 = 16383 takes a 3-byte backlen: Redis's two-byte form stops at 16382.
    Listpack lp = Make({string(16378, 's')});
    string h = Hex(lp.bytes());
    EXPECT_EQ(h.substr(h.size() - 8), "00ffffff");  // 16383 = 0 | 127 | 127, then EOF
    EXPECT_EQ(lp.Get(lp.Last()).sval.size(), 16378u);
    EXPECT_TRUE(Listpack::Validate(lp.bytes()));
  }
  {
    Listpack lp = Make({""});
    EXPECT_EQ(Hex(lp.bytes()), "0900000001008001ff");
  }
}

TEST(ListpackTest, StringToInt) {
  int64_t v;
  EXPECT_TRUE(ListpackStringToInt64("0", &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(ListpackStringToInt64("-9223372036854775808", &v));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_TRUE(ListpackStringToInt64("9223372036854775807", &v));
  EXPECT_EQ(v, INT64_MAX);
  for (const char* s : {"", "-", "-0", "00", "01", "+1", " 1", "1 ", "1a", "9223372036854775808",
                        "-9223372036854775809", "18446744073709551616", "1.0"}) {
    EXPECT_FALSE(ListpackStringToInt64(s, &v)) << s;
  }
}

TEST(ListpackTest, SeekFindAndRanges) {
  Listpack lp = Make({"f1", "v1", "f2", "10", "10", "v3"});
  EXPECT_EQ(lp.Get(lp.Seek(0)).ToString(), "f1");
  EXPECT_EQ(lp.Get(lp.Seek(-1)).ToString(), "v3");
  EXPECT_EQ(lp.Get(lp.Seek(-6)).ToString(), "f1");
  EXPECT_EQ(lp.Seek(6), Listpack::kNoPos);
  EXPECT_EQ(lp.Seek(-7), Listpack::kNoPos);
  Listpack::Value v = lp.Get(lp.Seek(3));
  EXPECT_TRUE(v.is_int);
  EXPECT_EQ(v.ival, 10);
  EXPECT_TRUE(v.Equals("10"));
  EXPECT_FALSE(v.Equals("010"));

  // Field lookup in field/value pairs: "10" is a value at index 3, a field at index 4.
  Listpack::Pos p = lp.Find(lp.First(), "10", 1);
  ASSERT_NE(p, Listpack::kNoPos);
  EXPECT_EQ(p, lp.Seek(4));
  EXPECT_EQ(lp.Find(lp.First(), "10", 0), lp.Seek(3));
  EXPECT_EQ(lp.Find(lp.First(), "v1", 1), Listpack::kNoPos);
  EXPECT_EQ(lp.Find(lp.First(), "010", 0), Listpack::kNoPos);
  EXPECT_EQ(lp.Find(Listpack::kNoPos, "f1", 0), Listpack::kNoPos);

  EXPECT_EQ(lp.DeleteRange(1, 2), 2u);
  EXPECT_EQ(Elements(lp), (std::vector<string>{"f1", "10", "10", "v3"}));
  EXPECT_EQ(lp.DeleteRange(-2, 100), 2u);
  EXPECT_EQ(Elements(lp), (std::vector<string>{"f1", "10"}));
  EXPECT_EQ(lp.DeleteRange(5, 1), 0u);
  EXPECT_EQ(lp.Size(), 2u);
  EXPECT_TRUE(Listpack::Validate(lp.bytes()));
}

TEST(ListpackTest, CountSaturates) {
  Listpack lp;
  for (int i = 0; i < 65536; ++i) lp.Append("1");
  EXPECT_EQ(lp.bytes().substr(4, 2), string("\xff\xff", 2));
  EXPECT_EQ(lp.Size(), 65536u);
  EXPECT_TRUE(Listpack::Validate(lp.bytes()));
  EXPECT_NE(lp.Seek(65535), Listpack::kNoPos);
  EXPECT_EQ(lp.Seek(65536), Listpack::kNoPos);
  EXPECT_NE(lp.Seek(-65536), Listpack::kNoPos);
  EXPECT_EQ(lp.Seek(-65537), Listpack::kNoPos);
  lp.Delete(lp.First());
  EXPECT_EQ(lp.bytes().substr(4, 2), string("\xff\xff", 2));  // 65535 is still "unknown"
  lp.Delete(lp.First());
  EXPECT_EQ(lp.bytes().substr(4, 2), string("\xfe\xff", 2));
  EXPECT_EQ(lp.Size(), 65534u);
}

// Values at every encoding boundary, as strings.
std::vector<string> BoundaryValues() {
  std::vector<string> v;
  for (int64_t x : {int64_t{0},         int64_t{127},           int64_t{128},
                    int64_t{-1},        int64_t{4095},          int64_t{4096},
                    int64_t{-4096},     int64_t{-4097},         int64_t{32767},
                    int64_t{32768},     int64_t{-32768},        int64_t{-32769},
                    int64_t{8388607},   int64_t{8388608},       int64_t{-8388608},
                    int64_t{-8388609},  int64_t{INT32_MAX},     int64_t{INT32_MAX} + 1,
                    int64_t{INT32_MIN}, int64_t{INT32_MIN} - 1, INT64_MAX,
                    INT64_MIN}) {
    v.push_back(absl::StrCat(x));
  }
  for (size_t len : {0, 1, 63, 64, 125, 126, 127, 4095, 4096, 16378, 16379}) {
    v.push_back(string(len, 'a' + len % 26));
  }
  for (const char* s : {"-0", "007", "+3", "9223372036854775808", "1e3"}) v.push_back(s);
  return v;
}

void CheckSame(const Listpack& lp, const std::deque<string>& model) {
  ASSERT_EQ(lp.Size(), model.size());
  size_t i = 0;
  for (Listpack::Pos p = lp.First(); p != Listpack::kNoPos; p = lp.Next(p), ++i) {
    ASSERT_LT(i, model.size());
    ASSERT_EQ(lp.Get(p).ToString(), model[i]) << "forward at " << i;
  }
  ASSERT_EQ(i, model.size());
  for (Listpack::Pos p = lp.Last(); p != Listpack::kNoPos; p = lp.Prev(p)) {
    ASSERT_GT(i, 0u);
    --i;
    ASSERT_EQ(lp.Get(p).ToString(), model[i]) << "backward at " << i;
  }
  ASSERT_EQ(i, 0u);
  ASSERT_TRUE(Listpack::Validate(lp.bytes()));
}

TEST(ListpackTest, RandomAgainstDeque) {
  const std::vector<string> values = BoundaryValues();
  std::mt19937_64 rng(7);
  auto rnd = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  Listpack lp;
  std::deque<string> model;
  for (int step = 0; step < 3000; ++step) {
    const string& v = values[rnd(values.size())];
    int op = rnd(model.empty() ? 2 : 7);
    SCOPED_TRACE(absl::StrCat("step ", step, " op ", op));
    if (op == 0) {
      lp.Append(v);
      model.push_back(v);
    } else if (op == 1) {
      lp.Prepend(v);
      model.push_front(v);
    } else if (op == 2) {
      size_t i = rnd(model.size());
      bool after = rnd(2);
      Listpack::Pos p =
          lp.Insert(lp.Seek(i), v, after ? Listpack::Where::kAfter : Listpack::Where::kBefore);
      size_t at = i + after;
      model.insert(model.begin() + at, v);
      ASSERT_EQ(p, lp.Seek(at));
    } else if (op == 3) {
      size_t i = rnd(model.size());
      lp.Replace(lp.Seek(-static_cast<int64_t>(model.size() - i)), v);
      model[i] = v;
    } else if (op == 4) {
      size_t i = rnd(model.size());
      Listpack::Pos next = lp.Delete(lp.Seek(i));
      model.erase(model.begin() + i);
      ASSERT_EQ(next, i < model.size() ? lp.Seek(i) : Listpack::kNoPos);
    } else if (op == 5) {
      size_t i = rnd(model.size());
      size_t n = rnd(4);
      size_t deleted = lp.DeleteRange(i, n);
      size_t expect = n == 0 ? 0 : std::min(n, model.size() - i);
      ASSERT_EQ(deleted, expect);
      model.erase(model.begin() + i, model.begin() + i + expect);
    } else {
      // Find from a random start with skip 1 agrees with a scan of the model.
      size_t start = rnd(model.size());
      size_t expect = model.size();
      for (size_t j = start; j < model.size(); j += 2) {
        if (model[j] == v) {
          expect = j;
          break;
        }
      }
      Listpack::Pos p = lp.Find(lp.Seek(start), v, 1);
      ASSERT_EQ(p, expect == model.size() ? Listpack::kNoPos : lp.Seek(expect));
    }
    if (model.size() > 60) {
      lp.DeleteRange(0, 30);
      model.erase(model.begin(), model.begin() + 30);
    }
    CheckSame(lp, model);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(ListpackTest, MoveAndFromBytes) {
  Listpack a = Make({"x", "12345"});
  Listpack b = std::move(a);
  Listpack c = Listpack::FromBytes(b.bytes());
  EXPECT_EQ(c.bytes(), b.bytes());
  c.Append("y");
  EXPECT_EQ(Elements(c), (std::vector<string>{"x", "12345", "y"}));
  a = std::move(c);
  EXPECT_EQ(a.Size(), 3u);
}

TEST(ListpackTest, ValidateRejects) {
  auto bytes = [](const string& hex) { return absl::HexStringToBytes(hex); };
  EXPECT_TRUE(Listpack::Validate(bytes("070000000000ff")));
  EXPECT_FALSE(Listpack::Validate(""));
  EXPECT_FALSE(Listpack::Validate(bytes("060000000000")));
  EXPECT_FALSE(Listpack::Validate(bytes("080000000000ffff")));  // total mismatch
  EXPECT_FALSE(Listpack::Validate(bytes("070000000000fe")));    // no terminator
  EXPECT_TRUE(Listpack::Validate(bytes("0900000001000101ff")));
  EXPECT_FALSE(Listpack::Validate(bytes("0900000002000101ff")));    // count
  EXPECT_FALSE(Listpack::Validate(bytes("0900000001000102ff")));    // backlen
  EXPECT_FALSE(Listpack::Validate(bytes("090000000100f501ff")));    // encoding
  EXPECT_FALSE(Listpack::Validate(bytes("0900000001008101ff")));    // string runs out
  EXPECT_FALSE(Listpack::Validate(bytes("0a0000000100f0ffffff")));  // length runs out
  EXPECT_FALSE(Listpack::Validate(bytes("080000000100ffff")));      // EOF inside
  // A two-byte backlen whose high byte has the continuation bit: Redis's decoder would
  // read on into the entry; we require the canonical bytes.
  const string body = "e0c8" + Repeat("00", 200);
  EXPECT_TRUE(Listpack::Validate(bytes("d30000000100" + body + "01caff")));
  EXPECT_FALSE(Listpack::Validate(bytes("d30000000100" + body + "81caff")));
  // 65535 accepts any count (Redis keeps it after deletions).
  EXPECT_TRUE(Listpack::Validate(bytes("09000000ffff0101ff")));
}

// Every single-byte change, and random multi-byte corruptions and truncations, of valid
// listpacks: Validate must answer without reading outside the blob (ASAN checks this,
// since each blob is copied into an exactly sized heap buffer), and whatever it accepts
// must be safe to walk both ways.
TEST(ListpackTest, ValidateFuzz) {
  std::mt19937_64 rng(11);
  const std::vector<string> values = BoundaryValues();
  std::vector<string> seeds;
  for (int i = 0; i < 8; ++i) {
    Listpack lp;
    int n = 1 + rng() % 6;
    for (int j = 0; j < n; ++j) {
      const string& v = values[rng() % values.size()];
      lp.Append(v.size() > 300 ? v.substr(0, 300) : v);
    }
    seeds.emplace_back(lp.bytes());
  }
  auto check = [](const string& blob) {
    char* heap = new char[blob.size()];
    std::copy(blob.begin(), blob.end(), heap);
    std::string_view view(heap, blob.size());
    if (Listpack::Validate(view)) {
      Listpack lp = Listpack::FromBytes(view);
      size_t forward = 0, backward = 0;
      for (Listpack::Pos p = lp.First(); p != Listpack::kNoPos; p = lp.Next(p)) {
        lp.Get(p).ToString();
        ++forward;
      }
      for (Listpack::Pos p = lp.Last(); p != Listpack::kNoPos; p = lp.Prev(p)) ++backward;
      EXPECT_EQ(forward, backward);
    }
    delete[] heap;
  };
  size_t accepted_changes = 0;
  for (const string& seed : seeds) {
    for (size_t i = 0; i < seed.size(); ++i) {
      for (int b = 0; b < 256; b += (seed.size() > 100 ? 37 : 1)) {
        string blob = seed;
        blob[i] = static_cast<char>(b);
        if (blob != seed && Listpack::Validate(blob)) ++accepted_changes;
        check(blob);
      }
    }
    for (int k = 0; k < 2000; ++k) {
      string blob = seed;
      int flips = 1 + rng() % 4;
      for (int f = 0; f < flips; ++f) blob[rng() % blob.size()] = static_cast<char>(rng());
      if (rng() % 4 == 0) blob.resize(rng() % blob.size());
      check(blob);
    }
  }
  // Some single-byte changes stay valid (a string's content byte), most do not.
  EXPECT_GT(accepted_changes, 0u);
}

}  // namespace
}  // namespace damselfly::core
