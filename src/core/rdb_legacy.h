// Readers of the two blob formats Redis 6.x (RDB 9) stored small collections in and Redis
// 7.0 no longer writes: the ziplist (lists, hashes, sorted sets, quicklist nodes) and the
// zipmap (hashes of Redis 2.x, still in old files). damselfly only ever reads them, to load
// such a file or RESTORE such a payload, and turns their elements into its own objects.
//
// Ziplist (all multi-byte fields little endian unless said):
//   zlbytes u32 | zltail u32 | zllen u16 | entry* | 0xFF
//   entry: prevlen (1 byte < 254, or 0xFE + u32) | encoding [data]
//     00llllll                 string of 0..63 bytes
//     01llllll llllllll        string of up to 16383 bytes (length big endian)
//     10000000 + 4 bytes       string, length big endian
//     0xC0 / 0xD0 / 0xE0       int16 / int32 / int64
//     0xF0                     int24     0xFE  int8
//     0xF1..0xFD               the integers 0..12, in the byte itself
// Zipmap:
//   zmlen u8 | (len key len free value <free bytes>)* | 0xFF
//   len: one byte < 254, or 254 + u32
//
// Both readers check everything Redis's deep sanitization checks (every entry inside the
// blob, each prevlen equal to the previous entry's size, zltail at the last entry, the
// counts, the terminator at the very end) and never read outside the blob, whatever it
// holds; what the format cannot say (an even count for pairs, duplicates) is the caller's.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/functional/function_ref.h"

namespace damselfly::core {

// One ziplist element: an integer, or a view of string bytes inside the blob.
struct ZiplistValue {
  bool is_int = false;
  int64_t ival = 0;
  std::string_view sval;
};

// Calls f for each element of the ziplist `blob`, in order, after checking the whole
// blob. Returns false (f never called) when the blob is malformed.
bool ZiplistForEach(std::string_view blob, absl::FunctionRef<void(const ZiplistValue&)> f);

// Calls f(field, value) for each pair of the zipmap `blob`, in order, after checking the
// whole blob. Returns false (f never called) when the blob is malformed.
bool ZipmapForEach(std::string_view blob,
                   absl::FunctionRef<void(std::string_view field, std::string_view value)> f);

}  // namespace damselfly::core
