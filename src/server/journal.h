// The replication journal: each shard's changes, as the commands a replica runs to make
// them, recorded only while replicas follow (replication.h merges the shards' records
// into the stream). DESIGN.md's subscriber of the write path: it listens to the shard's
// DbSlice changes while it records, and costs one thread-local load per command when not.
//
// What a change becomes. The commands that run on a shard open a JournalScope (the
// dispatcher's run on the shard, a transaction's hop, a served blocked client). When a
// scope ends having changed something, it leaves one of:
//  - the command itself (kArgs): for commands whose replay, on any Redis, makes the same
//    change from the same state, when all their keys are on this shard: LPUSH, HSET, ZADD,
//    INCR, SETRANGE, DEL... Most writes, and none that depend on time or chance.
//  - for MSET, MSETNX, DEL and UNLINK with keys on several shards, the command for this
//    shard's keys (MSET of its pairs, DEL of its keys);
//  - what the command's shard code says instead (RewriteAs), as Redis propagates them:
//    SPOP as SREM, INCRBYFLOAT as SET KEEPTTL, HINCRBYFLOAT as HSET, the blocking and
//    multi-key pops as LPOP/RPOP/ZPOPMIN/ZPOPMAX, moves as LMOVE or each shard's half,
//    XADD with its ID and its trim as MAXLEN =, group reads and claims as XCLAIM, XACK
//    and XGROUP SETID/CREATECONSUMER (architecture.md lists them). What changed, never
//    the collection's whole state;
//  - the effects (kEffects), for everything else (SET EX, EXPIRE, SORT STORE, scripts'
//    other writes, other commands with keys on several shards, writes outside any
//    command):
//    for each key changed, PEXPIREAT key deadline or PERSIST key when only its deadline
//    changed (the absolute deadline, as Redis 7 propagates EXPIRE and GETEX), else its
//    new state: DEL when gone, SET key value [PXAT ms] for a string, else RESTORE key ms
//    payload REPLACE ABSTTL. Always right; a big value costs its size.
// A key deleted because it expired or was evicted is always a DEL, at once (but see
// Groups). FLUSHALL,
// FLUSHDB and SWAPDB are barriers (Barrier): every shard records them in the same
// whole-shard hop, and the stream carries them once, after every shard's earlier records.
//
// Order. A shard's records keep its order; records of different shards interleave in
// any order, which is safe because no record reads or changes another shard's keys
// (commands spanning shards are recorded as effects or as their part for this shard's
// keys), and barriers bound the interleaving.
//
// Groups. What one transaction writes (a MULTI/EXEC, a script, a write command spanning
// shards) reaches the stream as one unit, as in Redis: one command, or several wrapped
// in MULTI ... EXEC, so that a replica's readers never see half of it. The transaction
// takes a group id (NewJournalGroup) before it is scheduled; on each of its shards the
// scopes opened inside its hops (JournalGroupScope) record into the group's part rather
// than the shard's records, and its last hop there hands the part over whole
// (EndGroup: a kGroupStart saying how many shards have a part, the records, a
// kGroupEnd), where the shard's records then stand. The stream emits a group once every
// shard's part is first in its shard's order. Two groups over the same shards must
// therefore end in the same order on each of them: a transaction of a group spanning
// shards runs in its queues' order (tx_queue.h: in_order), never out of order. A script
// that locks an undeclared key late may still end in another order; the stream then
// emits one of the two groups as plain commands (replication.h), which keeps each
// shard's order and so the data, and gives up that one group's atomicity.
// A key that expires or is evicted while a group holding its last write is open goes
// as DEL into that group, after the write.
//
// A stream's consumer-group state (XREADGROUP, XACK, XCLAIM, XAUTOCLAIM) is reported as
// KeyChangeKind::kGroupState, which only the journal hears (a change without a rewrite
// still reaches replicas, as the stream's state).
//
// Batches. A shard hands its records over once the task or fiber running the commands
// yields (a pipeline's worth at a time) rather than per command; barriers and cuts go at
// once, with everything before them.
//
// Thread-safety: a ShardJournal belongs to its shard's thread; the sink is called there.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "src/facade/command_registry.h"
#include "src/server/db_slice.h"

namespace damselfly {

// One entry of a shard's journal: a command in RESP for database `db`, or a barrier.
struct JournalRecord {
  enum class Kind : uint8_t {
    kCommand,     // resp: `commands` commands
    kBarrier,     // resp: the whole-shard command (may be empty: only a point of order)
    kCut,         // a replica's snapshot cut (token: which), a barrier with nothing to send
    kGroupStart,  // a group's part (token: the group) follows; `parts` shards have one
    kGroupEnd,    // the part ends
  };
  Kind kind = Kind::kCommand;
  DbIndex db = 0;
  uint16_t parts = 0;
  uint32_t commands = 0;
  uint64_t token = 0;
  std::string resp;
};

// A fresh group id while replicas follow, else 0 (no group: nothing is recorded). Any
// thread.
uint64_t NewJournalGroup();
// Whether replicas follow (the stream records); set by replication.cc. Any thread.
bool JournalActive();
void SetJournalActive(bool active);

// Receives a shard's records, in order; `generation` is the one Start was given.
using JournalSink =
    std::function<void(uint16_t shard, uint64_t generation, std::vector<JournalRecord> records)>;

class ShardJournal {
 public:
  ShardJournal(DbSlice* slice, uint16_t shard) : slice_(slice), shard_(shard) {}
  ~ShardJournal();
  ShardJournal(const ShardJournal&) = delete;
  ShardJournal& operator=(const ShardJournal&) = delete;

  // This thread's journal while it records, else nullptr.
  static ShardJournal* recording() { return recording_; }

  // In a whole-shard hop (a snapshot's cut): starts recording for `generation` if not
  // already, and records the cut `token` (the point where a replica's stream begins).
  void Cut(uint64_t generation, uint64_t token, JournalSink sink);
  // Stops recording, if it records `generation`.
  void Stop(uint64_t generation);
  // Hands what was recorded so far to the sink now (WAIT needs every write made so far
  // in the stream). Otherwise commands' records are handed over in batches: once the
  // task or fiber that ran them yields, or past kBatchBytes.
  void Flush() { Send(); }

  // FLUSHALL, FLUSHDB, SWAPDB, on every shard in their whole-shard hop, before the change:
  // the command (args) reaches the stream once. No-op when not recording.
  static void Barrier(DbIndex db, facade::CmdArgList args);
  // After the last hop of `group` on this shard: hands over this shard's part, empty or
  // not (the stream waits for `parts` of them). No-op when not recording.
  static void EndGroup(uint64_t group, uint16_t parts);
  // From a command's shard code: if the command changes anything, the replicas run these
  // commands instead of it or its effects (Redis's rewrites: SPOP as SREM of the members
  // popped, BLPOP as LPOP, XADD * with its ID...), which is deterministic and costs what
  // changed rather than the key's whole state. Each call adds one; together they must
  // make every change the scope makes on this shard. No-op when not recording (callers
  // may test recording() first to save building the arguments).
  static void RewriteAs(DbIndex db, facade::CmdArgList args);
  static void RewriteAs(DbIndex db, std::initializer_list<std::string_view> args) {
    RewriteAs(db, facade::CmdArgList(args.begin(), args.size()));
  }
  // Inside the scope, changes are not recorded (DEBUG RELOAD's flush and reload, which
  // leave the data as it was).
  class Mute {
   public:
    Mute();
    ~Mute();

   private:
    bool saved_;
  };

 private:
  friend class JournalScope;
  // kShardArgs: a command whose keys span shards and whose part for each shard's keys is
  // a command of its own (MSET, MSETNX, DEL, UNLINK): that part, e.g. MSET of this
  // shard's pairs (the group keeps the parts together).
  enum class Mode : uint8_t { kArgs, kEffects, kShardArgs };
  struct ChangedKey {
    DbIndex db;
    std::string key;
    bool deadline_only;  // every change of it in the scope was to its deadline
  };
  struct Scope {
    const facade::CommandId* cid;
    facade::CmdArgList args;
    DbIndex db;
    Mode mode;
    uint64_t group;  // records into this group's part (0: the shard's records)
    bool changed = false;
    std::vector<ChangedKey> keys;  // kEffects: the keys changed, in order
    std::vector<JournalRecord> rewritten;  // RewriteAs: recorded instead
  };
  struct OpenGroup {
    uint64_t id;
    std::vector<JournalRecord> records;
  };
  using Records = std::vector<JournalRecord>;

  void Begin(const facade::CommandId* cid, facade::CmdArgList args, DbIndex db);
  void End();
  void OnChange(const KeyChange& change);
  Mode ModeOf(const facade::CommandId* cid, facade::CmdArgList args);
  // Where the scopes of `group` record (0: the shard's records).
  Records* RecordsOf(uint64_t group);
  // Where a DEL of a key that expired or was evicted goes: after its last write, which
  // may wait in an open group.
  Records* RecordsOfLastWrite(DbIndex db, std::string_view key);
  // kShardArgs: the command for this shard's keys.
  void AppendShardPart(Records* out, const Scope& scope);
  // Appends the state of `key` (see kEffects) to `out`.
  void AppendState(Records* out, DbIndex db, std::string_view key);
  void AppendCommand(Records* out, DbIndex db, std::initializer_list<std::string_view> args);
  void AppendCommand(Records* out, DbIndex db, facade::CmdArgList args);
  void Send();
  // Send, from a task queued on this thread (at most one queued), or at once when the
  // batch is large.
  void SendSoon();

  friend class JournalGroupScope;
  static thread_local ShardJournal* recording_;
  static thread_local bool muted_;
  static thread_local uint64_t current_group_;
  DbSlice* const slice_;
  const uint16_t shard_;
  uint64_t generation_ = 0;
  uint64_t listener_id_ = 0;
  JournalSink sink_;
  std::vector<Scope> scopes_;  // open scopes, innermost last
  bool in_barrier_ = false;
  // Records not handed over yet; consecutive commands of one database share a record.
  Records pending_;
  // The parts of groups whose transactions have not had their last hop here yet.
  std::vector<OpenGroup> groups_;
  size_t pending_bytes_ = 0;
  bool send_queued_ = false;
  const facade::CommandId* last_cid_ = nullptr;  // ModeOf's cache
  bool last_cid_replayable_ = false;
};

// Around a command that runs on this shard; a no-op unless the shard records. `cid` may
// be null (a write that is no command of its own, e.g. a served blocked client): effects.
class JournalScope {
 public:
  JournalScope(const facade::CommandId* cid, facade::CmdArgList args, DbIndex db)
      : journal_(ShardJournal::recording()) {
    if (journal_ != nullptr) [[unlikely]]
      journal_->Begin(cid, args, db);
  }
  ~JournalScope() {
    if (journal_ != nullptr) [[unlikely]]
      journal_->End();
  }
  JournalScope(const JournalScope&) = delete;
  JournalScope& operator=(const JournalScope&) = delete;

 private:
  ShardJournal* const journal_;
};

// Around a hop of a transaction of `group` on this shard thread (0: none): the scopes
// opened inside record into the group's part. Must not span a suspension.
class JournalGroupScope {
 public:
  explicit JournalGroupScope(uint64_t group) : saved_(ShardJournal::current_group_) {
    ShardJournal::current_group_ = group;
  }
  ~JournalGroupScope() { ShardJournal::current_group_ = saved_; }
  JournalGroupScope(const JournalGroupScope&) = delete;
  JournalGroupScope& operator=(const JournalGroupScope&) = delete;

 private:
  const uint64_t saved_;
};

// RESP array of bulk strings.
void AppendRespCommand(std::string* out, facade::CmdArgList args);

}  // namespace damselfly
