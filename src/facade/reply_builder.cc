#include "src/facade/reply_builder.h"

#include <glog/logging.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "src/facade/facade_stats.h"

namespace damselfly::facade {

namespace {

constexpr std::string_view kCrLf = "\r\n";

// Longest "<type><int64>\r\n": 1 + 20 ("-9223372036854775808") + 2.
constexpr size_t kMaxHeader = 24;

// Longest %.17g rendering of a double is 24 characters ("-2.2250738585072014e-308").
constexpr size_t kMaxDouble = 32;

// Pieces up to this size are assembled on the stack and appended with one call; larger
// payloads are appended straight from the caller's memory.
constexpr size_t kInlineLimit = 256;

// Assembles small replies on the stack so that they reach the buffer in one append.
template <size_t kBytes>
class BasicLine {
 public:
  void Put(char c) { *pos_++ = c; }
  void Put(std::string_view s) {
    std::memcpy(pos_, s.data(), s.size());
    pos_ += s.size();
  }
  void PutInt(int64_t value) { pos_ = std::to_chars(pos_, end(), value).ptr; }
  // printf("%.17g") rendering, as Redis formats doubles ("inf", "-inf", "nan", "-nan",
  // "-0", "1e+17", "0.10000000000000001").
  void PutDouble(double value) {
    pos_ = std::to_chars(pos_, end(), value, std::chars_format::general, 17).ptr;
  }
  void PutCrLf() { Put(kCrLf); }
  void PutHeader(char type, int64_t length) {
    Put(type);
    PutInt(length);
    PutCrLf();
  }

  char* begin() { return buf_; }
  char* end() { return buf_ + sizeof(buf_); }
  size_t size() const { return pos_ - buf_; }
  size_t room() const { return sizeof(buf_) - size(); }
  std::string_view view() const { return {buf_, size()}; }
  void Clear() { pos_ = buf_; }

 private:
  char buf_[kBytes];
  char* pos_ = buf_;
};

// One reply of a small payload.
using Line = BasicLine<kInlineLimit + kMaxHeader + 8>;

// Makes room for `extra` more bytes, growing geometrically so a reply assembled from several
// appends reallocates at most once and a stream of replies stays amortised O(1).
inline void Reserve(std::string& buffer, size_t extra) {
  size_t need = buffer.size() + extra;
  if (need > buffer.capacity()) buffer.reserve(std::max(need, buffer.capacity() * 2));
}

// "<type><payload>\r\n" for single-line replies.
inline void AppendLine(std::string& buffer, char type, std::string_view payload) {
  if (payload.size() <= kInlineLimit) {
    Line line;
    line.Put(type);
    line.Put(payload);
    line.PutCrLf();
    buffer.append(line.view());
    return;
  }
  Reserve(buffer, payload.size() + 3);
  buffer.push_back(type);
  buffer.append(payload);
  buffer.append(kCrLf);
}

// "$<len>\r\n<payload>\r\n"
inline void AppendBulk(std::string& buffer, std::string_view payload) {
  if (payload.size() <= kInlineLimit) {
    Line line;
    line.PutHeader('$', static_cast<int64_t>(payload.size()));
    line.Put(payload);
    line.PutCrLf();
    buffer.append(line.view());
    return;
  }
  Line header;
  header.PutHeader('$', static_cast<int64_t>(payload.size()));
  Reserve(buffer, header.size() + payload.size() + 2);
  buffer.append(header.view());
  buffer.append(payload);  // the one copy of a large payload
  buffer.append(kCrLf);
}

}  // namespace

void ReplyBuilder::AppendLengthHeader(char type, int64_t length) {
  Line line;
  line.PutHeader(type, length);
  buffer_.append(line.view());
}

void ReplyBuilder::SendOk() { buffer_.append("+OK\r\n"); }

void ReplyBuilder::SendSimpleString(std::string_view s) {
  DCHECK(s.find_first_of(kCrLf) == std::string_view::npos) << "CR/LF in simple string";
  AppendLine(buffer_, '+', s);
}

void ReplyBuilder::SendError(std::string_view message) {
  FacadeStats::tlocal()->CountError(message);
  SendErrorCountedBefore(message);
}

void ReplyBuilder::SendErrorCountedBefore(std::string_view message) {
  ++errors_sent_;
  size_t start = buffer_.size() + 1;
  AppendLine(buffer_, '-', message);
  // Redis replaces CR and LF inside error messages with spaces so the reply stays one line.
  char* it = buffer_.data() + start;
  char* const last = it + message.size();
  for (; it != last; ++it) {
    if (*it == '\r' || *it == '\n') *it = ' ';
  }
}

void ReplyBuilder::SendLong(int64_t value) { AppendLengthHeader(':', value); }

void ReplyBuilder::SendBulk(std::string_view value) { AppendBulk(buffer_, value); }

void ReplyBuilder::SendNull() {
  if (protocol_ == RespVersion::kResp3) {
    buffer_.append("_\r\n");
  } else {
    buffer_.append("$-1\r\n");
  }
}

void ReplyBuilder::SendNullArray() {
  if (protocol_ == RespVersion::kResp3) {
    buffer_.append("_\r\n");
  } else {
    buffer_.append("*-1\r\n");
  }
}

void ReplyBuilder::SendDouble(double value) {
  Line line;
  if (protocol_ == RespVersion::kResp3) {
    line.Put(',');
    line.PutDouble(value);
  } else {
    char digits[kMaxDouble];
    char* end = std::to_chars(digits, digits + sizeof(digits), value,
                              std::chars_format::general, 17)
                    .ptr;
    line.PutHeader('$', end - digits);
    line.Put(std::string_view(digits, end - digits));
  }
  line.PutCrLf();
  buffer_.append(line.view());
}

void ReplyBuilder::SendDoubleText(std::string_view text) {
  if (protocol_ == RespVersion::kResp3) {
    AppendLine(buffer_, ',', text);
  } else {
    AppendBulk(buffer_, text);
  }
}

void ReplyBuilder::SendBigNumber(std::string_view digits) {
  if (protocol_ == RespVersion::kResp3) {
    AppendLine(buffer_, '(', digits);
  } else {
    AppendBulk(buffer_, digits);
  }
}

void ReplyBuilder::SendVerbatim(std::string_view text, std::string_view format) {
  if (protocol_ != RespVersion::kResp3) {
    AppendBulk(buffer_, text);
    return;
  }
  DCHECK_EQ(format.size(), 3u) << "verbatim format must be 3 characters";
  const size_t body = format.size() + 1 + text.size();  // "txt:" + text
  Line line;
  line.PutHeader('=', static_cast<int64_t>(body));
  if (body <= kInlineLimit) {
    line.Put(format);
    line.Put(':');
    line.Put(text);
    line.PutCrLf();
    buffer_.append(line.view());
    return;
  }
  Reserve(buffer_, line.size() + body + 2);
  buffer_.append(line.view());
  buffer_.append(format);
  buffer_.push_back(':');
  buffer_.append(text);
  buffer_.append(kCrLf);
}

void ReplyBuilder::SendBool(bool value) {
  if (protocol_ == RespVersion::kResp3) {
    buffer_.append(value ? "#t\r\n" : "#f\r\n", 4);
  } else {
    buffer_.append(value ? ":1\r\n" : ":0\r\n", 4);
  }
}

void ReplyBuilder::StartArray(size_t length) {
  AppendLengthHeader('*', static_cast<int64_t>(length));
}

void ReplyBuilder::StartMap(size_t pairs) {
  if (protocol_ == RespVersion::kResp3) {
    AppendLengthHeader('%', static_cast<int64_t>(pairs));
  } else {
    AppendLengthHeader('*', static_cast<int64_t>(pairs * 2));
  }
}

void ReplyBuilder::StartSet(size_t length) {
  AppendLengthHeader(protocol_ == RespVersion::kResp3 ? '~' : '*', static_cast<int64_t>(length));
}

void ReplyBuilder::StartAttribute(size_t pairs) {
  DCHECK(protocol_ == RespVersion::kResp3);
  AppendLengthHeader('|', pairs);
}

void ReplyBuilder::StartPush(size_t length) {
  AppendLengthHeader(protocol_ == RespVersion::kResp3 ? '>' : '*', static_cast<int64_t>(length));
}

void ReplyBuilder::SendSimpleStringArray(absl::Span<const std::string_view> lines) {
  StartArray(lines.size());
  for (std::string_view line : lines) SendSimpleString(line);
}

namespace {

// "*n" and the bulks of `values`: small ones are assembled in a stack chunk that reaches
// the buffer in one append per chunk (one copy per value, not two; and no append call per
// value, which costs more than the copy for the few bytes of a field or a member).
template <typename Text>
void AppendBulkArray(std::string& buffer, absl::Span<const Text> values) {
  // Upper bound of the whole reply, so the buffer grows at most once.
  size_t total = kMaxHeader;
  for (std::string_view v : values) total += kMaxHeader + v.size() + 2;
  Reserve(buffer, total);

  BasicLine<4096> chunk;
  auto flush = [&] {
    buffer.append(chunk.view());
    chunk.Clear();
  };
  chunk.PutHeader('*', int64_t(values.size()));
  for (std::string_view v : values) {
    if (v.size() > kInlineLimit) {
      flush();
      AppendBulk(buffer, v);
      continue;
    }
    if (chunk.room() < kMaxHeader + kInlineLimit + 2) flush();
    chunk.PutHeader('$', int64_t(v.size()));
    chunk.Put(v);
    chunk.PutCrLf();
  }
  flush();
}

}  // namespace

void ReplyBuilder::SendBulkArray(absl::Span<const std::string_view> values) {
  AppendBulkArray(buffer_, values);
}

void ReplyBuilder::SendBulkArray(absl::Span<const std::string> values) {
  AppendBulkArray(buffer_, values);
}

void ReplyBuilder::ConsumeOutput(size_t bytes) {
  DCHECK_LE(bytes, buffer_.size());
  if (bytes >= buffer_.size()) {
    buffer_.clear();  // common case: everything was sent; keeps the capacity
  } else {
    buffer_.erase(0, bytes);
  }
}

}  // namespace damselfly::facade
