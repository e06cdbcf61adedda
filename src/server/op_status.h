// OpStatus and OpResult<T>: what shard-side operations return instead of writing replies.
//
// A command's shard code (the part that runs on the thread owning the keys) reports the
// outcome as a value; the command's handler turns it into the reply. So MULTI/EXEC,
// scripts and the replication journal can run the same shard code with no reply in the
// way, and the error texts live in one place (OpStatusError).
//
// OpResult<T> is a T or a non-OK status: a T and a byte, with no engaged flag to keep (T
// must be default-constructible and cheap to default-construct; the T of an error result
// is a default one nobody reads). It never allocates beyond T.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include <glog/logging.h>

namespace damselfly {

enum class OpStatus : uint8_t {
  kOk,
  kKeyNotFound,    // the operation needs an existing key ("ERR no such key" where replied)
  kWrongType,      // WRONGTYPE
  kSkipped,        // a condition (NX, XX, GT...) said no; not an error
  kOutOfRange,     // "ERR index out of range"
  kInvalidInt,     // "ERR value is not an integer or out of range"
  kInvalidFloat,   // "ERR value is not a valid float"
  kIncrOverflow,   // "ERR increment or decrement would overflow"
  kSyntaxErr,      // "ERR syntax error"
  kOutOfMemory,    // OOM
  kStringTooLong,  // proto-max-bulk-len
  kInvalidDb,      // "ERR DB index is out of range"
  kSameObject,     // "ERR source and destination objects are the same"
  kNotHll,         // "WRONGTYPE Key is not a valid HyperLogLog string value."
  kCorruptHll,     // "INVALIDOBJ Corrupted HLL object detected"
};

// Redis's error text for a status that is an error (without the leading '-');
// REQUIRES: status is neither kOk nor kSkipped, nor kKeyNotFound (whose reply differs by
// command: a nil, a 0 or "ERR no such key", the handler knows).
std::string_view OpStatusError(OpStatus status);

template <typename T>
class OpResult {
 public:
  OpResult(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  OpResult(OpStatus status) : value_(), status_(status) {  // NOLINT: implicit by design
    DCHECK(status != OpStatus::kOk);
  }

  bool ok() const { return status_ == OpStatus::kOk; }
  explicit operator bool() const { return ok(); }
  OpStatus status() const { return status_; }

  // REQUIRES: ok().
  T& value() {
    DCHECK(ok());
    return value_;
  }
  const T& value() const {
    DCHECK(ok());
    return value_;
  }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  T value_;
  OpStatus status_ = OpStatus::kOk;
};

}  // namespace damselfly
