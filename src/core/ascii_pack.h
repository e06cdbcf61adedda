// 7-bit packing of ASCII text: every byte below 0x80 wastes its top bit, so 8 characters
// fit in 7 bytes. Group of 8 characters -> a 56-bit little-endian word, character i in
// bits [7i, 7i + 7), stored as 7 bytes; a last group of r < 8 characters takes
// PackedLen(r) bytes with its unused high bits zero, so the packed form is canonical.
//
// Two implementations, chosen once per process: BMI2 pext/pdep (one instruction per 8
// characters) where the CPU runs them in hardware, and a portable shift-and-mask one
// (AMD before Zen 3 microcodes pext/pdep at hundreds of cycles each).
//
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

namespace damselfly::core {

constexpr size_t PackedLen(size_t chars) { return (7 * chars + 7) / 8; }

// Packs the `len` ASCII characters at `src` into PackedLen(len) bytes at `dst`.
// REQUIRES: every byte of src[0, len) < 0x80.
void AsciiPack(const char* src, size_t len, uint8_t* dst);

// Unpacks `len` characters packed at `src` into dst[0, len).
void AsciiUnpack(const uint8_t* src, size_t len, char* dst);

// Whether the BMI2 implementation is in use. ForceAsciiPackPortable (tests) switches
// to the portable one; not thread-safe against concurrent packing.
bool AsciiPackUsesBmi2();
void ForceAsciiPackPortable(bool portable);

}  // namespace damselfly::core
