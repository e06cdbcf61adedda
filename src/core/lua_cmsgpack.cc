// cmsgpack for Lua scripts: MessagePack as redis-server 7.0's bundled lua-cmsgpack 0.4.0
// writes and reads it, since scripts store its bytes in keys and other clients decode
// them. Written from the format's specification and from byte-for-byte comparison with
// redis-server 7.0; its choices, including the odd ones, are kept:
//  - pack: integers (numbers that fit an int64 exactly) in the smallest encoding, other
//    numbers as float32 when the conversion is exact (inf too) else float64 (NaN too);
//    strings as fixstr, str8, str16 or str32; tables whose keys are exactly 1..n as
//    arrays, others as maps (the empty table is an empty array); booleans, and nil for
//    anything else (functions, userdata) and for tables nested more than 16 deep. Several
//    arguments give their encodings concatenated.
//  - unpack: uint64 values come back wrapped to int64 (0xcf ff.. is -1); bin, ext and
//    0xc1 are "Bad data format"; maps with a nil or NaN key fail as Lua's settable does.
//  - unpack_one and unpack_limit return the next 0-based offset first (-1 at the end);
//    unpack_limit(s, 0) with no offset decodes everything and returns no offset.
//  - stack use: the same pushes and luaL_checkstack calls in the same order, with the
//    same messages (which name Redis's C functions), so thousands of values or arguments
//    overflow at the same places with the same texts. Deep nesting is the exception:
//    unpack gives up after kDecodeStackBytes of machine stack (hundreds of levels) with
//    "C stack overflow", where Redis goes on to about 4000 levels.
// Lua errors longjmp over C++ frames: nothing here holds an object with a destructor.

#include <climits>
#include <cstdint>
#include <cstring>

#include "src/core/lua_libs.h"

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace damselfly {
namespace {

// Tables deeper than this are packed as nil, as Redis does (no error).
constexpr int kMaxNesting = 16;

// pack frees its buffer after a call that grew it past this size, so one large value does
// not stay pinned in every interpreter of the pool.
constexpr size_t kKeptBufferBytes = 64 * 1024;

// Numbers exactly representable as the integer type, without the undefined behaviour
// of casting out-of-range doubles (which on x86 yields the type's minimum, never equal
// to the double, so the results are the same as Redis's casts).
bool IsInt64Equivalent(double n) {
  return n >= -9223372036854775808.0 && n < 9223372036854775808.0 &&
         static_cast<double>(static_cast<int64_t>(n)) == n;
}

bool IsIntEquivalent(double n) {
  return n > static_cast<double>(INT_MIN) - 1 && n < static_cast<double>(INT_MAX) + 1 &&
         static_cast<double>(static_cast<int>(n)) == n;
}

// pack's output. It lives in a userdata (pack's upvalue, freed by __gc) and is grown
// with the state's allocator: a std::string would leak when a Lua error (stack overflow,
// no memory) longjmps out of the encoder.
struct PackBuffer {
  char* data;
  size_t size;
  size_t capacity;
};

void ResizeBuffer(lua_State* lua, PackBuffer* buf, size_t capacity) {
  void* alloc_ud;
  lua_Alloc alloc = lua_getallocf(lua, &alloc_ud);
  void* data = alloc(alloc_ud, buf->data, buf->capacity, capacity);
  if (data == nullptr && capacity > 0) luaL_error(lua, "not enough memory");
  buf->data = static_cast<char*>(data);
  buf->capacity = capacity;
}

void Append(lua_State* lua, PackBuffer* buf, const void* bytes, size_t len) {
  if (buf->capacity - buf->size < len) {
    size_t capacity = buf->capacity < 64 ? 64 : buf->capacity;
    while (capacity - buf->size < len) capacity *= 2;
    ResizeBuffer(lua, buf, capacity);
  }
  memcpy(buf->data + buf->size, bytes, len);
  buf->size += len;
}

// Writes a type byte followed by `width` bytes of `value`, big endian.
void AppendTagged(lua_State* lua, PackBuffer* buf, uint8_t tag, uint64_t value, int width) {
  uint8_t bytes[9];
  bytes[0] = tag;
  for (int i = width; i >= 1; --i) {
    bytes[i] = value & 0xff;
    value >>= 8;
  }
  Append(lua, buf, bytes, width + 1);
}

void EncodeInteger(lua_State* lua, PackBuffer* buf, int64_t n) {
  if (n >= 0) {
    if (n <= 127) return AppendTagged(lua, buf, static_cast<uint8_t>(n), 0, 0);
    if (n <= 0xff) return AppendTagged(lua, buf, 0xcc, n, 1);
    if (n <= 0xffff) return AppendTagged(lua, buf, 0xcd, n, 2);
    if (n <= 0xffffffffLL) return AppendTagged(lua, buf, 0xce, n, 4);
    return AppendTagged(lua, buf, 0xcf, n, 8);
  }
  if (n >= -32) return AppendTagged(lua, buf, static_cast<uint8_t>(n), 0, 0);
  if (n >= -128) return AppendTagged(lua, buf, 0xd0, n, 1);
  if (n >= -32768) return AppendTagged(lua, buf, 0xd1, n, 2);
  if (n >= -2147483648LL) return AppendTagged(lua, buf, 0xd2, n, 4);
  AppendTagged(lua, buf, 0xd3, n, 8);
}

void EncodeDouble(lua_State* lua, PackBuffer* buf, double d) {
  float f = static_cast<float>(d);
  if (d == static_cast<double>(f)) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof(bits));
    return AppendTagged(lua, buf, 0xca, bits, 4);
  }
  uint64_t bits;
  memcpy(&bits, &d, sizeof(bits));
  AppendTagged(lua, buf, 0xcb, bits, 8);
}

void EncodeBytes(lua_State* lua, PackBuffer* buf, const char* s, size_t len) {
  if (len < 32) {
    AppendTagged(lua, buf, static_cast<uint8_t>(0xa0 | len), 0, 0);
  } else if (len <= 0xff) {
    AppendTagged(lua, buf, 0xd9, len, 1);
  } else if (len <= 0xffff) {
    AppendTagged(lua, buf, 0xda, len, 2);
  } else {
    AppendTagged(lua, buf, 0xdb, len, 4);
  }
  Append(lua, buf, s, len);
}

// An array's (fix_tag 0x90) or a map's (fix_tag 0x80) element count.
void EncodeHeader(lua_State* lua, PackBuffer* buf, uint8_t fix_tag, size_t n) {
  const bool is_array = fix_tag == 0x90;
  if (n <= 15) return AppendTagged(lua, buf, static_cast<uint8_t>(fix_tag | n), 0, 0);
  if (n <= 0xffff) return AppendTagged(lua, buf, is_array ? 0xdc : 0xde, n, 2);
  AppendTagged(lua, buf, is_array ? 0xdd : 0xdf, n, 4);
}

void EncodeValue(lua_State* lua, PackBuffer* buf, int level);

// True when the table on top has exactly the keys 1..n (n >= 0).
bool TableIsArray(lua_State* lua) {
  int count = 0, max = 0;
  const int top = lua_gettop(lua);
  luaL_checkstack(lua, 2, "in function table_is_an_array");
  lua_pushnil(lua);
  while (lua_next(lua, -2)) {
    lua_pop(lua, 1);
    double n;
    if (lua_type(lua, -1) != LUA_TNUMBER || (n = lua_tonumber(lua, -1)) <= 0 ||
        !IsIntEquivalent(n)) {
      lua_settop(lua, top);
      return false;
    }
    if (n > max) max = static_cast<int>(n);
    count++;
  }
  lua_settop(lua, top);
  return max == count;
}

void EncodeTableAsArray(lua_State* lua, PackBuffer* buf, int level) {
  const size_t len = lua_objlen(lua, -1);
  EncodeHeader(lua, buf, 0x90, len);
  luaL_checkstack(lua, 1, "in function mp_encode_lua_table_as_array");
  for (size_t i = 1; i <= len; ++i) {
    lua_pushnumber(lua, i);
    lua_gettable(lua, -2);
    EncodeValue(lua, buf, level + 1);
  }
}

void EncodeTableAsMap(lua_State* lua, PackBuffer* buf, int level) {
  // Lua gives no entry count: one pass counts, the second encodes.
  size_t len = 0;
  luaL_checkstack(lua, 3, "in function mp_encode_lua_table_as_map");
  lua_pushnil(lua);
  while (lua_next(lua, -2)) {
    lua_pop(lua, 1);
    len++;
  }
  EncodeHeader(lua, buf, 0x80, len);
  lua_pushnil(lua);
  while (lua_next(lua, -2)) {
    lua_pushvalue(lua, -2);  // the copy of the key is encoded (and popped), lua_next keeps it
    EncodeValue(lua, buf, level + 1);
    EncodeValue(lua, buf, level + 1);
  }
}

// Encodes the value on top of the stack and pops it.
void EncodeValue(lua_State* lua, PackBuffer* buf, int level) {
  int type = lua_type(lua, -1);
  if (type == LUA_TTABLE && level == kMaxNesting) type = LUA_TNIL;
  switch (type) {
    case LUA_TSTRING: {
      size_t len;
      const char* s = lua_tolstring(lua, -1, &len);
      EncodeBytes(lua, buf, s, len);
      break;
    }
    case LUA_TBOOLEAN:
      AppendTagged(lua, buf, lua_toboolean(lua, -1) ? 0xc3 : 0xc2, 0, 0);
      break;
    case LUA_TNUMBER: {
      const double n = lua_tonumber(lua, -1);
      if (IsInt64Equivalent(n)) {
        EncodeInteger(lua, buf, static_cast<int64_t>(n));
      } else {
        EncodeDouble(lua, buf, n);
      }
      break;
    }
    case LUA_TTABLE:
      if (TableIsArray(lua)) {
        EncodeTableAsArray(lua, buf, level);
      } else {
        EncodeTableAsMap(lua, buf, level);
      }
      break;
    default:
      AppendTagged(lua, buf, 0xc0, 0, 0);
  }
  lua_pop(lua, 1);
}

int Pack(lua_State* lua) {
  const int nargs = lua_gettop(lua);
  if (nargs == 0) return luaL_argerror(lua, 0, "MessagePack pack needs input.");
  if (!lua_checkstack(lua, nargs)) {
    return luaL_argerror(lua, 0, "Too many arguments for MessagePack pack.");
  }
  auto* buf = static_cast<PackBuffer*>(lua_touserdata(lua, lua_upvalueindex(1)));
  // Each argument's encoding is pushed, then all are concatenated: Redis's stack use.
  for (int i = 1; i <= nargs; ++i) {
    buf->size = 0;
    luaL_checkstack(lua, 1, "in function mp_check");
    lua_pushvalue(lua, i);
    EncodeValue(lua, buf, 0);
    lua_pushlstring(lua, buf->data, buf->size);  // never empty: every value has a tag
  }
  if (buf->capacity > kKeptBufferBytes) ResizeBuffer(lua, buf, 0);
  lua_concat(lua, nargs);
  return 1;
}

int FreePackBuffer(lua_State* lua) {
  auto* buf = static_cast<PackBuffer*>(lua_touserdata(lua, 1));
  ResizeBuffer(lua, buf, 0);
  return 0;
}

// The unread input; err records why decoding stopped.
struct Cursor {
  const uint8_t* p;
  size_t left;
  enum { kOk, kEof, kBadFormat, kTooDeep } err;
  uintptr_t stack_base;  // the frame of the unpack call
};

// How much machine stack nested containers may take while decoding. Redis recurses until
// its Lua stack fills (about 4000 levels on an 8 MiB thread stack); scripts here run on a
// fiber's 128 KiB stack, of which the interpreter lets Lua code take 64 KiB (plus slack),
// so deeper input fails instead of overflowing it. This still allows hundreds of levels;
// pack never writes more than 17.
constexpr uintptr_t kDecodeStackBytes = 24 * 1024;

bool Need(Cursor* c, size_t len) {
  if (c->left >= len) return true;
  c->err = Cursor::kEof;
  return false;
}

void Consume(Cursor* c, size_t len) {
  c->p += len;
  c->left -= len;
}

// The `width` bytes after the type byte, big endian.
uint64_t ReadBigEndian(const Cursor* c, int width) {
  uint64_t value = 0;
  for (int i = 1; i <= width; ++i) value = (value << 8) | c->p[i];
  return value;
}

void DecodeValue(lua_State* lua, Cursor* c);

void DecodeArray(lua_State* lua, Cursor* c, size_t len) {
  lua_Number index = 1;
  lua_newtable(lua);  // not presized: the length is untrusted input
  luaL_checkstack(lua, 1, "in function mp_decode_to_lua_array");
  while (len--) {
    lua_pushnumber(lua, index++);
    DecodeValue(lua, c);
    if (c->err) return;
    lua_settable(lua, -3);
  }
}

void DecodeMap(lua_State* lua, Cursor* c, size_t len) {
  lua_newtable(lua);
  while (len--) {
    DecodeValue(lua, c);  // the key
    if (c->err) return;
    DecodeValue(lua, c);
    if (c->err) return;
    lua_settable(lua, -3);
  }
}

// A string whose `width`-byte length follows the type byte.
void DecodeString(lua_State* lua, Cursor* c, int width) {
  if (!Need(c, 1 + width)) return;
  const size_t len = ReadBigEndian(c, width);
  Consume(c, 1 + width);
  if (!Need(c, len)) return;
  lua_pushlstring(lua, reinterpret_cast<const char*>(c->p), len);
  Consume(c, len);
}

// Pushes the next value, or sets c->err (partial tables may stay on the stack).
void DecodeValue(lua_State* lua, Cursor* c) {
  if (!Need(c, 1)) return;
  if (c->stack_base - reinterpret_cast<uintptr_t>(__builtin_frame_address(0)) > kDecodeStackBytes) {
    c->err = Cursor::kTooDeep;
    return;
  }
  // The number of values is unknown up front: make room for one more each time.
  luaL_checkstack(lua, 1,
                  "too many return values at once; use unpack_one or unpack_limit instead.");
  const uint8_t tag = c->p[0];
  int width = 0;  // bytes after the tag, for fixed-size values
  switch (tag) {
    case 0xcc:
    case 0xd0:
      width = 1;
      break;
    case 0xcd:
    case 0xd1:
      width = 2;
      break;
    case 0xce:
    case 0xd2:
    case 0xca:
      width = 4;
      break;
    case 0xcf:
    case 0xd3:
    case 0xcb:
      width = 8;
      break;
    case 0xd9:
      return DecodeString(lua, c, 1);
    case 0xda:
      return DecodeString(lua, c, 2);
    case 0xdb:
      return DecodeString(lua, c, 4);
    case 0xdc:
    case 0xdd:
    case 0xde:
    case 0xdf: {
      width = (tag == 0xdc || tag == 0xde) ? 2 : 4;
      if (!Need(c, 1 + width)) return;
      const size_t len = ReadBigEndian(c, width);
      Consume(c, 1 + width);
      return tag <= 0xdd ? DecodeArray(lua, c, len) : DecodeMap(lua, c, len);
    }
    case 0xc0:
      lua_pushnil(lua);
      return Consume(c, 1);
    case 0xc2:
    case 0xc3:
      lua_pushboolean(lua, tag == 0xc3);
      return Consume(c, 1);
    default:
      if ((tag & 0x80) == 0) {  // positive fixint
        lua_pushinteger(lua, tag);
        Consume(c, 1);
      } else if ((tag & 0xe0) == 0xe0) {  // negative fixint
        lua_pushinteger(lua, static_cast<int8_t>(tag));
        Consume(c, 1);
      } else if ((tag & 0xe0) == 0xa0) {  // fixstr
        const size_t len = tag & 0x1f;
        if (!Need(c, 1 + len)) return;
        lua_pushlstring(lua, reinterpret_cast<const char*>(c->p + 1), len);
        Consume(c, 1 + len);
      } else if ((tag & 0xf0) == 0x90) {
        Consume(c, 1);
        DecodeArray(lua, c, tag & 0xf);
      } else if ((tag & 0xf0) == 0x80) {
        Consume(c, 1);
        DecodeMap(lua, c, tag & 0xf);
      } else {
        c->err = Cursor::kBadFormat;
      }
      return;
  }

  if (!Need(c, 1 + width)) return;
  const uint64_t raw = ReadBigEndian(c, width);
  switch (tag) {
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf:  // Redis pushes it as a lua_Integer: above 2^63-1 it wraps negative
      lua_pushinteger(lua, static_cast<lua_Integer>(static_cast<int64_t>(raw)));
      break;
    case 0xd0:
      lua_pushinteger(lua, static_cast<int8_t>(raw));
      break;
    case 0xd1:
      lua_pushinteger(lua, static_cast<int16_t>(raw));
      break;
    case 0xd2:
      lua_pushinteger(lua, static_cast<int32_t>(raw));
      break;
    case 0xd3:
      lua_pushnumber(lua, static_cast<lua_Number>(static_cast<int64_t>(raw)));
      break;
    case 0xca: {
      const uint32_t bits = raw;
      float f;
      memcpy(&f, &bits, sizeof(f));
      lua_pushnumber(lua, f);
      break;
    }
    default: {  // 0xcb
      double d;
      memcpy(&d, &raw, sizeof(d));
      lua_pushnumber(lua, d);
    }
  }
  Consume(c, 1 + width);
}

// Decodes up to `limit` values of argument 1 from the 0-based `offset`. limit == 0 and
// offset == 0 together mean "all values, no offset returned" (unpack's mode). Offsets
// and lengths appear in errors through %d, that is truncated to int, as in Redis.
int UnpackFull(lua_State* lua, lua_Integer limit, lua_Integer offset) {
  size_t len;
  const char* s = luaL_checklstring(lua, 1, &len);
  const bool decode_all = limit == 0 && offset == 0;
  if (offset < 0 || limit < 0) {
    return luaL_error(lua, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(lua, "Start offset %d greater than input length %d.",
                      static_cast<int>(offset), static_cast<int>(len));
  }
  if (decode_all) limit = INT_MAX;

  Cursor c{reinterpret_cast<const uint8_t*>(s) + offset, len - offset, Cursor::kOk,
           reinterpret_cast<uintptr_t>(__builtin_frame_address(0))};
  int count = 0;
  for (; c.left > 0 && count < limit; count++) {
    DecodeValue(lua, &c);
    if (c.err == Cursor::kEof) return luaL_error(lua, "Missing bytes in input.");
    if (c.err == Cursor::kBadFormat) return luaL_error(lua, "Bad data format in input.");
    if (c.err == Cursor::kTooDeep) return luaL_error(lua, "C stack overflow");
  }
  if (decode_all) return count;

  luaL_checkstack(lua, 1, "in function mp_unpack_full");
  lua_pushinteger(lua, c.left == 0 ? -1 : static_cast<int>(len - c.left));
  lua_insert(lua, 2);  // the next offset comes before the values
  return count + 1;
}

int Unpack(lua_State* lua) { return UnpackFull(lua, 0, 0); }

int UnpackOne(lua_State* lua) {
  const lua_Integer offset = luaL_optinteger(lua, 2, 0);
  lua_pop(lua, lua_gettop(lua) - 1);  // with no argument at all, still "got no value"
  return UnpackFull(lua, 1, offset);
}

int UnpackLimit(lua_State* lua) {
  const lua_Integer limit = luaL_checkinteger(lua, 2);
  const lua_Integer offset = luaL_optinteger(lua, 3, 0);
  lua_pop(lua, lua_gettop(lua) - 1);
  return UnpackFull(lua, limit, offset);
}

}  // namespace

int OpenLuaCmsgpack(lua_State* lua) {
  lua_newtable(lua);

  auto* buf = static_cast<PackBuffer*>(lua_newuserdata(lua, sizeof(PackBuffer)));
  *buf = PackBuffer{nullptr, 0, 0};
  lua_newtable(lua);
  lua_pushcfunction(lua, FreePackBuffer);
  lua_setfield(lua, -2, "__gc");
  lua_setmetatable(lua, -2);
  lua_pushcclosure(lua, Pack, 1);
  lua_setfield(lua, -2, "pack");

  lua_pushcfunction(lua, Unpack);
  lua_setfield(lua, -2, "unpack");
  lua_pushcfunction(lua, UnpackOne);
  lua_setfield(lua, -2, "unpack_one");
  lua_pushcfunction(lua, UnpackLimit);
  lua_setfield(lua, -2, "unpack_limit");

  // The metadata fields Redis's copy has; scripts may read them.
  lua_pushliteral(lua, "cmsgpack");
  lua_setfield(lua, -2, "_NAME");
  lua_pushliteral(lua, "lua-cmsgpack 0.4.0");
  lua_setfield(lua, -2, "_VERSION");
  lua_pushliteral(lua, "Copyright (C) 2012, Salvatore Sanfilippo");
  lua_setfield(lua, -2, "_COPYRIGHT");
  lua_pushliteral(lua, "MessagePack C implementation for Lua");
  lua_setfield(lua, -2, "_DESCRIPTION");
  return 1;
}

}  // namespace damselfly
