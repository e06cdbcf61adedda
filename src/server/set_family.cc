#include "src/server/set_family.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/random/random.h"
#include "helio/base/strings.h"
#include "src/core/glob_matcher.h"
#include "src/core/set_object.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/collection_limits.h"
#include "src/server/engine_shard_set.h"
#include "src/server/journal.h"
#include "src/server/family_utils.h"
#include "src/server/transaction.h"

namespace damselfly {

namespace {

using core::SetObject;
using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

constexpr char kPositiveErr[] = "ERR value is out of range, must be positive";
// The most members SRANDMEMBER with a negative count replies (see CmdSRandMember).
constexpr uint64_t kMaxRandomRepeats = uint64_t{1} << 26;

core::SetLimits Limits() { return CollectionLimits::Sets(); }

ObjEncoding ToObjEncoding(SetObject::Encoding encoding) {
  switch (encoding) {
    case SetObject::Encoding::kIntset:
      return ObjEncoding::kIntset;
    case SetObject::Encoding::kListpack:
      return ObjEncoding::kListpack;
    case SetObject::Encoding::kHashtable:
      break;
  }
  return ObjEncoding::kHashtable;
}

std::optional<SetObject::Encoding> FromObjEncoding(ObjEncoding encoding) {
  switch (encoding) {
    case ObjEncoding::kIntset:
      return SetObject::Encoding::kIntset;
    case ObjEncoding::kListpack:
      return SetObject::Encoding::kListpack;
    case ObjEncoding::kHashtable:
      return SetObject::Encoding::kHashtable;
    default:
      return std::nullopt;
  }
}

core::TypedObject* MakeSetFromForm(ObjEncoding encoding, std::string_view form) {
  std::optional<SetObject::Encoding> set_encoding = FromObjEncoding(encoding);
  return set_encoding ? SetObject::Deserialize(*set_encoding, form) : nullptr;
}

SetObject* AsSet(const PrimeValue& value) { return value.GetObjectAs<SetObject>(); }

// PrimeValue keeps the encoding number for TYPE and OBJECT ENCODING; after a change that
// may have converted the set, it follows.
void SyncEncoding(PrimeValue& value, const SetObject* set) {
  const ObjEncoding encoding = ToObjEncoding(set->encoding());
  if (value.object_encoding() != encoding) value.set_object_encoding(encoding);
}

void StoreSet(PrimeValue& value, SetObject* set) {
  value.SetObject(ObjType::kSet, ToObjEncoding(set->encoding()), set);
}

uint64_t Random64() { return EngineShard::tlocal()->rng()(); }

// The set under `key` for a read (or a write's first look, see DbSlice::FindTyped):
// kKeyNotFound, or kWrongType for another type.
OpResult<const SetObject*> FindSet(DbIndex db, std::string_view key, bool for_write = false) {
  OpResult<const PrimeValue*> found = Slice().FindTyped(db, key, ObjType::kSet, for_write);
  if (!found) return found.status();
  return static_cast<const SetObject*>(AsSet(**found));
}

// Replies the members of `set` (nullptr: none) as a RESP3 set.
void ReplyMembers(ReplyBuilder* rb, const SetObject* set) {
  if (set == nullptr) return rb->StartSet(0);
  rb->StartSet(set->Size());
  set->ForEach([rb](std::string_view member) { rb->SendBulk(member); });
}

// Adds members to the set under `key`, creating it. Returns how many were new.
OpResult<int64_t> OpAdd(DbIndex db, std::string_view key, CmdArgList members,
                        std::string_view event) {
  const core::SetLimits limits = Limits();
  DbSlice::Update entry = Slice().AddOrFind(db, key);
  SetObject* set;
  if (entry.inserted()) {
    set = SetObject::Create(members[0], members.size(), limits);
    StoreSet(entry.value(), set);
  } else {
    if (entry->type() != ObjType::kSet) return OpStatus::kWrongType;
    set = AsSet(entry.value());
    set->ReserveFor(members.size(), limits);
  }
  int64_t added = 0;
  for (std::string_view member : members) added += set->Add(member, limits);
  SyncEncoding(entry.value(), set);
  if (added > 0) entry.Changed(event);
  return added;
}

// --- single-key commands: they run on the key's shard.

// SADD key member [member ...]
void CmdSAdd(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<int64_t> added = OpAdd(cntx->db_index, args[1], args.subspan(2), "sadd");
  if (!added) return SendOpError(rb, added.status());
  rb->SendLong(*added);
}

// SREM key member [member ...]
void CmdSRem(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<DbSlice::Update> entry =
      Slice().FindMutableTyped(cntx->db_index, args[1], ObjType::kSet);
  if (!entry) {
    return entry.status() == OpStatus::kKeyNotFound ? rb->SendLong(0)
                                                    : SendOpError(rb, entry.status());
  }
  SetObject* set = AsSet(entry->value());
  int64_t removed = 0;
  for (std::string_view member : args.subspan(2)) {
    removed += set->Remove(member);
    if (set->Empty()) break;
  }
  if (removed > 0) entry->Changed("srem");
  if (set->Empty()) entry->Erase("del");
  rb->SendLong(removed);
}

// SMEMBERS key
void CmdSMembers(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<const SetObject*> set = FindSet(cntx->db_index, args[1]);
  if (ReplyIfError(rb, set.status())) return;
  ReplyMembers(rb, set ? *set : nullptr);
}

// SISMEMBER key member
void CmdSIsMember(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<const SetObject*> set = FindSet(cntx->db_index, args[1]);
  if (ReplyIfError(rb, set.status())) return;
  rb->SendLong(set && (*set)->Contains(args[2]) ? 1 : 0);
}

// SMISMEMBER key member [member ...]
void CmdSMIsMember(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<const SetObject*> set = FindSet(cntx->db_index, args[1]);
  if (ReplyIfError(rb, set.status())) return;
  rb->StartArray(args.size() - 2);
  for (std::string_view member : args.subspan(2)) {
    rb->SendLong(set && (*set)->Contains(member) ? 1 : 0);
  }
}

// SCARD key
void CmdSCard(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<const SetObject*> set = FindSet(cntx->db_index, args[1]);
  if (ReplyIfError(rb, set.status())) return;
  rb->SendLong(set ? (*set)->Size() : 0);
}

// SPOP key [count]. With a count the reply is a set (RESP3), also when empty.
void CmdSPop(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() > 3) return rb->SendError(facade::kSyntaxErr);
  std::optional<int64_t> count;
  if (args.size() == 3) {
    count = ParseInt64(args[2]);
    if (!count || *count < 0) return rb->SendError(kPositiveErr);
  }
  OpResult<DbSlice::Update> entry =
      Slice().FindMutableTyped(cntx->db_index, args[1], ObjType::kSet);
  if (!entry) {
    if (entry.status() != OpStatus::kKeyNotFound) return SendOpError(rb, entry.status());
    return count ? rb->StartSet(0) : rb->SendNull();
  }
  SetObject* set = AsSet(entry->value());
  // The replicas remove the members popped (SREM), as Redis propagates SPOP.
  const bool journal = ShardJournal::recording() != nullptr;
  std::vector<std::string> srem;
  if (!count) {
    std::string member = set->Pop(Random64());
    rb->SendBulk(member);
    if (journal) ShardJournal::RewriteAs(cntx->db_index, {"SREM", args[1], member});
  } else if (size_t(*count) >= set->Size()) {
    ReplyMembers(rb, set);
    entry->Changed("spop");
    return entry->Erase("del");
  } else {
    if (*count == 0) return rb->StartSet(0);
    rb->StartSet(*count);
    if (journal) srem = {"SREM", std::string(args[1])};
    for (int64_t i = 0; i < *count; ++i) {
      std::string member = set->Pop(Random64());
      rb->SendBulk(member);
      if (journal) srem.push_back(std::move(member));
    }
    if (journal) {
      std::vector<std::string_view> views(srem.begin(), srem.end());
      ShardJournal::RewriteAs(cntx->db_index, CmdArgList(views.data(), views.size()));
    }
  }
  entry->Changed("spop");
  if (set->Empty()) entry->Erase("del");
}

// Replies `count` distinct random members of `set`. REQUIRES: count < set->Size().
void ReplyDistinctRandom(ReplyBuilder* rb, const SetObject& set, size_t count) {
  rb->StartArray(count);
  // Picking at random until `count` distinct members came up is quick while they are a
  // small part of the set (Redis's threshold: a third); otherwise, and for the small
  // encodings (whose Random walks), shuffle a copy.
  if (set.encoding() == SetObject::Encoding::kHashtable && count * 3 <= set.Size()) {
    absl::flat_hash_set<std::string_view> picked;
    std::string unused;  // a hash table's members are views into the set
    while (picked.size() < count) {
      std::string_view member = set.Random(Random64(), &unused);
      if (picked.insert(member).second) rb->SendBulk(member);
    }
    return;
  }
  std::vector<std::string> members;
  members.reserve(set.Size());
  set.ForEach([&](std::string_view member) { members.emplace_back(member); });
  absl::BitGen& rng = EngineShard::tlocal()->rng();
  for (size_t i = 0; i < count; ++i) {
    std::swap(members[i], members[absl::Uniform<size_t>(rng, i, members.size())]);
    rb->SendBulk(members[i]);
  }
}

// SRANDMEMBER key [count]. A negative count allows repeats.
void CmdSRandMember(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() > 3) return rb->SendError(facade::kSyntaxErr);
  std::optional<int64_t> count;
  if (args.size() == 3) {
    count = ParseInt64(args[2]);
    if (!count) return rb->SendError(facade::kInvalidIntErr);
    if (*count == INT64_MIN) {
      return rb->SendError(facade::kLongRangeErr);
    }
  }
  OpResult<const SetObject*> found = FindSet(cntx->db_index, args[1]);
  if (!found) {
    if (found.status() != OpStatus::kKeyNotFound) return SendOpError(rb, found.status());
    return count ? rb->SendEmptyArray() : rb->SendNull();
  }
  const SetObject& set = **found;
  std::string scratch;
  if (!count) return rb->SendBulk(set.Random(Random64(), &scratch));
  if (*count >= 0 && size_t(*count) >= set.Size()) {
    rb->StartArray(set.Size());
    return set.ForEach([rb](std::string_view member) { rb->SendBulk(member); });
  }
  if (*count >= 0) return ReplyDistinctRandom(rb, set, *count);
  // Repeats: the reply is built whole before it is sent, so a count past 2^26 is refused
  // (as HRANDFIELD does) rather than exhausting memory, where Redis would try.
  const uint64_t repeats = uint64_t(-*count);
  if (repeats > kMaxRandomRepeats) return rb->SendError("ERR value is out of range");
  rb->StartArray(repeats);
  for (uint64_t i = 0; i < repeats; ++i) rb->SendBulk(set.Random(Random64(), &scratch));
}

// SSCAN key cursor [MATCH pattern] [COUNT count]. Redis's order: the cursor, the key
// (a missing one answers an empty scan whatever the options), then the options.
void CmdSScan(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<uint64_t> cursor = ParseScanCursor(args[2]);
  if (!cursor) return rb->SendError("ERR invalid cursor");
  OpResult<const SetObject*> found = FindSet(cntx->db_index, args[1]);
  if (ReplyIfError(rb, found.status())) return;
  if (!found) {
    rb->StartArray(2);
    rb->SendBulk("0");
    return rb->SendEmptyArray();
  }
  ScanOptions options;
  std::string_view error = ParseScanOptions(args.subspan(3), false, &options);
  if (!error.empty()) return rb->SendError(error);
  // Named members rather than a structured binding: clang before 16 cannot capture
  // bindings in lambdas, and the fuzz build (tools/build.sh fuzz) uses Debian 12's clang 14.
  const std::optional<std::string_view>& pattern = options.pattern;
  const int64_t count = options.count;
  std::vector<std::string> members;
  uint64_t next = (*found)->Scan(*cursor, count, [&](std::string_view member) {
    if (!pattern || core::GlobMatch(*pattern, member)) members.emplace_back(member);
  });
  rb->StartArray(2);
  rb->SendBulk(helio::StrCat(next));
  rb->SendBulkArray(members);
}

// --- multi-key commands.

// A source set of SINTER & co as the read hop found it: inline, the object itself
// (valid while the handler runs on the shard without suspending); across shards, a copy
// of the members. Neither: the key is missing (an empty set).
struct SourceSet {
  const SetObject* object = nullptr;
  std::optional<absl::flat_hash_set<std::string>> copy;

  size_t Size() const { return object ? object->Size() : copy ? copy->size() : 0; }
  bool Contains(std::string_view member) const {
    return object ? object->Contains(member)
                  : copy && copy->contains(absl::string_view(member.data(), member.size()));
  }
  template <typename F>
  void ForEach(F&& f) const {
    if (object) return object->ForEach(f);
    if (copy) {
      for (const std::string& member : *copy) f(std::string_view(member));
    }
  }
};

// The sources of a multi-key command, by argument position, and whether any had the
// wrong type (one flag per shard: each hop writes its own).
struct Sources {
  std::vector<SourceSet> by_position;
  absl::InlinedVector<char, 16> wrong_type;

  bool AnyWrongType() const {
    return std::find(wrong_type.begin(), wrong_type.end(), 1) != wrong_type.end();
  }
};

// A read hop: fills `sources` for the keys of this shard at positions >= `first`.
void ReadSources(Transaction* t, EngineShard* shard, size_t first, Sources* sources) {
  for (uint32_t index : t->KeyIndices(shard->shard_id())) {
    if (index < first) continue;
    OpResult<const SetObject*> found = FindSet(t->db(), t->args()[index]);
    if (!found) {
      if (found.status() == OpStatus::kWrongType) sources->wrong_type[shard->shard_id()] = 1;
      continue;
    }
    SourceSet& source = sources->by_position[index];
    if (t->is_inline()) {
      source.object = *found;
    } else {
      source.copy.emplace();
      source.copy->reserve((*found)->Size());
      (*found)->ForEach([&](std::string_view member) { source.copy->emplace(member); });
    }
  }
}

enum class SetOp { kInter, kUnion, kDiff };

// The members of op over `sources` (positions first..end). `limit` (> 0) stops an
// intersection early (SINTERCARD), leaving the result partial but with the right count.
std::vector<std::string> Combine(SetOp op, const std::vector<SourceSet>& sources, size_t first,
                                 size_t limit = 0) {
  std::vector<std::string> result;
  std::vector<const SourceSet*> sets;
  for (size_t i = first; i < sources.size(); ++i) sets.push_back(&sources[i]);
  switch (op) {
    case SetOp::kInter: {
      // Walk the smallest set, probe the others from the next smallest.
      std::sort(sets.begin(), sets.end(),
                [](const SourceSet* a, const SourceSet* b) { return a->Size() < b->Size(); });
      if (sets.front()->Size() == 0) return result;
      sets.front()->ForEach([&](std::string_view member) {
        if (limit > 0 && result.size() >= limit) return;
        for (size_t i = 1; i < sets.size(); ++i) {
          if (!sets[i]->Contains(member)) return;
        }
        result.emplace_back(member);
      });
      return result;
    }
    case SetOp::kUnion: {
      absl::flat_hash_set<std::string> members;
      for (const SourceSet* set : sets) {
        set->ForEach([&](std::string_view member) { members.emplace(member); });
      }
      result.reserve(members.size());
      while (!members.empty())
        result.push_back(std::move(members.extract(members.begin()).value()));
      return result;
    }
    case SetOp::kDiff:
      sets.front()->ForEach([&](std::string_view member) {
        for (size_t i = 1; i < sets.size(); ++i) {
          if (sets[i]->Contains(member)) return;
        }
        result.emplace_back(member);
      });
      return result;
  }
  return result;
}

// SINTER, SUNION, SDIFF key [key ...]: one read hop, then the result as a set.
template <SetOp op>
void CmdCombine(CmdArgList args, ConnectionContext* cntx) {
  CommandTransaction tx(args, cntx);
  Sources sources{.by_position = std::vector<SourceSet>(args.size()),
                  .wrong_type = absl::InlinedVector<char, 16>(shard_set->size())};
  tx->Execute([&](Transaction* t, EngineShard* shard) { ReadSources(t, shard, 1, &sources); },
              true);
  ReplyBuilder* rb = cntx->reply_builder();
  if (sources.AnyWrongType()) return SendOpError(rb, OpStatus::kWrongType);
  std::vector<std::string> result = Combine(op, sources.by_position, 1);
  rb->StartSet(result.size());
  for (const std::string& member : result) rb->SendBulk(member);
}

// Makes a set of `members` the value of `key`, or deletes `key` when there are none.
void StoreResult(DbIndex db, std::string_view key, const std::vector<std::string>& members,
                 std::string_view event) {
  if (members.empty()) {
    Slice().Erase(db, key, "del");
    return;
  }
  const core::SetLimits limits = Limits();
  // A result built fresh starts as an intset and grows through Add, so its encoding
  // follows from its content; one too large for either small encoding goes straight to
  // a hash table of the right size.
  SetObject* set = members.size() > std::max(limits.intset_entries, limits.listpack_entries)
                       ? SetObject::Create(members[0], members.size(), limits)
                       : SetObject::CreateEmpty();
  for (const std::string& member : members) set->Add(member, limits);
  DbSlice::Update entry = Slice().AddOrFind(db, key);
  StoreSet(entry.value(), set);
  if (entry->has_expire()) entry.SetExpire(0);
  entry.Changed(event);
}

// SINTERSTORE, SUNIONSTORE, SDIFFSTORE destination key [key ...]: a read hop (not the
// last, so the locks stay), the result, then a write hop on the destination's shard.
template <SetOp op>
void CmdCombineStore(CmdArgList args, ConnectionContext* cntx) {
  static constexpr std::string_view kEvent = op == SetOp::kInter   ? "sinterstore"
                                             : op == SetOp::kUnion ? "sunionstore"
                                                                   : "sdiffstore";
  CommandTransaction tx(args, cntx);
  Sources sources{.by_position = std::vector<SourceSet>(args.size()),
                  .wrong_type = absl::InlinedVector<char, 16>(shard_set->size())};
  tx->Execute([&](Transaction* t, EngineShard* shard) { ReadSources(t, shard, 2, &sources); },
              false);
  const bool failed = sources.AnyWrongType();
  std::vector<std::string> result;
  if (!failed) result = Combine(op, sources.by_position, 2);
  const ShardId dst_shard = shard_set->ShardOf(args[1]);
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (!failed && shard->shard_id() == dst_shard)
          StoreResult(t->db(), args[1], result, kEvent);
      },
      true);
  ReplyBuilder* rb = cntx->reply_builder();
  if (failed) return SendOpError(rb, OpStatus::kWrongType);
  rb->SendLong(result.size());
}

// SINTERCARD numkeys key [key ...] [LIMIT limit]
void CmdSInterCard(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> numkeys = ParseInt64(args[1]);
  if (!numkeys || *numkeys < 1) return rb->SendError("ERR numkeys should be greater than 0");
  if (uint64_t(*numkeys) > args.size() - 2) {
    return rb->SendError("ERR Number of keys can't be greater than number of args");
  }
  const size_t end = 2 + *numkeys;
  int64_t limit = 0;
  for (size_t i = end; i < args.size(); ++i) {
    if (ArgIs(args[i], "LIMIT") && i + 1 < args.size()) {
      std::optional<int64_t> parsed = ParseInt64(args[++i]);
      if (!parsed || *parsed < 0) return rb->SendError("ERR LIMIT can't be negative");
      limit = *parsed;
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  CommandTransaction tx(args, cntx);
  Sources sources{.by_position = std::vector<SourceSet>(end),
                  .wrong_type = absl::InlinedVector<char, 16>(shard_set->size())};
  tx->Execute([&](Transaction* t, EngineShard* shard) { ReadSources(t, shard, 2, &sources); },
              true);
  if (sources.AnyWrongType()) return SendOpError(rb, OpStatus::kWrongType);
  rb->SendLong(Combine(SetOp::kInter, sources.by_position, 2, limit).size());
}

// SMOVE source destination member: a hop that checks both keys, then one that moves.
// Redis's order: a missing source answers 0 before any type check; then both types;
// then the same key (the answer is membership); then the member.
void CmdSMove(CmdArgList args, ConnectionContext* cntx) {
  std::string_view src = args[1], dst = args[2], member = args[3];
  CommandTransaction tx(args, cntx);
  const ShardId src_shard = shard_set->ShardOf(src), dst_shard = shard_set->ShardOf(dst);
  OpStatus src_status = OpStatus::kOk, dst_status = OpStatus::kOk;
  bool is_member = false;
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (shard->shard_id() == src_shard) {
          OpResult<const SetObject*> found = FindSet(t->db(), src, true);
          src_status = found.status();
          is_member = found && (*found)->Contains(member);
        }
        if (shard->shard_id() == dst_shard) {
          const PrimeValue* value = Slice().Find(t->db(), dst);
          if (value && value->type() != ObjType::kSet) dst_status = OpStatus::kWrongType;
        }
      },
      false);
  const bool move =
      src_status == OpStatus::kOk && dst_status == OpStatus::kOk && is_member && src != dst;
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (!move) return;
        // Keys on two shards: each sends replicas its half (SMOVE itself is replayed
        // when both are on one shard).
        const bool journal = ShardJournal::recording() != nullptr && src_shard != dst_shard;
        // The move happens as of hop 1: a source that expired since then is gone either
        // way, and the member still moves.
        if (shard->shard_id() == src_shard) {
          if (DbSlice::Update entry = Slice().FindMutable(t->db(), src)) {
            SetObject* set = AsSet(entry.value());
            set->Remove(member);
            entry.Changed("srem");
            if (set->Empty()) entry.Erase("del");
            if (journal) ShardJournal::RewriteAs(t->db(), {"SREM", src, member});
          }
        }
        if (shard->shard_id() == dst_shard) {
          OpAdd(t->db(), dst, args.subspan(3, 1), "sadd");
          if (journal) ShardJournal::RewriteAs(t->db(), {"SADD", dst, member});
        }
      },
      true);
  ReplyBuilder* rb = cntx->reply_builder();
  if (src_status == OpStatus::kKeyNotFound) return rb->SendLong(0);
  if (src_status != OpStatus::kOk) return SendOpError(rb, src_status);
  if (dst_status != OpStatus::kOk) return SendOpError(rb, dst_status);
  rb->SendLong(is_member ? 1 : 0);
}

}  // namespace

void SetFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  RegisterTypedObjectFactory(ObjType::kSet, ObjectFactory<ObjType::kSet, MakeSetFromForm>);
  CommandRegistry& r = *registry;
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kAclW = kAclWrite | kAclSet, kAclR = kAclRead | kAclSet;
  const KeySpecs kMoved = {Keys(1).WithFlags(kKeyRW | kKeyAccess | kKeyDelete),
                           Keys(2).WithFlags(kKeyRW | kKeyInsert)};
  const KeySpecs kInterStored = {Keys(1).WithFlags(kKeyRW | kKeyUpdate),
                                 Keys(2, -1).WithFlags(kKeyRO | kKeyAccess)};
  const KeySpecs kStored = {Keys(1).WithFlags(kKeyOW | kKeyUpdate),
                            Keys(2, -1).WithFlags(kKeyRO | kKeyAccess)};
  const KeySpec kCounted = {.flags = kKeyRO | kKeyAccess, .begin_index = 1, .keynum = true};
  r.Add("SADD", -3, kWrite | kCmdFast, Keys(1).WithFlags(kKeyRW | kKeyInsert), kAclW | kAclFast,
        CmdSAdd);
  r.Add("SREM", -3, kCmdWrite | kCmdFast, Keys(1).WithFlags(kKeyRW | kKeyDelete), kAclW | kAclFast,
        CmdSRem);
  r.Add("SMEMBERS", 2, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdSMembers);
  r.Add("SISMEMBER", 3, kCmdReadOnly | kCmdFast, Keys(1).WithFlags(kKeyRO), kAclR | kAclFast,
        CmdSIsMember);
  r.Add("SMISMEMBER", -3, kCmdReadOnly | kCmdFast, Keys(1), kAclR | kAclFast, CmdSMIsMember);
  r.Add("SCARD", 2, kCmdReadOnly | kCmdFast, Keys(1).WithFlags(kKeyRO), kAclR | kAclFast, CmdSCard);
  r.Add("SPOP", -2, kCmdWrite | kCmdFast, Keys(1).WithFlags(kKeyRW | kKeyAccess | kKeyDelete),
        kAclW | kAclFast, CmdSPop);
  r.Add("SRANDMEMBER", -2, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdSRandMember);
  r.Add("SMOVE", 4, kCmdWrite | kCmdFast, kMoved, kAclW | kAclFast, CmdSMove);
  r.Add("SINTER", -2, kCmdReadOnly, Keys(1, -1), kAclR | kAclSlow, CmdCombine<SetOp::kInter>);
  r.Add("SUNION", -2, kCmdReadOnly, Keys(1, -1), kAclR | kAclSlow, CmdCombine<SetOp::kUnion>);
  r.Add("SDIFF", -2, kCmdReadOnly, Keys(1, -1), kAclR | kAclSlow, CmdCombine<SetOp::kDiff>);
  r.Add("SINTERSTORE", -3, kWrite, kInterStored, kAclW | kAclSlow, CmdCombineStore<SetOp::kInter>);
  r.Add("SUNIONSTORE", -3, kWrite, kStored, kAclW | kAclSlow, CmdCombineStore<SetOp::kUnion>);
  r.Add("SDIFFSTORE", -3, kWrite, kStored, kAclW | kAclSlow, CmdCombineStore<SetOp::kDiff>);
  r.Add("SINTERCARD", -3, kCmdReadOnly, kCounted, kAclR | kAclSlow, CmdSInterCard);
  r.Add("SSCAN", -3, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdSScan);
}

}  // namespace damselfly
