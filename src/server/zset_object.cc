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
  if (encoding != ObjEncoding::kListpack || !core::Listpack::Validate(form)) return false;
  core::Listpack lp = core::Listpack::FromBytes(form);
  if (lp.Size() % 2 != 0) return false;
  value->SetListpack(ObjType::kZSet, std::move(lp));
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
  if (!value.holds_listpack()) large_ = &static_cast<ZSetTree*>(value.GetObject())->set;
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

void ZSetRef::MakeEmpty(PrimeValue* value) { value->SetListpack(ObjType::kZSet, core::Listpack()); }

void ZSetRef::Store(const SortedPairs& pairs, PrimeValue* value) {
  size_t longest = 0;
  for (const auto& [member, score] : pairs) longest = std::max(longest, member.size());
  if (pairs.size() > CollectionLimits::ZSetMaxListpackEntries() ||
      longest > CollectionLimits::ZSetMaxListpackValue()) {
    ZSetTree* tree = core::TypedObject::Make<ZSetTree>();
    tree->set.Reserve(pairs.size());
    for (const auto& [member, score] : pairs) tree->set.Add(member, score);
    value->SetObject(ObjType::kZSet, ObjEncoding::kSkiplist, tree);
    return;
  }
  core::Listpack lp;
  char buf[core::kMaxScoreChars];
  for (const auto& [member, score] : pairs) {
    lp.Append(member);
    lp.Append(core::FormatScore(score, buf));
  }
  value->SetListpack(ObjType::kZSet, std::move(lp));
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
        core::Listpack::SafeToAdd(lp_.ByteSize(), member.size() + core::kMaxScoreChars)) {
      Small().InsertNew(member, score);
      return SyncBlock();
    }
    ConvertToLarge();
  }
  large_->Add(member, score);
}

bool ZSetRef::Set(std::string_view member, double score) {
  if (large_) return large_->Add(member, score);
  if (Small().Score(member)) {
    bool added = Small().Set(member, score);
    SyncBlock();
    return added;
  }
  InsertNew(member, score);
  return true;
}

bool ZSetRef::Remove(std::string_view member) {
  if (large_) return large_->Remove(member);
  bool removed = Small().Remove(member);
  SyncBlock();
  return removed;
}

size_t ZSetRef::EraseRanks(size_t start, size_t end) {
  if (large_) return large_->EraseRanks(start, end);
  size_t erased = Small().EraseRanks(start, end);
  SyncBlock();
  return erased;
}

}  // namespace damselfly
