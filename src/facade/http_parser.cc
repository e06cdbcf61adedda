#include "src/facade/http_parser.h"

#include "absl/strings/escaping.h"
#include "helio/base/strings.h"

namespace damselfly::facade {

namespace {

constexpr size_t kMaxMethodBytes = 16;
constexpr size_t kMaxProbeLineBytes = 8192;

bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// RFC 9110 tchar: the characters of header names and methods.
bool IsTokenChar(char c) {
  if (IsDigit(c) || (c >= 'a' && c <= 'z') || IsUpper(c)) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

// Field values: visible characters, spaces and tabs (obs-text, bytes >= 0x80, allowed).
bool IsValueChar(char c) { return c == '\t' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f); }

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "HTTP/d.d" -> major * 10 + minor, or -1.
int ParseVersion(std::string_view v) {
  if (v.size() != 8 || v.substr(0, 5) != "HTTP/" || !IsDigit(v[5]) || v[6] != '.' ||
      !IsDigit(v[7])) {
    return -1;
  }
  return (v[5] - '0') * 10 + (v[7] - '0');
}

// True when `list` names `word` (comma-separated, case-insensitive), as Connection does.
bool ListHas(std::string_view list, std::string_view word) {
  for (std::string_view item : helio::SplitAny(list, ",")) {
    if (helio::EqualsIgnoreCase(TrimSpaces(item), word)) return true;
  }
  return false;
}

}  // namespace

HttpProbe ProbeHttp(std::string_view first_bytes) {
  // A method is 1 to kMaxMethodBytes capitals and a space. Scan one capital past the
  // bound, so that the answer for a method of exactly kMaxMethodBytes does not depend on
  // whether its space arrived in the same read.
  size_t i = 0;
  while (i < first_bytes.size() && i <= kMaxMethodBytes && IsUpper(first_bytes[i])) ++i;
  if (i > kMaxMethodBytes) return HttpProbe::kNotHttp;
  if (i == first_bytes.size()) return HttpProbe::kNeedMore;
  if (i == 0 || first_bytes[i] != ' ') return HttpProbe::kNotHttp;
  size_t eol = first_bytes.find('\n');
  if (eol == std::string_view::npos) {
    return first_bytes.size() < kMaxProbeLineBytes ? HttpProbe::kNeedMore : HttpProbe::kNotHttp;
  }
  std::string_view line = first_bytes.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t space = line.rfind(' ');
  return ParseVersion(line.substr(space + 1)) >= 0 ? HttpProbe::kHttp : HttpProbe::kNotHttp;
}

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (helio::EqualsIgnoreCase(key, name)) return value;
  }
  return {};
}

std::optional<HttpCredentials> ParseBasicCredentials(std::string_view authorization) {
  constexpr std::string_view kScheme = "Basic";
  authorization = TrimSpaces(authorization);
  if (authorization.size() <= kScheme.size() || authorization[kScheme.size()] != ' ' ||
      !helio::EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme)) {
    return std::nullopt;
  }
  std::string decoded;
  std::string_view encoded = TrimSpaces(authorization.substr(kScheme.size()));
  // Debian's Abseil has its own string_view type.
  if (!absl::Base64Unescape(absl::string_view(encoded.data(), encoded.size()), &decoded)) {
    return std::nullopt;
  }
  // The user name cannot hold a colon; the password may.
  size_t colon = decoded.find(':');
  if (colon == std::string::npos) return std::nullopt;
  return HttpCredentials{decoded.substr(0, colon), decoded.substr(colon + 1)};
}

HttpRequestParser::Result HttpRequestParser::Fail(int status) {
  error_status_ = status;
  return Result::kError;
}

bool HttpRequestParser::Reject(int status) {
  error_status_ = status;
  return false;
}

HttpRequestParser::Result HttpRequestParser::Parse(std::string_view input, size_t* consumed) {
  *consumed = 0;
  if (head_bytes_ == 0) {
    // Find the blank line ending the head ("\r\n\r\n", or bare "\n\n"), resuming where
    // the last call stopped so slow senders cost linear time.
    size_t limit = std::min(input.size(), limits_.max_header_bytes);
    size_t pos = scanned_;
    while (head_bytes_ == 0) {
      pos = input.find('\n', pos);
      if (pos == std::string_view::npos || pos >= limit) break;
      if (pos + 1 < limit && input[pos + 1] == '\n') {
        head_bytes_ = pos + 2;
      } else if (pos + 2 < limit && input[pos + 1] == '\r' && input[pos + 2] == '\n') {
        head_bytes_ = pos + 3;
      } else if (pos + 2 >= limit) {
        break;  // the line after it has not fully arrived
      } else {
        ++pos;
        continue;
      }
    }
    if (head_bytes_ == 0) {
      if (input.size() >= limits_.max_header_bytes) return Fail(431);
      scanned_ = pos == std::string_view::npos ? input.size() : pos;
      return Result::kNeedMore;
    }
    if (!ParseHead(input.substr(0, head_bytes_))) return Result::kError;
  } else if (input.size() >= head_bytes_ + request_.content_length) {
    // The head was parsed by an earlier call, into bytes the caller has since moved (its
    // buffer grows and shifts while the body arrives): parse it again where it is now, so
    // that the request's views point into `input`. The same bytes, so it succeeds again.
    ParseHead(input.substr(0, head_bytes_));
  }
  size_t total = head_bytes_ + request_.content_length;
  if (input.size() < total) return Result::kNeedMore;
  *consumed = total;
  scanned_ = head_bytes_ = 0;
  return Result::kDone;
}

bool HttpRequestParser::ParseHead(std::string_view head) {
  request_ = HttpRequest{};
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    size_t eol = head.find('\n');
    std::string_view line = head.substr(0, eol);
    head.remove_prefix(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;
    lines.push_back(line);
  }
  if (lines.empty()) return Reject(400);

  // Request line: method SP target SP version, single spaces, nothing else.
  std::string_view request_line = lines[0];
  size_t sp1 = request_line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : request_line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || request_line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Reject(400);
  }
  request_.method = request_line.substr(0, sp1);
  request_.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  int version = ParseVersion(request_line.substr(sp2 + 1));
  if (request_.method.empty() || request_.target.empty()) return Reject(400);
  for (char c : request_.method) {
    if (!IsTokenChar(c)) return Reject(400);
  }
  for (char c : request_.target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return Reject(400);
  }
  if (version < 0) return Reject(400);
  if (version != 10 && version != 11) return Reject(505);
  request_.minor_version = version % 10;

  if (lines.size() - 1 > limits_.max_headers) return Reject(431);
  bool has_length = false;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos) return Reject(400);  // also obsolete line folding
    std::string_view name = line.substr(0, colon), value = TrimSpaces(line.substr(colon + 1));
    for (char c : name) {
      if (!IsTokenChar(c)) return Reject(400);
    }
    for (char c : value) {
      if (!IsValueChar(c)) return Reject(400);
    }
    if (helio::EqualsIgnoreCase(name, "Content-Length")) {
      size_t length = 0;
      bool digits = !value.empty() && value.size() <= 18;
      for (char c : value) digits &= IsDigit(c);
      if (!digits || !helio::SimpleAtoi(value, &length)) return Reject(400);
      if (has_length && length != request_.content_length) return Reject(400);
      request_.content_length = length;
      has_length = true;
    } else if (helio::EqualsIgnoreCase(name, "Transfer-Encoding")) {
      return Reject(501);
    }
    request_.headers.emplace_back(name, value);
  }
  if (request_.content_length > limits_.max_body_bytes) return Reject(413);
  std::string_view connection = request_.Header("Connection");
  request_.keep_alive = request_.minor_version == 1 ? !ListHas(connection, "close")
                                                    : ListHas(connection, "keep-alive");
  return true;
}

}  // namespace damselfly::facade
