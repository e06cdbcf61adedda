// ZSetObject: the value of a sorted-set key, in one of Redis's two encodings:
//   - listpack (core/zset_listpack.h): member/score pairs in one block, while the set has
//     at most zset-max-listpack-entries members of at most zset-max-listpack-value bytes;
//   - skiplist (core/sorted_set.h): an order-statistic tree plus a member index, once it
//     outgrows either limit.
// Everything the commands need is here, once, for both encodings: ranks, counts below a
// score or lex bound, walks over rank ranges, erasure of rank ranges. The commands work
// in ranks: ZRANGEBYSCORE min max is the ranks [CountScoreBelow(min), CountScoreAtMost(max)).
//
// Conversions follow Redis 7.0: a set grows from listpack to skiplist when an insertion
// would pass a limit (or the listpack's 1 GiB cap) and never shrinks back, except that a
// result built whole (ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE, ZRANGESTORE) takes the
// encoding its size calls for (FromSorted).
//
// Thread contract: not thread-safe; a sorted set and its blocks belong to its shard's
// thread, which makes every call, the destructor included (ObjMalloc's rule).
// RegisterFactory writes the process's factory table: call it at start-up, before any
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
#include "src/core/zset_listpack.h"
#include "src/server/prime_value.h"

namespace damselfly {

class ZSetObject final : public core::TypedObject {
 public:
  using ScoreBound = core::ScoreBound;
  using LexBound = core::LexBound;
  // Member/score pairs in ascending (score, member) order.
  using SortedPairs = std::vector<std::pair<std::string, double>>;

  // An empty listpack-encoded set.
  ZSetObject() = default;
  explicit ZSetObject(core::Listpack lp) : lp_(std::move(lp)) {}
  // The large encoding; lp_ is left moved-from (no block), as ConvertToLarge leaves it,
  // so the set holds and counts no unused listpack.
  explicit ZSetObject(core::SortedSet* large) : large_(large) {
    core::Listpack unused = std::move(lp_);
  }
  ~ZSetObject() override;

  // A new set holding `pairs` (sorted, distinct members) in the encoding its size calls
  // for. REQUIRES: pairs not empty.
  static ZSetObject* FromSorted(const SortedPairs& pairs);
  // Registers the factory that rebuilds a sorted set from Serialize's form (RENAME, MOVE
  // and COPY across shards). Call once at start-up.
  static void RegisterFactory();

  ObjEncoding encoding() const { return large_ ? ObjEncoding::kSkiplist : ObjEncoding::kListpack; }
  size_t Size() const { return large_ ? large_->Size() : Small().Size(); }

  std::optional<double> Score(std::string_view member) const {
    return large_ ? large_->Score(member) : Small().Score(member);
  }
  // Adds `member` or changes its score, converting to the large encoding first when a
  // new member would pass the listpack's limits. Returns true when the member is new.
  // REQUIRES: score is not NaN.
  bool Set(std::string_view member, double score);
  // Set for a member known to be absent (saves the listpack a search).
  void InsertNew(std::string_view member, double score);
  // false: absent.
  bool Remove(std::string_view member) {
    return large_ ? large_->Remove(member) : Small().Remove(member);
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
  // Removes ranks [start, end); returns how many.
  size_t EraseRanks(size_t start, size_t end) {
    return large_ ? large_->EraseRanks(start, end) : Small().EraseRanks(start, end);
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

  size_t MallocUsed() const override;
  void Serialize(std::string* out) const override;

 private:
  core::ZSetListpack Small() const { return core::ZSetListpack(const_cast<core::Listpack*>(&lp_)); }
  // Moves the pairs into a new SortedSet (Redis's zsetConvert); lp_ is left moved-from.
  void ConvertToLarge();

  core::Listpack lp_;                 // the pairs while large_ is null
  core::SortedSet* large_ = nullptr;  // ObjMalloc'ed; the pairs once converted
};

// Makes `value` a new, empty sorted set (listpack).
ZSetObject* MakeZSet(PrimeValue* value);
// After a change to the sorted set `value` holds: keeps the encoding PrimeValue reports
// (OBJECT ENCODING) in step with the object's.
inline void SyncZSetEncoding(PrimeValue* value) {
  value->set_object_encoding(value->GetObjectAs<ZSetObject>()->encoding());
}

}  // namespace damselfly
