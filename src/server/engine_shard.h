// EngineShard: the part of the keyspace one proactor thread owns, and the housekeeping
// that runs beside it (active expiry).
//
// Thread-safety: an EngineShard is created, used and destroyed on its own thread only;
// other threads reach it by hopping there (EngineShardSet::Await / RunOnAll), never
// through a pointer.
#pragma once

#include <cstdint>
#include <memory>

#include <boost/fiber/fiber.hpp>

#include "absl/random/random.h"
#include "helio/fibers/sync.h"
#include "src/server/blocking_controller.h"
#include "src/server/db_slice.h"
#include "src/server/journal.h"
#include "src/server/keyspace_events.h"
#include "src/server/tx_queue.h"
#include "src/server/watch_table.h"

namespace damselfly {

using ShardId = uint16_t;

class EngineShard {
 public:
  // Creates this thread's shard (shard `id` of `num_shards`) and starts its expiry
  // fiber, which wakes `hz` times a second. Proactor thread, fiber context.
  static void InitThreadLocal(ShardId id, unsigned num_shards, unsigned dbnum, unsigned hz);
  // Stops the expiry fiber (waits for it) and destroys the shard. Fiber context.
  static void DestroyThreadLocal();
  // This thread's shard, or nullptr on a thread without one.
  static EngineShard* tlocal();

  // Expiry cycles per second on every shard (CONFIG SET hz); thread-safe, and the
  // shards pick a new value up at their next cycle. Clamped to [1, 500] as Redis does.
  static unsigned hz();
  static void set_hz(unsigned hz);
  // DEBUG SET-ACTIVE-EXPIRE: whether the expiry cycles delete expired keys (lazy expiry
  // on access goes on either way). Thread-safe; on by default.
  static bool active_expire();
  static void set_active_expire(bool enabled);
  // DEBUG PAUSE-CRON: while paused, the shards skip their whole periodic cycle (active
  // expiry, eviction, used_memory publication, access-stamp aging, memcached's delayed
  // flush_all), as Redis stops its serverCron. Thread-safe; off by default.
  static bool cron_paused();
  static void set_cron_paused(bool paused);

  ShardId shard_id() const { return shard_id_; }
  DbSlice& db_slice() { return db_slice_; }
  // The WATCHed keys of this shard (a listener of db_slice's writes).
  WatchTable& watches() { return watches_; }
  // Keyspace notifications of this shard's keys (a listener of db_slice's writes).
  KeyspaceNotifier& keyspace_events() { return keyspace_events_; }
  // The clients blocked on this shard's keys (a listener of db_slice's writes).
  BlockingController& blocking() { return blocking_; }
  // The replication journal of this shard's changes (a listener while replicas follow).
  ShardJournal& journal() { return journal_; }
  // Intent locks and the transaction queue (transaction.h).
  ShardTxQueue& tx_queue() { return tx_queue_; }
  // Whether an expired `key` may be deleted now (active expiry, SCAN): not while a
  // transaction holds it, whose script or EXEC sees it live until it ends. Shard thread.
  bool MayExpire(std::string_view key) { return tx_queue_.IsFree(key, LockMode::kExclusive); }
  absl::BitGen& rng() { return rng_; }
  // What this shard holds: its objects' heap blocks and its tables (INFO's used_memory).
  // Shard thread.
  uint64_t UsedMemory() const;
  // Gives the db slice its eviction settings from the process's configuration
  // (eviction.h): its share of maxmemory, less the RSS correction; and whether expiry and
  // eviction free large values lazily (lazy_free.h). Runs every cycle and
  // on the db slice's memory reports; CONFIG SET calls it on every shard so that a change
  // applies at once. Shard thread.
  void RefreshEviction();
  // Publishes UsedMemory() and whether eviction is stuck to the shard set. Shard thread.
  void PublishMemory();

  // Empties database `db` once the clock passes at_ms (memcached's flush_all with a
  // delay); a later call replaces the pending one, at_ms == 0 cancels it. Checked by the
  // expiry fiber, so it happens within 1/hz seconds of the deadline. Shard thread.
  void ScheduleFlush(DbIndex db, int64_t at_ms) {
    flush_db_ = db;
    flush_at_ms_ = at_ms;
  }

 private:
  EngineShard(ShardId id, unsigned num_shards, unsigned dbnum)
      : shard_id_(id),
        num_shards_(num_shards),
        db_slice_(dbnum),
        watches_(&db_slice_),
        keyspace_events_(&db_slice_),
        blocking_(&db_slice_),
        journal_(&db_slice_, id) {}
  void RunExpiryCycles();
  // The lazy-free fiber: frees what the db slice detached (DbSlice::FreeDetached) in
  // steps, yielding between them, until told to stop.
  void RunLazyFree();

  const ShardId shard_id_;
  const unsigned num_shards_;
  DbSlice db_slice_;
  WatchTable watches_;  // after db_slice_: it unsubscribes from it when destroyed
  KeyspaceNotifier keyspace_events_;  // likewise
  BlockingController blocking_;  // likewise
  ShardJournal journal_;         // likewise
  ShardTxQueue tx_queue_;
  absl::BitGen rng_;
  DbIndex flush_db_ = 0;
  int64_t flush_at_ms_ = 0;
  helio::fibers::Done stop_expiry_;
  boost::fibers::fiber expiry_fiber_;
  helio::fibers::Wakeup lazy_free_wakeup_;
  bool stop_lazy_free_ = false;
  boost::fibers::fiber lazy_free_fiber_;
};

}  // namespace damselfly
