#include "src/core/zset_listpack.h"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>

namespace damselfly::core {

std::string_view FormatScore(double score, char (&buf)[kMaxScoreChars]) {
  // Redis's d2string: integral values within +-2^62 print as integers (so -0 is "0" and
  // 123456789012345678.0 is "123456789012345680"), the rest as %.17g ("inf", "1e+20").
  constexpr double kIntLimit = double(std::numeric_limits<int64_t>::max() / 2);
  char* end;
  if (score >= -kIntLimit && score <= kIntLimit && double(int64_t(score)) == score) {
    end = std::to_chars(buf, buf + kMaxScoreChars, int64_t(score)).ptr;
  } else {
    // to_chars with general format and precision 17 is printf's %.17g.
    end = std::to_chars(buf, buf + kMaxScoreChars, score, std::chars_format::general, 17).ptr;
  }
  return std::string_view(buf, end - buf);
}

std::string_view ZSetListpack::MemberText(const Listpack::Value& v, char (&buf)[kMaxScoreChars]) {
  if (!v.is_int) return v.sval;
  char* end = std::to_chars(buf, buf + kMaxScoreChars, v.ival).ptr;
  return std::string_view(buf, end - buf);
}

double ZSetListpack::ScoreOf(const Listpack::Value& v) {
  if (v.is_int) return double(v.ival);
  // Scores are written by FormatScore, which from_chars reads back exactly.
  double score = 0;
  std::from_chars(v.sval.data(), v.sval.data() + v.sval.size(), score);
  return score;
}

Listpack::Pos ZSetListpack::Find(std::string_view member) const {
  return lp_->Find(lp_->First(), member, 1);
}

std::optional<double> ZSetListpack::Score(std::string_view member) const {
  Listpack::Pos pos = Find(member);
  if (pos == Listpack::kNoPos) return std::nullopt;
  return ScoreOf(lp_->Get(lp_->Next(pos)));
}

namespace {

// Whether (score_a, a) sorts before (score_b, b).
bool Before(double score_a, std::string_view a, double score_b, std::string_view b) {
  if (score_a != score_b) return score_a < score_b;
  return a < b;  // string_view's compare is memcmp, then length: Redis's order
}

}  // namespace

void ZSetListpack::InsertNew(std::string_view member, double score) {
  char score_buf[kMaxScoreChars];
  std::string_view score_text = FormatScore(score, score_buf);
  char buf[kMaxScoreChars];
  for (Listpack::Pos pos = lp_->First(); pos != Listpack::kNoPos;) {
    Listpack::Pos score_pos = lp_->Next(pos);
    if (Before(score, member, ScoreOf(lp_->Get(score_pos)), MemberText(lp_->Get(pos), buf))) {
      Listpack::Pos at = lp_->Insert(pos, member, Listpack::Where::kBefore);
      lp_->Insert(at, score_text, Listpack::Where::kAfter);
      return;
    }
    pos = lp_->Next(score_pos);
  }
  lp_->Append(member);
  lp_->Append(score_text);
}

bool ZSetListpack::Set(std::string_view member, double score) {
  Listpack::Pos pos = Find(member);
  if (pos == Listpack::kNoPos) {
    InsertNew(member, score);
    return true;
  }
  Listpack::Pos score_pos = lp_->Next(pos);
  double old = ScoreOf(lp_->Get(score_pos));
  if (old == score) return false;  // as Redis: -0 does not replace 0
  lp_->Delete(lp_->Delete(pos));   // the member, then the score that moved into its place
  InsertNew(member, score);
  return false;
}

bool ZSetListpack::Remove(std::string_view member) {
  Listpack::Pos pos = Find(member);
  if (pos == Listpack::kNoPos) return false;
  lp_->Delete(lp_->Delete(pos));
  return true;
}

std::optional<size_t> ZSetListpack::Rank(std::string_view member) const {
  size_t rank = 0;
  for (Listpack::Pos pos = lp_->First(); pos != Listpack::kNoPos; ++rank) {
    if (lp_->Get(pos).Equals(member)) return rank;
    pos = lp_->Next(lp_->Next(pos));
  }
  return std::nullopt;
}

template <typename Pred>
size_t ZSetListpack::CountWhile(Pred&& below) const {
  size_t count = 0;
  char buf[kMaxScoreChars];
  for (Listpack::Pos pos = lp_->First(); pos != Listpack::kNoPos; ++count) {
    Listpack::Pos score_pos = lp_->Next(pos);
    if (!below(lp_->Get(pos), ScoreOf(lp_->Get(score_pos)), buf)) break;
    pos = lp_->Next(score_pos);
  }
  return count;
}

size_t ZSetListpack::CountScoreBelow(ScoreBound min) const {
  return CountWhile([&](const Listpack::Value&, double score, auto&) {
    return min.exclusive ? score <= min.value : score < min.value;
  });
}

size_t ZSetListpack::CountScoreAtMost(ScoreBound max) const {
  return CountWhile([&](const Listpack::Value&, double score, auto&) {
    return max.exclusive ? score < max.value : score <= max.value;
  });
}

size_t ZSetListpack::CountLexBelow(LexBound min) const {
  if (min.kind == LexBound::kMin) return 0;
  if (min.kind == LexBound::kMax) return Size();
  return CountWhile([&](const Listpack::Value& v, double, char(&buf)[kMaxScoreChars]) {
    std::string_view member = MemberText(v, buf);
    return min.kind == LexBound::kExclusive ? member <= min.value : member < min.value;
  });
}

size_t ZSetListpack::CountLexAtMost(LexBound max) const {
  if (max.kind == LexBound::kMin) return 0;
  if (max.kind == LexBound::kMax) return Size();
  return CountWhile([&](const Listpack::Value& v, double, char(&buf)[kMaxScoreChars]) {
    std::string_view member = MemberText(v, buf);
    return max.kind == LexBound::kExclusive ? member < max.value : member <= max.value;
  });
}

std::pair<std::string_view, double> ZSetListpack::At(size_t rank,
                                                     char (&buf)[kMaxScoreChars]) const {
  Listpack::Pos pos = lp_->Seek(int64_t(2 * rank));
  return {MemberText(lp_->Get(pos), buf), ScoreOf(lp_->Get(lp_->Next(pos)))};
}

size_t ZSetListpack::EraseRanks(size_t start, size_t end) {
  if (start >= end) return 0;
  return lp_->DeleteRange(int64_t(2 * start), 2 * (end - start)) / 2;
}

}  // namespace damselfly::core
