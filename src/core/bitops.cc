#include "src/core/bitops.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>

namespace damselfly::core {

namespace {

using u128 = unsigned __int128;
using i128 = __int128;

// Bits [from, 7] of a byte in Redis's numbering (bit 0 is the most significant).
uint8_t MaskFrom(unsigned from) { return uint8_t(0xFF >> from); }
// Bits [0, to] of a byte.
uint8_t MaskTo(unsigned to) { return uint8_t(0xFF << (7 - to)); }

uint64_t LoadWord(const uint8_t* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof(word));
  return word;
}

// The bulk of a count: four independent sums so the popcounts overlap. Compiled twice,
// with and without the POPCNT instruction (the build targets baseline x86-64, whose
// popcount is a dozen instructions), and chosen once at start-up.
template <typename Popcount>
uint64_t CountBytesLoop(const uint8_t* p, size_t len, Popcount popcount) {
  uint64_t sums[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 32 <= len; i += 32) {
    sums[0] += popcount(LoadWord(p + i));
    sums[1] += popcount(LoadWord(p + i + 8));
    sums[2] += popcount(LoadWord(p + i + 16));
    sums[3] += popcount(LoadWord(p + i + 24));
  }
  for (; i + 8 <= len; i += 8) sums[0] += popcount(LoadWord(p + i));
  for (; i < len; ++i) sums[1] += popcount(p[i]);
  return sums[0] + sums[1] + sums[2] + sums[3];
}

__attribute__((target("popcnt"))) uint64_t CountBytesPopcnt(const uint8_t* p, size_t len) {
  return CountBytesLoop(p, len, [](uint64_t w) { return uint64_t(__builtin_popcountll(w)); });
}

uint64_t CountBytesPortable(const uint8_t* p, size_t len) {
  return CountBytesLoop(p, len, [](uint64_t w) { return uint64_t(__builtin_popcountll(w)); });
}

using CountBytesFn = uint64_t (*)(const uint8_t*, size_t);
const CountBytesFn count_bytes =
    __builtin_cpu_supports("popcnt") ? CountBytesPopcnt : CountBytesPortable;

// The first byte of p[0, len) that is not `skip` (0x00 when looking for a set bit, 0xFF
// for a clear one), or len. Whole words are compared first.
size_t SkipBytes(const uint8_t* p, size_t len, uint8_t skip) {
  const uint64_t skip_word = skip ? ~uint64_t{0} : 0;
  size_t i = 0;
  while (i + 8 <= len && LoadWord(p + i) == skip_word) i += 8;
  while (i < len && p[i] == skip) ++i;
  return i;
}

// Position (0..7, from the most significant bit) of the first bit equal to `bit` among
// those of `mask` in `byte`, or -1.
int FirstBitInByte(uint8_t byte, uint8_t mask, bool bit) {
  const unsigned candidates = (bit ? byte : uint8_t(~byte)) & mask;
  if (candidates == 0) return -1;
  return __builtin_clz(candidates) - 24;
}

}  // namespace

uint64_t CountBits(const uint8_t* data, size_t len, uint64_t first_bit, uint64_t last_bit) {
  DCHECK_LE(first_bit, last_bit);
  DCHECK_LT(last_bit >> 3, len);
  const size_t first_byte = first_bit >> 3, last_byte = last_bit >> 3;
  const uint8_t first_mask = MaskFrom(first_bit & 7), last_mask = MaskTo(last_bit & 7);
  if (first_byte == last_byte) {
    return __builtin_popcount(data[first_byte] & first_mask & last_mask);
  }
  return __builtin_popcount(data[first_byte] & first_mask) +
         __builtin_popcount(data[last_byte] & last_mask) +
         count_bytes(data + first_byte + 1, last_byte - first_byte - 1);
}

int64_t FindBit(const uint8_t* data, size_t len, bool bit, uint64_t first_bit, uint64_t last_bit) {
  DCHECK_LE(first_bit, last_bit);
  DCHECK_LT(last_bit >> 3, len);
  const size_t first_byte = first_bit >> 3, last_byte = last_bit >> 3;
  const uint8_t first_mask = MaskFrom(first_bit & 7), last_mask = MaskTo(last_bit & 7);
  if (first_byte == last_byte) {
    const int pos = FirstBitInByte(data[first_byte], first_mask & last_mask, bit);
    return pos < 0 ? -1 : int64_t(first_byte) * 8 + pos;
  }
  int pos = FirstBitInByte(data[first_byte], first_mask, bit);
  if (pos >= 0) return int64_t(first_byte) * 8 + pos;
  const size_t middle = first_byte + 1;
  const size_t found = middle + SkipBytes(data + middle, last_byte - middle, bit ? 0x00 : 0xFF);
  if (found < last_byte) return int64_t(found) * 8 + FirstBitInByte(data[found], 0xFF, bit);
  pos = FirstBitInByte(data[last_byte], last_mask, bit);
  return pos < 0 ? -1 : int64_t(last_byte) * 8 + pos;
}

bool GetBit(const uint8_t* data, size_t len, uint64_t offset) {
  const uint64_t byte = offset >> 3;
  if (byte >= len) return false;
  return data[byte] & (0x80 >> (offset & 7));
}

bool SetBit(uint8_t* data, uint64_t offset, bool bit) {
  uint8_t& byte = data[offset >> 3];
  const uint8_t mask = 0x80 >> (offset & 7);
  const bool old = byte & mask;
  byte = bit ? (byte | mask) : (byte & ~mask);
  return old;
}

uint64_t GetUnsignedField(const uint8_t* data, size_t len, uint64_t offset, unsigned bits) {
  DCHECK(bits >= 1 && bits <= 64);
  // A field of up to 64 bits spans at most 9 bytes: gather them into a 128-bit window,
  // most significant first, zeros past the end of the string.
  const uint64_t first_byte = offset >> 3;
  const unsigned shift_in = offset & 7;
  const unsigned span = (shift_in + bits + 7) / 8;
  u128 window = 0;
  for (unsigned i = 0; i < span; ++i) {
    const uint64_t at = first_byte + i;
    window = (window << 8) | (at < len ? data[at] : 0);
  }
  const unsigned trailing = span * 8 - shift_in - bits;
  const uint64_t field = uint64_t(window >> trailing);
  return bits == 64 ? field : field & ((uint64_t{1} << bits) - 1);
}

int64_t GetSignedField(const uint8_t* data, size_t len, uint64_t offset, unsigned bits) {
  const uint64_t field = GetUnsignedField(data, len, offset, bits);
  if (bits == 64) return int64_t(field);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return int64_t((field ^ sign) - sign);  // sign-extends without a shift of a negative
}

void SetField(uint8_t* data, uint64_t offset, unsigned bits, uint64_t value) {
  DCHECK(bits >= 1 && bits <= 64);
  const uint64_t first_byte = offset >> 3;
  const unsigned shift_in = offset & 7;
  const unsigned span = (shift_in + bits + 7) / 8;
  const unsigned trailing = span * 8 - shift_in - bits;
  const u128 field_mask = (u128{1} << bits) - 1;
  const u128 mask = field_mask << trailing;
  const u128 placed = (value & field_mask) << trailing;
  for (unsigned i = 0; i < span; ++i) {
    const unsigned down = (span - 1 - i) * 8;
    const uint8_t byte_mask = uint8_t(mask >> down);
    data[first_byte + i] = uint8_t((data[first_byte + i] & ~byte_mask) | uint8_t(placed >> down));
  }
}

bool AddSigned(int64_t value, int64_t incr, unsigned bits, FieldOverflow mode, int64_t* result) {
  DCHECK(bits >= 1 && bits <= 64);
  const i128 max = (i128{1} << (bits - 1)) - 1, min = -max - 1;
  const i128 sum = i128{value} + incr;
  if (sum >= min && sum <= max) {
    *result = int64_t(sum);
    return true;
  }
  if (mode == FieldOverflow::kSat) {
    *result = int64_t(sum > max ? max : min);
  } else {
    // The low `bits` bits of the sum, sign-extended: arithmetic modulo 2^bits.
    const uint64_t low = uint64_t(sum);
    if (bits == 64) {
      *result = int64_t(low);
    } else {
      const uint64_t sign = uint64_t{1} << (bits - 1), field = low & ((sign << 1) - 1);
      *result = int64_t((field ^ sign) - sign);
    }
  }
  return false;
}

bool AddUnsigned(uint64_t value, int64_t incr, unsigned bits, FieldOverflow mode,
                 uint64_t* result) {
  DCHECK(bits >= 1 && bits <= 63);
  const uint64_t max = (uint64_t{1} << bits) - 1;
  const i128 sum = i128{value} + incr;
  if (sum >= 0 && sum <= i128{max}) {
    *result = uint64_t(sum);
    return true;
  }
  if (mode == FieldOverflow::kSat) {
    *result = sum > 0 ? max : 0;
  } else {
    *result = uint64_t(sum) & max;
  }
  return false;
}

void CombineBits(BitOp op, const std::vector<std::string_view>& sources, std::string* out) {
  DCHECK(!sources.empty());
  DCHECK(op != BitOp::kNot || sources.size() == 1);
  size_t len = 0;
  for (std::string_view source : sources) len = std::max(len, source.size());
  out->assign(len, '\0');
  if (len == 0) return;
  auto* dst = reinterpret_cast<uint8_t*>(out->data());
  const auto* first = reinterpret_cast<const uint8_t*>(sources[0].data());
  if (op == BitOp::kNot) {
    for (size_t i = 0; i < len; ++i) dst[i] = ~first[i];
    return;
  }
  std::memcpy(dst, first, sources[0].size());
  // The first source's missing tail is already zero; for AND, a shorter later source
  // clears the bytes past its end.
  for (size_t s = 1; s < sources.size(); ++s) {
    const auto* src = reinterpret_cast<const uint8_t*>(sources[s].data());
    const size_t n = sources[s].size();
    switch (op) {
      case BitOp::kAnd:
        for (size_t i = 0; i < n; ++i) dst[i] &= src[i];
        std::memset(dst + n, 0, len - n);
        break;
      case BitOp::kOr:
        for (size_t i = 0; i < n; ++i) dst[i] |= src[i];
        break;
      case BitOp::kXor:
        for (size_t i = 0; i < n; ++i) dst[i] ^= src[i];
        break;
      case BitOp::kNot:
        break;
    }
  }
}

}  // namespace damselfly::core
