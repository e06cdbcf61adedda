#include "src/core/set_object.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "src/core/obj_malloc.h"

namespace damselfly::core {

namespace {

// Redis caps set-max-intset-entries at 2^30 (intsetMaxEntries) so an intset never
// grows to a size its 32-bit length could not count.
constexpr uint64_t kIntsetEntriesCap = uint64_t{1} << 30;

// The largest listpack entry an integer may take: encoding byte, 8 bytes, backlen.
constexpr size_t kMaxListpackIntEntry = 10;

size_t DecimalDigits(int64_t value) {
  char buf[24];
  return std::to_chars(buf, buf + sizeof(buf), value).ptr - buf;
}

}  // namespace

StringSet* SetObject::NewStringSet() { return new (ObjMalloc(sizeof(StringSet))) StringSet(); }

SetObject* SetObject::Create(std::string_view first_member, size_t size_hint,
                             const SetLimits& limits) {
  int64_t ignored;
  if (size_hint <= std::min(limits.intset_entries, kIntsetEntriesCap) &&
      ListpackStringToInt64(first_member, &ignored)) {
    return CreateEmpty();
  }
  if (size_hint <= limits.listpack_entries) return Make<SetObject>(Rep(Listpack()));
  StringSet* set = NewStringSet();
  set->Reserve(size_hint);
  return Make<SetObject>(Rep(set));
}

SetObject* SetObject::CreateEmpty() { return Make<SetObject>(Rep(Intset())); }

SetObject::~SetObject() {
  if (StringSet** set = std::get_if<StringSet*>(&rep_)) {
    (*set)->~StringSet();
    ObjFree(*set);
  }
}

size_t SetObject::Size() const {
  switch (encoding()) {
    case Encoding::kIntset:
      return std::get<Intset>(rep_).Size();
    case Encoding::kListpack:
      return std::get<Listpack>(rep_).Size();
    case Encoding::kHashtable:
      return std::get<StringSet*>(rep_)->Size();
  }
  return 0;
}

bool SetObject::Contains(std::string_view member) const {
  switch (encoding()) {
    case Encoding::kIntset: {
      int64_t value;
      return ListpackStringToInt64(member, &value) && std::get<Intset>(rep_).Contains(value);
    }
    case Encoding::kListpack: {
      const Listpack& lp = std::get<Listpack>(rep_);
      return lp.Find(lp.First(), member) != Listpack::kNoPos;
    }
    case Encoding::kHashtable:
      return std::get<StringSet*>(rep_)->Contains(member);
  }
  return false;
}

bool SetObject::Add(std::string_view member, const SetLimits& limits) {
  switch (encoding()) {
    case Encoding::kIntset:
      return AddToIntset(member, limits);
    case Encoding::kListpack: {
      Listpack& lp = std::get<Listpack>(rep_);
      if (lp.Find(lp.First(), member) != Listpack::kNoPos) return false;
      if (lp.Size() < limits.listpack_entries && member.size() <= limits.listpack_value &&
          Listpack::SafeToAdd(lp.ByteSize(), member.size() + kMaxListpackIntEntry)) {
        lp.Append(member);
        return true;
      }
      ConvertToHashtable(1);
      break;
    }
    case Encoding::kHashtable:
      break;
  }
  return std::get<StringSet*>(rep_)->Add(member);
}

bool SetObject::AddToIntset(std::string_view member, const SetLimits& limits) {
  Intset& is = std::get<Intset>(rep_);
  int64_t value;
  if (ListpackStringToInt64(member, &value)) {
    if (!is.Add(value)) return false;
    if (is.Size() > std::min(limits.intset_entries, kIntsetEntriesCap)) ConvertToHashtable(0);
    return true;
  }
  // A string joins: a listpack if it holds every member (the widest integer bounds the
  // others' lengths), else a hash table.
  const size_t n = is.Size();
  const size_t widest = n == 0 ? 0 : std::max(DecimalDigits(is.Min()), DecimalDigits(is.Max()));
  if (n < limits.listpack_entries && member.size() <= limits.listpack_value &&
      widest <= limits.listpack_value &&
      Listpack::SafeToAdd(n * kMaxListpackIntEntry, member.size() + kMaxListpackIntEntry)) {
    ConvertIntsetToListpack();
    std::get<Listpack>(rep_).Append(member);
  } else {
    ConvertToHashtable(1);
    std::get<StringSet*>(rep_)->Add(member);
  }
  return true;
}

bool SetObject::Remove(std::string_view member) {
  switch (encoding()) {
    case Encoding::kIntset: {
      int64_t value;
      return ListpackStringToInt64(member, &value) && std::get<Intset>(rep_).Remove(value);
    }
    case Encoding::kListpack: {
      Listpack& lp = std::get<Listpack>(rep_);
      Listpack::Pos pos = lp.Find(lp.First(), member);
      if (pos == Listpack::kNoPos) return false;
      lp.Delete(pos);
      return true;
    }
    case Encoding::kHashtable:
      return std::get<StringSet*>(rep_)->Remove(member);
  }
  return false;
}

void SetObject::ReserveFor(size_t count, const SetLimits& limits) {
  const bool too_many = (encoding() == Encoding::kListpack && count > limits.listpack_entries) ||
                        (encoding() == Encoding::kIntset &&
                         count > std::min(limits.intset_entries, kIntsetEntriesCap));
  if (too_many) ConvertToHashtable(count);
}

void SetObject::ConvertToHashtable(size_t extra) {
  StringSet* set = NewStringSet();
  set->Reserve(Size() + extra);
  ForEach([set](std::string_view member) { set->Add(member); });
  rep_ = set;  // destroys the small representation
}

void SetObject::ConvertIntsetToListpack() {
  Listpack lp;
  ForEach([&lp](std::string_view member) { lp.Append(member); });
  rep_ = std::move(lp);
}

std::string_view SetObject::Random(uint64_t rnd, std::string* scratch) const {
  switch (encoding()) {
    case Encoding::kIntset: {
      const Intset& is = std::get<Intset>(rep_);
      scratch->resize(24);
      char* end = std::to_chars(scratch->data(), scratch->data() + 24, is.Get(rnd % is.Size())).ptr;
      scratch->resize(end - scratch->data());
      return *scratch;
    }
    case Encoding::kListpack: {
      const Listpack& lp = std::get<Listpack>(rep_);
      Listpack::Value value = lp.Get(lp.Seek(int64_t(rnd % lp.Size())));
      if (!value.is_int) return value.sval;
      *scratch = value.ToString();
      return *scratch;
    }
    case Encoding::kHashtable:
      return std::get<StringSet*>(rep_)->Random(rnd);
  }
  return {};
}

std::string SetObject::Pop(uint64_t rnd) {
  switch (encoding()) {
    case Encoding::kIntset: {
      Intset& is = std::get<Intset>(rep_);
      int64_t value = is.Get(rnd % is.Size());
      is.Remove(value);
      return std::to_string(value);
    }
    case Encoding::kListpack: {
      Listpack& lp = std::get<Listpack>(rep_);
      Listpack::Pos pos = lp.Seek(int64_t(rnd % lp.Size()));
      std::string member = lp.Get(pos).ToString();
      lp.Delete(pos);
      return member;
    }
    case Encoding::kHashtable:
      return std::get<StringSet*>(rep_)->Pop(rnd);
  }
  return {};
}

size_t SetObject::MallocUsed() const {
  size_t bytes = ObjUsableSize(const_cast<SetObject*>(this));
  switch (encoding()) {
    case Encoding::kIntset:
      return bytes + ObjUsableSize(const_cast<char*>(std::get<Intset>(rep_).bytes().data()));
    case Encoding::kListpack:
      return bytes + ObjUsableSize(const_cast<char*>(std::get<Listpack>(rep_).bytes().data()));
    case Encoding::kHashtable: {
      StringSet* set = std::get<StringSet*>(rep_);
      return bytes + ObjUsableSize(set) + set->MallocUsed();
    }
  }
  return bytes;
}

void SetObject::Serialize(std::string* out) const {
  switch (encoding()) {
    case Encoding::kIntset:
      out->append(std::get<Intset>(rep_).bytes());
      return;
    case Encoding::kListpack:
      out->append(std::get<Listpack>(rep_).bytes());
      return;
    case Encoding::kHashtable:
      std::get<StringSet*>(rep_)->ForEach([out](std::string_view member) {
        const uint32_t len = uint32_t(member.size());
        const char le[4] = {char(len), char(len >> 8), char(len >> 16), char(len >> 24)};
        out->append(le, 4);
        out->append(member);
      });
      return;
  }
}

SetObject* SetObject::Deserialize(Encoding encoding, std::string_view form) {
  switch (encoding) {
    case Encoding::kIntset:
      if (!Intset::Validate(form)) return nullptr;
      return Make<SetObject>(Rep(Intset::FromBytes(form)));
    case Encoding::kListpack:
      if (!Listpack::Validate(form)) return nullptr;
      return Make<SetObject>(Rep(Listpack::FromBytes(form)));
    case Encoding::kHashtable: {
      StringSet* set = NewStringSet();
      SetObject* object = Make<SetObject>(Rep(set));
      while (!form.empty()) {
        if (form.size() < 4) break;
        const auto* p = reinterpret_cast<const uint8_t*>(form.data());
        const size_t len = p[0] | p[1] << 8 | p[2] << 16 | size_t(p[3]) << 24;
        if (form.size() - 4 < len || !set->Add(form.substr(4, len))) break;
        form.remove_prefix(4 + len);
      }
      if (form.empty()) return object;
      Destroy(object);
      return nullptr;
    }
  }
  return nullptr;
}

}  // namespace damselfly::core
