#include "src/server/zset_object.h"

#include <cstring>
#include <new>

#include "src/server/collection_limits.h"

namespace damselfly {

namespace {

core::SortedSet* NewSortedSet() {
  return new (core::ObjMalloc(sizeof(core::SortedSet))) core::SortedSet;
}

// The large encoding's form: per element, a u32 member length, the member, the score's
// 8 bytes (host order: the form never leaves the process).
core::TypedObject* RebuildLarge(std::string_view form) {
  core::SortedSet* large = NewSortedSet();
  ZSetObject* zset = core::TypedObject::Make<ZSetObject>(large);
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
    large->Add(member, score);
  }
  if (!form.empty() || large->Size() == 0) {
    core::TypedObject::Destroy(zset);
    return nullptr;
  }
  return zset;
}

core::TypedObject* RebuildZSet(ObjEncoding encoding, std::string_view form) {
  if (encoding == ObjEncoding::kSkiplist) return RebuildLarge(form);
  if (encoding != ObjEncoding::kListpack || !core::Listpack::Validate(form)) return nullptr;
  core::Listpack lp = core::Listpack::FromBytes(form);
  if (lp.Size() % 2 != 0) return nullptr;
  return core::TypedObject::Make<ZSetObject>(std::move(lp));
}

}  // namespace

void ZSetObject::RegisterFactory() { RegisterTypedObjectFactory(ObjType::kZSet, ObjectFactory<ObjType::kZSet, RebuildZSet>); }

ZSetObject::~ZSetObject() {
  if (large_) {
    large_->~SortedSet();
    core::ObjFree(large_);
  }
}

ZSetObject* ZSetObject::FromSorted(const SortedPairs& pairs) {
  size_t longest = 0;
  for (const auto& [member, score] : pairs) longest = std::max(longest, member.size());
  if (pairs.size() > CollectionLimits::ZSetMaxListpackEntries() ||
      longest > CollectionLimits::ZSetMaxListpackValue()) {
    core::SortedSet* large = NewSortedSet();
    large->Reserve(pairs.size());
    for (const auto& [member, score] : pairs) large->Add(member, score);
    return Make<ZSetObject>(large);
  }
  ZSetObject* zset = Make<ZSetObject>();
  char buf[core::kMaxScoreChars];
  for (const auto& [member, score] : pairs) {
    zset->lp_.Append(member);
    zset->lp_.Append(core::FormatScore(score, buf));
  }
  return zset;
}

void ZSetObject::ConvertToLarge() {
  core::SortedSet* large = NewSortedSet();
  large->Reserve(Size());
  Small().Walk(0, Size(), false, [&](std::string_view member, double score) {
    large->Add(member, score);
    return true;
  });
  core::Listpack freed = std::move(lp_);
  large_ = large;
}

void ZSetObject::InsertNew(std::string_view member, double score) {
  if (!large_) {
    // Redis's zsetAdd: convert before an insertion that would pass a limit.
    if (Size() + 1 <= CollectionLimits::ZSetMaxListpackEntries() &&
        member.size() <= CollectionLimits::ZSetMaxListpackValue() &&
        core::Listpack::SafeToAdd(lp_.ByteSize(), member.size() + core::kMaxScoreChars)) {
      return Small().InsertNew(member, score);
    }
    ConvertToLarge();
  }
  large_->Add(member, score);
}

bool ZSetObject::Set(std::string_view member, double score) {
  if (large_) return large_->Add(member, score);
  if (Small().Score(member)) return Small().Set(member, score);
  InsertNew(member, score);
  return true;
}

std::pair<std::string, double> ZSetObject::At(size_t rank) const {
  if (large_) {
    auto [member, score] = large_->At(rank);
    return {std::string(member), score};
  }
  char buf[core::kMaxScoreChars];
  auto [member, score] = Small().At(rank, buf);
  return {std::string(member), score};
}

size_t ZSetObject::MallocUsed() const {
  size_t bytes = core::ObjUsableSize(const_cast<ZSetObject*>(this));
  if (large_) return bytes + core::ObjUsableSize(large_) + large_->MallocUsed();
  return bytes + core::ObjUsableSize(const_cast<char*>(lp_.bytes().data()));
}

void ZSetObject::Serialize(std::string* out) const {
  if (!large_) {
    out->append(lp_.bytes());
    return;
  }
  large_->Walk(0, large_->Size(), false, [&](std::string_view member, double score) {
    uint32_t len = member.size();
    out->append(reinterpret_cast<const char*>(&len), sizeof(len));
    out->append(member);
    out->append(reinterpret_cast<const char*>(&score), sizeof(score));
    return true;
  });
}

ZSetObject* MakeZSet(PrimeValue* value) {
  ZSetObject* zset = core::TypedObject::Make<ZSetObject>();
  value->SetObject(ObjType::kZSet, zset->encoding(), zset);
  return zset;
}

}  // namespace damselfly
