#include "src/server/monitor.h"

#include <errno.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <boost/fiber/condition_variable.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

#include "helio/base/spinlock.h"
#include "helio/base/strings.h"
#include "src/facade/resp_connection.h"

namespace damselfly {

namespace {

// How often an idle monitor checks that its client is still there.
constexpr auto kIdleCheckPeriod = std::chrono::seconds(1);

struct Monitor {
  helio::SpinLock lock;
  boost::fibers::condition_variable_any cv;
  std::string backlog;  // guarded by lock
  bool overflowed = false;  // guarded by lock
};

struct MonitorSet {
  helio::SpinLock lock;
  std::vector<std::shared_ptr<Monitor>> monitors;  // guarded by lock
};

MonitorSet& Monitors() {
  static MonitorSet set;
  return set;
}

std::atomic<size_t> monitor_count{0};

int64_t UnixTimeUs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// Appends `arg` quoted and escaped as Redis's sdscatrepr does.
void AppendQuoted(std::string_view arg, std::string* out) {
  *out += '"';
  for (unsigned char c : arg) {
    switch (c) {
      case '\\': *out += "\\\\"; break;
      case '"': *out += "\\\""; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\a': *out += "\\a"; break;
      case '\b': *out += "\\b"; break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          *out += char(c);
        } else {
          char buf[5];
          snprintf(buf, sizeof(buf), "\\x%02x", c);
          *out += buf;
        }
    }
  }
  *out += '"';
}

// Whether argument `i` carries a credential: all of AUTH's, and HELLO's after AUTH.
bool IsRedacted(const facade::CommandId* cid, facade::CmdArgList args, size_t i) {
  if (cid->name == "AUTH") return i > 0;
  if (cid->name != "HELLO") return false;
  for (size_t j = 2; j < i; ++j) {
    if (helio::EqualsIgnoreCase(args[j], "AUTH") && i <= j + 2) return true;
  }
  return false;
}

// Whether the client is gone: a non-blocking peek sees the end of the stream or an error.
bool PeerClosed(int fd) {
  char byte;
  ssize_t n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

}  // namespace

bool MonitorsActive() { return monitor_count.load(std::memory_order_relaxed) > 0; }

std::string FormatMonitorLine(int64_t unix_time_us, const facade::CommandId* cid,
                              facade::CmdArgList args, unsigned db, std::string_view peer) {
  char stamp[40];
  snprintf(stamp, sizeof(stamp), "%lld.%06lld", static_cast<long long>(unix_time_us / 1000000),
           static_cast<long long>(unix_time_us % 1000000));
  std::string line = helio::StrCat(stamp, " [", db, " ", peer, "]");
  for (size_t i = 0; i < args.size(); ++i) {
    line += ' ';
    AppendQuoted(IsRedacted(cid, args, i) ? std::string_view("(redacted)") : args[i], &line);
  }
  return line;
}

void FeedMonitors(const facade::CommandId* cid, facade::CmdArgList args,
                  const facade::ConnectionContext* cntx) {
  if (cid->flags & (facade::kCmdAdmin | facade::kCmdSkipMonitor)) return;
  std::string line = helio::StrCat(
      "+", FormatMonitorLine(UnixTimeUs(), cid, args, cntx->db_index, cntx->owner()->peer_address()),
      "\r\n");
  MonitorSet& set = Monitors();
  std::lock_guard set_guard(set.lock);
  for (const std::shared_ptr<Monitor>& monitor : set.monitors) {
    std::lock_guard guard(monitor->lock);
    if (monitor->backlog.size() + line.size() > kMaxMonitorBacklogBytes) {
      monitor->overflowed = true;
    } else {
      monitor->backlog += line;
    }
    monitor->cv.notify_one();
  }
}

void ServeMonitor(facade::ConnectionContext* cntx) {
  cntx->reply_builder()->SendOk();
  if (!cntx->Flush()) return;
  auto monitor = std::make_shared<Monitor>();
  MonitorSet& set = Monitors();
  {
    std::lock_guard guard(set.lock);
    set.monitors.push_back(monitor);
    monitor_count.fetch_add(1, std::memory_order_relaxed);
  }
  helio::net::FiberSocket* socket = cntx->owner()->socket();
  std::string sending;
  while (true) {
    bool overflowed;
    {
      std::unique_lock guard(monitor->lock);
      monitor->cv.wait_for(guard, kIdleCheckPeriod,
                           [&] { return !monitor->backlog.empty() || monitor->overflowed; });
      sending.swap(monitor->backlog);
      overflowed = monitor->overflowed;
    }
    if (overflowed) break;
    if (sending.empty()) {
      if (PeerClosed(socket->fd())) break;
      continue;
    }
    if (socket->Send({reinterpret_cast<const uint8_t*>(sending.data()), sending.size()})) break;
    sending.clear();
  }
  {
    std::lock_guard guard(set.lock);
    set.monitors.erase(std::find(set.monitors.begin(), set.monitors.end(), monitor));
    monitor_count.fetch_sub(1, std::memory_order_relaxed);
  }
  cntx->close_after_reply = true;
}

}  // namespace damselfly
