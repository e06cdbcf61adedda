#include "src/server/bitops_family.h"

#include <gflags/gflags.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "src/core/bitops.h"
#include "src/facade/conn_context.h"
#include "src/facade/error.h"
#include "src/server/arg_parsing.h"
#include "src/server/engine_shard_set.h"
#include "src/server/family_utils.h"
#include "src/server/transaction.h"

DECLARE_uint64(proto_max_bulk_len);

namespace damselfly {

namespace {

using core::FieldOverflow;
using facade::CmdArgList;
using facade::ConnectionContext;
using facade::ReplyBuilder;

constexpr char kBitOffsetErr[] = "ERR bit offset is not an integer or out of range";
constexpr char kBitValueErr[] = "ERR bit is not an integer or out of range";
constexpr char kFieldTypeErr[] =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "
    "i64 is.";

const uint8_t* Bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// A bit offset argument: a non-negative integer whose byte lies below proto-max-bulk-len;
// with `field_bits` (BITFIELD), "#N" means N * field_bits.
std::optional<uint64_t> ParseBitOffset(std::string_view arg, unsigned field_bits = 0) {
  const bool times_width = field_bits > 0 && !arg.empty() && arg[0] == '#';
  std::optional<int64_t> parsed = ParseInt64(times_width ? arg.substr(1) : arg);
  if (!parsed || *parsed < 0) return std::nullopt;
  uint64_t offset = uint64_t(*parsed);
  if (times_width && __builtin_mul_overflow(offset, uint64_t{field_bits}, &offset)) {
    return std::nullopt;
  }
  if ((offset >> 3) >= FLAGS_proto_max_bulk_len) return std::nullopt;
  return offset;
}

// The string of a bitmap read: empty when the key is missing (Redis reads a missing key
// as an endless run of zero bits); kWrongType for another type. Packed and int values
// are decoded into the thread's scratch string, which stops allocating once grown.
OpResult<std::string_view> ReadBitmap(DbIndex db, std::string_view key) {
  OpResult<const PrimeValue*> found = Slice().FindTyped(db, key, ObjType::kString);
  if (found) return (*found)->GetString(&Scratch());
  if (found.status() == OpStatus::kKeyNotFound) return std::string_view();
  return found.status();
}

// --- SETBIT, GETBIT

OpResult<bool> OpSetBit(DbIndex db, std::string_view key, uint64_t offset, bool bit) {
  DbSlice::Update entry = Slice().AddOrFind(db, key);
  if (entry->type() != ObjType::kString) return OpStatus::kWrongType;
  const size_t len = entry->Size();
  char* bytes = entry->GetMutableBytes((offset >> 3) + 1);
  const bool old = core::SetBit(reinterpret_cast<uint8_t*>(bytes), offset, bit);
  // Redis 7.0 reports (and WATCH sees) a SETBIT that made or grew the string or flipped
  // the bit, not one that left it as it was.
  if (entry.inserted() || entry->Size() > len || old != bit) entry.Changed("setbit");
  return old;
}

void CmdSetBit(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<uint64_t> offset = ParseBitOffset(args[2]);
  if (!offset) return rb->SendError(kBitOffsetErr);
  std::optional<int64_t> bit = ParseInt64(args[3]);
  if (!bit || (*bit != 0 && *bit != 1)) return rb->SendError(kBitValueErr);
  OpResult<bool> old = OpSetBit(cntx->db_index, args[1], *offset, *bit == 1);
  if (!old) return SendOpError(rb, old.status());
  rb->SendLong(*old ? 1 : 0);
}

void CmdGetBit(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<uint64_t> offset = ParseBitOffset(args[2]);
  if (!offset) return rb->SendError(kBitOffsetErr);
  OpResult<std::string_view> bitmap = ReadBitmap(cntx->db_index, args[1]);
  if (!bitmap) return SendOpError(rb, bitmap.status());
  rb->SendLong(core::GetBit(Bytes(*bitmap), bitmap->size(), *offset) ? 1 : 0);
}

// --- BITCOUNT, BITPOS

// BITCOUNT's and BITPOS's start and end (negative ones count from the end), in bytes or
// in bits, resolved against a string of `len` bytes as Redis resolves them.
struct RangeArgs {
  int64_t start = 0, end = 0;
  bool in_bits = false;
};

// The inclusive bit range [first, last] the arguments name, or nullopt when it is empty.
std::optional<std::pair<uint64_t, uint64_t>> ResolveRange(RangeArgs range, size_t len) {
  const int64_t total = range.in_bits ? int64_t(len) * 8 : int64_t(len);
  int64_t start = range.start, end = range.end;
  if (start < 0) start = std::max<int64_t>(start + total, 0);
  if (end < 0) end = std::max<int64_t>(end + total, 0);
  end = std::min(end, total - 1);
  if (start > end) return std::nullopt;
  if (range.in_bits) return std::make_pair(uint64_t(start), uint64_t(end));
  return std::make_pair(uint64_t(start) * 8, uint64_t(end) * 8 + 7);
}

// BYTE or BIT; false for anything else.
bool ParseUnit(std::string_view arg, bool* in_bits) {
  if (!ArgIs(arg, "BIT") && !ArgIs(arg, "BYTE")) return false;
  *in_bits = ArgIs(arg, "BIT");
  return true;
}

// BITCOUNT key [start end [BYTE | BIT]]. Redis 7.0 looks the key up before the
// arguments: a missing key counts 0 whatever follows.
void CmdBitCount(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  OpResult<const PrimeValue*> found = Slice().FindTyped(cntx->db_index, args[1], ObjType::kString);
  if (found.status() == OpStatus::kKeyNotFound) return rb->SendLong(0);
  if (!found) return SendOpError(rb, found.status());
  const std::string_view bitmap = (*found)->GetString(&Scratch());
  RangeArgs range{.start = 0, .end = -1};
  if (args.size() == 4 || args.size() == 5) {
    std::optional<int64_t> start = ParseInt64(args[2]), end = ParseInt64(args[3]);
    if (!start || !end) return rb->SendError(facade::kInvalidIntErr);
    if (args.size() == 5 && !ParseUnit(args[4], &range.in_bits)) {
      return rb->SendError(facade::kSyntaxErr);
    }
    // Both negative and crossed: empty before any clamping, as Redis checks it.
    if (*start < 0 && *end < 0 && *start > *end) return rb->SendLong(0);
    range.start = *start;
    range.end = *end;
  } else if (args.size() != 2) {
    return rb->SendError(facade::kSyntaxErr);
  }
  auto bits = ResolveRange(range, bitmap.size());
  if (!bits) return rb->SendLong(0);
  rb->SendLong(core::CountBits(Bytes(bitmap), bitmap.size(), bits->first, bits->second));
}

// BITPOS key bit [start [end [BYTE | BIT]]]
void CmdBitPos(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  std::optional<int64_t> bit = ParseInt64(args[2]);
  if (!bit) return rb->SendError(facade::kInvalidIntErr);
  if (*bit != 0 && *bit != 1) return rb->SendError("ERR The bit argument must be 1 or 0.");
  OpResult<const PrimeValue*> found = Slice().FindTyped(cntx->db_index, args[1], ObjType::kString);
  // A missing key is an endless run of zero bits.
  if (found.status() == OpStatus::kKeyNotFound) return rb->SendLong(*bit ? -1 : 0);
  if (!found) return SendOpError(rb, found.status());
  const std::string_view bitmap = (*found)->GetString(&Scratch());

  RangeArgs range{.start = 0, .end = int64_t(bitmap.size()) - 1};
  bool end_given = false;
  if (args.size() >= 4 && args.size() <= 6) {
    std::optional<int64_t> start = ParseInt64(args[3]);
    if (!start) return rb->SendError(facade::kInvalidIntErr);
    range.start = *start;
    if (args.size() == 6 && !ParseUnit(args[5], &range.in_bits)) {
      return rb->SendError(facade::kSyntaxErr);
    }
    if (args.size() >= 5) {
      std::optional<int64_t> end = ParseInt64(args[4]);
      if (!end) return rb->SendError(facade::kInvalidIntErr);
      range.end = *end;
      end_given = true;
    }
  } else if (args.size() != 3) {
    return rb->SendError(facade::kSyntaxErr);
  }
  auto bits = ResolveRange(range, bitmap.size());
  if (!bits) return rb->SendLong(-1);
  const int64_t pos = core::FindBit(Bytes(bitmap), bitmap.size(), *bit, bits->first, bits->second);
  // Looking for a clear bit with no end given, the string continues with zeros: the
  // first one is right after the range.
  if (pos < 0 && *bit == 0 && !end_given) return rb->SendLong(int64_t(bits->second) + 1);
  rb->SendLong(pos);
}

// --- BITOP

// BITOP AND | OR | XOR | NOT destkey key [key ...]: a read hop copies the sources (not
// the last, so every key stays locked), the result is computed on the fiber, and a
// second hop writes the destination.
void CmdBitOp(CmdArgList args, ConnectionContext* cntx) {
  ReplyBuilder* rb = cntx->reply_builder();
  core::BitOp op;
  if (ArgIs(args[1], "AND")) {
    op = core::BitOp::kAnd;
  } else if (ArgIs(args[1], "OR")) {
    op = core::BitOp::kOr;
  } else if (ArgIs(args[1], "XOR")) {
    op = core::BitOp::kXor;
  } else if (ArgIs(args[1], "NOT")) {
    op = core::BitOp::kNot;
  } else {
    return rb->SendError(facade::kSyntaxErr);
  }
  if (op == core::BitOp::kNot && args.size() != 4) {
    return rb->SendError("ERR BITOP NOT must be called with a single source key.");
  }

  CommandTransaction tx(args, cntx);
  std::vector<std::string> sources(args.size());  // by argument position
  absl::InlinedVector<char, 16> wrong_type(shard_set->size());
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        for (uint32_t index : t->KeyIndices(shard->shard_id())) {
          if (index < 3) continue;
          OpResult<std::string_view> bitmap = ReadBitmap(t->db(), t->args()[index]);
          if (!bitmap) {
            wrong_type[shard->shard_id()] = 1;
            continue;
          }
          sources[index].assign(*bitmap);
        }
      },
      false);
  const bool failed = std::find(wrong_type.begin(), wrong_type.end(), 1) != wrong_type.end();
  std::string result;
  if (!failed) {
    CombineBits(op, std::vector<std::string_view>(sources.begin() + 3, sources.end()), &result);
  }
  const ShardId dst_shard = shard_set->ShardOf(args[2]);
  tx->Execute(
      [&](Transaction* t, EngineShard* shard) {
        if (failed || shard->shard_id() != dst_shard) return;
        if (result.empty()) {
          Slice().Erase(t->db(), args[2], "del");
          return;
        }
        DbSlice::Update entry = Slice().AddOrFind(t->db(), args[2]);
        entry->SetBuiltString(result);  // Redis stores the result unencoded: "raw"
        if (entry->has_expire()) entry.SetExpire(0);
        entry.Changed("set");
      },
      true);
  if (failed) return SendOpError(rb, OpStatus::kWrongType);
  rb->SendLong(result.size());
}

// --- BITFIELD, BITFIELD_RO

struct FieldOp {
  enum Kind : uint8_t { kGet, kSet, kIncrBy } kind;
  bool is_signed;
  uint8_t bits;
  FieldOverflow overflow;
  uint64_t offset;
  int64_t value;  // SET's value, INCRBY's increment
};
using FieldOps = absl::InlinedVector<FieldOp, 4>;
// One reply per operation: nil for an operation OVERFLOW FAIL refused.
using FieldReplies = std::vector<std::optional<int64_t>>;

// i1..i64 or u1..u63.
bool ParseFieldType(std::string_view arg, FieldOp* op) {
  if (arg.empty() || (arg[0] != 'i' && arg[0] != 'u')) return false;
  op->is_signed = arg[0] == 'i';
  std::optional<int64_t> bits = ParseInt64(arg.substr(1));
  if (!bits || *bits < 1 || *bits > (op->is_signed ? 64 : 63)) return false;
  op->bits = uint8_t(*bits);
  return true;
}

// Parses the subcommands in order, as Redis does: the first bad one gives its error.
// Returns the error text, or nullptr.
const char* ParseFieldOps(CmdArgList args, FieldOps* ops, bool* writes) {
  FieldOverflow overflow = FieldOverflow::kWrap;
  *writes = false;
  for (size_t i = 2; i < args.size();) {
    const size_t remaining = args.size() - i - 1;
    FieldOp op{};
    if (ArgIs(args[i], "GET") && remaining >= 2) {
      op.kind = FieldOp::kGet;
    } else if (ArgIs(args[i], "SET") && remaining >= 3) {
      op.kind = FieldOp::kSet;
    } else if (ArgIs(args[i], "INCRBY") && remaining >= 3) {
      op.kind = FieldOp::kIncrBy;
    } else if (ArgIs(args[i], "OVERFLOW") && remaining >= 1) {
      if (ArgIs(args[i + 1], "WRAP")) {
        overflow = FieldOverflow::kWrap;
      } else if (ArgIs(args[i + 1], "SAT")) {
        overflow = FieldOverflow::kSat;
      } else if (ArgIs(args[i + 1], "FAIL")) {
        overflow = FieldOverflow::kFail;
      } else {
        return "ERR Invalid OVERFLOW type specified";
      }
      i += 2;
      continue;
    } else {
      return facade::kSyntaxErr;
    }
    if (!ParseFieldType(args[i + 1], &op)) return kFieldTypeErr;
    std::optional<uint64_t> offset = ParseBitOffset(args[i + 2], op.bits);
    if (!offset) return kBitOffsetErr;
    op.offset = *offset;
    op.overflow = overflow;
    if (op.kind != FieldOp::kGet) {
      std::optional<int64_t> value = ParseInt64(args[i + 3]);
      if (!value) return facade::kInvalidIntErr;
      op.value = *value;
      *writes = true;
    }
    ops->push_back(op);
    i += op.kind == FieldOp::kGet ? 3 : 4;
  }
  return nullptr;
}

std::optional<int64_t> GetField(const FieldOp& op, const uint8_t* data, size_t len) {
  return op.is_signed ? core::GetSignedField(data, len, op.offset, op.bits)
                      : int64_t(core::GetUnsignedField(data, len, op.offset, op.bits));
}

// SET (replies the old value) or INCRBY (the new one) on bytes long enough for the field;
// nil, and the field unchanged, when OVERFLOW FAIL refuses. Sets *changed when the field
// took a new value.
std::optional<int64_t> WriteField(const FieldOp& op, uint8_t* data, size_t len, bool* changed) {
  const uint64_t old_bits = core::GetUnsignedField(data, len, op.offset, op.bits);
  const int64_t old =
      op.is_signed ? core::GetSignedField(data, len, op.offset, op.bits) : int64_t(old_bits);
  // SET is "old value replaced by value + 0", so both go through the overflow rules.
  const int64_t incr = op.kind == FieldOp::kIncrBy ? op.value : 0;
  uint64_t stored;
  int64_t reply;
  bool fits;
  if (op.is_signed) {
    int64_t result;
    fits = core::AddSigned(op.kind == FieldOp::kIncrBy ? old : op.value, incr, op.bits, op.overflow,
                           &result);
    stored = uint64_t(result);
    reply = op.kind == FieldOp::kIncrBy ? result : old;
  } else {
    uint64_t result;
    fits = core::AddUnsigned(op.kind == FieldOp::kIncrBy ? old_bits : uint64_t(op.value), incr,
                             op.bits, op.overflow, &result);
    stored = result;
    reply = op.kind == FieldOp::kIncrBy ? int64_t(result) : old;
  }
  if (!fits && op.overflow == FieldOverflow::kFail) return std::nullopt;
  core::SetField(data, op.offset, op.bits, stored);
  const uint64_t mask = op.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << op.bits) - 1;
  *changed |= (stored & mask) != old_bits;
  return reply;
}

// Runs the operations, filling *replies (one per operation).
OpStatus OpBitField(DbIndex db, std::string_view key, const FieldOps& ops, bool writes,
                    FieldReplies* replies) {
  if (!writes) {
    OpResult<std::string_view> bitmap = ReadBitmap(db, key);
    if (!bitmap) return bitmap.status();
    for (const FieldOp& op : ops) replies->push_back(GetField(op, Bytes(*bitmap), bitmap->size()));
    return OpStatus::kOk;
  }
  DbSlice::Update entry = Slice().AddOrFind(db, key);
  if (entry->type() != ObjType::kString) return OpStatus::kWrongType;
  // Grown once to the farthest field written, as Redis does before running the ops.
  uint64_t end_bit = 0;
  for (const FieldOp& op : ops) {
    if (op.kind != FieldOp::kGet) end_bit = std::max(end_bit, op.offset + op.bits);
  }
  const size_t old_len = entry->Size();
  auto* data = reinterpret_cast<uint8_t*>(entry->GetMutableBytes((end_bit + 7) / 8));
  const size_t len = entry->Size();
  // As SETBIT: reported when a write made or grew the string or changed a field. A key
  // made only for writes OVERFLOW FAIL refused is reported too (Redis keeps it silently;
  // a key that exists here has been reported).
  bool changed = entry.inserted() || len > old_len;
  bool wrote = false;
  for (const FieldOp& op : ops) {
    if (op.kind == FieldOp::kGet) {
      replies->push_back(GetField(op, data, len));
      continue;
    }
    bool field_changed = false;
    replies->push_back(WriteField(op, data, len, &field_changed));
    wrote |= replies->back().has_value();
    changed |= field_changed;
  }
  if (entry.inserted() || (wrote && changed)) entry.Changed("setbit");
  return OpStatus::kOk;
}

void BitField(CmdArgList args, ConnectionContext* cntx, bool read_only) {
  ReplyBuilder* rb = cntx->reply_builder();
  FieldOps ops;
  bool writes;
  if (const char* error = ParseFieldOps(args, &ops, &writes)) return rb->SendError(error);
  if (writes && read_only) {
    return rb->SendError("ERR BITFIELD_RO only supports the GET subcommand");
  }
  // One per thread, filled and replied without a suspension: no allocation per call.
  static thread_local FieldReplies replies;
  replies.clear();
  const OpStatus status = OpBitField(cntx->db_index, args[1], ops, writes, &replies);
  if (status != OpStatus::kOk) return SendOpError(rb, status);
  rb->StartArray(replies.size());
  for (const std::optional<int64_t>& reply : replies) {
    reply ? rb->SendLong(*reply) : rb->SendNull();
  }
}

void CmdBitField(CmdArgList args, ConnectionContext* cntx) { BitField(args, cntx, false); }

void CmdBitFieldRo(CmdArgList args, ConnectionContext* cntx) { BitField(args, cntx, true); }

// BITFIELD's key in a call: only read when every operation is a complete GET (OVERFLOW
// aside); any SET, INCRBY or anything else makes it a write, as Redis decides.
uint32_t BitFieldKeyFlags(CmdArgList args) {
  for (size_t i = 2; i < args.size(); ++i) {
    const size_t remaining = args.size() - i - 1;
    if (ArgIs(args[i], "GET") && remaining >= 2) {
      i += 2;
    } else if (ArgIs(args[i], "OVERFLOW") && remaining >= 1) {
      i += 1;
    } else {
      return facade::kKeyRW | facade::kKeyAccess | facade::kKeyUpdate;
    }
  }
  return facade::kKeyRO | facade::kKeyAccess;
}

}  // namespace

void BitopsFamily::Register(facade::CommandRegistry* registry) {
  using namespace facade;
  CommandRegistry& r = *registry;
  constexpr uint32_t kWrite = kCmdWrite | kCmdDenyOom;
  constexpr uint32_t kAclW = kAclWrite | kAclBitmap, kAclR = kAclRead | kAclBitmap;
  KeySpec bitfield_key = Keys(1).WithFlags(kKeyRW | kKeyAccess | kKeyUpdate | kKeyVariableFlags);
  bitfield_key.notes = "This command allows both access and modification of the key";
  const KeySpecs kBitOpKeys = {Keys(2).WithFlags(kKeyOW | kKeyUpdate),
                               Keys(3, -1).WithFlags(kKeyRO | kKeyAccess)};
  r.Add("SETBIT", 4, kWrite, Keys(1), kAclW | kAclSlow, CmdSetBit);
  r.Add("GETBIT", 3, kCmdReadOnly | kCmdFast, Keys(1), kAclR | kAclFast, CmdGetBit);
  r.Add("BITCOUNT", -2, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdBitCount);
  r.Add("BITPOS", -3, kCmdReadOnly, Keys(1), kAclR | kAclSlow, CmdBitPos);
  r.Add("BITOP", -4, kWrite, kBitOpKeys, kAclW | kAclSlow, CmdBitOp);
  r.Add("BITFIELD", -2, kWrite, bitfield_key, kAclW | kAclSlow, CmdBitField)
      .variable_key_flags = BitFieldKeyFlags;
  r.Add("BITFIELD_RO", -2, kCmdReadOnly | kCmdFast, Keys(1), kAclR | kAclFast, CmdBitFieldRo);
}

}  // namespace damselfly
