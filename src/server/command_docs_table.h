// The documentation of every RESP command, as COMMAND DOCS and docs/commands.md publish
// it: one table per family, kept apart from the families' registration lines and merged
// by name when they register (facade::CommandRegistry::Add). A command without an entry,
// or an entry without a command, stops the server at start-up.
//
// Thread-safety: constant data.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

// Adds every family's doc table to `registry`. Call before the families register.
void AddCommandDocs(facade::CommandRegistry* registry);

}  // namespace damselfly
