#include "src/server/monitor.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "helio/base/spinlock.h"
#include "helio/base/strings.h"
#include "src/facade/facade_stats.h"
#include "src/facade/resp_connection.h"
#include "src/server/conn_tx_state.h"
#include "src/server/redaction.h"
#include "src/server/tracking.h"

namespace damselfly {

namespace {

// The monitors: the push queues of the monitoring connections. A queue stays in the set
// until its connection stops monitoring (StopMonitor), which also stops its pushes.
struct MonitorSet {
  helio::SpinLock lock;
  std::vector<facade::PushQueue*> monitors;  // guarded by lock
};

// A monitoring connection's state: the push queue is the connection's own.
struct MonitorSession final : facade::ConnectionContext::MonitorState {
  facade::PushQueue* queue = nullptr;
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
    AppendQuoted(IsCredentialArg(cid, args, i) ? std::string_view("(redacted)") : args[i], &line);
  }
  return line;
}

namespace {

// Sends the line of `args` (cid: for redaction, may be null) to every monitor.
void Feed(const facade::CommandId* cid, facade::CmdArgList args,
          facade::ConnectionContext* cntx) {
  const ConnTxState* tx_state = ConnTxState::Find(cntx);
  const std::string_view peer =
      tx_state && tx_state->in_script ? std::string_view("lua") : cntx->owner()->peer_address();
  std::string line =
      helio::StrCat("+", FormatMonitorLine(UnixTimeUs(), cid, args, cntx->db_index, peer), "\r\n");
  // A monitor's own command: its reply goes first (a monitor's commands run on its
  // connection fiber, as they never touch keys). After its QUIT, nothing more is sent.
  if (IsMonitoring(cntx)) {
    cntx->Flush();
    if (cntx->close_after_reply) {
      static_cast<MonitorSession*>(cntx->monitor_state.get())->queue->Stop();
    }
  }
  MonitorSet& set = Monitors();
  std::lock_guard set_guard(set.lock);
  for (facade::PushQueue* queue : set.monitors) queue->Push(line);
}

}  // namespace

void FeedMonitors(const facade::CommandId* cid, facade::CmdArgList args,
                  facade::ConnectionContext* cntx) {
  if (cid->flags & (facade::kCmdAdmin | facade::kCmdSkipMonitor)) return;
  Feed(cid, args, cntx);
}

void FeedScriptCommandToMonitors(facade::CmdArgList args, facade::ConnectionContext* cntx) {
  if (MonitorsActive()) Feed(nullptr, args, cntx);
}

void StartMonitor(facade::ConnectionContext* cntx) {
  if (IsMonitoring(cntx)) return;  // as Redis: ignored, without a reply
  ConnTxState* tx_state = ConnTxState::Find(cntx);
  if (tx_state && tx_state->executing) {
    return cntx->reply_builder()->SendError("ERR MONITOR isn't allowed for DENY BLOCKING client");
  }
  auto session = std::make_unique<MonitorSession>();
  // A monitor is a normal client for client-output-buffer-limit, as in Redis; with that
  // class unlimited (0 0 0, the default) it keeps kMaxMonitorBacklogBytes.
  session->queue =
      cntx->owner()->StartPushes(facade::ClientClass::kNormal, kMaxMonitorBacklogBytes);
  // +OK is queued before the first line can be: registered after it, the client sees
  // every command that follows it.
  cntx->reply_builder()->SendOk();
  cntx->Flush();
  {
    MonitorSet& set = Monitors();
    std::lock_guard guard(set.lock);
    set.monitors.push_back(session->queue);
    monitor_count.fetch_add(1, std::memory_order_relaxed);
  }
  cntx->monitor_state = std::move(session);
}

void StopMonitor(facade::ConnectionContext* cntx) {
  if (!IsMonitoring(cntx)) return;
  auto* session = static_cast<MonitorSession*>(cntx->monitor_state.get());
  {
    MonitorSet& set = Monitors();
    std::lock_guard guard(set.lock);
    set.monitors.erase(std::find(set.monitors.begin(), set.monitors.end(), session->queue));
    monitor_count.fetch_sub(1, std::memory_order_relaxed);
  }
  cntx->monitor_state.reset();
  // Out of the set, so no thread pushes to it any more; a subscriber still needs it.
  SyncPushes(cntx);
}

}  // namespace damselfly
