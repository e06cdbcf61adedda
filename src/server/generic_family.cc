#include "src/server/generic_family.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"


#include "helio/base/strings.h"
#include "src/core/glob_matcher.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/engine_shard_set.h"
#include "src/server/expire_options.h"
#include "src/server/family_utils.h"
#include "src/server/lazy_free.h"
#include "src/server/transaction.h"

DECLARE_uint32(dbnum);
DEFINE_uint32(keys_output_limit, 8192, "KEYS returns at most this many keys");

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::CommandHandler;
using facade::CommandId;
using facade::ConnectionContext;
using facade::ReplyBuilder;

// --- DEL, UNLINK, EXISTS, TOUCH: a count over the keys, per shard then summed.

// UNLINK: large values are freed after the reply (DbSlice::Unlink).
int64_t UnlinkKeys(DbIndex db, CmdArgList args, absl::Span<const uint32_t> indices) {
  int64_t deleted = 0;
  for (uint32_t index : indices) deleted += Slice().Unlink(db, args[index]);
  return deleted;
}

// DEL: UNLINK under lazyfree-lazy-user-del.
int64_t DeleteKeys(DbIndex db, CmdArgList args, absl::Span<const uint32_t> indices) {
  if (LoadLazyFreeConfig().user_del) return UnlinkKeys(db, args, indices);
  int64_t deleted = 0;
  for (uint32_t index : indices) deleted += Slice().Erase(db, args[index]);
  return deleted;
}

int64_t CountExisting(DbIndex db, CmdArgList args, absl::Span<const uint32_t> indices) {
  int64_t found = 0;
  for (uint32_t index : indices) found += Slice().FindRead(db, args[index], false) != nullptr;
  return found;
}

// TOUCH: EXISTS that records a use of each key (OBJECT IDLETIME), as a read does.
int64_t TouchKeys(DbIndex db, CmdArgList args, absl::Span<const uint32_t> indices) {
  int64_t found = 0;
  for (uint32_t index : indices) found += Slice().FindRead(db, args[index]) != nullptr;
  return found;
}

// One hop to each shard holding keys (inline when there is one), then the sum.
template <int64_t (*PerShard)(DbIndex, CmdArgList, absl::Span<const uint32_t>)>
void CmdCount(CmdArgList args, ConnectionContext* cntx) {
  CommandTransaction tx(args, cntx);
  // One slot per shard (each hop writes its own); inline for up to 16 shards, so the
  // common one-shard DEL allocates nothing.
  absl::InlinedVector<int64_t, 16> counts(shard_set->size());
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        counts[shard->shard_id()] = PerShard(t->db(), args, t->KeyIndices(shard->shard_id()));
      },
      true);
  int64_t total = 0;
  for (int64_t count : counts) total += count;
  cntx->reply_builder()->SendLong(total);
}

// --- TYPE, TTL & co, PERSIST, OBJECT

void CmdType(CmdArgList args, ConnectionContext* cntx) {
  const PrimeValue* value = Slice().FindRead(cntx->db_index, args[1], false);
  cntx->reply_builder()->SendSimpleString(value ? ObjTypeName(value->type()) : "none");
}

// TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 missing, -1 no deadline.
void ReplyTtl(CmdArgList args, ConnectionContext* cntx, bool in_ms, bool absolute) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (!Slice().FindRead(cntx->db_index, args[1], false)) return rb->SendLong(-2);
  int64_t deadline = Slice().GetExpire(cntx->db_index, args[1]);
  if (deadline == 0) return rb->SendLong(-1);
  if (absolute) return rb->SendLong(in_ms ? deadline : deadline / 1000);
  int64_t left = std::max<int64_t>(0, deadline - UnixTimeMs());
  rb->SendLong(in_ms ? left : (left + 500) / 1000);
}

void CmdTtl(CmdArgList args, ConnectionContext* cntx) { ReplyTtl(args, cntx, false, false); }
void CmdPTtl(CmdArgList args, ConnectionContext* cntx) { ReplyTtl(args, cntx, true, false); }
void CmdExpireTime(CmdArgList args, ConnectionContext* cntx) { ReplyTtl(args, cntx, false, true); }
void CmdPExpireTime(CmdArgList args, ConnectionContext* cntx) { ReplyTtl(args, cntx, true, true); }

void CmdPersist(CmdArgList args, ConnectionContext* cntx) {
  DbSlice::Update entry = Slice().FindMutable(cntx->db_index, args[1]);
  if (!entry || !entry->has_expire()) return cntx->reply_builder()->SendLong(0);
  entry.SetExpire(0);
  entry.Changed("persist");
  cntx->reply_builder()->SendLong(1);
}

// Applies EXPIRE's conditions to `key` and sets (or, for a deadline in the past,
// deletes) it. kKeyNotFound, kSkipped when a condition says no.
OpStatus OpExpire(DbIndex db, std::string_view key, int64_t deadline_ms,
                  const ExpireCondition& condition) {
  DbSlice::Update entry = Slice().FindMutable(db, key);
  if (!entry) return OpStatus::kKeyNotFound;
  if (!condition.Allows(entry.expire(), deadline_ms)) return OpStatus::kSkipped;
  if (deadline_ms <= UnixTimeMs()) {
    entry.Erase("del");
  } else {
    entry.SetExpire(deadline_ms);
    entry.Changed("expire");
  }
  return OpStatus::kOk;
}

// EXPIRE key seconds [NX | XX | GT | LT], and PEXPIRE / EXPIREAT / PEXPIREAT.
void SetExpiry(CmdArgList args, ConnectionContext* cntx, bool seconds, bool absolute) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string error;
  std::optional<ExpireCondition> condition = ExpireCondition::Parse(args.subspan(3), &error);
  if (!condition) return rb->SendError(error);
  std::optional<int64_t> when = ParseInt64(args[2]);
  if (!when) return rb->SendError(facade::kInvalidIntErr);

  const std::string invalid = helio::StrCat("ERR invalid expire time in '",
                                           helio::AsciiStrToLower(args[0]), "' command");
  int64_t deadline = *when;
  if (seconds) {
    if (deadline > INT64_MAX / 1000 || deadline < INT64_MIN / 1000) return rb->SendError(invalid);
    deadline *= 1000;
  }
  if (!absolute) {
    int64_t now = UnixTimeMs();
    // A negative value cannot overflow when added to a positive `now`.
    if (deadline > INT64_MAX - now) return rb->SendError(invalid);
    deadline += now;
  }
  rb->SendLong(OpExpire(cntx->db_index, args[1], deadline, *condition) == OpStatus::kOk);
}

void CmdExpire(CmdArgList args, ConnectionContext* cntx) { SetExpiry(args, cntx, true, false); }
void CmdPExpire(CmdArgList args, ConnectionContext* cntx) { SetExpiry(args, cntx, false, false); }
void CmdExpireAt(CmdArgList args, ConnectionContext* cntx) { SetExpiry(args, cntx, true, true); }
void CmdPExpireAt(CmdArgList args, ConnectionContext* cntx) { SetExpiry(args, cntx, false, true); }

// OBJECT ENCODING|REFCOUNT|IDLETIME|FREQ key, OBJECT HELP (validated by the dispatcher).
void CmdObject(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view sub = args[1];
  if (ArgIs(sub, "HELP")) {
    static constexpr std::string_view kHelp[] = {
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    };
    rb->SendSimpleStringArray(kHelp);
    return;
  }
  const PrimeValue* value = Slice().Find(cntx->db_index, args[2]);
  if (!value) return rb->SendNull();
  if (ArgIs(sub, "ENCODING")) return rb->SendBulk(value->EncodingName());
  // Redis shares small integers (refcount INT_MAX); other values have one reference.
  if (ArgIs(sub, "REFCOUNT")) {
    std::optional<int64_t> number = value->TryGetInt();
    return rb->SendLong(number && *number >= 0 && *number < 10000 ? 2147483647 : 1);
  }
  // A key's access bits hold either an access stamp or an LFU counter (eviction.h).
  const bool lfu = IsLfu(Slice().eviction().policy);
  if (ArgIs(sub, "IDLETIME") && !lfu) {
    return rb->SendLong(Slice().IdleSeconds(cntx->db_index, args[2]).value_or(0));
  }
  if (ArgIs(sub, "FREQ") && lfu) return rb->SendLong(Slice().LfuCounter(cntx->db_index, args[2]).value_or(0));
  rb->SendError(helio::StrCat(
      lfu ? "ERR An LFU maxmemory policy is selected, idle time not tracked."
          : "ERR An LFU maxmemory policy is not selected, access frequency not tracked.",
      " Please note that when switching between policies at runtime LRU and LFU data will "
      "take some time to adjust."));
}

// --- RENAME, RENAMENX, COPY, MOVE

// A key's value and deadline in serialized form, to move or copy it to another shard
// (an object's heap blocks belong to its shard's thread) or another key.
struct SerializedEntry {
  std::string form;  // PrimeValue::Serialize
  int64_t deadline_ms = 0;
};

// `read`: COPY's look-up, counted as a read (a keyspace hit or miss) as in Redis; RENAME's
// is a write's.
std::optional<SerializedEntry> SerializeEntry(DbIndex db, std::string_view key, bool read) {
  const PrimeValue* value = read ? Slice().FindRead(db, key) : Slice().Find(db, key);
  if (!value) return std::nullopt;
  SerializedEntry entry;
  value->Serialize(&entry.form);
  entry.deadline_ms = value->has_expire() ? Slice().GetExpire(db, key) : 0;
  return entry;
}

enum class Transfer { kNoSource, kTargetExists, kDone };

// Copies (or with `move`, moves) args[1] of the connection's database to args[2] of
// `to_db`. Keys on one shard: a move moves the object itself (DbSlice::Rename), a copy
// serializes it. Keys on two shards: one transaction of two hops: first serialize the
// source and see whether the target exists, then put the target (and delete the
// source). The locks are held throughout, so no client sees neither or both keys of a
// move. REQUIRES: not the same key of the same database.
Transfer TransferKey(CmdArgList args, ConnectionContext* cntx, DbIndex to_db, bool overwrite,
                     bool move) {
  CommandTransaction tx(args, cntx);
  std::string_view from = args[1], to = args[2];
  if (tx->is_inline() && move) {
    OpStatus status = Slice().Rename(tx->db(), from, to, !overwrite);
    return status == OpStatus::kOk            ? Transfer::kDone
           : status == OpStatus::kKeyNotFound ? Transfer::kNoSource
                                              : Transfer::kTargetExists;
  }
  const ShardId from_shard = shard_set->ShardOf(from);
  const ShardId to_shard = shard_set->ShardOf(to);
  std::optional<SerializedEntry> copied;
  bool target_exists = false;
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (shard->shard_id() == from_shard) copied = SerializeEntry(t->db(), from, !move);
        if (shard->shard_id() == to_shard) target_exists = Slice().Find(to_db, to) != nullptr;
      },
      false);
  const Transfer result = !copied ? Transfer::kNoSource
                          : target_exists && !overwrite ? Transfer::kTargetExists
                                                        : Transfer::kDone;
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (result != Transfer::kDone) return;
        if (move && shard->shard_id() == from_shard) {
          Slice().Erase(t->db(), from, "rename_from", KeyChangeKind::kRenamedFrom);
        }
        if (shard->shard_id() == to_shard) {
          Slice().PutSerialized(to_db, to, copied->form, copied->deadline_ms,
                                move ? "rename_to" : "copy_to");
        }
      },
      true);
  return result;
}

void Rename(CmdArgList args, ConnectionContext* cntx, bool only_if_new) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args[1] == args[2]) {  // one key, one shard: here
    if (!Slice().Find(cntx->db_index, args[1])) return rb->SendError(facade::kNoSuchKeyErr);
    return only_if_new ? rb->SendLong(0) : rb->SendOk();
  }
  Transfer result = TransferKey(args, cntx, cntx->db_index, !only_if_new, true);
  if (result == Transfer::kNoSource) return rb->SendError(facade::kNoSuchKeyErr);
  if (only_if_new) return rb->SendLong(result == Transfer::kDone ? 1 : 0);
  rb->SendOk();
}

void CmdRename(CmdArgList args, ConnectionContext* cntx) { Rename(args, cntx, false); }
void CmdRenameNx(CmdArgList args, ConnectionContext* cntx) { Rename(args, cntx, true); }

// COPY source destination [DB destination-db] [REPLACE]
void CmdCopy(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  DbIndex to_db = cntx->db_index;
  bool replace = false;
  for (size_t i = 3; i < args.size(); ++i) {
    if (ArgIs(args[i], "REPLACE")) {
      replace = true;
    } else if (ArgIs(args[i], "DB") && i + 1 < args.size()) {
      std::string_view error;
      std::optional<uint32_t> db = ParseDbIndex(args[++i], FLAGS_dbnum, &error);
      if (!db) return rb->SendError(error);
      to_db = DbIndex(*db);
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  if (to_db == cntx->db_index && args[1] == args[2]) return SendOpError(rb, OpStatus::kSameObject);
  rb->SendLong(TransferKey(args, cntx, to_db, replace, false) == Transfer::kDone);
}

// MOVE key db: one key, so one shard; the object moves between the shard's databases.
void CmdMove(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view error;
  std::optional<uint32_t> to_db = ParseDbIndex(args[2], FLAGS_dbnum, &error);
  if (!to_db) return rb->SendError(error);
  if (*to_db == cntx->db_index) return SendOpError(rb, OpStatus::kSameObject);
  rb->SendLong(Slice().MoveToDb(cntx->db_index, *to_db, args[1]) == OpStatus::kOk);
}

// SWAPDB index1 index2: a whole-shard transaction swaps the two on every shard at once,
// so no command sees one shard swapped and another not.
void CmdSwapDb(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  // As Redis: both numbers are read as ints before either is checked as a database.
  std::string_view error_a, error_b;
  std::optional<uint32_t> a = ParseDbIndex(args[1], FLAGS_dbnum, &error_a);
  if (!a && error_a != facade::kDbIndexOutOfRangeErr) {
    return rb->SendError("ERR invalid first DB index");
  }
  std::optional<uint32_t> b = ParseDbIndex(args[2], FLAGS_dbnum, &error_b);
  if (!b && error_b != facade::kDbIndexOutOfRangeErr) {
    return rb->SendError("ERR invalid second DB index");
  }
  if (!a || !b) return rb->SendError(facade::kDbIndexOutOfRangeErr);
  RunWholeShard(cntx, [&](EngineShard* shard) {
    ShardJournal::Barrier(cntx->db_index, args);
    shard->db_slice().SwapDb(*a, *b);
  });
  rb->SendOk();
}

// --- KEYS, SCAN, RANDOMKEY: every shard.

void CmdKeys(CmdArgList args, ConnectionContext* cntx) {
  std::string_view pattern = args[1];
  DbIndex db = cntx->db_index;
  const size_t limit = FLAGS_keys_output_limit;
  std::vector<std::vector<std::string>> found(shard_set->size());
  bool match_all = pattern == "*";
  shard_set->RunOnAll([&](EngineShard* shard) {
    auto& out = found[shard->shard_id()];
    shard->db_slice().ForEach(db, [&](std::string_view key, const PrimeValue&) {
      if (out.size() < limit && (match_all || core::GlobMatch(pattern, key))) out.emplace_back(key);
    });
  });
  std::vector<std::string_view> keys;
  for (auto& shard_keys : found) {
    for (auto& key : shard_keys) {
      if (keys.size() < limit) keys.push_back(key);
    }
  }
  cntx->reply_builder()->SendBulkArray(keys);
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]. The cursor's top 16 bits name
// the shard, the rest is that shard's table cursor; shards are walked in order.
void CmdScan(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<uint64_t> cursor = ParseScanCursor(args[1]);
  if (!cursor) return rb->SendError("ERR invalid cursor");
  ScanOptions options;
  std::string_view error = ParseScanOptions(args.subspan(2), /*allow_type=*/true, &options);
  if (!error.empty()) return rb->SendError(error);
  // Named members rather than a structured binding: clang before 16 cannot capture
  // bindings in lambdas, and the fuzz build (tools/build.sh fuzz) uses Debian 12's clang 14.
  const std::optional<std::string_view>& pattern = options.pattern;
  const int64_t count = options.count;
  const std::optional<std::string_view>& type = options.type;
  constexpr unsigned kShardShift = 48;
  // A cursor this server did not hand out may name no shard: the scan is then over.
  ShardId shard = *cursor >> kShardShift;
  uint64_t table_cursor = *cursor & ((uint64_t(1) << kShardShift) - 1);
  DbIndex db = cntx->db_index;
  std::vector<std::string> keys;
  while (shard < shard_set->size() && keys.size() < size_t(count)) {
    table_cursor = shard_set->Await(shard, [&] {
      std::vector<std::string> expired;
      const uint64_t next = Slice().Scan(
          db, table_cursor, count - keys.size(),
          [&](std::string_view key, const PrimeValue& value) {
            if (pattern && !core::GlobMatch(*pattern, key)) return;
            if (type && !helio::EqualsIgnoreCase(*type, ObjTypeName(value.type()))) return;
            keys.emplace_back(key);
          },
          &expired);
      // The expired keys passed go, as Redis's SCAN deletes them (each a DEL for
      // replicas): a lookup deletes an expired key.
      for (const std::string& key : expired) {
        if (EngineShard::tlocal()->MayExpire(key)) Slice().Find(db, key);
      }
      return next;
    });
    if (table_cursor == 0) ++shard;
  }
  uint64_t next = shard >= shard_set->size() ? 0 : (uint64_t(shard) << kShardShift) | table_cursor;
  rb->StartArray(2);
  rb->SendBulk(helio::StrCat(next));
  rb->SendBulkArray(keys);
}

void CmdRandomKey(CmdArgList args, ConnectionContext* cntx) {
  DbIndex db = cntx->db_index;
  std::vector<size_t> sizes(shard_set->size());
  shard_set->RunOnAll([&](EngineShard* shard) { sizes[shard->shard_id()] = shard->db_slice().DbSize(db); });
  // Pick a shard in proportion to its size, so every key is about equally likely.
  size_t total = 0;
  for (size_t size : sizes) total += size;
  std::optional<std::string> key;
  for (int attempt = 0; attempt < 8 && total > 0 && !key; ++attempt) {
    size_t pick = shard_set->Await(0, [&] {
      return absl::Uniform<size_t>(EngineShard::tlocal()->rng(), 0, total);
    });
    ShardId shard = 0;
    while (pick >= sizes[shard]) pick -= sizes[shard++];
    key = shard_set->Await(shard, [&] { return Slice().RandomKey(db, &EngineShard::tlocal()->rng()); });
  }
  if (key) {
    cntx->reply_builder()->SendBulk(*key);
  } else {
    cntx->reply_builder()->SendNull();
  }
}

}  // namespace

void GenericFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  // The key read only for its metadata (type, length), updated in place, only added to,
  // only removed from, read and removed, overwritten unread, or written when missing: the
  // key flags Redis 7.0 gives (COMMAND INFO). Only RO changes locking (shared).
  const KeySpec kMetadataRead = Keys(1).WithFlags(kKeyRO);
  const KeySpec kUpdated = Keys(1).WithFlags(kKeyRW | kKeyUpdate);
  constexpr uint32_t kAclW = kAclKeyspace | kAclWrite, kAclR = kAclKeyspace | kAclRead;
  const KeySpec kRemoved = Keys(1, -1).WithFlags(kKeyRM | kKeyDelete);
  const KeySpec kChecked = Keys(1, -1).WithFlags(kKeyRO);
  // RENAME's source is read and deleted, its destination overwritten; COPY's source read.
  const KeySpecs kRenamed = {Keys(1).WithFlags(kKeyRW | kKeyAccess | kKeyDelete),
                             Keys(2).WithFlags(kKeyOW | kKeyUpdate)};
  const KeySpecs kRenamedIfNew = {Keys(1).WithFlags(kKeyRW | kKeyAccess | kKeyDelete),
                                  Keys(2).WithFlags(kKeyOW | kKeyInsert)};
  const KeySpecs kCopied = {Keys(1).WithFlags(kKeyRO | kKeyAccess),
                            Keys(2).WithFlags(kKeyOW | kKeyUpdate)};
  r.Add("DEL", -2, kCmdWrite, kRemoved, kAclW | kAclSlow, CmdCount<DeleteKeys>);
  r.Add("UNLINK", -2, kCmdWrite | kCmdFast, kRemoved, kAclW | kAclFast, CmdCount<UnlinkKeys>);
  r.Add("EXISTS", -2, kCmdReadOnly | kCmdFast, kChecked, kAclR | kAclFast, CmdCount<CountExisting>);
  r.Add("TOUCH", -2, kCmdReadOnly | kCmdFast, kChecked, kAclR | kAclFast, CmdCount<TouchKeys>);
  r.Add("TYPE", 2, kCmdReadOnly | kCmdFast, kMetadataRead, kAclR | kAclFast, CmdType);
  r.Add("TTL", 2, kCmdReadOnly | kCmdFast, Keys(1), kAclR | kAclFast, CmdTtl);
  r.Add("PTTL", 2, kCmdReadOnly | kCmdFast, Keys(1), kAclR | kAclFast, CmdPTtl);
  r.Add("EXPIRETIME", 2, kCmdReadOnly | kCmdFast, Keys(1), kAclR | kAclFast, CmdExpireTime);
  r.Add("PEXPIRETIME", 2, kCmdReadOnly | kCmdFast, Keys(1), kAclR | kAclFast, CmdPExpireTime);
  r.Add("PERSIST", 2, kCmdWrite | kCmdFast, kUpdated, kAclW | kAclFast, CmdPersist);
  r.Add("EXPIRE", -3, kCmdWrite | kCmdFast, kUpdated, kAclW | kAclFast, CmdExpire);
  r.Add("PEXPIRE", -3, kCmdWrite | kCmdFast, kUpdated, kAclW | kAclFast, CmdPExpire);
  r.Add("EXPIREAT", -3, kCmdWrite | kCmdFast, kUpdated, kAclW | kAclFast, CmdExpireAt);
  r.Add("PEXPIREAT", -3, kCmdWrite | kCmdFast, kUpdated, kAclW | kAclFast, CmdPExpireAt);
  r.Add("OBJECT", -2, kCmdReadOnly, Keys(2), kAclSlow, CmdObject,
        {{"ENCODING", 3, kAclKeyspace | kAclRead | kAclSlow},
         {"REFCOUNT", 3, kAclKeyspace | kAclRead | kAclSlow},
         {"IDLETIME", 3, kAclKeyspace | kAclRead | kAclSlow},
         {"FREQ", 3, kAclKeyspace | kAclRead | kAclSlow},
         {"HELP", 2, kAclKeyspace | kAclSlow}});
  r.Add("RENAME", 3, kCmdWrite, kRenamed, kAclW | kAclSlow, CmdRename);
  r.Add("RENAMENX", 3, kCmdWrite | kCmdFast, kRenamedIfNew, kAclW | kAclFast, CmdRenameNx);
  r.Add("COPY", -3, kCmdWrite | kCmdDenyOom, kCopied, kAclW | kAclSlow, CmdCopy);
  r.Add("MOVE", 3, kCmdWrite | kCmdFast, Keys(1), kAclW | kAclFast, CmdMove);
  r.Add("SWAPDB", 3, kCmdWrite | kCmdFast | kCmdWholeShard, kNoKeys,
        kAclW | kAclFast | kAclDangerous, CmdSwapDb);
  r.Add("KEYS", 2, kCmdReadOnly, kNoKeys, kAclR | kAclSlow | kAclDangerous, CmdKeys);
  r.Add("SCAN", -2, kCmdReadOnly, kNoKeys, kAclR | kAclSlow, CmdScan);
  r.Add("RANDOMKEY", 1, kCmdReadOnly, kNoKeys, kAclR | kAclSlow, CmdRandomKey);
}

}  // namespace damselfly
