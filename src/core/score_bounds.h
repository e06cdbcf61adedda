// Range bounds of sorted-set commands, shared by both encodings of a sorted set (the
// listpack one, zset_listpack.h, and the large one, sorted_set.h).
//
// Thread-safety: plain values.
#pragma once

#include <string_view>

namespace damselfly::core {

// A score bound of ZRANGEBYSCORE and friends: "(1.5" is {1.5, exclusive}, "-inf" is
// {-inf, inclusive}.
struct ScoreBound {
  double value;
  bool exclusive;
};

// A lex bound of ZRANGEBYLEX and friends: '-' and '+' are kMin and kMax (below and above
// every member), "[a" includes a, "(a" excludes it. `value` views the argument.
struct LexBound {
  enum Kind { kMin, kMax, kInclusive, kExclusive } kind;
  std::string_view value;
};

}  // namespace damselfly::core
