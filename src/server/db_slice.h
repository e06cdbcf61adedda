// DbSlice: one shard's part of every database: keys, values and expiry deadlines.
//
// Each database has a main table (key -> PrimeValue) and an expire table (key ->
// deadline) holding only keys with a TTL, so keys without one pay nothing for it.
// Both are DashTables of CompactObj keys. Deadlines are milliseconds relative to the
// slice's base time. Expiry is lazy (a lookup of an expired key deletes it) and active
// (ActiveExpire walks the expire table incrementally with a traversal cursor).
// Databases are created on first write: an unused database costs a null pointer.
//
// Pointers returned by Find/FindOrInsert stay valid until the next insertion into or
// erasure from that database's main table (a DashTable may move entries).
//
// Thread-safety: owned by its shard's thread; every call from that thread only.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/random/random.h"
#include "helio/base/strings.h"
#include "helio/base/time.h"
#include "src/core/compact_object.h"
#include "src/core/dash_table.h"
#include "src/server/prime_value.h"

namespace damselfly {

using DbIndex = uint16_t;

// Expiry deadlines are wall-clock unix milliseconds, as in Redis.
using helio::UnixTimeMs;

// What memcached keeps with an item besides its value: the client's opaque flags, the
// cas unique that `gets` hands out and `cas` compares (0: none handed out yet), and the
// meta protocol's invalidation state (mg's X, W and Z flags).
struct McMeta {
  uint32_t flags = 0;
  uint64_t cas = 0;
  bool stale = false;     // invalidated by md I (or ms I with an older cas)
  bool win_sent = false;  // a client was told to recache it (W)
};

class DbSlice {
 public:
  struct Stats {
    uint64_t keyspace_hits = 0;
    uint64_t keyspace_misses = 0;
    uint64_t expired_keys = 0;
  };

  // Table figures for INFO memory.
  struct TableStats {
    size_t table_bytes = 0;   // the slice, its databases, their segments and directories
    size_t buckets = 0;
    size_t entries = 0;
    size_t inline_keys = 0;   // keys stored inside their 16-byte object
  };

  explicit DbSlice(unsigned dbnum);
  ~DbSlice();

  unsigned dbnum() const { return dbs_.size(); }

  // The live value of `key`, or nullptr. An expired key is deleted on the way.
  PrimeValue* Find(DbIndex db, std::string_view key);
  // Find for read commands: also counts a keyspace hit or miss.
  PrimeValue* FindRead(DbIndex db, std::string_view key);
  // Batched lookups: a command that looks up several keys calls PrefetchBuckets for all
  // of them, then PrefetchSlots for all, then finds each, so that their cache misses
  // overlap instead of following one another (see DashTable::PrefetchBuckets). `hash`
  // is core::HashKey(key). Neither changes anything.
  void PrefetchBuckets(DbIndex db, uint64_t hash) const {
    if (const Db* d = this->db(db)) d->main.PrefetchBuckets(hash);
  }
  void PrefetchSlots(DbIndex db, uint64_t hash) const {
    if (const Db* d = this->db(db)) d->main.PrefetchSlots(hash);
  }
  // A third pass: finds `key` (without Find's expiry) and prefetches its value's heap
  // block. Changes nothing.
  void PrefetchValue(DbIndex db, std::string_view key, uint64_t hash) const {
    const Db* d = this->db(db);
    if (!d) return;
    if (MainTable::Handle handle = d->main.Find(key, hash)) handle.value().PrefetchHeap();
  }
  // The live value of `key`, inserting an empty string when absent; second: inserted.
  std::pair<PrimeValue*, bool> FindOrInsert(DbIndex db, std::string_view key);
  // Deletes `key`; false when it was not there (or had expired).
  bool Erase(DbIndex db, std::string_view key);

  // The deadline (unix ms) of a live key, or 0 when it has none.
  int64_t GetExpire(DbIndex db, std::string_view key) const;
  // Sets (at_ms > 0) or removes (at_ms == 0) the deadline of a live key.
  void SetExpire(DbIndex db, std::string_view key, int64_t at_ms);

  size_t DbSize(DbIndex db) const;
  size_t ExpireSize(DbIndex db) const;
  void FlushDb(DbIndex db);

  // Calls cb for the keys of the table from `cursor` (0 starts a scan) until at least
  // `count` keys were seen or the table ends, and returns the cursor to continue with
  // (0: done). Every key present for the whole scan is returned at least once, also when
  // the table grows between calls. Expired keys are skipped. Cursors stay below 2^48.
  uint64_t Scan(DbIndex db, uint64_t cursor, size_t count,
                absl::FunctionRef<void(std::string_view key, const PrimeValue& value)> cb);

  // Calls cb for every live key of `db`.
  void ForEach(DbIndex db,
               absl::FunctionRef<void(std::string_view key, const PrimeValue& value)> cb);

  // Bytes a live key costs: its share of the table, its key and value blocks, and its
  // deadline entry; 0 when absent. (MEMORY USAGE)
  size_t MemoryUsage(DbIndex db, std::string_view key);

  // A random live key of `db`, if any.
  std::optional<std::string> RandomKey(DbIndex db, absl::BitGen* rng);

  // One round of active expiry: checks about `samples` keys with a TTL in each database
  // (resuming where the last round stopped) and deletes the expired ones. Returns the
  // numbers checked and deleted.
  std::pair<size_t, size_t> ActiveExpire(size_t samples);

  // Memcached item metadata. Only items that need it have an entry (flags != 0, or a cas
  // unique handed out), in a side table, so other keys pay nothing. An entry describes
  // the value it was set for: any later write through PrimeValue's setters (a RESP SET,
  // APPEND, INCR...) makes the value a new item without metadata (flags 0, and a cas
  // that matches nothing), as if memcached had stored it anew.
  // The metadata of a live value, or nullptr when it has none.
  const McMeta* FindMcMeta(DbIndex db, std::string_view key, const PrimeValue& value) const;
  // Attaches `meta` to the live value of `key`.
  void SetMcMeta(DbIndex db, std::string_view key, PrimeValue* value, McMeta meta);
  // cas uniques. This slice hands out first, first + stride, first + 2 * stride... The
  // shards use first = shard id + 1 and stride = the number of shards, so no two shards
  // ever hand out the same one: unique across the server, as memcached's single counter
  // makes them, without a shared counter. The default sequence is 1, 2, 3...
  // REQUIRES: stride >= 1; called before the first NextCas.
  void SetCasSequence(uint64_t first, uint64_t stride) {
    DCHECK_GE(stride, 1u);
    next_cas_ = first;
    cas_stride_ = stride;
  }
  // A cas unique never handed out before by this slice.
  uint64_t NextCas() { return std::exchange(next_cas_, next_cas_ + cas_stride_); }
  // Records a cas unique a client chose (ms E), so NextCas never hands it out again: the
  // sequence skips to its first value above `cas`.
  void NoteCas(uint64_t cas) {
    if (cas < next_cas_) return;
    const uint64_t above = cas + 1;
    next_cas_ = above + (next_cas_ % cas_stride_ + cas_stride_ - above % cas_stride_) % cas_stride_;
  }

  const Stats& stats() const { return stats_; }
  void ResetStats() { stats_ = Stats{}; }  // CONFIG RESETSTAT
  TableStats table_stats() const;

  // WATCH support. While `key` of `db` is watched with `flag`, the flag is set (relaxed)
  // when the key may have changed: NotifyChanged (called after every write command on
  // it), its expiry, a FLUSHDB/FLUSHALL while it exists. Unwatched keys cost one branch.
  void Watch(DbIndex db, std::string_view key, std::atomic<bool>* flag);
  void Unwatch(DbIndex db, std::string_view key, std::atomic<bool>* flag);
  void NotifyChanged(DbIndex index, std::string_view key) {
    Db* d = db(index);
    if (d && !d->watched.empty()) MarkWatchers(*d, key);
  }
  // Some key of some database is watched (NotifyChanged can be skipped otherwise).
  bool has_watches() const { return watch_count_ != 0; }

 private:
  struct KeyPolicy {
    static uint64_t Hash(const core::CompactObj& key) { return key.Hash(); }
    static uint64_t Hash(std::string_view key) { return core::HashKey(key); }
    static bool Equal(const core::CompactObj& a, std::string_view b) { return a == b; }
    static bool Equal(const core::CompactObj& a, const core::CompactObj& b) { return a == b; }
  };
  using MainTable = core::DashTable<core::CompactObj, PrimeValue, KeyPolicy>;
  using ExpireTable = core::DashTable<core::CompactObj, int64_t, KeyPolicy>;
  // mimalloc rounds allocations up to size classes a quarter of a power of two apart; a
  // block just past a class boundary would waste up to 25% of the table.
  static_assert(MainTable::block_bytes() <= 24 * 1024, "blocks must fit the 24 KiB class");
  using WatchMap = absl::flat_hash_map<std::string, std::vector<std::atomic<bool>*>,
                                      helio::StringViewHash, helio::StringViewEq>;
  struct Db {
    MainTable main;
    ExpireTable expire;  // deadline - base_ms_
    uint64_t expire_cursor = 0;
    size_t inline_keys = 0;
    // Keys with memcached metadata; an entry lives as long as its key (see FindMcMeta).
    absl::flat_hash_map<std::string, McMeta, helio::StringViewHash, helio::StringViewEq> mc_meta;
    WatchMap watched;  // key -> the flags of the connections watching it
  };

  Db* db(DbIndex index) { return dbs_[index].get(); }
  const Db* db(DbIndex index) const { return dbs_[index].get(); }
  Db& EnsureDb(DbIndex index);
  // The entry of a live key, deleting it first if its deadline has passed (the clock is
  // read only for keys that have a deadline).
  MainTable::Handle FindLive(Db& db, std::string_view key, uint64_t hash);
  // Deletes a key known to exist in main, with its deadline.
  void EraseEntry(Db& db, MainTable::Handle handle, std::string_view key);
  // Deletes a main-table entry and its memcached metadata (its deadline is the caller's
  // business).
  void EraseMain(Db& db, MainTable::Handle handle, std::string_view key);
  void MarkWatchers(Db& db, std::string_view key);

  const int64_t base_ms_;
  std::vector<std::unique_ptr<Db>> dbs_;
  size_t watch_count_ = 0;  // Watch calls not undone by Unwatch
  Stats stats_;
  uint64_t next_cas_ = 1;
  uint64_t cas_stride_ = 1;
};

}  // namespace damselfly
