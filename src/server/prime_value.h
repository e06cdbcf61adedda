// PrimeValue: what a key maps to in a shard's table: a CompactObj holding a string (the
// collection types arrive with their families). The per-key "has a deadline" bit lives
// in the object's flags, so keys without a TTL pay nothing for expiry.
//
// Thread-safety: none; owned by its shard's thread (its heap block comes from that
// thread's heap, see core/obj_malloc.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/core/compact_object.h"

namespace damselfly {

enum class ObjType : uint8_t { kString };

const char* ObjTypeName(ObjType type);

class PrimeValue {
 public:
  PrimeValue() = default;
  PrimeValue(PrimeValue&&) = default;
  PrimeValue& operator=(PrimeValue&&) = default;

  ObjType type() const { return ObjType::kString; }

  // The string; may decode into *scratch (ints, packed ASCII), else views the object,
  // valid until the table changes.
  std::string_view GetString(std::string* scratch) const { return obj_.GetSlice(scratch); }
  size_t Size() const { return obj_.Size(); }
  // Appends the string to *out (decoding in place, no scratch copy).
  void AppendTo(std::string* out) const { obj_.AppendTo(out); }
  // See CompactObj::PrefetchHeap.
  void PrefetchHeap() const { obj_.PrefetchHeap(); }
  std::optional<int64_t> TryGetInt() const { return obj_.TryGetInt(); }

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

  // Whether the string was last stored by SetBuiltString.
  bool is_built() const { return obj_.IsMarkedRaw(); }

  // OBJECT ENCODING's answer.
  const char* EncodingName() const { return obj_.RedisEncodingName(); }
  size_t MallocUsed() const { return obj_.MallocUsed(); }

  bool has_expire() const { return obj_.HasExpire(); }
  void set_has_expire(bool value) { obj_.SetExpire(value); }
  // Whether DbSlice holds memcached metadata for this very value.
  bool has_mc_meta() const { return obj_.HasMcFlags(); }
  void set_has_mc_meta(bool value) { obj_.SetMcFlags(value); }

 private:
  core::CompactObj obj_;
};

}  // namespace damselfly
