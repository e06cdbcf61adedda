// MONITOR: clients that watch every command the server runs.
//
// Each monitor has a byte queue guarded by a spinlock. RunCommand (command_accounting)
// appends one line per executed command to every monitor's queue, on whichever thread
// ran the command, and wakes the monitor; the monitor's connection fiber, which stays
// in the MONITOR handler, sends what piled up. So commands of every thread reach every
// monitor without a hop, and the hot path pays one relaxed atomic load while nobody
// monitors.
//
// As in Redis: lines look like
//   +1700000000.123456 [0 127.0.0.1:50000] "set" "k" "v"
// (arguments as sent, escaped like sdscatrepr), admin commands are not shown, AUTH's
// arguments and HELLO's credentials read "(redacted)", and a monitor whose backlog grows
// past kMaxBacklogBytes is disconnected. A monitor ends when its client disconnects;
// what it sends meanwhile is not read.
//
// Thread-safety: FeedMonitors from any thread, also inside tasks (it never suspends);
// ServeMonitor on the monitor's connection fiber.
#pragma once

#include <cstddef>
#include <string>

#include "src/facade/command_registry.h"
#include "src/facade/conn_context.h"

namespace damselfly {

inline constexpr size_t kMaxMonitorBacklogBytes = 32 << 20;

// Whether any client monitors (a relaxed load).
bool MonitorsActive();

// Shows a command that `cntx`'s client ran to every monitor.
void FeedMonitors(const facade::CommandId* cid, facade::CmdArgList args,
                  const facade::ConnectionContext* cntx);

// The MONITOR command: replies +OK, then streams until the client disconnects.
void ServeMonitor(facade::ConnectionContext* cntx);

// One monitor line without "+" and CRLF (exposed for tests).
std::string FormatMonitorLine(int64_t unix_time_us, const facade::CommandId* cid,
                              facade::CmdArgList args, unsigned db, std::string_view peer);

}  // namespace damselfly
