// Client-side caching: CLIENT TRACKING, CLIENT CACHING, CLIENT GETREDIR, CLIENT
// TRACKINGINFO, and the invalidation messages of Redis 7.0.
//
// The problem: a client caches the values it read; the server must tell it when one of
// them changes, from whatever thread changes it, without slowing down clients that do
// not track and without suspending (changes are reported on shard threads, inside hops).
//
// The design:
//  1. Default mode. Each shard keeps a table key -> ids of the tracking clients that read
//     it (Redis's table, also without the database: a key read in db 0 is invalidated
//     by a write in db 1, as in Redis). The read path fills it before a read-only
//     command of a tracking client runs (RunCommand: one branch for other clients), on
//     the key's shard, so a write that follows the read always finds the entry.
//  2. The shard's table listens to its DbSlice's write path (every change: commands,
//     memcache writes, expiry, renames). A change of a key in the table sends one
//     invalidation to each reader and forgets the key, as Redis does.
//  3. BCAST mode keeps no table: a process-wide prefix map (prefix -> clients) is
//     checked on every change while any BCAST client exists. The keys changed on a shard
//     are gathered per client and prefix and sent once the shard's thread is done with
//     what it runs now (a task queued on its own thread), so one command (MSET, EXEC)
//     gives one message per prefix, as Redis's per-event-loop batching does.
//  4. Delivery. A process-wide directory maps connection ids to their push queues
//     (push_queue.h): never suspending, any thread. An invalidation goes to the client's
//     own queue under RESP3 (`>2 invalidate [keys]`), or to its REDIRECT client's: a
//     RESP3 push, or, to a RESP2 client subscribed to something, a `message` on
//     `__redis__:invalidate`. A redirect client that is gone makes a
//     `tracking-redir-broken` push to a RESP3 client at each invalidation. A tracking client always
//     has a push queue, so switching protocol (HELLO 3) needs nothing more.
//  5. Order on the writer's own connection: an invalidation caused by the client's own
//     write (no NOLOOP) is held and sent right after the command's reply, as Redis does.
//  6. FLUSHALL/FLUSHDB (and memcached's flush_all) send a null invalidation ("flush
//     everything") to every tracking client and empty the tables.
//  7. tracking-table-max-keys bounds the keys of all tables together: a shard over it
//     evicts keys, sending their invalidations.
//
// Thread-safety: the command handlers and the connection hooks run on the connection's
// fiber; TrackReadKeys also inside a hop (ShardLocalScope). Everything else is safe from
// any thread and never suspends, except TrackingFlushAll and SetTrackingTableMaxKeys
// (fiber only: they visit every shard).
#pragma once

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "src/facade/command_registry.h"
#include "src/facade/conn_context.h"
#include "src/facade/push_queue.h"

namespace damselfly {

inline bool IsTracking(const facade::ConnectionContext* cntx) {
  return cntx->tracking_state != nullptr;
}

// CLIENT TRACKING | CACHING | GETREDIR | TRACKINGINFO (args as CLIENT got them).
void ClientTracking(facade::CmdArgList args, facade::ConnectionContext* cntx);
void ClientCaching(facade::CmdArgList args, facade::ConnectionContext* cntx);
void ClientGetRedir(facade::ConnectionContext* cntx);
void ClientTrackingInfo(facade::ConnectionContext* cntx);
// CLIENT TRACKING off, RESET: no-op when not tracking.
void DisableTracking(facade::ConnectionContext* cntx);

// CLIENT LIST: the tracking flags ("t", "R" broken redirect, "B" bcast) and redir=.
std::string TrackingClientFlags(const facade::ConnectionContext* cntx);
int64_t TrackingRedirect(const facade::ConnectionContext* cntx);

// The directory of connections (point 4): on open and close (close: before the
// connection drops its push queue). Any connection's, not only tracking ones: a
// redirect may name any client.
void RegisterClient(facade::ConnectionContext* cntx);
void UnregisterClient(facade::ConnectionContext* cntx);
// Stops the connection's push queue unless pub/sub, MONITOR or tracking still use it,
// and tells the directory which queue the connection has now (pub/sub calls it after
// starting its queue, too).
void SyncPushes(facade::ConnectionContext* cntx);

// RunCommand's hooks for a tracking client (cntx->tracking_state set). Before: remembers
// the keys of a read-only command and names the writer (NOLOOP, point 5). After: sends
// the held invalidations after the reply; ends a CLIENT CACHING's one-command effect.
void TrackingBeforeCommand(const facade::CommandId* cid, facade::CmdArgList args,
                           facade::ConnectionContext* cntx);
void TrackingAfterCommand(const facade::CommandId* cid, facade::ConnectionContext* cntx);

// A client's identity as the writer of its own command (point 5), for a write made on its
// behalf by another fiber: a BLMOVE served by someone else's push moves the element into
// the destination on the serving shard, and the blocked client's own invalidation of it
// must follow its reply (and NOLOOP must hide it), as if it had pushed it itself.
class TrackingWriter {
 public:
  TrackingWriter() = default;
  // The connection's identity; empty when it does not track. Connection fiber.
  static TrackingWriter Of(facade::ConnectionContext* cntx);
  // Runs fn with the changes it makes counted as this writer's. Inside a hop, any thread;
  // the writer's connection must stay open meanwhile (a blocked client whose waiter was
  // claimed does: it closes only after the serve).
  void Run(absl::FunctionRef<void()> fn) const;

 private:
  uint64_t id_ = 0;
  facade::PushQueue* queue_ = nullptr;
  facade::ConnectionContext::TrackingState* session_ = nullptr;
};

// FLUSHALL, FLUSHDB, flush_all: point 6, `cntx` being the flushing client (nullptr:
// memcached). Fiber only.
void TrackingFlushAll(facade::ConnectionContext* cntx);

// CONFIG tracking-table-max-keys. Setting it evicts keys over the new bound. Fiber only.
int64_t TrackingTableMaxKeys();
void SetTrackingTableMaxKeys(int64_t keys);

// INFO.
struct TrackingCounts {
  int64_t clients = 0, keys = 0, items = 0, prefixes = 0;
};
TrackingCounts CountTracking();

}  // namespace damselfly
