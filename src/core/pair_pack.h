// PairPack: the small encoding of hashes and sorted sets in memory: pairs of elements in
// one block, each element in listpack's element encoding (listpack_value.h) but without
// the back-length a listpack writes after every entry, and with a 4-byte header instead
// of listpack's 6 header bytes and terminator.
//
// Why not Redis's listpack itself, which RDB and DUMP carry: the back-lengths exist so
// that a listpack can be walked from its end, which a list needs (its quicklist nodes stay
// listpacks) and a hash or a sorted set does not: their operations walk from the start.
// Dropping them saves a byte per element and five per block: a hash of 10 short fields
// takes 64 bytes instead of 87 (the 96-byte size class), about a quarter of its memory.
// RDB, DUMP and moves between shards convert: AppendListpack writes the listpack Redis
// would hold, FromListpack takes one in; the elements' bytes are the same in both, so a
// conversion copies them.
//
// Layout: a 32-bit little-endian header, total_bytes in its low 20 bits and the count of
// pairs in its high 12, then (first second)*.
// A hash's pairs are field and value, both elements (the methods under "string pairs");
// a sorted set's are a member element and a score code (zset_pack.h), which works on the
// block through the raw methods. A pack holds at most kMaxBytes (1 MiB) and kMaxPairs
// (4095): its owner converts to the large encoding before a change would pass them
// (Fits; CollectionLimits caps the entry limits at kMaxPairs), as it does at its entry
// and value limits. Listpacks that large are walked at every access; Redis's defaults
// (512 hash fields, 128 sorted-set members, of 64 bytes) stay far below.
//
// Positions are byte offsets from the start of the block; kNoPos (the header's offset)
// means none. Any change invalidates every position but the one it returns.
//
// Thread contract: not thread-safe; a PairPack and its block belong to one thread (its
// shard's: ObjMalloc's rule), which makes every call, the destructor included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "src/core/listpack.h"

namespace damselfly::core {

class PairPack {
 public:
  static constexpr size_t kMaxBytes = (size_t{1} << 20) - 1;
  static constexpr size_t kMaxPairs = (size_t{1} << 12) - 1;
  static constexpr uint32_t kHeaderSize = 4;

  using Pos = uint32_t;
  static constexpr Pos kNoPos = 0;
  using Value = Listpack::Value;
  // The block and its capacity, kept by an owner with no object around it (see
  // Listpack::Block; a PrimeValue holds either kind the same way).
  using Block = Listpack::Block;
  static PairPack Adopt(Block block) { return PairPack(block); }
  Block Release() { return {std::exchange(data_, nullptr), std::exchange(capacity_, 0)}; }
  Block block() const { return {data_, capacity_}; }

  // An empty pack (4 bytes).
  PairPack();
  ~PairPack();
  PairPack(PairPack&& other) noexcept;
  PairPack& operator=(PairPack&& other) noexcept;
  PairPack(const PairPack&) = delete;
  PairPack& operator=(const PairPack&) = delete;

  // Whether a pack of `current_bytes` may grow by `add_bytes`.
  static bool Fits(size_t current_bytes, size_t add_bytes) {
    return current_bytes + add_bytes <= kMaxBytes;
  }

  size_t ByteSize() const { return ReadHeader(data_) & kMaxBytes; }
  size_t Size() const { return ReadHeader(data_) >> 20; }  // pairs
  bool Empty() const { return Size() == 0; }

  // The first pair's position, or kNoPos when empty.
  Pos First() const { return Empty() ? kNoPos : kHeaderSize; }
  // The position just past the last pair.
  Pos End() const { return ByteSize(); }

  // The element at `pos` and the position after it (End() after the last).
  Value Get(Pos pos) const;
  Pos After(Pos pos) const;

  // --- string pairs (a hash's): both elements of every pair are elements.

  // The next element's position, kNoPos past the last.
  Pos Next(Pos pos) const {
    Pos next = After(pos);
    return next == End() ? kNoPos : next;
  }
  // The position of the pair whose first element's text is `first`, or kNoPos.
  Pos Find(std::string_view first) const;
  // The position of pair `index` (< Size()).
  Pos SeekPair(size_t index) const;
  // Adds a pair at the end.
  void Append(std::string_view first, std::string_view second);
  // Replaces the second element of the pair at `pair`.
  void ReplaceSecond(Pos pair, std::string_view second);
  // Removes the pair at `pair`.
  void ErasePair(Pos pair);
  // Appends the listpack Redis would hold for these pairs (header, entries with their
  // back-lengths, terminator) to *out.
  void AppendListpack(std::string* out) const;
  // The pairs of a listpack holding an even count of elements. REQUIRES: it fits
  // (ListpackFits).
  static PairPack FromListpack(const Listpack& lp);
  // Whether FromListpack can hold `lp`'s elements.
  static bool ListpackFits(const Listpack& lp);
  // A pack holding a copy of `bytes`, which a pack's block held (PrimeValue::Serialize's
  // form within the process); nullopt when its header does not match its length. The
  // owner checks the pairs (ValidStringPairs, ZSetPack::Valid).
  static std::optional<PairPack> FromBytes(std::string_view bytes);
  // Whether the pack holds exactly Size() pairs of well-formed elements, and nothing
  // else. Never reads outside the pack.
  bool ValidStringPairs() const;

  // --- raw access for encodings built on the pack (zset_pack.h).

  const uint8_t* data() const { return data_; }
  // Replaces `remove` bytes at `off` with `insert` bytes the caller then writes, moving the
  // tail and updating total_bytes; returns where they start. REQUIRES: the result fits.
  uint8_t* Splice(Pos off, uint32_t remove, uint32_t insert);
  void AddPairs(int64_t delta) { WriteHeader(data_, ByteSize(), Size() + delta); }

 private:
  explicit PairPack(Block block) : data_(block.data), capacity_(block.capacity) {}

  static uint32_t ReadHeader(const uint8_t* p) {
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  }
  static void WriteHeader(uint8_t* p, size_t total, size_t pairs) {
    const uint32_t v = uint32_t(total) | uint32_t(pairs) << 20;
    for (int i = 0; i < 4; ++i) p[i] = (v >> (8 * i)) & 0xFF;
  }

  uint8_t* data_;
  uint32_t capacity_;
};

}  // namespace damselfly::core
