#include "src/server/list_object.h"

#include <glog/logging.h>

#include <cstring>
#include <utility>

#include "src/core/obj_malloc.h"

namespace damselfly {

using core::Listpack;
using core::Quicklist;

size_t ListQuicklist::MallocUsed() const {
  return core::ObjUsableSize(const_cast<ListQuicklist*>(this)) + ql.MallocUsed();
}

void ListQuicklist::Serialize(std::string* out) const {
  int16_t fill = int16_t(ql.fill());
  uint16_t depth = uint16_t(ql.compress_depth());
  out->append(reinterpret_cast<const char*>(&fill), 2);
  out->append(reinterpret_cast<const char*>(&depth), 2);
  ql.SerializeNodes(out);
}

bool MakeListFromForm(ObjEncoding encoding, std::string_view form, PrimeValue* value) {
  if (encoding == ObjEncoding::kListpack) {
    if (!Listpack::Validate(form)) return false;
    value->SetSmallList(Listpack::FromBytes(form));
    return true;
  }
  if (encoding != ObjEncoding::kQuicklist || form.size() < 4) return false;
  int16_t fill;
  uint16_t depth;
  memcpy(&fill, form.data(), 2);
  memcpy(&depth, form.data() + 2, 2);
  form.remove_prefix(4);
  Quicklist ql(fill, depth);
  while (!form.empty()) {
    uint32_t len;
    if (form.size() < 4) return false;
    memcpy(&len, form.data(), 4);
    form.remove_prefix(4);
    if (len > form.size() || !Listpack::Validate(form.substr(0, len))) return false;
    Listpack lp = Listpack::FromBytes(form.substr(0, len));
    form.remove_prefix(len);
    if (lp.Empty()) return false;
    ql.AppendNode(std::move(lp));
  }
  if (ql.Size() == 0) return false;
  value->SetObject(ObjType::kList, ObjEncoding::kQuicklist,
                   core::TypedObject::Make<ListQuicklist>(std::move(ql)));
  return true;
}

ListView::ListView(const PrimeValue& value) : lp_(value) {
  if (!value.holds_block()) ql_ = &static_cast<ListQuicklist*>(value.GetObject())->ql;
}

void ListView::ForEachNode(
    absl::FunctionRef<void(std::string_view bytes, size_t raw_len)> fn) const {
  if (ql_) return ql_->ForEachNode(fn);
  fn(lp_.bytes(), 0);
}

void ListRef::MakeEmpty(PrimeValue* value) {
  value->SetSmallList(Listpack());
}

void ListRef::PrepareAdd(size_t bytes, size_t count, int fill, unsigned depth) {
  if (ql_) return;
  const size_t new_bytes = lp_.ByteSize() + bytes;
  // `bytes` at or over the packed threshold may hold a large element, which lives in a
  // quicklist node of its own (core/quicklist.h).
  if (Quicklist::WithinFill(fill, new_bytes, lp_.Size() + count) &&
      Listpack::SafeToAdd(lp_.ByteSize(), bytes) && bytes < Quicklist::PackedThreshold()) {
    return;
  }
  // The quicklist takes the block as its first node.
  lp_.Release();
  auto* list = core::TypedObject::Make<ListQuicklist>(
      Quicklist(fill, depth, value_->TakeListpack()));
  value_->SetObject(ObjType::kList, ObjEncoding::kQuicklist, list);
  ql_ = &list->ql;
}

void ListRef::TryShrink(int fill) {
  if (!ql_ || ql_->NodeCount() > 1) return;
  // Half the limits: bytes and count doubled must still fit.
  Listpack lp;
  if (ql_->NodeCount() == 1) {
    if (!Quicklist::WithinFill(fill, ql_->OnlyNodeBytes() * 2, ql_->Size() * 2) ||
        ql_->OnlyNodeIsolated()) {
      return;
    }
    lp = ql_->TakeOnlyNode();
  }
  lp_.Borrow(lp.block());  // the value owns it from the next line on
  value_->SetSmallList(std::move(lp));
  ql_ = nullptr;
}

void ListRef::Push(End end, std::string_view value) {
  if (ql_) return ql_->Push(end, value);
  if (end == End::kHead) {
    lp_.Prepend(value);
  } else {
    lp_.Append(value);
  }
  SyncBlock();
}

bool ListRef::Pop(End end, std::string* out) {
  if (ql_) return ql_->Pop(end, out);
  Listpack::Pos pos = end == End::kHead ? lp_.First() : lp_.Last();
  if (pos == Listpack::kNoPos) return false;
  core::ListpackValueTo(lp_.Get(pos), out);
  lp_.Delete(pos);
  SyncBlock();
  return true;
}

void ListRef::DeleteRange(size_t start, size_t count) {
  if (ql_) return ql_->DeleteRange(start, count);
  lp_.DeleteRange(int64_t(start), count);
  SyncBlock();
}

ListView::Cursor ListView::MakeCursor(End from, ListRef* owner) const {
  Cursor cursor;
  cursor.direction_ = from;
  cursor.owner_ = owner;
  if (ql_) {
    cursor.it_.emplace(ql_->Begin(from));
  } else {
    cursor.lp_ = const_cast<BorrowedListpack*>(&lp_);
    cursor.pos_ = from == End::kHead ? lp_.First() : lp_.Last();
  }
  return cursor;
}

ListView::Cursor ListView::MakeCursor(int64_t index, End direction, ListRef* owner) const {
  Cursor cursor;
  cursor.direction_ = direction;
  cursor.owner_ = owner;
  if (ql_) {
    cursor.it_.emplace(ql_->At(index, direction));
  } else {
    cursor.lp_ = const_cast<BorrowedListpack*>(&lp_);
    cursor.pos_ = lp_.Seek(index);
  }
  return cursor;
}

void ListView::Cursor::SyncBlock() {
  DCHECK(owner_ != nullptr) << "a reader's cursor changed the list";
  owner_->SyncBlock();
}

bool ListView::Cursor::Valid() const { return it_ ? it_->Valid() : pos_ != Listpack::kNoPos; }

Listpack::Value ListView::Cursor::Get() const { return it_ ? it_->Get() : lp_->Get(pos_); }

void ListView::Cursor::Next() {
  if (it_) return it_->Next();
  pos_ = direction_ == End::kHead ? lp_->Next(pos_) : lp_->Prev(pos_);
}

void ListView::Cursor::Erase() {
  DCHECK(owner_ != nullptr);
  if (it_) return it_->Erase();
  Listpack::Pos after = lp_->Delete(pos_);
  if (direction_ == End::kHead) {
    pos_ = after;
  } else {
    pos_ = after == Listpack::kNoPos ? lp_->Last() : lp_->Prev(after);
  }
  SyncBlock();
}

void ListView::Cursor::Insert(std::string_view value, Listpack::Where where) {
  DCHECK(owner_ != nullptr);
  if (it_) return it_->Insert(value, where);
  lp_->Insert(pos_, value, where);
  pos_ = Listpack::kNoPos;
  SyncBlock();
}

void ListView::Cursor::Replace(std::string_view value) {
  DCHECK(owner_ != nullptr);
  if (it_) return it_->Replace(value);
  lp_->Replace(pos_, value);
  pos_ = Listpack::kNoPos;
  SyncBlock();
}

}  // namespace damselfly
