// DenseSet: the hash set behind large hashes and sets (StringMap, StringSet), sorted sets'
// member index, and anything else that maps a key to one heap block per entry.
//
// The problem: Redis's dict spends a 24-byte dictEntry plus an 8-byte bucket pointer on
// every member, beside the member's own sds; 10K-member sets of short strings pay more
// for the dict than for the data. The goal here is 8-16 bytes per member beyond the
// member's own block, no node per entry, no tombstones, and Redis's SCAN guarantee.
//
// The design: open addressing over one array of 8-byte slots, each an entry pointer with
// two fields packed into the high 16 bits x86-64 leaves unused (user addresses < 2^47):
//   bits 0..47   the entry pointer (0: empty slot)
//   bits 48..55  an 8-bit tag from the key's hash (its low bits): a probe compares keys
//                only when the tag matches, so a lookup reads ~1 key in 256 in vain
//   bits 56..63  the entry's distance from its home slot (0..kMaxDistance)
// The home slot of a key is its 64-bit hash scaled to the number of home slots
// (hash * homes >> 64, so home order is hash order), and the table is kept in Robin Hood
// order without wrap-around: entries lie in non-decreasing order of
// home slot, an entry never before its home, at most kMaxDistance slots after it. The
// array has a few overflow slots after the last home slot for the entries displaced
// past it; an insert that would need more (or a larger distance) grows the table.
//   - Lookups start at the home slot and stop at the first entry whose home is later:
//     absent keys cost as little as present ones, at any load.
//   - Erase shifts the following displaced entries back by one (backward-shift
//     deletion): no tombstones, the table never degrades.
//   - Load stays between 1/4 and 7/8 (grow to ~0.55 above, shrink to 0.5 below), and a
//     table uses its whole allocator size class, up to an eighth over its request (the
//     home count need not be a power of two): ~9-15 bytes of table per entry while
//     growing, ~11 on average (dense_set_test's MemoryPerMember prints it).
// Why not Dragonfly's chained DenseSet: chains need a link object or a tagged "next"
// pointer inside each entry (8 more bytes per member, or a node whenever two keys
// collide); at our loads linear probing with tags reads fewer cache lines per lookup.
// Why not absl::flat_hash_set: it orders nothing, so SCAN could not promise to visit
// every member across a rehash.
//
// SCAN: because entries are ordered by home slot, and the home slot grows with the hash,
// the table is sorted by hash at every size. A cursor is a hash value: the
// first hash the next call still has to visit (its bucket rounded to the table's size).
// A call visits whole home buckets from there on, in order, and returns the start of the
// first bucket it did not visit. Growth refines buckets (the boundary stays exact) and
// shrinking coarsens them (the call starts at the rounded-down bucket, revisiting a few
// entries), so every entry present throughout a scan is visited at least once. 0 is the
// first cursor and the "done" answer, as in Redis.
//
// Rehash is done at once, not incrementally like Redis's dict: a 1M-entry set rehashes
// in a few milliseconds, and doing it at once keeps every slot 8 bytes (no second table
// to consult on each lookup).
//
// Thread contract: not thread-safe; a set belongs to one thread (its shard's), which makes
// every call, the destructor included: its table is an ObjMalloc block of that thread
// (ObjMalloc's rule), so used_memory counts it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

#include "absl/hash/hash.h"
#include "glog/logging.h"
#include "src/core/obj_malloc.h"

namespace damselfly::core {

// The hash every DenseSet uses (scan cursors are built from it).
inline uint64_t DenseSetHash(std::string_view key) { return absl::Hash<std::string_view>{}(key); }

// A hash set of entry pointers, keyed by a string view the Policy reads from an entry.
//   struct Policy {
//     using Entry = ...;                                  // the caller's block type
//     static std::string_view Key(const Entry* entry);    // the entry's key bytes
//   };
// It does not own entries: Erase returns the entry, and the owner frees it.
template <typename Policy>
class DenseSet {
 public:
  using Entry = typename Policy::Entry;

  DenseSet() = default;
  ~DenseSet() { ObjFree(table_); }
  DenseSet(DenseSet&& other) noexcept { *this = std::move(other); }
  DenseSet& operator=(DenseSet&& other) noexcept {
    std::swap(table_, other.table_);
    std::swap(homes_, other.homes_);
    std::swap(slots_, other.slots_);
    std::swap(size_, other.size_);
    return *this;
  }
  DenseSet(const DenseSet&) = delete;
  DenseSet& operator=(const DenseSet&) = delete;

  // The hash Find and Insert use, for a caller that does both with one key (an add
  // that checks for the key first hashes it once).
  static uint64_t Hash(std::string_view key) { return DenseSetHash(key); }

  // Returns the entry whose key equals `key` (whose Hash is `hash`), or nullptr.
  Entry* Find(std::string_view key) const { return Find(key, Hash(key)); }
  Entry* Find(std::string_view key, uint64_t hash) const {
    if (size_ == 0) return nullptr;
    size_t slot = FindSlot(key, hash);
    return slot == kNotFound ? nullptr : EntryOf(table_[slot]);
  }

  // Adds `entry`, whose key's Hash is `hash`. REQUIRES: no entry with its key is present.
  void Insert(Entry* entry) { Insert(entry, Hash(Policy::Key(entry))); }
  void Insert(Entry* entry, uint64_t hash) {
    DCHECK(Find(Policy::Key(entry)) == nullptr);
    // Growing to a load of ~0.55 (x1.6) rather than 0.44 (x2) keeps the average load
    // near 0.7 (11 bytes of table per entry) for ~2 rehash moves per insert.
    if (size_ + 1 > MaxSizeFor(homes_)) Rehash(std::max(kMinHomes, (size_ + 1) * 20 / 11));
    while (!TryInsert(entry, hash)) Rehash(homes_ * 2);
    ++size_;
  }

  // Replaces the entry whose key equals `entry`'s key with `entry` and returns the old
  // one (the owner frees it), or nullptr (and inserts `entry`) when there was none.
  Entry* Replace(Entry* entry) {
    std::string_view key = Policy::Key(entry);
    size_t slot = size_ == 0 ? kNotFound : FindSlot(key, DenseSetHash(key));
    if (slot == kNotFound) {
      Insert(entry);
      return nullptr;
    }
    Entry* old = EntryOf(table_[slot]);
    table_[slot] = (table_[slot] & ~kPtrMask) | reinterpret_cast<uintptr_t>(entry);
    return old;
  }

  // Removes the entry whose key equals `key` and returns it (the owner frees it), or
  // returns nullptr when absent. May shrink the table.
  Entry* Erase(std::string_view key) {
    if (size_ == 0) return nullptr;
    size_t slot = FindSlot(key, DenseSetHash(key));
    if (slot == kNotFound) return nullptr;
    Entry* entry = EntryOf(table_[slot]);
    EraseSlot(slot);
    return entry;
  }

  size_t Size() const { return size_; }
  bool Empty() const { return size_ == 0; }

  // Returns a random entry, each about equally likely: slots drawn from `rnd` (and
  // numbers derived from it) until one is occupied, so the draw is uniform over the
  // entries; expected draws 1/load <= 4. After 32 empty draws it takes the next entry
  // after the last one (biased, but it bounds the cost). REQUIRES: !Empty().
  Entry* Random(uint64_t rnd) const { return EntryOf(table_[RandomSlot(rnd)]); }
  // Removes the entry Random(rnd) returns and returns it (the owner frees it), with no
  // second lookup (SPOP). May shrink the table. REQUIRES: !Empty().
  Entry* EraseRandom(uint64_t rnd) {
    size_t slot = RandomSlot(rnd);
    Entry* entry = EntryOf(table_[slot]);
    EraseSlot(slot);
    return entry;
  }

  // Calls f(Entry*) for every entry once. f must not change the set.
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t i = 0; i < slots_; ++i) {
      if (table_[i] != 0) f(EntryOf(table_[i]));
    }
  }

  // Calls f(Entry*) for the entries of whole home buckets from `cursor` on, until at
  // least `count` were visited (or the end), and returns the next cursor (0: done). See
  // SCAN above for the guarantee. f must not change the set.
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& f) const {
    if (size_ == 0) return 0;
    if (count == 0) count = 1;
    const size_t first = HomeOf(cursor);
    size_t visited = 0;
    size_t current_home = SIZE_MAX;
    for (size_t i = first; i < slots_; ++i) {
      uintptr_t s = table_[i];
      if (s == 0) continue;
      size_t home = i - Distance(s);
      if (home < first) continue;
      if (home != current_home && visited >= count) return FirstHashOf(home);
      current_home = home;
      f(EntryOf(s));
      ++visited;
    }
    return 0;
  }

  // For a set nobody reads any more, freed in steps (UNLINK's lazy free): hands up to
  // `max` entries to free_entry(Entry*) and forgets them, from the table's end; returns
  // true while entries remain. Only DrainSome, Clear and destruction may follow.
  template <typename F>
  bool DrainSome(size_t max, F&& free_entry) {
    while (max > 0 && slots_ > 0) {
      const uintptr_t s = table_[--slots_];
      if (s == 0) continue;
      free_entry(EntryOf(s));
      --size_;
      --max;
    }
    return size_ > 0;
  }

  // Drops every entry pointer and the table (the owner frees the entries first).
  void Clear() {
    ObjFree(table_);
    table_ = nullptr;
    homes_ = 0;
    slots_ = 0;
    size_ = 0;
  }

  // Home slots of the table (0 before the first insert): the load is Size() / HomeSlots().
  size_t HomeSlots() const { return homes_; }
  // Returns the bytes of the table block (not the entries).
  size_t TableMallocUsed() const { return table_ == nullptr ? 0 : ObjUsableSize(table_); }

  // Grows the table so that `n` more entries fit without a rehash.
  void Reserve(size_t n) {
    if (size_ + n > MaxSizeFor(homes_)) Rehash((size_ + n) * 8 / 7 + 1);
  }

 private:
  static constexpr size_t kMinHomes = 8;
  static constexpr uintptr_t kPtrMask = (uintptr_t{1} << 48) - 1;
  static constexpr unsigned kTagShift = 48;
  static constexpr unsigned kDistanceShift = 56;
  static constexpr size_t kMaxDistance = 255;
  static constexpr size_t kNotFound = SIZE_MAX;

  static Entry* EntryOf(uintptr_t slot) { return reinterpret_cast<Entry*>(slot & kPtrMask); }
  static size_t Distance(uintptr_t slot) { return slot >> kDistanceShift; }
  static uintptr_t Tag(uint64_t hash) { return (hash & 0xFF) << kTagShift; }
  static uintptr_t Pack(Entry* entry, uintptr_t tag, size_t distance) {
    uintptr_t ptr = reinterpret_cast<uintptr_t>(entry);
    DCHECK_EQ(ptr & ~kPtrMask, 0u);
    return ptr | tag | (uintptr_t{distance} << kDistanceShift);
  }
  // splitmix64's finalizer: a new, independent-looking number from `x`.
  static uint64_t MixBits(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  }
  // Grow above 7/8 of the home slots.
  static size_t MaxSizeFor(size_t homes) { return homes - homes / 8; }
  // Room after the last home slot for entries displaced past it.
  static size_t OverflowFor(size_t slots) { return std::min(slots / 9 + 4, kMaxDistance); }

  // The home slot: the hash scaled to [0, homes_) (multiply-shift), which keeps home
  // order equal to hash order at any table size.
  size_t HomeOf(uint64_t hash) const {
    return static_cast<size_t>((static_cast<unsigned __int128>(hash) * homes_) >> 64);
  }
  // The smallest hash whose home is `home`.
  uint64_t FirstHashOf(size_t home) const {
    return static_cast<uint64_t>(((static_cast<unsigned __int128>(home) << 64) + homes_ - 1) /
                                 homes_);
  }

  // The slot of Random(rnd) (see there). REQUIRES: !Empty().
  size_t RandomSlot(uint64_t rnd) const {
    DCHECK(size_ > 0);
    size_t slot = 0;
    for (int draw = 0; draw < 32; ++draw) {
      slot = rnd % slots_;
      if (table_[slot] != 0) return slot;
      rnd = MixBits(rnd + 0x9E3779B97F4A7C15ULL);
    }
    while (table_[slot] == 0) slot = slot + 1 == slots_ ? 0 : slot + 1;
    return slot;
  }

  size_t FindSlot(std::string_view key, uint64_t hash) const {
    const size_t home = HomeOf(hash);
    const uintptr_t tag = Tag(hash);
    for (size_t i = home; i < slots_; ++i) {
      uintptr_t s = table_[i];
      if (s == 0 || i - Distance(s) > home) break;
      if ((s & (uintptr_t{0xFF} << kTagShift)) == tag && i - Distance(s) == home &&
          Policy::Key(EntryOf(s)) == key) {
        return i;
      }
    }
    return kNotFound;
  }

  // Puts `entry` after the entries of its home bucket and the ones before it, shifting
  // the rest of the cluster right by one. Returns false (changing nothing) when the
  // cluster reaches the end of the array or a distance would exceed kMaxDistance.
  bool TryInsert(Entry* entry, uint64_t hash) {
    const size_t home = HomeOf(hash);
    size_t pos = home;
    while (pos < slots_ && table_[pos] != 0 && pos - Distance(table_[pos]) <= home) ++pos;
    if (pos - home > kMaxDistance) return false;
    size_t end = pos;
    while (end < slots_ && table_[end] != 0) {
      if (Distance(table_[end]) == kMaxDistance) return false;
      ++end;
    }
    if (end == slots_) return false;
    std::memmove(table_ + pos + 1, table_ + pos, (end - pos) * sizeof(uintptr_t));
    for (size_t i = pos + 1; i <= end; ++i) table_[i] += uintptr_t{1} << kDistanceShift;
    table_[pos] = Pack(entry, Tag(hash), pos - home);
    return true;
  }

  void EraseSlot(size_t slot) {
    size_t end = slot + 1;
    while (end < slots_ && table_[end] != 0 && Distance(table_[end]) > 0) ++end;
    std::memmove(table_ + slot, table_ + slot + 1, (end - slot - 1) * sizeof(uintptr_t));
    for (size_t i = slot; i + 1 < end; ++i) table_[i] -= uintptr_t{1} << kDistanceShift;
    table_[end - 1] = 0;
    --size_;
    if (homes_ > kMinHomes && size_ < homes_ / 4) Rehash(std::max(kMinHomes, size_ * 2));
  }

  // Moves every entry into a new table of at least `min_homes` home slots (more if they
  // do not fit). The table takes its whole allocator size class: mimalloc rounds large
  // blocks up to 64 KiB steps, which would otherwise be paid for and unused.
  void Rehash(size_t min_homes) {
    uintptr_t* old_table = table_;
    size_t old_slots = slots_;
    for (;; min_homes *= 2) {
      size_t bytes = (min_homes + OverflowFor(min_homes)) * sizeof(uintptr_t);
      table_ = static_cast<uintptr_t*>(ObjMalloc(bytes));
      // The table takes the rest of its size class, but no more than an eighth over what
      // it asked for: a free block of a bigger table can come back for a smaller request,
      // and a shrink that keeps its size would repeat on every erase.
      if (size_t usable = ObjUsableSize(table_); usable > bytes) {
        ObjFree(table_);
        bytes = std::min(usable, bytes + bytes / 8);
        table_ = static_cast<uintptr_t*>(ObjMalloc(bytes));
      }
      slots_ = bytes / sizeof(uintptr_t);
      homes_ = slots_ - OverflowFor(slots_);
      std::memset(table_, 0, slots_ * sizeof(uintptr_t));
      bool ok = true;
      for (size_t i = 0; i < old_slots && ok; ++i) {
        if (old_table[i] == 0) continue;
        Entry* entry = EntryOf(old_table[i]);
        ok = TryInsert(entry, DenseSetHash(Policy::Key(entry)));
      }
      if (ok) break;
      ObjFree(table_);
    }
    ObjFree(old_table);
  }

  uintptr_t* table_ = nullptr;
  size_t homes_ = 0;  // home slots (0 while there is no table)
  size_t slots_ = 0;  // home slots + overflow slots
  size_t size_ = 0;
};

}  // namespace damselfly::core
