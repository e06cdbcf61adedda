// SORT and SORT_RO over lists, sets and sorted sets. The handler runs on the connection's
// fiber or, when it owns every key, inline on the key's shard; its hops go through a
// CommandTransaction, or a whole-shard transaction when BY/GET patterns name keys that
// may live on any shard (see sort_family.cc).
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class SortFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
