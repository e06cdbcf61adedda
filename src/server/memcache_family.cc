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
  auth_cmds += o.auth_cmds;
  auth_errors += o.auth_errors;
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
// listeners of the write path see memcache writes. Handing out a cas unique, marking a
// win token or recording a fetch changes only the metadata (no event).
using Item = DbSlice::Update;

// The item of `key` for a command that reads or changes its value as a string; a key
// of another type (a hash, a list...) answers as a miss would.
Item FindStringItem(std::string_view key) {
  Item item = Slice().FindMutable(kDb, key);
  if (item && item->type() != ObjType::kString) return Item();
  return item;
}

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

uint32_t UnixSeconds(int64_t now_ms) { return static_cast<uint32_t>(now_ms / 1000); }

// Records a fetch in an item's access record by memcached's rule (do_item_bump): the
// first fetch only marks the item fetched, later ones move its last access to now. A
// record that starts with this fetch counts from now.
void NoteFetch(McMeta* meta, int64_t now_ms) {
  if (meta->access_s == 0 || meta->fetched) meta->access_s = UnixSeconds(now_ms);
  meta->fetched = true;
}

// The metadata entry of a live item, created (with an access record starting now) if
// it has none. Valid until the next SetMcMeta or erasure.
McMeta* MetaRecord(std::string_view key, PrimeValue* value, int64_t now_ms) {
  DbSlice& slice = Slice();
  if (McMeta* meta = slice.FindMcMeta(kDb, key, *value)) {
    if (meta->access_s == 0) meta->access_s = UnixSeconds(now_ms);
    return meta;
  }
  slice.SetMcMeta(kDb, key, value, McMeta{.access_s = UnixSeconds(now_ms)});
  return slice.FindMcMeta(kDb, key, *value);
}

// Attaches the metadata of an item just stored, stamped with its store time, when it
// says anything or when `record_access` (meta commands keep an access record for the
// items they store, see McMeta).
void AttachNewMeta(std::string_view key, PrimeValue* value, McMeta meta, bool record_access) {
  if (record_access || meta.flags != 0 || meta.cas != 0 || meta.stale || meta.win_sent ||
      meta.key_binary) {
    meta.access_s = UnixSeconds(UnixTimeMs());
    meta.fetched = false;
    Slice().SetMcMeta(kDb, key, value, meta);
  }
}

// Stores `data` as a new item (flags and any cas replaced); keeps only what memcached
// keeps with an item.
void StoreNew(Item& item, std::string_view data, McMeta meta, int64_t deadline_ms,
              bool record_access) {
  item->SetString(data);  // drops the old item's metadata
  SetDeadline(item, deadline_ms);
  AttachNewMeta(item.key(), &item.value(), meta, record_access);
  // Notified as Redis's SET with EX would be.
  item.Changed("set");
  if (deadline_ms > 0) item.Changed("expire");
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
  bool meta = false;        // ms: keeps an access record
  bool key_binary = false;  // ms with a base64 key
};

// How a request's cas compares with the item's (memcached's cas_result).
enum class CasCheck { kNone, kMatch, kStale, kBad };

CasCheck CheckCas(const StoreRequest& request, const McMeta& old) {
  // A zero cas compares nothing; an item whose cas was never handed out matches none.
  // REQUIRES: with invalidate, old.cas != 0.
  if (!request.compare || request.cas == 0) return CasCheck::kNone;
  if (old.cas != 0 && request.cas == old.cas) return CasCheck::kMatch;
  if (request.invalidate && old.cas != 0 && request.cas < old.cas) return CasCheck::kStale;
  return CasCheck::kBad;
}

// memcached's do_store_item. A cas turns set and replace into a cas store, which wants
// a match (or, with I, an older cas: the item is stored stale and keeps its TTL) and
// counts in the cas stats; add ignores the cas; append and prepend refuse a cas that
// differs, but a zero one compares nothing.
StoreResult Store(const StoreRequest& request, uint64_t* new_cas) {
  DbSlice& slice = Slice();
  McStats& stats = McStats::tlocal();
  std::string_view key = request.key;
  Item item = slice.FindMutable(kDb, key);
  PrimeValue* value = item ? &item.value() : nullptr;
  McMeta old = value ? MetaOf(key, *value) : McMeta{};
  // memcached gives every item a cas when it stores it; ours is handed out on demand.
  // One handed out now is newer than any this shard handed out before (every cas of a
  // key comes from its shard), as memcached's store-time cas is newer than any a client
  // read before the store: I then stores such a client's value stale, as memcached does.
  if (value && request.invalidate && old.cas == 0) old.cas = slice.NextCas();
  const CasCheck cas_check = value ? CheckCas(request, old) : CasCheck::kNone;
  McMeta meta{.flags = request.flags, .key_binary = request.key_binary};
  int64_t deadline_ms = request.deadline_ms;
  switch (request.mode) {
    case StoreMode::kSet:
    case StoreMode::kReplace:
      if (request.compare) {
        if (!value) {
          ++stats.cas_misses;
          return StoreResult::kNotFound;
        }
        if (cas_check == CasCheck::kNone || cas_check == CasCheck::kBad) {
          ++stats.cas_badval;
          return StoreResult::kExists;
        }
        ++stats.cas_hits;
        if (cas_check == CasCheck::kStale) {
          meta.stale = true;
          meta.win_sent = old.win_sent;
          deadline_ms = item.expire();
        }
      } else if (request.mode == StoreMode::kReplace && !value) {
        return StoreResult::kNotStored;
      }
      break;
    case StoreMode::kAdd:
      if (value) return StoreResult::kNotStored;
      break;
    case StoreMode::kAppend:
    case StoreMode::kPrepend: {
      if (!value || value->type() != ObjType::kString) return StoreResult::kNotStored;
      if (cas_check == CasCheck::kStale || cas_check == CasCheck::kBad) return StoreResult::kExists;
      // A new item with the old one's flags and deadline, nothing else of its metadata.
      std::string scratch;
      std::string_view current = value->GetString(&scratch);
      // memcached cannot allocate the joined item: NOT_STORED, the item unchanged.
      if (current.size() + request.data.size() > FLAGS_max_item_size) return StoreResult::kNotStored;
      std::string joined = request.mode == StoreMode::kAppend
                               ? helio::StrCat(current, request.data)
                               : helio::StrCat(request.data, current);
      McMeta kept{.flags = old.flags, .cas = request.want_cas ? slice.NextCas() : 0};
      value->SetBuiltString(joined);
      item.Changed("append");
      AttachNewMeta(key, value, kept, request.meta);
      ++stats.total_items;
      *new_cas = kept.cas;
      return StoreResult::kStored;
    }
  }
  meta.cas = request.want_cas ? slice.NextCas() : 0;
  *new_cas = meta.cas;
  if (deadline_ms == kAlreadyExpired) {  // stored (with a cas) and at once expired
    if (item) item.Erase();
    return StoreResult::kStored;
  }
  if (!item) item = slice.AddOrFind(kDb, key);
  StoreNew(item, request.data, meta, deadline_ms, request.meta);
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
  std::string updated = helio::StrCat(number);
  // memcached rewrites the item in place when the number fits in its old bytes: it keeps
  // its access record, key encoding and invalidation state. Otherwise it stores a new
  // item with the same flags. Either way the cas is new.
  if (updated.size() > value->Size()) meta = McMeta{.flags = meta.flags};
  meta.cas = 0;
  value->SetString(updated);
  item.Changed("incrby");  // Redis's name for DECR and DECRBY too
  if (meta.flags != 0 || meta.access_s != 0 || meta.stale || meta.win_sent || meta.key_binary) {
    Slice().SetMcMeta(kDb, key, value, meta);
  }
  *result = number;
  return ArithResult::kOk;
}

constexpr std::string_view kNonNumeric =
    "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n";

void RunClassicArith(const MemcacheCommand& command, std::string* out) {
  McStats& stats = McStats::tlocal();
  const bool incr = command.type == Type::kIncr;
  uint64_t number = 0;
  Item item = FindStringItem(command.key());
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
  Item item = FindStringItem(command.key());
  if (item) {
    const int64_t now_ms = UnixTimeMs();
    Touch(item, command.exptime, now_ms);
    // memcached's touch fetches the item.
    if (McMeta* meta = Slice().FindMcMeta(kDb, item.key(), item.value())) NoteFetch(meta, now_ms);
  }
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
  Item item = FindStringItem(key);
  Slice().CountRead(kDb, key, bool(item));
  ++(item ? stats.get_hits : stats.get_misses);
  if (Touches(command.type)) {
    ++stats.cmd_touch;
    ++(item ? stats.touch_hits : stats.touch_misses);
    if (item) Touch(item, command.exptime, UnixTimeMs());
  }
  return item;
}

// The flags and (for gets and gats) the cas a retrieval reports for a live item, handing
// out a cas if needed, and the fetch recorded in the item's access record if it has an
// entry (see McMeta: a classic fetch does not start one, but the entry a cas needs does).
McMeta FetchedMeta(const MemcacheCommand& command, std::string_view key, PrimeValue* value) {
  McMeta* meta = Slice().FindMcMeta(kDb, key, *value);
  if (!meta && !WantsCas(command.type)) return McMeta{};
  const int64_t now_ms = UnixTimeMs();
  if (!meta) meta = MetaRecord(key, value, now_ms);
  if (WantsCas(command.type) && meta->cas == 0) meta->cas = Slice().NextCas();
  NoteFetch(meta, now_ms);
  return *meta;
}

void RunRetrieval(const MemcacheCommand& command, std::string* out) {
  AppendRetrieved(command, 0, command.keys.size(), out);
  out->append("END\r\n");
}

// --- meta commands
//
// mg and ma apply and report their flags in request order, as memcached does: "t T30"
// shows the TTL before the touch, "T30 t" after it, and R compares with the TTL that
// the flags before it left.

// " k<key>", base64 and " b" when `binary`.
void AppendMetaKey(std::string_view key, bool binary, std::string* out) {
  if (binary) {
    helio::StrAppend(out, " k", absl::Base64Escape(absl::string_view(key.data(), key.size())), " b");
  } else {
    helio::StrAppend(out, " k", key);
  }
}

// Appends the k and O flags a reply echoes (all meta replies do, hits and misses). k
// shows the key as the request named it: base64 again when it came that way (the decoded
// key re-encoded, which may differ from what was sent).
void AppendEchoFlag(const MemcacheCommand& command, const MetaFlag& flag, std::string* out) {
  if (flag.letter == 'k') AppendMetaKey(command.key(), command.meta.Has('b'), out);
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

// mg R: whether an item whose deadline is `deadline_ms` is due for a recache, by
// memcached's test (its exptime is before the time R names; R <= 0 never is).
bool RecacheDue(int64_t deadline_ms, int64_t recache_ttl, int64_t now_ms) {
  const int64_t recache_at = DeadlineOf(recache_ttl, now_ms);
  if (deadline_ms == 0 || recache_at == 0 || recache_at == kAlreadyExpired) return false;
  if (recache_ttl > kMaxRelativeExptime) return deadline_ms < recache_at;
  return TtlSeconds(deadline_ms, now_ms) < recache_ttl;  // in whole seconds, as memcached
}

void RunMetaGet(const MemcacheCommand& command, std::string* out) {
  const MetaArgs& args = command.meta;
  std::string_view key = command.key();
  McStats& stats = McStats::tlocal();
  ++stats.cmd_get;
  DbSlice& slice = Slice();
  const int64_t now_ms = UnixTimeMs();
  Item item = FindStringItem(key);
  slice.CountRead(kDb, key, bool(item));
  ++(item ? stats.get_hits : stats.get_misses);
  // N vivifies a missing key only: a RESP key of another type stays as it is.
  const bool created = !item && args.Has('N') && slice.Find(kDb, key) == nullptr;
  if (!item) {
    if (!created) {
      if (!args.Has('q')) AppendStatus(command, "EN", out);
      return;
    }
    // Autovivify: an empty item the winner is expected to fill. It has no deadline
    // until N (or T) gives it one, in flag order.
    item = slice.AddOrFind(kDb, key);
    StoreNew(item, "", McMeta{}, 0, true);
  }
  PrimeValue* value = &item.value();
  McMeta* meta = MetaRecord(key, value, now_ms);
  std::string scratch;
  std::string_view data = value->GetString(&scratch);
  if (args.Has('v')) {
    helio::StrAppend(out, "VA ", data.size());
  } else {
    out->append("HD");
  }
  bool won = false;  // this request gets the win token (W)
  for (const MetaFlag& flag : args.flags) {
    switch (flag.letter) {
      case 'T':
        ++stats.cmd_touch;
        ++stats.touch_hits;
        Touch(item, args.ttl, now_ms);
        break;
      case 'N':
        if (created) {
          Touch(item, args.vivify_ttl, now_ms);
          won = true;
        }
        break;
      case 'R':
        if (!created && !meta->win_sent &&
            RecacheDue(item.expire(), args.recache_ttl, now_ms)) {
          won = true;
        }
        break;
      case 'c':
        if (meta->cas == 0) meta->cas = slice.NextCas();
        helio::StrAppend(out, " c", meta->cas);
        break;
      case 'f':
        helio::StrAppend(out, " f", meta->flags);
        break;
      case 'h':
        out->append(meta->fetched ? " h1" : " h0");
        break;
      case 'l':
        helio::StrAppend(out, " l", UnixSeconds(now_ms) - meta->access_s);
        break;
      case 's':
        helio::StrAppend(out, " s", data.size());
        break;
      case 't':
        helio::StrAppend(out, " t", TtlSeconds(item.expire(), now_ms));
        break;
      case 'k':  // a hit shows the key as it was stored, not as this request named it
        AppendMetaKey(key, meta->key_binary, out);
        break;
      case 'O':
        helio::StrAppend(out, " O", args.opaque);
        break;
      default:
        break;
    }
  }
  // Win / stale flags, in memcached's order: Z (a token is out), X (stale), W (yours).
  if (meta->win_sent) out->append(" Z");
  if (meta->stale) {
    out->append(" X");
    if (!meta->win_sent) won = true;
  }
  if (won) {
    out->append(" W");
    meta->win_sent = true;
  }
  if (!args.Has('u')) NoteFetch(meta, now_ms);  // u: "don't bump the item"
  out->append("\r\n");
  if (args.Has('v')) out->append(data).append("\r\n");
}

// ms replies: the status, then the echoed flags, with 'c' the new item's cas (0 when
// nothing was stored, as memcached sends it).
void AppendMetaSetReply(const MemcacheCommand& command, std::string_view code, uint64_t cas,
                        std::string* out) {
  out->append(code);
  for (const MetaFlag& flag : command.meta.flags) {
    if (flag.letter == 'c') helio::StrAppend(out, " c", cas);
    AppendEchoFlag(command, flag, out);
  }
  out->append("\r\n");
}

void RunMetaSet(const MemcacheCommand& command, std::string* out) {
  const MetaArgs& args = command.meta;
  ++McStats::tlocal().cmd_set;
  StoreRequest request{.key = command.key(),
                       .data = command.data,
                       .flags = args.client_flags,
                       .deadline_ms = args.Has('T') ? DeadlineOf(args.ttl, UnixTimeMs()) : 0,
                       .compare = args.Has('C'),
                       .cas = args.compare_cas,
                       .invalidate = args.Has('I'),
                       .want_cas = args.Has('c'),
                       .meta = true,
                       .key_binary = args.Has('b')};
  switch (args.mode) {
    case MetaMode::kAdd: request.mode = StoreMode::kAdd; break;
    case MetaMode::kReplace: request.mode = StoreMode::kReplace; break;
    case MetaMode::kAppend: request.mode = StoreMode::kAppend; break;
    case MetaMode::kPrepend: request.mode = StoreMode::kPrepend; break;
    default: break;
  }
  uint64_t new_cas = 0;
  switch (Store(request, &new_cas)) {
    case StoreResult::kStored:
      if (!args.Has('q')) AppendMetaSetReply(command, "HD", new_cas, out);
      return;
    case StoreResult::kNotStored: return AppendMetaSetReply(command, "NS", 0, out);
    case StoreResult::kExists: return AppendMetaSetReply(command, "EX", 0, out);
    case StoreResult::kNotFound: return AppendMetaSetReply(command, "NF", 0, out);
  }
}

void RunMetaDelete(const MemcacheCommand& command, std::string* out) {
  const MetaArgs& args = command.meta;
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
  // A cas never handed out matches nothing, C0 included (memcached's are never 0).
  if (args.Has('C') && (meta.cas == 0 || meta.cas != args.compare_cas)) {
    ++stats.delete_misses;
    return AppendStatus(command, "EX", out);
  }
  ++stats.delete_hits;
  if (args.Has('I')) {
    // Invalidate: the item stays, stale, until someone recaches it; the next mg wins.
    meta.stale = true;
    meta.win_sent = false;
    meta.cas = slice.NextCas();
    slice.SetMcMeta(kDb, key, value, meta);
    item.Changed("set");
    if (args.Has('T')) Touch(item, args.ttl, UnixTimeMs());
  } else {
    item.Erase("del");
  }
  if (!args.Has('q')) AppendStatus(command, "HD", out);
}

void RunMetaArithmetic(const MemcacheCommand& command, std::string* out) {
  const MetaArgs& args = command.meta;
  std::string_view key = command.key();
  McStats& stats = McStats::tlocal();
  DbSlice& slice = Slice();
  const bool incr = args.mode != MetaMode::kDecrement;
  const int64_t now_ms = UnixTimeMs();
  Item item = FindStringItem(key);
  PrimeValue* value = item ? &item.value() : nullptr;
  uint64_t number = 0;
  // C0 compares nothing; a cas never handed out matches no other.
  if (value && args.Has('C') && args.compare_cas != 0 &&
      MetaOf(key, *value).cas != args.compare_cas) {
    return AppendStatus(command, "EX", out);
  }
  // N vivifies a missing key only: a RESP key of another type stays as it is.
  const bool created = !value && args.Has('N') && slice.Find(kDb, key) == nullptr;
  if (!value) {
    ++(incr ? stats.incr_misses : stats.decr_misses);
    if (!created) return AppendStatus(command, "NF", out);
    // Autovivify with the initial value, not counted as an increment. No deadline until
    // N (or T) gives it one, in flag order.
    item = slice.AddOrFind(kDb, key);
    value = &item.value();
    number = args.initial;
    StoreNew(item, helio::StrCat(number), McMeta{}, 0, true);
  } else {
    if (Arith(item, incr, args.delta, &number) == ArithResult::kNonNumeric) {
      out->append(kNonNumeric);
      return;
    }
    ++(incr ? stats.incr_hits : stats.decr_hits);
  }
  const size_t reply_start = out->size();
  const std::string text = helio::StrCat(number);
  if (args.Has('v')) {
    helio::StrAppend(out, "VA ", text.size());
  } else {
    out->append("HD");
  }
  McMeta meta = MetaOf(key, *value);
  for (const MetaFlag& flag : args.flags) {
    switch (flag.letter) {
      case 'c':
        helio::StrAppend(out, " c", EnsureCas(key, value, &meta));
        break;
      case 't':
        helio::StrAppend(out, " t", TtlSeconds(item.expire(), now_ms));
        break;
      case 'T':
        Touch(item, args.ttl, now_ms);
        break;
      case 'N':
        if (created) Touch(item, args.vivify_ttl, now_ms);
        break;
      default:
        AppendEchoFlag(command, flag, out);
    }
  }
  // q hides the reply of an update, not that of an item it created (memcached's quirk);
  // the flags still applied.
  if (args.Has('q') && !created) {
    out->resize(reply_start);
    return;
  }
  out->append("\r\n");
  if (args.Has('v')) out->append(text).append("\r\n");
}

// me: memcached's debug view of an item. The slab class and size are memcached's
// allocator's; cls is fixed and size is the value's.
void RunMetaDebug(const MemcacheCommand& command, std::string* out) {
  std::string_view key = command.key();
  Item item = FindStringItem(key);  // mutable for the cas, changed in no way
  if (!item) {
    out->append("EN\r\n");
    return;
  }
  PrimeValue* value = &item.value();
  const int64_t now_ms = UnixTimeMs();
  McMeta meta = MetaOf(key, *value);
  EnsureCas(key, value, &meta);  // memcached's items always have one
  out->append("ME ");
  if (meta.key_binary) {
    out->append(absl::Base64Escape(absl::string_view(key.data(), key.size())));
  } else {
    out->append(key);
  }
  // memcached prints its clock minus the item's exptime: minus the remaining TTL.
  const int64_t deadline_ms = item.expire();
  helio::StrAppend(out, " exp=", deadline_ms ? -TtlSeconds(deadline_ms, now_ms) : -1,
                   " la=", meta.access_s ? UnixSeconds(now_ms) - meta.access_s : 0,
                   " cas=", meta.cas, " fetch=", meta.fetched ? "yes" : "no",
                   " cls=1 size=", value->Size(), "\r\n");
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
    McMeta meta = FetchedMeta(command, key, value);
    AppendValueHeader(key, meta.flags, value->Size(), WantsCas(command.type), meta.cas, out);
    value->AppendTo(out);
    out->append("\r\n");
  }
}

void FetchOnShard(const MemcacheCommand& command, size_t index, FetchedItem* item) {
  Item found = FindForRetrieval(command, index);
  if (!found) return;
  PrimeValue* value = &found.value();
  McMeta meta = FetchedMeta(command, command.keys[index], value);
  item->found = true;
  item->flags = meta.flags;
  item->cas = meta.cas;
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
