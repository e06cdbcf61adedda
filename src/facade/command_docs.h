// Command documentation as COMMAND DOCS describes it, kept apart from the registration
// lines: each family's doc table (server/command_docs_table.cc) has one CommandDoc per
// command, merged by name when the command registers (CommandRegistry::Add).
//
// A command declares its syntax as a string, e.g. for SET:
//   "key value [NX | XX] [GET] [EX seconds | PX milliseconds | KEEPTTL]"
// Lower-case words are arguments (their type guessed from the name: key, pattern,
// integer, unix-time, string), upper-case words are tokens, "TOKEN name" is a token that
// takes a value, [ ] marks optional parts, < > required groups, | alternatives, ...
// repetition. ParseSyntax
// turns it into the argument tree COMMAND DOCS replies with, which redis-cli uses for
// its typing hints. Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/facade/reply_builder.h"

namespace damselfly::facade {

// A command's entry, e.g.
//   {"GET", "string", "Get the value of a key", "1.0.0", "key"}
// A subcommand's entry is named "CONTAINER|SUB" and gives only its syntax (its summary,
// since and group are the container's): {.name = "CONFIG|GET", .syntax = "parameter"}.
struct CommandDoc {
  std::string_view name;   // upper case
  std::string_view group;  // "string", "generic", "connection", "server", "transactions"
  std::string_view summary;
  std::string_view since;   // the first Redis version with the command
  std::string_view syntax;  // the arguments after the name (or subcommand), as above
};

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
