#include "src/server/zset_object.h"

#include "src/server/collection_limits.h"

namespace damselfly {

namespace {

core::TypedObject* RebuildZSet(ObjEncoding encoding, std::string_view form) {
  if (encoding != ObjEncoding::kListpack || !core::Listpack::Validate(form)) return nullptr;
  core::Listpack lp = core::Listpack::FromBytes(form);
  if (lp.Size() % 2 != 0) return nullptr;
  return core::TypedObject::Make<ZSetObject>(std::move(lp));
}

}  // namespace

void ZSetObject::RegisterFactory() { RegisterTypedObjectFactory(ObjType::kZSet, RebuildZSet); }

ZSetObject* ZSetObject::FromSorted(const SortedPairs& pairs) {
  ZSetObject* zset = Make<ZSetObject>();
  char buf[core::kMaxScoreChars];
  for (const auto& [member, score] : pairs) {
    zset->lp_.Append(member);
    zset->lp_.Append(core::FormatScore(score, buf));
  }
  return zset;
}

bool ZSetObject::Set(std::string_view member, double score) { return Small().Set(member, score); }

std::pair<std::string, double> ZSetObject::At(size_t rank) const {
  char buf[core::kMaxScoreChars];
  auto [member, score] = Small().At(rank, buf);
  return {std::string(member), score};
}

size_t ZSetObject::MallocUsed() const {
  return core::ObjUsableSize(const_cast<ZSetObject*>(this)) +
         core::ObjUsableSize(const_cast<char*>(lp_.bytes().data()));
}

void ZSetObject::Serialize(std::string* out) const { out->append(lp_.bytes()); }

ZSetObject* MakeZSet(PrimeValue* value) {
  ZSetObject* zset = core::TypedObject::Make<ZSetObject>();
  value->SetObject(ObjType::kZSet, zset->encoding(), zset);
  return zset;
}

}  // namespace damselfly
