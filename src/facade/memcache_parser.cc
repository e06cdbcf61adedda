// MemcacheParser: see memcache_parser.h for the contract.
//
// Behaviour follows memcached 1.6.18, checked request by request against a live server
// (memcache_parser_test.cc holds them as tests). What a reader would not guess:
//  - A command line ends at the first '\n'; one '\r' before it is dropped. The line is
//    cut at its first NUL (memcached treats it as a C string) and split on ' ' only;
//    runs of spaces and leading spaces are ignored. Command names are case-sensitive.
//  - An empty or blank line, an unknown command and a wrong number of arguments all get
//    "ERROR" and the connection stays open.
//  - Keys: at most 250 bytes, else "CLIENT_ERROR bad command line format". memcached
//    accepts control bytes in keys (tabs, '\r', 0x01, 0x7f, 0xff...) although the
//    protocol forbids them; Limits::strict_keys rejects them.
//  - Numbers are read like strtol/strtoull plus memcached's safe_* checks: leading
//    whitespace and a '+' or '-' sign are accepted, and so is anything after the digits
//    that starts with a whitespace byte ("5\tjunk" is 5). Unsigned values accept '-'
//    when the wrapped result still looks non-negative as int64 ("-1" fails, but
//    "-18446744073709551615" is 1 and "-9223372036854775809" is 2^63-1). memcached
//    parses 32-bit fields as a long and keeps the low 32 bits: flags "4294967296" are
//    stored as 0, and a data length of "4294967297" reads a 1-byte block.
//  - A malformed storage command line ("bad command line format", e.g. a negative or
//    non-numeric length) does NOT swallow its data block: memcached parses the block as
//    the next command line (usually "ERROR"). Only "object too large" and errors found
//    after an ms length was read swallow length + 2 bytes, whatever those bytes are.
//  - The data block is followed by exactly "\r\n". Otherwise memcached consumes
//    length + 2 bytes anyway, replies "CLIENT_ERROR bad data chunk" and parses what
//    follows as a new command: "set k 0 0 3\r\nabcd\r\n" eats "abcd\r", then the lone
//    "\n" is an empty line ("ERROR").
//  - noreply is whatever the last token is, for the commands that take it: an error on
//    such a line is not sent either ("set k 0 0 -1 noreply" is silent). "ERROR" for a
//    wrong argument count is always sent. Meta commands always send their errors.
//  - Line length: memcached closes the connection without a reply when it holds more
//    than 2048 bytes with no '\n', unless the line starts (after at most 100 spaces)
//    with "get " or "gets ". Whether that happens depends on how the bytes arrived; we
//    decide on the line itself (a '\n' beyond byte 2048 is too late), which matches
//    memcached whenever the line arrives in pieces and keeps results independent of
//    how reads split the stream.
//  - Meta commands share one flag pre-parse whose errors for mg/ms read "duplicate
//    flag", "invalid flag", "bad token in command line format"... but md and ma turn
//    every one of them into "invalid or duplicate flag". Letters >= 127 are reported
//    as duplicates. A numeric error does not stop the scan: a later duplicate or
//    invalid letter wins, otherwise the last numeric error's text; a bad F value has
//    no text of its own ("bad command line format"). At most 19 tokens per meta line.
//    E (the client's new cas, memcached 1.6.21) is an invalid flag in 1.6.18, the
//    version we report, so clients that check the version never send it.
#include "src/facade/memcache_parser.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace damselfly::facade {

namespace {

using Type = MemcacheCommand::Type;

constexpr std::string_view kUnknownCommand = "ERROR";
constexpr std::string_view kBadFormat = "CLIENT_ERROR bad command line format";
constexpr std::string_view kBadDataChunk = "CLIENT_ERROR bad data chunk";
constexpr std::string_view kTooLarge = "SERVER_ERROR object too large for cache";
constexpr std::string_view kInvalidExptime = "CLIENT_ERROR invalid exptime argument";
constexpr std::string_view kInvalidDelta = "CLIENT_ERROR invalid numeric delta argument";
constexpr std::string_view kDeleteUsage =
    "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]";
constexpr std::string_view kOutOfMemoryReading = "SERVER_ERROR out of memory reading request";
constexpr std::string_view kDuplicateFlag = "CLIENT_ERROR duplicate flag";
constexpr std::string_view kInvalidFlag = "CLIENT_ERROR invalid flag";
constexpr std::string_view kBadToken = "CLIENT_ERROR bad token in command line format";
constexpr std::string_view kBadBase64Key = "CLIENT_ERROR error decoding key";
constexpr std::string_view kBadModeLength = "CLIENT_ERROR incorrect length for M token";
constexpr std::string_view kBadInitial = "CLIENT_ERROR invalid numeric initial value";
constexpr std::string_view kBadMetaDelta = "CLIENT_ERROR invalid numeric delta value";
constexpr std::string_view kInvalidOrDuplicate = "CLIENT_ERROR invalid or duplicate flag";
constexpr std::string_view kOpaqueTooLong = "CLIENT_ERROR opaque token too long";
constexpr std::string_view kMgTooManyTokens = "CLIENT_ERROR options flags are too long";
constexpr std::string_view kTooManyTokens = "CLIENT_ERROR options flags too long";
constexpr std::string_view kBadSetMode = "CLIENT_ERROR invalid mode for ms M token";
constexpr std::string_view kBadArithmeticMode = "CLIENT_ERROR invalid mode for ma M token";

constexpr size_t kMaxKeyLength = 250;     // memcached's KEY_MAX_LENGTH
constexpr size_t kMaxMetaTokens = 19;     // memcached: ntokens (real + 1) <= 20
constexpr size_t kMaxOpaqueToken = 32;    // the O token, letter included
constexpr size_t kMaxLeadingSpaces = 100;  // before "get " on an over-long line
constexpr int32_t kMaxDataLength = INT32_MAX - 2;

struct CommandName {
  std::string_view name;
  Type type;
};

// Most frequent first: the lookup is a linear scan.
constexpr CommandName kCommandNames[] = {
    {"get", Type::kGet},
    {"set", Type::kSet},
    {"mg", Type::kMetaGet},
    {"ms", Type::kMetaSet},
    {"gets", Type::kGets},
    {"delete", Type::kDelete},
    {"md", Type::kMetaDelete},
    {"ma", Type::kMetaArithmetic},
    {"mn", Type::kMetaNoop},
    {"incr", Type::kIncr},
    {"decr", Type::kDecr},
    {"add", Type::kAdd},
    {"replace", Type::kReplace},
    {"append", Type::kAppend},
    {"prepend", Type::kPrepend},
    {"cas", Type::kCas},
    {"touch", Type::kTouch},
    {"gat", Type::kGat},
    {"gats", Type::kGats},
    {"me", Type::kMetaDebug},
    {"flush_all", Type::kFlushAll},
    {"version", Type::kVersion},
    {"verbosity", Type::kVerbosity},
    {"quit", Type::kQuit},
    {"stats", Type::kStats},
};

bool LookupCommand(std::string_view name, Type* type) {
  for (const CommandName& entry : kCommandNames) {
    if (entry.name == name) {
      *type = entry.type;
      return true;
    }
  }
  return false;
}

bool IsStorage(Type type) {
  return type == Type::kSet || type == Type::kAdd || type == Type::kReplace ||
         type == Type::kAppend || type == Type::kPrepend || type == Type::kCas;
}

bool IsRetrieval(Type type) {
  return type == Type::kGet || type == Type::kGets || type == Type::kGat || type == Type::kGats;
}

bool IsMeta(Type type) {
  return type == Type::kMetaGet || type == Type::kMetaSet || type == Type::kMetaDelete ||
         type == Type::kMetaArithmetic || type == Type::kMetaNoop || type == Type::kMetaDebug;
}

// isspace() in the C locale.
inline bool IsCSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Reads `token` as strtoull/strtol (base 10) read a C string, followed by memcached's
// acceptance rule: at least one digit, then the end or a whitespace byte. False also
// when the magnitude does not fit 64 bits (ERANGE).
bool ScanDecimal(std::string_view token, bool* negative, uint64_t* magnitude) {
  size_t i = 0;
  const size_t n = token.size();
  while (i < n && IsCSpace(token[i])) ++i;
  *negative = false;
  if (i < n && (token[i] == '+' || token[i] == '-')) {
    *negative = token[i] == '-';
    ++i;
  }
  const size_t digits_start = i;
  uint64_t value = 0;
  bool overflow = false;
  for (; i < n; ++i) {
    const unsigned digit = static_cast<unsigned char>(token[i]) - '0';
    if (digit > 9) break;
    if (value > (UINT64_MAX - digit) / 10) overflow = true;
    value = value * 10 + digit;
  }
  if (i == digits_start || overflow) return false;
  if (i < n && !IsCSpace(token[i])) return false;
  *magnitude = value;
  return true;
}

// memcached's safe_strtoull.
bool ParseUnsigned(std::string_view token, uint64_t* out) {
  bool negative;
  uint64_t magnitude;
  if (!ScanDecimal(token, &negative, &magnitude)) return false;
  const uint64_t value = negative ? 0 - magnitude : magnitude;  // strtoull wraps
  if (negative && static_cast<int64_t>(value) < 0) return false;
  *out = value;
  return true;
}

// memcached's safe_strtoul on LP64 (unsigned long is 64-bit) into a uint32_t.
bool ParseUnsigned32(std::string_view token, uint32_t* out) {
  uint64_t value;
  if (!ParseUnsigned(token, &value)) return false;
  *out = static_cast<uint32_t>(value);
  return true;
}

// memcached's safe_strtol before it narrows to int32: the long (int64) value.
bool ParseSigned(std::string_view token, int64_t* out) {
  bool negative;
  uint64_t magnitude;
  if (!ScanDecimal(token, &negative, &magnitude)) return false;
  if (magnitude > uint64_t{INT64_MAX} + (negative ? 1 : 0)) return false;
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

// A data block length: a long kept as int32 (memcached), then range-checked.
bool ParseDataLength(std::string_view token, size_t* out) {
  int64_t value;
  if (!ParseSigned(token, &value)) return false;
  const int32_t length = static_cast<int32_t>(value);
  if (length < 0 || length > kMaxDataLength) return false;
  *out = static_cast<size_t>(length);
  return true;
}

// Base64 decoding as memcached does it for 'b' keys: bytes outside the alphabet are
// skipped, the alphabet-or-'=' bytes must come in groups of four, decoding stops after
// the first group with padding ("YQ==YQ==" is "a"), three '=' fail, and an empty result
// fails. Low bits of the last symbol are dropped ("YR==" is "a" too).
struct Base64Table {
  int8_t value[256];
  constexpr Base64Table() : value() {
    for (int i = 0; i < 256; ++i) value[i] = -1;
    for (int i = 0; i < 26; ++i) {
      value['A' + i] = static_cast<int8_t>(i);
      value['a' + i] = static_cast<int8_t>(26 + i);
    }
    for (int i = 0; i < 10; ++i) value['0' + i] = static_cast<int8_t>(52 + i);
    value[static_cast<unsigned char>('+')] = 62;
    value[static_cast<unsigned char>('/')] = 63;
    value[static_cast<unsigned char>('=')] = 64;
  }
};
constexpr Base64Table kBase64;

bool DecodeBase64Key(std::string_view in, std::string* out) {
  size_t symbols = 0;
  for (unsigned char c : in) symbols += kBase64.value[c] >= 0;
  if (symbols == 0 || symbols % 4 != 0) return false;
  out->clear();
  uint8_t group[4];
  size_t count = 0;
  int padding = 0;
  for (unsigned char c : in) {
    int8_t v = kBase64.value[c];
    if (v < 0) continue;
    if (v == 64) {
      ++padding;
      v = 0;
    }
    group[count++] = static_cast<uint8_t>(v);
    if (count < 4) continue;
    count = 0;
    out->push_back(static_cast<char>((group[0] << 2) | (group[1] >> 4)));
    out->push_back(static_cast<char>((group[1] << 4) | (group[2] >> 2)));
    out->push_back(static_cast<char>((group[2] << 6) | group[3]));
    if (padding > 0) {
      if (padding > 2) return false;
      out->resize(out->size() - padding);
      break;
    }
  }
  return !out->empty();
}

// The exemption memcached grants an over-long line: at most 100 spaces, then "get " or
// "gets ".
bool IsLongGetLine(std::string_view input) {
  size_t spaces = 0;
  while (spaces < input.size() && input[spaces] == ' ') {
    if (++spaces > kMaxLeadingSpaces) return false;
  }
  const std::string_view rest = input.substr(spaces);
  return rest.starts_with("get ") || rest.starts_with("gets ");
}

}  // namespace

std::string_view MemcacheCommandName(Type type) {
  for (const CommandName& entry : kCommandNames) {
    if (entry.type == type) return entry.name;
  }
  return "?";
}

MemcacheParser::MemcacheParser() : MemcacheParser(Limits{}) {}

MemcacheParser::MemcacheParser(Limits limits) : limits_(limits) {
  // Token offsets are 32-bit.
  CHECK_LT(std::max(limits_.max_line_length, limits_.max_get_line_length), size_t{1} << 31);
}

void MemcacheParser::Reset() {
  ResetRequest();
  skip_remaining_ = 0;
}

void MemcacheParser::ResetRequest() {
  state_ = State::kLine;
  scan_pos_ = 0;
  bytes_needed_ = 0;
}

MemcacheParser::Result MemcacheParser::Parse(std::string_view input, size_t* consumed,
                                             MemcacheCommand* out) {
  *consumed = 0;
  if (skip_remaining_ > 0) {
    if (input.empty()) return Result::kNeedMore;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(skip_remaining_, input.size()));
    skip_remaining_ -= n;
    *consumed = n;
    return Result::kSkipped;
  }
  if (state_ == State::kData) return AwaitData(input, consumed, out);
  return ParseLine(input, consumed, out);
}

MemcacheParser::LineStatus MemcacheParser::FindLine(std::string_view input, size_t* newline) {
  DCHECK_LE(scan_pos_, input.size()) << "the unconsumed input shrank";
  // A '\n' must come within the first max_line_length + 1 bytes, or within the get bound
  // for a get line. Which one applies is only asked once the line is known to be long,
  // when its first bytes are certainly there.
  size_t limit = limits_.max_line_length + 1;
  const bool long_get =
      input.size() > limits_.max_line_length && IsLongGetLine(input) &&
      limits_.max_get_line_length > limits_.max_line_length;
  if (long_get) limit = limits_.max_get_line_length + 1;

  const size_t search_end = std::min(input.size(), limit);
  if (scan_pos_ < search_end) {
    const void* found = memchr(input.data() + scan_pos_, '\n', search_end - scan_pos_);
    if (found != nullptr) {
      *newline = static_cast<const char*>(found) - input.data();
      return LineStatus::kFound;
    }
    scan_pos_ = search_end;
  }
  if (input.size() < limit) return LineStatus::kNeedMore;
  return long_get ? LineStatus::kGetTooLong : LineStatus::kTooLong;
}

void MemcacheParser::Tokenize(std::string_view line) {
  tokens_.clear();
  const char* data = line.data();
  const size_t n = line.size();
  size_t i = 0;
  while (i < n) {
    if (data[i] == ' ') {
      ++i;
      continue;
    }
    const void* space = memchr(data + i, ' ', n - i);
    const size_t end = space ? static_cast<const char*>(space) - data : n;
    tokens_.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(end - i)});
    i = end;
  }
}

bool MemcacheParser::KeyOk(std::string_view key) const {
  if (key.size() > kMaxKeyLength) return false;
  if (limits_.strict_keys) {
    for (unsigned char c : key) {
      if (c <= ' ' || c == 0x7f) return false;
    }
  }
  return true;
}

MemcacheParser::Result MemcacheParser::Fail(std::string_view input, std::string_view reply,
                                            bool noreply, uint64_t swallow, size_t* consumed) {
  error_ = Error{reply, noreply, false};
  const uint64_t available_now = std::min<uint64_t>(swallow, input.size() - line_size_);
  *consumed = line_size_ + static_cast<size_t>(available_now);
  skip_remaining_ = swallow - available_now;
  ResetRequest();
  return Result::kError;
}

MemcacheParser::Result MemcacheParser::FailClose(std::string_view reply, size_t* consumed) {
  error_ = Error{reply, false, true};
  *consumed = 0;
  ResetRequest();
  return Result::kError;
}

MemcacheParser::Result MemcacheParser::ParseLine(std::string_view input, size_t* consumed,
                                                 MemcacheCommand* out) {
  size_t newline = 0;
  switch (FindLine(input, &newline)) {
    case LineStatus::kFound:
      break;
    case LineStatus::kNeedMore:
      return Result::kNeedMore;
    case LineStatus::kTooLong:
      return FailClose("", consumed);  // memcached closes without a word
    case LineStatus::kGetTooLong:
      return FailClose(kOutOfMemoryReading, consumed);
  }
  line_size_ = newline + 1;
  size_t end = newline;
  // memcached drops the '\r' only when the line has something before it; "\r\n" alone
  // stays "\r", an unknown command, which is what an empty line gets anyway.
  if (end > 1 && input[end - 1] == '\r') --end;
  if (const void* nul = memchr(input.data(), '\0', end)) {
    end = static_cast<const char*>(nul) - input.data();
  }
  Tokenize(input.substr(0, end));

  cmd_ = MemcacheCommand{};
  first_key_ = 0;
  num_keys_ = 0;
  first_flag_ = tokens_.size();
  key_decoded_ = false;
  opaque_token_ = 0;
  mode_letter_ = 0;
  if (tokens_.empty() || !LookupCommand(Token(input, 0), &cmd_.type)) {
    return Fail(input, kUnknownCommand, false, 0, consumed);
  }
  if (IsStorage(cmd_.type)) return ParseStorage(input, consumed, out);
  if (IsRetrieval(cmd_.type)) return ParseRetrieval(input, consumed, out);
  if (IsMeta(cmd_.type)) return ParseMeta(input, consumed, out);
  return ParseSimple(input, consumed, out);
}

// <cmd> <key> <flags> <exptime> <bytes> [noreply]
// cas <key> <flags> <exptime> <bytes> <cas unique> [noreply]
MemcacheParser::Result MemcacheParser::ParseStorage(std::string_view input, size_t* consumed,
                                                    MemcacheCommand* out) {
  const size_t n = tokens_.size();
  const bool is_cas = cmd_.type == Type::kCas;
  const size_t required = is_cas ? 6 : 5;
  if (n != required && n != required + 1) return Fail(input, kUnknownCommand, false, 0, consumed);
  const bool noreply = Token(input, n - 1) == "noreply";
  cmd_.noreply = noreply;
  if (!KeyOk(Token(input, 1))) return Fail(input, kBadFormat, noreply, 0, consumed);
  if (!ParseUnsigned32(Token(input, 2), &cmd_.flags) ||
      !ParseSigned(Token(input, 3), &cmd_.exptime) ||
      !ParseDataLength(Token(input, 4), &data_size_) ||
      (is_cas && !ParseUnsigned(Token(input, 5), &cmd_.cas_unique))) {
    return Fail(input, kBadFormat, noreply, 0, consumed);
  }
  if (data_size_ > limits_.max_item_size) {
    Result result = Fail(input, kTooLarge, noreply, data_size_ + 2, consumed);
    if (cmd_.type == Type::kSet) error_.unlink_key = Token(input, 1);
    return result;
  }
  first_key_ = 1;
  num_keys_ = 1;
  state_ = State::kData;
  bytes_needed_ = line_size_ + data_size_ + 2;
  return AwaitData(input, consumed, out);
}

MemcacheParser::Result MemcacheParser::AwaitData(std::string_view input, size_t* consumed,
                                                  MemcacheCommand* out) {
  const size_t total = line_size_ + data_size_ + 2;
  if (input.size() < total) return Result::kNeedMore;
  if (input[total - 2] != '\r' || input[total - 1] != '\n') {
    return Fail(input, kBadDataChunk, cmd_.noreply, data_size_ + 2, consumed);
  }
  return Emit(input, total, consumed, out);
}

// get|gets <key>+          gat|gats <exptime> <key>*
MemcacheParser::Result MemcacheParser::ParseRetrieval(std::string_view input, size_t* consumed,
                                                      MemcacheCommand* out) {
  const size_t n = tokens_.size();
  if (n < 2) return Fail(input, kUnknownCommand, false, 0, consumed);
  size_t first = 1;
  if (cmd_.type == Type::kGat || cmd_.type == Type::kGats) {
    // memcached answers "gat 0" (no key) with a bare "END".
    if (!ParseSigned(Token(input, 1), &cmd_.exptime)) {
      return Fail(input, kInvalidExptime, false, 0, consumed);
    }
    first = 2;
  }
  for (size_t i = first; i < n; ++i) {
    // memcached sends only this error: it drops the replies built for earlier keys, and
    // (1.6.18 bug, not ours to copy) sometimes the unsent replies of earlier pipelined
    // commands too: "version\r\nget a <251 bytes>\r\n" gets no VERSION.
    if (!KeyOk(Token(input, i))) return Fail(input, kBadFormat, false, 0, consumed);
  }
  first_key_ = first;
  num_keys_ = n - first;
  return Emit(input, line_size_, consumed, out);
}

MemcacheParser::Result MemcacheParser::ParseSimple(std::string_view input, size_t* consumed,
                                                   MemcacheCommand* out) {
  const size_t n = tokens_.size();
  const bool last_is_noreply = Token(input, n - 1) == "noreply";
  switch (cmd_.type) {
    case Type::kTouch:  // touch <key> <exptime> [noreply]
      if (n != 3 && n != 4) return Fail(input, kUnknownCommand, false, 0, consumed);
      cmd_.noreply = last_is_noreply;
      if (!KeyOk(Token(input, 1))) return Fail(input, kBadFormat, cmd_.noreply, 0, consumed);
      if (!ParseSigned(Token(input, 2), &cmd_.exptime)) {
        return Fail(input, kInvalidExptime, cmd_.noreply, 0, consumed);
      }
      first_key_ = 1;
      num_keys_ = 1;
      break;
    case Type::kIncr:  // incr|decr <key> <delta> [noreply]
    case Type::kDecr:
      if (n != 3 && n != 4) return Fail(input, kUnknownCommand, false, 0, consumed);
      cmd_.noreply = last_is_noreply;
      if (!KeyOk(Token(input, 1))) return Fail(input, kBadFormat, cmd_.noreply, 0, consumed);
      if (!ParseUnsigned(Token(input, 2), &cmd_.delta)) {
        return Fail(input, kInvalidDelta, cmd_.noreply, 0, consumed);
      }
      first_key_ = 1;
      num_keys_ = 1;
      break;
    case Type::kDelete:  // delete <key> [0] [noreply]: the legacy hold time must be 0
      if (n < 2 || n > 4) return Fail(input, kUnknownCommand, false, 0, consumed);
      if (n > 2) {
        // memcached checks this before the key, and only looks for noreply here: the
        // key of "delete noreply" is "noreply".
        cmd_.noreply = last_is_noreply;
        const bool hold_is_zero = Token(input, 2) == "0";
        const bool valid =
            (n == 3 && (hold_is_zero || cmd_.noreply)) || (n == 4 && hold_is_zero && cmd_.noreply);
        if (!valid) return Fail(input, kDeleteUsage, cmd_.noreply, 0, consumed);
      }
      if (!KeyOk(Token(input, 1))) return Fail(input, kBadFormat, cmd_.noreply, 0, consumed);
      first_key_ = 1;
      num_keys_ = 1;
      break;
    case Type::kFlushAll:  // flush_all [delay] [noreply]
      if (n > 3) return Fail(input, kUnknownCommand, false, 0, consumed);
      cmd_.noreply = last_is_noreply;
      if (n != (cmd_.noreply ? 2u : 1u) && !ParseSigned(Token(input, 1), &cmd_.delay)) {
        return Fail(input, kInvalidExptime, cmd_.noreply, 0, consumed);
      }
      break;
    case Type::kVerbosity:  // verbosity <level> [noreply]
      if (n != 2 && n != 3) return Fail(input, kUnknownCommand, false, 0, consumed);
      cmd_.noreply = last_is_noreply;
      if (!ParseUnsigned32(Token(input, 1), &cmd_.verbosity)) {
        return Fail(input, kBadFormat, cmd_.noreply, 0, consumed);
      }
      break;
    case Type::kStats:  // the arguments are the server's business
      first_key_ = 1;
      num_keys_ = n - 1;
      break;
    default:  // version, quit: memcached ignores any argument
      break;
  }
  return Emit(input, line_size_, consumed, out);
}

// mg <key> <flag>*   ms <key> <datalen> <flag>*   md <key> <flag>*   ma <key> <flag>*
// mn   me <key> [b]
MemcacheParser::Result MemcacheParser::ParseMeta(std::string_view input, size_t* consumed,
                                                 MemcacheCommand* out) {
  const size_t n = tokens_.size();
  const Type type = cmd_.type;
  if (type == Type::kMetaNoop) return Emit(input, line_size_, consumed, out);
  if (type == Type::kMetaDebug) {
    if (n < 2 || !KeyOk(Token(input, 1))) return Fail(input, kBadFormat, false, 0, consumed);
    if (n >= 3 && Token(input, 2) == "b") {
      if (!DecodeBase64Key(Token(input, 1), &decoded_key_)) {
        return Fail(input, kBadFormat, false, 0, consumed);
      }
      key_decoded_ = true;
      cmd_.meta.letters |= uint64_t{1} << ('b' - 'A');
    }
    first_key_ = 1;
    num_keys_ = 1;
    return Emit(input, line_size_, consumed, out);
  }

  if (n < 2) return Fail(input, kUnknownCommand, false, 0, consumed);
  if (!KeyOk(Token(input, 1))) return Fail(input, kBadFormat, false, 0, consumed);
  const bool is_set = type == Type::kMetaSet;
  if (is_set && n == 2) return Fail(input, kBadFormat, false, 0, consumed);
  if (n > kMaxMetaTokens) {
    return Fail(input, type == Type::kMetaGet ? kMgTooManyTokens : kTooManyTokens, false, 0,
                consumed);
  }
  first_key_ = 1;
  num_keys_ = 1;
  uint64_t swallow = 0;  // from here on, an ms error also drops the data block
  if (is_set) {
    if (!ParseDataLength(Token(input, 2), &data_size_)) {
      return Fail(input, kBadFormat, false, 0, consumed);
    }
    swallow = data_size_ + 2;
    first_flag_ = 3;
    cmd_.meta.mode = MetaMode::kSet;
  } else {
    first_flag_ = 2;
    if (type == Type::kMetaArithmetic) cmd_.meta.mode = MetaMode::kIncrement;
  }

  std::string_view error;
  if (!ParseMetaFlags(input, &error)) {
    if (type == Type::kMetaDelete || type == Type::kMetaArithmetic) error = kInvalidOrDuplicate;
    return Fail(input, error, false, swallow, consumed);
  }
  MetaArgs& meta = cmd_.meta;
  if (meta.Has('M')) {  // mg and md accept any two-byte M token and ignore it
    if (is_set) {
      switch (mode_letter_) {
        case 'S': meta.mode = MetaMode::kSet; break;
        case 'E': meta.mode = MetaMode::kAdd; break;
        case 'A': meta.mode = MetaMode::kAppend; break;
        case 'P': meta.mode = MetaMode::kPrepend; break;
        case 'R': meta.mode = MetaMode::kReplace; break;
        default: return Fail(input, kBadSetMode, false, swallow, consumed);
      }
    } else if (type == Type::kMetaArithmetic) {
      switch (mode_letter_) {
        case 'I':
        case '+': meta.mode = MetaMode::kIncrement; break;
        case 'D':
        case '-': meta.mode = MetaMode::kDecrement; break;
        default: return Fail(input, kBadArithmeticMode, false, swallow, consumed);
      }
    }
  }
  if (meta.Has('O') && Token(input, opaque_token_).size() > kMaxOpaqueToken) {
    return Fail(input, kOpaqueTooLong, false, swallow, consumed);
  }
  if (!is_set) return Emit(input, line_size_, consumed, out);
  if (data_size_ > limits_.max_item_size) {
    std::string_view key = key_decoded_ ? std::string_view(decoded_key_) : Token(input, 1);
    Result result = Fail(input, kTooLarge, false, swallow, consumed);
    error_.unlink_key = key;
    return result;
  }
  state_ = State::kData;
  bytes_needed_ = line_size_ + data_size_ + 2;
  return AwaitData(input, consumed, out);
}

bool MemcacheParser::ParseMetaFlags(std::string_view input, std::string_view* error) {
  MetaArgs& meta = cmd_.meta;
  uint64_t seen[2] = {0, 0};  // bytes 0..127
  std::string_view message = kBadFormat;
  bool failed = false;
  for (size_t i = first_flag_; i < tokens_.size(); ++i) {
    const std::string_view token = Token(input, i);
    const uint8_t letter = static_cast<uint8_t>(token[0]);
    if (letter >= 127 || (seen[letter >> 6] >> (letter & 63) & 1)) {
      *error = kDuplicateFlag;
      return false;
    }
    seen[letter >> 6] |= uint64_t{1} << (letter & 63);
    const std::string_view value = token.substr(1);
    bool ok = true;
    switch (letter) {
      case 'b':
        if (DecodeBase64Key(Token(input, 1), &decoded_key_)) {
          key_decoded_ = true;
        } else {
          message = kBadBase64Key;
          failed = true;
        }
        break;
      case 'T': ok = ParseSigned(value, &meta.ttl); break;
      case 'N': ok = ParseSigned(value, &meta.vivify_ttl); break;
      case 'R': ok = ParseSigned(value, &meta.recache_ttl); break;
      case 'C': ok = ParseUnsigned(value, &meta.compare_cas); break;
      case 'F':
        // memcached sets no message of its own for a bad F.
        if (!ParseUnsigned32(value, &meta.client_flags)) failed = true;
        break;
      case 'J':
        if (!ParseUnsigned(value, &meta.initial)) {
          message = kBadInitial;
          failed = true;
        }
        break;
      case 'D':
        if (!ParseUnsigned(value, &meta.delta)) {
          message = kBadMetaDelta;
          failed = true;
        }
        break;
      case 'M':
        if (token.size() != 2) {
          message = kBadModeLength;
          failed = true;
        } else {
          mode_letter_ = token[1];
        }
        break;
      case 'O':
        opaque_token_ = i;
        break;
      case 'c': case 'f': case 'h': case 'k': case 'l': case 'q': case 's': case 't':
      case 'u': case 'v': case 'I': case 'L': case 'P':
        break;
      default:
        *error = kInvalidFlag;
        return false;
    }
    if (!ok) {
      message = kBadToken;
      failed = true;
    }
    meta.letters |= uint64_t{1} << (letter - 'A');
  }
  if (failed) {
    *error = message;
    return false;
  }
  return true;
}

MemcacheParser::Result MemcacheParser::Emit(std::string_view input, size_t size,
                                            size_t* consumed, MemcacheCommand* out) {
  keys_.clear();
  for (size_t i = 0; i < num_keys_; ++i) keys_.push_back(Token(input, first_key_ + i));
  if (key_decoded_) keys_[0] = decoded_key_;
  meta_flags_.clear();
  for (size_t i = first_flag_; i < tokens_.size(); ++i) {
    const std::string_view token = Token(input, i);
    meta_flags_.push_back({token[0], token.substr(1)});
  }

  *out = cmd_;
  out->keys = keys_;
  out->meta.flags = meta_flags_;
  if (cmd_.meta.Has('O')) out->meta.opaque = Token(input, opaque_token_).substr(1);
  if (key_decoded_) out->meta.encoded_key = Token(input, 1);
  if (state_ == State::kData) out->data = input.substr(line_size_, data_size_);
  *consumed = size;
  ResetRequest();
  return Result::kCommand;
}

}  // namespace damselfly::facade
