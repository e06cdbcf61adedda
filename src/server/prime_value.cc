#include "src/server/prime_value.h"


#include "helio/base/strings.h"

namespace damselfly {

StrEncoding PrimeValue::EncodingFor(std::string_view value) {
  int64_t number;
  if (value.size() <= 20 && helio::SimpleAtoi(value, &number) &&
      helio::StrCat(number) == value) {
    return StrEncoding::kInt;
  }
  return value.size() <= 44 ? StrEncoding::kEmbStr : StrEncoding::kRaw;
}

const char* ObjTypeName(ObjType type) {
  switch (type) {
    case ObjType::kString:
      return "string";
  }
  return "none";
}

const char* StrEncodingName(StrEncoding encoding) {
  switch (encoding) {
    case StrEncoding::kInt:
      return "int";
    case StrEncoding::kEmbStr:
      return "embstr";
    case StrEncoding::kRaw:
      return "raw";
  }
  return "raw";
}

}  // namespace damselfly
