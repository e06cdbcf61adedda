// The packing loops of ascii_pack.h, templated on the group transform. Included by
// ascii_pack.cc (portable) and ascii_pack_bmi2.cc (compiled with -mbmi2), so everything
// here has internal linkage: a copy compiled with BMI2 must never be shared with, and
// picked by the linker for, code that runs on CPUs without it.
#pragma once

#include <cstdint>
#include <cstring>

#include "src/core/ascii_pack.h"

namespace damselfly::core {
namespace {  // NOLINT: internal linkage on purpose, see above

// Shift-and-mask: 8 bytes -> 4 x 14 bits -> 2 x 28 bits -> 56 bits, and back.
struct PortableGroups {
  static uint64_t Pack(uint64_t chars) {
    chars = (chars & 0x007f007f007f007fULL) | ((chars & 0x7f007f007f007f00ULL) >> 1);
    chars = (chars & 0x00003fff00003fffULL) | ((chars & 0x3fff00003fff0000ULL) >> 2);
    return (chars & 0x000000000fffffffULL) | ((chars & 0x0fffffff00000000ULL) >> 4);
  }
  // Bits 56-63 of `packed` are ignored.
  static uint64_t Unpack(uint64_t packed) {
    packed = (packed & 0x000000000fffffffULL) | ((packed & 0x00fffffff0000000ULL) << 4);
    packed = (packed & 0x00003fff00003fffULL) | ((packed & 0x0fffc0000fffc000ULL) << 2);
    return (packed & 0x007f007f007f007fULL) | ((packed & 0x3f803f803f803f80ULL) << 1);
  }
};

template <typename Groups>
void PackLoop(const char* src, size_t len, uint8_t* dst) {
  const uint8_t* const end = dst + PackedLen(len);
  for (; len >= 8; len -= 8, src += 8, dst += 7) {
    uint64_t word;
    std::memcpy(&word, src, 8);
    word = Groups::Pack(word);
    // One 8-byte store where the block has room: its zero 8th byte is overwritten by
    // the next group.
    std::memcpy(dst, &word, end - dst >= 8 ? 8 : 7);
  }
  if (len > 0) {
    uint64_t word = 0;
    std::memcpy(&word, src, len);
    word = Groups::Pack(word);
    std::memcpy(dst, &word, end - dst);
  }
}

// Calls visit(chars, count) for each group of the `len` characters packed at `src`, in
// order; `chars` holds `count` characters (8, fewer for the last group) in its low bytes
// and zeros above. Stops at the first visit that returns false; returns whether none did.
template <typename Groups, typename Visit>
bool VisitPackedLoop(const uint8_t* src, size_t len, Visit visit) {
  const uint8_t* const end = src + PackedLen(len);
  for (; len >= 8; len -= 8, src += 7) {
    uint64_t word = 0;
    // One 8-byte load where the block has room; Unpack ignores the extra byte.
    std::memcpy(&word, src, end - src >= 8 ? 8 : 7);
    if (!visit(Groups::Unpack(word), 8)) return false;
  }
  if (len > 0) {
    uint64_t word = 0;
    std::memcpy(&word, src, end - src);
    return visit(Groups::Unpack(word), len);
  }
  return true;
}

template <typename Groups>
void UnpackLoop(const uint8_t* src, size_t len, char* dst) {
  VisitPackedLoop<Groups>(src, len, [&dst](uint64_t chars, size_t count) {
    std::memcpy(dst, &chars, count);
    dst += count;
    return true;
  });
}

}  // namespace
}  // namespace damselfly::core
