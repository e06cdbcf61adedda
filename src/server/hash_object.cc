#include "src/server/hash_object.h"

#include <charconv>

#include "src/server/collection_limits.h"

namespace damselfly {

namespace {

// The most bytes a pack spends on a field's and its value's encodings beside their text
// (two 5-byte string headers).
constexpr size_t kMaxEncodingBytes = 10;

using core::Listpack;
using core::PairPack;

void AppendVarint(uint64_t n, std::string* out) {
  while (n >= 0x80) {
    out->push_back(char(n | 0x80));
    n >>= 7;
  }
  out->push_back(char(n));
}

// Reads a varint-prefixed string from the front of *in; false when malformed.
bool ReadString(std::string_view* in, std::string_view* out) {
  uint64_t len = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (in->empty() || shift > 63) return false;
    uint8_t byte = uint8_t((*in)[0]);
    in->remove_prefix(1);
    len |= uint64_t(byte & 0x7F) << shift;
    if (byte < 0x80) break;
  }
  if (len > in->size()) return false;
  *out = in->substr(0, len);
  in->remove_prefix(len);
  return true;
}

}  // namespace

size_t HashTable::MallocUsed() const {
  return core::ObjUsableSize(const_cast<HashTable*>(this)) + map.MallocUsed();
}

void HashTable::Serialize(std::string* out) const {
  map.ForEach([&](std::string_view field, std::string_view value) {
    AppendVarint(field.size(), out);
    out->append(field);
    AppendVarint(value.size(), out);
    out->append(value);
  });
}

HashView::HashView(const PrimeValue& value) : lp_(value) {
  if (!value.holds_block()) map_ = &static_cast<HashTable*>(value.GetObject())->map;
}

std::string_view HashView::Text(const PairPack::Value& value, char (&buf)[24]) {
  if (!value.is_int) return value.sval;
  char* end = std::to_chars(buf, buf + sizeof(buf), value.ival).ptr;
  return {buf, size_t(end - buf)};
}

std::optional<std::string_view> HashView::Get(std::string_view field,
                                              std::string* scratch) const {
  if (map_ != nullptr) return map_->Get(field);
  PairPack::Pos pos = lp_.Find(field);
  if (pos == PairPack::kNoPos) return std::nullopt;
  PairPack::Value value = lp_.Get(lp_.After(pos));
  if (!value.is_int) return value.sval;
  char buf[24];
  *scratch = Text(value, buf);
  return *scratch;
}

bool HashView::Contains(std::string_view field) const {
  if (map_ != nullptr) return map_->Contains(field);
  return lp_.Find(field) != PairPack::kNoPos;
}

std::pair<std::string, std::string> HashView::Random(uint64_t rnd) const {
  if (map_ != nullptr) {
    auto [field, value] = map_->Random(rnd);
    return {std::string(field), std::string(value)};
  }
  PairPack::Pos pos = lp_.SeekPair(rnd % Size());
  return {lp_.Get(pos).ToString(), lp_.Get(lp_.After(pos)).ToString()};
}

void HashRef::MakeEmpty(PrimeValue* value) { value->SetPairPack(ObjType::kHash, PairPack()); }

void HashRef::ConvertIfNeeded(size_t max_len, size_t total_len) {
  if (map_ != nullptr) return;
  if (max_len > CollectionLimits::HashMaxListpackValue() ||
      !PairPack::Fits(lp_.ByteSize(), total_len + kMaxEncodingBytes)) {
    ConvertToMap();
  }
}

bool HashRef::Set(std::string_view field, std::string_view value) {
  if (map_ == nullptr) {
    // HINCRBY* reach here without a check of the field's length (Redis's hashTypeSet).
    ConvertIfNeeded(std::max(field.size(), value.size()), field.size() + value.size());
  }
  if (map_ != nullptr) return map_->Set(field, value);
  PairPack::Pos pos = lp_.Find(field);
  if (pos != PairPack::kNoPos) {
    lp_.ReplaceSecond(pos, value);
    SyncBlock();
    return false;
  }
  if (Size() + 1 > CollectionLimits::HashMaxListpackEntries()) {
    // One field more than the limit: a hash table, as Redis's convert-after-add leaves it.
    ConvertToMap();
    return map_->Set(field, value);
  }
  lp_.Append(field, value);
  SyncBlock();
  return true;
}

bool HashRef::Remove(std::string_view field) {
  if (map_ != nullptr) return map_->Remove(field);
  PairPack::Pos pos = lp_.Find(field);
  if (pos == PairPack::kNoPos) return false;
  lp_.ErasePair(pos);
  SyncBlock();
  return true;
}

void HashRef::ConvertToMap() {
  HashTable* table = core::TypedObject::Make<HashTable>();
  table->map.Reserve(Size());
  ForEach([&](std::string_view field, std::string_view value) { table->map.Set(field, value); });
  lp_.Release();  // the value frees the block as it takes the table
  value_->SetObject(ObjType::kHash, ObjEncoding::kHashtable, table);
  map_ = &table->map;
}

bool MakeHashFromListpack(std::string_view blob, PrimeValue* value) {
  if (!Listpack::Validate(blob)) return false;
  Listpack lp = Listpack::FromBytes(blob);
  if (lp.Size() % 2 != 0) return false;
  if (PairPack::ListpackFits(lp)) {
    value->SetPairPack(ObjType::kHash, PairPack::FromListpack(lp));
    return true;
  }
  HashTable* table = core::TypedObject::Make<HashTable>();
  for (Listpack::Pos pos = lp.First(); pos != Listpack::kNoPos;) {
    Listpack::Pos value_pos = lp.Next(pos);
    if (!table->map.Set(lp.Get(pos).ToString(), lp.Get(value_pos).ToString())) {
      core::TypedObject::Destroy(table);  // a duplicate field
      return false;
    }
    pos = lp.Next(value_pos);
  }
  value->SetObject(ObjType::kHash, ObjEncoding::kHashtable, table);
  return true;
}

bool MakeHashFromForm(ObjEncoding encoding, std::string_view form, PrimeValue* value) {
  if (encoding == ObjEncoding::kListpack) {
    std::optional<PairPack> pack = PairPack::FromBytes(form);
    if (!pack || !pack->ValidStringPairs()) return false;
    value->SetPairPack(ObjType::kHash, std::move(*pack));
    return true;
  }
  if (encoding != ObjEncoding::kHashtable) return false;
  HashTable* table = core::TypedObject::Make<HashTable>();
  while (!form.empty()) {
    std::string_view field, field_value;
    if (!ReadString(&form, &field) || !ReadString(&form, &field_value) ||
        !table->map.Set(field, field_value)) {
      core::TypedObject::Destroy(table);
      return false;
    }
  }
  value->SetObject(ObjType::kHash, ObjEncoding::kHashtable, table);
  return true;
}

}  // namespace damselfly
