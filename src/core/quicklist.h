// Quicklist: the large encoding of a list, a doubly linked chain of listpack nodes, as
// Redis 7's quicklist (same node fill and compression parameters, our own code).
//
// Why a chain of listpacks: one listpack is the most compact form of a sequence, but any
// change in it moves its tail, so a big one makes LPUSH cost O(size). A chain of bounded
// listpacks keeps pushes and pops at both ends O(1) (one bounded node changes) and keeps
// most of the listpack's density: the per-node overhead (48 bytes) is spread over up to
// `fill` entries or a few KiB.
//
// Node fill (Redis's list-max-listpack-size): fill > 0 allows at most `fill` entries per
// node, and never more than 8 KiB (Redis's safety limit) unless the node holds one entry;
// fill -1..-5 allows 4, 8, 16, 32 or 64 KiB of listpack per node whatever the count
// (values below -5 act as -5, 0 as 1). A node always accepts its first entry, however big.
//
// Compression (Redis's list-compress-depth): with depth d > 0, the d nodes at each end
// stay plain and every node between them is kept LZF-compressed (core/lzf.h) when that
// saves at least 8 bytes of a listpack of 48 bytes or more. Pushes and pops touch only the
// plain ends; an access to an interior node (index, iteration, insert) decompresses it and
// compresses it again when the access leaves it, as Redis does.
//
// Large elements (Redis's plain nodes): an element of PackedThreshold() bytes or more
// (1 GiB unless DEBUG QUICKLIST-PACKED-THRESHOLD sets it) lives alone in its node, and no
// other element joins that node; merges pass it by. Such a node is still a listpack of
// one entry (its few bytes of framing are nothing beside the element).
//
// Merging: inserting into a full interior node splits it; the halves are then merged
// with their neighbours when the result fits one node, so the chain does not fill up with
// small nodes after many middle insertions (Redis's rule).
//
// Memory: every block (nodes, listpacks, compressed images) comes from ObjMalloc, so the
// shard's used_memory counts it; MallocUsed() sums their usable sizes.
//
// Thread contract: not thread-safe; a Quicklist, its iterators and its blocks belong to
// one thread (ObjMalloc's rule), which makes every call, the destructor included.
//
// Invariants (CheckInvariants verifies them): no node is empty; the counts of the nodes
// add up to Size(); a large element has its node to itself (checked in plain nodes, and
// for a threshold that did not change since the list was built); the depth nodes at each
// end are plain; every other node is compressed unless compression did not pay, or an
// iterator stands on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "src/core/listpack.h"

namespace damselfly::core {

class Quicklist {
 public:
  enum class End : uint8_t { kHead, kTail };

  struct Node;

  // An empty list with node fill `fill` and compression depth `compress_depth` (0: none).
  Quicklist(int fill, unsigned compress_depth);
  // A list holding the entries of `lp`, in order, as one or more nodes.
  Quicklist(int fill, unsigned compress_depth, Listpack lp);
  ~Quicklist();
  Quicklist(Quicklist&& other) noexcept;
  Quicklist& operator=(Quicklist&&) = delete;
  Quicklist(const Quicklist&) = delete;
  Quicklist& operator=(const Quicklist&) = delete;

  int fill() const { return fill_; }
  unsigned compress_depth() const { return depth_; }
  size_t Size() const { return count_; }
  size_t NodeCount() const { return node_count_; }
  // Heap bytes held: the nodes, their listpacks or compressed images.
  size_t MallocUsed() const;

  static constexpr size_t kDefaultPackedThreshold = size_t{1} << 30;
  // Sets the size from which an element is large (above); 0 restores the default. False
  // for more than 4 GiB - 1 MiB (Redis's bound). Process-wide, any thread; lists apply it
  // to the elements they add from then on.
  static bool SetPackedThreshold(size_t bytes);
  static size_t PackedThreshold();

  // Whether a node listpack of `bytes` bytes and `count` entries is within `fill` (the
  // rule a node follows, and a list's test for leaving its single-listpack encoding).
  static bool WithinFill(int fill, size_t bytes, size_t count);

  // Adds `value` at the head or the tail. O(1) (bounded by the node size).
  void Push(End end, std::string_view value);
  // Removes the element at the head or the tail into *out (its text). False when empty.
  bool Pop(End end, std::string* out);

  // Calls fn(Listpack::Value) for the elements [start, start + count) in order; the value
  // views are valid during the call only. REQUIRES: the range is within the list.
  template <typename Fn>
  void ForRange(size_t start, size_t count, Fn&& fn);

  // Deletes up to `count` elements from index `start` (0-based from the head).
  void DeleteRange(size_t start, size_t count);
  // The listpack bytes of the only node, read without taking it out (the list handles' test
  // for going back to one listpack). REQUIRES: NodeCount() == 1.
  size_t OnlyNodeBytes() const;
  // Whether the only node holds a large element. REQUIRES: NodeCount() == 1.
  bool OnlyNodeIsolated() const;

  // Appends each node's listpack (plain, even for compressed nodes) to *out as a 4-byte
  // little-endian length and its bytes, from the head.
  void SerializeNodes(std::string* out) const;
  // Calls fn(bytes, raw_len) for each node from the head: a plain node's listpack and 0,
  // or a compressed node's LZF stream (core/lzf.h) and its listpack's length, so that an
  // RDB writer stores the node as Redis does without decompressing it.
  void ForEachNode(absl::FunctionRef<void(std::string_view bytes, size_t raw_len)> fn) const;
  // Moves the single node's listpack out and leaves the list empty. REQUIRES: exactly
  // one node.
  Listpack TakeOnlyNode();
  // Appends a node built from `lp` at the tail, as it is (a rebuilt list: no fill check).
  // REQUIRES: lp is not empty.
  void AppendNode(Listpack lp);

  // Verifies the invariants above; returns false on the first violation. O(n), tests.
  bool CheckInvariants() const;
  // How many nodes are stored compressed (tests).
  size_t CompressedNodeCount() const;

  // A position in the list, walking towards `direction`'s opposite end: from the head
  // with End::kHead, from the tail with End::kTail. Valid until the list changes other
  // than through this iterator's own Insert/Replace/Erase; at most one iterator per
  // list. Its node is kept plain while it stands there and compressed again when it
  // leaves (or the iterator dies) if it was compressed before.
  class Iterator {
   public:
    ~Iterator();
    Iterator(Iterator&& other) noexcept;
    Iterator(const Iterator&) = delete;
    Iterator& operator=(const Iterator&) = delete;
    Iterator& operator=(Iterator&&) = delete;

    bool Valid() const { return node_ != nullptr; }
    // REQUIRES: Valid().
    Listpack::Value Get() const;
    // Moves to the next element in the walk's direction (invalid past the end).
    void Next();

    // Inserts `value` before or after the current element (in list order, whatever the
    // direction). The iterator becomes invalid.
    void Insert(std::string_view value, Listpack::Where where);
    // Replaces the current element; the iterator becomes invalid.
    void Replace(std::string_view value);
    // Deletes the current element and moves to the next one in the walk's direction.
    void Erase();

   private:
    friend class Quicklist;
    Iterator(Quicklist* list, End direction) : list_(list), direction_(direction) {}
    // Stands on `node` (plain for the access), at `pos` or kNoPos for its first entry in
    // the direction; node nullptr ends the walk.
    void Enter(Node* node, Listpack::Pos pos);
    // Leaves the current node, compressing it again if the access decompressed it.
    void Leave();

    Quicklist* list_;
    End direction_;
    Node* node_ = nullptr;
    Listpack::Pos pos_ = Listpack::kNoPos;
  };

  // An iterator at the first element from `from` (invalid on an empty list).
  Iterator Begin(End from);
  // An iterator at element `index` (negative counts from the tail, -1 the last) walking
  // towards the tail, or towards the head with End::kTail; invalid when out of range.
  Iterator At(int64_t index, End direction = End::kHead);

 private:
  Node* NewNode(Listpack lp);
  // A node of the one element `value`, isolated when it is large.
  Node* NewNodeOf(std::string_view value);
  void FreeNode(Node* node);
  void LinkAfter(Node* prev, Node* node);  // prev nullptr: at the head
  void Unlink(Node* node);
  // Whether `node` may take one more element of `value_bytes` bytes.
  bool AllowsInsert(const Node* node, size_t value_bytes) const;
  // Applies the compression policy after a change at `touched` (may be nullptr): the
  // depth nodes at each end plain, `touched` and the nodes just past the ends compressed
  // when interior.
  void Compress(Node* touched);
  bool IsInterior(const Node* node) const;
  // The node holding element `index` (0-based) and the index within it.
  Node* Locate(size_t index, size_t* in_node) const;
  // Merges `node` with its neighbours where the result fits one node.
  void MergeAround(Node* node);
  // Merges b into a (a->next == b) and frees b.
  void MergeInto(Node* a, Node* b);

  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  size_t count_ = 0;
  uint32_t node_count_ = 0;
  int16_t fill_;
  uint16_t depth_;
};

// The plain text of a listpack value into *out (decimal for integers).
void ListpackValueTo(const Listpack::Value& value, std::string* out);

template <typename Fn>
void Quicklist::ForRange(size_t start, size_t count, Fn&& fn) {
  Iterator it = At(int64_t(start));
  for (size_t i = 0; i < count && it.Valid(); ++i, it.Next()) fn(it.Get());
}

}  // namespace damselfly::core
