#include "src/core/intset.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <utility>

#include "src/core/obj_malloc.h"

namespace damselfly::core {
namespace {

// Elements and header are copied with memcpy as host integers, which are the format's
// little-endian integers only on a little-endian host (all the targets we build for).
static_assert(std::endian::native == std::endian::little);

constexpr size_t kHeaderSize = 8;
constexpr uint32_t kWidth16 = 2;
constexpr uint32_t kWidth32 = 4;
constexpr uint32_t kWidth64 = 8;

uint32_t ReadU32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, sizeof(v));
  return v;
}

void WriteU32(uint8_t* p, uint32_t v) { memcpy(p, &v, sizeof(v)); }

// Returns the element at `index` of an array of `width`-byte integers starting at `elems`.
int64_t ReadElement(const uint8_t* elems, uint32_t width, size_t index) {
  const uint8_t* p = elems + index * width;
  switch (width) {
    case kWidth16: {
      int16_t v;
      memcpy(&v, p, sizeof(v));
      return v;
    }
    case kWidth32: {
      int32_t v;
      memcpy(&v, p, sizeof(v));
      return v;
    }
    default: {
      int64_t v;
      memcpy(&v, p, sizeof(v));
      return v;
    }
  }
}

// REQUIRES: `value` fits `width` bytes.
void WriteElement(uint8_t* elems, uint32_t width, size_t index, int64_t value) {
  uint8_t* p = elems + index * width;
  switch (width) {
    case kWidth16: {
      int16_t v = static_cast<int16_t>(value);
      memcpy(p, &v, sizeof(v));
      break;
    }
    case kWidth32: {
      int32_t v = static_cast<int32_t>(value);
      memcpy(p, &v, sizeof(v));
      break;
    }
    default:
      memcpy(p, &value, sizeof(value));
  }
}

// Returns the smallest width that holds `value`.
uint32_t WidthFor(int64_t value) {
  if (value >= INT16_MIN && value <= INT16_MAX) return kWidth16;
  if (value >= INT32_MIN && value <= INT32_MAX) return kWidth32;
  return kWidth64;
}

}  // namespace

Intset::Intset() {
  capacity_ = ObjGoodSize(kHeaderSize);
  data_ = static_cast<uint8_t*>(ObjMalloc(capacity_));
  WriteU32(data_, kWidth16);
  WriteU32(data_ + 4, 0);
}

Intset::~Intset() { ObjFree(data_); }

Intset::Intset(Intset&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

Intset& Intset::operator=(Intset&& other) noexcept {
  if (this != &other) {
    ObjFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

bool Intset::Validate(std::string_view blob) {
  const uint8_t* p = reinterpret_cast<const uint8_t*>(blob.data());
  if (blob.size() < kHeaderSize) return false;
  const uint32_t width = ReadU32(p);
  if (width != kWidth16 && width != kWidth32 && width != kWidth64) return false;
  const uint64_t count = ReadU32(p + 4);
  // count < 2^32 and width <= 8, so the product cannot overflow.
  if (count == 0 || kHeaderSize + count * width != blob.size()) return false;
  const uint8_t* elems = p + kHeaderSize;
  int64_t prev = ReadElement(elems, width, 0);
  for (size_t i = 1; i < count; ++i) {
    int64_t cur = ReadElement(elems, width, i);
    if (cur <= prev) return false;
    prev = cur;
  }
  return true;
}

Intset Intset::FromBytes(std::string_view blob) {
  assert(Validate(blob));
  Intset is;
  ObjFree(is.data_);
  is.capacity_ = ObjGoodSize(blob.size());
  is.data_ = static_cast<uint8_t*>(ObjMalloc(is.capacity_));
  memcpy(is.data_, blob.data(), blob.size());
  return is;
}

std::string_view Intset::bytes() const {
  return {reinterpret_cast<const char*>(data_), ByteSize()};
}

size_t Intset::ByteSize() const { return kHeaderSize + Size() * Encoding(); }

uint32_t Intset::Encoding() const { return ReadU32(data_); }

size_t Intset::Size() const { return ReadU32(data_ + 4); }

int64_t Intset::Get(size_t index) const {
  assert(index < Size());
  return ReadElement(data_ + kHeaderSize, Encoding(), index);
}

bool Intset::Search(int64_t value, size_t* pos) const {
  const uint8_t* elems = data_ + kHeaderSize;
  const uint32_t width = Encoding();
  size_t lo = 0, hi = Size();  // the answer is in [lo, hi]
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int64_t cur = ReadElement(elems, width, mid);
    if (cur == value) {
      *pos = mid;
      return true;
    }
    if (cur < value) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *pos = lo;
  return false;
}

bool Intset::Contains(int64_t value) const {
  size_t pos;
  return WidthFor(value) <= Encoding() && Search(value, &pos);
}

void Intset::Resize(size_t new_bytes) {
  // Reallocate when growing past the block, or when the intset would use less than half
  // of it (so that a shrunk set gives its memory back, as Redis's realloc does).
  if (new_bytes <= capacity_ && new_bytes >= capacity_ / 2) return;
  const size_t cap = ObjGoodSize(new_bytes);
  uint8_t* block = static_cast<uint8_t*>(ObjMalloc(cap));
  memcpy(block, data_, std::min(ByteSize(), new_bytes));
  ObjFree(data_);
  data_ = block;
  capacity_ = cap;
}

bool Intset::Add(int64_t value) {
  const uint32_t width = WidthFor(value);
  if (width > Encoding()) {
    UpgradeAndAdd(value, width);
    return true;
  }
  size_t pos;
  if (Search(value, &pos)) return false;
  const size_t n = Size();
  assert(n < UINT32_MAX);
  const uint32_t enc = Encoding();
  Resize(kHeaderSize + (n + 1) * enc);
  uint8_t* elems = data_ + kHeaderSize;
  memmove(elems + (pos + 1) * enc, elems + pos * enc, (n - pos) * enc);
  WriteElement(elems, enc, pos, value);
  WriteU32(data_ + 4, n + 1);
  return true;
}

void Intset::UpgradeAndAdd(int64_t value, uint32_t width) {
  const uint32_t old_width = Encoding();
  const size_t n = Size();
  assert(n < UINT32_MAX);
  // A value too wide for the old encoding lies outside the range of every element: below
  // them all when negative, above them all otherwise.
  const size_t shift = value < 0 ? 1 : 0;
  Resize(kHeaderSize + (n + 1) * width);
  uint8_t* elems = data_ + kHeaderSize;
  // From the last element down: element i's new slot starts at or after its old one, so
  // it overlaps only old slots that were already moved (or element i's own, read first).
  for (size_t i = n; i-- > 0;) {
    WriteElement(elems, width, i + shift, ReadElement(elems, old_width, i));
  }
  WriteElement(elems, width, shift ? 0 : n, value);
  WriteU32(data_, width);
  WriteU32(data_ + 4, n + 1);
}

bool Intset::Remove(int64_t value) {
  size_t pos;
  if (WidthFor(value) > Encoding() || !Search(value, &pos)) return false;
  const size_t n = Size();
  const uint32_t enc = Encoding();
  uint8_t* elems = data_ + kHeaderSize;
  memmove(elems + pos * enc, elems + (pos + 1) * enc, (n - pos - 1) * enc);
  WriteU32(data_ + 4, n - 1);
  Resize(kHeaderSize + (n - 1) * enc);
  return true;
}

}  // namespace damselfly::core
