// Redis's one-line argument syntax, shared by its configuration file, the AOF manifest and
// redis-cli: words separated by blanks; "..." takes C escapes (\n \r \t \b \a \xHH, and a
// backslash before any other character stands for it); '...' takes \' only. A quote may
// start inside a word (foo"bar baz" is one word, as in Redis's sdssplitargs); a closing
// quote must be followed by a blank or the end. Writing quotes as sdscatrepr does.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace damselfly::core {

// Appends the words of `line` to `words`; false on an unbalanced quote or a closing
// quote followed by something else than a blank.
bool SplitRedisArgs(std::string_view line, std::vector<std::string>* words);

// "..." with the escapes sdscatrepr writes; SplitRedisArgs reads it back.
std::string QuoteRedisArg(std::string_view arg);
// `arg` as it is when SplitRedisArgs reads it back as one word, else quoted.
std::string QuoteRedisArgIfNeeded(std::string_view arg);

// `s` without blanks (space, tab, CR, LF) at either end.
std::string_view TrimBlanks(std::string_view s);

}  // namespace damselfly::core
