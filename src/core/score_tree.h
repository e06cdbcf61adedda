// ScoreTree: the ordered half of a large sorted set (Redis's "skiplist" encoding): an
// order-statistic B+tree of member blocks, ordered by (score, member bytes).
//
// Why a B+tree and not Redis's skiplist: a skiplist node holds a score, a member pointer,
// a backward pointer and 16 bytes per level (~1.33 levels on average) in an allocation of
// its own, ~56-64 bytes per element. Here a leaf holds 8-byte pointers to the member
// blocks, up to 63 in a 512-byte node, so the ordered index costs ~9-12 bytes per element;
// the inner nodes, one per 8-15 children, add little. Ranks come from the subtree counts
// the inner nodes keep per child (the skiplist's spans): Rank, At and the counts below a
// bound are O(log n).
//
// Design:
//  - Every element is a ScoredMember block (one ObjMalloc block: score, length, bytes),
//    which SortedSet's member index points to as well, so a member's bytes exist once. The
//    tree does not own the blocks: Insert takes one, Erase and EraseRanks hand them back.
//  - Leaves: a count and up to kLeafCapacity pointers, ascending. No sibling links (16
//    bytes a leaf): a Cursor keeps its path from the root and, past a leaf's end, climbs to
//    the nearest ancestor with a next child: O(1) amortized per element.
//  - Inner nodes: for each child, its subtree's element count and its first element (score
//    and block pointer). A search compares the scores in the inner node itself and reads a
//    member block only on equal scores. The first elements are kept exact on every change
//    (a separator naming an erased block would dangle).
//  - Fill: a full leaf first hands an element to a neighbour with room (as a B*-tree does),
//    and splits in halves only when both neighbours are full, so random loads keep leaves
//    ~80% full. An element added past the end of the last leaf (ascending loads: ZADD with
//    growing timestamps) starts a new leaf instead, and one before the first leaf's start
//    likewise, so such loads fill leaves completely. Hence the first and last leaves may be
//    nearly empty; every other node keeps at least half its capacity, which erasures
//    restore by merging with or borrowing from a sibling.
//
// Scores are ordered with operator<, so -0.0 and 0.0 are equal (then the member decides),
// as in Redis. REQUIRES everywhere: no NaN score is ever inserted or searched for.
//
// Thread contract: not thread-safe; a tree and its blocks belong to one thread (ObjMalloc's
// rule). Any change to the tree invalidates its Cursors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace damselfly::core {

// One sorted-set element in one ObjMalloc block: the score (8 bytes), the member's length
// (LEB128 varint, 1 byte below 128) and its bytes. The score may change only while the
// block is in no ScoreTree (the tree's inner nodes cache the scores of some blocks).
class ScoredMember {
 public:
  // Returns a new block holding `member` and `score`. Free it with Free.
  static ScoredMember* Make(std::string_view member, double score);
  // Frees a block from Make. nullptr is ignored.
  static void Free(const ScoredMember* block);

  double score() const {
    double value;
    std::memcpy(&value, bytes(), sizeof(value));
    return value;
  }
  // REQUIRES: the block is in no ScoreTree.
  void set_score(double value) { std::memcpy(this, &value, sizeof(value)); }
  std::string_view member() const {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(bytes()) + sizeof(double);
    if (*p < 0x80) return {reinterpret_cast<const char*>(p + 1), *p};
    return LongMember(p);
  }

  // Returns the block's ObjMalloc usable size.
  size_t MallocUsed() const;

  ScoredMember() = delete;

 private:
  const char* bytes() const { return reinterpret_cast<const char*>(this); }
  static std::string_view LongMember(const uint8_t* length);
};

class ScoreTree {
 public:
  // Node sizes, chosen for memory: both are in mimalloc's 512-byte size class. A leaf holds
  // 63 pointers, an inner node 15 children (score, block pointer, child pointer, count).
  // Measured node bytes per element, 100K elements in random order (NodeBytesPerElement):
  // 256-byte leaves 12.1, 512-byte 11.0, 1024-byte 10.5; 512 also searched fastest (the
  // leaf's binary search reads one member block per step, a larger leaf more steps).
  static constexpr unsigned kLeafCapacity = 63;
  static constexpr unsigned kInnerCapacity = 15;
  // Non-root inner nodes keep >= 7 children, so 32 levels hold more than 2^64 elements.
  static constexpr unsigned kMaxHeight = 32;

  ScoreTree();
  ~ScoreTree();  // frees the nodes, not the blocks
  // A moved-from tree may only be destroyed, assigned to or cleared.
  ScoreTree(ScoreTree&& other) noexcept;
  ScoreTree& operator=(ScoreTree&& other) noexcept;
  ScoreTree(const ScoreTree&) = delete;
  ScoreTree& operator=(const ScoreTree&) = delete;

  size_t Size() const { return size_; }

  // Inserts `m`. REQUIRES: no element with m's (score, member) is present. O(log n).
  void Insert(const ScoredMember* m);

  // Removes the element (score, member); returns its block, or nullptr when absent.
  const ScoredMember* Erase(double score, std::string_view member);

  // Returns how many elements order before (score, member): the element's rank when it is
  // present.
  size_t CountBefore(double score, std::string_view member) const;

  // Returns how many elements have a score below `score` (at most `score` when or_equal).
  size_t CountScoreBelow(double score, bool or_equal) const;

  // Returns how many elements have a member below `member` (at most, when or_equal) in
  // memcmp order. Meaningful when all scores are equal (ZRANGEBYLEX's contract); on mixed
  // scores it returns some count in [0, Size()].
  size_t CountMemberBelow(std::string_view member, bool or_equal) const;

  // Returns the element at `rank`. REQUIRES: rank < Size().
  const ScoredMember* At(size_t rank) const;

  // Removes ranks [start, end) (end clamped to Size()), calling on_erase(const
  // ScoredMember*) for each removed block in ascending order; the callback may free the
  // block but must not change the tree. Returns how many. Removes a leaf's share at once:
  // O(k + (k/31 + 1) log n).
  template <typename F>
  size_t EraseRanks(size_t start, size_t end, F&& on_erase);

  // Visits every element in ascending order: f(const ScoredMember*).
  template <typename F>
  void ForEach(F&& f) const;

  // Drops every element (frees the nodes, not the blocks).
  void Clear();

  // Returns the bytes of the tree's nodes (their ObjMalloc usable size), not the blocks.
  size_t NodeMallocUsed() const;

  // Returns true when every invariant holds (order, counts, first elements, fill); for
  // tests. O(n).
  bool Validate() const;

 private:
  struct Leaf {
    uint32_t count;
    uint32_t unused;
    const ScoredMember* items[kLeafCapacity];
  };
  struct Inner {
    uint32_t count;
    uint32_t unused;
    double first_score[kInnerCapacity];
    const ScoredMember* first[kInnerCapacity];
    void* child[kInnerCapacity];
    uint64_t subtree[kInnerCapacity];
  };
  static_assert(sizeof(Leaf) == 512 && sizeof(Inner) <= 512);

  // A root-to-leaf path: node[0] is the root, node[height] the leaf; index[l] is the
  // child's index in node[l] (for the leaf, an element's index).
  struct Path {
    void* node[kMaxHeight + 1];
    unsigned index[kMaxHeight + 1];
  };

 public:
  // A position in the tree, for walking it in either direction.
  class Cursor {
   public:
    // Positions at `rank`. REQUIRES: rank < tree.Size().
    Cursor(const ScoreTree& tree, size_t rank) : height_(tree.height_) {
      tree.FindRank(rank, &path_);
    }
    const ScoredMember* Get() const {
      return static_cast<const Leaf*>(path_.node[height_])->items[path_.index[height_]];
    }
    // Moves to the next / previous element; returns false (and stays) at the end / start.
    bool Next();
    bool Prev();

   private:
    unsigned height_;
    Path path_;
  };

 private:
  void* root_;
  unsigned height_;  // 0: the root is a leaf
  size_t size_;
  size_t leaves_ = 0;
  size_t inners_ = 0;

  Leaf* NewLeaf();
  Inner* NewInner();
  void FreeLeaf(Leaf* leaf);
  void FreeInner(Inner* inner);
  void FreeSubtree(void* node, unsigned level);

  void FindRank(size_t rank, Path* path) const;
  // Descends to where (score, member) is or would go (its lower bound); returns true when
  // it is present there.
  bool FindKey(double score, std::string_view member, Path* path) const;
  template <typename Pred>
  size_t CountPrefix(const Pred& in_prefix) const;

  void InsertAt(Path* path, const ScoredMember* m);
  void SplitLeaf(Path* path, const ScoredMember* m);
  void InsertChild(Path* path, unsigned level, unsigned pos, void* child, uint64_t count,
                   const ScoredMember* first);
  void SetFirstChain(const Path& path, unsigned level, const ScoredMember* first);
  // Removes n elements at the path's leaf position, then restores the invariants.
  void RemoveAt(Path* path, unsigned n);
  void Rebalance(Path* path);

  bool ValidateNode(const void* node, unsigned level, bool leftmost, bool rightmost, size_t* count,
                    const ScoredMember** first, const ScoredMember** last) const;
  template <typename F>
  void ForEachIn(const void* node, unsigned level, F& f) const;
};

template <typename F>
size_t ScoreTree::EraseRanks(size_t start, size_t end, F&& on_erase) {
  if (end > size_) end = size_;
  if (start >= end) return 0;
  size_t remaining = end - start;
  while (remaining > 0) {
    Path path;
    FindRank(start, &path);
    const Leaf* leaf = static_cast<const Leaf*>(path.node[height_]);
    unsigned pos = path.index[height_];
    unsigned n = leaf->count - pos;
    if (n > remaining) n = static_cast<unsigned>(remaining);
    for (unsigned i = 0; i < n; ++i) on_erase(leaf->items[pos + i]);
    RemoveAt(&path, n);
    remaining -= n;
  }
  return end - start;
}

template <typename F>
void ScoreTree::ForEach(F&& f) const {
  if (size_ > 0) ForEachIn(root_, 0, f);
}

template <typename F>
void ScoreTree::ForEachIn(const void* node, unsigned level, F& f) const {
  if (level == height_) {
    const Leaf* leaf = static_cast<const Leaf*>(node);
    for (unsigned i = 0; i < leaf->count; ++i) f(leaf->items[i]);
    return;
  }
  const Inner* inner = static_cast<const Inner*>(node);
  for (unsigned i = 0; i < inner->count; ++i) ForEachIn(inner->child[i], level + 1, f);
}

}  // namespace damselfly::core
