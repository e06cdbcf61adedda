// Command syntax as COMMAND DOCS describes it, from the one-line form of Redis's docs.
//
// A command declares its syntax as a string, e.g. for SET:
//   "key value [NX | XX] [GET] [EX seconds | PX milliseconds | KEEPTTL]"
// Lower-case words are arguments (their type guessed from the name: key, pattern,
// integer, unix-time, string), upper-case words are tokens, "TOKEN name" is a token that
// takes a value, [ ] marks optional parts, | alternatives, ... repetition. ParseSyntax
// turns it into the argument tree COMMAND DOCS replies with, which redis-cli uses for
// its typing hints. Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/facade/reply_builder.h"

namespace damselfly::facade {

struct DocArg {
  std::string name;
  std::string type;   // key, string, integer, pattern, unix-time, pure-token, oneof, block
  std::string token;  // "EX" for "EX seconds"; empty when none
  bool optional = false;
  bool multiple = false;
  std::vector<DocArg> children;  // for oneof and block
};

// REQUIRES: a well-formed syntax string (balanced brackets); checked in debug builds.
std::vector<DocArg> ParseSyntax(std::string_view syntax);

// Writes `args` as COMMAND DOCS's "arguments" array.
void SendDocArgs(const std::vector<DocArg>& args, ReplyBuilder* rb);

}  // namespace damselfly::facade
