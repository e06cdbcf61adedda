#include "src/server/string_family.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "helio/base/strings.h"
#include "src/core/lcs.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/engine_shard.h"
#include "src/server/engine_shard_set.h"
#include "src/server/journal.h"
#include "src/server/expire_options.h"
#include "src/server/family_utils.h"
#include "src/server/lookup_prefetcher.h"
#include "src/server/transaction.h"

DECLARE_uint64(proto_max_bulk_len);

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::CommandId;
using facade::ConnectionContext;
using facade::ReplyBuilder;

// proto-max-bulk-len: the largest string SETRANGE and APPEND may build.
constexpr size_t kMaxStringBytes = 512u << 20;

// The string under `key` for a read: kKeyNotFound, or kWrongType for another type.
OpResult<const PrimeValue*> FindString(DbIndex db, std::string_view key) {
  return Slice().FindTyped(db, key, ObjType::kString);
}

// Replies the bulk of a string found by FindString, nil when missing, or its error.
void ReplyString(ReplyBuilder* rb, const OpResult<const PrimeValue*>& found) {
  if (found) return rb->SendBulk((*found)->GetString(&Scratch()));
  if (found.status() == OpStatus::kKeyNotFound) return rb->SendNull();
  SendOpError(rb, found.status());
}

// An Update of the string under `key` for a command that changes it: a missing key
// gives an Update with no value, another type kWrongType.
OpResult<DbSlice::Update> FindMutableString(DbIndex db, std::string_view key) {
  DbSlice::Update update = Slice().FindMutable(db, key);
  if (update && update->type() != ObjType::kString) return OpStatus::kWrongType;
  return update;
}

// Stores `value` under `key` (any type before), dropping any TTL unless keep_ttl.
void StoreString(DbIndex db, std::string_view key, std::string_view value, bool keep_ttl,
                 int64_t deadline_ms = 0) {
  DbSlice::Update entry = Slice().AddOrFind(db, key);
  entry->SetString(value);
  entry.Changed("set");
  if (deadline_ms > 0) {
    entry.SetExpire(deadline_ms);
    entry.Changed("expire");
  } else if (!keep_ttl && entry->has_expire()) {
    entry.SetExpire(0);  // silently, as Redis drops it
  }
}

// SET's key in a call: read (RW access) with GET, only overwritten without it.
uint32_t SetKeyFlags(CmdArgList args) {
  for (size_t i = 3; i < args.size(); ++i) {
    if (ArgIs(args[i], "GET")) return facade::kKeyRW | facade::kKeyAccess | facade::kKeyUpdate;
  }
  return facade::kKeyOW | facade::kKeyUpdate;
}

// SET key value [NX | XX] [GET] [EX s | PX ms | EXAT ts | PXAT ts-ms | KEEPTTL]
void CmdSet(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  enum { kAlways, kIfMissing, kIfExists } condition = kAlways;
  bool get = false;
  ExpireSpec expire;
  for (size_t i = 3; i < args.size(); ++i) {
    std::string_view opt = args[i];
    // A timed option may repeat itself (the last wins) but not follow another one.
    auto timed = [&](ExpireSpec::Kind kind, bool in_seconds) {
      bool free = expire.kind == ExpireSpec::kNone ||
                  (expire.kind == kind && expire.in_seconds == in_seconds);
      if (!free || i + 1 >= args.size()) return false;
      expire = {kind, args[++i], in_seconds};
      return true;
    };
    if (ArgIs(opt, "NX") && condition != kIfExists) {
      condition = kIfMissing;
    } else if (ArgIs(opt, "XX") && condition != kIfMissing) {
      condition = kIfExists;
    } else if (ArgIs(opt, "GET")) {
      get = true;
    } else if (ArgIs(opt, "KEEPTTL") &&
               (expire.kind == ExpireSpec::kNone || expire.kind == ExpireSpec::kKeepTtl)) {
      expire.kind = ExpireSpec::kKeepTtl;
    } else if (!(ArgIs(opt, "EX") && timed(ExpireSpec::kRelative, true)) &&
               !(ArgIs(opt, "PX") && timed(ExpireSpec::kRelative, false)) &&
               !(ArgIs(opt, "EXAT") && timed(ExpireSpec::kAbsolute, true)) &&
               !(ArgIs(opt, "PXAT") && timed(ExpireSpec::kAbsolute, false))) {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  int64_t deadline_ms = 0;
  std::string error;
  if (expire.has_deadline() && !expire.Resolve("set", UnixTimeMs(), &deadline_ms, &error)) {
    return rb->SendError(error);
  }

  // One lookup: insert at once; an insert that NX or XX refuses is taken back out when
  // the Update ends unchanged, and reported to nobody.
  DbSlice::Update entry = Slice().AddOrFind(cntx->db_index, args[1]);
  const bool inserted = entry.inserted();
  if (get) {
    Slice().CountRead(cntx->db_index, args[1], !inserted);
    if (!inserted && entry->type() != ObjType::kString) return rb->SendError(facade::kWrongTypeErr);
    if (inserted) {
      rb->SendNull();
    } else {
      rb->SendBulk(entry->GetString(&Scratch()));
    }
  }
  if ((condition == kIfMissing && !inserted) || (condition == kIfExists && inserted)) {
    if (!get) rb->SendNull();
    return;
  }
  entry->SetString(args[2]);
  entry.Changed("set");
  if (deadline_ms > 0) {
    entry.SetExpire(deadline_ms);
    entry.Changed("expire");
  } else if (!inserted && expire.kind != ExpireSpec::kKeepTtl && entry->has_expire()) {
    entry.SetExpire(0);  // silently, as Redis drops it
  }
  if (!get) rb->SendOk();
}

void CmdGet(CmdArgList args, ConnectionContext* cntx) {
  ReplyString(cntx->reply_builder(), FindString(cntx->db_index, args[1]));
}

void CmdGetSet(CmdArgList args, ConnectionContext* cntx) {
  OpResult<const PrimeValue*> old = FindString(cntx->db_index, args[1]);
  if (ReplyIfError(cntx->reply_builder(), old.status())) return;
  ReplyString(cntx->reply_builder(), old);
  StoreString(cntx->db_index, args[1], args[2], false);
}

void CmdGetDel(CmdArgList args, ConnectionContext* cntx) {
  OpResult<const PrimeValue*> found = FindString(cntx->db_index, args[1]);
  ReplyString(cntx->reply_builder(), found);
  if (found) Slice().Erase(cntx->db_index, args[1]);
}

// GETEX key [EX s | PX ms | EXAT ts | PXAT ts-ms | PERSIST]
void CmdGetEx(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  ExpireSpec expire;
  for (size_t i = 2; i < args.size(); ++i) {
    std::string_view opt = args[i];
    bool free_slot = expire.kind == ExpireSpec::kNone;
    bool has_next = i + 1 < args.size();
    if (ArgIs(opt, "PERSIST") && (free_slot || expire.kind == ExpireSpec::kPersist)) {
      expire.kind = ExpireSpec::kPersist;
    } else if (free_slot && has_next && (ArgIs(opt, "EX") || ArgIs(opt, "PX"))) {
      expire = {ExpireSpec::kRelative, args[++i], ArgIs(opt, "EX")};
    } else if (free_slot && has_next && (ArgIs(opt, "EXAT") || ArgIs(opt, "PXAT"))) {
      expire = {ExpireSpec::kAbsolute, args[++i], ArgIs(opt, "EXAT")};
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  // Redis's order: options, then the key (a missing key is nil even with a bad expiry
  // value), then the expiry value.
  OpResult<DbSlice::Update> found = FindMutableString(cntx->db_index, args[1]);
  Slice().CountRead(cntx->db_index, args[1], !found || *found);  // a read, as in Redis
  if (!found) return SendOpError(rb, found.status());
  DbSlice::Update& entry = *found;
  if (!entry) return rb->SendNull();
  int64_t deadline_ms = 0;
  std::string error;
  if (expire.has_deadline() && !expire.Resolve("getex", UnixTimeMs(), &deadline_ms, &error)) {
    return rb->SendError(error);
  }
  rb->SendBulk(entry->GetString(&Scratch()));
  if (expire.kind == ExpireSpec::kPersist) {
    if (entry->has_expire()) {
      entry.SetExpire(0);
      entry.Changed("persist");
    }
  } else if (deadline_ms > 0) {
    if (deadline_ms <= UnixTimeMs()) {
      entry.Erase("del");
    } else {
      entry.SetExpire(deadline_ms);
      entry.Changed("expire");
    }
  }
}

void CmdSetNx(CmdArgList args, ConnectionContext* cntx) {
  DbSlice::Update entry = Slice().AddOrFind(cntx->db_index, args[1]);
  if (!entry.inserted()) return cntx->reply_builder()->SendLong(0);
  entry->SetString(args[2]);
  entry.Changed("set");
  cntx->reply_builder()->SendLong(1);
}

// SETEX key seconds value / PSETEX key milliseconds value
void SetWithExpire(CmdArgList args, ConnectionContext* cntx, bool seconds) {
  int64_t deadline_ms;
  std::string error;
  ExpireSpec expire{ExpireSpec::kRelative, args[2], seconds};
  if (!expire.Resolve(args[0], UnixTimeMs(), &deadline_ms, &error)) {
    return cntx->reply_builder()->SendError(error);
  }
  StoreString(cntx->db_index, args[1], args[3], false, deadline_ms);
  cntx->reply_builder()->SendOk();
}

void CmdSetEx(CmdArgList args, ConnectionContext* cntx) { SetWithExpire(args, cntx, true); }
void CmdPSetEx(CmdArgList args, ConnectionContext* cntx) { SetWithExpire(args, cntx, false); }

// Replaces the string of `entry` (possibly just inserted) with `build(old)`, stored as
// APPEND and SETRANGE store; returns the new length, or kStringTooLong past `limit`.
template <typename Build>
OpResult<size_t> RebuildString(DbSlice::Update& entry, std::string_view event, Build&& build) {
  std::string str(entry->GetString(&Scratch()));
  build(&str);
  entry->SetBuiltString(str);
  entry.Changed(event);
  return str.size();
}

OpResult<size_t> OpAppend(DbIndex db, std::string_view key, std::string_view tail) {
  DbSlice::Update entry = Slice().AddOrFind(db, key);
  if (entry->type() != ObjType::kString) return OpStatus::kWrongType;
  if (entry.inserted()) {
    entry->SetString(tail);
    entry.Changed("append");
    return tail.size();
  }
  if (entry->Size() + tail.size() > kMaxStringBytes) return OpStatus::kStringTooLong;
  return RebuildString(entry, "append", [&](std::string* str) { str->append(tail); });
}

void CmdAppend(CmdArgList args, ConnectionContext* cntx) {
  OpResult<size_t> length = OpAppend(cntx->db_index, args[1], args[2]);
  if (!length) return SendOpError(cntx->reply_builder(), length.status());
  cntx->reply_builder()->SendLong(*length);
}

void CmdStrLen(CmdArgList args, ConnectionContext* cntx) {
  OpResult<const PrimeValue*> found = FindString(cntx->db_index, args[1]);
  if (!found && found.status() != OpStatus::kKeyNotFound) {
    return SendOpError(cntx->reply_builder(), found.status());
  }
  cntx->reply_builder()->SendLong(found ? (*found)->Size() : 0);
}

// INCR / DECR / INCRBY / DECRBY: adds `delta` to the integer stored at the key.
OpResult<int64_t> OpIncrBy(DbIndex db, std::string_view key, int64_t delta) {
  DbSlice::Update entry = Slice().AddOrFind(db, key);
  int64_t current = 0;
  if (!entry.inserted()) {
    if (entry->type() != ObjType::kString) return OpStatus::kWrongType;
    // Values store canonical integers as integers, so anything else is not one.
    std::optional<int64_t> parsed = entry->TryGetInt();
    if (!parsed) return OpStatus::kInvalidInt;
    current = *parsed;
  }
  if ((delta < 0 && current < 0 && delta < INT64_MIN - current) ||
      (delta > 0 && current > 0 && delta > INT64_MAX - current)) {
    return OpStatus::kIncrOverflow;  // an inserted key is dropped again, unchanged
  }
  entry->SetInt(current + delta);
  entry.Changed("incrby");
  return current + delta;
}

void IncrBy(CmdArgList args, ConnectionContext* cntx, int64_t delta) {
  OpResult<int64_t> result = OpIncrBy(cntx->db_index, args[1], delta);
  if (!result) return SendOpError(cntx->reply_builder(), result.status());
  cntx->reply_builder()->SendLong(*result);
}

void CmdIncr(CmdArgList args, ConnectionContext* cntx) { IncrBy(args, cntx, 1); }
void CmdDecr(CmdArgList args, ConnectionContext* cntx) { IncrBy(args, cntx, -1); }

void CmdIncrBy(CmdArgList args, ConnectionContext* cntx) {
  std::optional<int64_t> delta = ParseInt64(args[2]);
  if (!delta) return cntx->reply_builder()->SendError(facade::kInvalidIntErr);
  IncrBy(args, cntx, *delta);
}

void CmdDecrBy(CmdArgList args, ConnectionContext* cntx) {
  std::optional<int64_t> delta = ParseInt64(args[2]);
  if (!delta) return cntx->reply_builder()->SendError(facade::kInvalidIntErr);
  if (*delta == INT64_MIN) return cntx->reply_builder()->SendError("ERR decrement would overflow");
  IncrBy(args, cntx, -*delta);
}

OpResult<std::string> OpIncrByFloat(DbIndex db, std::string_view key, long double delta) {
  DbSlice::Update entry = Slice().AddOrFind(db, key);
  long double current = 0;
  if (!entry.inserted()) {
    if (entry->type() != ObjType::kString) return OpStatus::kWrongType;
    std::optional<long double> parsed = ParseLongDouble(entry->GetString(&Scratch()));
    if (!parsed) return OpStatus::kInvalidFloat;
    current = *parsed;
  }
  long double result = current + delta;
  if (std::isnan(result) || std::isinf(result)) return OpStatus::kSkipped;
  std::string text = FormatLongDouble(result);
  entry->SetString(text);
  entry.Changed("incrbyfloat");
  // As Redis propagates it: the result, not the float sum a replica might round apart.
  ShardJournal::RewriteAs(db, {"SET", key, text, "KEEPTTL"});
  return text;
}

void CmdIncrByFloat(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<long double> delta = ParseLongDouble(args[2]);
  if (!delta) return rb->SendError(facade::kInvalidFloatErr);
  OpResult<std::string> result = OpIncrByFloat(cntx->db_index, args[1], *delta);
  if (result.status() == OpStatus::kSkipped) {
    return rb->SendError("ERR increment would produce NaN or Infinity");
  }
  if (!result) return SendOpError(rb, result.status());
  rb->SendBulk(*result);
}

void CmdGetRange(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> start = ParseInt64(args[2]), end = ParseInt64(args[3]);
  if (!start || !end) return rb->SendError(facade::kInvalidIntErr);
  OpResult<const PrimeValue*> found = FindString(cntx->db_index, args[1]);
  if (ReplyIfError(rb, found.status())) return;
  std::string_view str = found ? (*found)->GetString(&Scratch()) : std::string_view();
  int64_t len = str.size();
  int64_t from = *start, to = *end;
  if (from < 0 && to < 0 && from > to) return rb->SendBulk("");
  if (from < 0) from += len;
  if (to < 0) to += len;
  if (from < 0) from = 0;
  if (to < 0) to = 0;
  if (to >= len) to = len - 1;
  if (len == 0 || from > to) return rb->SendBulk("");
  rb->SendBulk(str.substr(from, to - from + 1));
}

OpResult<size_t> OpSetRange(DbIndex db, std::string_view key, size_t offset,
                            std::string_view patch) {
  OpResult<DbSlice::Update> found = FindMutableString(db, key);
  if (!found) return found.status();
  const size_t current = *found ? (*found)->Size() : 0;
  if (patch.empty()) return current;  // nothing to write, nothing created
  if (offset + patch.size() > kMaxStringBytes) return OpStatus::kStringTooLong;
  DbSlice::Update entry = *found ? std::move(*found) : Slice().AddOrFind(db, key);
  return RebuildString(entry, "setrange", [&](std::string* str) {
    if (str->size() < offset + patch.size()) str->resize(offset + patch.size(), '\0');
    str->replace(offset, patch.size(), patch);
  });
}

void CmdSetRange(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> offset = ParseInt64(args[2]);
  if (!offset) return rb->SendError(facade::kInvalidIntErr);
  if (*offset < 0) return rb->SendError("ERR offset is out of range");
  OpResult<size_t> length = OpSetRange(cntx->db_index, args[1], size_t(*offset), args[3]);
  if (!length) return SendOpError(rb, length.status());
  rb->SendLong(*length);
}

// --- MSET, MSETNX, MGET: one handler each, against a CommandTransaction: inline when
// the keys share a shard, one atomic transaction across shards otherwise, so no reader
// sees some of the keys set and others not.

// Redis checks the pairs after the arity: "MSET a" is an arity error, "MSET a 1 b" too.
bool CheckPairs(CmdArgList args, ConnectionContext* cntx) {
  if (args.size() % 2 == 1) return true;
  cntx->reply_builder()->SendError(
      facade::CommandRegistry::WrongArityError(args[0]));
  return false;
}

void SetPairs(DbIndex db, CmdArgList args, absl::Span<const uint32_t> key_indices) {
  for (uint32_t index : key_indices) StoreString(db, args[index], args[index + 1], false);
}

void CmdMSet(CmdArgList args, ConnectionContext* cntx) {
  if (!CheckPairs(args, cntx)) return;
  CommandTransaction tx(args, cntx);
  tx->Execute([&](Transaction* t, EngineShard* shard) {
    SetPairs(t->db(), args, t->KeyIndices(shard->shard_id()));
  }, true);
  cntx->reply_builder()->SendOk();
}

bool AnyExists(DbIndex db, CmdArgList args, absl::Span<const uint32_t> key_indices) {
  for (uint32_t index : key_indices) {
    if (Slice().Find(db, args[index])) return true;
  }
  return false;
}

// Two hops: look on every shard, then set on every shard only if no key existed.
void CmdMSetNx(CmdArgList args, ConnectionContext* cntx) {
  if (!CheckPairs(args, cntx)) return;
  CommandTransaction tx(args, cntx);
  absl::InlinedVector<char, 16> exists(shard_set->size());  // per shard; no allocation
  tx->Execute([&](Transaction* t, EngineShard* shard) {
    exists[shard->shard_id()] = AnyExists(t->db(), args, t->KeyIndices(shard->shard_id()));
  }, false);
  bool any = std::find(exists.begin(), exists.end(), 1) != exists.end();
  tx->Execute([&](Transaction* t, EngineShard* shard) {
    if (!any) SetPairs(t->db(), args, t->KeyIndices(shard->shard_id()));
  }, true);
  cntx->reply_builder()->SendLong(any ? 0 : 1);
}

// The string of `key` for MGET, nullptr for a missing key or another type.
const PrimeValue* FindForMGet(DbIndex db, std::string_view key) {
  const PrimeValue* value = Slice().FindRead(db, key);
  return value && value->type() == ObjType::kString ? value : nullptr;
}

// Inline, the hop replies as it goes, with no copy of a value; across shards each shard
// copies its values out in one hop and the reply is built afterwards, in order.
void CmdMGet(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  CommandTransaction tx(args, cntx);
  std::vector<std::optional<std::string>> values;
  if (!tx->is_inline()) values.resize(args.size());
  rb->StartArray(args.size() - 1);
  tx->Execute([&](Transaction* t, EngineShard* shard) {
    const absl::Span<const uint32_t> indices = t->KeyIndices(shard->shard_id());
    LookupPrefetcher prefetcher(Slice(), t->db(), indices.size(),
                                [&](size_t i) { return args[indices[i]]; });
    for (size_t i = 0; i < indices.size(); ++i) {
      prefetcher.Before(i);
      const PrimeValue* value = FindForMGet(t->db(), args[indices[i]]);
      if (t->is_inline()) {
        value ? rb->SendBulk(value->GetString(&Scratch())) : rb->SendNull();
      } else if (value) {
        values[indices[i]].emplace(value->GetString(&Scratch()));
      }
    }
  }, true);
  for (size_t i = 1; i < values.size(); ++i) {
    values[i] ? rb->SendBulk(*values[i]) : rb->SendNull();
  }
}

// --- LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]. One read hop copies
// both values out; the O(N*M) table is then built where the handler runs: on the keys'
// shard when they share one (the transaction is inline; LCS stops the shard as it stops
// Redis), else on the connection's fiber.

// The string under `key` for LCS, copied: "" when missing, nullopt for another type.
std::optional<std::string> CopyLcsValue(DbIndex db, std::string_view key) {
  OpResult<const PrimeValue*> found = FindString(db, key);
  if (found) return std::string((*found)->GetString(&Scratch()));
  if (found.status() == OpStatus::kKeyNotFound) return std::string();
  return std::nullopt;
}

// Redis's order: the types, the options, then the table's size.
void ReplyLcs(CmdArgList args, const std::optional<std::string>& a,
              const std::optional<std::string>& b, ReplyBuilder* rb) {
  if (!a || !b) return rb->SendError("ERR The specified keys must contain string values");
  bool len = false, idx = false, with_match_len = false;
  int64_t min_match_len = 0;
  for (size_t i = 3; i < args.size(); ++i) {
    if (ArgIs(args[i], "IDX")) {
      idx = true;
    } else if (ArgIs(args[i], "LEN")) {
      len = true;
    } else if (ArgIs(args[i], "WITHMATCHLEN")) {
      with_match_len = true;
    } else if (ArgIs(args[i], "MINMATCHLEN") && i + 1 < args.size()) {
      std::optional<int64_t> parsed = ParseInt64(args[++i]);
      if (!parsed) return rb->SendError(facade::kInvalidIntErr);
      min_match_len = std::max<int64_t>(0, *parsed);
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  if (idx && len) {
    return rb->SendError("ERR If you want both the length and indexes, please just use IDX.");
  }
  std::optional<uint64_t> table_bytes = core::LcsTableBytes(a->size(), b->size());
  if (!table_bytes) return rb->SendError("ERR String too long for LCS");
  if (*table_bytes > FLAGS_proto_max_bulk_len) {
    return rb->SendError(
        "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
  }
  std::optional<core::LcsResult> lcs = core::ComputeLcs(*a, *b,
                                                        {.want_subsequence = !len && !idx,
                                                         .want_matches = idx,
                                                         .min_match_len = uint64_t(min_match_len)});
  if (!lcs) {
    return rb->SendError("ERR Insufficient memory, failed allocating transient memory for LCS");
  }
  if (len) return rb->SendLong(lcs->length);
  if (!idx) return rb->SendBulk(lcs->subsequence);
  rb->StartMap(2);
  rb->SendBulk("matches");
  rb->StartArray(lcs->matches.size());
  for (const core::LcsMatch& match : lcs->matches) {
    rb->StartArray(with_match_len ? 3 : 2);
    rb->StartArray(2);
    rb->SendLong(match.a_start);
    rb->SendLong(match.a_end);
    rb->StartArray(2);
    rb->SendLong(match.b_start);
    rb->SendLong(match.b_end);
    if (with_match_len) rb->SendLong(match.length());
  }
  rb->SendBulk("len");
  rb->SendLong(lcs->length);
}

void CmdLcs(CmdArgList args, ConnectionContext* cntx) {
  CommandTransaction tx(args, cntx);
  std::optional<std::string> values[3];  // by argument position: key1, key2
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        for (uint32_t index : t->KeyIndices(shard->shard_id())) {
          values[index] = CopyLcsValue(t->db(), args[index]);
        }
      },
      true);
  ReplyLcs(args, values[1], values[2], cntx->reply_builder());
}

}  // namespace

void StringFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  // The key read only for its metadata (type, length), updated in place, only added to,
  // only removed from, read and removed, overwritten unread, or written when missing: the
  // key flags Redis 7.0 gives (COMMAND INFO). Only RO changes locking (shared).
  const KeySpec kPoppedFrom = Keys(1).WithFlags(kKeyRW | kKeyAccess | kKeyDelete);
  const KeySpec kCreatedIfMissing = Keys(1).WithFlags(kKeyOW | kKeyInsert);
  const KeySpec kOverwritten = Keys(1).WithFlags(kKeyOW | kKeyUpdate);
  const KeySpec kInsertedInto = Keys(1).WithFlags(kKeyRW | kKeyInsert);
  const KeySpec kMetadataRead = Keys(1).WithFlags(kKeyRO);
  const KeySpec kUpdated = Keys(1).WithFlags(kKeyRW | kKeyUpdate);
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kAclW = kAclWrite | kAclString, kAclR = kAclRead | kAclString;
  KeySpec set_key = Keys(1).WithFlags(kKeyRW | kKeyAccess | kKeyUpdate | kKeyVariableFlags);
  set_key.notes = "RW and ACCESS due to the optional `GET` argument";
  r.Add("SET", -3, kWrite, set_key, kAclW | kAclSlow, CmdSet).variable_key_flags = SetKeyFlags;
  r.Add("GET", 2, kCmdReadOnly | kCmdFast, Keys(1), kAclR | kAclFast, CmdGet);
  r.Add("GETSET", 3, kWrite | kCmdFast, Keys(1), kAclW | kAclFast, CmdGetSet);
  r.Add("GETDEL", 2, kCmdWrite | kCmdFast, kPoppedFrom, kAclW | kAclFast, CmdGetDel);
  r.Add("GETEX", -2, kCmdWrite | kCmdFast, Keys(1), kAclW | kAclFast, CmdGetEx);
  r.Add("SETNX", 3, kWrite | kCmdFast, kCreatedIfMissing, kAclW | kAclFast, CmdSetNx);
  r.Add("SETEX", 4, kWrite, kOverwritten, kAclW | kAclSlow, CmdSetEx);
  r.Add("PSETEX", 4, kWrite, kOverwritten, kAclW | kAclSlow, CmdPSetEx);
  r.Add("APPEND", 3, kWrite | kCmdFast, kInsertedInto, kAclW | kAclFast, CmdAppend);
  r.Add("STRLEN", 2, kCmdReadOnly | kCmdFast, kMetadataRead, kAclR | kAclFast, CmdStrLen);
  r.Add("INCR", 2, kWrite | kCmdFast, Keys(1), kAclW | kAclFast, CmdIncr);
  r.Add("DECR", 2, kWrite | kCmdFast, Keys(1), kAclW | kAclFast, CmdDecr);
  r.Add("INCRBY", 3, kWrite | kCmdFast, Keys(1), kAclW | kAclFast, CmdIncrBy);
  r.Add("DECRBY", 3, kWrite | kCmdFast, Keys(1), kAclW | kAclFast, CmdDecrBy);
  r.Add("INCRBYFLOAT", 3, kWrite | kCmdFast, Keys(1), kAclW | kAclFast, CmdIncrByFloat);
  r.Add("GETRANGE", 4, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdGetRange);
  r.Add("SUBSTR", 4, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdGetRange);
  const KeySpec kPairs = Keys(1, -1, 2);
  r.Add("MSET", -3, kWrite, kPairs.WithFlags(kKeyOW | kKeyUpdate), kAclW | kAclSlow, CmdMSet);
  r.Add("MSETNX", -3, kWrite, kPairs.WithFlags(kKeyOW | kKeyInsert), kAclW | kAclSlow, CmdMSetNx);
  r.Add("MGET", -2, kCmdReadOnly | kCmdFast, Keys(1, -1), kAclR | kAclFast, CmdMGet);
  r.Add("SETRANGE", 4, kWrite, kUpdated, kAclW | kAclSlow, CmdSetRange);
  r.Add("LCS", -3, kCmdReadOnly, Keys(1, 2), kAclR | kAclSlow, CmdLcs);
}

}  // namespace damselfly
