#include "src/server/hash_family.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "helio/base/strings.h"
#include "src/core/glob_matcher.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/engine_shard.h"
#include "src/server/family_utils.h"
#include "src/server/hash_object.h"
#include "src/server/journal.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

constexpr char kHashNotIntErr[] = "ERR hash value is not an integer";
constexpr char kHashNotFloatErr[] = "ERR hash value is not a float";
constexpr char kNanOrInfErr[] = "ERR value is NaN or Infinity";
constexpr char kIncrNanOrInfErr[] = "ERR increment would produce NaN or Infinity";
constexpr char kOutOfRangeErr[] = "ERR value is out of range";

// The hash under `key` for a read: kKeyNotFound, or kWrongType for another type.
OpResult<HashView> FindHash(DbIndex db, std::string_view key) {
  OpResult<const PrimeValue*> found = Slice().FindTyped(db, key, ObjType::kHash);
  if (!found) return found.status();
  return HashView(**found);
}

// An Update of the hash under `key`, made empty when missing (taken out again when the
// Update ends unchanged), or kWrongType.
OpResult<DbSlice::Update> FindOrAddHash(DbIndex db, std::string_view key) {
  DbSlice::Update entry = Slice().AddOrFind(db, key);
  if (entry.inserted()) {
    HashRef::MakeEmpty(&entry.value());
  } else if (entry->type() != ObjType::kHash) {
    return OpStatus::kWrongType;
  }
  return entry;
}

// --- HSET, HMSET, HSETNX

// Sets the pairs args[first], args[first + 1]... (HSETNX: one pair, only when its field is
// absent); returns how many fields were new.
OpResult<size_t> OpSet(DbIndex db, CmdArgList args, size_t first, bool only_if_absent) {
  OpResult<DbSlice::Update> found = FindOrAddHash(db, args[1]);
  if (!found) return found.status();
  DbSlice::Update& entry = *found;
  HashRef hash(&entry.value());
  size_t max_len = 0, total_len = 0;
  for (size_t i = first; i < args.size(); ++i) {
    max_len = std::max(max_len, args[i].size());
    total_len += args[i].size();
  }
  // HSETNX of an existing field changes nothing, not even the encoding.
  if (only_if_absent && hash.Contains(args[first])) return size_t{0};
  hash.ConvertIfNeeded(max_len, total_len);
  size_t created = 0;
  for (size_t i = first; i + 1 < args.size(); i += 2) created += hash.Set(args[i], args[i + 1]);
  entry.Changed("hset");  // also when no value changed, as Redis notifies
  return created;
}

void CmdHSet(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() % 2 != 0) {
    return rb->SendError(helio::StrCat(
        "ERR wrong number of arguments for '",
        absl::AsciiStrToLower(absl::string_view(args[0].data(), args[0].size())), "' command"));
  }
  OpResult<size_t> created = OpSet(cntx->db_index, args, 2, false);
  if (!created) return SendOpError(rb, created.status());
  if (ArgIs(args[0], "HMSET")) return rb->SendOk();
  rb->SendLong(*created);
}

void CmdHSetNx(CmdArgList args, ConnectionContext* cntx) {
  OpResult<size_t> created = OpSet(cntx->db_index, args, 2, true);
  if (!created) return SendOpError(cntx->reply_builder(), created.status());
  cntx->reply_builder()->SendLong(*created);
}

// --- reads of fields

void CmdHGet(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<HashView> hash = FindHash(cntx->db_index, args[1]);
  if (ReplyIfError(rb, hash.status())) return;
  std::optional<std::string_view> value;
  if (hash) value = hash->Get(args[2], &Scratch());
  value ? rb->SendBulk(*value) : rb->SendNull();
}

void CmdHMGet(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<HashView> hash = FindHash(cntx->db_index, args[1]);
  if (ReplyIfError(rb, hash.status())) return;
  rb->StartArray(args.size() - 2);
  for (size_t i = 2; i < args.size(); ++i) {
    std::optional<std::string_view> value;
    if (hash) value = hash->Get(args[i], &Scratch());
    value ? rb->SendBulk(*value) : rb->SendNull();
  }
}

void CmdHExists(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<HashView> hash = FindHash(cntx->db_index, args[1]);
  if (ReplyIfError(rb, hash.status())) return;
  rb->SendLong(hash && hash->Contains(args[2]) ? 1 : 0);
}

void CmdHStrLen(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<HashView> hash = FindHash(cntx->db_index, args[1]);
  if (ReplyIfError(rb, hash.status())) return;
  std::optional<std::string_view> value;
  if (hash) value = hash->Get(args[2], &Scratch());
  rb->SendLong(value ? value->size() : 0);
}

void CmdHLen(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<HashView> hash = FindHash(cntx->db_index, args[1]);
  if (ReplyIfError(rb, hash.status())) return;
  rb->SendLong(hash ? hash->Size() : 0);
}

// --- HDEL

OpResult<size_t> OpDel(DbIndex db, CmdArgList args) {
  OpResult<DbSlice::Update> found = Slice().FindMutableTyped(db, args[1], ObjType::kHash);
  if (!found) return found.status();
  DbSlice::Update& entry = *found;
  HashRef hash(&entry.value());
  size_t removed = 0;
  for (size_t i = 2; i < args.size() && hash.Size() > 0; ++i) removed += hash.Remove(args[i]);
  if (removed > 0) entry.Changed("hdel");
  if (hash.Size() == 0) entry.Erase("del");
  return removed;
}

void CmdHDel(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<size_t> removed = OpDel(cntx->db_index, args);
  if (ReplyIfError(rb, removed.status())) return;
  rb->SendLong(removed ? *removed : 0);
}

// --- HINCRBY, HINCRBYFLOAT

OpResult<int64_t> OpIncrBy(DbIndex db, std::string_view key, std::string_view field,
                           int64_t delta) {
  OpResult<DbSlice::Update> found = FindOrAddHash(db, key);
  if (!found) return found.status();
  DbSlice::Update& entry = *found;
  HashRef hash(&entry.value());
  int64_t current = 0;
  if (std::optional<std::string_view> text = hash.Get(field, &Scratch())) {
    std::optional<int64_t> parsed = ParseInt64(*text);
    if (!parsed) return OpStatus::kInvalidInt;
    current = *parsed;
  }
  if ((delta < 0 && current < std::numeric_limits<int64_t>::min() - delta) ||
      (delta > 0 && current > std::numeric_limits<int64_t>::max() - delta)) {
    return OpStatus::kIncrOverflow;
  }
  int64_t result = current + delta;
  hash.Set(field, helio::StrCat(result));
  entry.Changed("hincrby");
  return result;
}

void CmdHIncrBy(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> delta = ParseInt64(args[3]);
  if (!delta) return rb->SendError(facade::kInvalidIntErr);
  OpResult<int64_t> result = OpIncrBy(cntx->db_index, args[1], args[2], *delta);
  if (result.status() == OpStatus::kInvalidInt) return rb->SendError(kHashNotIntErr);
  if (!result) return SendOpError(rb, result.status());
  rb->SendLong(*result);
}

// kSkipped: the result would be NaN or infinite.
OpResult<std::string> OpIncrByFloat(DbIndex db, std::string_view key, std::string_view field,
                                    long double delta) {
  OpResult<DbSlice::Update> found = FindOrAddHash(db, key);
  if (!found) return found.status();
  DbSlice::Update& entry = *found;
  HashRef hash(&entry.value());
  long double current = 0;
  if (std::optional<std::string_view> text = hash.Get(field, &Scratch())) {
    std::optional<long double> parsed = ParseLongDouble(*text);
    if (!parsed) return OpStatus::kInvalidFloat;
    current = *parsed;
  }
  long double result = current + delta;
  if (std::isnan(result) || std::isinf(result)) return OpStatus::kSkipped;
  std::string text = FormatLongDouble(result);
  hash.Set(field, text);
  entry.Changed("hincrbyfloat");
  ShardJournal::RewriteAs(db, {"HSET", key, field, text});  // as Redis propagates it
  return text;
}

void CmdHIncrByFloat(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<long double> delta = ParseLongDouble(args[3]);
  if (!delta) return rb->SendError(facade::kInvalidFloatErr);
  if (std::isinf(*delta)) return rb->SendError(kNanOrInfErr);
  OpResult<std::string> result = OpIncrByFloat(cntx->db_index, args[1], args[2], *delta);
  if (result.status() == OpStatus::kSkipped) return rb->SendError(kIncrNanOrInfErr);
  if (result.status() == OpStatus::kInvalidFloat) return rb->SendError(kHashNotFloatErr);
  if (!result) return SendOpError(rb, result.status());
  rb->SendBulk(*result);
}

// --- HKEYS, HVALS, HGETALL

enum class Part { kKeys, kValues, kBoth };

void ReplyAll(CmdArgList args, ConnectionContext* cntx, Part part) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<HashView> hash = FindHash(cntx->db_index, args[1]);
  if (ReplyIfError(rb, hash.status())) return;
  size_t size = hash ? hash->Size() : 0;
  if (part == Part::kBoth) {
    rb->StartMap(size);
  } else {
    rb->StartArray(size);
  }
  if (!hash) return;
  hash->ForEach([&](std::string_view field, std::string_view value) {
    if (part != Part::kValues) rb->SendBulk(field);
    if (part != Part::kKeys) rb->SendBulk(value);
  });
}

void CmdHKeys(CmdArgList args, ConnectionContext* cntx) { ReplyAll(args, cntx, Part::kKeys); }
void CmdHVals(CmdArgList args, ConnectionContext* cntx) { ReplyAll(args, cntx, Part::kValues); }
void CmdHGetAll(CmdArgList args, ConnectionContext* cntx) { ReplyAll(args, cntx, Part::kBoth); }

// --- HRANDFIELD key [count [WITHVALUES]]

// Redis refuses a count whose reply length would overflow; damselfly also refuses
// negative counts past this many reply elements (about 1 GiB of reply, which is built
// whole before it is sent), where Redis would try until it ran out of memory.
constexpr uint64_t kMaxRandomReplyElements = uint64_t{1} << 26;

bool Resp3(const ReplyBuilder* rb) { return rb->protocol() == facade::RespVersion::kResp3; }

void ReplyPair(ReplyBuilder* rb, bool with_values, std::string_view field, std::string_view value) {
  if (with_values && Resp3(rb)) rb->StartArray(2);
  rb->SendBulk(field);
  if (with_values) rb->SendBulk(value);
}

void StartRandomReply(ReplyBuilder* rb, bool with_values, size_t count) {
  rb->StartArray(with_values && !Resp3(rb) ? 2 * count : count);
}

void CmdHRandField(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() == 2) {
    OpResult<HashView> hash = FindHash(cntx->db_index, args[1]);
    if (ReplyIfError(rb, hash.status())) return;
    if (!hash) return rb->SendNull();
    uint64_t rnd = absl::Uniform<uint64_t>(EngineShard::tlocal()->rng());
    return rb->SendBulk(hash->Random(rnd).first);
  }
  std::optional<int64_t> count = ParseInt64(args[2]);
  if (!count) return rb->SendError(facade::kInvalidIntErr);
  bool with_values = false;
  if (args.size() == 4 && ArgIs(args[3], "WITHVALUES")) {
    with_values = true;
  } else if (args.size() >= 4) {
    return rb->SendError(facade::kSyntaxErr);
  }
  constexpr int64_t kLongMax = std::numeric_limits<int64_t>::max();
  if (*count < -kLongMax) return rb->SendError(facade::kLongRangeErr);
  // Redis refuses half the range with WITHVALUES (the reply counts twice the elements).
  if (with_values && (*count < -kLongMax / 2 || *count > kLongMax / 2)) {
    return rb->SendError(kOutOfRangeErr);
  }
  OpResult<HashView> found = FindHash(cntx->db_index, args[1]);
  if (ReplyIfError(rb, found.status())) return;
  if (!found || *count == 0) return rb->SendEmptyArray();
  const HashView& hash = *found;
  absl::BitGen& rng = EngineShard::tlocal()->rng();
  const size_t size = hash.Size();

  if (*count < 0) {  // repetitions allowed
    uint64_t n = uint64_t(-*count);
    if (n * (with_values ? 2 : 1) > kMaxRandomReplyElements) return rb->SendError(kOutOfRangeErr);
    StartRandomReply(rb, with_values, n);
    for (uint64_t i = 0; i < n; ++i) {
      auto [field, value] = hash.Random(absl::Uniform<uint64_t>(rng));
      ReplyPair(rb, with_values, field, value);
    }
    return;
  }
  uint64_t n = uint64_t(*count);
  if (n >= size) {  // the whole hash
    StartRandomReply(rb, with_values, size);
    hash.ForEach([&](std::string_view field, std::string_view value) {
      ReplyPair(rb, with_values, field, value);
    });
    return;
  }
  // Distinct fields: copy the hash and drop random pairs when most of it is wanted, else
  // draw until enough distinct fields came up (Redis's cases 3 and 4).
  std::vector<std::pair<std::string, std::string>> picked;
  if (n * 3 > size) {
    picked.reserve(size);
    hash.ForEach(
        [&](std::string_view field, std::string_view value) { picked.emplace_back(field, value); });
    while (picked.size() > n) {
      size_t victim = absl::Uniform<size_t>(rng, 0, picked.size());
      std::swap(picked[victim], picked.back());
      picked.pop_back();
    }
  } else {
    absl::flat_hash_set<std::string> seen;
    while (picked.size() < n) {
      auto pair = hash.Random(absl::Uniform<uint64_t>(rng));
      if (seen.insert(pair.first).second) picked.push_back(std::move(pair));
    }
  }
  StartRandomReply(rb, with_values, picked.size());
  for (const auto& [field, value] : picked) ReplyPair(rb, with_values, field, value);
}

// --- HSCAN key cursor [MATCH pattern] [COUNT count]

void CmdHScan(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<uint64_t> cursor = ParseScanCursor(args[2]);
  if (!cursor) return rb->SendError("ERR invalid cursor");
  OpResult<HashView> hash = FindHash(cntx->db_index, args[1]);
  if (ReplyIfError(rb, hash.status())) return;
  // Redis reads the options only for an existing key.
  ScanOptions options;
  if (hash) {
    std::string_view error = ParseScanOptions(args.subspan(3), false, &options);
    if (!error.empty()) return rb->SendError(error);
  }
  // Named members rather than a structured binding: clang before 16 cannot capture
  // bindings in lambdas, and the fuzz build (tools/build.sh fuzz) uses Debian 12's clang 14.
  const std::optional<std::string_view>& pattern = options.pattern;
  const int64_t count = options.count;
  std::vector<std::string> pairs;
  uint64_t next = 0;
  if (hash) {
    next = hash->Scan(*cursor, count, [&](std::string_view field, std::string_view value) {
      if (pattern && !core::GlobMatch(*pattern, field)) return;
      pairs.emplace_back(field);
      pairs.emplace_back(value);
    });
  }
  rb->StartArray(2);
  rb->SendBulk(helio::StrCat(next));
  rb->SendBulkArray(pairs);
}

}  // namespace

void HashFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  RegisterTypedObjectFactory(ObjType::kHash, MakeHashFromForm);
  CommandRegistry& r = *registry;
  // The key read only for its metadata (type, length), updated in place, only added to,
  // only removed from, read and removed, overwritten unread, or written when missing: the
  // key flags Redis 7.0 gives (COMMAND INFO). Only RO changes locking (shared).
  const KeySpec kUpdated = Keys(1).WithFlags(kKeyRW | kKeyUpdate);
  const KeySpec kInsertedInto = Keys(1).WithFlags(kKeyRW | kKeyInsert);
  const KeySpec kDeletedFrom = Keys(1).WithFlags(kKeyRW | kKeyDelete);
  const KeySpec kMetadataRead = Keys(1).WithFlags(kKeyRO);
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kRead = kCmdReadOnly;
  constexpr uint32_t kAclW = kAclWrite | kAclHash, kAclR = kAclRead | kAclHash;
  r.Add("HSET", -4, kWrite | kCmdFast, kUpdated, kAclW | kAclFast, CmdHSet);
  r.Add("HSETNX", 4, kWrite | kCmdFast, kInsertedInto, kAclW | kAclFast, CmdHSetNx);
  r.Add("HMSET", -4, kWrite | kCmdFast, kUpdated, kAclW | kAclFast, CmdHSet);
  r.Add("HGET", 3, kRead | kCmdFast, Keys(1), kAclR | kAclFast, CmdHGet);
  r.Add("HMGET", -3, kRead | kCmdFast, Keys(1), kAclR | kAclFast, CmdHMGet);
  r.Add("HDEL", -3, kCmdWrite | kCmdFast, kDeletedFrom, kAclW | kAclFast,
        CmdHDel);
  r.Add("HLEN", 2, kRead | kCmdFast, kMetadataRead, kAclR | kAclFast, CmdHLen);
  r.Add("HEXISTS", 3, kRead | kCmdFast, kMetadataRead, kAclR | kAclFast, CmdHExists);
  r.Add("HSTRLEN", 3, kRead | kCmdFast, kMetadataRead, kAclR | kAclFast, CmdHStrLen);
  r.Add("HINCRBY", 4, kWrite | kCmdFast, Keys(1), kAclW | kAclFast, CmdHIncrBy);
  r.Add("HINCRBYFLOAT", 4, kWrite | kCmdFast, Keys(1), kAclW | kAclFast, CmdHIncrByFloat);
  r.Add("HKEYS", 2, kRead, Keys(1), kAclR | kAclSlow, CmdHKeys);
  r.Add("HVALS", 2, kRead, Keys(1), kAclR | kAclSlow, CmdHVals);
  r.Add("HGETALL", 2, kRead, Keys(1), kAclR | kAclSlow, CmdHGetAll);
  r.Add("HRANDFIELD", -2, kRead, Keys(1), kAclR | kAclSlow, CmdHRandField);
  r.Add("HSCAN", -3, kRead, Keys(1), kAclR | kAclSlow, CmdHScan);
}

}  // namespace damselfly
