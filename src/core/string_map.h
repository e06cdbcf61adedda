// StringMap: a map of binary-safe fields to values, the large encoding of Redis hashes
// ("hashtable"). Each field and its value share one ObjMalloc block (the length-prefixed
// field, then the length-prefixed value), held by one 8-byte slot of a DenseSet (see
// dense_set.h for the table, its memory and its SCAN guarantee). Changing a value
// replaces the block.
//
// Thread contract: not thread-safe; a map belongs to one thread (its shard's), whose
// ObjMalloc heap holds its blocks and which makes every call, the destructor included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "src/core/dense_set.h"
#include "src/core/string_set.h"

namespace damselfly::core {

class StringMap {
 public:
  StringMap() = default;
  ~StringMap() { Clear(); }
  StringMap(StringMap&& other) noexcept
      : map_(std::move(other.map_)), blocks_bytes_(std::exchange(other.blocks_bytes_, 0)) {}
  StringMap& operator=(StringMap&& other) noexcept;
  StringMap(const StringMap&) = delete;
  StringMap& operator=(const StringMap&) = delete;

  // Sets `field` to `value`; returns true when the field is new.
  bool Set(std::string_view field, std::string_view value);
  // Sets `field` to `value` only when absent (HSETNX); returns true when it did.
  bool SetIfAbsent(std::string_view field, std::string_view value);
  // Returns the value of `field`, valid until the next change, or nullopt.
  std::optional<std::string_view> Get(std::string_view field) const;
  // Removes `field`; returns false when it was absent.
  bool Remove(std::string_view field);
  bool Contains(std::string_view field) const { return map_.Find(field) != nullptr; }
  size_t Size() const { return map_.Size(); }
  bool Empty() const { return map_.Empty(); }

  // Returns a random (field, value) pair (every pair reachable, see DenseSet::Random),
  // valid until the next change. REQUIRES: Size() > 0.
  std::pair<std::string_view, std::string_view> Random(uint64_t rnd) const {
    return Split(map_.Random(rnd));
  }

  // Calls f(std::string_view field, std::string_view value) for every pair once. f must
  // not change the map.
  template <typename F>
  void ForEach(F&& f) const {
    map_.ForEach([&](const Block* b) {
      auto [field, value] = Split(b);
      f(field, value);
    });
  }
  // SCAN (DenseSet::Scan): calls f(field, value), returns the next cursor.
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& f) const {
    return map_.Scan(cursor, count, [&](const Block* b) {
      auto [field, value] = Split(b);
      f(field, value);
    });
  }

  // Returns the heap bytes of the table and the pair blocks.
  size_t MallocUsed() const { return map_.TableMallocUsed() + blocks_bytes_; }
  // Makes room for `n` more fields without a rehash.
  void Reserve(size_t n) { map_.Reserve(n); }
  // Removes every pair.
  void Clear();
  // Frees up to `max` pairs of a map nobody reads any more (DenseSet::DrainSome); true
  // while some remain. Only FreeSome, Clear and destruction may follow.
  bool FreeSome(size_t max);

 private:
  using Block = dense_internal::KeyBlock;
  static std::pair<std::string_view, std::string_view> Split(const Block* b);
  Block* MakeBlock(std::string_view field, std::string_view value);
  void FreeBlock(Block* b);

  DenseSet<dense_internal::KeyBlockPolicy> map_;
  size_t blocks_bytes_ = 0;  // ObjUsableSize of the pair blocks
};

}  // namespace damselfly::core
