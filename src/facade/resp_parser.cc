// RespParser: see resp_parser.h for the contract.
//
// Behaviour follows redis-server 7.0 byte for byte (checked against a live server):
//  - A request is multibulk if its first byte is '*', inline otherwise.
//  - Multibulk count and bulk length lines end at the first '\r'; the byte after it is
//    required but never inspected (Redis skips two bytes), and the two bytes after bulk
//    data are skipped whatever they are.
//  - Numbers follow Redis's string2ll: optional '-', no '+', no leading zeros, no
//    spaces, no "-0", 64-bit range.
//  - "*<n>" with n <= 0 is an empty request (skipped). n is capped at INT_MAX as in 7.0.
//  - Redis looks for line terminators with strchr on a NUL-terminated buffer, so a NUL
//    before the terminator hides it: the request then waits until more than 64KiB are
//    buffered and fails with "too big ...". We do the same (line_blocked_).
//  - A line (count, bulk length or inline) whose terminator is not within its first
//    max_inline_len + 1 bytes is "too big". Redis decides this on whatever its last
//    read happened to buffer; we decide on the line itself so the outcome does not
//    depend on how the bytes were split (it equals Redis's when bytes arrive slowly).
//  - The unauthenticated limits apply to multibulk requests only, as in Redis.
#include "src/facade/resp_parser.h"

#include <glog/logging.h>

#include <algorithm>
#include <climits>
#include <cstring>

namespace damselfly::facade {

namespace {

constexpr char kInvalidMultibulkLen[] = "ERR Protocol error: invalid multibulk length";
constexpr char kInvalidBulkLen[] = "ERR Protocol error: invalid bulk length";
constexpr char kUnauthMultibulkLen[] = "ERR Protocol error: unauthenticated multibulk length";
constexpr char kUnauthBulkLen[] = "ERR Protocol error: unauthenticated bulk length";
constexpr char kTooBigMbulk[] = "ERR Protocol error: too big mbulk count string";
constexpr char kTooBigBulk[] = "ERR Protocol error: too big bulk count string";
constexpr char kTooBigInline[] = "ERR Protocol error: too big inline request";
constexpr char kUnbalancedQuotes[] = "ERR Protocol error: unbalanced quotes in request";

constexpr int64_t kUnauthMaxArgs = 10;
constexpr int64_t kUnauthMaxBulkLen = 16384;

// Inline arguments that had quotes live in inline_scratch_; their ArgRef offset is
// marked with this bit.
constexpr size_t kScratchBit = size_t{1} << (sizeof(size_t) * 8 - 1);

// Redis's string2ll rules: "0", or an optional '-' then a non-zero digit then digits,
// within the int64 range.
bool ParseRedisInt(const char* s, size_t len, int64_t* out) {
  if (len == 0 || len > 20) return false;
  if (len == 1 && s[0] == '0') {
    *out = 0;
    return true;
  }
  size_t i = 0;
  const bool negative = s[0] == '-';
  if (negative && ++i == len) return false;
  if (s[i] < '1' || s[i] > '9') return false;
  uint64_t v = 0;
  for (; i < len; ++i) {
    const unsigned d = static_cast<unsigned char>(s[i]) - '0';
    if (d > 9) return false;
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  if (negative) {
    if (v > uint64_t{1} << 63) return false;
    *out = static_cast<int64_t>(0 - v);  // two's complement; exact for -2^63
  } else {
    if (v > uint64_t{INT64_MAX}) return false;
    *out = static_cast<int64_t>(v);
  }
  return true;
}

// Fast path for the common "<digits>\r?" line tail starting at p[i]: a positive number
// of at most 18 digits (no overflow possible) or "0", directly followed by '\r' and one
// more byte. Semantically identical to the general path: the first '\r' is right after
// the digits and there is no NUL before it. Returns the '\r' offset, or 0 if the fast
// path does not apply.
inline size_t FastNumber(const char* p, size_t i, size_t n, int64_t* out) {
  const size_t start = i;
  if (i >= n) return 0;
  unsigned d = static_cast<unsigned char>(p[i]) - '0';
  if (d > 9) return 0;
  uint64_t v = d;
  ++i;
  if (d != 0) {
    while (i < n && i - start < 18) {
      d = static_cast<unsigned char>(p[i]) - '0';
      if (d > 9) break;
      v = v * 10 + d;
      ++i;
    }
  }
  if (i + 1 >= n || p[i] != '\r') return 0;
  *out = static_cast<int64_t>(v);
  return i;
}

// isspace() in the C locale.
inline bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

inline bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

inline unsigned HexValue(char c) {
  if (c <= '9') return c - '0';
  if (c >= 'a') return c - 'a' + 10;
  return c - 'A' + 10;
}

// Lookup table for the unquoted-token scan: ends at the token terminators Redis uses
// (' ', '\t', '\r', '\n'; '\v' and '\f' are part of a token) or at a quote.
struct UnquotedStops {
  bool stop[256] = {};
  constexpr UnquotedStops() {
    for (unsigned char c : {' ', '\t', '\r', '\n', '"', '\''}) stop[c] = true;
  }
};
constexpr UnquotedStops kUnquotedStops;

template <typename Ref>
bool SplitInline(const char* line, size_t len, std::vector<Ref>* refs, std::string* scratch) {
  size_t i = 0;
  while (true) {
    while (i < len && IsSpace(line[i])) ++i;
    if (i == len) return true;

    // Fast path: a token without quotes is a view into the input.
    const size_t start = i;
    while (i < len && !kUnquotedStops.stop[static_cast<unsigned char>(line[i])]) ++i;
    if (i == len || (line[i] != '"' && line[i] != '\'')) {
      refs->push_back({start, i - start});
      continue;  // the terminator is whitespace: the blank skip consumes it
    }

    // The token has quotes: unescape it into the scratch buffer.
    const size_t scratch_start = scratch->size();
    scratch->append(line + start, i - start);
    enum { kPlain, kDouble, kSingle } mode = kPlain;
    while (true) {
      if (mode == kPlain) {
        if (i == len) break;
        const char c = line[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') break;
        if (c == '"') {
          mode = kDouble;
        } else if (c == '\'') {
          mode = kSingle;
        } else {
          scratch->push_back(c);
        }
        ++i;
        continue;
      }
      if (i == len) return false;  // unterminated quotes
      const char c = line[i];
      if (mode == kDouble) {
        if (c == '\\' && i + 3 < len && line[i + 1] == 'x' && IsHexDigit(line[i + 2]) &&
            IsHexDigit(line[i + 3])) {
          scratch->push_back(static_cast<char>(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3])));
          i += 4;
        } else if (c == '\\' && i + 1 < len) {
          char e = line[i + 1];
          switch (e) {
            case 'n': e = '\n'; break;
            case 'r': e = '\r'; break;
            case 't': e = '\t'; break;
            case 'b': e = '\b'; break;
            case 'a': e = '\a'; break;
            default: break;
          }
          scratch->push_back(e);
          i += 2;
        } else if (c == '"') {
          // A closing quote must be followed by whitespace or the end of the line.
          if (i + 1 < len && !IsSpace(line[i + 1])) return false;
          ++i;
          break;
        } else {
          scratch->push_back(c);
          ++i;
        }
      } else {  // kSingle
        if (c == '\\' && i + 1 < len && line[i + 1] == '\'') {
          scratch->push_back('\'');
          i += 2;
        } else if (c == '\'') {
          if (i + 1 < len && !IsSpace(line[i + 1])) return false;
          ++i;
          break;
        } else {
          scratch->push_back(c);
          ++i;
        }
      }
    }
    refs->push_back({scratch_start | kScratchBit, scratch->size() - scratch_start});
  }
}

}  // namespace

RespParser::RespParser() : RespParser(Limits{}) {}

RespParser::RespParser(Limits limits) : limits_(limits) {
}

void RespParser::ResetRequest() {
  state_ = State::kStart;
  pos_ = 0;
  scan_pos_ = 0;
  line_blocked_ = false;
  args_expected_ = 0;
  bulk_len_ = 0;
  bytes_needed_ = 0;
}

void RespParser::Reset() {
  ResetRequest();
  arg_refs_.clear();
  args_.clear();
  inline_scratch_.clear();
  error_.clear();
}

void RespParser::ShrinkArgs() {
  // Not `= {}`: that assigns an empty initializer list and keeps the capacity.
  if (arg_refs_.capacity() > kRetainedArgs) std::vector<ArgRef>().swap(arg_refs_);
  if (args_.capacity() > kRetainedArgs) std::vector<std::string_view>().swap(args_);
}

RespParser::Result RespParser::Fail(std::string message) {
  error_ = std::move(message);
  ResetRequest();
  args_.clear();
  return Result::kError;
}

RespParser::Result RespParser::Parse(std::string_view input, size_t* consumed) {
  *consumed = 0;
  if (!error_.empty()) return Result::kError;  // REQUIRES Reset() after an error

  if (state_ == State::kStart) {
    if (input.empty()) return Result::kNeedMore;
    ResetRequest();
    state_ = input[0] == '*' ? State::kArrayLen : State::kInline;
  }
  const size_t seen = std::max(pos_, scan_pos_);
  DCHECK_GE(input.size(), seen) << "Parse() was given fewer bytes than before";
  if (input.size() < seen) return Result::kNeedMore;

  return state_ == State::kInline ? ParseInline(input, consumed)
                                  : ParseMultibulk(input, consumed);
}

// Looks for the terminator of the line starting at pos_, continuing where the previous
// call stopped. kFound sets *end to the terminator's offset; for '\r' the byte after it
// is also present.
RespParser::LineStatus RespParser::FindLine(std::string_view input, char terminator,
                                            size_t* end) {
  const size_t n = input.size();
  const size_t max_line = limits_.max_inline_len;
  if (!line_blocked_) {
    const size_t window_end = (n - pos_ > max_line) ? pos_ + max_line + 1 : n;
    if (scan_pos_ < window_end) {
      const void* hit = memchr(input.data() + scan_pos_, terminator, window_end - scan_pos_);
      if (hit != nullptr) {
        scan_pos_ = static_cast<const char*>(hit) - input.data();
        if (terminator == '\r' && scan_pos_ + 1 >= n) return LineStatus::kNeedMore;
        *end = scan_pos_;
        return LineStatus::kFound;
      }
      scan_pos_ = window_end;
    }
  }
  return n - pos_ > max_line ? LineStatus::kTooBig : LineStatus::kNeedMore;
}

// A line ending at `end` is malformed. If it contains a NUL, Redis would not have seen
// its terminator yet: wait like Redis does. Otherwise fail with `message`.
RespParser::Result RespParser::FailLine(std::string_view input, const char* too_big,
                                        std::string message) {
  if (memchr(input.data() + pos_, '\0', scan_pos_ - pos_) != nullptr) {
    line_blocked_ = true;
    if (input.size() - pos_ > limits_.max_inline_len) return Fail(too_big);
    return Result::kNeedMore;
  }
  return Fail(std::move(message));
}

RespParser::Result RespParser::ParseMultibulk(std::string_view input, size_t* consumed) {
  const char* const p = input.data();
  const size_t n = input.size();

  if (state_ == State::kArrayLen) {
    int64_t count;
    size_t cr = FastNumber(p, 1, n, &count);
    if (cr == 0 || cr > limits_.max_inline_len) {
      switch (FindLine(input, '\r', &cr)) {
        case LineStatus::kNeedMore:
          return Result::kNeedMore;
        case LineStatus::kTooBig:
          return Fail(kTooBigMbulk);
        case LineStatus::kFound:
          break;
      }
      if (!ParseRedisInt(p + 1, cr - 1, &count))
        return FailLine(input, kTooBigMbulk, kInvalidMultibulkLen);
    }
    const int64_t max_args =
        static_cast<int64_t>(std::min<size_t>(limits_.max_args, size_t{INT_MAX}));
    if (count > max_args) return Fail(kInvalidMultibulkLen);
    if (unauthenticated_ && count > kUnauthMaxArgs) return Fail(kUnauthMultibulkLen);
    if (count <= 0) {
      *consumed = cr + 2;
      ResetRequest();
      return Result::kSkipped;
    }
    args_expected_ = count;
    arg_refs_.clear();
    pos_ = scan_pos_ = cr + 2;
    state_ = State::kBulkLen;
  }

  while (true) {
    if (state_ == State::kBulkLen) {
      int64_t len;
      size_t cr = (pos_ < n && p[pos_] == '$') ? FastNumber(p, pos_ + 1, n, &len) : 0;
      if (cr == 0 || cr - pos_ > limits_.max_inline_len) {
        if (pos_ >= n) return Result::kNeedMore;
        switch (FindLine(input, '\r', &cr)) {
          case LineStatus::kNeedMore:
            return Result::kNeedMore;
          case LineStatus::kTooBig:
            return Fail(kTooBigBulk);
          case LineStatus::kFound:
            break;
        }
        if (p[pos_] != '$') {
          // Redis's error formatting turns '\r' and '\n' into spaces.
          char got = p[pos_];
          if (got == '\r' || got == '\n') got = ' ';
          return FailLine(input, kTooBigBulk,
                          std::string("ERR Protocol error: expected '$', got '") + got + "'");
        }
        if (!ParseRedisInt(p + pos_ + 1, cr - pos_ - 1, &len))
          return FailLine(input, kTooBigBulk, kInvalidBulkLen);
      }
      if (len < 0 || static_cast<uint64_t>(len) > limits_.max_bulk_len)
        return Fail(kInvalidBulkLen);
      if (unauthenticated_ && len > kUnauthMaxBulkLen) return Fail(kUnauthBulkLen);
      bulk_len_ = len;
      pos_ = cr + 2;
      state_ = State::kBulkData;
    }

    // kBulkData: the argument and the two bytes after it (not checked, as in Redis).
    const size_t len = static_cast<size_t>(bulk_len_);
    if (n - pos_ < len + 2) {
      bytes_needed_ = pos_ + len + 2;
      return Result::kNeedMore;
    }
    arg_refs_.push_back({pos_, len});
    pos_ += len + 2;
    bytes_needed_ = 0;
    if (arg_refs_.size() == static_cast<size_t>(args_expected_)) break;
    scan_pos_ = pos_;
    state_ = State::kBulkLen;
  }

  args_.clear();
  args_.reserve(arg_refs_.size());
  for (const ArgRef& ref : arg_refs_) args_.emplace_back(p + ref.offset, ref.length);
  // A big command's offsets are not needed while it runs: free them before it allocates.
  if (arg_refs_.size() > kRetainedArgs) std::vector<ArgRef>().swap(arg_refs_);
  *consumed = pos_;
  ResetRequest();
  return Result::kCommand;
}

RespParser::Result RespParser::ParseInline(std::string_view input, size_t* consumed) {
  const char* const p = input.data();
  size_t nl;
  switch (FindLine(input, '\n', &nl)) {
    case LineStatus::kNeedMore:
      return Result::kNeedMore;
    case LineStatus::kTooBig:
      return Fail(kTooBigInline);
    case LineStatus::kFound:
      break;
  }
  // A NUL anywhere in the line hides the newline from Redis.
  if (memchr(p, '\0', nl) != nullptr) {
    line_blocked_ = true;
    if (input.size() > limits_.max_inline_len) return Fail(kTooBigInline);
    return Result::kNeedMore;
  }

  const size_t line_len = (nl > 0 && p[nl - 1] == '\r') ? nl - 1 : nl;
  arg_refs_.clear();
  inline_scratch_.clear();
  if (!SplitInline(p, line_len, &arg_refs_, &inline_scratch_)) return Fail(kUnbalancedQuotes);

  *consumed = nl + 1;
  ResetRequest();
  if (arg_refs_.empty()) return Result::kSkipped;

  // Built only now: inline_scratch_ no longer reallocates.
  args_.clear();
  for (const ArgRef& ref : arg_refs_) {
    if (ref.offset & kScratchBit) {
      args_.emplace_back(inline_scratch_.data() + (ref.offset & ~kScratchBit), ref.length);
    } else {
      args_.emplace_back(p + ref.offset, ref.length);
    }
  }
  return Result::kCommand;
}

}  // namespace damselfly::facade
