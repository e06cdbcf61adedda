// See lua_sandbox.h.
#include "src/core/lua_sandbox.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

#include "src/core/lua_values.h"

namespace damselfly::lua {
namespace {

constexpr char kReadonlyError[] = "Attempt to modify a readonly table";
constexpr char kProxiesKey[] = "damselfly.proxies";  // registry: proxy -> real table

int ReadonlyNewIndex(lua_State* lua) { return luaL_error(lua, kReadonlyError); }

// Raised without a position, as Redis's VM does for rawset/setmetatable.
int ReadonlyRawError(lua_State* lua) {
  lua_pushstring(lua, kReadonlyError);
  return lua_error(lua);
}

int MissingGlobal(lua_State* lua) {
  if (!lua_isstring(lua, 2))
    return luaL_error(lua, "Second argument to luaProtectedTableError must be a string or number");
  return luaL_error(lua, "Script attempted to access nonexistent global variable '%s'",
                    lua_tostring(lua, 2));
}

bool IsProxy(lua_State* lua, int index) {
  if (!lua_istable(lua, index)) return false;
  index = AbsIndex(lua, index);
  lua_getfield(lua, LUA_REGISTRYINDEX, kProxiesKey);
  lua_pushvalue(lua, index);
  lua_rawget(lua, -2);
  bool proxy = !lua_isnil(lua, -1);
  lua_pop(lua, 2);
  return proxy;
}

// Replaces a proxy at `index` by the table it shows.
void Unwrap(lua_State* lua, int index) {
  if (!lua_istable(lua, index)) return;
  index = AbsIndex(lua, index);
  lua_getfield(lua, LUA_REGISTRYINDEX, kProxiesKey);
  lua_pushvalue(lua, index);
  lua_rawget(lua, -2);
  if (lua_isnil(lua, -1)) {
    lua_pop(lua, 2);
    return;
  }
  lua_replace(lua, index);
  lua_pop(lua, 1);
}

int SafeNext(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  Unwrap(lua, 1);
  lua_settop(lua, 2);
  if (lua_next(lua, 1)) return 2;
  lua_pushnil(lua);
  return 1;
}

int SafePairs(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  Unwrap(lua, 1);
  lua_pushvalue(lua, lua_upvalueindex(1));
  lua_pushvalue(lua, 1);
  lua_pushnil(lua);
  return 3;
}

int SafeIpairsStep(lua_State* lua) {
  int i = luaL_checkint(lua, 2) + 1;
  luaL_checktype(lua, 1, LUA_TTABLE);
  lua_pushinteger(lua, i);
  lua_rawgeti(lua, 1, i);
  return lua_isnil(lua, -1) ? 0 : 2;
}

int SafeIpairs(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  Unwrap(lua, 1);
  lua_pushvalue(lua, lua_upvalueindex(1));
  lua_pushvalue(lua, 1);
  lua_pushinteger(lua, 0);
  return 3;
}

int SafeRawget(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  luaL_checkany(lua, 2);
  Unwrap(lua, 1);
  lua_settop(lua, 2);
  lua_rawget(lua, 1);
  return 1;
}

int SafeRawset(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TTABLE);
  luaL_checkany(lua, 2);
  luaL_checkany(lua, 3);
  if (IsProxy(lua, 1)) return ReadonlyRawError(lua);
  lua_settop(lua, 3);
  lua_rawset(lua, 1);
  return 1;
}

// getmetatable with Lua's own as upvalue 1: a library's proxy has no metatable to show
// (its __metatable is false), as Redis's library tables have none.
int SafeGetmetatable(lua_State* lua) {
  luaL_checkany(lua, 1);
  if (IsProxy(lua, 1)) {
    lua_getmetatable(lua, 1);
    RawField(lua, -1, "__metatable");
    if (lua_isboolean(lua, -1) && !lua_toboolean(lua, -1)) lua_pushnil(lua);
    return 1;
  }
  lua_settop(lua, 1);
  lua_pushvalue(lua, lua_upvalueindex(1));
  lua_insert(lua, 1);
  lua_call(lua, 1, 1);
  return 1;
}

// setmetatable with Lua's own as upvalue 1.
int SafeSetmetatable(lua_State* lua) {
  if (IsProxy(lua, 1)) return ReadonlyRawError(lua);
  int argc = lua_gettop(lua);
  lua_pushvalue(lua, lua_upvalueindex(1));
  lua_insert(lua, 1);
  lua_call(lua, argc, 1);
  return 1;
}

// Pushes the function compiled from the string on top (popped), or nil and the error.
// Binary chunks are refused, as Redis does: Lua 5.1 does not verify bytecode, and
// crafted bytecode can read and write outside the VM.
int LoadChunk(lua_State* lua, const char* chunk_name) {
  size_t len = 0;
  const char* code = lua_tolstring(lua, -1, &len);
  if (len > 0 && code[0] == LUA_SIGNATURE[0]) {
    lua_pushnil(lua);
    lua_pushliteral(lua, "attempt to load a binary chunk");
    return 2;
  }
  if (luaL_loadbuffer(lua, code, len, chunk_name) != 0) {
    lua_pushnil(lua);
    lua_insert(lua, -2);
    return 2;
  }
  return 1;
}

int SafeLoadstring(lua_State* lua) {
  luaL_checkstring(lua, 1);
  const char* chunk_name = luaL_optstring(lua, 2, lua_tostring(lua, 1));
  lua_pushvalue(lua, 1);
  return LoadChunk(lua, chunk_name);
}

int SafeLoad(lua_State* lua) {
  luaL_checktype(lua, 1, LUA_TFUNCTION);
  const char* chunk_name = luaL_optstring(lua, 2, "=(load)");
  lua_settop(lua, 2);
  luaL_Buffer code;
  luaL_buffinit(lua, &code);
  while (true) {
    lua_pushvalue(lua, 1);
    lua_call(lua, 0, 1);
    if (lua_isnil(lua, -1) || (lua_isstring(lua, -1) && lua_objlen(lua, -1) == 0)) {
      lua_pop(lua, 1);
      break;
    }
    if (!lua_isstring(lua, -1)) return luaL_error(lua, "reader function must return a string");
    luaL_addvalue(&code);
  }
  luaL_pushresult(&code);
  return LoadChunk(lua, chunk_name);
}

// Redis's pcall: an error that is an error table comes back as its err text.
int RedisPcall(lua_State* lua) {
  luaL_checkany(lua, 1);
  int argc = lua_gettop(lua);
  lua_pushboolean(lua, 1);
  lua_insert(lua, 1);
  if (lua_pcall(lua, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(lua, 1);
    if (lua_istable(lua, -1)) {
      RawField(lua, -1, "err");
      if (lua_isstring(lua, -1))
        lua_replace(lua, -2);
      else
        lua_pop(lua, 1);
    }
    lua_pushboolean(lua, 0);
    lua_insert(lua, 1);
  }
  return lua_gettop(lua);
}

}  // namespace

// Gives the table at `index` a metatable that raises Redis's error on missing keys.
void SetMissingGlobalError(lua_State* lua, int index) {
  index = AbsIndex(lua, index);
  lua_createtable(lua, 0, 1);
  lua_pushcfunction(lua, MissingGlobal);
  lua_setfield(lua, -2, "__index");
  lua_setmetatable(lua, index);
}

// Pushes an empty table that reads as the table at `real` and refuses writes, without
// the stand-in metatable (see PushReadonly).
void PushBareProxy(lua_State* lua, int real) {
  real = AbsIndex(lua, real);
  lua_newtable(lua);
  lua_createtable(lua, 0, 3);
  lua_pushvalue(lua, real);
  lua_setfield(lua, -2, "__index");
  lua_pushcfunction(lua, ReadonlyNewIndex);
  lua_setfield(lua, -2, "__newindex");
  lua_pushboolean(lua, 0);
  lua_setfield(lua, -2, "__metatable");
  lua_setmetatable(lua, -2);
  lua_getfield(lua, LUA_REGISTRYINDEX, kProxiesKey);
  lua_pushvalue(lua, -2);
  lua_pushvalue(lua, real);
  lua_rawset(lua, -3);
  lua_pop(lua, 1);
}

// Pushes a read-only proxy of the table at `real`. getmetatable on it returns a
// read-only stand-in whose __index is the proxy again: scripts can look but not reach
// the writable tables behind it.
void PushReadonly(lua_State* lua, int real) {
  PushBareProxy(lua, real);
  int proxy = lua_gettop(lua);
  lua_createtable(lua, 0, 2);
  lua_pushvalue(lua, proxy);
  lua_setfield(lua, -2, "__index");
  lua_pushcfunction(lua, ReadonlyNewIndex);
  lua_setfield(lua, -2, "__newindex");
  PushBareProxy(lua, -1);
  lua_remove(lua, -2);
  lua_getmetatable(lua, proxy);
  lua_insert(lua, -2);
  lua_setfield(lua, -2, "__metatable");
  lua_pop(lua, 1);
}

// Replaces t[name] (a table) by a read-only proxy of it with no metatable to show.
void ProtectField(lua_State* lua, int table, const char* name) {
  table = AbsIndex(lua, table);
  lua_getfield(lua, table, name);
  if (lua_istable(lua, -1)) {
    PushBareProxy(lua, -1);
    lua_setfield(lua, table, name);
  }
  lua_pop(lua, 1);
}

void InitProxies(lua_State* lua) {
  lua_newtable(lua);
  lua_newtable(lua);
  lua_pushliteral(lua, "k");
  lua_setfield(lua, -2, "__mode");
  lua_setmetatable(lua, -2);
  lua_setfield(lua, LUA_REGISTRYINDEX, kProxiesKey);
}

void InstallSafeBaseFunctions(lua_State* lua, int globals) {
  globals = AbsIndex(lua, globals);
  lua_pushcfunction(lua, SafeNext);
  lua_pushvalue(lua, -1);
  lua_setfield(lua, globals, "next");
  lua_pushcclosure(lua, SafePairs, 1);
  lua_setfield(lua, globals, "pairs");
  lua_pushcfunction(lua, SafeIpairsStep);
  lua_pushcclosure(lua, SafeIpairs, 1);
  lua_setfield(lua, globals, "ipairs");
  lua_pushcfunction(lua, SafeRawget);
  lua_setfield(lua, globals, "rawget");
  lua_pushcfunction(lua, SafeRawset);
  lua_setfield(lua, globals, "rawset");
  lua_getfield(lua, globals, "setmetatable");
  lua_pushcclosure(lua, SafeSetmetatable, 1);
  lua_setfield(lua, globals, "setmetatable");
  lua_getfield(lua, globals, "getmetatable");
  lua_pushcclosure(lua, SafeGetmetatable, 1);
  lua_setfield(lua, globals, "getmetatable");
  lua_pushcfunction(lua, RedisPcall);
  lua_setfield(lua, globals, "pcall");
  lua_pushcfunction(lua, SafeLoadstring);
  lua_setfield(lua, globals, "loadstring");
  lua_pushcfunction(lua, SafeLoad);
  lua_setfield(lua, globals, "load");
}

}  // namespace damselfly::lua
