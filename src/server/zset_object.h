// A sorted set, in one of Redis's two encodings:
//   - listpack (core/zset_pack.h): member/score pairs in one block, held by the
//     PrimeValue itself (PrimeValue::SetPairPack, no object around it: see hash_object.h
//     for why), while the set has at most zset-max-listpack-entries members of at most
//     zset-max-listpack-value bytes and the block at most 1 MiB. In memory the block is
//     a core::PairPack with integer scores delta-coded; RDB and DUMP get the listpack
//     Redis would hold (AppendListpack);
//   - skiplist (core/sorted_set.h): a ZSetTree object, an order-statistic tree plus a
//     member index, once it outgrows either limit.
// A set is read through a ZSetView and changed through a ZSetRef, handles made per
// command over the PrimeValue that holds it. Everything the commands need is there, once,
// for both encodings: ranks, counts below a score or lex bound, walks over rank ranges,
// erasure of rank ranges. The commands work in ranks: ZRANGEBYSCORE min max is the ranks
// [CountScoreBelow(min), CountScoreAtMost(max)).
//
// Conversions follow Redis 7.0: a set grows from listpack to skiplist when an insertion
// would pass a limit (or the pack's 1 MiB) and never shrinks back, except that a
// result built whole (ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE, ZRANGESTORE) takes the
// encoding its size calls for (ZSetRef::Store).
//
// Thread contract: not thread-safe; a sorted set and its blocks belong to its shard's
// thread, which makes every call (ObjMalloc's rule). A handle must not outlive its value,
// nor be used after anything else changed or moved the value (a ZSetRef keeps the
// value's address: DbSlice's pointer rule holds for it as for an Update).
// RegisterZSetFactory writes the process's factory table: call it at start-up, before any
// shard runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/listpack.h"
#include "src/core/sorted_set.h"
#include "src/core/typed_object.h"
#include "src/core/pair_pack.h"
#include "src/core/zset_pack.h"
#include "src/server/borrowed_block.h"
#include "src/server/prime_value.h"

namespace damselfly {

// The skiplist encoding's object.
class ZSetTree final : public core::TypedObject {
 public:
  core::SortedSet set;

  size_t MallocUsed() const override;
  size_t FreeEffort() const override { return set.Size(); }
  bool FreeSome(size_t max) override { return set.FreeSome(max); }
  // Form: per element, a u32 member length, the member, the score's 8 bytes (host
  // order: the form never leaves the process).
  void Serialize(std::string* out) const override;
};

// Reads the sorted set a PrimeValue holds.
class ZSetView {
 public:
  using ScoreBound = core::ScoreBound;
  using LexBound = core::LexBound;
  // Member/score pairs in ascending (score, member) order.
  using SortedPairs = std::vector<std::pair<std::string, double>>;

  // No set: for OpResult's sake only; call nothing on it.
  ZSetView() = default;
  // REQUIRES: value.type() == ObjType::kZSet.
  explicit ZSetView(const PrimeValue& value);

  ObjEncoding encoding() const { return large_ ? ObjEncoding::kSkiplist : ObjEncoding::kListpack; }
  size_t Size() const { return large_ ? large_->Size() : Small().Size(); }

  std::optional<double> Score(std::string_view member) const {
    return large_ ? large_->Score(member) : Small().Score(member);
  }
  // 0-based ascending rank; nullopt when absent.
  std::optional<size_t> Rank(std::string_view member) const {
    return large_ ? large_->Rank(member) : Small().Rank(member);
  }

  size_t CountScoreBelow(ScoreBound min) const {
    return large_ ? large_->CountScoreBelow(min) : Small().CountScoreBelow(min);
  }
  size_t CountScoreAtMost(ScoreBound max) const {
    return large_ ? large_->CountScoreAtMost(max) : Small().CountScoreAtMost(max);
  }
  size_t CountLexBelow(LexBound min) const {
    return large_ ? large_->CountLexBelow(min) : Small().CountLexBelow(min);
  }
  size_t CountLexAtMost(LexBound max) const {
    return large_ ? large_->CountLexAtMost(max) : Small().CountLexAtMost(max);
  }

  // The pair at `rank` (< Size()), copied.
  std::pair<std::string, double> At(size_t rank) const;

  // Calls f(std::string_view member, double score) for ranks [start, end) ascending, or
  // descending with `reverse`, until f returns false. Views live during the call only.
  // REQUIRES: start <= end <= Size().
  template <typename F>
  void Walk(size_t start, size_t end, bool reverse, F&& f) const {
    if (large_) return large_->Walk(start, end, reverse, std::forward<F>(f));
    Small().Walk(start, end, reverse, std::forward<F>(f));
  }

  // ZSCAN: calls f(member, score) for a batch of about `count` members from `cursor` and
  // returns the next cursor (0: done). A listpack is returned whole in one call, as Redis
  // does.
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& f) const {
    if (large_) return large_->Scan(cursor, count, std::forward<F>(f));
    Walk(0, Size(), false, [&](std::string_view m, double s) {
      f(m, s);
      return true;
    });
    return 0;
  }

  // Appends the listpack Redis would hold for this set. REQUIRES: encoding() == kListpack.
  void AppendListpack(std::string* out) const { Small().AppendListpack(out); }

 protected:
  core::ZSetPack Small() const { return core::ZSetPack(const_cast<BorrowedPairPack*>(&lp_)); }

  // The value's pack (no block while large_ is set); the value's tree otherwise.
  BorrowedPairPack lp_;
  core::SortedSet* large_ = nullptr;
};

// Reads and changes the sorted set a PrimeValue holds; the value follows every change
// (its block, its encoding), so it may be read between changes.
class ZSetRef : public ZSetView {
 public:
  // Makes *value an empty sorted set (listpack).
  static void MakeEmpty(PrimeValue* value);
  // Makes *value the set of `pairs` (sorted, distinct members), in the encoding its size
  // calls for. REQUIRES: pairs not empty.
  static void Store(const SortedPairs& pairs, PrimeValue* value);
  // REQUIRES: value->type() == ObjType::kZSet.
  explicit ZSetRef(PrimeValue* value) : ZSetView(*value), value_(value) {}

  // Adds `member` or changes its score, converting to the large encoding first when a
  // new member would pass the listpack's limits. Returns true when the member is new.
  // REQUIRES: score is not NaN.
  bool Set(std::string_view member, double score);
  // Set for a member known to be absent (saves the pack a search).
  void InsertNew(std::string_view member, double score);
  // false: absent.
  bool Remove(std::string_view member);
  // Removes ranks [start, end); returns how many.
  size_t EraseRanks(size_t start, size_t end);

 private:
  // Tells the value where the pack's block is after a change.
  void SyncBlock() { value_->set_block(lp_.block()); }
  // Converts to the large encoding unless the pack can grow by `bytes`.
  void MakeRoom(size_t bytes);
  // Moves the pairs into a new ZSetTree (Redis's zsetConvert), which the value holds.
  void ConvertToLarge();

  PrimeValue* value_;
};

// Registers the factory that rebuilds a sorted set from its Serialize form (RENAME, MOVE
// and COPY across shards). Call once at start-up.
void RegisterZSetFactory();

}  // namespace damselfly
