#include "src/server/list_family.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/blocking_controller.h"
#include "src/server/collection_limits.h"
#include "src/server/engine_shard.h"
#include "src/server/engine_shard_set.h"
#include "src/server/family_utils.h"
#include "src/server/journal.h"
#include "src/server/list_object.h"
#include "src/server/tracking.h"
#include "src/server/transaction.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;
using End = ListView::End;

constexpr char kOutOfRangeErr[] = "ERR index out of range";
constexpr char kMustBePositiveErr[] = "ERR value is out of range, must be positive";

int Fill() { return CollectionLimits::ListFill(); }
unsigned Depth() { return CollectionLimits::ListDepth(); }


const char* PushEvent(End end) { return end == End::kHead ? "lpush" : "rpush"; }
const char* PopEvent(End end) { return end == End::kHead ? "lpop" : "rpop"; }
const char* EndName(End end) { return end == End::kHead ? "LEFT" : "RIGHT"; }

// What the pops and moves that are not replayed as sent (blocking forms, served waiters,
// keys on several shards) send replicas instead (ShardJournal::RewriteAs): the pop or
// push that each shard made, or the LMOVE of a move within one shard, as Redis
// propagates BLPOP as LPOP and BLMOVE as LMOVE. Never the list's whole state.
void JournalPop(DbIndex db, std::string_view key, End end, size_t count) {
  if (ShardJournal::recording() == nullptr) [[likely]]
    return;
  ShardJournal::RewriteAs(db, {end == End::kHead ? "LPOP" : "RPOP", key, absl::StrCat(count)});
}
void JournalPush(DbIndex db, std::string_view key, End end, std::string_view value) {
  if (ShardJournal::recording() == nullptr) [[likely]]
    return;
  ShardJournal::RewriteAs(db, {end == End::kHead ? "LPUSH" : "RPUSH", key, value});
}
void JournalMove(DbIndex db, std::string_view source, std::string_view destination, End from,
                 End to) {
  if (ShardJournal::recording() == nullptr) [[likely]]
    return;
  ShardJournal::RewriteAs(db, {"LMOVE", source, destination, EndName(from), EndName(to)});
}

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
void FinishChange(DbSlice::Update& entry, ListRef& list, const char* event, bool shrunk) {
  entry.Changed(event);
  if (list.Size() == 0) return entry.Erase("del");
  if (shrunk) list.TryShrink(Fill());
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
  if (entry.inserted()) {
    ListRef::MakeEmpty(&entry.value());
  } else if (entry->type() != ObjType::kList) {
    return OpStatus::kWrongType;
  }
  ListRef list(&entry.value());
  size_t bytes = 0;
  for (std::string_view value : values) bytes += value.size();
  list.PrepareAdd(bytes, values.size(), Fill(), Depth());
  for (std::string_view value : values) list.Push(end, value);
  FinishChange(entry, list, PushEvent(end), false);
  return list.Size();
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
  ListRef list(&entry.value());
  count = std::min(count, list.Size());
  out->resize(count);
  for (size_t i = 0; i < count; ++i) list.Pop(end, &(*out)[i]);
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
    ListRef list(&found->value());
    std::string& value = Scratch();
    list.Pop(end, &value);
    FinishChange(*found, list, PopEvent(end), true);
    return rb->SendBulk(value);
  }
  if (count == 0) return rb->SendEmptyArray();
  std::vector<std::string> values;
  PopInto(*found, end, size_t(count), &values);
  rb->SendBulkArray(values);
}

void CmdLPop(CmdArgList args, ConnectionContext* cntx) { Pop(args, cntx, End::kHead); }
void CmdRPop(CmdArgList args, ConnectionContext* cntx) { Pop(args, cntx, End::kTail); }

// --- reads

void CmdLLen(CmdArgList args, ConnectionContext* cntx) {
  OpResult<const PrimeValue*> found = Slice().FindTyped(cntx->db_index, args[1], ObjType::kList);
  ReplyBuilder* rb = cntx->reply_builder();
  if (found) return rb->SendLong(int64_t(ListView(**found).Size()));
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
  const ListView list(**found);
  if (!ClampRange(int64_t(list.Size()), &*start, &*end)) return rb->SendEmptyArray();
  const int64_t length = *end - *start + 1;
  rb->StartArray(length);
  ListView::Cursor cursor = list.At(*start);
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
  const ListView list(**found);
  ListView::Cursor cursor = list.At(*index);
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
  const ListView list(**found);
  const int64_t size = int64_t(list.Size());
  const End from = rank > 0 ? End::kHead : End::kTail;
  const int64_t skip = (rank > 0 ? rank : -rank) - 1;  // matches to pass over first
  std::vector<int64_t> positions;
  int64_t matches = 0, index = 0;
  for (ListView::Cursor cursor = list.Begin(from);
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
  ListRef list(&found->value());
  const int64_t size = int64_t(list.Size());
  if (*index >= size || *index < -size) return rb->SendError(kOutOfRangeErr);
  list.PrepareAdd(args[3].size(), 1, Fill(), Depth());
  list.At(*index).Replace(args[3]);
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
  ListRef list(&found->value());
  list.PrepareAdd(args[4].size(), 1, Fill(), Depth());
  ListView::Cursor cursor = list.Begin(End::kHead);
  while (cursor.Valid() && !cursor.Get().Equals(args[3])) cursor.Next();
  if (!cursor.Valid()) return rb->SendLong(-1);
  cursor.Insert(args[4], where);
  FinishChange(*found, list, "linsert", false);
  rb->SendLong(int64_t(list.Size()));
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
  ListRef list(&found->value());
  const uint64_t limit = *count == 0  ? UINT64_MAX
                         : *count < 0 ? 0 - uint64_t(*count)
                                      : uint64_t(*count);
  uint64_t removed = 0;
  for (ListView::Cursor cursor = list.Begin(*count < 0 ? End::kTail : End::kHead);
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
  ListRef list(&found->value());
  const int64_t size = int64_t(list.Size());
  if (!ClampRange(size, &*start, &*end)) {
    list.DeleteRange(0, size);
  } else {
    list.DeleteRange(*end + 1, size - *end - 1);
    list.DeleteRange(0, *start);
  }
  // Redis reports ltrim (and touches WATCHers) even when nothing was removed.
  FinishChange(*found, list, "ltrim", true);
  rb->SendOk();
}

// --- LMOVE, RPOPLPUSH, LMPOP: one handler each against a CommandTransaction.

// What a move did: kOk (`value` moved), kKeyNotFound (no source list) or kWrongType.
struct MoveOutcome {
  OpStatus status = OpStatus::kKeyNotFound;
  std::string value;
};

// Moves one element from `from` of args[1] to `to` of args[2]. Hop 1 checks both keys
// (the source's type and end element, the destination's type); only when both are
// lists (or the destination is missing) does hop 2 pop and push. Locks are held between
// the hops, so the element read in hop 1 is the one popped in hop 2, and a WRONGTYPE
// destination leaves the source untouched. With `waiter` (BLMOVE), a missing source gets
// it registered in hop 2, in the same transaction. Keys on one shard: one hop
// (LookThenAct).
MoveOutcome MoveElement(CmdArgList args, ConnectionContext* cntx, End from, End to,
                        const WaiterPtr* waiter = nullptr) {
  std::string_view source = args[1], destination = args[2];
  const ShardId source_shard = shard_set->ShardOf(source);
  const ShardId destination_shard = shard_set->ShardOf(destination);
  MoveOutcome outcome;
  bool destination_wrong = false;
  bool move = false;
  const std::string& value = outcome.value;
  CommandTransaction tx(args, cntx);
  LookThenAct(
      tx.Get(), source_shard == destination_shard,
      [&](Transaction* t, EngineShard* shard) {
        if (shard->shard_id() == source_shard) {
          OpResult<const PrimeValue*> found =
              Slice().FindTyped(t->db(), source, ObjType::kList, true);
          outcome.status = found.status();
          if (found) {
            core::ListpackValueTo(ListView(**found).At(from == End::kHead ? 0 : -1).Get(),
                                  &outcome.value);
          }
        }
        if (shard->shard_id() == destination_shard) {
          const PrimeValue* found = Slice().Find(t->db(), destination);
          destination_wrong = found && found->type() != ObjType::kList;
        }
      },
      [&] { move = outcome.status == OpStatus::kOk && !destination_wrong; },
      [&](Transaction* t, EngineShard* shard) {
        if (!move) {
          if (waiter && outcome.status == OpStatus::kKeyNotFound &&
              shard->shard_id() == source_shard) {
            shard->blocking().Register(*waiter, source);
          }
          return;
        }
        if (source == destination) {
          // A rotation of one key: it never empties, so it keeps its TTL (as in Redis).
          DbSlice::Update entry = Slice().FindMutable(t->db(), source);
          if (!entry) return;  // expired since the look: gone, as after the move
          ListRef list(&entry.value());
          list.Pop(from, &Scratch());
          list.PrepareAdd(value.size(), 1, Fill(), Depth());
          list.Push(to, value);
          entry.Changed(PushEvent(to));  // Redis notifies the push, then the pop
          entry.Changed(PopEvent(from));
          JournalMove(t->db(), source, destination, from, to);
          return;
        }
        const bool one_shard = source_shard == destination_shard;
        // The push first, as Redis notifies them.
        if (shard->shard_id() == destination_shard) {
          std::string_view element = value;
          OpPush(t->db(), destination, to, CmdArgList(&element, 1), false);
          if (!one_shard) JournalPush(t->db(), destination, to, value);
        }
        if (shard->shard_id() == source_shard) {
          // The move happens as of the look; a source that expired since then is
          // gone either way, so the element read then still moves.
          if (DbSlice::Update entry = Slice().FindMutable(t->db(), source)) {
            ListRef list(&entry.value());
            list.Pop(from, &Scratch());
            FinishChange(entry, list, PopEvent(from), true);
            one_shard ? JournalMove(t->db(), source, destination, from, to)
                      : JournalPop(t->db(), source, from, 1);
          } else if (one_shard) {
            JournalPush(t->db(), destination, to, value);
          }
        }
      });
  if (outcome.status == OpStatus::kOk && destination_wrong) outcome.status = OpStatus::kWrongType;
  return outcome;
}

void Move(CmdArgList args, ConnectionContext* cntx, End from, End to) {
  ReplyBuilder* rb = cntx->reply_builder();
  MoveOutcome outcome = MoveElement(args, cntx, from, to);
  if (outcome.status == OpStatus::kKeyNotFound) return rb->SendNull();
  if (outcome.status != OpStatus::kOk) return SendOpError(rb, outcome.status);
  rb->SendBulk(outcome.value);
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

// The arguments of LMPOP (numkeys at args[first]) and BLMPOP (at args[2]).
struct MPopArgs {
  size_t keys_begin = 0, keys_end = 0;  // argument positions of the keys
  End end = End::kHead;
  size_t count = 1;
};

// numkeys key [key ...] LEFT | RIGHT [COUNT count] from args[first]; replies the error
// and returns nullopt when malformed.
std::optional<MPopArgs> ParseMPop(CmdArgList args, size_t first, ReplyBuilder* rb) {
  std::optional<int64_t> numkeys = ParseInt64(args[first]);
  if (!numkeys || *numkeys <= 0) {
    rb->SendError("ERR numkeys should be greater than 0");
    return std::nullopt;
  }
  MPopArgs parsed;
  parsed.keys_begin = first + 1;
  const uint64_t where_index = uint64_t(*numkeys) + first + 1;
  std::optional<End> end = where_index < args.size() ? ParseEnd(args[where_index]) : std::nullopt;
  if (!end) {
    rb->SendError(facade::kSyntaxErr);
    return std::nullopt;
  }
  parsed.keys_end = where_index;
  parsed.end = *end;
  bool has_count = false;
  for (size_t i = where_index + 1; i < args.size(); ++i) {
    if (!has_count && ArgIs(args[i], "COUNT") && i + 1 < args.size()) {
      std::optional<int64_t> count = ParseInt64(args[++i]);
      if (!count || *count <= 0) {
        rb->SendError("ERR count should be greater than 0");
        return std::nullopt;
      }
      parsed.count = size_t(*count);
      has_count = true;
    } else {
      rb->SendError(facade::kSyntaxErr);
      return std::nullopt;
    }
  }
  return parsed;
}

// What a multi-key pop found: the key popped from (argument position, 0: none), the
// elements, or WRONGTYPE for a key of another type before any list.
struct PopOutcome {
  size_t chosen = 0;
  bool wrong_type = false;
  std::vector<std::string> values;
};

// Pops up to `count` elements from `end` of the first non-empty list among the keys at
// [keys_begin, keys_end) of args (LMPOP, BLPOP, BRPOP, BLMPOP). Hop 1 looks at every
// key; hop 2 pops on the chosen key's shard, or, with `waiter` and no key to pop from,
// registers it on every shard of the keys, in the same transaction (one hop for keys on
// one shard: LookThenAct).
PopOutcome PopFirstList(CmdArgList args, ConnectionContext* cntx, size_t keys_begin,
                        size_t keys_end, End end, size_t count, const WaiterPtr* waiter) {
  // Per argument position: 0 missing, 1 a list, 2 another type.
  std::vector<uint8_t> state(args.size(), 0);
  PopOutcome outcome;
  bool pop = false;
  ShardId chosen_shard = 0;
  CommandTransaction tx(args, cntx);
  LookThenAct(
      tx.Get(), OnOneShard(args, keys_begin, keys_end),
      [&](Transaction* t, EngineShard* shard) {
        for (uint32_t index : t->KeyIndices(shard->shard_id())) {
          OpResult<const PrimeValue*> found =
              Slice().FindTyped(t->db(), args[index], ObjType::kList, true);
          state[index] = found ? 1 : found.status() == OpStatus::kWrongType ? 2 : 0;
        }
      },
      [&] {
        for (size_t i = keys_begin; i < keys_end && outcome.chosen == 0; ++i) {
          if (state[i] != 0) outcome.chosen = i;
        }
        outcome.wrong_type = outcome.chosen != 0 && state[outcome.chosen] == 2;
        pop = outcome.chosen != 0 && !outcome.wrong_type;
        if (pop) chosen_shard = shard_set->ShardOf(args[outcome.chosen]);
      },
      [&](Transaction* t, EngineShard* shard) {
        if (!pop) {
          if (waiter && outcome.chosen == 0) {
            for (uint32_t index : t->KeyIndices(shard->shard_id())) {
              shard->blocking().Register(*waiter, args[index]);
            }
          }
          return;
        }
        if (shard->shard_id() != chosen_shard) return;
        // A key that expired since the look leaves every key empty now (the others are
        // locked): the reply is then the null of no list to pop.
        DbSlice::Update entry = Slice().FindMutable(t->db(), args[outcome.chosen]);
        if (!entry) return;
        PopInto(entry, end, count, &outcome.values);
        JournalPop(t->db(), args[outcome.chosen], end, outcome.values.size());
      });
  return outcome;
}

// LMPOP numkeys key [key ...] LEFT | RIGHT [COUNT count]: pops from the first non-empty
// list in argument order.
void CmdLMPop(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<MPopArgs> parsed = ParseMPop(args, 1, rb);
  if (!parsed) return;
  PopOutcome popped =
      PopFirstList(args, cntx, parsed->keys_begin, parsed->keys_end, parsed->end, parsed->count,
                   nullptr);
  if (popped.wrong_type) return rb->SendError(facade::kWrongTypeErr);
  if (popped.values.empty()) return rb->SendNullArray();
  rb->StartArray(2);
  rb->SendBulk(args[popped.chosen]);
  rb->SendBulkArray(popped.values);
}

// --- BLPOP, BRPOP, BLMPOP, BLMOVE, BRPOPLPUSH (blocking_controller.h)

// A list waiter's serve: pops up to `count` elements from `end` of the ready key.
Waiter::ServeFn ListPopServe(End end, size_t count) {
  return [end, count](Waiter* waiter, DbIndex db, std::string_view key) {
    OpResult<DbSlice::Update> found = FindMutableList(db, key);
    if (!found || !waiter->Claim()) return false;
    Waiter::Result& result = waiter->result();
    result.key = std::string(key);
    PopInto(*found, end, count, &result.values);
    JournalPop(db, key, end, result.values.size());
    return true;
  };
}

// BLPOP and BRPOP reply [key, element]; BLMPOP [key, [elements...]].
void SendPopped(ReplyBuilder* rb, std::string_view key, const std::vector<std::string>& values,
                bool mpop) {
  rb->StartArray(2);
  rb->SendBulk(key);
  if (mpop) rb->StartArray(values.size());
  for (const std::string& value : values) rb->SendBulk(value);
}

// Replies what ended a wait other than a serve: the null array of a timeout, CLIENT
// UNBLOCK's error, nothing for a client that left.
void SendNotServed(ReplyBuilder* rb, Waiter::State state) {
  if (state == Waiter::State::kUnblocked) return rb->SendError(blocking::kUnblockedErr);
  if (state == Waiter::State::kDisconnected) return;
  rb->SendNullArray();
}

void BlockingPop(CmdArgList args, ConnectionContext* cntx, std::string_view timeout,
                 size_t keys_begin, size_t keys_end, End end, size_t count, bool mpop) {
  ReplyBuilder* rb = cntx->reply_builder();
  WaiterPtr waiter;
  std::optional<std::chrono::steady_clock::time_point> deadline =
      blocking::Start(cntx, timeout, [&] { return ListPopServe(end, count); }, &waiter);
  if (!deadline) return;
  PopOutcome popped =
      PopFirstList(args, cntx, keys_begin, keys_end, end, count, waiter ? &waiter : nullptr);
  if (popped.wrong_type) return rb->SendError(facade::kWrongTypeErr);
  if (!popped.values.empty()) return SendPopped(rb, args[popped.chosen], popped.values, mpop);
  if (!waiter || popped.chosen != 0) return rb->SendNullArray();
  std::vector<std::string_view> keys(args.begin() + keys_begin, args.begin() + keys_end);
  Waiter::State state = blocking::Wait(cntx, waiter, keys, *deadline);
  if (state != Waiter::State::kServed) return SendNotServed(rb, state);
  SendPopped(rb, waiter->result().key, waiter->result().values, mpop);
}

// BLPOP / BRPOP key [key ...] timeout
void CmdBLPop(CmdArgList args, ConnectionContext* cntx) {
  BlockingPop(args, cntx, args.back(), 1, args.size() - 1, End::kHead, 1, false);
}
void CmdBRPop(CmdArgList args, ConnectionContext* cntx) {
  BlockingPop(args, cntx, args.back(), 1, args.size() - 1, End::kTail, 1, false);
}

// BLMPOP timeout numkeys key [key ...] LEFT | RIGHT [COUNT count]
void CmdBLMPop(CmdArgList args, ConnectionContext* cntx) {
  std::optional<MPopArgs> parsed = ParseMPop(args, 2, cntx->reply_builder());
  if (!parsed) return;
  BlockingPop(args, cntx, args[1], parsed->keys_begin, parsed->keys_end, parsed->end,
              parsed->count, true);
}

// BLMOVE's serve on the source's shard. When the destination is on this shard too and
// no transaction holds it, the element moves here at once (a destination of another
// type fails the waiter with WRONGTYPE and takes nothing, as Redis does); otherwise the
// element is popped here and the waiter's fiber pushes it (push_pending).
Waiter::ServeFn MoveServe(End from, End to, std::string destination, TrackingWriter writer) {
  const ShardId destination_shard = shard_set->ShardOf(destination);
  return [from, to, destination = std::move(destination), destination_shard, writer](
             Waiter* waiter, DbIndex db, std::string_view key) {
    EngineShard* shard = EngineShard::tlocal();
    OpResult<const PrimeValue*> source = Slice().FindTyped(db, key, ObjType::kList, true);
    if (!source) return false;
    const bool here = shard->shard_id() == destination_shard &&
                      shard->tx_queue().IsFree(destination, LockMode::kExclusive);
    const PrimeValue* target = here ? Slice().Find(db, destination) : nullptr;
    if (!waiter->Claim()) return false;
    Waiter::Result& result = waiter->result();
    result.key = std::string(key);
    if (target && target->type() != ObjType::kList) {
      result.wrong_type = true;
      return true;
    }
    result.values.resize(1);
    std::string& value = result.values[0];
    // The move is the blocked client's command: its own invalidations follow its reply.
    writer.Run([&] {
      if (key == destination) {  // a rotation: the key never empties
        DbSlice::Update entry = Slice().FindMutable(db, key);
        ListRef list(&entry.value());
        list.Pop(from, &value);
        list.PrepareAdd(value.size(), 1, Fill(), Depth());
        list.Push(to, value);
        entry.Changed(PushEvent(to));  // Redis notifies the push, then the pop
        entry.Changed(PopEvent(from));
        JournalMove(db, key, destination, from, to);
        return;
      }
      if (here) {  // the push first, as Redis notifies them
        core::ListpackValueTo(ListView(**source).At(from == End::kHead ? 0 : -1).Get(), &value);
        std::string_view element = value;
        OpPush(db, destination, to, CmdArgList(&element, 1), false);
      }
      DbSlice::Update entry = Slice().FindMutable(db, key);
      ListRef list(&entry.value());
      list.Pop(from, here ? &Scratch() : &value);
      FinishChange(entry, list, PopEvent(from), true);
      here ? JournalMove(db, key, destination, from, to) : JournalPop(db, key, from, 1);
      result.push_pending = !here;
    });
    return true;
  };
}

// The second half of a BLMOVE served on another shard than its destination's: pushes
// the element in a transaction on both keys. A destination that became another type
// meanwhile gets nothing: the element goes back where it came from, and the reply is
// WRONGTYPE.
bool PushMoved(CmdArgList args, ConnectionContext* cntx, End from, End to,
               const std::string& value) {
  std::string_view source = args[1], destination = args[2];
  std::string_view element = value;
  OpStatus pushed = OpStatus::kOk;
  CommandTransaction tx(args, cntx);
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (shard->shard_id() != shard_set->ShardOf(destination)) return;
        pushed = OpPush(t->db(), destination, to, CmdArgList(&element, 1), false).status();
        if (pushed == OpStatus::kOk) JournalPush(t->db(), destination, to, element);
      },
      false);
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (pushed == OpStatus::kOk || shard->shard_id() != shard_set->ShardOf(source)) return;
        OpPush(t->db(), source, from, CmdArgList(&element, 1), false);
        JournalPush(t->db(), source, from, element);
      },
      true);
  return pushed == OpStatus::kOk;
}

void BlockingMove(CmdArgList args, ConnectionContext* cntx, std::string_view timeout, End from,
                  End to) {
  ReplyBuilder* rb = cntx->reply_builder();
  WaiterPtr waiter;
  std::optional<std::chrono::steady_clock::time_point> deadline = blocking::Start(
      cntx, timeout,
      [&] { return MoveServe(from, to, std::string(args[2]), TrackingWriter::Of(cntx)); },
      &waiter);
  if (!deadline) return;
  MoveOutcome outcome = MoveElement(args, cntx, from, to, waiter ? &waiter : nullptr);
  if (outcome.status == OpStatus::kOk) return rb->SendBulk(outcome.value);
  if (outcome.status != OpStatus::kKeyNotFound) return SendOpError(rb, outcome.status);
  if (!waiter) return rb->SendNull();
  std::string_view source = args[1];
  Waiter::State state = blocking::Wait(cntx, waiter, CmdArgList(&source, 1), *deadline);
  // A timeout answers a null array here too (Redis), where the non-blocking forms and
  // MULTI answer a null bulk.
  if (state != Waiter::State::kServed) return SendNotServed(rb, state);
  Waiter::Result& result = waiter->result();
  if (result.wrong_type) return rb->SendError(facade::kWrongTypeErr);
  if (result.push_pending && !PushMoved(args, cntx, from, to, result.values[0])) {
    return rb->SendError(facade::kWrongTypeErr);
  }
  rb->SendBulk(result.values[0]);
}

// BLMOVE source destination LEFT | RIGHT LEFT | RIGHT timeout
void CmdBLMove(CmdArgList args, ConnectionContext* cntx) {
  std::optional<End> from = ParseEnd(args[3]), to = ParseEnd(args[4]);
  if (!from || !to) return cntx->reply_builder()->SendError(facade::kSyntaxErr);
  BlockingMove(args, cntx, args[5], *from, *to);
}

// BRPOPLPUSH source destination timeout
void CmdBRPopLPush(CmdArgList args, ConnectionContext* cntx) {
  BlockingMove(args, cntx, args[3], End::kTail, End::kHead);
}

}  // namespace

void ListFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  RegisterTypedObjectFactory(ObjType::kList, MakeListFromForm);
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
  r.Add("LPOS", -3, kCmdReadOnly, Keys(1).WithFlags(kKeyRO | kKeyAccess), kAclR | kAclSlow,
        CmdLPos);
  r.Add("LSET", 4, kWrite, Keys(1).WithFlags(kKeyRW | kKeyUpdate), kAclW | kAclSlow, CmdLSet);
  r.Add("LINSERT", 5, kWrite, kPushed, kAclW | kAclSlow, CmdLInsert);
  r.Add("LREM", 4, kCmdWrite, Keys(1).WithFlags(kKeyRW | kKeyDelete), kAclW | kAclSlow, CmdLRem);
  r.Add("LTRIM", 4, kCmdWrite, Keys(1).WithFlags(kKeyRW | kKeyDelete), kAclW | kAclSlow, CmdLTrim);
  r.Add("LMOVE", 5, kWrite, kMoved, kAclW | kAclSlow, CmdLMove);
  r.Add("RPOPLPUSH", 3, kWrite, kMoved, kAclW | kAclSlow, CmdRPopLPush);
  r.Add("LMPOP", -4, kCmdWrite, kMPopped, kAclW | kAclSlow, CmdLMPop);
  constexpr uint32_t kBlocking = kCmdWrite | kCmdNoScript | kCmdBlocking;
  constexpr uint32_t kAclB = kAclW | kAclSlow | kAclBlocking;
  const KeySpec kBPopped = Keys(1, -2).WithFlags(kKeyRW | kKeyAccess | kKeyDelete);
  KeySpec kBMPopped = kMPopped;
  kBMPopped.begin_index = 2;
  r.Add("BLPOP", -3, kBlocking, kBPopped, kAclB, CmdBLPop);
  r.Add("BRPOP", -3, kBlocking, kBPopped, kAclB, CmdBRPop);
  r.Add("BLMPOP", -5, kCmdWrite | kCmdBlocking, kBMPopped, kAclB, CmdBLMPop);
  r.Add("BLMOVE", 6, kBlocking | kCmdDenyOom, kMoved, kAclB, CmdBLMove);
  r.Add("BRPOPLPUSH", 4, kBlocking | kCmdDenyOom, kMoved, kAclB, CmdBRPopLPush);
}

}  // namespace damselfly
