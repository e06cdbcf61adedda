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

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

  const Stats& stats() const { return stats_; }
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
  // mimalloc rounds allocations up to size classes an eighth of a power of two apart; a
  // segment just past a class boundary would waste up to 12% of the table.
  static_assert(MainTable::segment_bytes() <= 28 * 1024, "segments must fit the 28 KiB class");
  using WatchMap = absl::flat_hash_map<std::string, std::vector<std::atomic<bool>*>,
                                      helio::StringViewHash, helio::StringViewEq>;
  struct Db {
    MainTable main;
    ExpireTable expire;  // deadline - base_ms_
    uint64_t expire_cursor = 0;
    size_t inline_keys = 0;
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
  // Deletes a main-table entry (its deadline is the caller's business).
  void EraseMain(Db& db, MainTable::Handle handle);
  void MarkWatchers(Db& db, std::string_view key);

  const int64_t base_ms_;
  std::vector<std::unique_ptr<Db>> dbs_;
  size_t watch_count_ = 0;  // Watch calls not undone by Unwatch
  Stats stats_;
};

}  // namespace damselfly
