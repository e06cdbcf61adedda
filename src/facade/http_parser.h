// HTTP/1.x request parsing for the operator endpoints (/metrics, the status page) served
// on the RESP ports.
//
// ProbeHttp decides from a connection's first bytes whether it speaks HTTP: the first
// line must read "<METHOD> <target> HTTP/<d>.<d>". A RESP client never sends that (an
// inline "GET key" has no such third word), so the main port can serve both.
//
// HttpRequestParser is incremental: the caller passes everything it has buffered that
// is not consumed yet, and calls again with more bytes after kNeedMore. It bounds the
// header block (431), the header count (431) and the body (413); a request that breaks
// the grammar is a 400, an unsupported version a 505, a chunked body a 501. Bodies are
// read and discarded: the endpoints take no input.
//
// ParseBasicCredentials reads an Authorization header of the Basic scheme (RFC 7617).
//
// Thread-safety: a parser belongs to one connection; ProbeHttp and ParseBasicCredentials
// are pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace damselfly::facade {

enum class HttpProbe { kHttp, kNotHttp, kNeedMore };

// Looks at the first bytes a connection sent (at least one).
HttpProbe ProbeHttp(std::string_view first_bytes);

// A parsed request. The views point into the input given to the Parse call that
// returned kDone and stay valid while the caller keeps those bytes where they are.
struct HttpRequest {
  std::string_view method;  // as sent, case-sensitive ("GET")
  std::string_view target;  // "/metrics?x=1"
  int minor_version = 1;    // HTTP/1.<minor>
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  size_t content_length = 0;
  bool keep_alive = true;

  // The target without its query string.
  std::string_view path() const { return target.substr(0, target.find('?')); }
  // The first header of that name (case-insensitive), or an empty view.
  std::string_view Header(std::string_view name) const;
};

// The user name and password of an "Authorization: Basic <base64 of user:password>"
// header (the scheme's name in any case); nullopt for another scheme, bad base64 or no
// colon in what it decodes to.
struct HttpCredentials {
  std::string user, password;
};
std::optional<HttpCredentials> ParseBasicCredentials(std::string_view authorization);

class HttpRequestParser {
 public:
  struct Limits {
    size_t max_header_bytes = 8192;  // request line and headers, with the blank line
    size_t max_headers = 100;
    size_t max_body_bytes = 64 << 10;
  };
  enum class Result { kDone, kNeedMore, kError };

  explicit HttpRequestParser(Limits limits) : limits_(limits) {}

  // Parses one request from the start of `input`. kDone: request() is set and *consumed
  // is the size of the request, body included; the next call starts a new request.
  // kNeedMore: call again with the same bytes plus more. kError: error_status() tells
  // the reply; the connection cannot continue.
  Result Parse(std::string_view input, size_t* consumed);

  const HttpRequest& request() const { return request_; }
  int error_status() const { return error_status_; }

 private:
  Result Fail(int status);
  bool Reject(int status);  // records the status; returns false
  // Fills request_ from the head (request line, headers, blank line).
  bool ParseHead(std::string_view head);

  const Limits limits_;
  size_t scanned_ = 0;      // bytes of the current input searched for the end of head
  size_t head_bytes_ = 0;   // 0 until the end of the head was found
  HttpRequest request_;
  int error_status_ = 0;
};

}  // namespace damselfly::facade
