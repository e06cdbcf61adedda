// The Lua libraries Redis gives scripts that Debian does not package for Lua 5.1:
// cmsgpack (MessagePack) and struct (binary packing). Each behaves as the library of
// the same name that redis-server 7.0 bundles: same functions, same results, same error
// texts. (cjson and bit come from Debian's lua-cjson-dev and lua-bitop-dev.)
//
// Thread-safety: as Lua's own: one lua_State per thread.
#pragma once

struct lua_State;

namespace damselfly {

// Push the library table (cmsgpack.pack, cmsgpack.unpack, cmsgpack.unpack_one,
// cmsgpack.unpack_limit; struct.pack, struct.unpack, struct.size) and return 1, as a
// lua_CFunction for luaL_openlib-style loading.
int OpenLuaCmsgpack(lua_State* lua);
int OpenLuaStruct(lua_State* lua);

}  // namespace damselfly
