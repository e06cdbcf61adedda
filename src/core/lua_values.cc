// See lua_values.h.
#include "src/core/lua_values.h"

extern "C" {
#include <lua.h>
}

#include <charconv>
#include <cstdlib>

namespace damselfly::lua {
namespace {

// Nesting of replies converted either way. Redis stops at Lua's C stack limit (about
// 8000 levels); we stop earlier because scripts run on 128 KiB fiber stacks.
constexpr int kMaxNesting = 200;

int64_t ToInteger(double value) {
  // Out of range (and NaN) give INT64_MIN, as the x86 conversion Redis relies on.
  if (value >= -9223372036854775808.0 && value < 9223372036854775808.0)
    return static_cast<int64_t>(value);
  return INT64_MIN;
}

bool ReadLine(std::string_view* in, std::string_view* line) {
  size_t end = in->find("\r\n");
  if (end == std::string_view::npos || end == 0) return false;
  *line = in->substr(1, end - 1);
  in->remove_prefix(end + 2);
  return true;
}

bool ReadInt(std::string_view text, int64_t* value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool ReadBulk(std::string_view* in, int64_t len, std::string_view* payload) {
  if (len < 0 || in->size() < static_cast<size_t>(len) + 2) return false;
  *payload = in->substr(0, len);
  in->remove_prefix(len + 2);
  return true;
}

bool PushReplyAt(lua_State* lua, std::string_view* in, int depth) {
  std::string_view line;
  if (depth > kMaxNesting || !lua_checkstack(lua, 4) || in->empty()) return false;
  char type = in->front();
  const char* start = in->data();
  if (!ReadLine(in, &line)) return false;
  int64_t n = 0;
  std::string_view payload;
  switch (type) {
    case '+':
      lua_createtable(lua, 0, 1);
      lua_pushlstring(lua, line.data(), line.size());
      lua_setfield(lua, -2, "ok");
      return true;
    case '-':
      PushErrorTable(lua, std::string_view(start, line.size() + 1));
      lua_pushboolean(lua, 1);
      lua_setfield(lua, -2, "ignore_error_stats_update");
      return true;
    case ':':
      if (!ReadInt(line, &n)) return false;
      lua_pushnumber(lua, static_cast<lua_Number>(n));
      return true;
    case '$':
      if (!ReadInt(line, &n)) return false;
      if (n < 0) {
        lua_pushboolean(lua, 0);
        return true;
      }
      if (!ReadBulk(in, n, &payload)) return false;
      lua_pushlstring(lua, payload.data(), payload.size());
      return true;
    case '*':
    case '>':
      if (!ReadInt(line, &n)) return false;
      if (n < 0) {
        lua_pushboolean(lua, 0);
        return true;
      }
      lua_createtable(lua, static_cast<int>(n), 0);
      for (int64_t i = 1; i <= n; i++) {
        if (!PushReplyAt(lua, in, depth + 1)) {
          lua_pop(lua, 1);
          return false;
        }
        lua_rawseti(lua, -2, static_cast<int>(i));
      }
      return true;
    case '%':
    case '~': {
      if (!ReadInt(line, &n) || n < 0) return false;
      bool map = type == '%';
      lua_createtable(lua, 0, 1);
      // Not presized: Redis grows the table one key at a time, and the resulting layout
      // decides the order pairs() visits the keys in.
      lua_newtable(lua);
      for (int64_t i = 0; i < n; i++) {
        if (!PushReplyAt(lua, in, depth + 1)) {
          lua_pop(lua, 2);
          return false;
        }
        if (!map) {
          lua_pushboolean(lua, 1);
        } else if (!PushReplyAt(lua, in, depth + 1)) {
          lua_pop(lua, 3);
          return false;
        }
        if (lua_isnil(lua, -2))
          lua_pop(lua, 2);  // a nil key cannot be stored
        else
          lua_rawset(lua, -3);
      }
      lua_setfield(lua, -2, map ? "map" : "set");
      return true;
    }
    case '|':
      // Attributes carry no value of their own: skip them, convert what follows.
      if (!ReadInt(line, &n) || n < 0) return false;
      for (int64_t i = 0; i < 2 * n; i++) {
        if (!PushReplyAt(lua, in, depth + 1)) return false;
        lua_pop(lua, 1);
      }
      return PushReplyAt(lua, in, depth);
    case ',': {
      std::string number(line);
      lua_createtable(lua, 0, 1);
      lua_pushnumber(lua, strtod(number.c_str(), nullptr));
      lua_setfield(lua, -2, "double");
      return true;
    }
    case '#':
      lua_pushboolean(lua, line == "t");
      return true;
    case '_':
      lua_pushnil(lua);
      return true;
    case '(':
      lua_createtable(lua, 0, 1);
      lua_pushlstring(lua, line.data(), line.size());
      lua_setfield(lua, -2, "big_number");
      return true;
    case '=':
      if (!ReadInt(line, &n) || !ReadBulk(in, n, &payload) || payload.size() < 4) return false;
      lua_createtable(lua, 0, 1);
      lua_createtable(lua, 0, 2);
      lua_pushlstring(lua, payload.data(), 3);
      lua_setfield(lua, -2, "format");
      lua_pushlstring(lua, payload.data() + 4, payload.size() - 4);
      lua_setfield(lua, -2, "string");
      lua_setfield(lua, -2, "verbatim_string");
      return true;
    default:
      return false;
  }
}

// Number of values t[1], t[2], ... before the first nil (Redis's array length).
int ArrayLength(lua_State* lua, int table) {
  int n = 0;
  while (true) {
    lua_rawgeti(lua, table, n + 1);
    bool end = lua_isnil(lua, -1);
    lua_pop(lua, 1);
    if (end) return n;
    n++;
  }
}

int PairCount(lua_State* lua, int table) {
  int n = 0;
  lua_pushnil(lua);
  while (lua_next(lua, table)) {
    lua_pop(lua, 1);
    n++;
  }
  return n;
}

class ReplyConverter {
 public:
  ReplyConverter(lua_State* lua, ScriptReplyWriter* out, int resp)
      : lua_(lua), out_(out), resp_(resp) {}

  // Writes the value on top of the stack (Redis's Lua -> reply rules) and pops it.
  void Write(int depth) {
    if (depth > kMaxNesting || !lua_checkstack(lua_, 4)) {
      out_->Error("ERR reached lua stack limit");
    } else {
      switch (lua_type(lua_, -1)) {
        case LUA_TSTRING:
          out_->Bulk(ToView(lua_, -1));
          break;
        case LUA_TBOOLEAN:
          if (resp_ == 3)
            out_->Bool(lua_toboolean(lua_, -1));
          else if (lua_toboolean(lua_, -1))
            out_->Integer(1);
          else
            out_->Nil();
          break;
        case LUA_TNUMBER:
          out_->Integer(ToInteger(lua_tonumber(lua_, -1)));
          break;
        case LUA_TTABLE:
          WriteTable(depth);
          break;
        default:
          out_->Nil();
      }
    }
    lua_pop(lua_, 1);
  }

 private:
  // The table on top of the stack (left there).
  void WriteTable(int depth) {
    int table = lua_gettop(lua_);
    if (WriteTyped(table, "err", LUA_TSTRING, [this, table] {
          const std::string_view message = OneLine(ToView(lua_, -1), &scratch_);
          IsCommandError(lua_, table) ? out_->CommandError(message) : out_->Error(message);
        }))
      return;
    if (WriteTyped(table, "ok", LUA_TSTRING,
                   [this] { out_->Status(OneLine(ToView(lua_, -1), &scratch_)); }))
      return;
    if (WriteTyped(table, "double", LUA_TNUMBER, [this] { out_->Double(lua_tonumber(lua_, -1)); }))
      return;
    if (WriteTyped(table, "big_number", LUA_TSTRING,
                   [this] { out_->BigNumber(OneLine(ToView(lua_, -1), &scratch_)); }))
      return;
    if (WriteVerbatim(table)) return;
    RawField(lua_, table, "map");
    if (lua_istable(lua_, -1)) {
      int map = lua_gettop(lua_);
      out_->Map(PairCount(lua_, map));
      lua_pushnil(lua_);
      while (lua_next(lua_, map)) {
        lua_pushvalue(lua_, -2);
        Write(depth + 1);
        Write(depth + 1);
      }
      lua_pop(lua_, 1);
      return;
    }
    lua_pop(lua_, 1);
    RawField(lua_, table, "set");
    if (lua_istable(lua_, -1)) {
      int set = lua_gettop(lua_);
      out_->Set(PairCount(lua_, set));
      lua_pushnil(lua_);
      while (lua_next(lua_, set)) {
        lua_pop(lua_, 1);
        lua_pushvalue(lua_, -1);
        Write(depth + 1);
      }
      lua_pop(lua_, 1);
      return;
    }
    lua_pop(lua_, 1);
    int length = ArrayLength(lua_, table);
    out_->Array(length);
    for (int i = 1; i <= length; i++) {
      lua_rawgeti(lua_, table, i);
      Write(depth + 1);
    }
  }

  template <typename F>
  bool WriteTyped(int table, const char* field, int type, F write) {
    RawField(lua_, table, field);
    bool match = lua_type(lua_, -1) == type;
    if (match) write();
    lua_pop(lua_, 1);
    return match;
  }

  bool WriteVerbatim(int table) {
    RawField(lua_, table, "verbatim_string");
    bool written = false;
    if (lua_istable(lua_, -1)) {
      RawField(lua_, -1, "format");
      RawField(lua_, -2, "string");
      if (lua_type(lua_, -2) == LUA_TSTRING && lua_type(lua_, -1) == LUA_TSTRING) {
        out_->Verbatim(ToView(lua_, -1), ToView(lua_, -2));
        written = true;
      }
      lua_pop(lua_, 2);
    }
    lua_pop(lua_, 1);
    return written;
  }

  lua_State* lua_;
  ScriptReplyWriter* out_;
  int resp_;
  std::string scratch_;
};

}  // namespace

int AbsIndex(lua_State* lua, int index) {
  return index > 0 || index <= LUA_REGISTRYINDEX ? index : lua_gettop(lua) + index + 1;
}

std::string_view ToView(lua_State* lua, int index) {
  size_t len = 0;
  const char* data = lua_tolstring(lua, index, &len);
  return data == nullptr ? std::string_view() : std::string_view(data, len);
}

// Replies cannot hold CR or LF inside a status or error line: Redis maps them to spaces.
std::string_view OneLine(std::string_view text, std::string* scratch) {
  if (text.find_first_of("\r\n") == std::string_view::npos) return text;
  scratch->assign(text);
  for (char& c : *scratch) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return *scratch;
}

// Pushes Redis's error table {err="CODE message"}. `text` is "-CODE message" (the code
// is the first word) or a message that gets the code ERR; CR/LF around it are dropped.
void PushErrorTable(lua_State* lua, std::string_view text) {
  std::string_view code = "ERR";
  std::string_view message = text;
  if (!text.empty() && text[0] == '-') {
    size_t space = text.find(' ');
    if (space == std::string_view::npos) {
      message = text.substr(1);
    } else {
      code = text.substr(1, space - 1);
      message = text.substr(space + 1);
    }
  }
  while (!message.empty() && (message.front() == '\r' || message.front() == '\n'))
    message.remove_prefix(1);
  while (!message.empty() && (message.back() == '\r' || message.back() == '\n'))
    message.remove_suffix(1);
  lua_createtable(lua, 0, 1);
  lua_pushliteral(lua, "err");
  lua_pushlstring(lua, code.data(), code.size());
  lua_pushliteral(lua, " ");
  lua_pushlstring(lua, message.data(), message.size());
  lua_concat(lua, 3);
  lua_rawset(lua, -3);
}

bool IsCommandError(lua_State* lua, int index) {
  RawField(lua, index, "ignore_error_stats_update");
  const bool marked = lua_toboolean(lua, -1);
  lua_pop(lua, 1);
  return marked;
}

// Raw field read of the table at `index`; pushes the value.
void RawField(lua_State* lua, int index, const char* name) {
  index = AbsIndex(lua, index);
  lua_pushstring(lua, name);
  lua_rawget(lua, index);
}

bool PushReply(lua_State* lua, std::string_view* in) { return PushReplyAt(lua, in, 0); }

void WriteValue(lua_State* lua, ScriptReplyWriter* out, int resp) {
  ReplyConverter(lua, out, resp).Write(0);
}

void PushStringArray(lua_State* lua, absl::Span<const std::string_view> items) {
  lua_createtable(lua, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); i++) {
    lua_pushlstring(lua, items[i].data(), items[i].size());
    lua_rawseti(lua, -2, static_cast<int>(i + 1));
  }
}

}  // namespace damselfly::lua
