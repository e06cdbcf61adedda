// StringKeyTable<V>: a chained hash table from string keys to V with power-of-two bucket
// counts, the interim main table of a shard until the dashtable arrives.
//
// Why not std::unordered_map: SCAN must return every key present for a whole scan at
// least once, and finish, while the table grows between calls. With power-of-two
// buckets, growing from 2^n to 2^(n+1) splits bucket b into b and b + 2^n, so a cursor
// that walks buckets in reverse-binary order (increment the bit-reversed index, as
// Redis's dictScan does) never skips a bucket across a resize. A prime bucket count (as
// in libstdc++) has no such order.
//
// Entries are nodes: their addresses, and so views of their keys, stay valid until the
// entry is erased, across rehashes.
//
// Thread-safety: none; one owner thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"

namespace damselfly::core {

template <typename V>
class StringKeyTable {
 public:
  struct Entry {
    Entry* next;
    size_t hash;
    std::string key;
    V value;
  };

  StringKeyTable() = default;
  StringKeyTable(const StringKeyTable&) = delete;
  StringKeyTable& operator=(const StringKeyTable&) = delete;
  StringKeyTable(StringKeyTable&& other) noexcept { *this = std::move(other); }
  StringKeyTable& operator=(StringKeyTable&& other) noexcept {
    Clear();
    buckets_ = std::move(other.buckets_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  ~StringKeyTable() { Clear(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t bucket_count() const { return buckets_.size(); }

  Entry* Find(std::string_view key) const {
    if (size_ == 0) return nullptr;
    size_t hash = Hash(key);
    for (Entry* e = buckets_[hash & Mask()]; e; e = e->next) {
      if (e->hash == hash && e->key == key) return e;
    }
    return nullptr;
  }

  // Returns the entry for `key`, inserting one with a default V when absent.
  std::pair<Entry*, bool> FindOrInsert(std::string_view key) {
    if (Entry* e = Find(key)) return {e, false};
    if (size_ >= buckets_.size()) Grow();
    size_t hash = Hash(key);
    Entry*& head = buckets_[hash & Mask()];
    head = new Entry{head, hash, std::string(key), V{}};
    ++size_;
    return {head, true};
  }

  // Erases `key`; false when absent.
  bool Erase(std::string_view key) {
    if (size_ == 0) return false;
    size_t hash = Hash(key);
    for (Entry** link = &buckets_[hash & Mask()]; *link; link = &(*link)->next) {
      Entry* e = *link;
      if (e->hash == hash && e->key == key) {
        *link = e->next;
        delete e;
        --size_;
        return true;
      }
    }
    return false;
  }

  void Clear() {
    for (Entry*& head : buckets_) {
      while (head) delete std::exchange(head, head->next);
    }
    buckets_.clear();
    size_ = 0;
  }

  // Calls fn(Entry&) for the entries of the bucket at `cursor` (0 starts a scan) and
  // returns the next cursor; 0 when the scan is complete. fn must not insert or erase.
  template <typename Fn>
  uint64_t ScanBucket(uint64_t cursor, Fn&& fn) {
    if (buckets_.empty()) return 0;
    const uint64_t mask = Mask();
    for (Entry* e = buckets_[cursor & mask]; e; e = e->next) fn(*e);
    // Increment the bit-reversed cursor within the mask.
    cursor |= ~mask;
    cursor = Reverse(Reverse(cursor) + 1);
    return cursor;
  }

  // The entries of bucket `index` (for sampling), index < bucket_count().
  Entry* BucketHead(size_t index) const { return buckets_[index]; }

  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (Entry* head : buckets_) {
      for (Entry* e = head; e; e = e->next) fn(*e);
    }
  }

 private:
  static constexpr size_t kInitialBuckets = 16;

  static size_t Hash(std::string_view key) { return absl::Hash<std::string_view>{}(key); }
  static uint64_t Reverse(uint64_t v) {
    v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
    v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
    v = ((v >> 4) & 0x0f0f0f0f0f0f0f0full) | ((v & 0x0f0f0f0f0f0f0f0full) << 4);
    return __builtin_bswap64(v);
  }
  size_t Mask() const { return buckets_.size() - 1; }

  // Doubles the bucket array. O(size) at once: the dashtable's per-segment splits
  // remove this spike.
  void Grow() {
    std::vector<Entry*> bigger(buckets_.empty() ? kInitialBuckets : buckets_.size() * 2, nullptr);
    const size_t mask = bigger.size() - 1;
    for (Entry* head : buckets_) {
      while (head) {
        Entry* e = std::exchange(head, head->next);
        Entry*& slot = bigger[e->hash & mask];
        e->next = slot;
        slot = e;
      }
    }
    buckets_ = std::move(bigger);
  }

  std::vector<Entry*> buckets_;
  size_t size_ = 0;
};

}  // namespace damselfly::core
