#include "src/server/hll_family.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "src/core/hyperloglog.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/collection_limits.h"
#include "src/server/engine_shard.h"
#include "src/server/engine_shard_set.h"
#include "src/server/family_utils.h"
#include "src/server/transaction.h"

namespace damselfly {

namespace {

namespace hll = core::hll;
using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

size_t SparseMaxBytes() { return CollectionLimits::HllSparseMaxBytes(); }

// The HLL bytes of a found value: kWrongType for another type, kNotHll for a string
// that fails the header checks.
OpResult<std::string_view> HllBytes(const PrimeValue& value) {
  if (value.type() != ObjType::kString) return OpStatus::kWrongType;
  std::string_view bytes = value.GetString(&Scratch());
  if (!hll::IsHll(bytes)) return OpStatus::kNotHll;
  return bytes;
}

// Stores a rebuilt HLL: uncompressed (it is rewritten on every change) and marked raw,
// which is also what Redis's OBJECT ENCODING says of an HLL any PF command touched.
void StoreHll(DbSlice::Update& entry, std::string_view bytes) { entry->SetBuiltString(bytes); }

// Redis unshares the value (making it raw) before any PF command looks further; a value
// a client SET keeps its bytes and becomes raw the same way.
void MarkBuilt(DbSlice::Update& entry) {
  if (!entry->is_built()) StoreHll(entry, std::string(entry->GetString(&Scratch())));
}

// --- PFADD key [element ...]: 1 when the key was created or a register changed.

OpResult<bool> OpPfAdd(DbIndex db, std::string_view key, CmdArgList elements) {
  DbSlice::Update entry = Slice().AddOrFind(db, key);
  const size_t max_bytes = SparseMaxBytes();
  if (entry.inserted()) {
    std::string bytes = hll::MakeEmpty();
    for (std::string_view element : elements) hll::Add(&bytes, element, max_bytes);
    hll::InvalidateCache(bytes.data());
    StoreHll(entry, bytes);
    entry.Changed("pfadd");
    return true;
  }
  OpResult<std::string_view> current = HllBytes(entry.value());
  if (!current) return current.status();

  bool changed = false;
  if (hll::EncodingOf(*current) == hll::Encoding::kDense) {
    char* in_place = entry->GetMutableBytes(0);
    for (std::string_view element : elements) {
      changed |= hll::DenseAdd(in_place, element) == hll::Change::kChanged;
    }
    if (changed) {
      hll::InvalidateCache(in_place);
      entry.Changed("pfadd");
    }
    return changed;
  }

  std::string bytes(*current);
  for (std::string_view element : elements) {
    hll::Change change = hll::Add(&bytes, element, max_bytes);
    if (change == hll::Change::kCorrupt) {
      // Redis keeps what the elements before this one changed, and reports nothing.
      if (changed) StoreHll(entry, bytes);
      return OpStatus::kCorruptHll;
    }
    changed |= change == hll::Change::kChanged;
  }
  if (!changed) {
    MarkBuilt(entry);
    return false;
  }
  hll::InvalidateCache(bytes.data());
  StoreHll(entry, bytes);
  entry.Changed("pfadd");
  return true;
}

void CmdPfAdd(CmdArgList args, ConnectionContext* cntx) {
  OpResult<bool> changed = OpPfAdd(cntx->db_index, args[1], args.subspan(2));
  if (!changed) return SendOpError(cntx->reply_builder(), changed.status());
  cntx->reply_builder()->SendLong(*changed ? 1 : 0);
}

// --- PFCOUNT key [key ...]

// One key: the cached cardinality, else the estimate, written back as the cache. The
// write-back is a change of the value (WATCH and client tracking see it, as Redis signals
// the key), but no keyspace event: the event name "pfcount" has no notification class.
OpResult<uint64_t> OpPfCountOne(DbIndex db, std::string_view key) {
  const PrimeValue* value = Slice().FindRead(db, key);
  if (value == nullptr) return 0;
  OpResult<std::string_view> current = HllBytes(*value);
  if (!current) return current.status();
  std::optional<uint64_t> cached = hll::CachedCardinality(*current);
  if (cached && value->is_built()) return *cached;

  DbSlice::Update entry = Slice().FindMutable(db, key);
  if (cached) {
    MarkBuilt(entry);
    return *cached;
  }
  std::string_view bytes = entry->GetString(&Scratch());
  std::optional<uint64_t> count = hll::Count(bytes);
  if (!count) return OpStatus::kCorruptHll;
  if (hll::EncodingOf(bytes) == hll::Encoding::kDense) {
    hll::SetCachedCardinality(entry->GetMutableBytes(0), *count);
  } else {
    std::string copy(bytes);
    hll::SetCachedCardinality(copy.data(), *count);
    StoreHll(entry, copy);
  }
  entry.Changed("pfcount");
  return *count;
}

// What one shard's keys contribute to a merge: the maximum of their registers, whether
// any was dense (PFMERGE then writes a dense destination), and the first error, with the
// position of the key that gave it.
struct ShardMerge {
  hll::RawRegisters max{};
  bool any_dense = false;
  OpStatus error = OpStatus::kOk;
  uint32_t error_index = 0;
};

// A read hop: merges this shard's keys at positions >= 1 into *merge, stopping at the
// first bad key (Redis stops there too). Missing keys count as empty HLLs.
void MergeShardKeys(Transaction* t, EngineShard* shard, ShardMerge* merge) {
  for (uint32_t index : t->KeyIndices(shard->shard_id())) {
    const PrimeValue* value = Slice().FindRead(t->db(), t->args()[index]);
    if (value == nullptr) continue;
    OpResult<std::string_view> bytes = HllBytes(*value);
    OpStatus status = bytes.status();
    if (bytes) {
      merge->any_dense |= hll::EncodingOf(*bytes) == hll::Encoding::kDense;
      if (!hll::MergeInto(*bytes, &merge->max)) status = OpStatus::kCorruptHll;
    }
    if (status != OpStatus::kOk) {
      merge->error = status;
      merge->error_index = index;
      return;
    }
  }
}

// One merge per shard the command touches (inline: the one shard's), on the heap: a
// register array is 16 KiB, too much for a fiber's stack.
using ShardMerges = std::vector<ShardMerge>;

// The read hop. Returns the merges; the first holds them all combined, with the error of
// the earliest bad key.
ShardMerges MergeAll(CommandTransaction& tx, bool last_hop) {
  ShardMerges merges(tx->is_inline() ? 1 : shard_set->size());
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        MergeShardKeys(t, shard, &merges[t->is_inline() ? 0 : shard->shard_id()]);
      },
      last_hop);
  ShardMerge& all = merges[0];
  for (size_t s = 1; s < merges.size(); ++s) {
    const ShardMerge& shard = merges[s];
    if (shard.error != OpStatus::kOk &&
        (all.error == OpStatus::kOk || shard.error_index < all.error_index)) {
      all.error = shard.error;
      all.error_index = shard.error_index;
    }
    all.any_dense |= shard.any_dense;
    for (size_t i = 0; i < hll::kRegisters; ++i) all.max[i] = std::max(all.max[i], shard.max[i]);
  }
  return merges;
}

void CmdPfCount(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  if (args.size() == 2) {
    OpResult<uint64_t> count = OpPfCountOne(cntx->db_index, args[1]);
    if (!count) return SendOpError(rb, count.status());
    return rb->SendLong(int64_t(*count));
  }
  CommandTransaction tx(args, cntx);
  const ShardMerges merges = MergeAll(tx, true);
  if (merges[0].error != OpStatus::kOk) return SendOpError(rb, merges[0].error);
  rb->SendLong(int64_t(hll::CountRaw(merges[0].max)));
}

// --- PFMERGE destkey [sourcekey ...]: the destination is a source too (Redis reads it
// first), then receives the merged registers.

OpStatus OpStoreMerge(DbIndex db, std::string_view key, const ShardMerge& merge) {
  DbSlice::Update entry = Slice().AddOrFind(db, key);
  if (!entry.inserted() && hll::EncodingOf(entry->GetString(&Scratch())) == hll::Encoding::kDense) {
    char* in_place = entry->GetMutableBytes(0);
    for (uint32_t i = 0; i < hll::kRegisters; ++i) {
      if (merge.max[i] != 0) hll::DenseSet(in_place, i, merge.max[i]);
    }
    hll::InvalidateCache(in_place);
  } else {
    std::string bytes =
        entry.inserted() ? hll::MakeEmpty() : std::string(entry->GetString(&Scratch()));
    // The read hop validated the destination: only a corrupt sparse one fails here.
    if (!hll::StoreRegisters(&bytes, merge.max, merge.any_dense, SparseMaxBytes())) {
      return OpStatus::kCorruptHll;
    }
    StoreHll(entry, bytes);
  }
  entry.Changed("pfadd");  // as Redis: a merge is a mass PFADD
  return OpStatus::kOk;
}

void CmdPfMerge(CmdArgList args, ConnectionContext* cntx) {
  CommandTransaction tx(args, cntx);
  const ShardMerges merges = MergeAll(tx, false);
  const ShardMerge& all = merges[0];
  const ShardId dst_shard = shard_set->ShardOf(args[1]);
  OpStatus stored = OpStatus::kOk;  // written by the destination's shard only
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (all.error == OpStatus::kOk && (t->is_inline() || shard->shard_id() == dst_shard)) {
          stored = OpStoreMerge(t->db(), args[1], all);
        }
      },
      true);
  const OpStatus status = all.error != OpStatus::kOk ? all.error : stored;
  if (status != OpStatus::kOk) return SendOpError(cntx->reply_builder(), status);
  cntx->reply_builder()->SendOk();
}

// --- PFDEBUG <GETREG | DECODE | ENCODING | TODENSE> key. Redis looks the key up before
// it reads the subcommand. A conversion to dense changes the value without a signal or
// event, as in Redis.

void CmdPfDebug(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  DbSlice::Update entry = Slice().FindMutable(cntx->db_index, args[2]);
  if (!entry) return rb->SendError("ERR The specified key does not exist");
  OpResult<std::string_view> current = HllBytes(entry.value());
  if (!current) return SendOpError(rb, current.status());
  MarkBuilt(entry);
  std::string bytes(entry->GetString(&Scratch()));
  const bool sparse = hll::EncodingOf(bytes) == hll::Encoding::kSparse;
  const std::string_view sub = args[1];

  // Converts a sparse value to dense, stored; false (replied) when corrupt.
  auto to_dense = [&] {
    if (!sparse) return true;
    if (!hll::SparseToDense(&bytes)) {
      SendOpError(rb, OpStatus::kCorruptHll);
      return false;
    }
    StoreHll(entry, bytes);
    return true;
  };
  if (ArgIs(sub, "GETREG")) {
    if (!to_dense()) return;
    rb->StartArray(hll::kRegisters);
    for (uint32_t i = 0; i < hll::kRegisters; ++i) rb->SendLong(hll::DenseRegister(bytes, i));
  } else if (ArgIs(sub, "DECODE")) {
    if (!sparse) return rb->SendError("ERR HLL encoding is not sparse");
    rb->SendBulk(hll::DecodeSparse(bytes));
  } else if (ArgIs(sub, "ENCODING")) {
    rb->SendSimpleString(sparse ? "sparse" : "dense");
  } else if (ArgIs(sub, "TODENSE")) {
    if (!to_dense()) return;
    rb->SendLong(sparse ? 1 : 0);
  } else {
    rb->SendError(helio::StrCat("ERR Unknown PFDEBUG subcommand '", sub, "'"));
  }
}

// PFSELFTEST: runs on the connection's fiber (no keys) and keeps its thread for about a
// second, as it keeps Redis's.
void CmdPfSelfTest(CmdArgList, ConnectionContext* cntx) {
  const std::string error = hll::SelfTest(SparseMaxBytes());
  if (!error.empty()) return cntx->reply_builder()->SendError(error);
  cntx->reply_builder()->SendOk();
}

}  // namespace

void HllFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  constexpr uint32_t kAclW = kAclWrite | kAclHyperLogLog;
  const KeySpecs kMerged = {Keys(1).WithFlags(kKeyRW | kKeyAccess | kKeyInsert),
                            Keys(2, -1).WithFlags(kKeyRO | kKeyAccess)};
  r.Add("PFADD", -2, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(1).WithFlags(kKeyRW | kKeyInsert),
        kAclW | kAclFast, CmdPfAdd);
  // Read-only for Redis, but RW keys: one key's cached cardinality is written back.
  r.Add("PFCOUNT", -2, kCmdReadOnly | kCmdMayReplicate, Keys(1, -1).WithFlags(kKeyRW | kKeyAccess),
        kAclRead | kAclHyperLogLog | kAclSlow, CmdPfCount);
  r.Add("PFMERGE", -2, kCmdWrite | kCmdDenyOom, kMerged, kAclW | kAclSlow, CmdPfMerge);
  r.Add("PFDEBUG", 3, kCmdWrite | kCmdDenyOom | kCmdAdmin, Keys(2).WithFlags(kKeyRW | kKeyAccess),
        kAclW | kAclAdmin | kAclSlow | kAclDangerous, CmdPfDebug);
  r.Add("PFSELFTEST", 1, kCmdAdmin, kNoKeys, kAclHyperLogLog | kAclAdmin | kAclSlow | kAclDangerous,
        CmdPfSelfTest);
}

}  // namespace damselfly
