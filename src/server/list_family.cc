#include "src/server/list_family.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/collection_limits.h"
#include "src/server/engine_shard.h"
#include "src/server/engine_shard_set.h"
#include "src/server/family_utils.h"
#include "src/server/list_object.h"
#include "src/server/transaction.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;
using End = ListObject::End;

constexpr char kOutOfRangeErr[] = "ERR index out of range";
constexpr char kMustBePositiveErr[] = "ERR value is out of range, must be positive";

int Fill() { return CollectionLimits::ListFill(); }
unsigned Depth() { return CollectionLimits::ListDepth(); }

ListObject* ListOf(const PrimeValue& value) { return value.GetObjectAs<ListObject>(); }
ListObject* ListOf(const DbSlice::Update& entry) { return ListOf(entry.value()); }

const char* PushEvent(End end) { return end == End::kHead ? "lpush" : "rpush"; }
const char* PopEvent(End end) { return end == End::kHead ? "lpop" : "rpop"; }

// Replies one element as a bulk string (integers in decimal).
void SendValue(ReplyBuilder* rb, const core::Listpack::Value& value) {
  if (!value.is_int) return rb->SendBulk(value.sval);
  char buf[24];
  char* end = absl::numbers_internal::FastIntToBuffer(value.ival, buf);
  rb->SendBulk(std::string_view(buf, end - buf));
}

// LEFT / RIGHT as LMOVE and LMPOP take them.
std::optional<End> ParseEnd(std::string_view arg) {
  if (ArgIs(arg, "LEFT")) return End::kHead;
  if (ArgIs(arg, "RIGHT")) return End::kTail;
  return std::nullopt;
}

// Ends a change of a list: reports `event`, then deletes the list if it is empty (Redis
// notifies "lpop" then "del"). `shrunk`: elements were removed (it may go back to a
// listpack).
void FinishChange(DbSlice::Update& entry, ListObject* list, const char* event, bool shrunk) {
  entry.Changed(event);
  if (list->Size() == 0) return entry.Erase("del");
  if (shrunk) list->TryShrink(Fill());
}

// The list under `key` for a change: kKeyNotFound, kWrongType, or its Update.
OpResult<DbSlice::Update> FindMutableList(DbIndex db, std::string_view key) {
  return Slice().FindMutableTyped(db, key, ObjType::kList);
}

// --- pushes

// Pushes `values` at `end` of `key` (created unless only_if_exists). Returns the new
// length; kKeyNotFound (only_if_exists) or kWrongType otherwise.
OpResult<size_t> OpPush(DbIndex db, std::string_view key, End end, CmdArgList values,
                        bool only_if_exists) {
  DbSlice::Update entry =
      only_if_exists ? Slice().FindMutable(db, key) : Slice().AddOrFind(db, key);
  if (!entry) return OpStatus::kKeyNotFound;
  ListObject* list;
  if (entry.inserted()) {
    list = MakeList(&entry.value());
  } else if (entry->type() != ObjType::kList) {
    return OpStatus::kWrongType;
  } else {
    list = ListOf(entry);
  }
  size_t bytes = 0;
  for (std::string_view value : values) bytes += value.size();
  list->PrepareAdd(bytes, values.size(), Fill(), Depth());
  for (std::string_view value : values) list->Push(end, value);
  FinishChange(entry, list, PushEvent(end), false);
  return list->Size();
}

void Push(CmdArgList args, ConnectionContext* cntx, End end, bool only_if_exists) {
  OpResult<size_t> result = OpPush(cntx->db_index, args[1], end, args.subspan(2), only_if_exists);
  ReplyBuilder* rb = cntx->reply_builder();
  if (result) return rb->SendLong(int64_t(*result));
  if (result.status() == OpStatus::kKeyNotFound) return rb->SendLong(0);
  SendOpError(rb, result.status());
}

void CmdLPush(CmdArgList args, ConnectionContext* cntx) { Push(args, cntx, End::kHead, false); }
void CmdRPush(CmdArgList args, ConnectionContext* cntx) { Push(args, cntx, End::kTail, false); }
void CmdLPushX(CmdArgList args, ConnectionContext* cntx) { Push(args, cntx, End::kHead, true); }
void CmdRPushX(CmdArgList args, ConnectionContext* cntx) { Push(args, cntx, End::kTail, true); }

// --- pops

// Pops up to `count` elements from `end` of the list in `entry` into *out.
void PopInto(DbSlice::Update& entry, End end, size_t count, std::vector<std::string>* out) {
  ListObject* list = ListOf(entry);
  count = std::min(count, list->Size());
  out->resize(count);
  for (size_t i = 0; i < count; ++i) list->Pop(end, &(*out)[i]);
  FinishChange(entry, list, PopEvent(end), true);
}

// LPOP / RPOP key [count]
void Pop(CmdArgList args, ConnectionContext* cntx, End end) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() > 3) {
    return rb->SendError(facade::CommandRegistry::WrongArityError(args[0]));
  }
  const bool has_count = args.size() == 3;
  int64_t count = 1;
  if (has_count) {
    std::optional<int64_t> parsed = ParseInt64(args[2]);
    if (!parsed || *parsed < 0) return rb->SendError(kMustBePositiveErr);
    count = *parsed;
  }
  OpResult<DbSlice::Update> found = FindMutableList(cntx->db_index, args[1]);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) return SendOpError(rb, found.status());
    return has_count ? rb->SendNullArray() : rb->SendNull();
  }
  if (!has_count) {
    ListObject* list = ListOf(*found);
    std::string& value = Scratch();
    list->Pop(end, &value);
    FinishChange(*found, list, PopEvent(end), true);
    return rb->SendBulk(value);
  }
  if (count == 0) return rb->SendEmptyArray();
  std::vector<std::string> values;
  PopInto(*found, end, size_t(count), &values);
  rb->StartArray(values.size());
  for (const std::string& value : values) rb->SendBulk(value);
}

void CmdLPop(CmdArgList args, ConnectionContext* cntx) { Pop(args, cntx, End::kHead); }
void CmdRPop(CmdArgList args, ConnectionContext* cntx) { Pop(args, cntx, End::kTail); }

// --- reads

void CmdLLen(CmdArgList args, ConnectionContext* cntx) {
  OpResult<const PrimeValue*> found = Slice().FindTyped(cntx->db_index, args[1], ObjType::kList);
  ReplyBuilder* rb = cntx->reply_builder();
  if (found) return rb->SendLong(int64_t(ListOf(**found)->Size()));
  if (found.status() == OpStatus::kKeyNotFound) return rb->SendLong(0);
  SendOpError(rb, found.status());
}

// Clamps [start, end] (negative from the tail) to a list of `size`, as LRANGE and LTRIM
// do. False when the range is empty.
bool ClampRange(int64_t size, int64_t* start, int64_t* end) {
  if (*start < 0) *start += size;
  if (*end < 0) *end += size;
  if (*start < 0) *start = 0;
  if (*start > *end || *start >= size) return false;
  if (*end >= size) *end = size - 1;
  return true;
}

void CmdLRange(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> start = ParseInt64(args[2]), end = ParseInt64(args[3]);
  if (!start || !end) return rb->SendError(facade::kInvalidIntErr);
  OpResult<const PrimeValue*> found = Slice().FindTyped(cntx->db_index, args[1], ObjType::kList);
  if (!found) {
    if (found.status() == OpStatus::kKeyNotFound) return rb->SendEmptyArray();
    return SendOpError(rb, found.status());
  }
  ListObject* list = ListOf(**found);
  if (!ClampRange(int64_t(list->Size()), &*start, &*end)) return rb->SendEmptyArray();
  const int64_t length = *end - *start + 1;
  rb->StartArray(length);
  ListObject::Cursor cursor = list->At(*start);
  for (int64_t i = 0; i < length; ++i, cursor.Next()) SendValue(rb, cursor.Get());
}

void CmdLIndex(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<const PrimeValue*> found = Slice().FindTyped(cntx->db_index, args[1], ObjType::kList);
  if (!found) {
    if (found.status() == OpStatus::kKeyNotFound) return rb->SendNull();
    return SendOpError(rb, found.status());
  }
  std::optional<int64_t> index = ParseInt64(args[2]);
  if (!index) return rb->SendError(facade::kInvalidIntErr);
  ListObject::Cursor cursor = ListOf(**found)->At(*index);
  if (!cursor.Valid()) return rb->SendNull();
  SendValue(rb, cursor.Get());
}

// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]
void CmdLPos(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  int64_t rank = 1, count = -1, maxlen = 0;
  for (size_t i = 3; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    if (ArgIs(args[i], "RANK") && more) {
      std::optional<int64_t> parsed = ParseInt64(args[++i]);
      if (!parsed) return rb->SendError(facade::kInvalidIntErr);
      if (*parsed == 0 || *parsed == INT64_MIN) {
        return rb->SendError(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list");
      }
      rank = *parsed;
    } else if (ArgIs(args[i], "COUNT") && more) {
      std::optional<int64_t> parsed = ParseInt64(args[++i]);
      if (!parsed || *parsed < 0) return rb->SendError("ERR COUNT can't be negative");
      count = *parsed;
    } else if (ArgIs(args[i], "MAXLEN") && more) {
      std::optional<int64_t> parsed = ParseInt64(args[++i]);
      if (!parsed || *parsed < 0) return rb->SendError("ERR MAXLEN can't be negative");
      maxlen = *parsed;
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  OpResult<const PrimeValue*> found = Slice().FindTyped(cntx->db_index, args[1], ObjType::kList);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) return SendOpError(rb, found.status());
    return count >= 0 ? rb->SendEmptyArray() : rb->SendNull();
  }
  ListObject* list = ListOf(**found);
  const int64_t size = int64_t(list->Size());
  const End from = rank > 0 ? End::kHead : End::kTail;
  const int64_t skip = (rank > 0 ? rank : -rank) - 1;  // matches to pass over first
  std::vector<int64_t> positions;
  int64_t matches = 0, index = 0;
  for (ListObject::Cursor cursor = list->Begin(from);
       cursor.Valid() && (maxlen == 0 || index < maxlen); cursor.Next(), ++index) {
    if (!cursor.Get().Equals(args[2]) || matches++ < skip) continue;
    positions.push_back(from == End::kHead ? index : size - index - 1);
    if (count < 0 || (count > 0 && int64_t(positions.size()) == count)) break;
  }
  if (count < 0) {
    return positions.empty() ? rb->SendNull() : rb->SendLong(positions[0]);
  }
  rb->StartArray(positions.size());
  for (int64_t position : positions) rb->SendLong(position);
}

// --- changes in place

void CmdLSet(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<DbSlice::Update> found = FindMutableList(cntx->db_index, args[1]);
  if (!found) {
    if (found.status() == OpStatus::kKeyNotFound) return rb->SendError(facade::kNoSuchKeyErr);
    return SendOpError(rb, found.status());
  }
  std::optional<int64_t> index = ParseInt64(args[2]);
  if (!index) return rb->SendError(facade::kInvalidIntErr);
  ListObject* list = ListOf(*found);
  const int64_t size = int64_t(list->Size());
  if (*index >= size || *index < -size) return rb->SendError(kOutOfRangeErr);
  list->PrepareAdd(args[3].size(), 1, Fill(), Depth());
  list->At(*index).Replace(args[3]);
  FinishChange(*found, list, "lset", true);
  rb->SendOk();
}

// LINSERT key BEFORE | AFTER pivot element
void CmdLInsert(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  core::Listpack::Where where;
  if (ArgIs(args[2], "BEFORE")) {
    where = core::Listpack::Where::kBefore;
  } else if (ArgIs(args[2], "AFTER")) {
    where = core::Listpack::Where::kAfter;
  } else {
    return rb->SendError(facade::kSyntaxErr);
  }
  OpResult<DbSlice::Update> found = FindMutableList(cntx->db_index, args[1]);
  if (!found) {
    if (found.status() == OpStatus::kKeyNotFound) return rb->SendLong(0);
    return SendOpError(rb, found.status());
  }
  ListObject* list = ListOf(*found);
  list->PrepareAdd(args[4].size(), 1, Fill(), Depth());
  ListObject::Cursor cursor = list->Begin(End::kHead);
  while (cursor.Valid() && !cursor.Get().Equals(args[3])) cursor.Next();
  if (!cursor.Valid()) return rb->SendLong(-1);
  cursor.Insert(args[4], where);
  FinishChange(*found, list, "linsert", false);
  rb->SendLong(int64_t(list->Size()));
}

// LREM key count element
void CmdLRem(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> count = ParseInt64(args[2]);
  if (!count) return rb->SendError(facade::kInvalidIntErr);
  OpResult<DbSlice::Update> found = FindMutableList(cntx->db_index, args[1]);
  if (!found) {
    if (found.status() == OpStatus::kKeyNotFound) return rb->SendLong(0);
    return SendOpError(rb, found.status());
  }
  ListObject* list = ListOf(*found);
  const uint64_t limit = *count == 0  ? UINT64_MAX
                         : *count < 0 ? 0 - uint64_t(*count)
                                      : uint64_t(*count);
  uint64_t removed = 0;
  for (ListObject::Cursor cursor = list->Begin(*count < 0 ? End::kTail : End::kHead);
       cursor.Valid() && removed < limit;) {
    if (cursor.Get().Equals(args[3])) {
      cursor.Erase();
      ++removed;
    } else {
      cursor.Next();
    }
  }
  if (removed > 0) FinishChange(*found, list, "lrem", true);
  rb->SendLong(int64_t(removed));
}

// LTRIM key start stop
void CmdLTrim(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> start = ParseInt64(args[2]), end = ParseInt64(args[3]);
  if (!start || !end) return rb->SendError(facade::kInvalidIntErr);
  OpResult<DbSlice::Update> found = FindMutableList(cntx->db_index, args[1]);
  if (!found) {
    if (found.status() == OpStatus::kKeyNotFound) return rb->SendOk();
    return SendOpError(rb, found.status());
  }
  ListObject* list = ListOf(*found);
  const int64_t size = int64_t(list->Size());
  if (!ClampRange(size, &*start, &*end)) {
    list->DeleteRange(0, size);
  } else {
    list->DeleteRange(*end + 1, size - *end - 1);
    list->DeleteRange(0, *start);
  }
  // Redis reports ltrim (and touches WATCHers) even when nothing was removed.
  FinishChange(*found, list, "ltrim", true);
  rb->SendOk();
}

// --- LMOVE, RPOPLPUSH, LMPOP: one handler each against a CommandTransaction.

// Moves one element from `from` of args[1] to `to` of args[2]. Hop 1 checks both keys
// (the source's type and end element, the destination's type); only when both are
// lists (or the destination is missing) does hop 2 pop and push. Locks are held between
// the hops, so the element read in hop 1 is the one popped in hop 2, and a WRONGTYPE
// destination leaves the source untouched.
void Move(CmdArgList args, ConnectionContext* cntx, End from, End to) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view source = args[1], destination = args[2];
  const ShardId source_shard = shard_set->ShardOf(source);
  const ShardId destination_shard = shard_set->ShardOf(destination);
  OpStatus source_status = OpStatus::kKeyNotFound;
  bool destination_wrong = false;
  std::string value;
  CommandTransaction tx(args, cntx);
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (shard->shard_id() == source_shard) {
          OpResult<const PrimeValue*> found =
              Slice().FindTyped(t->db(), source, ObjType::kList, true);
          source_status = found.status();
          if (found) {
            core::ListpackValueTo(ListOf(**found)->At(from == End::kHead ? 0 : -1).Get(), &value);
          }
        }
        if (shard->shard_id() == destination_shard) {
          const PrimeValue* found = Slice().Find(t->db(), destination);
          destination_wrong = found && found->type() != ObjType::kList;
        }
      },
      false);
  const bool move = source_status == OpStatus::kOk && !destination_wrong;
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (!move) return;
        if (source == destination) {
          // A rotation of one key: it never empties, so it keeps its TTL (as in Redis).
          DbSlice::Update entry = Slice().FindMutable(t->db(), source);
          if (!entry) return;  // expired since hop 1: gone, as it would be after the move
          ListObject* list = ListOf(entry);
          list->Pop(from, &Scratch());
          list->PrepareAdd(value.size(), 1, Fill(), Depth());
          list->Push(to, value);
          entry.Changed(PushEvent(to));  // Redis notifies the push, then the pop
          entry.Changed(PopEvent(from));
          return;
        }
        // The push first, as Redis notifies them.
        if (shard->shard_id() == destination_shard) {
          std::string_view element = value;
          OpPush(t->db(), destination, to, CmdArgList(&element, 1), false);
        }
        if (shard->shard_id() == source_shard) {
          // The move happens as of hop 1; a source that expired since then is gone
          // either way, so the element read then still moves.
          if (DbSlice::Update entry = Slice().FindMutable(t->db(), source)) {
            ListObject* list = ListOf(entry);
            list->Pop(from, &Scratch());
            FinishChange(entry, list, PopEvent(from), true);
          }
        }
      },
      true);
  if (source_status == OpStatus::kKeyNotFound) return rb->SendNull();
  if (!move) return rb->SendError(facade::kWrongTypeErr);
  rb->SendBulk(value);
}

// LMOVE source destination LEFT | RIGHT LEFT | RIGHT
void CmdLMove(CmdArgList args, ConnectionContext* cntx) {
  std::optional<End> from = ParseEnd(args[3]), to = ParseEnd(args[4]);
  if (!from || !to) return cntx->reply_builder()->SendError(facade::kSyntaxErr);
  Move(args, cntx, *from, *to);
}

void CmdRPopLPush(CmdArgList args, ConnectionContext* cntx) {
  Move(args, cntx, End::kTail, End::kHead);
}

// LMPOP numkeys key [key ...] LEFT | RIGHT [COUNT count]: pops from the first non-empty
// list in argument order. Hop 1 looks at every key; hop 2 pops on the chosen key's shard.
void CmdLMPop(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> numkeys = ParseInt64(args[1]);
  if (!numkeys || *numkeys <= 0) return rb->SendError("ERR numkeys should be greater than 0");
  const uint64_t where_index = uint64_t(*numkeys) + 2;
  if (where_index >= args.size()) return rb->SendError(facade::kSyntaxErr);
  std::optional<End> end = ParseEnd(args[where_index]);
  if (!end) return rb->SendError(facade::kSyntaxErr);
  int64_t count = -1;
  for (size_t i = where_index + 1; i < args.size(); ++i) {
    if (count == -1 && ArgIs(args[i], "COUNT") && i + 1 < args.size()) {
      std::optional<int64_t> parsed = ParseInt64(args[++i]);
      if (!parsed || *parsed <= 0) return rb->SendError("ERR count should be greater than 0");
      count = *parsed;
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  if (count == -1) count = 1;

  // Per argument position: 0 missing, 1 a list, 2 another type.
  std::vector<uint8_t> state(args.size(), 0);
  CommandTransaction tx(args, cntx);
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        for (uint32_t index : t->KeyIndices(shard->shard_id())) {
          OpResult<const PrimeValue*> found =
              Slice().FindTyped(t->db(), args[index], ObjType::kList, true);
          state[index] = found ? 1 : found.status() == OpStatus::kWrongType ? 2 : 0;
        }
      },
      false);
  size_t chosen = 0;
  for (size_t i = 2; i < where_index && chosen == 0; ++i) {
    if (state[i] != 0) chosen = i;
  }
  const bool pop = chosen != 0 && state[chosen] == 1;
  const ShardId chosen_shard = pop ? shard_set->ShardOf(args[chosen]) : 0;
  std::vector<std::string> values;
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (!pop || shard->shard_id() != chosen_shard) return;
        // A key that expired since hop 1 leaves every key empty now (the others are
        // locked): the reply is then the null of no list to pop.
        DbSlice::Update entry = Slice().FindMutable(t->db(), args[chosen]);
        if (entry) PopInto(entry, *end, size_t(count), &values);
      },
      true);
  if (!pop && chosen != 0) return rb->SendError(facade::kWrongTypeErr);
  if (values.empty()) return rb->SendNullArray();
  rb->StartArray(2);
  rb->SendBulk(args[chosen]);
  rb->StartArray(values.size());
  for (const std::string& value : values) rb->SendBulk(value);
}

}  // namespace

void ListFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  RegisterTypedObjectFactory(ObjType::kList, ListObject::Deserialize);
  CommandRegistry& r = *registry;
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kAclW = kAclWrite | kAclList, kAclR = kAclRead | kAclList;
  const KeySpec kPushed = Keys(1).WithFlags(kKeyRW | kKeyInsert);
  const KeySpec kPopped = Keys(1).WithFlags(kKeyRW | kKeyAccess | kKeyDelete);
  const KeySpecs kMoved = {Keys(1).WithFlags(kKeyRW | kKeyAccess | kKeyDelete),
                           Keys(2).WithFlags(kKeyRW | kKeyInsert)};
  const KeySpec kMPopped = {.flags = kKeyRW | kKeyAccess | kKeyDelete,
                            .begin_index = 1,
                            .keynum = true,
                            .keynum_index = 0,
                            .first_key_index = 1};
  r.Add("LPUSH", -3, kWrite | kCmdFast, kPushed, kAclW | kAclFast, CmdLPush);
  r.Add("RPUSH", -3, kWrite | kCmdFast, kPushed, kAclW | kAclFast, CmdRPush);
  r.Add("LPUSHX", -3, kWrite | kCmdFast, kPushed, kAclW | kAclFast, CmdLPushX);
  r.Add("RPUSHX", -3, kWrite | kCmdFast, kPushed, kAclW | kAclFast, CmdRPushX);
  r.Add("LPOP", -2, kCmdWrite | kCmdFast, kPopped, kAclW | kAclFast, CmdLPop);
  r.Add("RPOP", -2, kCmdWrite | kCmdFast, kPopped, kAclW | kAclFast, CmdRPop);
  r.Add("LLEN", 2, kCmdReadOnly | kCmdFast, Keys(1).WithFlags(kKeyRO), kAclR | kAclFast, CmdLLen);
  r.Add("LRANGE", 4, kCmdReadOnly, Keys(1).WithFlags(kKeyRO | kKeyAccess), kAclR | kAclSlow,
        CmdLRange);
  r.Add("LINDEX", 3, kCmdReadOnly, Keys(1).WithFlags(kKeyRO | kKeyAccess), kAclR | kAclSlow,
        CmdLIndex);
  r.Add("LPOS", -3, kCmdReadOnly, Keys(1).WithFlags(kKeyRO), kAclR | kAclSlow, CmdLPos);
  r.Add("LSET", 4, kWrite, Keys(1).WithFlags(kKeyRW | kKeyUpdate), kAclW | kAclSlow, CmdLSet);
  r.Add("LINSERT", 5, kWrite, kPushed, kAclW | kAclSlow, CmdLInsert);
  r.Add("LREM", 4, kCmdWrite, Keys(1).WithFlags(kKeyRW | kKeyDelete), kAclW | kAclSlow, CmdLRem);
  r.Add("LTRIM", 4, kCmdWrite, Keys(1).WithFlags(kKeyRW | kKeyDelete), kAclW | kAclSlow, CmdLTrim);
  r.Add("LMOVE", 5, kWrite, kMoved, kAclW | kAclSlow, CmdLMove);
  r.Add("RPOPLPUSH", 3, kWrite, kMoved, kAclW | kAclSlow, CmdRPopLPush);
  r.Add("LMPOP", -4, kCmdWrite, kMPopped, kAclW | kAclSlow, CmdLMPop);
}

}  // namespace damselfly
