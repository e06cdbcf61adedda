#include "src/server/rdb_save.h"

#include <cassert>
#include <cstring>
#include <vector>

#include "helio/base/strings.h"
#include "src/core/crc64.h"
#include "src/core/listpack.h"
#include "src/core/lzf.h"
#include "src/core/rdb_format.h"
#include "src/core/set_object.h"
#include "src/core/stream.h"
#include "src/server/hash_object.h"
#include "src/server/list_object.h"
#include "src/server/zset_object.h"

namespace damselfly {

namespace rdb = core::rdb;

namespace {

// Redis tries the integer encodings only on strings this short (rdbTryIntegerEncoding).
constexpr size_t kMaxIntEncodedLen = 11;
// ... and LZF only on strings longer than this (rdbSaveRawString).
constexpr size_t kMinCompressedLen = 20;

void PutLe(uint64_t value, size_t bytes, std::string* out) {
  for (size_t i = 0; i < bytes; ++i) out->push_back(char(value >> (8 * i)));
}

// A stream ID as Redis writes node keys and PEL entries: ms then seq, 8 bytes big endian.
std::string RawStreamId(const core::StreamID& id) {
  std::string raw(rdb::kStreamIdBytes, '\0');
  for (int i = 0; i < 8; ++i) {
    raw[i] = char(id.ms >> (56 - 8 * i));
    raw[8 + i] = char(id.seq >> (56 - 8 * i));
  }
  return raw;
}

}  // namespace

RdbSerializer::RdbSerializer(bool compression) : compression_(compression) {}

void RdbSerializer::SetSink(size_t threshold, Sink sink) {
  sink_threshold_ = threshold;
  sink_ = std::move(sink);
}

// --- primitives

void RdbSerializer::SaveLength(uint64_t length) {
  if (length < (1 << 6)) {
    buf_.push_back(char(length));
  } else if (length < (1 << 14)) {
    buf_.push_back(char(rdb::kLen14Bit << 6 | length >> 8));
    buf_.push_back(char(length & 0xFF));
  } else {
    const bool wide = length > UINT32_MAX;
    buf_.push_back(char(wide ? rdb::kLen64Bit : rdb::kLen32Bit));
    for (int shift = wide ? 56 : 24; shift >= 0; shift -= 8) buf_.push_back(char(length >> shift));
  }
}

void RdbSerializer::SaveString(std::string_view value) {
  int64_t number;
  if (value.size() <= kMaxIntEncodedLen && core::ListpackStringToInt64(value, &number) &&
      number >= INT32_MIN && number <= INT32_MAX) {
    const uint8_t enc = number >= INT8_MIN && number <= INT8_MAX     ? rdb::kEncInt8
                        : number >= INT16_MIN && number <= INT16_MAX ? rdb::kEncInt16
                                                                     : rdb::kEncInt32;
    buf_.push_back(char(rdb::kEncVal << 6 | enc));
    PutLe(uint64_t(number), size_t{1} << enc, &buf_);
    return;
  }
  if (compression_ && value.size() > kMinCompressedLen) {
    // As Redis: worth it only when it saves more than 4 bytes.
    std::string compressed(value.size() - 4, '\0');
    const size_t length =
        core::LzfCompress(value.data(), value.size(), compressed.data(), compressed.size());
    if (length > 0) {
      buf_.push_back(char(rdb::kEncVal << 6 | rdb::kEncLzf));
      SaveLength(length);
      SaveLength(value.size());
      buf_.append(compressed.data(), length);
      return;
    }
  }
  SaveLength(value.size());
  buf_.append(value);
}

void RdbSerializer::SaveBinaryDouble(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  PutLe(bits, 8, &buf_);
}

// --- output

void RdbSerializer::Flush() {
  crc_ = core::Crc64(crc_, buf_);
  sink_(buf_);
  buf_.clear();
}

void RdbSerializer::MaybeFlush() {
  if (sink_ && buf_.size() > sink_threshold_) Flush();
}

size_t RdbSerializer::FlushIfLarger(size_t threshold, const Sink& sink) {
  if (buf_.size() <= threshold) return 0;
  const size_t bytes = buf_.size();
  crc_ = core::Crc64(crc_, buf_);
  sink(buf_);
  buf_.clear();
  return bytes;
}

void RdbSerializer::SwapOutBuffer(std::string* spare) {
  spare->clear();
  buf_.swap(*spare);
}

std::string RdbSerializer::TakeBuffer() {
  crc_ = core::Crc64(crc_, buf_);
  return std::exchange(buf_, {});
}

// --- file pieces

void RdbSerializer::SaveHeader(std::string_view redis_ver, int64_t ctime_s, uint64_t used_mem) {
  helio::StrAppend(&buf_, rdb::kMagic, "00", rdb::kVersion);  // "REDIS0010"
  SaveAux("redis-ver", redis_ver);
  SaveAux("redis-bits", "64");
  SaveAux("ctime", helio::StrCat(ctime_s));
  SaveAux("used-mem", helio::StrCat(used_mem));
}

void RdbSerializer::SaveAux(std::string_view key, std::string_view value) {
  buf_.push_back(char(rdb::kOpAux));
  SaveString(key);
  SaveString(value);
}

void RdbSerializer::SaveFunctions(const std::vector<std::string>& codes) {
  for (const std::string& code : codes) {
    buf_.push_back(char(rdb::kOpFunction2));
    SaveString(code);
  }
}

void RdbSerializer::SaveSelectDb(DbIndex db, uint64_t db_size, uint64_t expires_size) {
  buf_.push_back(char(rdb::kOpSelectDb));
  SaveLength(db);
  buf_.push_back(char(rdb::kOpResizeDb));
  SaveLength(db_size);
  SaveLength(expires_size);
}

void RdbSerializer::SaveEntry(std::string_view key, const PrimeValue& value, int64_t expire_ms,
                              const McMeta* mc) {
  if (mc != nullptr) {
    SaveAux(rdb::kAuxMcFlags,
            mc->cas == 0 ? helio::StrCat(mc->flags) : helio::StrCat(mc->flags, " ", mc->cas));
  }
  if (expire_ms > 0) {
    buf_.push_back(char(rdb::kOpExpireTimeMs));
    PutLe(uint64_t(expire_ms), 8, &buf_);
  }
  buf_.push_back(char(SaveType(value)));
  SaveString(key);
  SaveObject(value);
  MaybeFlush();
}

void RdbSerializer::SaveEof(bool checksum) {
  buf_.push_back(char(rdb::kOpEof));
  const uint64_t crc = checksum ? core::Crc64(crc_, buf_) : 0;
  PutLe(crc, 8, &buf_);
}

void RdbSerializer::SaveValue(const PrimeValue& value) {
  buf_.push_back(char(SaveType(value)));
  SaveObject(value);
}

// --- values

// The objects' own encodings decide, not PrimeValue's copy of them: the type byte and
// the encoding written after it must agree.
uint8_t RdbSerializer::SaveType(const PrimeValue& value) {
  switch (value.type()) {
    case ObjType::kString:
      return rdb::kTypeString;
    case ObjType::kList:
      return rdb::kTypeListQuicklist2;
    case ObjType::kSet:
      return value.GetObjectAs<core::SetObject>()->encoding() == core::SetObject::Encoding::kIntset
                 ? rdb::kTypeSetIntset
                 : rdb::kTypeSet;
    case ObjType::kZSet:
      return value.object_encoding() == ObjEncoding::kListpack ? rdb::kTypeZSetListpack
                 : rdb::kTypeZSet2;
    case ObjType::kHash:
      return value.object_encoding() == ObjEncoding::kListpack ? rdb::kTypeHashListpack
                 : rdb::kTypeHash;
    case ObjType::kStream:
      return rdb::kTypeStreamListpacks2;
  }
  return rdb::kTypeString;
}

void RdbSerializer::SaveObject(const PrimeValue& value) {
  switch (value.type()) {
    case ObjType::kString:
      return SaveStringValue(value);
    case ObjType::kList:
      return SaveList(value);
    case ObjType::kSet:
      return SaveSet(value);
    case ObjType::kZSet:
      return SaveZSet(value);
    case ObjType::kHash:
      return SaveHash(value);
    case ObjType::kStream:
      return SaveStream(value);
  }
}

void RdbSerializer::SaveStringValue(const PrimeValue& value) {
  std::string_view lzf = value.CompressedView();
  if (compression_ && !lzf.empty()) {
    buf_.push_back(char(rdb::kEncVal << 6 | rdb::kEncLzf));
    SaveLength(lzf.size());
    SaveLength(value.Size());
    buf_.append(lzf);
    return;
  }
  std::string scratch;
  SaveString(value.GetString(&scratch));
}

void RdbSerializer::SaveList(const PrimeValue& value) {
  const ListView list(value);
  SaveLength(list.NodeCount());
  list.ForEachNode([&](std::string_view bytes, size_t raw_len) {
    SaveLength(rdb::kQuicklistNodePacked);
    if (raw_len == 0) {
      SaveString(bytes);
    } else {  // a compressed node, stored as its LZF stream as Redis does
      buf_.push_back(char(rdb::kEncVal << 6 | rdb::kEncLzf));
      SaveLength(bytes.size());
      SaveLength(raw_len);
      buf_.append(bytes);
    }
    MaybeFlush();
  });
}

void RdbSerializer::SaveHash(const PrimeValue& value) {
  const HashView hash(value);
  if (hash.encoding() == ObjEncoding::kListpack) {
    listpack_.clear();
    hash.AppendListpack(&listpack_);
    return SaveString(listpack_);
  }
  SaveLength(hash.Size());
  hash.ForEach([&](std::string_view field, std::string_view field_value) {
    SaveString(field);
    SaveString(field_value);
    MaybeFlush();
  });
}

void RdbSerializer::SaveSet(const PrimeValue& value) {
  const core::SetObject* set = value.GetObjectAs<core::SetObject>();
  if (set->encoding() == core::SetObject::Encoding::kIntset) {
    std::string bytes;
    set->Serialize(&bytes);  // an intset's form is its bytes
    return SaveString(bytes);
  }
  SaveLength(set->Size());
  set->ForEach([&](std::string_view member) {
    SaveString(member);
    MaybeFlush();
  });
}

void RdbSerializer::SaveZSet(const PrimeValue& value) {
  const ZSetView zset(value);
  if (zset.encoding() == ObjEncoding::kListpack) {
    listpack_.clear();
    zset.AppendListpack(&listpack_);
    return SaveString(listpack_);
  }
  SaveLength(zset.Size());
  zset.Walk(0, zset.Size(), /*reverse=*/true, [&](std::string_view member, double score) {
    SaveString(member);
    SaveBinaryDouble(score);
    MaybeFlush();
    return true;
  });
}

// A stream's nodes are kept in Redis's node format (see core/stream.h), so each is written
// as it is: its master ID, then its listpack as a string; a compressed node as its LZF
// stream (the RDB_ENC_LZF string Redis itself writes for it), or decompressed when
// compression is off.
void RdbSerializer::SaveStream(const PrimeValue& value) {
  using core::StreamID;
  const core::Stream* stream = value.GetObjectAs<core::Stream>();
  SaveLength(stream->NumNodes());
  std::string plain;
  stream->ForEachNode([&](const StreamID& master, std::string_view bytes, size_t raw_len) {
    SaveString(RawStreamId(master));
    if (raw_len == 0) {
      SaveString(bytes);
    } else if (compression_) {
      buf_.push_back(char(rdb::kEncVal << 6 | rdb::kEncLzf));
      SaveLength(bytes.size());
      SaveLength(raw_len);
      buf_.append(bytes);
    } else {
      plain.resize(raw_len);
      const bool ok = core::LzfDecompress(bytes.data(), bytes.size(), plain.data(), raw_len);
      assert(ok);
      (void)ok;
      SaveString(plain);
    }
    MaybeFlush();
  });
  SaveLength(stream->Length());
  for (const StreamID& id : {stream->last_id(), stream->first_id(), stream->max_deleted_id()}) {
    SaveLength(id.ms);
    SaveLength(id.seq);
  }
  SaveLength(stream->entries_added());
  SaveStreamGroups(value);
}

// The consumer groups as Redis 7.0 writes them in STREAM_LISTPACKS_2: their count, then
// per group its name, last ID (ms, seq), entries read (-1, "unknown", as a 64-bit
// length), its PEL (count; per entry the raw ID, the delivery time as 8 bytes little
// endian and the delivery count) and its consumers (count; per consumer its name, seen
// time, and the raw IDs it owns, which refer to the group's PEL).
void RdbSerializer::SaveStreamGroups(const PrimeValue& value) {
  const core::Stream::GroupMap* groups = value.GetObjectAs<core::Stream>()->groups();
  if (groups == nullptr) return SaveLength(0);
  SaveLength(groups->size());
  for (const auto& [name, group] : *groups) {
    SaveString(name);
    SaveLength(group->last_id.ms);
    SaveLength(group->last_id.seq);
    SaveLength(uint64_t(group->entries_read));
    SaveLength(group->pel().size());
    for (const auto& [id, entry] : group->pel()) {
      buf_.append(RawStreamId(id));
      PutLe(uint64_t(entry.delivery_time_ms), 8, &buf_);
      SaveLength(entry.delivery_count);
      MaybeFlush();
    }
    SaveLength(group->consumers().size());
    for (const auto& [consumer_name, consumer] : group->consumers()) {
      SaveString(consumer_name);
      PutLe(uint64_t(consumer->seen_time_ms), 8, &buf_);
      SaveLength(consumer->pending.size());
      for (const core::StreamID& id : consumer->pending) {
        buf_.append(RawStreamId(id));
        MaybeFlush();
      }
    }
  }
}

std::string MakeDumpPayload(const PrimeValue& value) {
  RdbSerializer serializer(/*compression=*/true);
  serializer.SaveValue(value);
  std::string payload = serializer.TakeBuffer();
  PutLe(rdb::kVersion, 2, &payload);
  PutLe(core::Crc64(0, payload), 8, &payload);
  return payload;
}

}  // namespace damselfly
