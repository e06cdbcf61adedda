#include "src/facade/http_session.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <boost/fiber/condition_variable.hpp>
#include <mutex>

#include "helio/base/spinlock.h"
#include "helio/base/strings.h"
#include "helio/fibers/fiber.h"
#include "helio/fibers/scheduler.h"
#include "src/facade/client_connection.h"
#include "src/facade/facade_stats.h"

DEFINE_uint32(http_header_timeout_ms, 5000,
              "An HTTP client must send a request's headers within this many milliseconds "
              "of its first byte, or the connection is closed");
DEFINE_uint32(http_keepalive_timeout_ms, 60000,
              "An idle keep-alive HTTP connection is closed after this many milliseconds");
DEFINE_uint32(http_max_header_bytes, 8192, "Largest HTTP request head (request line + headers)");

namespace damselfly::facade {

namespace {

using helio::fibers::Clock;

constexpr size_t kReadBytes = 4096;
constexpr size_t kWatchdogStackBytes = 64 << 10;
constexpr auto kLingerTime = std::chrono::seconds(1);
constexpr size_t kMaxLingerBytes = 64 << 10;

// Shuts a socket down when its deadline passes, which fails the session's pending read.
// The session moves the deadline as requests come and go. Lives on the session's thread.
class SocketWatchdog {
 public:
  explicit SocketWatchdog(helio::net::FiberSocket* socket) : socket_(socket) {
    fiber_ = helio::fibers::Launch([this] { Run(); }, kWatchdogStackBytes);
  }

  ~SocketWatchdog() {
    {
      std::lock_guard guard(lock_);
      stopping_ = true;
      cv_.notify_all();
    }
    fiber_.join();
  }

  void set_deadline(Clock::time_point deadline) {
    std::lock_guard guard(lock_);
    deadline_ = deadline;
    cv_.notify_all();
  }

 private:
  void Run() {
    std::unique_lock guard(lock_);
    while (!stopping_) {
      if (Clock::now() >= deadline_) {
        guard.unlock();
        VLOG(1) << "HTTP client timed out";
        socket_->Shutdown(SHUT_RDWR);
        socket_->CancelIo();
        return;
      }
      cv_.wait_until(guard, deadline_);
    }
  }

  helio::net::FiberSocket* const socket_;
  helio::SpinLock lock_;
  boost::fibers::condition_variable_any cv_;
  Clock::time_point deadline_ = Clock::time_point::max();
  bool stopping_ = false;
  boost::fibers::fiber fiber_;
};

HttpResponse ErrorResponse(int status) {
  return HttpResponse{.status = status,
                      .body = std::make_shared<const std::string>(
                          helio::StrCat(status, " ", HttpReason(status), "\n"))};
}

bool Authorized(const HttpRouter& router, const HttpRequest& request) {
  const HttpAuthenticator& authenticator = router.authenticator();
  if (!authenticator) return true;
  std::string_view authorization = request.Header("Authorization");
  return authenticator(authorization.empty() ? std::nullopt : ParseBasicCredentials(authorization));
}

HttpResponse Respond(const HttpRouter& router, const HttpRequest& request,
                     Clock::time_point received_at) {
  if (!Authorized(router, request)) return ErrorResponse(401);
  if (request.method != "GET" && request.method != "HEAD") return ErrorResponse(405);
  const HttpHandler* handler = router.Find(request.path());
  if (handler == nullptr) return ErrorResponse(404);
  return (*handler)(request, received_at);
}

// The responses answered but not sent yet, in order: heads and small bodies copied into
// text, bigger bodies by reference (the cached /metrics page is shared by every
// connection of a thread).
class PendingOutput {
 public:
  // Bodies at least this big are sent from the handler's string, not copied.
  static constexpr size_t kShareBodyBytes = 4096;
  // Iovecs per send; Send is called before a batch of many big bodies needs more.
  static constexpr size_t kMaxPieces = 64;

  void Append(const HttpResponse& response, bool close, bool head_only) {
    const size_t body_bytes = response.body ? response.body->size() : 0;
    const size_t text_before = text_.size();
    helio::StrAppend(&text_, "HTTP/1.1 ", response.status, " ", HttpReason(response.status),
                     "\r\nServer: damselfly\r\nContent-Type: ", response.content_type,
                     "\r\nContent-Length: ", body_bytes, "\r\n");
    if (response.status == 401) text_ += "WWW-Authenticate: Basic realm=\"damselfly\"\r\n";
    if (response.status == 405) text_ += "Allow: GET, HEAD\r\n";
    if (close) text_ += "Connection: close\r\n";
    text_ += "\r\n";
    bytes_ += text_.size() - text_before;
    if (head_only || body_bytes == 0) return;
    bytes_ += body_bytes;
    if (body_bytes < kShareBodyBytes) {
      text_ += *response.body;
      return;
    }
    pieces_.push_back(std::make_shared<const std::string>(std::move(text_)));
    pieces_.push_back(response.body);
    text_.clear();
  }

  // Whether the session should send before answering more: past the RESP path's bound.
  bool Full() const {
    return bytes_ >= ClientConnection::kFlushThresholdBytes || pieces_.size() >= kMaxPieces;
  }
  bool empty() const { return bytes_ == 0; }

  // Sends everything (blocking the fiber while the client does not read) and forgets
  // it; false when the socket failed.
  bool Send(helio::net::FiberSocket* socket) {
    iovec iov[kMaxPieces + 1];
    size_t count = 0;
    auto add = [&](const std::string& piece) {
      if (!piece.empty()) iov[count++] = {const_cast<char*>(piece.data()), piece.size()};
    };
    for (const auto& piece : pieces_) add(*piece);
    add(text_);
    std::error_code ec = socket->Writev(iov, count);
    if (!ec) FacadeStats::tlocal()->net_output_bytes += bytes_;
    pieces_.clear();
    text_.clear();
    bytes_ = 0;
    return !ec;
  }

 private:
  std::vector<std::shared_ptr<const std::string>> pieces_;
  std::string text_;  // after the last piece
  size_t bytes_ = 0;  // in pieces_ and text_
};

// Reads up to kReadBytes more into *buffer; false when the peer closed or the read failed.
bool ReadMore(helio::net::FiberSocket* socket, std::string* buffer) {
  size_t old_size = buffer->size();
  buffer->resize(old_size + kReadBytes);
  auto received = socket->Recv({reinterpret_cast<uint8_t*>(buffer->data() + old_size), kReadBytes});
  buffer->resize(old_size + (received.ok() ? *received : 0));
  if (received.ok()) FacadeStats::tlocal()->net_input_bytes += *received;
  return received.ok() && *received > 0;
}

}  // namespace

void HttpRouter::Register(std::string path, HttpHandler handler) {
  bool added = routes_.emplace(std::move(path), std::move(handler)).second;
  DCHECK(added);
}

const HttpHandler* HttpRouter::Find(std::string_view path) const {
  auto it = routes_.find(path);
  return it == routes_.end() ? nullptr : &it->second;
}

std::string_view HttpReason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

void ServeHttp(const HttpRouter& router, helio::net::FiberSocket* socket,
               std::string_view already_read) {
  const auto header_timeout = std::chrono::milliseconds(FLAGS_http_header_timeout_ms);
  const auto keepalive_timeout = std::chrono::milliseconds(FLAGS_http_keepalive_timeout_ms);
  HttpRequestParser parser({.max_header_bytes = FLAGS_http_max_header_bytes});
  SocketWatchdog watchdog(socket);
  std::string buffer(already_read);
  PendingOutput out;
  size_t start = 0;  // the first byte of buffer not consumed yet
  bool keep_open = true, failed = false;
  Clock::time_point received_at = Clock::now();  // of the bytes in buffer
  // The head of a request must arrive within header_timeout of its first byte.
  watchdog.set_deadline(received_at + header_timeout);
  while (keep_open) {
    while (keep_open) {  // answer every complete request received so far
      size_t consumed = 0;
      auto result = parser.Parse(std::string_view(buffer).substr(start), &consumed);
      if (result == HttpRequestParser::Result::kNeedMore) break;
      if (result == HttpRequestParser::Result::kError) {
        out.Append(ErrorResponse(parser.error_status()), true, false);
        keep_open = false;
        failed = true;
        break;
      }
      const HttpRequest& request = parser.request();
      keep_open = request.keep_alive;
      out.Append(Respond(router, request, received_at), !keep_open, request.method == "HEAD");
      start += consumed;
      // A client that does not read stops being answered here, and then read.
      if (out.Full() && !out.Send(socket)) return;
    }
    if (!out.empty() && !out.Send(socket)) return;
    if (!keep_open) break;
    bool was_idle = start == buffer.size();
    buffer.erase(0, start);
    start = 0;
    if (was_idle) watchdog.set_deadline(Clock::now() + keepalive_timeout);
    if (!ReadMore(socket, &buffer)) return;
    received_at = Clock::now();
    if (was_idle) watchdog.set_deadline(received_at + header_timeout);
  }
  // Closing with unread input would reset the connection and could discard the error
  // response before the client reads it: stop sending, then drain for a moment.
  socket->Shutdown(SHUT_WR);
  if (failed) {
    watchdog.set_deadline(Clock::now() + kLingerTime);
    buffer.clear();
    while (buffer.size() < kMaxLingerBytes && ReadMore(socket, &buffer)) {
    }
  }
}

}  // namespace damselfly::facade
