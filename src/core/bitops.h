// Bit arithmetic on byte strings for the bitmap commands (SETBIT, BITCOUNT, BITPOS, BITOP,
// BITFIELD): counting and finding bits in a range, reading and writing bit fields, the
// overflow rules of BITFIELD, and combining strings bytewise.
//
// Bit numbering is Redis's: bit 0 is the most significant bit of byte 0, bit 8 the most
// significant of byte 1, so a bitmap reads left to right as it prints. A bit field of
// `bits` bits at `offset` is the big-endian number made of bits [offset, offset + bits).
//
// Why word at a time: a 1 MiB bitmap is 8 Mi bits; BITCOUNT over it runs at memory speed
// with 64-bit popcounts (the compiler's POPCNT where the CPU has it), BITPOS skips whole
// words that cannot hold the bit looked for. The edges of a bit range are masked bytes.
//
// Thread-safety: pure functions on caller-owned memory; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace damselfly::core {

// Returns the number of set bits among bits [first_bit, last_bit] of data[0, len).
// REQUIRES: first_bit <= last_bit < len * 8.
uint64_t CountBits(const uint8_t* data, size_t len, uint64_t first_bit, uint64_t last_bit);

// Returns the position of the first bit equal to `bit` among bits [first_bit, last_bit]
// of data[0, len), or -1 when there is none. REQUIRES: first_bit <= last_bit < len * 8.
int64_t FindBit(const uint8_t* data, size_t len, bool bit, uint64_t first_bit, uint64_t last_bit);

// Returns the bit at `offset`; bits past the end of data[0, len) read as 0.
bool GetBit(const uint8_t* data, size_t len, uint64_t offset);

// Sets the bit at `offset` to `bit` and returns its old value. REQUIRES: offset < len * 8
// for the data[0, len) the caller owns.
bool SetBit(uint8_t* data, uint64_t offset, bool bit);

// Returns the unsigned field of `bits` (1..64) bits at `offset`; bits past the end of
// data[0, len) read as 0.
uint64_t GetUnsignedField(const uint8_t* data, size_t len, uint64_t offset, unsigned bits);

// Returns the signed (two's complement) field of `bits` (1..64) bits at `offset`, as
// GetUnsignedField sign-extended.
int64_t GetSignedField(const uint8_t* data, size_t len, uint64_t offset, unsigned bits);

// Writes the low `bits` (1..64) bits of `value` into the field at `offset`.
// REQUIRES: offset + bits <= len * 8 for the data[0, len) the caller owns.
void SetField(uint8_t* data, uint64_t offset, unsigned bits, uint64_t value);

// BITFIELD's OVERFLOW modes: wrap around modulo 2^bits, saturate at the type's minimum or
// maximum, or fail (leave the field and reply nil).
enum class FieldOverflow : uint8_t { kWrap, kSat, kFail };

// The value a field of the given type takes for `value + incr` (INCRBY) or `value` with
// incr = 0 (SET), as BITFIELD computes it. Returns false when the result does not fit the
// type; *result is then the wrapped or saturated value (unused for kFail). For unsigned
// types, `value` is the bits of the stored or given number as uint64 (SET u8 with -1 is
// 2^64 - 1: too large, so SAT gives 255, as Redis does).
// REQUIRES: 1 <= bits <= 64 (signed), 1 <= bits <= 63 (unsigned).
bool AddSigned(int64_t value, int64_t incr, unsigned bits, FieldOverflow mode, int64_t* result);
bool AddUnsigned(uint64_t value, int64_t incr, unsigned bits, FieldOverflow mode, uint64_t* result);

// BITOP's operations.
enum class BitOp : uint8_t { kAnd, kOr, kXor, kNot };

// Replaces *out with `op` over `sources`, bytewise, as long as the longest source; shorter
// sources read as zero bytes past their end (so AND with a shorter source clears the
// tail). kNot takes exactly one source. An empty result means every source was empty.
void CombineBits(BitOp op, const std::vector<std::string_view>& sources, std::string* out);

}  // namespace damselfly::core
