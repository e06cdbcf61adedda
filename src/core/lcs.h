// Longest common subsequence of two byte strings, as Redis 7's LCS command computes it.
//
// The classic dynamic programme: a table of (|a| + 1) x (|b| + 1) 32-bit lengths, where
// cell (i, j) is the LCS length of a[0, i) and b[0, j); then one walk back from the
// bottom-right corner that collects the subsequence and its runs of consecutive matches.
// Where the walk may go up or left with equal lengths it goes left (shortens b), as
// Redis does, so the subsequence and the match ranges are the ones Redis replies with
// (several subsequences may be longest). O(|a| * |b|) time and 4 bytes per cell, which is
// why callers check LcsTableBytes against their memory bound first.
//
// Thread-safety: pure functions; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace damselfly::core {

// A run of consecutive matching bytes: a[a_start..a_end] == b[b_start..b_end] (inclusive).
struct LcsMatch {
  uint32_t a_start = 0, a_end = 0;
  uint32_t b_start = 0, b_end = 0;
  uint32_t length() const { return a_end - a_start + 1; }

  bool operator==(const LcsMatch&) const = default;
};

struct LcsResult {
  uint32_t length = 0;      // of the longest common subsequence
  std::string subsequence;  // filled when asked for
  // Filled when asked for: the runs of at least min_match_len bytes, from the end of the
  // strings towards their start (Redis's order).
  std::vector<LcsMatch> matches;
};

struct LcsOptions {
  bool want_subsequence = true;
  bool want_matches = false;
  uint64_t min_match_len = 0;  // 0 and 1 keep every run
};

// The bytes the table for strings of these lengths takes; nullopt when that does not fit
// in 64 bits or a length does not fit the table's 32-bit cells.
std::optional<uint64_t> LcsTableBytes(uint64_t a_len, uint64_t b_len);

// Computes the LCS of a and b; nullopt when the table cannot be allocated.
// REQUIRES: LcsTableBytes(a.size(), b.size()) has a value.
std::optional<LcsResult> ComputeLcs(std::string_view a, std::string_view b,
                                    const LcsOptions& options);

}  // namespace damselfly::core
