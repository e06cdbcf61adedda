// cmsgpack and struct in a bare Lua 5.1 state. Every expected byte string and error text
// below was taken from redis-server 7.0 (EVAL "return <expression>" 0). Chunks are named
// as Redis names scripts, so luaL_error's position prefix reads "user_script:1:" too.
#include "src/core/lua_libs.h"

#include <lua.hpp>
#include <sstream>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace damselfly {
namespace {

// hex(s) and unhex(h) convert bytes for readable expectations; results() joins a call's
// results with tostring, which also shows how many there were.
constexpr std::string_view kHelpers = R"(
function hex(s)
  return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end))
end
function unhex(h)
  return (h:gsub('%x%x', function(x) return string.char(tonumber(x, 16)) end))
end
function results(...)
  local out = {}
  for i = 1, select('#', ...) do out[i] = tostring((select(i, ...))) end
  return table.concat(out, ',')
end
)";

// Concatenates strings and numbers (absl::StrCat here takes no std::string_view).
template <typename... Args>
std::string Cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

class LuaLibsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lua_ = luaL_newstate();
    luaL_openlibs(lua_);
    OpenLuaCmsgpack(lua_);
    lua_setglobal(lua_, "cmsgpack");
    OpenLuaStruct(lua_);
    lua_setglobal(lua_, "struct");
    ASSERT_EQ(Run(kHelpers), "");
  }

  void TearDown() override { lua_close(lua_); }

  // Runs a chunk and returns its first result as a string (tostring), "" if none, or
  // "error: user_script:1: <message>".
  std::string Run(std::string_view code) {
    const int top = lua_gettop(lua_);
    if (luaL_loadbuffer(lua_, code.data(), code.size(), "@user_script") != 0 ||
        lua_pcall(lua_, 0, 1, 0) != 0) {
      std::string error = Cat("error: ", lua_tostring(lua_, -1));
      lua_settop(lua_, top);
      return error;
    }
    std::string result;
    if (!lua_isnil(lua_, -1)) {
      lua_getglobal(lua_, "tostring");
      lua_insert(lua_, -2);
      lua_call(lua_, 1, 1);
      result = lua_tostring(lua_, -1);
    }
    lua_settop(lua_, top);
    return result;
  }

  // The value of a Lua expression.
  std::string Eval(std::string_view expression) { return Run(Cat("return ", expression)); }

  // The hex of cmsgpack.pack(args).
  std::string Pack(std::string_view args) { return Eval(Cat("hex(cmsgpack.pack(", args, "))")); }

  // All the results of unpacking the hex bytes with `function` (unpack, unpack_one...).
  std::string Unpack(std::string_view hex, std::string_view function = "unpack",
                     std::string_view extra_args = "") {
    return Eval(Cat("results(cmsgpack.", function, "(unhex('", hex, "')", extra_args, "))"));
  }

  std::string StructPack(std::string_view args) {
    return Eval(Cat("hex(struct.pack(", args, "))"));
  }

  lua_State* lua_ = nullptr;
};

// --- cmsgpack.pack -----------------------------------------------------------------

TEST_F(LuaLibsTest, PackIntegersInTheSmallestEncoding) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"0", "00"},
      {"1", "01"},
      {"127", "7f"},
      {"128", "cc80"},
      {"255", "ccff"},
      {"256", "cd0100"},
      {"65535", "cdffff"},
      {"65536", "ce00010000"},
      {"2^31", "ce80000000"},
      {"2^32 - 1", "ceffffffff"},
      {"2^32", "cf0000000100000000"},
      {"2^53", "cf0020000000000000"},
      {"-1", "ff"},
      {"-32", "e0"},
      {"-33", "d0df"},
      {"-128", "d080"},
      {"-129", "d1ff7f"},
      {"-32768", "d18000"},
      {"-32769", "d2ffff7fff"},
      {"-2^31", "d280000000"},
      {"-2^31 - 1", "d3ffffffff7fffffff"},
      {"-2^32", "d3ffffffff00000000"},
      {"-2^63", "d38000000000000000"},
      {"-0", "00"},
      {"3.0", "03"},
  };
  for (const auto& [number, hex] : cases) EXPECT_EQ(Pack(number), hex) << number;
}

TEST_F(LuaLibsTest, PackFloatsAsFloat32WhenExact) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"1.5", "ca3fc00000"},
      {"-0.25", "cabe800000"},
      {"0.1", "cb3fb999999999999a"},
      {"1/0", "ca7f800000"},
      {"-1/0", "caff800000"},
      {"0/0", "cbfff8000000000000"},  // NaN is never equal to itself: float64
      {"2^63", "ca5f000000"},         // out of int64 range: a float
      {"2^64", "ca5f800000"},
      {"1e300", "cb7e37e43c8800759c"},
      {"2^51 + 0.5", "cb4320000000000001"},
  };
  for (const auto& [number, hex] : cases) EXPECT_EQ(Pack(number), hex) << number;
}

TEST_F(LuaLibsTest, PackStringsAsFixstrStr8Str16Str32) {
  EXPECT_EQ(Pack("''"), "a0");
  EXPECT_EQ(Pack("'abc'"), "a3616263");
  EXPECT_EQ(Pack("'a\\0b'"), "a3610062");
  const std::pair<int, std::string_view> headers[] = {
      {31, "bf"},      {32, "d920"},      {255, "d9ff"},
      {256, "da0100"}, {65535, "daffff"}, {65536, "db00010000"},
  };
  for (const auto& [len, header] : headers) {
    const std::string code = Cat("cmsgpack.pack(string.rep('a', ", len, "))");
    EXPECT_EQ(Eval(Cat("hex(", code, ":sub(1, ", header.size() / 2, "))")), header) << len;
    EXPECT_EQ(Eval(Cat("#", code)), Cat(len + header.size() / 2)) << len;
  }
}

TEST_F(LuaLibsTest, PackBooleansNilAndOtherTypes) {
  EXPECT_EQ(Pack("true"), "c3");
  EXPECT_EQ(Pack("false"), "c2");
  EXPECT_EQ(Pack("nil"), "c0");
  EXPECT_EQ(Pack("string.len"), "c0");
  EXPECT_EQ(Pack("coroutine.create(function() end)"), "c0");
  EXPECT_EQ(Pack("1, 'a', nil, true"), "01a161c0c3");  // several arguments concatenate
}

TEST_F(LuaLibsTest, PackTablesAsArraysOrMaps) {
  EXPECT_EQ(Pack("{}"), "90");
  EXPECT_EQ(Pack("{1, 2}"), "920102");
  EXPECT_EQ(Pack("{a = 1}"), "81a16101");
  EXPECT_EQ(Pack("{[1] = 1, [3] = 3}"), "8201010303");  // a hole: a map
  EXPECT_EQ(Pack("{[1.5] = 1}"), "81ca3fc0000001");
  EXPECT_EQ(Pack("{[2^31] = 1}"), "81ce8000000001");  // beyond int: a map
  EXPECT_EQ(Pack("{[0] = 1}"), "810001");
  EXPECT_EQ(Pack("{[-1] = 1}"), "81ff01");
  EXPECT_EQ(Pack("{['1'] = 1}"), "81a13101");
  EXPECT_EQ(Pack("{{}, {x = {true}}}"), "929081a17891c3");
}

TEST_F(LuaLibsTest, PackArrayAndMapHeaders) {
  const std::tuple<std::string_view, int, std::string_view> cases[] = {
      {"i", 15, "9f"},
      {"i", 16, "dc0010"},
      {"i", 65535, "dcffff"},
      {"i", 65536, "dd00010000"},
      {"'k'..i", 15, "8f"},
      {"'k'..i", 16, "de0010"},
      {"'k'..i", 65535, "deffff"},
      {"'k'..i", 65536, "df00010000"},
  };
  for (const auto& [key, n, header] : cases) {
    const std::string code = Cat("local t = {} for i = 1, ", n, " do t[", key, "] = 1 end ",
                                 "return hex(cmsgpack.pack(t):sub(1, ", header.size() / 2, "))");
    EXPECT_EQ(Run(code), header) << key << " " << n;
  }
}

TEST_F(LuaLibsTest, PackNestingDeeperThan16IsNil) {
  auto nested = [](int depth, std::string_view wrap) {
    return Cat("local t = 1 for i = 1, ", depth, " do t = ", wrap,
               " end return hex(cmsgpack.pack(t))");
  };
  std::string arrays16, maps16;
  for (int i = 0; i < 16; ++i) {
    arrays16 += "91";
    maps16 += "81a161";
  }
  EXPECT_EQ(Run(nested(16, "{t}")), arrays16 + "01");
  EXPECT_EQ(Run(nested(17, "{t}")), arrays16 + "c0");
  EXPECT_EQ(Run(nested(16, "{a = t}")), maps16 + "01");
  EXPECT_EQ(Run(nested(17, "{a = t}")), maps16 + "c0");
  EXPECT_EQ(Run(nested(40, "{t}")), arrays16 + "c0");
}

TEST_F(LuaLibsTest, PackErrors) {
  EXPECT_EQ(Eval("cmsgpack.pack()"),
            "error: user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.)");
  auto args = [](int n, bool last_is_table) {
    return Cat("local t = {} for i = 1, ", n, " do t[i] = i end ",
               last_is_table ? Cat("t[", n, "] = {} ") : "", "return #cmsgpack.pack(unpack(t))");
  };
  EXPECT_EQ(
      Run(args(4001, false)),
      "error: user_script:1: bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)");
  EXPECT_EQ(Run(args(4000, false)), "11618");
  EXPECT_EQ(Run(args(3999, true)), "11613");
  EXPECT_EQ(Run(args(4000, true)),
            "error: user_script:1: stack overflow (in function table_is_an_array)");
}

TEST_F(LuaLibsTest, PackReusesItsBufferAcrossCalls) {
  EXPECT_EQ(Eval("#cmsgpack.pack(string.rep('x', 200000))"), "200005");
  EXPECT_EQ(Pack("'ab'"), "a26162");
  EXPECT_EQ(Eval("#cmsgpack.pack(string.rep('x', 100), string.rep('y', 70000))"), "70107");
}

// --- cmsgpack.unpack -----------------------------------------------------------------

TEST_F(LuaLibsTest, UnpackEveryType) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"00", "0"},
      {"7f", "127"},
      {"ff", "-1"},
      {"e0", "-32"},
      {"ccff", "255"},
      {"d080", "-128"},
      {"cdffff", "65535"},
      {"d18000", "-32768"},
      {"d1ff7f", "-129"},
      {"ceffffffff", "4294967295"},
      {"d280000000", "-2147483648"},
      {"cf0000000100000000", "4294967296"},
      {"cfffffffffffffffff", "-1"},  // uint64 wraps to int64, as in Redis
      {"cf8000000000000000", "-9.2233720368548e+18"},
      {"d38000000000000001", "-9.2233720368548e+18"},
      {"d3ffffffffffffffff", "-1"},
      {"ca3fc00000", "1.5"},
      {"ca7f800000", "inf"},
      {"cb3fb999999999999a", "0.1"},
      {"c0", "nil"},
      {"c3", "true"},
      {"c2", "false"},
      {"a0", ""},
      {"a3616263", "abc"},
      {"d903616263", "abc"},
      {"da0003616263", "abc"},
      {"db00000003616263", "abc"},
      {"01a161c0c3", "1,a,nil,true"},
      {"", ""},
  };
  for (const auto& [hex, values] : cases) EXPECT_EQ(Unpack(hex), values) << hex;
  EXPECT_EQ(Eval("select('#', cmsgpack.unpack(''))"), "0");
  EXPECT_EQ(Eval("cmsgpack.unpack(1)"), "49");  // numbers convert to strings
  EXPECT_EQ(Eval("cmsgpack.unpack(unhex('ca7fc00000')) ~= cmsgpack.unpack(unhex('ca7fc00000'))"),
            "true");  // NaN
}

TEST_F(LuaLibsTest, UnpackTables) {
  EXPECT_EQ(Eval("#cmsgpack.unpack(unhex('90'))"), "0");
  EXPECT_EQ(Eval("results(unpack(cmsgpack.unpack(unhex('93010203'))))"), "1,2,3");
  EXPECT_EQ(Eval("#cmsgpack.unpack(unhex('dc0003010203'))"), "3");
  EXPECT_EQ(Eval("#cmsgpack.unpack(unhex('dd00000003010203'))"), "3");
  EXPECT_EQ(Eval("cmsgpack.unpack(unhex('81a16101')).a"), "1");
  EXPECT_EQ(Eval("cmsgpack.unpack(unhex('de0001a16101')).a"), "1");
  EXPECT_EQ(Eval("cmsgpack.unpack(unhex('df00000001a16101')).a"), "1");
  EXPECT_EQ(Eval("cmsgpack.unpack(unhex('de00010102'))[1]"), "2");
  EXPECT_EQ(Eval("tostring(cmsgpack.unpack(unhex('92c001'))[1])"), "nil");
  EXPECT_EQ(Eval("#cmsgpack.unpack(unhex('9f' .. string.rep('01', 15)))"), "15");
}

TEST_F(LuaLibsTest, RoundTrips) {
  const std::string_view values[] = {
      "0",
      "-1",
      "127",
      "128",
      "-33",
      "65536",
      "2^32",
      "-2^31 - 1",
      "-2^63",
      "2^62",
      "1.5",
      "0.1",
      "1/0",
      "-1/0",
      "''",
      "string.rep('z', 31)",
      "string.rep('z', 32)",
      "string.rep('z', 255)",
      "string.rep('z', 256)",
      "string.rep('z', 65535)",
      "string.rep('z', 65536)",
      "true",
      "false",
      "{}",
      "{1, 2, {3, {a = 'b'}}}",
      "{x = {y = {z = -7.25}}}",
  };
  for (std::string_view value : values) {
    EXPECT_EQ(Eval(Cat("hex(cmsgpack.pack(cmsgpack.unpack(cmsgpack.pack(", value, "))))")),
              Pack(value))
        << value;
  }
  EXPECT_EQ(Run("local t = {} for i = 1, 70000 do t[i] = i % 300 - 100 end "
                "local u = cmsgpack.unpack(cmsgpack.pack(t)) "
                "for i = 1, 70000 do if u[i] ~= t[i] then return i end end return #u"),
            "70000");
}

TEST_F(LuaLibsTest, UnpackErrors) {
  const std::string_view truncated[] = {
      "cc",
      "d0",
      "cd00",
      "d100",
      "ce000000",
      "d2000000",
      "cf00000000000000",
      "d300000000000000",
      "ca000000",
      "cb00000000000000",
      "a1",
      "bf",
      "d9",
      "d90341",
      "da00",
      "da000241",
      "db000000",
      "db0000000541",
      "dc00",
      "dc0001",
      "dd000000",
      "dd00000001",
      "de00",
      "de0001",
      "de000101",
      "df00000001",
      "92",
      "9201",
      "81",
      "81a161",
  };
  for (std::string_view hex : truncated) {
    EXPECT_EQ(Unpack(hex), "error: user_script:1: Missing bytes in input.") << hex;
  }
  // bin, ext, fixext and the never-used byte.
  for (std::string_view hex :
       {"c1", "c40141", "c5000141", "c600000001", "c7010141", "d40141", "d8014141", "91c1"}) {
    EXPECT_EQ(Unpack(hex), "error: user_script:1: Bad data format in input.") << hex;
  }
  EXPECT_EQ(Unpack("81c001"), "error: table index is nil");
  EXPECT_EQ(Unpack("81cb7ff800000000000001"), "error: table index is NaN");
  EXPECT_EQ(Eval("cmsgpack.unpack()"),
            "error: user_script:1: bad argument #1 to 'unpack' (string expected, got no value)");
  EXPECT_EQ(Eval("cmsgpack.unpack({})"),
            "error: user_script:1: bad argument #1 to 'unpack' (string expected, got table)");
}

TEST_F(LuaLibsTest, UnpackStackLimits) {
  EXPECT_EQ(Eval("cmsgpack.unpack(string.rep('\\1', 10000))"),
            "error: user_script:1: stack overflow (too many return values at once; use "
            "unpack_one or unpack_limit instead.)");
  EXPECT_EQ(Eval("select('#', cmsgpack.unpack(string.rep('\\1', 7990)))"), "7990");
  // Nesting is bounded by the machine stack (a fiber's, in the server): Redis decodes
  // about 4000 levels, then fails with "stack overflow (in function
  // mp_decode_to_lua_array)". 64 levels fit in every build, sanitized ones included.
  EXPECT_EQ(Eval("#cmsgpack.unpack(string.rep('\\145', 64) .. '\\1')"), "1");
  EXPECT_EQ(Eval("type(cmsgpack.unpack(string.rep('\\129\\161a', 64) .. '\\1').a.a)"), "table");
  EXPECT_EQ(Eval("cmsgpack.unpack(string.rep('\\145', 5000) .. '\\1')"),
            "error: user_script:1: C stack overflow");
  EXPECT_EQ(Eval("cmsgpack.unpack(string.rep('\\129\\161a', 5000) .. '\\1')"),
            "error: user_script:1: C stack overflow");
  // The state is usable afterwards.
  EXPECT_EQ(Eval("#cmsgpack.unpack(string.rep('\\145', 16) .. '\\1')"), "1");
}

TEST_F(LuaLibsTest, UnpackOneAndLimit) {
  // pack(1, 2, 3) is 010203; offsets are 0-based, and -1 means the end was reached.
  EXPECT_EQ(Unpack("010203", "unpack_one"), "1,1");
  EXPECT_EQ(Unpack("010203", "unpack_one", ", 1"), "2,2");
  EXPECT_EQ(Unpack("010203", "unpack_one", ", 2"), "-1,3");
  EXPECT_EQ(Unpack("010203", "unpack_one", ", 3"), "-1");
  EXPECT_EQ(Unpack("010203", "unpack_one", ", 1.7"), "2,2");
  EXPECT_EQ(Unpack("010203", "unpack_one", ", '1'"), "2,2");
  EXPECT_EQ(Unpack("", "unpack_one"), "-1");
  EXPECT_EQ(Eval("select(2, cmsgpack.unpack_one(unhex('92a161a162c3')))[2]"), "b");
  EXPECT_EQ(Eval("cmsgpack.unpack_one(unhex('92a161a162c3'))"), "5");
  EXPECT_EQ(Unpack("010203", "unpack_limit", ", 2"), "2,1,2");
  EXPECT_EQ(Unpack("010203", "unpack_limit", ", 2, 1"), "-1,2,3");
  EXPECT_EQ(Unpack("010203", "unpack_limit", ", 5"), "-1,1,2,3");
  EXPECT_EQ(Unpack("010203", "unpack_limit", ", 0"), "1,2,3");  // no offset: unpack's mode
  EXPECT_EQ(Unpack("010203", "unpack_limit", ", 0, 1"), "1");
  EXPECT_EQ(Unpack("010203", "unpack_limit", ", 2^32 + 1"), "-1,1,2,3");
  EXPECT_EQ(Unpack("010203", "unpack_one", ", 0"), "1,1");
}

TEST_F(LuaLibsTest, UnpackOneAndLimitErrors) {
  EXPECT_EQ(Eval("cmsgpack.unpack_one('abc', 5)"),
            "error: user_script:1: Start offset 5 greater than input length 3.");
  EXPECT_EQ(Eval("cmsgpack.unpack_one('\\1\\2', 2^32 + 1)"),
            "error: user_script:1: Start offset 1 greater than input length 2.");  // %d truncates
  EXPECT_EQ(Eval("cmsgpack.unpack_one('abc', -1)"),
            "error: user_script:1: Invalid request to unpack with offset of -1 and limit of 3.");
  // Redis prints the input length as the "limit".
  EXPECT_EQ(Eval("cmsgpack.unpack_limit('abc', -1)"),
            "error: user_script:1: Invalid request to unpack with offset of 0 and limit of 3.");
  EXPECT_EQ(Eval("cmsgpack.unpack_limit('abc', -1, 2)"),
            "error: user_script:1: Invalid request to unpack with offset of 2 and limit of 3.");
  EXPECT_EQ(
      Eval("cmsgpack.unpack_limit('a')"),
      "error: user_script:1: bad argument #2 to 'unpack_limit' (number expected, got no value)");
  EXPECT_EQ(
      Eval("cmsgpack.unpack_limit('a', 'x')"),
      "error: user_script:1: bad argument #2 to 'unpack_limit' (number expected, got string)");
  EXPECT_EQ(Eval("cmsgpack.unpack_one('a', 'x')"),
            "error: user_script:1: bad argument #2 to 'unpack_one' (number expected, got string)");
  EXPECT_EQ(
      Eval("cmsgpack.unpack_one()"),
      "error: user_script:1: bad argument #1 to 'unpack_one' (string expected, got no value)");
  EXPECT_EQ(Eval("cmsgpack.unpack_one(unhex('cd00'))"),
            "error: user_script:1: Missing bytes in input.");
  EXPECT_EQ(Eval("cmsgpack.unpack_limit(unhex('01c1'), 2)"),
            "error: user_script:1: Bad data format in input.");
}

// The cmsgpack cases of Redis's own suite (tests/unit/scripting.tcl), in a bare state.
TEST_F(LuaLibsTest, RedisSuiteCases) {
  EXPECT_EQ(Pack("-1099511627776"), "d3ffffff0000000000");
  EXPECT_EQ(Run(R"(
    local str_lt_32, str_lt_255 = string.rep("x", 30), string.rep("x", 250)
    local str_lt_65535, str_long = string.rep("x", 65530), string.rep("x", 100000)
    local array_big, map_big = {}, {}
    for i = 1, 100000 do array_big[i] = i; map_big[tostring(i)] = i end
    local some_map = {s1 = str_lt_32, s2 = str_lt_255, s3 = str_lt_65535, s4 = str_long,
                      d1 = 0.1, i1 = 1, i2 = 250, i3 = 65530, i4 = 100000, i5 = 2^40, i6 = -1,
                      i7 = -120, i8 = -32000, i9 = -100000, i10 = -3147483648,
                      a1 = {1, 2, 3, 4, 5}, a2 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
                      14, 15, 16, 17, 18}, a3 = array_big, m1 = {a = 1, b = 2}, m2 = map_big,
                      b1 = false, b2 = true, n = nil}
    local encoded = cmsgpack.pack(some_map)
    local decoded = cmsgpack.unpack(encoded)
    assert(decoded.s4 == str_long and decoded.i10 == -3147483648 and decoded.d1 == 0.1)
    assert(#decoded.a3 == 100000 and decoded.m2["99999"] == 99999 and decoded.b1 == false)
    local offset, decoded_one = cmsgpack.unpack_one(encoded, 0)
    assert(offset == -1 and decoded_one.s3 == str_lt_65535)
    local encoded_multiple = cmsgpack.pack(str_lt_32, str_lt_255, str_lt_65535, str_long)
    local offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, 0)
    assert(obj == str_lt_32)
    offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
    assert(obj == str_lt_255)
    offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
    assert(obj == str_lt_65535)
    offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
    assert(obj == str_long and offset == -1)
    return "ok")"),
            "ok");
  // A cycle is copied 16 levels deep, then nil.
  EXPECT_EQ(Run("local a = {x = nil, y = 5} local b = {x = a} a['x'] = b "
                "local encoded = cmsgpack.pack(a) local re = cmsgpack.unpack(encoded) "
                "assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.y == re.y) "
                "assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x == nil) return hex(encoded)"),
            "82a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a1"
            "7881a17882a17905a17881a17882a17905a17881a17882a17905a17881a178c0");
}

TEST_F(LuaLibsTest, CmsgpackMetadata) {
  EXPECT_EQ(Eval("cmsgpack._NAME"), "cmsgpack");
  EXPECT_EQ(Eval("cmsgpack._VERSION"), "lua-cmsgpack 0.4.0");
  EXPECT_EQ(Eval("cmsgpack._COPYRIGHT"), "Copyright (C) 2012, Salvatore Sanfilippo");
  EXPECT_EQ(Eval("cmsgpack._DESCRIPTION"), "MessagePack C implementation for Lua");
}

// --- struct ----------------------------------------------------------------------------

TEST_F(LuaLibsTest, StructPackEveryFormat) {
  EXPECT_EQ(StructPack("'<bBhHlLTiIfd', -1, 255, -2, 65535, -3, 4, 5, -6, 7, 1.5, 2.25"),
            "ffff"
            "feffffff"
            "fdffffffffffffff0400000000000000"
            "0500000000000000"
            "faffffff07000000"
            "0000c03f"
            "0000000000000240");
  EXPECT_EQ(StructPack("'>bBhHlLTiIfd', -1, 255, -2, 65535, -3, 4, 5, -6, 7, 1.5, 2.25"),
            "ffff"
            "fffeffff"
            "fffffffffffffffd0000000000000004"
            "0000000000000005"
            "fffffffa00000007"
            "3fc00000"
            "4002000000000000");
  EXPECT_EQ(StructPack("'bx', 1"), "0100");
  EXPECT_EQ(StructPack("'c', 'xyz'"), "78");
  EXPECT_EQ(StructPack("'c2', 'xyz'"), "7879");
  EXPECT_EQ(StructPack("'c0', 'ab'"), "6162");
  EXPECT_EQ(StructPack("'c0', ''"), "");
  EXPECT_EQ(StructPack("'s', 'ab'"), "616200");
  EXPECT_EQ(StructPack("'s', ''"), "00");
  EXPECT_EQ(StructPack("'c', 1"), "31");  // numbers convert to strings
  EXPECT_EQ(StructPack("'s', 12"), "313200");
  EXPECT_EQ(StructPack("''"), "");
  EXPECT_EQ(StructPack("' < b > h', 1, 2"), "010002");
  EXPECT_EQ(StructPack("'i1', 1, 2"), "01");  // extra arguments are ignored
}

TEST_F(LuaLibsTest, StructPackIntegerWidthsAndBoundaries) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"'<b', 300", "2c"},
      {"'<b', 1.7", "01"},
      {"'<b', -1.7", "ff"},
      {"'<B', -1", "ff"},
      {"'<h', -32768", "0080"},
      {"'<H', 65536", "0000"},
      {"'<i', 2^31", "00000080"},
      {"'<i', -2^31", "00000080"},
      {"'<I', 2^32 - 1", "ffffffff"},
      {"'<I', 2^32", "00000000"},
      {"'<I8', 2^63", "0000000000000080"},
      {"'<I8', 2^64", "0000000000000000"},
      {"'<I8', 0/0", "0000000000000080"},
      {"'<i8', -2^63", "0000000000000080"},
      {"'<i8', -2^64", "0000000000000080"},
      {"'<i8', -1", "ffffffffffffffff"},
      {"'<i3', -2", "feffff"},
      {"'>i3', 0x123456", "123456"},
      {"'<i0', 5", ""},
      {"'<i9', -1", "ffffffffffffffff00"},
      {"'>i9', -1", "00ffffffffffffffff"},
      {"'<i16', -1", "ffffffffffffffff0000000000000000"},
      {"'<I32', 1",
       "01000000000000000000000000000000"
       "00000000000000000000000000000000"},
      {"'<d', 0/0", "000000000000f8ff"},
      {"'<f', 1/0", "0000807f"},
      {"'<f', 1e300", "0000807f"},
      {"'>d', -0.0", "8000000000000000"},
  };
  for (const auto& [args, hex] : cases) EXPECT_EQ(StructPack(args), hex) << args;
}

TEST_F(LuaLibsTest, StructAlignment) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"'!i', 1", "01000000"},
      {"'!4bi', 1, 2", "0100000002000000"},
      {"'!bd', 1, 2", "01000000000000000000000000000040"},  // '!' alone is 8
      {"'!2bd', 1, 2", "01000000000000000040"},
      {"'!16bd', 1, 2", "01000000000000000000000000000040"},
      {"'!<bxh', 1, 2", "01000200"},
      {"'!<bxi', 1, 2", "0100000002000000"},
      {"'!8bx!2h', 1, 2", "01000200"},
      {"'!4bi3', 1, 2", "010000020000"},  // a size that is no power of 2
      {"'!4bc3', 1, 'abc'", "01616263"},  // strings are never aligned
      {"'!4bs', 1, 'a'", "016100"},
      {"'!4bi2', 1, 2", "01000200"},
  };
  for (const auto& [args, hex] : cases) EXPECT_EQ(StructPack(args), hex) << args;
}

TEST_F(LuaLibsTest, StructUnpack) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"'>bBhHlLTiIfd', struct.pack('>bBhHlLTiIfd', -1, 255, -2, 65535, -3, 4, 5, -6, 7, "
       "1.5, 2.25)",
       "-1,255,-2,65535,-3,4,5,-6,7,1.5,2.25,51"},
      {"'<bBhHlLTiIfd', struct.pack('<bBhHlLTiIfd', -1, 255, -2, 65535, -3, 4, 5, -6, 7, "
       "1.5, 2.25)",
       "-1,255,-2,65535,-3,4,5,-6,7,1.5,2.25,51"},
      {"'i', 'abcd'", "1684234849,5"},
      {"'>i', 'abcd'", "1633837924,5"},
      {"'i', 'abcd', 1", "1684234849,5"},
      {"'b', 'a', 1.9", "97,2"},
      {"'b', 'abc', 3", "99,4"},
      {"'<I8', string.rep('\\255', 8)", "1.844674407371e+19,9"},
      {"'<i8', string.rep('\\255', 8)", "-1,9"},
      {"'<i9', string.rep('\\255', 9)", "-1,10"},
      {"'<i9', '\\128' .. string.rep('\\0', 8)", "-128,10"},
      {"'<i16', string.rep('\\255', 16)", "-1,17"},
      {"'<I3', '\\255\\255\\255'", "16777215,4"},
      {"'<i3', '\\255\\255\\127'", "8388607,4"},
      {"'<i3', '\\0\\0\\128'", "-8388608,4"},
      {"'<i0', ''", "0,1"},
      {"'!<bxi', struct.pack('!<bxi', 1, 2)", "1,2,9"},
      {"'x', 'abcd'", "2"},
      {"'s', 'ab\\0cd'", "ab,4"},
      {"'ss', 'ab\\0\\0'", "ab,,5"},
      {"'c2c', 'abc'", "ab,c,4"},
      {"'bc0', '\\2abc'", "ab,4"},
      {"'sc0', '2\\0ab'", "ab,5"},  // a numeric string is a size
      {"'bc0', '\\0'", ",2"},
      {"'', ''", "1"},
      {"'', '', 2", "2"},
      {"'', 'a', 3", "3"},
      {"'', '', -1", "-1"},
      {"'<f', struct.pack('<f', 0.1)", "0.10000000149012,5"},
      {"'>d', struct.pack('>d', 0/0)", "-nan,9"},
      {"'<d', struct.pack('<d', -1/0)", "-inf,9"},
  };
  for (const auto& [args, values] : cases) {
    EXPECT_EQ(Eval(Cat("results(struct.unpack(", args, "))")), values) << args;
  }
  EXPECT_EQ(Eval("select('#', struct.unpack(string.rep('b', 7990), string.rep('a', 8000)))"),
            "7991");
}

TEST_F(LuaLibsTest, StructRoundTripsAtBoundaries) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"b", "-128"},  {"b", "127"},      {"B", "255"},      {"h", "-32768"}, {"H", "65535"},
      {"i", "-2^31"}, {"i", "2^31 - 1"}, {"I", "2^32 - 1"}, {"l", "-2^53"},  {"L", "2^53"},
      {"T", "2^40"},  {"i8", "-2^63"},   {"I8", "2^63"},    {"i5", "-2^39"}, {"I7", "2^53"},
      {"f", "1.5"},   {"d", "0.1"},      {"d", "1e308"},    {"d", "-1/0"},
  };
  for (const auto& [format, value] : cases) {
    for (std::string_view endian : {"<", ">"}) {
      const std::string fmt = Cat(endian, format);
      EXPECT_EQ(
          Eval(Cat("struct.unpack('", fmt, "', struct.pack('", fmt, "', ", value, ")) == ", value)),
          "true")
          << fmt << " " << value;
    }
  }
  for (int len : {0, 1, 31, 32, 255, 256, 65535, 65536}) {
    EXPECT_EQ(Eval(Cat("results(struct.unpack('s', struct.pack('s', string.rep('q', ", len,
                       "))) == string.rep('q', ", len, "))")),
              "true")
        << len;
    EXPECT_EQ(Eval(Cat("struct.unpack('>Ic0', struct.pack('>Ic0', ", len, ", string.rep('q', ", len,
                       "))) == string.rep('q', ", len, ")")),
              "true")
        << len;
  }
}

TEST_F(LuaLibsTest, StructSize) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"''", "0"},    {"'i'", "4"},     {"'bBhHlLTiIfd'", "50"}, {"'c'", "1"},     {"'c10'", "10"},
      {"'i7x'", "8"}, {"'!4bi'", "8"},  {"'!bd'", "16"},         {"'!4bi3'", "6"}, {"'bzi'", "5"},
      {"12", "0"},    {"'<>  b'", "1"},
  };
  for (const auto& [fmt, size] : cases) {
    EXPECT_EQ(Eval(Cat("struct.size(", fmt, ")")), size) << fmt;
  }
}

TEST_F(LuaLibsTest, StructErrors) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"struct.pack('i33', 1)", "integral size 33 is larger than limit of 32"},
      {"struct.size('i33')", "integral size 33 is larger than limit of 32"},
      {"struct.pack('i99999999999', 1)", "integral size overflow"},
      {"struct.pack('i2147483648', 1)", "integral size overflow"},
      {"struct.pack('c2147483648', 'x')", "integral size overflow"},
      {"struct.pack('!2147483648', 1)", "integral size overflow"},
      {"struct.pack('!3i', 1)", "alignment 3 is not a power of 2"},
      {"struct.pack('!0b', 1)", "alignment 0 is not a power of 2"},
      {"struct.size('!3')", "alignment 3 is not a power of 2"},
      {"struct.pack('z', 1)", "bad argument #1 to 'pack' (invalid format option 'z')"},
      {"struct.unpack('z', 'a')", "bad argument #1 to 'unpack' (invalid format option 'z')"},
      {"struct.unpack(1, 'abcd')", "bad argument #1 to 'unpack' (invalid format option '1')"},
      {"struct.size('b#i')", "bad argument #1 to 'size' (invalid format option '#')"},
      {"struct.size('s')", "bad argument #1 to 'size' (option 's' has no fixed size)"},
      {"struct.size('c0')", "bad argument #1 to 'size' (option 'c0' has no fixed size)"},
      {"struct.pack('c5', 'ab')", "bad argument #3 to 'pack' (string too short)"},
      {"struct.pack('b', 'x')", "bad argument #2 to 'pack' (number expected, got string)"},
      {"struct.pack('b')", "bad argument #2 to 'pack' (number expected, got nil)"},
      {"struct.pack('bb', 1)", "bad argument #3 to 'pack' (number expected, got nil)"},
      {"struct.pack('c9000b', string.rep('a', 9000))",
       "bad argument #3 to 'pack' (number expected, got nil)"},
      {"struct.pack('s', {})", "bad argument #2 to 'pack' (string expected, got table)"},
      {"struct.pack()", "bad argument #1 to 'pack' (string expected, got no value)"},
      {"struct.unpack('s', 'ab')", "unfinished string in data"},
      {"struct.unpack('c0', '\\2abc')", "format 'c0' needs a previous size"},
      {"struct.unpack('c2c0', 'abc')", "format 'c0' needs a previous size"},
      {"struct.unpack('bc0', '\\255abc')", "bad argument #2 to 'unpack' (data string too short)"},
      {"struct.unpack('Bc0', '\\5ab')", "bad argument #2 to 'unpack' (data string too short)"},
      {"struct.unpack('i', 'abc')", "bad argument #2 to 'unpack' (data string too short)"},
      {"struct.unpack('bb', '\\1')", "bad argument #2 to 'unpack' (data string too short)"},
      {"struct.unpack('i', 'abcd', 2)", "bad argument #2 to 'unpack' (data string too short)"},
      {"struct.unpack('x', 'abcd', 5)", "bad argument #2 to 'unpack' (data string too short)"},
      {"struct.unpack('z', '', 3)", "bad argument #2 to 'unpack' (data string too short)"},
      {"struct.unpack('b', '', -1)", "bad argument #2 to 'unpack' (data string too short)"},
      {"struct.unpack('i', 'abcd', 0)",
       "bad argument #3 to 'unpack' (offset must be 1 or greater)"},
      {"struct.unpack('i', 'abcd', 'x')",
       "bad argument #3 to 'unpack' (number expected, got string)"},
      {"struct.unpack('i')", "bad argument #2 to 'unpack' (string expected, got no value)"},
      {"struct.size()", "bad argument #1 to 'size' (string expected, got no value)"},
      {"struct.unpack(string.rep('b', 8000), string.rep('a', 8000))",
       "stack overflow (too many results)"},
  };
  for (const auto& [code, error] : cases) {
    EXPECT_EQ(Eval(code), Cat("error: user_script:1: ", error)) << code;
  }
}

}  // namespace
}  // namespace damselfly
