// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (LOAD, EXISTS, FLUSH, KILL, HELP).
//
// Scripts are cached by SHA1 for the whole process (EVAL caches what it runs, as Redis
// does), and compiled lazily in each interpreter that runs them: a thread keeps a pool
// of interpreters (script_runner.h), each compiling a script the first time it runs it.
// SCRIPT FLUSH empties the cache and moves an epoch that makes every interpreter drop
// what it compiled before its next run.
//
// Thread-safety: the cache is shared under a mutex taken when a thread meets a script it
// has not seen; each thread keeps its own map of the scripts it ran, checked first.
#pragma once

#include "src/facade/command_registry.h"

namespace damselfly {

class ScriptFamily {
 public:
  static void Register(facade::CommandRegistry* registry);
  // INFO memory's number_of_cached_scripts.
  static size_t CachedScripts();
  // Whether the script EVAL (EVALSHA when by_sha) `args` would run declares no-writes: its
  // shebang for EVAL, the cached script's for EVALSHA; false for one not cached.
  static bool DeclaresNoWrites(facade::CmdArgList args, bool by_sha);
};

}  // namespace damselfly
