#include "src/core/sorted_set.h"

#include <glog/logging.h>

#include <cmath>
#include <utility>

namespace damselfly::core {

SortedSet::SortedSet() = default;

SortedSet::~SortedSet() { FreeBlocks(); }

SortedSet& SortedSet::operator=(SortedSet&& other) noexcept {
  if (this != &other) {
    FreeBlocks();
    index_.Clear();
    tree_ = std::move(other.tree_);
    index_ = std::move(other.index_);
    block_bytes_ = std::exchange(other.block_bytes_, 0);
  }
  return *this;
}

void SortedSet::FreeBlocks() {
  index_.ForEach([](const ScoredMember* m) { ScoredMember::Free(m); });
}

bool SortedSet::FreeSome(size_t max) {
  tree_.Clear();  // its nodes (not the blocks) at the first step: ~1/60 of the elements
  return index_.DrainSome(max, [this](ScoredMember* m) {
    block_bytes_ -= m->MallocUsed();
    ScoredMember::Free(m);
  });
}

bool SortedSet::Add(std::string_view member, double score) {
  DCHECK(!std::isnan(score));
  ScoredMember* block = index_.Find(member);
  if (block == nullptr) {
    block = ScoredMember::Make(member, score);
    block_bytes_ += block->MallocUsed();
    index_.Insert(block);
    tree_.Insert(block);
    return true;
  }
  if (block->score() == score) return false;
  // The same block moves: out of the tree, new score, back in; the index keeps it.
  tree_.Erase(block->score(), member);
  block->set_score(score);
  tree_.Insert(block);
  return false;
}

bool SortedSet::Remove(std::string_view member) {
  ScoredMember* block = index_.Erase(member);
  if (block == nullptr) return false;
  tree_.Erase(block->score(), member);
  block_bytes_ -= block->MallocUsed();
  ScoredMember::Free(block);
  return true;
}

std::optional<double> SortedSet::Score(std::string_view member) const {
  const ScoredMember* block = index_.Find(member);
  if (block == nullptr) return std::nullopt;
  return block->score();
}

std::optional<size_t> SortedSet::Rank(std::string_view member) const {
  const ScoredMember* block = index_.Find(member);
  if (block == nullptr) return std::nullopt;
  return tree_.CountBefore(block->score(), member);
}

size_t SortedSet::CountScoreBelow(ScoreBound min) const {
  return tree_.CountScoreBelow(min.value, min.exclusive);
}

size_t SortedSet::CountScoreAtMost(ScoreBound max) const {
  return tree_.CountScoreBelow(max.value, !max.exclusive);
}

size_t SortedSet::CountLexBelow(LexBound min) const {
  switch (min.kind) {
    case LexBound::kMin:
      return 0;
    case LexBound::kMax:
      return Size();
    case LexBound::kInclusive:
      return tree_.CountMemberBelow(min.value, false);
    case LexBound::kExclusive:
      return tree_.CountMemberBelow(min.value, true);
  }
  return 0;
}

size_t SortedSet::CountLexAtMost(LexBound max) const {
  switch (max.kind) {
    case LexBound::kMin:
      return 0;
    case LexBound::kMax:
      return Size();
    case LexBound::kInclusive:
      return tree_.CountMemberBelow(max.value, true);
    case LexBound::kExclusive:
      return tree_.CountMemberBelow(max.value, false);
  }
  return 0;
}

std::pair<std::string_view, double> SortedSet::At(size_t rank) const {
  const ScoredMember* m = tree_.At(rank);
  return {m->member(), m->score()};
}

size_t SortedSet::EraseRanks(size_t start, size_t end) {
  return tree_.EraseRanks(start, end, [this](const ScoredMember* m) {
    index_.Erase(m->member());
    block_bytes_ -= m->MallocUsed();
    ScoredMember::Free(m);
  });
}

std::pair<std::string_view, double> SortedSet::Random(uint64_t rnd) const {
  const ScoredMember* m = index_.Random(rnd);
  return {m->member(), m->score()};
}

size_t SortedSet::MallocUsed() const {
  return tree_.NodeMallocUsed() + index_.TableMallocUsed() + block_bytes_;
}

bool SortedSet::Validate() const {
  if (!tree_.Validate()) return false;
  if (index_.Size() != tree_.Size()) {
    LOG(ERROR) << "index holds " << index_.Size() << ", tree " << tree_.Size();
    return false;
  }
  bool ok = true;
  size_t bytes = 0;
  tree_.ForEach([&](const ScoredMember* m) {
    bytes += m->MallocUsed();
    if (index_.Find(m->member()) != m) ok = false;
  });
  if (!ok) LOG(ERROR) << "a tree element is not the index's block for its member";
  if (bytes != block_bytes_) {
    LOG(ERROR) << "block bytes " << block_bytes_ << " but " << bytes;
    ok = false;
  }
  return ok;
}

}  // namespace damselfly::core
