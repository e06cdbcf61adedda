// HTTP/1.1 on a RESP port: the routes the server layer registers (/metrics, /) and the
// session that serves one socket with them.
//
// A session serves requests one after another on a keep-alive connection; pipelined
// requests are answered in order and the answers to one read go out in one send. It
// closes the connection after a response with "Connection: close", after any parse
// error (answered with its status), when the head of a request takes longer than
// --http_header_timeout_ms to arrive, or when the client is idle for
// --http_keepalive_timeout_ms.
//
// Back-pressure, as on the RESP path: once the answers waiting to be sent pass
// ClientConnection::kFlushThresholdBytes they are sent before the next request is
// answered, and the session reads no more requests until the client took them. A client
// that pipelines requests and never reads thus holds one flush worth of the server's
// memory, not its answers to everything it sent; one that hangs up is noticed at the
// next send, after which nothing more is answered. Response bodies are shared, not
// copied: a page many responses send (the cached /metrics) costs one copy per thread.
//
// Authentication: a router with an authenticator asks every request for HTTP Basic
// credentials (RFC 7617) and answers 401 with `WWW-Authenticate: Basic
// realm="damselfly"` to those it refuses, before looking at the path.
//
// Thread-safety: the router is filled before serving and then read-only; a session runs
// on its connection's fiber.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "helio/base/strings.h"
#include "helio/net/fiber_socket.h"
#include "src/facade/http_parser.h"

namespace damselfly::facade {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  // Shared rather than owned, so that a page many responses send is not copied into
  // each connection's output; nullptr: an empty body.
  std::shared_ptr<const std::string> body;
};

// Runs on the connection's fiber and may suspend (to visit other threads). `received_at`
// is when the read that completed the request returned: a page rendered after that
// answers it as well as a fresh one would.
using HttpHandler = std::function<HttpResponse(
    const HttpRequest& request, std::chrono::steady_clock::time_point received_at)>;

// Whether a request with these HTTP Basic credentials (nullopt: it sent none, or not
// Basic ones) may be served. Runs on the connection's fiber; must not suspend.
using HttpAuthenticator = std::function<bool(const std::optional<HttpCredentials>& credentials)>;

class HttpRouter {
 public:
  // REQUIRES: a new path ("/metrics"); matched exactly, query strings ignored.
  void Register(std::string path, HttpHandler handler);
  // nullptr when no route has that path.
  const HttpHandler* Find(std::string_view path) const;

  // Every request must pass `authenticator` (asked per request, so a password changed at
  // run time applies to open connections too); none by default.
  void set_authenticator(HttpAuthenticator authenticator) {
    authenticator_ = std::move(authenticator);
  }
  const HttpAuthenticator& authenticator() const { return authenticator_; }

 private:
  absl::flat_hash_map<std::string, HttpHandler, helio::StringViewHash, helio::StringViewEq> routes_;
  HttpAuthenticator authenticator_;
};

// Serves HTTP on `socket` until the connection ends; `already_read` holds the bytes the
// connection received before it recognised HTTP (the start of the first request).
void ServeHttp(const HttpRouter& router, helio::net::FiberSocket* socket,
               std::string_view already_read);

// The reason phrase of a status code ("Not Found").
std::string_view HttpReason(int status);

}  // namespace damselfly::facade
