// PrimeValue: what a key maps to in a shard's table: a CompactObj holding a string, a
// typed object (list, hash, set, sorted set...: core/typed_object.h), or a small
// collection's block with no object around it (a small list's listpack, a small hash's
// or sorted set's core::PairPack: SetSmallList, SetPairPack). The
// per-key "has a deadline" bit lives in the object's flags, so keys without a TTL pay
// nothing for expiry.
//
// Thread-safety: none; owned by its shard's thread (its heap block comes from that
// thread's heap, see core/obj_malloc.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/core/compact_object.h"
#include "src/core/listpack.h"
#include "src/core/pair_pack.h"

namespace damselfly {

// The Redis types. kString is 0, as CompactObj::ObjectType() reports a string.
enum class ObjType : uint8_t { kString = 0, kList, kSet, kZSet, kHash, kStream };
inline constexpr unsigned kObjTypeCount = 6;

// TYPE's answer ("string", "list"...).
const char* ObjTypeName(ObjType type);
// The type TYPE names `name` (case-insensitive, as SCAN's TYPE filter takes it).
std::optional<ObjType> ObjTypeFromName(std::string_view name);

// How a typed value is stored, numbered for CompactObj's encoding byte; the names are
// OBJECT ENCODING's.
enum class ObjEncoding : uint8_t { kListpack = 0, kQuicklist, kHashtable, kIntset, kSkiplist, kStream };
const char* ObjEncodingName(ObjEncoding encoding);

class PrimeValue;

// Makes *value the typed value of one type that `encoding` and its Serialize() form
// describe (a value moved across shards); returns false, *value unchanged, when the form
// is malformed. Each family that owns a type registers one at start-up, before any shard
// runs.
using TypedObjectFactory = bool (*)(ObjEncoding encoding, std::string_view form,
                                    PrimeValue* value);
void RegisterTypedObjectFactory(ObjType type, TypedObjectFactory factory);

class PrimeValue {
 public:
  PrimeValue() = default;
  PrimeValue(PrimeValue&&) = default;
  PrimeValue& operator=(PrimeValue&&) = default;

  ObjType type() const { return ObjType(obj_.ObjectType()); }

  // --- strings. REQUIRE type() == kString, except the setters, which make it one.

  // The string; may decode into *scratch (ints, packed ASCII), else views the object,
  // valid until the table changes.
  std::string_view GetString(std::string* scratch) const { return obj_.GetSlice(scratch); }
  size_t Size() const { return obj_.Size(); }
  // Appends the string to *out (decoding in place, no scratch copy).
  void AppendTo(std::string* out) const { obj_.AppendTo(out); }
  // See CompactObj::PrefetchHeap.
  void PrefetchHeap() const { obj_.PrefetchHeap(); }
  // See CompactObj::CompressedView (empty for a typed value).
  std::string_view CompressedView() const {
    return obj_.IsObject() ? std::string_view() : obj_.CompressedView();
  }
  std::optional<int64_t> TryGetInt() const {
    return obj_.IsObject() ? std::nullopt : obj_.TryGetInt();
  }

  // The setters make the value a new item: they drop its memcached metadata (see
  // DbSlice::FindMcMeta).
  // Stores a string as SET does (Redis would report int, embstr or raw by content).
  void SetString(std::string_view value) {
    obj_.SetString(value);
    obj_.SetMcFlags(false);
  }
  // Stores a string built from the old one, as APPEND, SETRANGE and memcached's
  // append/prepend do: uncompressed (see CompactObj::SetUncompressedString), and marked
  // so that OBJECT ENCODING says raw, as Redis does.
  void SetBuiltString(std::string_view value) {
    obj_.SetUncompressedString(value);
    obj_.SetMcFlags(false);
    obj_.MarkRaw(true);
  }
  void SetInt(int64_t value) {
    obj_.SetInt(value);
    obj_.SetMcFlags(false);
  }

  // The string's bytes to change in place (SETBIT, BITFIELD; a dense HyperLogLog's
  // registers with min_len 0), grown with zero bytes to at least `min_len`: see
  // CompactObj::GetMutableBytes (the string then reads "raw", as Redis's, and is_built()).
  // Valid until the value next changes. Like the setters, it makes the value a new item
  // for memcached.
  char* GetMutableBytes(size_t min_len) {
    obj_.SetMcFlags(false);
    return obj_.GetMutableBytes(min_len);
  }

  // Whether the string was last stored by SetBuiltString or changed in place.
  bool is_built() const { return obj_.IsMarkedRaw(); }

  // --- typed values.

  // Holds `object` (TypedObject::Make on this thread), owned, of `type` (not kString).
  void SetObject(ObjType type, ObjEncoding encoding, core::TypedObject* object) {
    obj_.SetObject(uint8_t(type), uint8_t(encoding), object);
    obj_.SetMcFlags(false);
  }
  // Holds `lp`'s block itself, with no object around it (CompactObj::SetBlock): a small
  // list (its listpack; OBJECT ENCODING says quicklist, as Redis 7.0 does for any list).
  // Work on the block in place with a Listpack from Adopt(block()), and set_block()
  // after each change.
  void SetSmallList(core::Listpack lp) {
    core::Listpack::Block block = lp.Release();
    obj_.SetBlock(uint8_t(ObjType::kList), uint8_t(ObjEncoding::kQuicklist), block.data,
                  block.capacity);
    obj_.SetMcFlags(false);
  }
  // Likewise for a small hash or sorted set, `type` (its pair pack; OBJECT ENCODING says
  // listpack).
  void SetPairPack(ObjType type, core::PairPack pack) {
    core::PairPack::Block block = pack.Release();
    obj_.SetBlock(uint8_t(type), uint8_t(ObjEncoding::kListpack), block.data, block.capacity);
    obj_.SetMcFlags(false);
  }
  // Whether the value is a block held that way: a listpack for a list, a pair pack for a
  // hash or a sorted set.
  bool holds_block() const { return obj_.IsBlock(); }
  // Hands a held list's listpack over (to become a quicklist's node, say); the value is
  // left an empty string until the caller sets it again. REQUIRES: holds_block(), a list.
  core::Listpack TakeListpack() {
    core::Listpack::Block block = this->block();
    obj_.ForgetBlock();
    return core::Listpack::Adopt(block);
  }
  // REQUIRE: holds_block().
  core::Listpack::Block block() const {
    return {static_cast<uint8_t*>(obj_.GetBlock()), obj_.BlockCapacity()};
  }
  void set_block(core::Listpack::Block block) { obj_.MoveBlock(block.data, block.capacity); }

  // The typed object, or nullptr for a string or a held listpack.
  core::TypedObject* GetObject() const { return obj_.GetObject(); }
  template <typename T>
  T* GetObjectAs() const {
    return static_cast<T*>(obj_.GetObject());
  }
  // REQUIRES: type() != kString.
  ObjEncoding object_encoding() const { return ObjEncoding(obj_.ObjectEncoding()); }
  void set_object_encoding(ObjEncoding encoding) { obj_.SetObjectEncoding(uint8_t(encoding)); }

  // --- both.

  // OBJECT ENCODING's answer.
  const char* EncodingName() const {
    return obj_.IsObject() ? ObjEncodingName(object_encoding()) : obj_.RedisEncodingName();
  }
  size_t MallocUsed() const { return obj_.MallocUsed(); }

  // A self-contained form of the value (type, encoding, content), from which
  // Deserialize rebuilds an equal value on another thread. A value moved to another
  // shard travels this way: heap blocks belong to their shard's thread. A held block
  // travels as its bytes, with encoding kListpack: a list's listpack, a hash's or sorted
  // set's pair pack (their factories take those).
  void Serialize(std::string* out) const;
  // Replaces the value with the one `form` describes. Returns false (value unchanged)
  // when the form is malformed or names a type no family registered.
  bool Deserialize(std::string_view form);

  // Five bits DbSlice keeps here (the high part of the key's access stamp).
  uint8_t spare_bits() const { return obj_.SpareBits(); }
  void set_spare_bits(uint8_t bits) { obj_.SetSpareBits(bits); }

  bool has_expire() const { return obj_.HasExpire(); }
  void set_has_expire(bool value) { obj_.SetExpire(value); }
  // Whether DbSlice holds memcached metadata for this very value.
  bool has_mc_meta() const { return obj_.HasMcFlags(); }
  void set_has_mc_meta(bool value) { obj_.SetMcFlags(value); }

 private:
  core::CompactObj obj_;
};

// A TypedObjectFactory for a type whose values are all TypedObjects, from a function
// that rebuilds the object (nullptr when the form is malformed).
template <ObjType kType, core::TypedObject* (*kMake)(ObjEncoding, std::string_view)>
bool ObjectFactory(ObjEncoding encoding, std::string_view form, PrimeValue* value) {
  core::TypedObject* object = kMake(encoding, form);
  if (object == nullptr) return false;
  value->SetObject(kType, encoding, object);
  return true;
}

}  // namespace damselfly
