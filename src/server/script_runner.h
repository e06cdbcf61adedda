// Runs a Lua script (EVAL) or function (FCALL) for a client, atomically, with no global
// lock. The script runs on the client's fiber, in an interpreter of the fiber's thread;
// its redis.call()s run as the commands of an EXEC do (multi_exec.h), in one of three
// modes:
//
//  - Local: every declared key (KEYS) lives on this thread's shard and is free. The
//    script runs there without a transaction, as a fast-path command does: nothing else
//    runs on the thread until it ends, so nothing can see it half done. A key it did not
//    declare is used the same way when it lives here and is free.
//  - Transaction: the declared keys are locked (shared for read-only scripts, else
//    exclusive) in one multi-shard Transaction, scheduled before the script starts; each
//    call is a hop to its keys' shard. A local run that must leave its thread (a key of
//    another shard, a locked key, a command without keys, a script that runs past the
//    busy threshold) becomes one at that point: its keys are still free, so the locks
//    are taken at once. Inside MULTI/EXEC the script uses EXEC's transaction.
//  - Whole-shard: the run locks every shard and may use any key. A cached script runs so
//    until a run has shown that it keeps to its declared keys (ScriptShape): its first
//    run, and every run of a script that reached keys it did not declare (BullMQ's build
//    job keys from a prefix) unless they were all on its declared keys' shard. With one
//    shard, local or transaction instead: nothing can be on another thread.
//
// Undeclared keys, in a run that is not whole-shard (a script that kept to its keys
// before, or an FCALL). A key the script did not declare is locked when first reached
// (Transaction::LockLate, tx_queue.h 2b):
//  - when it is free, at once: nothing scheduled holds it, and everything scheduled
//    later waits for the script;
//  - when only younger transactions hold it and none of them has started on that shard,
//    the script goes ahead of them there: they wait for it as if it had declared the key.
// Otherwise the key is held by a transaction that is older, or has started; the script
// has three ways on, none of which can deadlock or break atomicity:
//  - it has written nothing yet: the run is abandoned (its calls so far only read) and
//    the script runs again from the start as a whole-shard run;
//  - it has written, and every holder is older (and not waiting behind the script): it
//    waits for them (an older transaction never waits for a younger one);
//  - it has written, and a younger transaction that has started holds the key: waiting
//    could deadlock (that transaction may be waiting for the script's own keys) and the
//    script cannot be undone, so the call fails with an error the script sees (as a
//    failed command). This needs two transactions on the same undeclared key at once,
//    the younger one mid-way. Only undoing the script's writes could avoid it, which is
//    why scripts known to reach undeclared keys run whole-shard.
//    The script is marked: its next runs are whole-shard.
// INFO stats counts the runs that reached undeclared keys and the whole-shard re-runs.
//
// Busy scripts: a run past busy-reply-threshold (lua-time-limit) marks the server busy:
// other clients' commands get -BUSY (but for SCRIPT KILL, FUNCTION KILL/STATS, SHUTDOWN
// NOSAVE and the connection commands Redis allows), and the run yields its fiber every
// few thousand instructions so its thread keeps serving. SCRIPT KILL stops a busy run
// that has not written.
//
// Thread-safety: RunScript runs on a connection fiber. The busy state is global and
// read by every thread's dispatcher (one relaxed load per command).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "src/core/interpreter.h"
#include "src/facade/command_registry.h"
#include "src/facade/conn_context.h"

namespace damselfly {

// What a script may do, from its shebang (`#!lua flags=no-writes,allow-oom`) or its
// register_function flags.
struct ScriptFlags {
  bool no_writes = false;
  bool allow_oom = false;
  bool allow_stale = false;
  bool no_cluster = false;
  bool allow_cross_slot_keys = false;
  // The script declared its flags (a shebang, or a function): without one, Redis runs
  // an EVAL script with its compatibility defaults.
  bool declared = false;
};

// Sets the flag named `name` (Redis's names); false when unknown.
bool SetScriptFlag(std::string_view name, ScriptFlags* flags);
// Parses an EVAL body's first line when it is a shebang ("#!lua" with an optional
// "flags=a,b"); true without one. On a bad shebang returns false with Redis's reply text.
bool ParseShebang(std::string_view body, ScriptFlags* flags, std::string* error);

// What runs of a script have shown (kept with the cached script, read and written by the
// runs on every thread).
enum class ScriptShape : uint8_t {
  kUnknown,       // never ran to the end: runs whole-shard
  kDeclaredOnly,  // its first run used its declared keys only: runs as described above
  kUndeclared,    // reached keys it did not declare: runs whole-shard
  // Reached keys it did not declare, all on the one shard of its declared keys (a
  // BullMQ queue whose prefix is a hash tag, `{queue}`): runs local when its declared
  // keys are free, else whole-shard. A local run that then finds an undeclared key held
  // takes a transaction of its own at that point, the youngest there is, so it may wait
  // for every holder.
  kUndeclaredOneShard,
};

// Runs `body` in an interpreter of this thread for the client `cntx`, with `keys` as the
// declared keys (they must outlive the call), as described above; the body writes the
// script's result (RunScript / CallFunction) to the writer it is given, which is the
// client's reply. `is_function`: an FCALL (the busy and kill texts name FUNCTION).
struct ScriptCall {
  facade::CmdArgList keys;
  ScriptFlags flags;
  bool read_only = false;  // EVAL_RO, EVALSHA_RO, FCALL_RO or a no-writes script
  bool is_function = false;
  // The script's learned shape (see ScriptShape), or nullptr: run as described above.
  std::atomic<ScriptShape>* shape = nullptr;
};
void RunScript(const facade::CommandRegistry& registry, const ScriptCall& call,
               facade::ConnectionContext* cntx,
               absl::FunctionRef<void(Interpreter* lua, ScriptReplyWriter* out)> body);

// Runs fn with an interpreter of this thread that no run is using (SCRIPT LOAD and
// FUNCTION LOAD compile in it).
void WithInterpreter(absl::FunctionRef<void(Interpreter* lua)> fn);

// The busy state (see above), for the dispatcher and SCRIPT/FUNCTION KILL.
bool ScriptsBusy();
// The -BUSY error for a command refused while a script is busy, or "" when cid may run
// (allow-busy commands, SCRIPT KILL, FUNCTION KILL and STATS).
std::string BusyScriptError(const facade::CommandId* cid, facade::CmdArgList args);
// SCRIPT KILL / FUNCTION KILL: the reply (OK, NOTBUSY or UNKILLABLE) as an error text or
// "" for OK.
std::string KillBusyScript(bool function);
// Shutdown: every running script stops at its next instruction check, whatever it wrote
// (SHUTDOWN NOSAVE ends a busy script, as in Redis).
void StopAllScripts();
// busy-reply-threshold (lua-time-limit) in milliseconds.
int64_t BusyReplyThresholdMs();
void SetBusyReplyThresholdMs(int64_t ms);

}  // namespace damselfly
