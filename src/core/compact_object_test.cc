#include "src/core/compact_object.h"

#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "src/core/lzf.h"
#include "src/core/obj_malloc.h"

namespace damselfly::core {
namespace {

using std::string;
using std::string_view;

constexpr size_t kMiB = 1 << 20;

// The reference for everything below: Redis's string2ll accepts exactly the strings that
// are the decimal form of some int64.
bool IsCanonicalInt(string_view text) {
  if (text.empty() || text.size() > 20) return false;
  int64_t value;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && std::to_string(value) == text;
}

bool IsAscii(string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// Usable size of a block of `len` bytes: what MallocUsed() must report for it.
size_t BlockCost(size_t len) {
  void* probe = ObjMalloc(len);
  size_t usable = ObjUsableSize(probe);
  ObjFree(probe);
  return usable;
}

// Whether the tests run with compression (the default); see the tests that switch it.
bool compression_on = true;

// The stored form the header promises for `text`, and the bytes of its heap block.
enum class Form { kInt, kInlineRaw, kInlinePacked, kHeapLzf, kHeapPacked, kHeapRaw };

std::pair<Form, size_t> ExpectedFormAndBlock(string_view text) {
  const size_t len = text.size();
  if (IsCanonicalInt(text)) return {Form::kInt, 0};
  if (len <= 14) return {Form::kInlineRaw, 0};
  if (IsAscii(text) && len <= 16) return {Form::kInlinePacked, 0};
  const size_t packed_len = (7 * len + 7) / 8;
  const bool packed = IsAscii(text) && len <= 4096 && BlockCost(packed_len) < BlockCost(len);
  const size_t block_len = packed ? packed_len : len;
  if (compression_on && len >= 512 && len <= 65536) {
    string stream(block_len, '\0');
    const size_t stream_len = LzfCompress(text.data(), len, stream.data(), block_len - 1);
    if (stream_len > 0 && BlockCost(stream_len) < BlockCost(block_len)) {
      return {Form::kHeapLzf, stream_len};
    }
  }
  return {packed ? Form::kHeapPacked : Form::kHeapRaw, block_len};
}


// Checks every observable property of `obj` against the string it should hold.
void ExpectHolds(const CompactObj& obj, string_view text) {
  SCOPED_TRACE(testing::Message() << "length " << text.size());
  const auto [form, block_len] = ExpectedFormAndBlock(text);
  ASSERT_EQ(obj.Size(), text.size());

  string scratch = "sentinel";
  string_view slice = obj.GetSlice(&scratch);
  ASSERT_EQ(slice, text);
  const bool decoded = form == Form::kInt || form == Form::kInlinePacked ||
                       form == Form::kHeapPacked || form == Form::kHeapLzf;
  if (decoded) {
    EXPECT_EQ(slice.data(), scratch.data()) << "decoded forms go through the scratch";
  } else {
    EXPECT_EQ(scratch, "sentinel") << "raw forms must not touch the scratch";
  }
  string appended = "prefix:";
  obj.AppendTo(&appended);
  ASSERT_EQ(appended, "prefix:" + string(text));
  obj.PrefetchHeap();  // a hint only: the content must not change
  ASSERT_EQ(obj.GetSlice(&scratch), text);
  if (form == Form::kInlineRaw) {
    const char* self = reinterpret_cast<const char*>(&obj);
    EXPECT_TRUE(slice.data() >= self && slice.data() + slice.size() <= self + sizeof(obj));
  }

  string out = "previous content";
  obj.GetString(&out);
  EXPECT_EQ(out, text);
  EXPECT_TRUE(obj == text);
  EXPECT_EQ(obj.Hash(), HashKey(text));

  const bool inline_form =
      form == Form::kInt || form == Form::kInlineRaw || form == Form::kInlinePacked;
  EXPECT_EQ(obj.IsInline(), inline_form);
  EXPECT_EQ(obj.MallocUsed(), inline_form ? 0 : BlockCost(block_len));

  if (form == Form::kInt) {
    ASSERT_TRUE(obj.TryGetInt().has_value());
    EXPECT_EQ(std::to_string(*obj.TryGetInt()), text);
    EXPECT_STREQ(obj.RedisEncodingName(), "int");
  } else {
    EXPECT_FALSE(obj.TryGetInt().has_value());
    EXPECT_STREQ(obj.RedisEncodingName(), text.size() <= 44 ? "embstr" : "raw");
  }
}

// Creates `text` in a fresh object, checks it, and checks that a copy and the memory
// accounting agree.
void RoundTrip(string_view text) {
  const size_t baseline = ThreadObjHeapUsedBytes();
  {
    CompactObj obj(text);
    ExpectHolds(obj, text);
    EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + obj.MallocUsed());
    CompactObj copy = obj.Clone();
    ExpectHolds(copy, text);
    EXPECT_TRUE(copy == obj);
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline);
}

// A pseudo-random 64-bit word for position i of a string of `len` (splitmix64).
uint64_t Noise(size_t i, size_t len) {
  uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ULL ^ len * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Pseudo-random letters: ASCII that packs but does not compress (LZF finds too few
// repeats in it to save a size class), so these strings test packing alone.
string AsciiText(size_t len) {
  string text(len, ' ');
  for (size_t i = 0; i < len; ++i) text[i] = static_cast<char>('a' + Noise(i, len) % 26);
  return text;
}

// Pseudo-random bytes of all 256 values: neither packs nor compresses.
string BinaryText(size_t len) {
  string text(len, '\0');
  for (size_t i = 0; i < len; ++i) text[i] = static_cast<char>(Noise(i, len));
  return text;
}

// JSON records that differ in their numbers: text that LZF compresses about 3 to 1.
string JsonText(size_t len) {
  string text;
  for (size_t i = 0; text.size() < len; ++i) {
    text += "{\"id\":" + std::to_string(Noise(i, len) % 100000) + ",\"name\":\"user" +
            std::to_string(Noise(i, len + 1) % 1000) + "\",\"active\":true},";
  }
  text.resize(len);
  return text;
}

TEST(CompactObjTest, IsSixteenBytes) {
  static_assert(sizeof(CompactObj) == 16);
  EXPECT_EQ(alignof(CompactObj), 8u);
}

TEST(CompactObjTest, DefaultIsEmptyString) {
  CompactObj obj;
  ExpectHolds(obj, "");
  EXPECT_FALSE(obj.HasExpire());
  EXPECT_FALSE(obj.HasMcFlags());
  EXPECT_TRUE(obj == CompactObj(""));
}

TEST(CompactObjTest, RoundTripsEveryLength) {
  for (size_t len = 0; len <= 300; ++len) {
    RoundTrip(AsciiText(len));
    RoundTrip(BinaryText(len));
    RoundTrip(string(len, '7'));  // "7", "77", ...: ints up to 18 digits, strings beyond
    RoundTrip(string(len, '\0'));
  }
  for (size_t len : {1023u, 1024u, 1025u, 4095u, 4096u, 4097u, 65536u}) {
    RoundTrip(AsciiText(len));
    RoundTrip(BinaryText(len));
  }
  RoundTrip(AsciiText(kMiB));
  RoundTrip(BinaryText(kMiB));
}

TEST(CompactObjTest, InlineBoundaries) {
  EXPECT_TRUE(CompactObj(BinaryText(14)).IsInline());
  EXPECT_FALSE(CompactObj(BinaryText(15)).IsInline());
  for (size_t len : {14u, 15u, 16u}) EXPECT_TRUE(CompactObj(AsciiText(len)).IsInline());
  CompactObj seventeen(AsciiText(17));
  EXPECT_FALSE(seventeen.IsInline());
  EXPECT_EQ(seventeen.MallocUsed(), BlockCost(15));  // 17 * 7 bits in 15 bytes
  for (size_t len : {14u, 15u, 16u, 17u}) {
    ExpectHolds(CompactObj(AsciiText(len)), AsciiText(len));
    ExpectHolds(CompactObj(BinaryText(len)), BinaryText(len));
  }
}

TEST(CompactObjTest, PackedBoundaryCharacters) {
  // The extremes of the 7-bit range at every position of a group and of the tail.
  for (size_t len : {15u, 16u, 17u, 23u, 24u, 25u, 4096u}) {
    ExpectHolds(CompactObj(string(len, '\x7f')), string(len, '\x7f'));
    string text(len, '\x7f');
    for (size_t i = 0; i < len; i += 3) text[i] = '\x01';
    ExpectHolds(CompactObj(text), text);
  }
}

TEST(CompactObjTest, HighBytesAreNeverPacked) {
  for (size_t len : {15u, 16u, 17u, 100u, 1024u}) {
    for (unsigned char high : {0x80, 0xc3, 0xff}) {
      for (size_t pos : {size_t{0}, len / 2, len - 1}) {
        string text = AsciiText(len);
        text[pos] = static_cast<char>(high);
        CompactObj obj(text);
        EXPECT_EQ(obj.MallocUsed(), BlockCost(len)) << "a raw block of exactly len bytes";
        ExpectHolds(obj, text);
      }
    }
  }
}

TEST(CompactObjTest, ControlBytesPackLosslessly) {
  // NUL, CR and LF are below 0x80, so they pack like letters and must come back intact.
  for (string text : {string("\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n"), string(16, '\0'),
                      string("GET key\r\n\0tail with NUL and \r\n", 31), string(300, '\n')}) {
    ExpectHolds(CompactObj(text), text);
  }
}

TEST(CompactObjTest, BinaryValueCostsItsExactSize) {
  const size_t baseline = ThreadObjHeapUsedBytes();
  CompactObj value(BinaryText(1024));
  EXPECT_EQ(value.MallocUsed(), 1024u);
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + 1024);
  value.SetString(AsciiText(1024));
  EXPECT_EQ(value.MallocUsed(), 896u) << "1024 ASCII characters pack into 896 bytes";
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + 896);
}

TEST(CompactObjTest, CanonicalIntegers) {
  const std::vector<string> ints = {"0",
                                    "1",
                                    "-1",
                                    "9",
                                    "10",
                                    "-10",
                                    "12345678901234",
                                    "123456789012345678",
                                    "1234567890123456789",
                                    "9223372036854775807",
                                    "-9223372036854775808",
                                    "-9223372036854775807"};
  for (const string& text : ints) {
    CompactObj obj(text);
    ExpectHolds(obj, text);
    EXPECT_TRUE(obj.IsInline());
    CompactObj from_int;
    from_int.SetInt(*obj.TryGetInt());
    EXPECT_TRUE(from_int == obj);
  }
  CompactObj min;
  min.SetInt(std::numeric_limits<int64_t>::min());
  ExpectHolds(min, "-9223372036854775808");
  CompactObj max;
  max.SetInt(std::numeric_limits<int64_t>::max());
  ExpectHolds(max, "9223372036854775807");
}

TEST(CompactObjTest, NonCanonicalNumbersStayStrings) {
  for (string text : {"007", "00", "-0", "+1", "-", "", " 1", "1 ", "1a", "0x10", "1.0", "1e3",
                      "-007", "--1", "9223372036854775808", "-9223372036854775809",
                      "99999999999999999999", "18446744073709551616", "100000000000000000000",
                      "-99999999999999999999", "000000000000000000001", "123456789012345678901"}) {
    SCOPED_TRACE(text);
    CompactObj obj(text);
    EXPECT_FALSE(obj.TryGetInt().has_value());
    ExpectHolds(obj, text);
  }
}

TEST(CompactObjTest, EqualityAcrossEncodings) {
  std::vector<string> corpus = {"", "0", "1", "-1", "12", "007", "7", "a", "abcdefghijklmn",
                                "abcdefghijklmo", "abcdefghijklmno", "abcdefghijklmnp",
                                "abcdefghijklmnop", "abcdefghijklmnopq", "bbcdefghijklmnopq",
                                "abcdefghijklmnopr", "9223372036854775807", "9223372036854775808"};
  for (size_t len : {14u, 15u, 16u, 17u, 64u, 4096u, 4097u}) {
    corpus.push_back(AsciiText(len));
    corpus.push_back(BinaryText(len));
    string last_differs = AsciiText(len);
    last_differs.back() ^= 1;
    corpus.push_back(last_differs);
    string high_last = AsciiText(len);
    high_last.back() = '\x80';
    corpus.push_back(high_last);
  }
  for (size_t len : {512u, 1024u, 4096u}) {  // compressed, with the same stream lengths
    for (size_t pos : {size_t{0}, len / 2, len - 1}) {
      string changed = JsonText(len);
      changed[pos] = changed[pos] == '1' ? '2' : '1';
      corpus.push_back(changed);
    }
    corpus.push_back(JsonText(len));
    corpus.push_back(string(len, 'x'));
  }
  for (const string& a : corpus) {
    CompactObj obj_a(a);
    for (const string& b : corpus) {
      CompactObj obj_b(b);
      EXPECT_EQ(obj_a == obj_b, a == b) << a.size() << " vs " << b.size();
      EXPECT_EQ(obj_a == string_view(b), a == b) << a.size() << " vs " << b.size();
      if (a == b) {
        EXPECT_EQ(obj_a.Hash(), obj_b.Hash());
      }
    }
  }
}

TEST(CompactObjTest, HashMatchesHashKey) {
  EXPECT_EQ(CompactObj().Hash(), HashKey(""));
  CompactObj obj;
  obj.SetInt(-42);
  EXPECT_EQ(obj.Hash(), HashKey("-42"));
  for (size_t len : {13u, 14u, 15u, 16u, 17u, 200u, 5000u}) {
    EXPECT_EQ(CompactObj(AsciiText(len)).Hash(), HashKey(AsciiText(len)));
    EXPECT_EQ(CompactObj(BinaryText(len)).Hash(), HashKey(BinaryText(len)));
  }
  EXPECT_NE(HashKey("key:1"), HashKey("key:2"));
}

TEST(CompactObjTest, MovesTransferOwnership) {
  const size_t baseline = ThreadObjHeapUsedBytes();
  {
    CompactObj heap(BinaryText(500));
    heap.SetExpire(true);
    CompactObj moved(std::move(heap));
    ExpectHolds(moved, BinaryText(500));
    EXPECT_TRUE(moved.HasExpire());
    ExpectHolds(heap, "");  // NOLINT(bugprone-use-after-move): the documented state
    EXPECT_FALSE(heap.HasExpire());

    CompactObj target(AsciiText(300));
    target = std::move(moved);  // frees target's own block
    ExpectHolds(target, BinaryText(500));
    EXPECT_TRUE(target.HasExpire());
    EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + target.MallocUsed());

    CompactObj& alias = target;
    target = std::move(alias);
    ExpectHolds(target, BinaryText(500));

    std::vector<CompactObj> many;
    for (int i = 0; i < 100; ++i) many.emplace_back(BinaryText(100 + i));  // reallocates
    for (int i = 0; i < 100; ++i) ExpectHolds(many[i], BinaryText(100 + i));
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline);
}

TEST(CompactObjTest, FlagsSurviveSetString) {
  CompactObj obj;
  obj.SetExpire(true);
  obj.SetMcFlags(true);
  for (string text : {string("short"), string("42"), AsciiText(16), AsciiText(100),
                      BinaryText(100), BinaryText(5000), string("")}) {
    obj.SetString(text);
    ExpectHolds(obj, text);
    EXPECT_TRUE(obj.HasExpire());
    EXPECT_TRUE(obj.HasMcFlags());
  }
  obj.SetInt(7);
  EXPECT_TRUE(obj.HasExpire());
  EXPECT_TRUE(obj.HasMcFlags());
  obj.SetExpire(false);
  EXPECT_FALSE(obj.HasExpire());
  EXPECT_TRUE(obj.HasMcFlags());
  obj.SetMcFlags(false);
  EXPECT_FALSE(obj.HasMcFlags());
  ExpectHolds(obj, "7");
  EXPECT_TRUE(obj.Clone() == obj);
}

TEST(CompactObjTest, RedisEncodingNames) {
  EXPECT_STREQ(CompactObj("12345").RedisEncodingName(), "int");
  EXPECT_STREQ(CompactObj("012345").RedisEncodingName(), "embstr");
  EXPECT_STREQ(CompactObj(AsciiText(44)).RedisEncodingName(), "embstr");
  EXPECT_STREQ(CompactObj(BinaryText(44)).RedisEncodingName(), "embstr");
  EXPECT_STREQ(CompactObj(AsciiText(45)).RedisEncodingName(), "raw");

  CompactObj appended("12");
  appended.MarkRaw(true);  // as after APPEND
  appended.SetExpire(true);
  EXPECT_STREQ(appended.RedisEncodingName(), "raw");
  EXPECT_STREQ(appended.Clone().RedisEncodingName(), "raw");
  appended.MarkRaw(false);
  EXPECT_STREQ(appended.RedisEncodingName(), "int");
  appended.MarkRaw(true);
  appended.SetString("ab");  // a plain SET forgets how the old value was built
  EXPECT_STREQ(appended.RedisEncodingName(), "embstr");
  EXPECT_TRUE(appended.HasExpire());
}

TEST(CompactObjTest, SetStringFromOwnContent) {
  const size_t baseline = ThreadObjHeapUsedBytes();
  {
    string scratch;
    CompactObj obj(BinaryText(300));
    obj.SetString(obj.GetSlice(&scratch));  // the very same block
    ExpectHolds(obj, BinaryText(300));
    obj.SetString(obj.GetSlice(&scratch).substr(1));  // a new block from the old one
    ExpectHolds(obj, BinaryText(300).substr(1));
    obj.SetString(obj.GetSlice(&scratch).substr(0, 10));  // inline from the old block
    ExpectHolds(obj, BinaryText(300).substr(1, 10));
    obj.SetString(obj.GetSlice(&scratch).substr(2));  // inline from the inline bytes
    ExpectHolds(obj, BinaryText(300).substr(3, 8));
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline);
}

TEST(CompactObjTest, SameSizeOverwriteKeepsAccounting) {
  const size_t baseline = ThreadObjHeapUsedBytes();
  CompactObj obj(BinaryText(1024));
  for (int i = 0; i < 10; ++i) {
    string text = BinaryText(1024);
    text[i] = 'x';
    obj.SetString(text);
    ExpectHolds(obj, text);
    EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + 1024);
  }
  obj.SetString(AsciiText(1024));  // 896 packed bytes: a new block
  ExpectHolds(obj, AsciiText(1024));
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + 896);
  obj.SetString(BinaryText(896));  // a raw block of the same size as the packed one
  ExpectHolds(obj, BinaryText(896));
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + 896);
}

TEST(CompactObjTest, CompressesValuesThatRepeatThemselves) {
  const string padded = "value:42" + string(1016, '\0');  // DEBUG POPULATE's values
  CompactObj obj(padded);
  ExpectHolds(obj, padded);
  EXPECT_LE(obj.MallocUsed(), 32u);
  obj.SetString(JsonText(1024));
  ExpectHolds(obj, JsonText(1024));
  EXPECT_LE(obj.MallocUsed(), 512u) << "instead of 896 packed";
  obj.SetString(string(512, 'x'));
  ExpectHolds(obj, string(512, 'x'));
  EXPECT_LE(obj.MallocUsed(), 8u);
}

TEST(CompactObjTest, CompressionLengthBounds) {
  // 511 repeated characters pack (448 bytes); 512 compress.
  EXPECT_EQ(CompactObj(string(511, 'x')).MallocUsed(), BlockCost(448));
  EXPECT_LE(CompactObj(string(512, 'x')).MallocUsed(), 8u);
  EXPECT_LE(CompactObj(string(65536, 'x')).MallocUsed(), 1024u);
  EXPECT_EQ(CompactObj(string(65537, 'x')).MallocUsed(), BlockCost(65537));
  for (size_t len : {511u, 512u, 65536u, 65537u}) RoundTrip(JsonText(len));
}

// Strings from incompressible to repetitive: each is stored compressed exactly when the
// stream saves a size class, which the model in ExpectedFormAndBlock computes.
TEST(CompactObjTest, CompressedOnlyWhenItSavesASizeClass) {
  size_t compressed = 0, not_compressed = 0;
  for (size_t len : {512u, 600u, 1024u, 5000u}) {
    for (size_t repeated = 0; repeated <= len; repeated += len / 32) {
      for (const string& noise : {AsciiText(len - repeated), BinaryText(len - repeated)}) {
        for (const string& text : {string(repeated, 'r') + noise, noise + string(repeated, 'r')}) {
          RoundTrip(text);
          (ExpectedFormAndBlock(text).first == Form::kHeapLzf ? compressed : not_compressed)++;
        }
      }
    }
  }
  EXPECT_GT(compressed, 50u);
  EXPECT_GT(not_compressed, 50u);
}

TEST(CompactObjTest, CompressionCanBeSwitchedOff) {
  // No object holds a heap string across the switch, as SetCompression requires.
  CompactObj::SetCompression(false);
  compression_on = false;
  {
    CompactObj obj(JsonText(1024));
    EXPECT_EQ(obj.MallocUsed(), 896u) << "packed, not compressed";
    ExpectHolds(obj, JsonText(1024));
    RoundTrip("value:42" + string(1016, '\0'));
  }
  CompactObj::SetCompression(true);
  compression_on = true;
  EXPECT_LT(CompactObj(JsonText(1024)).MallocUsed(), 896u);
}

TEST(CompactObjTest, CompressedOverwritesAndOwnContent) {
  const size_t baseline = ThreadObjHeapUsedBytes();
  {
    string scratch;
    CompactObj obj(JsonText(1024));
    for (size_t i = 0; i < 20; ++i) {
      string text = JsonText(1024);
      text[i * 37] = text[i * 37] == '1' ? '2' : '1';
      obj.SetString(text);
      ExpectHolds(obj, text);
      EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + obj.MallocUsed());
    }
    obj.SetString(JsonText(1024));
    obj.SetString(obj.GetSlice(&scratch));  // a view of the scratch the block decoded to
    ExpectHolds(obj, JsonText(1024));
    obj.SetString(obj.GetSlice(&scratch).substr(0, 700));
    ExpectHolds(obj, JsonText(1024).substr(0, 700));
    obj.SetString(BinaryText(700));  // a raw block after a compressed one
    ExpectHolds(obj, BinaryText(700));
    EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + obj.MallocUsed());
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline);
}

CompactObj::CompressionStats Plus(CompactObj::CompressionStats stats, const CompactObj& obj) {
  stats.strings += 1;
  stats.string_bytes += obj.Size();
  stats.block_bytes += obj.MallocUsed();
  return stats;
}

TEST(CompactObjTest, CompressionStatsFollowTheObjects) {
  const CompactObj::CompressionStats base = CompactObj::ThreadCompressionStats();
  {
    CompactObj obj(JsonText(1024));
    EXPECT_EQ(CompactObj::ThreadCompressionStats(), Plus(base, obj));
    CompactObj copy = obj.Clone();
    EXPECT_EQ(CompactObj::ThreadCompressionStats(), Plus(Plus(base, obj), copy));
    string changed = JsonText(1024);
    changed[500] = changed[500] == '1' ? '2' : '1';
    copy.SetString(changed);  // most likely reuses the block; counted either way
    EXPECT_EQ(CompactObj::ThreadCompressionStats(), Plus(Plus(base, obj), copy));
    copy.SetString(JsonText(3000));
    EXPECT_EQ(CompactObj::ThreadCompressionStats(), Plus(Plus(base, obj), copy));
    copy.SetString(BinaryText(1024));  // not compressed
    EXPECT_EQ(CompactObj::ThreadCompressionStats(), Plus(base, obj));
    CompactObj moved(std::move(obj));
    EXPECT_EQ(CompactObj::ThreadCompressionStats(), Plus(base, moved));
    moved.SetInt(7);
    EXPECT_EQ(CompactObj::ThreadCompressionStats(), base);
    moved.SetString("value:1" + string(1017, '\0'));
    EXPECT_EQ(CompactObj::ThreadCompressionStats(), Plus(base, moved));
  }
  EXPECT_EQ(CompactObj::ThreadCompressionStats(), base);
}

TEST(CompactObjTest, UncompressedStringsEqualCompressedOnes) {
  const string json = JsonText(1024);
  CompactObj compressed(json);
  CompactObj plain;
  plain.SetUncompressedString(json);
  EXPECT_EQ(plain.MallocUsed(), 896u) << "packed, not compressed";
  EXPECT_LT(compressed.MallocUsed(), 896u);
  string scratch;
  EXPECT_EQ(plain.GetSlice(&scratch), json);
  EXPECT_TRUE(plain == json);
  EXPECT_EQ(plain.Hash(), compressed.Hash());
  EXPECT_TRUE(plain == compressed);
  EXPECT_TRUE(compressed == plain);
  string changed = json;
  changed.back() = changed.back() == '1' ? '2' : '1';
  CompactObj other;
  other.SetUncompressedString(changed);
  EXPECT_FALSE(other == compressed);
  EXPECT_FALSE(compressed == other);
  other.SetUncompressedString(json + "x");  // another length
  EXPECT_FALSE(other == compressed);
  // Binary content is stored raw: equal to the compressed form of the same bytes too.
  const string runs = string(700, '\xff') + BinaryText(300);
  CompactObj runs_compressed(runs);
  CompactObj runs_raw;
  runs_raw.SetUncompressedString(runs);
  EXPECT_EQ(runs_raw.MallocUsed(), BlockCost(1000));
  EXPECT_LT(runs_compressed.MallocUsed(), BlockCost(1000));
  EXPECT_TRUE(runs_raw == runs_compressed);
  // Short strings are the same either way.
  plain.SetUncompressedString("short");
  EXPECT_TRUE(plain == CompactObj("short"));
  // SetString compresses again.
  plain.SetString(json);
  EXPECT_EQ(plain.MallocUsed(), compressed.MallocUsed());
}

TEST(CompactObjTest, WorksOnAThreadHeap) {
  std::thread shard([] {
    InitThreadObjHeap();
    {
      std::vector<CompactObj> values;
      for (size_t len = 0; len < 200; ++len) values.emplace_back(BinaryText(len * 10));
      size_t total = 0;
      for (const CompactObj& value : values) total += value.MallocUsed();
      EXPECT_EQ(ThreadObjHeapUsedBytes(), total);
    }
    EXPECT_EQ(ThreadObjHeapUsedBytes(), 0u);
    DestroyThreadObjHeap();
  });
  shard.join();
}

// Random strings from the shapes that matter: ints and near-ints, short and long ASCII,
// binary, and lengths at the boundaries.
string RandomText(std::mt19937_64& rng) {
  auto pick = [&rng](size_t n) { return static_cast<size_t>(rng() % n); };
  switch (pick(7)) {
    case 0:
      return std::to_string(static_cast<int64_t>(rng()) >> pick(64));
    case 1: {
      string digits(1 + pick(21), '0');
      for (char& c : digits) c = static_cast<char>('0' + pick(10));
      if (pick(3) == 0) digits.insert(digits.begin(), '-');
      return digits;
    }
    case 2: {
      static constexpr size_t kEdges[] = {13, 14, 15, 16, 17, 18, 23, 24, 25, 44, 45, 4096, 4097};
      string text(kEdges[pick(std::size(kEdges))], ' ');
      for (char& c : text) c = static_cast<char>(pick(0x80));
      return text;
    }
    case 3: {
      string text(pick(100), ' ');
      for (char& c : text) c = static_cast<char>(' ' + pick(95));
      return text;
    }
    case 4: {
      string text(pick(3000), ' ');
      for (char& c : text) c = static_cast<char>(pick(256));
      return text;
    }
    case 5: {  // compressible: runs, and repeated fragments from a small set
      static const string kFragments[] = {"{\"id\":", "\0\0\0\0", "\xff\xfe", "name", "7"};
      string text;
      const size_t len = pick(3) == 0 ? 512 : pick(70000);
      while (text.size() < len) text += kFragments[pick(std::size(kFragments))];
      text.resize(len);
      return text;
    }
    default: {
      string text(pick(6000), ' ');
      for (char& c : text) c = static_cast<char>(pick(0x80));
      return text;
    }
  }
}

TEST(CompactObjTest, RandomizedAgainstStdString) {
  std::mt19937_64 rng(20240607);
  constexpr size_t kSlots = 16;
  const size_t baseline = ThreadObjHeapUsedBytes();
  const CompactObj::CompressionStats compressed_base = CompactObj::ThreadCompressionStats();
  string scratch;
  {
    std::vector<CompactObj> objs(kSlots);
    std::vector<string> model(kSlots);
    for (int step = 0; step < 20000; ++step) {
      const size_t i = rng() % kSlots, j = rng() % kSlots;
      switch (rng() % 5) {
        case 0:
        case 1:
          model[i] = RandomText(rng);
          objs[i].SetString(model[i]);
          break;
        case 2: {
          const int64_t value = static_cast<int64_t>(rng());
          model[i] = std::to_string(value);
          objs[i].SetInt(value);
          break;
        }
        case 3:
          model[i] = model[j];
          objs[i] = objs[j].Clone();
          break;
        default:
          if (i != j) {
            model[i] = std::exchange(model[j], string());
            objs[i] = std::move(objs[j]);
          }
          break;
      }
      ASSERT_NO_FATAL_FAILURE(ExpectHolds(objs[i], model[i]));
      ASSERT_NO_FATAL_FAILURE(ExpectHolds(objs[j], model[j]));
      ASSERT_EQ(objs[i] == objs[j], model[i] == model[j]);
      ASSERT_EQ(objs[i] == string_view(model[j]), model[i] == model[j]);
    }
    size_t total = 0;
    CompactObj::CompressionStats compressed = compressed_base;
    for (const CompactObj& obj : objs) {
      total += obj.MallocUsed();
      if (ExpectedFormAndBlock(obj.GetSlice(&scratch)).first == Form::kHeapLzf) {
        compressed = Plus(compressed, obj);
      }
    }
    EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + total);
    EXPECT_EQ(CompactObj::ThreadCompressionStats(), compressed);
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline);
}

// A typed object that counts its live instances and owns a vector in the object heap.
class CountedObject : public TypedObject {
 public:
  static inline int live = 0;
  explicit CountedObject(size_t n) : items_(n, 7) { ++live; }
  ~CountedObject() override { --live; }
  size_t MallocUsed() const override {
    return ObjUsableSize(const_cast<CountedObject*>(this)) +
           (items_.empty() ? 0 : ObjUsableSize(const_cast<uint64_t*>(items_.data())));
  }
  void Serialize(std::string* out) const override { out->append(std::to_string(items_.size())); }

 private:
  std::vector<uint64_t, ObjAllocator<uint64_t>> items_;
};

TEST(CompactObjTest, OwnsTypedObjects) {
  const size_t baseline = ThreadObjHeapUsedBytes();
  {
    CompactObj obj("a string first");
    obj.SetExpire(true);
    obj.SetObject(3, 1, TypedObject::Make<CountedObject>(100));
    EXPECT_EQ(CountedObject::live, 1);
    EXPECT_TRUE(obj.IsObject());
    EXPECT_EQ(obj.ObjectType(), 3);
    EXPECT_EQ(obj.ObjectEncoding(), 1);
    EXPECT_TRUE(obj.HasExpire()) << "flags survive SetObject";
    EXPECT_GE(obj.MallocUsed(), sizeof(CountedObject) + 800);
    EXPECT_EQ(ThreadObjHeapUsedBytes() - baseline, obj.MallocUsed())
        << "the object and its container come from the object heap";
    obj.SetObjectEncoding(2);
    EXPECT_EQ(obj.ObjectEncoding(), 2);
    std::string form;
    obj.GetObject()->Serialize(&form);
    EXPECT_EQ(form, "100");

    CompactObj moved(std::move(obj));
    EXPECT_FALSE(obj.IsObject());
    EXPECT_EQ(obj.ObjectType(), 0);
    EXPECT_EQ(moved.ObjectType(), 3);
    EXPECT_EQ(CountedObject::live, 1);

    moved.SetObject(4, 0, TypedObject::Make<CountedObject>(1));  // replaces, frees the first
    EXPECT_EQ(CountedObject::live, 1);
    moved.SetString("back to a string");
    EXPECT_EQ(CountedObject::live, 0);
    EXPECT_FALSE(moved.IsObject());
    EXPECT_EQ(moved.GetObject(), nullptr);
    moved.SetObject(5, 0, TypedObject::Make<CountedObject>(10));
  }
  EXPECT_EQ(CountedObject::live, 0) << "the destructor frees the object";
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline);
}

// A bare block (SetBlock) is owned as a typed object is, with its capacity in the payload.
TEST(CompactObjTest, OwnsBareBlocks) {
  const size_t baseline = ThreadObjHeapUsedBytes();
  {
    CompactObj obj("a string first");
    obj.SetExpire(true);
    void* block = ObjMalloc(96);
    obj.SetBlock(4, 0, block, 96);
    EXPECT_TRUE(obj.IsObject());
    EXPECT_TRUE(obj.IsBlock());
    EXPECT_EQ(obj.GetObject(), nullptr) << "a block is not a TypedObject";
    EXPECT_EQ(obj.GetBlock(), block);
    EXPECT_EQ(obj.BlockCapacity(), 96u);
    EXPECT_EQ(obj.ObjectType(), 4);
    EXPECT_EQ(obj.ObjectEncoding(), 0);
    EXPECT_TRUE(obj.HasExpire()) << "flags survive SetBlock";
    EXPECT_EQ(obj.MallocUsed(), ObjUsableSize(block));
    EXPECT_EQ(ThreadObjHeapUsedBytes() - baseline, obj.MallocUsed());

    // The user grows the block: it frees the old one and records the new one.
    void* bigger = ObjMalloc(4000);
    ObjFree(block);
    obj.MoveBlock(bigger, 4000);
    EXPECT_EQ(obj.GetBlock(), bigger);
    EXPECT_EQ(obj.BlockCapacity(), 4000u);
    EXPECT_EQ(obj.ObjectType(), 4) << "a move keeps type and encoding";
    EXPECT_EQ(obj.ObjectEncoding(), 0);
    EXPECT_TRUE(obj.HasExpire());
    EXPECT_EQ(obj.MallocUsed(), ObjUsableSize(bigger));

    CompactObj moved(std::move(obj));
    EXPECT_FALSE(obj.IsObject());
    EXPECT_TRUE(moved.IsBlock());
    EXPECT_EQ(moved.GetBlock(), bigger);

    moved.SetObject(3, 1, TypedObject::Make<CountedObject>(1));  // frees the block
    EXPECT_FALSE(moved.IsBlock());
    EXPECT_EQ(moved.ObjectType(), 3);
    moved.SetBlock(4, 0, ObjMalloc(16), 16);  // frees the object
    EXPECT_EQ(CountedObject::live, 0);
    moved.SetString("back to a string");
    EXPECT_FALSE(moved.IsObject());
    moved.SetBlock(4, 0, ObjMalloc(200), 200);
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline) << "the destructor frees the block";
  {
    CompactObj obj;
    void* block = ObjMalloc(64);
    obj.SetBlock(4, 0, block, 64);
    obj.SetExpire(true);
    obj.ForgetBlock();  // a user took the block over
    EXPECT_FALSE(obj.IsObject());
    EXPECT_EQ(obj.Size(), 0u);
    EXPECT_TRUE(obj.HasExpire());
    ObjFree(block);  // the taker's to free, not the object's
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline);
}

// GetMutableBytes decodes every encoding once into plain bytes, grows with zeros, and the
// object keeps reading, comparing and hashing as the string it now holds.
TEST(CompactObjTest, MutableBytesFromEveryEncoding) {
  const size_t baseline = ThreadObjHeapUsedBytes();
  const std::vector<string> texts = {"",          "abc",          "12345",
                                     "-987654321012345678", AsciiText(16), AsciiText(100),
                                     BinaryText(100), JsonText(2000), string(4096, '\0')};
  for (const string& text : texts) {
    for (size_t grow : {size_t{0}, size_t{1}, size_t{13}, size_t{5000}}) {
      CompactObj obj(text);
      char* bytes = obj.GetMutableBytes(text.size() + grow);
      string expected = text + string(grow, '\0');
      ASSERT_EQ(string_view(bytes, obj.Size()), expected) << text.size() << "+" << grow;
      EXPECT_TRUE(obj.IsMarkedRaw());
      EXPECT_STREQ(obj.RedisEncodingName(), "raw");
      // Written in place: the next read sees the change.
      if (!expected.empty()) {
        bytes[0] = 'Z';
        expected[0] = 'Z';
      }
      string scratch;
      EXPECT_EQ(obj.GetSlice(&scratch), expected);
      EXPECT_TRUE(obj == expected);
      EXPECT_TRUE(obj == CompactObj(expected));
      EXPECT_TRUE(CompactObj(expected) == obj);
      EXPECT_EQ(obj.Hash(), HashKey(expected));
      CompactObj copy = obj.Clone();
      EXPECT_TRUE(copy == obj);
      EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline + obj.MallocUsed() + copy.MallocUsed());
    }
  }
  EXPECT_EQ(ThreadObjHeapUsedBytes(), baseline);
}

TEST(CompactObjTest, MutableDigitsStillReadAsInt) {
  CompactObj obj("123");
  obj.GetMutableBytes(3)[0] = '7';
  EXPECT_EQ(obj.TryGetInt(), 723);
  EXPECT_TRUE(obj == CompactObj("723"));
  obj.GetMutableBytes(3)[0] = '0';  // "023" is no canonical integer
  EXPECT_FALSE(obj.TryGetInt().has_value());
  obj.SetString("42");  // a new string is canonical again
  EXPECT_FALSE(obj.IsMarkedRaw());
  EXPECT_STREQ(obj.RedisEncodingName(), "int");
}

// A string grown one byte at a time is not copied per byte: the block doubles, so the
// number of distinct blocks over 64 KiB of growth is logarithmic.
TEST(CompactObjTest, MutableBytesGrowAmortised) {
  CompactObj obj;
  std::vector<const char*> blocks;
  for (size_t len = 1; len <= 65536; ++len) {
    char* bytes = obj.GetMutableBytes(len);
    ASSERT_EQ(bytes[len - 1], '\0');
    bytes[len - 1] = char(len);
    if (blocks.empty() || blocks.back() != bytes) blocks.push_back(bytes);
  }
  EXPECT_LT(blocks.size(), 30u);
  string scratch;
  const string_view view = obj.GetSlice(&scratch);
  ASSERT_EQ(view.size(), 65536u);
  for (size_t len = 1; len <= 65536; ++len) ASSERT_EQ(view[len - 1], char(len));
}

}  // namespace
}  // namespace damselfly::core
