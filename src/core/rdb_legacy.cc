#include "src/core/rdb_legacy.h"

#include <cstring>
#include <vector>

namespace damselfly::core {

namespace {

constexpr size_t kZiplistHeaderBytes = 10;
constexpr uint8_t kZiplistEnd = 0xFF;
constexpr uint8_t kZiplistBigPrevlen = 0xFE;
constexpr uint8_t kZipmapBigLen = 254;
constexpr uint8_t kZipmapEnd = 255;

uint32_t LoadLe32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

int64_t LoadLeSigned(const uint8_t* p, size_t bytes) {
  uint64_t raw = 0;
  for (size_t i = 0; i < bytes; ++i) raw |= uint64_t(p[i]) << (8 * i);
  const unsigned shift = unsigned(64 - 8 * bytes);
  return int64_t(raw << shift) >> shift;  // sign-extends from the top byte read
}

// Decodes the entry at blob[off] (off < size, blob[off] != end) into *value and *next.
// False when any part of it lies outside the blob or its encoding is unknown.
bool DecodeZiplistEntry(const uint8_t* blob, size_t size, size_t off, size_t* prevlen,
                        ZiplistValue* value, size_t* next) {
  size_t p = off;
  if (blob[p] == kZiplistBigPrevlen) {
    if (size - p < 5) return false;
    *prevlen = LoadLe32(blob + p + 1);
    p += 5;
  } else {
    *prevlen = blob[p];
    p += 1;
  }
  if (p >= size) return false;
  const uint8_t enc = blob[p];
  size_t len = 0, header = 1;
  *value = ZiplistValue{};
  switch (enc >> 6) {
    case 0:
      len = enc & 0x3F;
      break;
    case 1:
      if (size - p < 2) return false;
      len = size_t(enc & 0x3F) << 8 | blob[p + 1];
      header = 2;
      break;
    case 2:
      if (enc != 0x80 || size - p < 5) return false;
      len = size_t(blob[p + 1]) << 24 | size_t(blob[p + 2]) << 16 | size_t(blob[p + 3]) << 8 |
            blob[p + 4];
      header = 5;
      break;
    default: {
      value->is_int = true;
      size_t bytes;
      switch (enc) {
        case 0xC0:
          bytes = 2;
          break;
        case 0xD0:
          bytes = 4;
          break;
        case 0xE0:
          bytes = 8;
          break;
        case 0xF0:
          bytes = 3;
          break;
        case 0xFE:
          bytes = 1;
          break;
        default:
          if (enc < 0xF1 || enc > 0xFD) return false;
          value->ival = (enc & 0x0F) - 1;
          *next = p + 1;
          return true;
      }
      if (size - p - 1 < bytes) return false;
      value->ival = LoadLeSigned(blob + p + 1, bytes);
      *next = p + 1 + bytes;
      return true;
    }
  }
  if (size - p - header < len) return false;
  value->sval = std::string_view(reinterpret_cast<const char*>(blob + p + header), len);
  *next = p + header + len;
  return true;
}

// Reads a zipmap length at blob[*p]; false past the blob. *end is set at the terminator.
bool ReadZipmapLen(const uint8_t* blob, size_t size, size_t* p, size_t* len, bool* end) {
  if (*p >= size) return false;
  const uint8_t first = blob[*p];
  *end = first == kZipmapEnd;
  if (*end) return true;
  if (first < kZipmapBigLen) {
    *len = first;
    *p += 1;
    return true;
  }
  if (size - *p < 5) return false;
  *len = LoadLe32(blob + *p + 1);
  *p += 5;
  return true;
}

}  // namespace

bool ZiplistForEach(std::string_view data, absl::FunctionRef<void(const ZiplistValue&)> f) {
  const uint8_t* blob = reinterpret_cast<const uint8_t*>(data.data());
  const size_t size = data.size();
  if (size < kZiplistHeaderBytes + 1 || LoadLe32(blob) != size) return false;
  const size_t tail = LoadLe32(blob + 4);
  const size_t count = uint16_t(blob[8] | blob[9] << 8);
  if (blob[size - 1] != kZiplistEnd) return false;
  std::vector<ZiplistValue> values;
  size_t off = kZiplistHeaderBytes, prev_size = 0, last = kZiplistHeaderBytes;
  while (off < size - 1) {
    if (blob[off] == kZiplistEnd) return false;  // a terminator before the end
    size_t prevlen, next;
    ZiplistValue value;
    if (!DecodeZiplistEntry(blob, size - 1, off, &prevlen, &value, &next)) return false;
    if (prevlen != prev_size) return false;
    values.push_back(value);
    prev_size = next - off;
    last = off;
    off = next;
  }
  if (off != size - 1 || tail != last) return false;
  if (count != UINT16_MAX && count != values.size()) return false;
  for (const ZiplistValue& value : values) f(value);
  return true;
}

bool ZipmapForEach(std::string_view data,
                   absl::FunctionRef<void(std::string_view, std::string_view)> f) {
  const uint8_t* blob = reinterpret_cast<const uint8_t*>(data.data());
  const size_t size = data.size();
  if (size < 2) return false;
  const size_t count = blob[0];
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  size_t p = 1;
  for (;;) {
    size_t key_len, value_len;
    bool end;
    if (!ReadZipmapLen(blob, size, &p, &key_len, &end)) return false;
    if (end) break;
    if (size - p < key_len) return false;
    std::string_view key(reinterpret_cast<const char*>(blob + p), key_len);
    p += key_len;
    if (!ReadZipmapLen(blob, size, &p, &value_len, &end) || end || p >= size) return false;
    const size_t free = blob[p++];
    if (size - p < value_len || size - p - value_len < free) return false;
    std::string_view value(reinterpret_cast<const char*>(blob + p), value_len);
    p += value_len + free;
    pairs.emplace_back(key, value);
  }
  if (p != size - 1) return false;
  if (count < kZipmapBigLen && count != pairs.size()) return false;
  for (const auto& [key, value] : pairs) f(key, value);
  return true;
}

}  // namespace damselfly::core
