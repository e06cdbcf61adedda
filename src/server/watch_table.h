// WatchTable: one shard's WATCHed keys, each mapped to the dirty flags of the
// connections watching it. A subscriber of the shard's write path (DbSlice change
// listeners): a real change of a watched key sets its watchers' flags, so EXEC fails
// exactly when Redis's would. It listens only while it holds a watch, so writes cost
// nothing extra when nobody watches.
//
// What counts, as in Redis: any reported change of the key (set, delete, expiry,
// rename from or to, move); FLUSHDB/FLUSHALL when the key existed; SWAPDB when the key
// existed in either database. Writes that change nothing are not reported (DbSlice::Update).
//
// Thread-safety: owned by its shard's thread; every call from that thread. The flags are
// written here (relaxed) and read by their connections after EXEC's hop.
#pragma once

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "helio/base/strings.h"
#include "src/server/db_slice.h"

namespace damselfly {

class WatchTable {
 public:
  explicit WatchTable(DbSlice* slice) : slice_(slice) {}
  ~WatchTable();
  WatchTable(const WatchTable&) = delete;
  WatchTable& operator=(const WatchTable&) = delete;

  // Sets *flag when `key` of `db` changes, until Unwatch with the same arguments.
  void Watch(DbIndex db, std::string_view key, std::atomic<bool>* flag);
  void Unwatch(DbIndex db, std::string_view key, std::atomic<bool>* flag);
  // Number of Watch calls not undone by Unwatch.
  size_t size() const { return count_; }

 private:
  using Watchers = std::vector<std::atomic<bool>*>;
  using KeyMap =
      absl::flat_hash_map<std::string, Watchers, helio::StringViewHash, helio::StringViewEq>;

  void OnChange(const KeyChange& change);
  void Mark(DbIndex db, std::string_view key);
  // Marks the watchers of the keys of `db` that exist in `db` or in `also_in`.
  void MarkExisting(DbIndex db, DbIndex also_in);

  DbSlice* const slice_;
  std::vector<KeyMap> by_db_;  // indexed by DbIndex, grown on demand
  size_t count_ = 0;
  uint64_t listener_id_ = 0;  // non-zero while subscribed
};

}  // namespace damselfly
