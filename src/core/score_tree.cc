#include "src/core/score_tree.h"

#include <glog/logging.h>

#include <algorithm>
#include <utility>

#include "src/core/obj_malloc.h"

namespace damselfly::core {

ScoredMember* ScoredMember::Make(std::string_view member, double score) {
  uint8_t length[10];
  unsigned length_bytes = 0;
  size_t rest = member.size();
  do {
    uint8_t byte = rest & 0x7f;
    rest >>= 7;
    if (rest != 0) byte |= 0x80;
    length[length_bytes++] = byte;
  } while (rest != 0);
  char* block = static_cast<char*>(ObjMalloc(sizeof(double) + length_bytes + member.size()));
  std::memcpy(block, &score, sizeof(double));
  std::memcpy(block + sizeof(double), length, length_bytes);
  if (!member.empty()) {
    std::memcpy(block + sizeof(double) + length_bytes, member.data(), member.size());
  }
  return reinterpret_cast<ScoredMember*>(block);
}

void ScoredMember::Free(const ScoredMember* block) { ObjFree(const_cast<ScoredMember*>(block)); }

size_t ScoredMember::MallocUsed() const { return ObjUsableSize(const_cast<ScoredMember*>(this)); }

std::string_view ScoredMember::LongMember(const uint8_t* p) {
  size_t length = 0;
  unsigned shift = 0;
  while (true) {
    uint8_t byte = *p++;
    length |= static_cast<size_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
    shift += 7;
  }
  return {reinterpret_cast<const char*>(p), length};
}

namespace {

constexpr unsigned kLeafMin = ScoreTree::kLeafCapacity / 2;
constexpr unsigned kInnerMin = ScoreTree::kInnerCapacity / 2;

// (score, member) < (s, m's member), reading m only on equal scores.
inline bool KeyLess(double score, std::string_view member, double s, const ScoredMember* m) {
  if (score < s) return true;
  if (s < score) return false;
  return member < m->member();
}

// (s, m's member) < (score, member), reading m only on equal scores.
inline bool ElementLess(double s, const ScoredMember* m, double score, std::string_view member) {
  if (s < score) return true;
  if (score < s) return false;
  return m->member() < member;
}

}  // namespace

ScoreTree::ScoreTree() : root_(nullptr), height_(0), size_(0) { root_ = NewLeaf(); }

ScoreTree::~ScoreTree() {
  if (root_ != nullptr) FreeSubtree(root_, 0);
}

ScoreTree::ScoreTree(ScoreTree&& other) noexcept
    : root_(std::exchange(other.root_, nullptr)),
      height_(std::exchange(other.height_, 0)),
      size_(std::exchange(other.size_, 0)),
      leaves_(std::exchange(other.leaves_, 0)),
      inners_(std::exchange(other.inners_, 0)) {}

ScoreTree& ScoreTree::operator=(ScoreTree&& other) noexcept {
  if (this != &other) {
    if (root_ != nullptr) FreeSubtree(root_, 0);
    root_ = std::exchange(other.root_, nullptr);
    height_ = std::exchange(other.height_, 0);
    size_ = std::exchange(other.size_, 0);
    leaves_ = std::exchange(other.leaves_, 0);
    inners_ = std::exchange(other.inners_, 0);
  }
  return *this;
}

ScoreTree::Leaf* ScoreTree::NewLeaf() {
  Leaf* leaf = static_cast<Leaf*>(ObjMalloc(sizeof(Leaf)));
  leaf->count = 0;
  ++leaves_;
  return leaf;
}

ScoreTree::Inner* ScoreTree::NewInner() {
  Inner* inner = static_cast<Inner*>(ObjMalloc(sizeof(Inner)));
  inner->count = 0;
  ++inners_;
  return inner;
}

void ScoreTree::FreeLeaf(Leaf* leaf) {
  ObjFree(leaf);
  --leaves_;
}

void ScoreTree::FreeInner(Inner* inner) {
  ObjFree(inner);
  --inners_;
}

void ScoreTree::FreeSubtree(void* node, unsigned level) {
  if (level == height_) {
    FreeLeaf(static_cast<Leaf*>(node));
    return;
  }
  Inner* inner = static_cast<Inner*>(node);
  for (unsigned i = 0; i < inner->count; ++i) FreeSubtree(inner->child[i], level + 1);
  FreeInner(inner);
}

void ScoreTree::Clear() {
  if (root_ != nullptr) FreeSubtree(root_, 0);
  height_ = 0;
  size_ = 0;
  root_ = NewLeaf();
}

size_t ScoreTree::NodeMallocUsed() const {
  return leaves_ * ObjGoodSize(sizeof(Leaf)) + inners_ * ObjGoodSize(sizeof(Inner));
}

void ScoreTree::FindRank(size_t rank, Path* path) const {
  DCHECK_LT(rank, size_);
  void* node = root_;
  for (unsigned level = 0; level < height_; ++level) {
    const Inner* inner = static_cast<const Inner*>(node);
    unsigned i = 0;
    while (rank >= inner->subtree[i]) {
      rank -= inner->subtree[i];
      ++i;
    }
    path->node[level] = node;
    path->index[level] = i;
    node = inner->child[i];
  }
  path->node[height_] = node;
  path->index[height_] = static_cast<unsigned>(rank);
}

bool ScoreTree::FindKey(double score, std::string_view member, Path* path) const {
  void* node = root_;
  for (unsigned level = 0; level < height_; ++level) {
    const Inner* inner = static_cast<const Inner*>(node);
    // The last child whose first element is not above the key (child 0 when none is).
    unsigned i = 1;
    while (i < inner->count && !KeyLess(score, member, inner->first_score[i], inner->first[i])) {
      ++i;
    }
    path->node[level] = node;
    path->index[level] = i - 1;
    node = inner->child[i - 1];
  }
  const Leaf* leaf = static_cast<const Leaf*>(node);
  unsigned lo = 0, hi = leaf->count;  // lower bound: first element not below the key
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    const ScoredMember* m = leaf->items[mid];
    if (ElementLess(m->score(), m, score, member)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  path->node[height_] = node;
  path->index[height_] = lo;
  if (lo == leaf->count) return false;
  const ScoredMember* m = leaf->items[lo];
  return m->score() == score && m->member() == member;
}

template <typename Pred>
size_t ScoreTree::CountPrefix(const Pred& in_prefix) const {
  size_t count = 0;
  const void* node = root_;
  for (unsigned level = 0; level < height_; ++level) {
    const Inner* inner = static_cast<const Inner*>(node);
    if (!in_prefix(inner->first_score[0], inner->first[0])) return count;
    unsigned i = 1;
    while (i < inner->count && in_prefix(inner->first_score[i], inner->first[i])) {
      count += inner->subtree[i - 1];
      ++i;
    }
    node = inner->child[i - 1];
  }
  const Leaf* leaf = static_cast<const Leaf*>(node);
  unsigned lo = 0, hi = leaf->count;
  while (lo < hi) {
    unsigned mid = (lo + hi) / 2;
    const ScoredMember* m = leaf->items[mid];
    if (in_prefix(m->score(), m)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return count + lo;
}

size_t ScoreTree::CountBefore(double score, std::string_view member) const {
  return CountPrefix([score, member](double s, const ScoredMember* m) {
    return ElementLess(s, m, score, member);
  });
}

size_t ScoreTree::CountScoreBelow(double score, bool or_equal) const {
  if (or_equal) return CountPrefix([score](double s, const ScoredMember*) { return s <= score; });
  return CountPrefix([score](double s, const ScoredMember*) { return s < score; });
}

size_t ScoreTree::CountMemberBelow(std::string_view member, bool or_equal) const {
  if (or_equal) {
    return CountPrefix([member](double, const ScoredMember* m) { return m->member() <= member; });
  }
  return CountPrefix([member](double, const ScoredMember* m) { return m->member() < member; });
}

const ScoredMember* ScoreTree::At(size_t rank) const {
  Path path;
  FindRank(rank, &path);
  return static_cast<const Leaf*>(path.node[height_])->items[path.index[height_]];
}

void ScoreTree::Insert(const ScoredMember* m) {
  Path path;
  bool found = FindKey(m->score(), m->member(), &path);
  DCHECK(!found) << "duplicate element";
  (void)found;
  InsertAt(&path, m);
}

const ScoredMember* ScoreTree::Erase(double score, std::string_view member) {
  Path path;
  if (!FindKey(score, member, &path)) return nullptr;
  const ScoredMember* m = static_cast<Leaf*>(path.node[height_])->items[path.index[height_]];
  RemoveAt(&path, 1);
  return m;
}

// Sets the first element of the subtree at path.node[level] in its ancestors: in its parent,
// and further up while it is the first child.
void ScoreTree::SetFirstChain(const Path& path, unsigned level, const ScoredMember* first) {
  double score = first->score();
  while (level > 0) {
    --level;
    Inner* parent = static_cast<Inner*>(path.node[level]);
    unsigned i = path.index[level];
    parent->first[i] = first;
    parent->first_score[i] = score;
    if (i != 0) break;
  }
}

void ScoreTree::InsertAt(Path* path, const ScoredMember* m) {
  ++size_;
  for (unsigned level = 0; level < height_; ++level) {
    ++static_cast<Inner*>(path->node[level])->subtree[path->index[level]];
  }
  Leaf* leaf = static_cast<Leaf*>(path->node[height_]);
  unsigned pos = path->index[height_];
  if (pos == 0) SetFirstChain(*path, height_, m);
  if (leaf->count < kLeafCapacity) {
    std::memmove(leaf->items + pos + 1, leaf->items + pos, (leaf->count - pos) * sizeof(m));
    leaf->items[pos] = m;
    ++leaf->count;
    return;
  }
  if (height_ > 0) {
    // Hand an element to a neighbour with room rather than split.
    Inner* parent = static_cast<Inner*>(path->node[height_ - 1]);
    unsigned i = path->index[height_ - 1];
    if (i + 1 < parent->count) {
      Leaf* right = static_cast<Leaf*>(parent->child[i + 1]);
      if (right->count < kLeafCapacity) {
        std::memmove(right->items + 1, right->items, right->count * sizeof(m));
        ++right->count;
        if (pos == kLeafCapacity) {
          right->items[0] = m;
        } else {
          right->items[0] = leaf->items[kLeafCapacity - 1];
          std::memmove(leaf->items + pos + 1, leaf->items + pos,
                       (kLeafCapacity - 1 - pos) * sizeof(m));
          leaf->items[pos] = m;
        }
        parent->first[i + 1] = right->items[0];
        parent->first_score[i + 1] = right->items[0]->score();
        --parent->subtree[i];
        ++parent->subtree[i + 1];
        return;
      }
    }
    if (i > 0) {
      Leaf* left = static_cast<Leaf*>(parent->child[i - 1]);
      if (left->count < kLeafCapacity) {
        if (pos == 0) {
          left->items[left->count++] = m;
        } else {
          left->items[left->count++] = leaf->items[0];
          std::memmove(leaf->items, leaf->items + 1, (pos - 1) * sizeof(m));
          leaf->items[pos - 1] = m;
        }
        parent->first[i] = leaf->items[0];
        parent->first_score[i] = leaf->items[0]->score();
        --parent->subtree[i];
        ++parent->subtree[i - 1];
        return;
      }
    }
  }
  SplitLeaf(path, m);
}

void ScoreTree::SplitLeaf(Path* path, const ScoredMember* m) {
  Leaf* leaf = static_cast<Leaf*>(path->node[height_]);
  unsigned pos = path->index[height_];
  bool first_leaf = true, last_leaf = true;
  for (unsigned level = 0; level < height_; ++level) {
    unsigned i = path->index[level];
    if (i != 0) first_leaf = false;
    if (i + 1 != static_cast<Inner*>(path->node[level])->count) last_leaf = false;
  }
  const ScoredMember* all[kLeafCapacity + 1];
  std::memcpy(all, leaf->items, pos * sizeof(m));
  all[pos] = m;
  std::memcpy(all + pos + 1, leaf->items + pos, (kLeafCapacity - pos) * sizeof(m));
  unsigned keep = (kLeafCapacity + 1) / 2;
  if (last_leaf && pos == kLeafCapacity) {
    keep = kLeafCapacity;
  } else if (first_leaf && pos == 0) {
    keep = 1;
  }
  Leaf* right = NewLeaf();
  std::memcpy(leaf->items, all, keep * sizeof(m));
  leaf->count = keep;
  right->count = kLeafCapacity + 1 - keep;
  std::memcpy(right->items, all + keep, right->count * sizeof(m));
  if (height_ == 0) {
    Inner* root = NewInner();
    root->count = 1;
    root->child[0] = leaf;
    root->subtree[0] = keep;
    root->first[0] = leaf->items[0];
    root->first_score[0] = leaf->items[0]->score();
    std::memmove(path->node + 1, path->node, (height_ + 1) * sizeof(void*));
    std::memmove(path->index + 1, path->index, (height_ + 1) * sizeof(unsigned));
    path->node[0] = root;
    path->index[0] = 0;
    root_ = root;
    ++height_;
  } else {
    static_cast<Inner*>(path->node[height_ - 1])->subtree[path->index[height_ - 1]] = keep;
  }
  InsertChild(path, height_ - 1, path->index[height_ - 1] + 1, right, right->count,
              right->items[0]);
}

// Inserts a child at `pos` of path->node[level]; its count is already in the ancestors'.
void ScoreTree::InsertChild(Path* path, unsigned level, unsigned pos, void* child, uint64_t count,
                            const ScoredMember* first) {
  Inner* inner = static_cast<Inner*>(path->node[level]);
  auto put = [](Inner* node, unsigned at, void* c, uint64_t n, const ScoredMember* f) {
    unsigned tail = node->count - at;
    std::memmove(node->child + at + 1, node->child + at, tail * sizeof(void*));
    std::memmove(node->subtree + at + 1, node->subtree + at, tail * sizeof(uint64_t));
    std::memmove(node->first + at + 1, node->first + at, tail * sizeof(f));
    std::memmove(node->first_score + at + 1, node->first_score + at, tail * sizeof(double));
    node->child[at] = c;
    node->subtree[at] = n;
    node->first[at] = f;
    node->first_score[at] = f->score();
    ++node->count;
  };
  if (inner->count < kInnerCapacity) {
    put(inner, pos, child, count, first);
    return;
  }
  // Split in halves; the new child goes to the half that holds its position.
  Inner* right = NewInner();
  constexpr unsigned kKeep = (kInnerCapacity + 1) / 2;
  if (pos < kKeep) {
    unsigned moved = kInnerCapacity - (kKeep - 1);
    std::memcpy(right->child, inner->child + kKeep - 1, moved * sizeof(void*));
    std::memcpy(right->subtree, inner->subtree + kKeep - 1, moved * sizeof(uint64_t));
    std::memcpy(right->first, inner->first + kKeep - 1, moved * sizeof(first));
    std::memcpy(right->first_score, inner->first_score + kKeep - 1, moved * sizeof(double));
    right->count = moved;
    inner->count = kKeep - 1;
    put(inner, pos, child, count, first);
  } else {
    unsigned moved = kInnerCapacity - kKeep;
    std::memcpy(right->child, inner->child + kKeep, moved * sizeof(void*));
    std::memcpy(right->subtree, inner->subtree + kKeep, moved * sizeof(uint64_t));
    std::memcpy(right->first, inner->first + kKeep, moved * sizeof(first));
    std::memcpy(right->first_score, inner->first_score + kKeep, moved * sizeof(double));
    right->count = moved;
    inner->count = kKeep;
    put(right, pos - kKeep, child, count, first);
  }
  uint64_t left_total = 0, right_total = 0;
  for (unsigned i = 0; i < inner->count; ++i) left_total += inner->subtree[i];
  for (unsigned i = 0; i < right->count; ++i) right_total += right->subtree[i];
  if (level == 0) {
    Inner* root = NewInner();
    root->count = 1;
    root->child[0] = inner;
    root->subtree[0] = left_total;
    root->first[0] = inner->first[0];
    root->first_score[0] = inner->first_score[0];
    std::memmove(path->node + 1, path->node, (height_ + 1) * sizeof(void*));
    std::memmove(path->index + 1, path->index, (height_ + 1) * sizeof(unsigned));
    path->node[0] = root;
    path->index[0] = 0;
    root_ = root;
    ++height_;
    ++level;
  } else {
    static_cast<Inner*>(path->node[level - 1])->subtree[path->index[level - 1]] = left_total;
  }
  InsertChild(path, level - 1, path->index[level - 1] + 1, right, right_total, right->first[0]);
}

void ScoreTree::RemoveAt(Path* path, unsigned n) {
  Leaf* leaf = static_cast<Leaf*>(path->node[height_]);
  unsigned pos = path->index[height_];
  DCHECK_LE(pos + n, leaf->count);
  size_ -= n;
  for (unsigned level = 0; level < height_; ++level) {
    static_cast<Inner*>(path->node[level])->subtree[path->index[level]] -= n;
  }
  std::memmove(leaf->items + pos, leaf->items + pos + n,
               (leaf->count - pos - n) * sizeof(leaf->items[0]));
  leaf->count -= n;
  if (height_ == 0) return;
  size_t rank_after = 0;
  if (pos == 0) {
    // The removed blocks may be named as first elements on the way up; the element that
    // followed them (if any) is the new first of every such subtree. Find its rank now,
    // before rebalancing moves things around.
    for (unsigned level = 0; level < height_; ++level) {
      const Inner* inner = static_cast<const Inner*>(path->node[level]);
      for (unsigned i = 0; i < path->index[level]; ++i) rank_after += inner->subtree[i];
    }
  }
  Rebalance(path);
  if (pos == 0 && rank_after < size_ && height_ > 0) {
    Path after;
    FindRank(rank_after, &after);
    const Leaf* found = static_cast<const Leaf*>(after.node[height_]);
    SetFirstChain(after, height_, found->items[0]);
  }
}

void ScoreTree::Rebalance(Path* path) {
  for (unsigned level = height_; level > 0; --level) {
    Inner* parent = static_cast<Inner*>(path->node[level - 1]);
    unsigned i = path->index[level - 1];
    bool is_leaf = level == height_;
    unsigned count = is_leaf ? static_cast<Leaf*>(parent->child[i])->count
                             : static_cast<Inner*>(parent->child[i])->count;
    if (count >= (is_leaf ? kLeafMin : kInnerMin)) break;
    unsigned l = i + 1 < parent->count ? i : i - 1;
    unsigned r = l + 1;
    DCHECK_LT(r, parent->count);
    if (is_leaf) {
      Leaf* left = static_cast<Leaf*>(parent->child[l]);
      Leaf* right = static_cast<Leaf*>(parent->child[r]);
      unsigned total = left->count + right->count;
      if (total <= kLeafCapacity) {
        std::memcpy(left->items + left->count, right->items, right->count * sizeof(left->items[0]));
        left->count = total;
        FreeLeaf(right);
      } else {
        unsigned want = total / 2;
        if (left->count < want) {
          unsigned k = want - left->count;
          std::memcpy(left->items + left->count, right->items, k * sizeof(left->items[0]));
          std::memmove(right->items, right->items + k, (right->count - k) * sizeof(left->items[0]));
          left->count += k;
          right->count -= k;
        } else {
          unsigned k = left->count - want;
          std::memmove(right->items + k, right->items, right->count * sizeof(left->items[0]));
          std::memcpy(right->items, left->items + want, k * sizeof(left->items[0]));
          left->count -= k;
          right->count += k;
        }
        parent->subtree[l] = left->count;
        parent->subtree[r] = right->count;
        parent->first[r] = right->items[0];
        parent->first_score[r] = right->items[0]->score();
        parent->first[l] = left->items[0];
        parent->first_score[l] = left->items[0]->score();
        break;
      }
      parent->subtree[l] = total;
      parent->first[l] = left->items[0];
      parent->first_score[l] = left->items[0]->score();
    } else {
      Inner* left = static_cast<Inner*>(parent->child[l]);
      Inner* right = static_cast<Inner*>(parent->child[r]);
      unsigned total = left->count + right->count;
      auto move = [](Inner* to, unsigned to_at, Inner* from, unsigned from_at, unsigned k) {
        std::memmove(to->child + to_at, from->child + from_at, k * sizeof(void*));
        std::memmove(to->subtree + to_at, from->subtree + from_at, k * sizeof(uint64_t));
        std::memmove(to->first + to_at, from->first + from_at, k * sizeof(to->first[0]));
        std::memmove(to->first_score + to_at, from->first_score + from_at, k * sizeof(double));
      };
      if (total <= kInnerCapacity) {
        move(left, left->count, right, 0, right->count);
        left->count = total;
        parent->subtree[l] += parent->subtree[r];
        FreeInner(right);
      } else {
        unsigned want = total / 2;
        if (left->count < want) {
          unsigned k = want - left->count;
          move(left, left->count, right, 0, k);
          move(right, 0, right, k, right->count - k);
          left->count += k;
          right->count -= k;
        } else {
          unsigned k = left->count - want;
          move(right, k, right, 0, right->count);
          move(right, 0, left, want, k);
          left->count -= k;
          right->count += k;
        }
        uint64_t left_total = 0;
        for (unsigned j = 0; j < left->count; ++j) left_total += left->subtree[j];
        parent->subtree[r] = parent->subtree[l] + parent->subtree[r] - left_total;
        parent->subtree[l] = left_total;
        parent->first[r] = right->first[0];
        parent->first_score[r] = right->first_score[0];
        parent->first[l] = left->first[0];
        parent->first_score[l] = left->first_score[0];
        break;
      }
      parent->first[l] = left->first[0];
      parent->first_score[l] = left->first_score[0];
    }
    // The parent lost child r.
    unsigned tail = parent->count - r - 1;
    std::memmove(parent->child + r, parent->child + r + 1, tail * sizeof(void*));
    std::memmove(parent->subtree + r, parent->subtree + r + 1, tail * sizeof(uint64_t));
    std::memmove(parent->first + r, parent->first + r + 1, tail * sizeof(parent->first[0]));
    std::memmove(parent->first_score + r, parent->first_score + r + 1, tail * sizeof(double));
    --parent->count;
  }
  // A root with one child gives way to it.
  while (height_ > 0 && static_cast<Inner*>(root_)->count == 1) {
    Inner* old = static_cast<Inner*>(root_);
    root_ = old->child[0];
    FreeInner(old);
    --height_;
  }
}

bool ScoreTree::Cursor::Next() {
  const Leaf* leaf = static_cast<const Leaf*>(path_.node[height_]);
  if (path_.index[height_] + 1 < leaf->count) {
    ++path_.index[height_];
    return true;
  }
  unsigned level = height_;
  while (level > 0) {
    --level;
    const Inner* inner = static_cast<const Inner*>(path_.node[level]);
    if (path_.index[level] + 1 < inner->count) {
      ++path_.index[level];
      for (unsigned down = level + 1; down <= height_; ++down) {
        path_.node[down] =
            static_cast<const Inner*>(path_.node[down - 1])->child[path_.index[down - 1]];
        path_.index[down] = 0;
      }
      return true;
    }
  }
  return false;
}

bool ScoreTree::Cursor::Prev() {
  if (path_.index[height_] > 0) {
    --path_.index[height_];
    return true;
  }
  unsigned level = height_;
  while (level > 0) {
    --level;
    if (path_.index[level] > 0) {
      --path_.index[level];
      for (unsigned down = level + 1; down <= height_; ++down) {
        path_.node[down] =
            static_cast<const Inner*>(path_.node[down - 1])->child[path_.index[down - 1]];
        path_.index[down] = down == height_
                                ? static_cast<const Leaf*>(path_.node[down])->count - 1
                                : static_cast<const Inner*>(path_.node[down])->count - 1;
      }
      return true;
    }
  }
  return false;
}

bool ScoreTree::Validate() const {
  size_t count = 0;
  const ScoredMember* first = nullptr;
  const ScoredMember* last = nullptr;
  if (!ValidateNode(root_, 0, true, true, &count, &first, &last)) return false;
  if (count != size_) {
    LOG(ERROR) << "size " << size_ << " but " << count << " elements";
    return false;
  }
  size_t leaves = 0, inners = 0;
  // Node counters must match the nodes reachable from the root.
  struct Counter {
    const ScoreTree* tree;
    size_t* leaves;
    size_t* inners;
    void Walk(const void* node, unsigned level) {
      if (level == tree->height_) {
        ++*leaves;
        return;
      }
      ++*inners;
      const Inner* inner = static_cast<const Inner*>(node);
      for (unsigned i = 0; i < inner->count; ++i) Walk(inner->child[i], level + 1);
    }
  } counter{this, &leaves, &inners};
  counter.Walk(root_, 0);
  if (leaves != leaves_ || inners != inners_) {
    LOG(ERROR) << "node counters " << leaves_ << "/" << inners_ << " but " << leaves << "/"
               << inners;
    return false;
  }
  return true;
}

bool ScoreTree::ValidateNode(const void* node, unsigned level, bool leftmost, bool rightmost,
                             size_t* count, const ScoredMember** first,
                             const ScoredMember** last) const {
  auto less = [](const ScoredMember* a, const ScoredMember* b) {
    return KeyLess(a->score(), a->member(), b->score(), b);
  };
  if (level == height_) {
    const Leaf* leaf = static_cast<const Leaf*>(node);
    if (leaf->count > kLeafCapacity || (level > 0 && leaf->count == 0)) {
      LOG(ERROR) << "leaf count " << leaf->count;
      return false;
    }
    if (level > 0 && !leftmost && !rightmost && leaf->count < kLeafMin) {
      LOG(ERROR) << "inner leaf underfull: " << leaf->count;
      return false;
    }
    for (unsigned i = 0; i < leaf->count; ++i) {
      const ScoredMember* m = leaf->items[i];
      if (*last != nullptr && !less(*last, m)) {
        LOG(ERROR) << "order broken at " << m->member();
        return false;
      }
      if (*first == nullptr) *first = m;
      *last = m;
    }
    *count += leaf->count;
    return true;
  }
  const Inner* inner = static_cast<const Inner*>(node);
  unsigned min = level == 0 ? 2 : kInnerMin;
  if (inner->count < min || inner->count > kInnerCapacity) {
    LOG(ERROR) << "inner count " << inner->count << " at level " << level;
    return false;
  }
  for (unsigned i = 0; i < inner->count; ++i) {
    size_t sub = 0;
    const ScoredMember* sub_first = nullptr;
    if (!ValidateNode(inner->child[i], level + 1, leftmost && i == 0,
                      rightmost && i + 1 == inner->count, &sub, &sub_first, last)) {
      return false;
    }
    if (sub != inner->subtree[i] || sub_first != inner->first[i] ||
        sub_first->score() != inner->first_score[i]) {
      LOG(ERROR) << "child " << i << " at level " << level << ": count " << sub << " vs "
                 << inner->subtree[i] << ", first mismatch " << (sub_first != inner->first[i]);
      return false;
    }
    if (*first == nullptr) *first = sub_first;
    *count += sub;
  }
  return true;
}

}  // namespace damselfly::core
