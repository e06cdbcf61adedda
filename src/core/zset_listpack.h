// The small encoding of a sorted set, as Redis 7.0 keeps it: member, score, member,
// score... in one core::Listpack, ordered by score, then by member bytes (memcmp), so
// the first pair has the lowest rank. A score is stored as Redis writes it (d2string:
// FormatScore, so integral scores become listpack integers); ZSCAN and a future DUMP show
// the bytes as they are.
//
// Every operation is a walk over the pairs (Redis's zzl* functions do the same): the
// encoding is meant for at most zset-max-listpack-entries pairs (128 by default), where
// a walk over one block beats any pointer structure. Ranks are pair indexes.
//
// Lex ranges assume, as in Redis, that all members have the same score; otherwise the
// result is defined by the order above but meaningless.
//
// Thread contract: not thread-safe; used on the thread that owns the Listpack it works on
// (see listpack.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

#include "src/core/listpack.h"
#include "src/core/sorted_set.h"  // ScoreBound, LexBound

namespace damselfly::core {

// Room for any score's text ("-1.7976931348623157e+308" and the like).
inline constexpr size_t kMaxScoreChars = 32;

// Writes the text Redis stores and ZSCAN shows for `score` (d2string: integral values
// within +-2^62 as integers, "-0" as "0"; others as %.17g: "1.5", "1.0000000000000001e-05",
// "1e+20", "inf", "-inf") to buf, returning a view of it. REQUIRES: not NaN.
std::string_view FormatScore(double score, char (&buf)[kMaxScoreChars]);

class ZSetListpack {
 public:
  // Views over `lp`, which must hold member/score pairs (an even count). The wrapper
  // holds a pointer only: make one where needed.
  explicit ZSetListpack(Listpack* lp) : lp_(lp) {}

  size_t Size() const { return lp_->Size() / 2; }

  // The member's score, or nullopt.
  std::optional<double> Score(std::string_view member) const;
  // Inserts a member that is not there, at its place in the order.
  void InsertNew(std::string_view member, double score);
  // Adds or updates; returns true when the member is new.
  bool Set(std::string_view member, double score);
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
  // until f returns false. REQUIRES: start <= end <= Size().
  template <typename F>
  void Walk(size_t start, size_t end, bool reverse, F&& f) const;

  // Removes ranks [start, end); returns how many.
  size_t EraseRanks(size_t start, size_t end);

  // The member of the entry at `pos` as text (integers decoded into buf), and a score
  // entry's value.
  static std::string_view MemberText(const Listpack::Value& v, char (&buf)[kMaxScoreChars]);
  static double ScoreOf(const Listpack::Value& v);

 private:
  // Position of the member entry equal to `member`, or kNoPos.
  Listpack::Pos Find(std::string_view member) const;
  // Counts the leading pairs for which below(member, score) holds.
  template <typename Pred>
  size_t CountWhile(Pred&& below) const;

  Listpack* lp_;
};

template <typename F>
void ZSetListpack::Walk(size_t start, size_t end, bool reverse, F&& f) const {
  if (start >= end) return;
  char buf[kMaxScoreChars];
  if (!reverse) {
    Listpack::Pos pos = lp_->Seek(int64_t(2 * start));
    for (size_t i = start; i < end; ++i) {
      Listpack::Pos score_pos = lp_->Next(pos);
      if (!f(MemberText(lp_->Get(pos), buf), ScoreOf(lp_->Get(score_pos)))) return;
      pos = lp_->Next(score_pos);
    }
  } else {
    Listpack::Pos score_pos = lp_->Seek(int64_t(2 * end - 1));
    for (size_t i = end; i > start; --i) {
      Listpack::Pos pos = lp_->Prev(score_pos);
      if (!f(MemberText(lp_->Get(pos), buf), ScoreOf(lp_->Get(score_pos)))) return;
      score_pos = lp_->Prev(pos);
    }
  }
}

}  // namespace damselfly::core
