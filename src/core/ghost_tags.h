// GhostTags: a few bits remembered about keys by their 64-bit hash, to be found again
// when the key is next asked for, as ARC's ghost lists remember evicted keys to learn
// which of two choices would have kept them. A direct-mapped table of 32-bit slots, 28
// bits of the hash (to recognise the key) and 4 bits of tags; a newer key overwrites an
// older one in its slot, so the table remembers about its size in recent keys. Half a
// slot per key: 2 bytes per key of the cache.
//
// Thread-safety: none; one shard's object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace damselfly::core {

class GhostTags {
 public:
  static constexpr uint8_t kTagBits = 4;

  // Sizes the table for a cache of about `keys` keys and forgets everything.
  void Resize(size_t keys) {
    size_t slots = 1024;
    while (slots < keys / 2) slots *= 2;
    slots_.assign(slots, 0);
  }
  size_t bytes() const { return slots_.capacity() * sizeof(uint32_t); }

  // Adds `tags` (1 to 15) to those remembered for the key hashed `hash`, taking its slot
  // from another key. REQUIRES: Resize was called.
  void Remember(uint64_t hash, uint8_t tags) {
    uint32_t& slot = slots_[Index(hash)];
    const uint32_t kept = (slot & ~kTagMask) == Fingerprint(hash) ? slot & kTagMask : 0;
    slot = Fingerprint(hash) | kept | tags;
  }

  // The tags remembered for the key hashed `hash`, which are then forgotten; 0 if none.
  uint8_t Take(uint64_t hash) {
    if (slots_.empty()) return 0;
    uint32_t& slot = slots_[Index(hash)];
    if ((slot & ~kTagMask) != Fingerprint(hash)) return 0;
    const uint8_t tags = uint8_t(slot & kTagMask);
    slot = 0;
    return tags;
  }

 private:
  static constexpr uint32_t kTagMask = (1u << kTagBits) - 1;

  // The slot from the hash's middle bits, the fingerprint from its top 28 (which a slot
  // holding no key, 0, matches only with tags 0: never a result).
  size_t Index(uint64_t hash) const { return (hash >> 20) & (slots_.size() - 1); }
  static uint32_t Fingerprint(uint64_t hash) { return uint32_t(hash >> 32) & ~kTagMask; }

  std::vector<uint32_t> slots_;
};

}  // namespace damselfly::core
