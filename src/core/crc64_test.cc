#include "src/core/crc64.h"

#include <gtest/gtest.h>

#include <string>

namespace damselfly::core {
namespace {

TEST(Crc64Test, CheckValue) {
  // The standard check value of CRC-64/Jones as Redis's crc64.c computes it (its own
  // self-test uses the same input and value).
  EXPECT_EQ(Crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL);
  EXPECT_EQ(Crc64(0, ""), 0u);
}

TEST(Crc64Test, Incremental) {
  const std::string text = "This is a longer text that we check in two pieces, at every cut.";
  const uint64_t whole = Crc64(0, text);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    std::string_view view(text);
    EXPECT_EQ(Crc64(Crc64(0, view.substr(0, cut)), view.substr(cut)), whole) << cut;
  }
}

TEST(Crc64Test, CombineEqualsTheCrcOfTheConcatenation) {
  std::string data;
  for (int i = 0; i < 5000; ++i) data.push_back(char(i * 7919 % 251));
  for (size_t split : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(1000), data.size()}) {
    std::string_view a = std::string_view(data).substr(0, split);
    std::string_view b = std::string_view(data).substr(split);
    EXPECT_EQ(Crc64Combine(Crc64(0, a), Crc64(0, b), b.size()), Crc64(0, data)) << split;
  }
  // Three pieces, combined left to right.
  std::string_view all(data), a = all.substr(0, 100), b = all.substr(100, 2000),
                              c = all.substr(2100);
  uint64_t ab = Crc64Combine(Crc64(0, a), Crc64(0, b), b.size());
  EXPECT_EQ(Crc64Combine(ab, Crc64(0, c), c.size()), Crc64(0, data));
}

TEST(Crc64Test, RedisFunctionDump) {
  // FUNCTION DUMP from redis-server 7.0.15 of an empty function set is the version
  // (10, little endian) followed by the CRC64 of those two bytes.
  const std::string version("\x0a\x00", 2);
  const uint64_t crc = Crc64(0, version);
  std::string payload = version;
  for (int i = 0; i < 8; ++i) payload.push_back(char(crc >> (8 * i)));
  EXPECT_EQ(payload, std::string("\x0a\x00\x5d\x9b\x5c\x40\x0f\x7f\xa2\xda", 10));
}

}  // namespace
}  // namespace damselfly::core
