// DbSlice: one shard's part of every database: keys, values and expiry deadlines, and
// the one door through which every change to them passes.
//
// Each database has a main table (key -> PrimeValue) and an expire table (key ->
// deadline) holding only keys with a TTL, so keys without one pay nothing for it.
// Both are DashTables of CompactObj keys. Deadlines are milliseconds relative to the
// slice's base time. Expiry is lazy (a lookup of an expired key deletes it) and active
// (ActiveExpire walks the expire table incrementally with a traversal cursor).
// Databases are created on first write: an unused database costs a null pointer.
//
// The write path. Reads get const values (Find, FindRead, FindTyped). Every change goes
// through an Update (FindMutable, FindMutableTyped, AddOrFind) or one of the few
// whole-key operations (Erase, Rename, MoveToDb, FlushDb, SwapDb, expiry). The command
// says what it did to an Update (Changed("incrby")); when the Update ends, a real change
// is reported to the change listeners as KeyChanges (key, kind, notify-keyspace-events
// name), in the order Redis notifies them. A command that changed nothing reports
// nothing: a SET NX of an existing key, a DEL of a missing one, an EXPIRE that a
// condition refused. Listeners: WATCH (watch_table.h), keyspace notifications
// (keyspace_events.h), client-side caching (tracking.h), blocked clients
// (blocking_controller.h) and, while replicas follow, the journal (journal.h). See
// docs/architecture.md.
//
// Pointers returned by Find/Update stay valid until the next insertion into or erasure
// from that database's main table (a DashTable may move entries).
//
// Thread-safety: owned by its shard's thread; every call from that thread only.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
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
#include "src/core/access_stamp.h"
#include "src/core/compact_object.h"
#include "src/core/dash_table.h"
#include "src/core/frequency_sketch.h"
#include "src/core/ghost_tags.h"
#include "src/server/eviction.h"
#include "src/server/lazy_free.h"
#include "src/server/op_status.h"
#include "src/server/prime_value.h"

namespace damselfly {

using DbIndex = uint16_t;

// Expiry deadlines are wall-clock unix milliseconds, as in Redis.
using helio::UnixTimeMs;

// What memcached keeps with an item besides its value: the client's opaque flags, the
// cas unique that `gets` hands out and `cas` compares (0: none handed out yet), the
// meta protocol's invalidation state (mg's X, W and Z flags), and its access record
// (mg's h and l flags, me's fetch and la).
//
// The access record is kept only for items that already have an entry or that a meta
// command stores or fetches (access_s != 0 says it was started). memcached keeps it in
// every item header; here a record costs a side-table entry, which RESP keys, and
// memcache items only ever used through classic commands without flags or cas, never
// pay. Those get their record at their first meta fetch, which then reports h0 and
// counts l from that fetch. Seconds are unix seconds, memcached's 1 s clock.
struct McMeta {
  uint32_t flags = 0;
  uint32_t access_s = 0;  // last access (unix seconds); 0: no access record yet
  uint64_t cas = 0;
  bool stale = false;       // invalidated by md I (or ms I with an older cas)
  bool win_sent = false;    // a client was told to recache it (W)
  bool fetched = false;     // fetched since it was stored (mg h)
  bool key_binary = false;  // stored by ms with a base64 key ('b'): mg and me encode it
};

// What a write did to a key: the post-update event of the write path.
enum class KeyChangeKind : uint8_t {
  kSet,          // created, or its value or deadline changed
  kDel,          // deleted by a command
  kExpired,      // deleted because its deadline passed
  kEvicted,      // deleted to make room (maxmemory)
  kRenamedFrom,  // its value moved to another key or database (RENAME, MOVE); gone here
  kRenamedTo,    // received another key's value (RENAME, MOVE)
  kFlushDb,      // the database is about to be emptied (key is empty)
  kSwapDb,       // the database is about to trade places with other_db (key is empty)
  // A change Redis neither signals nor notifies: a stream's consumer-group state (pending
  // entries, delivery counts, last-delivered id) by XREADGROUP, XACK, XCLAIM, XAUTOCLAIM.
  // No WATCH, notification, invalidation or wake-up: only the replication journal acts.
  kGroupState,
};

// One event of a change. A command may report several of one key, in the order Redis
// notifies them: a key it created is first reported as "new"; then, e.g., "set" and
// "expire" for SET with EX, "lpop" and "del" for an LPOP that empties the list.
struct KeyChange {
  KeyChangeKind kind;
  DbIndex db;
  std::string_view key;
  // The event's name as notify-keyspace-events names it: "new", "set", "incrby", "del",
  // "expired", "rename_from", "move_to", "flushdb"...
  std::string_view event;
  DbIndex other_db = 0;  // kSwapDb
};

// Called on the shard's thread after a change (before, for kFlushDb and kSwapDb); may
// read the slice, must not change it.
using ChangeListener = std::function<void(const KeyChange&)>;
// Called on the shard's thread when a read finds `key` missing (the reads that count a
// keyspace miss); may read the slice, must not change it.
using MissListener = std::function<void(DbIndex db, std::string_view key)>;

class DbSlice {
 private:
  struct KeyPolicy {
    static uint64_t Hash(const core::CompactObj& key) { return key.Hash(); }
    static uint64_t Hash(std::string_view key) { return core::HashKey(key); }
    static bool Equal(const core::CompactObj& a, std::string_view b) { return a == b; }
    static bool Equal(const core::CompactObj& a, const core::CompactObj& b) { return a == b; }
  };
  using MainTable = core::DashTable<core::CompactObj, PrimeValue, KeyPolicy>;
  using ExpireTable = core::DashTable<core::CompactObj, int64_t, KeyPolicy>;

 public:
  class Update;
  // A main-table bucket, as the pre-update hook sees it (core/dash_table.h "Snapshots").
  using BucketRef = MainTable::BucketRef;
  using PreUpdateHook = std::function<void(DbIndex db, BucketRef bucket)>;

  struct Stats {
    uint64_t keyspace_hits = 0;
    uint64_t keyspace_misses = 0;
    uint64_t expired_keys = 0;
    uint64_t evicted_keys = 0;
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

  // --- reads

  // The live value of `key`, or nullptr. An expired key is deleted on the way.
  const PrimeValue* Find(DbIndex db, std::string_view key);
  // Find for read commands: also counts a keyspace hit or miss (and tells the miss
  // listener). `touch`: records a use of the key (not for EXISTS, TYPE and TTL, which
  // Redis looks up with LOOKUP_NOTOUCH: counted, but no use).
  const PrimeValue* FindRead(DbIndex db, std::string_view key, bool touch = true);
  // FindRead of a value of `type`: kKeyNotFound, or kWrongType for another type (the
  // one place WRONGTYPE is decided). `for_write`: the look-up of a write command before
  // the hop that changes the key (LMOVE's, SMOVE's, LMPOP's first hop): a plain Find,
  // no keyspace hit or miss, as Redis's lookupKeyWrite.
  OpResult<const PrimeValue*> FindTyped(DbIndex db, std::string_view key, ObjType type,
                                        bool for_write = false) {
    const PrimeValue* value = for_write ? Find(db, key) : FindRead(db, key);
    if (value == nullptr) return OpStatus::kKeyNotFound;
    if (value->type() != type) return OpStatus::kWrongType;
    return value;
  }
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
  // The value of `key` as it is, expired or not, deleting and counting nothing: what a
  // change listener may read (the journal reads a changed key's new state).
  const PrimeValue* Peek(DbIndex db, std::string_view key) const;
  // The deadline (unix ms) of a live key, or 0 when it has none.
  int64_t GetExpire(DbIndex db, std::string_view key) const;
  // Seconds since `key` was last used (read by a command, changed, or TOUCHed; TYPE,
  // TTL, EXISTS and OBJECT do not count), as OBJECT IDLETIME reports it; nullopt when
  // missing. Exact under 17 minutes, then to the minute, hour, day (core/access_stamp.h).
  std::optional<uint32_t> IdleSeconds(DbIndex db, std::string_view key);

  // Housekeeping, once per expiry cycle: refreshes the slice's clock (in seconds: what
  // access stamps and IdleSeconds read, so both lag it alike) and rewrites about
  // `samples` access stamps in coarser units where they need it (every key must be seen
  // at least every 1024 s; EngineShard sizes `samples` to cover the table in 10 minutes).
  void AgeAccessStamps(size_t samples);

  // OBJECT FREQ: the LFU counter of `key` (decayed as due, as Redis reports it), or
  // nullopt when missing. Meaningful only under an LFU policy (eviction.h, "Per-key bits").
  std::optional<uint8_t> LfuCounter(DbIndex db, std::string_view key);

  // --- eviction (eviction.h)

  // Sets what this shard evicts and when; takes effect at the next write.
  void SetEviction(const EvictionSettings& settings);
  const EvictionSettings& eviction() const { return eviction_; }
  // Cache mode: the decay strength the shard has adopted, an index of kCacheDecayQuarters.
  unsigned cache_decay_level() const { return cache_decay_level_; }
  // What this shard holds now, exactly: its thread's object heap counter plus its tables
  // (O(databases)). The eviction check's figure.
  uint64_t UsedBytes() const;
  // The bytes of the slice and its tables (not what keys and values point to).
  size_t TableBytes() const;
  // Database `db`'s main and expire tables' bytes (0, 0 for one never made).
  std::pair<size_t, size_t> DbTableBytes(DbIndex db) const;
  // Evicts keys of any database, at most `max_keys`, while UsedBytes() is over the limit;
  // returns how many (the shard's housekeeping cycle).
  size_t EvictOverLimit(size_t max_keys);
  // Before a command that writes nothing runs here: as Redis evicts before every command,
  // a shard over its limit evicts up to kMaxEvictionsPerWrite keys first (writes evict in
  // AddOrFind). One compare while no maxmemory is set.
  void EvictBeforeRead() {
    if (eviction_.limit_bytes != 0) [[unlikely]] EvictOverLimit(kMaxEvictionsPerWrite);
  }
  // Whether the last eviction attempt found the shard over its limit and nothing it may
  // evict (a volatile policy without keys with a TTL): writes then get -OOM.
  bool eviction_stuck() const { return eviction_stuck_; }
  // Called on the shard's thread from its writes while maxmemory is set (any policy), when
  // the shard's used bytes moved by a 16th of its share since the last call, its writes
  // evicted that much, or eviction_stuck() changed: the shard then publishes both for the
  // -OOM check that other threads make, and follows RSS (rss_correction.h). Without it
  // they would see them once per housekeeping cycle, and a write flood (450K 1 KiB SETs a
  // second) could run 40 MiB past maxmemory before its first -OOM, or its RSS pass
  // maxmemory by a tenth before the first correction. Set once, before the shard serves.
  void SetMemoryListener(std::function<void()> listener) {
    memory_listener_ = std::move(listener);
  }

  // Counts a keyspace hit or miss for a read that did not go through FindRead (memcache's
  // gets, which may hand out a cas unique; SET's GET option).
  void CountRead(DbIndex db, std::string_view key, bool hit) {
    if (hit) return void(++stats_.keyspace_hits);
    CountMiss(db, key);
  }

  // --- writes (see the top of this file). `key` must stay valid while the Update lives.

  // An Update of the live value of `key`; false (no value) when absent.
  Update FindMutable(DbIndex db, std::string_view key);
  // FindMutable of a value of `type`: kKeyNotFound or kWrongType otherwise.
  OpResult<Update> FindMutableTyped(DbIndex db, std::string_view key, ObjType type);
  // An Update of the live value of `key`, inserting an empty string when absent
  // (Update::inserted()). An inserted key the command never marks Changed is removed
  // again when the Update ends. While the shard is over its eviction limit, first evicts
  // keys of `db` (possibly `key` itself), so pointers into `db` are invalid afterwards,
  // as after an insertion.
  Update AddOrFind(DbIndex db, std::string_view key);
  // Deletes `key`, reporting `kind` with `event`; false when it was not there.
  bool Erase(DbIndex db, std::string_view key, std::string_view event = "del",
             KeyChangeKind kind = KeyChangeKind::kDel);
  // Moves the value and deadline of `from` to `to` (replacing `to`), within the database:
  // the object moves, nothing is copied. kKeyNotFound when `from` is missing; kSkipped
  // with only_if_new when `to` exists (RENAMENX). REQUIRES: from != to. Reported as
  // Redis does: "new" for `to` (also when it replaced a key), "rename_from", "rename_to".
  OpStatus Rename(DbIndex db, std::string_view from, std::string_view to, bool only_if_new);
  // Moves `key` with its deadline to database `to_db` (MOVE). kKeyNotFound when missing,
  // kSkipped when `to_db` has the key. REQUIRES: from_db != to_db. Reported as "new"
  // (in `to_db`), "move_from", "move_to".
  OpStatus MoveToDb(DbIndex from_db, DbIndex to_db, std::string_view key);
  // Puts a value rebuilt from PrimeValue::Serialize form (a value moved in from another
  // shard, or a copy) under `key` with `deadline_ms` (0: none), replacing any value;
  // reported as "new" then kRenamedTo with `event`. False (nothing changed) when the form
  // is malformed.
  bool PutSerialized(DbIndex db, std::string_view key, std::string_view form,
                     int64_t deadline_ms, std::string_view event);

  // Puts `value` under `key` with `deadline_ms` (0: none), replacing any value and its
  // memcached metadata (RESTORE). Reported as "new", then kSet with `event`: Redis
  // deletes a replaced key and adds it anew.
  void PutRestored(DbIndex db, std::string_view key, PrimeValue value, int64_t deadline_ms,
                   std::string_view event);
  // Makes `key` look unused for the last idle_s seconds (RESTORE's IDLETIME; see
  // IdleSeconds for the precision). No effect when missing, or under an LFU policy (the
  // bits hold the counter then), as in Redis.
  void SetIdleSeconds(DbIndex db, std::string_view key, uint32_t idle_s);
  // Sets `key`'s LFU counter (RESTORE's FREQ). Only under an LFU policy, as in Redis.
  void SetLfuCounter(DbIndex db, std::string_view key, uint8_t counter);

  size_t DbSize(DbIndex db) const;
  size_t ExpireSize(DbIndex db) const;
  // Empties database `db` (listeners hear kFlushDb first). `lazily` (FLUSHDB/FLUSHALL
  // ASYNC, memcached's flush_all): the keys leave at once, and their memory goes in steps
  // (FreeDetached) on the shard's fiber, so that the shard keeps serving meanwhile.
  void FlushDb(DbIndex db, bool lazily = false);
  // FlushDb of every database.
  void FlushAll(bool lazily = false);
  // UNLINK: Erase, but a large collection (MaybeDetach) is detached and freed later by
  // FreeDetached, as Redis frees it on a background thread. Memory belongs to the shard
  // thread's heaps, so it is freed on this thread: hashes, sets and sorted sets a few
  // thousand elements per step (TypedObject::FreeSome), lists and streams (whose nodes
  // hold hundreds of elements each) whole.
  bool Unlink(DbIndex db, std::string_view key);
  // Frees what FlushDb(lazily) and Unlink detached, for about `budget` (at least one
  // value's step or one table block); true when some remain. Shard thread.
  bool FreeDetached(std::chrono::nanoseconds budget);
  // INFO's lazyfree_pending_objects and lazyfreed_objects: detached values, and the keys
  // of detached databases (each counts one, as in Redis).
  size_t lazyfree_pending() const {
    size_t keys = 0;  // DestroySomeBlocks keeps a table's size
    for (const auto& d : detached_dbs_) keys += d->main.size();
    return detached_values_.size() + keys;
  }
  uint64_t lazyfreed() const { return lazyfreed_; }
  // Whether expiry and eviction detach large values too (lazyfree-lazy-expire,
  // lazyfree-lazy-eviction; the other fields are the commands'). Shard thread.
  void SetLazyFree(const LazyFreeConfig& config) { lazy_free_ = config; }
  // Called (on the shard thread) whenever something is detached: the shard wakes the
  // fiber that calls FreeDetached. Set once, before the shard serves.
  void SetDetachListener(std::function<void()> listener) { detach_listener_ = std::move(listener); }
  // Trades the contents of databases a and b (SWAPDB); listeners hear kSwapDb first, once
  // for each side.
  void SwapDb(DbIndex a, DbIndex b);

  // The pre-update hook: called with a main-table bucket of database `db` before any
  // change alters it (an Update of an entry, an insert, an erase, entries moving while a
  // segment grows), on every database, present and future; nullptr removes it. A
  // point-in-time snapshot serializes the bucket there. FlushDb and SwapDb, which change
  // whole databases at once, first call it with every bucket of the databases they
  // change.
  void SetPreUpdateHook(PreUpdateHook hook);
  // Snapshots: walks `db`'s main-table buckets, one block of a segment per call (about
  // 700 entries), from `cursor` (0 starts), returning the next cursor (0: done); see
  // core/dash_table.h "Snapshots".
  uint64_t TraverseBuckets(DbIndex db, uint64_t cursor, absl::FunctionRef<void(BucketRef)> fn);
  // Snapshots: calls fn for each entry of a main-table bucket of `db`, expired or not, with
  // its deadline (unix ms, 0: none) and memcached metadata (nullptr: none).
  void ForEachInBucket(DbIndex db, BucketRef bucket,
                       absl::FunctionRef<void(std::string_view key, const PrimeValue& value,
                                              int64_t expire_ms, const McMeta* mc)>
                           fn);

  // Listeners of the write path (see ChangeListener). Returns an id for
  // RemoveChangeListener. Reporting costs one branch while there are none.
  uint64_t AddChangeListener(ChangeListener listener);
  void RemoveChangeListener(uint64_t id);
  // The listener of reads of missing keys (one at most; nullptr removes it). A miss costs
  // one branch while there is none.
  void SetMissListener(MissListener listener) { miss_listener_ = std::move(listener); }

  // Calls cb for the keys of the table from `cursor` (0 starts a scan) until at least
  // `count` keys were seen or the table ends, and returns the cursor to continue with
  // (0: done). Every key present for the whole scan is returned at least once, also when
  // the table grows between calls. Expired keys are skipped, and appended to *expired
  // when given (the table cannot change during the step: SCAN deletes them after it, as
  // Redis's SCAN expires the keys it passes). Cursors stay below 2^48.
  uint64_t Scan(DbIndex db, uint64_t cursor, size_t count,
                absl::FunctionRef<void(std::string_view key, const PrimeValue& value)> cb,
                std::vector<std::string>* expired = nullptr);

  // Calls cb for every live key of `db`.
  void ForEach(DbIndex db,
               absl::FunctionRef<void(std::string_view key, const PrimeValue& value)> cb);

  // Bytes a live key costs: its share of the table, its key and value blocks, and its
  // deadline entry; 0 when absent. (MEMORY USAGE)
  size_t MemoryUsage(DbIndex db, std::string_view key);

  // A random live key of `db`, if any.
  std::optional<std::string> RandomKey(DbIndex db, absl::BitGen* rng);

  // One round of active expiry: checks about `samples` keys with a TTL in each database
  // (resuming where the last round stopped) and deletes the expired ones for which
  // `may_delete` says yes (the shard keeps those a transaction holds: in Redis no key
  // expires in the middle of MULTI/EXEC or a script). Returns the numbers checked and
  // deleted.
  std::pair<size_t, size_t> ActiveExpire(
      size_t samples, absl::FunctionRef<bool(std::string_view key)> may_delete);

  // CLIENT PAUSE keeps the dataset as it is until the clock passes `until_ms` (0: no
  // pause): lookups report keys past their deadline as missing without deleting them,
  // and ActiveExpire does nothing. Only an insertion (AddOrFind) still deletes the
  // expired key it replaces, as the table cannot hold the key twice.
  void KeepExpiredUntil(int64_t until_ms) { keep_expired_until_ms_ = until_ms; }

  // The clock lookups expire keys by: now, or while a FrozenClock is open on this thread
  // (a script runs: Redis 7 reads the clock once per script, so no key expires in the
  // middle of one) the time it froze.
  static int64_t ExpiryNowMs() { return frozen_now_ms_ != 0 ? frozen_now_ms_ : UnixTimeMs(); }
  class FrozenClock {
   public:
    // `ms` 0: the clock keeps running. Must not span a suspension of the fiber.
    explicit FrozenClock(int64_t ms) : saved_(frozen_now_ms_) {
      if (ms != 0) frozen_now_ms_ = ms;
    }
    ~FrozenClock() { frozen_now_ms_ = saved_; }

   private:
    const int64_t saved_;
  };

  // Memcached item metadata. Only items that need it have an entry (flags != 0, a cas
  // unique handed out, an access record: see McMeta), in a side table, so other keys pay
  // nothing. An entry describes the value it was set for: any later write through
  // PrimeValue's setters (a RESP SET, APPEND, INCR...) makes the value a new item without
  // metadata (flags 0, and a cas that matches nothing), as if memcached had stored it anew.
  // The metadata of a live value, or nullptr when it has none.
  const McMeta* FindMcMeta(DbIndex db, std::string_view key, const PrimeValue& value) const;
  // The same, to update in place (valid until the next SetMcMeta or erasure).
  McMeta* FindMcMeta(DbIndex db, std::string_view key, const PrimeValue& value) {
    return const_cast<McMeta*>(std::as_const(*this).FindMcMeta(db, key, value));
  }
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

  const Stats& stats() const { return stats_; }
  // Keys changed (an Update that recorded an event) or erased since the slice began
  // (not reset by CONFIG RESETSTAT): what INFO persistence's rdb_changes_since_last_save
  // and the save rules count.
  uint64_t changes() const { return changes_; }
  void ResetStats() {  // CONFIG RESETSTAT
    stats_ = Stats{};
    lazyfreed_ = 0;
  }
  TableStats table_stats() const;

 private:
  // mimalloc rounds allocations up to size classes a quarter of a power of two apart; a
  // block just past a class boundary would waste up to 25% of the table.
  static_assert(MainTable::block_bytes() <= 24 * 1024, "blocks must fit the 24 KiB class");
  struct Db {
    explicit Db(DbIndex i) : index(i) {}
    DbIndex index;  // its place in dbs_ (changes with SwapDb)
    MainTable main;
    ExpireTable expire;  // deadline - base_ms_
    uint64_t expire_cursor = 0;
    uint64_t stamp_cursor = 0;  // AgeAccessStamps' place in `main`
    size_t inline_keys = 0;
    // Keys with memcached metadata; an entry lives as long as its key (see FindMcMeta).
    absl::flat_hash_map<std::string, McMeta, helio::StringViewHash, helio::StringViewEq> mc_meta;
  };

  Db* db(DbIndex index) { return dbs_[index].get(); }
  const Db* db(DbIndex index) const { return dbs_[index].get(); }
  Db& EnsureDb(DbIndex index) {
    if (dbs_[index]) [[likely]]
      return *dbs_[index];
    return CreateDb(index);
  }
  Db& CreateDb(DbIndex index);
  // Points `d`'s main table at pre_update_hook_ (or clears its hook).
  void InstallHook(Db& d);
  // Calls the pre-update hook with every bucket of the database, if both exist.
  void HookEveryBucket(DbIndex index);
  // Records a use of the entry now (`hash`: its key's): its access stamp (8 bits in the
  // key's flags, 5 in the value's spare bits), under an LFU policy its counter, under
  // cache mode its tick and a count in the frequency sketch (eviction.h).
  void Touch(MainTable::Handle handle, uint64_t hash) {
    if (stamp_mode_ != StampMode::kStamp) [[unlikely]]
      return TouchSlow(handle, hash);
    SetStamp(handle, core::AccessStamp::Now(clock_s_));
  }
  // Touch for an entry just inserted: LFU's initial counter; cache mode counts no use
  // (the read that missed it did, if any).
  void TouchNew(MainTable::Handle handle) {
    if (stamp_mode_ != StampMode::kStamp) [[unlikely]]
      return TouchNewSlow(handle);
    SetStamp(handle, core::AccessStamp::Now(clock_s_));
  }
  void TouchSlow(MainTable::Handle handle, uint64_t hash);
  void TouchNewSlow(MainTable::Handle handle);
  static void SetStamp(MainTable::Handle handle, uint16_t stamp) {
    handle.key().SetKeyFlagBits(uint8_t(stamp));
    handle.value().set_spare_bits(uint8_t(stamp >> 8));
  }
  static uint16_t StampOf(MainTable::Handle handle) {
    return uint16_t(handle.key().KeyFlagBits() | handle.value().spare_bits() << 8);
  }
  uint32_t NowSeconds() const { return uint32_t((UnixTimeMs() - base_ms_) / 1000); }
  uint32_t NowMinutes() const { return uint32_t(UnixTimeMs() / 60000); }

  // Eviction before a write into `d` (AddOrFind); `hash` is the written key's.
  void EvictBeforeWrite(Db& d, uint64_t hash);
  // Calls the memory listener when `used` or eviction_stuck_ moved enough (see there).
  void ReportMemory(uint64_t used);
  // The entry the policy evicts next from `d` (empty when none may go); cache mode looks
  // first at the buckets of `near_hash` when given.
  MainTable::Handle PickVictim(Db& d, const uint64_t* near_hash);
  // How much the policy wants `handle` gone (higher: sooner).
  uint64_t EvictionScore(MainTable::Handle handle) const;
  // Cache mode's victim among the candidates, under decay strength cache_decay_level_;
  // remembers it among the ghosts if a strength one weaker or stronger would have kept it.
  MainTable::Handle PickCacheVictim(Db& d, const uint64_t* near_hash);
  // What cache mode's score needs of an entry.
  struct CacheUse {
    unsigned estimate;    // the sketch's
    uint64_t idle_hits;   // since its last use
    uint32_t idle_ticks;  // of the CacheClock
  };
  CacheUse CacheUseOf(MainTable::Handle handle) const;
  // Higher goes first: the lowest decayed estimate, then the longest idle; 0 in the grace.
  uint64_t CacheScore(const CacheUse& use, unsigned level) const;
  void EvictEntry(Db& d, MainTable::Handle handle);
  uint64_t NextRandom() {  // xorshift64: sampling needs speed, not quality
    rng_state_ ^= rng_state_ << 13;
    rng_state_ ^= rng_state_ >> 7;
    rng_state_ ^= rng_state_ << 17;
    return rng_state_;
  }
  // Cache mode: counts a hit or change of the key hashed `hash` in the sketch and on the
  // clock (eviction.h).
  void CountCacheHit(uint64_t hash) {
    sketch_.Increment(hash);
    if (const uint8_t tags = ghosts_.Take(hash)) [[unlikely]]
      LearnDecay(tags);
    if (cache_clock_.Hit(clock_s_)) [[unlikely]]
      OnCacheTick();
  }
  // Cache mode: counts a miss in the sketch only, so that a scan of new keys ages nothing;
  // a key evicted lately that another decay strength would have kept moves the strength.
  void CountCacheMiss(uint64_t hash) {
    sketch_.Increment(hash, /*ages=*/false);
    if (const uint8_t tags = ghosts_.Take(hash)) [[unlikely]]
      LearnDecay(tags);
  }
  void LearnDecay(uint8_t tags);
  void OnCacheTick();
  // Rewrites about `samples` stamps where they need it (AgeAccessStamps' sweep).
  void SweepStamps(size_t samples);

  // The entry of a live key, deleting it first if its deadline has passed (the clock is
  // read only for keys that have a deadline), unless KeepExpiredUntil says to keep it and
  // the caller is not about to insert the key.
  MainTable::Handle FindLive(Db& db, std::string_view key, uint64_t hash,
                             bool for_insert = false);
  // Deletes a key known to exist in main, with its deadline.
  // `detach`: the value goes through MaybeDetach before the entry goes.
  void EraseEntry(Db& db, MainTable::Handle handle, std::string_view key, bool detach = false);
  // Moves a value whose free takes more than a few frees (TypedObject::FreeEffort past
  // 64, as in Redis: a large collection) to detached_values_, for FreeDetached, and
  // tells the detach listener; leaves others for the caller to free.
  void MaybeDetach(PrimeValue& value);
  // Deletes a main-table entry and its memcached metadata (its deadline is the caller's
  // business).
  void EraseMain(Db& db, MainTable::Handle handle, std::string_view key);
  // Takes the value of the live entry `source` of `key` out of `d`, with its deadline
  // (0: none), erasing the entry. Reports nothing: the caller does, in Redis's order.
  std::pair<PrimeValue, int64_t> TakeOut(Db& d, MainTable::Handle source, std::string_view key);
  // Puts `value` (one without a deadline or memcached metadata of its own) under `key`
  // with `deadline_ms` (0: none), replacing any value. Reports nothing.
  void PutValue(DbIndex db, std::string_view key, PrimeValue value, int64_t deadline_ms);
  // Sets (at_ms > 0) or removes (0) the deadline of the live entry `handle` of `key`.
  void SetExpireOf(Db& db, MainTable::Handle handle, std::string_view key, int64_t at_ms);
  void Report(KeyChangeKind kind, DbIndex db, std::string_view key, std::string_view event,
              DbIndex other_db = 0) {
    if (!listeners_.empty()) ReportToListeners({kind, db, key, event, other_db});
  }
  void ReportToListeners(const KeyChange& change);
  void CountMiss(DbIndex db, std::string_view key) {
    ++stats_.keyspace_misses;
    if (miss_listener_) [[unlikely]]
      miss_listener_(db, key);
  }

  const int64_t base_ms_;
  std::vector<std::unique_ptr<Db>> dbs_;
  size_t dbs_end_ = 0;  // no database was ever made at or past this index (TableBytes)
  // What FlushDb(lazily) and Unlink left to FreeDetached (values first, from the back).
  std::vector<PrimeValue> detached_values_;
  std::vector<std::unique_ptr<Db>> detached_dbs_;
  uint64_t lazyfreed_ = 0;
  LazyFreeConfig lazy_free_;
  std::function<void()> detach_listener_;
  uint32_t clock_s_ = 0;  // seconds since base_ms_, refreshed by AgeAccessStamps
  // What the 13 access bits hold (eviction.h, "Per-key bits").
  enum class StampMode : uint8_t { kStamp, kLfu, kCacheMode };
  StampMode stamp_mode_ = StampMode::kStamp;
  EvictionSettings eviction_;
  bool eviction_stuck_ = false;
  std::function<void()> memory_listener_;
  uint64_t report_step_ = 0;    // a 16th of the share; 0: no maxmemory, no reports
  uint64_t reported_used_ = 0;  // what the listener was last called at
  uint64_t reported_tables_ = 0;  // TableBytes() then, or at the last SetEviction
  uint64_t evicted_since_report_ = 0;  // bytes evicted by writes since then
  bool reported_stuck_ = false;
  uint32_t lfu_minutes_ = 0;  // the clock LFU counters decay by, refreshed with clock_s_
  uint64_t rng_state_ = 0x9e3779b97f4a7c15;
  // Cache mode's frequencies and clock (eviction.h); empty outside cache mode.
  core::FrequencySketch sketch_;
  // Cache mode's decay strength, an index of kCacheDecayQuarters, and the evidence for a
  // change (eviction.h "Cache mode"): the ghosts of victims a weaker or stronger decay
  // would have kept, and the balance of those that were asked for again.
  core::GhostTags ghosts_;
  unsigned cache_decay_level_ = kCacheDecayStartLevel;
  int decay_balance_ = 0;
  CacheClock cache_clock_;
  size_t cache_keys_ = 0;  // the shard's keys at the last tick: the decay's half-life
  std::vector<std::pair<uint64_t, ChangeListener>> listeners_;
  MissListener miss_listener_;
  PreUpdateHook pre_update_hook_;
  uint64_t next_listener_id_ = 1;
  int64_t keep_expired_until_ms_ = 0;
  static thread_local int64_t frozen_now_ms_;  // FrozenClock
  Stats stats_;
  uint64_t changes_ = 0;
  uint64_t next_cas_ = 1;
  uint64_t cas_stride_ = 1;
};

// An open change of one key: the value to change and what the command did to it,
// reported to the listeners when the Update ends (Finish or destruction). Movable, not
// copyable. The value pointer follows DbSlice's pointer rule (valid until the next
// insertion or erasure in that database), so a command finishes one Update before it
// inserts another key.
class DbSlice::Update {
 public:
  Update() = default;
  Update(Update&& other) noexcept { *this = std::move(other); }
  Update& operator=(Update&& other) noexcept;
  ~Update() { Finish(); }

  // Whether there is a value (FindMutable of a missing key gives none).
  explicit operator bool() const { return value_ != nullptr; }
  PrimeValue& value() const { return *value_; }
  PrimeValue* operator->() const { return value_; }
  // Whether AddOrFind inserted the key (its value is an empty string until set).
  bool inserted() const { return inserted_; }
  std::string_view key() const { return key_; }
  DbIndex db() const { return db_; }

  // Records that the command changed the key (value or deadline); reported as `kind`
  // with `event` (a static name: "set", "incrby", "expire"...) when the Update ends,
  // after "new" when the Update created the key. Each call adds an event, in the order
  // Redis notifies them (SET with EX: "set", then "expire"), except that an event
  // repeated at once is one change (a memcache mg with T twice). At most kMaxEvents.
  void Changed(std::string_view event, KeyChangeKind kind = KeyChangeKind::kSet) {
    if (num_events_ != 0 && events_[num_events_ - 1].name == event) return;
    DCHECK_LT(num_events_, kMaxEvents) << event;
    if (num_events_ < kMaxEvents) events_[num_events_++] = {event, kind};
  }
  bool changed() const { return num_events_ != 0; }

  // The deadline in unix ms, 0 when none.
  int64_t expire() const;
  // Sets (at_ms > 0) or removes (0) the deadline. Not a change by itself: the command
  // says Changed() when it means one.
  void SetExpire(int64_t at_ms);

  // Deletes the key and ends the Update, reporting the events recorded so far, then kDel
  // with `event` (nothing when this Update inserted the key: for the listeners it never
  // existed).
  void Erase(std::string_view event = "del");

  // Ends the Update now: reports a change, or removes a key it inserted and never
  // changed. Idempotent.
  void Finish() {
    if (value_ == nullptr) return;
    slice_->changes_ += num_events_ != 0;
    if (num_events_ != 0 && slice_->listeners_.empty()) {  // the common case, inline
      value_ = nullptr;
      return;
    }
    FinishSlow();
  }

 private:
  friend class DbSlice;
  static constexpr uint8_t kMaxEvents = 3;
  struct Event {
    std::string_view name;
    KeyChangeKind kind;
  };

  Update(DbSlice* slice, Db* db, std::string_view key, MainTable::Handle handle, bool inserted)
      : slice_(slice), db_state_(db), db_(db->index), key_(key), handle_(handle),
        value_(&handle.value()), inserted_(inserted) {}
  void FinishSlow();
  // Reports "new" (when inserted) and the recorded events, and forgets them.
  void ReportEvents();
  // Ends the Update without reporting or removing anything (the caller reports).
  void EndSilently() {
    value_ = nullptr;
    slice_ = nullptr;
  }

  DbSlice* slice_ = nullptr;
  Db* db_state_ = nullptr;
  DbIndex db_ = 0;
  std::string_view key_;
  // The entry itself, so that deadlines and erasure need no second lookup (same
  // validity as value_).
  MainTable::Handle handle_;
  PrimeValue* value_ = nullptr;
  bool inserted_ = false;
  uint8_t num_events_ = 0;  // 0: nothing changed (yet)
  std::array<Event, kMaxEvents> events_;
};

}  // namespace damselfly
