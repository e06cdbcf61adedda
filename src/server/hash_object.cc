#include "src/server/hash_object.h"

#include <charconv>

#include "src/server/collection_limits.h"

namespace damselfly {

namespace {

using core::Listpack;

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
  if (!value.holds_listpack()) map_ = &static_cast<HashTable*>(value.GetObject())->map;
}

std::string_view HashView::Text(const Listpack::Value& value, char (&buf)[24]) {
  if (!value.is_int) return value.sval;
  char* end = std::to_chars(buf, buf + sizeof(buf), value.ival).ptr;
  return {buf, size_t(end - buf)};
}

std::optional<std::string_view> HashView::Get(std::string_view field,
                                              std::string* scratch) const {
  if (map_ != nullptr) return map_->Get(field);
  Listpack::Pos pos = lp_.Find(lp_.First(), field, 1);
  if (pos == Listpack::kNoPos) return std::nullopt;
  Listpack::Value value = lp_.Get(lp_.Next(pos));
  if (!value.is_int) return value.sval;
  char buf[24];
  *scratch = Text(value, buf);
  return *scratch;
}

bool HashView::Contains(std::string_view field) const {
  if (map_ != nullptr) return map_->Contains(field);
  return lp_.Find(lp_.First(), field, 1) != Listpack::kNoPos;
}

std::pair<std::string, std::string> HashView::Random(uint64_t rnd) const {
  if (map_ != nullptr) {
    auto [field, value] = map_->Random(rnd);
    return {std::string(field), std::string(value)};
  }
  Listpack::Pos pos = lp_.Seek(int64_t(2 * (rnd % Size())));
  return {lp_.Get(pos).ToString(), lp_.Get(lp_.Next(pos)).ToString()};
}

void HashRef::MakeEmpty(PrimeValue* value) { value->SetListpack(ObjType::kHash, Listpack()); }

void HashRef::ConvertIfNeeded(size_t max_len, size_t total_len) {
  if (map_ != nullptr) return;
  if (max_len > CollectionLimits::HashMaxListpackValue() ||
      !Listpack::SafeToAdd(lp_.ByteSize(), total_len)) {
    ConvertToMap();
  }
}

bool HashRef::Set(std::string_view field, std::string_view value) {
  if (map_ == nullptr) {
    // HINCRBY* reach here without a check of the field's length (Redis's hashTypeSet).
    ConvertIfNeeded(std::max(field.size(), value.size()), field.size() + value.size());
  }
  if (map_ != nullptr) return map_->Set(field, value);
  Listpack::Pos pos = lp_.Find(lp_.First(), field, 1);
  if (pos != Listpack::kNoPos) {
    lp_.Replace(lp_.Next(pos), value);
    SyncBlock();
    return false;
  }
  lp_.Append(field);
  lp_.Append(value);
  SyncBlock();
  if (Size() > CollectionLimits::HashMaxListpackEntries()) ConvertToMap();
  return true;
}

bool HashRef::Remove(std::string_view field) {
  if (map_ != nullptr) return map_->Remove(field);
  Listpack::Pos pos = lp_.Find(lp_.First(), field, 1);
  if (pos == Listpack::kNoPos) return false;
  lp_.Delete(lp_.Delete(pos));
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

bool MakeHashFromForm(ObjEncoding encoding, std::string_view form, PrimeValue* value) {
  if (encoding == ObjEncoding::kListpack) {
    if (!Listpack::Validate(form)) return false;
    Listpack lp = Listpack::FromBytes(form);
    if (lp.Size() % 2 != 0) return false;
    value->SetListpack(ObjType::kHash, std::move(lp));
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
