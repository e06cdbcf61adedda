#include "src/core/hyperloglog.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace damselfly::core::hll {

namespace {

constexpr size_t kEncodingOffset = 4;
constexpr size_t kCardOffset = 8;
constexpr uint8_t kStaleBit = 0x80;  // in the cached cardinality's last byte

// Sparse opcodes (see the header).
constexpr uint8_t kXZeroBit = 0x40;
constexpr uint8_t kValBit = 0x80;
constexpr int kZeroMaxLen = 64;
constexpr int kXZeroMaxLen = 16384;
constexpr int kValMaxLen = 4;
constexpr int kValMaxValue = 32;

bool IsZero(uint8_t op) { return (op & 0xc0) == 0; }
bool IsXZero(uint8_t op) { return (op & 0xc0) == kXZeroBit; }
bool IsVal(uint8_t op) { return op & kValBit; }
int ZeroLen(uint8_t op) { return (op & 0x3f) + 1; }
int ValValue(uint8_t op) { return ((op >> 2) & 0x1f) + 1; }
int ValLen(uint8_t op) { return (op & 0x3) + 1; }
uint8_t ValOp(int value, int len) { return uint8_t(((value - 1) << 2) | (len - 1) | kValBit); }
uint8_t ZeroOp(int len) { return uint8_t(len - 1); }

// An XZERO at p; its second byte counts as 0 past `end`, as Redis reads the terminator
// of its sds string there (a truncated value must be read the same way to be judged the
// same way).
int XZeroLen(const uint8_t* p, const uint8_t* end) {
  const int low = p + 1 < end ? p[1] : 0;
  return (((p[0] & 0x3f) << 8) | low) + 1;
}

// Writes an XZERO of `len` at p (two bytes).
void PutXZero(uint8_t* p, int len) {
  p[0] = uint8_t(((len - 1) >> 8) | kXZeroBit);
  p[1] = uint8_t((len - 1) & 0xff);
}

// Dense register access. Register i occupies bits [6i, 6i + 6): it starts in byte 6i / 8
// at bit fb = 6i % 8 and spills into the next byte when fb > 2. Redis always touches
// the next byte (its sds terminator covers the last register); here it is touched only
// when the register reaches into it, so a block of exactly kDenseBytes is enough.
uint8_t GetRegister(const uint8_t* registers, uint32_t index) {
  const size_t byte = size_t(index) * kRegisterBits / 8;
  const unsigned fb = (index * kRegisterBits) & 7;
  unsigned value = registers[byte] >> fb;
  if (fb > 8 - kRegisterBits) value |= unsigned(registers[byte + 1]) << (8 - fb);
  return uint8_t(value & kRegisterMax);
}

void SetRegister(uint8_t* registers, uint32_t index, uint8_t value) {
  const size_t byte = size_t(index) * kRegisterBits / 8;
  const unsigned fb = (index * kRegisterBits) & 7;
  registers[byte] = uint8_t((registers[byte] & ~(kRegisterMax << fb)) | (value << fb));
  if (fb > 8 - kRegisterBits) {
    const unsigned spill = 8 - fb;
    registers[byte + 1] =
        uint8_t((registers[byte + 1] & ~(kRegisterMax >> spill)) | (value >> spill));
  }
}

uint8_t* Registers(char* hll) { return reinterpret_cast<uint8_t*>(hll) + kHeaderBytes; }
const uint8_t* Registers(const char* hll) {
  return reinterpret_cast<const uint8_t*>(hll) + kHeaderBytes;
}

using Histogram = std::array<int, 64>;

// Fills `histo` from dense registers: four registers per three bytes.
void DenseHistogram(const uint8_t* r, Histogram* histo) {
  for (size_t i = 0; i < kRegisters / 4; ++i, r += 3) {
    ++(*histo)[r[0] & 63];
    ++(*histo)[(r[0] >> 6 | r[1] << 2) & 63];
    ++(*histo)[(r[1] >> 4 | r[2] << 4) & 63];
    ++(*histo)[(r[2] >> 2) & 63];
  }
}

// Fills `histo` from sparse opcodes; false when they do not cover exactly kRegisters.
bool SparseHistogram(const uint8_t* p, const uint8_t* end, Histogram* histo) {
  size_t index = 0;
  while (p < end) {
    if (IsZero(*p)) {
      const int len = ZeroLen(*p);
      index += len;
      (*histo)[0] += len;
      p += 1;
    } else if (IsXZero(*p)) {
      const int len = XZeroLen(p, end);
      index += len;
      (*histo)[0] += len;
      p += 2;
    } else {
      const int len = ValLen(*p);
      index += len;
      (*histo)[ValValue(*p)] += len;
      p += 1;
    }
  }
  return index == kRegisters;
}

// Ertl's sigma and tau (arXiv:1702.01284), iterated to convergence as Redis does.
double Sigma(double x) {
  if (x == 1.) return INFINITY;
  double y = 1, z = x, previous;
  do {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
  } while (previous != z);
  return z;
}

double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double y = 1.0, z = 1 - x, previous;
  do {
    x = std::sqrt(x);
    previous = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (previous != z);
  return z / 3;
}

uint64_t Estimate(const Histogram& histo) {
  constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)
  const double m = kRegisters;
  double z = m * Tau((m - histo[kRunBits + 1]) / m);
  for (int j = kRunBits; j >= 1; --j) {
    z += histo[j];
    z *= 0.5;
  }
  z += m * Sigma(histo[0] / m);
  return uint64_t(std::llroundl(kAlphaInf * m * m / z));
}

// Promotes a sparse *hll to dense and sets the register there (the promotion always
// changes the value).
Change PromoteAndSet(std::string* hll, uint32_t index, uint8_t count) {
  if (!SparseToDense(hll)) return Change::kCorrupt;
  DenseSet(hll->data(), index, count);
  return Change::kChanged;
}

// Merges adjacent VAL opcodes of equal value, up to five opcodes from `from`, as Redis
// does after a change (so the bytes stay Redis's).
void MergeAdjacentValues(std::string* hll, size_t from) {
  uint8_t* sparse = Registers(hll->data());
  uint8_t* p = sparse + from;
  uint8_t* end = reinterpret_cast<uint8_t*>(hll->data()) + hll->size();
  int scan = 5;
  while (p < end && scan--) {
    if (IsXZero(*p)) {
      p += 2;
      continue;
    }
    if (IsZero(*p)) {
      p += 1;
      continue;
    }
    if (p + 1 < end && IsVal(p[1]) && ValValue(p[0]) == ValValue(p[1])) {
      const int len = ValLen(p[0]) + ValLen(p[1]);
      if (len <= kValMaxLen) {
        p[1] = ValOp(ValValue(p[0]), len);
        const size_t at = p - reinterpret_cast<uint8_t*>(hll->data());
        hll->erase(at, 1);
        p = reinterpret_cast<uint8_t*>(hll->data()) + at;
        end = reinterpret_cast<uint8_t*>(hll->data()) + hll->size();
        continue;  // the merged opcode may merge with the next one
      }
    }
    p += 1;
  }
}

// Raises register `index` of a sparse *hll: find the opcode covering it, then replace
// that opcode by the shortest sequence that sets it (cases A-D of Redis's
// hllSparseSet), promoting to dense when the value does not fit a VAL or the value
// would outgrow sparse_max_bytes.
Change SparseSet(std::string* hll, uint32_t index, uint8_t count, size_t sparse_max_bytes) {
  if (count > kValMaxValue) return PromoteAndSet(hll, index, count);

  uint8_t* const sparse = Registers(hll->data());
  const uint8_t* const end = reinterpret_cast<const uint8_t*>(hll->data()) + hll->size();
  uint8_t* p = sparse;
  const uint8_t* prev = nullptr;
  long first = 0, span = 0;
  while (p < end) {
    int op_len = 1;
    if (IsZero(*p)) {
      span = ZeroLen(*p);
    } else if (IsVal(*p)) {
      span = ValLen(*p);
    } else {
      span = XZeroLen(p, end);
      op_len = 2;
    }
    if (index <= first + span - 1) break;
    prev = p;
    p += op_len;
    first += span;
  }
  if (span == 0 || p >= end) return Change::kCorrupt;

  const bool is_zero = IsZero(*p), is_xzero = IsXZero(*p), is_val = IsVal(*p);
  const long run = is_zero ? ZeroLen(*p) : is_xzero ? XZeroLen(p, end) : ValLen(*p);
  const size_t prev_offset = prev ? size_t(prev - sparse) : 0;

  // A, B: a VAL already as high, or a VAL of one register.
  if (is_val) {
    if (ValValue(*p) >= count) return Change::kUnchanged;
    if (run == 1) {
      *p = ValOp(count, 1);
      MergeAdjacentValues(hll, prev_offset);
      InvalidateCache(hll->data());
      return Change::kChanged;
    }
  }
  // C: a ZERO of one register becomes a VAL.
  if (is_zero && run == 1) {
    *p = ValOp(count, 1);
    MergeAdjacentValues(hll, prev_offset);
    InvalidateCache(hll->data());
    return Change::kChanged;
  }

  // D: split the opcode around the register: [zeros or values before] VAL [after].
  uint8_t seq[5];
  uint8_t* n = seq;
  const long last = first + span - 1;
  auto put_zeros = [&n](long len) {
    if (len > kZeroMaxLen) {
      PutXZero(n, int(len));
      n += 2;
    } else {
      *n++ = ZeroOp(int(len));
    }
  };
  if (is_zero || is_xzero) {
    if (index != first) put_zeros(index - first);
    *n++ = ValOp(count, 1);
    if (index != last) put_zeros(last - index);
  } else {
    const int current = ValValue(*p);
    if (index != first) *n++ = ValOp(current, int(index - first));
    *n++ = ValOp(count, 1);
    if (index != last) *n++ = ValOp(current, int(last - index));
  }
  const size_t seq_len = n - seq;
  const size_t old_len = is_xzero ? 2 : 1;
  if (seq_len > old_len && hll->size() + (seq_len - old_len) > sparse_max_bytes) {
    return PromoteAndSet(hll, index, count);
  }
  hll->replace(kHeaderBytes + (p - sparse), old_len, reinterpret_cast<const char*>(seq), seq_len);
  MergeAdjacentValues(hll, prev_offset);
  InvalidateCache(hll->data());
  return Change::kChanged;
}

}  // namespace

uint64_t MurmurHash64A(std::string_view data, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const size_t len = data.size();
  uint64_t h = seed ^ (len * m);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(data.data());
  const uint8_t* const end = p + (len & ~size_t{7});
  for (; p != end; p += 8) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; --i) k = (k << 8) | p[i];  // little-endian on any host
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  const size_t tail = len & 7;
  if (tail != 0) {
    for (size_t i = tail; i-- > 0;) h ^= uint64_t(p[i]) << (8 * i);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

Observation Observe(std::string_view element) {
  uint64_t hash = MurmurHash64A(element, kHashSeed);
  const uint32_t index = uint32_t(hash & (kRegisters - 1));
  hash >>= kIndexBits;
  hash |= uint64_t{1} << kRunBits;  // a run ends by bit 50 at the latest: count <= 51
  return {index, uint8_t(__builtin_ctzll(hash) + 1)};
}

bool IsHll(std::string_view value) {
  if (value.size() < kHeaderBytes || value.substr(0, 4) != "HYLL") return false;
  const uint8_t encoding = uint8_t(value[kEncodingOffset]);
  if (encoding > uint8_t(Encoding::kSparse)) return false;
  return encoding != uint8_t(Encoding::kDense) || value.size() == kDenseBytes;
}

Encoding EncodingOf(std::string_view hll) { return Encoding(hll[kEncodingOffset]); }

std::string MakeEmpty() {
  std::string hll(kHeaderBytes + 2, '\0');
  std::memcpy(hll.data(), "HYLL", 4);
  hll[kEncodingOffset] = char(Encoding::kSparse);
  PutXZero(Registers(hll.data()), kXZeroMaxLen);
  return hll;
}

std::optional<uint64_t> CachedCardinality(std::string_view hll) {
  const uint8_t* card = reinterpret_cast<const uint8_t*>(hll.data()) + kCardOffset;
  if (card[7] & kStaleBit) return std::nullopt;
  uint64_t value;  // little-endian, as Redis stores it
  std::memcpy(&value, card, sizeof(value));
  if constexpr (std::endian::native == std::endian::big) value = __builtin_bswap64(value);
  return value;
}

void SetCachedCardinality(char* header, uint64_t card) {
  for (int i = 0; i < 8; ++i) header[kCardOffset + i] = char((card >> (8 * i)) & 0xff);
}

void InvalidateCache(char* header) { header[kCardOffset + 7] |= char(kStaleBit); }

Change DenseSet(char* dense, uint32_t index, uint8_t count) {
  uint8_t* registers = Registers(dense);
  if (count <= GetRegister(registers, index)) return Change::kUnchanged;
  SetRegister(registers, index, count);
  return Change::kChanged;
}

Change DenseAdd(char* dense, std::string_view element) {
  const Observation seen = Observe(element);
  return DenseSet(dense, seen.index, seen.count);
}

Change Set(std::string* hll, uint32_t index, uint8_t count, size_t sparse_max_bytes) {
  if (EncodingOf(*hll) == Encoding::kDense) return DenseSet(hll->data(), index, count);
  return SparseSet(hll, index, count, sparse_max_bytes);
}

Change Add(std::string* hll, std::string_view element, size_t sparse_max_bytes) {
  const Observation seen = Observe(element);
  return Set(hll, seen.index, seen.count, sparse_max_bytes);
}

bool SparseToDense(std::string* hll) {
  if (EncodingOf(*hll) == Encoding::kDense) return true;
  std::string dense(kDenseBytes, '\0');
  std::memcpy(dense.data(), hll->data(), kHeaderBytes);  // magic, cached cardinality
  dense[kEncodingOffset] = char(Encoding::kDense);
  uint8_t* registers = Registers(dense.data());
  const uint8_t* p = Registers(hll->data());
  const uint8_t* end = reinterpret_cast<const uint8_t*>(hll->data()) + hll->size();
  size_t index = 0;
  while (p < end) {
    if (IsZero(*p)) {
      index += ZeroLen(*p);
      p += 1;
    } else if (IsXZero(*p)) {
      index += XZeroLen(p, end);
      p += 2;
    } else {
      const int len = ValLen(*p), value = ValValue(*p);
      if (index + len > kRegisters) break;
      for (int i = 0; i < len; ++i) SetRegister(registers, uint32_t(index++), uint8_t(value));
      p += 1;
    }
  }
  if (index != kRegisters) return false;
  *hll = std::move(dense);
  return true;
}

bool MergeInto(std::string_view hll, RawRegisters* max) {
  const uint8_t* registers = Registers(hll.data());
  if (EncodingOf(hll) == Encoding::kDense) {
    for (uint32_t i = 0; i < kRegisters; ++i) {
      (*max)[i] = std::max((*max)[i], GetRegister(registers, i));
    }
    return true;
  }
  const uint8_t* p = registers;
  const uint8_t* end = reinterpret_cast<const uint8_t*>(hll.data()) + hll.size();
  size_t index = 0;
  while (p < end) {
    if (IsZero(*p)) {
      index += ZeroLen(*p);
      p += 1;
    } else if (IsXZero(*p)) {
      index += XZeroLen(p, end);
      p += 2;
    } else {
      const int len = ValLen(*p);
      const uint8_t value = uint8_t(ValValue(*p));
      if (index + len > kRegisters) break;
      for (int i = 0; i < len; ++i, ++index) (*max)[index] = std::max((*max)[index], value);
      p += 1;
    }
  }
  return index == kRegisters;
}

bool StoreRegisters(std::string* hll, const RawRegisters& max, bool to_dense,
                    size_t sparse_max_bytes) {
  if (to_dense && !SparseToDense(hll)) return false;
  for (uint32_t i = 0; i < kRegisters; ++i) {
    if (max[i] != 0) Set(hll, i, max[i], sparse_max_bytes);
  }
  InvalidateCache(hll->data());
  return true;
}

std::optional<uint64_t> Count(std::string_view hll) {
  Histogram histo{};
  const uint8_t* registers = Registers(hll.data());
  if (EncodingOf(hll) == Encoding::kDense) {
    DenseHistogram(registers, &histo);
  } else if (!SparseHistogram(registers, reinterpret_cast<const uint8_t*>(hll.data()) + hll.size(),
                              &histo)) {
    return std::nullopt;
  }
  return Estimate(histo);
}

uint64_t CountRaw(const RawRegisters& registers) {
  Histogram histo{};
  for (uint8_t value : registers) ++histo[value & 63];
  return Estimate(histo);
}

uint8_t DenseRegister(std::string_view dense, uint32_t index) {
  return GetRegister(Registers(dense.data()), index);
}

std::string DecodeSparse(std::string_view sparse) {
  std::string text;
  const uint8_t* p = Registers(sparse.data());
  const uint8_t* end = reinterpret_cast<const uint8_t*>(sparse.data()) + sparse.size();
  while (p < end) {
    if (IsZero(*p)) {
      text += "z:" + std::to_string(ZeroLen(*p)) + " ";
      p += 1;
    } else if (IsXZero(*p)) {
      text += "Z:" + std::to_string(XZeroLen(p, end)) + " ";
      p += 2;
    } else {
      text += "v:" + std::to_string(ValValue(*p)) + "," + std::to_string(ValLen(*p)) + " ";
      p += 1;
    }
  }
  if (!text.empty()) text.pop_back();
  return text;
}

std::string SelfTest(size_t sparse_max_bytes) {
  std::mt19937_64 rng(std::random_device{}());
  std::string dense(kDenseBytes, '\0');
  uint8_t* registers = Registers(dense.data());

  // 1: every register keeps its own value and leaves its neighbours alone.
  std::vector<uint8_t> expected(kRegisters);  // off the stack: a fiber may call this
  for (int cycle = 0; cycle < 1000; ++cycle) {
    for (uint32_t i = 0; i < kRegisters; ++i) {
      expected[i] = uint8_t(rng() & kRegisterMax);
      SetRegister(registers, i, expected[i]);
    }
    for (uint32_t i = 0; i < kRegisters; ++i) {
      const uint8_t value = GetRegister(registers, i);
      if (value != expected[i]) {
        return "TESTFAILED Register " + std::to_string(i) + " should be " +
               std::to_string(expected[i]) + " but is " + std::to_string(value);
      }
    }
  }

  // 2: the estimate of the same elements in a dense and a sparse HLL agree, stay sparse
  // while small, and stay within six standard errors of the truth at 1, 10, ..., 10^7.
  std::memset(registers, 0, kDenseBytes - kHeaderBytes);
  std::string sparse = MakeEmpty();
  const double relative_error = 1.04 / std::sqrt(double(kRegisters));
  const uint64_t seed = rng();
  uint64_t checkpoint = 1;
  for (uint64_t j = 1; j <= 10'000'000; ++j) {
    const uint64_t element = j ^ seed;
    const std::string_view bytes(reinterpret_cast<const char*>(&element), sizeof(element));
    DenseAdd(dense.data(), bytes);
    Add(&sparse, bytes, sparse_max_bytes);
    if (j != checkpoint) continue;
    if (j < sparse_max_bytes / 2 && EncodingOf(sparse) != Encoding::kSparse) {
      return "TESTFAILED sparse encoding not used";
    }
    const uint64_t estimate = *Count(dense);
    if (estimate != Count(sparse).value_or(0)) return "TESTFAILED dense/sparse disagree";
    const uint64_t error = estimate > checkpoint ? estimate - checkpoint : checkpoint - estimate;
    const uint64_t max_error =
        j == 10 ? 1 : uint64_t(std::ceil(relative_error * 6 * double(checkpoint)));
    if (error > max_error) {
      return "TESTFAILED Too big error. card:" + std::to_string(checkpoint) +
             " abserr:" + std::to_string(error);
    }
    checkpoint *= 10;
  }
  return "";
}

}  // namespace damselfly::core::hll
