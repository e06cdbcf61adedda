// What Listpack and PairPack (pair_pack.h, which stores elements without back-lengths)
// share: the element codec of Redis's listpack (listpack.h lists the encodings), one
// element's encoding byte(s) and data without the back-length a Listpack writes after
// each entry, so that an element's bytes are the same in both and a conversion copies
// them; the writer of a listpack's frame; and the edit of an ObjMalloc block both make.
//
// Thread contract: functions over caller-owned bytes; SpliceBlock allocates and frees on
// the calling thread's object heap, so it runs on the thread that owns the block.
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

// Replaces `remove` bytes at `off` of the block *data (capacity *capacity, the first `used`
// bytes in use) with `insert` bytes the caller then writes, moving the tail; returns where
// they go. The block moves (ObjMalloc, ObjFree; *data and *capacity follow) when it grows
// past its capacity or would be less than half used, so a shrunk collection gives its
// memory back, as Redis's realloc does. Headers are the caller's.
uint8_t* SpliceBlock(uint8_t** data, uint32_t* capacity, uint64_t used, uint32_t off,
                     uint32_t remove, uint32_t insert);

}  // namespace damselfly::core::lp_value
