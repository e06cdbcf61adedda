// The Lua side of scripting, set up as Redis 7.0 sets up its engine.
//
// Protection (lua_sandbox.h). Every protected table (the globals of scripts and of
// functions, and each library: string, math, redis, cjson...) is seen by scripts through
// a read-only proxy, because Debian's Lua has no readonly-table flag as Redis's has.
// Conversions between replies and Lua values are in lua_values.h.
//
// Environments. EVAL scripts run with the thread's globals (a proxy over the real table
// that also holds KEYS and ARGV). FUNCTION libraries get their own proxy environment
// whose metatable points, while a library body runs, at the load-time globals (only
// `redis` with register_function and log, as Redis) and otherwise at the run-time
// globals (Redis's API without KEYS, ARGV or register_function). Functions defined by a
// body keep that environment, so they see the run-time globals when called.
//
// Errors. Scripts run under lua_pcall with an error handler (Lua, using debug.getinfo
// kept in a local before `debug` is removed) that turns any error into Redis's error
// table {err=, source=, line=}; the reply is "<err> script: <name>, on <source>:<line>.".
// Errors raised by our C functions are such tables already ("ERR ..." or the command's
// own code). Lua's errors are longjmps through this C++ file: no function below raises
// while a C++ object with a destructor is alive in its frame (the Lua-facing wrappers
// call a helper that returns, then raise).
#include "src/core/interpreter.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

int luaopen_cjson(lua_State* lua);
int luaopen_bit(lua_State* lua);
}

#include <openssl/evp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "src/core/lua_libs.h"
#include "src/core/lua_sandbox.h"
#include "src/core/lua_values.h"

namespace damselfly {
namespace {

using lua::PushBareProxy;
using lua::PushErrorTable;
using lua::PushReadonly;
using lua::RawField;
using lua::SetMissingGlobalError;
using lua::ToView;

// Redis checks its interrupt every 100000 instructions; so do we.
constexpr int kHookInstructions = 100000;
// An incremental GC step every this many runs, of this many steps (Redis's numbers).
constexpr int kGcPeriod = 50;
constexpr auto kLoadTimeout = std::chrono::milliseconds(500);
// The stack a run may use below Run's frame (see LuaApi::CheckStack).
constexpr uintptr_t kLuaStackBytes = 64 * 1024;
constexpr uintptr_t kStackSlackBytes = 16 * 1024;

constexpr int kVersionNum = 0x07000F;
constexpr char kVersion[] = "7.0.15";

Interpreter* Self(lua_State* lua) {
  void* self = nullptr;
  lua_getallocf(lua, &self);
  return static_cast<Interpreter*>(self);
}

void* Allocate(void*, void* ptr, size_t, size_t size) {
  if (size == 0) {
    free(ptr);
    return nullptr;
  }
  return realloc(ptr, size);
}

int RaiseError(lua_State* lua, const char* message) {
  PushErrorTable(lua, message);
  return lua_error(lua);
}

// The error handler: whatever was raised becomes an error table with the position of
// the Lua code that raised it (the caller's, when a C function raised).
constexpr char kErrorHandler[] = R"lua(
local getinfo, type, tostring = debug.getinfo, type, tostring
return function(raised)
  local where = getinfo(2, 'Sl')
  if where and where.what == 'C' then
    where = getinfo(3, 'Sl')
  end
  if type(raised) ~= 'table' then
    raised = {err = 'ERR ' .. tostring(raised)}
  end
  if where then
    raised.source = where.source
    raised.line = where.currentline
  end
  return raised
end
)lua";

void Sha1HexTo(std::string_view data, char* hex) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha1(), nullptr);
  static constexpr char kDigits[] = "0123456789abcdef";
  for (unsigned int i = 0; i < 20; i++) {
    hex[2 * i] = kDigits[digest[i] >> 4];
    hex[2 * i + 1] = kDigits[digest[i] & 15];
  }
}

bool ValidFunctionName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

bool KnownFlag(std::string_view flag) {
  return flag == "no-writes" || flag == "allow-oom" || flag == "allow-stale" ||
         flag == "no-cluster" || flag == "allow-cross-slot-keys";
}

// The code to compile: the "#!" line is left out but its line feed kept, so line
// numbers in messages count it, as Redis's do.
std::string_view SkipShebang(std::string_view body) {
  if (body.substr(0, 2) != "#!") return body;
  size_t end = body.find('\n');
  return end == std::string_view::npos ? std::string_view() : body.substr(end);
}

}  // namespace

struct Interpreter::Loading {
  std::vector<FunctionInfo> infos;
  std::vector<int> refs;
  std::chrono::steady_clock::time_point start;
};

// The C functions scripts call. Each wrapper raises only after the helper that did the
// work (and owns any C++ object) returned.
class LuaApi {
 public:
  static int Call(lua_State* lua) { return Self(lua)->CallCommand(lua, true) ? lua_error(lua) : 1; }
  static int Pcall(lua_State* lua) {
    Self(lua)->CallCommand(lua, false);
    return 1;
  }
  static int AclCheckCmd(lua_State* lua) { return Self(lua)->CheckAcl(lua) ? lua_error(lua) : 1; }

  // math.random and math.randomseed as Redis's: rand48 (its numbers for a given seed),
  // with the state in the interpreter instead of the C library's process-wide rand().
  static int MathRandom(lua_State* lua) {
    Interpreter* self = Self(lua);
    self->rand48_ = (0x5DEECE66Dull * self->rand48_ + 0xB) & ((1ull << 48) - 1);
    constexpr int64_t kMax = INT32_MAX;
    lua_Number r = static_cast<lua_Number>(static_cast<int64_t>(self->rand48_ >> 17) % kMax) /
                   static_cast<lua_Number>(kMax);
    switch (lua_gettop(lua)) {
      case 0:
        lua_pushnumber(lua, r);
        return 1;
      case 1: {
        int upper = luaL_checkint(lua, 1);
        luaL_argcheck(lua, 1 <= upper, 1, "interval is empty");
        lua_pushnumber(lua, floor(r * upper) + 1);
        return 1;
      }
      case 2: {
        int lower = luaL_checkint(lua, 1);
        int upper = luaL_checkint(lua, 2);
        luaL_argcheck(lua, lower <= upper, 2, "interval is empty");
        lua_pushnumber(lua, floor(r * (upper - lower + 1)) + lower);
        return 1;
      }
      default:
        return luaL_error(lua, "wrong number of arguments");
    }
  }
  static int MathRandomSeed(lua_State* lua) {
    uint32_t seed = static_cast<uint32_t>(luaL_checkint(lua, 1));
    Self(lua)->rand48_ = (static_cast<uint64_t>(seed) << 16) | 0x330E;
    return 0;
  }

  static int ErrorReply(lua_State* lua) {
    if (lua_gettop(lua) != 1 || lua_type(lua, -1) != LUA_TSTRING) {
      PushErrorTable(lua, "wrong number or type of arguments");
      return 1;
    }
    std::string_view text = ToView(lua, 1);
    if (!text.empty() && text[0] == '-') {
      PushErrorTable(lua, text);
    } else {
      // Redis puts a '-' in front, so the first word is the code.
      lua_pushliteral(lua, "-");
      lua_pushvalue(lua, 1);
      lua_concat(lua, 2);
      PushErrorTable(lua, ToView(lua, -1));
      lua_remove(lua, -2);
    }
    return 1;
  }

  static int StatusReply(lua_State* lua) {
    if (lua_gettop(lua) != 1 || lua_type(lua, -1) != LUA_TSTRING) {
      PushErrorTable(lua, "wrong number or type of arguments");
      return 1;
    }
    lua_createtable(lua, 0, 1);
    lua_pushvalue(lua, 1);
    lua_setfield(lua, -2, "ok");
    return 1;
  }

  static int Sha1Hex(lua_State* lua) {
    if (lua_gettop(lua) != 1) return RaiseError(lua, "wrong number of arguments");
    char hex[40];
    Sha1HexTo(ToView(lua, 1), hex);
    lua_pushlstring(lua, hex, sizeof(hex));
    return 1;
  }

  static int Log(lua_State* lua) {
    int argc = lua_gettop(lua);
    if (argc < 2) return RaiseError(lua, "redis.log() requires two arguments or more.");
    if (!lua_isnumber(lua, 1))
      return RaiseError(lua, "First argument must be a number (log level).");
    lua_Integer level = lua_tointeger(lua, 1);
    if (level < 0 || level > 3) return RaiseError(lua, "Invalid debug level.");
    Self(lua)->LogMessage(lua, static_cast<int>(level));
    return 0;
  }

  static int SetResp(lua_State* lua) {
    if (lua_gettop(lua) != 1) return RaiseError(lua, "redis.setresp() requires one argument.");
    lua_Integer resp = lua_tointeger(lua, 1);
    if (resp != 2 && resp != 3) return RaiseError(lua, "RESP version must be 2 or 3.");
    Self(lua)->resp_ = static_cast<int>(resp);
    return 0;
  }

  // Scripts replicate by effects only, so the flags are checked and otherwise ignored.
  static int SetRepl(lua_State* lua) {
    if (lua_gettop(lua) != 1) return RaiseError(lua, "redis.set_repl() requires two arguments.");
    lua_Integer flags = lua_tointeger(lua, 1);
    if ((flags & ~3) != 0)
      return RaiseError(
          lua, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    return 0;
  }

  static int ReplicateCommands(lua_State* lua) {
    lua_pushboolean(lua, 1);
    return 1;
  }

  // No debugger: breakpoint reports that none is active, debug prints nowhere.
  static int Breakpoint(lua_State* lua) {
    lua_pushboolean(lua, 0);
    return 1;
  }
  static int Debug(lua_State*) { return 0; }

  static int RegisterFunction(lua_State* lua) {
    return Self(lua)->Register(lua) ? 0 : lua_error(lua);
  }

  static void Hook(lua_State* lua, lua_Debug* event) {
    Interpreter* self = Self(lua);
    if (event->event == LUA_HOOKCALL) return CheckStack(lua, self);
    if (self->loading_ != nullptr) {
      if (std::chrono::steady_clock::now() - self->loading_->start < kLoadTimeout) return;
      lua_sethook(lua, Hook, LUA_MASKLINE | LUA_MASKCALL, 0);
      RaiseError(lua, "FUNCTION LOAD timeout");
      return;
    }
    if (!self->killed_) {
      if (!self->interrupt_ || !self->interrupt_()) return;
      // From now on every line raises, so pcall cannot keep the script alive.
      self->killed_ = true;
      lua_sethook(lua, Hook, LUA_MASKLINE | LUA_MASKCALL, 0);
    }
    RaiseError(lua, "Script killed by user with SCRIPT KILL...");
  }

  // Every call (Lua's, C's, metamethods, callbacks of gsub or sort) checks how much of
  // the thread's stack the run has used: Lua's own limit (200 nested C calls) needs more
  // than a fiber's 128 KiB (string.gsub alone keeps an 8 KiB buffer per level), and an
  // overflow would crash the server. Past the limit the call fails with Lua's text; the
  // error handler, which runs at that depth, and code that catches the error get
  // kStackSlackBytes more before the next failure.
  static void CheckStack(lua_State* lua, Interpreter* self) {
    char here;
    uintptr_t used =
        reinterpret_cast<uintptr_t>(self->stack_base_) - reinterpret_cast<uintptr_t>(&here);
    if (used <= kLuaStackBytes) {
      self->stack_overflow_ = false;
      return;
    }
    if (self->stack_overflow_ && used <= kLuaStackBytes + kStackSlackBytes) return;
    self->stack_overflow_ = true;
    lua_pushliteral(lua, "C stack overflow");
    lua_error(lua);
  }
};

// --- Interpreter

Interpreter::Interpreter() {
  lua_ = lua_newstate(Allocate, this);
  SetUpGlobals();
}

Interpreter::~Interpreter() { lua_close(lua_); }

std::string Interpreter::Sha1Hex(std::string_view body) {
  std::string hex(40, '0');
  Sha1HexTo(body, hex.data());
  return hex;
}

namespace {

void OpenLibrary(lua_State* lua, lua_CFunction open, const char* name) {
  lua_pushcfunction(lua, open);
  lua_pushstring(lua, name);
  lua_call(lua, 1, 0);
}

// Libraries that return their table: stored as the global `name`.
void OpenLibraryAs(lua_State* lua, lua_CFunction open, const char* name) {
  lua_pushcfunction(lua, open);
  lua_call(lua, 0, 1);
  lua_setglobal(lua, name);
}

void SetFunction(lua_State* lua, const char* name, lua_CFunction fn) {
  lua_pushcfunction(lua, fn);
  lua_setfield(lua, -2, name);
}

void SetNumber(lua_State* lua, const char* name, lua_Number value) {
  lua_pushnumber(lua, value);
  lua_setfield(lua, -2, name);
}

// redis.log, the LOG_* levels and the version: present at load time and at run time.
void AddCommonRedisApi(lua_State* lua) {
  SetFunction(lua, "log", LuaApi::Log);
  SetNumber(lua, "LOG_DEBUG", 0);
  SetNumber(lua, "LOG_VERBOSE", 1);
  SetNumber(lua, "LOG_NOTICE", 2);
  SetNumber(lua, "LOG_WARNING", 3);
  lua_pushstring(lua, kVersion);
  lua_setfield(lua, -2, "REDIS_VERSION");
  SetNumber(lua, "REDIS_VERSION_NUM", kVersionNum);
}

// The run-time `redis` table: for EVAL scripts (`eval`) and for functions, which lack
// breakpoint, debug and replicate_commands, as in Redis.
void PushRedisApi(lua_State* lua, bool eval) {
  lua_newtable(lua);
  SetFunction(lua, "call", LuaApi::Call);
  SetFunction(lua, "pcall", LuaApi::Pcall);
  SetFunction(lua, "error_reply", LuaApi::ErrorReply);
  SetFunction(lua, "status_reply", LuaApi::StatusReply);
  SetFunction(lua, "sha1hex", LuaApi::Sha1Hex);
  SetFunction(lua, "acl_check_cmd", LuaApi::AclCheckCmd);
  SetFunction(lua, "setresp", LuaApi::SetResp);
  SetFunction(lua, "set_repl", LuaApi::SetRepl);
  SetNumber(lua, "REPL_NONE", 0);
  SetNumber(lua, "REPL_AOF", 1);
  SetNumber(lua, "REPL_SLAVE", 2);
  SetNumber(lua, "REPL_REPLICA", 2);
  SetNumber(lua, "REPL_ALL", 3);
  AddCommonRedisApi(lua);
  if (eval) {
    SetFunction(lua, "replicate_commands", LuaApi::ReplicateCommands);
    SetFunction(lua, "breakpoint", LuaApi::Breakpoint);
    SetFunction(lua, "debug", LuaApi::Debug);
  }
}

// Registers the bundled libraries Debian does not package (src/core/lua_libs.h).
void OpenBundledLibraries(lua_State* lua) {
  OpenLibraryAs(lua, OpenLuaCmsgpack, "cmsgpack");
  OpenLibraryAs(lua, OpenLuaStruct, "struct");
}

}  // namespace

void Interpreter::SetUpGlobals() {
  lua_State* lua = lua_;
  lua::InitProxies(lua);

  OpenLibrary(lua, luaopen_base, "");
  OpenLibrary(lua, luaopen_table, LUA_TABLIBNAME);
  OpenLibrary(lua, luaopen_string, LUA_STRLIBNAME);
  OpenLibrary(lua, luaopen_math, LUA_MATHLIBNAME);
  OpenLibrary(lua, luaopen_debug, LUA_DBLIBNAME);
  OpenLibraryAs(lua, luaopen_cjson, "cjson");
  OpenLibraryAs(lua, luaopen_bit, "bit");
  OpenBundledLibraries(lua);

  // The error handler keeps debug.getinfo; scripts get no debug library.
  luaL_loadbuffer(lua, kErrorHandler, sizeof(kErrorHandler) - 1, "=error_handler");
  lua_call(lua, 0, 1);
  lua_pushvalue(lua, -1);
  error_handler_ref_ = luaL_ref(lua, LUA_REGISTRYINDEX);
  lua_setglobal(lua, "__redis__err__handler");

  // What Redis 7.0 takes away from the base library.
  for (const char* name :
       {"debug", "print", "dofile", "loadfile", "getfenv", "setfenv", "newproxy"}) {
    lua_pushnil(lua);
    lua_setglobal(lua, name);
  }
  lua_newtable(lua);
  scripts_ref_ = luaL_ref(lua, LUA_REGISTRYINDEX);

  lua_pushvalue(lua, LUA_GLOBALSINDEX);
  int globals = lua_gettop(lua);

  // Base functions that would bypass the protection, Redis's pcall, safe loaders.
  lua::InstallSafeBaseFunctions(lua, globals);
  lua_getfield(lua, globals, "math");
  SetFunction(lua, "random", LuaApi::MathRandom);
  SetFunction(lua, "randomseed", LuaApi::MathRandomSeed);
  lua_pop(lua, 1);

  // Every library table is seen through a read-only proxy, also from strings' methods.
  for (const char* name :
       {"string", "table", "math", "coroutine", "cjson", "bit", "cmsgpack", "struct"}) {
    lua::ProtectField(lua, globals, name);
  }
  lua_pushliteral(lua, "");
  lua_getmetatable(lua, -1);
  lua_getfield(lua, globals, "string");
  lua_setfield(lua, -2, "__index");
  PushReadonly(lua, -1);
  lua_setfield(lua, -2, "__metatable");
  lua_pop(lua, 2);

  // Functions' run-time globals: the same libraries, no KEYS/ARGV/error handler.
  lua_newtable(lua);
  int function_globals = lua_gettop(lua);
  lua_pushnil(lua);
  while (lua_next(lua, globals)) {
    lua_pushvalue(lua, -2);
    lua_insert(lua, -2);
    lua_rawset(lua, function_globals);
  }
  for (const char* name : {"_G", "__redis__err__handler"}) {
    lua_pushnil(lua);
    lua_setfield(lua, function_globals, name);
  }
  PushRedisApi(lua, false);
  PushBareProxy(lua, -1);
  lua_setfield(lua, function_globals, "redis");
  lua_pop(lua, 1);
  SetMissingGlobalError(lua, function_globals);

  // Functions' load-time globals: only `redis` with register_function and log.
  lua_newtable(lua);
  int load_globals = lua_gettop(lua);
  lua_newtable(lua);
  SetFunction(lua, "register_function", LuaApi::RegisterFunction);
  AddCommonRedisApi(lua);
  SetMissingGlobalError(lua, -1);
  PushBareProxy(lua, -1);
  lua_setfield(lua, load_globals, "redis");
  lua_pop(lua, 1);
  SetMissingGlobalError(lua, load_globals);

  // The functions' environment, switched between the two.
  PushReadonly(lua, function_globals);
  lua_pushvalue(lua, -1);
  lua_setfield(lua, function_globals, "_G");
  lua_getmetatable(lua, -1);
  function_env_meta_ref_ = luaL_ref(lua, LUA_REGISTRYINDEX);
  function_env_ref_ = luaL_ref(lua, LUA_REGISTRYINDEX);
  function_load_globals_ref_ = luaL_ref(lua, LUA_REGISTRYINDEX);
  function_run_globals_ref_ = luaL_ref(lua, LUA_REGISTRYINDEX);

  // EVAL's globals.
  PushRedisApi(lua, true);
  PushBareProxy(lua, -1);
  lua_setfield(lua, globals, "redis");
  lua_pop(lua, 1);
  for (const char* name : {"KEYS", "ARGV"}) {
    lua_newtable(lua);
    lua_setfield(lua, globals, name);
  }
  SetMissingGlobalError(lua, globals);
  PushReadonly(lua, globals);
  lua_pushvalue(lua, -1);
  lua_setfield(lua, globals, "_G");
  lua_pushvalue(lua, -1);
  eval_env_ref_ = luaL_ref(lua, LUA_REGISTRYINDEX);
  lua_replace(lua, LUA_GLOBALSINDEX);
  eval_globals_ref_ = luaL_ref(lua, LUA_REGISTRYINDEX);
  lua_settop(lua, 0);
}

bool Interpreter::AddScript(std::string_view sha, std::string_view body, std::string* error) {
  std::string_view code = SkipShebang(body);
  if (luaL_loadbuffer(lua_, code.data(), code.size(), "@user_script") != 0) {
    error->assign("ERR Error compiling script (new function): ");
    error->append(ToView(lua_, -1));
    lua_pop(lua_, 1);
    return false;
  }
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, scripts_ref_);
  lua_pushlstring(lua_, sha.data(), sha.size());
  lua_pushvalue(lua_, -3);
  lua_rawset(lua_, -3);
  lua_pop(lua_, 2);
  return true;
}

bool Interpreter::HasScript(std::string_view sha) const {
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, scripts_ref_);
  lua_pushlstring(lua_, sha.data(), sha.size());
  lua_rawget(lua_, -2);
  bool found = lua_isfunction(lua_, -1);
  lua_pop(lua_, 2);
  return found;
}

void Interpreter::FlushScripts() {
  lua_newtable(lua_);
  lua_rawseti(lua_, LUA_REGISTRYINDEX, scripts_ref_);
  lua_gc(lua_, LUA_GCCOLLECT, 0);
}

void Interpreter::RunScript(std::string_view sha, absl::Span<const std::string_view> keys,
                            absl::Span<const std::string_view> argv, ScriptReplyWriter* out) {
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, eval_globals_ref_);
  lua_pushliteral(lua_, "KEYS");
  lua::PushStringArray(lua_, keys);
  lua_rawset(lua_, -3);
  lua_pushliteral(lua_, "ARGV");
  lua::PushStringArray(lua_, argv);
  lua_rawset(lua_, -3);
  lua_pop(lua_, 1);

  lua_rawgeti(lua_, LUA_REGISTRYINDEX, error_handler_ref_);
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, scripts_ref_);
  lua_pushlstring(lua_, sha.data(), sha.size());
  lua_rawget(lua_, -2);
  lua_remove(lua_, -2);
  Run(sha, 0, out);
}

void Interpreter::Run(std::string_view name, int nargs, ScriptReplyWriter* out) {
  int handler = lua_gettop(lua_) - nargs - 1;
  resp_ = 2;
  killed_ = false;
  char stack_base;
  stack_base_ = &stack_base;
  stack_overflow_ = false;
  lua_sethook(lua_, LuaApi::Hook, LUA_MASKCALL | (interrupt_ ? LUA_MASKCOUNT : 0),
              kHookInstructions);
  int status = lua_pcall(lua_, nargs, 1, handler);
  lua_sethook(lua_, nullptr, 0, 0);

  if (status == 0) {
    lua::WriteValue(lua_, out, resp_);
  } else if (lua_istable(lua_, -1)) {
    int error = lua_gettop(lua_);
    RawField(lua_, error, "err");
    RawField(lua_, error, "source");
    RawField(lua_, error, "line");
    std::string text(lua_isstring(lua_, -3) ? ToView(lua_, -3) : "ERR unknown error");
    if (lua_isstring(lua_, -2) && lua_isnumber(lua_, -1)) {
      text.append(" script: ").append(name).append(", on ");
      text.append(ToView(lua_, -2)).append(":");
      text.append(std::to_string(lua_tointeger(lua_, -1))).append(".");
    }
    std::string scratch;
    const std::string_view message = lua::OneLine(text, &scratch);
    lua::IsCommandError(lua_, error) ? out->CommandError(message) : out->Error(message);
  } else {
    std::string text = "ERR Error running script ";
    text.append(name).append(", ");
    text.append(lua_isstring(lua_, -1) ? ToView(lua_, -1).substr(0, 100) : "execution failure");
    std::string scratch;
    out->Error(lua::OneLine(text, &scratch));
  }
  lua_settop(lua_, handler - 1);
  AfterRun();
}

void Interpreter::AfterRun() {
  // A small incremental step now and then instead of Lua's own full cycles, which would
  // stall a script at an unpredictable moment.
  if (++runs_since_gc_ >= kGcPeriod) {
    runs_since_gc_ = 0;
    lua_gc(lua_, LUA_GCSTEP, kGcPeriod);
  }
}

bool Interpreter::LoadLibrary(std::string_view lib, std::string_view body,
                              std::vector<FunctionInfo>* functions, std::string* error) {
  std::string_view code = SkipShebang(body);
  std::string numbered;
  if (code.size() == body.size()) {
    numbered.reserve(body.size() + 1);
    numbered.append("\n").append(body);
    code = numbered;
  }
  if (luaL_loadbuffer(lua_, code.data(), code.size(), "@user_function") != 0) {
    error->assign("ERR Error compiling function: ");
    error->append(ToView(lua_, -1));
    lua_pop(lua_, 1);
    return false;
  }
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, function_env_ref_);
  lua_setfenv(lua_, -2);
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, error_handler_ref_);
  lua_insert(lua_, -2);
  int handler = lua_gettop(lua_) - 1;

  lua_rawgeti(lua_, LUA_REGISTRYINDEX, function_env_meta_ref_);
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, function_load_globals_ref_);
  lua_setfield(lua_, -2, "__index");
  lua_pop(lua_, 1);

  Loading loading;
  loading.start = std::chrono::steady_clock::now();
  loading_ = &loading;
  char stack_base;
  stack_base_ = &stack_base;
  stack_overflow_ = false;
  lua_sethook(lua_, LuaApi::Hook, LUA_MASKCALL | LUA_MASKCOUNT, kHookInstructions);
  int status = lua_pcall(lua_, 0, 0, handler);
  lua_sethook(lua_, nullptr, 0, 0);
  loading_ = nullptr;

  lua_rawgeti(lua_, LUA_REGISTRYINDEX, function_env_meta_ref_);
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, function_run_globals_ref_);
  lua_setfield(lua_, -2, "__index");
  lua_pop(lua_, 1);

  bool ok = true;
  if (status != 0) {
    error->assign("ERR Error registering functions: ");
    if (lua_istable(lua_, -1)) {
      RawField(lua_, -1, "err");
      error->append(lua_isstring(lua_, -1) ? ToView(lua_, -1) : "ERR unknown error");
      lua_pop(lua_, 1);
    } else {
      error->append(ToView(lua_, -1));
    }
    ok = false;
  } else if (loading.infos.empty()) {
    error->assign("ERR No functions registered");
    ok = false;
  } else {
    for (const FunctionInfo& info : loading.infos) {
      auto it = functions_.find(info.name);
      if (it != functions_.end() && it->second.library != lib) {
        *error = "ERR Function " + info.name + " already exists";
        ok = false;
        break;
      }
    }
  }
  lua_settop(lua_, handler - 1);
  if (!ok) {
    for (int ref : loading.refs) luaL_unref(lua_, LUA_REGISTRYINDEX, ref);
    return false;
  }
  DropLibrary(lib);
  for (size_t i = 0; i < loading.infos.size(); i++)
    functions_[loading.infos[i].name] = Function{std::string(lib), loading.refs[i]};
  *functions = std::move(loading.infos);
  return true;
}

void Interpreter::DropLibrary(std::string_view lib) {
  for (auto it = functions_.begin(); it != functions_.end();) {
    if (it->second.library == lib) {
      luaL_unref(lua_, LUA_REGISTRYINDEX, it->second.ref);
      functions_.erase(it++);
    } else {
      ++it;
    }
  }
}

bool Interpreter::HasFunction(std::string_view name) const {
  // Debian's Abseil has its own string_view type.
  return functions_.contains(absl::string_view(name.data(), name.size()));
}

void Interpreter::CallFunction(std::string_view name, absl::Span<const std::string_view> keys,
                               absl::Span<const std::string_view> argv, ScriptReplyWriter* out) {
  auto it = functions_.find(absl::string_view(name.data(), name.size()));
  // Code the function loads (loadstring) or threads it starts see the functions'
  // globals, as in Redis where functions have a Lua state of their own.
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, function_env_ref_);
  lua_replace(lua_, LUA_GLOBALSINDEX);
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, error_handler_ref_);
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, it->second.ref);
  lua::PushStringArray(lua_, keys);
  lua::PushStringArray(lua_, argv);
  Run(name, 2, out);
  lua_rawgeti(lua_, LUA_REGISTRYINDEX, eval_env_ref_);
  lua_replace(lua_, LUA_GLOBALSINDEX);
}

// redis.call (raise) / redis.pcall: leaves the result or an error table on the stack;
// true when the caller must raise it.
bool Interpreter::CollectArgs(lua_State* lua) {
  int argc = lua_gettop(lua);
  if (argc == 0) {
    PushErrorTable(lua, "Please specify at least one argument for this redis lib call");
    return false;
  }
  call_args_.clear();
  for (int i = 1; i <= argc; i++) {
    int type = lua_type(lua, i);
    if (type == LUA_TNUMBER) {
      // Redis's formatting of numbers, not Lua's %.14g.
      char buf[64];
      int len = snprintf(buf, sizeof(buf), "%.17g", lua_tonumber(lua, i));
      lua_pushlstring(lua, buf, len);
      lua_replace(lua, i);
    } else if (type != LUA_TSTRING) {
      PushErrorTable(lua, "Lua redis lib command arguments must be strings or integers");
      return false;
    }
    call_args_.push_back(ToView(lua, i));
  }
  return true;
}

// redis.call (raise) / redis.pcall: leaves the result or an error table on the stack;
// true when the caller must raise it.
bool Interpreter::CallCommand(lua_State* lua, bool raise) {
  if (!CollectArgs(lua)) return raise;
  reply_.clear();
  if (call_)
    call_(call_args_, resp_ == 3, &reply_);
  else
    reply_ = "-ERR Unknown Redis command called from script\r\n";
  // The arguments are done with: their stack slots are room for the reply (a call with
  // 7999 arguments leaves none otherwise).
  lua_settop(lua, 0);
  std::string_view in = reply_;
  if (!lua::PushReply(lua, &in)) {
    PushErrorTable(lua, "reached lua stack limit or malformed reply");
    return raise;
  }
  return raise && reply_[0] == '-';
}

// redis.acl_check_cmd: leaves a boolean, or an error table and returns true to raise it.
bool Interpreter::CheckAcl(lua_State* lua) {
  if (!CollectArgs(lua)) return true;
  AclCheck check = acl_check_ ? acl_check_(call_args_) : AclCheck::kAllowed;
  if (check == AclCheck::kUnknownCommand) {
    PushErrorTable(lua, "Invalid command passed to redis.acl_check_cmd()");
    return true;
  }
  lua_pushboolean(lua, check == AclCheck::kAllowed);
  return false;
}

size_t Interpreter::used_memory_bytes() const {
  return static_cast<size_t>(lua_gc(lua_, LUA_GCCOUNT, 0)) * 1024 + lua_gc(lua_, LUA_GCCOUNTB, 0);
}

void Interpreter::LogMessage(lua_State* lua, int level) {
  if (!log_) return;
  std::string message;
  int argc = lua_gettop(lua);
  for (int i = 2; i <= argc; i++) {
    if (!lua_isstring(lua, i)) continue;
    if (i != 2) message.push_back(' ');
    message.append(ToView(lua, i));
  }
  log_(level, message);
}

// redis.register_function, while a library loads. False with an error table pushed.
bool Interpreter::Register(lua_State* lua) {
  const char* error = RegisterArgs(lua);
  if (error != nullptr) {
    PushErrorTable(lua, error);
    return false;
  }
  return true;
}

const char* Interpreter::RegisterArgs(lua_State* lua) {
  if (loading_ == nullptr)
    return "redis.register_function can only be called on FUNCTION LOAD command";
  int argc = lua_gettop(lua);
  FunctionInfo info;
  bool has_name = false;
  int callback = 0;
  if (argc == 1) {
    if (!lua_istable(lua, 1)) {
      return "calling redis.register_function with a single argument is only applicable to "
             "Lua table (representing named arguments).";
    }
    lua_settop(lua, 2);  // slot 2 receives the callback
    lua_pushnil(lua);
    while (lua_next(lua, 1)) {
      // Only string keys are looked at: converting a number key would break lua_next.
      std::string_view key =
          lua_type(lua, -2) == LUA_TSTRING ? ToView(lua, -2) : std::string_view();
      if (key == "function_name") {
        if (!lua_isstring(lua, -1))
          return "function_name argument given to redis.register_function must be a string";
        info.name = ToView(lua, -1);
        has_name = true;
      } else if (key == "description") {
        if (!lua_isstring(lua, -1))
          return "description argument given to redis.register_function must be a string";
        info.description = ToView(lua, -1);
        info.has_description = true;
      } else if (key == "callback") {
        if (!lua_isfunction(lua, -1))
          return "callback argument given to redis.register_function must be a function";
        lua_pushvalue(lua, -1);
        lua_replace(lua, 2);
        callback = 2;
      } else if (key == "flags") {
        if (!lua_istable(lua, -1))
          return "flags argument to redis.register_function must be a table representing "
                 "function flags";
        int flags = lua_gettop(lua);
        lua_pushnil(lua);
        while (lua_next(lua, flags)) {
          if (lua_type(lua, -1) != LUA_TSTRING || !KnownFlag(ToView(lua, -1)))
            return "unknown flag given";
          info.flags.emplace_back(ToView(lua, -1));
          lua_pop(lua, 1);
        }
      } else {
        return "unknown argument given to redis.register_function";
      }
      lua_pop(lua, 1);
    }
    if (!has_name) return "redis.register_function must get a function name argument";
    if (callback == 0) return "redis.register_function must get a callback argument";
  } else if (argc == 2) {
    if (!lua_isstring(lua, 1)) return "first argument to redis.register_function must be a string";
    if (!lua_isfunction(lua, 2))
      return "second argument to redis.register_function must be a function";
    info.name = ToView(lua, 1);
    callback = 2;
  } else {
    return "wrong number of arguments to redis.register_function";
  }
  if (!ValidFunctionName(info.name)) {
    // Redis 7.0's text, "Library" included.
    return "Library names can only contain letters, numbers, or underscores(_) and must be "
           "at least one character long";
  }
  for (const FunctionInfo& loaded : loading_->infos) {
    if (loaded.name == info.name) return "Function already exists in the library";
  }
  lua_pushvalue(lua, callback);
  loading_->refs.push_back(luaL_ref(lua, LUA_REGISTRYINDEX));
  loading_->infos.push_back(std::move(info));
  return nullptr;
}

}  // namespace damselfly
