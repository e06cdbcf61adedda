// GlobMatch: Redis's glob patterns (KEYS, SCAN MATCH, CONFIG GET, PSUBSCRIBE).
//
//   *       any run of bytes, also empty        ?      any one byte
//   [abc]   one of the set; [a-z] a range; [^a] negation ('!' is literal); \] a literal
//   \x      the byte x literally
// Binary-safe. Unlike a naive recursive matcher, a pattern with many '*' cannot take
// exponential time: on a mismatch only the most recent '*' is retried (the classic
// greedy wildcard algorithm), so matching is O(pattern * subject) at worst.
// Thread-safe: a pure function.
#pragma once

#include <string_view>

namespace damselfly::core {

bool GlobMatch(std::string_view pattern, std::string_view subject, bool nocase = false);

}  // namespace damselfly::core
