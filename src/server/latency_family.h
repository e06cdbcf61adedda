// LATENCY LATEST / HISTORY / RESET / GRAPH / DOCTOR / HISTOGRAM / HELP, as Redis 7.0
// answers them. The event series come from every thread's LatencyEvents, merged on read
// (latency_monitor.h); HISTOGRAM reads the per-command histograms of INFO latencystats
// (command_accounting.h). The handler runs on the connection's fiber and visits every
// thread once (ProactorPool::AwaitOnAll).
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class LatencyFamily {
 public:
  // Also applies --latency_monitor_threshold. `registry` must outlive the server (LATENCY
  // HISTOGRAM looks command names up in it).
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
