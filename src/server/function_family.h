// FUNCTION (LOAD, LIST, DELETE, FLUSH, DUMP, RESTORE, STATS, KILL, HELP), FCALL and
// FCALL_RO: Redis 7.0's function libraries.
//
// The libraries form one immutable set, global to the process, replaced as a whole by
// FUNCTION LOAD, DELETE, FLUSH and RESTORE (rare) under a mutex, each replacement with
// a new epoch. FCALL takes no lock: each thread keeps the set it saw last and swaps it
// for the current one only when the global epoch moved (one atomic load per call).
// Interpreters (pooled per thread, script_runner.h) load a library the first time a
// call needs it, and drop everything they loaded when the epoch they loaded at is not
// the set's: a REPLACE or DELETE reaches every interpreter before its next call.
//
// A library is validated before it is stored: FUNCTION LOAD and RESTORE run its code in
// an interpreter of their own thread that holds no other library, which gives its
// functions and flags; the name checks against the other libraries are made on the set.
//
// Thread-safety: the handlers run on connection fibers of any thread; the set is read
// by any thread without a lock and replaced under the mutex.
#pragma once

#include <string>
#include <vector>

#include "src/facade/command_registry.h"

namespace damselfly {

class FunctionFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
  // Whether the function FCALL `args` names exists and declares no-writes.
  static bool DeclaresNoWrites(facade::CmdArgList args);
  // INFO memory's number_of_functions and number_of_libraries.
  static size_t FunctionCount();
  static size_t LibraryCount();
  // Snapshots: every library's code, and loading the libraries of `codes` (all or none:
  // "" or Redis's error for the first that does not load). `keep_others`: the libraries
  // not in `codes` stay; then one of the same name is replaced when `replace`, else an
  // error.
  static std::vector<std::string> LibraryCodes();
  static std::string LoadLibraries(const std::vector<std::string>& codes, bool keep_others,
                                   bool replace);
};

}  // namespace damselfly
