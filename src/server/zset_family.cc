#include "src/server/zset_family.h"

#include <cerrno>
#include <chrono>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "helio/base/strings.h"
#include "src/core/glob_matcher.h"
#include "src/core/set_object.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/blocking_controller.h"
#include "src/server/engine_shard_set.h"
#include "src/server/family_utils.h"
#include "src/server/journal.h"
#include "src/server/transaction.h"
#include "src/server/zset_object.h"

namespace damselfly {

namespace {

using core::LexBound;
using core::ScoreBound;
using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;
using SortedPairs = ZSetView::SortedPairs;

constexpr char kNanErr[] = "ERR resulting score is not a number (NaN)";
constexpr char kScoreRangeErr[] = "ERR min or max is not a float";
constexpr char kLexRangeErr[] = "ERR min or max not valid string range item";

// --- Argument parsing, with Redis's acceptance rules.

// Runs strtod over `text` as a C string (stopping at a NUL byte, as Redis's strtod over
// an sds does); *consumed is how many bytes it read.
double StrtodOf(std::string_view text, size_t* consumed, bool* range_error) {
  char small[64];
  std::string large;
  const char* c;
  if (text.size() < sizeof(small)) {
    memcpy(small, text.data(), text.size());
    small[text.size()] = '\0';
    c = small;
  } else {
    large.assign(text);
    c = large.c_str();
  }
  char* end;
  errno = 0;
  double value = strtod(c, &end);
  *consumed = end - c;
  *range_error = errno == ERANGE;
  return value;
}

// A score or weight as Redis's getDoubleFromObject reads it: the whole text, no leading
// space, no NaN, no overflow or underflow to zero ("inf" is fine).
std::optional<double> ParseScore(std::string_view text) {
  if (text.empty() || isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  size_t consumed;
  bool range_error;
  double value = StrtodOf(text, &consumed, &range_error);
  if (consumed != text.size() || std::isnan(value)) return std::nullopt;
  if (range_error && (std::isinf(value) || value == 0)) return std::nullopt;
  return value;
}

// A ZRANGEBYSCORE bound ("1.5", "(1.5", "-inf"), as zslParseRange reads it: strtod up to
// the first NUL, which must end the text it read; not NaN.
std::optional<ScoreBound> ParseScoreBound(std::string_view text) {
  ScoreBound bound{0, false};
  if (!text.empty() && text[0] == '(') {
    bound.exclusive = true;
    text.remove_prefix(1);
  }
  size_t consumed;
  bool range_error;
  bound.value = StrtodOf(text, &consumed, &range_error);
  if ((consumed < text.size() && text[consumed] != '\0') || std::isnan(bound.value)) {
    return std::nullopt;
  }
  return bound;
}

// A ZRANGEBYLEX bound: "-", "+", "[member" or "(member".
std::optional<LexBound> ParseLexBound(std::string_view text) {
  if (text.empty()) return std::nullopt;
  switch (text[0]) {
    case '+':
      if (text.size() != 1) return std::nullopt;
      return LexBound{LexBound::kMax, {}};
    case '-':
      if (text.size() != 1) return std::nullopt;
      return LexBound{LexBound::kMin, {}};
    case '(':
      return LexBound{LexBound::kExclusive, text.substr(1)};
    case '[':
      return LexBound{LexBound::kInclusive, text.substr(1)};
    default:
      return std::nullopt;
  }
}

// --- Replies.

// Member/score pairs: flat (m, s, m, s...) in RESP2, and in RESP3 too unless `nested`,
// where they become [m, s] arrays, as Redis 7.0 sends WITHSCORES results.
void ReplyPairs(ReplyBuilder* rb, const SortedPairs& pairs, bool withscores, bool nested) {
  if (!withscores) {
    rb->StartArray(pairs.size());
    for (const auto& [member, score] : pairs) rb->SendBulk(member);
    return;
  }
  nested = nested && rb->protocol() == facade::RespVersion::kResp3;
  rb->StartArray(nested ? pairs.size() : 2 * pairs.size());
  for (const auto& [member, score] : pairs) {
    if (nested) rb->StartArray(2);
    rb->SendBulk(member);
    rb->SendDouble(score);
  }
}

// --- Shard code: reads.

// The sorted set under `key` for a read (or a write's first look, see DbSlice::FindTyped).
OpResult<ZSetView> FindZSet(DbIndex db, std::string_view key, bool for_write = false) {
  OpResult<const PrimeValue*> value = Slice().FindTyped(db, key, ObjType::kZSet, for_write);
  if (!value) return value.status();
  return ZSetView(**value);
}

// A range request of ZRANGE and its relatives, parsed.
struct RangeSpec {
  enum Kind { kRank, kScore, kLex } kind = kRank;
  bool reverse = false;
  int64_t start = 0, end = 0;  // kRank
  ScoreBound score_min{0, false}, score_max{0, false};
  LexBound lex_min{LexBound::kMin, {}}, lex_max{LexBound::kMax, {}};
  int64_t offset = 0, limit = -1;  // kScore, kLex: LIMIT
  bool withscores = false;
};

// Ascending ranks [first, last) of the elements `spec` selects, before the walk's
// direction is applied.
struct RankRange {
  size_t first = 0, last = 0;
  bool empty() const { return first >= last; }
};

// Indexes as ZRANGE and ZREMRANGEBYRANK read them (negative from the end, clamped).
RankRange ResolveIndexes(int64_t start, int64_t end, size_t size) {
  const int64_t len = int64_t(size);
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return {};
  if (end >= len) end = len - 1;
  return {size_t(start), size_t(end) + 1};
}

RankRange ResolveRange(const ZSetView& zset, const RangeSpec& spec) {
  const size_t size = zset.Size();
  if (spec.kind == RangeSpec::kRank) {
    RankRange r = ResolveIndexes(spec.start, spec.end, size);
    if (spec.reverse && !r.empty()) r = {size - r.last, size - r.first};
    return r;
  }
  RankRange r;
  if (spec.kind == RangeSpec::kScore) {
    r = {zset.CountScoreBelow(spec.score_min), zset.CountScoreAtMost(spec.score_max)};
  } else {
    r = {zset.CountLexBelow(spec.lex_min), zset.CountLexAtMost(spec.lex_max)};
  }
  if (r.empty()) return {};
  // LIMIT counts from the walk's start: the low end, or the high end in reverse.
  const size_t n = r.last - r.first;
  if (spec.offset < 0 || uint64_t(spec.offset) >= n) return {};
  const size_t count =
      spec.limit < 0 ? n - spec.offset : std::min<uint64_t>(uint64_t(spec.limit), n - spec.offset);
  if (spec.reverse) return {r.last - spec.offset - count, r.last - spec.offset};
  return {r.first + spec.offset, r.first + spec.offset + count};
}

// The pairs `spec` selects, in reply order.
SortedPairs CollectRange(const ZSetView& zset, const RangeSpec& spec) {
  SortedPairs pairs;
  RankRange r = ResolveRange(zset, spec);
  if (r.empty()) return pairs;
  pairs.reserve(r.last - r.first);
  zset.Walk(r.first, r.last, spec.reverse, [&](std::string_view member, double score) {
    pairs.emplace_back(member, score);
    return true;
  });
  return pairs;
}

OpResult<SortedPairs> OpRange(DbIndex db, std::string_view key, const RangeSpec& spec) {
  OpResult<ZSetView> zset = FindZSet(db, key);
  if (zset) return CollectRange(*zset, spec);
  if (zset.status() == OpStatus::kKeyNotFound) return SortedPairs{};
  return zset.status();
}

// --- Shard code: writes.

using AddFlags = ZSetFamily::AddFlags;
using AddOutcome = ZSetFamily::AddOutcome;
using ScoreMembers = ZSetFamily::ScoreMembers;

// ZADD's and ZINCRBY's shard code (Redis's zsetAdd for each pair).
OpResult<AddOutcome> OpAdd(DbIndex db, std::string_view key, const AddFlags& flags,
                           const ScoreMembers& pairs) {
  DbSlice::Update update = Slice().AddOrFind(db, key);
  if (!update.inserted() && update->type() != ObjType::kZSet) return OpStatus::kWrongType;
  AddOutcome out;
  if (update.inserted() && flags.xx) return out;  // the inserted entry goes with the Update
  if (update.inserted()) ZSetRef::MakeEmpty(&update.value());
  ZSetRef zset(&update.value());
  for (auto [score, member] : pairs) {
    std::optional<double> current = zset.Score(member);
    if (current) {
      if (flags.nx) continue;
      if (flags.incr) {
        score += *current;
        if (std::isnan(score)) {
          out.nan = true;
          break;
        }
      }
      if ((flags.lt && score >= *current) || (flags.gt && score <= *current)) continue;
      ++out.processed;
      out.last_score = score;
      if (score != *current) {
        zset.Set(member, score);
        ++out.updated;
      }
    } else if (!flags.xx) {
      zset.InsertNew(member, score);
      ++out.added;
      ++out.processed;
      out.last_score = score;
    }
  }
  if (out.added || out.updated) update.Changed(flags.incr ? "zincr" : "zadd");
  return out;
}

// Ends a write to a sorted set: reports `event`, then deletes the key if it became empty
// (Redis notifies "zrem" then "del").
void FinishWrite(DbSlice::Update& update, const ZSetView& zset, std::string_view event) {
  update.Changed(event);
  if (zset.Size() == 0) update.Erase("del");
}

OpResult<int64_t> OpRemove(DbIndex db, std::string_view key, CmdArgList members) {
  OpResult<DbSlice::Update> update = Slice().FindMutableTyped(db, key, ObjType::kZSet);
  if (update.status() == OpStatus::kKeyNotFound) return int64_t{0};
  if (!update) return update.status();
  ZSetRef zset(&update->value());
  int64_t removed = 0;
  for (std::string_view member : members) removed += zset.Remove(member);
  if (removed) FinishWrite(*update, zset, "zrem");
  return removed;
}

// ZREMRANGEBY*: removes the ranks `spec` selects (direction ignored).
OpResult<int64_t> OpRemoveRange(DbIndex db, std::string_view key, const RangeSpec& spec,
                                std::string_view event) {
  OpResult<DbSlice::Update> update = Slice().FindMutableTyped(db, key, ObjType::kZSet);
  if (update.status() == OpStatus::kKeyNotFound) return int64_t{0};
  if (!update) return update.status();
  ZSetRef zset(&update->value());
  RankRange r = ResolveRange(zset, spec);
  if (r.empty()) return int64_t{0};
  int64_t removed = zset.EraseRanks(r.first, r.last);
  FinishWrite(*update, zset, event);
  return removed;
}

// ZPOPMIN/ZPOPMAX/ZMPOP (and the blocking pops to come): removes up to `count` of the
// lowest (or highest) members and returns them in pop order. A missing key gives none.
OpResult<SortedPairs> OpPop(DbIndex db, std::string_view key, uint64_t count, bool max) {
  OpResult<DbSlice::Update> update = Slice().FindMutableTyped(db, key, ObjType::kZSet);
  if (update.status() == OpStatus::kKeyNotFound) return SortedPairs{};
  if (!update) return update.status();
  ZSetRef zset(&update->value());
  const size_t size = zset.Size();
  const size_t n = std::min<uint64_t>(count, size);
  SortedPairs popped;
  if (n == 0) return popped;
  popped.reserve(n);
  const size_t first = max ? size - n : 0;
  zset.Walk(first, first + n, max, [&](std::string_view member, double score) {
    popped.emplace_back(member, score);
    return true;
  });
  zset.EraseRanks(first, first + n);
  FinishWrite(*update, zset, max ? "zpopmax" : "zpopmin");
  return popped;
}

// What the blocking pops, served waiters and pops over keys of several shards send
// replicas instead of the sorted set's state (ShardJournal::RewriteAs): ZPOPMIN/ZPOPMAX
// of what they took, as Redis propagates BZPOPMIN and ZMPOP.
void JournalPop(DbIndex db, std::string_view key, bool max, size_t count) {
  if (ShardJournal::recording() == nullptr || count == 0) [[likely]]
    return;
  ShardJournal::RewriteAs(db, {max ? "ZPOPMAX" : "ZPOPMIN", key, absl::StrCat(count)});
}

// Replaces `key` with a sorted set of `pairs` (ascending; none: deletes the key), without
// a deadline, as Redis's *STORE commands do. Returns the stored size.
void StoreResult(DbIndex db, std::string_view key, const SortedPairs& pairs,
                 std::string_view event) {
  if (pairs.empty()) {
    Slice().Erase(db, key);
    return;
  }
  DbSlice::Update update = Slice().AddOrFind(db, key);
  ZSetRef::Store(pairs, &update.value());
  update.SetExpire(0);
  update.Changed(event);
}

// --- Handlers: single key.

template <typename T>
bool SendIfError(ReplyBuilder* rb, const OpResult<T>& result) {
  if (result.ok()) return false;
  SendOpError(rb, result.status());
  return true;
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]
void CmdZAdd(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  AddFlags flags;
  size_t i = 2;
  for (; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (ArgIs(arg, "NX")) {
      flags.nx = true;
    } else if (ArgIs(arg, "XX")) {
      flags.xx = true;
    } else if (ArgIs(arg, "GT")) {
      flags.gt = true;
    } else if (ArgIs(arg, "LT")) {
      flags.lt = true;
    } else if (ArgIs(arg, "CH")) {
      flags.ch = true;
    } else if (ArgIs(arg, "INCR")) {
      flags.incr = true;
    } else {
      break;
    }
  }
  const size_t elements = args.size() - i;
  if (elements == 0 || elements % 2 != 0) return rb->SendError(facade::kSyntaxErr);
  if (flags.nx && flags.xx) {
    return rb->SendError("ERR XX and NX options at the same time are not compatible");
  }
  if ((flags.gt && flags.nx) || (flags.lt && flags.nx) || (flags.gt && flags.lt)) {
    return rb->SendError("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (flags.incr && elements > 2) {
    return rb->SendError("ERR INCR option supports a single increment-element pair");
  }
  ScoreMembers pairs;
  for (; i < args.size(); i += 2) {
    std::optional<double> score = ParseScore(args[i]);
    if (!score) return rb->SendError(facade::kInvalidFloatErr);
    pairs.emplace_back(*score, args[i + 1]);
  }
  OpResult<AddOutcome> out = OpAdd(cntx->db_index, args[1], flags, pairs);
  if (SendIfError(rb, out)) return;
  if (out->nan) return rb->SendError(kNanErr);
  if (flags.incr) return out->processed ? rb->SendDouble(out->last_score) : rb->SendNull();
  rb->SendLong(flags.ch ? out->added + out->updated : out->added);
}

// ZINCRBY key increment member
void CmdZIncrBy(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<double> incr = ParseScore(args[2]);
  if (!incr) return rb->SendError(facade::kInvalidFloatErr);
  AddFlags flags;
  flags.incr = true;
  OpResult<AddOutcome> out = OpAdd(cntx->db_index, args[1], flags, {{*incr, args[3]}});
  if (SendIfError(rb, out)) return;
  if (out->nan) return rb->SendError(kNanErr);
  rb->SendDouble(out->last_score);
}

void CmdZRem(CmdArgList args, ConnectionContext* cntx) {
  OpResult<int64_t> removed = OpRemove(cntx->db_index, args[1], args.subspan(2));
  if (SendIfError(cntx->reply_builder(), removed)) return;
  cntx->reply_builder()->SendLong(*removed);
}

void CmdZCard(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<ZSetView> zset = FindZSet(cntx->db_index, args[1]);
  if (zset.status() == OpStatus::kKeyNotFound) return rb->SendLong(0);
  if (SendIfError(rb, zset)) return;
  rb->SendLong(zset->Size());
}

void CmdZScore(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<ZSetView> zset = FindZSet(cntx->db_index, args[1]);
  if (zset.status() == OpStatus::kKeyNotFound) return rb->SendNull();
  if (SendIfError(rb, zset)) return;
  std::optional<double> score = zset->Score(args[2]);
  score ? rb->SendDouble(*score) : rb->SendNull();
}

void CmdZMScore(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<ZSetView> zset = FindZSet(cntx->db_index, args[1]);
  if (ReplyIfError(rb, zset.status())) return;
  rb->StartArray(args.size() - 2);
  for (std::string_view member : args.subspan(2)) {
    std::optional<double> score = zset ? zset->Score(member) : std::nullopt;
    score ? rb->SendDouble(*score) : rb->SendNull();
  }
}

void ZRankGeneric(CmdArgList args, ConnectionContext* cntx, bool reverse) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<ZSetView> zset = FindZSet(cntx->db_index, args[1]);
  if (zset.status() == OpStatus::kKeyNotFound) return rb->SendNull();
  if (SendIfError(rb, zset)) return;
  std::optional<size_t> rank = zset->Rank(args[2]);
  if (!rank) return rb->SendNull();
  rb->SendLong(reverse ? zset->Size() - 1 - *rank : *rank);
}

void CmdZRank(CmdArgList args, ConnectionContext* cntx) { ZRankGeneric(args, cntx, false); }
void CmdZRevRank(CmdArgList args, ConnectionContext* cntx) { ZRankGeneric(args, cntx, true); }

// ZCOUNT key min max / ZLEXCOUNT key min max.
void CountGeneric(CmdArgList args, ConnectionContext* cntx, RangeSpec::Kind kind) {
  ReplyBuilder* rb = cntx->reply_builder();
  RangeSpec spec;
  spec.kind = kind;
  if (kind == RangeSpec::kScore) {
    std::optional<ScoreBound> min = ParseScoreBound(args[2]), max = ParseScoreBound(args[3]);
    if (!min || !max) return rb->SendError(kScoreRangeErr);
    spec.score_min = *min;
    spec.score_max = *max;
  } else {
    std::optional<LexBound> min = ParseLexBound(args[2]), max = ParseLexBound(args[3]);
    if (!min || !max) return rb->SendError(kLexRangeErr);
    spec.lex_min = *min;
    spec.lex_max = *max;
  }
  OpResult<ZSetView> zset = FindZSet(cntx->db_index, args[1]);
  if (zset.status() == OpStatus::kKeyNotFound) return rb->SendLong(0);
  if (SendIfError(rb, zset)) return;
  RankRange r = ResolveRange(*zset, spec);
  rb->SendLong(r.last - r.first);
}

void CmdZCount(CmdArgList args, ConnectionContext* cntx) {
  CountGeneric(args, cntx, RangeSpec::kScore);
}
void CmdZLexCount(CmdArgList args, ConnectionContext* cntx) {
  CountGeneric(args, cntx, RangeSpec::kLex);
}

// The range arguments of ZRANGE and its relatives (Redis's zrangeGenericCommand), from
// args[first] = the key: key min max [options]. `fixed_kind` and `fixed_reverse` are
// the legacy commands' (ZRANGEBYSCORE...), which then accept no BYSCORE/BYLEX/REV.
// Returns an error text, or "" with *spec set.
std::string_view ParseRange(CmdArgList args, size_t first, bool store,
                            std::optional<RangeSpec::Kind> fixed_kind,
                            std::optional<bool> fixed_reverse, RangeSpec* spec) {
  std::optional<RangeSpec::Kind> kind = fixed_kind;
  std::optional<bool> reverse = fixed_reverse;
  bool has_limit = false;
  for (size_t j = first + 3; j < args.size(); ++j) {
    const size_t left = args.size() - j - 1;
    std::string_view arg = args[j];
    if (!store && ArgIs(arg, "WITHSCORES")) {
      spec->withscores = true;
    } else if (ArgIs(arg, "LIMIT") && left >= 2) {
      std::optional<int64_t> offset = ParseInt64(args[j + 1]), limit = ParseInt64(args[j + 2]);
      if (!offset || !limit) return facade::kInvalidIntErr;
      spec->offset = *offset;
      spec->limit = *limit;
      has_limit = true;
      j += 2;
    } else if (!fixed_reverse && !reverse && ArgIs(arg, "REV")) {
      reverse = true;
    } else if (!fixed_kind && !kind && ArgIs(arg, "BYLEX")) {
      kind = RangeSpec::kLex;
    } else if (!fixed_kind && !kind && ArgIs(arg, "BYSCORE")) {
      kind = RangeSpec::kScore;
    } else {
      return facade::kSyntaxErr;
    }
  }
  spec->kind = kind.value_or(RangeSpec::kRank);
  spec->reverse = reverse.value_or(false);
  if (has_limit && spec->kind == RangeSpec::kRank) {
    return "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
           "BYLEX";
  }
  if (spec->withscores && spec->kind == RangeSpec::kLex) {
    return "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
  }
  std::string_view min = args[first + 1], max = args[first + 2];
  if (spec->reverse && spec->kind != RangeSpec::kRank) std::swap(min, max);
  switch (spec->kind) {
    case RangeSpec::kRank: {
      std::optional<int64_t> start = ParseInt64(min), end = ParseInt64(max);
      if (!start || !end) return facade::kInvalidIntErr;
      spec->start = *start;
      spec->end = *end;
      break;
    }
    case RangeSpec::kScore: {
      std::optional<ScoreBound> lo = ParseScoreBound(min), hi = ParseScoreBound(max);
      if (!lo || !hi) return kScoreRangeErr;
      spec->score_min = *lo;
      spec->score_max = *hi;
      break;
    }
    case RangeSpec::kLex: {
      std::optional<LexBound> lo = ParseLexBound(min), hi = ParseLexBound(max);
      if (!lo || !hi) return kLexRangeErr;
      spec->lex_min = *lo;
      spec->lex_max = *hi;
      break;
    }
  }
  return {};
}

void RangeGeneric(CmdArgList args, ConnectionContext* cntx, std::optional<RangeSpec::Kind> kind,
                  std::optional<bool> reverse) {
  ReplyBuilder* rb = cntx->reply_builder();
  RangeSpec spec;
  std::string_view error = ParseRange(args, 1, false, kind, reverse, &spec);
  if (!error.empty()) return rb->SendError(error);
  OpResult<ZSetView> zset = FindZSet(cntx->db_index, args[1]);
  if (zset.status() == OpStatus::kKeyNotFound) return rb->SendEmptyArray();
  if (SendIfError(rb, zset)) return;
  // A one-key read runs on the key's shard: the reply is written from the set itself,
  // without copying the range into strings first (ZRANGE is the hot read).
  RankRange r = ResolveRange(*zset, spec);
  const size_t n = r.last - r.first;
  const bool nested = spec.withscores && rb->protocol() == facade::RespVersion::kResp3;
  rb->StartArray(spec.withscores && !nested ? 2 * n : n);
  if (n == 0) return;
  zset->Walk(r.first, r.last, spec.reverse, [&](std::string_view member, double score) {
    if (nested) rb->StartArray(2);
    rb->SendBulk(member);
    if (spec.withscores) rb->SendDouble(score);
    return true;
  });
}

void CmdZRange(CmdArgList args, ConnectionContext* cntx) {
  RangeGeneric(args, cntx, std::nullopt, std::nullopt);
}
void CmdZRevRange(CmdArgList args, ConnectionContext* cntx) {
  RangeGeneric(args, cntx, RangeSpec::kRank, true);
}
void CmdZRangeByScore(CmdArgList args, ConnectionContext* cntx) {
  RangeGeneric(args, cntx, RangeSpec::kScore, false);
}
void CmdZRevRangeByScore(CmdArgList args, ConnectionContext* cntx) {
  RangeGeneric(args, cntx, RangeSpec::kScore, true);
}
void CmdZRangeByLex(CmdArgList args, ConnectionContext* cntx) {
  RangeGeneric(args, cntx, RangeSpec::kLex, false);
}
void CmdZRevRangeByLex(CmdArgList args, ConnectionContext* cntx) {
  RangeGeneric(args, cntx, RangeSpec::kLex, true);
}

// ZREMRANGEBYRANK/SCORE/LEX key min max.
void RemRangeGeneric(CmdArgList args, ConnectionContext* cntx, RangeSpec::Kind kind,
                     std::string_view event) {
  ReplyBuilder* rb = cntx->reply_builder();
  RangeSpec spec;
  std::string_view error = ParseRange(args.subspan(0, 4), 1, true, kind, false, &spec);
  if (!error.empty()) return rb->SendError(error);
  OpResult<int64_t> removed = OpRemoveRange(cntx->db_index, args[1], spec, event);
  if (SendIfError(rb, removed)) return;
  rb->SendLong(*removed);
}

void CmdZRemRangeByRank(CmdArgList args, ConnectionContext* cntx) {
  RemRangeGeneric(args, cntx, RangeSpec::kRank, "zremrangebyrank");
}
void CmdZRemRangeByScore(CmdArgList args, ConnectionContext* cntx) {
  RemRangeGeneric(args, cntx, RangeSpec::kScore, "zremrangebyscore");
}
void CmdZRemRangeByLex(CmdArgList args, ConnectionContext* cntx) {
  RemRangeGeneric(args, cntx, RangeSpec::kLex, "zremrangebylex");
}

// ZPOPMIN/ZPOPMAX key [count]
void PopGeneric(CmdArgList args, ConnectionContext* cntx, bool max) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() > 3) return rb->SendError(facade::kSyntaxErr);
  uint64_t count = 1;
  if (args.size() == 3) {
    std::optional<int64_t> parsed = ParseInt64(args[2]);
    if (!parsed || *parsed < 0) {
      return rb->SendError("ERR value is out of range, must be positive");
    }
    count = *parsed;
  }
  OpResult<SortedPairs> popped = OpPop(cntx->db_index, args[1], count, max);
  if (SendIfError(rb, popped)) return;
  ReplyPairs(rb, *popped, true, args.size() == 3);
}

void CmdZPopMin(CmdArgList args, ConnectionContext* cntx) { PopGeneric(args, cntx, false); }
void CmdZPopMax(CmdArgList args, ConnectionContext* cntx) { PopGeneric(args, cntx, true); }

// ZRANDMEMBER key [count [WITHSCORES]]
void CmdZRandMember(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> count;
  bool withscores = false;
  if (args.size() >= 3) {
    count = ParseInt64(args[2]);
    if (!count) return rb->SendError(facade::kInvalidIntErr);
    if (*count == std::numeric_limits<int64_t>::min()) {
      return rb->SendError(facade::kLongRangeErr);
    }
    if (args.size() > 4 || (args.size() == 4 && !ArgIs(args[3], "WITHSCORES"))) {
      return rb->SendError(facade::kSyntaxErr);
    }
    withscores = args.size() == 4;
    constexpr int64_t kHalf = std::numeric_limits<int64_t>::max() / 2;
    if (withscores && (*count < -kHalf || *count > kHalf)) {
      return rb->SendError("ERR value is out of range");
    }
  }
  OpResult<ZSetView> zset = FindZSet(cntx->db_index, args[1]);
  if (zset.status() == OpStatus::kKeyNotFound) {
    return count ? rb->SendEmptyArray() : rb->SendNull();
  }
  if (SendIfError(rb, zset)) return;
  absl::BitGen& rng = EngineShard::tlocal()->rng();
  const size_t size = zset->Size();
  if (!count) return rb->SendBulk(zset->At(absl::Uniform<size_t>(rng, 0, size)).first);
  SortedPairs picked;
  if (*count < 0) {
    // Repeats allowed: |count| independent draws, replied as they are drawn so that a
    // huge count costs the reply's bytes only, as in Redis.
    const uint64_t n = uint64_t(-*count);
    const bool nested = withscores && rb->protocol() == facade::RespVersion::kResp3;
    rb->StartArray(withscores && !nested ? 2 * n : n);
    for (uint64_t i = 0; i < n; ++i) {
      auto [member, score] = zset->At(absl::Uniform<size_t>(rng, 0, size));
      if (nested) rb->StartArray(2);
      rb->SendBulk(member);
      if (withscores) rb->SendDouble(score);
    }
    return;
  }
  if (uint64_t(*count) >= size) {
    picked = CollectRange(*zset, RangeSpec{.start = 0, .end = -1});
  } else if (uint64_t(*count) * 3 > size) {
    // Distinct ranks, many of them: a partial Fisher-Yates shuffle over all ranks.
    std::vector<size_t> ranks(size);
    for (size_t i = 0; i < size; ++i) ranks[i] = i;
    for (size_t i = 0; i < size_t(*count); ++i) {
      std::swap(ranks[i], ranks[absl::Uniform<size_t>(rng, i, size)]);
      picked.push_back(zset->At(ranks[i]));
    }
  } else {
    // Few of a large set: draw ranks until `count` distinct ones (at most a third of the
    // set, so a draw is new with probability above 2/3).
    absl::flat_hash_set<size_t> seen;
    while (picked.size() < size_t(*count)) {
      size_t rank = absl::Uniform<size_t>(rng, 0, size);
      if (seen.insert(rank).second) picked.push_back(zset->At(rank));
    }
  }
  ReplyPairs(rb, picked, withscores, true);
}

// ZSCAN key cursor [MATCH pattern] [COUNT count]
void CmdZScan(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<uint64_t> cursor = ParseScanCursor(args[2]);
  if (!cursor) return rb->SendError("ERR invalid cursor");
  OpResult<ZSetView> zset = FindZSet(cntx->db_index, args[1]);
  if (ReplyIfError(rb, zset.status())) return;
  // Redis reads the options only for an existing key.
  ScanOptions options;
  if (zset) {
    std::string_view error = ParseScanOptions(args.subspan(3), false, &options);
    if (!error.empty()) return rb->SendError(error);
  }
  // Named members rather than a structured binding: clang before 16 cannot capture
  // bindings in lambdas, and the fuzz build (tools/build.sh fuzz) uses Debian 12's clang 14.
  const std::optional<std::string_view>& pattern = options.pattern;
  const int64_t count = options.count;
  std::vector<std::string> items;
  uint64_t next = 0;
  if (zset) {
    const bool listpack = zset->encoding() == ObjEncoding::kListpack;
    next = zset->Scan(*cursor, count, [&](std::string_view member, double score) {
      if (pattern && !core::GlobMatch(*pattern, member)) return;
      char buf[core::kMaxScoreChars];
      items.emplace_back(member);
      // A listpack shows its stored text (d2string), a skiplist Redis's %.17g.
      if (listpack) {
        items.emplace_back(core::FormatScore(score, buf));
      } else {
        items.emplace_back(
            buf, std::to_chars(buf, buf + sizeof(buf), score, std::chars_format::general, 17).ptr);
      }
    });
  }
  rb->StartArray(2);
  rb->SendBulk(helio::StrCat(next));
  rb->SendBulkArray(items);
}

// --- Handlers: several keys, through a CommandTransaction.

// ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]: reads src in
// one hop, writes dst in a second (the locks are held in between).
void CmdZRangeStore(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  RangeSpec spec;
  std::string_view error = ParseRange(args, 2, true, std::nullopt, std::nullopt, &spec);
  if (!error.empty()) return rb->SendError(error);
  CommandTransaction tx(args, cntx);
  const ShardId src_shard = shard_set->ShardOf(args[2]);
  const ShardId dst_shard = shard_set->ShardOf(args[1]);
  OpResult<SortedPairs> pairs = OpStatus::kKeyNotFound;
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (shard->shard_id() == src_shard) pairs = OpRange(t->db(), args[2], spec);
      },
      false);
  if (SendIfError(rb, pairs)) return;  // the transaction concludes without a write
  if (spec.reverse) std::reverse(pairs->begin(), pairs->end());
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (shard->shard_id() == dst_shard) StoreResult(t->db(), args[1], *pairs, "zrangestore");
      },
      true);
  rb->SendLong(pairs->size());
}

// The arguments of ZMPOP (numkeys at args[1]) and BZMPOP (at args[2]).
struct MPopArgs {
  size_t keys_begin = 0, keys_end = 0;  // argument positions of the keys
  bool max = false;
  uint64_t count = 1;
};

// numkeys key [key ...] MIN | MAX [COUNT count] from args[first]; replies the error and
// returns nullopt when malformed.
std::optional<MPopArgs> ParseMPop(CmdArgList args, size_t first, ReplyBuilder* rb) {
  std::optional<int64_t> numkeys = ParseInt64(args[first]);
  if (!numkeys || *numkeys < 1) {
    rb->SendError("ERR numkeys should be greater than 0");
    return std::nullopt;
  }
  if (uint64_t(*numkeys) > args.size() - first - 2) {
    rb->SendError(facade::kSyntaxErr);
    return std::nullopt;
  }
  MPopArgs parsed;
  parsed.keys_begin = first + 1;
  size_t i = first + 1 + *numkeys;
  parsed.keys_end = i;
  if (ArgIs(args[i], "MIN")) {
    parsed.max = false;
  } else if (ArgIs(args[i], "MAX")) {
    parsed.max = true;
  } else {
    rb->SendError(facade::kSyntaxErr);
    return std::nullopt;
  }
  bool has_count = false;
  for (++i; i < args.size(); ++i) {
    if (!has_count && ArgIs(args[i], "COUNT") && i + 1 < args.size()) {
      std::optional<int64_t> parsed_count = ParseInt64(args[++i]);
      if (!parsed_count || *parsed_count < 1) {
        rb->SendError("ERR count should be greater than 0");
        return std::nullopt;
      }
      parsed.count = *parsed_count;
      has_count = true;
    } else {
      rb->SendError(facade::kSyntaxErr);
      return std::nullopt;
    }
  }
  return parsed;
}

// What a multi-key pop found: the key popped from (argument position, 0: none) and its
// members, or WRONGTYPE for a key of another type before any sorted set.
struct PopOutcome {
  size_t chosen = 0;
  OpResult<SortedPairs> popped = SortedPairs{};
};

// Pops up to `count` of the lowest (or highest) members of the first non-empty sorted
// set among the keys at [keys_begin, keys_end) of args (ZMPOP, BZPOPMIN, BZPOPMAX,
// BZMPOP). Hop 1 finds it (or a WRONGTYPE key before it), hop 2 pops; with `waiter` and
// no key to pop from, hop 2 registers it on every shard of the keys instead (one hop for
// keys on one shard: LookThenAct).
PopOutcome PopFirstZSet(CmdArgList args, ConnectionContext* cntx, size_t keys_begin,
                        size_t keys_end, bool max, uint64_t count, const WaiterPtr* waiter) {
  enum KeyState : uint8_t { kEmpty, kNonEmpty, kWrongType };
  std::vector<KeyState> states(args.size(), kEmpty);  // by argument position
  PopOutcome outcome;
  bool pop = false;
  ShardId shard_of_key = 0;
  CommandTransaction tx(args, cntx);
  LookThenAct(
      tx.Get(), OnOneShard(args, keys_begin, keys_end),
      [&](Transaction* t, EngineShard* shard) {
        for (uint32_t index : t->KeyIndices(shard->shard_id())) {
          OpResult<ZSetView> zset = FindZSet(t->db(), args[index], true);
          states[index] = zset                                    ? kNonEmpty
                          : zset.status() == OpStatus::kWrongType ? kWrongType
                                                                  : kEmpty;
        }
      },
      [&] {
        for (size_t k = keys_begin; k < keys_end && outcome.chosen == 0; ++k) {
          if (states[k] == kWrongType) outcome.popped = OpStatus::kWrongType;
          if (states[k] != kEmpty) outcome.chosen = k;
        }
        pop = outcome.chosen != 0 && outcome.popped.ok();
        if (pop) shard_of_key = shard_set->ShardOf(args[outcome.chosen]);
      },
      [&](Transaction* t, EngineShard* shard) {
        if (pop && shard->shard_id() == shard_of_key) {
          outcome.popped = OpPop(t->db(), args[outcome.chosen], count, max);
          if (outcome.popped) {
            JournalPop(t->db(), args[outcome.chosen], max, outcome.popped->size());
          }
        } else if (waiter && outcome.chosen == 0) {
          for (uint32_t index : t->KeyIndices(shard->shard_id())) {
            shard->blocking().Register(*waiter, args[index]);
          }
        }
      });
  return outcome;
}

// ZMPOP's and BZMPOP's reply: [key, [[member, score], ...]].
void SendMPopped(ReplyBuilder* rb, std::string_view key, const SortedPairs& pairs) {
  rb->StartArray(2);
  rb->SendBulk(key);
  rb->StartArray(pairs.size());
  for (const auto& [member, score] : pairs) {
    rb->StartArray(2);
    rb->SendBulk(member);
    rb->SendDouble(score);
  }
}

// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]: pops from the first key that holds
// a non-empty sorted set.
void CmdZMPop(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<MPopArgs> parsed = ParseMPop(args, 1, rb);
  if (!parsed) return;
  PopOutcome outcome = PopFirstZSet(args, cntx, parsed->keys_begin, parsed->keys_end,
                                    parsed->max, parsed->count, nullptr);
  if (SendIfError(rb, outcome.popped)) return;
  if (outcome.chosen == 0 || outcome.popped->empty()) return rb->SendNullArray();
  SendMPopped(rb, args[outcome.chosen], *outcome.popped);
}

// --- BZPOPMIN, BZPOPMAX, BZMPOP (blocking_controller.h)

// A sorted-set waiter's serve: pops up to `count` of the lowest (highest) members.
Waiter::ServeFn ZSetPopServe(bool max, uint64_t count) {
  return [max, count](Waiter* waiter, DbIndex db, std::string_view key) {
    if (!FindZSet(db, key, true) || !waiter->Claim()) return false;
    Waiter::Result& result = waiter->result();
    result.key = std::string(key);
    OpResult<SortedPairs> popped = OpPop(db, key, count, max);
    if (popped) {
      JournalPop(db, key, max, popped->size());
      result.pairs = std::move(*popped);
    }
    return true;
  };
}

// BZPOPMIN / BZPOPMAX reply [key, member, score]; BZMPOP as ZMPOP.
void SendBlockingPopped(ReplyBuilder* rb, std::string_view key, const SortedPairs& pairs,
                        bool mpop) {
  if (mpop) return SendMPopped(rb, key, pairs);
  rb->StartArray(3);
  rb->SendBulk(key);
  rb->SendBulk(pairs[0].first);
  rb->SendDouble(pairs[0].second);
}

void BlockingZPop(CmdArgList args, ConnectionContext* cntx, std::string_view timeout,
                  size_t keys_begin, size_t keys_end, bool max, uint64_t count, bool mpop) {
  ReplyBuilder* rb = cntx->reply_builder();
  WaiterPtr waiter;
  std::optional<std::chrono::steady_clock::time_point> deadline =
      blocking::Start(cntx, timeout, [&] { return ZSetPopServe(max, count); }, &waiter);
  if (!deadline) return;
  PopOutcome outcome =
      PopFirstZSet(args, cntx, keys_begin, keys_end, max, count, waiter ? &waiter : nullptr);
  if (SendIfError(rb, outcome.popped)) return;
  if (!outcome.popped->empty()) {
    return SendBlockingPopped(rb, args[outcome.chosen], *outcome.popped, mpop);
  }
  if (!waiter || outcome.chosen != 0) return rb->SendNullArray();
  std::vector<std::string_view> keys(args.begin() + keys_begin, args.begin() + keys_end);
  Waiter::State state = blocking::Wait(cntx, waiter, keys, *deadline);
  if (state == Waiter::State::kUnblocked) return rb->SendError(blocking::kUnblockedErr);
  if (state == Waiter::State::kDisconnected) return;
  if (state != Waiter::State::kServed) return rb->SendNullArray();
  SendBlockingPopped(rb, waiter->result().key, waiter->result().pairs, mpop);
}

// BZPOPMIN / BZPOPMAX key [key ...] timeout
void CmdBZPopMin(CmdArgList args, ConnectionContext* cntx) {
  BlockingZPop(args, cntx, args.back(), 1, args.size() - 1, false, 1, false);
}
void CmdBZPopMax(CmdArgList args, ConnectionContext* cntx) {
  BlockingZPop(args, cntx, args.back(), 1, args.size() - 1, true, 1, false);
}

// BZMPOP timeout numkeys key [key ...] MIN | MAX [COUNT count]
void CmdBZMPop(CmdArgList args, ConnectionContext* cntx) {
  std::optional<MPopArgs> parsed = ParseMPop(args, 2, cntx->reply_builder());
  if (!parsed) return;
  BlockingZPop(args, cntx, args[1], parsed->keys_begin, parsed->keys_end, parsed->max,
               parsed->count, true);
}

enum class SetOp { kUnion, kInter, kDiff };
enum class Aggregate { kSum, kMin, kMax };

// One input of ZUNION & co: a sorted set's pairs (a plain set's members with score 1).
struct SetOpInput {
  bool wrong_type = false;
  SortedPairs pairs;
  double weight = 1;
};

void AggregateInto(double* target, double value, Aggregate aggregate) {
  switch (aggregate) {
    case Aggregate::kSum:
      *target += value;
      if (std::isnan(*target)) *target = 0;  // inf + -inf: Redis's convention
      break;
    case Aggregate::kMin:
      *target = value < *target ? value : *target;
      break;
    case Aggregate::kMax:
      *target = value > *target ? value : *target;
      break;
  }
}

// The result of the operation over the inputs, sorted by (score, member), at most
// `limit` members for an intersection (0: all).
SortedPairs ComputeSetOp(SetOp op, std::vector<SetOpInput>& inputs, Aggregate aggregate,
                         size_t limit = 0) {
  using Scores = absl::flat_hash_map<std::string_view, double>;
  Scores result;
  if (op == SetOp::kDiff) {
    Scores others;
    for (size_t i = 1; i < inputs.size(); ++i) {
      for (const auto& [member, score] : inputs[i].pairs) others.emplace(member, score);
    }
    for (const auto& [member, score] : inputs[0].pairs) {
      if (!others.contains(member)) result.emplace(member, score);
    }
  } else {
    // Smallest first, as Redis iterates them (the order of a sum's terms follows it).
    std::vector<SetOpInput*> order;
    for (SetOpInput& input : inputs) order.push_back(&input);
    std::stable_sort(order.begin(), order.end(), [](const SetOpInput* a, const SetOpInput* b) {
      return a->pairs.size() < b->pairs.size();
    });
    if (op == SetOp::kUnion) {
      for (const SetOpInput* input : order) {
        for (const auto& [member, score] : input->pairs) {
          double value = input->weight * score;
          if (std::isnan(value)) value = 0;
          auto [it, inserted] = result.emplace(member, value);
          if (!inserted) AggregateInto(&it->second, value, aggregate);
        }
      }
    } else {
      std::vector<Scores> maps(order.size());
      for (size_t j = 1; j < order.size(); ++j) {
        for (const auto& [member, score] : order[j]->pairs) maps[j].emplace(member, score);
      }
      for (const auto& [member, score] : order[0]->pairs) {
        double value = order[0]->weight * score;
        if (std::isnan(value)) value = 0;
        bool in_all = true;
        for (size_t j = 1; j < order.size() && in_all; ++j) {
          auto it = maps[j].find(member);
          if (it == maps[j].end()) {
            in_all = false;
          } else {
            AggregateInto(&value, it->second * order[j]->weight, aggregate);
          }
        }
        if (in_all) {
          result.emplace(member, value);
          if (limit && result.size() >= limit) break;
        }
      }
    }
  }
  SortedPairs sorted;
  sorted.reserve(result.size());
  for (const auto& [member, score] : result) sorted.emplace_back(member, score);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : a.first < b.first;
  });
  return sorted;
}

// Whether ZUNION & co. take a value of this type: sorted sets, and plain sets, whose
// members count with score 1 (as in Redis).
bool IsSetOpInputType(ObjType type) { return type == ObjType::kZSet || type == ObjType::kSet; }

// Copies the value of `key` into `input` (nothing for a missing key).
void ReadSetOpInput(DbIndex db, std::string_view key, SetOpInput* input) {
  const PrimeValue* value = Slice().FindRead(db, key);
  if (value == nullptr) return;
  if (!IsSetOpInputType(value->type())) {
    input->wrong_type = true;
    return;
  }
  if (value->type() == ObjType::kSet) {
    value->GetObjectAs<core::SetObject>()->ForEach(
        [&](std::string_view member) { input->pairs.emplace_back(member, 1.0); });
    return;
  }
  input->pairs = CollectRange(ZSetView(*value), RangeSpec{.start = 0, .end = -1});
}

// ZUNION/ZINTER/ZDIFF numkeys key... [WEIGHTS w...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES],
// their *STORE forms (dst first, no WITHSCORES) and ZINTERCARD numkeys key... [LIMIT n].
void SetOpGeneric(CmdArgList args, ConnectionContext* cntx, SetOp op, bool store,
                  bool cardinality_only, std::string_view event) {
  ReplyBuilder* rb = cntx->reply_builder();
  const size_t numkeys_index = store ? 2 : 1;
  std::optional<int64_t> numkeys = ParseInt64(args[numkeys_index]);
  if (!numkeys) return rb->SendError(facade::kInvalidIntErr);
  if (*numkeys < 1) {
    return rb->SendError(helio::StrCat("ERR at least 1 input key is needed for '",
                                       helio::AsciiStrToLower(args[0]), "' command"));
  }
  if (uint64_t(*numkeys) > args.size() - numkeys_index - 1) {
    return rb->SendError(facade::kSyntaxErr);
  }
  const size_t first_key = numkeys_index + 1;
  std::vector<SetOpInput> inputs(*numkeys);
  // Options. Redis reports a WRONGTYPE key before an option error, so an error here is
  // kept until the keys were looked at.
  Aggregate aggregate = Aggregate::kSum;
  bool withscores = false;
  uint64_t limit = 0;
  std::string_view option_error;
  for (size_t j = first_key + *numkeys; j < args.size() && option_error.empty();) {
    const size_t remaining = args.size() - j;
    if (op != SetOp::kDiff && !cardinality_only && remaining >= inputs.size() + 1 &&
        ArgIs(args[j], "WEIGHTS")) {
      ++j;
      for (SetOpInput& input : inputs) {
        std::optional<double> weight = ParseScore(args[j++]);
        if (!weight) {
          option_error = "ERR weight value is not a float";
          break;
        }
        input.weight = *weight;
      }
    } else if (op != SetOp::kDiff && !cardinality_only && remaining >= 2 &&
               ArgIs(args[j], "AGGREGATE")) {
      std::string_view name = args[j + 1];
      if (ArgIs(name, "SUM")) {
        aggregate = Aggregate::kSum;
      } else if (ArgIs(name, "MIN")) {
        aggregate = Aggregate::kMin;
      } else if (ArgIs(name, "MAX")) {
        aggregate = Aggregate::kMax;
      } else {
        option_error = facade::kSyntaxErr;
      }
      j += 2;
    } else if (!store && !cardinality_only && ArgIs(args[j], "WITHSCORES")) {
      withscores = true;
      ++j;
    } else if (cardinality_only && remaining >= 2 && ArgIs(args[j], "LIMIT")) {
      std::optional<int64_t> parsed = ParseInt64(args[j + 1]);
      if (!parsed || *parsed < 0) {
        option_error = "ERR LIMIT can't be negative";
      } else {
        limit = *parsed;
      }
      j += 2;
    } else {
      option_error = facade::kSyntaxErr;
    }
  }

  CommandTransaction tx(args, cntx);
  const bool copy = option_error.empty();
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        for (uint32_t index : t->KeyIndices(shard->shard_id())) {
          if (index < first_key || index >= first_key + inputs.size()) continue;  // dst
          SetOpInput& input = inputs[index - first_key];
          if (copy) {
            ReadSetOpInput(t->db(), args[index], &input);
          } else if (const PrimeValue* value = Slice().Find(t->db(), args[index])) {
            input.wrong_type = !IsSetOpInputType(value->type());
          }
        }
      },
      !store);
  for (const SetOpInput& input : inputs) {
    if (input.wrong_type) return rb->SendError(facade::kWrongTypeErr);
  }
  if (!option_error.empty()) return rb->SendError(option_error);
  SortedPairs result = ComputeSetOp(op, inputs, aggregate, limit);
  if (cardinality_only) return rb->SendLong(result.size());
  if (!store) return ReplyPairs(rb, result, withscores, true);
  const ShardId dst_shard = shard_set->ShardOf(args[1]);
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (shard->shard_id() == dst_shard) StoreResult(t->db(), args[1], result, event);
      },
      true);
  rb->SendLong(result.size());
}

void CmdZUnion(CmdArgList args, ConnectionContext* cntx) {
  SetOpGeneric(args, cntx, SetOp::kUnion, false, false, {});
}
void CmdZInter(CmdArgList args, ConnectionContext* cntx) {
  SetOpGeneric(args, cntx, SetOp::kInter, false, false, {});
}
void CmdZDiff(CmdArgList args, ConnectionContext* cntx) {
  SetOpGeneric(args, cntx, SetOp::kDiff, false, false, {});
}
void CmdZUnionStore(CmdArgList args, ConnectionContext* cntx) {
  SetOpGeneric(args, cntx, SetOp::kUnion, true, false, "zunionstore");
}
void CmdZInterStore(CmdArgList args, ConnectionContext* cntx) {
  SetOpGeneric(args, cntx, SetOp::kInter, true, false, "zinterstore");
}
void CmdZDiffStore(CmdArgList args, ConnectionContext* cntx) {
  SetOpGeneric(args, cntx, SetOp::kDiff, true, false, "zdiffstore");
}
void CmdZInterCard(CmdArgList args, ConnectionContext* cntx) {
  SetOpGeneric(args, cntx, SetOp::kInter, false, true, {});
}

}  // namespace

OpResult<ZSetFamily::AddOutcome> ZSetFamily::Add(DbIndex db, std::string_view key,
                                                 const AddFlags& flags, const ScoreMembers& pairs) {
  return OpAdd(db, key, flags, pairs);
}

void ZSetFamily::Store(DbIndex db, std::string_view key, const SortedPairs& pairs,
                       std::string_view event) {
  StoreResult(db, key, pairs, event);
}

void ZSetFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  RegisterZSetFactory();
  CommandRegistry& r = *registry;
  // The key read only for its metadata (type, length), updated in place, only added to,
  // only removed from, read and removed, overwritten unread, or written when missing: the
  // key flags Redis 7.0 gives (COMMAND INFO). Only RO changes locking (shared).
  const KeySpec kUpdated = Keys(1).WithFlags(kKeyRW | kKeyUpdate);
  const KeySpec kDeletedFrom = Keys(1).WithFlags(kKeyRW | kKeyDelete);
  const KeySpec kMetadataRead = Keys(1).WithFlags(kKeyRO);
  const KeySpec kPoppedFrom = Keys(1).WithFlags(kKeyRW | kKeyAccess | kKeyDelete);
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kReadFast = kCmdReadOnly | kCmdFast;
  constexpr uint32_t kAclW = kAclWrite | kAclSortedSet, kAclR = kAclRead | kAclSortedSet;
  // numkeys key [key ...]: the keys' count is the argument at `begin`.
  constexpr auto NumKeys = [](int begin, uint32_t flags) {
    return KeySpec{.flags = flags, .begin_index = begin, .keynum = true};
  };
  const KeySpec kRead = NumKeys(1, kKeyRO | kKeyAccess);
  const KeySpecs kStore = {Keys(1).WithFlags(kKeyOW | kKeyUpdate), NumKeys(2, kKeyRO | kKeyAccess)};
  const KeySpecs kRangeStore = {Keys(1).WithFlags(kKeyOW | kKeyUpdate),
                                Keys(2).WithFlags(kKeyRO | kKeyAccess)};
  r.Add("ZADD", -4, kWrite | kCmdFast, kUpdated, kAclW | kAclFast, CmdZAdd);
  r.Add("ZINCRBY", 4, kWrite | kCmdFast, Keys(1), kAclW | kAclFast, CmdZIncrBy);
  r.Add("ZREM", -3, kCmdWrite | kCmdFast, kDeletedFrom, kAclW | kAclFast, CmdZRem);
  r.Add("ZCARD", 2, kReadFast, kMetadataRead, kAclR | kAclFast, CmdZCard);
  r.Add("ZSCORE", 3, kReadFast, Keys(1), kAclR | kAclFast, CmdZScore);
  r.Add("ZMSCORE", -3, kReadFast, Keys(1), kAclR | kAclFast, CmdZMScore);
  r.Add("ZRANK", 3, kReadFast, Keys(1), kAclR | kAclFast, CmdZRank);
  r.Add("ZREVRANK", 3, kReadFast, Keys(1), kAclR | kAclFast, CmdZRevRank);
  r.Add("ZCOUNT", 4, kReadFast, Keys(1), kAclR | kAclFast, CmdZCount);
  r.Add("ZLEXCOUNT", 4, kReadFast, Keys(1), kAclR | kAclFast, CmdZLexCount);
  r.Add("ZRANGE", -4, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdZRange);
  r.Add("ZREVRANGE", -4, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdZRevRange);
  r.Add("ZRANGEBYSCORE", -4, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdZRangeByScore);
  r.Add("ZREVRANGEBYSCORE", -4, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdZRevRangeByScore);
  r.Add("ZRANGEBYLEX", -4, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdZRangeByLex);
  r.Add("ZREVRANGEBYLEX", -4, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdZRevRangeByLex);
  r.Add("ZRANGESTORE", -5, kWrite, kRangeStore, kAclW | kAclSlow, CmdZRangeStore);
  r.Add("ZREMRANGEBYRANK", 4, kCmdWrite, kDeletedFrom, kAclW | kAclSlow, CmdZRemRangeByRank);
  r.Add("ZREMRANGEBYSCORE", 4, kCmdWrite, kDeletedFrom, kAclW | kAclSlow, CmdZRemRangeByScore);
  r.Add("ZREMRANGEBYLEX", 4, kCmdWrite, kDeletedFrom, kAclW | kAclSlow, CmdZRemRangeByLex);
  r.Add("ZPOPMIN", -2, kCmdWrite | kCmdFast, kPoppedFrom, kAclW | kAclFast, CmdZPopMin);
  r.Add("ZPOPMAX", -2, kCmdWrite | kCmdFast, kPoppedFrom, kAclW | kAclFast, CmdZPopMax);
  r.Add("ZMPOP", -4, kCmdWrite, NumKeys(1, kKeyRW | kKeyAccess | kKeyDelete), kAclW | kAclSlow,
        CmdZMPop);
  constexpr uint32_t kBlocking = kCmdWrite | kCmdNoScript | kCmdBlocking | kCmdFast;
  constexpr uint32_t kAclB = kAclW | kAclFast | kAclBlocking;
  const KeySpec kBPopped = Keys(1, -2).WithFlags(kKeyRW | kKeyAccess | kKeyDelete);
  r.Add("BZPOPMIN", -3, kBlocking, kBPopped, kAclB, CmdBZPopMin);
  r.Add("BZPOPMAX", -3, kBlocking, kBPopped, kAclB, CmdBZPopMax);
  r.Add("BZMPOP", -5, kCmdWrite | kCmdBlocking, NumKeys(2, kKeyRW | kKeyAccess | kKeyDelete),
        kAclW | kAclSlow | kAclBlocking, CmdBZMPop);
  r.Add("ZRANDMEMBER", -2, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdZRandMember);
  r.Add("ZSCAN", -3, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdZScan);
  r.Add("ZUNION", -3, kCmdReadOnly, kRead, kAclR | kAclSlow, CmdZUnion);
  r.Add("ZINTER", -3, kCmdReadOnly, kRead, kAclR | kAclSlow, CmdZInter);
  r.Add("ZDIFF", -3, kCmdReadOnly, kRead, kAclR | kAclSlow, CmdZDiff);
  r.Add("ZINTERCARD", -3, kCmdReadOnly, kRead, kAclR | kAclSlow, CmdZInterCard);
  r.Add("ZUNIONSTORE", -4, kWrite, kStore, kAclW | kAclSlow, CmdZUnionStore);
  r.Add("ZINTERSTORE", -4, kWrite, kStore, kAclW | kAclSlow, CmdZInterStore);
  r.Add("ZDIFFSTORE", -4, kWrite, kStore, kAclW | kAclSlow, CmdZDiffStore);
}

}  // namespace damselfly
