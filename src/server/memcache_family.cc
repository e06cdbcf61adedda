#include "src/server/memcache_family.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include "absl/strings/escaping.h"
#include "helio/base/strings.h"
#include "helio/base/time.h"
#include "src/server/db_slice.h"
#include "src/server/engine_shard.h"
#include "src/server/family_utils.h"
#include "src/server/lookup_prefetcher.h"

DEFINE_uint64(max_item_size, 1 << 20,
              "Largest value a memcached client may store; larger ones get SERVER_ERROR "
              "object too large for cache");

namespace damselfly {

McStats& McStats::tlocal() {
  static thread_local McStats stats;
  return stats;
}

void McStats::Add(const McStats& o) {
  curr_connections += o.curr_connections;
  total_connections += o.total_connections;
  cmd_get += o.cmd_get;
  cmd_set += o.cmd_set;
  cmd_flush += o.cmd_flush;
  cmd_touch += o.cmd_touch;
  get_hits += o.get_hits;
  get_misses += o.get_misses;
  get_expired += o.get_expired;
  delete_hits += o.delete_hits;
  delete_misses += o.delete_misses;
  incr_hits += o.incr_hits;
  incr_misses += o.incr_misses;
  decr_hits += o.decr_hits;
  decr_misses += o.decr_misses;
  cas_hits += o.cas_hits;
  cas_misses += o.cas_misses;
  cas_badval += o.cas_badval;
  touch_hits += o.touch_hits;
  touch_misses += o.touch_misses;
  total_items += o.total_items;
}

namespace memcache {

namespace {

using facade::MetaArgs;
using facade::MetaFlag;
using facade::MetaMode;
using Type = MemcacheCommand::Type;

constexpr int64_t kMaxRelativeExptime = 2592000;  // 30 days: beyond, a unix time
constexpr int64_t kAlreadyExpired = -1;

// Items change through DbSlice::Update, like every key, so WATCH and the other
// listeners of the write path see memcache writes. Handing out a cas unique or marking a
// win token changes only the metadata (no event).
using Item = DbSlice::Update;

// memcached's exptime as a deadline in unix ms: 0 none, kAlreadyExpired, else the time.
// memcached keeps the low 32 bits of what was sent.
int64_t DeadlineOf(int64_t sent, int64_t now_ms) {
  const int64_t exptime = static_cast<int32_t>(static_cast<uint32_t>(sent));
  if (exptime == 0) return 0;
  if (exptime < 0) return kAlreadyExpired;
  int64_t at_ms = exptime > kMaxRelativeExptime ? exptime * 1000 : now_ms + exptime * 1000;
  return at_ms <= now_ms ? kAlreadyExpired : at_ms;
}

// Remaining seconds as mg's t flag shows them: -1 without a deadline.
int64_t TtlSeconds(int64_t deadline_ms, int64_t now_ms) {
  if (deadline_ms == 0) return -1;
  return deadline_ms <= now_ms ? 0 : (deadline_ms - now_ms + 999) / 1000;
}

void SetDeadline(Item& item, int64_t deadline_ms) {
  if (deadline_ms != 0 || item->has_expire()) item.SetExpire(deadline_ms);
}

McMeta MetaOf(std::string_view key, const PrimeValue& value) {
  const McMeta* meta = Slice().FindMcMeta(kDb, key, value);
  return meta ? *meta : McMeta{};
}

// The item's cas unique, handing one out if it has none yet.
uint64_t EnsureCas(std::string_view key, PrimeValue* value, McMeta* meta) {
  if (meta->cas == 0) {
    meta->cas = Slice().NextCas();
    Slice().SetMcMeta(kDb, key, value, *meta);
  }
  return meta->cas;
}

// Stores `data` as a new item (flags and any cas replaced); keeps only what memcached
// keeps with an item.
void StoreNew(Item& item, std::string_view data, McMeta meta, int64_t deadline_ms) {
  item->SetString(data);  // drops the old item's metadata
  SetDeadline(item, deadline_ms);
  if (meta.flags != 0 || meta.cas != 0 || meta.stale || meta.win_sent) {
    Slice().SetMcMeta(kDb, item.key(), &item.value(), meta);
  }
  item.Changed("set");
  ++McStats::tlocal().total_items;
}

void AppendUint(uint64_t value, std::string* out) { helio::StrAppend(out, value); }

// --- classic storage commands: set add replace append prepend cas

enum class StoreMode { kSet, kAdd, kReplace, kAppend, kPrepend };
enum class StoreResult { kStored, kNotStored, kExists, kNotFound };

struct StoreRequest {
  StoreMode mode = StoreMode::kSet;
  std::string_view key, data;
  uint32_t flags = 0;
  int64_t deadline_ms = 0;
  bool compare = false;  // cas / ms C
  uint64_t cas = 0;
  bool invalidate = false;  // ms I: a cas older than the item's stores a stale item
  bool want_cas = false;    // the reply shows the new item's cas
};

// The cas unique of an item a request is about to store: one handed out now when the
// reply shows it, else none until someone asks.
uint64_t CasForNewItem(const StoreRequest& request) {
  return request.want_cas ? Slice().NextCas() : 0;
}

StoreResult Store(const StoreRequest& request, uint64_t* new_cas) {
  DbSlice& slice = Slice();
  std::string_view key = request.key;
  Item item = slice.FindMutable(kDb, key);
  PrimeValue* value = item ? &item.value() : nullptr;
  McMeta old = value ? MetaOf(key, *value) : McMeta{};
  McMeta meta{.flags = request.flags};
  if (request.compare) {
    if (!value) return StoreResult::kNotFound;
    if (old.cas == 0 || old.cas != request.cas) {
      if (!(request.invalidate && old.cas != 0 && request.cas < old.cas)) return StoreResult::kExists;
      meta.stale = true;
      meta.win_sent = old.win_sent;
    }
  }
  switch (request.mode) {
    case StoreMode::kSet:
      break;
    case StoreMode::kAdd:
      if (value) return StoreResult::kNotStored;
      break;
    case StoreMode::kReplace:
      if (!value) return StoreResult::kNotStored;
      break;
    case StoreMode::kAppend:
    case StoreMode::kPrepend: {
      if (!value) return StoreResult::kNotStored;
      // The item keeps its flags and deadline; only the bytes change.
      std::string scratch;
      std::string_view current = value->GetString(&scratch);
      // memcached cannot allocate the joined item: NOT_STORED, the item unchanged.
      if (current.size() + request.data.size() > FLAGS_max_item_size) return StoreResult::kNotStored;
      std::string joined = request.mode == StoreMode::kAppend
                               ? helio::StrCat(current, request.data)
                               : helio::StrCat(request.data, current);
      McMeta kept{.flags = old.flags, .cas = CasForNewItem(request)};
      value->SetBuiltString(joined);
      item.Changed("append");
      if (kept.flags != 0 || kept.cas != 0) slice.SetMcMeta(kDb, key, value, kept);
      ++McStats::tlocal().total_items;
      *new_cas = kept.cas;
      return StoreResult::kStored;
    }
  }
  if (request.deadline_ms == kAlreadyExpired) {  // stored and at once expired
    if (item) item.Erase();
    return StoreResult::kStored;
  }
  if (!item) item = slice.AddOrFind(kDb, key);
  meta.cas = CasForNewItem(request);
  StoreNew(item, request.data, meta, request.deadline_ms);
  *new_cas = meta.cas;
  return StoreResult::kStored;
}

void RunClassicStore(const MemcacheCommand& command, std::string* out) {
  McStats& stats = McStats::tlocal();
  ++stats.cmd_set;
  StoreRequest request{.key = command.key(),
                       .data = command.data,
                       .flags = command.flags,
                       .deadline_ms = DeadlineOf(command.exptime, UnixTimeMs())};
  switch (command.type) {
    case Type::kAdd: request.mode = StoreMode::kAdd; break;
    case Type::kReplace: request.mode = StoreMode::kReplace; break;
    case Type::kAppend: request.mode = StoreMode::kAppend; break;
    case Type::kPrepend: request.mode = StoreMode::kPrepend; break;
    case Type::kCas:
      request.compare = true;
      request.cas = command.cas_unique;
      break;
    default: break;
  }
  uint64_t new_cas = 0;
  StoreResult result = Store(request, &new_cas);
  if (command.type == Type::kCas) {
    ++(result == StoreResult::kStored   ? stats.cas_hits
       : result == StoreResult::kExists ? stats.cas_badval
                                        : stats.cas_misses);
  }
  if (command.noreply) return;
  switch (result) {
    case StoreResult::kStored: out->append("STORED\r\n"); break;
    case StoreResult::kNotStored: out->append("NOT_STORED\r\n"); break;
    case StoreResult::kExists: out->append("EXISTS\r\n"); break;
    case StoreResult::kNotFound: out->append("NOT_FOUND\r\n"); break;
  }
}

// --- incr / decr (classic and ma)

enum class ArithResult { kOk, kNotFound, kNonNumeric };

// memcached's rules: the value must be a decimal uint64 (trailing spaces, which its own
// in-place decrements leave, allowed); incr wraps at 2^64, decr stops at 0.
ArithResult Arith(Item& item, bool incr, uint64_t delta, uint64_t* result) {
  if (!item) return ArithResult::kNotFound;
  std::string_view key = item.key();
  PrimeValue* value = &item.value();
  std::string scratch;
  std::string_view text = value->GetString(&scratch);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  uint64_t number = 0;
  if (text.empty() || text.size() > 20 || !helio::SimpleAtoi(text, &number)) {
    return ArithResult::kNonNumeric;
  }
  number = incr ? number + delta : (delta > number ? 0 : number - delta);
  McMeta meta = MetaOf(key, *value);
  value->SetString(helio::StrCat(number));  // a new item: new cas, same flags
  item.Changed(incr ? "incrby" : "decrby");
  if (meta.flags != 0) Slice().SetMcMeta(kDb, key, value, McMeta{.flags = meta.flags});
  *result = number;
  return ArithResult::kOk;
}

constexpr std::string_view kNonNumeric =
    "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n";

void RunClassicArith(const MemcacheCommand& command, std::string* out) {
  McStats& stats = McStats::tlocal();
  const bool incr = command.type == Type::kIncr;
  uint64_t number = 0;
  Item item = Slice().FindMutable(kDb, command.key());
  ArithResult result = Arith(item, incr, command.delta, &number);
  if (result != ArithResult::kNonNumeric) {
    bool hit = result == ArithResult::kOk;
    ++(incr ? (hit ? stats.incr_hits : stats.incr_misses) : (hit ? stats.decr_hits : stats.decr_misses));
  }
  if (command.noreply) return;
  switch (result) {
    case ArithResult::kOk:
      AppendUint(number, out);
      out->append("\r\n");
      break;
    case ArithResult::kNotFound: out->append("NOT_FOUND\r\n"); break;
    case ArithResult::kNonNumeric: out->append(kNonNumeric); break;
  }
}

// --- delete, touch

void RunDelete(const MemcacheCommand& command, std::string* out) {
  bool deleted = Slice().Erase(kDb, command.key());
  McStats& stats = McStats::tlocal();
  ++(deleted ? stats.delete_hits : stats.delete_misses);
  if (!command.noreply) out->append(deleted ? "DELETED\r\n" : "NOT_FOUND\r\n");
}

// Gives a live item the deadline a memcached exptime names. An exptime in the past makes
// it expire now: the request that touched it still sees it (gat returns it), nobody after.
// Sets the deadline memcached's `exptime` means at `now_ms`. A command that also reports
// the TTL (mg/ma with T and t) passes the time it reports against, so that T100 shows
// t100, not t101 a millisecond later.
void Touch(Item& item, int64_t exptime, int64_t now_ms) {
  int64_t deadline = DeadlineOf(exptime, now_ms);
  SetDeadline(item, deadline == kAlreadyExpired ? now_ms : deadline);
  item.Changed("expire");
}

void RunTouch(const MemcacheCommand& command, std::string* out) {
  McStats& stats = McStats::tlocal();
  ++stats.cmd_touch;
  Item item = Slice().FindMutable(kDb, command.key());
  if (item) Touch(item, command.exptime, UnixTimeMs());
  ++(item ? stats.touch_hits : stats.touch_misses);
  if (!command.noreply) out->append(item ? "TOUCHED\r\n" : "NOT_FOUND\r\n");
}

// --- retrieval: get gets gat gats

bool WantsCas(Type type) { return type == Type::kGets || type == Type::kGats; }
bool Touches(Type type) { return type == Type::kGat || type == Type::kGats; }

// "VALUE <key> <flags> <bytes>[ <cas>]\r\n": what precedes a value's data block.
void AppendValueHeader(std::string_view key, uint32_t flags, size_t bytes, bool with_cas,
                       uint64_t cas, std::string* out) {
  helio::StrAppend(out, "VALUE ", key, " ", flags, " ", bytes);
  if (with_cas) helio::StrAppend(out, " ", cas);
  out->append("\r\n");
}

void AppendValueBlock(std::string_view key, uint32_t flags, std::string_view data, bool with_cas,
                      uint64_t cas, std::string* out) {
  AppendValueHeader(key, flags, data.size(), with_cas, cas, out);
  out->append(data).append("\r\n");
}

// Finds key `index` of a retrieval, counting it, touching it for gat/gats. Mutable: gets
// may hand out a cas unique.
Item FindForRetrieval(const MemcacheCommand& command, size_t index) {
  McStats& stats = McStats::tlocal();
  std::string_view key = command.keys[index];
  ++stats.cmd_get;
  Item item = Slice().FindMutable(kDb, key);
  Slice().CountRead(bool(item));
  ++(item ? stats.get_hits : stats.get_misses);
  if (Touches(command.type)) {
    ++stats.cmd_touch;
    ++(item ? stats.touch_hits : stats.touch_misses);
    if (item) Touch(item, command.exptime, UnixTimeMs());
  }
  return item;
}

void RunRetrieval(const MemcacheCommand& command, std::string* out) {
  AppendRetrieved(command, 0, command.keys.size(), out);
  out->append("END\r\n");
}

// --- meta commands

// The key as a meta reply shows it: base64 again when it came that way.
void AppendMetaKey(const MemcacheCommand& command, std::string* out) {
  std::string_view key = command.key();
  if (command.meta.Has('b')) {
    helio::StrAppend(out, " k", absl::Base64Escape(absl::string_view(key.data(), key.size())), " b");
  } else {
    helio::StrAppend(out, " k", key);
  }
}

// Appends the k and O flags a reply echoes (all meta replies do, hits and misses).
void AppendEchoFlag(const MemcacheCommand& command, const MetaFlag& flag, std::string* out) {
  if (flag.letter == 'k') AppendMetaKey(command, out);
  if (flag.letter == 'O') helio::StrAppend(out, " O", command.meta.opaque);
}

void AppendEchoFlags(const MemcacheCommand& command, std::string* out) {
  for (const MetaFlag& flag : command.meta.flags) AppendEchoFlag(command, flag, out);
}

// A status line with the echoed flags: "NF kfoo O1".
void AppendStatus(const MemcacheCommand& command, std::string_view code, std::string* out) {
  out->append(code);
  AppendEchoFlags(command, out);
  out->append("\r\n");
}

void RunMetaGet(const MemcacheCommand& command, std::string* out) {
  const MetaArgs& meta_args = command.meta;
  std::string_view key = command.key();
  McStats& stats = McStats::tlocal();
  ++stats.cmd_get;
  DbSlice& slice = Slice();
  const int64_t now_ms = UnixTimeMs();
  Item item = slice.FindMutable(kDb, key);
  slice.CountRead(bool(item));
  PrimeValue* value = item ? &item.value() : nullptr;
  ++(value ? stats.get_hits : stats.get_misses);
  bool won = false;  // this request gets the win token (W)
  McMeta meta;
  if (!value) {
    if (!meta_args.Has('N')) {
      if (!meta_args.Has('q')) AppendStatus(command, "EN", out);
      return;
    }
    // Autovivify: an empty item the winner is expected to fill.
    item = slice.AddOrFind(kDb, key);
    value = &item.value();
    int64_t deadline = DeadlineOf(meta_args.vivify_ttl, now_ms);
    meta = {.win_sent = true};
    StoreNew(item, "", meta, deadline == kAlreadyExpired ? 0 : deadline);
    won = true;
  } else {
    meta = MetaOf(key, *value);
    if (meta_args.Has('T')) {
      ++stats.cmd_touch;
      ++stats.touch_hits;
      Touch(item, meta_args.ttl, now_ms);
    }
  }
  std::string scratch;
  std::string_view data = value->GetString(&scratch);
  if (meta_args.Has('v')) {
    helio::StrAppend(out, "VA ", data.size());
  } else {
    out->append("HD");
  }
  int64_t deadline_ms = value->has_expire() ? slice.GetExpire(kDb, key) : 0;
  for (const MetaFlag& flag : meta_args.flags) {
    switch (flag.letter) {
      case 'c':
        helio::StrAppend(out, " c", EnsureCas(key, value, &meta));
        break;
      case 'f':
        helio::StrAppend(out, " f", meta.flags);
        break;
      case 's':
        helio::StrAppend(out, " s", data.size());
        break;
      case 't':
        helio::StrAppend(out, " t", TtlSeconds(deadline_ms, now_ms));
        break;
      default:
        AppendEchoFlag(command, flag, out);
    }
  }
  // Win / stale flags, in memcached's order: Z (a token is out), X (stale), W (yours).
  if (!won) {
    if (meta.win_sent) out->append(" Z");
    bool recache = meta_args.Has('R') && deadline_ms != 0 &&
                   TtlSeconds(deadline_ms, now_ms) < meta_args.recache_ttl;
    if (meta.stale) out->append(" X");
    if ((meta.stale || recache) && !meta.win_sent) {
      meta.win_sent = won = true;
      slice.SetMcMeta(kDb, key, value, meta);
    }
  }
  if (won) out->append(" W");
  out->append("\r\n");
  if (meta_args.Has('v')) out->append(data).append("\r\n");
}

void RunMetaSet(const MemcacheCommand& command, std::string* out) {
  const MetaArgs& meta_args = command.meta;
  McStats& stats = McStats::tlocal();
  ++stats.cmd_set;
  StoreRequest request{.key = command.key(),
                       .data = command.data,
                       .flags = meta_args.client_flags,
                       .deadline_ms = meta_args.Has('T') ? DeadlineOf(meta_args.ttl, UnixTimeMs()) : 0,
                       .compare = meta_args.Has('C'),
                       .cas = meta_args.compare_cas,
                       .invalidate = meta_args.Has('I'),
                       .want_cas = meta_args.Has('c')};
  switch (meta_args.mode) {
    case MetaMode::kAdd: request.mode = StoreMode::kAdd; break;
    case MetaMode::kReplace: request.mode = StoreMode::kReplace; break;
    case MetaMode::kAppend: request.mode = StoreMode::kAppend; break;
    case MetaMode::kPrepend: request.mode = StoreMode::kPrepend; break;
    default: break;
  }
  uint64_t new_cas = 0;
  StoreResult result = Store(request, &new_cas);
  if (request.compare) {
    ++(result == StoreResult::kStored   ? stats.cas_hits
       : result == StoreResult::kExists ? stats.cas_badval
                                        : stats.cas_misses);
  }
  switch (result) {
    case StoreResult::kStored:
      if (meta_args.Has('q')) return;
      out->append("HD");
      for (const MetaFlag& flag : meta_args.flags) {
        if (flag.letter == 'c') helio::StrAppend(out, " c", new_cas);
        AppendEchoFlag(command, flag, out);
      }
      out->append("\r\n");
      return;
    case StoreResult::kNotStored: return AppendStatus(command, "NS", out);
    case StoreResult::kExists: return AppendStatus(command, "EX", out);
    case StoreResult::kNotFound: return AppendStatus(command, "NF", out);
  }
}

void RunMetaDelete(const MemcacheCommand& command, std::string* out) {
  const MetaArgs& meta_args = command.meta;
  std::string_view key = command.key();
  McStats& stats = McStats::tlocal();
  DbSlice& slice = Slice();
  Item item = slice.FindMutable(kDb, key);
  PrimeValue* value = item ? &item.value() : nullptr;
  if (!value) {
    ++stats.delete_misses;
    return AppendStatus(command, "NF", out);
  }
  McMeta meta = MetaOf(key, *value);
  if (meta_args.Has('C') && meta.cas != meta_args.compare_cas) {
    return AppendStatus(command, "EX", out);
  }
  ++stats.delete_hits;
  if (meta_args.Has('I')) {
    // Invalidate: the item stays, stale, until someone recaches it.
    meta.stale = true;
    meta.cas = slice.NextCas();
    slice.SetMcMeta(kDb, key, value, meta);
    item.Changed("set");
    if (meta_args.Has('T')) Touch(item, meta_args.ttl, UnixTimeMs());
  } else {
    item.Erase("del");
  }
  if (!meta_args.Has('q')) AppendStatus(command, "HD", out);
}

void RunMetaArithmetic(const MemcacheCommand& command, std::string* out) {
  const MetaArgs& meta_args = command.meta;
  std::string_view key = command.key();
  McStats& stats = McStats::tlocal();
  DbSlice& slice = Slice();
  const bool incr = meta_args.mode != MetaMode::kDecrement;
  const int64_t now_ms = UnixTimeMs();
  Item item = slice.FindMutable(kDb, key);
  PrimeValue* value = item ? &item.value() : nullptr;
  uint64_t number = 0;
  if (value && meta_args.Has('C') && MetaOf(key, *value).cas != meta_args.compare_cas) {
    return AppendStatus(command, "EX", out);
  }
  if (!value) {
    ++(incr ? stats.incr_misses : stats.decr_misses);
    if (!meta_args.Has('N')) return AppendStatus(command, "NF", out);
    // Autovivify with the initial value, not counted as an increment.
    item = slice.AddOrFind(kDb, key);
    value = &item.value();
    int64_t deadline = DeadlineOf(meta_args.vivify_ttl, now_ms);
    number = meta_args.initial;
    StoreNew(item, helio::StrCat(number), McMeta{}, deadline == kAlreadyExpired ? 0 : deadline);
  } else {
    if (Arith(item, incr, meta_args.delta, &number) == ArithResult::kNonNumeric) {
      out->append(kNonNumeric);
      return;
    }
    ++(incr ? stats.incr_hits : stats.decr_hits);
    if (meta_args.Has('T')) Touch(item, meta_args.ttl, now_ms);
  }
  if (meta_args.Has('q')) return;
  std::string text = helio::StrCat(number);
  if (meta_args.Has('v')) {
    helio::StrAppend(out, "VA ", text.size());
  } else {
    out->append("HD");
  }
  McMeta meta = MetaOf(key, *value);
  for (const MetaFlag& flag : meta_args.flags) {
    if (flag.letter == 'c') helio::StrAppend(out, " c", EnsureCas(key, value, &meta));
    if (flag.letter == 't') {
      int64_t deadline_ms = value->has_expire() ? slice.GetExpire(kDb, key) : 0;
      helio::StrAppend(out, " t", TtlSeconds(deadline_ms, now_ms));
    }
    AppendEchoFlag(command, flag, out);
  }
  out->append("\r\n");
  if (meta_args.Has('v')) out->append(text).append("\r\n");
}

// me: memcached's debug view of an item. Fields it cannot know here (last access,
// fetched, slab class) are given fixed values.
void RunMetaDebug(const MemcacheCommand& command, std::string* out) {
  std::string_view key = command.key();
  const PrimeValue* value = Slice().Find(kDb, key);
  if (!value) {
    out->append("EN\r\n");
    return;
  }
  McMeta meta = MetaOf(key, *value);
  int64_t deadline_ms = value->has_expire() ? Slice().GetExpire(kDb, key) : 0;
  helio::StrAppend(out, "ME ", key, " exp=", TtlSeconds(deadline_ms, UnixTimeMs()),
                   " la=0 cas=", meta.cas, " fetch=no cls=1 size=", value->Size(), "\r\n");
}

// Runs a keyed command (see RunOnShard).
void RunCommand(const MemcacheCommand& command, std::string* out) {
  switch (command.type) {
    case Type::kSet:
    case Type::kAdd:
    case Type::kReplace:
    case Type::kAppend:
    case Type::kPrepend:
    case Type::kCas:
      return RunClassicStore(command, out);
    case Type::kGet:
    case Type::kGets:
    case Type::kGat:
    case Type::kGats:
      return RunRetrieval(command, out);
    case Type::kTouch:
      return RunTouch(command, out);
    case Type::kIncr:
    case Type::kDecr:
      return RunClassicArith(command, out);
    case Type::kDelete:
      return RunDelete(command, out);
    case Type::kMetaGet:
      return RunMetaGet(command, out);
    case Type::kMetaSet:
      return RunMetaSet(command, out);
    case Type::kMetaDelete:
      return RunMetaDelete(command, out);
    case Type::kMetaArithmetic:
      return RunMetaArithmetic(command, out);
    case Type::kMetaDebug:
      return RunMetaDebug(command, out);
    default:
      LOG(DFATAL) << "not a keyed command: " << facade::MemcacheCommandName(command.type);
  }
}

}  // namespace

bool HasKeys(Type type) {
  switch (type) {
    case Type::kFlushAll:
    case Type::kVersion:
    case Type::kVerbosity:
    case Type::kQuit:
    case Type::kStats:
    case Type::kMetaNoop:
      return false;
    default:
      return true;
  }
}

bool AddsData(Type type) {
  switch (type) {
    case Type::kSet:
    case Type::kAdd:
    case Type::kReplace:
    case Type::kAppend:
    case Type::kPrepend:
    case Type::kCas:
    case Type::kMetaSet:
      return true;
    default:
      return false;
  }
}

bool ReadsOnly(const MemcacheCommand& command) {
  switch (command.type) {
    case Type::kGet:
    case Type::kGets:
    case Type::kMetaDebug:
      return true;
    case Type::kMetaGet:
      return !command.meta.Has('N') && !command.meta.Has('T');
    default:
      return false;
  }
}

bool IsRetrieval(Type type) {
  return type == Type::kGet || type == Type::kGets || type == Type::kGat || type == Type::kGats;
}

void RunOnShard(const MemcacheCommand& command, std::string* out) {
  RunCommand(command, out);
}

void AppendRetrieved(const MemcacheCommand& command, size_t begin, size_t end, std::string* out) {
  LookupPrefetcher prefetcher(Slice(), kDb, end - begin,
                              [&](size_t i) { return command.keys[begin + i]; });
  for (size_t i = begin; i < end; ++i) {
    prefetcher.Before(i - begin);
    Item item = FindForRetrieval(command, i);
    if (!item) continue;
    PrimeValue* value = &item.value();
    std::string_view key = command.keys[i];
    McMeta meta = MetaOf(key, *value);
    uint64_t cas = WantsCas(command.type) ? EnsureCas(key, value, &meta) : 0;
    AppendValueHeader(key, meta.flags, value->Size(), WantsCas(command.type), cas, out);
    value->AppendTo(out);
    out->append("\r\n");
  }
}

void FetchOnShard(const MemcacheCommand& command, size_t index, FetchedItem* item) {
  Item found = FindForRetrieval(command, index);
  if (!found) return;
  PrimeValue* value = &found.value();
  std::string_view key = command.keys[index];
  McMeta meta = MetaOf(key, *value);
  item->found = true;
  item->flags = meta.flags;
  item->cas = WantsCas(command.type) ? EnsureCas(key, value, &meta) : 0;
  std::string scratch;
  item->value = value->GetString(&scratch);
}

void AppendFetched(const MemcacheCommand& command, size_t index, const FetchedItem& item,
                   std::string* out) {
  if (!item.found) return;
  AppendValueBlock(command.keys[index], item.flags, item.value, WantsCas(command.type), item.cas, out);
}

}  // namespace memcache
}  // namespace damselfly
