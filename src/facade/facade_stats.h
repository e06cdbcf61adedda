// FacadeStats: what the protocol layer counts on each thread: bytes read from and
// written to clients, and error replies by code (the first word: "ERR", "WRONGTYPE"),
// for INFO stats/errorstats and /metrics.
//
// Thread-safety: one instance per thread, touched only by that thread; the server reads
// them by running a task on each thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "helio/base/strings.h"

namespace damselfly::facade {

struct FacadeStats {
  // Like Redis, stop tracking new error codes past this many (a client inventing codes
  // must not grow the map); they still count in total_error_replies.
  static constexpr size_t kMaxErrorCodes = 128;

  uint64_t net_input_bytes = 0;
  uint64_t net_output_bytes = 0;
  uint64_t error_replies = 0;
  absl::flat_hash_map<std::string, uint64_t, helio::StringViewHash, helio::StringViewEq>
      errors_by_code;

  // This thread's stats (created on first use).
  static FacadeStats* tlocal();

  // Counts one error reply; `message` is the error text without '-'.
  void CountError(std::string_view message);
  // CONFIG RESETSTAT.
  void ResetErrors();
};

}  // namespace damselfly::facade
