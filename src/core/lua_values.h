// Values between Lua and Redis's protocol, with Redis 7.0's rules, for the Interpreter:
// a command's reply (RESP2 or RESP3 bytes) becomes Lua values for redis.call, and a
// script's result goes to a ScriptReplyWriter. Also the small stack helpers the
// interpreter's files share. None of these raise a Lua error.
//
// Thread-safety: as Lua's own: one lua_State per thread.
#pragma once

#include <string>
#include <string_view>

#include "absl/types/span.h"
#include "src/core/interpreter.h"

struct lua_State;

namespace damselfly::lua {

// `index` as a positive stack index (pseudo-indices unchanged).
int AbsIndex(lua_State* lua, int index);
// The string (or number, converted in place) at `index`; empty for other types.
std::string_view ToView(lua_State* lua, int index);
// `text` with CR and LF as spaces, as Redis writes status and error lines (copied into
// *scratch only when it has any).
std::string_view OneLine(std::string_view text, std::string* scratch);
// Pushes t[name] of the table at `index`, without metamethods.
void RawField(lua_State* lua, int index, const char* name);

// Pushes Redis's error table {err="CODE message"}. `text` is "-CODE message" (the code
// is the first word) or a message that gets the code ERR; CR/LF around it are dropped.
void PushErrorTable(lua_State* lua, std::string_view text);
// Whether the error table at `index` holds a command's error reply (PushReply marks it
// ignore_error_stats_update, as Redis does): the server counted it already.
bool IsCommandError(lua_State* lua, int index);

// Pushes the Lua value of the reply at the front of *in and consumes it: integer ->
// number, bulk -> string, nil bulk/array -> false, array -> table, status -> {ok=},
// error -> {err=, ignore_error_stats_update=true}; RESP3: null -> nil, map -> {map=}, set -> {set=}, double ->
// {double=}, boolean, big number -> {big_number=}, verbatim -> {verbatim_string=};
// attributes are skipped. False on a malformed or too deeply nested reply (nothing
// pushed).
bool PushReply(lua_State* lua, std::string_view* in);

// Writes the value on top of the stack to *out and pops it: number -> integer
// (truncated), string -> bulk, true -> 1 (or a boolean when the script chose `resp` 3),
// false and nil -> nil, tables -> error, status, double, big number, verbatim, map, set
// or an array that stops at the first nil; nesting past the limit writes Redis's
// "reached lua stack limit" error in place.
void WriteValue(lua_State* lua, ScriptReplyWriter* out, int resp);

// Pushes {items[0], items[1], ...} (KEYS, ARGV).
void PushStringArray(lua_State* lua, absl::Span<const std::string_view> items);

}  // namespace damselfly::lua
