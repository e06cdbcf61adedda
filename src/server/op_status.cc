#include "src/server/op_status.h"

#include "src/facade/error.h"

namespace damselfly {

std::string_view OpStatusError(OpStatus status) {
  switch (status) {
    case OpStatus::kWrongType:
      return facade::kWrongTypeErr;
    case OpStatus::kOutOfRange:
      return "ERR index out of range";
    case OpStatus::kInvalidInt:
      return facade::kInvalidIntErr;
    case OpStatus::kInvalidFloat:
      return facade::kInvalidFloatErr;
    case OpStatus::kIncrOverflow:
      return facade::kIncrOverflowErr;
    case OpStatus::kSyntaxErr:
      return facade::kSyntaxErr;
    case OpStatus::kOutOfMemory:
      return facade::kOomErr;
    case OpStatus::kStringTooLong:
      return facade::kStringTooLongErr;
    case OpStatus::kInvalidDb:
      return facade::kDbIndexOutOfRangeErr;
    case OpStatus::kSameObject:
      return "ERR source and destination objects are the same";
    case OpStatus::kNotHll:
      return "WRONGTYPE Key is not a valid HyperLogLog string value.";
    case OpStatus::kCorruptHll:
      return "INVALIDOBJ Corrupted HLL object detected";
    case OpStatus::kKeyNotFound:
      return facade::kNoSuchKeyErr;
    case OpStatus::kOk:
    case OpStatus::kSkipped:
      break;
  }
  DCHECK(false) << "not an error: " << int(status);
  return "ERR internal error";
}

}  // namespace damselfly
