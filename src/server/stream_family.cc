#include "src/server/stream_family.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "helio/base/strings.h"
#include "src/core/stream.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/blocking_controller.h"
#include "src/server/collection_limits.h"
#include "src/server/engine_shard.h"
#include "src/server/family_utils.h"
#include "src/server/journal.h"
#include "src/server/stream_family_internal.h"
#include "src/server/transaction.h"

namespace damselfly {

using core::Stream;
using core::StreamID;
using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

namespace stream_internal {

namespace {

// Digits only, in uint64 range (Redis's string2ull, without strtoull's leniencies).
std::optional<uint64_t> ParseU64(std::string_view text) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = uint64_t(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

}  // namespace

std::optional<StreamID> ParseId(std::string_view text, uint64_t missing_seq, bool strict,
                                bool* seq_given) {
  if (seq_given != nullptr) *seq_given = true;
  if (text.size() > 127) return std::nullopt;
  if (!strict && text == "-") return StreamID::Min();
  if (!strict && text == "+") return StreamID::Max();
  const size_t dash = text.find('-');
  if (dash == std::string_view::npos) {
    std::optional<uint64_t> ms = ParseU64(text);
    if (!ms) return std::nullopt;
    return StreamID{*ms, missing_seq};
  }
  std::optional<uint64_t> ms = ParseU64(text.substr(0, dash));
  if (!ms) return std::nullopt;
  std::string_view seq_text = text.substr(dash + 1);
  if (seq_given != nullptr && seq_text == "*") {
    *seq_given = false;
    return StreamID{*ms, 0};
  }
  std::optional<uint64_t> seq = ParseU64(seq_text);
  if (!seq) return std::nullopt;
  return StreamID{*ms, *seq};
}

std::optional<StreamID> ParseRangeBound(ReplyBuilder* rb, std::string_view text, bool start) {
  const bool exclusive = text.size() > 1 && text[0] == '(';
  // After "(" only an ID: "(-" and "(+" are invalid.
  std::optional<StreamID> id =
      ParseId(exclusive ? text.substr(1) : text, start ? 0 : StreamID::kMax, exclusive);
  if (!id) {
    rb->SendError(kInvalidIdErr);
    return std::nullopt;
  }
  if (exclusive && !(start ? id->Increment() : id->Decrement())) {
    rb->SendError(start ? "ERR invalid start ID for the interval"
                        : "ERR invalid end ID for the interval");
    return std::nullopt;
  }
  return id;
}

void SendId(ReplyBuilder* rb, StreamID id) {
  constexpr size_t kDigits = 20;  // of UINT64_MAX
  char text[2 * kDigits + 1];     // "<ms>-<seq>"
  char* end = std::to_chars(text, text + kDigits, id.ms).ptr;
  *end++ = '-';
  end = std::to_chars(end, end + kDigits, id.seq).ptr;
  rb->SendBulk(std::string_view(text, size_t(end - text)));
}

void StartReadReply(ReplyBuilder* rb, size_t keys) {
  if (rb->protocol() == facade::RespVersion::kResp3) return rb->StartMap(keys);
  rb->StartArray(keys);
}

void StartReadKey(ReplyBuilder* rb) {
  if (rb->protocol() != facade::RespVersion::kResp3) rb->StartArray(2);
}

void SendEntries(ReplyBuilder* rb, const std::vector<Stream::Entry>& entries) {
  rb->StartArray(entries.size());
  for (const Stream::Entry& entry : entries) {
    rb->StartArray(2);
    SendId(rb, entry.id);
    rb->SendBulkArray(entry.pairs);
  }
}

OpResult<const Stream*> FindStream(DbIndex db, std::string_view key) {
  OpResult<const PrimeValue*> found = Slice().FindTyped(db, key, ObjType::kStream);
  if (!found) return found.status();
  return (*found)->GetObjectAs<const Stream>();
}

std::string_view ParseReadArgs(facade::CmdArgList args, bool group_read, ReadArgs* out) {
  bool group_given = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const size_t more = args.size() - 1 - i;
    if (ArgIs(args[i], "BLOCK") && more > 0) {
      std::optional<int64_t> ms = ParseInt64(args[++i]);
      if (!ms) return "ERR timeout is not an integer or out of range";
      if (*ms < 0) return "ERR timeout is negative";
      out->block_ms = *ms;
    } else if (ArgIs(args[i], "COUNT") && more > 0) {
      std::optional<int64_t> n = ParseInt64(args[++i]);
      if (!n) return facade::kInvalidIntErr;
      out->count = *n < 0 ? 0 : size_t(*n);
    } else if (ArgIs(args[i], "STREAMS") && more > 0) {
      out->first_key = i + 1;
      const size_t rest = args.size() - out->first_key;
      if (rest % 2 != 0) {
        return "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must "
               "be specified.";
      }
      out->num_keys = rest / 2;
      break;
    } else if (ArgIs(args[i], "GROUP") && more >= 2) {
      if (!group_read) {
        return "ERR The GROUP option is only supported by XREADGROUP. You called XREAD "
               "instead.";
      }
      out->group = args[i + 1];
      out->consumer = args[i + 2];
      group_given = true;
      i += 2;
    } else if (ArgIs(args[i], "NOACK")) {
      if (!group_read) {
        return "ERR The NOACK option is only supported by XREADGROUP. You called XREAD "
               "instead.";
      }
      out->noack = true;
    } else {
      return facade::kSyntaxErr;
    }
  }
  if (out->first_key == 0) return facade::kSyntaxErr;
  if (group_read && !group_given) return "ERR Missing GROUP option for XREADGROUP";
  return "";
}

void SendServedRead(facade::ReplyBuilder* rb, const Waiter::Result& result) {
  std::vector<Stream::Entry> entries;
  for (size_t i = 0; i + 1 < result.values.size();) {
    Stream::Entry& entry = entries.emplace_back();
    const size_t n = std::stoull(result.values[i + 1]);
    entry.id = *ParseId(result.values[i], 0, true);
    entry.pairs.assign(result.values.begin() + i + 2, result.values.begin() + i + 2 + n);
    i += 2 + n;
  }
  StartReadReply(rb, 1);
  StartReadKey(rb);
  rb->SendBulk(result.key);
  SendEntries(rb, entries);
}

}  // namespace stream_internal

namespace {

using namespace stream_internal;

constexpr char kXAddZeroErr[] = "ERR The ID specified in XADD must be greater than 0-0";
constexpr char kXAddSmallErr[] =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
constexpr char kExhaustedErr[] =
    "ERR The stream has exhausted the last possible ID, unable to add more items";

// --- finding streams

Stream* StreamOf(const DbSlice::Update& entry) { return entry->GetObjectAs<Stream>(); }

// --- trimming options, shared by XADD and XTRIM (Redis's streamParseAddOrTrimArgsOrReply)

struct TrimArgs {
  enum Strategy { kNone, kMaxLen, kMinId } strategy = kNone;
  bool approx = false;
  uint64_t max_len = 0;
  StreamID min_id;
  uint64_t limit = 0;
};

struct AddArgs {
  TrimArgs trim;
  bool no_mkstream = false;
  bool id_given = false;  // false for "*"
  bool seq_given = true;  // false for "ms-*"
  StreamID id;
  size_t field_pos = 0;  // the first field (XADD)
};

// Parses args from index 2; returns an error text, or "" with *out filled. From a
// replica's master (`from_master`), LIMIT is accepted with an exact trim and ignored:
// Redis keeps it in the XADD it propagates.
std::string_view ParseAddOrTrim(CmdArgList args, bool xadd, bool from_master, AddArgs* out) {
  size_t i = 2;
  bool limit_given = false;
  for (; i < args.size(); ++i) {
    const size_t more = args.size() - 1 - i;
    std::string_view opt = args[i];
    if (xadd && opt == "*") break;
    const bool maxlen = ArgIs(opt, "MAXLEN"), minid = ArgIs(opt, "MINID");
    if ((maxlen || minid) && more > 0) {
      if (out->trim.strategy != TrimArgs::kNone) {
        return "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
      }
      if (more >= 2 && (args[i + 1] == "~" || args[i + 1] == "=")) {
        out->trim.approx = args[i + 1] == "~";
        ++i;
      }
      if (maxlen) {
        std::optional<int64_t> n = ParseInt64(args[i + 1]);
        if (!n) return facade::kInvalidIntErr;
        if (*n < 0) return "ERR The MAXLEN argument must be >= 0.";
        out->trim.max_len = uint64_t(*n);
        out->trim.strategy = TrimArgs::kMaxLen;
      } else {
        std::optional<StreamID> id = ParseId(args[i + 1], 0, true);
        if (!id) return kInvalidIdErr;
        out->trim.min_id = *id;
        out->trim.strategy = TrimArgs::kMinId;
      }
      ++i;
    } else if (ArgIs(opt, "LIMIT") && more > 0) {
      std::optional<int64_t> n = ParseInt64(args[i + 1]);
      if (!n) return facade::kInvalidIntErr;
      if (*n < 0) return "ERR The LIMIT argument must be >= 0.";
      out->trim.limit = uint64_t(*n);
      limit_given = true;
      ++i;
    } else if (xadd && ArgIs(opt, "NOMKSTREAM")) {
      out->no_mkstream = true;
    } else if (xadd) {
      std::optional<StreamID> id = ParseId(opt, 0, true, &out->seq_given);
      if (!id) return kInvalidIdErr;
      out->id = *id;
      out->id_given = true;
      break;
    } else {
      return facade::kSyntaxErr;
    }
  }
  out->field_pos = i + 1;
  if (limit_given) {
    if (out->trim.strategy == TrimArgs::kNone) {
      return "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy";
    }
    if (!out->trim.approx && !from_master)
      return "ERR syntax error, LIMIT cannot be used without the special ~ option";
  } else if (out->trim.approx) {
    // Redis's default: a hundred nodes' worth.
    const uint64_t limit = 100 * CollectionLimits::StreamNodeMaxEntries();
    out->trim.limit = limit == 0 || limit > 1000000 ? 1000000 : limit;
  }
  return "";
}

size_t Trim(Stream* stream, const TrimArgs& trim) {
  switch (trim.strategy) {
    case TrimArgs::kMaxLen:
      return stream->TrimByMaxLen(trim.max_len, trim.approx, trim.approx ? trim.limit : 0);
    case TrimArgs::kMinId:
      return stream->TrimByMinId(trim.min_id, trim.approx, trim.approx ? trim.limit : 0);
    case TrimArgs::kNone:
      break;
  }
  return 0;
}

// What XADD and XTRIM send replicas (ShardJournal::RewriteAs), as Redis propagates them:
// the ID the entry took rather than "*" or "ms-*", and a trim as "MAXLEN = " the length
// it left, whatever its form ("~", MINID, LIMIT: their outcome depends on the clock and
// the node layout). Never the stream's whole state.
void JournalAdd(DbIndex db, std::string_view key, StreamID id, CmdArgList fields,
                std::optional<size_t> trimmed_to) {
  if (ShardJournal::recording() == nullptr) [[likely]]
    return;
  const std::string id_text = id.ToString();
  const std::string length = trimmed_to ? absl::StrCat(*trimmed_to) : std::string();
  std::vector<std::string_view> command{"XADD", key};
  if (trimmed_to) command.insert(command.end(), {"MAXLEN", "=", length});
  command.push_back(id_text);
  command.insert(command.end(), fields.begin(), fields.end());
  ShardJournal::RewriteAs(db, CmdArgList(command.data(), command.size()));
}

void JournalTrim(DbIndex db, std::string_view key, size_t trimmed_to) {
  if (ShardJournal::recording() == nullptr) [[likely]]
    return;
  ShardJournal::RewriteAs(db, {"XTRIM", key, "MAXLEN", "=", absl::StrCat(trimmed_to)});
}

// --- XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value ...

// The ID XADD gives the new entry, or the error text.
std::variant<StreamID, const char*> NextId(const Stream& stream, const AddArgs& args) {
  const StreamID last = stream.last_id();
  if (!args.id_given) {
    const uint64_t now_ms = uint64_t(absl::GetCurrentTimeNanos() / 1000000);
    if (now_ms > last.ms) return StreamID{now_ms, 0};
    StreamID next = last;
    if (!next.Increment()) return kExhaustedErr;
    return next;
  }
  if (!args.seq_given) {
    if (args.id.ms > last.ms) return StreamID{args.id.ms, 0};
    if (args.id.ms < last.ms || last.seq == StreamID::kMax) return kXAddSmallErr;
    return StreamID{last.ms, last.seq + 1};
  }
  if (args.id <= last) return kXAddSmallErr;
  return args.id;
}

// The new entry's ID; nullopt for NOMKSTREAM on a missing key; or an error text.
using AddResult = std::variant<std::optional<StreamID>, const char*>;

AddResult OpAdd(DbIndex db, CmdArgList args, const AddArgs& parsed) {
  DbSlice::Update entry;
  if (parsed.no_mkstream) {
    OpResult<DbSlice::Update> found = Slice().FindMutableTyped(db, args[1], ObjType::kStream);
    if (found.status() == OpStatus::kKeyNotFound) return std::optional<StreamID>();
    if (!found) return facade::kWrongTypeErr;
    entry = std::move(*found);
  } else {
    entry = Slice().AddOrFind(db, args[1]);
    if (entry.inserted()) {
      entry->SetObject(ObjType::kStream, ObjEncoding::kStream, Stream::Make());
    } else if (entry->type() != ObjType::kStream) {
      return facade::kWrongTypeErr;
    }
  }
  Stream* stream = StreamOf(entry);
  if (stream->last_id() == StreamID::Max()) return kExhaustedErr;
  std::variant<StreamID, const char*> id = NextId(*stream, parsed);
  if (auto* error = std::get_if<const char*>(&id)) return *error;
  // After the ID's check, as Redis. A node is one listpack, which stays under 1 GiB (Redis's
  // STREAM_LISTPACK_MAX_SIZE).
  size_t entry_bytes = 0;
  for (std::string_view s : args.subspan(parsed.field_pos)) entry_bytes += s.size();
  if (!core::Listpack::SafeToAdd(0, entry_bytes)) return "ERR Elements are too large to be stored";
  const StreamID added = std::get<StreamID>(id);
  CmdArgList fields = args.subspan(parsed.field_pos);
  stream->Add(added, fields, CollectionLimits::StreamNodeMaxBytes(),
              CollectionLimits::StreamNodeMaxEntries());
  entry.Changed("xadd");
  const bool trimmed = Trim(stream, parsed.trim) > 0;
  if (trimmed) entry.Changed("xtrim");
  JournalAdd(db, args[1], added, fields,
             trimmed ? std::optional<size_t>(stream->Length()) : std::nullopt);
  return std::optional<StreamID>(added);
}

void CmdXAdd(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  AddArgs parsed;
  std::string_view error = ParseAddOrTrim(args, true, cntx->master_link, &parsed);
  if (!error.empty()) return rb->SendError(error);
  const size_t fields = args.size() - std::min(args.size(), parsed.field_pos);
  if (parsed.field_pos >= args.size() || fields < 2 || fields % 2 == 1) {
    return rb->SendError("ERR wrong number of arguments for 'xadd' command");
  }
  if (parsed.id_given && parsed.seq_given && parsed.id == StreamID::Min()) {
    return rb->SendError(kXAddZeroErr);
  }
  AddResult result = OpAdd(cntx->db_index, args, parsed);
  if (auto* err = std::get_if<const char*>(&result)) return rb->SendError(*err);
  const std::optional<StreamID>& id = std::get<std::optional<StreamID>>(result);
  id ? SendId(rb, *id) : rb->SendNull();
}

// --- XRANGE / XREVRANGE key start end [COUNT count]

void CmdXRange(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  const bool reverse = ArgIs(args[0], "XREVRANGE");
  std::string_view start_arg = reverse ? args[3] : args[2];
  std::string_view end_arg = reverse ? args[2] : args[3];
  std::optional<StreamID> start = ParseRangeBound(rb, start_arg, true);
  if (!start) return;
  std::optional<StreamID> end = ParseRangeBound(rb, end_arg, false);
  if (!end) return;
  int64_t count = -1;
  for (size_t i = 4; i < args.size(); ++i) {
    if (ArgIs(args[i], "COUNT") && i + 1 < args.size()) {
      std::optional<int64_t> n = ParseInt64(args[++i]);
      if (!n) return rb->SendError(facade::kInvalidIntErr);
      count = std::max<int64_t>(*n, 0);
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  OpResult<const Stream*> stream = FindStream(cntx->db_index, args[1]);
  if (ReplyIfError(rb, stream.status())) return;
  if (!stream) return rb->SendEmptyArray();
  if (count == 0) return rb->SendNullArray();  // Redis's answer for COUNT 0 or negative
  SendEntries(rb, (*stream)->Range(*start, *end, count < 0 ? 0 : size_t(count), reverse));
}

// --- XLEN key

void CmdXLen(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<const Stream*> stream = FindStream(cntx->db_index, args[1]);
  if (ReplyIfError(rb, stream.status())) return;
  rb->SendLong(stream ? (*stream)->Length() : 0);
}

// --- XDEL key id [id ...]

void CmdXDel(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  // Redis looks the key up before it parses the IDs.
  OpResult<DbSlice::Update> found =
      Slice().FindMutableTyped(cntx->db_index, args[1], ObjType::kStream);
  if (ReplyIfError(rb, found.status())) return;
  if (!found) return rb->SendLong(0);
  std::vector<StreamID> ids;
  for (size_t i = 2; i < args.size(); ++i) {
    std::optional<StreamID> id = ParseId(args[i], 0, true);
    if (!id) return rb->SendError(kInvalidIdErr);
    ids.push_back(*id);
  }
  DbSlice::Update& entry = *found;
  size_t deleted = 0;
  for (StreamID id : ids) deleted += StreamOf(entry)->Delete(id);
  if (deleted > 0) entry.Changed("xdel");
  rb->SendLong(deleted);
}

// --- XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]

void CmdXTrim(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  AddArgs parsed;
  std::string_view error = ParseAddOrTrim(args, false, cntx->master_link, &parsed);
  if (!error.empty()) return rb->SendError(error);
  OpResult<DbSlice::Update> found =
      Slice().FindMutableTyped(cntx->db_index, args[1], ObjType::kStream);
  if (ReplyIfError(rb, found.status())) return;
  if (!found) return rb->SendLong(0);
  const size_t removed = Trim(StreamOf(*found), parsed.trim);
  if (removed > 0) {
    found->Changed("xtrim");
    JournalTrim(cntx->db_index, args[1], StreamOf(*found)->Length());
  }
  rb->SendLong(removed);
}

// --- XSETID key last-id [ENTRIESADDED entries_added] [MAXDELETEDID max_deleted_entry_id]

void CmdXSetId(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<StreamID> id = ParseId(args[2], 0, true);
  if (!id) return rb->SendError(kInvalidIdErr);
  std::optional<uint64_t> entries_added;
  std::optional<StreamID> max_deleted;
  for (size_t i = 3; i < args.size(); ++i) {
    const bool more = i + 1 < args.size();
    if (ArgIs(args[i], "ENTRIESADDED") && more) {
      std::optional<int64_t> n = ParseInt64(args[++i]);
      if (!n) return rb->SendError(facade::kInvalidIntErr);
      if (*n < 0) return rb->SendError("ERR entries_added must be positive");
      entries_added = uint64_t(*n);
    } else if (ArgIs(args[i], "MAXDELETEDID") && more) {
      max_deleted = ParseId(args[++i], 0, true);
      if (!max_deleted) return rb->SendError(kInvalidIdErr);
      if (*id < *max_deleted) {
        return rb->SendError(
            "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
      }
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  OpResult<DbSlice::Update> found =
      Slice().FindMutableTyped(cntx->db_index, args[1], ObjType::kStream);
  if (found.status() == OpStatus::kKeyNotFound) return rb->SendError(facade::kNoSuchKeyErr);
  if (!found) return SendOpError(rb, found.status());
  Stream* stream = StreamOf(*found);
  if (stream->Length() > 0) {
    if (*id < stream->last_id()) {
      return rb->SendError(
          "ERR The ID specified in XSETID is smaller than the target stream top item");
    }
    if (entries_added && stream->Length() > *entries_added) {
      return rb->SendError(
          "ERR The entries_added specified in XSETID is smaller than the target stream length");
    }
  }
  stream->SetLastId(*id);
  if (entries_added) stream->SetEntriesAdded(*entries_added);
  if (max_deleted) stream->SetMaxDeletedId(*max_deleted);
  found->Changed("xsetid");
  rb->SendOk();
}

// --- XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]

// What XREAD reads after, per key in argument order: the ID given, or for "$" the
// stream's last ID, resolved by the read hop on the key's shard. A blocked XREAD's serve
// reads it on the key's shard too (each shard only its own keys' elements), after the
// hop that wrote them.
struct ReadPoints {
  std::vector<std::string> keys;
  std::vector<std::optional<StreamID>> after;  // nullopt: "$" not yet resolved
};

// The entries after `after` in the stream under `key`, at most `count` (0: all).
std::vector<Stream::Entry> EntriesAfter(const Stream& stream, StreamID after, size_t count) {
  if (stream.last_id() <= after) return {};
  after.Increment();
  return stream.Range(after, StreamID::Max(), count, false);
}

// A blocked XREAD's serve: takes the new entries of a ready key into the waiter's result,
// flattened into values as id, pair count, field, value... per entry (Waiter::Result is
// shared by the blocking families; entries need no field of their own). Takes nothing
// from the stream: every XREAD waiting on the key is served from the same write.
Waiter::ServeFn StreamReadServe(std::shared_ptr<const ReadPoints> points, size_t count) {
  return [points, count](Waiter* waiter, DbIndex db, std::string_view key) {
    size_t index = 0;
    while (index < points->keys.size() && points->keys[index] != key) ++index;
    if (index == points->keys.size() || !points->after[index]) return false;
    OpResult<const Stream*> stream = FindStream(db, key);
    if (!stream) return false;
    std::vector<Stream::Entry> entries = EntriesAfter(**stream, *points->after[index], count);
    if (entries.empty() || !waiter->Claim()) return false;
    Waiter::Result& result = waiter->result();
    result.key = std::string(key);
    for (Stream::Entry& entry : entries) {
      result.values.push_back(entry.id.ToString());
      result.values.push_back(std::to_string(entry.pairs.size()));
      for (std::string& s : entry.pairs) result.values.push_back(std::move(s));
    }
    return true;
  };
}

void CmdXRead(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  ReadArgs read;
  std::string_view error = ParseReadArgs(args, false, &read);
  if (!error.empty()) return rb->SendError(error);
  auto points = std::make_shared<ReadPoints>();
  points->after.resize(read.num_keys);
  for (size_t i = 0; i < read.num_keys; ++i) {
    points->keys.emplace_back(args[read.first_key + i]);
    std::string_view text = args[read.first_key + read.num_keys + i];
    if (text == "$") continue;
    if (text == ">") {
      return rb->SendError(
          "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
          "<consumer> option.");
    }
    points->after[i] = ParseId(text, 0, true);
    if (!points->after[i]) return rb->SendError(kInvalidIdErr);
  }
  WaiterPtr waiter;
  if (read.block_ms && blocking::MayBlock(cntx)) {
    waiter = new Waiter(cntx->db_index, StreamReadServe(points, read.count));
  }
  std::vector<std::vector<Stream::Entry>> found(read.num_keys);
  std::atomic_bool wrong_type = false;
  bool any = false;
  CommandTransaction tx(args, cntx);
  LookThenAct(
      tx.Get(), OnOneShard(args, read.first_key, read.first_key + read.num_keys),
      [&](Transaction* t, EngineShard* shard) {
        for (uint32_t index : t->KeyIndices(shard->shard_id())) {
          const size_t k = index - read.first_key;
          OpResult<const Stream*> stream = FindStream(t->db(), args[index]);
          if (stream.status() == OpStatus::kWrongType) wrong_type = true;
          std::optional<StreamID>& after = points->after[k];
          if (!after) after = stream ? (*stream)->last_id() : StreamID::Min();
          if (stream) found[k] = EntriesAfter(**stream, *after, read.count);
        }
      },
      [&] {
        for (const auto& entries : found) any |= !entries.empty();
      },
      [&](Transaction* t, EngineShard* shard) {
        if (!waiter || any || wrong_type) return;
        for (uint32_t index : t->KeyIndices(shard->shard_id())) {
          shard->blocking().Register(waiter, args[index]);
        }
      });
  if (wrong_type) return rb->SendError(facade::kWrongTypeErr);
  if (any) {
    size_t with_entries = 0;
    for (const auto& entries : found) with_entries += !entries.empty();
    StartReadReply(rb, with_entries);
    for (size_t k = 0; k < found.size(); ++k) {
      if (found[k].empty()) continue;
      StartReadKey(rb);
      rb->SendBulk(args[read.first_key + k]);
      SendEntries(rb, found[k]);
    }
    return;
  }
  if (!waiter) return rb->SendNullArray();
  const auto deadline = *read.block_ms == 0 ? std::chrono::steady_clock::time_point::max()
                                            : std::chrono::steady_clock::now() +
                                                  std::chrono::milliseconds(*read.block_ms);
  std::vector<std::string_view> keys(args.begin() + read.first_key,
                                     args.begin() + read.first_key + read.num_keys);
  Waiter::State state = blocking::Wait(cntx, waiter, keys, deadline);
  if (state == Waiter::State::kUnblocked) return rb->SendError(blocking::kUnblockedErr);
  if (state == Waiter::State::kDisconnected) return;
  if (state != Waiter::State::kServed) return rb->SendNullArray();
  SendServedRead(rb, waiter->result());
}

core::TypedObject* MakeStreamFromForm(ObjEncoding encoding, std::string_view form) {
  if (encoding != ObjEncoding::kStream) return nullptr;
  return Stream::Deserialize(form);
}

}  // namespace

void StreamFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  RegisterTypedObjectFactory(ObjType::kStream,
                             ObjectFactory<ObjType::kStream, MakeStreamFromForm>);
  CommandRegistry& r = *registry;
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kAclW = kAclWrite | kAclStream, kAclR = kAclRead | kAclStream;
  const KeySpec kXReadKeys{.flags = kKeyRO | kKeyAccess,
                           .begin_index = 1,
                           .keyword = "STREAMS",
                           .last_key = -1,
                           .limit = 2};
  KeySpec xadd_key = Keys(1).WithFlags(kKeyRW | kKeyUpdate);
  xadd_key.notes = "UPDATE instead of INSERT because of the optional trimming feature";
  r.Add("XADD", -5, kWrite | kCmdFast, xadd_key, kAclW | kAclFast, CmdXAdd);
  r.Add("XRANGE", -4, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdXRange);
  r.Add("XREVRANGE", -4, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdXRange);
  r.Add("XLEN", 2, kCmdReadOnly | kCmdFast, Keys(1).WithFlags(kKeyRO), kAclR | kAclFast, CmdXLen);
  r.Add("XDEL", -3, kCmdWrite | kCmdFast, Keys(1).WithFlags(kKeyRW | kKeyDelete), kAclW | kAclFast,
        CmdXDel);
  r.Add("XTRIM", -4, kCmdWrite, Keys(1).WithFlags(kKeyRW | kKeyDelete), kAclW | kAclSlow, CmdXTrim);
  r.Add("XSETID", -3, kWrite | kCmdFast, Keys(1).WithFlags(kKeyRW | kKeyUpdate), kAclW | kAclFast,
        CmdXSetId);
  r.Add("XREAD", -4, kCmdReadOnly | kCmdBlocking, kXReadKeys, kAclR | kAclSlow | kAclBlocking,
        CmdXRead);
  RegisterGroupCommands(registry);
}

}  // namespace damselfly
