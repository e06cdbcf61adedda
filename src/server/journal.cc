#include "src/server/journal.h"

#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <charconv>

#include "absl/container/flat_hash_set.h"
#include "helio/base/strings.h"
#include "helio/io/proactor.h"
#include "src/server/arg_parsing.h"
#include "src/server/engine_shard_set.h"
#include "src/server/rdb_save.h"

namespace damselfly {

using facade::CmdArgList;
using facade::CommandId;

namespace {

// Commands whose replay, on any Redis, makes the same change from the same state (no
// clock, no chance, no float formatting, no implementation-defined trimming), and that
// touch only their own keys. Recorded as they were sent when all their keys are on one
// shard. Anything not here is recorded by its effects, which is always right.
const absl::flat_hash_set<std::string_view>& ReplayableCommands() {
  static const auto* commands = new absl::flat_hash_set<std::string_view>{
      // strings and keys
      "APPEND", "SETRANGE", "SETBIT", "BITFIELD", "INCR", "DECR", "INCRBY", "DECRBY", "DEL",
      "UNLINK", "PERSIST", "RENAME", "RENAMENX", "COPY", "MOVE", "MSET", "MSETNX", "BITOP",
      "GETSET", "SETNX",
      // lists
      "LPUSH", "RPUSH", "LPUSHX", "RPUSHX", "LPOP", "RPOP", "LSET", "LINSERT", "LREM", "LTRIM",
      "LMOVE", "RPOPLPUSH", "LMPOP",
      // hashes
      "HSET", "HMSET", "HSETNX", "HDEL", "HINCRBY",
      // sets
      "SADD", "SREM", "SMOVE", "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE",
      // sorted sets (IEEE sums are the same everywhere)
      "ZADD", "ZREM", "ZINCRBY", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK", "ZREMRANGEBYLEX",
      "ZPOPMIN", "ZPOPMAX", "ZMPOP", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZRANGESTORE",
      // streams (XADD and XTRIM, which may depend on the clock or the node layout, and
      // group reads and claims, which depend on the clock, rewrite themselves)
      "XACK", "XDEL", "XSETID", "XGROUP",
      // HyperLogLog, geo
      "PFADD", "PFMERGE", "PFCOUNT", "GEOADD",
  };
  return *commands;
}

// SET is replayed as sent unless it sets a deadline: then as its effect, SET ... PXAT, as
// Redis sends every TTL as an absolute time in ms.
bool IsReplayableSet(CmdArgList args) {
  for (size_t i = 3; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (ArgIs(arg, "EX") || ArgIs(arg, "PX") || ArgIs(arg, "EXAT") || ArgIs(arg, "PXAT")) {
      return false;
    }
  }
  return true;
}

// Past this many bytes recorded, a batch is handed over without waiting for the yield.
constexpr size_t kBatchBytes = 64 << 10;

// A change of the key's deadline alone (EXPIRE, PERSIST, GETEX EX...).
bool IsDeadlineEvent(std::string_view event) { return event == "expire" || event == "persist"; }

}  // namespace

namespace {

// Appends "<kind><n>\r\n".
void AppendRespHeader(std::string* out, char kind, size_t n) {
  char header[24];
  header[0] = kind;
  char* end = std::to_chars(header + 1, header + sizeof(header) - 2, n).ptr;
  *end++ = '\r';
  *end++ = '\n';
  out->append(header, end - header);
}

}  // namespace

void AppendRespCommand(std::string* out, CmdArgList args) {
  // Every command of the stream passes here: one reservation, no formatting library.
  size_t size = out->size() + 16;
  for (std::string_view arg : args) size += arg.size() + 16;
  out->reserve(size);
  AppendRespHeader(out, '*', args.size());
  for (std::string_view arg : args) {
    AppendRespHeader(out, '$', arg.size());
    out->append(arg);
    out->append("\r\n", 2);
  }
}

namespace {

std::atomic<bool> journal_active{false};
std::atomic<uint64_t> next_group{1};

// Whether `resp` holds `key` as one of its bulk strings.
bool MentionsKey(std::string_view resp, std::string_view key) {
  std::string bulk;
  AppendRespHeader(&bulk, '$', key.size());
  bulk.append(key);
  bulk.append("\r\n", 2);
  return resp.find(bulk) != std::string_view::npos;
}

}  // namespace

bool JournalActive() { return journal_active.load(std::memory_order_relaxed); }
void SetJournalActive(bool active) { journal_active.store(active, std::memory_order_relaxed); }

uint64_t NewJournalGroup() {
  if (!JournalActive()) return 0;
  return next_group.fetch_add(1, std::memory_order_relaxed);
}

thread_local ShardJournal* ShardJournal::recording_ = nullptr;
thread_local bool ShardJournal::muted_ = false;
thread_local uint64_t ShardJournal::current_group_ = 0;

ShardJournal::~ShardJournal() {
  if (listener_id_ != 0) slice_->RemoveChangeListener(listener_id_);
  if (recording_ == this) recording_ = nullptr;
}

void ShardJournal::Cut(uint64_t generation, uint64_t token, JournalSink sink) {
  // In the snapshot's hop, whose scope (open when already recording) changes nothing.
  if (generation_ != generation || listener_id_ == 0) {
    if (listener_id_ != 0) slice_->RemoveChangeListener(listener_id_);
    generation_ = generation;
    sink_ = std::move(sink);
    pending_.clear();
    groups_.clear();
    pending_bytes_ = 0;
    listener_id_ = slice_->AddChangeListener([this](const KeyChange& change) { OnChange(change); });
    recording_ = this;
  }
  pending_.push_back(JournalRecord{.kind = JournalRecord::Kind::kCut, .token = token});
  Send();
}

void ShardJournal::Stop(uint64_t generation) {
  if (generation != generation_ || listener_id_ == 0) return;
  slice_->RemoveChangeListener(listener_id_);
  listener_id_ = 0;
  recording_ = nullptr;
  sink_ = nullptr;
  pending_.clear();
  groups_.clear();
  pending_bytes_ = 0;
}

void ShardJournal::Barrier(DbIndex db, CmdArgList args) {
  ShardJournal* journal = recording_;
  if (journal == nullptr) return;
  JournalRecord record{.kind = JournalRecord::Kind::kBarrier, .db = db};
  if (!muted_) AppendRespCommand(&record.resp, args);
  // Inside a group (FLUSHALL in MULTI/EXEC), in its part: the stream emits it once there.
  journal->RecordsOf(current_group_)->push_back(std::move(record));
  // The flush or swap that follows reports changes the barrier already stands for.
  journal->in_barrier_ = true;
  if (journal->scopes_.empty()) journal->Send();
}

void ShardJournal::EndGroup(uint64_t group, uint16_t parts) {
  ShardJournal* journal = recording_;
  if (journal == nullptr) return;
  auto open = std::find_if(journal->groups_.begin(), journal->groups_.end(),
                           [group](const OpenGroup& g) { return g.id == group; });
  // An empty part that no other part waits for may as well not be.
  if (parts == 1 && open == journal->groups_.end()) return;
  Records& out = journal->pending_;
  out.push_back(
      JournalRecord{.kind = JournalRecord::Kind::kGroupStart, .parts = parts, .token = group});
  if (open != journal->groups_.end()) {
    for (JournalRecord& record : open->records) {
      journal->pending_bytes_ += record.resp.size();
      out.push_back(std::move(record));
    }
    journal->groups_.erase(open);
  }
  out.push_back(JournalRecord{.kind = JournalRecord::Kind::kGroupEnd, .token = group});
  journal->SendSoon();
}

void ShardJournal::RewriteAs(DbIndex db, CmdArgList args) {
  ShardJournal* journal = recording_;
  if (journal == nullptr || journal->scopes_.empty()) return;
  Scope& scope = journal->scopes_.back();
  journal->AppendCommand(&scope.rewritten, db, args);
}

ShardJournal::Records* ShardJournal::RecordsOf(uint64_t group) {
  if (group == 0) return &pending_;
  for (OpenGroup& open : groups_) {
    if (open.id == group) return &open.records;
  }
  return &groups_.emplace_back(OpenGroup{group, {}}).records;
}

ShardJournal::Records* ShardJournal::RecordsOfLastWrite(DbIndex db, std::string_view key) {
  // Transactions lock their keys, so at most one open group wrote this one.
  for (OpenGroup& open : groups_) {
    for (const JournalRecord& record : open.records) {
      if (record.db == db && MentionsKey(record.resp, key)) return &open.records;
    }
  }
  return &pending_;
}

ShardJournal::Mute::Mute() : saved_(muted_) { muted_ = true; }
ShardJournal::Mute::~Mute() { muted_ = saved_; }

ShardJournal::Mode ShardJournal::ModeOf(const CommandId* cid, CmdArgList args) {
  if (cid == nullptr) return Mode::kEffects;
  // A pipeline repeats its command: the last answer of the allowlist is kept.
  if (cid != last_cid_) {
    last_cid_ = cid;
    last_cid_replayable_ = ReplayableCommands().contains(cid->name);
  }
  const bool replayable = cid->name == "SET" ? IsReplayableSet(args) : last_cid_replayable_;
  if (!replayable) return Mode::kEffects;
  if (shard_set->size() == 1) return Mode::kArgs;
  bool here = true;
  cid->ForEachKey(args, [&](size_t index, uint32_t) {
    here &= shard_set->ShardOf(args[index]) == shard_;
  });
  if (here) return Mode::kArgs;
  const std::string_view name = cid->name;
  const bool splits = name == "MSET" || name == "MSETNX" || name == "DEL" || name == "UNLINK";
  return splits ? Mode::kShardArgs : Mode::kEffects;
}

void ShardJournal::AppendShardPart(Records* out, const Scope& scope) {
  // MSETNX set every key or none: its part sets this shard's.
  const bool pairs = scope.cid->name == "MSET" || scope.cid->name == "MSETNX";
  std::vector<std::string_view> part{pairs ? std::string_view("MSET") : scope.args[0]};
  scope.cid->ForEachKey(scope.args, [&](size_t index, uint32_t) {
    if (shard_set->ShardOf(scope.args[index]) != shard_) return;
    part.push_back(scope.args[index]);
    if (pairs) part.push_back(scope.args[index + 1]);
  });
  AppendCommand(out, scope.db, CmdArgList(part.data(), part.size()));
}

void ShardJournal::Begin(const CommandId* cid, CmdArgList args, DbIndex db) {
  scopes_.push_back(Scope{cid, args, db, ModeOf(cid, args), current_group_});
}

void ShardJournal::End() {
  if (scopes_.empty()) return;  // recording started inside the scope
  Scope scope = std::move(scopes_.back());
  scopes_.pop_back();
  if (scope.changed && !muted_) {
    Records* out = RecordsOf(scope.group);
    if (!scope.rewritten.empty()) {
      for (JournalRecord& record : scope.rewritten) {
        if (out == &pending_) pending_bytes_ += record.resp.size();
        out->push_back(std::move(record));
      }
    } else if (scope.mode == Mode::kArgs) {
      AppendCommand(out, scope.db, scope.args);
    } else if (scope.mode == Mode::kShardArgs) {
      AppendShardPart(out, scope);
    } else {
      for (const ChangedKey& changed : scope.keys) {
        if (changed.deadline_only && slice_->Peek(changed.db, changed.key) != nullptr) {
          const int64_t deadline = slice_->GetExpire(changed.db, changed.key);
          if (deadline > 0) {
            AppendCommand(out, changed.db,
                          {"PEXPIREAT", changed.key, absl::StrCat(deadline)});
          } else {
            AppendCommand(out, changed.db, {"PERSIST", changed.key});
          }
        } else {
          AppendState(out, changed.db, changed.key);
        }
      }
    }
  }
  if (scopes_.empty()) {
    in_barrier_ = false;
    SendSoon();
  }
}

void ShardJournal::OnChange(const KeyChange& change) {
  if (muted_) return;
  switch (change.kind) {
    case KeyChangeKind::kFlushDb:
      // A flush outside FLUSHALL/FLUSHDB (memcached's flush_all) empties only this shard:
      // its keys are deleted one by one on the replica.
      if (!in_barrier_) {
        slice_->ForEach(change.db, [&](std::string_view key, const PrimeValue&) {
          AppendCommand(&pending_, change.db, {"DEL", key});
        });
      }
      break;
    case KeyChangeKind::kSwapDb:
      DCHECK(in_barrier_) << "SWAPDB without its barrier";
      break;
    case KeyChangeKind::kExpired:
    case KeyChangeKind::kEvicted:
      AppendCommand(groups_.empty() ? &pending_ : RecordsOfLastWrite(change.db, change.key),
                    change.db, {"DEL", change.key});
      break;
    default:
      if (scopes_.empty()) {
        AppendState(&pending_, change.db, change.key);
        break;
      }
      Scope& scope = scopes_.back();
      scope.changed = true;
      if (scope.mode != Mode::kEffects) break;
      const bool deadline_only = IsDeadlineEvent(change.event);
      // A command often reports one key several times in a row ("new", "set", "expire").
      if (!scope.keys.empty() && scope.keys.back().db == change.db &&
          scope.keys.back().key == change.key) {
        scope.keys.back().deadline_only &= deadline_only;
        break;
      }
      scope.keys.push_back({change.db, std::string(change.key), deadline_only});
      break;
  }
  if (scopes_.empty()) SendSoon();
}

void ShardJournal::AppendState(Records* out, DbIndex db, std::string_view key) {
  const PrimeValue* value = slice_->Peek(db, key);
  if (value == nullptr) return AppendCommand(out, db, {"DEL", key});
  const int64_t deadline = slice_->GetExpire(db, key);
  if (value->type() == ObjType::kString) {
    std::string scratch;
    std::string_view bytes = value->GetString(&scratch);
    if (deadline > 0) {
      return AppendCommand(out, db, {"SET", key, bytes, "PXAT", absl::StrCat(deadline)});
    }
    return AppendCommand(out, db, {"SET", key, bytes});
  }
  AppendCommand(out, db, {"RESTORE", key, absl::StrCat(deadline), MakeDumpPayload(*value),
                          "REPLACE", "ABSTTL"});
}

void ShardJournal::AppendCommand(Records* out, DbIndex db,
                                 std::initializer_list<std::string_view> args) {
  AppendCommand(out, db, CmdArgList(args.begin(), args.size()));
}

void ShardJournal::AppendCommand(Records* out, DbIndex db, CmdArgList args) {
  if (out->empty() || out->back().kind != JournalRecord::Kind::kCommand ||
      out->back().db != db) {
    out->push_back(JournalRecord{.kind = JournalRecord::Kind::kCommand, .db = db});
  }
  JournalRecord& record = out->back();
  const size_t before = record.resp.size();
  AppendRespCommand(&record.resp, args);
  ++record.commands;
  if (out == &pending_) pending_bytes_ += record.resp.size() - before;
}

void ShardJournal::Send() {
  pending_bytes_ = 0;
  if (pending_.empty() || !sink_) return;
  sink_(shard_, generation_, std::move(pending_));
  pending_.clear();
}

void ShardJournal::SendSoon() {
  if (pending_.empty() || send_queued_) return;
  if (pending_bytes_ >= kBatchBytes) return Send();
  send_queued_ = true;
  helio::io::Proactor::me()->Dispatch([] {
    if (EngineShard* shard = EngineShard::tlocal()) {
      shard->journal().send_queued_ = false;
      shard->journal().Send();
    }
  });
}

}  // namespace damselfly
