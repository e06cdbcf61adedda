// struct for Lua scripts: Roberto Ierusalimschy's binary packing library as redis-server
// 7.0 bundles it (with Redis's overflow checks), written from its documentation and from
// byte-for-byte comparison with redis-server 7.0 on x86-64.
//
// A format is a sequence of options:
//   > <        big / little endian (native, little, by default)
//   ![n]       alignment: n (a power of 2) or, without n, 8; the default is 1 (none)
//   x          one padding byte
//   b B h H    signed / unsigned char and short
//   l L T      signed / unsigned long, size_t (8 bytes)
//   i[n] I[n]  signed / unsigned integer of n bytes, 0 <= n <= 32 (default 4)
//   f d        float, double
//   c[n]       n chars (default 1); c0: pack takes the whole string, unpack takes the
//              previous value (a number) as the length
//   s          zero-terminated string
//   ' '        ignored
// Each element is aligned to min(its size, alignment) ('c' and 's' never are).
//
// The numeric corners follow what Redis's compiled C does on x86-64, which this file
// spells out without undefined behaviour: integers are kept in 64 bits (wider formats
// pack zero bytes above them, and unpack sign-extends by the shift count taken mod 64);
// doubles out of the 64-bit range convert as the CPU's cvttsd2si does.
// Lua errors longjmp over C++ frames: nothing here holds an object with a destructor.

#include <bit>
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

constexpr int kMaxIntSize = 32;
constexpr int kDefaultMaxAlign = alignof(double) > sizeof(int) ? alignof(double) : sizeof(int);

enum Endian { kBig, kLittle };
constexpr int kNativeEndian = std::endian::native == std::endian::little ? kLittle : kBig;

struct Header {
  int endian;
  int align;
};

bool IsDigit(int c) { return c >= '0' && c <= '9'; }
bool IsAlnum(int c) { return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// double -> int64 as x86-64's cvttsd2si: out of range (and NaN) give INT64_MIN.
int64_t ToInt64(double n) {
  if (n >= -9223372036854775808.0 && n < 9223372036854775808.0) return static_cast<int64_t>(n);
  return INT64_MIN;
}

// double -> uint64 as gcc compiles it on x86-64: values from 2^63 on are converted
// after subtracting 2^63, and the top bit put back (so 2^64 and beyond give 0).
uint64_t ToUint64(double n) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (!(n >= kTwo63)) return static_cast<uint64_t>(ToInt64(n));
  return static_cast<uint64_t>(ToInt64(n - kTwo63)) ^ (uint64_t{1} << 63);
}

// Reads the decimal number at *fmt (advancing it), or returns default_value if none.
int ReadNumber(lua_State* lua, const char** fmt, int default_value) {
  if (!IsDigit(**fmt)) return default_value;
  int n = 0;
  do {
    const int digit = **fmt - '0';
    if (n > INT_MAX / 10 || n * 10 > INT_MAX - digit) luaL_error(lua, "integral size overflow");
    n = n * 10 + digit;
    ++*fmt;
  } while (IsDigit(**fmt));
  return n;
}

// The size of option `opt` (reading its number from *fmt), 0 for the control options.
size_t OptionSize(lua_State* lua, int opt, const char** fmt) {
  switch (opt) {
    case 'B':
    case 'b':
      return sizeof(char);
    case 'H':
    case 'h':
      return sizeof(short);
    case 'L':
    case 'l':
      return sizeof(long);
    case 'T':
      return sizeof(size_t);
    case 'f':
      return sizeof(float);
    case 'd':
      return sizeof(double);
    case 'x':
      return 1;
    case 'c':
      return ReadNumber(lua, fmt, 1);
    case 'i':
    case 'I': {
      const int size = ReadNumber(lua, fmt, sizeof(int));
      if (size > kMaxIntSize) {
        luaL_error(lua, "integral size %d is larger than limit of %d", size, kMaxIntSize);
      }
      return size;
    }
    default:
      return 0;
  }
}

// Padding bytes before an element of `size` at offset `pos`. The formula assumes a
// power-of-2 size; 'i3' and the like get what it gives, as in Redis.
size_t PaddingBefore(size_t pos, const Header& h, int opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > static_cast<size_t>(h.align)) size = h.align;
  return (size - (pos & (size - 1))) & (size - 1);
}

// Applies a control option (endianness, alignment, space) or raises Redis's error.
void ApplyControlOption(lua_State* lua, int opt, const char** fmt, Header* h) {
  switch (opt) {
    case ' ':
      return;
    case '>':
      h->endian = kBig;
      return;
    case '<':
      h->endian = kLittle;
      return;
    case '!': {
      const int align = ReadNumber(lua, fmt, kDefaultMaxAlign);
      if (align <= 0 || (align & (align - 1)) != 0) {
        luaL_error(lua, "alignment %d is not a power of 2", align);
      }
      h->align = align;
      return;
    }
    default:
      luaL_argerror(lua, 1, lua_pushfstring(lua, "invalid format option '%c'", opt));
  }
}

void ToEndian(char* bytes, size_t size, int endian) {
  if (endian == kNativeEndian) return;
  for (size_t i = 0, j = size - 1; i < j; ++i, --j) {
    const char tmp = bytes[i];
    bytes[i] = bytes[j];
    bytes[j] = tmp;
  }
}

void PackInteger(lua_State* lua, luaL_Buffer* b, int arg, int endian, int size) {
  const lua_Number n = luaL_checknumber(lua, arg);
  uint64_t value = n < 0 ? static_cast<uint64_t>(ToInt64(n)) : ToUint64(n);
  char bytes[kMaxIntSize];
  for (int i = 0; i < size; ++i) {
    bytes[endian == kLittle ? i : size - 1 - i] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  luaL_addlstring(b, bytes, size);
}

lua_Number UnpackInteger(const char* bytes, int endian, bool is_signed, int size) {
  uint64_t value = 0;
  for (int i = 0; i < size; ++i) {
    value = (value << 8) | static_cast<uint8_t>(bytes[endian == kBig ? i : size - 1 - i]);
  }
  if (!is_signed) return static_cast<lua_Number>(value);
  // The sign bit's mask; x86 takes shift counts mod 64, so Redis's shift by size*8-1
  // gives this for sizes 0 and 9..32 too.
  const uint64_t mask = ~uint64_t{0} << ((size * 8 - 1) & 63);
  if (value & mask) value |= mask;
  return static_cast<lua_Number>(static_cast<int64_t>(value));
}

bool IsIntegerOption(int opt) {
  switch (opt) {
    case 'b':
    case 'B':
    case 'h':
    case 'H':
    case 'l':
    case 'L':
    case 'T':
    case 'i':
    case 'I':
      return true;
    default:
      return false;
  }
}

// struct.pack(fmt, ...) -> string
int Pack(lua_State* lua) {
  const char* fmt = luaL_checkstring(lua, 1);
  Header h{kNativeEndian, 1};
  int arg = 2;
  size_t total = 0;
  // Separates the arguments from the buffer's pieces: a missing argument reads as nil
  // rather than as a piece of output.
  lua_pushnil(lua);
  luaL_Buffer b;
  luaL_buffinit(lua, &b);
  while (*fmt != '\0') {
    const int opt = *fmt++;
    size_t size = OptionSize(lua, opt, &fmt);
    size_t padding = PaddingBefore(total, h, opt, size);
    total += padding;
    while (padding-- > 0) luaL_addchar(&b, '\0');
    if (IsIntegerOption(opt)) {
      PackInteger(lua, &b, arg++, h.endian, size);
    } else if (opt == 'x') {
      luaL_addchar(&b, '\0');
    } else if (opt == 'f' || opt == 'd') {
      char bytes[sizeof(double)];
      const lua_Number n = luaL_checknumber(lua, arg++);
      if (opt == 'f') {
        const float f = static_cast<float>(n);
        memcpy(bytes, &f, sizeof(f));
      } else {
        memcpy(bytes, &n, sizeof(n));
      }
      ToEndian(bytes, size, h.endian);
      luaL_addlstring(&b, bytes, size);
    } else if (opt == 'c' || opt == 's') {
      size_t len;
      const char* s = luaL_checklstring(lua, arg++, &len);
      if (size == 0) size = len;
      // Names the argument after the string, as Redis's copy does.
      luaL_argcheck(lua, len >= size, arg, "string too short");
      luaL_addlstring(&b, s, size);
      if (opt == 's') {
        luaL_addchar(&b, '\0');
        size++;
      }
    } else {
      ApplyControlOption(lua, opt, &fmt, &h);
    }
    total += size;
  }
  luaL_pushresult(&b);
  return 1;
}

// struct.unpack(fmt, s [, pos]) -> values..., next position (1-based)
int Unpack(lua_State* lua) {
  const char* fmt = luaL_checkstring(lua, 1);
  size_t data_len;
  const char* data = luaL_checklstring(lua, 2, &data_len);
  // A negative position wraps to a huge one, which fails as "data string too short".
  size_t pos = luaL_optinteger(lua, 3, 1);
  luaL_argcheck(lua, pos > 0, 3, "offset must be 1 or greater");
  pos--;
  int results = 0;
  Header h{kNativeEndian, 1};
  while (*fmt != '\0') {
    const int opt = *fmt++;
    size_t size = OptionSize(lua, opt, &fmt);
    pos += PaddingBefore(pos, h, opt, size);
    luaL_argcheck(lua, size <= data_len && pos <= data_len - size, 2, "data string too short");
    luaL_checkstack(lua, 2, "too many results");  // this value and the next position
    if (IsIntegerOption(opt)) {
      const bool is_signed = opt >= 'a' && opt <= 'z';
      lua_pushnumber(lua, UnpackInteger(data + pos, h.endian, is_signed, size));
      results++;
    } else if (opt == 'x') {
    } else if (opt == 'f') {
      char bytes[sizeof(float)];
      memcpy(bytes, data + pos, sizeof(bytes));
      ToEndian(bytes, sizeof(bytes), h.endian);
      float f;
      memcpy(&f, bytes, sizeof(f));
      lua_pushnumber(lua, f);
      results++;
    } else if (opt == 'd') {
      char bytes[sizeof(double)];
      memcpy(bytes, data + pos, sizeof(bytes));
      ToEndian(bytes, sizeof(bytes), h.endian);
      double d;
      memcpy(&d, bytes, sizeof(d));
      lua_pushnumber(lua, d);
      results++;
    } else if (opt == 'c') {
      if (size == 0) {
        // The length is the previous result (a number or a numeric string), replaced.
        if (results == 0 || !lua_isnumber(lua, -1)) {
          luaL_error(lua, "format 'c0' needs a previous size");
        }
        size = ToUint64(lua_tonumber(lua, -1));
        lua_pop(lua, 1);
        results--;
        luaL_argcheck(lua, size <= data_len && pos <= data_len - size, 2, "data string too short");
      }
      lua_pushlstring(lua, data + pos, size);
      results++;
    } else if (opt == 's') {
      const void* end = memchr(data + pos, '\0', data_len - pos);
      if (end == nullptr) luaL_error(lua, "unfinished string in data");
      size = static_cast<const char*>(end) - (data + pos) + 1;
      lua_pushlstring(lua, data + pos, size - 1);
      results++;
    } else {
      ApplyControlOption(lua, opt, &fmt, &h);
    }
    pos += size;
  }
  lua_pushinteger(lua, pos + 1);
  return results + 1;
}

// struct.size(fmt) -> bytes struct.pack(fmt, ...) gives. Letters that are no option
// count 0 (only other characters are checked), as in Redis's copy.
int Size(lua_State* lua) {
  const char* fmt = luaL_checkstring(lua, 1);
  size_t pos = 0;
  Header h{kNativeEndian, 1};
  while (*fmt != '\0') {
    const int opt = *fmt++;
    const size_t size = OptionSize(lua, opt, &fmt);
    pos += PaddingBefore(pos, h, opt, size);
    if (opt == 's') {
      luaL_argerror(lua, 1, "option 's' has no fixed size");
    } else if (opt == 'c' && size == 0) {
      luaL_argerror(lua, 1, "option 'c0' has no fixed size");
    }
    if (!IsAlnum(opt)) ApplyControlOption(lua, opt, &fmt, &h);
    pos += size;
  }
  lua_pushinteger(lua, pos);
  return 1;
}

}  // namespace

int OpenLuaStruct(lua_State* lua) {
  lua_newtable(lua);
  lua_pushcfunction(lua, Pack);
  lua_setfield(lua, -2, "pack");
  lua_pushcfunction(lua, Unpack);
  lua_setfield(lua, -2, "unpack");
  lua_pushcfunction(lua, Size);
  lua_setfield(lua, -2, "size");
  return 1;
}

}  // namespace damselfly
