// FrequencySketch: about how often each key was used lately, for cache mode's choice of a
// victim (server/eviction.h), with no memory per key in the table.
//
// The design is TinyLFU's (Einziger, Friedman, Manes): a count-min sketch of 4-bit
// counters, 4 rows, each key counted in one counter of each row and estimated by the
// smallest of its 4. Increments are conservative (only the counters at that minimum grow),
// which keeps the keys seen once, the bulk of a cache's misses, from inflating each other.
// After window() = `10 x capacity` aging increments (TinyLFU's figure; 5 and 20 measured
// worse on tools/cache-bench.sh, docs/benchmarks.md) every counter is halved, so the
// counts are a sliding measure of popularity and a formerly hot key fades out; the
// counters saturate at 15, which is all a victim choice needs ("seen once" against "read
// again and again"). The caller says which increments age: cache mode counts misses
// without aging, so that a scan of new keys does not halve the hot keys' counts.
//
// Layout (Caffeine's): 64-bit words of 16 counters; row r uses counters 4r..4r+3 of a word
// picked by its own hash, and one of those four by two more hash bits. With capacity C (a
// power of two) the table has C / 4 words: 2 bytes per key of capacity, C counters per row.
//
// Thread-safety: none; one shard's object.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace damselfly::core {

class FrequencySketch {
 public:
  static constexpr unsigned kMaxCount = 15;
  static constexpr size_t kWindowPerKey = 10;

  // Sizes the sketch for about `keys` keys (rounded up to a power of two, at least 1024)
  // and forgets every count.
  void Resize(size_t keys) {
    capacity_ = 1024;
    while (capacity_ < keys) capacity_ *= 2;
    table_.assign(capacity_ / 4, 0);
    increments_ = 0;
  }
  size_t capacity() const { return capacity_; }
  // The aging increments between two halvings: an estimate counts about this many.
  size_t window() const { return kWindowPerKey * capacity_; }
  size_t bytes() const { return table_.capacity() * sizeof(uint64_t); }

  // The estimated uses of the key whose 64-bit hash is `hash` (0 to kMaxCount); 0 before
  // the first Resize.
  unsigned Estimate(uint64_t hash) const {
    if (table_.empty()) return 0;
    unsigned estimate = kMaxCount;
    for (unsigned row = 0; row < kRows; ++row) estimate = std::min(estimate, Counter(hash, row));
    return estimate;
  }

  // Records one use of the key whose hash is `hash`; `ages`: the use counts towards the
  // next halving. REQUIRES: Resize was called.
  void Increment(uint64_t hash, bool ages = true) {
    unsigned counts[kRows];
    unsigned least = kMaxCount;
    for (unsigned row = 0; row < kRows; ++row) {
      counts[row] = Counter(hash, row);
      least = std::min(least, counts[row]);
    }
    if (least < kMaxCount) {
      for (unsigned row = 0; row < kRows; ++row) {
        if (counts[row] == least) table_[WordIndex(hash, row)] += uint64_t(1) << Shift(hash, row);
      }
    }
    if (ages && ++increments_ >= window()) Halve();
  }

 private:
  static constexpr unsigned kRows = 4;

  // Each row's word comes from the hash multiplied by its own odd constant (the high bits
  // of the product mix all of the hash's bits).
  size_t WordIndex(uint64_t hash, unsigned row) const {
    static constexpr uint64_t kSeeds[kRows] = {0x9e3779b97f4a7c15, 0xc2b2ae3d27d4eb4f,
                                               0x165667b19e3779f9, 0xd6e8feb86659fd93};
    return size_t((hash * kSeeds[row]) >> 32) & (table_.size() - 1);
  }
  static unsigned Shift(uint64_t hash, unsigned row) {
    return (row * 4 + unsigned(hash >> (row * 2)) % 4) * 4;
  }
  unsigned Counter(uint64_t hash, unsigned row) const {
    return unsigned(table_[WordIndex(hash, row)] >> Shift(hash, row)) & 0xf;
  }
  void Halve() {
    for (uint64_t& word : table_) word = (word >> 1) & 0x7777777777777777;
    increments_ /= 2;
  }

  std::vector<uint64_t> table_;  // capacity_ / 4 words of 16 counters
  size_t capacity_ = 0;
  size_t increments_ = 0;  // since the last halving, itself halved then
};

}  // namespace damselfly::core
