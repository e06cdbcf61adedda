// Listpack: Redis 7.0's packed sequence of strings and integers in one contiguous block,
// the encoding of small lists (quicklist nodes), hashes, sets of strings and sorted sets.
// damselfly keeps the format byte for byte, so that RDB snapshots and DUMP payloads can
// carry a collection as the block it already is, and a RESTOREd blob can be kept as sent.
//
// Layout (all multi-byte fields little endian):
//   total_bytes u32 | num_elements u16 | entry* | 0xFF
// num_elements saturates at 65535, which means "unknown, count the entries".
// Each entry is  encoding [data] backlen,  where backlen is the byte length of
// encoding + data as a varint of 1..5 bytes written so that it reads from its last byte
// backwards (7 bits per byte, every byte but the first has its high bit set). backlen is
// what lets iteration run from the end: it is the reason a listpack can serve as a deque.
//   0xxxxxxx                     integer 0..127
//   10llllll <l bytes>           string of 0..63 bytes
//   110xxxxx yyyyyyyy            13-bit signed integer (x high bits, y low byte)
//   1110llll llllllll <bytes>    string of 64..4095 bytes (length big endian here)
//   0xF0 <u32 len> <bytes>       string of any length
//   0xF1 / 0xF2 / 0xF3 / 0xF4    16 / 24 / 32 / 64-bit signed integer, little endian
// A value is stored as an integer, in the smallest encoding that holds it, exactly when
// its text is the canonical decimal form of an int64 ("0", "-5", never "05", "+5", "-0"
// or " 5"); every other value is a string. Reading gives the integer back, and the caller
// prints it: since only canonical texts become integers, the round trip is exact.
//
// Why a class owning one ObjMalloc block instead of free functions over a pointer: every
// change may move the block, and the owner then has one pointer to update; the class
// also keeps the block's capacity, so small changes stay in place (Redis gets the same
// from realloc). Positions are byte offsets from the start of the block, not pointers,
// so they survive a move of the block; any change other than at the position it returns
// invalidates every position held.
//
// Thread contract: not thread-safe. A Listpack is owned by one thread (in the server, its
// shard's); all calls, the destructor included, happen on that thread (ObjMalloc's rule).
//
// Invariants: the block is always a well-formed listpack (Validate() would accept it);
// total_bytes < 2^32; num_elements is the entry count, or 65535 when the count is 65535
// or more. Exception: a blob from FromBytes may say 65535 for fewer (Redis leaves the
// count unknown after deletions until a walk refreshes it); here the next deletion
// refreshes it. Callers keep a listpack under kMaxSafeBytes with SafeToAdd(), as Redis
// does. A moved-from Listpack may only be destroyed or assigned to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace damselfly::core {

class Listpack {
 public:
  // Redis refuses to grow a listpack beyond 1 GiB (lpSafeToAdd) and converts the
  // collection to its large encoding instead; callers do the same.
  static constexpr size_t kMaxSafeBytes = size_t{1} << 30;

  // Byte offset of an entry inside the block. kNoPos (the header's offset, never an
  // entry) means "no entry": past the end, before the start, not found.
  using Pos = uint32_t;
  static constexpr Pos kNoPos = 0;

  // One element as stored: an integer or a view of string bytes inside the block. The
  // view is valid until the next change to the listpack.
  struct Value {
    bool is_int = false;
    int64_t ival = 0;
    std::string_view sval;

    // Returns the element's text (the decimal form for integers).
    std::string ToString() const;
    // Returns true when the element's text equals `s`.
    bool Equals(std::string_view s) const;
  };

  enum class Where { kBefore, kAfter };

  // The block and its capacity, for an owner that keeps them in its own storage (a small
  // collection's table slot holds them with no object around them). Release() hands them over
  // and leaves this Listpack moved-from; Adopt() makes a Listpack of them again. A
  // Listpack made by Adopt over a block that stays someone else's must end with
  // Release() rather than destruction, which would free the block.
  struct Block {
    uint8_t* data = nullptr;
    uint32_t capacity = 0;
  };
  static Listpack Adopt(Block block) { return Listpack(block); }
  Block Release() { return {std::exchange(data_, nullptr), std::exchange(capacity_, 0)}; }
  // The current block (changes move it). REQUIRES: not moved-from.
  Block block() const { return {data_, capacity_}; }

  // Makes an empty listpack (7 bytes: 07 00 00 00 00 00 FF).
  Listpack();
  ~Listpack();
  Listpack(Listpack&& other) noexcept;
  Listpack& operator=(Listpack&& other) noexcept;
  Listpack(const Listpack&) = delete;
  Listpack& operator=(const Listpack&) = delete;

  // Returns true when `blob` is a well-formed listpack: header total equals the blob's
  // length, every entry has a known encoding, lies inside the blob and carries the exact
  // backlen Redis would write, the entries end at the final 0xFF, and the header count
  // matches (any count goes with 65535, see above). Never reads outside the blob, whatever
  // it holds. Stricter than Redis only in requiring backlen's canonical bytes, which
  // Redis always writes. Cost: one pass over the blob. Callers check what the format
  // cannot (a hash's even count, duplicate fields) by iterating afterwards.
  static bool Validate(std::string_view blob);

  // Returns a listpack holding a copy of `blob`. REQUIRES: Validate(blob).
  static Listpack FromBytes(std::string_view blob);

  // Returns true when growing a listpack of `current_bytes` by `add_bytes` keeps it at or
  // under kMaxSafeBytes.
  static bool SafeToAdd(size_t current_bytes, size_t add_bytes) {
    return current_bytes + add_bytes <= kMaxSafeBytes;
  }

  // Returns the whole block, header and terminator included: the bytes Redis would store.
  std::string_view bytes() const;
  size_t ByteSize() const;

  // Returns the number of elements. O(1) below 65535 elements, a walk otherwise.
  size_t Size() const;
  bool Empty() const { return First() == kNoPos; }

  // Iteration. First/Last return kNoPos on an empty listpack; Next/Prev return kNoPos
  // past the ends. REQUIRES: `pos` is an entry's position.
  Pos First() const;
  Pos Last() const;
  Pos Next(Pos pos) const;
  Pos Prev(Pos pos) const;

  // Returns the position of element `index` (0 is the first, -1 the last), or kNoPos when
  // out of range. Walks from whichever end is nearer.
  Pos Seek(int64_t index) const;

  // Returns the element at `pos`. REQUIRES: `pos` is an entry's position.
  Value Get(Pos pos) const;

  // Returns the position of the first element at or after `pos` whose text equals
  // `value`, comparing `pos` and then every (skip + 1)-th element after it; kNoPos when
  // none does. skip = 1 visits the fields of a hash's field/value pairs. `pos` may be
  // kNoPos (returns kNoPos).
  Pos Find(Pos pos, std::string_view value, uint32_t skip = 0) const;

  // Adds `value` at the end / at the start.
  void Append(std::string_view value);
  void Prepend(std::string_view value);

  // Inserts `value` before or after the entry at `pos` and returns the new entry's
  // position. REQUIRES: `pos` is an entry's position.
  Pos Insert(Pos pos, std::string_view value, Where where);

  // Replaces the entry at `pos` with `value` and returns its position (unchanged).
  // REQUIRES: `pos` is an entry's position.
  Pos Replace(Pos pos, std::string_view value);

  // Deletes the entry at `pos` and returns the position of the entry that followed it,
  // or kNoPos when it was the last. REQUIRES: `pos` is an entry's position.
  Pos Delete(Pos pos);

  // Deletes up to `count` elements starting at element `index` (negative counts from the
  // end, as Seek). Returns how many were deleted (0 when `index` is out of range).
  size_t DeleteRange(int64_t index, size_t count);

 private:
  explicit Listpack(Block block) : data_(block.data), capacity_(block.capacity) {}

  uint8_t* data_;
  uint32_t capacity_;

  uint32_t TotalBytes() const;
  // Replaces `remove` bytes at `off` with `insert` uninitialized bytes, moving the tail
  // and updating total_bytes; returns where the new bytes start.
  uint8_t* Splice(uint32_t off, uint32_t remove, uint32_t insert);
  void AddToCount(int64_t delta);
  Pos InsertAt(uint32_t off, std::string_view value);
};

// Returns true and sets *out when `s` is the canonical decimal text of an int64: an
// optional '-', then "0" alone or a digit 1-9 followed by digits, in range, nothing else.
// These are exactly the texts Redis stores as listpack integers.
bool ListpackStringToInt64(std::string_view s, int64_t* out);

}  // namespace damselfly::core
