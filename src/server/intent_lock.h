// Intent locks (VLL): per-key counters of the transactions that declared they will read
// (shared) or write (exclusive) a key. Taking one never waits: it only counts. Whether
// the key was free before is what the caller learns, and what decides whether its
// transaction may run out of queue order.
//
// Keys are locked by name, whatever their database: two databases' same-named keys share
// a lock, which only costs concurrency, never correctness, and lets MULTI/EXEC lock keys
// before its SELECTs have run.
//
// Thread-safety: a table belongs to one shard's thread; every call from that thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "helio/base/strings.h"

namespace damselfly {

enum class LockMode : uint8_t { kShared, kExclusive };

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
  // Counts one more holder of `key` in `mode`; returns whether the key was free for it.
  bool Acquire(std::string_view key, LockMode mode) {
    auto [it, inserted] = locks_.try_emplace(key);
    bool free = it->second.IsFree(mode);
    it->second.Acquire(mode);
    return free;
  }
  // REQUIRES: a holder of `key` in `mode`.
  void Release(std::string_view key, LockMode mode) {
    auto it = locks_.find(key);
    if (it == locks_.end()) return;
    it->second.Release(mode);
    if (it->second.unused()) locks_.erase(it);
  }
  bool IsFree(std::string_view key, LockMode mode) const {
    auto it = locks_.find(key);
    return it == locks_.end() || it->second.IsFree(mode);
  }
  // No key is locked: the common case, checked before any lookup.
  bool empty() const { return locks_.empty(); }
  size_t size() const { return locks_.size(); }

 private:
  absl::flat_hash_map<std::string, IntentLock, helio::StringViewHash, helio::StringViewEq> locks_;
};

}  // namespace damselfly
