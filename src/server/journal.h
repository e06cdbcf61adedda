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
//  - the effects (kEffects), for everything else (SPOP, INCRBYFLOAT, SET EX, XADD *,
//    EXPIRE, scripts, commands with keys on several shards, writes outside any command):
//    for each key changed, PEXPIREAT key deadline or PERSIST key when only its deadline
//    changed (the absolute deadline, as Redis 7 propagates EXPIRE and GETEX), else its
//    new state: DEL when gone, SET key value [PXAT ms] for a string, else RESTORE key ms
//    payload REPLACE ABSTTL. Always right; a big value costs its size.
// A key deleted because it expired or was evicted is always a DEL, at once. FLUSHALL,
// FLUSHDB and SWAPDB are barriers (Barrier): every shard records them in the same
// whole-shard hop, and the stream carries them once, after every shard's earlier records.
//
// Order. A shard's records keep its order; records of different shards interleave in
// any order, which is safe because no record reads or changes another shard's keys
// (commands spanning shards are recorded as effects), and barriers bound the
// interleaving. A command that spans shards thus reaches a replica as separate parts,
// and a MULTI/EXEC or a script as its separate writes (Redis wraps them in MULTI/EXEC,
// so its replica applies them at once; here it does not).
//
// A stream's consumer-group state (XREADGROUP, XACK, XCLAIM, XAUTOCLAIM) is reported as
// KeyChangeKind::kGroupState, which only the journal hears.
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
    kCommand,  // resp: the command
    kBarrier,  // resp: the whole-shard command (may be empty: only a point of order)
    kCut,      // a replica's snapshot cut (token: which), a barrier with nothing to send
  };
  Kind kind = Kind::kCommand;
  DbIndex db = 0;
  uint64_t token = 0;
  std::string resp;
};

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
  enum class Mode : uint8_t { kArgs, kEffects };
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
    bool changed = false;
    std::vector<ChangedKey> keys;  // kEffects: the keys changed, in order
  };

  void Begin(const facade::CommandId* cid, facade::CmdArgList args, DbIndex db);
  void End();
  void OnChange(const KeyChange& change);
  Mode ModeOf(const facade::CommandId* cid, facade::CmdArgList args);
  // Appends the state of `key` (see kEffects).
  void AppendState(DbIndex db, std::string_view key);
  void AppendCommand(DbIndex db, std::initializer_list<std::string_view> args);
  void AppendCommand(DbIndex db, facade::CmdArgList args);
  void Send();
  // Send, from a task queued on this thread (at most one queued), or at once when the
  // batch is large.
  void SendSoon();

  static thread_local ShardJournal* recording_;
  static thread_local bool muted_;
  DbSlice* const slice_;
  const uint16_t shard_;
  uint64_t generation_ = 0;
  uint64_t listener_id_ = 0;
  JournalSink sink_;
  std::vector<Scope> scopes_;  // open scopes, innermost last
  bool in_barrier_ = false;
  // Records not handed over yet; consecutive commands of one database share a record.
  std::vector<JournalRecord> pending_;
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

// RESP array of bulk strings.
void AppendRespCommand(std::string* out, facade::CmdArgList args);

}  // namespace damselfly
