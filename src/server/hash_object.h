// HashObject: the value of a Redis hash, in Redis 7.0's two encodings.
//   listpack   field, value, field, value... in one core::Listpack block, while the hash
//              has at most hash-max-listpack-entries fields and every field and value is
//              at most hash-max-listpack-value bytes (CollectionLimits);
//   hashtable  a core::StringMap (one block per field with its value, 8-byte slots).
// A write that breaks a listpack limit converts the hash first (Redis checks lengths
// before and the count after adding); a hash never converts back, as in Redis.
//
// Why a Listpack member and a pointer to the map (the listpack is moved-from once the
// map exists) rather than the map inline: small hashes are the common case (1M session
// hashes of 10 fields), and this keeps the object at 32 bytes, one mimalloc class,
// beside its listpack.
//
// Thread contract: not thread-safe; a hash and its blocks belong to its shard's thread
// (ObjMalloc's rule), which makes every call, the destructor included.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/listpack.h"
#include "src/core/string_map.h"
#include "src/core/typed_object.h"
#include "src/server/prime_value.h"

namespace damselfly {

class HashObject : public core::TypedObject {
 public:
  // Makes an empty listpack-encoded hash.
  static HashObject* Make() { return TypedObject::Make<HashObject>(); }
  HashObject() = default;
  ~HashObject() override;

  ObjEncoding encoding() const {
    return map_ == nullptr ? ObjEncoding::kListpack : ObjEncoding::kHashtable;
  }
  size_t Size() const;

  // The value of `field`, or nullopt. A listpack integer is printed into *scratch; other
  // views point into the hash and stay valid until its next change.
  std::optional<std::string_view> Get(std::string_view field, std::string* scratch) const;
  bool Contains(std::string_view field) const;

  // Converts to a hash table when a string of `max_len` bytes would break the listpack's
  // value limit, or `total_len` more bytes its 1 GiB limit (Redis's
  // hashTypeTryConversion, which HSET runs over all its arguments before setting any).
  void ConvertIfNeeded(size_t max_len, size_t total_len);
  // Sets `field` to `value`; returns true when the field is new. Converts as Redis does.
  bool Set(std::string_view field, std::string_view value);
  // Removes `field`; returns false when absent.
  bool Remove(std::string_view field);

  // Calls f(field, value) for every pair, in listpack order or table order. f must not
  // change the hash.
  template <typename F>
  void ForEach(F&& f) const {
    if (map_ != nullptr) return map_->ForEach(f);
    char field_buf[24], value_buf[24];
    for (core::Listpack::Pos pos = lp_.First(); pos != core::Listpack::kNoPos;) {
      core::Listpack::Pos value_pos = lp_.Next(pos);
      f(Text(lp_.Get(pos), field_buf), Text(lp_.Get(value_pos), value_buf));
      pos = lp_.Next(value_pos);
    }
  }

  // HSCAN: a hash table is scanned with StringMap::Scan; a listpack answers everything
  // at once with cursor 0, as Redis does. Calls f(field, value); returns the next cursor.
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& f) const {
    if (map_ != nullptr) return map_->Scan(cursor, count, f);
    ForEach(f);
    return 0;
  }

  // A random pair (copied). REQUIRES: Size() > 0.
  std::pair<std::string, std::string> Random(uint64_t rnd) const;

  size_t MallocUsed() const override;
  // Form: for a listpack its bytes; for a hash table the pairs, each string as a
  // varint length and its bytes.
  void Serialize(std::string* out) const override;
  // Rebuilds a hash from Serialize's form, or returns nullptr when the form is malformed.
  static core::TypedObject* Deserialize(ObjEncoding encoding, std::string_view form);

 private:
  // The text of a listpack element: its bytes, or its integer printed into `buf`.
  static std::string_view Text(const core::Listpack::Value& value, char (&buf)[24]);
  void ConvertToMap();

  core::Listpack lp_;               // the listpack encoding (moved-from once converted)
  core::StringMap* map_ = nullptr;  // the hashtable encoding, when converted
};

}  // namespace damselfly
