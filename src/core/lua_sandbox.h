// Redis's sandbox on Debian's Lua 5.1, which lacks the readonly-table flag Redis adds to
// its bundled Lua: protected tables are seen through empty proxies whose metatable reads
// from the real table and raises Redis's "Attempt to modify a readonly table" on
// writes; the base functions that bypass metatables are replaced by versions that see
// through proxies (reads) or refuse them (writes); reading a missing global raises
// Redis's "Script attempted to access nonexistent global variable". Also Redis's pcall
// and loaders that refuse bytecode.
//
// Thread-safety: as Lua's own: one lua_State per thread.
#pragma once

struct lua_State;

namespace damselfly::lua {

// Creates the registry's proxy -> table map. Call once, before the functions below.
void InitProxies(lua_State* lua);

// Gives the table at `index` a metatable that raises Redis's error on missing keys.
void SetMissingGlobalError(lua_State* lua, int index);

// Pushes an empty table that reads as the table at `real` and refuses writes; it shows
// no metatable (getmetatable gives nil, as for Redis's library tables).
void PushBareProxy(lua_State* lua, int real);
// Like PushBareProxy, but getmetatable gives a read-only stand-in whose __index is the
// proxy again (for _G: scripts can look but not reach the writable table).
void PushReadonly(lua_State* lua, int real);
// Replaces t[name], when a table, by a bare proxy of it (t at `table`).
void ProtectField(lua_State* lua, int table, const char* name);

// Replaces next, pairs, ipairs, rawget, rawset, getmetatable, setmetatable, pcall,
// loadstring and load in the table at `globals` (which holds Lua's base library):
//  - the raw and iteration functions see through proxies and refuse to write them;
//  - pcall is Redis's: an error table comes back as its err text;
//  - loadstring and load refuse binary chunks: Lua 5.1 does not verify bytecode, and
//    crafted bytecode can read and write outside the VM (Redis patches it out).
void InstallSafeBaseFunctions(lua_State* lua, int globals);

}  // namespace damselfly::lua
