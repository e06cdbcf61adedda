#include "src/server/string_family.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "helio/base/strings.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/engine_shard.h"
#include "src/server/engine_shard_set.h"
#include "src/server/expire_options.h"
#include "src/server/lookup_prefetcher.h"
#include "src/server/transaction.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::CommandId;
using facade::ConnectionContext;
using facade::ReplyBuilder;

// proto-max-bulk-len: the largest string SETRANGE and APPEND may build.
constexpr size_t kMaxStringBytes = 512u << 20;

DbSlice& Slice() { return EngineShard::tlocal()->db_slice(); }

// Where values stored as integers or packed ASCII are decoded for a reply; one per
// thread, so decoding a GET allocates nothing once it has grown.
std::string& Scratch() {
  static thread_local std::string scratch;
  return scratch;
}

// The string under `key` for a read, nullptr when missing; replies WRONGTYPE (and sets
// *failed) for another type.
const PrimeValue* FindString(ConnectionContext* cntx, std::string_view key, bool* failed) {
  const PrimeValue* value = Slice().FindRead(cntx->db_index, key);
  *failed = value && value->type() != ObjType::kString;
  if (*failed) cntx->reply_builder()->SendError(facade::kWrongTypeErr);
  return *failed ? nullptr : value;
}

// Stores `value` under `key`, dropping any TTL unless keep_ttl.
void StoreString(ConnectionContext* cntx, std::string_view key, std::string_view value,
                 bool keep_ttl) {
  auto [entry, inserted] = Slice().FindOrInsert(cntx->db_index, key);
  entry->SetString(value);
  if (!inserted && !keep_ttl && entry->has_expire()) Slice().SetExpire(cntx->db_index, key, 0);
}

void SetDeadline(ConnectionContext* cntx, std::string_view key, int64_t deadline_ms) {
  Slice().SetExpire(cntx->db_index, key, deadline_ms);
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

  // One lookup: insert at once, and take the key back out in the rare case that NX or
  // XX says no.
  std::string_view key = args[1];
  DbSlice& slice = Slice();
  auto [entry, inserted] = slice.FindOrInsert(cntx->db_index, key);
  if (get) {
    if (!inserted && entry->type() != ObjType::kString) return rb->SendError(facade::kWrongTypeErr);
    if (inserted) {
      rb->SendNull();
    } else {
      rb->SendBulk(entry->GetString(&Scratch()));
    }
  }
  if ((condition == kIfMissing && !inserted) || (condition == kIfExists && inserted)) {
    if (inserted) slice.Erase(cntx->db_index, key);
    if (!get) rb->SendNull();
    return;
  }
  entry->SetString(args[2]);
  if (!inserted && expire.kind != ExpireSpec::kKeepTtl && entry->has_expire()) {
    slice.SetExpire(cntx->db_index, key, 0);
  }
  if (deadline_ms > 0) slice.SetExpire(cntx->db_index, key, deadline_ms);
  if (!get) rb->SendOk();
}

void CmdGet(CmdArgList args, ConnectionContext* cntx) {
  bool failed;
  const PrimeValue* value = FindString(cntx, args[1], &failed);
  if (failed) return;
  if (value) {
    cntx->reply_builder()->SendBulk(value->GetString(&Scratch()));
  } else {
    cntx->reply_builder()->SendNull();
  }
}

void CmdGetSet(CmdArgList args, ConnectionContext* cntx) {
  bool failed;
  const PrimeValue* old = FindString(cntx, args[1], &failed);
  if (failed) return;
  if (old) {
    cntx->reply_builder()->SendBulk(old->GetString(&Scratch()));
  } else {
    cntx->reply_builder()->SendNull();
  }
  StoreString(cntx, args[1], args[2], false);
}

void CmdGetDel(CmdArgList args, ConnectionContext* cntx) {
  bool failed;
  const PrimeValue* value = FindString(cntx, args[1], &failed);
  if (failed) return;
  if (!value) return cntx->reply_builder()->SendNull();
  cntx->reply_builder()->SendBulk(value->GetString(&Scratch()));
  Slice().Erase(cntx->db_index, args[1]);
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
  bool failed;
  const PrimeValue* value = FindString(cntx, args[1], &failed);
  if (failed) return;
  if (!value) return rb->SendNull();
  int64_t deadline_ms = 0;
  std::string error;
  if (expire.has_deadline() && !expire.Resolve("getex", UnixTimeMs(), &deadline_ms, &error)) {
    return rb->SendError(error);
  }
  rb->SendBulk(value->GetString(&Scratch()));
  if (expire.kind == ExpireSpec::kPersist) {
    SetDeadline(cntx, args[1], 0);
  } else if (deadline_ms > 0) {
    if (deadline_ms <= UnixTimeMs()) {
      Slice().Erase(cntx->db_index, args[1]);
    } else {
      SetDeadline(cntx, args[1], deadline_ms);
    }
  }
}

void CmdSetNx(CmdArgList args, ConnectionContext* cntx) {
  if (Slice().Find(cntx->db_index, args[1])) return cntx->reply_builder()->SendLong(0);
  StoreString(cntx, args[1], args[2], false);
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
  StoreString(cntx, args[1], args[3], false);
  SetDeadline(cntx, args[1], deadline_ms);
  cntx->reply_builder()->SendOk();
}

void CmdSetEx(CmdArgList args, ConnectionContext* cntx) { SetWithExpire(args, cntx, true); }
void CmdPSetEx(CmdArgList args, ConnectionContext* cntx) { SetWithExpire(args, cntx, false); }

void CmdAppend(CmdArgList args, ConnectionContext* cntx) {
  PrimeValue* value = Slice().Find(cntx->db_index, args[1]);
  if (value && value->type() != ObjType::kString) {
    return cntx->reply_builder()->SendError(facade::kWrongTypeErr);
  }
  if (value && value->Size() + args[2].size() > kMaxStringBytes) {
    return cntx->reply_builder()->SendError(facade::kStringTooLongErr);
  }
  if (!value) {
    StoreString(cntx, args[1], args[2], false);
    value = Slice().Find(cntx->db_index, args[1]);
  } else {
    std::string combined(value->GetString(&Scratch()));
    combined.append(args[2]);
    value->SetBuiltString(combined);
  }
  cntx->reply_builder()->SendLong(value->Size());
}

void CmdStrLen(CmdArgList args, ConnectionContext* cntx) {
  bool failed;
  const PrimeValue* value = FindString(cntx, args[1], &failed);
  if (failed) return;
  cntx->reply_builder()->SendLong(value ? value->Size() : 0);
}

// INCR / DECR / INCRBY / DECRBY: adds `delta` to the integer stored at the key.
void IncrBy(CmdArgList args, ConnectionContext* cntx, int64_t delta) {
  ReplyBuilder* rb = cntx->reply_builder();
  PrimeValue* value = Slice().Find(cntx->db_index, args[1]);
  int64_t current = 0;
  if (value) {
    if (value->type() != ObjType::kString) return rb->SendError(facade::kWrongTypeErr);
    // Values store canonical integers as integers, so anything else is not one.
    std::optional<int64_t> parsed = value->TryGetInt();
    if (!parsed) return rb->SendError(facade::kInvalidIntErr);
    current = *parsed;
  }
  if ((delta < 0 && current < 0 && delta < INT64_MIN - current) ||
      (delta > 0 && current > 0 && delta > INT64_MAX - current)) {
    return rb->SendError(facade::kIncrOverflowErr);
  }
  int64_t result = current + delta;
  if (!value) value = Slice().FindOrInsert(cntx->db_index, args[1]).first;
  value->SetInt(result);
  rb->SendLong(result);
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

void CmdIncrByFloat(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<long double> delta = ParseLongDouble(args[2]);
  if (!delta) return rb->SendError(facade::kInvalidFloatErr);
  PrimeValue* value = Slice().Find(cntx->db_index, args[1]);
  long double current = 0;
  if (value) {
    if (value->type() != ObjType::kString) return rb->SendError(facade::kWrongTypeErr);
    std::optional<long double> parsed = ParseLongDouble(value->GetString(&Scratch()));
    if (!parsed) return rb->SendError(facade::kInvalidFloatErr);
    current = *parsed;
  }
  long double result = current + *delta;
  if (std::isnan(result) || std::isinf(result)) {
    return rb->SendError("ERR increment would produce NaN or Infinity");
  }
  std::string text = FormatLongDouble(result);
  if (value) {
    value->SetString(text);
  } else {
    StoreString(cntx, args[1], text, false);
  }
  rb->SendBulk(text);
}

void CmdGetRange(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> start = ParseInt64(args[2]), end = ParseInt64(args[3]);
  if (!start || !end) return rb->SendError(facade::kInvalidIntErr);
  bool failed;
  const PrimeValue* value = FindString(cntx, args[1], &failed);
  if (failed) return;
  std::string_view str = value ? value->GetString(&Scratch()) : std::string_view();
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

void CmdSetRange(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> offset = ParseInt64(args[2]);
  if (!offset) return rb->SendError(facade::kInvalidIntErr);
  if (*offset < 0) return rb->SendError("ERR offset is out of range");
  std::string_view patch = args[3];
  PrimeValue* value = Slice().Find(cntx->db_index, args[1]);
  if (value && value->type() != ObjType::kString) return rb->SendError(facade::kWrongTypeErr);
  size_t current = value ? value->Size() : 0;
  if (patch.empty()) return rb->SendLong(current);  // nothing to write, nothing created
  if (uint64_t(*offset) + patch.size() > kMaxStringBytes) {
    return rb->SendError(facade::kStringTooLongErr);
  }
  if (!value) {
    StoreString(cntx, args[1], "", false);
    value = Slice().Find(cntx->db_index, args[1]);
  }
  std::string str(value->GetString(&Scratch()));
  if (str.size() < *offset + patch.size()) str.resize(*offset + patch.size(), '\0');
  str.replace(*offset, patch.size(), patch);
  value->SetBuiltString(str);
  rb->SendLong(str.size());
}

// --- MSET, MSETNX, MGET. One shard: the handler runs there. Several: one transaction,
// so no reader sees some of the keys set and others not.

// Redis checks the pairs after the arity: "MSET a" is an arity error, "MSET a 1 b" too.
bool CheckPairs(CmdArgList args, ConnectionContext* cntx) {
  if (args.size() % 2 == 1) return true;
  cntx->reply_builder()->SendError(
      facade::CommandRegistry::WrongArityError(args[0]));
  return false;
}

template <typename Indices>
void SetPairs(DbIndex db, CmdArgList args, const Indices& key_indices) {
  for (uint32_t index : key_indices) {
    auto [entry, inserted] = Slice().FindOrInsert(db, args[index]);
    entry->SetString(args[index + 1]);
    if (!inserted && entry->has_expire()) Slice().SetExpire(db, args[index], 0);
  }
}

std::vector<uint32_t> AllKeyIndices(CmdArgList args, uint32_t step) {
  std::vector<uint32_t> indices;
  for (uint32_t i = 1; i < args.size(); i += step) indices.push_back(i);
  return indices;
}

void CmdMSet(CmdArgList args, ConnectionContext* cntx) {
  if (!CheckPairs(args, cntx)) return;
  SetPairs(cntx->db_index, args, AllKeyIndices(args, 2));
  cntx->reply_builder()->SendOk();
}

void CmdMSetAcross(CmdArgList args, ConnectionContext* cntx) {
  if (!CheckPairs(args, cntx)) return;
  CommandTransaction tx(args, cntx);
  tx->Execute([&](Transaction* t, EngineShard* shard) {
    SetPairs(t->db(), args, t->KeyIndices(shard->shard_id()));
  }, true);
  cntx->reply_builder()->SendOk();
}

template <typename Indices>
bool AnyExists(DbIndex db, CmdArgList args, const Indices& key_indices) {
  for (uint32_t index : key_indices) {
    if (Slice().Find(db, args[index])) return true;
  }
  return false;
}

void CmdMSetNx(CmdArgList args, ConnectionContext* cntx) {
  if (!CheckPairs(args, cntx)) return;
  std::vector<uint32_t> indices = AllKeyIndices(args, 2);
  if (AnyExists(cntx->db_index, args, indices)) return cntx->reply_builder()->SendLong(0);
  SetPairs(cntx->db_index, args, indices);
  cntx->reply_builder()->SendLong(1);
}

// Two hops: look on every shard, then set on every shard only if no key existed.
void CmdMSetNxAcross(CmdArgList args, ConnectionContext* cntx) {
  if (!CheckPairs(args, cntx)) return;
  CommandTransaction tx(args, cntx);
  std::vector<char> exists(shard_set->size());
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

void CmdMGet(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  const CmdArgList keys = args.subspan(1);
  rb->StartArray(keys.size());
  LookupPrefetcher prefetcher(Slice(), cntx->db_index, keys.size(),
                              [&](size_t i) { return keys[i]; });
  for (size_t i = 0; i < keys.size(); ++i) {
    prefetcher.Before(i);
    const PrimeValue* value = FindForMGet(cntx->db_index, keys[i]);
    if (value) {
      rb->SendBulk(value->GetString(&Scratch()));
    } else {
      rb->SendNull();
    }
  }
}

// Each shard copies its values out in one hop; the reply is built afterwards.
void CmdMGetAcross(CmdArgList args, ConnectionContext* cntx) {
  CommandTransaction tx(args, cntx);
  std::vector<std::optional<std::string>> values(args.size());
  tx->Execute([&](Transaction* t, EngineShard* shard) {
    const absl::Span<const uint32_t> indices = t->KeyIndices(shard->shard_id());
    LookupPrefetcher prefetcher(Slice(), t->db(), indices.size(),
                                [&](size_t i) { return args[indices[i]]; });
    for (size_t i = 0; i < indices.size(); ++i) {
      prefetcher.Before(i);
      const uint32_t index = indices[i];
      if (const PrimeValue* value = FindForMGet(t->db(), args[index])) {
        values[index].emplace(value->GetString(&Scratch()));
      }
    }
  }, true);
  ReplyBuilder* rb = cntx->reply_builder();
  rb->StartArray(args.size() - 1);
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i]) {
      rb->SendBulk(*values[i]);
    } else {
      rb->SendNull();
    }
  }
}

}  // namespace

void StringFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  auto add = [&](const char* name, const char* syntax, int arity, uint32_t flags, uint32_t acl,
                 const char* summary, const char* since, CommandHandler handler) {
    registry->Register(CommandId{.name = name,
                                 .arity = arity,
                                 .flags = flags,
                                 .first_key = 1,
                                 .last_key = 1,
                                 .key_step = 1,
                                 .acl = acl | kAclString,
                                 .group = "string",
                                 .summary = summary,
                                 .since = since,
                                 .syntax = syntax,
                                 .handler = std::move(handler)});
  };
  constexpr uint32_t kWriteFlags = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kReadFast = kCmdReadOnly | kCmdFast;
  constexpr uint32_t kW = kAclWrite, kR = kAclRead;
  add("SET", "key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]", -3, kWriteFlags, kW | kAclSlow, "Set the string value of a key", "1.0.0", CmdSet);
  add("GET", "key", 2, kReadFast, kR | kAclFast, "Get the value of a key", "1.0.0", CmdGet);
  add("GETSET", "key value", 3, kWriteFlags | kCmdFast, kW | kAclFast,
      "Set the string value of a key and return its old value", "1.0.0", CmdGetSet);
  add("GETDEL", "key", 2, kCmdWrite | kCmdFast, kW | kAclFast, "Get the value of a key and delete the key",
      "6.2.0", CmdGetDel);
  add("GETEX", "key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | PERSIST]", -2, kCmdWrite | kCmdFast, kW | kAclFast,
      "Get the value of a key and optionally set its expiration", "6.2.0", CmdGetEx);
  add("SETNX", "key value", 3, kWriteFlags | kCmdFast, kW | kAclFast,
      "Set the value of a key, only if the key does not exist", "1.0.0", CmdSetNx);
  add("SETEX", "key seconds value", 4, kWriteFlags, kW | kAclSlow,
      "Set the value and expiration of a key", "2.0.0", CmdSetEx);
  add("PSETEX", "key milliseconds value", 4, kWriteFlags, kW | kAclSlow,
      "Set the value and expiration in milliseconds of a key", "2.6.0", CmdPSetEx);
  add("APPEND", "key value", 3, kWriteFlags | kCmdFast, kW | kAclFast, "Append a value to a key", "2.0.0",
      CmdAppend);
  add("STRLEN", "key", 2, kReadFast, kR | kAclFast, "Get the length of the value stored in a key",
      "2.2.0", CmdStrLen);
  add("INCR", "key", 2, kWriteFlags | kCmdFast, kW | kAclFast,
      "Increment the integer value of a key by one", "1.0.0", CmdIncr);
  add("DECR", "key", 2, kWriteFlags | kCmdFast, kW | kAclFast,
      "Decrement the integer value of a key by one", "1.0.0", CmdDecr);
  add("INCRBY", "key increment", 3, kWriteFlags | kCmdFast, kW | kAclFast,
      "Increment the integer value of a key by the given amount", "1.0.0", CmdIncrBy);
  add("DECRBY", "key decrement", 3, kWriteFlags | kCmdFast, kW | kAclFast,
      "Decrement the integer value of a key by the given number", "1.0.0", CmdDecrBy);
  add("INCRBYFLOAT", "key increment", 3, kWriteFlags | kCmdFast, kW | kAclFast,
      "Increment the float value of a key by the given amount", "2.6.0", CmdIncrByFloat);
  add("GETRANGE", "key start end", 4, kCmdReadOnly, kR | kAclSlow,
      "Get a substring of the string stored at a key", "2.4.0", CmdGetRange);
  add("SUBSTR", "key start end", 4, kCmdReadOnly, kR | kAclSlow,
      "Get a substring of the string stored at a key", "1.0.0", CmdGetRange);
  auto add_multi = [&](const char* name, const char* syntax, uint32_t flags, uint32_t acl,
                       int key_step, const char* summary, const char* since,
                       CommandHandler here, CommandHandler across) {
    registry->Register(CommandId{.name = name,
                                 .arity = key_step == 1 ? -2 : -3,
                                 .flags = flags,
                                 .first_key = 1,
                                 .last_key = -1,
                                 .key_step = key_step,
                                 .acl = acl | kAclString,
                                 .group = "string",
                                 .summary = summary,
                                 .since = since,
                                 .syntax = syntax,
                                 .handler = std::move(here),
                                 .cross_shard_handler = std::move(across)});
  };
  add_multi("MSET", "key value [key value ...]", kWriteFlags, kW | kAclSlow, 2,
            "Set multiple keys to multiple values", "1.0.1", CmdMSet, CmdMSetAcross);
  add_multi("MSETNX", "key value [key value ...]", kWriteFlags, kW | kAclSlow, 2,
            "Set multiple keys to multiple values, only if none of the keys exist", "1.0.1",
            CmdMSetNx, CmdMSetNxAcross);
  add_multi("MGET", "key [key ...]", kReadFast, kR | kAclFast, 1,
            "Get the values of all the given keys", "1.0.0", CmdMGet, CmdMGetAcross);
  add("SETRANGE", "key offset value", 4, kWriteFlags, kW | kAclSlow,
      "Overwrite part of a string at key starting at the specified offset", "2.2.0",
      CmdSetRange);
}

}  // namespace damselfly
