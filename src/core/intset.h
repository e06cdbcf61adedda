// Intset: Redis 7.0's sorted array of integers in one contiguous block, the encoding of
// small sets whose members are all integers (SADD s 1 2 3). damselfly keeps the format
// byte for byte, so that RDB snapshots and DUMP payloads can carry such a set as the block
// it already is (RDB type 11), and a RESTOREd blob can be kept as sent.
//
// Layout (all fields little endian):
//   encoding u32 | length u32 | length elements of `encoding` bytes each
// encoding is the element width, 2, 4 or 8 (int16/int32/int64); the elements are signed,
// strictly ascending, so lookups are a binary search and there are no duplicates.
// An empty intset is 02 00 00 00 00 00 00 00.
//
// Why one width for all elements: the array stays indexable (Get, binary search, a random
// member in O(1)) with no per-element header. The price is that one wide value widens
// every element: adding a value that needs more bytes than the encoding upgrades the whole
// array to the smallest width that holds it (such a value is below or above every element,
// so it goes at one end). The encoding never shrinks again, not even when the wide values
// are removed: Redis does the same, and the bytes must match.
//
// Why a class owning one ObjMalloc block (as Listpack): every change may move the block
// and the owner has one pointer to update; the class also keeps the block's capacity, so
// small changes stay in place (Redis gets the same from realloc).
//
// Thread contract: not thread-safe. An Intset is owned by one thread (in the server, its
// shard's); all calls, the destructor included, happen on that thread (ObjMalloc's rule).
//
// Invariants: encoding is 2, 4 or 8; the block is 8 + length * encoding bytes; the
// elements are strictly ascending. A non-empty intset is one Validate() accepts. Every
// element fits the encoding by construction, but not every encoding is the smallest for
// its elements: after removals, or in a blob from FromBytes (Redis accepts both). The set
// server code keeps an intset small (set-max-intset-entries) and converts it to a hash
// table beyond that, so Add never grows one past 2^32 - 1 elements. A moved-from Intset
// may only be destroyed or assigned to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>

namespace damselfly::core {

class Intset {
 public:
  // Makes an empty intset (8 bytes, encoding 2).
  Intset();
  ~Intset();
  Intset(Intset&& other) noexcept;
  Intset& operator=(Intset&& other) noexcept;
  Intset(const Intset&) = delete;
  Intset& operator=(const Intset&) = delete;

  // Returns true when `blob` is a well-formed, non-empty intset: at least the 8-byte
  // header, encoding 2, 4 or 8, exactly 8 + length * encoding bytes, elements strictly
  // ascending. These are the checks of Redis's intsetValidateIntegrity with deep
  // sanitization; the empty intset is rejected, as there, since Redis never stores an
  // empty set. Like Redis, it accepts a wider encoding than the elements need. Redis runs
  // the ordering check only when sanitize-dump-payload asks for it; here it always runs,
  // because an unsorted blob breaks every lookup. Never reads outside the blob. Cost: one
  // pass over the elements.
  static bool Validate(std::string_view blob);

  // Returns an intset holding a copy of `blob`. REQUIRES: Validate(blob).
  static Intset FromBytes(std::string_view blob);

  // Returns the whole block, header included: the bytes Redis would store.
  std::string_view bytes() const;
  size_t ByteSize() const;

  // Returns the element width in bytes: 2, 4 or 8.
  uint32_t Encoding() const;

  // Returns the number of elements. O(1).
  size_t Size() const;
  bool Empty() const { return Size() == 0; }

  // Adds `value`; returns false (and changes nothing) when it is already present.
  // Upgrades the encoding when `value` needs a wider one. O(log n) to find, O(n) to move.
  bool Add(int64_t value);

  // Removes `value`; returns false when it was absent. Keeps the encoding.
  bool Remove(int64_t value);

  // Returns true when `value` is an element. O(log n).
  bool Contains(int64_t value) const;

  // Returns the element at `index` in ascending order. REQUIRES: index < Size().
  int64_t Get(size_t index) const;

  // Return the smallest / largest element. REQUIRES: !Empty().
  int64_t Min() const { return Get(0); }
  int64_t Max() const { return Get(Size() - 1); }

  // Returns an element chosen uniformly with `rng` (any uniform random bit generator),
  // for SRANDMEMBER and SPOP. REQUIRES: !Empty().
  template <typename URBG>
  int64_t Random(URBG& rng) const {
    std::uniform_int_distribution<size_t> pick(0, Size() - 1);
    return Get(pick(rng));
  }

 private:
  uint8_t* data_;
  size_t capacity_;

  // Finds `value` among the elements; returns true when present. *pos is its index, or
  // where it would be inserted.
  bool Search(int64_t value, size_t* pos) const;
  // Makes the block hold at least `new_bytes` bytes (reallocating also when it would use
  // less than half of it), keeping the first min(ByteSize(), new_bytes) bytes; may move it.
  void Resize(size_t new_bytes);
  void UpgradeAndAdd(int64_t value, uint32_t width);
};

}  // namespace damselfly::core
