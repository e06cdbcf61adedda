// The element codec of Redis's listpack (listpack.h lists the encodings): one element's
// encoding byte(s) and data, without the back-length a Listpack writes after each entry.
// Listpack and PairPack (pair_pack.h, which stores elements without back-lengths) share
// it, so that an element's bytes are the same in both and a conversion copies them.
//
// Thread contract: pure functions over caller-owned bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "src/core/listpack.h"

namespace damselfly::core::lp_value {

// An element ready to write: its integer form, or a string.
struct Encoded {
  bool is_int;
  int64_t ival;
  std::string_view sval;
  uint32_t size;  // encoding + data
};

// How `value` is stored: as an integer exactly when ListpackStringToInt64 accepts it,
// in the smallest encoding that holds it; as a string otherwise.
Encoded Encode(std::string_view value);

// Writes e.size bytes at dst.
void Write(uint8_t* dst, const Encoded& e);

// Size of the encoding + data of the element at p. REQUIRES: p starts an element (not
// listpack's 0xFF terminator) whose encoding bytes are readable.
uint64_t SizeAt(const uint8_t* p);

// SizeAt for untrusted bytes: 0 when the element at p, of the `avail` bytes there, has
// no known encoding, is listpack's terminator or does not fit in them.
uint64_t CheckedSizeAt(const uint8_t* p, size_t avail);

// Reads the element at p; a string's view points at p's bytes.
Listpack::Value Read(const uint8_t* p);

// Whether the element at p is `e` (same form, same integer or same bytes).
inline bool Matches(const uint8_t* p, const Encoded& e) {
  Listpack::Value v = Read(p);
  return v.is_int == e.is_int && (e.is_int ? v.ival == e.ival : v.sval == e.sval);
}

// Writes the back-length of an entry whose encoding + data are `len` bytes into buf
// (when not null) and returns its size (1..5 bytes).
uint32_t EncodeBacklen(uint8_t* buf, uint64_t len);

// A listpack's bytes besides its entries: its 6-byte header and 1-byte terminator.
inline constexpr uint32_t kListpackFrameBytes = 7;

// Grows *out by a listpack of `total` bytes (header, entries, terminator) holding `count`
// elements: writes its header (a count of 65535 or more as 65535, "unknown") and its
// terminator, and returns where its entries go. For a writer that sized the entries.
uint8_t* AppendListpackFrame(std::string* out, uint64_t total, size_t count);

}  // namespace damselfly::core::lp_value
