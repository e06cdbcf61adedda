#include "src/core/lzf.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace damselfly::core {
namespace {

constexpr size_t kMaxLiteralRun = 32;
constexpr size_t kMinMatch = 3;
constexpr size_t kMaxMatch = 7 + 255 + 2;
constexpr size_t kMaxDistance = 8192;
constexpr size_t kMissesPerStep = 32;
constexpr size_t kNoRepeatWindow = 64;

// The hash table maps a 3-byte prefix to the last position it was seen at: each entry is
// (call << 32) | (position + 1), `call` numbering this thread's calls from 1. An entry
// written by another call counts as empty, so the output depends on the input alone
// without clearing the table on every call (clearing 4 KiB cost as much as a failed
// attempt on 1 KiB of random bytes). A call uses the first 2^8..2^13 entries, half an
// entry per input byte.
constexpr int kMinHashBits = 8;
constexpr int kMaxHashBits = 13;
thread_local uint64_t hash_table[1 << kMaxHashBits];
thread_local uint64_t calls = 0;

// The 3 bytes at p, from a 4-byte load. REQUIRES: p[3] is readable.
uint32_t Load24(const uint8_t* p) {
  uint32_t word;
  std::memcpy(&word, p, 4);
  return word & 0xffffff;
}

uint32_t HashOf(uint32_t prefix, int bits) { return (prefix * 2654435761u) >> (32 - bits); }

// Length of the common prefix of a and b, at most `limit`; 8 bytes at a time.
size_t MatchLength(const uint8_t* a, const uint8_t* b, size_t limit) {
  size_t n = 0;
  for (; n + 8 <= limit; n += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + n, 8);
    std::memcpy(&y, b + n, 8);
    if (x != y) return n + std::countr_zero(x ^ y) / 8;
  }
  while (n < limit && a[n] == b[n]) ++n;
  return n;
}

class Writer {
 public:
  Writer(uint8_t* dst, size_t capacity) : out_(dst), end_(dst + capacity) {}

  // Each returns false when the output would pass the capacity.
  bool Literals(const uint8_t* from, size_t count) {
    while (count > 0) {
      const size_t run = std::min(count, kMaxLiteralRun);
      if (static_cast<size_t>(end_ - out_) < run + 1) return false;
      *out_++ = static_cast<uint8_t>(run - 1);
      std::memcpy(out_, from, run);
      out_ += run;
      from += run;
      count -= run;
    }
    return true;
  }

  // REQUIRES: kMinMatch <= length <= kMaxMatch, 1 <= distance <= kMaxDistance.
  bool Reference(size_t length, size_t distance) {
    const size_t n = length - 2;
    const size_t d = distance - 1;
    if (static_cast<size_t>(end_ - out_) < (n >= 7 ? 3u : 2u)) return false;
    if (n < 7) {
      *out_++ = static_cast<uint8_t>(n << 5 | d >> 8);
    } else {
      *out_++ = static_cast<uint8_t>(7 << 5 | d >> 8);
      *out_++ = static_cast<uint8_t>(n - 7);
    }
    *out_++ = static_cast<uint8_t>(d & 0xff);
    return true;
  }

  uint8_t* position() const { return out_; }

 private:
  uint8_t* out_;
  uint8_t* const end_;
};

}  // namespace

size_t LzfCompress(const void* src, size_t len, void* dst, size_t capacity) {
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  const int bits = std::clamp(static_cast<int>(std::bit_width(len)) - 1, kMinHashBits,
                              kMaxHashBits);
  const uint64_t call = ++calls << 32;

  Writer writer(out, capacity);
  size_t literal_start = 0;
  size_t pos = 0;
  // The step to the next probe is misses / 32: 1 for the first 32 probes after a match,
  // 2 for the next 32, and so on. Data that keeps missing is probed ever more sparsely,
  // so incompressible input costs a fraction of a probe per byte; a match restarts the
  // dense probing.
  size_t misses = kMissesPerStep;
  // Matches start before the last 3 bytes (which the 4-byte loads need to read).
  while (pos + kMinMatch < len) {
    const uint32_t prefix = Load24(in + pos);
    uint64_t& slot = hash_table[HashOf(prefix, bits)];
    const size_t candidate = (slot >> 32 << 32) == call ? slot - call : 0;  // position + 1
    slot = call | (pos + 1);
    const size_t ref = candidate - 1;
    const size_t length =
        candidate == 0 || pos - ref > kMaxDistance || Load24(in + ref) != prefix
            ? 0
            : kMinMatch + MatchLength(in + ref + kMinMatch, in + pos + kMinMatch,
                                      std::min(kMaxMatch, len - pos) - kMinMatch);
    if (length < kMinMatch) {
      if (literal_start == 0 && pos >= kNoRepeatWindow) return 0;
      pos += misses++ / kMissesPerStep;
      continue;
    }
    misses = kMissesPerStep;
    if (!writer.Literals(in + literal_start, pos - literal_start)) return 0;
    if (!writer.Reference(length, pos - ref)) return 0;
    pos += length;
    literal_start = pos;
    // Index the match's last position, so that a long run keeps referring to itself at
    // a short distance; the positions inside the match are skipped (that is the speed).
    if (pos + kMinMatch - 1 < len) {
      hash_table[HashOf(Load24(in + pos - 1), bits)] = call | pos;
    }
  }
  if (!writer.Literals(in + literal_start, len - literal_start)) return 0;
  return writer.position() - out;
}

bool LzfDecompress(const void* src, size_t len, void* dst, size_t out_len) {
  const auto* in = static_cast<const uint8_t*>(src);
  const uint8_t* const in_end = in + len;
  auto* out = static_cast<uint8_t*>(dst);
  size_t produced = 0;
  while (in < in_end) {
    const size_t control = *in++;
    if (control < 32) {
      const size_t run = control + 1;
      if (static_cast<size_t>(in_end - in) >= kMaxLiteralRun &&
          out_len - produced >= kMaxLiteralRun) {
        // Both sides have room for the longest run: one fixed-size copy, whose bytes
        // past `run` are overwritten by what comes next (or lie beyond what is produced).
        std::memcpy(out + produced, in, kMaxLiteralRun);
      } else if (static_cast<size_t>(in_end - in) < run || out_len - produced < run) {
        return false;
      } else {
        std::memcpy(out + produced, in, run);
      }
      in += run;
      produced += run;
      continue;
    }
    size_t length = control >> 5;
    if (length == 7) {
      if (in == in_end) return false;
      length += *in++;
    }
    if (in == in_end) return false;
    const size_t distance = ((control & 31) << 8 | *in++) + 1;
    length += 2;
    if (distance > produced || out_len - produced < length) return false;

    uint8_t* to = out + produced;
    const uint8_t* from = to - distance;
    if (distance >= 8 && out_len - produced >= length + 7) {
      // 8-byte chunks, the last one possibly past `length` (overwritten later, or beyond
      // what is produced); each chunk reads bytes written before it starts.
      for (size_t i = 0; i < length; i += 8) std::memcpy(to + i, from + i, 8);
    } else if (distance >= length) {
      std::memcpy(to, from, length);
    } else if (distance == 1) {
      std::memset(to, *from, length);
    } else if (distance >= 8) {
      // Each 8-byte chunk reads bytes written before it starts.
      size_t i = 0;
      for (; i + 8 <= length; i += 8) std::memcpy(to + i, from + i, 8);
      for (; i < length; ++i) to[i] = from[i];
    } else {
      for (size_t i = 0; i < length; ++i) to[i] = from[i];
    }
    produced += length;
  }
  return produced == out_len;
}

}  // namespace damselfly::core
