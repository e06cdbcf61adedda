#include "src/core/stream.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstring>
#include <new>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/core/lzf_image.h"
#include "src/core/obj_malloc.h"

namespace damselfly::core {

namespace {

// Redis's entry flags (STREAM_ITEM_FLAG_*).
enum : int64_t { kFlagDeleted = 1, kFlagSameFields = 2 };

// Appends value's text to *out, made in place (a temporary string moved in costs a copy of
// its inline bytes per field: a fifth of XREAD's time went to such copies).
void AppendText(std::vector<std::string>* out, const Listpack::Value& value) {
  if (!value.is_int) {
    out->emplace_back(value.sval);
    return;
  }
  char digits[24];
  const std::to_chars_result end = std::to_chars(digits, digits + sizeof(digits), value.ival);
  out->emplace_back(digits, end.ptr);
}

int64_t IntAt(const Listpack& lp, Listpack::Pos pos) {
  Listpack::Value value = lp.Get(pos);
  return value.is_int ? value.ival : 0;
}

void AppendInt(Listpack* lp, int64_t value) { lp->Append(absl::StrCat(value)); }

// An ID as master + diffs; the diffs wrap as Redis's (uint64 arithmetic on int64 deltas).
StreamID FromDiffs(const StreamID& master, int64_t ms_diff, int64_t seq_diff) {
  return {master.ms + uint64_t(ms_diff), master.seq + uint64_t(seq_diff)};
}

// The position of a node's first entry: past count, deleted, nfields, the master fields and
// the master entry's terminator. *master_fields gets the first master field's position.
Listpack::Pos FirstEntryOfNode(const Listpack& lp, int64_t* nmaster, Listpack::Pos* master_fields) {
  Listpack::Pos pos = lp.Next(lp.Next(lp.First()));  // nfields
  *nmaster = IntAt(lp, pos);
  pos = lp.Next(pos);
  *master_fields = pos;
  for (int64_t i = 0; i < *nmaster; ++i) pos = lp.Next(pos);
  return lp.Next(pos);
}

void PutWord(std::string* out, uint64_t word) {
  char buf[8];
  std::memcpy(buf, &word, 8);
  out->append(buf, 8);
}

bool GetWord(std::string_view* in, uint64_t* word) {
  if (in->size() < 8) return false;
  std::memcpy(word, in->data(), 8);
  in->remove_prefix(8);
  return true;
}

void PutString(std::string* out, std::string_view s) {
  PutWord(out, s.size());
  out->append(s);
}

bool GetString(std::string_view* in, std::string_view* s) {
  uint64_t len;
  if (!GetWord(in, &len) || in->size() < len) return false;
  *s = in->substr(0, len);
  in->remove_prefix(len);
  return true;
}

// Groups and consumers are allocated one by one on the object heap, so the pointers to
// them (the PEL's owners, a command's group) stay valid while their maps rebalance.
template <typename T, typename... Args>
T* ObjNew(Args&&... args) {
  return new (ObjMalloc(sizeof(T))) T(std::forward<Args>(args)...);
}

template <typename T>
void ObjDelete(T* object) {
  object->~T();
  ObjFree(object);
}

void PutId(std::string* out, StreamID id) {
  PutWord(out, id.ms);
  PutWord(out, id.seq);
}

bool GetId(std::string_view* in, StreamID* id) {
  return GetWord(in, &id->ms) && GetWord(in, &id->seq);
}

// Closed nodes of at least this size that do not compress count as misses (CompressClosed).
constexpr size_t kMissMinBytes = 1024;

// The last node decompressed for a read on this thread, named by its image's address.
// One node is what repeated reads of old history need (XREAD from an old ID, XRANGE pages,
// a consumer's history walk through one node): they pay the decompression once. The copy
// counts in the thread's used_memory, not in any key's MEMORY USAGE.
struct PlainCache {
  const uint8_t* image = nullptr;
  std::optional<Listpack> lp;
};
thread_local PlainCache plain_cache;

// Frees an image; the cache forgets it, since its address may name another image next.
void FreeImage(uint8_t* image) {
  if (plain_cache.image == image) {
    plain_cache.image = nullptr;
    plain_cache.lp.reset();
  }
  FreeLzfImage(image);
}

}  // namespace

// --- Stream::Node

Stream::Node::Node(Node&& other) noexcept
    : lp(std::move(other.lp)),
      image(std::exchange(other.image, nullptr)),
      live(other.live),
      added(other.added) {}

Stream::Node& Stream::Node::operator=(Node&& other) noexcept {
  if (this != &other) {
    if (image != nullptr) FreeImage(image);
    lp = std::move(other.lp);
    image = std::exchange(other.image, nullptr);
    live = other.live;
    added = other.added;
  }
  return *this;
}

Stream::Node::~Node() {
  if (image != nullptr) FreeImage(image);
}

uint32_t Stream::Node::RawSize() const { return LzfImageRawSize(image); }

std::string_view Stream::Node::ImageBytes() const { return LzfImageStream(image); }

const Listpack& Stream::PlainOf(const Node& node) {
  if (node.image == nullptr) return node.lp;
  if (plain_cache.image != node.image) {
    plain_cache.lp.reset();  // at most one copy at a time
    plain_cache.lp.emplace(Listpack::FromBytes(DecompressLzfImage(node.image)));
    plain_cache.image = node.image;
  }
  return *plain_cache.lp;
}

bool Stream::Compress(Node* node) {
  if (node->image != nullptr) return true;
  node->image = MakeLzfImage(node->lp.bytes());
  if (node->image == nullptr) return false;
  { Listpack dropped = std::move(node->lp); }  // frees the plain form
  return true;
}

void Stream::CompressClosed(Node* node) {
  // A small node that does not compress says little about the payload (LZF's first
  // literal run and the 8 bytes it must save weigh too much in it): always tried.
  if (node->ByteSize() < kMissMinBytes) {
    Compress(node);
    return;
  }
  if (compress_misses_ >= 2 && nodes_.size() % 16 != 0) return;
  if (Compress(node)) {
    compress_misses_ = 0;
  } else if (compress_misses_ < UINT8_MAX) {
    ++compress_misses_;
  }
}

void Stream::Decompress(Node* node) {
  if (node->image == nullptr) return;
  if (plain_cache.image == node->image) {
    node->lp = std::move(*plain_cache.lp);
  } else {
    node->lp = Listpack::FromBytes(DecompressLzfImage(node->image));
  }
  FreeImage(node->image);
  node->image = nullptr;
}

size_t Stream::NumCompressedNodes() const {
  size_t n = 0;
  for (const auto& [master, node] : nodes_) n += node.image != nullptr;
  return n;
}

// --- StreamGroup

StreamGroup::~StreamGroup() {
  for (auto& [name, consumer] : consumers_) ObjDelete(consumer);
}

StreamConsumer* StreamGroup::FindConsumer(std::string_view name) const {
  auto it = consumers_.find(name);
  return it == consumers_.end() ? nullptr : it->second;
}

StreamConsumer* StreamGroup::FindOrAddConsumer(std::string_view name, int64_t now_ms,
                                               bool* created) {
  auto it = consumers_.find(name);
  *created = it == consumers_.end();
  if (!*created) return it->second;
  StreamConsumer* consumer = ObjNew<StreamConsumer>();
  consumer->name = std::string(name);
  consumer->seen_time_ms = now_ms;
  consumers_.emplace(consumer->name, consumer);
  return consumer;
}

int64_t StreamGroup::DeleteConsumer(std::string_view name) {
  auto it = consumers_.find(name);
  if (it == consumers_.end()) return -1;
  StreamConsumer* consumer = it->second;
  const int64_t pending = consumer->pending.size();
  for (StreamID id : consumer->pending) pel_.erase(id);
  consumers_.erase(it);
  ObjDelete(consumer);
  return pending;
}

void StreamGroup::Deliver(StreamID id, StreamConsumer* consumer, int64_t now_ms) {
  auto [it, inserted] = pel_.try_emplace(id);
  PendingEntry& entry = it->second;
  if (!inserted) entry.consumer->pending.erase(id);
  entry.consumer = consumer;
  entry.delivery_time_ms = now_ms;
  entry.delivery_count = 1;
  consumer->pending.insert(id);
}

PendingEntry& StreamGroup::Assign(StreamID id, StreamConsumer* consumer) {
  PendingEntry& entry = pel_.find(id)->second;
  if (entry.consumer != consumer) {
    entry.consumer->pending.erase(id);
    entry.consumer = consumer;
    consumer->pending.insert(id);
  }
  return entry;
}

PendingEntry& StreamGroup::AddPending(StreamID id, StreamConsumer* consumer) {
  PendingEntry& entry = pel_[id];
  entry.consumer = consumer;
  consumer->pending.insert(id);
  return entry;
}

bool StreamGroup::Ack(StreamID id) {
  auto it = pel_.find(id);
  if (it == pel_.end()) return false;
  it->second.consumer->pending.erase(id);
  pel_.erase(it);
  return true;
}

PendingEntry* StreamGroup::FindPending(StreamID id) {
  auto it = pel_.find(id);
  return it == pel_.end() ? nullptr : &it->second;
}

// --- StreamID

std::string StreamID::ToString() const { return absl::StrCat(ms, "-", seq); }

bool StreamID::Increment() {
  if (seq < kMax) {
    ++seq;
  } else if (ms < kMax) {
    ++ms;
    seq = 0;
  } else {
    return false;
  }
  return true;
}

bool StreamID::Decrement() {
  if (seq > 0) {
    --seq;
  } else if (ms > 0) {
    --ms;
    seq = kMax;
  } else {
    return false;
  }
  return true;
}

Stream::~Stream() {
  if (groups_ == nullptr) return;
  for (auto& [name, group] : *groups_) ObjDelete(group);
  ObjDelete(groups_);
}

template <typename F>
void Stream::ForEachEntry(const StreamID& master, const Node& node, F&& f) {
  const Listpack& lp = PlainOf(node);
  int64_t nmaster;
  Listpack::Pos master_fields;
  Listpack::Pos pos = FirstEntryOfNode(lp, &nmaster, &master_fields);
  while (pos != Listpack::kNoPos) {
    const Listpack::Pos start = pos;
    const int64_t flags = IntAt(lp, pos);
    pos = lp.Next(pos);
    const int64_t ms_diff = IntAt(lp, pos);
    pos = lp.Next(pos);
    const StreamID id = FromDiffs(master, ms_diff, IntAt(lp, pos));
    pos = lp.Next(pos);
    // Past the values (and fields), to the lp-count.
    int64_t skip = nmaster;
    if (!(flags & kFlagSameFields)) {
      skip = 2 * IntAt(lp, pos);
      pos = lp.Next(pos);
    }
    for (int64_t i = 0; i < skip; ++i) pos = lp.Next(pos);
    const size_t elements = (flags & kFlagSameFields ? 4 : 5) + skip;
    pos = lp.Next(pos);
    if (!f(id, start, elements)) return;
  }
}

void Stream::EntryPairs(const Listpack& lp, Listpack::Pos start, std::vector<std::string>* pairs) {
  pairs->clear();
  const bool same = IntAt(lp, start) & kFlagSameFields;
  Listpack::Pos pos = lp.Next(lp.Next(lp.Next(start)));  // past flags and the diffs
  if (same) {
    int64_t nmaster;
    Listpack::Pos field;
    FirstEntryOfNode(lp, &nmaster, &field);
    pairs->reserve(2 * nmaster);
    for (int64_t i = 0; i < nmaster; ++i, field = lp.Next(field), pos = lp.Next(pos)) {
      AppendText(pairs, lp.Get(field));
      AppendText(pairs, lp.Get(pos));
    }
    return;
  }
  const int64_t n = 2 * IntAt(lp, pos);
  pos = lp.Next(pos);
  pairs->reserve(n);
  for (int64_t i = 0; i < n; ++i, pos = lp.Next(pos)) AppendText(pairs, lp.Get(pos));
}

void Stream::SetNodeCount(Node* node) {
  node->lp.Replace(node->lp.First(), absl::StrCat(node->live));
}

void Stream::Add(StreamID id, absl::Span<const std::string_view> pairs, size_t node_max_bytes,
                 size_t node_max_entries) {
  size_t added_bytes = 0;
  for (std::string_view s : pairs) added_bytes += s.size();
  // As Redis: no byte limit means the listpack's safe maximum.
  if (node_max_bytes == 0 || node_max_bytes > Listpack::kMaxSafeBytes) {
    node_max_bytes = Listpack::kMaxSafeBytes;
  }
  auto it = nodes_.empty() ? nodes_.end() : std::prev(nodes_.end());
  if (it != nodes_.end()) {
    Node& last = it->second;
    if (last.ByteSize() + added_bytes >= node_max_bytes ||
        (node_max_entries != 0 && last.added >= node_max_entries)) {
      CompressClosed(&last);  // no entry is added to it again
      it = nodes_.end();
    } else {
      Decompress(&last);  // compressed when it was closed, before a deletion made it last
    }
  }
  const int64_t nfields = pairs.size() / 2;
  if (it == nodes_.end()) {
    it = nodes_.try_emplace(nodes_.end(), id);
    Listpack& lp = it->second.lp;
    AppendInt(&lp, 0);  // count, set below
    AppendInt(&lp, 0);  // deleted: always 0 here
    AppendInt(&lp, nfields);
    for (size_t i = 0; i < pairs.size(); i += 2) lp.Append(pairs[i]);
    AppendInt(&lp, 0);  // the master entry's terminator
  }
  Node& node = it->second;
  const StreamID& master = it->first;
  // Whether the entry's fields are the master's, in order.
  int64_t nmaster;
  Listpack::Pos field;
  FirstEntryOfNode(node.lp, &nmaster, &field);
  bool same = nmaster == nfields;
  for (size_t i = 0; same && i < pairs.size(); i += 2, field = node.lp.Next(field)) {
    same = node.lp.Get(field).Equals(pairs[i]);
  }
  AppendInt(&node.lp, same ? kFlagSameFields : 0);
  AppendInt(&node.lp, int64_t(id.ms - master.ms));
  AppendInt(&node.lp, int64_t(id.seq - master.seq));
  if (same) {
    for (size_t i = 1; i < pairs.size(); i += 2) node.lp.Append(pairs[i]);
  } else {
    AppendInt(&node.lp, nfields);
    for (std::string_view s : pairs) node.lp.Append(s);
  }
  AppendInt(&node.lp, 3 + (same ? nfields : 1 + 2 * nfields));
  ++node.live;
  ++node.added;
  SetNodeCount(&node);
  if (length_ == 0) first_id_ = id;
  ++length_;
  ++entries_added_;
  last_id_ = id;
}

std::vector<Stream::Entry> Stream::Range(StreamID start, StreamID end, size_t count,
                                         bool reverse) const {
  std::vector<Entry> result;
  if (start > end || nodes_.empty()) return result;
  // A small COUNT (XREAD's, a page of XRANGE) is usually filled: no regrowth then.
  constexpr size_t kMaxReserve = 1024;
  if (count != 0) result.reserve(std::min<size_t>({count, length_, kMaxReserve}));
  // Each entry's pairs are read straight into its place in the result.
  auto add = [&](StreamID id, const Listpack& lp, Listpack::Pos pos) {
    Entry& entry = result.emplace_back();
    entry.id = id;
    EntryPairs(lp, pos, &entry.pairs);
  };
  auto full = [&] { return count != 0 && result.size() >= count; };
  if (!reverse) {
    auto it = nodes_.upper_bound(start);
    if (it != nodes_.begin()) --it;
    for (; it != nodes_.end() && it->first <= end && !full(); ++it) {
      bool past_end = false;
      const Listpack& lp = PlainOf(it->second);
      ForEachEntry(it->first, it->second, [&](const StreamID& id, Listpack::Pos pos, size_t) {
        if (id > end) return !(past_end = true);
        if (id >= start) add(id, lp, pos);
        return !full();
      });
      if (past_end) break;
    }
    return result;
  }
  auto it = nodes_.upper_bound(end);
  while (it != nodes_.begin() && !full()) {
    --it;
    // The node's entries in range, then their pairs from the last one back.
    std::vector<std::pair<StreamID, Listpack::Pos>> in_range;
    ForEachEntry(it->first, it->second, [&](const StreamID& id, Listpack::Pos pos, size_t) {
      if (id > end) return false;
      if (id >= start) in_range.push_back({id, pos});
      return true;
    });
    for (auto e = in_range.rbegin(); e != in_range.rend() && !full(); ++e) {
      add(e->first, PlainOf(it->second), e->second);
    }
    if (it->first < start) break;
  }
  return result;
}

bool Stream::Delete(StreamID id) {
  auto it = nodes_.upper_bound(id);
  if (it == nodes_.begin()) return false;
  --it;
  Listpack::Pos found = Listpack::kNoPos;
  size_t found_elements = 0;
  ForEachEntry(it->first, it->second,
               [&](const StreamID& entry_id, Listpack::Pos start, size_t elements) {
                 if (entry_id < id) return true;
                 if (entry_id == id) found = start, found_elements = elements;
                 return false;
               });
  if (found == Listpack::kNoPos) return false;
  Node& node = it->second;
  const bool was_compressed = node.image != nullptr;
  Decompress(&node);  // positions stay valid: the same bytes, now the node's own
  for (size_t i = 0; i < found_elements; ++i) found = node.lp.Delete(found);
  --length_;
  if (--node.live == 0) {
    nodes_.erase(it);
  } else {
    SetNodeCount(&node);
    if (was_compressed) Compress(&node);
  }
  if (id > max_deleted_id_) max_deleted_id_ = id;
  if (id == first_id_) RefreshFirstId();
  return true;
}

Stream::NodeMap::iterator Stream::EraseNode(NodeMap::iterator it) {
  length_ -= it->second.live;
  return nodes_.erase(it);
}

StreamID Stream::EraseFirstOfNode(NodeMap::iterator it) {
  Node& node = it->second;
  StreamID first;
  Listpack::Pos start = Listpack::kNoPos;
  size_t count = 0;
  ForEachEntry(it->first, node, [&](const StreamID& id, Listpack::Pos pos, size_t n) {
    first = id, start = pos, count = n;
    return false;
  });
  // Left plain: exact trimming (XADD MAXLEN n) takes the first node's entries one per
  // call, and a compression per entry would cost more than the node's bytes are worth.
  Decompress(&node);
  for (size_t i = 0; i < count; ++i) start = node.lp.Delete(start);
  --length_;
  if (--node.live == 0) {
    nodes_.erase(it);
  } else {
    SetNodeCount(&node);
  }
  return first;
}

StreamID Stream::LastIdOfNode(const StreamID& master, const Node& node) {
  // From the end: the last entry's lp-count says how far back its flags are (Redis's
  // lpGetEdgeStreamID), so this costs a few elements, not a walk of the node.
  const Listpack& lp = PlainOf(node);
  Listpack::Pos pos = lp.Last();
  for (int64_t back = IntAt(lp, pos); back > 0; --back) pos = lp.Prev(pos);
  pos = lp.Next(pos);  // past flags
  const int64_t ms_diff = IntAt(lp, pos);
  return FromDiffs(master, ms_diff, IntAt(lp, lp.Next(pos)));
}

void Stream::RefreshFirstId() {
  first_id_ = StreamID::Min();
  if (nodes_.empty()) return;
  const auto& [master, node] = *nodes_.begin();
  ForEachEntry(master, node, [&](const StreamID& id, Listpack::Pos, size_t) {
    first_id_ = id;
    return false;
  });
}

size_t Stream::TrimByMaxLen(uint64_t max_len, bool approx, uint64_t limit) {
  size_t removed = 0;
  while (length_ > max_len && !nodes_.empty()) {
    auto it = nodes_.begin();
    const size_t live = it->second.live;
    if (length_ - live >= max_len) {
      if (approx && limit != 0 && removed + live > limit) break;
      EraseNode(it);
      removed += live;
      continue;
    }
    if (approx) break;
    // Within the first node: take entries one at a time.
    while (length_ > max_len) {
      EraseFirstOfNode(nodes_.begin());
      ++removed;
    }
  }
  if (removed != 0) RefreshFirstId();
  return removed;
}

size_t Stream::TrimByMinId(StreamID min_id, bool approx, uint64_t limit) {
  size_t removed = 0;
  while (!nodes_.empty()) {
    auto it = nodes_.begin();
    const size_t live = it->second.live;
    if (LastIdOfNode(it->first, it->second) < min_id) {
      if (approx && limit != 0 && removed + live > limit) break;
      EraseNode(it);
      removed += live;
      continue;
    }
    if (approx) break;
    RefreshFirstId();  // whole nodes may have gone above
    while (length_ > 0 && first_id_ < min_id) {
      EraseFirstOfNode(nodes_.begin());
      ++removed;
      RefreshFirstId();
    }
    break;
  }
  if (removed != 0) RefreshFirstId();
  return removed;
}

StreamID Stream::LastEntryId() const {
  if (nodes_.empty()) return StreamID::Min();
  const auto& [master, node] = *nodes_.rbegin();
  return LastIdOfNode(master, node);
}

bool Stream::Contains(StreamID id) const {
  if (length_ == 0 || id < first_id_ || id > last_id_) return false;
  return !Range(id, id, 1, false).empty();
}

StreamGroup* Stream::FindGroup(std::string_view name) const {
  if (groups_ == nullptr) return nullptr;
  auto it = groups_->find(name);
  return it == groups_->end() ? nullptr : it->second;
}

StreamGroup* Stream::CreateGroup(std::string_view name, StreamID last_id, int64_t entries_read) {
  if (groups_ == nullptr) groups_ = ObjNew<GroupMap>();
  auto [it, inserted] = groups_->try_emplace(std::string(name), nullptr);
  if (!inserted) return nullptr;
  it->second = ObjNew<StreamGroup>(last_id, entries_read);
  return it->second;
}

bool Stream::DestroyGroup(std::string_view name) {
  if (groups_ == nullptr) return false;
  auto it = groups_->find(name);
  if (it == groups_->end()) return false;
  ObjDelete(it->second);
  groups_->erase(it);
  return true;
}

int64_t Stream::EstimateEntriesRead(StreamID id) const {
  if (entries_added_ == 0) return 0;  // nothing was ever added: every counter is 0
  if (length_ == 0 && id <= last_id_) return entries_added_;
  if (id == last_id_) return entries_added_;
  if (id > last_id_) return StreamGroup::kInvalidEntriesRead;  // a future ID
  // Without a deletion at or after the first entry, the entries before it were trimmed
  // or deleted in order, so the first entry's counter is known.
  if (max_deleted_id_ == StreamID::Min() || max_deleted_id_ < first_id_) {
    if (id < first_id_) return entries_added_ - length_;
    if (id == first_id_) return entries_added_ - length_ + 1;
  }
  return StreamGroup::kInvalidEntriesRead;
}

bool Stream::RangeHasTombstones(StreamID start, StreamID end) const {
  if (length_ == 0 || max_deleted_id_ == StreamID::Min()) return false;
  if (first_id_ > max_deleted_id_) return false;  // the last deletion is before the first entry
  return start <= max_deleted_id_ && max_deleted_id_ <= end;
}

bool Stream::Lag(const StreamGroup& group, int64_t* lag) const {
  if (entries_added_ == 0) {
    *lag = 0;
    return true;
  }
  if (group.entries_read != StreamGroup::kInvalidEntriesRead &&
      !RangeHasTombstones(group.last_id, StreamID::Max())) {
    *lag = int64_t(entries_added_) - group.entries_read;
    return true;
  }
  const int64_t entries_read = EstimateEntriesRead(group.last_id);
  if (entries_read == StreamGroup::kInvalidEntriesRead) return false;
  *lag = int64_t(entries_added_) - entries_read;
  return true;
}

void Stream::AdvanceGroup(StreamGroup* group, StreamID id) const {
  if (id <= group->last_id) return;
  if (group->entries_read != StreamGroup::kInvalidEntriesRead &&
      !RangeHasTombstones(id, StreamID::Max())) {
    ++group->entries_read;  // a valid counter and nothing deleted ahead: count on
  } else if (entries_added_ != 0) {
    group->entries_read = EstimateEntriesRead(id);
  }
  group->last_id = id;
}

size_t Stream::MallocUsed() const {
  size_t used = ObjUsableSize(const_cast<Stream*>(this));
  // The B-tree's own nodes are not visible through its API: count a slot per listpack
  // node and a little of the tree's overhead (its nodes are mostly full when appended to).
  used += nodes_.size() * (sizeof(NodeMap::value_type) + 8);
  for (const auto& [master, node] : nodes_) {
    used += node.image != nullptr ? ObjUsableSize(node.image)
                                  : ObjUsableSize(const_cast<char*>(node.lp.bytes().data()));
  }
  if (groups_ == nullptr) return used;
  // The groups' B-trees, estimated per element as the node map above (a PEL entry is an
  // ID and a PendingEntry in the group, an ID again in its consumer).
  used += ObjUsableSize(groups_);
  for (const auto& [name, group] : *groups_) {
    used += sizeof(GroupMap::value_type) + 8 + ObjUsableSize(group);
    used += group->pel().size() * (sizeof(StreamGroup::Pel::value_type) + sizeof(StreamID) + 16);
    for (const auto& [cname, consumer] : group->consumers()) {
      used += sizeof(StreamGroup::ConsumerMap::value_type) + 8 + ObjUsableSize(consumer);
    }
  }
  return used;
}

bool Stream::CheckNode(StreamID master, const Listpack& lp, const StreamID* after, NodeInfo* info) {
  // Reads the element at *pos as an integer and steps past it.
  auto next_int = [&lp](Listpack::Pos* pos, int64_t* out) {
    if (*pos == Listpack::kNoPos) return false;
    Listpack::Value value = lp.Get(*pos);
    *pos = lp.Next(*pos);
    *out = value.ival;
    return value.is_int;
  };
  auto skip = [&lp](Listpack::Pos* pos, int64_t n) {
    for (; n > 0; --n) {
      if (*pos == Listpack::kNoPos) return false;
      *pos = lp.Next(*pos);
    }
    return true;
  };
  Listpack::Pos pos = lp.First();
  int64_t count, deleted, nmaster, terminator;
  if ((after != nullptr && master <= *after) || !next_int(&pos, &count) ||
      !next_int(&pos, &deleted) || !next_int(&pos, &nmaster) || count < 0 || deleted < 0 ||
      nmaster <= 0 || !skip(&pos, nmaster) || !next_int(&pos, &terminator) || terminator != 0 ||
      pos == Listpack::kNoPos) {
    return false;
  }
  *info = NodeInfo{};
  StreamID previous = after != nullptr ? *after : master;
  bool first = after == nullptr;
  while (pos != Listpack::kNoPos) {
    int64_t flags, ms_diff, seq_diff, npairs, lp_count;
    if (!next_int(&pos, &flags) || !next_int(&pos, &ms_diff) || !next_int(&pos, &seq_diff) ||
        (flags & ~(kFlagDeleted | kFlagSameFields)) != 0) {
      return false;
    }
    int64_t elements;
    if (flags & kFlagSameFields) {
      elements = nmaster;
    } else {
      if (!next_int(&pos, &npairs) || npairs <= 0) return false;
      elements = 1 + 2 * npairs;
    }
    if (!skip(&pos, elements - (flags & kFlagSameFields ? 0 : 1)) || !next_int(&pos, &lp_count) ||
        lp_count != 3 + elements) {
      return false;
    }
    const StreamID id = FromDiffs(master, ms_diff, seq_diff);
    if (id < master || (first ? id < previous : id <= previous)) return false;
    first = false;
    previous = id;
    ++(flags & kFlagDeleted ? info->deleted : info->live);
  }
  info->last = previous;
  return info->live == size_t(count) && info->deleted == size_t(deleted);
}

void Stream::AppendNode(StreamID master, Listpack lp, const NodeInfo& info) {
  if (info.live == 0) return;
  Node node(std::move(lp), uint32_t(info.live), uint32_t(info.live + info.deleted));
  if (info.deleted != 0) {
    // Take the flagged entries out, each with its lp-count.
    Listpack& nlp = node.lp;
    int64_t nmaster;
    Listpack::Pos fields;
    Listpack::Pos pos = FirstEntryOfNode(nlp, &nmaster, &fields);
    while (pos != Listpack::kNoPos) {
      const int64_t flags = IntAt(nlp, pos);
      int64_t elements = 4 + nmaster;
      if (!(flags & kFlagSameFields)) {
        const Listpack::Pos npairs = nlp.Next(nlp.Next(nlp.Next(pos)));
        elements = 5 + 2 * IntAt(nlp, npairs);
      }
      for (int64_t i = 0; i < elements; ++i) {
        pos = flags & kFlagDeleted ? nlp.Delete(pos) : nlp.Next(pos);
      }
    }
    nlp.Replace(nlp.Next(nlp.First()), "0");  // the master entry's deleted count
  }
  if (!nodes_.empty()) CompressClosed(&nodes_.rbegin()->second);  // closed by this one
  auto it = nodes_.try_emplace(nodes_.end(), master, std::move(node));
  if (length_ == 0) {
    ForEachEntry(it->first, it->second, [&](const StreamID& id, Listpack::Pos, size_t) {
      first_id_ = id;
      return false;
    });
  }
  length_ += info.live;
}

void Stream::Serialize(std::string* out) const {
  for (uint64_t word : {last_id_.ms, last_id_.seq, max_deleted_id_.ms, max_deleted_id_.seq,
                        entries_added_, uint64_t(length_)}) {
    PutWord(out, word);
  }
  PutWord(out, nodes_.size());
  for (const auto& [master, node] : nodes_) {
    PutId(out, master);
    PutWord(out, node.added);
    PutString(out, PlainOf(node).bytes());
  }
  if (groups_ != nullptr) SerializeGroups(out);
}

void Stream::SerializeGroups(std::string* out) const {
  PutWord(out, groups_->size());
  for (const auto& [name, group] : *groups_) {
    PutString(out, name);
    PutId(out, group->last_id);
    PutWord(out, uint64_t(group->entries_read));
    PutWord(out, group->consumers().size());
    for (const auto& [cname, consumer] : group->consumers()) {
      PutString(out, cname);
      PutWord(out, uint64_t(consumer->seen_time_ms));
    }
    PutWord(out, group->pel().size());
    for (const auto& [id, entry] : group->pel()) {
      PutId(out, id);
      PutWord(out, uint64_t(entry.delivery_time_ms));
      PutWord(out, entry.delivery_count);
      PutString(out, entry.consumer->name);
    }
  }
}

bool Stream::DeserializeGroups(std::string_view form) {
  uint64_t ngroups;
  if (!GetWord(&form, &ngroups)) return false;
  for (uint64_t g = 0; g < ngroups; ++g) {
    std::string_view name;
    StreamID last_id;
    uint64_t entries_read, nconsumers, npending;
    if (!GetString(&form, &name) || !GetId(&form, &last_id) || !GetWord(&form, &entries_read) ||
        !GetWord(&form, &nconsumers)) {
      return false;
    }
    StreamGroup* group = CreateGroup(name, last_id, int64_t(entries_read));
    if (group == nullptr) return false;
    for (uint64_t c = 0; c < nconsumers; ++c) {
      std::string_view cname;
      uint64_t seen;
      bool created;
      if (!GetString(&form, &cname) || !GetWord(&form, &seen)) return false;
      group->FindOrAddConsumer(cname, int64_t(seen), &created);
      if (!created) return false;
    }
    if (!GetWord(&form, &npending)) return false;
    for (uint64_t p = 0; p < npending; ++p) {
      StreamID id;
      uint64_t time, count;
      std::string_view cname;
      if (!GetId(&form, &id) || !GetWord(&form, &time) || !GetWord(&form, &count) ||
          !GetString(&form, &cname)) {
        return false;
      }
      StreamConsumer* consumer = group->FindConsumer(cname);
      if (consumer == nullptr || group->FindPending(id) != nullptr) return false;
      PendingEntry& entry = group->AddPending(id, consumer);
      entry.delivery_time_ms = int64_t(time);
      entry.delivery_count = count;
    }
  }
  return form.empty();
}

Stream* Stream::Deserialize(std::string_view form) {
  uint64_t words[7];
  for (uint64_t& word : words) {
    if (!GetWord(&form, &word)) return nullptr;
  }
  Stream* stream = Make();
  auto fail = [stream]() -> Stream* {
    Destroy(stream);
    return nullptr;
  };
  StreamID last;
  NodeInfo info;
  for (uint64_t n = 0; n < words[6]; ++n) {
    StreamID master;
    uint64_t added;
    std::string_view bytes;
    if (!GetId(&form, &master) || !GetWord(&form, &added) || !GetString(&form, &bytes) ||
        !Listpack::Validate(bytes)) {
      return fail();
    }
    Listpack lp = Listpack::FromBytes(bytes);
    if (!CheckNode(master, lp, n > 0 ? &last : nullptr, &info) || info.live == 0 ||
        info.deleted != 0 || added < info.live || added > UINT32_MAX) {
      return fail();
    }
    stream->AppendNode(master, std::move(lp), info);
    stream->nodes_.rbegin()->second.added = uint32_t(added);
    last = info.last;
  }
  if (stream->length_ != words[5] || (!form.empty() && !stream->DeserializeGroups(form))) {
    return fail();
  }
  stream->last_id_ = {words[0], words[1]};
  stream->max_deleted_id_ = {words[2], words[3]};
  stream->entries_added_ = words[4];
  return stream;
}

}  // namespace damselfly::core
