// A Redis hash, in Redis 7.0's two encodings:
//   listpack   field, value, field, value... in one core::Listpack block, held by the
//              PrimeValue itself (PrimeValue::SetListpack), while the hash has at most
//              hash-max-listpack-entries fields and every field and value is at most
//              hash-max-listpack-value bytes (CollectionLimits);
//   hashtable  a HashTable object: a core::StringMap (one block per field with its
//              value, 8-byte slots).
// A write that breaks a listpack limit converts the hash first (Redis checks lengths
// before and the count after adding); a hash never converts back, as in Redis.
//
// Why the listpack has no object around it: small hashes are the common case (1M session
// hashes of 10 fields), and a wrapper object costs a 32-byte block per hash beside a
// listpack of about 96 bytes. So a hash is read through a HashView and changed through a
// HashRef, handles made per command on the stack over the PrimeValue that holds it,
// which work on the listpack in place.
//
// Thread contract: not thread-safe; a hash and its blocks belong to its shard's thread
// (ObjMalloc's rule), which makes every call. A handle must not outlive its value, nor
// be used after anything else changed or moved the value (a HashRef keeps the value's
// address: DbSlice's pointer rule holds for it as for an Update).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "src/core/listpack.h"
#include "src/core/string_map.h"
#include "src/core/typed_object.h"
#include "src/server/borrowed_listpack.h"
#include "src/server/prime_value.h"

namespace damselfly {

// The hashtable encoding's object.
class HashTable final : public core::TypedObject {
 public:
  core::StringMap map;

  size_t MallocUsed() const override;
  size_t FreeEffort() const override { return map.Size(); }
  bool FreeSome(size_t max) override { return map.FreeSome(max); }
  // Form: the pairs, each string as a varint length and its bytes.
  void Serialize(std::string* out) const override;
};

// Reads the hash a PrimeValue holds.
class HashView {
 public:
  // No hash: for OpResult's sake only; call nothing on it.
  HashView() = default;
  // REQUIRES: value.type() == ObjType::kHash.
  explicit HashView(const PrimeValue& value);

  ObjEncoding encoding() const {
    return map_ == nullptr ? ObjEncoding::kListpack : ObjEncoding::kHashtable;
  }
  size_t Size() const { return map_ != nullptr ? map_->Size() : lp_.Size() / 2; }

  // The value of `field`, or nullopt. A listpack integer is printed into *scratch; other
  // views point into the hash and stay valid until its next change.
  std::optional<std::string_view> Get(std::string_view field, std::string* scratch) const;
  bool Contains(std::string_view field) const;

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

  // The listpack's bytes, as Redis stores them. REQUIRES: encoding() == kListpack.
  std::string_view listpack_bytes() const { return lp_.bytes(); }

 protected:
  // The text of a listpack element: its bytes, or its integer printed into `buf`.
  static std::string_view Text(const core::Listpack::Value& value, char (&buf)[24]);

  // The value's listpack (no block while map_ is set); the value's hash table otherwise.
  BorrowedListpack lp_;
  core::StringMap* map_ = nullptr;
};

// Reads and changes the hash a PrimeValue holds; the value follows every change (its
// block, its encoding), so it may be read between changes.
class HashRef : public HashView {
 public:
  // Makes *value an empty hash (listpack).
  static void MakeEmpty(PrimeValue* value);
  // REQUIRES: value->type() == ObjType::kHash.
  explicit HashRef(PrimeValue* value) : HashView(*value), value_(value) {}

  // Converts to a hash table when a string of `max_len` bytes would break the listpack's
  // value limit, or `total_len` more bytes its 1 GiB limit (Redis's
  // hashTypeTryConversion, which HSET runs over all its arguments before setting any).
  void ConvertIfNeeded(size_t max_len, size_t total_len);
  // Sets `field` to `value`; returns true when the field is new. Converts as Redis does.
  bool Set(std::string_view field, std::string_view value);
  // Removes `field`; returns false when absent.
  bool Remove(std::string_view field);

 private:
  // Tells the value where the listpack's block is after a change.
  void SyncBlock() { value_->set_listpack_block(lp_.block()); }
  void ConvertToMap();

  PrimeValue* value_;
};

// The hash family's TypedObjectFactory. Forms: a listpack's bytes (validated, with an
// even count), or HashTable::Serialize's.
bool MakeHashFromForm(ObjEncoding encoding, std::string_view form, PrimeValue* value);

}  // namespace damselfly
