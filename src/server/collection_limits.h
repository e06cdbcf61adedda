// The thresholds at which a list, hash, set or sorted set leaves its small encoding
// (listpack, intset) for its large one, and how a large list packs and compresses its
// nodes, the size of a stream's listpack nodes, and when a sparse HyperLogLog turns
// dense: Redis's config parameters of the same names, set at start-up by flags
// (--hash_max_listpack_entries...) and at run time by CONFIG SET (config_family.cc, which
// also answers to the *-ziplist-* aliases).
//
// Thread-safety: any thread reads; CONFIG SET writes. Each value is a relaxed atomic, read
// afresh by every command that converts (a plain load on x86): a command sees the value of
// one moment, and a change applies to the conversions that follow it, as in Redis.
// Conversions are one way: lowering a threshold does not convert existing values.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "src/core/pair_pack.h"
#include "src/core/set_object.h"

namespace damselfly {

namespace collection_limits_internal {
inline std::atomic<int64_t> list_max_listpack_size{-2};
inline std::atomic<int64_t> list_compress_depth{0};
inline std::atomic<uint64_t> hash_max_listpack_entries{512};
inline std::atomic<uint64_t> hash_max_listpack_value{64};
inline std::atomic<uint64_t> set_max_intset_entries{512};
inline std::atomic<uint64_t> set_max_listpack_entries{128};
inline std::atomic<uint64_t> set_max_listpack_value{64};
inline std::atomic<uint64_t> zset_max_listpack_entries{128};
inline std::atomic<uint64_t> zset_max_listpack_value{64};
inline std::atomic<uint64_t> stream_node_max_bytes{4096};
inline std::atomic<uint64_t> stream_node_max_entries{100};
inline std::atomic<uint64_t> hll_sparse_max_bytes{3000};
}  // namespace collection_limits_internal

// The limits as Redis reads them. A listpack holds at most *_entries elements (a hash or
// sorted set: pairs), each at most *_value bytes long; an intset at most
// set_max_intset_entries integers.
struct CollectionLimits {
  // A quicklist node's fill: > 0, at most that many elements; -1..-5, at most 4, 8, 16,
  // 32 or 64 KiB (values below -5 count as -5; 0 as 1).
  static int64_t ListMaxListpackSize() { return Load(collection_limits_internal::list_max_listpack_size); }
  // How many nodes at each end of a quicklist stay uncompressed; 0: none is compressed.
  static int64_t ListCompressDepth() { return Load(collection_limits_internal::list_compress_depth); }
  // A small hash's or sorted set's pack holds at most PairPack::kMaxPairs pairs, whatever
  // the setting (pair_pack.h).
  static uint64_t HashMaxListpackEntries() {
    return std::min<uint64_t>(Load(collection_limits_internal::hash_max_listpack_entries),
                              core::PairPack::kMaxPairs);
  }
  static uint64_t HashMaxListpackValue() { return Load(collection_limits_internal::hash_max_listpack_value); }
  static uint64_t SetMaxIntsetEntries() { return Load(collection_limits_internal::set_max_intset_entries); }
  static uint64_t SetMaxListpackEntries() { return Load(collection_limits_internal::set_max_listpack_entries); }
  static uint64_t SetMaxListpackValue() { return Load(collection_limits_internal::set_max_listpack_value); }
  static uint64_t ZSetMaxListpackEntries() {
    return std::min<uint64_t>(Load(collection_limits_internal::zset_max_listpack_entries),
                              core::PairPack::kMaxPairs);
  }
  static uint64_t ZSetMaxListpackValue() { return Load(collection_limits_internal::zset_max_listpack_value); }
  // A stream node takes entries until it holds this many bytes or entries (0: no limit).
  static uint64_t StreamNodeMaxBytes() { return Load(collection_limits_internal::stream_node_max_bytes); }
  static uint64_t StreamNodeMaxEntries() { return Load(collection_limits_internal::stream_node_max_entries); }
  // A sparse HyperLogLog that would grow past this many bytes becomes dense.
  static uint64_t HllSparseMaxBytes() { return Load(collection_limits_internal::hll_sparse_max_bytes); }

  // The forms the objects take them in: a quicklist's fill and depth (a negative depth
  // is never stored, CONFIG SET refuses it; the clamp is for the flag), and a set's.
  static int ListFill() { return int(ListMaxListpackSize()); }
  static unsigned ListDepth() { return unsigned(std::max<int64_t>(0, ListCompressDepth())); }
  static core::SetLimits Sets() {
    return {.intset_entries = SetMaxIntsetEntries(),
            .listpack_entries = SetMaxListpackEntries(),
            .listpack_value = SetMaxListpackValue()};
  }

 private:
  template <typename T>
  static T Load(const std::atomic<T>& value) {
    return value.load(std::memory_order_relaxed);
  }
};

// Sets the limits from their flags. Called once at start-up, before any shard runs.
void InitCollectionLimits();

}  // namespace damselfly
