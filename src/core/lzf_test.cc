#include "src/core/lzf.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "src/core/lzf_image.h"

namespace damselfly::core {
namespace {

using std::string;

// Worst case of the stream: one control byte per 32 literals.
size_t Bound(size_t len) { return len + len / 32 + 1; }

string Compress(const string& in, size_t capacity) {
  string out(capacity, '\0');
  out.resize(LzfCompress(in.data(), in.size(), out.data(), capacity));
  return out;
}

// Compresses with room for the worst case and checks the stream decompresses back.
string RoundTrip(const string& in) {
  const string packed = Compress(in, Bound(in.size()));
  if (!in.empty()) {
    EXPECT_FALSE(packed.empty()) << "the worst-case bound must always fit";
  }
  string back(in.size(), '\x55');
  EXPECT_TRUE(LzfDecompress(packed.data(), packed.size(), back.data(), back.size()));
  EXPECT_EQ(back, in);
  return packed;
}

string RandomBytes(std::mt19937_64& rng, size_t len, int alphabet) {
  string s(len, '\0');
  for (char& c : s) c = static_cast<char>(rng() % alphabet);
  return s;
}

// Random bytes after a repeat ("abcabc"), so that the compressor does not give up on them
// (see GivesUpOnInputWithoutRepeatsInItsFirst64Bytes) and must encode them all.
string RandomAfterRepeat(std::mt19937_64& rng, size_t len, int alphabet) {
  return ("abcabc" + RandomBytes(rng, len, alphabet)).substr(0, len);
}

TEST(LzfTest, DecompressesStreamsRedisWrote) {
  // The LZF payloads of `DUMP key` from redis-server 7.0 (rdbcompression yes).
  struct Case {
    string hex;
    string plain;
  };
  const string text =
      "the quick brown fox jumps over the lazy dog; the quick brown fox jumps again and "
      "again ";
  const Case cases[] = {
      {"01616" "1e0570001616" "1", string(100, 'a')},
      {"1f74686520717569636b2062726f776e20666f78206a756d7073206f7665722074201e086c617a79"
       "20646f673b600de00d2c08616761696e20616e64a0094037e00d29e08956016e20",
       text + text + text},
      {"0876616c75653a343200e0ff00e0ff00e0ff00e0d4000100" "00",
       "value:42" + string(1016, '\0')},
  };
  for (const Case& c : cases) {
    const string stream = absl::HexStringToBytes(c.hex);
    string out(c.plain.size(), '\0');
    ASSERT_TRUE(LzfDecompress(stream.data(), stream.size(), out.data(), out.size()));
    EXPECT_EQ(out, c.plain);
  }
}

TEST(LzfTest, RoundTripsShapesAndLengths) {
  std::mt19937_64 rng(7);
  for (size_t len : {0, 1, 2, 3, 4, 5, 8, 31, 32, 33, 63, 64, 65, 263, 264, 265, 266, 1000,
                     1024, 4096, 8191, 8192, 8193, 8194, 20000, 70000}) {
    SCOPED_TRACE(len);
    RoundTrip(string(len, '\0'));
    RoundTrip(string(len, 'x'));
    for (int alphabet : {2, 4, 26, 256}) RoundTrip(RandomAfterRepeat(rng, len, alphabet));
    for (size_t period : {2, 3, 7, 8, 9, 100, 8191, 8192, 8193}) {
      string periodic = RandomAfterRepeat(rng, std::min(len, period), 256);
      while (periodic.size() < len) periodic += periodic.substr(0, len - periodic.size());
      RoundTrip(periodic);
    }
  }
}

TEST(LzfTest, CompressesRepetitionAndKeepsRandomDataNearItsSize) {
  EXPECT_LE(RoundTrip("value:42" + string(1016, '\0')).size(), 30u);
  EXPECT_LE(RoundTrip(string(256, 'x')).size(), 8u);
  std::mt19937_64 rng(1);
  const string noise = RandomAfterRepeat(rng, 1024, 256);
  EXPECT_LE(RoundTrip(noise).size(), Bound(noise.size()));
  // A reference reaches at most 8192 bytes back: a repeat 8192 bytes away is found,
  // one 8193 bytes away is not.
  const string block = RandomBytes(rng, 300, 256);
  const string near = "abcabc" + block + RandomBytes(rng, 8192 - 300, 256) + block;
  const string far = "abcabc" + block + RandomBytes(rng, 8193 - 300, 256) + block;
  EXPECT_LT(RoundTrip(near).size(), RoundTrip(far).size() - 250);
}

TEST(LzfTest, OutputIsAFunctionOfTheInput) {
  std::mt19937_64 rng(3);
  const string text = RandomBytes(rng, 3000, 4);
  const string first = RoundTrip(text);
  // Different inputs in between leave stale entries in the thread's hash table.
  RoundTrip(RandomBytes(rng, 70000, 3));
  RoundTrip(string(5000, 'a'));
  EXPECT_EQ(RoundTrip(text), first);
}

TEST(LzfTest, StopsWhenTheCapacityIsTooSmall) {
  std::mt19937_64 rng(5);
  for (const string& in : {RandomAfterRepeat(rng, 1024, 256), RandomBytes(rng, 1024, 3),
                           string(1024, 'z')}) {
    const string full = Compress(in, Bound(in.size()));
    ASSERT_FALSE(full.empty());
    EXPECT_EQ(Compress(in, full.size()), full);
    for (size_t capacity = 0; capacity < full.size(); ++capacity) {
      string out(capacity + 16, '\x77');
      EXPECT_EQ(LzfCompress(in.data(), in.size(), out.data(), capacity), 0u);
      EXPECT_EQ(out.substr(capacity), string(16, '\x77')) << "wrote past the capacity";
    }
  }
}

TEST(LzfTest, GivesUpOnInputWithoutRepeatsInItsFirst64Bytes) {
  std::mt19937_64 rng(9);
  const string noise = RandomBytes(rng, 100, 256);
  const string zeros(2000, '\0');
  // A repeat found within the first 64 bytes keeps the compressor going...
  EXPECT_LT(Compress(noise.substr(0, 58) + zeros, 4000).size(), 100u);
  // ...none in them, and it gives up however well the rest would compress.
  EXPECT_EQ(Compress(noise + zeros, 4000), "");
  // Inputs too short to reach the 64th byte's probe are compressed whatever they hold.
  EXPECT_FALSE(Compress(noise.substr(0, 50) + string(14, 'z'), 100).empty());
}

TEST(LzfTest, RejectsMalformedStreams) {
  const string plain = "abcabcabcabcabcabcabc" + string(300, 'q');
  const string stream = RoundTrip(plain);
  string out(plain.size(), '\0');
  // Every truncation is an error (the stream no longer yields the whole output).
  for (size_t cut = 0; cut < stream.size(); ++cut) {
    EXPECT_FALSE(LzfDecompress(stream.data(), cut, out.data(), out.size())) << cut;
  }
  // An output size other than the true one is an error.
  string longer(plain.size() + 1, '\0');
  EXPECT_FALSE(LzfDecompress(stream.data(), stream.size(), longer.data(), longer.size()));
  EXPECT_FALSE(LzfDecompress(stream.data(), stream.size(), out.data(), out.size() - 1));
  // A reference before the start of the output.
  const string before_start = absl::HexStringToBytes("0061" "2001");
  EXPECT_FALSE(LzfDecompress(before_start.data(), before_start.size(), out.data(), 4));
  // A literal run longer than what is left of the stream.
  const string short_literal = absl::HexStringToBytes("0561");
  EXPECT_FALSE(LzfDecompress(short_literal.data(), short_literal.size(), out.data(), 6));
}

// Random streams must never make the decoder read or write out of bounds (run under
// AddressSanitizer in CI); the buffers are exact-size heap blocks for that reason.
TEST(LzfTest, RandomStreamsStayInBounds) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    const size_t in_len = rng() % 64;
    const size_t out_len = rng() % 300;
    std::vector<uint8_t> in(in_len);
    for (uint8_t& b : in) b = static_cast<uint8_t>(rng());
    std::vector<uint8_t> out(out_len);
    LzfDecompress(in.data(), in.size(), out.data(), out.size());
  }
}

TEST(LzfImageTest, KeepsBytesThatCompressAndRefusesWhatDoesNotPay) {
  const std::string repetitive(4000, 'a');
  uint8_t* image = MakeLzfImage(repetitive);
  ASSERT_NE(image, nullptr);
  EXPECT_EQ(LzfImageRawSize(image), 4000u);
  EXPECT_LT(LzfImageStream(image).size(), 100u);
  EXPECT_EQ(DecompressLzfImage(image), repetitive);
  // The stream is the RDB_ENC_LZF string's: it decompresses on its own.
  std::string out(4000, 0);
  const std::string_view stream = LzfImageStream(image);
  EXPECT_TRUE(LzfDecompress(stream.data(), stream.size(), out.data(), out.size()));
  EXPECT_EQ(out, repetitive);
  FreeLzfImage(image);

  EXPECT_EQ(MakeLzfImage(std::string(47, 'a')), nullptr);  // under 48 bytes
  std::mt19937_64 random(1);
  std::string noise(4000, 0);
  for (char& c : noise) c = char(random());
  EXPECT_EQ(MakeLzfImage(noise), nullptr);  // would not save 8 bytes
}

}  // namespace
}  // namespace damselfly::core
