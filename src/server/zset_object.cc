#include "src/server/zset_object.h"

#include <cstring>

#include "src/server/collection_limits.h"

namespace damselfly {

namespace {

// Rebuilds a ZSetTree from its Serialize form; false when malformed or empty.
bool RebuildLarge(std::string_view form, PrimeValue* value) {
  ZSetTree* tree = core::TypedObject::Make<ZSetTree>();
  while (!form.empty()) {
    uint32_t len;
    double score;
    if (form.size() < sizeof(len)) break;
    memcpy(&len, form.data(), sizeof(len));
    form.remove_prefix(sizeof(len));
    if (form.size() < size_t{len} + sizeof(score)) break;
    std::string_view member = form.substr(0, len);
    memcpy(&score, form.data() + len, sizeof(score));
    form.remove_prefix(len + sizeof(score));
    tree->set.Add(member, score);
  }
  if (!form.empty() || tree->set.Size() == 0) {
    core::TypedObject::Destroy(tree);
    return false;
  }
  value->SetObject(ObjType::kZSet, ObjEncoding::kSkiplist, tree);
  return true;
}

bool RebuildZSet(ObjEncoding encoding, std::string_view form, PrimeValue* value) {
  if (encoding == ObjEncoding::kSkiplist) return RebuildLarge(form, value);
  if (encoding != ObjEncoding::kListpack) return false;
  std::optional<core::PairPack> pack = core::PairPack::FromBytes(form);
  if (!pack || !core::ZSetPack(&*pack).Valid()) return false;
  value->SetPairPack(ObjType::kZSet, std::move(*pack));
  return true;
}

}  // namespace

void RegisterZSetFactory() { RegisterTypedObjectFactory(ObjType::kZSet, RebuildZSet); }

size_t ZSetTree::MallocUsed() const {
  return core::ObjUsableSize(const_cast<ZSetTree*>(this)) + set.MallocUsed();
}

void ZSetTree::Serialize(std::string* out) const {
  set.Walk(0, set.Size(), false, [&](std::string_view member, double score) {
    uint32_t len = member.size();
    out->append(reinterpret_cast<const char*>(&len), sizeof(len));
    out->append(member);
    out->append(reinterpret_cast<const char*>(&score), sizeof(score));
    return true;
  });
}

ZSetView::ZSetView(const PrimeValue& value) : lp_(value) {
  if (!value.holds_block()) large_ = &static_cast<ZSetTree*>(value.GetObject())->set;
}

std::pair<std::string, double> ZSetView::At(size_t rank) const {
  if (large_) {
    auto [member, score] = large_->At(rank);
    return {std::string(member), score};
  }
  char buf[core::kMaxScoreChars];
  auto [member, score] = Small().At(rank, buf);
  return {std::string(member), score};
}

void ZSetRef::MakeEmpty(PrimeValue* value) { value->SetPairPack(ObjType::kZSet, core::PairPack()); }

void ZSetRef::Store(const SortedPairs& pairs, PrimeValue* value) {
  size_t longest = 0, total = core::PairPack::kHeaderSize;
  for (const auto& [member, score] : pairs) {
    longest = std::max(longest, member.size());
    total += member.size() + core::ZSetPack::kMaxPairOverhead;
  }
  if (pairs.size() > CollectionLimits::ZSetMaxListpackEntries() ||
      longest > CollectionLimits::ZSetMaxListpackValue() || !core::PairPack::Fits(0, total)) {
    ZSetTree* tree = core::TypedObject::Make<ZSetTree>();
    tree->set.Reserve(pairs.size());
    for (const auto& [member, score] : pairs) tree->set.Add(member, score);
    value->SetObject(ObjType::kZSet, ObjEncoding::kSkiplist, tree);
    return;
  }
  core::PairPack pack;
  core::ZSetPack zset(&pack);
  for (auto it = pairs.rbegin(); it != pairs.rend(); ++it) {
    zset.InsertNew(it->first, it->second);  // at the front: no walk
  }
  value->SetPairPack(ObjType::kZSet, std::move(pack));
}

void ZSetRef::ConvertToLarge() {
  ZSetTree* tree = core::TypedObject::Make<ZSetTree>();
  tree->set.Reserve(Size());
  Small().Walk(0, Size(), false, [&](std::string_view member, double score) {
    tree->set.Add(member, score);
    return true;
  });
  lp_.Release();  // the value frees the block as it takes the tree
  value_->SetObject(ObjType::kZSet, ObjEncoding::kSkiplist, tree);
  large_ = &tree->set;
}

void ZSetRef::InsertNew(std::string_view member, double score) {
  if (!large_) {
    // Redis's zsetAdd: convert before an insertion that would pass a limit.
    if (Size() + 1 <= CollectionLimits::ZSetMaxListpackEntries() &&
        member.size() <= CollectionLimits::ZSetMaxListpackValue() &&
        core::PairPack::Fits(lp_.ByteSize(), member.size() + core::ZSetPack::kMaxPairOverhead)) {
      Small().InsertNew(member, score);
      return SyncBlock();
    }
    ConvertToLarge();
  }
  large_->Add(member, score);
}

void ZSetRef::MakeRoom(size_t bytes) {
  if (!large_ && !core::PairPack::Fits(lp_.ByteSize(), bytes)) ConvertToLarge();
}

bool ZSetRef::Set(std::string_view member, double score) {
  // A new score moves the member: room for it as for a new one (near a 1 MiB pack).
  MakeRoom(member.size() + core::ZSetPack::kMaxPairOverhead);
  if (large_) return large_->Add(member, score);
  if (Small().Update(member, score)) {
    SyncBlock();
    return false;
  }
  InsertNew(member, score);  // converts when the new member passes a limit
  return true;
}

bool ZSetRef::Remove(std::string_view member) {
  MakeRoom(core::ZSetPack::kMaxEraseGrowth);
  if (large_) return large_->Remove(member);
  bool removed = Small().Remove(member);
  SyncBlock();
  return removed;
}

size_t ZSetRef::EraseRanks(size_t start, size_t end) {
  MakeRoom(core::ZSetPack::kMaxEraseGrowth);
  if (large_) return large_->EraseRanks(start, end);
  size_t erased = Small().EraseRanks(start, end);
  SyncBlock();
  return erased;
}

}  // namespace damselfly
