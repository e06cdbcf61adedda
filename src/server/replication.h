// Replication, the master's side: the stream replicas follow (Redis's protocol, so a
// redis-server 7.0 or any client of SYNC/PSYNC can be the replica; replica.h is the
// replica's side).
//
// A replica connects, says REPLCONF listening-port/capa, then PSYNC (or SYNC). Unless it
// can continue from the backlog (same replication id, offset still held: +CONTINUE), it
// gets a full resync: a snapshot (snapshot.h) whose cut hop also starts every shard's
// journal (journal.h) with a cut record; +FULLRESYNC <replid> <offset>, where offset is
// where the stream stood at the cut; the RDB file as one bulk; then the stream from that
// offset. Every change after the cut is in the stream, every change before it in the
// file, because the cut is one whole-shard hop.
//
// The stream. The shards hand their records to per-shard inboxes; a fiber on proactor 0
// merges them (each shard's in order, barriers once every shard reached them, a
// transaction's group once every shard's part of it is next: journal.h), puts SELECT
// where the database changes and MULTI/EXEC around a group of several commands, appends
// the bytes to the backlog and pushes them to every online replica's PushQueue
// (client-output-buffer-limit's replica class bounds a replica that stops reading; it is
// dropped). The backlog keeps repl-backlog-size bytes
// for PSYNC continuations, and more while a replica is loading its snapshot (at most the
// replica class's hard limit, past which that replica is dropped). The fiber adds a PING
// every repl-ping-replica-period seconds, and REPLCONF GETACK * when WAIT asks.
// Replicas answer with REPLCONF ACK <offset> every second; WAIT counts them.
//
// Journaling starts with the first replica and stops repl-backlog-ttl seconds after the
// last one left (the backlog, and the replication id, go with it), so a server that
// never had a replica records nothing.
//
// Thread-safety: the stream's state belongs to proactor 0's thread; the functions below
// may be called from any fiber (they hop there).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/facade/conn_context.h"
#include "src/server/blocking_controller.h"

namespace damselfly {

class EngineShard;

struct ReplicaStatus {
  std::string ip;
  int64_t port = 0;
  std::string state;  // "wait_bgsave", "send_bulk" or "online", as INFO names them
  int64_t ack_offset = 0;
  int64_t lag_s = 0;  // seconds since its last ACK
};

struct ReplicationStatus {
  std::string replid;
  int64_t offset = 0;  // master_repl_offset
  bool backlog_active = false;
  int64_t backlog_size = 0;  // repl-backlog-size
  int64_t backlog_first_byte = 0, backlog_histlen = 0;
  std::vector<ReplicaStatus> replicas;
  int64_t good_replicas = 0;  // online, acknowledged within min-replicas-max-lag seconds
};
ReplicationStatus GetReplicationStatus();

// A replica's connection. Starts a full or partial resync on the connection's fiber
// (psync: `replid` and `offset` of PSYNC; sync: SYNC's, with no +FULLRESYNC line) and
// returns once the replica is online (the stream then flows through its push queue), or
// failed (the connection is then closed).
void ServeReplica(facade::ConnectionContext* cntx, bool psync, std::string_view replid,
                  int64_t offset);
// REPLCONF ACK from a replica's connection.
void ReplicaAck(facade::ConnectionContext* cntx, int64_t offset);
// REPLCONF listening-port / ip-address, remembered for INFO and ROLE.
void SetReplicaAddress(facade::ConnectionContext* cntx, std::string_view ip, int64_t port);
// REPLCONF capa: psync2 is the one that changes what the replica is sent.
void SetReplicaCapa(facade::ConnectionContext* cntx, std::string_view capa);
// From Service::OnConnectionClose.
void OnReplicaConnectionClose(facade::ConnectionContext* cntx);
bool IsReplica(const facade::ConnectionContext* cntx);

// WAIT: the stream's offset once the writes made so far are in it; how many replicas
// acknowledged at least `offset`; and, to wait, `waiter` settles (Waiter::Settle) once
// `wanted` replicas acknowledged `offset` (every replica is asked for an ACK now).
int64_t StreamOffset();
int64_t CountAcked(int64_t offset);
void AwaitAcks(WaiterPtr waiter, int64_t offset, int64_t wanted);

// A command that changes no key but reaches the replicas as it was sent (PUBLISH,
// FUNCTION LOAD/DELETE/FLUSH/RESTORE): after the writes merged so far, in the client's
// database `db` (a SELECT first if needed, as Redis does). One relaxed load when no
// replica follows; never suspends.
void PropagateToReplicas(facade::CmdArgList args, DbIndex db);

// CONFIG: repl-ping-replica-period (seconds between the PINGs in the stream),
// repl-backlog-size (bytes kept for PSYNC continuations; at least 16 KiB, as in Redis),
// repl-backlog-ttl (seconds without replicas before the backlog and the journaling stop;
// 0: never). Any thread.
int64_t ReplPingPeriodS();
void SetReplPingPeriodS(int64_t seconds);
int64_t ReplBacklogBytes();
void SetReplBacklogBytes(int64_t bytes);
int64_t ReplBacklogTtlS();
void SetReplBacklogTtlS(int64_t seconds);

// CONFIG: min-replicas-to-write and min-replicas-max-lag (min-slaves-*). With both
// above 0, a master refuses writes (-NOREPLICAS) while fewer replicas than the first are
// online and acknowledged within the last max-lag seconds; the count is refreshed as
// replicas come, go and acknowledge, and at least every 100 ms. Fiber context.
int64_t MinReplicasToWrite();
void SetMinReplicasToWrite(int64_t count);
int64_t MinReplicasMaxLagS();
void SetMinReplicasMaxLagS(int64_t seconds);

// The append-only file (aof.h) follows the stream as a replica on this machine would,
// without the PINGs and REPLCONF GETACKs: from its first cut on, it hears every byte the
// merge emits, on proactor 0, in the merge.
class StreamFollower {
 public:
  virtual ~StreamFollower() = default;
  // The stream's next bytes. Must not suspend.
  virtual void Append(std::string_view bytes) = 0;
  // The cut `token` (FollowStream's) is here: the bytes after it are the changes made
  // after that cut's snapshot. Must not suspend.
  virtual void AtCut(uint64_t token) = 0;
};
struct StreamCut {
  uint64_t generation = 0, token = 0;
};
// Makes `follower` the stream's (one at a time), starts the stream recording if it does
// not, and returns a cut to take: CutJournal on every shard in one whole-shard hop (a
// snapshot's cut, or any hop while nothing else writes). The follower hears the stream
// from the first cut it took; while it follows, the stream keeps recording without
// replicas. Fiber context.
StreamCut FollowStream(StreamFollower* follower);
// In the whole-shard hop: `shard`'s journal records `cut` (and starts recording).
void CutJournal(EngineShard* shard, StreamCut cut);
// The follower stops hearing the stream (recording stops as it does without replicas).
// Fiber context.
void UnfollowStream();
// Everything the shards recorded so far reaches the follower (WAIT's StreamOffset, which
// flushes every shard's journal and merges). Fiber context.
void FlushStream();

// Stops the merge fiber and the shards' journals; at shutdown, once the connections
// are closed and before the shards stop.
void StopReplication();

}  // namespace damselfly
