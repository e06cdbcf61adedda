// A Redis configuration file (redis.conf): one directive per line, its name then its
// arguments in Redis's argument syntax (redis_args.h). Blank lines and lines starting
// with '#' are skipped; `include PATH` reads another file in its place, a glob pattern
// every file it matches in name order, relative paths from the working directory, as in
// Redis 7.0. What the directives mean is the server's business (startup_config.h).
//
// Thread-safety: pure functions over files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace damselfly::core {

struct ConfigDirective {
  std::vector<std::string> args;  // never empty; args[0], the name, lowercased
  std::string line;               // as written, trimmed: for error messages
  int line_number = 0;            // in its file, from 1
};

// Why a configuration could not be read, in the parts of Redis's fatal error block.
struct ConfigError {
  int line_number = 0;  // 0: not about one line (a file that cannot be opened)
  std::string line;
  std::string reason;
};

// Appends the directives of `text` to `out`; `include` lines are read in place. False,
// with `error` set, on an unbalanced quote or an included file that cannot be read.
bool ParseConfigText(std::string_view text, std::vector<ConfigDirective>* out,
                     ConfigError* error);

// Reads the file at `path` ("-": standard input) as ParseConfigText. A file that cannot
// be opened is Redis's "Fatal error, can't open config file '<absolute path>': <reason>".
// `line_count`, if given, gets the number of lines Redis counts in the file, after which
// it numbers the command line's options.
bool ReadConfigFile(const std::string& path, std::vector<ConfigDirective>* out,
                    ConfigError* error, int* line_count = nullptr);

}  // namespace damselfly::core
