// Consumer groups of the stream family: XGROUP XREADGROUP XACK XPENDING XCLAIM XAUTOCLAIM
// XINFO, with Redis 7.0's replies, error texts and entries-read/lag bookkeeping (the
// structures are core::StreamGroup, core/stream.h).
//
// Every command but XREADGROUP has one key and runs on its shard's thread. XREADGROUP
// reads its streams in a transaction of two hops: the first checks every key and group
// (an error changes nothing, as in Redis) and learns which streams have something to
// deliver; the second delivers (the PELs change) or, when nothing can be delivered and
// BLOCK was given, registers the waiter. Its keys are locked exclusively (Redis's key
// spec says RO, but the read changes the group), so nothing runs between the hops.
// A blocked XREADGROUP is served by the XADD that gives its group something new, on the
// key's shard, which delivers into the PEL right there; the deletion of the key, a type
// change or XGROUP DESTROY ends it with Redis's errors.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "helio/base/strings.h"
#include "src/core/stream.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/blocking_controller.h"
#include "src/server/engine_shard.h"
#include "src/server/family_utils.h"
#include "src/server/journal.h"
#include "src/server/stream_family_internal.h"
#include "src/server/transaction.h"

namespace damselfly::stream_internal {

namespace {

using core::PendingEntry;
using core::Stream;
using core::StreamConsumer;
using core::StreamGroup;
using core::StreamID;
using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

constexpr char kNeedsKeyErr[] =
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
    "to use the MKSTREAM option to create an empty stream automatically.";

int64_t NowMs() { return absl::GetCurrentTimeNanos() / 1000000; }

std::string NoGroupError(std::string_view key, std::string_view group) {
  return helio::StrCat("NOGROUP No such key '", key, "' or consumer group '", group, "'");
}

std::string NoGroupForKeyError(std::string_view group, std::string_view key) {
  return helio::StrCat("NOGROUP No such consumer group '", group, "' for key name '", key, "'");
}

std::string SubcommandSyntaxError(std::string_view sub, std::string_view container) {
  return helio::StrCat("ERR unknown subcommand or wrong number of arguments for '", sub, "'. Try ",
                       container, " HELP.");
}

Stream* StreamOf(const DbSlice::Update& entry) { return entry->GetObjectAs<Stream>(); }

// The entries a group read delivers: a history read may name entries deleted since their
// delivery, which it answers as [id, nil] (here: an entry without pairs).
void SendGroupEntries(ReplyBuilder* rb, const std::vector<Stream::Entry>& entries) {
  rb->StartArray(entries.size());
  for (const Stream::Entry& entry : entries) {
    rb->StartArray(2);
    SendId(rb, entry.id);
    if (entry.pairs.empty()) {
      rb->SendNullArray();
      continue;
    }
    rb->SendBulkArray(entry.pairs);
  }
}

// ENTRIESREAD's value: a count, or -1 for "unknown".
bool ParseEntriesRead(ReplyBuilder* rb, std::string_view arg, int64_t* out) {
  std::optional<int64_t> n = ParseInt64(arg);
  if (!n) {
    rb->SendError(facade::kInvalidIntErr);
    return false;
  }
  if (*n < 0 && *n != StreamGroup::kInvalidEntriesRead) {
    rb->SendError("ERR value for ENTRIESREAD must be positive or -1");
    return false;
  }
  *out = *n;
  return true;
}

// --- XGROUP CREATE|SETID|DESTROY|CREATECONSUMER|DELCONSUMER|HELP

void SendXGroupHelp(ReplyBuilder* rb) {
  static constexpr std::string_view kHelp[] = {
      "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CREATE <key> <groupname> <id|$> [option]",
      "    Create a new consumer group. Options are:",
      "    * MKSTREAM",
      "      Create the empty stream if it does not exist.",
      "    * ENTRIESREAD entries_read",
      "      Set the group's entries_read counter (internal use).",
      "CREATECONSUMER <key> <groupname> <consumer>",
      "    Create a new consumer in the specified group.",
      "DELCONSUMER <key> <groupname> <consumer>",
      "    Remove the specified consumer.",
      "DESTROY <key> <groupname>",
      "    Remove the specified group.",
      "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
      "    Set the current group ID and entries_read counter.",
      "HELP",
      "    Prints this help.",
  };
  rb->SendSimpleStringArray(kHelp);
}

void CmdXGroup(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view sub = args[1];
  if (ArgIs(sub, "HELP")) return SendXGroupHelp(rb);
  const bool create = ArgIs(sub, "CREATE"), setid = ArgIs(sub, "SETID");
  bool mkstream = false;
  int64_t entries_read = StreamGroup::kInvalidEntriesRead;
  // Options first, as Redis: their errors come before the key's.
  if (create) {
    for (size_t i = 5; i < args.size(); ++i) {
      if (ArgIs(args[i], "MKSTREAM")) {
        mkstream = true;
      } else if (ArgIs(args[i], "ENTRIESREAD") && i + 1 < args.size()) {
        if (!ParseEntriesRead(rb, args[++i], &entries_read)) return;
      } else {
        return rb->SendError(SubcommandSyntaxError(sub, "XGROUP"));
      }
    }
  } else if (setid) {
    if (args.size() == 7 && ArgIs(args[5], "ENTRIESREAD")) {
      if (!ParseEntriesRead(rb, args[6], &entries_read)) return;
    } else if (args.size() != 5) {
      return rb->SendError(SubcommandSyntaxError(sub, "XGROUP"));
    }
  }
  const DbIndex db = cntx->db_index;
  std::string_view key = args[2], name = args[3];
  OpResult<DbSlice::Update> found = Slice().FindMutableTyped(db, key, ObjType::kStream);
  if (found.status() == OpStatus::kWrongType) return SendOpError(rb, found.status());
  const bool exists = found.ok();
  if (!exists && !(create && mkstream)) return rb->SendError(kNeedsKeyErr);
  Stream* stream = exists ? StreamOf(*found) : nullptr;
  StreamGroup* group = exists ? stream->FindGroup(name) : nullptr;
  if (group == nullptr && !create && !ArgIs(sub, "DESTROY")) {
    return rb->SendError(NoGroupForKeyError(name, key));
  }

  if (create) {
    StreamID id;
    if (args[4] == "$") {
      id = exists ? stream->last_id() : StreamID::Min();
    } else {
      std::optional<StreamID> parsed = ParseId(args[4], 0, true);
      if (!parsed) return rb->SendError(kInvalidIdErr);
      id = *parsed;
    }
    DbSlice::Update entry;
    if (exists) {
      entry = std::move(*found);
    } else {
      entry = Slice().AddOrFind(db, key);
      entry->SetObject(ObjType::kStream, ObjEncoding::kStream, Stream::Make());
      stream = StreamOf(entry);
    }
    if (stream->CreateGroup(name, id, entries_read) == nullptr) {
      return rb->SendError("BUSYGROUP Consumer Group name already exists");
    }
    entry.Changed("xgroup-create");
    return rb->SendOk();
  }
  if (setid) {
    StreamID id;
    if (args[4] == "$") {
      id = stream->last_id();
    } else {
      std::optional<StreamID> parsed = ParseId(args[4], 0, false);
      if (!parsed) return rb->SendError(kInvalidIdErr);
      id = *parsed;
    }
    group->last_id = id;
    group->entries_read = entries_read;
    found->Changed("xgroup-setid");
    return rb->SendOk();
  }
  if (ArgIs(sub, "DESTROY")) {
    if (!stream->DestroyGroup(name)) return rb->SendLong(0);
    // Also wakes the XREADGROUPs blocked on the group, which answer NOGROUP.
    found->Changed("xgroup-destroy");
    return rb->SendLong(1);
  }
  if (ArgIs(sub, "CREATECONSUMER")) {
    bool created;
    group->FindOrAddConsumer(args[4], NowMs(), &created);
    if (created) found->Changed("xgroup-createconsumer");
    return rb->SendLong(created ? 1 : 0);
  }
  // DELCONSUMER
  const int64_t pending = group->DeleteConsumer(args[4]);
  if (pending < 0) return rb->SendLong(0);
  found->Changed("xgroup-delconsumer");
  rb->SendLong(pending);
}

// --- XREADGROUP GROUP group consumer [COUNT count] [BLOCK ms] [NOACK] STREAMS key... id...

// Delivers the entries after the group's last ID (a ">" read) to `consumer`: the group
// moves on, and unless `noack` each entry joins the PEL. At most `count` (0: all).
std::vector<Stream::Entry> DeliverNew(const Stream& stream, StreamGroup* group,
                                      StreamConsumer* consumer, size_t count, bool noack) {
  StreamID start = group->last_id;
  if (!start.Increment()) return {};
  std::vector<Stream::Entry> entries = stream.Range(start, StreamID::Max(), count, false);
  const int64_t now = NowMs();
  for (const Stream::Entry& entry : entries) {
    stream.AdvanceGroup(group, entry.id);
    if (!noack) group->Deliver(entry.id, consumer, now);
  }
  return entries;
}

// A history read: the consumer's pending entries after `after`, each delivered once more
// (entries deleted meanwhile come back without pairs and keep their counters).
std::vector<Stream::Entry> ReadHistory(const Stream& stream, StreamGroup* group,
                                       StreamConsumer* consumer, StreamID after, size_t count) {
  std::vector<Stream::Entry> entries;
  if (!after.Increment()) return entries;
  const int64_t now = NowMs();
  for (auto it = consumer->pending.lower_bound(after);
       it != consumer->pending.end() && (count == 0 || entries.size() < count); ++it) {
    std::vector<Stream::Entry> found = stream.Range(*it, *it, 1, false);
    if (found.empty()) {
      entries.push_back({*it, {}});
      continue;
    }
    PendingEntry* pending = group->FindPending(*it);
    pending->delivery_time_ms = now;
    ++pending->delivery_count;
    entries.push_back(std::move(found[0]));
  }
  return entries;
}

// A change of a group's pending entries or last-delivered id: replicas need it, nothing
// else hears of it (KeyChangeKind::kGroupState).
void GroupStateChanged(DbSlice::Update& entry) {
  entry.Changed("xgroup-state", KeyChangeKind::kGroupState);
}

// What group reads and claims send replicas (ShardJournal::RewriteAs). They depend on the
// clock (delivery times, idle times), so, as Redis propagates them, they go as the state
// they left: a pending entry delivered or handed over as XCLAIM key group consumer 0 id
// TIME t RETRYCOUNT n FORCE JUSTID, an entry that left the PEL as XACK, a group that moved
// on as XGROUP SETID ... ENTRIESREAD, a consumer created as XGROUP CREATECONSUMER. Never
// the stream's whole state. Costs nothing while no replica follows.
class GroupJournal {
 public:
  GroupJournal(DbIndex db, std::string_view key, std::string_view group)
      : active_(ShardJournal::recording() != nullptr), db_(db), key_(key), group_(group) {}

  void ConsumerCreated(std::string_view consumer) const {
    if (active_) ShardJournal::RewriteAs(db_, {"XGROUP", "CREATECONSUMER", key_, group_, consumer});
  }
  void Claimed(std::string_view consumer, StreamID id, const PendingEntry& entry) const {
    if (!active_) return;
    ShardJournal::RewriteAs(db_, {"XCLAIM", key_, group_, consumer, "0", id.ToString(), "TIME",
                                  absl::StrCat(entry.delivery_time_ms), "RETRYCOUNT",
                                  absl::StrCat(entry.delivery_count), "FORCE", "JUSTID"});
  }
  void Removed(StreamID id) const {
    if (active_) ShardJournal::RewriteAs(db_, {"XACK", key_, group_, id.ToString()});
  }
  void Moved(const StreamGroup& group) const {
    if (!active_) return;
    ShardJournal::RewriteAs(db_, {"XGROUP", "SETID", key_, group_, group.last_id.ToString(),
                                  "ENTRIESREAD", absl::StrCat(group.entries_read)});
  }

 private:
  const bool active_;
  const DbIndex db_;
  const std::string_view key_, group_;
};

// The consumer that reads, created on its first read (with the event Redis sends), its
// seen time refreshed.
StreamConsumer* ReadingConsumer(DbSlice::Update& entry, StreamGroup* group, std::string_view name,
                                const GroupJournal& journal) {
  bool created;
  StreamConsumer* consumer = group->FindOrAddConsumer(name, NowMs(), &created);
  consumer->seen_time_ms = NowMs();
  if (created) {
    entry.Changed("xgroup-createconsumer");
    journal.ConsumerCreated(name);
  }
  return consumer;
}

// A group read's delivery (DeliverNew, ReadHistory) for replicas.
void JournalRead(const GroupJournal& journal, const StreamGroup& group,
                 std::string_view consumer, const std::vector<Stream::Entry>& entries,
                 bool history, bool noack) {
  if (!noack) {
    for (const Stream::Entry& entry : entries) {
      // A history read answers entries deleted since without changing their counters.
      if (history && entry.pairs.empty()) continue;
      const auto pending = group.pel().find(entry.id);
      if (pending != group.pel().end()) journal.Claimed(consumer, entry.id, pending->second);
    }
  }
  if (!history && !entries.empty()) journal.Moved(group);
}

// A blocked XREADGROUP's serve: delivers the group's new entries of the ready key into
// the waiter's result (flattened as id, pair count, field, value... per entry), or ends
// the wait with Redis's error when the key or the group went away.
Waiter::ServeFn GroupReadServe(std::string group_name, std::string consumer_name, size_t count,
                               bool noack) {
  return [group_name = std::move(group_name), consumer_name = std::move(consumer_name), count,
          noack](Waiter* waiter, DbIndex db, std::string_view key) {
    OpResult<DbSlice::Update> found = Slice().FindMutableTyped(db, key, ObjType::kStream);
    Stream* stream = found ? StreamOf(*found) : nullptr;
    StreamGroup* group = stream ? stream->FindGroup(group_name) : nullptr;
    if (group == nullptr) {
      if (!waiter->Claim()) return false;
      waiter->result().error =
          stream ? "NOGROUP the consumer group this client was blocked on no longer exists"
                 : "UNBLOCKED the stream key no longer exists";
      return true;
    }
    if (stream->Length() == 0 || stream->LastEntryId() <= group->last_id || !waiter->Claim()) {
      return false;
    }
    const GroupJournal journal(db, key, group_name);
    StreamConsumer* consumer = ReadingConsumer(*found, group, consumer_name, journal);
    Waiter::Result& result = waiter->result();
    result.key = std::string(key);
    std::vector<Stream::Entry> entries = DeliverNew(*stream, group, consumer, count, noack);
    JournalRead(journal, *group, consumer_name, entries, false, noack);
    for (Stream::Entry& entry : entries) {
      result.values.push_back(entry.id.ToString());
      result.values.push_back(std::to_string(entry.pairs.size()));
      for (std::string& s : entry.pairs) result.values.push_back(std::move(s));
    }
    GroupStateChanged(*found);
    return true;
  };
}

void SendServedGroupRead(ReplyBuilder* rb, const Waiter::Result& result) {
  if (!result.error.empty()) return rb->SendError(result.error);
  SendServedRead(rb, result);
}

void CmdXReadGroup(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  ReadArgs read;
  std::string_view parse_error = ParseReadArgs(args, true, &read);
  if (!parse_error.empty()) return rb->SendError(parse_error);
  const size_t n = read.num_keys;
  // Per key: nullopt for ">", else the history read's ID.
  std::vector<std::optional<StreamID>> after(n);
  std::vector<std::string> errors(n);  // per key, found by the first hop
  std::vector<bool> serve(n, false);   // whether the key is read synchronously
  std::vector<std::vector<Stream::Entry>> results(n);
  WaiterPtr waiter;
  if (read.block_ms && blocking::MayBlock(cntx)) {
    waiter = new Waiter(
        cntx->db_index,
        GroupReadServe(std::string(read.group), std::string(read.consumer), read.count, read.noack),
        true);
  }
  std::string error;
  bool any = false;
  CommandTransaction tx(args, cntx);
  LookThenAct(
      tx.Get(), OnOneShard(args, read.first_key, read.first_key + n),
      [&](Transaction* t, EngineShard* shard) {
        for (uint32_t index : t->KeyIndices(shard->shard_id())) {
          const size_t k = index - read.first_key;
          std::string_view key = args[index], id_text = args[index + n];
          OpResult<const Stream*> stream = FindStream(t->db(), key);
          if (stream.status() == OpStatus::kWrongType) {
            errors[k] = facade::kWrongTypeErr;
            continue;
          }
          StreamGroup* group = stream ? (*stream)->FindGroup(read.group) : nullptr;
          if (group == nullptr) {
            errors[k] = helio::StrCat("NOGROUP No such key '", key, "' or consumer group '",
                                      read.group, "' in XREADGROUP with GROUP option");
            continue;
          }
          if (id_text == ">") {
            serve[k] = (*stream)->Length() > 0 && (*stream)->LastEntryId() > group->last_id;
            continue;
          }
          if (id_text == "$") {
            errors[k] =
                "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
                "history of this consumer by specifying a proper ID, or use the > ID to get new "
                "messages. The $ ID would just return an empty result set.";
            continue;
          }
          after[k] = ParseId(id_text, 0, true);
          if (!after[k]) errors[k] = kInvalidIdErr;
          serve[k] = true;
        }
      },
      [&] {
        // The first error in argument order, as Redis checks the keys in order.
        for (size_t k = 0; k < n && error.empty(); ++k) error = errors[k];
        for (size_t k = 0; k < n; ++k) any |= serve[k];
      },
      [&](Transaction* t, EngineShard* shard) {
        if (!error.empty()) return;
        for (uint32_t index : t->KeyIndices(shard->shard_id())) {
          const size_t k = index - read.first_key;
          if (!any) {
            if (waiter) shard->blocking().Register(waiter, args[index]);
            continue;
          }
          if (!serve[k]) continue;
          OpResult<DbSlice::Update> found =
              Slice().FindMutableTyped(t->db(), args[index], ObjType::kStream);
          Stream* stream = StreamOf(*found);
          StreamGroup* group = stream->FindGroup(read.group);
          const GroupJournal journal(t->db(), args[index], read.group);
          StreamConsumer* consumer = ReadingConsumer(*found, group, read.consumer, journal);
          results[k] = after[k] ? ReadHistory(*stream, group, consumer, *after[k], read.count)
                                : DeliverNew(*stream, group, consumer, read.count, read.noack);
          JournalRead(journal, *group, read.consumer, results[k], after[k].has_value(),
                      read.noack);
          // A history read of entries all deleted since changes nothing.
          const bool changed = std::any_of(results[k].begin(), results[k].end(),
                                           [](const Stream::Entry& e) { return !e.pairs.empty(); });
          if (changed) GroupStateChanged(*found);
        }
      });
  if (!error.empty()) return rb->SendError(error);
  if (any) {
    size_t served = 0;
    for (size_t k = 0; k < n; ++k) served += serve[k];
    StartReadReply(rb, served);
    for (size_t k = 0; k < n; ++k) {
      if (!serve[k]) continue;
      StartReadKey(rb);
      rb->SendBulk(args[read.first_key + k]);
      SendGroupEntries(rb, results[k]);
    }
    return;
  }
  if (!waiter) return rb->SendNullArray();
  const auto deadline = *read.block_ms == 0 ? std::chrono::steady_clock::time_point::max()
                                            : std::chrono::steady_clock::now() +
                                                  std::chrono::milliseconds(*read.block_ms);
  std::vector<std::string_view> keys(args.begin() + read.first_key,
                                     args.begin() + read.first_key + n);
  Waiter::State state = blocking::Wait(cntx, waiter, keys, deadline);
  if (state == Waiter::State::kUnblocked) return rb->SendError(blocking::kUnblockedErr);
  if (state == Waiter::State::kDisconnected) return;
  if (state != Waiter::State::kServed) return rb->SendNullArray();
  SendServedGroupRead(rb, waiter->result());
}

// --- XACK key group id [id ...]

void CmdXAck(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<DbSlice::Update> found =
      Slice().FindMutableTyped(cntx->db_index, args[1], ObjType::kStream);
  if (ReplyIfError(rb, found.status())) return;
  StreamGroup* group = found ? StreamOf(*found)->FindGroup(args[2]) : nullptr;
  if (group == nullptr) return rb->SendLong(0);
  // All IDs are checked before any is acknowledged: the command changes all or nothing.
  std::vector<StreamID> ids;
  for (size_t i = 3; i < args.size(); ++i) {
    std::optional<StreamID> id = ParseId(args[i], 0, true);
    if (!id) return rb->SendError(kInvalidIdErr);
    ids.push_back(*id);
  }
  int64_t acked = 0;
  for (StreamID id : ids) acked += group->Ack(id);
  if (acked > 0) GroupStateChanged(*found);
  rb->SendLong(acked);
}

// --- XPENDING key group [[IDLE min-idle-time] start end count [consumer]]

void SendPendingSummary(ReplyBuilder* rb, const StreamGroup& group) {
  rb->StartArray(4);
  rb->SendLong(group.pel().size());
  if (group.pel().empty()) {
    rb->SendNull();
    rb->SendNull();
    rb->SendNullArray();
    return;
  }
  SendId(rb, group.pel().begin()->first);
  SendId(rb, group.pel().rbegin()->first);
  size_t with_pending = 0;
  for (const auto& [name, consumer] : group.consumers()) with_pending += !consumer->pending.empty();
  rb->StartArray(with_pending);
  for (const auto& [name, consumer] : group.consumers()) {
    if (consumer->pending.empty()) continue;
    rb->StartArray(2);
    rb->SendBulk(name);
    rb->SendBulk(helio::StrCat(consumer->pending.size()));
  }
}

void CmdXPending(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  const bool summary = args.size() == 3;
  if (!summary && (args.size() < 6 || args.size() > 9)) return rb->SendError(facade::kSyntaxErr);
  int64_t min_idle = 0, count = 0;
  StreamID start, end;
  std::optional<std::string_view> consumer_name;
  // The range's arguments are checked before the key, as Redis does.
  if (!summary) {
    size_t at = 3;
    if (ArgIs(args[3], "IDLE")) {
      std::optional<int64_t> idle = ParseInt64(args[4]);
      if (!idle) return rb->SendError(facade::kInvalidIntErr);
      if (args.size() < 8) return rb->SendError(facade::kSyntaxErr);
      min_idle = *idle;
      at += 2;
    }
    std::optional<int64_t> n = ParseInt64(args[at + 2]);
    if (!n) return rb->SendError(facade::kInvalidIntErr);
    count = std::max<int64_t>(*n, 0);
    std::optional<StreamID> from = ParseRangeBound(rb, args[at], true);
    if (!from) return;
    std::optional<StreamID> to = ParseRangeBound(rb, args[at + 1], false);
    if (!to) return;
    start = *from, end = *to;
    if (at + 3 < args.size()) consumer_name = args[at + 3];
  }
  OpResult<const Stream*> stream = FindStream(cntx->db_index, args[1]);
  if (ReplyIfError(rb, stream.status())) return;
  const StreamGroup* group = stream ? (*stream)->FindGroup(args[2]) : nullptr;
  if (group == nullptr) return rb->SendError(NoGroupError(args[1], args[2]));
  if (summary) return SendPendingSummary(rb, *group);

  const int64_t now = NowMs();
  struct Row {
    StreamID id;
    const PendingEntry* entry;
  };
  std::vector<Row> rows;
  auto visit = [&](StreamID id, const PendingEntry& entry) {
    if (min_idle != 0 && now - entry.delivery_time_ms < min_idle) return;
    rows.push_back({id, &entry});
  };
  if (consumer_name) {
    const StreamConsumer* consumer = group->FindConsumer(*consumer_name);
    if (consumer == nullptr) return rb->SendEmptyArray();
    for (auto it = consumer->pending.lower_bound(start);
         it != consumer->pending.end() && *it <= end && int64_t(rows.size()) < count; ++it) {
      visit(*it, group->pel().find(*it)->second);
    }
  } else {
    for (auto it = group->pel().lower_bound(start);
         it != group->pel().end() && it->first <= end && int64_t(rows.size()) < count; ++it) {
      visit(it->first, it->second);
    }
  }
  rb->StartArray(rows.size());
  for (const Row& row : rows) {
    rb->StartArray(4);
    SendId(rb, row.id);
    rb->SendBulk(row.entry->consumer->name);
    rb->SendLong(std::max<int64_t>(now - row.entry->delivery_time_ms, 0));
    rb->SendLong(row.entry->delivery_count);
  }
}

// --- XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-ms]
//     [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id]

struct ClaimOptions {
  int64_t delivery_time_ms = -1;  // -1: now
  int64_t retry_count = -1;       // -1: counted up unless JUSTID
  bool force = false;
  bool justid = false;
  StreamID last_id;
};

// Sends the claimed entry `id` (present in the stream).
void SendClaimed(ReplyBuilder* rb, const Stream& stream, StreamID id, bool justid) {
  if (justid) return SendId(rb, id);
  const std::vector<Stream::Entry> entries = stream.Range(id, id, 1, false);
  rb->StartArray(2);
  SendId(rb, id);
  rb->SendBulkArray(entries[0].pairs);
}

void CmdXClaim(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<DbSlice::Update> found =
      Slice().FindMutableTyped(cntx->db_index, args[1], ObjType::kStream);
  if (ReplyIfError(rb, found.status())) return;
  Stream* stream = found ? StreamOf(*found) : nullptr;
  StreamGroup* group = stream ? stream->FindGroup(args[2]) : nullptr;
  if (group == nullptr) return rb->SendError(NoGroupError(args[1], args[2]));
  std::optional<int64_t> min_idle = ParseInt64(args[4]);
  if (!min_idle) return rb->SendError("ERR Invalid min-idle-time argument for XCLAIM");
  // IDs until the first argument that is not one; options after.
  std::vector<StreamID> ids;
  size_t i = 5;
  for (; i < args.size(); ++i) {
    std::optional<StreamID> id = ParseId(args[i], 0, true);
    if (!id) break;
    ids.push_back(*id);
  }
  ClaimOptions opts;
  const int64_t now = NowMs();
  for (; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    std::string_view opt = args[i];
    if (ArgIs(opt, "FORCE")) {
      opts.force = true;
    } else if (ArgIs(opt, "JUSTID")) {
      opts.justid = true;
    } else if (ArgIs(opt, "IDLE") && more) {
      std::optional<int64_t> idle = ParseInt64(args[++i]);
      if (!idle) return rb->SendError("ERR Invalid IDLE option argument for XCLAIM");
      opts.delivery_time_ms = now - *idle;
    } else if (ArgIs(opt, "TIME") && more) {
      std::optional<int64_t> time = ParseInt64(args[++i]);
      if (!time) return rb->SendError("ERR Invalid TIME option argument for XCLAIM");
      opts.delivery_time_ms = *time;
    } else if (ArgIs(opt, "RETRYCOUNT") && more) {
      std::optional<int64_t> retry = ParseInt64(args[++i]);
      if (!retry) return rb->SendError("ERR Invalid RETRYCOUNT option argument for XCLAIM");
      opts.retry_count = *retry;
    } else if (ArgIs(opt, "LASTID") && more) {
      std::optional<StreamID> id = ParseId(args[++i], 0, true);
      if (!id) return rb->SendError(kInvalidIdErr);
      opts.last_id = *id;
    } else {
      return rb->SendError(helio::StrCat("ERR Unrecognized XCLAIM option '", opt, "'"));
    }
  }
  // A delivery time in the future or before the epoch is taken as now (clients compute
  // it from their own clocks), as Redis does.
  if (opts.delivery_time_ms < 0 || opts.delivery_time_ms > now) opts.delivery_time_ms = now;
  const GroupJournal journal(cntx->db_index, args[1], args[2]);
  if (opts.last_id > group->last_id) {
    group->last_id = opts.last_id;
    GroupStateChanged(*found);
    journal.Moved(*group);
  }

  StreamConsumer* consumer = nullptr;
  std::vector<StreamID> claimed;
  for (StreamID id : ids) {
    PendingEntry* pending = group->FindPending(id);
    if (!stream->Contains(id)) {
      if (pending != nullptr) {
        group->Ack(id);  // deleted from the stream: leaves the PEL
        GroupStateChanged(*found);
        journal.Removed(id);
      }
      continue;
    }
    const bool forced = pending == nullptr && opts.force;
    if (pending == nullptr && !forced) continue;
    if (!forced && *min_idle > 0 && now - pending->delivery_time_ms < *min_idle) continue;
    if (consumer == nullptr) consumer = ReadingConsumer(*found, group, args[3], journal);
    PendingEntry& entry = forced ? group->AddPending(id, consumer) : group->Assign(id, consumer);
    if (forced) entry.delivery_count = 1;
    entry.delivery_time_ms = opts.delivery_time_ms;
    if (opts.retry_count >= 0) {
      entry.delivery_count = uint64_t(opts.retry_count);
    } else if (!opts.justid) {
      ++entry.delivery_count;
    }
    journal.Claimed(args[3], id, entry);
    claimed.push_back(id);
  }
  if (!claimed.empty()) GroupStateChanged(*found);
  rb->StartArray(claimed.size());
  for (StreamID id : claimed) SendClaimed(rb, *stream, id, opts.justid);
}

// --- XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID]

void CmdXAutoClaim(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> min_idle = ParseInt64(args[4]);
  if (!min_idle) return rb->SendError("ERR Invalid min-idle-time argument for XAUTOCLAIM");
  std::optional<StreamID> start = ParseRangeBound(rb, args[5], true);
  if (!start) return;
  // Redis's bound keeps count * 10 attempts from overflowing.
  constexpr int64_t kMaxCount = INT64_MAX / 16;
  int64_t count = 100;
  bool justid = false;
  for (size_t i = 6; i < args.size(); ++i) {
    if (ArgIs(args[i], "COUNT") && i + 1 < args.size()) {
      std::optional<int64_t> n = ParseInt64(args[++i]);
      if (!n || *n < 1 || *n > kMaxCount) return rb->SendError("ERR COUNT must be > 0");
      count = *n;
    } else if (ArgIs(args[i], "JUSTID")) {
      justid = true;
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  OpResult<DbSlice::Update> found =
      Slice().FindMutableTyped(cntx->db_index, args[1], ObjType::kStream);
  if (ReplyIfError(rb, found.status())) return;
  Stream* stream = found ? StreamOf(*found) : nullptr;
  StreamGroup* group = stream ? stream->FindGroup(args[2]) : nullptr;
  if (group == nullptr) return rb->SendError(NoGroupError(args[1], args[2]));

  const int64_t now = NowMs();
  const GroupJournal journal(cntx->db_index, args[1], args[2]);
  int64_t attempts = count * 10;
  StreamConsumer* consumer = nullptr;
  std::vector<StreamID> claimed, deleted;
  auto it = group->pel().lower_bound(*start);
  while (attempts-- > 0 && count > 0 && it != group->pel().end()) {
    const StreamID id = it->first;
    ++it;
    if (!stream->Contains(id)) {  // deleted from the stream: leaves the PEL
      group->Ack(id);
      journal.Removed(id);
      it = group->pel().upper_bound(id);
      deleted.push_back(id);
      --count;
      continue;
    }
    PendingEntry* pending = group->FindPending(id);
    if (*min_idle > 0 && now - pending->delivery_time_ms < *min_idle) continue;
    if (consumer == nullptr) consumer = ReadingConsumer(*found, group, args[3], journal);
    PendingEntry& entry = group->Assign(id, consumer);
    entry.delivery_time_ms = now;
    if (!justid) ++entry.delivery_count;
    journal.Claimed(args[3], id, entry);
    claimed.push_back(id);
    --count;
  }
  if (!claimed.empty() || !deleted.empty()) GroupStateChanged(*found);
  rb->StartArray(3);
  SendId(rb, it == group->pel().end() ? StreamID::Min() : it->first);
  rb->StartArray(claimed.size());
  for (StreamID id : claimed) SendClaimed(rb, *stream, id, justid);
  rb->StartArray(deleted.size());
  for (StreamID id : deleted) SendId(rb, id);
}

// --- XINFO STREAM key [FULL [COUNT count]] | GROUPS key | CONSUMERS key group | HELP

void SendXInfoHelp(ReplyBuilder* rb) {
  static constexpr std::string_view kHelp[] = {
      "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CONSUMERS <key> <groupname>",
      "    Show consumers of <groupname>.",
      "GROUPS <key>",
      "    Show the stream consumer groups.",
      "STREAM <key> [FULL [COUNT <count>]",
      "    Show information about the stream.",
      "HELP",
      "    Prints this help.",
  };
  rb->SendSimpleStringArray(kHelp);
}

// entries-read: null while the counter is unknown.
void SendEntriesRead(ReplyBuilder* rb, int64_t entries_read) {
  if (entries_read == StreamGroup::kInvalidEntriesRead) return rb->SendNull();
  rb->SendLong(entries_read);
}

void SendLag(ReplyBuilder* rb, const Stream& stream, const StreamGroup& group) {
  int64_t lag;
  if (!stream.Lag(group, &lag)) return rb->SendNull();
  rb->SendLong(lag);
}

// The fields both forms of XINFO STREAM open with.
void SendStreamHeader(ReplyBuilder* rb, const Stream& stream) {
  rb->SendBulk("length");
  rb->SendLong(stream.Length());
  // Our B-tree's nodes stand for Redis's radix tree: one key per listpack node.
  rb->SendBulk("radix-tree-keys");
  rb->SendLong(stream.NumNodes());
  rb->SendBulk("radix-tree-nodes");
  rb->SendLong(stream.NumNodes());
  rb->SendBulk("last-generated-id");
  SendId(rb, stream.last_id());
  rb->SendBulk("max-deleted-entry-id");
  SendId(rb, stream.max_deleted_id());
  rb->SendBulk("entries-added");
  rb->SendLong(stream.entries_added());
  rb->SendBulk("recorded-first-entry-id");
  SendId(rb, stream.first_id());
}

void SendOneEntry(ReplyBuilder* rb, const std::vector<Stream::Entry>& entries) {
  if (entries.empty()) return rb->SendNull();
  rb->StartArray(2);
  SendId(rb, entries[0].id);
  rb->SendBulkArray(entries[0].pairs);
}

void SendStreamFull(ReplyBuilder* rb, const Stream& stream, size_t count) {
  rb->StartMap(9);
  SendStreamHeader(rb, stream);
  rb->SendBulk("entries");
  SendEntries(rb, stream.Range(StreamID::Min(), StreamID::Max(), count, false));
  rb->SendBulk("groups");
  rb->StartArray(stream.NumGroups());
  if (stream.groups() == nullptr) return;
  auto limited = [count](size_t size) { return count == 0 ? size : std::min(size, count); };
  for (const auto& [name, group] : *stream.groups()) {
    rb->StartMap(7);
    rb->SendBulk("name");
    rb->SendBulk(name);
    rb->SendBulk("last-delivered-id");
    SendId(rb, group->last_id);
    rb->SendBulk("entries-read");
    SendEntriesRead(rb, group->entries_read);
    rb->SendBulk("lag");
    SendLag(rb, stream, *group);
    rb->SendBulk("pel-count");
    rb->SendLong(group->pel().size());
    rb->SendBulk("pending");
    size_t left = limited(group->pel().size());
    rb->StartArray(left);
    for (auto it = group->pel().begin(); left > 0; ++it, --left) {
      rb->StartArray(4);
      SendId(rb, it->first);
      rb->SendBulk(it->second.consumer->name);
      rb->SendLong(it->second.delivery_time_ms);
      rb->SendLong(it->second.delivery_count);
    }
    rb->SendBulk("consumers");
    rb->StartArray(group->consumers().size());
    for (const auto& [cname, consumer] : group->consumers()) {
      rb->StartMap(4);
      rb->SendBulk("name");
      rb->SendBulk(cname);
      rb->SendBulk("seen-time");
      rb->SendLong(consumer->seen_time_ms);
      rb->SendBulk("pel-count");
      rb->SendLong(consumer->pending.size());
      rb->SendBulk("pending");
      size_t cleft = limited(consumer->pending.size());
      rb->StartArray(cleft);
      for (auto it = consumer->pending.begin(); cleft > 0; ++it, --cleft) {
        const PendingEntry& entry = group->pel().find(*it)->second;
        rb->StartArray(3);
        SendId(rb, *it);
        rb->SendLong(entry.delivery_time_ms);
        rb->SendLong(entry.delivery_count);
      }
    }
  }
}

void CmdXInfo(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view sub = args[1];
  if (ArgIs(sub, "HELP")) return SendXInfoHelp(rb);
  OpResult<const Stream*> found = FindStream(cntx->db_index, args[2]);
  if (found.status() == OpStatus::kKeyNotFound) return rb->SendError(facade::kNoSuchKeyErr);
  if (!found) return SendOpError(rb, found.status());
  const Stream& stream = **found;

  if (ArgIs(sub, "CONSUMERS")) {
    const StreamGroup* group = stream.FindGroup(args[3]);
    if (group == nullptr) return rb->SendError(NoGroupForKeyError(args[3], args[2]));
    const int64_t now = NowMs();
    rb->StartArray(group->consumers().size());
    for (const auto& [name, consumer] : group->consumers()) {
      rb->StartMap(3);
      rb->SendBulk("name");
      rb->SendBulk(name);
      rb->SendBulk("pending");
      rb->SendLong(consumer->pending.size());
      rb->SendBulk("idle");
      rb->SendLong(std::max<int64_t>(now - consumer->seen_time_ms, 0));
    }
    return;
  }
  if (ArgIs(sub, "GROUPS")) {
    rb->StartArray(stream.NumGroups());
    if (stream.groups() == nullptr) return;
    for (const auto& [name, group] : *stream.groups()) {
      rb->StartMap(6);
      rb->SendBulk("name");
      rb->SendBulk(name);
      rb->SendBulk("consumers");
      rb->SendLong(group->consumers().size());
      rb->SendBulk("pending");
      rb->SendLong(group->pel().size());
      rb->SendBulk("last-delivered-id");
      SendId(rb, group->last_id);
      rb->SendBulk("entries-read");
      SendEntriesRead(rb, group->entries_read);
      rb->SendBulk("lag");
      SendLag(rb, stream, *group);
    }
    return;
  }
  // STREAM
  const size_t options = args.size() - 3;
  if (options == 0) {
    rb->StartMap(10);
    SendStreamHeader(rb, stream);
    rb->SendBulk("groups");
    rb->SendLong(stream.NumGroups());
    rb->SendBulk("first-entry");
    SendOneEntry(rb, stream.Range(StreamID::Min(), StreamID::Max(), 1, false));
    rb->SendBulk("last-entry");
    SendOneEntry(rb, stream.Range(StreamID::Min(), StreamID::Max(), 1, true));
    return;
  }
  if ((options != 1 && options != 3) || !ArgIs(args[3], "FULL") ||
      (options == 3 && !ArgIs(args[4], "COUNT"))) {
    return rb->SendError(SubcommandSyntaxError(sub, "XINFO"));
  }
  int64_t count = 10;  // Redis's default, so a large stream does not stall the server
  if (options == 3) {
    std::optional<int64_t> n = ParseInt64(args[5]);
    if (!n) return rb->SendError(facade::kInvalidIntErr);
    count = *n < 0 ? 10 : *n;
  }
  SendStreamFull(rb, stream, size_t(count));
}

}  // namespace

void RegisterGroupCommands(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  constexpr uint32_t kAclW = kAclWrite | kAclStream, kAclR = kAclRead | kAclStream;
  // Locked exclusively although Redis's spec says RO: the read changes the group.
  const KeySpec kReadGroupKeys{.flags = kKeyRW | kKeyAccess,
                               .begin_index = 4,
                               .keyword = "STREAMS",
                               .last_key = -1,
                               .limit = 2};
  r.Add("XGROUP", -2, kCmdWrite, Keys(2).WithFlags(kKeyRW | kKeyInsert), kAclSlow, CmdXGroup,
        {{"CREATE", -5, kAclWrite | kAclStream | kAclSlow},
         {"SETID", -5, kAclWrite | kAclStream | kAclSlow},
         {"DESTROY", 4, kAclWrite | kAclStream | kAclSlow},
         {"CREATECONSUMER", 5, kAclWrite | kAclStream | kAclSlow},
         {"DELCONSUMER", 5, kAclWrite | kAclStream | kAclSlow},
         {"HELP", 2, kAclStream | kAclSlow}});
  r.Add("XREADGROUP", -7, kCmdWrite | kCmdBlocking, kReadGroupKeys, kAclW | kAclSlow | kAclBlocking,
        CmdXReadGroup);
  r.Add("XACK", -4, kCmdWrite | kCmdFast, Keys(1).WithFlags(kKeyRW | kKeyUpdate), kAclW | kAclFast,
        CmdXAck);
  r.Add("XPENDING", -3, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdXPending);
  r.Add("XCLAIM", -6, kCmdWrite | kCmdFast, Keys(1).WithFlags(kKeyRW | kKeyUpdate),
        kAclW | kAclFast, CmdXClaim);
  r.Add("XAUTOCLAIM", -6, kCmdWrite | kCmdFast, Keys(1).WithFlags(kKeyRW | kKeyDelete),
        kAclW | kAclFast, CmdXAutoClaim);
  r.Add("XINFO", -2, kCmdReadOnly, Keys(2), kAclSlow, CmdXInfo,
        {{"CONSUMERS", 4, kAclRead | kAclStream | kAclSlow},
         {"GROUPS", 3, kAclRead | kAclStream | kAclSlow},
         {"STREAM", -3, kAclRead | kAclStream | kAclSlow},
         {"HELP", 2, kAclStream | kAclSlow}});
}

}  // namespace damselfly::stream_internal
