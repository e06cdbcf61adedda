// LookupPrefetcher: overlaps the cache misses of a sequence of key lookups on one shard.
//
// Why. In a table much larger than the CPU caches a lookup waits for memory three times,
// each load depending on the one before: the fingerprints of its buckets, the slot
// holding its key, the value's heap block. A pipeline of GETs, or a multi-key get, would
// wait for those one after another; in redis-benchmark's pipelined GETs over a million
// keys that waiting was most of the shard's time (docs/benchmarks.md). The next keys are
// known in advance, so their loads can be issued together: for a window of keys, first
// the buckets of all, then the slots of all, then the values of all. Each pass waits
// for the previous pass's loads, but for all of its keys at once, so a window costs
// about three memory round trips instead of three per key.
//
// Window size 16, measured with redis-benchmark -P 32 GETs over a million keys: server
// CPU per GET 806-910 ns, against 826-946 with 8, 866-886 with 32 and 1180-1323 without
// prefetching (one run, interleaved). A variant that ran each stage a few keys ahead of
// the next, spread between the lookups, was slower than windows (by 5-15%, at distances
// 4 and 8): a window's passes let the CPU overlap their loads better than single
// prefetches among the commands' own work.
//
// Prefetches only hint the CPU: nothing changes in the table, and a stale hint costs a
// wasted load, not a wrong answer.
//
// Use: construct with the keys' count and a way to read key i, then call Before(i) just
// before looking up key i, for i = 0, 1, 2... in order. Lookups and writes in between
// are fine: an insert that moves entries only makes some hints useless.
//
// Thread-safety: none; on the shard's thread, for the duration of one command or run.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "src/core/compact_object.h"
#include "src/server/db_slice.h"

namespace damselfly {

// KeyAt: callable as std::string_view(size_t i), returning key i; kept by value.
template <typename KeyAt>
class LookupPrefetcher {
 public:
  // Off for a single key (nothing to overlap with) and for a small database, whose
  // table stays in the caches: there the passes only add work (3-5% more CPU per
  // pipelined GET on one hot key, measured).
  LookupPrefetcher(const DbSlice& slice, DbIndex db, size_t count, KeyAt key_at)
      : slice_(slice),
        db_(db),
        count_(count < 2 || slice.DbSize(db) < kMinKeys ? 0 : count),
        key_at_(std::move(key_at)) {}

  // Whether it prefetches at all (see the constructor).
  bool active() const { return count_ != 0; }

  // Call just before looking up key i.
  void Before(size_t i) {
    if (i % kWindow != 0 || i >= count_) return;
    const size_t n = std::min(kWindow, count_ - i);
    std::array<uint64_t, kWindow> hashes;
    for (size_t k = 0; k < n; ++k) {
      hashes[k] = core::HashKey(key_at_(i + k));
      slice_.PrefetchBuckets(db_, hashes[k]);
    }
    for (size_t k = 0; k < n; ++k) slice_.PrefetchSlots(db_, hashes[k]);
    for (size_t k = 0; k < n; ++k) slice_.PrefetchValue(db_, key_at_(i + k), hashes[k]);
  }

 private:
  static constexpr size_t kWindow = 16;
  // About 640 KB of table at ~39 bytes per key: an L2 cache's worth. Already at 100,000
  // keys (mc_load) prefetching nearly doubled multi-get throughput.
  static constexpr size_t kMinKeys = 16384;

  const DbSlice& slice_;
  const DbIndex db_;
  const size_t count_;  // 0 when prefetching is off
  KeyAt key_at_;
};

}  // namespace damselfly
