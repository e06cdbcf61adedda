#include "src/server/rdb_load.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_set.h"
#include "helio/base/strings.h"
#include "src/core/crc64.h"
#include "src/core/intset.h"
#include "src/core/listpack.h"
#include "src/core/lzf.h"
#include "src/core/rdb_format.h"
#include "src/core/rdb_legacy.h"
#include "src/core/set_object.h"
#include "src/core/stream.h"
#include "src/server/collection_limits.h"
#include "src/server/hash_object.h"
#include "src/server/list_object.h"
#include "src/server/zset_object.h"

namespace damselfly {

namespace rdb = core::rdb;
using core::Listpack;
using core::SetObject;

namespace {

// Bytes asked of the source at a time: strings grow by this much as their bytes arrive.
constexpr size_t kReadChunk = 64 << 10;
// LZF expands at most this much (a 3-byte back reference yields 264 bytes): a stream
// claiming more is refused before anything is allocated for it.
constexpr uint64_t kMaxLzfRatio = 88;
// A collection's claimed size sizes a hash table at most this far ahead of its elements.
constexpr size_t kMaxSizeHint = 4096;
constexpr size_t kFooterBytes = 10;
constexpr char kBadFormat[] = "ERR Bad data format";
constexpr char kBadPayload[] = "ERR DUMP payload version or checksum are wrong";

std::string ValueText(const Listpack::Value& v) { return v.ToString(); }
std::string ValueText(const core::ZiplistValue& v) {
  return v.is_int ? std::to_string(v.ival) : std::string(v.sval);
}

// A 16-byte stream ID (a node key, a PEL entry): ms then seq, big endian.
core::StreamID ParseRawStreamId(std::string_view raw) {
  core::StreamID id;
  for (int i = 0; i < 8; ++i) {
    id.ms = id.ms << 8 | uint8_t(raw[i]);
    id.seq = id.seq << 8 | uint8_t(raw[8 + i]);
  }
  return id;
}

// Redis reads a score written as text with strtod; here the whole text must parse.
bool ParseScore(std::string_view text, double* score) {
  if (text.empty() || text.size() > 128) return false;
  std::string copy(text);
  char* end = nullptr;
  *score = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && !std::isnan(*score);
}

ObjEncoding SetEncodingOf(const SetObject* set) {
  switch (set->encoding()) {
    case SetObject::Encoding::kIntset:
      return ObjEncoding::kIntset;
    case SetObject::Encoding::kListpack:
      return ObjEncoding::kListpack;
    case SetObject::Encoding::kHashtable:
      break;
  }
  return ObjEncoding::kHashtable;
}

// A set built element by element, in the encoding the server's limits give its content.
class SetBuilder {
 public:
  explicit SetBuilder(PrimeValue* value) : value_(value), limits_(CollectionLimits::Sets()) {}
  // False when `member` is a duplicate.
  bool Add(std::string_view member, size_t size_hint) {
    if (set_ == nullptr) {
      set_ = SetObject::Create(member, std::min(size_hint, kMaxSizeHint), limits_);
      value_->SetObject(ObjType::kSet, SetEncodingOf(set_), set_);
    }
    return set_->Add(member, limits_);
  }
  void Finish() { value_->set_object_encoding(SetEncodingOf(set_)); }

 private:
  PrimeValue* value_;
  core::SetLimits limits_;
  SetObject* set_ = nullptr;
};

void PushTail(ListRef& list, std::string_view element) {
  list.PrepareAdd(element.size(), 1, CollectionLimits::ListFill(), CollectionLimits::ListDepth());
  list.Push(ListView::End::kTail, element);
}

// The elements of a listpack blob as texts; false when it is no valid listpack.
bool ListpackTexts(std::string_view blob, std::vector<std::string>* out) {
  if (!Listpack::Validate(blob)) return false;
  Listpack lp = Listpack::FromBytes(blob);
  for (Listpack::Pos pos = lp.First(); pos != Listpack::kNoPos; pos = lp.Next(pos)) {
    out->push_back(ValueText(lp.Get(pos)));
  }
  return true;
}

bool ZiplistTexts(std::string_view blob, std::vector<std::string>* out) {
  return core::ZiplistForEach(blob,
                              [&](const core::ZiplistValue& v) { out->push_back(ValueText(v)); });
}

}  // namespace

size_t StringSource::Read(char* dst, size_t n) {
  n = std::min(n, data_.size());
  std::memcpy(dst, data_.data(), n);
  data_.remove_prefix(n);
  return n;
}

// --- input

bool RdbLoader::Fail(std::string_view what) {
  if (error_.empty()) error_ = std::string(what);
  return false;
}

// Makes n unread bytes available in data_[pos_, pos_ + n). Reading from a source, the
// consumed bytes are folded into the checksum and dropped first; in-memory input is all
// there already.
bool RdbLoader::Ensure(size_t n) {
  if (data_.size() - pos_ >= n) return true;
  if (source_ == nullptr) return Fail("unexpected end of input");
  crc_ = core::Crc64(crc_, data_.substr(crc_from_, pos_ - crc_from_));
  buf_.erase(0, pos_);
  consumed_before_ += pos_;
  pos_ = crc_from_ = 0;
  while (buf_.size() < n) {
    const size_t old = buf_.size();
    buf_.resize(old + kReadChunk);
    const size_t got = source_->Read(buf_.data() + old, kReadChunk);
    buf_.resize(old + got);
    if (got == 0) {
      data_ = buf_;
      return Fail("unexpected end of input");
    }
  }
  data_ = buf_;
  return true;
}

bool RdbLoader::ReadBytes(size_t n, std::string* out) {
  out->clear();
  while (out->size() < n) {
    if (pos_ == data_.size() && !Ensure(1)) return false;
    const size_t take = std::min(n - out->size(), data_.size() - pos_);
    out->append(data_.substr(pos_, take));
    pos_ += take;
  }
  return true;
}

bool RdbLoader::ReadByte(uint8_t* byte) {
  if (!Ensure(1)) return false;
  *byte = uint8_t(data_[pos_++]);
  return true;
}

bool RdbLoader::ReadLe(size_t bytes, uint64_t* value) {
  if (!Ensure(bytes)) return false;
  *value = 0;
  for (size_t i = 0; i < bytes; ++i) *value |= uint64_t(uint8_t(data_[pos_ + i])) << (8 * i);
  pos_ += bytes;
  return true;
}

bool RdbLoader::Empty() {
  empty_value_ = true;
  return Fail("empty collection");
}

bool RdbLoader::AtEnd() {
  if (pos_ < data_.size() || Ensure(1)) return false;
  error_.clear();  // Ensure's "unexpected end" is the answer here, not an error
  return true;
}

bool RdbLoader::ReadLengthOrEncoding(uint64_t* length, bool* encoded) {
  uint8_t first;
  if (!ReadByte(&first)) return false;
  *encoded = false;
  switch (first >> 6) {
    case rdb::kLen6Bit:
      *length = first & 0x3F;
      return true;
    case rdb::kLen14Bit: {
      uint8_t second;
      if (!ReadByte(&second)) return false;
      *length = uint64_t(first & 0x3F) << 8 | second;
      return true;
    }
    case rdb::kEncVal:
      *encoded = true;
      *length = first & 0x3F;
      return true;
    default: {
      const size_t bytes = first == rdb::kLen32Bit ? 4 : first == rdb::kLen64Bit ? 8 : 0;
      if (bytes == 0) return Fail("unknown length encoding");
      if (!Ensure(bytes)) return false;
      *length = 0;
      for (size_t i = 0; i < bytes; ++i) *length = *length << 8 | uint8_t(data_[pos_ + i]);
      pos_ += bytes;
      return true;
    }
  }
}

bool RdbLoader::ReadLength(uint64_t* length) {
  bool encoded;
  if (!ReadLengthOrEncoding(length, &encoded)) return false;
  return !encoded || Fail("a string encoding where a length belongs");
}

bool RdbLoader::ReadString(std::string* value) {
  uint64_t length;
  bool encoded;
  if (!ReadLengthOrEncoding(&length, &encoded)) return false;
  if (!encoded) return ReadBytes(length, value);
  switch (length) {
    case rdb::kEncInt8:
    case rdb::kEncInt16:
    case rdb::kEncInt32: {
      const size_t bytes = size_t{1} << length;
      uint64_t raw;
      if (!ReadLe(bytes, &raw)) return false;
      const unsigned shift = unsigned(64 - 8 * bytes);
      *value = std::to_string(int64_t(raw << shift) >> shift);
      return true;
    }
    case rdb::kEncLzf: {
      uint64_t compressed_len, plain_len;
      std::string compressed;
      if (!ReadLength(&compressed_len) || !ReadLength(&plain_len)) return false;
      if (plain_len == 0 || plain_len > compressed_len * kMaxLzfRatio) {
        return Fail("bad LZF lengths");
      }
      if (!ReadBytes(compressed_len, &compressed)) return false;
      value->resize(plain_len);
      if (!core::LzfDecompress(compressed.data(), compressed.size(), value->data(), plain_len)) {
        return Fail("bad LZF stream");
      }
      return true;
    }
    default:
      return Fail("unknown string encoding");
  }
}

bool RdbLoader::SkipBytes(uint64_t n) {
  while (n > 0) {
    if (pos_ == data_.size() && !Ensure(1)) return false;
    const size_t take = size_t(std::min<uint64_t>(n, data_.size() - pos_));
    pos_ += take;
    n -= take;
  }
  return true;
}

bool RdbLoader::SkipString() {
  uint64_t length;
  bool encoded;
  if (!ReadLengthOrEncoding(&length, &encoded)) return false;
  if (!encoded) return SkipBytes(length);
  switch (length) {
    case rdb::kEncInt8:
    case rdb::kEncInt16:
    case rdb::kEncInt32:
      return SkipBytes(uint64_t{1} << length);
    case rdb::kEncLzf: {
      uint64_t compressed_len, plain_len;
      if (!ReadLength(&compressed_len) || !ReadLength(&plain_len)) return false;
      return SkipBytes(compressed_len);
    }
    default:
      return Fail("unknown string encoding");
  }
}

bool RdbLoader::ReadTextDouble(double* value) {
  uint8_t len;
  if (!ReadByte(&len)) return false;
  switch (len) {
    case rdb::kDoubleNaN:
      *value = NAN;
      return true;
    case rdb::kDoublePosInf:
      *value = INFINITY;
      return true;
    case rdb::kDoubleNegInf:
      *value = -INFINITY;
      return true;
  }
  std::string text;
  if (!ReadBytes(len, &text)) return false;
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return (end == text.c_str() + text.size() && !text.empty()) || Fail("bad score text");
}

bool RdbLoader::ReadBinaryDouble(double* value) {
  uint64_t bits;
  if (!ReadLe(8, &bits)) return false;
  std::memcpy(value, &bits, sizeof(bits));
  return true;
}

// --- files

bool RdbLoader::LoadHeader() {
  std::string header;
  if (!ReadBytes(rdb::kHeaderBytes, &header)) return false;
  int version;
  if (header.compare(0, rdb::kMagic.size(), rdb::kMagic) != 0 ||
      !helio::SimpleAtoi(std::string_view(header).substr(rdb::kMagic.size()), &version) ||
      version < 1 || version > rdb::kVersion) {
    return Fail("not an RDB file, or of an unknown version");
  }
  version_ = version;
  return true;
}

std::optional<std::string> RdbLoader::Aux(std::string_view key) const {
  for (auto it = aux_.rbegin(); it != aux_.rend(); ++it) {
    if (it->first == key) return it->second;
  }
  return std::nullopt;
}

bool RdbLoader::Next(RdbEntry* entry, absl::FunctionRef<bool(std::string_view key)> keep) {
  int64_t expire_ms = 0;
  std::optional<McMeta> mc;
  std::optional<uint64_t> idle_s;
  std::optional<uint8_t> freq;
  for (;;) {
    uint8_t type;
    uint64_t number;
    if (!ReadByte(&type)) return false;
    switch (type) {
      case rdb::kOpExpireTimeMs:
        if (!ReadLe(8, &number)) return false;
        expire_ms = int64_t(number);
        continue;
      case rdb::kOpExpireTime:
        if (!ReadLe(4, &number)) return false;
        expire_ms = int64_t(number) * 1000;
        continue;
      case rdb::kOpIdle:
        if (!ReadLength(&number)) return false;
        idle_s = number;
        continue;
      case rdb::kOpFreq: {
        uint8_t byte;
        if (!ReadByte(&byte)) return false;
        freq = byte;
        continue;
      }
      case rdb::kOpSelectDb:
        if (!ReadLength(&number)) return false;
        if (number > UINT16_MAX) return Fail("bad database number");
        db_ = DbIndex(number);
        continue;
      case rdb::kOpResizeDb:
        if (!ReadLength(&number) || !ReadLength(&number)) return false;
        continue;
      case rdb::kOpAux: {
        std::string key, value;
        if (!ReadString(&key) || !ReadString(&value)) return false;
        if (key == rdb::kAuxMcFlags) {
          McMeta meta;
          std::string_view text = value, cas_text;
          if (size_t space = text.find(' '); space != std::string_view::npos) {
            cas_text = text.substr(space + 1);
            text = text.substr(0, space);
          }
          if (!helio::SimpleAtoi(text, &meta.flags) ||
              (!cas_text.empty() && !helio::SimpleAtoi(cas_text, &meta.cas))) {
            return Fail("bad mc-flags field");
          }
          mc = meta;
        } else {
          aux_.emplace_back(std::move(key), std::move(value));
        }
        continue;
      }
      case rdb::kOpFunction2: {
        std::string code;
        if (!ReadString(&code)) return false;
        functions_.push_back(std::move(code));
        continue;
      }
      case rdb::kOpModuleAux:
      case rdb::kOpFunctionPreGa:
        return Fail("module data and pre-release functions are not supported");
      case rdb::kOpEof: {
        // The checksum covers everything up to and including the EOF opcode.
        const uint64_t crc = core::Crc64(crc_, data_.substr(crc_from_, pos_ - crc_from_));
        if (version_ < 5) return false;  // no checksum before RDB 5
        if (!ReadLe(8, &number)) return false;
        if (number != 0 && number != crc) return Fail("wrong RDB checksum");
        return false;
      }
    }
    entry->key.clear();
    if (!ReadString(&entry->key)) return false;
    if (!keep(entry->key)) {
      if (!SkipValue(type)) return false;
      expire_ms = 0;
      mc.reset();
      idle_s.reset();
      freq.reset();
      continue;
    }
    if (!LoadValue(type, &entry->value)) {
      if (!empty_value_) return false;
      expire_ms = 0;
      mc.reset();
      idle_s.reset();
      freq.reset();
      empty_value_ = false;
      error_.clear();
      continue;
    }
    entry->db = db_;
    entry->expire_ms = expire_ms;
    entry->mc = mc;
    entry->idle_s = idle_s;
    entry->freq = freq;
    return true;
  }
}

// --- values

bool RdbLoader::LoadValue(uint8_t type, PrimeValue* value) {
  empty_value_ = false;
  switch (type) {
    case rdb::kTypeString:
      return LoadString(value);
    case rdb::kTypeList:
      return LoadListElements(value);
    case rdb::kTypeListZiplist:
      return LoadListZiplist(value);
    case rdb::kTypeListQuicklist:
      return LoadQuicklist(value, /*ziplist_nodes=*/true);
    case rdb::kTypeListQuicklist2:
      return LoadQuicklist(value, /*ziplist_nodes=*/false);
    case rdb::kTypeSet:
      return LoadSetElements(value);
    case rdb::kTypeSetIntset:
      return LoadSetIntset(value);
    case rdb::kTypeSetListpack:
      return LoadSetListpack(value);
    case rdb::kTypeZSet:
      return LoadZSetElements(value, /*binary_scores=*/false);
    case rdb::kTypeZSet2:
      return LoadZSetElements(value, /*binary_scores=*/true);
    case rdb::kTypeZSetZiplist:
      return LoadZSetPacked(value, /*ziplist=*/true);
    case rdb::kTypeZSetListpack:
      return LoadZSetPacked(value, /*ziplist=*/false);
    case rdb::kTypeHash:
      return LoadHashElements(value);
    case rdb::kTypeHashZipmap:
    case rdb::kTypeHashZiplist:
    case rdb::kTypeHashListpack:
      return LoadHashPacked(value, type);
    case rdb::kTypeStreamListpacks:
    case rdb::kTypeStreamListpacks2:
      return LoadStream(value, type);
  }
  return Fail(helio::StrCat("unknown value type ", int(type)));
}

bool RdbLoader::SkipValue(uint8_t type) {
  uint64_t count;
  switch (type) {
    case rdb::kTypeString:
    case rdb::kTypeListZiplist:
    case rdb::kTypeSetIntset:
    case rdb::kTypeSetListpack:
    case rdb::kTypeZSetZiplist:
    case rdb::kTypeZSetListpack:
    case rdb::kTypeHashZipmap:
    case rdb::kTypeHashZiplist:
    case rdb::kTypeHashListpack:
      return SkipString();
    case rdb::kTypeList:
    case rdb::kTypeSet:
    case rdb::kTypeListQuicklist:
      if (!ReadLength(&count)) return false;
      for (uint64_t i = 0; i < count; ++i) {
        if (!SkipString()) return false;
      }
      return true;
    case rdb::kTypeListQuicklist2:
      if (!ReadLength(&count)) return false;
      for (uint64_t i = 0; i < count; ++i) {
        uint64_t container;
        if (!ReadLength(&container) || !SkipString()) return false;
      }
      return true;
    case rdb::kTypeHash:
      if (!ReadLength(&count)) return false;
      for (uint64_t i = 0; i < count; ++i) {
        if (!SkipString() || !SkipString()) return false;
      }
      return true;
    case rdb::kTypeZSet2:
      if (!ReadLength(&count)) return false;
      for (uint64_t i = 0; i < count; ++i) {
        if (!SkipString() || !SkipBytes(8)) return false;
      }
      return true;
    case rdb::kTypeZSet:
      if (!ReadLength(&count)) return false;
      for (uint64_t i = 0; i < count; ++i) {
        double score;
        if (!SkipString() || !ReadTextDouble(&score)) return false;
      }
      return true;
  }
  // Streams (and types this loader does not know) are decoded and dropped: their framing
  // is too intricate to walk twice.
  PrimeValue dropped;
  if (LoadValue(type, &dropped)) return true;
  if (!empty_value_) return false;
  empty_value_ = false;  // an empty collection is skipped as a kept one would be
  error_.clear();
  return true;
}

bool RdbLoader::LoadString(PrimeValue* value) {
  std::string s;
  if (!ReadString(&s)) return false;
  value->SetString(s);
  return true;
}

bool RdbLoader::LoadListElements(PrimeValue* value) {
  uint64_t count;
  if (!ReadLength(&count)) return false;
  if (count == 0) return Empty();
  PrimeValue built;
  ListRef::MakeEmpty(&built);
  ListRef list(&built);
  std::string element;
  for (uint64_t i = 0; i < count; ++i) {
    if (!ReadString(&element)) return false;
    PushTail(list, element);
  }
  *value = std::move(built);
  return true;
}

bool RdbLoader::LoadListZiplist(PrimeValue* value) {
  std::string blob;
  std::vector<std::string> elements;
  if (!ReadString(&blob)) return false;
  if (!ZiplistTexts(blob, &elements)) return Fail("bad ziplist");
  if (elements.empty()) return Empty();
  PrimeValue built;
  ListRef::MakeEmpty(&built);
  ListRef list(&built);
  for (const std::string& element : elements) PushTail(list, element);
  *value = std::move(built);
  return true;
}

bool RdbLoader::LoadQuicklist(PrimeValue* value, bool ziplist_nodes) {
  uint64_t nodes;
  if (!ReadLength(&nodes)) return false;
  PrimeValue built;
  ListRef::MakeEmpty(&built);
  ListRef list(&built);
  size_t total = 0;
  std::string blob;
  std::vector<std::string> elements;
  for (uint64_t i = 0; i < nodes; ++i) {
    uint64_t container = rdb::kQuicklistNodePacked;
    if (!ziplist_nodes && !ReadLength(&container)) return false;
    if (!ReadString(&blob)) return false;
    elements.clear();
    if (container == rdb::kQuicklistNodePlain) {
      elements.push_back(std::move(blob));
    } else if (container != rdb::kQuicklistNodePacked) {
      return Fail("bad quicklist container");
    } else if (!(ziplist_nodes ? ZiplistTexts(blob, &elements) : ListpackTexts(blob, &elements))) {
      return Fail("bad quicklist node");
    }
    // Empty nodes are skipped, as Redis does.
    for (const std::string& element : elements) PushTail(list, element);
    total += elements.size();
  }
  if (total == 0) return Empty();
  *value = std::move(built);
  return true;
}

bool RdbLoader::LoadSetElements(PrimeValue* value) {
  uint64_t count;
  if (!ReadLength(&count)) return false;
  if (count == 0) return Empty();
  PrimeValue built;
  SetBuilder set(&built);
  std::string member;
  for (uint64_t i = 0; i < count; ++i) {
    if (!ReadString(&member)) return false;
    if (!set.Add(member, count)) return Fail("duplicate set member");
  }
  set.Finish();
  *value = std::move(built);
  return true;
}

bool RdbLoader::LoadSetIntset(PrimeValue* value) {
  std::string blob;
  if (!ReadString(&blob)) return false;
  if (blob.size() == 8 && blob.substr(4) == std::string(4, '\0')) return Empty();
  if (!core::Intset::Validate(blob)) return Fail("bad intset");
  core::Intset intset = core::Intset::FromBytes(blob);
  PrimeValue built;
  SetBuilder set(&built);
  for (size_t i = 0; i < intset.Size(); ++i) {
    set.Add(std::to_string(intset.Get(i)), intset.Size());  // ascending: no duplicates
  }
  set.Finish();
  *value = std::move(built);
  return true;
}

bool RdbLoader::LoadSetListpack(PrimeValue* value) {
  std::string blob;
  std::vector<std::string> members;
  if (!ReadString(&blob)) return false;
  if (!ListpackTexts(blob, &members)) return Fail("bad listpack");
  if (members.empty()) return Empty();
  PrimeValue built;
  SetBuilder set(&built);
  for (const std::string& member : members) {
    if (!set.Add(member, members.size())) return Fail("duplicate set member");
  }
  set.Finish();
  *value = std::move(built);
  return true;
}

bool RdbLoader::LoadZSetElements(PrimeValue* value, bool binary_scores) {
  uint64_t count;
  if (!ReadLength(&count)) return false;
  if (count == 0) return Empty();
  PrimeValue built;
  ZSetRef::MakeEmpty(&built);
  ZSetRef zset(&built);
  std::string member;
  for (uint64_t i = 0; i < count; ++i) {
    double score;
    if (!ReadString(&member)) return false;
    if (!(binary_scores ? ReadBinaryDouble(&score) : ReadTextDouble(&score))) return false;
    if (std::isnan(score)) return Fail("NaN score");
    if (!zset.Set(member, score)) return Fail("duplicate sorted set member");
  }
  *value = std::move(built);
  return true;
}

bool RdbLoader::LoadZSetPacked(PrimeValue* value, bool ziplist) {
  std::string blob;
  std::vector<std::string> elements;
  if (!ReadString(&blob)) return false;
  if (!(ziplist ? ZiplistTexts(blob, &elements) : ListpackTexts(blob, &elements))) {
    return Fail("bad sorted set blob");
  }
  if (elements.size() % 2 != 0) return Fail("odd sorted set blob");
  if (elements.empty()) return Empty();
  PrimeValue built;
  ZSetRef::MakeEmpty(&built);
  ZSetRef zset(&built);
  for (size_t i = 0; i < elements.size(); i += 2) {
    double score;
    if (!ParseScore(elements[i + 1], &score)) return Fail("bad score");
    if (!zset.Set(elements[i], score)) return Fail("duplicate sorted set member");
  }
  *value = std::move(built);
  return true;
}

bool RdbLoader::LoadHashElements(PrimeValue* value) {
  uint64_t count;
  if (!ReadLength(&count)) return false;
  if (count == 0) return Empty();
  std::vector<std::string> elements;
  std::string field, field_value;
  if (count <= CollectionLimits::HashMaxListpackEntries()) {
    for (uint64_t i = 0; i < count; ++i) {
      elements.emplace_back();
      if (!ReadString(&elements.back())) return false;
      elements.emplace_back();
      if (!ReadString(&elements.back())) return false;
    }
    return BuildHash(elements, value);
  }
  // Too many fields for a listpack: straight into a hash table, whose Set finds
  // duplicates in O(1).
  PrimeValue built;
  HashRef::MakeEmpty(&built);
  HashRef hash(&built);
  hash.ConvertIfNeeded(SIZE_MAX, 0);  // as for a value too long for any listpack
  for (uint64_t i = 0; i < count; ++i) {
    if (!ReadString(&field) || !ReadString(&field_value)) return false;
    if (!hash.Set(field, field_value)) return Fail("duplicate hash field");
  }
  *value = std::move(built);
  return true;
}

bool RdbLoader::LoadHashPacked(PrimeValue* value, uint8_t type) {
  std::string blob;
  std::vector<std::string> elements;
  if (!ReadString(&blob)) return false;
  if (type == rdb::kTypeHashListpack) return LoadHashListpack(blob, value);
  bool valid;
  if (type == rdb::kTypeHashZipmap) {
    valid = core::ZipmapForEach(blob, [&](std::string_view field, std::string_view v) {
      elements.emplace_back(field);
      elements.emplace_back(v);
    });
  } else {
    valid = type == rdb::kTypeHashZiplist ? ZiplistTexts(blob, &elements)
                                          : ListpackTexts(blob, &elements);
  }
  if (!valid) return Fail("bad hash blob");
  if (elements.size() % 2 != 0) return Fail("odd hash blob");
  if (elements.empty()) return Empty();
  return BuildHash(elements, value);
}

// A listpack within the limits is kept as its elements are: validated once, copied into a
// pack, then checked in place for duplicate fields.
bool RdbLoader::LoadHashListpack(std::string_view blob, PrimeValue* value) {
  PrimeValue built;
  if (!MakeHashFromListpack(blob, &built)) return Fail("bad hash listpack");
  const HashView hash(built);
  if (hash.Size() == 0) return Empty();
  absl::flat_hash_set<std::string_view, helio::StringViewHash, helio::StringViewEq> fields;
  fields.reserve(hash.Size());
  std::deque<std::string> numbers;  // integer fields, which ForEach prints into a buffer
  size_t max_len = 0;
  bool duplicate = false;
  hash.ForEach([&](std::string_view field, std::string_view field_value) {
    max_len = std::max({max_len, field.size(), field_value.size()});
    int64_t ignored;
    if (core::ListpackStringToInt64(field, &ignored)) field = numbers.emplace_back(field);
    duplicate |= !fields.insert(field).second;
  });
  if (duplicate) return Fail("duplicate hash field");
  if (hash.encoding() == ObjEncoding::kHashtable ||
      (hash.Size() <= CollectionLimits::HashMaxListpackEntries() &&
       max_len <= CollectionLimits::HashMaxListpackValue())) {
    *value = std::move(built);
    return true;
  }
  std::vector<std::string> pairs;
  hash.ForEach([&](std::string_view field, std::string_view field_value) {
    pairs.emplace_back(field);
    pairs.emplace_back(field_value);
  });
  return BuildHash(pairs, value);
}

// Makes *value the hash of `pairs` (field, value...) after checking for duplicate fields
// (with a set: HashRef::Set would search the pack for each field, O(n^2)), as one pack
// built here when the pairs are within its limits, else a hash table.
bool RdbLoader::BuildHash(const std::vector<std::string>& pairs, PrimeValue* value) {
  absl::flat_hash_set<std::string_view, helio::StringViewHash, helio::StringViewEq> fields;
  size_t max_len = 0, total_len = 0;
  for (size_t i = 0; i < pairs.size(); i += 2) {
    if (!fields.insert(pairs[i]).second) return Fail("duplicate hash field");
    max_len = std::max({max_len, pairs[i].size(), pairs[i + 1].size()});
    total_len += pairs[i].size() + pairs[i + 1].size();
  }
  PrimeValue built;
  if (pairs.size() / 2 <= CollectionLimits::HashMaxListpackEntries() &&
      max_len <= CollectionLimits::HashMaxListpackValue() &&
      core::PairPack::Fits(core::PairPack::kHeaderSize, total_len + 5 * pairs.size())) {
    core::PairPack pack;
    for (size_t i = 0; i < pairs.size(); i += 2) pack.Append(pairs[i], pairs[i + 1]);
    built.SetPairPack(ObjType::kHash, std::move(pack));
  } else {
    HashRef::MakeEmpty(&built);
    HashRef hash(&built);
    hash.ConvertIfNeeded(SIZE_MAX, 0);
    for (size_t i = 0; i < pairs.size(); i += 2) hash.Set(pairs[i], pairs[i + 1]);
  }
  *value = std::move(built);
  return true;
}

// A stream: its nodes (master ID as 16 big-endian bytes, then a listpack in Redis's node
// format: see SaveStream in rdb_save.cc), its length, last ID, and from
// STREAM_LISTPACKS_2 on first ID, max deleted ID and entries added; then its consumer
// groups.
bool RdbLoader::LoadStream(PrimeValue* value, uint8_t type) {
  using core::StreamID;
  uint64_t nodes;
  if (!ReadLength(&nodes)) return false;
  PrimeValue built;
  core::Stream* stream = core::Stream::Make();
  built.SetObject(ObjType::kStream, ObjEncoding::kStream, stream);
  std::string key, blob;
  std::optional<StreamID> last_added;
  uint64_t live_total = 0;
  for (uint64_t n = 0; n < nodes; ++n) {
    if (!ReadString(&key) || !ReadString(&blob)) return false;
    if (key.size() != rdb::kStreamIdBytes) return Fail("bad stream node key");
    if (!Listpack::Validate(blob)) return Fail("bad stream listpack");
    const StreamID master = ParseRawStreamId(key);
    Listpack lp = Listpack::FromBytes(blob);
    core::Stream::NodeInfo info;
    if (!core::Stream::CheckNode(master, lp, last_added ? &*last_added : nullptr, &info)) {
      return Fail("bad stream node");
    }
    stream->AppendNode(master, std::move(lp), info);
    last_added = info.last;
    live_total += info.live;
  }
  uint64_t length, words[7] = {};
  if (!ReadLength(&length) || !ReadLength(&words[0]) || !ReadLength(&words[1])) return false;
  if (type == rdb::kTypeStreamListpacks2) {
    for (int i = 2; i < 7; ++i) {
      if (!ReadLength(&words[i])) return false;
    }
  } else {
    words[6] = length;  // entries added: as Redis 7.0 assumes for older files
  }
  const StreamID last_id{words[0], words[1]};
  if (length != live_total) return Fail("stream length mismatch");
  if (last_added && last_id < *last_added) return Fail("stream last ID below its entries");
  stream->SetLastId(last_id);
  stream->SetMaxDeletedId({words[4], words[5]});
  stream->SetEntriesAdded(words[6]);
  if (!LoadStreamGroups(type, stream)) return false;
  *value = std::move(built);
  return true;
}

// The consumer groups (see SaveStreamGroups). Refused as Redis 7.0 refuses them:
// duplicate groups, consumers or PEL entries, a consumer's ID missing from its group's
// PEL; and a PEL entry that no consumer owns, which Redis refuses only under deep
// sanitization but which would break our invariant (a PendingEntry always has an owner).
// STREAM_LISTPACKS has no entries read: it is estimated from the group's last ID, as
// Redis 7.0 does.
bool RdbLoader::LoadStreamGroups(uint8_t type, core::Stream* stream) {
  using core::StreamID;
  struct Delivery {
    int64_t time_ms;
    uint64_t count;
  };
  uint64_t groups;
  if (!ReadLength(&groups)) return false;
  std::string name, raw;
  absl::btree_map<StreamID, Delivery> pel;
  for (uint64_t g = 0; g < groups; ++g) {
    StreamID last_id;
    if (!ReadString(&name) || !ReadLength(&last_id.ms) || !ReadLength(&last_id.seq)) {
      return false;
    }
    uint64_t entries_read;
    if (type == rdb::kTypeStreamListpacks2) {
      if (!ReadLength(&entries_read)) return false;
    } else {
      entries_read = uint64_t(stream->EstimateEntriesRead(last_id));
    }
    core::StreamGroup* group = stream->CreateGroup(name, last_id, int64_t(entries_read));
    if (group == nullptr) return Fail("duplicate stream consumer group");
    uint64_t pending;
    if (!ReadLength(&pending)) return false;
    pel.clear();
    for (uint64_t p = 0; p < pending; ++p) {
      uint64_t time_ms, count;
      if (!ReadBytes(rdb::kStreamIdBytes, &raw) || !ReadLe(8, &time_ms) || !ReadLength(&count)) {
        return false;
      }
      if (!pel.emplace(ParseRawStreamId(raw), Delivery{int64_t(time_ms), count}).second) {
        return Fail("duplicate stream PEL entry");
      }
    }
    uint64_t consumers;
    if (!ReadLength(&consumers)) return false;
    for (uint64_t c = 0; c < consumers; ++c) {
      uint64_t seen_ms, owned;
      if (!ReadString(&name) || !ReadLe(8, &seen_ms)) return false;
      bool created;
      core::StreamConsumer* consumer = group->FindOrAddConsumer(name, int64_t(seen_ms), &created);
      if (!created) return Fail("duplicate stream consumer");
      if (!ReadLength(&owned)) return false;
      for (uint64_t o = 0; o < owned; ++o) {
        if (!ReadBytes(rdb::kStreamIdBytes, &raw)) return false;
        const StreamID id = ParseRawStreamId(raw);
        auto it = pel.find(id);
        if (it == pel.end()) return Fail("stream consumer PEL entry not in its group's PEL");
        if (group->FindPending(id) != nullptr) return Fail("duplicate stream consumer PEL entry");
        core::PendingEntry& entry = group->AddPending(id, consumer);
        entry.delivery_time_ms = it->second.time_ms;
        entry.delivery_count = it->second.count;
      }
    }
    if (group->pel().size() != pel.size()) return Fail("stream PEL entry without consumer");
  }
  return true;
}

bool DecodeDumpPayload(std::string_view payload, PrimeValue* value, std::string* error) {
  if (payload.size() < kFooterBytes) {
    *error = kBadPayload;
    return false;
  }
  const std::string_view footer = payload.substr(payload.size() - kFooterBytes);
  const uint16_t version = uint8_t(footer[0]) | uint16_t(uint8_t(footer[1])) << 8;
  uint64_t crc = 0;
  for (int i = 0; i < 8; ++i) crc |= uint64_t(uint8_t(footer[2 + i])) << (8 * i);
  if (version > rdb::kVersion || core::Crc64(0, payload.substr(0, payload.size() - 8)) != crc) {
    *error = kBadPayload;
    return false;
  }
  RdbLoader loader(payload.substr(0, payload.size() - kFooterBytes));
  PrimeValue loaded;
  uint8_t type;
  if (!loader.ReadType(&type) || !loader.LoadValue(type, &loaded) || !loader.AtEnd()) {
    *error = kBadFormat;
    return false;
  }
  *value = std::move(loaded);
  return true;
}

}  // namespace damselfly
