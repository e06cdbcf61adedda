#include "src/core/config_file.h"

#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "src/core/redis_args.h"

namespace damselfly::core {

namespace {

constexpr int kMaxIncludeDepth = 16;  // include loops end here rather than in a crash

bool ParseAt(std::string_view text, int depth, std::vector<ConfigDirective>* out,
             ConfigError* error);

bool ReadAt(const std::string& path, int depth, std::vector<ConfigDirective>* out,
            ConfigError* error, int* line_count = nullptr) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      const int err = errno;
      std::string shown = path;
      if (!path.empty() && path[0] != '/') {
        char cwd[4096];
        if (getcwd(cwd, sizeof(cwd))) shown = std::string(cwd) + "/" + path;
      }
      *error = {0, "", "Fatal error, can't open config file '" + shown + "': " + strerror(err)};
      return false;
    }
    std::ostringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  }
  if (line_count) {
    // Redis counts the file's newlines, plus one for a last line without one.
    *line_count = int(std::count(text.begin(), text.end(), '\n'));
    if (!text.empty() && text.back() != '\n') ++*line_count;
  }
  return ParseAt(text, depth, out, error);
}

// `include PATTERN`: every file the glob matches (a plain path matches itself).
bool Include(const ConfigDirective& directive, int depth, std::vector<ConfigDirective>* out,
             ConfigError* error) {
  if (depth >= kMaxIncludeDepth) {
    *error = {directive.line_number, directive.line, "Too many nested includes"};
    return false;
  }
  const std::string& pattern = directive.args[1];
  if (pattern.find_first_of("*?[") == std::string::npos) {
    return ReadAt(pattern, depth + 1, out, error);
  }
  glob_t matches{};
  const int rc = glob(pattern.c_str(), 0, nullptr, &matches);  // matching nothing is fine
  std::vector<std::string> paths(matches.gl_pathv, matches.gl_pathv + matches.gl_pathc);
  globfree(&matches);
  if (rc != 0 && rc != GLOB_NOMATCH) {
    *error = {directive.line_number, directive.line, "Failed to read the included files"};
    return false;
  }
  std::sort(paths.begin(), paths.end());
  for (const std::string& path : paths) {
    if (!ReadAt(path, depth + 1, out, error)) return false;
  }
  return true;
}

bool ParseAt(std::string_view text, int depth, std::vector<ConfigDirective>* out,
             ConfigError* error) {
  int line_number = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view raw = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++line_number;
    std::string_view line = TrimBlanks(raw);
    if (line.empty() || line[0] == '#') continue;
    ConfigDirective directive;
    directive.line = std::string(line);
    directive.line_number = line_number;
    if (!SplitRedisArgs(line, &directive.args)) {
      *error = {line_number, directive.line, "Unbalanced quotes in configuration line"};
      return false;
    }
    if (directive.args.empty()) continue;
    std::transform(directive.args[0].begin(), directive.args[0].end(), directive.args[0].begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    if (directive.args[0] == "include") {
      if (directive.args.size() != 2) {
        *error = {line_number, directive.line, "Bad directive or wrong number of arguments"};
        return false;
      }
      if (!Include(directive, depth, out, error)) return false;
      continue;
    }
    out->push_back(std::move(directive));
  }
  return true;
}

}  // namespace

bool ParseConfigText(std::string_view text, std::vector<ConfigDirective>* out,
                     ConfigError* error) {
  return ParseAt(text, 0, out, error);
}

bool ReadConfigFile(const std::string& path, std::vector<ConfigDirective>* out,
                    ConfigError* error, int* line_count) {
  return ReadAt(path, 0, out, error, line_count);
}

}  // namespace damselfly::core
