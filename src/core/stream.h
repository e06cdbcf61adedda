// Stream: the value of a Redis stream: its entries and its consumer groups.
//
// Redis stores a stream as a radix tree of listpacks keyed by each node's first ID, each
// listpack starting with a "master entry" whose fields the node's entries reuse. We keep
// the same nodes, byte for byte, in a B-tree (absl::btree_map) instead of the radix tree:
//   key    the node's master ID: the ID of the first entry ever added to it. Every entry
//          of the node is >= it and < the next node's key, so finding an ID is one
//          upper_bound; deleting entries never re-keys a node.
//   value  one core::Listpack in Redis's stream node format:
//            count deleted nfields f1 .. fn 0           (the master entry)
//          then per entry
//            flags ms-diff seq-diff v1 .. vn lp-count                (flags 2: SAMEFIELDS)
//            flags ms-diff seq-diff npairs f1 v1 .. fk vk lp-count   (flags 0)
//          the diffs against the master ID (int64, wrapping as Redis's), lp-count the
//          entry's element count before it (for walks from the end).
// Why Redis's bytes and not a leaner form of our own: RDB snapshots and DUMP write a node
// as the block it is, and RDB loads and RESTORE keep a checked node as sent, instead of
// rebuilding every entry both ways (a DUMP of 1000 entries was 7x redis-server's time when
// nodes were rebuilt). The 2 bytes of lp-count per entry are the price.
// A node takes entries until it holds node_max_entries (deleted ones count, as in Redis)
// or node_max_bytes: Redis's stream-node-max-entries / -bytes, so "~" trimming removes
// the same whole nodes Redis would. Deleted entries are taken out of the listpack at once
// (Redis flags them and leaves them), so `deleted` is always 0 and `count` is the node's
// live entries; an emptied node is dropped.
//
// Compression: a node is closed once a later node exists (no entry is added to it again),
// and a closed node is kept as an LZF image (core/lzf.h) when that pays, as Redis keeps
// the interior nodes of a quicklist (48 bytes or more, 8 saved): stream entries repeat
// their layout, flags, lp-counts and often their values, so a node of small fields
// shrinks several times. The last node stays plain: XADD appends to it and ">" reads
// take its newest entries. Reads of a compressed node decompress it into a per-thread
// cache that holds the last node so read (PlainOf), so a client paging through old
// history, or many clients reading the same old entries, pay the decompression once per
// node. A change inside a compressed node (XDEL) decompresses it and compresses it again;
// exact trimming leaves the first node plain, since XADD MAXLEN takes one of its entries
// per call. Whole-node trimming frees images without reading them. RDB and DUMP write an
// image as it is, as the RDB_ENC_LZF string Redis writes for a node itself, and Redis's
// loader reads node strings in either encoding; loads and RESTORE compress the nodes
// they append but the last.
//
// Memory: plain nodes are the same listpack bytes as Redis's, in the same size classes
// (mimalloc's and jemalloc's agree near a full node's 2-3 KiB), under a B-tree slot of 48
// bytes per node. MEMORY USAGE and used_memory count an image's block, not its listpack;
// the per-thread cache's copy (one node) counts in used_memory only. Measured with
// tools/types-bench.sh PARTS=mem, RSS against Redis 7.0.15's: 1M entries of 5 small
// fields 0.23x (7.1 MiB; a 2.9 KiB node becomes a ~0.6 KiB image), 1000 streams of 1000
// 0.31x (their last nodes stay plain), 1M entries of 8-32 random printable bytes per value
// 0.98x (LZF finds nothing to take out of random bytes: those nodes stay plain).
//
// Consumer groups (StreamGroup, below) hang off the stream in a B-tree by name, absent
// while the stream has none (most streams), so a stream without groups pays one pointer.
// A group's pending entries list (PEL) is a B-tree by ID of PendingEntry; each consumer
// keeps the IDs it owns in its own B-tree, as Redis's per-consumer rax (XPENDING's
// consumer filter and XREADGROUP's history walk one consumer's IDs in order).
//
// Thread contract: not thread-safe; a stream and its blocks belong to its shard's thread
// (ObjMalloc's rule), which makes every call, the destructor included.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/types/span.h"
#include "src/core/listpack.h"
#include "src/core/typed_object.h"

namespace damselfly::core {

// A stream entry ID, "ms-seq".
struct StreamID {
  uint64_t ms = 0;
  uint64_t seq = 0;

  static constexpr uint64_t kMax = UINT64_MAX;
  static StreamID Min() { return {0, 0}; }
  static StreamID Max() { return {kMax, kMax}; }

  std::string ToString() const;
  // The next / previous ID; false at the end of the ID space (the ID is unchanged).
  bool Increment();
  bool Decrement();

  friend bool operator==(const StreamID& a, const StreamID& b) {
    return a.ms == b.ms && a.seq == b.seq;
  }
  friend bool operator!=(const StreamID& a, const StreamID& b) { return !(a == b); }
  friend bool operator<(const StreamID& a, const StreamID& b) {
    return a.ms < b.ms || (a.ms == b.ms && a.seq < b.seq);
  }
  friend bool operator>(const StreamID& a, const StreamID& b) { return b < a; }
  friend bool operator<=(const StreamID& a, const StreamID& b) { return !(b < a); }
  friend bool operator>=(const StreamID& a, const StreamID& b) { return !(a < b); }
};

struct StreamConsumer;

// One delivered, not yet acknowledged entry of a group.
struct PendingEntry {
  int64_t delivery_time_ms = 0;  // unix ms of the last delivery
  uint64_t delivery_count = 0;
  StreamConsumer* consumer = nullptr;  // its owner, never null
};

struct StreamConsumer {
  std::string name;
  int64_t seen_time_ms = 0;  // unix ms of its last read or claim (Redis 7.0's seen-time)
  absl::btree_set<StreamID, std::less<StreamID>, ObjAllocator<StreamID>> pending;
};

// A consumer group. Invariant: an ID is in a consumer's `pending` exactly when it is in
// `pel` with that consumer as owner. Consumers are allocated one by one, so the PEL's
// pointers to them stay valid while the consumers map rebalances.
class StreamGroup {
 public:
  // Redis's SCG_INVALID_ENTRIES_READ: the group's read counter is not known.
  static constexpr int64_t kInvalidEntriesRead = -1;

  using Pel = absl::btree_map<StreamID, PendingEntry, std::less<StreamID>,
                              ObjAllocator<std::pair<const StreamID, PendingEntry>>>;
  using ConsumerMap = absl::btree_map<std::string, StreamConsumer*, std::less<>,
                                      ObjAllocator<std::pair<const std::string, StreamConsumer*>>>;

  StreamGroup(StreamID last_id, int64_t entries_read)
      : last_id(last_id), entries_read(entries_read) {}
  ~StreamGroup();
  StreamGroup(const StreamGroup&) = delete;
  StreamGroup& operator=(const StreamGroup&) = delete;

  StreamID last_id;      // the last ID delivered by ">" reads
  int64_t entries_read;  // the logical read counter, or kInvalidEntriesRead

  const Pel& pel() const { return pel_; }
  const ConsumerMap& consumers() const { return consumers_; }

  StreamConsumer* FindConsumer(std::string_view name) const;
  // The consumer `name`, created (with seen time `now_ms`) when missing; *created tells.
  StreamConsumer* FindOrAddConsumer(std::string_view name, int64_t now_ms, bool* created);
  // Removes the consumer and its pending entries from the group. Returns how many pending
  // entries it had, or -1 when there is no such consumer.
  int64_t DeleteConsumer(std::string_view name);

  // Records a delivery of `id` to `consumer` by a ">" read: a new pending entry with
  // count 1, or, when the ID is pending already (XGROUP SETID moved last_id back), the
  // entry handed to `consumer` with its count reset to 1, as Redis does.
  void Deliver(StreamID id, StreamConsumer* consumer, int64_t now_ms);
  // Hands the pending entry `id` to `consumer` (XCLAIM); the caller updates its times.
  // REQUIRES: id is pending. Returns the entry.
  PendingEntry& Assign(StreamID id, StreamConsumer* consumer);
  // Creates a pending entry for `id` owned by `consumer` (XCLAIM FORCE).
  PendingEntry& AddPending(StreamID id, StreamConsumer* consumer);
  // Acknowledges `id`; false when it was not pending.
  bool Ack(StreamID id);
  // Mutable access for XCLAIM and history reads (times and counts, not the owner).
  PendingEntry* FindPending(StreamID id);

 private:
  Pel pel_;
  ConsumerMap consumers_;
};

class Stream : public TypedObject {
 public:
  // One entry, copied out: its ID and field, value, field, value...
  struct Entry {
    StreamID id;
    std::vector<std::string> pairs;
  };

  // Redis's defaults of stream-node-max-bytes and stream-node-max-entries.
  static constexpr size_t kDefaultNodeMaxBytes = 4096;
  static constexpr size_t kDefaultNodeMaxEntries = 100;

  static Stream* Make() { return TypedObject::Make<Stream>(); }
  Stream() = default;
  ~Stream() override;

  using GroupMap = absl::btree_map<std::string, StreamGroup*, std::less<>,
                                   ObjAllocator<std::pair<const std::string, StreamGroup*>>>;

  size_t Length() const { return length_; }
  StreamID last_id() const { return last_id_; }
  StreamID first_id() const { return first_id_; }
  StreamID max_deleted_id() const { return max_deleted_id_; }
  uint64_t entries_added() const { return entries_added_; }

  // Appends an entry of `pairs` (field, value... : non-empty, even) under `id`, which
  // becomes last_id. REQUIRES: id > last_id(). A limit of 0 means no limit.
  void Add(StreamID id, absl::Span<const std::string_view> pairs, size_t node_max_bytes,
           size_t node_max_entries);

  // The entries with start <= ID <= end, ascending (or descending with `reverse`), at
  // most `count` of them (0: all).
  std::vector<Entry> Range(StreamID start, StreamID end, size_t count, bool reverse) const;

  // Removes the entry `id`; false when there is none. Keeps max_deleted_id and first_id
  // as XDEL does in Redis 7.0.
  bool Delete(StreamID id);

  // Removes the oldest entries until at most `max_len` remain (TrimByMaxLen) or none is
  // below `min_id` (TrimByMinId). With `approx` only whole nodes go, and at most `limit`
  // entries (0: no limit); exact trimming ignores limit. Returns how many entries went.
  // As in Redis 7.0, trimming does not move max_deleted_id.
  size_t TrimByMaxLen(uint64_t max_len, bool approx, uint64_t limit);
  size_t TrimByMinId(StreamID min_id, bool approx, uint64_t limit);

  // XSETID: the caller checked Redis's conditions.
  void SetLastId(StreamID id) { last_id_ = id; }
  void SetEntriesAdded(uint64_t n) { entries_added_ = n; }
  void SetMaxDeletedId(StreamID id) { max_deleted_id_ = id; }

  // The ID of the last entry present (Redis's streamLastValidID), 0-0 when empty.
  StreamID LastEntryId() const;
  // Whether an entry `id` is present.
  bool Contains(StreamID id) const;
  // Nodes of the B-tree (XINFO STREAM's radix-tree-keys).
  size_t NumNodes() const { return nodes_.size(); }

  // --- nodes in Redis's format, as RDB and DUMP carry them

  // What CheckNode found in a node.
  struct NodeInfo {
    size_t live = 0;     // entries present
    size_t deleted = 0;  // entries flagged deleted (Redis leaves them in their node)
    StreamID last;       // the ID of its last entry, deleted or not
  };
  // Returns true, filling *info, when `lp` is a stream node in Redis's format under the
  // master ID `master`: a master entry with at least one field, then entries whose
  // element counts, flags and lp-counts agree, at least one of them, their IDs ascending,
  // at or above `master` and above *after (no bound when null), and as many live and
  // deleted ones as the master entry says. Reads only inside the listpack.
  static bool CheckNode(StreamID master, const Listpack& lp, const StreamID* after, NodeInfo* info);
  // Appends a node CheckNode accepted whose master ID is above every entry of the stream;
  // takes its flagged entries out and drops it when none is left. Length and first_id
  // follow; last_id, entries_added and max_deleted_id are the caller's to set.
  void AppendNode(StreamID master, Listpack lp, const NodeInfo& info);
  // Calls f(master ID, bytes, raw_len) for every node, in order: a plain node's listpack
  // and 0, or a compressed node's LZF stream (core/lzf.h) and its listpack's length, so
  // that an RDB writer stores the node as Redis's string encoding RDB_ENC_LZF without
  // decompressing it (Redis's loader takes a node string in either encoding).
  template <typename F>
  void ForEachNode(F&& f) const {
    for (const auto& [master, node] : nodes_) {
      if (node.image != nullptr) {
        f(master, node.ImageBytes(), size_t{node.RawSize()});
      } else {
        f(master, node.lp.bytes(), size_t{0});
      }
    }
  }
  // How many nodes are stored compressed (tests, MEMORY checks).
  size_t NumCompressedNodes() const;

  // --- consumer groups

  // nullptr when the stream has no group.
  const GroupMap* groups() const { return groups_; }
  size_t NumGroups() const { return groups_ ? groups_->size() : 0; }
  StreamGroup* FindGroup(std::string_view name) const;
  // A new group; nullptr when `name` exists.
  StreamGroup* CreateGroup(std::string_view name, StreamID last_id, int64_t entries_read);
  // False when there is no such group.
  bool DestroyGroup(std::string_view name);

  // Redis 7.0's streamEstimateDistanceFromFirstEverEntry: the logical read counter of
  // `id`, or StreamGroup::kInvalidEntriesRead when it cannot be known.
  int64_t EstimateEntriesRead(StreamID id) const;
  // Redis's streamRangeHasTombstones: whether an entry between start and end (inclusive)
  // may have been deleted.
  bool RangeHasTombstones(StreamID start, StreamID end) const;
  // The group's lag (entries not yet delivered), false when it cannot be known (XINFO
  // answers null): Redis 7.0's rules.
  bool Lag(const StreamGroup& group, int64_t* lag) const;
  // Moves a group's last_id forward to `id` after a ">" read delivered it, keeping
  // entries_read as Redis 7.0 does.
  void AdvanceGroup(StreamGroup* group, StreamID id) const;

  size_t MallocUsed() const override;
  // Its nodes, and per group 1 plus the first group's pending entries (Redis's estimate).
  size_t FreeEffort() const override {
    const size_t groups = NumGroups();
    return NumNodes() + (groups ? groups * (1 + groups_->begin()->second->pel().size()) : 0);
  }
  // Form: the metadata (IDs and counts as fixed 8-byte words), the number of nodes, then
  // every node as its master ID, its count of entries ever added and its listpack's bytes,
  // then, when there are groups, each group with its consumers and PEL.
  void Serialize(std::string* out) const override;
  // Rebuilds a stream from Serialize's form, or returns nullptr when it is malformed.
  static Stream* Deserialize(std::string_view form);

 private:
  // A node: its listpack, or while compressed its LZF image (and a moved-from listpack).
  // The image is a core/lzf_image.h block. Nodes move inside the B-tree, their images do
  // not: an image's address
  // names it for the per-thread cache of the last decompressed node.
  struct Node {
    Listpack lp;
    uint8_t* image = nullptr;  // non-null: compressed
    uint32_t live = 0;         // entries present
    uint32_t added = 0;        // entries ever added (the node-full check counts deleted ones)

    Node() = default;
    Node(Listpack l, uint32_t live, uint32_t added) : lp(std::move(l)), live(live), added(added) {}
    Node(Node&& other) noexcept;
    Node& operator=(Node&& other) noexcept;
    ~Node();

    uint32_t RawSize() const;
    std::string_view ImageBytes() const;
    size_t ByteSize() const { return image != nullptr ? RawSize() : lp.ByteSize(); }
  };
  using NodeMap = absl::btree_map<StreamID, Node, std::less<StreamID>,
                                  ObjAllocator<std::pair<const StreamID, Node>>>;

  // The node's listpack: its own while plain, else the thread's cache of the last
  // decompressed node (filled here on a miss). The reference is valid until the next call
  // for another node or any change to the stream.
  static const Listpack& PlainOf(const Node& node);
  // Compresses a node when that pays (Redis's quicklist rule: a listpack of 48 bytes or
  // more, an image at least 8 bytes smaller). Returns whether the node is compressed.
  static bool Compress(Node* node);
  // Compress for a node that was just closed, but after two nodes (of 1 KiB or more) in a
  // row that did not pay, only one closed node in 16 is tried: payloads that do not
  // compress (random or encrypted values) would pay a hash probe per byte of every node
  // for nothing.
  void CompressClosed(Node* node);
  // Makes a compressed node plain for a change (taking the cache's copy when it holds it).
  static void Decompress(Node* node);
  // Walks the entries of a node in order: f(id, position of its flags, element count,
  // lp-count included) returns false to stop.
  template <typename F>
  static void ForEachEntry(const StreamID& master, const Node& node, F&& f);
  // The field, value... strings of the entry whose flags are at `start`, into *pairs.
  static void EntryPairs(const Listpack& lp, Listpack::Pos start, std::vector<std::string>* pairs);
  // Writes node.live into the node's master entry (its count).
  static void SetNodeCount(Node* node);
  // Drops node `it` entirely; returns the next one.
  NodeMap::iterator EraseNode(NodeMap::iterator it);
  // Removes the first live entry of node `it` (which must have one). Returns its ID.
  StreamID EraseFirstOfNode(NodeMap::iterator it);
  // The ID of the last entry of a node (which always has one), read from its end.
  static StreamID LastIdOfNode(const StreamID& master, const Node& node);
  void RefreshFirstId();

  void SerializeGroups(std::string* out) const;
  bool DeserializeGroups(std::string_view form);

  NodeMap nodes_;
  GroupMap* groups_ = nullptr;  // allocated with the first group
  size_t length_ = 0;
  StreamID last_id_;
  StreamID first_id_;
  StreamID max_deleted_id_;
  uint64_t entries_added_ = 0;
  uint8_t compress_misses_ = 0;  // closed nodes in a row that did not compress (saturates)
};

}  // namespace damselfly::core
