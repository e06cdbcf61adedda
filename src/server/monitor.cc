#include "src/server/monitor.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <boost/fiber/condition_variable.hpp>
#include <memory>
#include <mutex>
#include <vector>

#include "helio/base/spinlock.h"
#include "helio/base/strings.h"
#include "helio/fibers/fiber.h"
#include "src/facade/facade_stats.h"
#include "src/facade/resp_connection.h"
#include "src/server/conn_tx_state.h"

namespace damselfly {

namespace {

struct Monitor {
  helio::SpinLock lock;
  boost::fibers::condition_variable_any cv;
  std::string backlog;      // guarded by lock
  bool overflowed = false;  // guarded by lock
  bool stopping = false;    // guarded by lock: send what is queued, then end
};

struct MonitorSet {
  helio::SpinLock lock;
  std::vector<std::shared_ptr<Monitor>> monitors;  // guarded by lock
};

// A monitoring connection's state: its queue and the fiber that sends it.
struct MonitorSession final : facade::ConnectionContext::MonitorState {
  std::shared_ptr<Monitor> monitor = std::make_shared<Monitor>();
  boost::fibers::fiber writer;
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

// Queues `bytes` for the monitor's client; false once the backlog overflowed or the
// monitor stops.
bool Enqueue(Monitor* monitor, std::string_view bytes) {
  std::lock_guard guard(monitor->lock);
  if (monitor->overflowed || monitor->stopping) return false;
  if (monitor->backlog.size() + bytes.size() > kMaxMonitorBacklogBytes) {
    monitor->overflowed = true;
  } else {
    monitor->backlog += bytes;
  }
  monitor->cv.notify_one();
  return !monitor->overflowed;
}

// The writer fiber: sends the backlog until the monitor stops. A failed send or an
// overflow ends the connection (its reading fiber then stops the monitor).
void SendBacklog(Monitor* monitor, facade::RespConnection* conn) {
  std::string sending;
  while (true) {
    bool overflowed, stopping;
    {
      std::unique_lock guard(monitor->lock);
      monitor->cv.wait(guard, [&] {
        return !monitor->backlog.empty() || monitor->overflowed || monitor->stopping;
      });
      sending.swap(monitor->backlog);
      overflowed = monitor->overflowed;
      stopping = monitor->stopping;
    }
    if (overflowed) return conn->Kill();
    if (sending.empty() && stopping) return;
    if (conn->socket()->Send({reinterpret_cast<const uint8_t*>(sending.data()), sending.size()})) {
      return conn->Kill();
    }
    facade::FacadeStats::tlocal()->net_output_bytes += sending.size();
    sending.clear();
  }
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
                  facade::ConnectionContext* cntx) {
  if (cid->flags & (facade::kCmdAdmin | facade::kCmdSkipMonitor)) return;
  std::string line = helio::StrCat(
      "+", FormatMonitorLine(UnixTimeUs(), cid, args, cntx->db_index, cntx->owner()->peer_address()),
      "\r\n");
  // A monitor's own command: its reply goes first (a monitor's commands run on its
  // connection fiber, as they never touch keys). After its QUIT, nothing more is sent.
  if (IsMonitoring(cntx)) {
    cntx->Flush();
    if (cntx->close_after_reply) {
      Monitor* monitor = static_cast<MonitorSession*>(cntx->monitor_state.get())->monitor.get();
      std::lock_guard guard(monitor->lock);
      monitor->stopping = true;
      monitor->cv.notify_one();
    }
  }
  MonitorSet& set = Monitors();
  std::lock_guard set_guard(set.lock);
  for (const std::shared_ptr<Monitor>& monitor : set.monitors) Enqueue(monitor.get(), line);
}

void StartMonitor(facade::ConnectionContext* cntx) {
  if (IsMonitoring(cntx)) return;  // as Redis: ignored, without a reply
  ConnTxState* tx_state = ConnTxState::Find(cntx);
  if (tx_state && tx_state->executing) {
    return cntx->reply_builder()->SendError("ERR MONITOR isn't allowed for DENY BLOCKING client");
  }
  auto session = std::make_unique<MonitorSession>();
  Monitor* monitor = session->monitor.get();
  facade::RespConnection* conn = cntx->owner();
  // Registered before +OK leaves, so the client sees every command that follows it.
  {
    MonitorSet& set = Monitors();
    std::lock_guard guard(set.lock);
    set.monitors.push_back(session->monitor);
    monitor_count.fetch_add(1, std::memory_order_relaxed);
  }
  conn->set_output_sink([monitor](std::string_view replies) { return Enqueue(monitor, replies); });
  session->writer = helio::fibers::Launch([monitor, conn] { SendBacklog(monitor, conn); });
  cntx->monitor_state = std::move(session);
  cntx->reply_builder()->SendOk();
}

void StopMonitor(facade::ConnectionContext* cntx) {
  if (!IsMonitoring(cntx)) return;
  cntx->Flush();  // the replies so far go before the monitor stops
  auto* session = static_cast<MonitorSession*>(cntx->monitor_state.get());
  {
    MonitorSet& set = Monitors();
    std::lock_guard guard(set.lock);
    set.monitors.erase(std::find(set.monitors.begin(), set.monitors.end(), session->monitor));
    monitor_count.fetch_sub(1, std::memory_order_relaxed);
  }
  {
    std::lock_guard guard(session->monitor->lock);
    session->monitor->stopping = true;
    session->monitor->cv.notify_one();
  }
  session->writer.join();
  cntx->owner()->set_output_sink({});
  cntx->monitor_state.reset();
}

}  // namespace damselfly
