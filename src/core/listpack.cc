#include "src/core/listpack.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/core/listpack_value.h"
#include "src/core/obj_malloc.h"

namespace damselfly::core {
namespace {

constexpr uint32_t kHeaderSize = 6;
constexpr uint32_t kEmptySize = kHeaderSize + 1;
constexpr uint8_t kEof = 0xFF;
constexpr uint16_t kCountUnknown = 65535;

constexpr uint8_t kEnc16BitInt = 0xF1;
constexpr uint8_t kEnc24BitInt = 0xF2;
constexpr uint8_t kEnc32BitInt = 0xF3;
constexpr uint8_t kEnc64BitInt = 0xF4;
constexpr uint8_t kEnc32BitStr = 0xF0;

uint32_t ReadU32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

void WriteU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (v >> (8 * i)) & 0xFF;
}

uint16_t ReadCount(const uint8_t* lp) { return lp[4] | lp[5] << 8; }

void WriteCount(uint8_t* lp, uint32_t n) {
  lp[4] = n & 0xFF;
  lp[5] = (n >> 8) & 0xFF;
}

// Bytes of the encoding byte(s) before the data (1, 2 or 5), or 0 for an invalid byte.
// For EOF returns 1.
uint32_t HeaderBytes(uint8_t b) {
  if (b < 0xE0) return 1;  // 7-bit uint, 6-bit string, 13-bit int
  if (b < 0xF0) return 2;  // 12-bit string
  if (b == kEnc32BitStr) return 5;
  if ((b >= kEnc16BitInt && b <= kEnc64BitInt) || b == kEof) return 1;
  return 0;
}

// Decodes the backlen whose last byte is at p, not reading before `floor`. Returns
// UINT64_MAX when it would be longer than 5 bytes or cross `floor`.
uint64_t DecodeBacklen(const uint8_t* p, const uint8_t* floor) {
  uint64_t val = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (p < floor || shift > 28) return UINT64_MAX;
    val |= uint64_t{p[0] & 127u} << shift;
    if (!(p[0] & 128)) return val;
    --p;
  }
}

}  // namespace

namespace lp_value {
namespace {

int64_t SignExtend(uint64_t u, unsigned bits) {
  uint64_t sign = uint64_t{1} << (bits - 1);
  return static_cast<int64_t>((u ^ sign) - sign);
}

}  // namespace

uint64_t SizeAt(const uint8_t* p) {
  uint8_t b = p[0];
  if (b < 0x80) return 1;
  if (b < 0xC0) return 1 + (b & 0x3F);
  if (b < 0xE0) return 2;
  if (b < 0xF0) return 2 + ((uint32_t{b} & 0x0F) << 8 | p[1]);
  switch (b) {
    case kEnc32BitStr:
      return 5 + uint64_t{ReadU32(p + 1)};
    case kEnc16BitInt:
      return 3;
    case kEnc24BitInt:
      return 4;
    case kEnc32BitInt:
      return 5;
    default:
      return 9;
  }
}

uint64_t CheckedSizeAt(const uint8_t* p, size_t avail) {
  if (avail == 0) return 0;
  const uint32_t hdr = HeaderBytes(*p);
  if (hdr == 0 || *p == kEof || avail < hdr) return 0;
  const uint64_t size = SizeAt(p);
  return size <= avail ? size : 0;
}

Encoded Encode(std::string_view value) {
  Encoded e{false, 0, value, 0};
  if (ListpackStringToInt64(value, &e.ival)) {
    e.is_int = true;
    int64_t v = e.ival;
    if (v >= 0 && v <= 127) {
      e.size = 1;
    } else if (v >= -4096 && v <= 4095) {
      e.size = 2;
    } else if (v >= -32768 && v <= 32767) {
      e.size = 3;
    } else if (v >= -8388608 && v <= 8388607) {
      e.size = 4;
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      e.size = 5;
    } else {
      e.size = 9;
    }
  } else if (value.size() < 64) {
    e.size = 1 + value.size();
  } else if (value.size() < 4096) {
    e.size = 2 + value.size();
  } else {
    e.size = 5 + value.size();
  }
  return e;
}

void Write(uint8_t* dst, const Encoded& e) {
  uint8_t* p = dst;
  if (e.is_int) {
    uint64_t u = static_cast<uint64_t>(e.ival);  // two's complement, truncated per width
    switch (e.size) {
      case 1:
        *p = static_cast<uint8_t>(u);
        break;
      case 2:
        p[0] = 0xC0 | ((u >> 8) & 0x1F);
        p[1] = u & 0xFF;
        break;
      default: {
        static constexpr uint8_t kTag[] = {0, 0, 0, kEnc16BitInt, kEnc24BitInt, kEnc32BitInt,
                                           0, 0, 0, kEnc64BitInt};
        p[0] = kTag[e.size];
        for (uint32_t i = 1; i < e.size; ++i) p[i] = (u >> (8 * (i - 1))) & 0xFF;
      }
    }
  } else {
    size_t len = e.sval.size();
    if (len < 64) {
      *p++ = 0x80 | len;
    } else if (len < 4096) {
      *p++ = 0xE0 | (len >> 8);
      *p++ = len & 0xFF;
    } else {
      *p++ = kEnc32BitStr;
      WriteU32(p, len);
      p += 4;
    }
    if (len) memcpy(p, e.sval.data(), len);
  }
}

Listpack::Value Read(const uint8_t* p) {
  uint8_t b = *p;
  Listpack::Value v;
  auto str = [&](uint32_t hdr, uint64_t len) {
    v.sval = {reinterpret_cast<const char*>(p + hdr), len};
  };
  auto integer = [&](uint64_t u, unsigned bits) {
    v.is_int = true;
    v.ival = SignExtend(u, bits);
  };
  if (b < 0x80) {
    v.is_int = true;
    v.ival = b;
  } else if (b < 0xC0) {
    str(1, b & 0x3F);
  } else if (b < 0xE0) {
    integer((uint64_t{b} & 0x1F) << 8 | p[1], 13);
  } else if (b < 0xF0) {
    str(2, (uint32_t{b} & 0x0F) << 8 | p[1]);
  } else if (b == kEnc32BitStr) {
    str(5, ReadU32(p + 1));
  } else {
    uint32_t bytes = SizeAt(p) - 1;
    uint64_t u = 0;
    for (uint32_t i = 0; i < bytes; ++i) u |= uint64_t{p[1 + i]} << (8 * i);
    integer(u, bytes * 8);
  }
  return v;
}

// Redis's thresholds, including `< 16383` rather than `<= 16383` for two bytes, so that
// the bytes match.
uint32_t EncodeBacklen(uint8_t* buf, uint64_t len) {
  uint32_t n;
  if (len <= 127) {
    n = 1;
  } else if (len < 16383) {
    n = 2;
  } else if (len < 2097151) {
    n = 3;
  } else if (len < 268435455) {
    n = 4;
  } else {
    n = 5;
  }
  if (buf) {
    // The first byte holds the high bits without a continuation flag; the last byte the
    // low 7 bits; reading backwards stops at the byte without the flag.
    for (uint32_t i = 0; i < n; ++i) {
      uint8_t bits = (len >> (7 * (n - 1 - i))) & 127;
      buf[i] = i == 0 ? bits : (bits | 128);
    }
  }
  return n;
}

uint8_t* AppendListpackFrame(std::string* out, uint64_t total, size_t count) {
  const size_t start = out->size();
  out->resize(start + total);
  uint8_t* p = reinterpret_cast<uint8_t*>(out->data() + start);
  WriteU32(p, total);
  WriteCount(p, std::min<size_t>(count, kCountUnknown));
  p[total - 1] = kEof;
  return p + kHeaderSize;
}

uint8_t* SpliceBlock(uint8_t** data, uint32_t* capacity, uint64_t used, uint32_t off,
                     uint32_t remove, uint32_t insert) {
  const uint64_t new_used = used - remove + insert;
  const uint64_t tail = used - off - remove;
  if (new_used > *capacity || new_used < *capacity / 2) {
    const uint32_t cap = ObjGoodSize(new_used);
    uint8_t* dst = static_cast<uint8_t*>(ObjMalloc(cap));
    memcpy(dst, *data, off);
    memcpy(dst + off + insert, *data + off + remove, tail);
    ObjFree(*data);
    *data = dst;
    *capacity = cap;
  } else if (remove != insert) {
    memmove(*data + off + insert, *data + off + remove, tail);
  }
  return *data + off;
}

}  // namespace lp_value

namespace {

uint32_t EntrySize(const lp_value::Encoded& e) {
  return e.size + lp_value::EncodeBacklen(nullptr, e.size);
}

// Writes the entry (encoding, data, backlen) at dst. REQUIRES: EntrySize(e) bytes there.
void WriteEntry(uint8_t* dst, const lp_value::Encoded& e) {
  lp_value::Write(dst, e);
  lp_value::EncodeBacklen(dst + e.size, e.size);
}

}  // namespace

bool ListpackStringToInt64(std::string_view s, int64_t* out) {
  // 20 characters hold "-9223372036854775808"; a longer text is never canonical.
  if (s.empty() || s.size() > 20) return false;
  if (s == "0") {
    *out = 0;
    return true;
  }
  size_t i = 0;
  bool negative = s[0] == '-';
  if (negative) ++i;
  if (i == s.size() || s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    unsigned digit = s[i] - '0';
    if (v > (UINT64_MAX - digit) / 10) return false;
    v = v * 10 + digit;
  }
  if (negative) {
    if (v > uint64_t{1} << 63) return false;
    *out = static_cast<int64_t>(0 - v);
  } else {
    if (v > uint64_t{INT64_MAX}) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

std::string Listpack::Value::ToString() const {
  return is_int ? absl::StrCat(ival) : std::string(sval);
}

bool Listpack::Value::Equals(std::string_view s) const {
  if (!is_int) return sval == s;
  // Only canonical texts are stored as integers, so comparing numbers is comparing texts.
  int64_t v;
  return ListpackStringToInt64(s, &v) && v == ival;
}

Listpack::Listpack() {
  capacity_ = ObjGoodSize(kEmptySize);
  data_ = static_cast<uint8_t*>(ObjMalloc(capacity_));
  WriteU32(data_, kEmptySize);
  WriteCount(data_, 0);
  data_[kHeaderSize] = kEof;
}

Listpack::~Listpack() { ObjFree(data_); }

Listpack::Listpack(Listpack&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

Listpack& Listpack::operator=(Listpack&& other) noexcept {
  if (this != &other) {
    ObjFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

bool Listpack::Validate(std::string_view blob) {
  const uint8_t* lp = reinterpret_cast<const uint8_t*>(blob.data());
  const size_t total = blob.size();
  if (total < kEmptySize || total > UINT32_MAX || ReadU32(lp) != total) return false;
  if (lp[total - 1] != kEof) return false;
  const uint8_t* end = lp + total - 1;  // the terminator
  const uint8_t* p = lp + kHeaderSize;
  uint64_t count = 0;
  while (p < end) {
    uint32_t hdr = HeaderBytes(*p);
    if (hdr == 0 || *p == kEof) return false;
    if (static_cast<size_t>(end - p) < hdr) return false;
    uint64_t enc = lp_value::SizeAt(p);
    uint8_t backlen[5];
    uint32_t blen = lp_value::EncodeBacklen(backlen, enc);
    if (static_cast<uint64_t>(end - p) < enc + blen) return false;
    if (memcmp(p + enc, backlen, blen) != 0) return false;
    p += enc + blen;
    ++count;
  }
  // Redis leaves an unknown count unknown when entries are deleted, so any count goes.
  uint16_t header_count = ReadCount(lp);
  return header_count == kCountUnknown || count == header_count;
}

Listpack Listpack::FromBytes(std::string_view blob) {
  assert(Validate(blob));
  Listpack lp;
  ObjFree(lp.data_);
  lp.capacity_ = ObjGoodSize(blob.size());
  lp.data_ = static_cast<uint8_t*>(ObjMalloc(lp.capacity_));
  memcpy(lp.data_, blob.data(), blob.size());
  return lp;
}

uint32_t Listpack::TotalBytes() const { return ReadU32(data_); }

std::string_view Listpack::bytes() const {
  return {reinterpret_cast<const char*>(data_), TotalBytes()};
}

size_t Listpack::ByteSize() const { return TotalBytes(); }

size_t Listpack::Size() const {
  uint16_t n = ReadCount(data_);
  if (n != kCountUnknown) return n;
  size_t count = 0;
  for (Pos p = First(); p != kNoPos; p = Next(p)) ++count;
  return count;
}

Listpack::Pos Listpack::First() const { return data_[kHeaderSize] == kEof ? kNoPos : kHeaderSize; }

Listpack::Pos Listpack::Last() const {
  Pos eof = TotalBytes() - 1;
  return eof == kHeaderSize ? kNoPos : Prev(eof);
}

Listpack::Pos Listpack::Next(Pos pos) const {
  uint64_t enc = lp_value::SizeAt(data_ + pos);
  Pos next = pos + enc + lp_value::EncodeBacklen(nullptr, enc);
  return data_[next] == kEof ? kNoPos : next;
}

Listpack::Pos Listpack::Prev(Pos pos) const {
  if (pos == kHeaderSize) return kNoPos;
  uint64_t enc = DecodeBacklen(data_ + pos - 1, data_ + kHeaderSize);
  assert(enc != UINT64_MAX);
  return pos - enc - lp_value::EncodeBacklen(nullptr, enc);
}

Listpack::Pos Listpack::Seek(int64_t index) const {
  // The header count may be unknown (65535); walking forward then still works.
  uint16_t n = ReadCount(data_);
  if (n != kCountUnknown) {
    if (index < 0) index += n;
    if (index < 0 || index >= n) return kNoPos;
    if (index > n / 2) index -= n;  // nearer to the end: walk backwards
  }
  Pos p;
  if (index >= 0) {
    for (p = First(); p != kNoPos && index > 0; --index) p = Next(p);
  } else {
    for (p = Last(); p != kNoPos && index < -1; ++index) p = Prev(p);
  }
  return p;
}

Listpack::Value Listpack::Get(Pos pos) const { return lp_value::Read(data_ + pos); }

Listpack::Pos Listpack::Find(Pos pos, std::string_view value, uint32_t skip) const {
  // Decide once how `value` is stored; an entry can only match in the same form.
  int64_t ival = 0;
  bool is_int = ListpackStringToInt64(value, &ival);
  while (pos != kNoPos) {
    Value v = Get(pos);
    if (v.is_int == is_int && (is_int ? v.ival == ival : v.sval == value)) return pos;
    for (uint32_t i = 0; i <= skip && pos != kNoPos; ++i) pos = Next(pos);
  }
  return kNoPos;
}

uint8_t* Listpack::Splice(uint32_t off, uint32_t remove, uint32_t insert) {
  const uint32_t total = TotalBytes();
  const uint64_t new_total = uint64_t{total} - remove + insert;
  assert(new_total <= UINT32_MAX);
  uint8_t* at = lp_value::SpliceBlock(&data_, &capacity_, total, off, remove, insert);
  WriteU32(data_, new_total);
  return at;
}

void Listpack::AddToCount(int64_t delta) {
  uint16_t n = ReadCount(data_);
  // Redis refreshes an unknown count when lpLength() walks; Size() is const here, so a
  // deletion refreshes it instead, as soon as it may have dropped below 65535.
  if (n == kCountUnknown) {
    if (delta > 0) return;
    size_t count = 0;
    for (Pos p = First(); p != kNoPos && count < kCountUnknown; p = Next(p)) ++count;
    WriteCount(data_, count);
    return;
  }
  int64_t c = n + delta;
  WriteCount(data_, c >= kCountUnknown ? kCountUnknown : c);
}

Listpack::Pos Listpack::InsertAt(uint32_t off, std::string_view value) {
  lp_value::Encoded e = lp_value::Encode(value);
  WriteEntry(Splice(off, 0, EntrySize(e)), e);
  AddToCount(1);
  return off;
}

void Listpack::Append(std::string_view value) { InsertAt(TotalBytes() - 1, value); }

void Listpack::Prepend(std::string_view value) { InsertAt(kHeaderSize, value); }

Listpack::Pos Listpack::Insert(Pos pos, std::string_view value, Where where) {
  if (where == Where::kBefore) return InsertAt(pos, value);
  uint64_t enc = lp_value::SizeAt(data_ + pos);
  return InsertAt(pos + enc + lp_value::EncodeBacklen(nullptr, enc), value);
}

Listpack::Pos Listpack::Replace(Pos pos, std::string_view value) {
  uint64_t old_enc = lp_value::SizeAt(data_ + pos);
  lp_value::Encoded e = lp_value::Encode(value);
  WriteEntry(Splice(pos, old_enc + lp_value::EncodeBacklen(nullptr, old_enc), EntrySize(e)), e);
  return pos;
}

Listpack::Pos Listpack::Delete(Pos pos) {
  uint64_t enc = lp_value::SizeAt(data_ + pos);
  Splice(pos, enc + lp_value::EncodeBacklen(nullptr, enc), 0);
  AddToCount(-1);
  return data_[pos] == kEof ? kNoPos : pos;
}

size_t Listpack::DeleteRange(int64_t index, size_t count) {
  Pos start = Seek(index);
  if (start == kNoPos || count == 0) return 0;
  Pos end = start;
  size_t deleted = 0;
  while (end != kNoPos && deleted < count) {
    uint64_t enc = lp_value::SizeAt(data_ + end);
    end += enc + lp_value::EncodeBacklen(nullptr, enc);
    ++deleted;
    if (data_[end] == kEof) break;
  }
  Splice(start, end - start, 0);
  AddToCount(-static_cast<int64_t>(deleted));
  return deleted;
}

}  // namespace damselfly::core
