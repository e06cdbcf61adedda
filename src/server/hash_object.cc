#include "src/server/hash_object.h"

#include <charconv>
#include <new>

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

HashObject::~HashObject() {
  if (map_ != nullptr) {
    map_->~StringMap();
    core::ObjFree(map_);
  }
}

std::string_view HashObject::Text(const Listpack::Value& value, char (&buf)[24]) {
  if (!value.is_int) return value.sval;
  char* end = std::to_chars(buf, buf + sizeof(buf), value.ival).ptr;
  return {buf, size_t(end - buf)};
}

size_t HashObject::Size() const { return map_ != nullptr ? map_->Size() : lp_.Size() / 2; }

std::optional<std::string_view> HashObject::Get(std::string_view field,
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

bool HashObject::Contains(std::string_view field) const {
  if (map_ != nullptr) return map_->Contains(field);
  return lp_.Find(lp_.First(), field, 1) != Listpack::kNoPos;
}

void HashObject::ConvertIfNeeded(size_t max_len, size_t total_len) {
  if (map_ != nullptr) return;
  if (max_len > CollectionLimits::HashMaxListpackValue() ||
      !Listpack::SafeToAdd(lp_.ByteSize(), total_len)) {
    ConvertToMap();
  }
}

bool HashObject::Set(std::string_view field, std::string_view value) {
  if (map_ == nullptr) {
    // HINCRBY* reach here without a check of the field's length (Redis's hashTypeSet).
    ConvertIfNeeded(std::max(field.size(), value.size()), field.size() + value.size());
  }
  if (map_ != nullptr) return map_->Set(field, value);
  Listpack::Pos pos = lp_.Find(lp_.First(), field, 1);
  if (pos != Listpack::kNoPos) {
    lp_.Replace(lp_.Next(pos), value);
    return false;
  }
  lp_.Append(field);
  lp_.Append(value);
  if (Size() > CollectionLimits::HashMaxListpackEntries()) ConvertToMap();
  return true;
}

bool HashObject::Remove(std::string_view field) {
  if (map_ != nullptr) return map_->Remove(field);
  Listpack::Pos pos = lp_.Find(lp_.First(), field, 1);
  if (pos == Listpack::kNoPos) return false;
  lp_.Delete(lp_.Delete(pos));
  return true;
}

void HashObject::ConvertToMap() {
  core::StringMap* map = new (core::ObjMalloc(sizeof(core::StringMap))) core::StringMap();
  map->Reserve(Size());
  ForEach([&](std::string_view field, std::string_view value) { map->Set(field, value); });
  map_ = map;
  Listpack dropped = std::move(lp_);  // lp_ stays moved-from (no block) while map_ is set
}

std::pair<std::string, std::string> HashObject::Random(uint64_t rnd) const {
  if (map_ != nullptr) {
    auto [field, value] = map_->Random(rnd);
    return {std::string(field), std::string(value)};
  }
  Listpack::Pos pos = lp_.Seek(int64_t(2 * (rnd % Size())));
  return {lp_.Get(pos).ToString(), lp_.Get(lp_.Next(pos)).ToString()};
}

size_t HashObject::MallocUsed() const {
  size_t bytes = core::ObjUsableSize(const_cast<HashObject*>(this));
  if (map_ != nullptr) return bytes + core::ObjUsableSize(map_) + map_->MallocUsed();
  return bytes + core::ObjUsableSize(const_cast<uint8_t*>(
                     reinterpret_cast<const uint8_t*>(lp_.bytes().data())));
}

void HashObject::Serialize(std::string* out) const {
  if (map_ == nullptr) {
    out->append(lp_.bytes());
    return;
  }
  map_->ForEach([&](std::string_view field, std::string_view value) {
    AppendVarint(field.size(), out);
    out->append(field);
    AppendVarint(value.size(), out);
    out->append(value);
  });
}

core::TypedObject* HashObject::Deserialize(ObjEncoding encoding, std::string_view form) {
  if (encoding == ObjEncoding::kListpack) {
    if (!Listpack::Validate(form)) return nullptr;
    Listpack lp = Listpack::FromBytes(form);
    if (lp.Size() % 2 != 0) return nullptr;
    HashObject* hash = Make();
    hash->lp_ = std::move(lp);
    return hash;
  }
  if (encoding != ObjEncoding::kHashtable) return nullptr;
  HashObject* hash = Make();
  hash->map_ = new (core::ObjMalloc(sizeof(core::StringMap))) core::StringMap();
  while (!form.empty()) {
    std::string_view field, value;
    if (!ReadString(&form, &field) || !ReadString(&form, &value) ||
        !hash->map_->Set(field, value)) {
      Destroy(hash);
      return nullptr;
    }
  }
  return hash;
}

}  // namespace damselfly
