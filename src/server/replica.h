// Replication, the replica's side: REPLICAOF host port (or --replicaof) makes damselfly
// follow a master that speaks Redis's protocol: a redis-server, or another damselfly
// (replication.h is the master's side).
//
// The link is a fiber on proactor 0. It connects, authenticates with masterauth (and
// masteruser) when set, says REPLCONF listening-port and capa eof psync2, and asks PSYNC
// with the master's replication id and offset it followed before, else `? -1`.
//  - +FULLRESYNC replid offset: the file follows as a sized bulk, or, to a replica that
//    said capa eof, as `$EOF:<mark>` and bytes up to that 40-byte mark (Redis's diskless
//    sync). It goes to a temporary file in dir, then every database is emptied and the
//    file loaded in the loading state (persistence_family.h: LoadFromMaster), and the
//    file is removed.
//  - +CONTINUE [replid]: the stream goes on from the offset asked.
// Then the stream: the commands run, in order, on the master client, a connection with
// no socket (CLIENT LIST flags=M, TYPE master) whose replies are dropped; MULTI/EXEC and
// SELECT take effect as for any client. Pipelined commands run as one batch (the
// dispatcher's squashing). The offset counts the stream's bytes run so far, but for a
// transaction not yet executed (as Redis's: a link that drops inside one continues from
// its MULTI). PING is only counted; REPLCONF GETACK is answered with REPLCONF ACK
// <offset>, as is every second. A continuation keeps the database the stream selected.
//
// The link drops when the master closes it, sends what cannot be parsed, or is silent for
// repl-timeout seconds; it reconnects a second later and asks PSYNC to continue (after a
// protocol error, a full resync: where the stream stood is not known). A replica with
// replica-read-only (the default) refuses writes from its other clients with -READONLY;
// with replica-serve-stale-data no, while the stream does not flow, every command without
// the stale flag with -MASTERDOWN. REPLICAOF NO ONE stops the link and keeps the data; the
// server is a master again (its own stream, replication.h, serves replicas whether or not
// it follows).
//
// Differs from Redis: the replica expires keys itself, as a master does, instead of
// waiting for the master's DEL (reads see the same: an expired key is gone either way);
// maxmemory evicts on a replica too (Redis's replica-ignore-maxmemory yes); host names are
// resolved on proactor 0's thread, which blocks while DNS answers; CLIENT KILL of the
// master client drops the link within a second (the link's tick notices), not at once.
//
// Thread-safety: the link's state belongs to proactor 0's thread. StartReplicaOf,
// StopReplicaOf and GetMasterLinkStatus may be called from any fiber or plain thread (they
// run on proactor 0 and wait); ReplicaRefusals, ReadOnlyReplica and the CONFIG accessors
// from any thread, any context.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "src/facade/service_interface.h"

namespace damselfly {

// Once at start-up, before REPLICAOF can run: the service the master client's commands
// go through.
void SetReplicaService(facade::ServiceInterface* service);

// REPLICAOF host port. False when it already follows that master (Redis then answers
// "+OK Already connected to specified master").
bool StartReplicaOf(std::string_view host, uint16_t port);
// REPLICAOF NO ONE, and at shutdown: stops the link (a load in progress first ends).
void StopReplicaOf();

// What is refused to clients other than the master link: writes, on a replica with
// replica-read-only; every command without the stale flag while the stream does not flow
// (replica-serve-stale-data no); writes, on a master with fewer good replicas than
// min-replicas-to-write (replication.h: SetTooFewGoodReplicas); writes and PING while the
// AOF cannot be written (SetAofWriteError) or the last background save failed
// (SetBgsaveWriteError), as Redis. One relaxed load.
enum ReplicaRefusal : uint8_t {
  kRefuseWrites = 1,
  kRefuseStale = 2,
  kRefuseNoReplicas = 4,
  kRefuseDiskError = 8,
};
uint8_t ReplicaRefusals();
inline bool ReadOnlyReplica() { return ReplicaRefusals() & kRefuseWrites; }
// Redis's refusals (of a write command, a script that may write, FUNCTION LOAD...; of a
// command on a stale replica).
inline constexpr char kReadOnlyReplicaErr[] =
    "READONLY You can't write against a read only replica.";
inline constexpr char kMasterDownErr[] =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
inline constexpr char kNoReplicasErr[] = "NOREPLICAS Not enough good replicas to write.";
// From the AOF's writer (aof.h): the errno of a write that failed, 0 once one succeeds.
// Any thread.
void SetAofWriteError(int error_number);
// From persistence_family.h: whether the failure of the last background save refuses
// writes (stop-writes-on-bgsave-error with save rules). Any thread.
void SetBgsaveWriteError(bool refuse);
// Redis's refusal while a snapshot or the AOF cannot be written: "MISCONF Redis is
// configured to save RDB snapshots, ..." or "MISCONF Errors writing to the AOF file:
// <the error>", the snapshot's first, as Redis.
std::string DiskErrorRefusal();
// The error a write from a client (not the master link) is refused with now, or "".
inline std::string WriteRefusal(bool master_link) {
  const uint8_t refusals = master_link ? 0 : ReplicaRefusals();
  if (refusals == 0) [[likely]] return {};
  if (refusals & kRefuseDiskError) return DiskErrorRefusal();
  if (refusals & kRefuseNoReplicas) return kNoReplicasErr;
  if (refusals & kRefuseWrites) return kReadOnlyReplicaErr;
  return {};
}
// From the master's side (replication.h), whenever the count of good replicas or the
// min-replicas settings change: writes are refused while `too_few` (never on a replica,
// as in Redis).
void SetTooFewGoodReplicas(bool too_few);

// CONFIG: replica-read-only (slave-read-only), replica-serve-stale-data
// (slave-serve-stale-data), masterauth, masteruser, repl-timeout, and replicaof ("" or
// "host port"; read-only). Any thread.
bool ReplicaReadOnlyConfig();
void SetReplicaReadOnlyConfig(bool on);
bool ReplicaServeStaleConfig();
void SetReplicaServeStaleConfig(bool on);
std::string MasterAuth();
void SetMasterAuth(std::string_view password);
std::string MasterUser();
void SetMasterUser(std::string_view user);
int64_t ReplTimeoutS();
void SetReplTimeoutS(int64_t seconds);
std::string ReplicaOfConfig();

// What INFO replication and ROLE show of the link.
struct MasterLinkStatus {
  bool following = false;  // REPLICAOF host port in force
  std::string host;
  int64_t port = 0;
  // ROLE's state: "connect", "connecting", "handshake", "sync" or "connected".
  std::string state;
  int64_t last_io_s = -1;          // seconds since the master last sent anything
  // Seconds since the stream stopped; -1 while it flows or when it never did.
  int64_t link_down_since_s = -1;
  bool syncing = false;            // a full resync's file is arriving
  int64_t sync_total_bytes = -1;   // -1: the EOF form, whose size is not known
  int64_t sync_read_bytes = 0;
  std::string master_replid;  // of the stream followed
  int64_t offset = -1;        // how far it was run (-1: never connected)
};
MasterLinkStatus GetMasterLinkStatus();

}  // namespace damselfly
