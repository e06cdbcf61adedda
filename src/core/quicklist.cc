#include "src/core/quicklist.h"

#include <atomic>
#include <cassert>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "src/core/lzf_image.h"
#include "src/core/obj_malloc.h"

namespace damselfly::core {

namespace {

// Redis's limits: a count-limited node stays under 8 KiB; size-limited nodes are 4 KiB
// << (level - 1) for fill -level.
constexpr size_t kSafetyLimitBytes = 8192;
// A listpack's header (total bytes, count) and terminator.
constexpr size_t kListpackFrame = 7;

// An upper bound of the bytes an entry of `len` string bytes adds to a listpack: its
// encoding header and its backlen (an integer's entry is never larger).
size_t EntryBytes(size_t len) {
  size_t header = len < 64 ? 1 : len < 4096 ? 2 : 5;
  size_t body = header + len;
  size_t backlen = body < 128          ? 1
                   : body < 16384      ? 2
                   : body < (1u << 21) ? 3
                   : body < (1u << 28) ? 4
                                       : 5;
  return body + backlen;
}

std::atomic<size_t> packed_threshold{Quicklist::kDefaultPackedThreshold};

bool IsLarge(size_t value_bytes) {
  return value_bytes >= packed_threshold.load(std::memory_order_relaxed);
}

// Whether a stored element is large: by the length of its text, as it was pushed.
bool IsLarge(const Listpack::Value& value) {
  if (!value.is_int) return IsLarge(value.sval.size());
  char buf[24];
  return IsLarge(size_t(absl::numbers_internal::FastIntToBuffer(value.ival, buf) - buf));
}

}  // namespace

// A node: its listpack, or while compressed its LZF image (and a moved-from listpack).
struct Quicklist::Node {
  Node* prev = nullptr;
  Node* next = nullptr;
  Listpack lp;
  uint8_t* image = nullptr;  // non-null: compressed (core/lzf_image.h)
  uint32_t count = 0;
  // Plain only for an access (an iterator): compress again when the access ends.
  bool recompress = false;
  // Holds one large element, alone (PackedThreshold()).
  bool isolated = false;

  explicit Node(Listpack l) : lp(std::move(l)) {}
  bool compressed() const { return image != nullptr; }
  size_t ByteSize() const { return compressed() ? LzfImageRawSize(image) : lp.ByteSize(); }
};

void ListpackValueTo(const Listpack::Value& value, std::string* out) {
  if (!value.is_int) {
    out->assign(value.sval);
    return;
  }
  char buf[24];
  char* end = absl::numbers_internal::FastIntToBuffer(value.ival, buf);
  out->assign(buf, end - buf);
}

namespace {

// Compresses a plain node if that pays; clears its recompress mark either way.
void CompressNode(Quicklist::Node* node);
// Makes a compressed node plain. `for_access`: mark it to be compressed again after.
void DecompressNode(Quicklist::Node* node, bool for_access);

void CompressNode(Quicklist::Node* node) {
  node->recompress = false;
  if (node->compressed()) return;
  node->image = MakeLzfImage(node->lp.bytes());
  if (node->image != nullptr) {
    Listpack dropped = std::move(node->lp);  // frees the plain form
  }
}

void DecompressNode(Quicklist::Node* node, bool for_access) {
  if (!node->compressed()) {
    if (!for_access) node->recompress = false;
    return;
  }
  node->lp = Listpack::FromBytes(DecompressLzfImage(node->image));
  FreeLzfImage(node->image);
  node->image = nullptr;
  node->recompress = for_access;
}

}  // namespace

bool Quicklist::SetPackedThreshold(size_t bytes) {
  if (bytes > (size_t{1} << 32) - (size_t{1} << 20)) return false;
  packed_threshold.store(bytes == 0 ? kDefaultPackedThreshold : bytes, std::memory_order_relaxed);
  return true;
}

size_t Quicklist::PackedThreshold() { return packed_threshold.load(std::memory_order_relaxed); }

bool Quicklist::WithinFill(int fill, size_t bytes, size_t count) {
  if (fill >= 0) return count <= size_t(fill == 0 ? 1 : fill) && bytes <= kSafetyLimitBytes;
  int level = -fill > 5 ? 5 : -fill;
  return bytes <= (size_t{4096} << (level - 1));
}

Quicklist::Quicklist(int fill, unsigned compress_depth)
    : fill_(int16_t(fill < -5      ? -5
                    : fill > 32767 ? 32767
                                   : fill)),
      depth_(uint16_t(compress_depth > 65535 ? 65535 : compress_depth)) {}

Quicklist::Quicklist(int fill, unsigned compress_depth, Listpack lp)
    : Quicklist(fill, compress_depth) {
  if (lp.Empty()) return;
  bool has_large = false;
  for (Listpack::Pos pos = lp.First(); pos != Listpack::kNoPos && !has_large; pos = lp.Next(pos)) {
    has_large = IsLarge(lp.Get(pos));
  }
  if (!has_large && WithinFill(fill_, lp.ByteSize(), lp.Size())) {
    AppendNode(std::move(lp));
    return;
  }
  std::string text;
  for (Listpack::Pos pos = lp.First(); pos != Listpack::kNoPos; pos = lp.Next(pos)) {
    ListpackValueTo(lp.Get(pos), &text);
    Push(End::kTail, text);
  }
}

Quicklist::~Quicklist() {
  for (Node* node = head_; node != nullptr;) {
    Node* next = node->next;
    FreeNode(node);
    node = next;
  }
}

Quicklist::Quicklist(Quicklist&& other) noexcept
    : head_(std::exchange(other.head_, nullptr)),
      tail_(std::exchange(other.tail_, nullptr)),
      count_(std::exchange(other.count_, 0)),
      node_count_(std::exchange(other.node_count_, 0)),
      fill_(other.fill_),
      depth_(other.depth_) {}

size_t Quicklist::MallocUsed() const {
  size_t bytes = 0;
  for (const Node* node = head_; node != nullptr; node = node->next) {
    bytes += ObjUsableSize(const_cast<Node*>(node));
    bytes += node->compressed() ? ObjUsableSize(node->image)
                                : ObjUsableSize(const_cast<char*>(node->lp.bytes().data()));
  }
  return bytes;
}

Quicklist::Node* Quicklist::NewNode(Listpack lp) {
  void* block = ObjMalloc(sizeof(Node));
  Node* node = new (block) Node(std::move(lp));
  node->count = node->lp.Size();
  return node;
}

void Quicklist::FreeNode(Node* node) {
  if (node->image != nullptr) FreeLzfImage(node->image);
  node->~Node();
  ObjFree(node);
}

void Quicklist::LinkAfter(Node* prev, Node* node) {
  node->prev = prev;
  node->next = prev ? prev->next : head_;
  if (node->next) {
    node->next->prev = node;
  } else {
    tail_ = node;
  }
  if (prev) {
    prev->next = node;
  } else {
    head_ = node;
  }
  ++node_count_;
}

void Quicklist::Unlink(Node* node) {
  (node->prev ? node->prev->next : head_) = node->next;
  (node->next ? node->next->prev : tail_) = node->prev;
  --node_count_;
}

bool Quicklist::AllowsInsert(const Node* node, size_t value_bytes) const {
  return !node->isolated && !IsLarge(value_bytes) &&
         WithinFill(fill_, node->ByteSize() + EntryBytes(value_bytes), node->count + 1);
}

Quicklist::Node* Quicklist::NewNodeOf(std::string_view value) {
  Listpack lp;
  lp.Append(value);
  Node* node = NewNode(std::move(lp));
  node->isolated = IsLarge(value.size());
  return node;
}

// The depth nodes at each end must be plain; the first node past each end region turns
// interior when a node is added at that end, and `touched` may be an interior node that
// a change left plain. Nodes deeper inside are untouched by the change and stay as they
// were. Cost: O(depth).
void Quicklist::Compress(Node* touched) {
  if (depth_ == 0 || head_ == nullptr) return;
  Node* forward = head_;
  Node* reverse = tail_;
  bool touched_at_end = false;
  for (unsigned i = 0; i < depth_ && forward != nullptr; ++i) {
    DecompressNode(forward, false);
    DecompressNode(reverse, false);
    if (forward == touched || reverse == touched) touched_at_end = true;
    // The two end regions meet: nothing is interior.
    if (forward == reverse || forward->next == reverse) return;
    forward = forward->next;
    reverse = reverse->prev;
  }
  if (touched != nullptr && !touched_at_end) CompressNode(touched);
  CompressNode(forward);
  CompressNode(reverse);
}

void Quicklist::Push(End end, std::string_view value) {
  Node* node = end == End::kHead ? head_ : tail_;
  ++count_;
  if (node != nullptr && AllowsInsert(node, value.size())) {
    if (end == End::kHead) {
      node->lp.Prepend(value);
    } else {
      node->lp.Append(value);
    }
    ++node->count;
    return;
  }
  Node* fresh = NewNodeOf(value);
  LinkAfter(end == End::kHead ? nullptr : tail_, fresh);
  Compress(fresh);
}

bool Quicklist::Pop(End end, std::string* out) {
  Node* node = end == End::kHead ? head_ : tail_;
  if (node == nullptr) return false;
  // The ends are plain (the compression invariant); a list without compression has no
  // compressed node at all.
  Listpack::Pos pos = end == End::kHead ? node->lp.First() : node->lp.Last();
  ListpackValueTo(node->lp.Get(pos), out);
  --count_;
  if (--node->count == 0) {
    Unlink(node);
    FreeNode(node);
    Compress(nullptr);
  } else {
    node->lp.Delete(pos);
  }
  return true;
}

Quicklist::Node* Quicklist::Locate(size_t index, size_t* in_node) const {
  if (index < count_ / 2) {
    Node* node = head_;
    while (index >= node->count) {
      index -= node->count;
      node = node->next;
    }
    *in_node = index;
    return node;
  }
  size_t from_tail = count_ - 1 - index;
  Node* node = tail_;
  while (from_tail >= node->count) {
    from_tail -= node->count;
    node = node->prev;
  }
  *in_node = node->count - 1 - from_tail;
  return node;
}

void Quicklist::DeleteRange(size_t start, size_t count) {
  if (start >= count_ || count == 0) return;
  size_t index = 0;
  Node* node = Locate(start, &index);
  Node* first_touched = nullptr;
  Node* last_touched = nullptr;
  while (count > 0 && node != nullptr) {
    Node* next = node->next;
    size_t del = std::min<size_t>(node->count - index, count);
    if (del == node->count) {
      Unlink(node);
      FreeNode(node);
    } else {
      DecompressNode(node, false);
      node->lp.DeleteRange(int64_t(index), del);
      node->count -= del;
      (first_touched ? last_touched : first_touched) = node;
    }
    count -= del;
    count_ -= del;
    index = 0;
    node = next;
  }
  Compress(first_touched);
  if (last_touched) Compress(last_touched);
}

void Quicklist::MergeInto(Node* a, Node* b) {
  DecompressNode(a, false);
  DecompressNode(b, false);
  std::string text;
  for (Listpack::Pos pos = b->lp.First(); pos != Listpack::kNoPos; pos = b->lp.Next(pos)) {
    ListpackValueTo(b->lp.Get(pos), &text);
    a->lp.Append(text);
  }
  a->count += b->count;
  Unlink(b);
  FreeNode(b);
}

void Quicklist::MergeAround(Node* node) {
  auto fits = [this](const Node* a, const Node* b) {
    return !a->isolated && !b->isolated &&
           WithinFill(fill_, a->ByteSize() + b->ByteSize() - kListpackFrame, a->count + b->count);
  };
  if (node->prev != nullptr && fits(node->prev, node)) {
    Node* prev = node->prev;
    MergeInto(prev, node);
    node = prev;
  }
  if (node->next != nullptr && fits(node, node->next)) MergeInto(node, node->next);
  Compress(node);
}

// --- Iterator

Quicklist::Iterator Quicklist::Begin(End from) {
  Iterator it(this, from);
  Node* node = from == End::kHead ? head_ : tail_;
  if (node != nullptr) {
    it.Enter(node, Listpack::kNoPos);
  }
  return it;
}

Quicklist::Iterator Quicklist::At(int64_t index, End direction) {
  Iterator it(this, direction);
  if (index < 0) index += int64_t(count_);
  if (index < 0 || size_t(index) >= count_) return it;
  size_t in_node = 0;
  Node* node = Locate(size_t(index), &in_node);
  it.Enter(node, Listpack::kNoPos);
  it.pos_ = node->lp.Seek(int64_t(in_node));
  return it;
}

Quicklist::Iterator::~Iterator() { Leave(); }

Quicklist::Iterator::Iterator(Iterator&& other) noexcept
    : list_(other.list_),
      direction_(other.direction_),
      node_(std::exchange(other.node_, nullptr)),
      pos_(other.pos_) {}

void Quicklist::Iterator::Enter(Node* node, Listpack::Pos pos) {
  node_ = node;
  if (node == nullptr) return;
  DecompressNode(node, true);
  if (pos == Listpack::kNoPos) pos = direction_ == End::kHead ? node->lp.First() : node->lp.Last();
  pos_ = pos;
}

void Quicklist::Iterator::Leave() {
  if (node_ != nullptr && node_->recompress) CompressNode(node_);
  node_ = nullptr;
}

Listpack::Value Quicklist::Iterator::Get() const { return node_->lp.Get(pos_); }

void Quicklist::Iterator::Next() {
  const bool forward = direction_ == End::kHead;
  pos_ = forward ? node_->lp.Next(pos_) : node_->lp.Prev(pos_);
  if (pos_ != Listpack::kNoPos) return;
  Node* next = forward ? node_->next : node_->prev;
  Leave();
  Enter(next, Listpack::kNoPos);
}

void Quicklist::Iterator::Erase() {
  Node* node = node_;
  const bool forward = direction_ == End::kHead;
  --list_->count_;
  if (--node->count == 0) {
    Node* next = forward ? node->next : node->prev;
    node_ = nullptr;
    list_->Unlink(node);
    list_->FreeNode(node);
    list_->Compress(nullptr);
    Enter(next, Listpack::kNoPos);
    return;
  }
  Listpack::Pos after = node->lp.Delete(pos_);
  if (forward) {
    pos_ = after;
  } else {
    pos_ = after == Listpack::kNoPos ? node->lp.Last() : node->lp.Prev(after);
  }
  if (pos_ != Listpack::kNoPos) return;
  Node* next = forward ? node->next : node->prev;
  Leave();
  Enter(next, Listpack::kNoPos);
}

void Quicklist::Iterator::Insert(std::string_view value, Listpack::Where where) {
  Quicklist* list = list_;
  Node* node = node_;
  Listpack::Pos pos = pos_;
  node_ = nullptr;  // the iterator ends here; the policy below decides compression
  ++list->count_;
  const bool after = where == Listpack::Where::kAfter;
  if (list->AllowsInsert(node, value.size())) {
    node->lp.Insert(pos, value, where);
    ++node->count;
    if (node->recompress) CompressNode(node);
    return;
  }
  const bool at_edge =
      after ? node->lp.Next(pos) == Listpack::kNoPos : node->lp.Prev(pos) == Listpack::kNoPos;
  if (node->recompress) CompressNode(node);
  if (at_edge) {
    // The neighbour on that side takes it if it has room, else a new node between.
    Node* neighbour = after ? node->next : node->prev;
    if (neighbour != nullptr && list->AllowsInsert(neighbour, value.size())) {
      DecompressNode(neighbour, false);
      if (after) {
        neighbour->lp.Prepend(value);
      } else {
        neighbour->lp.Append(value);
      }
      ++neighbour->count;
      list->Compress(neighbour);
      return;
    }
    Node* fresh = list->NewNodeOf(value);
    list->LinkAfter(after ? node : node->prev, fresh);
    list->Compress(fresh);
    return;
  }
  // Split the full node: the entries from the insertion point on move to a new node
  // after it, and the value ends the first half, or has a node of its own between the
  // halves when it is large.
  DecompressNode(node, false);
  Listpack::Pos split = after ? node->lp.Next(pos) : pos;
  size_t index = 0;
  for (Listpack::Pos p = node->lp.First(); p != split; p = node->lp.Next(p)) ++index;
  Listpack rest;
  std::string text;
  for (Listpack::Pos p = split; p != Listpack::kNoPos; p = node->lp.Next(p)) {
    ListpackValueTo(node->lp.Get(p), &text);
    rest.Append(text);
  }
  node->lp.DeleteRange(int64_t(index), node->count - index);
  node->count = index;
  Node* first_half_end = node;
  if (IsLarge(value.size())) {
    first_half_end = list->NewNodeOf(value);
    list->LinkAfter(node, first_half_end);
    list->Compress(first_half_end);
  } else {
    node->lp.Append(value);
    ++node->count;
  }
  Node* second = list->NewNode(std::move(rest));
  list->LinkAfter(first_half_end, second);
  list->MergeAround(second);
  // `node` survives MergeAround(second) (merges keep the first node of a pair).
  list->MergeAround(node);
}

void Quicklist::Iterator::Replace(std::string_view value) {
  Quicklist* list = list_;
  Node* node = node_;
  Listpack::Pos next = node->lp.Next(pos_);
  size_t old_bytes = (next == Listpack::kNoPos ? node->lp.ByteSize() - 1 : next) - pos_;
  size_t new_bytes = node->lp.ByteSize() - old_bytes + EntryBytes(value.size());
  const bool fits = !IsLarge(value.size()) && WithinFill(list->fill_, new_bytes, node->count);
  if (node->count == 1 || fits) {
    node->lp.Replace(pos_, value);
    node->isolated = IsLarge(value.size());
    Leave();
    return;
  }
  // Too big for its node, or large: insert the new value after it as a new element, then
  // erase the old one (Redis's way too).
  Listpack::Pos pos = pos_;
  size_t index = 0;
  for (Listpack::Pos p = node->lp.First(); p != pos; p = node->lp.Next(p)) ++index;
  size_t global = 0;
  for (Node* n = list->head_; n != node; n = n->next) global += n->count;
  global += index;
  Insert(value, Listpack::Where::kAfter);
  list->DeleteRange(global, 1);
}

// --- whole-list helpers

void Quicklist::SerializeNodes(std::string* out) const {
  for (const Node* node = head_; node != nullptr; node = node->next) {
    std::string_view bytes =
        node->compressed() ? DecompressLzfImage(node->image) : node->lp.bytes();
    char len[4];
    uint32_t n = bytes.size();
    memcpy(len, &n, 4);
    out->append(len, 4);
    out->append(bytes);
  }
}

void Quicklist::ForEachNode(
    absl::FunctionRef<void(std::string_view bytes, size_t raw_len)> fn) const {
  for (const Node* node = head_; node != nullptr; node = node->next) {
    if (node->compressed()) {
      fn(LzfImageStream(node->image), LzfImageRawSize(node->image));
    } else {
      fn(node->lp.bytes(), 0);
    }
  }
}

size_t Quicklist::OnlyNodeBytes() const {
  assert(node_count_ == 1);
  return head_->ByteSize();
}

bool Quicklist::OnlyNodeIsolated() const {
  assert(node_count_ == 1);
  return head_->isolated;
}

Listpack Quicklist::TakeOnlyNode() {
  assert(node_count_ == 1);
  Node* node = head_;
  DecompressNode(node, false);
  Listpack lp = std::move(node->lp);
  Unlink(node);
  FreeNode(node);
  count_ = 0;
  return lp;
}

void Quicklist::AppendNode(Listpack lp) {
  Node* node = NewNode(std::move(lp));
  if (node->count == 1) {
    node->isolated = IsLarge(node->lp.Get(node->lp.First()));
  }
  count_ += node->count;
  LinkAfter(tail_, node);
  Compress(node);
}

bool Quicklist::CheckInvariants() const {
  size_t total = 0;
  size_t nodes = 0;
  const Node* prev = nullptr;
  for (const Node* node = head_; node != nullptr; prev = node, node = node->next) {
    if (node->prev != prev || node->count == 0 || node->recompress) return false;
    if (!node->compressed() && node->lp.Size() != node->count) return false;
    if (node->isolated && node->count != 1) return false;
    if (!node->compressed() && node->count > 1) {
      const Listpack& lp = node->lp;
      for (Listpack::Pos pos = lp.First(); pos != Listpack::kNoPos; pos = lp.Next(pos)) {
        if (IsLarge(lp.Get(pos))) return false;
      }
    }
    total += node->count;
    ++nodes;
  }
  if (prev != tail_ || total != count_ || nodes != node_count_) return false;
  if (depth_ == 0) return CompressedNodeCount() == 0;
  size_t index = 0;
  for (const Node* node = head_; node != nullptr; node = node->next, ++index) {
    bool at_end = index < depth_ || index + depth_ >= nodes;
    if (at_end && node->compressed()) return false;
  }
  return true;
}

size_t Quicklist::CompressedNodeCount() const {
  size_t n = 0;
  for (const Node* node = head_; node != nullptr; node = node->next) n += node->compressed();
  return n;
}

}  // namespace damselfly::core
