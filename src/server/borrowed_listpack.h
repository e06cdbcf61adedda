// BorrowedListpack: the listpack a PrimeValue holds itself (PrimeValue::SetListpack),
// used in place through the Listpack API without owning it. It never frees the block:
// the value does. The read and write handles of lists, hashes and sorted sets
// (list_object.h, hash_object.h, zset_object.h) hold one.
//
// A change through it may move the block; the owner of a write handle then tells the
// value (PrimeValue::set_listpack_block(block())). Built over a value that holds no
// listpack, it is moved-from (no block), as after Release().
//
// Thread contract: as PrimeValue's (its shard's thread); it must not outlive the value's
// block, that is the value's next change by anyone else.
#pragma once

#include <utility>

#include "src/core/listpack.h"
#include "src/server/prime_value.h"

namespace damselfly {

class BorrowedListpack : public core::Listpack {
 public:
  BorrowedListpack() : Listpack(Adopt({})) {}
  explicit BorrowedListpack(const PrimeValue& value)
      : Listpack(Adopt(value.holds_listpack() ? value.listpack_block() : Block{})) {}
  BorrowedListpack(BorrowedListpack&&) noexcept = default;
  BorrowedListpack& operator=(BorrowedListpack&& other) noexcept {
    Release();
    Listpack::operator=(std::move(other));
    return *this;
  }
  ~BorrowedListpack() { Release(); }

  // Borrows `block` instead (the value holds a new listpack).
  void Borrow(Block block) {
    Release();
    Listpack::operator=(Adopt(block));
  }
};

}  // namespace damselfly
