// The geo commands: GEOADD GEOPOS GEODIST GEOHASH, the searches GEORADIUS,
// GEORADIUSBYMEMBER (and their _RO forms), GEOSEARCH and GEOSEARCHSTORE. A geo set is a
// sorted set whose scores are 52-bit geohashes (core/geohash.h): GEOADD writes through
// ZADD's shard code, so encodings, the "zadd" event and WATCH behave as for ZADD, and
// every sorted-set command works on a geo set. A search reads at most nine score ranges
// (the geohash cells that cover the area) and filters by distance. The forms that store
// read the source in one hop of a CommandTransaction and write the destination in a
// second, so they are atomic across shards.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class GeoFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
