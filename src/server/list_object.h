// A Redis list, in one of two encodings, as Redis 7.2 keeps lists:
//   - listpack: one listpack (core/listpack.h), for lists within one node's fill
//     (list-max-listpack-size): the smallest form, one block, held by the PrimeValue
//     itself (PrimeValue::SetSmallList, no object around it: see hash_object.h for why);
//   - quicklist: a ListQuicklist object, a chain of listpack nodes (core/quicklist.h),
//     once the list outgrows one node.
// Conversion rules (Redis 7.2's listTypeTryConversion): a listpack becomes a quicklist
// when an addition would take it past the fill; a quicklist goes back to a listpack when
// a removal leaves it one node at most half the fill (the gap keeps a list that hovers at
// the limit from converting on every push and pop).
//
// OBJECT ENCODING answers "quicklist" for both, as Redis 7.0 does for every list: the
// value's encoding byte says kQuicklist either way, and ListView::encoding() (for tests
// and MEMORY figures, not for replies) tells them apart.
//
// A list is read through a ListView and changed through a ListRef, handles made per
// command over the PrimeValue that holds it. The family reads the limits
// (CollectionLimits) at each command and passes them in: the handles know nothing of the
// server's configuration. A quicklist keeps the fill and depth it was made with, as
// Redis's does.
//
// Thread contract: not thread-safe; a list and its blocks belong to its shard's thread,
// which makes every call (ObjMalloc's rule). A handle (and a cursor) must not outlive
// its value, nor be used after anything else changed or moved the value (a ListRef
// keeps the value's address: DbSlice's pointer rule holds for it as for an Update).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "src/core/listpack.h"
#include "src/core/quicklist.h"
#include "src/core/typed_object.h"
#include "src/server/borrowed_block.h"
#include "src/server/prime_value.h"

namespace damselfly {

// The quicklist encoding's object.
class ListQuicklist final : public core::TypedObject {
 public:
  explicit ListQuicklist(core::Quicklist&& from) : ql(std::move(from)) {}
  core::Quicklist ql;

  size_t MallocUsed() const override;
  size_t FreeEffort() const override { return ql.NodeCount(); }
  // Form: fill (i16), depth (u16) and the nodes (core::Quicklist::SerializeNodes).
  void Serialize(std::string* out) const override;
};

class ListRef;

// Reads the list a PrimeValue holds.
class ListView {
 public:
  using End = core::Quicklist::End;

  // No list: for OpResult's sake only; call nothing on it.
  ListView() = default;
  // REQUIRES: value.type() == ObjType::kList.
  explicit ListView(const PrimeValue& value);

  ObjEncoding encoding() const { return ql_ ? ObjEncoding::kQuicklist : ObjEncoding::kListpack; }
  size_t Size() const { return ql_ ? ql_->Size() : lp_.Size(); }

  // How many listpacks hold the list, and each of them: see core::Quicklist::ForEachNode
  // (a listpack-encoded list is one plain node).
  size_t NodeCount() const { return ql_ ? ql_->NodeCount() : 1; }
  void ForEachNode(absl::FunctionRef<void(std::string_view bytes, size_t raw_len)> fn) const;

  // A position in the list walking from `direction`'s end towards the other, over either
  // encoding (see core::Quicklist::Iterator, whose rules it follows: valid until the list
  // changes other than through it; Insert and Replace end it). Only a ListRef's cursors
  // may change the list. A cursor works through its handle: it must not outlive it.
  class Cursor {
   public:
    bool Valid() const;
    core::Listpack::Value Get() const;
    void Next();
    void Erase();
    void Insert(std::string_view value, core::Listpack::Where where);
    void Replace(std::string_view value);

   private:
    friend class ListView;
    // Tells the value where the listpack's block is after a change through the cursor.
    void SyncBlock();

    core::Listpack* lp_ = nullptr;
    core::Listpack::Pos pos_ = core::Listpack::kNoPos;
    End direction_ = End::kHead;
    std::optional<core::Quicklist::Iterator> it_;
    ListRef* owner_ = nullptr;  // null: a reader's cursor
  };
  // The first element from `from`.
  Cursor Begin(End from) const { return MakeCursor(from, nullptr); }
  // Element `index` (negative from the tail), walking towards the tail (kHead) or the
  // head (kTail); invalid when out of range.
  Cursor At(int64_t index, End direction = End::kHead) const {
    return MakeCursor(index, direction, nullptr);
  }

 protected:
  Cursor MakeCursor(End from, ListRef* owner) const;
  Cursor MakeCursor(int64_t index, End direction, ListRef* owner) const;

  // The value's listpack (no block while ql_ is set); the value's quicklist otherwise.
  BorrowedListpack lp_;
  core::Quicklist* ql_ = nullptr;
};

// Reads and changes the list a PrimeValue holds; the value follows every change (its
// block, its encoding), so it may be read between changes.
class ListRef : public ListView {
 public:
  // Makes *value an empty list (listpack).
  static void MakeEmpty(PrimeValue* value);
  // REQUIRES: value->type() == ObjType::kList.
  explicit ListRef(PrimeValue* value) : ListView(*value), value_(value) {}

  // Before adding `count` elements of `bytes` bytes in all: converts to a quicklist of
  // (fill, depth) when the listpack would outgrow `fill`, Listpack::SafeToAdd refuses, or
  // `bytes` reach Quicklist::PackedThreshold() (a large element needs a node of its own).
  void PrepareAdd(size_t bytes, size_t count, int fill, unsigned depth);
  // After removals: converts back to a listpack when the quicklist is one node within
  // half of `fill`, not holding a large element.
  void TryShrink(int fill);

  void Push(End end, std::string_view value);
  // Removes the element at `end` into *out. False when empty.
  bool Pop(End end, std::string* out);
  // Deletes up to `count` elements from index `start`.
  void DeleteRange(size_t start, size_t count);

  // Cursors that may change the list.
  Cursor Begin(End from) { return MakeCursor(from, this); }
  Cursor At(int64_t index, End direction = End::kHead) {
    return MakeCursor(index, direction, this);
  }

 private:
  friend class ListView::Cursor;
  // Tells the value where the listpack's block is after a change.
  void SyncBlock() { value_->set_block(lp_.block()); }

  PrimeValue* value_;
};

// The list family's TypedObjectFactory. Forms: a listpack's bytes (encoding kListpack),
// or ListQuicklist::Serialize's (kQuicklist).
bool MakeListFromForm(ObjEncoding encoding, std::string_view form, PrimeValue* value);

}  // namespace damselfly
