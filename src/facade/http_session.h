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
// Thread-safety: the router is filled before serving and then read-only; a session runs
// on its connection's fiber.
#pragma once

#include <functional>
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
  std::string body;
};

// Runs on the connection's fiber and may suspend (to visit other threads).
using HttpHandler = std::function<HttpResponse(const HttpRequest& request)>;

class HttpRouter {
 public:
  // REQUIRES: a new path ("/metrics"); matched exactly, query strings ignored.
  void Register(std::string path, HttpHandler handler);
  // nullptr when no route has that path.
  const HttpHandler* Find(std::string_view path) const;

 private:
  absl::flat_hash_map<std::string, HttpHandler, helio::StringViewHash, helio::StringViewEq> routes_;
};

// Serves HTTP on `socket` until the connection ends; `already_read` holds the bytes the
// connection received before it recognised HTTP (the start of the first request).
void ServeHttp(const HttpRouter& router, helio::net::FiberSocket* socket,
               std::string_view already_read);

// The reason phrase of a status code ("Not Found").
std::string_view HttpReason(int status);

}  // namespace damselfly::facade
