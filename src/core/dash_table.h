// DashTable: an extendible hash table in the style of Dash (Lu et al., PVLDB 13(8), 2020),
// a shard's main keyspace table.
//
// Layout.
//   directory  2^global_depth pointers to segments, indexed by the top bits of the hash.
//              A segment of local depth d is referenced by 2^(global_depth - d) entries.
//   segment    kRegularBuckets regular buckets and kStashBuckets stash buckets.
//   bucket     kSlots slots; per slot a 1-byte fingerprint; bitmaps for "occupied" and
//              "lives here as a neighbour"; a counter of its entries that overflowed into
//              the stash; a version counter (snapshots compare it with their epoch).
//
// Hash bits: the top bits choose the segment, bits 8.. choose the home bucket (modulo
// kRegularBuckets), the low 8 bits are the fingerprint. A lookup hashes once, reads one
// directory entry and compares fingerprints before touching any key.
//
// Insert. An entry goes to its home bucket or the next one (its neighbour), whichever
// has more room (Dash's balanced insert). When both are full, an entry is displaced to
// make room: one living in the neighbour at home moves on to the neighbour's neighbour,
// or one living in the home bucket as a neighbour moves back to its own home. Failing
// that it goes to any stash bucket, and its home bucket counts the overflow so that
// lookups search the stash only when something of theirs is there. When the stash is
// full too, the segment splits.
//
// Split. Only the full segment splits, into itself and a new segment of depth d+1; the
// directory doubles first if d == global_depth. Entries whose hash bit d (from the top)
// is set move to the new segment into the very same bucket and slot, so a split cannot
// fail and needs no reinsertion; bucket versions are copied. There is never a global
// rehash: memory grows by one segment at a time.
//
// Traversal (SCAN). A cursor is (40-bit hash prefix, home bucket). Each step emits the
// entries of one segment whose *home* bucket is the cursor's bucket, wherever they sit
// (home, neighbour or stash), then advances the bucket, and after the last bucket jumps
// to the prefix where the segment's range ends. Which entries belong to a (prefix range,
// home bucket) pair does not depend on the table's layout, and splits only narrow a
// segment's prefix range, so an entry present during a whole scan is emitted at least
// once; after a split the new segment is visited from bucket 0, which may repeat some
// entries (allowed). Global depth is limited to 40 (2^40 segments).
//
// Parameters (DashParams; dash_table_bench.cc measures alternatives, see
// docs/benchmarks.md):
//   kSlots = 14: fingerprints (14 B) and the two 16-bit bitmaps fit 32 bytes of metadata
//     with the overflow counter and leave two bits spare; a probe scans 14 fingerprints
//     with one 16-byte SIMD compare.
//   kRegularBuckets = 55, kStashBuckets = 4: a segment of 826 slots fills to ~90% before
//     it splits, and a split moves ~400 entries, small enough not to stall a shard. With
//     16-byte keys and values a bucket is 480 bytes and a segment 28,328: just inside
//     mimalloc's 28 KiB size class. 56+4 buckets (28,808 bytes) fell into the 32 KiB
//     class and wasted 12% of all table memory (measured: RSS 14% over used_memory).
//
// Assumes a good 64-bit hash: more than a segment's worth of keys sharing their top 40
// hash bits would make splits degenerate and the directory double without end.
// Iterators (Handle) are invalidated by any insertion or erasure.
// Thread-safety: none; a table belongs to one shard thread.
#pragma once

#include <emmintrin.h>
#include <glog/logging.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace damselfly::core {

// The shape of a table; the defaults are the measured choice explained above.
template <unsigned Slots = 14, unsigned RegularBuckets = 55, unsigned StashBuckets = 4>
struct DashParams {
  static_assert(Slots >= 2 && Slots <= 16, "slot bitmaps and the SIMD probe hold 16");
  static_assert(RegularBuckets >= 2 && RegularBuckets + StashBuckets <= 256, "bucket index is 8 bits");
  static constexpr unsigned kSlots = Slots;
  static constexpr unsigned kRegularBuckets = RegularBuckets;
  static constexpr unsigned kStashBuckets = StashBuckets;
};

// Policy: how keys hash and compare. Requires
//   static uint64_t Hash(const Key&) and Hash(const Probe&) for every probe type used,
//   static bool Equal(const Key&, const Probe&).
template <typename Key, typename Value, typename Policy, typename Params = DashParams<>>
class DashTable {
 public:
  static constexpr unsigned kSlots = Params::kSlots;
  static constexpr unsigned kRegularBuckets = Params::kRegularBuckets;
  static constexpr unsigned kStashBuckets = Params::kStashBuckets;
  static constexpr unsigned kTotalBuckets = kRegularBuckets + kStashBuckets;
  static constexpr unsigned kMaxGlobalDepth = 40;

 private:
  struct Bucket {
    uint8_t fingerprint[16] = {};  // kSlots used; 16 for the SIMD compare
    uint16_t occupied = 0;    // bit i: slot i holds an entry
    uint16_t neighbour = 0;   // bit i: slot i's home is the previous bucket
    uint16_t overflow = 0;    // entries homed here that live in the stash
    uint64_t version = 0;
    // A slot keeps its key and value side by side: a lookup that finds a key reads its
    // value from the same cache line.
    struct alignas(alignof(Key) > alignof(Value) ? alignof(Key) : alignof(Value)) Slot {
      unsigned char key[sizeof(Key)];
      unsigned char value[sizeof(Value)];
    };
    Slot slots[kSlots];

    void* key_storage(unsigned slot) { return slots[slot].key; }
    void* value_storage(unsigned slot) { return slots[slot].value; }
    Key& key(unsigned slot) { return *std::launder(reinterpret_cast<Key*>(slots[slot].key)); }
    Value& value(unsigned slot) {
      return *std::launder(reinterpret_cast<Value*>(slots[slot].value));
    }
    bool full() const { return occupied == (1u << kSlots) - 1; }  // kSlots <= 16
    unsigned size() const { return __builtin_popcount(occupied); }
    int FreeSlot() const { return full() ? -1 : __builtin_ctz(~occupied); }

    // Slots whose fingerprint matches, as a bitmap.
    uint32_t Matches(uint8_t fp) const {
      __m128i probe = _mm_set1_epi8(char(fp));
      __m128i stored = _mm_loadu_si128(reinterpret_cast<const __m128i*>(fingerprint));
      return uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(probe, stored))) & occupied;
    }
  };

  struct Segment {
    explicit Segment(unsigned depth) : local_depth(depth) {}
    unsigned local_depth;
    Bucket buckets[kTotalBuckets];
  };

 public:
  // A position in the table; valid until the next insertion or erasure.
  class Handle {
   public:
    Handle() = default;
    explicit operator bool() const { return segment_ != nullptr; }
    Key& key() const { return bucket().key(slot_); }
    Value& value() const { return bucket().value(slot_); }
    uint64_t bucket_version() const { return bucket().version; }
    void set_bucket_version(uint64_t version) const { bucket().version = version; }

   private:
    friend class DashTable;
    Handle(Segment* segment, unsigned bucket, unsigned slot)
        : segment_(segment), bucket_(bucket), slot_(slot) {}
    Bucket& bucket() const { return segment_->buckets[bucket_]; }

    Segment* segment_ = nullptr;
    uint8_t bucket_ = 0;
    uint8_t slot_ = 0;
  };

  DashTable() { directory_.push_back(NewSegment(0)); }
  ~DashTable() { DestroySegments(); }
  DashTable(const DashTable&) = delete;
  DashTable& operator=(const DashTable&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  unsigned global_depth() const { return global_depth_; }
  size_t segment_count() const { return segments_; }
  size_t bucket_count() const { return segments_ * kTotalBuckets; }
  size_t slot_capacity() const { return bucket_count() * kSlots; }
  // The size of one segment allocation.
  static constexpr size_t segment_bytes() { return sizeof(Segment); }
  // Bytes of segments and directory (not what keys and values point to).
  size_t mem_usage() const {
    return segments_ * sizeof(Segment) + directory_.capacity() * sizeof(Segment*);
  }

  template <typename Probe>
  Handle Find(const Probe& probe) const {
    return FindHashed(probe, Policy::Hash(probe));
  }
  // REQUIRES: hash == Policy::Hash(probe). Lets a miss be followed by InsertNew without
  // hashing twice.
  template <typename Probe>
  Handle Find(const Probe& probe, uint64_t hash) const {
    return FindHashed(probe, hash);
  }

  // Inserts key/value unless an equal key is present; returns the entry and whether it
  // was inserted. May split a segment (which invalidates handles).
  std::pair<Handle, bool> Insert(Key key, Value value) {
    uint64_t hash = Policy::Hash(key);
    if (Handle found = FindHashed(key, hash)) return {found, false};
    return {InsertNew(std::move(key), std::move(value), hash), true};
  }

  // REQUIRES: no entry equals `key`. Saves the lookup Insert does.
  Handle InsertNew(Key key, Value value, uint64_t hash) {
    while (true) {
      Segment* segment = SegmentFor(hash);
      if (Handle placed = TryPlace(segment, hash)) {
        new (placed.bucket().key_storage(placed.slot_)) Key(std::move(key));
        new (placed.bucket().value_storage(placed.slot_)) Value(std::move(value));
        ++size_;
        return placed;
      }
      Split(segment, hash);
    }
  }

  void Erase(Handle handle) {
    Bucket& bucket = handle.bucket();
    unsigned slot = handle.slot_;
    if (handle.bucket_ >= kRegularBuckets) {
      uint64_t hash = Policy::Hash(bucket.key(slot));
      --handle.segment_->buckets[HomeBucket(hash)].overflow;
    }
    bucket.key(slot).~Key();
    bucket.value(slot).~Value();
    bucket.occupied &= ~(1u << slot);
    bucket.neighbour &= ~(1u << slot);
    --size_;
  }

  template <typename Probe>
  bool Erase(const Probe& probe) {
    Handle handle = Find(probe);
    if (!handle) return false;
    Erase(handle);
    return true;
  }

  void Clear() {
    DestroySegments();
    directory_.push_back(NewSegment(0));
  }

  // Calls fn(Handle) for the entries of one (segment, home bucket) step of a scan, from
  // `cursor` (0 starts), and returns the next cursor; 0 when the scan is complete. fn
  // must not insert or erase. Cursors fit in 48 bits.
  template <typename Fn>
  uint64_t TraverseStep(uint64_t cursor, Fn&& fn) {
    uint64_t prefix = cursor >> 8;
    unsigned home = cursor & 0xff;
    if (home >= kRegularBuckets) home = 0;  // not a cursor we made: restart the segment
    size_t index = global_depth_ ? prefix >> (kMaxGlobalDepth - global_depth_) : 0;
    Segment* segment = directory_[index];
    ForEachWithHome(segment, home, fn);
    if (++home < kRegularBuckets) return (prefix << 8) | home;
    // Next segment: the first directory index past this segment's range.
    size_t span = size_t(1) << (global_depth_ - segment->local_depth);
    size_t next = (index & ~(span - 1)) + span;
    if (next >= directory_.size()) return 0;
    return (uint64_t(next) << (kMaxGlobalDepth - global_depth_)) << 8;
  }

  // Calls fn(Handle) for every entry; fn must not insert or erase.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    ForEachSegment([&](Segment* segment) {
      for (unsigned b = 0; b < kTotalBuckets; ++b) {
        for (uint32_t bits = segment->buckets[b].occupied; bits; bits &= bits - 1) {
          fn(Handle(segment, b, __builtin_ctz(bits)));
        }
      }
    });
  }

  // A uniformly random occupied bucket's entry, for sampling (RANDOMKEY, eviction);
  // `random` supplies random 64-bit numbers. Empty Handle when the table is empty.
  template <typename Rng>
  Handle RandomEntry(Rng&& random) {
    if (size_ == 0) return {};
    while (true) {  // terminates: the table holds at least one entry
      Segment* segment = directory_[random() % directory_.size()];
      unsigned b = random() % kTotalBuckets;
      uint32_t bits = segment->buckets[b].occupied;
      if (bits == 0) continue;
      unsigned pick = random() % __builtin_popcount(bits);
      while (pick--) bits &= bits - 1;
      return Handle(segment, b, __builtin_ctz(bits));
    }
  }

 private:
  static uint8_t Fingerprint(uint64_t hash) { return uint8_t(hash); }
  static unsigned HomeBucket(uint64_t hash) { return (hash >> 8) % kRegularBuckets; }
  static unsigned Next(unsigned bucket) { return bucket + 1 == kRegularBuckets ? 0 : bucket + 1; }
  static unsigned Prev(unsigned bucket) { return bucket == 0 ? kRegularBuckets - 1 : bucket - 1; }

  // Destroys every entry and segment, leaving an empty directory.
  void DestroySegments() {
    ForEachSegment([&](Segment* segment) {
      for (Bucket& bucket : segment->buckets) {
        for (uint32_t bits = bucket.occupied; bits; bits &= bits - 1) {
          unsigned slot = __builtin_ctz(bits);
          bucket.key(slot).~Key();
          bucket.value(slot).~Value();
        }
      }
      delete segment;
    });
    directory_.clear();
    segments_ = 0;
    global_depth_ = 0;
    size_ = 0;
  }

  Segment* NewSegment(unsigned depth) {
    ++segments_;
    return new Segment(depth);
  }

  size_t DirectoryIndex(uint64_t hash) const {
    return global_depth_ ? hash >> (64 - global_depth_) : 0;
  }
  Segment* SegmentFor(uint64_t hash) const { return directory_[DirectoryIndex(hash)]; }

  template <typename Fn>
  void ForEachSegment(Fn&& fn) {
    for (size_t i = 0; i < directory_.size();) {
      Segment* segment = directory_[i];
      i += size_t(1) << (global_depth_ - segment->local_depth);
      fn(segment);
    }
  }

  template <typename Probe>
  Handle FindInBucket(Segment* segment, unsigned b, const Probe& probe, uint8_t fp) const {
    Bucket& bucket = segment->buckets[b];
    for (uint32_t bits = bucket.Matches(fp); bits; bits &= bits - 1) {
      unsigned slot = __builtin_ctz(bits);
      if (Policy::Equal(bucket.key(slot), probe)) return Handle(segment, b, slot);
    }
    return {};
  }

  template <typename Probe>
  Handle FindHashed(const Probe& probe, uint64_t hash) const {
    Segment* segment = SegmentFor(hash);
    unsigned home = HomeBucket(hash);
    uint8_t fp = Fingerprint(hash);
    if (Handle h = FindInBucket(segment, home, probe, fp)) return h;
    if (Handle h = FindInBucket(segment, Next(home), probe, fp)) return h;
    if (segment->buckets[home].overflow == 0) return {};
    for (unsigned b = kRegularBuckets; b < kTotalBuckets; ++b) {
      if (Handle h = FindInBucket(segment, b, probe, fp)) return h;
    }
    return {};
  }

  // Claims a free slot for an entry with `hash` in `segment` (setting its metadata), or
  // returns an empty Handle when the segment must split.
  Handle TryPlace(Segment* segment, uint64_t hash) {
    const unsigned home = HomeBucket(hash), next = Next(home);
    Bucket* buckets = segment->buckets;
    const uint8_t fp = Fingerprint(hash);
    auto claim = [&](unsigned b, bool as_neighbour) {
      Bucket& bucket = buckets[b];
      unsigned slot = bucket.FreeSlot();
      bucket.occupied |= 1u << slot;
      if (as_neighbour) bucket.neighbour |= 1u << slot;
      bucket.fingerprint[slot] = fp;
      ++bucket.version;
      return Handle(segment, b, slot);
    };
    if (!buckets[home].full() || !buckets[next].full()) {
      bool use_home = buckets[home].size() <= buckets[next].size() ? !buckets[home].full()
                                                                   : buckets[next].full();
      return use_home ? claim(home, false) : claim(next, true);
    }
    // Displacement: free a slot in the neighbour by moving one of its own entries on to
    // its neighbour, or free one at home by sending a guest back to its home.
    if (MoveEntry(segment, next, Next(next), /*from_neighbours=*/false)) return claim(next, true);
    if (MoveEntry(segment, home, Prev(home), /*from_neighbours=*/true)) return claim(home, false);
    for (unsigned b = kRegularBuckets; b < kTotalBuckets; ++b) {
      if (!buckets[b].full()) {
        ++buckets[home].overflow;
        return claim(b, false);
      }
    }
    return {};
  }

  // Moves one entry of bucket `from` to bucket `to` (which must be its other allowed
  // place): a resident (homed in `from`) when !from_neighbours, else a guest (homed in
  // `to`). False when there is no such entry or no room.
  bool MoveEntry(Segment* segment, unsigned from, unsigned to, bool from_neighbours) {
    Bucket& src = segment->buckets[from];
    Bucket& dst = segment->buckets[to];
    uint32_t candidates = from_neighbours ? (src.occupied & src.neighbour)
                                          : (src.occupied & ~src.neighbour);
    if (candidates == 0 || dst.full()) return false;
    unsigned slot = __builtin_ctz(candidates);
    unsigned target = dst.FreeSlot();
    new (dst.key_storage(target)) Key(std::move(src.key(slot)));
    new (dst.value_storage(target)) Value(std::move(src.value(slot)));
    src.key(slot).~Key();
    src.value(slot).~Value();
    dst.fingerprint[target] = src.fingerprint[slot];
    dst.occupied |= 1u << target;
    if (!from_neighbours) dst.neighbour |= 1u << target;  // now a guest in `to`
    src.occupied &= ~(1u << slot);
    src.neighbour &= ~(1u << slot);
    ++src.version;
    ++dst.version;
    return true;
  }

  void Split(Segment* segment, uint64_t hash) {
    if (segment->local_depth == global_depth_) {
      CHECK_LT(global_depth_, kMaxGlobalDepth) << "DashTable directory cannot grow further";
      std::vector<Segment*> doubled(directory_.size() * 2);
      for (size_t i = 0; i < directory_.size(); ++i) doubled[2 * i] = doubled[2 * i + 1] = directory_[i];
      directory_ = std::move(doubled);
      ++global_depth_;
    }
    const unsigned depth = segment->local_depth;
    Segment* upper = NewSegment(depth + 1);
    segment->local_depth = depth + 1;
    const uint64_t bit = uint64_t(1) << (63 - depth);
    for (unsigned b = 0; b < kTotalBuckets; ++b) {
      Bucket& src = segment->buckets[b];
      Bucket& dst = upper->buckets[b];
      dst.version = src.version;
      for (uint32_t bits = src.occupied; bits; bits &= bits - 1) {
        unsigned slot = __builtin_ctz(bits);
        uint64_t entry_hash = Policy::Hash(src.key(slot));
        if (!(entry_hash & bit)) continue;
        new (dst.key_storage(slot)) Key(std::move(src.key(slot)));
        new (dst.value_storage(slot)) Value(std::move(src.value(slot)));
        src.key(slot).~Key();
        src.value(slot).~Value();
        dst.fingerprint[slot] = src.fingerprint[slot];
        dst.occupied |= 1u << slot;
        dst.neighbour |= src.neighbour & (1u << slot);
        src.occupied &= ~(1u << slot);
        src.neighbour &= ~(1u << slot);
        if (b >= kRegularBuckets) {
          unsigned home = HomeBucket(entry_hash);
          --segment->buckets[home].overflow;
          ++upper->buckets[home].overflow;
        }
      }
    }
    // The upper half of the segment's directory range now points to the new segment.
    size_t span = size_t(1) << (global_depth_ - depth);
    size_t start = DirectoryIndex(hash) & ~(span - 1);
    for (size_t i = start + span / 2; i < start + span; ++i) directory_[i] = upper;
  }

  // Calls fn for the entries of `segment` whose home bucket is `home`.
  template <typename Fn>
  void ForEachWithHome(Segment* segment, unsigned home, Fn& fn) {
    Bucket& at_home = segment->buckets[home];
    for (uint32_t bits = at_home.occupied & ~at_home.neighbour; bits; bits &= bits - 1) {
      fn(Handle(segment, home, __builtin_ctz(bits)));
    }
    unsigned next = Next(home);
    Bucket& guests = segment->buckets[next];
    for (uint32_t bits = guests.occupied & guests.neighbour; bits; bits &= bits - 1) {
      fn(Handle(segment, next, __builtin_ctz(bits)));
    }
    if (at_home.overflow == 0) return;
    for (unsigned b = kRegularBuckets; b < kTotalBuckets; ++b) {
      Bucket& stash = segment->buckets[b];
      for (uint32_t bits = stash.occupied; bits; bits &= bits - 1) {
        unsigned slot = __builtin_ctz(bits);
        if (HomeBucket(Policy::Hash(stash.key(slot))) == home) fn(Handle(segment, b, slot));
      }
    }
  }

  std::vector<Segment*> directory_;
  unsigned global_depth_ = 0;
  size_t segments_ = 0;
  size_t size_ = 0;
};

}  // namespace damselfly::core
