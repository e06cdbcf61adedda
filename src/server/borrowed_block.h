// BorrowedBlock: the block a PrimeValue holds itself (PrimeValue::SetSmallList,
// SetPairPack), used in place through its class's API (core::Listpack for a list,
// core::PairPack for a hash or sorted set) without owning it. It never frees the block:
// the value does. The read and write handles of lists, hashes and sorted sets
// (list_object.h, hash_object.h, zset_object.h) hold one.
//
// A change through it may move the block; the owner of a write handle then tells the
// value (PrimeValue::set_block(block())). Built over a value that holds no block, it is
// moved-from (no block), as after Release().
//
// Thread contract: as PrimeValue's (its shard's thread); it must not outlive the value's
// block, that is the value's next change by anyone else.
#pragma once

#include <utility>

#include "src/core/listpack.h"
#include "src/core/pair_pack.h"
#include "src/server/prime_value.h"

namespace damselfly {

template <typename Pack>
class BorrowedBlock : public Pack {
 public:
  BorrowedBlock() : Pack(Pack::Adopt({})) {}
  explicit BorrowedBlock(const PrimeValue& value)
      : Pack(Pack::Adopt(value.holds_block() ? value.block() : typename Pack::Block{})) {}
  BorrowedBlock(BorrowedBlock&&) noexcept = default;
  BorrowedBlock& operator=(BorrowedBlock&& other) noexcept {
    this->Release();
    Pack::operator=(std::move(other));
    return *this;
  }
  ~BorrowedBlock() { this->Release(); }

  // Borrows `block` instead (the value holds a new block).
  void Borrow(typename Pack::Block block) {
    this->Release();
    Pack::operator=(Pack::Adopt(block));
  }
};

using BorrowedListpack = BorrowedBlock<core::Listpack>;
using BorrowedPairPack = BorrowedBlock<core::PairPack>;

}  // namespace damselfly
