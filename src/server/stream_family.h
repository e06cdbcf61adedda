// The stream commands without consumer groups: XADD XRANGE XREVRANGE XLEN XDEL XTRIM
// XSETID XREAD. Values are core::Streams (core/stream.h). Every command but XREAD has one
// key and runs on its shard's thread; XREAD reads all its streams in one hop of a
// multi-key transaction, so it sees every shard at one moment. Writes report Redis's
// keyspace events (xadd, xtrim, xdel, xsetid). XREAD BLOCK waits through the blocking
// controller (blocking_controller.h): an XADD serves every XREAD waiting on its key.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class StreamFamily {
 public:
  // Registers the commands and the stream's TypedObject factory (RENAME, MOVE and COPY
  // across shards rebuild streams with it).
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
