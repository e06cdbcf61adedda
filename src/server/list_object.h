// ListObject: the value of a Redis list key, in one of two encodings, as Redis 7.2 keeps
// lists:
//   - listpack: one listpack (core/listpack.h), for lists within one node's fill
//     (list-max-listpack-size): the smallest form, one block;
//   - quicklist: a chain of listpack nodes (core/quicklist.h), once the list outgrows
//     one node.
// Conversion rules (Redis 7.2's listTypeTryConversion): a listpack becomes a quicklist
// when an addition would take it past the fill; a quicklist goes back to a listpack when
// a removal leaves it one node at most half the fill (the gap keeps a list that hovers at
// the limit from converting on every push and pop).
//
// OBJECT ENCODING answers "quicklist" for both, as Redis 7.0 does for every list: the
// object's own encoding() is for tests and MEMORY figures, not for replies.
//
// The family reads the limits (CollectionLimits) at each command and passes them in: the
// object knows nothing of the server's configuration. A quicklist keeps the fill and
// depth it was made with, as Redis's does.
//
// Thread contract: not thread-safe; a list and its blocks belong to its shard's thread,
// which makes every call, the destructor included (ObjMalloc's rule).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "src/core/listpack.h"
#include "src/core/quicklist.h"
#include "src/core/typed_object.h"
#include "src/server/prime_value.h"

namespace damselfly {

class ListObject final : public core::TypedObject {
 public:
  using End = core::Quicklist::End;

  // An empty list, listpack-encoded.
  ListObject() = default;
  ~ListObject() override;

  ObjEncoding encoding() const { return ql_ ? ObjEncoding::kQuicklist : ObjEncoding::kListpack; }
  size_t Size() const { return ql_ ? ql_->Size() : lp_.Size(); }
  size_t MallocUsed() const override;
  // A tag byte (0 listpack, 1 quicklist), then for a listpack its bytes, for a
  // quicklist fill (i16), depth (u16) and the nodes (core::Quicklist::SerializeNodes).
  void Serialize(std::string* out) const override;
  // The factory registered for ObjType::kList (the form says its encoding; the
  // PrimeValue's is always kQuicklist): nullptr when `form` is malformed.
  static core::TypedObject* Deserialize(ObjEncoding encoding, std::string_view form);

  // How many listpacks hold the list, and each of them: see core::Quicklist::ForEachNode
  // (a listpack-encoded list is one plain node).
  size_t NodeCount() const { return ql_ ? ql_->NodeCount() : 1; }
  void ForEachNode(absl::FunctionRef<void(std::string_view bytes, size_t raw_len)> fn) const;

  // Before adding `count` elements of `bytes` bytes in all: converts to a quicklist of
  // (fill, depth) when the listpack would outgrow `fill`, or Listpack::SafeToAdd refuses.
  void PrepareAdd(size_t bytes, size_t count, int fill, unsigned depth);
  // After removals: converts back to a listpack when the quicklist is one node within
  // half of `fill`.
  void TryShrink(int fill);

  void Push(End end, std::string_view value);
  // Removes the element at `end` into *out. False when empty.
  bool Pop(End end, std::string* out);
  // Deletes up to `count` elements from index `start`.
  void DeleteRange(size_t start, size_t count);

  // A position in the list walking from `direction`'s end towards the other, over either
  // encoding (see core::Quicklist::Iterator, whose rules it follows: valid until the list
  // changes other than through it; Insert and Replace end it).
  class Cursor {
   public:
    bool Valid() const;
    core::Listpack::Value Get() const;
    void Next();
    void Erase();
    void Insert(std::string_view value, core::Listpack::Where where);
    void Replace(std::string_view value);

   private:
    friend class ListObject;
    core::Listpack* lp_ = nullptr;
    core::Listpack::Pos pos_ = core::Listpack::kNoPos;
    End direction_ = End::kHead;
    std::optional<core::Quicklist::Iterator> it_;
  };
  // The first element from `from`.
  Cursor Begin(End from);
  // Element `index` (negative from the tail), walking towards the tail (kHead) or the
  // head (kTail); invalid when out of range.
  Cursor At(int64_t index, End direction = End::kHead);

 private:
  core::Listpack lp_;  // moved-from while ql_ is set
  core::Quicklist* ql_ = nullptr;
};

// Makes `value` a new, empty list. OBJECT ENCODING says quicklist for every list, as
// Redis 7.0 does (its small lists are one-node quicklists); the object keeps a small
// list as one listpack inside.
ListObject* MakeList(PrimeValue* value);

}  // namespace damselfly
