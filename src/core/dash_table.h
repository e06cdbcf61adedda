// DashTable: a hash table in the style of Dash (Lu et al., PVLDB 13(8), 2020), a shard's
// main keyspace table, changed to grow in steps of about a tenth of a segment so that it
// stays dense at every size (see "Growth" below for why Dash's splits alone do not).
//
// Layout.
//   directory  2^global_depth pointers to segments, indexed by the top bits of the hash.
//              A segment of local depth d is referenced by 2^(global_depth - d) entries.
//   segment    1..kMaxBlocks blocks, each a separate allocation of kRegularPerBlock
//              regular buckets and kStashPerBlock stash buckets. The segment's regular
//              buckets are numbered across its blocks (0..regular-1).
//   bucket     kSlots slots; per slot a 16-bit fingerprint; bitmaps for "occupied" and
//              "lives here as a neighbour"; a counter of its entries that overflowed into
//              its block's stash and a bitmap of the stash buckets they went to; a 48-bit
//              version counter (snapshots compare it with their epoch).
//
// Hash bits: the top bits choose the segment; the low 16 bits are the fingerprint, and
// the fingerprint alone chooses the home bucket: home = fingerprint * regular / 2^16, an
// order-preserving map onto however many regular buckets the segment has. So an entry's
// home in a segment of any size is known without hashing its key again, which is what
// makes growing a segment cheap. A lookup hashes once, reads one directory entry and
// the segment's block table, and compares fingerprints before touching any key.
//
// Insert. An entry goes to its home bucket or the next one (its neighbour), whichever
// has more room (Dash's balanced insert). When both are full, an entry is displaced to
// make room: one living in the neighbour at home moves on to the neighbour's neighbour,
// or one living in the home bucket as a neighbour moves back to its own home. Failing
// that it goes to a stash bucket of the home's block, and the home counts the overflow and
// marks the stash bucket, so that lookups search only the stash buckets that may hold
// something of theirs (the marks are cleared when the count drops to 0). When that stash
// is full too, the segment grows.
//
// Growth. Dash splits a full segment into two half-full ones. With a uniform hash every
// segment fills at the same rate, so they all split within a short stretch: memory
// doubles in a step and the load swings between ~45% and ~90% (docs/benchmarks.md,
// "Memory"); even with splits out of step, halving gives ~65% on average. Here a full
// segment instead grows by one block: all its entries are placed afresh into a segment
// of one more block (moved, not rehashed: the fingerprint gives the new home). Only a
// full segment of kMaxBlocks blocks splits, into two of kSplitBlocks blocks each, by
// hash bit d (from the top); that needs each key's hash once. Every step adds at most
// 1/kSplitBlocks of the segment's memory, so the table's load stays within a narrow band
// (below) and memory follows the number of keys without steps. The price is that an
// entry is moved about eight times per doubling of the table (once per growth step)
// instead of once: inserts into a growing table cost more (docs/benchmarks.md, the
// DashTable micro-benchmark); lookups do not. If an entry cannot be placed in the
// rebuilt segment (a skewed hash), it is inserted again afterwards.
//
// Snapshots (the pre-change hook). A point-in-time snapshot serializes the table bucket
// by bucket while writes go on. Each bucket has a 48-bit version that only the hook's
// owner sets (set_version) and that only goes up: the snapshot takes an epoch above
// every version, serializes each bucket whose version is below it and raises it to the
// epoch. The table calls the hook (SetPreChangeHook) with every bucket *before* an
// insert, an erase, a displacement or an in-place change (BeforeChange) may alter it,
// and with every bucket of a segment before growth moves its entries; so the snapshot
// serializes a bucket before it changes, whatever the order of its own walk. A rebuilt
// or split segment's buckets take the largest version of the old segment's buckets,
// which every one of them has reached by then (the hook ran on them all): the walk
// skips them, and no entry is seen twice or missed. TraverseBuckets walks the physical
// buckets segment by segment in hash-prefix order, a cursor that survives growth.
//
// Traversal (SCAN). A cursor is (32-bit hash prefix, 16-bit fingerprint position). Each
// step emits the entries of one segment whose home is the bucket holding the position
// and whose fingerprint is at least the position, wherever they sit (home, neighbour or
// stash), then advances the position to the next bucket's first fingerprint, and after
// the last bucket jumps to the prefix where the segment's range ends (position 0). The
// entries a step emits are those whose (prefix range, fingerprint) lies in a range that
// does not depend on the layout: growth keeps a segment's prefix range and only moves
// bucket boundaries, splits only narrow the range (the new upper segment is visited from
// position 0, which may repeat some entries, allowed). So an entry present during a whole
// scan is emitted at least once. Global depth is limited to 32; cursors fit in 48 bits.
//
// Parameters (DashParams; dash_table_bench.cc measures alternatives, see
// docs/benchmarks.md):
//   kSlots = 14: a probe compares 14 16-bit fingerprints with two 16-byte SIMD compares;
//     fingerprints, bitmaps, overflow counter, stash bitmap and version take 40 bytes.
//   kBlockBytes = 24 KiB: with 16-byte keys and values a bucket is 488 bytes and a block
//     50 buckets, 24,400 bytes: inside mimalloc's 24 KiB size class (its classes are a
//     quarter of a power of two apart, so a block just past one would waste up to 25%).
//     Equal-sized blocks also let the allocator reuse the blocks a growth step frees.
//   kStashPerBlock = 6 (of 50 buckets): segments grow at ~90% load (with 4 at ~89%, with
//     8 at ~91%; the speed differences were within the noise).
//   kMaxBlocks = 16 (kSplitBlocks = 9): a growth step adds 1/9 to 1/15 of a segment and a
//     split 1/8, so the load stays between ~0.85 and ~0.91 at every size once the
//     table has a few segments (16-byte entries; with 12 the band was 0.83-0.91 and
//     inserts ~20% cheaper, with 20 it was 0.86-0.91). A full 16-block segment holds
//     ~9,000 entries: the insert that grows a segment takes ~0.1 ms (at most ~0.3), one
//     that splits it ~0.2 ms (at most ~0.5), measured with 16-byte entries.
//
// Assumes a good 64-bit hash: more than a segment's worth of keys sharing their top 32
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
#include <functional>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace damselfly::core {

// The shape of a table; the defaults are the measured choice explained above.
template <unsigned Slots = 14, unsigned StashPerBlock = 6, size_t BlockBytes = 24 * 1024,
          unsigned MaxBlocks = 16>
struct DashParams {
  static_assert(Slots >= 2 && Slots <= 16, "slot bitmaps and the SIMD probe hold 16");
  static_assert(StashPerBlock >= 1 && StashPerBlock <= 8, "stash bitmaps are 8 bits");
  static_assert(MaxBlocks >= 2 && MaxBlocks <= 64, "a split makes two smaller segments");
  static constexpr unsigned kSlots = Slots;
  static constexpr unsigned kStashPerBlock = StashPerBlock;
  static constexpr size_t kBlockBytes = BlockBytes;
  static constexpr unsigned kMaxBlocks = MaxBlocks;
};

// Policy: how keys hash and compare. Requires
//   static uint64_t Hash(const Key&) and Hash(const Probe&) for every probe type used,
//   static bool Equal(const Key&, const Probe&).
template <typename Key, typename Value, typename Policy, typename Params = DashParams<>>
class DashTable {
 public:
  static constexpr unsigned kSlots = Params::kSlots;
  static constexpr unsigned kStashPerBlock = Params::kStashPerBlock;
  static constexpr unsigned kMaxBlocks = Params::kMaxBlocks;
  static constexpr unsigned kSplitBlocks = kMaxBlocks / 2 + 1;
  static constexpr unsigned kMaxGlobalDepth = 32;

 private:
  struct Bucket {
    uint16_t fingerprint[kSlots] = {};
    uint16_t occupied = 0;    // bit i: slot i holds an entry
    uint16_t neighbour = 0;   // bit i: slot i's home is the previous bucket
    uint64_t overflow : 8;    // entries homed here that live in the stash (<= 8 * 16)
    uint64_t stash_mask : 8;  // bit s: stash bucket s may hold one of them
    uint64_t version : 48;
    // A slot keeps its key and value side by side: a lookup that finds a key reads its
    // value from the same cache line.
    struct alignas(alignof(Key) > alignof(Value) ? alignof(Key) : alignof(Value)) Slot {
      unsigned char key[sizeof(Key)];
      unsigned char value[sizeof(Value)];
    };
    Slot slots[kSlots];

    Bucket() : overflow(0), stash_mask(0), version(0) {}
    void* key_storage(unsigned slot) { return slots[slot].key; }
    void* value_storage(unsigned slot) { return slots[slot].value; }
    Key& key(unsigned slot) { return *std::launder(reinterpret_cast<Key*>(slots[slot].key)); }
    Value& value(unsigned slot) {
      return *std::launder(reinterpret_cast<Value*>(slots[slot].value));
    }
    bool full() const { return occupied == (1u << kSlots) - 1; }  // kSlots <= 16
    unsigned size() const { return PopCount16(occupied); }
    int FreeSlot() const { return full() ? -1 : __builtin_ctz(~unsigned(occupied)); }

    // Slots whose fingerprint matches, as a bitmap. Reads 32 bytes from `fingerprint`
    // (the bucket is larger than that); lanes past kSlots are masked by `occupied`.
    uint32_t Matches(uint16_t fp) const {
      const __m128i probe = _mm_set1_epi16(short(fp));
      const auto* lanes = reinterpret_cast<const __m128i*>(fingerprint);
      __m128i low = _mm_cmpeq_epi16(_mm_loadu_si128(lanes), probe);
      __m128i high = _mm_cmpeq_epi16(_mm_loadu_si128(lanes + 1), probe);
      return uint32_t(_mm_movemask_epi8(_mm_packs_epi16(low, high))) & occupied;
    }
  };
  static_assert(sizeof(Bucket) >= 32, "Matches reads 32 bytes");

  // The build targets baseline x86-64, where __builtin_popcount is a libgcc call (10% of
  // an insert-heavy profile); this is a few inline instructions.
  static unsigned PopCount16(uint32_t x) {
    x = x - ((x >> 1) & 0x5555);
    x = (x & 0x3333) + ((x >> 2) & 0x3333);
    x = (x + (x >> 4)) & 0x0f0f;
    return (x + (x >> 8)) & 0x1f;
  }

 public:
  static constexpr unsigned kBlockBuckets = Params::kBlockBytes / sizeof(Bucket);
  static_assert(kBlockBuckets >= kStashPerBlock + 2, "a block needs two regular buckets");
  static_assert(kBlockBuckets <= 256, "a bucket's index in its block is 8 bits");
  static constexpr unsigned kRegularPerBlock = kBlockBuckets - kStashPerBlock;

 private:
  struct Block {
    Bucket buckets[kBlockBuckets];
  };

  struct Segment {
    Segment(unsigned depth, unsigned blocks)
        : local_depth(depth), num_blocks(blocks), regular(blocks * kRegularPerBlock) {
      for (unsigned i = 0; i < blocks; ++i) block[i] = new Block;
    }
    ~Segment() {
      for (unsigned i = 0; i < num_blocks; ++i) delete block[i];
    }
    Bucket& Regular(unsigned r) { return block[r / kRegularPerBlock]->buckets[r % kRegularPerBlock]; }

    unsigned local_depth;
    unsigned num_blocks;
    unsigned regular;  // num_blocks * kRegularPerBlock
    Block* block[kMaxBlocks];
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

   private:
    friend class DashTable;
    Handle(Segment* segment, unsigned block, unsigned bucket, unsigned slot)
        : segment_(segment), block_(block), bucket_(bucket), slot_(slot) {}
    Bucket& bucket() const { return segment_->block[block_]->buckets[bucket_]; }
    uint16_t fingerprint() const { return bucket().fingerprint[slot_]; }
    bool in_stash() const { return bucket_ >= kRegularPerBlock; }

    Segment* segment_ = nullptr;
    uint16_t block_ = 0;
    uint8_t bucket_ = 0;  // index in the block
    uint8_t slot_ = 0;
  };

  // A physical bucket, as the pre-change hook and TraverseBuckets see it; valid until the
  // next insertion or erasure.
  class BucketRef {
   public:
    uint64_t version() const { return bucket_->version; }
    // REQUIRES: version() <= version < 2^48 (versions only go up).
    void set_version(uint64_t version) const {
      DCHECK_LE(bucket_->version, version);
      DCHECK_LT(version, uint64_t(1) << 48);
      bucket_->version = version;
    }
    // Calls fn(const Key&, const Value&) for each entry of the bucket.
    template <typename Fn>
    void ForEachEntry(Fn&& fn) const {
      for (uint32_t bits = bucket_->occupied; bits; bits &= bits - 1) {
        const unsigned slot = __builtin_ctz(bits);
        fn(static_cast<const Key&>(bucket_->key(slot)), static_cast<const Value&>(bucket_->value(slot)));
      }
    }
    size_t size() const { return bucket_->size(); }

   private:
    friend class DashTable;
    explicit BucketRef(Bucket* bucket) : bucket_(bucket) {}
    Bucket* bucket_;
  };
  using PreChangeHook = std::function<void(BucketRef)>;

  DashTable() { directory_.push_back(NewSegment(0, 1)); }
  ~DashTable() { DestroySegments(); }
  DashTable(const DashTable&) = delete;
  DashTable& operator=(const DashTable&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  unsigned global_depth() const { return global_depth_; }
  size_t segment_count() const { return segments_; }
  size_t block_count() const { return blocks_; }
  size_t bucket_count() const { return blocks_ * kBlockBuckets; }
  size_t slot_capacity() const { return bucket_count() * kSlots; }
  // Entries a growth step or split could not place in the new segments and inserted
  // again; stays 0 with a good hash (tests check the path).
  size_t reinserted_entries() const { return reinserted_; }
  // The size of one block allocation (the unit the table grows by).
  static constexpr size_t block_bytes() { return sizeof(Block); }
  // Bytes of blocks, segment headers and directory (not what keys and values point to).
  size_t mem_usage() const {
    return blocks_ * sizeof(Block) + segments_ * sizeof(Segment) +
           directory_.capacity() * sizeof(Segment*);
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

  // Batched lookups. A Find in a large table misses the cache on the fingerprints of
  // its two buckets and again on the slot whose key it compares. To overlap those misses
  // across a batch of keys, call PrefetchBuckets for every key, then PrefetchSlots for
  // every key, then Find each: each pass issues the loads the next one needs. Both only
  // hint the CPU (they read the directory, segment headers and, for PrefetchSlots, the
  // fingerprints) and change nothing.
  void PrefetchBuckets(uint64_t hash) const {
    const Segment* segment = SegmentFor(hash);
    const unsigned home = Home(Fingerprint(hash), segment->regular);
    __builtin_prefetch(&RegularOf(segment, home));
    __builtin_prefetch(&RegularOf(segment, Next(home, segment->regular)));
  }
  void PrefetchSlots(uint64_t hash) const {
    const Segment* segment = SegmentFor(hash);
    const uint16_t fp = Fingerprint(hash);
    const unsigned home = Home(fp, segment->regular);
    for (unsigned r : {home, Next(home, segment->regular)}) {
      const Bucket& bucket = RegularOf(segment, r);
      for (uint32_t bits = bucket.Matches(fp); bits; bits &= bits - 1) {
        // A slot may straddle two cache lines (buckets are not line-aligned).
        const auto* slot = reinterpret_cast<const char*>(&bucket.slots[__builtin_ctz(bits)]);
        __builtin_prefetch(slot);
        __builtin_prefetch(slot + sizeof(typename Bucket::Slot) - 1);
      }
    }
  }

  // Sets (or, with nullptr, removes) the hook called before buckets change (see
  // "Snapshots" above). Costs one branch per insert and erase while unset.
  void SetPreChangeHook(PreChangeHook hook) { pre_change_hook_ = std::move(hook); }
  bool has_pre_change_hook() const { return bool(pre_change_hook_); }
  // Tells the hook that the entry at `handle` is about to change in place (a value
  // updated without an insert or an erase).
  void BeforeChange(Handle handle) {
    if (pre_change_hook_) pre_change_hook_(BucketRef(&handle.bucket()));
  }

  // Calls fn(BucketRef) for every physical bucket of one segment, from `cursor` (0
  // starts), and returns the next cursor, 0 after the last segment. fn must not insert or
  // erase. Every bucket present for the whole walk is visited at least once; a bucket
  // created by growth meanwhile may be visited or not (see "Snapshots").
  template <typename Fn>
  uint64_t TraverseBuckets(uint64_t cursor, Fn&& fn) {
    const size_t index = global_depth_ ? cursor >> (kMaxGlobalDepth - global_depth_) : 0;
    if (index >= directory_.size()) return 0;
    Segment* segment = directory_[index];
    for (unsigned k = 0; k < segment->num_blocks; ++k) {
      for (Bucket& bucket : segment->block[k]->buckets) fn(BucketRef(&bucket));
    }
    const size_t span = size_t(1) << (global_depth_ - segment->local_depth);
    const size_t next = (index & ~(span - 1)) + span;
    if (next >= directory_.size()) return 0;
    return uint64_t(next) << (kMaxGlobalDepth - global_depth_);
  }

  // As TraverseBuckets, one block of a segment per call (a tenth or less of its work):
  // the cursor also holds the next block's index, above the segment's hash prefix. A
  // segment that grew or split between two calls passed every bucket to the pre-change
  // hook first, so resuming at a block index of its new layout skips only buckets the
  // hook has seen (see "Snapshots").
  template <typename Fn>
  uint64_t TraverseBlocks(uint64_t cursor, Fn&& fn) {
    constexpr uint64_t kPrefixMask = (uint64_t(1) << kMaxGlobalDepth) - 1;
    const uint64_t prefix = cursor & kPrefixMask;
    const unsigned block = unsigned(cursor >> kMaxGlobalDepth);
    const size_t index = global_depth_ ? prefix >> (kMaxGlobalDepth - global_depth_) : 0;
    if (index >= directory_.size()) return 0;
    Segment* segment = directory_[index];
    if (block < segment->num_blocks) {
      for (Bucket& bucket : segment->block[block]->buckets) fn(BucketRef(&bucket));
    }
    if (block + 1 < segment->num_blocks) {
      return (uint64_t(block + 1) << kMaxGlobalDepth) |
             (uint64_t(index) << (kMaxGlobalDepth - global_depth_));
    }
    const size_t span = size_t(1) << (global_depth_ - segment->local_depth);
    const size_t next = (index & ~(span - 1)) + span;
    if (next >= directory_.size()) return 0;
    return uint64_t(next) << (kMaxGlobalDepth - global_depth_);
  }

  // Inserts key/value unless an equal key is present; returns the entry and whether it
  // was inserted. May grow or split a segment (which invalidates handles).
  std::pair<Handle, bool> Insert(Key key, Value value) {
    uint64_t hash = Policy::Hash(key);
    if (Handle found = FindHashed(key, hash)) return {found, false};
    return {InsertNew(std::move(key), std::move(value), hash), true};
  }

  // REQUIRES: no entry equals `key`. Saves the lookup Insert does.
  Handle InsertNew(Key key, Value value, uint64_t hash) {
    while (true) {
      Segment* segment = SegmentFor(hash);
      if (pre_change_hook_) BeforeInsert(segment, Fingerprint(hash));
      if (Handle placed = TryPlace(segment, Fingerprint(hash))) {
        Construct(placed, std::move(key), std::move(value));
        ++size_;
        return placed;
      }
      Grow(segment, hash);
    }
  }

  void Erase(Handle handle) {
    Bucket& bucket = handle.bucket();
    if (pre_change_hook_) pre_change_hook_(BucketRef(&bucket));
    unsigned slot = handle.slot_;
    if (handle.in_stash()) {
      Bucket& home = handle.segment_->Regular(Home(handle.fingerprint(), handle.segment_->regular));
      if (--home.overflow == 0) home.stash_mask = 0;
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
    directory_.push_back(NewSegment(0, 1));
  }

  // Destroys up to `max_blocks` blocks with their entries (a block holds up to
  // kBlockBuckets * kSlots), from the directory's end, and returns how many entries went;
  // segment_count() is 0 once all went. For a table nobody reads any more, freed in steps
  // (FLUSHALL ASYNC): between the calls it may only be destroyed, cleared, or stepped
  // on. Clear() makes it an empty table again.
  size_t DestroySomeBlocks(size_t max_blocks) {
    size_t destroyed = 0;
    for (; max_blocks > 0 && !directory_.empty(); --max_blocks) {
      Segment* segment = directory_.back();
      const unsigned k = --segment->num_blocks;
      for (unsigned b = 0; b < kBlockBuckets; ++b) {
        for (uint32_t bits = segment->block[k]->buckets[b].occupied; bits; bits &= bits - 1) {
          Handle h(segment, k, b, __builtin_ctz(bits));
          h.key().~Key();
          h.value().~Value();
          ++destroyed;
        }
      }
      delete segment->block[k];
      --blocks_;
      if (segment->num_blocks > 0) continue;
      // A segment's directory entries are one aligned run: the last ones point to it.
      directory_.resize(directory_.size() - (size_t(1) << (global_depth_ - segment->local_depth)));
      DeleteSegment(segment);  // no block left
    }
    size_ -= destroyed;
    return destroyed;
  }

  // Calls fn(Handle) for the entries of one (segment, home bucket) step of a scan, from
  // `cursor` (0 starts), and returns the next cursor; 0 when the scan is complete. fn
  // must not insert or erase. Cursors fit in 48 bits.
  template <typename Fn>
  uint64_t TraverseStep(uint64_t cursor, Fn&& fn) {
    const uint64_t prefix = (cursor >> 16) & 0xffffffffu;
    const unsigned position = cursor & 0xffff;
    const size_t index = global_depth_ ? prefix >> (kMaxGlobalDepth - global_depth_) : 0;
    Segment* segment = directory_[index];
    const unsigned home = Home(position, segment->regular);
    ForEachWithHome(segment, home, position, fn);
    if (home + 1 < segment->regular) return (prefix << 16) | FirstFingerprint(home + 1, segment->regular);
    // Next segment: the first directory index past this segment's range.
    size_t span = size_t(1) << (global_depth_ - segment->local_depth);
    size_t next = (index & ~(span - 1)) + span;
    if (next >= directory_.size()) return 0;
    return (uint64_t(next) << (kMaxGlobalDepth - global_depth_)) << 16;
  }

  // Calls fn(Handle) for every entry; fn must not insert or erase.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    ForEachSegment([&](Segment* segment) { ForEachInSegment(segment, fn); });
  }

  // Calls fn(Handle) for the entries of the buckets an insert of `hash` would write to:
  // its home bucket and the neighbour, and one of the stash buckets holding the home's
  // overflow (picked by the hash's high bits): at most 3 x kSlots entries. Eviction in
  // cache mode picks its victim among them, so the freed slot is where the new entry
  // goes; without the stash, entries that overflowed there would never be candidates.
  // fn must not insert or erase.
  template <typename Fn>
  void ForEachInInsertBuckets(uint64_t hash, Fn&& fn) {
    Segment* segment = SegmentFor(hash);
    const unsigned home = Home(Fingerprint(hash), segment->regular);
    auto each_in = [&](unsigned block, unsigned b) {
      for (uint32_t bits = segment->block[block]->buckets[b].occupied; bits; bits &= bits - 1) {
        fn(Handle(segment, block, b, __builtin_ctz(bits)));
      }
    };
    for (unsigned r : {home, Next(home, segment->regular)}) {
      each_in(r / kRegularPerBlock, r % kRegularPerBlock);
    }
    const unsigned block = home / kRegularPerBlock;
    uint32_t stash = segment->block[block]->buckets[home % kRegularPerBlock].stash_mask;
    if (stash != 0) {
      for (unsigned pick = unsigned(hash >> 48) % PopCount16(stash); pick; --pick) {
        stash &= stash - 1;
      }
      each_in(block, kRegularPerBlock + __builtin_ctz(stash));
    }
  }

  // Calls fn(Handle) for every entry of one random occupied bucket (drawn as RandomEntry
  // draws it): a sample of up to kSlots entries for one bucket's cache misses. Does
  // nothing when the table is empty. fn must not insert or erase.
  template <typename Rng, typename Fn>
  void ForEachInRandomBucket(Rng&& random, Fn&& fn) {
    if (Handle h = RandomEntry(random)) {
      for (uint32_t bits = h.bucket().occupied; bits; bits &= bits - 1) {
        fn(Handle(h.segment_, h.block_, h.bucket_, __builtin_ctz(bits)));
      }
    }
  }

  // A random entry, for sampling (RANDOMKEY, eviction): a uniformly random occupied
  // bucket of a random segment (segments weighted by their share of the hash space);
  // `random` supplies random 64-bit numbers. Empty Handle when the table is empty.
  template <typename Rng>
  Handle RandomEntry(Rng&& random) {
    if (size_ == 0) return {};
    while (true) {  // terminates: the table holds at least one entry
      Segment* segment = directory_[random() % directory_.size()];
      unsigned block = random() % segment->num_blocks;
      unsigned b = random() % kBlockBuckets;
      uint32_t bits = segment->block[block]->buckets[b].occupied;
      if (bits == 0) continue;
      unsigned pick = random() % PopCount16(bits);
      while (pick--) bits &= bits - 1;
      return Handle(segment, block, b, __builtin_ctz(bits));
    }
  }

 private:
  static uint16_t Fingerprint(uint64_t hash) { return uint16_t(hash); }
  // The home bucket of a fingerprint among `regular` buckets: monotone in the fingerprint.
  static unsigned Home(unsigned fingerprint, unsigned regular) { return (fingerprint * regular) >> 16; }
  // The smallest fingerprint whose home is `bucket`.
  static unsigned FirstFingerprint(unsigned bucket, unsigned regular) {
    return (bucket * 65536u + regular - 1) / regular;
  }
  static unsigned Next(unsigned r, unsigned regular) { return r + 1 == regular ? 0 : r + 1; }
  static unsigned Prev(unsigned r, unsigned regular) { return r == 0 ? regular - 1 : r - 1; }
  static Handle HandleOfRegular(Segment* segment, unsigned r, unsigned slot) {
    return Handle(segment, r / kRegularPerBlock, r % kRegularPerBlock, slot);
  }

  static void PrefetchForWrite(const Bucket& bucket) {
    const char* p = reinterpret_cast<const char*>(&bucket);
    for (size_t offset = 0; offset < sizeof(Bucket); offset += 64) __builtin_prefetch(p + offset, 1);
  }

  static void Construct(const Handle& at, Key&& key, Value&& value) {
    new (at.bucket().key_storage(at.slot_)) Key(std::move(key));
    new (at.bucket().value_storage(at.slot_)) Value(std::move(value));
  }

  // Destroys every entry and segment, leaving an empty directory.
  void DestroySegments() {
    ForEachSegment([&](Segment* segment) {
      ForEachInSegment(segment, [](Handle h) {
        h.key().~Key();
        h.value().~Value();
      });
      DeleteSegment(segment);
    });
    directory_.clear();
    global_depth_ = 0;
    size_ = 0;
  }

  Segment* NewSegment(unsigned depth, unsigned blocks) {
    ++segments_;
    blocks_ += blocks;
    return new Segment(depth, blocks);
  }
  // The segment's entries must have been destroyed or moved out.
  void DeleteSegment(Segment* segment) {
    --segments_;
    blocks_ -= segment->num_blocks;
    delete segment;
  }

  size_t DirectoryIndex(uint64_t hash) const {
    return global_depth_ ? hash >> (64 - global_depth_) : 0;
  }
  Segment* SegmentFor(uint64_t hash) const { return directory_[DirectoryIndex(hash)]; }
  static const Bucket& RegularOf(const Segment* segment, unsigned r) {
    return segment->block[r / kRegularPerBlock]->buckets[r % kRegularPerBlock];
  }

  template <typename Fn>
  void ForEachSegment(Fn&& fn) {
    for (size_t i = 0; i < directory_.size();) {
      Segment* segment = directory_[i];
      i += size_t(1) << (global_depth_ - segment->local_depth);
      fn(segment);
    }
  }

  template <typename Fn>
  static void ForEachInSegment(Segment* segment, Fn&& fn) {
    for (unsigned k = 0; k < segment->num_blocks; ++k) {
      for (unsigned b = 0; b < kBlockBuckets; ++b) {
        for (uint32_t bits = segment->block[k]->buckets[b].occupied; bits; bits &= bits - 1) {
          fn(Handle(segment, k, b, __builtin_ctz(bits)));
        }
      }
    }
  }

  template <typename Probe>
  static Handle FindInBucket(Segment* segment, unsigned block, unsigned b, const Probe& probe,
                             uint16_t fp) {
    Bucket& bucket = segment->block[block]->buckets[b];
    for (uint32_t bits = bucket.Matches(fp); bits; bits &= bits - 1) {
      unsigned slot = __builtin_ctz(bits);
      if (Policy::Equal(bucket.key(slot), probe)) return Handle(segment, block, b, slot);
    }
    return {};
  }

  template <typename Probe>
  Handle FindHashed(const Probe& probe, uint64_t hash) const {
    Segment* segment = SegmentFor(hash);
    const uint16_t fp = Fingerprint(hash);
    const unsigned home = Home(fp, segment->regular);
    const unsigned block = home / kRegularPerBlock, b = home % kRegularPerBlock;
    if (Handle h = FindInBucket(segment, block, b, probe, fp)) return h;
    const unsigned next = Next(home, segment->regular);
    if (Handle h = FindInBucket(segment, next / kRegularPerBlock, next % kRegularPerBlock, probe, fp)) {
      return h;
    }
    for (uint32_t stash = segment->block[block]->buckets[b].stash_mask; stash; stash &= stash - 1) {
      if (Handle h = FindInBucket(segment, block, kRegularPerBlock + __builtin_ctz(stash), probe, fp)) {
        return h;
      }
    }
    return {};
  }

  // Calls the pre-change hook for every bucket TryPlace(segment, fp) may write: home,
  // neighbour, the buckets displacement moves entries to, the home block's stash.
  void BeforeInsert(Segment* segment, uint16_t fp) {
    const unsigned regular = segment->regular;
    const unsigned home = Home(fp, regular), next = Next(home, regular);
    for (unsigned r : {Prev(home, regular), home, next, Next(next, regular)}) {
      pre_change_hook_(BucketRef(&segment->Regular(r)));
    }
    Block* block = segment->block[home / kRegularPerBlock];
    for (unsigned s = kRegularPerBlock; s < kBlockBuckets; ++s) {
      pre_change_hook_(BucketRef(&block->buckets[s]));
    }
  }

  // Claims a free slot for an entry with fingerprint `fp` in `segment` (setting its
  // metadata), or returns an empty Handle when the segment must grow. Versions are left
  // alone (see "Snapshots").
  static Handle TryPlace(Segment* segment, uint16_t fp) {
    const unsigned regular = segment->regular;
    const unsigned home = Home(fp, regular), next = Next(home, regular);
    Bucket& home_bucket = segment->Regular(home);
    Bucket& next_bucket = segment->Regular(next);
    auto claim = [&](Bucket& bucket, Handle handle, bool as_neighbour) {
      unsigned slot = bucket.FreeSlot();
      bucket.occupied |= 1u << slot;
      if (as_neighbour) bucket.neighbour |= 1u << slot;
      bucket.fingerprint[slot] = fp;
      handle.slot_ = slot;
      return handle;
    };
    if (!home_bucket.full() || !next_bucket.full()) {
      bool use_home = home_bucket.size() <= next_bucket.size() ? !home_bucket.full()
                                                               : next_bucket.full();
      return use_home ? claim(home_bucket, HandleOfRegular(segment, home, 0), false)
                      : claim(next_bucket, HandleOfRegular(segment, next, 0), true);
    }
    // Displacement: free a slot in the neighbour by moving one of its own entries on to
    // its neighbour, or free one at home by sending a guest back to its home.
    if (MoveEntry(next_bucket, segment->Regular(Next(next, regular)), false)) {
      return claim(next_bucket, HandleOfRegular(segment, next, 0), true);
    }
    if (MoveEntry(home_bucket, segment->Regular(Prev(home, regular)), true)) {
      return claim(home_bucket, HandleOfRegular(segment, home, 0), false);
    }
    const unsigned block = home / kRegularPerBlock;
    for (unsigned s = kRegularPerBlock; s < kBlockBuckets; ++s) {
      Bucket& stash = segment->block[block]->buckets[s];
      if (!stash.full()) {
        ++home_bucket.overflow;
        home_bucket.stash_mask |= 1u << (s - kRegularPerBlock);
        return claim(stash, Handle(segment, block, s, 0), false);
      }
    }
    return {};
  }

  // Moves one entry of bucket `src` to bucket `dst` (which must be its other allowed
  // place): a resident (homed in `src`) when !guest, else a guest (homed in `dst`).
  // False when there is no such entry or no room.
  static bool MoveEntry(Bucket& src, Bucket& dst, bool guest) {
    uint32_t candidates = guest ? (src.occupied & src.neighbour) : (src.occupied & ~src.neighbour);
    if (candidates == 0 || dst.full()) return false;
    unsigned slot = __builtin_ctz(candidates);
    unsigned target = dst.FreeSlot();
    new (dst.key_storage(target)) Key(std::move(src.key(slot)));
    new (dst.value_storage(target)) Value(std::move(src.value(slot)));
    src.key(slot).~Key();
    src.value(slot).~Value();
    dst.fingerprint[target] = src.fingerprint[slot];
    dst.occupied |= 1u << target;
    if (!guest) dst.neighbour |= 1u << target;  // now a guest in `dst`
    src.occupied &= ~(1u << slot);
    src.neighbour &= ~(1u << slot);
    return true;
  }

  // Makes room in the full `segment` (which `hash` maps to): replaces it by a segment of
  // one more block, or, at kMaxBlocks, by two segments of kSplitBlocks one level deeper.
  void Grow(Segment* segment, uint64_t hash) {
    if (pre_change_hook_) {
      for (unsigned k = 0; k < segment->num_blocks; ++k) {
        for (Bucket& bucket : segment->block[k]->buckets) pre_change_hook_(BucketRef(&bucket));
      }
    }
    const unsigned depth = segment->local_depth;
    Segment* lower;
    Segment* upper = nullptr;
    if (segment->num_blocks < kMaxBlocks) {
      lower = NewSegment(depth, segment->num_blocks + 1);
    } else {
      if (depth == global_depth_) {
        CHECK_LT(global_depth_, kMaxGlobalDepth) << "DashTable directory cannot grow further";
        std::vector<Segment*> doubled(directory_.size() * 2);
        for (size_t i = 0; i < directory_.size(); ++i) doubled[2 * i] = doubled[2 * i + 1] = directory_[i];
        directory_ = std::move(doubled);
        ++global_depth_;
      }
      lower = NewSegment(depth + 1, kSplitBlocks);
      upper = NewSegment(depth + 1, kSplitBlocks);
    }
    std::vector<std::pair<Key, Value>> spilled;
    MoveEntries(segment, lower, upper, &spilled);
    const size_t span = size_t(1) << (global_depth_ - depth);
    const size_t start = DirectoryIndex(hash) & ~(span - 1);
    for (size_t i = start; i < start + span; ++i) {
      directory_[i] = (upper && i >= start + span / 2) ? upper : lower;
    }
    DeleteSegment(segment);
    size_ -= spilled.size();
    reinserted_ += spilled.size();
    for (auto& [key, value] : spilled) {
      uint64_t key_hash = Policy::Hash(key);
      InsertNew(std::move(key), std::move(value), key_hash);
    }
  }

  // Moves every entry of `from` into `lower`, or, when `upper` is set, into `upper` if
  // the entry's hash bit below `from`'s depth is set. Entries that find no room go to
  // `spilled`. Every bucket of the new segments gets the largest version of `from`'s
  // buckets, so versions only go up (see "Snapshots").
  static void MoveEntries(Segment* from, Segment* lower, Segment* upper,
                          std::vector<std::pair<Key, Value>>* spilled) {
    const uint64_t bit = uint64_t(1) << (63 - from->local_depth);
    uint64_t version = 0;
    for (unsigned k = 0; k < from->num_blocks; ++k) {
      for (unsigned b = 0; b < kBlockBuckets; ++b) {
        Bucket& bucket = from->block[k]->buckets[b];
        if (b + 2 < kBlockBuckets) PrefetchForWrite(from->block[k]->buckets[b + 2]);
        version = std::max<uint64_t>(version, bucket.version);
        if (bucket.occupied == 0) continue;
        // Homes are monotone in the fingerprint, so the entries of the next regular
        // buckets land a little further on: fetch those buckets ahead of the writes.
        if (b < kRegularPerBlock) {
          unsigned ahead = k * kRegularPerBlock + b + 2;
          for (Segment* to : {lower, upper}) {
            if (to) PrefetchForWrite(to->Regular(std::min(ahead * to->regular / from->regular, to->regular - 1)));
          }
        }
        for (uint32_t bits = bucket.occupied; bits; bits &= bits - 1) {
          unsigned slot = __builtin_ctz(bits);
          Key& key = bucket.key(slot);
          Value& value = bucket.value(slot);
          Segment* to = (upper && (Policy::Hash(key) & bit)) ? upper : lower;
          if (Handle placed = TryPlace(to, bucket.fingerprint[slot])) {
            Construct(placed, std::move(key), std::move(value));
          } else {
            spilled->emplace_back(std::move(key), std::move(value));
          }
          key.~Key();
          value.~Value();
        }
      }
    }
    for (Segment* segment : {lower, upper}) {
      if (!segment) continue;
      for (unsigned k = 0; k < segment->num_blocks; ++k) {
        for (Bucket& bucket : segment->block[k]->buckets) bucket.version = version;
      }
    }
  }

  // Calls fn for the entries of `segment` whose home bucket is `home` and whose
  // fingerprint is at least `min_fp`.
  template <typename Fn>
  static void ForEachWithHome(Segment* segment, unsigned home, unsigned min_fp, Fn& fn) {
    const unsigned block = home / kRegularPerBlock, b = home % kRegularPerBlock;
    Bucket& at_home = segment->block[block]->buckets[b];
    auto emit = [&](Bucket& bucket, unsigned k, unsigned index, uint32_t bits) {
      for (; bits; bits &= bits - 1) {
        unsigned slot = __builtin_ctz(bits);
        unsigned fp = bucket.fingerprint[slot];
        if (fp >= min_fp && Home(fp, segment->regular) == home) fn(Handle(segment, k, index, slot));
      }
    };
    emit(at_home, block, b, at_home.occupied & ~at_home.neighbour);
    const unsigned next = Next(home, segment->regular);
    const unsigned next_block = next / kRegularPerBlock, next_b = next % kRegularPerBlock;
    Bucket& guests = segment->block[next_block]->buckets[next_b];
    emit(guests, next_block, next_b, guests.occupied & guests.neighbour);
    for (uint32_t stash = at_home.stash_mask; stash; stash &= stash - 1) {
      const unsigned s = kRegularPerBlock + __builtin_ctz(stash);
      Bucket& bucket = segment->block[block]->buckets[s];
      emit(bucket, block, s, bucket.occupied);
    }
  }

  std::vector<Segment*> directory_;
  unsigned global_depth_ = 0;
  size_t segments_ = 0;
  size_t blocks_ = 0;
  size_t size_ = 0;
  size_t reinserted_ = 0;
  PreChangeHook pre_change_hook_;
};

}  // namespace damselfly::core
