#include "src/server/debug_family.h"

#include <boost/fiber/operations.hpp>
#include <chrono>
#include <thread>

#include "helio/base/strings.h"
#include "src/core/quicklist.h"
#include "src/core/set_object.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/collection_limits.h"
#include "src/server/dataset_digest.h"
#include "src/server/engine_shard_set.h"
#include "src/server/family_utils.h"
#include "src/server/hash_object.h"
#include "src/server/list_object.h"
#include "src/server/persistence_family.h"
#include "src/server/transaction.h"
#include "src/server/zset_object.h"

namespace damselfly {

namespace {

using facade::CmdArgList;
using facade::CommandId;
using facade::ConnectionContext;
using facade::ReplyBuilder;

constexpr char kNotPositiveErr[] = "ERR value is out of range, must be positive";

// What DEBUG POPULATE makes: `count` keys prefix:0 .. prefix:count-1, each a string
// (Redis's "value:N", padded with zero bytes to `size`), or with TYPE a collection of
// `elements` elements (element j of key N is "value:N:j" padded to `size`; hashes
// pair it with field "field:j", sorted sets with score j).
struct PopulateSpec {
  uint64_t count = 0;
  std::string prefix = "key";
  uint64_t size = 0;
  ObjType type = ObjType::kString;
  uint64_t elements = 1;
};

// Makes entry's value a collection of spec.type, built through the type's own object
// so its encoding follows the thresholds (collection_limits.h) as a command's would.
void FillCollection(DbSlice::Update& entry, const PopulateSpec& spec, uint64_t key_index) {
  std::string element;
  auto element_of = [&](uint64_t j) -> const std::string& {
    element = helio::StrCat("value:", key_index, ":", j);
    if (spec.size > element.size()) element.resize(spec.size, '\0');
    return element;
  };
  switch (spec.type) {
    case ObjType::kList: {
      ListRef::MakeEmpty(&entry.value());
      ListRef list(&entry.value());
      for (uint64_t j = 0; j < spec.elements; ++j) {
        list.PrepareAdd(element_of(j).size(), 1, CollectionLimits::ListFill(),
                        CollectionLimits::ListDepth());
        list.Push(ListView::End::kTail, element);
      }
      return;
    }
    case ObjType::kSet: {
      const core::SetLimits limits = CollectionLimits::Sets();
      core::SetObject* set = core::SetObject::Create(element_of(0), spec.elements, limits);
      for (uint64_t j = 0; j < spec.elements; ++j) set->Add(element_of(j), limits);
      const ObjEncoding encoding = set->encoding() == core::SetObject::Encoding::kListpack
                                       ? ObjEncoding::kListpack
                                       : ObjEncoding::kHashtable;  // never an intset here
      entry->SetObject(ObjType::kSet, encoding, set);
      return;
    }
    case ObjType::kHash: {
      HashRef::MakeEmpty(&entry.value());
      HashRef hash(&entry.value());
      for (uint64_t j = 0; j < spec.elements; ++j) {
        std::string field = helio::StrCat("field:", j);
        element_of(j);
        hash.ConvertIfNeeded(std::max(field.size(), element.size()),
                             field.size() + element.size());
        hash.Set(field, element);
      }
      return;
    }
    case ObjType::kZSet: {
      ZSetRef::MakeEmpty(&entry.value());
      ZSetRef zset(&entry.value());
      for (uint64_t j = 0; j < spec.elements; ++j) zset.Set(element_of(j), double(j));
      return;
    }
    default:
      return;
  }
}

// Creates the keys spec names that the shard running it owns; keys that exist are kept.
// Yields every few thousand keys so that the shard keeps serving.
void PopulateShard(EngineShard* shard, DbIndex db, const PopulateSpec& spec) {
  constexpr uint64_t kKeysPerSlice = 4096;
  DbSlice& slice = shard->db_slice();
  std::string key(spec.prefix), value;
  key += ':';
  const size_t key_prefix_len = key.size();
  for (uint64_t i = 0; i < spec.count; ++i) {
    if (i % kKeysPerSlice == kKeysPerSlice - 1) boost::this_fiber::yield();
    key.resize(key_prefix_len);
    helio::StrAppend(&key, i);
    if (shard_set->ShardOf(key) != shard->shard_id()) continue;
    DbSlice::Update entry = slice.AddOrFind(db, key);
    if (!entry.inserted()) continue;
    if (spec.type != ObjType::kString) {
      FillCollection(entry, spec, i);
    } else {
      value = helio::StrCat("value:", i);
      if (spec.size > 0) value.resize(spec.size, '\0');
      entry->SetString(value);
    }
    entry.Changed("set");
  }
}

// DEBUG POPULATE count [prefix] [size] [TYPE type] [ELEMENTS n]: Redis's form, plus
// TYPE and ELEMENTS (damselfly's) to fill lists, sets, hashes or sorted sets.
void Populate(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  PopulateSpec spec;
  size_t options = 3;  // where TYPE / ELEMENTS may start
  while (options < args.size() && options < 5 && !ArgIs(args[options], "TYPE") &&
         !ArgIs(args[options], "ELEMENTS")) {
    ++options;
  }
  if (args.size() < 3 || (args.size() - options) % 2 != 0) {
    return rb->SendError(facade::kSyntaxErr);
  }
  // Redis gives the same error for a count that is not a number and a negative one.
  std::optional<int64_t> count = ParseInt64(args[2]);
  if (!count || *count < 0) return rb->SendError(kNotPositiveErr);
  spec.count = uint64_t(*count);
  if (options >= 4) spec.prefix = std::string(args[3]);
  if (options == 5) {
    std::optional<int64_t> parsed = ParseInt64(args[4]);
    if (!parsed || *parsed < 0) return rb->SendError(kNotPositiveErr);
    spec.size = uint64_t(*parsed);
  }
  for (size_t i = options; i < args.size(); i += 2) {
    if (ArgIs(args[i], "TYPE")) {
      std::optional<ObjType> type = ObjTypeFromName(args[i + 1]);
      if (!type || *type == ObjType::kStream) {
        return rb->SendError("ERR TYPE must be string, list, set, hash or zset");
      }
      spec.type = *type;
    } else if (ArgIs(args[i], "ELEMENTS")) {
      std::optional<int64_t> elements = ParseInt64(args[i + 1]);
      if (!elements || *elements <= 0) return rb->SendError(kNotPositiveErr);
      spec.elements = uint64_t(*elements);
    } else {
      return rb->SendError(facade::kSyntaxErr);
    }
  }
  DbIndex db = cntx->db_index;
  helio::fibers::BlockingCounter pending(shard_set->size());
  for (ShardId id = 0; id < shard_set->size(); ++id) {
    shard_set->pool()->at(id)->LaunchFiber([&] {
      PopulateShard(EngineShard::tlocal(), db, spec);
      pending.Dec();
    });
  }
  pending.Wait();
  rb->SendOk();
}

// DEBUG OBJECT key: Redis's one-line description of a value.
void DescribeObject(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() != 3) return rb->SendError(facade::kSyntaxErr);
  DbIndex db = cntx->db_index;
  std::string_view key = args[2];
  std::optional<std::string> line =
      shard_set->Await(shard_set->ShardOf(key), [&]() -> std::optional<std::string> {
        DbSlice& slice = EngineShard::tlocal()->db_slice();
        const PrimeValue* value = slice.Find(db, key);
        if (!value) return std::nullopt;
        const size_t length =
            value->type() == ObjType::kString ? value->Size() : value->MallocUsed();
        return helio::StrCat("Value at:", reinterpret_cast<uintptr_t>(value),
                             " refcount:1 encoding:", value->EncodingName(),
                             " serializedlength:", length,
                             " lru:0 lru_seconds_idle:", slice.IdleSeconds(db, key).value_or(0));
      });
  if (!line) return rb->SendError(facade::kNoSuchKeyErr);
  rb->SendSimpleString(*line);
}

// DEBUG DIGEST: Redis's digest of the whole dataset (dataset_digest.h). Each shard sums
// its keys in one whole-shard transaction, so the digest is of one moment across shards.
void DigestDataset(ConnectionContext* cntx) {
  std::vector<ShardDigest> parts(shard_set->size());
  RunWholeShard(
      cntx, [&](EngineShard* shard) { parts[shard->shard_id()] = DigestShard(shard->db_slice()); });
  cntx->reply_builder()->SendSimpleString(DigestHex(CombineShardDigests(parts)));
}

// DEBUG DIGEST-VALUE key [key ...]: Redis's digest of each value, all zeros for a
// missing key.
void DigestValues(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  DbIndex db = cntx->db_index;
  rb->StartArray(args.size() - 2);
  for (size_t i = 2; i < args.size(); ++i) {
    std::string_view key = args[i];
    Digest digest = shard_set->Await(shard_set->ShardOf(key), [&]() -> Digest {
      const PrimeValue* value = EngineShard::tlocal()->db_slice().Find(db, key);
      return value ? ValueDigest(*value, value->has_expire()) : Digest{};
    });
    rb->SendSimpleString(DigestHex(digest));
  }
}

// DEBUG PROTOCOL type: a sample reply of each RESP type, as Redis sends them (client
// libraries test their parsers with it).
void SendProtocolSample(std::string_view type, ReplyBuilder* rb) {
  const bool resp3 = rb->protocol() == facade::RespVersion::kResp3;
  if (ArgIs(type, "STRING")) return rb->SendBulk("Hello World");
  if (ArgIs(type, "INTEGER")) return rb->SendLong(12345);
  if (ArgIs(type, "DOUBLE")) return rb->SendDouble(3.141);
  if (ArgIs(type, "BIGNUM")) return rb->SendBigNumber("1234567999999999999999999999999999999");
  if (ArgIs(type, "NULL")) return rb->SendNull();
  if (ArgIs(type, "ARRAY") || ArgIs(type, "SET")) {
    ArgIs(type, "SET") ? rb->StartSet(3) : rb->StartArray(3);
    for (int i = 0; i < 3; ++i) rb->SendLong(i);
    return;
  }
  if (ArgIs(type, "MAP")) {
    rb->StartMap(3);
    for (int i = 0; i < 3; ++i) {
      rb->SendLong(i);
      rb->SendBool(i == 1);
    }
    return;
  }
  if (ArgIs(type, "ATTRIB")) {
    if (resp3) {
      rb->StartAttribute(1);
      rb->SendBulk("key-popularity");
      rb->StartArray(2);
      rb->SendBulk("key:123");
      rb->SendLong(90);
    }
    return rb->SendBulk("Some real reply following the attribute");
  }
  if (ArgIs(type, "PUSH")) {
    if (!resp3) return rb->SendError("ERR RESP2 is not supported by this command");
    rb->StartPush(2);
    rb->SendBulk("server-cpu-usage");
    rb->SendLong(42);
    return rb->SendBulk("Some real reply following the push reply");
  }
  if (ArgIs(type, "VERBATIM")) return rb->SendVerbatim("This is a verbatim\nstring");
  if (ArgIs(type, "TRUE") || ArgIs(type, "FALSE")) return rb->SendBool(ArgIs(type, "TRUE"));
  rb->SendError(
      "ERR Wrong protocol type name. Please use one of the following: "
      "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
}

// DEBUG DIGEST reads every shard at one moment, as a whole-shard transaction; EXEC
// becomes one when it queues it.
bool IsDebugDigest(CmdArgList args) { return args.size() == 2 && ArgIs(args[1], "DIGEST"); }

void CmdDebug(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::string_view sub = args[1];
  if (ArgIs(sub, "POPULATE")) return Populate(args, cntx);
  if (ArgIs(sub, "OBJECT")) return DescribeObject(args, cntx);
  if (ArgIs(sub, "DIGEST") && args.size() == 2) return DigestDataset(cntx);
  if (ArgIs(sub, "DIGEST-VALUE")) return DigestValues(args, cntx);
  if (ArgIs(sub, "SLEEP") && args.size() == 3) {
    std::optional<long double> seconds = ParseLongDouble(args[2]);
    if (!seconds || *seconds < 0) return rb->SendError(facade::kInvalidFloatErr);
    // As in Redis, the server stops: this thread (its shard and its clients) sleeps,
    // which is what tests of the latency monitor and of timeouts expect to observe.
    std::this_thread::sleep_for(std::chrono::microseconds(int64_t(*seconds * 1e6)));
    return rb->SendOk();
  }
  if (ArgIs(sub, "SET-ACTIVE-EXPIRE") && args.size() == 3) {
    int64_t enabled = 0;  // Redis reads it with atoi: anything but a number is 0
    helio::SimpleAtoi(args[2], &enabled);
    EngineShard::set_active_expire(enabled != 0);
    return rb->SendOk();
  }
  if (ArgIs(sub, "PAUSE-CRON") && args.size() == 3) {
    int64_t paused = 0;  // atoi, as Redis
    helio::SimpleAtoi(args[2], &paused);
    EngineShard::set_cron_paused(paused != 0);
    return rb->SendOk();
  }
  if (ArgIs(sub, "PROTOCOL") && args.size() == 3) return SendProtocolSample(args[2], rb);
  if (ArgIs(sub, "RELOAD")) {
    bool save = true, flush = true, merge = false;
    for (size_t i = 2; i < args.size(); ++i) {
      if (ArgIs(args[i], "NOSAVE")) {
        save = false;
      } else if (ArgIs(args[i], "NOFLUSH")) {
        flush = false;
      } else if (ArgIs(args[i], "MERGE")) {
        merge = true;
      } else {
        return rb->SendError(
            "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
      }
    }
    if (std::string error = DebugReload(save, flush, merge, cntx); !error.empty()) {
      return rb->SendError(error);
    }
    return rb->SendOk();
  }
  if (ArgIs(sub, "QUICKLIST-PACKED-THRESHOLD") && args.size() == 3) {
    std::optional<uint64_t> bytes = ParseMemoryValue(args[2]);
    if (!bytes || !core::Quicklist::SetPackedThreshold(*bytes)) {
      return rb->SendError(
          "ERR argument must be a memory value bigger than 1 and smaller than 4gb");
    }
    return rb->SendOk();
  }
  if (ArgIs(sub, "KEYSHARD") && args.size() == 3) {
    return rb->SendLong(shard_set->ShardOf(args[2]));
  }
  if (ArgIs(sub, "HELP") && args.size() == 2) {
    static constexpr std::string_view kHelp[] = {
        "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DIGEST",
        "    Output a hex signature representing the current DB content.",
        "DIGEST-VALUE <key> [<key> ...]",
        "    Output a hex signature of the values of all the specified keys.",
        "RELOAD [MERGE] [NOFLUSH] [NOSAVE]",
        "    Save the RDB on disk and reload it back to memory. NOSAVE: load the file as it is;",
        "    NOFLUSH: load on top of what exists (an existing key or library is an error,",
        "    unless MERGE, which replaces it).",
        "OBJECT <key>",
        "    Show low level info about the key and associated value.",
        "POPULATE <count> [<prefix>] [<size>] [TYPE <type>] [ELEMENTS <n>]",
        "    Create <count> string keys named key:<num>. If <prefix> is specified then",
        "    it is used instead of the 'key' prefix. These are not propagated to",
        "    replicas. TYPE list|set|hash|zset makes each a collection of <n> elements",
        "    (ELEMENTS, default 1) of <size> bytes.",
        "SLEEP <seconds>",
        "    Stop the thread running the command for <seconds>. Decimals allowed.",
        "PROTOCOL <type>",
        "    Reply with a test value of the specified type. <type> can be: string,",
        "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
        "    true, false.",
        "SET-ACTIVE-EXPIRE <0|1>",
        "    Setting it to 0 disables expiring keys in background when they are not",
        "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
        "    default.",
        "PAUSE-CRON <0|1>",
        "    Stop periodic cron job processing.",
        "QUICKLIST-PACKED-THRESHOLD <size>",
        "    List elements of <size> bytes or more get a quicklist node of their own",
        "    (a plain node). 1gb by default, less than 4gb; 0 restores the default.",
        "KEYSHARD <key>",
        "    Return the shard that owns <key> (damselfly only).",
        "HELP",
        "    Prints this help.",
    };
    rb->SendSimpleStringArray(kHelp);
    return;
  }
  rb->SendError(helio::StrCat("ERR unknown subcommand or wrong number of arguments for '",
                              facade::AsCString(sub), "'. Try DEBUG HELP."));
}

}  // namespace

void DebugFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  r.Add("DEBUG", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, kNoKeys,
        kAclAdmin | kAclSlow | kAclDangerous, CmdDebug)
      .whole_shard_if = IsDebugDigest;
}

}  // namespace damselfly
