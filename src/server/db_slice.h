// DbSlice: one shard's part of every database: keys, values and expiry deadlines.
//
// Each database has a main table (key -> PrimeValue) and an expire table (key ->
// absolute deadline in unix ms) holding only keys with a TTL, so keys without one pay
// nothing for it. Expiry is lazy (any lookup of an expired key deletes it) and active
// (ActiveExpire samples the expire table incrementally).
//
// Until the dashtable issue lands the main table is a chained power-of-two table
// (core::StringKeyTable): its entries never move, so the expire table's keys are views
// of the main table's keys, and its reverse-binary SCAN cursor survives growth.
//
// Thread-safety: owned by its shard's thread; every call from that thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/hash/hash.h"
#include "absl/random/random.h"
#include "src/core/string_key_table.h"
#include "src/server/prime_value.h"

namespace damselfly {

using DbIndex = uint16_t;

// Unix time in milliseconds (expiry deadlines are wall-clock, as in Redis).
int64_t UnixTimeMs();

class DbSlice {
 public:
  struct Stats {
    uint64_t keyspace_hits = 0;
    uint64_t keyspace_misses = 0;
    uint64_t expired_keys = 0;
  };

  explicit DbSlice(unsigned dbnum);

  unsigned dbnum() const { return dbs_.size(); }

  // The live value of `key`, or nullptr. An expired key is deleted on the way.
  PrimeValue* Find(DbIndex db, std::string_view key);
  // Find for read commands: also counts a keyspace hit or miss.
  PrimeValue* FindRead(DbIndex db, std::string_view key);
  // The live value of `key`, inserting an empty string when absent; second: inserted.
  std::pair<PrimeValue*, bool> FindOrInsert(DbIndex db, std::string_view key);
  // Deletes `key`; false when it was not there (or had expired).
  bool Erase(DbIndex db, std::string_view key);

  // The deadline of a live key, or 0 when it has none.
  int64_t GetExpire(DbIndex db, std::string_view key) const;
  // Sets (at_ms > 0) or removes (at_ms == 0) the deadline of a live key.
  void SetExpire(DbIndex db, std::string_view key, int64_t at_ms);

  size_t DbSize(DbIndex db) const;
  size_t ExpireSize(DbIndex db) const;
  void FlushDb(DbIndex db);

  // Calls cb for the keys of some buckets starting at `cursor` (0 starts a scan), at
  // least `count` keys unless the table ends, and returns the cursor to continue with
  // (0: done). Every key present for the whole scan is returned at least once, also when
  // the table grows between calls. Expired keys are skipped. Cursors stay below 2^48.
  uint64_t Scan(DbIndex db, uint64_t cursor, size_t count,
                absl::FunctionRef<void(std::string_view key, const PrimeValue& value)> cb);

  // Calls cb for every live key of `db`.
  void ForEach(DbIndex db,
               absl::FunctionRef<void(std::string_view key, const PrimeValue& value)> cb);

  // A random live key of `db`, if any.
  std::optional<std::string> RandomKey(DbIndex db, absl::BitGen* rng);

  // One round of active expiry: checks up to `samples` keys with a TTL in each database
  // (resuming where the last round stopped) and deletes the expired ones. Returns the
  // numbers checked and deleted.
  std::pair<size_t, size_t> ActiveExpire(size_t samples);

  const Stats& stats() const { return stats_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view key) const { return absl::Hash<std::string_view>{}(key); }
  };
  struct Eq {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a == b; }
  };
  using MainTable = core::StringKeyTable<PrimeValue>;
  using Entry = MainTable::Entry;
  using ExpireTable = std::unordered_map<std::string_view, int64_t, Hash, Eq>;
  struct Db {
    MainTable main;
    ExpireTable expire;  // keys are views of main's keys
    uint64_t expire_cursor = 0;
  };

  Db& db(DbIndex index) { return *dbs_[index]; }
  const Db& db(DbIndex index) const { return *dbs_[index]; }
  // Deletes an entry known to exist, with its deadline.
  void EraseEntry(Db& db, Entry* entry);
  // True (and deletes the key) when the entry's deadline has passed.
  bool ExpireIfNeeded(Db& db, Entry* entry, int64_t now_ms);

  std::vector<std::unique_ptr<Db>> dbs_;
  Stats stats_;
};

}  // namespace damselfly
