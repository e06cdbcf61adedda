#include "src/server/list_object.h"

#include <cstring>
#include <utility>

#include "src/core/obj_malloc.h"

namespace damselfly {

using core::Listpack;
using core::Quicklist;

namespace {

Quicklist* NewQuicklist(Quicklist&& from) {
  return new (core::ObjMalloc(sizeof(Quicklist))) Quicklist(std::move(from));
}

void FreeQuicklist(Quicklist* ql) {
  ql->~Quicklist();
  core::ObjFree(ql);
}

}  // namespace

ListObject::~ListObject() {
  if (ql_) FreeQuicklist(ql_);
}

size_t ListObject::MallocUsed() const {
  size_t bytes = core::ObjUsableSize(const_cast<ListObject*>(this));
  if (ql_) return bytes + core::ObjUsableSize(ql_) + ql_->MallocUsed();
  return bytes + core::ObjUsableSize(const_cast<char*>(lp_.bytes().data()));
}

void ListObject::Serialize(std::string* out) const {
  out->push_back(ql_ ? 1 : 0);
  if (!ql_) {
    out->append(lp_.bytes());
    return;
  }
  int16_t fill = int16_t(ql_->fill());
  uint16_t depth = uint16_t(ql_->compress_depth());
  out->append(reinterpret_cast<const char*>(&fill), 2);
  out->append(reinterpret_cast<const char*>(&depth), 2);
  ql_->SerializeNodes(out);
}

void ListObject::ForEachNode(
    absl::FunctionRef<void(std::string_view bytes, size_t raw_len)> fn) const {
  if (ql_) return ql_->ForEachNode(fn);
  fn(lp_.bytes(), 0);
}

core::TypedObject* ListObject::Deserialize(ObjEncoding, std::string_view form) {
  if (form.empty() || uint8_t(form[0]) > 1) return nullptr;
  const bool quicklist = form[0] == 1;
  form.remove_prefix(1);
  if (!quicklist) {
    if (!Listpack::Validate(form)) return nullptr;
    ListObject* list = Make<ListObject>();
    list->lp_ = Listpack::FromBytes(form);
    return list;
  }
  if (form.size() < 4) return nullptr;
  int16_t fill;
  uint16_t depth;
  memcpy(&fill, form.data(), 2);
  memcpy(&depth, form.data() + 2, 2);
  form.remove_prefix(4);
  Quicklist ql(fill, depth);
  while (!form.empty()) {
    uint32_t len;
    if (form.size() < 4) return nullptr;
    memcpy(&len, form.data(), 4);
    form.remove_prefix(4);
    if (len > form.size() || !Listpack::Validate(form.substr(0, len))) return nullptr;
    Listpack lp = Listpack::FromBytes(form.substr(0, len));
    form.remove_prefix(len);
    if (lp.Empty()) return nullptr;
    ql.AppendNode(std::move(lp));
  }
  if (ql.Size() == 0) return nullptr;
  ListObject* list = Make<ListObject>();
  { Listpack dropped = std::move(list->lp_); }
  list->ql_ = NewQuicklist(std::move(ql));
  return list;
}

void ListObject::PrepareAdd(size_t bytes, size_t count, int fill, unsigned depth) {
  if (ql_) return;
  const size_t new_bytes = lp_.ByteSize() + bytes;
  if (Quicklist::WithinFill(fill, new_bytes, lp_.Size() + count) &&
      Listpack::SafeToAdd(lp_.ByteSize(), bytes)) {
    return;
  }
  ql_ = NewQuicklist(Quicklist(fill, depth, std::move(lp_)));
}

void ListObject::TryShrink(int fill) {
  if (!ql_ || ql_->NodeCount() > 1) return;
  // Half the limits: bytes and count doubled must still fit.
  if (ql_->NodeCount() == 1) {
    if (!Quicklist::WithinFill(fill, ql_->OnlyNodeBytes() * 2, ql_->Size() * 2)) return;
    lp_ = ql_->TakeOnlyNode();
  } else {
    lp_ = Listpack();
  }
  FreeQuicklist(std::exchange(ql_, nullptr));
}

void ListObject::Push(End end, std::string_view value) {
  if (ql_) return ql_->Push(end, value);
  if (end == End::kHead) {
    lp_.Prepend(value);
  } else {
    lp_.Append(value);
  }
}

bool ListObject::Pop(End end, std::string* out) {
  if (ql_) return ql_->Pop(end, out);
  Listpack::Pos pos = end == End::kHead ? lp_.First() : lp_.Last();
  if (pos == Listpack::kNoPos) return false;
  core::ListpackValueTo(lp_.Get(pos), out);
  lp_.Delete(pos);
  return true;
}

void ListObject::DeleteRange(size_t start, size_t count) {
  if (ql_) return ql_->DeleteRange(start, count);
  lp_.DeleteRange(int64_t(start), count);
}

ListObject::Cursor ListObject::Begin(End from) {
  Cursor cursor;
  cursor.direction_ = from;
  if (ql_) {
    cursor.it_.emplace(ql_->Begin(from));
  } else {
    cursor.lp_ = &lp_;
    cursor.pos_ = from == End::kHead ? lp_.First() : lp_.Last();
  }
  return cursor;
}

ListObject::Cursor ListObject::At(int64_t index, End direction) {
  Cursor cursor;
  cursor.direction_ = direction;
  if (ql_) {
    cursor.it_.emplace(ql_->At(index, direction));
  } else {
    cursor.lp_ = &lp_;
    cursor.pos_ = lp_.Seek(index);
  }
  return cursor;
}

bool ListObject::Cursor::Valid() const { return it_ ? it_->Valid() : pos_ != Listpack::kNoPos; }

Listpack::Value ListObject::Cursor::Get() const { return it_ ? it_->Get() : lp_->Get(pos_); }

void ListObject::Cursor::Next() {
  if (it_) return it_->Next();
  pos_ = direction_ == End::kHead ? lp_->Next(pos_) : lp_->Prev(pos_);
}

void ListObject::Cursor::Erase() {
  if (it_) return it_->Erase();
  Listpack::Pos after = lp_->Delete(pos_);
  if (direction_ == End::kHead) {
    pos_ = after;
  } else {
    pos_ = after == Listpack::kNoPos ? lp_->Last() : lp_->Prev(after);
  }
}

void ListObject::Cursor::Insert(std::string_view value, Listpack::Where where) {
  if (it_) return it_->Insert(value, where);
  lp_->Insert(pos_, value, where);
  pos_ = Listpack::kNoPos;
}

void ListObject::Cursor::Replace(std::string_view value) {
  if (it_) return it_->Replace(value);
  lp_->Replace(pos_, value);
  pos_ = Listpack::kNoPos;
}

ListObject* MakeList(PrimeValue* value) {
  ListObject* list = core::TypedObject::Make<ListObject>();
  value->SetObject(ObjType::kList, ObjEncoding::kQuicklist, list);
  return list;
}

}  // namespace damselfly
