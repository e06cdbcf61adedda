#include "src/server/prime_value.h"

namespace damselfly {

const char* ObjTypeName(ObjType type) {
  switch (type) {
    case ObjType::kString:
      return "string";
  }
  return "none";
}

}  // namespace damselfly
