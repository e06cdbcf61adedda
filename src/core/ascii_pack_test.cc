#include "src/core/ascii_pack.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace damselfly::core {
namespace {

// Bit-by-bit reference: character i in bits [7i, 7i + 7) of a little-endian stream.
std::vector<uint8_t> ReferencePack(const std::string& text) {
  std::vector<uint8_t> out(PackedLen(text.size()), 0);
  for (size_t i = 0; i < text.size(); ++i) {
    for (unsigned bit = 0; bit < 7; ++bit) {
      if ((text[i] >> bit) & 1) out[(7 * i + bit) / 8] |= uint8_t(1u << ((7 * i + bit) % 8));
    }
  }
  return out;
}

void CheckEveryLength(bool portable) {
  ForceAsciiPackPortable(portable);
  std::mt19937 rng(7);
  for (size_t len = 0; len <= 300; ++len) {
    std::string text(len, '\0');
    for (char& c : text) c = char(rng() % 128);
    std::vector<uint8_t> packed(PackedLen(len) + 8, 0xee);  // canaries past the end
    AsciiPack(text.data(), len, packed.data());
    std::vector<uint8_t> expected = ReferencePack(text);
    ASSERT_TRUE(std::equal(expected.begin(), expected.end(), packed.begin())) << "len " << len;
    for (size_t i = PackedLen(len); i < packed.size(); ++i) ASSERT_EQ(packed[i], 0xee) << len;
    std::string back(len, '?');
    AsciiUnpack(packed.data(), len, back.data());
    ASSERT_EQ(back, text) << "len " << len;
  }
  ForceAsciiPackPortable(false);
}

TEST(AsciiPackTest, PortableMatchesReference) { CheckEveryLength(true); }

// On CPUs without fast pext/pdep this runs the portable path again.
TEST(AsciiPackTest, SelectedImplementationMatchesReference) {
  CheckEveryLength(false);
  std::printf("BMI2 path in use: %s\n", AsciiPackUsesBmi2() ? "yes" : "no");
}

}  // namespace
}  // namespace damselfly::core
