// MONITOR: clients that watch every command the server runs.
//
// Each monitor receives through its connection's push queue (src/facade/push_queue.h).
// RunCommand (command_accounting) appends one line per executed command to every
// monitor's queue, on whichever thread ran the command, and the connection's writer
// fiber sends what piled up. So commands of every thread reach every monitor without a
// hop, and the hot path pays one relaxed atomic load while nobody monitors.
//
// The monitoring connection keeps reading its own commands meanwhile. Their replies go
// through the same queue, so the client receives them in order with the stream, and the
// reply to one of its own commands comes before that command's line, as Redis writes
// both into one output buffer.
//
// As in Redis: lines look like
//   +1700000000.123456 [0 127.0.0.1:50000] "set" "k" "v"
// (arguments as sent, escaped like sdscatrepr), admin commands are not shown, credentials
// (AUTH's, HELLO's, ACL SETUSER's, CONFIG SET requirepass's: redaction.h) read
// "(redacted)", commands queued by MULTI show when
// EXEC runs them (before the EXEC line), a script command shows before the commands its
// script calls (whose client reads "lua"), and a monitor is bounded by the `normal` class
// of client-output-buffer-limit, as in Redis; while that class is unlimited (0 0 0, the
// default) a monitor whose backlog grows past kMaxMonitorBacklogBytes is disconnected
// all the same, so a monitor that stops reading cannot grow the server's memory. On a
// monitoring connection, commands that touch the keyspace (read or write flags) are
// refused with "ERR Replica can't interact with the keyspace", MONITOR again is ignored
// (no reply), RESET ends monitoring, and every other command runs as usual.
//
// Thread-safety: FeedMonitors from any thread, also inside tasks (it never suspends);
// the other functions on the connection's fiber.
#pragma once

#include <cstddef>
#include <string>

#include "src/facade/command_registry.h"
#include "src/facade/conn_context.h"

namespace damselfly {

inline constexpr size_t kMaxMonitorBacklogBytes = 32 << 20;

// Whether any client monitors (a relaxed load).
bool MonitorsActive();

// Shows a command that `cntx`'s client ran to every monitor. A command a script calls
// shows with "lua" for its client, as in Redis.
void FeedMonitors(const facade::CommandId* cid, facade::CmdArgList args,
                  facade::ConnectionContext* cntx);

// Shows a script command (EVAL*, FCALL*) as it starts: Redis shows it before the
// commands its script calls, whether it then runs or fails (NOSCRIPT, a compile error).
// Those commands are flagged skip-monitor, so that RunCommand leaves them out after.
void FeedScriptCommandToMonitors(facade::CmdArgList args, facade::ConnectionContext* cntx);

// The MONITOR command: replies +OK and starts streaming to the connection, which goes on
// reading its commands. Inside EXEC it is Redis's error instead, and on a connection that
// already monitors it does nothing.
void StartMonitor(facade::ConnectionContext* cntx);

// Whether the connection is in MONITOR mode.
inline bool IsMonitoring(const facade::ConnectionContext* cntx) {
  return cntx->monitor_state != nullptr;
}

// Ends MONITOR mode (RESET, the connection closing); unless the connection subscribes
// to channels too, it waits until what is queued was sent and stops the push queue, and
// the connection sends its replies itself again. No-op when not monitoring.
void StopMonitor(facade::ConnectionContext* cntx);

// One monitor line without "+" and CRLF (exposed for tests).
std::string FormatMonitorLine(int64_t unix_time_us, const facade::CommandId* cid,
                              facade::CmdArgList args, unsigned db, std::string_view peer);

}  // namespace damselfly
