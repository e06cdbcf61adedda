// SortedSet: the large encoding of a sorted set (OBJECT ENCODING "skiplist", as Redis names
// it), for sets past zset-max-listpack-entries/value.
//
// Two indexes over the same member blocks, so a member's bytes exist once:
//  - ScoreTree (score_tree.h): an order-statistic B+tree by (score, member bytes) for
//    ranks, score and lex ranges and ordered walks;
//  - DenseSet (dense_set.h): member -> block, for ZSCORE, ZADD's "is it new" and SCAN.
// Each element is one ScoredMember block (score, length, member bytes: 19 bytes for a
// 10-byte member, in mimalloc's 32-byte class); the tree adds ~8-13 bytes per element and
// the hash table ~9-15, so a set of short members costs ~50-60 bytes per member where
// Redis's skiplist and dict take ~112 (sorted_set_test's MemoryPerMember prints both).
//
// Changing a score moves the member's block: out of the tree, new score, back in (the tree
// caches some blocks' scores, so a block changes only outside it); the index keeps it.
//
// Scores: REQUIRES everywhere that no score is NaN (callers refuse it, as Redis does).
// -0.0 and 0.0 order as equal (the member decides), as in Redis; the score is kept as
// given.
//
// Thread contract: not thread-safe; a set and its blocks belong to one thread (its shard's),
// which makes every call, the destructor included (ObjMalloc's rule). Views returned into
// the set (members) are valid until the next change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "src/core/dense_set.h"
#include "src/core/score_tree.h"

namespace damselfly::core {

// A bound of a score range (ZRANGEBYSCORE min max): '(' makes it exclusive; -inf/+inf are
// the infinities.
struct ScoreBound {
  double value;
  bool exclusive;
};

// A bound of a lex range: '-' is kMin, '+' is kMax, '[a' kInclusive, '(a' kExclusive.
struct LexBound {
  enum Kind { kMin, kMax, kInclusive, kExclusive } kind;
  std::string_view value;
};

class SortedSet {
 public:
  SortedSet();
  ~SortedSet();
  // A moved-from set may only be destroyed or assigned to.
  SortedSet(SortedSet&& other) noexcept = default;
  SortedSet& operator=(SortedSet&& other) noexcept;
  SortedSet(const SortedSet&) = delete;
  SortedSet& operator=(const SortedSet&) = delete;

  // Adds `member` with `score`, or changes an existing member's score (nothing changes
  // when the score compares equal, so -0.0 does not replace 0.0, as in Redis). Returns
  // true when the member is new. REQUIRES: score is not NaN. O(log n).
  bool Add(std::string_view member, double score);

  // Removes `member`; returns false when it is absent. O(log n).
  bool Remove(std::string_view member);

  // Returns the member's score, or nullopt when absent. O(1).
  std::optional<double> Score(std::string_view member) const;

  size_t Size() const { return tree_.Size(); }
  // Frees up to `max` members of a set nobody reads any more (DenseSet::DrainSome); true
  // while some remain. Only FreeSome and destruction may follow.
  bool FreeSome(size_t max);

  // Returns the member's 0-based rank in ascending (score, member) order, or nullopt when
  // absent. O(log n).
  std::optional<size_t> Rank(std::string_view member) const;

  // Range starts and ends as ranks, for ZRANGEBYSCORE/ZCOUNT/ZREMRANGEBYSCORE: the
  // elements inside [min, max] are the ranks [CountScoreBelow(min), CountScoreAtMost(max))
  // (empty when the second is not above the first). O(log n).
  //   CountScoreBelow(min): elements below min (at or below it when min is exclusive);
  //   CountScoreAtMost(max): elements at or below max (below it when max is exclusive).
  size_t CountScoreBelow(ScoreBound min) const;
  size_t CountScoreAtMost(ScoreBound max) const;
  // The same for lex bounds, assuming all scores are equal (ZRANGEBYLEX's contract; with
  // mixed scores the result is some rank in [0, Size()], as unspecified as Redis's).
  size_t CountLexBelow(LexBound min) const;
  size_t CountLexAtMost(LexBound max) const;

  // Returns the element at `rank` (member view, score). REQUIRES: rank < Size(). O(log n).
  std::pair<std::string_view, double> At(size_t rank) const;

  // Visits ranks [start, end) (end clamped to Size()) in ascending order, or descending
  // (end-1 down to start) when `reverse`; f(std::string_view member, double score) returns
  // false to stop. O(log n) to seek, then O(1) amortized per element. f must not change
  // the set.
  template <typename F>
  void Walk(size_t start, size_t end, bool reverse, F&& f) const;

  // Removes ranks [start, end) (end clamped to Size()); returns how many.
  // O(k + log n) per leaf's share (ZREMRANGEBY*, ZPOPMIN/MAX).
  size_t EraseRanks(size_t start, size_t end);

  // SCAN over the member index, with DenseSet::Scan's guarantee; f(std::string_view
  // member, double score). Start with cursor 0; returns the next cursor (0: done).
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& f) const;

  // Returns a random element (ZRANDMEMBER) from a random 64-bit number; every element is
  // reachable. REQUIRES: Size() > 0. O(1) expected.
  std::pair<std::string_view, double> Random(uint64_t rnd) const;

  // Makes room in the member index for `n` more members ahead of a bulk load.
  void Reserve(size_t n) { index_.Reserve(n); }

  // Returns the heap bytes of the tree nodes, the index table and the member blocks
  // (ObjMalloc usable sizes), not the SortedSet object itself. O(1).
  size_t MallocUsed() const;

  // Returns true when the tree's invariants hold and both indexes hold the same
  // elements; for tests. O(n).
  bool Validate() const;

 private:
  struct IndexPolicy {
    using Entry = ScoredMember;
    static std::string_view Key(const ScoredMember* entry) { return entry->member(); }
  };

  // Frees the member blocks (the tree and index still point to them), by the index: after
  // FreeSome's steps only the index holds the blocks left.
  void FreeBlocks();

  ScoreTree tree_;
  DenseSet<IndexPolicy> index_;
  size_t block_bytes_ = 0;  // ObjUsableSize of the member blocks
};

template <typename F>
void SortedSet::Walk(size_t start, size_t end, bool reverse, F&& f) const {
  if (end > Size()) end = Size();
  if (start >= end) return;
  ScoreTree::Cursor cursor(tree_, reverse ? end - 1 : start);
  for (size_t left = end - start;; --left) {
    const ScoredMember* m = cursor.Get();
    if (!f(m->member(), m->score()) || left == 1) return;
    if (reverse) {
      cursor.Prev();
    } else {
      cursor.Next();
    }
  }
}

template <typename F>
uint64_t SortedSet::Scan(uint64_t cursor, size_t count, F&& f) const {
  return index_.Scan(cursor, count, [&f](const ScoredMember* m) { f(m->member(), m->score()); });
}

}  // namespace damselfly::core
