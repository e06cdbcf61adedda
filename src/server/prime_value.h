// PrimeValue: what a key maps to in a shard's table.
//
// A plain string for now; the dashtable issue replaces it with the 16-byte CompactObj.
// Strings remember the encoding Redis would report (OBJECT ENCODING), since clients
// and tests look at it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace damselfly {

enum class ObjType : uint8_t { kString };

enum class StrEncoding : uint8_t { kInt, kEmbStr, kRaw };

struct PrimeValue {
  std::string str;
  ObjType type = ObjType::kString;
  StrEncoding encoding = StrEncoding::kRaw;
  bool has_expire = false;

  // The encoding Redis gives a string that was stored as a whole (SET and friends):
  // int when it reads as a 64-bit integer in canonical form (at most 20 bytes), embstr
  // up to 44 bytes, raw beyond.
  static StrEncoding EncodingFor(std::string_view value);
};

const char* ObjTypeName(ObjType type);
const char* StrEncodingName(StrEncoding encoding);

}  // namespace damselfly
