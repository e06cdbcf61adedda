// SORT and SORT_RO over lists, sets and sorted sets (see sort_family.cc for how BY and
// GET patterns, which name keys on any shard, are kept atomic).
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class SortFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
