// Intent locks (VLL): per-key counters of the transactions that declared they will read
// (shared) or write (exclusive) a key. Taking one never waits: it only counts. Whether
// the key was free before is what the caller learns, and what decides whether its
// transaction may run out of queue order.
//
// Keys are locked by a 64-bit hash of their name (LockTag), whatever their database:
// two keys that share a tag (the same name in two databases, or a hash collision) share
// a lock. That only costs concurrency, never correctness, and it means the table stores
// no strings (no allocation, no view that could outlive its key) and lets MULTI/EXEC lock
// keys before its SELECTs have run.
//
// Thread-safety: a table belongs to one shard's thread; every call from that thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "src/core/compact_object.h"

namespace damselfly {

enum class LockMode : uint8_t { kShared, kExclusive };

using LockTag = uint64_t;
inline LockTag LockTagOf(std::string_view key) { return core::HashKey(key); }

class IntentLock {
 public:
  // True when a new holder in `mode` would conflict with no current holder.
  bool IsFree(LockMode mode) const {
    return mode == LockMode::kShared ? exclusive_ == 0 : exclusive_ == 0 && shared_ == 0;
  }
  void Acquire(LockMode mode) { ++(mode == LockMode::kShared ? shared_ : exclusive_); }
  void Release(LockMode mode) { --(mode == LockMode::kShared ? shared_ : exclusive_); }
  bool unused() const { return shared_ == 0 && exclusive_ == 0; }

 private:
  uint32_t shared_ = 0;
  uint32_t exclusive_ = 0;
};

class IntentLockTable {
 public:
  // Counts one more holder of `tag` in `mode`; returns whether it was free for it.
  bool Acquire(LockTag tag, LockMode mode) {
    IntentLock& lock = locks_[tag];
    bool free = lock.IsFree(mode);
    lock.Acquire(mode);
    return free;
  }
  // REQUIRES: a holder of `tag` in `mode`.
  void Release(LockTag tag, LockMode mode) {
    auto it = locks_.find(tag);
    if (it == locks_.end()) return;
    it->second.Release(mode);
    if (!it->second.unused()) return;
    locks_.erase(it);
    // A transaction over a million keys grew the table to tens of MiB, which an empty
    // hash map keeps: give it back once nothing is locked.
    if (locks_.empty() && locks_.capacity() > kKeptCapacity) locks_ = {};
  }
  bool IsFree(LockTag tag, LockMode mode) const {
    auto it = locks_.find(tag);
    return it == locks_.end() || it->second.IsFree(mode);
  }
  // No key is locked: the common case, checked before any lookup.
  bool empty() const { return locks_.empty(); }
  size_t capacity() const { return locks_.capacity(); }

  // What an empty table may keep: enough for the usual transactions' keys.
  static constexpr size_t kKeptCapacity = 1024;

 private:
  absl::flat_hash_map<LockTag, IntentLock> locks_;
};

}  // namespace damselfly
