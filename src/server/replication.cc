#include "src/server/replication.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/fiber/operations.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <openssl/rand.h>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "helio/base/spinlock.h"
#include "helio/base/strings.h"
#include "helio/base/time.h"
#include "helio/fibers/sync.h"
#include "helio/io/file.h"
#include "src/facade/push_queue.h"
#include "src/facade/resp_connection.h"
#include "src/server/engine_shard_set.h"
#include "src/server/journal.h"
#include "src/server/persistence_family.h"
#include "src/server/replica.h"
#include "src/server/snapshot.h"

namespace damselfly {

using facade::ConnectionContext;
using facade::PushQueue;

namespace {

constexpr int64_t kMinBacklogBytes = 16 << 10;
std::atomic<int64_t> ping_period_s{10};        // Redis's defaults
std::atomic<int64_t> backlog_bytes{1 << 20};
std::atomic<int64_t> backlog_ttl_s{3600};
std::atomic<int64_t> min_replicas_to_write{0};
std::atomic<int64_t> min_replicas_max_lag_s{10};
constexpr size_t kBulkChunkBytes = 1 << 20;
// A replica loading its snapshot is sent more of the file only while less than this
// is queued for it.
constexpr size_t kBulkQueuedBytes = 4 << 20;

std::string NewReplId() {
  unsigned char bytes[20];
  CHECK_EQ(RAND_bytes(bytes, sizeof(bytes)), 1);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(bytes), sizeof(bytes)));
}

// The replication id until the stream first stops recording (INFO and ROLE show it before
// any replica came, as Redis does).
const std::string& InitialReplId() {
  static const std::string* id = new std::string(NewReplId());
  return *id;
}

std::string CommandResp(std::initializer_list<std::string_view> args) {
  std::string out;
  AppendRespCommand(&out, facade::CmdArgList(args.begin(), args.size()));
  return out;
}

// What a shard handed over and the merge fiber has not taken yet. Written by the
// shard's thread, taken by proactor 0's: the lock is held for a move.
struct Inbox {
  struct Batch {
    uint64_t generation;
    std::vector<JournalRecord> records;
  };
  helio::SpinLock lock;
  std::vector<Batch> batches;
};

// A replica's connection state (ConnectionContext::replica_state).
struct ReplicaConn final : ConnectionContext::ReplicaState {
  uint64_t id = 0;  // in the stream; 0: not (yet) a replica
  std::string ip;
  int64_t port = 0;
  bool psync2 = false;  // REPLCONF capa psync2: +CONTINUE names the replication id
};

ReplicaConn* ReplicaConnOf(ConnectionContext* cntx, bool create) {
  if (!cntx->replica_state && create) cntx->replica_state = std::make_unique<ReplicaConn>();
  return static_cast<ReplicaConn*>(cntx->replica_state.get());
}

// The stream: proactor 0's thread only, but for the inboxes.
class Stream {
 public:
  enum class State : uint8_t { kWaitCut, kSendBulk, kOnline, kFailed };
  struct Replica {
    uint64_t id;
    PushQueue* queue;
    std::string ip;
    int64_t port;
    State state = State::kWaitCut;
    int64_t start = -1;  // the stream offset it has everything up to (its cut, or PSYNC's)
    int64_t ack = 0;
    int64_t ack_ms = 0;
  };

  explicit Stream(unsigned shards) : inboxes_(shards), queues_(shards) {}

  // Any shard thread (the journal's sink).
  void Hand(uint16_t shard, uint64_t generation, std::vector<JournalRecord> records) {
    bool was_empty;
    {
      std::lock_guard guard(inboxes_[shard].lock);
      was_empty = inboxes_[shard].batches.empty();
      inboxes_[shard].batches.push_back({generation, std::move(records)});
    }
    // One wake-up per merge: the merge takes everything handed over by then.
    if (was_empty) wakeup_.Notify();
  }

  // --- proactor 0

  // The follower (FollowStream), and a cut for it.
  StreamCut Follow(StreamFollower* follower) {
    StartRecording();
    if (follower_ != follower) follower_started_ = false;
    follower_ = follower;
    const uint64_t token = ++last_id_;
    follower_cuts_.push_back(token);
    return {generation_, token};
  }
  void Unfollow() {
    follower_ = nullptr;
    follower_started_ = false;
    follower_cuts_.clear();
    if (replicas_.empty()) empty_since_ms_ = helio::UnixTimeMs();
  }

  // A new replica for a full resync: returns its id and the journal generation its cut
  // must start.
  std::pair<uint64_t, uint64_t> AddReplica(PushQueue* queue, std::string ip, int64_t port) {
    StartRecording();
    if (!backlog_on_) {
      backlog_on_ = true;
      published_ = offset_;  // nothing before is kept, nor owed to anyone
    }
    uint64_t id = ++last_id_;
    replicas_.push_back(Replica{id, queue, std::move(ip), port});
    return {id, generation_};
  }

  // PSYNC replid offset: the replica continues when the backlog holds byte `offset` on;
  // then +CONTINUE and the bytes from there go to its queue. 0 when it cannot.
  uint64_t Continue(std::string_view replid, int64_t offset, bool psync2, PushQueue* queue,
                    std::string ip, int64_t port) {
    if (!recording_ || !backlog_on_ || replid != replid_ || offset < FirstByte() ||
        offset > offset_ + 1) {
      return 0;
    }
    uint64_t id = ++last_id_;
    Replica replica{id, queue, std::move(ip), port, State::kOnline, offset - 1};
    replica.ack_ms = helio::UnixTimeMs();
    queue->Push(psync2 ? helio::StrCat("+CONTINUE ", replid_, "\r\n") : "+CONTINUE\r\n");
    queue->Push(std::string_view(backlog_).substr(offset - FirstByte()));
    replicas_.push_back(std::move(replica));
    RefreshGoodReplicas();
    return id;
  }

  void Remove(uint64_t id) {
    replicas_.erase(std::remove_if(replicas_.begin(), replicas_.end(),
                                   [id](const Replica& r) { return r.id == id; }),
                    replicas_.end());
    if (replicas_.empty()) empty_since_ms_ = helio::UnixTimeMs();
    RefreshGoodReplicas();
  }

  Replica* Find(uint64_t id) {
    for (Replica& r : replicas_) {
      if (r.id == id) return &r;
    }
    return nullptr;
  }

  // The offset at the replica's cut, once merged (-1 before); -2 when it failed.
  int64_t CutOffset(uint64_t id) {
    Merge();
    Replica* r = Find(id);
    if (r == nullptr || r->state == State::kFailed) return -2;
    if (r->start >= 0) r->state = State::kSendBulk;
    return r->start;
  }

  // The snapshot was sent: the stream from the cut follows. False when the backlog lost
  // part of it.
  bool GoOnline(uint64_t id) {
    Merge();
    Replica* r = Find(id);
    if (r == nullptr || r->state == State::kFailed || r->start + 1 < FirstByte()) return false;
    r->queue->Push(std::string_view(backlog_).substr(r->start + 1 - FirstByte()));
    r->state = State::kOnline;
    r->ack_ms = helio::UnixTimeMs();
    RefreshGoodReplicas();
    return true;
  }

  void Ack(uint64_t id, int64_t offset) {
    if (Replica* r = Find(id)) {
      r->ack = std::max(r->ack, offset);
      r->ack_ms = helio::UnixTimeMs();
      SettleWaits();
      RefreshGoodReplicas();
    }
  }

  void SetAddress(uint64_t id, const std::string& ip, int64_t port) {
    if (Replica* r = Find(id)) {
      r->ip = ip;
      r->port = port;
    }
  }

  // Everything handed over so far merged: the offset of the last byte.
  int64_t Offset() {
    Merge();
    return offset_;
  }

  int64_t CountAcked(int64_t offset) const {
    return std::count_if(replicas_.begin(), replicas_.end(), [offset](const Replica& r) {
      return r.state == State::kOnline && r.ack >= offset;
    });
  }

  // A command of no shard (PropagateToReplicas): after what the shards handed over.
  void EmitGlobal(std::string_view resp, DbIndex db) {
    if (!recording_) return;
    Merge();
    SelectDb(db);
    Emit(resp);
    Publish();
  }

  // WAIT: settles `waiter` once `wanted` replicas acknowledged `offset`.
  void AwaitAcks(WaiterPtr waiter, int64_t offset, int64_t wanted) {
    if (!replicas_.empty()) {
      Emit(CommandResp({"REPLCONF", "GETACK", "*"}), /*to_follower=*/false);
      Publish();
    }
    waits_.push_back({std::move(waiter), offset, wanted});
    SettleWaits();
  }

  // Counts the replicas online that acknowledged within min-replicas-max-lag seconds, and
  // says whether writes must be refused for want of them.
  void RefreshGoodReplicas() {
    const int64_t now_ms = helio::UnixTimeMs();
    const int64_t max_lag_s = MinReplicasMaxLagS();
    good_replicas_ = std::count_if(replicas_.begin(), replicas_.end(), [&](const Replica& r) {
      return r.state == State::kOnline && (now_ms - r.ack_ms) / 1000 <= max_lag_s;
    });
    const int64_t wanted = MinReplicasToWrite();
    SetTooFewGoodReplicas(wanted > 0 && max_lag_s > 0 && good_replicas_ < wanted);
  }

  ReplicationStatus Status() {
    Merge();
    RefreshGoodReplicas();
    ReplicationStatus status;
    status.good_replicas = good_replicas_;
    status.replid = replid_;
    status.offset = offset_;
    status.backlog_active = recording_ && backlog_on_;
    status.backlog_size = ReplBacklogBytes();
    status.backlog_first_byte = status.backlog_active ? FirstByte() : 0;
    status.backlog_histlen = status.backlog_active ? int64_t(backlog_.size()) : 0;
    const int64_t now_ms = helio::UnixTimeMs();
    for (const Replica& r : replicas_) {
      static constexpr const char* kStates[] = {"wait_bgsave", "send_bulk", "online", "failed"};
      status.replicas.push_back(
          {r.ip, r.port, kStates[int(r.state)], r.ack, (now_ms - r.ack_ms) / 1000});
    }
    return status;
  }

  // The merge fiber's body.
  void Run() {
    int64_t last_ping_ms = helio::UnixTimeMs();
    while (!stopping_.load(std::memory_order_relaxed)) {
      wakeup_.WaitFor(std::chrono::milliseconds(100));
      Merge();
      SettleWaits();
      RefreshGoodReplicas();
      const int64_t now_ms = helio::UnixTimeMs();
      // A replica's first PING comes a period after it did.
      if (replicas_.empty()) last_ping_ms = now_ms;
      if (!replicas_.empty() && now_ms - last_ping_ms >= ReplPingPeriodS() * 1000) {
        Emit(CommandResp({"PING"}), /*to_follower=*/false);
        Publish();
        last_ping_ms = now_ms;
      }
      const int64_t ttl_s = ReplBacklogTtlS();
      if (recording_ && replicas_.empty() && follower_ == nullptr && ttl_s > 0 &&
          now_ms - empty_since_ms_ >= ttl_s * 1000) {
        StopRecording();
      }
    }
    stopped_.Notify();
  }
  // Any thread: ends Run and waits for it.
  void Stop() {
    stopping_.store(true, std::memory_order_relaxed);
    wakeup_.Notify();
    stopped_.Wait();
  }

  uint64_t generation() const { return generation_; }
  const std::string& replid() const { return replid_; }

 private:
  int64_t FirstByte() const { return offset_ - int64_t(backlog_.size()) + 1; }

  // Settles the WAITs whose replicas acknowledged; drops those that ended otherwise.
  void SettleWaits() {
    std::erase_if(waits_, [this](Wait& wait) {
      return wait.waiter->state() != Waiter::State::kWaiting ||
             (CountAcked(wait.offset) >= wait.wanted && wait.waiter->Settle());
    });
  }

  void StartRecording() {
    if (recording_) return;
    recording_ = true;
    SetJournalActive(true);
    ++generation_;
    replid_ = NewReplId();
    backlog_.clear();
    backlog_on_ = false;
    selected_db_ = -1;
    for (auto& queue : queues_) queue.clear();
    arrived_.clear();
    plain_.clear();
  }

  // Fiber context (it dispatches to the shards).
  void StopRecording() {
    DCHECK(follower_ == nullptr);
    recording_ = false;
    SetJournalActive(false);
    const uint64_t generation = generation_;
    ++generation_;  // batches still on their way are dropped
    replid_ = NewReplId();
    backlog_.clear();
    backlog_.shrink_to_fit();
    backlog_on_ = false;
    for (auto& queue : queues_) queue.clear();
    arrived_.clear();
    plain_.clear();
    for (ShardId id = 0; id < shard_set->size(); ++id) {
      shard_set->pool()->at(id)->Dispatch(
          [generation] { EngineShard::tlocal()->journal().Stop(generation); });
    }
  }

  // Takes the inboxes' batches into the per-shard queues, then moves what it can to the
  // stream: each shard's records up to its next barrier or group; a barrier once every
  // shard's queue starts with it; a group once every part of it starts its shard's queue.
  void Merge() {
    for (size_t shard = 0; shard < inboxes_.size(); ++shard) {
      std::vector<Inbox::Batch> batches;
      {
        std::lock_guard guard(inboxes_[shard].lock);
        batches.swap(inboxes_[shard].batches);
      }
      for (Inbox::Batch& batch : batches) {
        if (batch.generation != generation_ || !recording_) continue;
        for (JournalRecord& record : batch.records) {
          if (record.kind == JournalRecord::Kind::kGroupStart) ++arrived_[record.token];
          queues_[shard].push_back(std::move(record));
        }
      }
    }
    while (true) {
      for (auto& queue : queues_) EmitPlain(&queue);
      if (AllAtBarrier()) {
        EmitBarrier();
      } else if (!EmitCompleteGroup() && !BreakGroupWait()) {
        break;
      }
    }
    Publish();
    Trim();
  }

  // Emits the queue's leading commands, and the parts of groups emitted as plain commands.
  void EmitPlain(std::deque<JournalRecord>* queue) {
    while (!queue->empty()) {
      const JournalRecord& front = queue->front();
      if (front.kind == JournalRecord::Kind::kCommand) {
        EmitRecord(front);
      } else if (front.kind == JournalRecord::Kind::kGroupStart && plain_.contains(front.token)) {
        // its records follow as commands
      } else if (front.kind == JournalRecord::Kind::kGroupEnd && plain_.contains(front.token)) {
        if (--plain_[front.token] == 0) plain_.erase(front.token);
      } else {
        return;
      }
      queue->pop_front();
    }
  }

  bool AllAtBarrier() const {
    for (const auto& queue : queues_) {
      if (queue.empty() || (queue.front().kind != JournalRecord::Kind::kBarrier &&
                            queue.front().kind != JournalRecord::Kind::kCut)) {
        return false;
      }
    }
    return true;
  }

  void EmitBarrier() {
    const JournalRecord& barrier = queues_[0].front();
    if (barrier.kind == JournalRecord::Kind::kCut) {
      if (Replica* r = Find(barrier.token)) r->start = offset_;
      if (auto it = std::find(follower_cuts_.begin(), follower_cuts_.end(), barrier.token);
          it != follower_cuts_.end()) {
        follower_cuts_.erase(it);
        follower_started_ = true;
        follower_->AtCut(barrier.token);
      }
      selected_db_ = -1;  // the new replica's stream starts with a SELECT
    } else if (!barrier.resp.empty()) {
      EmitRecord(barrier);
    }
    const JournalRecord::Kind kind = barrier.kind;  // `barrier` goes with the first pop
    const uint64_t token = barrier.token;
    for (auto& queue : queues_) {
      DCHECK(queue.front().kind == kind && queue.front().token == token);
      queue.pop_front();
    }
  }

  // The queues whose first record starts a part of `group`.
  std::vector<std::deque<JournalRecord>*> PartsAtFront(uint64_t group) {
    std::vector<std::deque<JournalRecord>*> parts;
    for (auto& queue : queues_) {
      if (!queue.empty() && queue.front().kind == JournalRecord::Kind::kGroupStart &&
          queue.front().token == group) {
        parts.push_back(&queue);
      }
    }
    return parts;
  }

  // Emits a group whose every part starts its queue, if there is one.
  bool EmitCompleteGroup() {
    for (auto& queue : queues_) {
      if (queue.empty() || queue.front().kind != JournalRecord::Kind::kGroupStart) continue;
      std::vector<std::deque<JournalRecord>*> parts = PartsAtFront(queue.front().token);
      if (parts.size() < queue.front().parts) continue;
      EmitGroup(parts);
      return true;
    }
    return false;
  }

  // One command as it is; several in MULTI ... EXEC, as Redis wraps a transaction's
  // writes. The parts touch different keys, so their order does not matter, but for the
  // barriers inside (FLUSHALL in MULTI/EXEC), which every part holds and which go once.
  void EmitGroup(const std::vector<std::deque<JournalRecord>*>& parts) {
    const uint64_t group = parts[0]->front().token;
    arrived_.erase(group);
    size_t commands = 0;
    int first_db = -1;
    for (auto* part : parts) {
      part->pop_front();  // kGroupStart
      for (const JournalRecord& record : *part) {
        if (record.kind == JournalRecord::Kind::kGroupEnd) break;
        if (record.kind == JournalRecord::Kind::kCommand) {
          commands += record.commands;
          if (first_db < 0) first_db = record.db;
        } else if (part == parts[0] && !record.resp.empty()) {
          ++commands;  // a barrier, in every part, emitted once
          if (first_db < 0) first_db = record.db;
        }
      }
    }
    const bool wrap = commands > 1;
    if (wrap) {
      if (first_db >= 0) SelectDb(DbIndex(first_db));
      Emit(CommandResp({"MULTI"}));
    }
    while (true) {
      const JournalRecord* barrier = nullptr;
      for (auto* part : parts) {
        while (part->front().kind == JournalRecord::Kind::kCommand) {
          EmitRecord(part->front());
          part->pop_front();
        }
        if (part->front().kind == JournalRecord::Kind::kBarrier && barrier == nullptr) {
          barrier = &part->front();
        }
      }
      if (barrier == nullptr) break;  // every part is at its end
      if (!barrier->resp.empty()) EmitRecord(*barrier);
      for (auto* part : parts) {
        if (part->front().kind == JournalRecord::Kind::kBarrier) part->pop_front();
      }
    }
    for (auto* part : parts) part->pop_front();  // kGroupEnd
    if (wrap) Emit(CommandResp({"EXEC"}));
  }

  // Nothing can be emitted. When a group at the front of a queue has all its parts here
  // but some of them wait behind another group, which waits behind this one (a script
  // that locked an undeclared key late, journal.h), or behind a barrier, one group is
  // emitted as plain commands, in each shard's order: the data stays right, that group
  // loses its atomicity. Returns whether it did.
  bool BreakGroupWait() {
    for (auto& queue : queues_) {
      if (queue.empty() || queue.front().kind != JournalRecord::Kind::kGroupStart) continue;
      std::vector<uint64_t> seen;
      uint64_t group = queue.front().token;
      uint16_t parts = queue.front().parts;
      while (true) {
        if (arrived_[group] < parts) break;  // a part is on its way: wait for it
        if (std::find(seen.begin(), seen.end(), group) != seen.end()) {
          EmitAsPlain(group, parts);
          return true;
        }
        seen.push_back(group);
        const JournalRecord* blocker = BlockerOf(group);
        if (blocker == nullptr) break;
        if (blocker->kind != JournalRecord::Kind::kGroupStart) {
          EmitAsPlain(group, parts);
          return true;
        }
        group = blocker->token;
        parts = blocker->parts;
      }
    }
    return false;
  }

  // The first record of a queue in which a part of `group` waits behind it.
  const JournalRecord* BlockerOf(uint64_t group) const {
    for (const auto& queue : queues_) {
      for (size_t i = 1; i < queue.size(); ++i) {
        if (queue[i].kind == JournalRecord::Kind::kGroupStart && queue[i].token == group) {
          return &queue.front();
        }
      }
    }
    return nullptr;
  }

  void EmitAsPlain(uint64_t group, uint16_t parts) {
    LOG_FIRST_N(INFO, 10) << "Replication: the writes of one transaction go to the stream "
                             "as separate commands (transactions ended in different orders "
                             "on two shards)";
    arrived_.erase(group);
    plain_[group] = parts;
  }

  void EmitRecord(const JournalRecord& record) {
    SelectDb(record.db);
    Emit(record.resp);
  }

  void SelectDb(DbIndex db) {
    if (db != selected_db_) {
      Emit(CommandResp({"SELECT", absl::StrCat(db)}));
      selected_db_ = db;
    }
  }

  // Appends to the stream (and hands it to the follower); Publish sends it.
  void Emit(std::string_view bytes, bool to_follower = true) {
    if (backlog_on_) backlog_.append(bytes);
    offset_ += bytes.size();
    if (to_follower && follower_started_) follower_->Append(bytes);
  }

  // Sends what was emitted since the last call to the online replicas: one push each.
  void Publish() {
    if (published_ == offset_) return;
    if (!backlog_on_) {  // no replica
      published_ = offset_;
      return;
    }
    std::string_view fresh = std::string_view(backlog_).substr(published_ + 1 - FirstByte());
    for (Replica& r : replicas_) {
      if (r.state == State::kOnline && !r.queue->Push(fresh)) r.state = State::kFailed;
    }
    published_ = offset_;
  }

  // Keeps repl-backlog-size bytes, and everything a replica still loading its snapshot
  // needs, up to the replica class's hard limit (past which that replica fails).
  void Trim() {
    const uint64_t hard = facade::GetOutputBufferLimit(facade::ClientClass::kReplica).hard_bytes;
    int64_t keep = ReplBacklogBytes();
    for (Replica& r : replicas_) {
      if (r.state == State::kOnline || r.state == State::kFailed || r.start < 0) continue;
      const int64_t needed = offset_ - r.start;
      if (hard != 0 && needed > int64_t(hard)) {
        LOG(WARNING) << "Replica " << r.ip << ":" << r.port
                     << " dropped: the stream outgrew its output buffer limit while it loaded";
        r.state = State::kFailed;
        continue;
      }
      keep = std::max(keep, needed);
    }
    if (int64_t(backlog_.size()) > 2 * keep) backlog_.erase(0, backlog_.size() - keep);
  }

  std::vector<Inbox> inboxes_;
  std::vector<std::deque<JournalRecord>> queues_;
  // Groups: how many of a group's parts reached the queues (until it is emitted), and
  // the groups emitted as plain commands, with how many of their parts are still to end.
  absl::flat_hash_map<uint64_t, uint16_t> arrived_;
  absl::flat_hash_map<uint64_t, uint16_t> plain_;
  helio::fibers::Wakeup wakeup_;
  std::atomic<bool> stopping_{false};
  helio::fibers::Done stopped_;
  bool recording_ = false;
  uint64_t generation_ = 0;
  std::string replid_ = InitialReplId();
  std::string backlog_;
  // A replica came since recording started: the backlog keeps the stream (for it, and
  // for PSYNC continuations). Until then only the follower (the AOF) hears it, and no
  // replica could continue a stream whose replication id it never saw.
  bool backlog_on_ = false;
  int64_t offset_ = 0;     // master_repl_offset: bytes of stream so far
  int64_t published_ = 0;  // the offset up to which online replicas were sent the stream
  int selected_db_ = -1;
  std::vector<Replica> replicas_;
  struct Wait {
    WaiterPtr waiter;
    int64_t offset, wanted;
  };
  std::vector<Wait> waits_;
  uint64_t last_id_ = 0;
  int64_t empty_since_ms_ = 0;
  int64_t good_replicas_ = 0;
  StreamFollower* follower_ = nullptr;
  bool follower_started_ = false;       // its first cut was reached
  std::vector<uint64_t> follower_cuts_;  // the cuts it asked for, not reached yet
};

// Created with its merge fiber on first use; torn down by StopReplication.
std::mutex stream_mu;
Stream* stream = nullptr;

Stream& TheStream() {
  std::lock_guard guard(stream_mu);
  if (stream == nullptr) {
    stream = new Stream(shard_set->size());
    shard_set->pool()->at(0)->LaunchFiber([s = stream] { s->Run(); });
  }
  return *stream;
}

bool StreamExists() {
  std::lock_guard guard(stream_mu);
  return stream != nullptr;
}

template <typename Fn>
auto OnStream(Fn&& fn) {
  Stream& s = TheStream();
  return shard_set->pool()->at(0)->Await([&] { return fn(s); });
}

// fn(stream) when the stream exists (a replica came), else `none`: the commands of a
// server that never had a replica create no stream (and no merge fiber).
template <typename Fn, typename T>
T OnStreamIfAny(Fn&& fn, T none) {
  if (!StreamExists()) return none;
  return OnStream(std::forward<Fn>(fn));
}

void Sleep(std::chrono::milliseconds ms) { boost::this_fiber::sleep_for(ms); }

// Sends the file as one bulk through the replica's queue, a chunk at a time.
bool SendBulk(const std::string& path, PushQueue* queue) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const off_t size = lseek(fd, 0, SEEK_END);
  bool ok = size >= 0 && queue->Push(helio::StrCat("$", size, "\r\n"));
  std::string chunk(kBulkChunkBytes, '\0');
  for (uint64_t at = 0; ok && at < uint64_t(size);) {
    while (queue->queued_bytes() > kBulkQueuedBytes && !queue->closed()) {
      Sleep(std::chrono::milliseconds(1));
    }
    absl::StatusOr<size_t> read = helio::io::ReadAt(fd, chunk.data(), chunk.size(), at);
    if (!read.ok() || *read == 0) {
      ok = false;
      break;
    }
    ok = queue->Push(std::string_view(chunk.data(), *read));
    at += *read;
  }
  close(fd);
  return ok;
}

// Writes the replica's snapshot to `path`, its cut starting the journal of
// `generation`; returns the stream offset at the cut, or -1 with *why.
int64_t TakeSnapshot(const std::string& path, uint64_t id, uint64_t generation,
                     PushQueue* queue, std::string* why) {
  // Redis's replicas take a newline for a keep-alive while the master prepares the
  // snapshot: one a second, so that a long snapshot stays within their repl-timeout.
  helio::fibers::Done prepared;
  boost::fibers::fiber keepalive([&prepared, queue] {
    while (!prepared.WaitFor(std::chrono::seconds(1))) queue->Push("\n");
  });
  absl::Cleanup stop_keepalive = [&] {
    prepared.Notify();
    keepalive.join();
  };
  SnapshotOptions options;
  options.path = path;
  options.compression = RdbCompression();
  options.checksum = RdbChecksum();
  options.on_cut = [cut = StreamCut{generation, id}](EngineShard* shard) {
    CutJournal(shard, cut);
  };
  while (true) {
    SnapshotResult result;
    absl::Status status = SaveSnapshot(options, &result);
    if (status.ok()) break;
    if (!absl::IsFailedPrecondition(status)) {
      *why = std::string(status.message());
      return -1;
    }
    if (queue->closed()) {
      *why = "gone while a snapshot ran";
      return -1;
    }
    Sleep(std::chrono::milliseconds(20));  // another snapshot runs: wait for it
  }
  int64_t start = -1;
  while ((start = OnStream([id](Stream& s) { return s.CutOffset(id); })) == -1) {
    Sleep(std::chrono::milliseconds(1));
  }
  if (start < 0) *why = "dropped before its snapshot was sent";
  return start < 0 ? -1 : start;
}

}  // namespace

void ServeReplica(ConnectionContext* cntx, bool psync, std::string_view replid, int64_t offset) {
  ReplicaConn* conn = ReplicaConnOf(cntx, true);
  if (conn->id != 0) return;  // already a replica: ignored, as Redis does
  std::string ip = conn->ip;
  if (ip.empty()) {
    ip = cntx->owner()->peer_address();
    if (size_t colon = ip.rfind(':'); colon != std::string::npos) ip.resize(colon);
  }
  PushQueue* queue = cntx->owner()->StartPushes(facade::ClientClass::kReplica, 0);
  queue->set_client_class(facade::ClientClass::kReplica);
  cntx->Flush();  // replies before this one leave first
  if (psync) {
    conn->id =
        OnStream([&](Stream& s) {
          return s.Continue(replid, offset, conn->psync2, queue, ip, conn->port);
        });
    if (conn->id != 0) {
      LOG(INFO) << "Replica " << ip << ":" << conn->port << " continues from offset " << offset;
      return;
    }
  }
  auto [id, generation] = OnStream([&](Stream& s) { return s.AddReplica(queue, ip, conn->port); });
  conn->id = id;
  LOG(INFO) << "Replica " << ip << ":" << conn->port << " asks for a full resync";
  auto fail = [&](std::string_view why) {
    LOG(WARNING) << "Replica " << ip << ":" << conn->port << ": " << why;
    cntx->close_after_reply = true;
  };

  const std::string path = helio::StrCat("temp-replica-", getpid(), "-", id, ".rdb");
  std::string why;
  const int64_t start = TakeSnapshot(path, id, generation, queue, &why);
  if (start < 0) {
    unlink(path.c_str());
    return fail(why);
  }
  if (psync) {
    std::string replid_now = OnStream([](Stream& s) { return s.replid(); });
    queue->Push(helio::StrCat("+FULLRESYNC ", replid_now, " ", start, "\r\n"));
  }
  const bool sent = SendBulk(path, queue);
  unlink(path.c_str());
  if (!sent) return fail("the snapshot could not be sent");
  if (!OnStream([id = id](Stream& s) { return s.GoOnline(id); })) {
    return fail("the stream outgrew the backlog while the snapshot was sent");
  }
  LOG(INFO) << "Replica " << ip << ":" << conn->port << " is online from offset " << start;
}

void ReplicaAck(ConnectionContext* cntx, int64_t offset) {
  ReplicaConn* conn = ReplicaConnOf(cntx, false);
  if (conn == nullptr || conn->id == 0 || !StreamExists()) return;
  OnStream([&](Stream& s) { s.Ack(conn->id, offset); });
}

void SetReplicaAddress(ConnectionContext* cntx, std::string_view ip, int64_t port) {
  ReplicaConn* conn = ReplicaConnOf(cntx, true);
  if (!ip.empty()) conn->ip = std::string(ip);
  if (port >= 0) conn->port = port;
  if (conn->id != 0 && StreamExists()) {
    OnStream([&](Stream& s) { s.SetAddress(conn->id, conn->ip, conn->port); });
  }
}

void SetReplicaCapa(ConnectionContext* cntx, std::string_view capa) {
  if (helio::EqualsIgnoreCase(capa, "psync2")) ReplicaConnOf(cntx, true)->psync2 = true;
}

void OnReplicaConnectionClose(ConnectionContext* cntx) {
  ReplicaConn* conn = ReplicaConnOf(cntx, false);
  if (conn == nullptr || conn->id == 0 || !StreamExists()) return;
  OnStream([&](Stream& s) { s.Remove(conn->id); });
  conn->id = 0;
}

bool IsReplica(const ConnectionContext* cntx) {
  auto* conn = static_cast<const ReplicaConn*>(cntx->replica_state.get());
  return conn != nullptr && conn->id != 0;
}

ReplicationStatus GetReplicationStatus() {
  ReplicationStatus none;
  none.replid = InitialReplId();
  none.backlog_size = ReplBacklogBytes();
  return OnStreamIfAny([](Stream& s) { return s.Status(); }, none);
}

int64_t StreamOffset() {
  if (!StreamExists()) return 0;
  shard_set->RunOnAll([](EngineShard* shard) { shard->journal().Flush(); });
  return OnStreamIfAny([](Stream& s) { return s.Offset(); }, int64_t{0});
}

int64_t CountAcked(int64_t offset) {
  return OnStreamIfAny([offset](Stream& s) { return s.CountAcked(offset); }, int64_t{0});
}

void AwaitAcks(WaiterPtr waiter, int64_t offset, int64_t wanted) {
  // With no stream no replica acknowledges: the wait ends otherwise (timeout, UNBLOCK).
  OnStreamIfAny(
      [&](Stream& s) {
        s.AwaitAcks(std::move(waiter), offset, wanted);
        return true;
      },
      false);
}

int64_t ReplPingPeriodS() { return ping_period_s.load(std::memory_order_relaxed); }
void SetReplPingPeriodS(int64_t seconds) {
  ping_period_s.store(seconds, std::memory_order_relaxed);
}
int64_t ReplBacklogBytes() { return backlog_bytes.load(std::memory_order_relaxed); }
void SetReplBacklogBytes(int64_t bytes) {
  backlog_bytes.store(std::max(bytes, kMinBacklogBytes), std::memory_order_relaxed);
}
int64_t ReplBacklogTtlS() { return backlog_ttl_s.load(std::memory_order_relaxed); }
void SetReplBacklogTtlS(int64_t seconds) {
  backlog_ttl_s.store(seconds, std::memory_order_relaxed);
}

int64_t MinReplicasToWrite() { return min_replicas_to_write.load(std::memory_order_relaxed); }
int64_t MinReplicasMaxLagS() { return min_replicas_max_lag_s.load(std::memory_order_relaxed); }

namespace {

// After a change of the min-replicas settings: with no stream (no replica ever came)
// there is no good replica.
void RefreshWriteRefusal() {
  if (StreamExists()) return OnStream([](Stream& s) { s.RefreshGoodReplicas(); });
  SetTooFewGoodReplicas(MinReplicasToWrite() > 0 && MinReplicasMaxLagS() > 0);
}

}  // namespace

void SetMinReplicasToWrite(int64_t count) {
  min_replicas_to_write.store(count, std::memory_order_relaxed);
  RefreshWriteRefusal();
}

void SetMinReplicasMaxLagS(int64_t seconds) {
  min_replicas_max_lag_s.store(seconds, std::memory_order_relaxed);
  RefreshWriteRefusal();
}

void PropagateToReplicas(facade::CmdArgList args, DbIndex db) {
  if (!JournalActive()) return;
  std::string resp;
  AppendRespCommand(&resp, args);
  // A task, so that a publisher never waits; StopReplication runs the queued ones first.
  shard_set->pool()->at(0)->Dispatch([resp = std::move(resp), db] {
    if (stream != nullptr) stream->EmitGlobal(resp, db);
  });
}

StreamCut FollowStream(StreamFollower* follower) {
  return OnStream([follower](Stream& s) { return s.Follow(follower); });
}

void CutJournal(EngineShard* shard, StreamCut cut) {
  shard->journal().Cut(cut.generation, cut.token,
                       [s = &TheStream()](uint16_t shard, uint64_t gen,
                                          std::vector<JournalRecord> records) {
                         s->Hand(shard, gen, std::move(records));
                       });
}

void UnfollowStream() {
  OnStreamIfAny([](Stream& s) {
    s.Unfollow();
    return true;
  }, false);
}

void FlushStream() { StreamOffset(); }

void StopReplication() {
  std::lock_guard guard(stream_mu);
  if (stream == nullptr) return;
  SetJournalActive(false);
  shard_set->pool()->at(0)->Await([] {});  // the tasks PropagateToReplicas queued
  stream->Stop();
  // No shard may hand records to the stream any more.
  const uint64_t generation = stream->generation();
  shard_set->pool()->AwaitFiberOnAll([generation](unsigned index, helio::io::Proactor*) {
    if (index < shard_set->size()) EngineShard::tlocal()->journal().Stop(generation);
  });
  delete stream;
  stream = nullptr;
}

}  // namespace damselfly
