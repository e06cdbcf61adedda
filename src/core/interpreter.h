// Interpreter: one Lua 5.1 state set up as Redis 7.0 sets up its scripting engine, with
// no knowledge of shards or connections. It compiles EVAL scripts (as the global
// function f_<sha>, Redis's naming) and FUNCTION libraries, runs them, and converts
// between Lua values and replies with Redis's rules:
//  - the sandbox: base, table, string, math, cjson, cmsgpack, bit and struct only (no
//    os, io, loadfile, dofile); globals are protected with Redis's error texts;
//  - the `redis` table: call, pcall, error_reply, status_reply, sha1hex, log and the
//    LOG_* levels, setresp, set_repl and replicate_commands (accepted), breakpoint and
//    debug (no-ops), REDIS_VERSION, REDIS_VERSION_NUM, and register_function while a
//    library loads;
//  - replies to Lua (redis.call's result) and Lua to replies (the script's result), in
//    RESP2 or RESP3 as the script chose with redis.setresp.
//
// redis.call and redis.pcall reach the server through the CallFn the caller sets for
// each run; the interpreter never runs a command itself.
//
// Thread-safety: none. One thread uses an interpreter at a time; the server keeps a
// pool per thread (a script whose calls hop may suspend its fiber mid-run while another
// fiber on the thread runs another script in another interpreter).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"

struct lua_State;

namespace damselfly {

// Where a script's result goes. The Lua-to-reply rules (Redis's) decide which method;
// the writer decides the bytes (RESP2 or RESP3: the server's writer is its ReplyBuilder).
class ScriptReplyWriter {
 public:
  virtual ~ScriptReplyWriter() = default;
  virtual void Nil() = 0;
  virtual void Integer(int64_t value) = 0;
  virtual void Bulk(std::string_view value) = 0;
  virtual void Status(std::string_view value) = 0;
  // `message` as the server sends it without '-': "ERR ...", "WRONGTYPE ...". It is
  // final: a script may return an error with no code ({err="bad"} replies "-bad"), so
  // the writer must not add "ERR ". It never holds '\r' or '\n'.
  virtual void Error(std::string_view message) = 0;
  // An error reply of a command the script called (Redis marks its table
  // ignore_error_stats_update): the server counted it in its error stats when the command
  // sent it, and must not count it again as the script's reply.
  virtual void CommandError(std::string_view message) { Error(message); }
  virtual void Array(size_t length) = 0;
  virtual void Map(size_t pairs) = 0;
  virtual void Set(size_t length) = 0;
  virtual void Double(double value) = 0;
  virtual void Bool(bool value) = 0;
  virtual void BigNumber(std::string_view digits) = 0;
  virtual void Verbatim(std::string_view text, std::string_view format) = 0;
};

class Interpreter {
 public:
  // The command bridge for redis.call / redis.pcall: runs `args` (args[0] is the command
  // name, as the script wrote it) and appends its complete reply, serialised in RESP3
  // when `resp3` (redis.setresp(3)) else RESP2, to *reply. The interpreter parses it
  // back into Lua values with Redis's rules; an error reply raises (call) or is returned
  // as {err=...} (pcall). It may suspend the calling fiber. The interpreter checks the
  // arguments Lua-side (none, or not strings/numbers: Redis's texts) before calling;
  // the server's own refusals must come back as error replies with Redis's texts
  // ("-ERR Unknown Redis command called from script", "-ERR Wrong number of args calling
  // Redis command from script", "-ERR This Redis command is not allowed from script",
  // ...). Numbers reach it formatted as Redis does ("%.17g").
  using CallFn =
      std::function<void(absl::Span<const std::string_view> args, bool resp3, std::string* reply)>;
  // redis.log(level, message): level is 0..3 (LOG_DEBUG, LOG_VERBOSE, LOG_NOTICE,
  // LOG_WARNING).
  using LogFn = std::function<void(int level, std::string_view message)>;
  // redis.acl_check_cmd(command, args...): whether the script's user may run it, with
  // the arguments checked as for redis.call.
  enum class AclCheck { kAllowed, kDenied, kUnknownCommand };
  using AclCheckFn = std::function<AclCheck(absl::Span<const std::string_view> args)>;

  Interpreter();
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // The SHA1 of `body` in lowercase hex (40 characters), as SCRIPT LOAD prints it.
  static std::string Sha1Hex(std::string_view body);

  // --- EVAL scripts

  // Compiles `body` as the function f_<sha> (sha = Sha1Hex(body), 40 lowercase hex).
  // On a syntax error returns false with Redis's reply text in *error
  // ("ERR Error compiling script (new function): user_script:1: ...").
  bool AddScript(std::string_view sha, std::string_view body, std::string* error);
  bool HasScript(std::string_view sha) const;
  // Drops every compiled script (SCRIPT FLUSH).
  void FlushScripts();

  // Stack: a run uses at most about 64 KiB of the calling thread's (fiber's) stack for
  // Lua's nesting (deeper calls fail with "C stack overflow" instead of overflowing),
  // plus about 24 KiB of slack, plus what a redis.call made at that depth needs.

  // Runs f_<sha> (REQUIRES: HasScript) with the globals KEYS and ARGV, and writes its
  // result, or the error it raised in Redis's words (with "script: <sha>, on
  // @user_script:<line>." as Redis 7.0 words it), to *out. Each run starts in RESP2
  // (redis.setresp changes it for that run only).
  void RunScript(std::string_view sha, absl::Span<const std::string_view> keys,
                 absl::Span<const std::string_view> argv, ScriptReplyWriter* out);

  // --- FUNCTION libraries

  struct FunctionInfo {
    std::string name;
    std::string description;
    bool has_description = false;  // FUNCTION LIST shows nil for none, "" for ''
    // Redis's flag names as given to register_function: "no-writes", "allow-oom",
    // "allow-stale", "no-cluster", "allow-cross-slot-keys".
    std::vector<std::string> flags;
  };
  // Runs the code of a library with redis.register_function available, and keeps its
  // functions under their names (library `lib`). `body` is the whole code FUNCTION
  // LOAD got, its "#!lua name=<lib>" line included (Redis counts that line in error
  // line numbers); code without its "#!" line is also accepted and numbered as if the
  // line were there. While the body runs only `redis` (register_function, log, LOG_*,
  // REDIS_VERSION*) exists, as in Redis, and a body that runs over 500 ms stops with
  // "FUNCTION LOAD timeout". On error (compile, runtime, a bad register_function call,
  // no function registered, a name already taken by another library of this
  // interpreter) returns false with Redis's reply text in *error ("ERR Error compiling
  // function: ...", "ERR Error registering functions: ...", "ERR No functions
  // registered", "ERR Function <name> already exists") and keeps nothing of it. When
  // `lib` is already loaded, success replaces it (FUNCTION LOAD REPLACE) and failure
  // leaves it as it was; its own function names do not collide.
  bool LoadLibrary(std::string_view lib, std::string_view body,
                   std::vector<FunctionInfo>* functions, std::string* error);
  // Drops a library's functions (FUNCTION DELETE, or before LoadLibrary ... REPLACE).
  void DropLibrary(std::string_view lib);
  bool HasFunction(std::string_view name) const;
  // Calls a loaded function as FCALL does (REQUIRES: HasFunction): fn(keys, args), two
  // tables; result or error ("script: <name>, on @user_function:<line>.") to *out as
  // RunScript. Functions see no KEYS or ARGV globals, as in Redis.
  void CallFunction(std::string_view name, absl::Span<const std::string_view> keys,
                    absl::Span<const std::string_view> argv, ScriptReplyWriter* out);

  // --- Run context, set by the caller around each RunScript / CallFunction

  void set_call(CallFn call) { call_ = std::move(call); }
  void set_log(LogFn log) { log_ = std::move(log); }
  // Unset: every command is allowed.
  void set_acl_check(AclCheckFn check) { acl_check_ = std::move(check); }
  // Checked every 100000 Lua instructions while a script or function runs (Redis's
  // period): when it returns true the script stops with "ERR Script killed by user with
  // SCRIPT KILL..." (Redis 7.0's text for FUNCTION KILL too), and pcall cannot catch it.
  // It may suspend the fiber (to let others get -BUSY). Unset: no hook, no cost.
  void set_interrupt(std::function<bool()> should_stop) { interrupt_ = std::move(should_stop); }

  // Bytes the Lua state holds (INFO's used_memory_lua).
  size_t used_memory_bytes() const;

  lua_State* lua() { return lua_; }

 private:
  friend class LuaApi;  // the C functions Lua calls (interpreter.cc)
  struct Function {
    std::string library;
    int ref;  // the callback in the Lua registry
  };
  struct Loading;  // a LoadLibrary in progress

  void SetUpGlobals();
  // Pushes the error handler and the callable, the arguments are pushed by the caller;
  // runs it and writes result or error (named `name`) to *out.
  void Run(std::string_view name, int nargs, ScriptReplyWriter* out);
  void AfterRun();
  // The bodies of redis.call/pcall, redis.log and redis.register_function (see LuaApi).
  bool CallCommand(lua_State* lua, bool raise);
  bool CheckAcl(lua_State* lua);
  // Gathers redis.call's arguments into call_args_; false with an error table pushed.
  bool CollectArgs(lua_State* lua);
  void LogMessage(lua_State* lua, int level);
  bool Register(lua_State* lua);
  const char* RegisterArgs(lua_State* lua);

  lua_State* lua_ = nullptr;
  CallFn call_;
  LogFn log_;
  AclCheckFn acl_check_;
  std::function<bool()> interrupt_;

  // Registry references: the error handler, the scripts, EVAL's real globals (KEYS, ARGV go there),
  // the functions' environment metatable and their load-time and run-time globals.
  int error_handler_ref_ = 0;
  int scripts_ref_ = 0;  // sha -> compiled EVAL script
  int eval_globals_ref_ = 0;
  int eval_env_ref_ = 0;  // the proxy EVAL scripts see as _G
  int function_env_meta_ref_ = 0;
  int function_env_ref_ = 0;
  int function_load_globals_ref_ = 0;
  int function_run_globals_ref_ = 0;

  int resp_ = 2;                      // redis.setresp of the running script
  bool killed_ = false;               // the interrupt fired: every hook call raises again
  const char* stack_base_ = nullptr;  // a local of the running Run / LoadLibrary
  bool stack_overflow_ = false;       // raised "C stack overflow", not yet back under
  int runs_since_gc_ = 0;
  // math.random's state: Redis's rand48, per interpreter, from Redis's initial seed.
  uint64_t rand48_ = 0x1234ABCD330E;
  Loading* loading_ = nullptr;
  std::string reply_;  // redis.call's reply, reused
  std::vector<std::string_view> call_args_;
  absl::flat_hash_map<std::string, Function> functions_;
};

}  // namespace damselfly
