#include "src/server/prime_value.h"

#include <array>

#include "helio/base/strings.h"

namespace damselfly {

namespace {

constexpr const char* kTypeNames[kObjTypeCount] = {"string", "list", "set", "zset", "hash",
                                                   "stream"};

// Written at start-up (RegisterTypedObjectFactory), read-only once shards run.
std::array<TypedObjectFactory, kObjTypeCount> factories{};

// Serialized form: one byte of type, then for a string its bytes and a byte that says
// whether it was built (SetBuiltString); for a typed value a byte of encoding and the
// object's own form (a held listpack: its bytes).
enum : char { kBuiltString = 'b', kPlainString = 's' };

}  // namespace

const char* ObjTypeName(ObjType type) {
  return unsigned(type) < kObjTypeCount ? kTypeNames[unsigned(type)] : "none";
}

std::optional<ObjType> ObjTypeFromName(std::string_view name) {
  for (unsigned i = 0; i < kObjTypeCount; ++i) {
    if (helio::EqualsIgnoreCase(name, kTypeNames[i])) return ObjType(i);
  }
  return std::nullopt;
}

const char* ObjEncodingName(ObjEncoding encoding) {
  switch (encoding) {
    case ObjEncoding::kListpack:
      return "listpack";
    case ObjEncoding::kQuicklist:
      return "quicklist";
    case ObjEncoding::kHashtable:
      return "hashtable";
    case ObjEncoding::kIntset:
      return "intset";
    case ObjEncoding::kSkiplist:
      return "skiplist";
    case ObjEncoding::kStream:
      return "stream";
  }
  return "unknown";
}

void RegisterTypedObjectFactory(ObjType type, TypedObjectFactory factory) {
  factories[unsigned(type)] = factory;
}

void PrimeValue::Serialize(std::string* out) const {
  out->push_back(char(type()));
  if (type() == ObjType::kString) {
    out->push_back(is_built() ? kBuiltString : kPlainString);
    obj_.AppendTo(out);
    return;
  }
  if (holds_block()) {  // the block's bytes as they are, whatever OBJECT ENCODING reports
    out->push_back(char(ObjEncoding::kListpack));
    if (type() == ObjType::kList) {
      core::Listpack lp = core::Listpack::Adopt(block());
      out->append(lp.bytes());
      lp.Release();  // the block stays ours
    } else {
      core::PairPack pack = core::PairPack::Adopt(block());
      out->append(reinterpret_cast<const char*>(pack.data()), pack.ByteSize());
      pack.Release();
    }
    return;
  }
  out->push_back(char(obj_.ObjectEncoding()));
  obj_.GetObject()->Serialize(out);
}

bool PrimeValue::Deserialize(std::string_view form) {
  if (form.size() < 2 || uint8_t(form[0]) >= kObjTypeCount) return false;
  const ObjType type = ObjType(form[0]);
  if (type == ObjType::kString) {
    if (form[1] == kBuiltString) {
      SetBuiltString(form.substr(2));
    } else {
      SetString(form.substr(2));
    }
    return true;
  }
  TypedObjectFactory factory = factories[unsigned(type)];
  if (factory == nullptr) return false;
  return factory(ObjEncoding(form[1]), form.substr(2), this);
}

}  // namespace damselfly
