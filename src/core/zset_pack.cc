#include "src/core/zset_pack.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "src/core/listpack_value.h"

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

namespace {

constexpr uint8_t kWideDelta = 0xF0;
constexpr uint8_t kRawDouble = 0xF1;
constexpr double kMaxExactInt = 9007199254740992.0;  // 2^53

bool IsExactInt(double x) { return std::fabs(x) <= kMaxExactInt && std::trunc(x) == x; }

// Writes the code of `score` after `prev` into out (when not null); returns its size.
uint32_t EncodeScore(double prev, double score, uint8_t* out) {
  if (IsExactInt(prev) && IsExactInt(score) && score >= prev) {
    const uint64_t d = uint64_t(int64_t(score) - int64_t(prev));
    if (d < (uint64_t{1} << 28)) {
      const uint32_t n = d < 0x80 ? 1 : d < (1u << 14) ? 2 : d < (1u << 21) ? 3 : 4;
      if (out != nullptr) {
        static constexpr uint8_t kTag[] = {0, 0x00, 0x80, 0xC0, 0xE0};
        for (uint32_t i = 0; i < n; ++i) out[i] = (d >> (8 * (n - 1 - i))) & 0xFF;
        out[0] |= kTag[n];
      }
      return n;
    }
    if (out != nullptr) {
      out[0] = kWideDelta;
      for (int i = 0; i < 7; ++i) out[1 + i] = (d >> (8 * i)) & 0xFF;
    }
    return 8;
  }
  if (out != nullptr) {
    uint64_t bits;
    memcpy(&bits, &score, sizeof(bits));
    out[0] = kRawDouble;
    for (int i = 0; i < 8; ++i) out[1 + i] = (bits >> (8 * i)) & 0xFF;
  }
  return 9;
}

// The size of the code at p (from its first byte); 0 for a byte no code starts with.
uint32_t ScoreCodeSize(uint8_t b) {
  if (b < 0x80) return 1;
  if (b < 0xC0) return 2;
  if (b < 0xE0) return 3;
  if (b < 0xF0) return 4;
  if (b == kWideDelta) return 8;
  if (b == kRawDouble) return 9;
  return 0;
}

double DecodeScore(const uint8_t* p, double prev) {
  const uint8_t b = p[0];
  if (b == kRawDouble) {
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits |= uint64_t{p[1 + i]} << (8 * i);
    double score;
    memcpy(&score, &bits, sizeof(score));
    return score;
  }
  uint64_t d = 0;
  if (b == kWideDelta) {
    for (int i = 0; i < 7; ++i) d |= uint64_t{p[1 + i]} << (8 * i);
  } else {
    const uint32_t n = ScoreCodeSize(b);
    static constexpr uint8_t kMask[] = {0, 0x7F, 0x3F, 0x1F, 0x0F};
    d = b & kMask[n];
    for (uint32_t i = 1; i < n; ++i) d = d << 8 | p[i];
  }
  return double(int64_t(prev) + int64_t(d));
}

// Whether (score_a, a) sorts before (score_b, b).
bool Before(double score_a, std::string_view a, double score_b, std::string_view b) {
  if (score_a != score_b) return score_a < score_b;
  return a < b;  // string_view's compare is memcmp, then length: Redis's order
}

// Reads a listpack score element: an integer, or a text Redis wrote.
bool ParseScore(const Listpack::Value& v, double* score) {
  if (v.is_int) {
    *score = double(v.ival);
    return true;
  }
  const char* end = v.sval.data() + v.sval.size();
  auto [ptr, ec] = std::from_chars(v.sval.data(), end, *score);
  if (ec == std::errc() && ptr == end && !std::isnan(*score)) return true;
  // from_chars takes "inf" and "-inf" but not Redis's other spellings of infinity.
  if (v.sval == "+inf") {
    *score = std::numeric_limits<double>::infinity();
    return true;
  }
  return false;
}

}  // namespace

ZSetPack::Cursor::Cursor(const PairPack& pack) : pack_(pack), end_(pack.End()) {
  pos_ = PairPack::kHeaderSize;
  if (!Done()) Load();
}

void ZSetPack::Cursor::Load() {
  score_pos_ = pack_.After(pos_);
  score_ = DecodeScore(pack_.data() + score_pos_, prev_);
  next_ = score_pos_ + ScoreCodeSize(pack_.data()[score_pos_]);
}

void ZSetPack::Cursor::Next() {
  prev_ = score_;
  pos_ = next_;
  if (!Done()) Load();
}

Listpack::Value ZSetPack::Cursor::member() const { return pack_.Get(pos_); }

std::string_view ZSetPack::MemberText(const Listpack::Value& v, char (&buf)[kMaxScoreChars]) {
  if (!v.is_int) return v.sval;
  char* end = std::to_chars(buf, buf + kMaxScoreChars, v.ival).ptr;
  return std::string_view(buf, end - buf);
}

ZSetPack::Cursor ZSetPack::Find(std::string_view member) const {
  const lp_value::Encoded key = lp_value::Encode(member);
  Cursor c(*pack_);
  while (!c.Done() && !lp_value::Matches(pack_->data() + c.pos(), key)) c.Next();
  return c;
}

std::optional<double> ZSetPack::Score(std::string_view member) const {
  Cursor c = Find(member);
  if (c.Done()) return std::nullopt;
  return c.score();
}

void ZSetPack::Recode(PairPack::Pos score_pos, double prev, double score) {
  const uint32_t old_size = ScoreCodeSize(pack_->data()[score_pos]);
  const uint32_t new_size = EncodeScore(prev, score, nullptr);
  EncodeScore(prev, score, pack_->Splice(score_pos, old_size, new_size));
}

void ZSetPack::InsertNew(std::string_view member, double score) {
  if (score == 0) score = 0;  // -0 is kept as 0, as in Redis's listpack
  // Past every pair that sorts first (a member's text only matters at an equal score).
  char buf[kMaxScoreChars];
  Cursor c(*pack_);
  while (!c.Done() && (c.score() < score ||
                       (c.score() == score && MemberText(c.member(), buf) < member))) {
    c.Next();
  }
  const PairPack::Pos at = c.pos();
  const double prev = c.prev();
  // The pair that follows is coded against the new score: recode it first, since it lies
  // after the insertion point.
  if (!c.Done()) Recode(c.score_pos(), score, c.score());
  const lp_value::Encoded e = lp_value::Encode(member);
  const uint32_t code_size = EncodeScore(prev, score, nullptr);
  uint8_t* p = pack_->Splice(at, 0, e.size + code_size);
  lp_value::Write(p, e);
  EncodeScore(prev, score, p + e.size);
  pack_->AddPairs(1);
}

bool ZSetPack::Set(std::string_view member, double score) {
  if (Update(member, score)) return false;
  InsertNew(member, score);
  return true;
}

bool ZSetPack::Update(std::string_view member, double score) {
  Cursor c = Find(member);
  if (c.Done()) return false;
  if (c.score() == score) return true;  // as Redis: -0 does not replace 0
  Cursor after = c;
  after.Next();
  if (!after.Done()) Recode(after.score_pos(), c.prev(), after.score());
  pack_->Splice(c.pos(), c.next() - c.pos(), 0);
  pack_->AddPairs(-1);
  InsertNew(member, score);
  return true;
}

bool ZSetPack::Remove(std::string_view member) {
  Cursor c = Find(member);
  if (c.Done()) return false;
  Cursor after = c;
  after.Next();
  if (!after.Done()) Recode(after.score_pos(), c.prev(), after.score());
  pack_->Splice(c.pos(), c.next() - c.pos(), 0);
  pack_->AddPairs(-1);
  return true;
}

std::optional<size_t> ZSetPack::Rank(std::string_view member) const {
  const lp_value::Encoded key = lp_value::Encode(member);
  size_t rank = 0;
  const PairPack::Pos end = pack_->End();
  for (PairPack::Pos pos = PairPack::kHeaderSize; pos < end; ++rank) {
    if (lp_value::Matches(pack_->data() + pos, key)) return rank;
    const PairPack::Pos score_pos = pack_->After(pos);
    pos = score_pos + ScoreCodeSize(pack_->data()[score_pos]);
  }
  return std::nullopt;
}

template <typename Pred>
size_t ZSetPack::CountWhile(Pred&& below) const {
  size_t count = 0;
  char buf[kMaxScoreChars];
  for (Cursor c(*pack_); !c.Done() && below(c, buf); c.Next()) ++count;
  return count;
}

size_t ZSetPack::CountScoreBelow(ScoreBound min) const {
  return CountWhile([&](const Cursor& c, auto&) {
    return min.exclusive ? c.score() <= min.value : c.score() < min.value;
  });
}

size_t ZSetPack::CountScoreAtMost(ScoreBound max) const {
  return CountWhile([&](const Cursor& c, auto&) {
    return max.exclusive ? c.score() < max.value : c.score() <= max.value;
  });
}

size_t ZSetPack::CountLexBelow(LexBound min) const {
  if (min.kind == LexBound::kMin) return 0;
  if (min.kind == LexBound::kMax) return Size();
  return CountWhile([&](const Cursor& c, char(&buf)[kMaxScoreChars]) {
    std::string_view member = MemberText(c.member(), buf);
    return min.kind == LexBound::kExclusive ? member <= min.value : member < min.value;
  });
}

size_t ZSetPack::CountLexAtMost(LexBound max) const {
  if (max.kind == LexBound::kMin) return 0;
  if (max.kind == LexBound::kMax) return Size();
  return CountWhile([&](const Cursor& c, char(&buf)[kMaxScoreChars]) {
    std::string_view member = MemberText(c.member(), buf);
    return max.kind == LexBound::kExclusive ? member < max.value : member <= max.value;
  });
}

std::pair<std::string_view, double> ZSetPack::At(size_t rank, char (&buf)[kMaxScoreChars]) const {
  Cursor c(*pack_);
  for (size_t i = 0; i < rank; ++i) c.Next();
  return {MemberText(c.member(), buf), c.score()};
}

size_t ZSetPack::EraseRanks(size_t start, size_t end) {
  end = std::min(end, Size());
  if (start >= end) return 0;
  Cursor c(*pack_);
  for (size_t i = 0; i < start; ++i) c.Next();
  const PairPack::Pos from = c.pos();
  const double prev = c.prev();
  for (size_t i = start; i < end; ++i) c.Next();
  if (!c.Done()) Recode(c.score_pos(), prev, c.score());
  pack_->Splice(from, c.pos() - from, 0);
  pack_->AddPairs(-int64_t(end - start));
  return end - start;
}

void ZSetPack::AppendListpack(std::string* out) const {
  char buf[kMaxScoreChars];
  uint64_t total = lp_value::kListpackFrameBytes;
  for (Cursor c(*pack_); !c.Done(); c.Next()) {
    const uint64_t member = c.score_pos() - c.pos();
    const uint64_t score = lp_value::Encode(FormatScore(c.score(), buf)).size;
    total += member + lp_value::EncodeBacklen(nullptr, member) + score +
             lp_value::EncodeBacklen(nullptr, score);
  }
  uint8_t* p = lp_value::AppendListpackFrame(out, total, 2 * Size());
  for (Cursor c(*pack_); !c.Done(); c.Next()) {
    const uint64_t member = c.score_pos() - c.pos();
    memcpy(p, pack_->data() + c.pos(), member);
    p += member;
    p += lp_value::EncodeBacklen(p, member);
    const lp_value::Encoded score = lp_value::Encode(FormatScore(c.score(), buf));
    lp_value::Write(p, score);
    p += score.size;
    p += lp_value::EncodeBacklen(p, score.size);
  }
}

bool ZSetPack::FromListpack(const Listpack& lp, PairPack* out) {
  // An integer member's text lives in a buffer: two, so the previous one stays readable.
  char bufs[2][kMaxScoreChars];
  std::string_view prev_member;
  double prev = 0;
  for (Listpack::Pos pos = lp.First(); pos != Listpack::kNoPos;) {
    const Listpack::Pos score_pos = lp.Next(pos);
    if (score_pos == Listpack::kNoPos) return false;
    double score;
    if (!ParseScore(lp.Get(score_pos), &score)) return false;
    if (score == 0) score = 0;
    const std::string_view member = MemberText(lp.Get(pos), bufs[out->Size() % 2]);
    if (!out->Empty() && !Before(prev, prev_member, score, member)) return false;
    const lp_value::Encoded e = lp_value::Encode(member);
    const uint32_t code_size = EncodeScore(prev, score, nullptr);
    if (!PairPack::Fits(out->ByteSize(), e.size + code_size)) return false;
    uint8_t* p = out->Splice(out->End(), 0, e.size + code_size);
    lp_value::Write(p, e);
    EncodeScore(prev, score, p + e.size);
    out->AddPairs(1);
    prev_member = member;
    prev = score;
    pos = lp.Next(score_pos);
  }
  return true;
}

bool ZSetPack::Valid() const {
  const PairPack::Pos end = pack_->End();
  size_t pairs = 0;
  for (PairPack::Pos pos = PairPack::kHeaderSize; pos < end; ++pairs) {
    const uint64_t member = lp_value::CheckedSizeAt(pack_->data() + pos, end - pos);
    if (member == 0 || pos + member >= end) return false;
    pos += member;
    const uint32_t code = ScoreCodeSize(pack_->data()[pos]);
    if (code == 0 || code > end - pos) return false;
    pos += code;
  }
  return pairs == Size();
}

}  // namespace damselfly::core
