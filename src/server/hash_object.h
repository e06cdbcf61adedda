// A Redis hash, in Redis 7.0's two encodings:
//   listpack   field, value, field, value... in one block, held by the PrimeValue itself
//              (PrimeValue::SetPairPack), while the hash has at most
//              hash-max-listpack-entries fields, every field and value is at most
//              hash-max-listpack-value bytes (CollectionLimits) and the block at most
//              1 MiB. In memory the block is a core::PairPack: listpack's elements without
//              its back-lengths (pair_pack.h says why); RDB and DUMP get the listpack
//              Redis would hold (AppendListpack);
//   hashtable  a HashTable object: a core::StringMap (one block per field with its
//              value, 8-byte slots).
// A write that breaks a listpack limit converts the hash first (Redis checks lengths
// before and the count after adding); a hash never converts back, as in Redis.
//
// Why the pack has no object around it: small hashes are the common case (1M session
// hashes of 10 fields), and a wrapper object costs a 32-byte block per hash beside a
// pack of about 64 bytes. So a hash is read through a HashView and changed through a
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
#include "src/core/pair_pack.h"
#include "src/core/string_map.h"
#include "src/core/typed_object.h"
#include "src/server/borrowed_block.h"
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
  size_t Size() const { return map_ != nullptr ? map_->Size() : lp_.Size(); }

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
    const core::PairPack::Pos end = lp_.End();
    for (core::PairPack::Pos pos = core::PairPack::kHeaderSize; pos < end;) {
      core::PairPack::Pos value_pos = lp_.After(pos);
      f(Text(lp_.Get(pos), field_buf), Text(lp_.Get(value_pos), value_buf));
      pos = lp_.After(value_pos);
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

  // Appends the listpack Redis would hold for this hash. REQUIRES: encoding() == kListpack.
  void AppendListpack(std::string* out) const { lp_.AppendListpack(out); }

 protected:
  // The text of a listpack element: its bytes, or its integer printed into `buf`.
  static std::string_view Text(const core::PairPack::Value& value, char (&buf)[24]);

  // The value's pack (no block while map_ is set); the value's hash table otherwise.
  BorrowedPairPack lp_;
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
  // Tells the value where the pack's block is after a change.
  void SyncBlock() { value_->set_block(lp_.block()); }
  void ConvertToMap();

  PrimeValue* value_;
};

// The hash family's TypedObjectFactory. Forms: a pack's bytes (kListpack: PrimeValue::
// Serialize's), or HashTable::Serialize's.
bool MakeHashFromForm(ObjEncoding encoding, std::string_view form, PrimeValue* value);

// Makes *value the hash a listpack blob from RDB or RESTORE holds (validated, with an
// even count): a pack when it fits one (the caller applies the entry and value limits
// and looks for duplicate fields after), else a hash table. False when the blob is
// malformed (or, for the table, repeats a field).
bool MakeHashFromListpack(std::string_view blob, PrimeValue* value);

}  // namespace damselfly
