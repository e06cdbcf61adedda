// SLOWLOG GET / LEN / RESET / HELP over the per-thread slow logs that RunCommand fills
// (see command_accounting.h). Each thread keeps its newest --slowlog_max_len entries;
// the command merges them by entry id (ids are global, so newest first is well
// defined) and shows at most slowlog-max-len of them, as one Redis log would.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class SlowlogFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
};

}  // namespace damselfly
