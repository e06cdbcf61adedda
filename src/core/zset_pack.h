// The small encoding of a sorted set: member/score pairs in one PairPack (pair_pack.h),
// ordered by score, then by member bytes (memcmp), so the first pair has the lowest rank.
// OBJECT ENCODING calls it listpack, as Redis 7.0 does its own; RDB and DUMP get the
// listpack Redis would hold (AppendListpack), in which a score is the text d2string
// writes (FormatScore; integral scores become listpack integers).
//
// A member is a listpack element; a score is a code that, when it and the previous pair's
// score (0 before the first) are integers within +-2^53, holds their difference, which
// the order makes non-negative, in 1-4 bytes below 2^28:
//   0ddddddd | 10dddddd d | 110ddddd d d | 1110dddd d d d   (big endian, 7/14/21/28 bits)
//   0xF0 <7 bytes little endian>                             (any other difference)
//   0xF1 <8 bytes: the double, little endian>                (any other score)
// Integer scores are the common case (counters, Unix times in seconds or milliseconds,
// job priorities), and close ones cost a byte or two where a listpack spends 2-10 on the
// integer and its back-length. The price: a score reads only in a walk from the start,
// which every operation here is anyway (Redis's zzl* functions walk too): the encoding
// is meant for at most zset-max-listpack-entries pairs (128 by default), where a walk
// over one block beats any pointer structure. Ranks are pair indexes. A -0 score is kept
// as 0, as Redis's listpack keeps it.
//
// Lex ranges assume, as in Redis, that all members have the same score; otherwise the
// result is defined by the order above but meaningless.
//
// Thread contract: not thread-safe; used on the thread that owns the PairPack it works on.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "src/core/listpack.h"
#include "src/core/pair_pack.h"
#include "src/core/sorted_set.h"  // ScoreBound, LexBound

namespace damselfly::core {

// Room for any score's text ("-1.7976931348623157e+308" and the like).
inline constexpr size_t kMaxScoreChars = 32;

// Writes the text Redis stores and ZSCAN shows for `score` (d2string: integral values
// within +-2^62 as integers, "-0" as "0"; others as %.17g: "1.5", "1.0000000000000001e-05",
// "1e+20", "inf", "-inf") to buf, returning a view of it. REQUIRES: not NaN.
std::string_view FormatScore(double score, char (&buf)[kMaxScoreChars]);

class ZSetPack {
 public:
  // The most bytes a new member or a new score adds beside the member's text: its
  // element's header, its score code, and the growth of the next pair's code. The owner
  // keeps the pack under PairPack::kMaxBytes with them (PairPack::Fits).
  static constexpr size_t kMaxPairOverhead = 5 + 9 + 9;
  // The most bytes a removal adds: it removes at least two, and the next pair's code,
  // now against an earlier score, grows by up to 7 (Remove, EraseRanks).
  static constexpr size_t kMaxEraseGrowth = 8;

  // Works on `pack`, which must hold member/score pairs. Holds a pointer only: make one
  // where needed.
  explicit ZSetPack(PairPack* pack) : pack_(pack) {}

  size_t Size() const { return pack_->Size(); }

  // The member's score, or nullopt.
  std::optional<double> Score(std::string_view member) const;
  // Inserts a member that is not there, at its place in the order.
  void InsertNew(std::string_view member, double score);
  // Adds or updates; returns true when the member is new.
  bool Set(std::string_view member, double score);
  // Gives a present member its new score (moving it); false, nothing changed, when the
  // member is absent.
  bool Update(std::string_view member, double score);
  // Removes the member; false when absent.
  bool Remove(std::string_view member);
  // 0-based ascending rank, or nullopt.
  std::optional<size_t> Rank(std::string_view member) const;

  // Pairs below a range's lower bound / at or below its upper bound (see sorted_set.h).
  size_t CountScoreBelow(ScoreBound min) const;
  size_t CountScoreAtMost(ScoreBound max) const;
  size_t CountLexBelow(LexBound min) const;
  size_t CountLexAtMost(LexBound max) const;

  // The pair at `rank` (< Size()); the member is decoded into `buf` when stored as an
  // integer, so the view lives until the next change or the next use of buf.
  std::pair<std::string_view, double> At(size_t rank, char (&buf)[kMaxScoreChars]) const;

  // Calls f(member, score) for ranks [start, end), ascending or (reverse) descending,
  // until f returns false. f must not change the set. REQUIRES: start <= end <= Size().
  template <typename F>
  void Walk(size_t start, size_t end, bool reverse, F&& f) const;

  // Removes ranks [start, end); returns how many.
  size_t EraseRanks(size_t start, size_t end);

  // Appends the listpack Redis would hold for this set to *out.
  void AppendListpack(std::string* out) const;
  // Fills *out (empty) with the pairs of a listpack of member/score elements whose scores
  // are texts Redis writes (or integers), in Redis's order. False, *out then unspecified,
  // when a score is no number (or NaN), the order is broken, or the pairs would not fit
  // a pack.
  static bool FromListpack(const Listpack& lp, PairPack* out);
  // Whether the pack holds exactly Size() well-formed pairs (a form from another shard).
  bool Valid() const;

  // The text of a member element (integers decoded into buf).
  static std::string_view MemberText(const Listpack::Value& v, char (&buf)[kMaxScoreChars]);

 private:
  // A walk over the pairs, each with its decoded score.
  class Cursor {
   public:
    explicit Cursor(const PairPack& pack);
    bool Done() const { return pos_ >= end_; }
    void Next();
    // The pair's member element, score code and the position after the pair.
    PairPack::Pos pos() const { return pos_; }
    PairPack::Pos score_pos() const { return score_pos_; }
    PairPack::Pos next() const { return next_; }
    double score() const { return score_; }
    // The previous pair's score (0 before the first): what this pair's code is against.
    double prev() const { return prev_; }
    Listpack::Value member() const;

   private:
    void Load();

    const PairPack& pack_;
    PairPack::Pos end_, pos_, score_pos_ = 0, next_ = 0;
    double score_ = 0, prev_ = 0;
  };

  // The cursor at `member`, Done() when absent.
  Cursor Find(std::string_view member) const;
  // Rewrites the score code at `score_pos` (a score of `score`) against a new previous
  // score.
  void Recode(PairPack::Pos score_pos, double prev, double score);
  // Counts the leading pairs for which below(member, score) holds.
  template <typename Pred>
  size_t CountWhile(Pred&& below) const;

  PairPack* pack_;
};

template <typename F>
void ZSetPack::Walk(size_t start, size_t end, bool reverse, F&& f) const {
  if (start >= end) return;
  Cursor c(*pack_);
  for (size_t i = 0; i < start; ++i) c.Next();
  char buf[kMaxScoreChars];
  if (!reverse) {
    for (size_t i = start; i < end; ++i, c.Next()) {
      if (!f(MemberText(c.member(), buf), c.score())) return;
    }
    return;
  }
  // Scores decode from the front only: note the pairs, then call f from the back (on the
  // stack up to 128 pairs, zset-max-listpack-entries' default).
  absl::InlinedVector<std::pair<PairPack::Pos, double>, 128> pairs;
  for (size_t i = start; i < end; ++i, c.Next()) pairs.emplace_back(c.pos(), c.score());
  for (auto it = pairs.rbegin(); it != pairs.rend(); ++it) {
    if (!f(MemberText(pack_->Get(it->first), buf), it->second)) return;
  }
}

}  // namespace damselfly::core
