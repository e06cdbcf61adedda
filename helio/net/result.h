// Result<T>: a value or a POSIX error, for socket operations.
//
// Socket errors are expected outcomes (a peer resets, a shutdown cancels), on the hot
// path: a std::error_code carries the errno without allocating, unlike absl::Status.
// A value type.
#pragma once

#include <system_error>
#include <utility>

namespace helio::net {

inline std::error_code ErrnoCode(int err) { return {err, std::system_category()}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit like a return value
  Result(std::error_code error) : error_(error) {}  // NOLINT

  bool ok() const { return !error_; }
  const std::error_code& error() const { return error_; }

  // REQUIRES: ok().
  T& value() & { return value_; }
  T&& value() && { return std::move(value_); }
  T& operator*() & { return value_; }
  T* operator->() { return &value_; }

 private:
  T value_{};
  std::error_code error_;
};

}  // namespace helio::net
