// The HTTP endpoints operators scrape and open: GET /metrics (Prometheus text exposition
// format 0.0.4, names "damselfly_*" mirroring redis_exporter's "redis_*") and GET / (a
// small status page). docs/metrics.md lists every metric.
//
// Both gather their figures with GatherStats (one short task per thread); no shard stops.
// Each thread keeps the last page it rendered of each and answers with it, instead of
// rendering again, every request that arrived before that render started (so a client
// that pipelines a thousand requests costs one render per read, not a thousand) or that
// comes less than --metrics_cache_ms after it started (so many scrapers cost one render
// per interval and thread). Requests that come while a page is being rendered wait for
// it rather than start another.
//
// Thread-safety: the handlers run on HTTP connection fibers of any thread.
#pragma once

#include <string>

#include "src/facade/http_session.h"

namespace damselfly {

class Service;

// Registers "/" and "/metrics" on `router`; several routers may share them.
void RegisterHttpRoutes(Service* service, facade::HttpRouter* router);

// The /metrics page.
std::string RenderMetrics(Service* service);

}  // namespace damselfly
