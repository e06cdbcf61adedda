// The HTTP endpoints operators scrape and open: GET /metrics (Prometheus text exposition
// format 0.0.4, names "damselfly_*" mirroring redis_exporter's "redis_*") and GET / (a
// small status page). docs/metrics.md lists every metric.
//
// Both gather their figures with GatherStats (one short task per thread); no shard stops.
//
// Thread-safety: the handlers run on HTTP connection fibers of any thread.
#pragma once

#include <string>

#include "src/facade/http_session.h"

namespace damselfly {

class Service;

// Registers "/" and "/metrics" on `router`.
void RegisterHttpRoutes(Service* service, facade::HttpRouter* router);

// The /metrics page.
std::string RenderMetrics(Service* service);

}  // namespace damselfly
