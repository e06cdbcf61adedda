// StringSet: a set of binary-safe strings, the large encoding of Redis sets ("hashtable").
// Each member is one ObjMalloc block (a length prefix and the bytes) and one 8-byte slot
// of a DenseSet (see dense_set.h for the table, its memory and its SCAN guarantee).
//
// Thread contract: not thread-safe; a set belongs to one thread (its shard's), whose
// ObjMalloc heap holds its blocks and which makes every call, the destructor included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "src/core/dense_set.h"

namespace damselfly::core {

namespace dense_internal {

// A length-prefixed string inside a block: one byte for lengths below 255, else 0xFF and
// a 4-byte length (members are at most 512 MiB).
struct LenPrefixed {
  static size_t HeaderSize(size_t len) { return len < 255 ? 1 : 5; }
  // Writes the prefix and the bytes of `s` at `dst`; returns the byte after them.
  static char* Write(char* dst, std::string_view s);
  // Returns the string at `src`. Inline: every probe's key compare reads one.
  static std::string_view Read(const char* src) {
    const uint8_t first = static_cast<uint8_t>(*src);
    if (first < 255) return {src + 1, first};
    uint32_t len;
    std::memcpy(&len, src + 1, sizeof(len));
    return {src + 5, len};
  }
};

// The opaque entry type of StringSet and StringMap: a block that starts with a
// length-prefixed key.
struct KeyBlock;

struct KeyBlockPolicy {
  using Entry = KeyBlock;
  static std::string_view Key(const KeyBlock* entry) {
    return LenPrefixed::Read(reinterpret_cast<const char*>(entry));
  }
};

}  // namespace dense_internal

class StringSet {
 public:
  StringSet() = default;
  ~StringSet() { Clear(); }
  StringSet(StringSet&& other) noexcept
      : set_(std::move(other.set_)), blocks_bytes_(std::exchange(other.blocks_bytes_, 0)) {}
  StringSet& operator=(StringSet&& other) noexcept;
  StringSet(const StringSet&) = delete;
  StringSet& operator=(const StringSet&) = delete;

  // Adds `member`; returns false when it was already present.
  bool Add(std::string_view member);
  bool Contains(std::string_view member) const { return set_.Find(member) != nullptr; }
  // Removes `member`; returns false when it was absent.
  bool Remove(std::string_view member);
  size_t Size() const { return set_.Size(); }
  bool Empty() const { return set_.Empty(); }

  // Returns a random member (every member reachable, see DenseSet::Random); the view is
  // valid until the next change. REQUIRES: Size() > 0.
  std::string_view Random(uint64_t rnd) const { return Key(set_.Random(rnd)); }
  // Removes and returns a random member. REQUIRES: Size() > 0.
  std::string Pop(uint64_t rnd);

  // Calls f(std::string_view member) for every member once. f must not change the set.
  template <typename F>
  void ForEach(F&& f) const {
    set_.ForEach([&](const Block* b) { f(Key(b)); });
  }
  // SCAN (DenseSet::Scan): calls f(std::string_view member), returns the next cursor.
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& f) const {
    return set_.Scan(cursor, count, [&](const Block* b) { f(Key(b)); });
  }

  // Home slots of the table (DenseSet::HomeSlots).
  size_t HomeSlots() const { return set_.HomeSlots(); }
  // Returns the heap bytes of the table and the member blocks.
  size_t MallocUsed() const { return set_.TableMallocUsed() + blocks_bytes_; }
  // Makes room for `n` more members without a rehash.
  void Reserve(size_t n) { set_.Reserve(n); }
  // Removes every member.
  void Clear();
  // Frees up to `max` members of a set nobody reads any more (DenseSet::DrainSome); true
  // while some remain. Only FreeSome, Clear and destruction may follow.
  bool FreeSome(size_t max);

 private:
  using Block = dense_internal::KeyBlock;
  static std::string_view Key(const Block* b) { return dense_internal::KeyBlockPolicy::Key(b); }
  void FreeBlock(Block* b);

  DenseSet<dense_internal::KeyBlockPolicy> set_;
  size_t blocks_bytes_ = 0;  // ObjUsableSize of the member blocks
};

}  // namespace damselfly::core
