#include "src/server/server_state.h"

namespace damselfly {

ServerState* ServerState::tlocal() {
  static thread_local ServerState state;
  return &state;
}

}  // namespace damselfly
