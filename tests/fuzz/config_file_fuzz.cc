// Fuzzes Redis's configuration-file text (src/core/redis_args.h, config_file.h,
// config_rewrite.h): the argument syntax every line is split with, and CONFIG REWRITE's
// rewrite of a file the input stands for.
//
// Input: the text of a configuration file.
//
// Oracles besides the sanitizers:
//  - every line's words, quoted as CONFIG REWRITE quotes them, split back into the same
//    words;
//  - ParseConfigText reads the lines SplitRedisArgs accepts, until the first it refuses
//    ("include" lines are left out: they would read the machine's files);
//  - a rewrite of the rewritten text changes nothing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/config_file.h"
#include "src/core/config_rewrite.h"
#include "src/core/redis_args.h"

namespace {

using damselfly::core::ConfigDirective;
using damselfly::core::ConfigError;
using damselfly::core::RewrittenOption;

void Check(bool condition) {
  if (!condition) abort();
}

std::string Canonical(std::string_view name) {
  if (name == "slaveof") return "replicaof";
  if (name == "hz" || name == "save" || name == "maxmemory" || name == "replicaof" ||
      name == "client-output-buffer-limit" || name == "dir") {
    return std::string(name);
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string without_includes;
  size_t accepted_lines = 0;
  bool refused = false;
  for (size_t start = 0; start <= input.size();) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    const std::string_view line = input.substr(start, end - start);
    start = end + 1;
    std::vector<std::string> words;
    const std::string_view trimmed = damselfly::core::TrimBlanks(line);
    const bool split = damselfly::core::SplitRedisArgs(trimmed, &words);
    if (split) {
      std::string quoted;
      for (const std::string& word : words) {
        quoted += damselfly::core::QuoteRedisArgIfNeeded(word) + " ";
      }
      std::vector<std::string> again;
      Check(damselfly::core::SplitRedisArgs(quoted, &again));
      Check(again == words);
    }
    std::string lower = words.empty() ? "" : words[0];
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (split && lower == "include") continue;
    without_includes += std::string(line) + "\n";
    if (refused || trimmed.empty() || trimmed[0] == '#') continue;
    if (!split) {
      refused = true;
    } else if (!words.empty()) {
      ++accepted_lines;
    }
  }
  std::vector<ConfigDirective> directives;
  ConfigError error;
  const bool parsed = damselfly::core::ParseConfigText(without_includes, &directives, &error);
  Check(parsed == !refused);
  Check(directives.size() == accepted_lines);

  const std::vector<RewrittenOption> options = {
      {"hz", {{"hz 20", true}}},
      {"save", {{"save 900 1", true}, {"save 60 100", true}}},
      {"maxmemory", {{"maxmemory 1mb", false}}},
      {"replicaof", {}},
      {"client-output-buffer-limit",
       {{"client-output-buffer-limit normal 0 0 0", false},
        {"client-output-buffer-limit pubsub 1mb 0 0", true},
        {"client-output-buffer-limit replica 256mb 64mb 60", false}}},
      {"dir", {{"dir \"/data\"", true}}},
  };
  const std::string once = damselfly::core::RewriteConfigText(input, options, Canonical);
  Check(damselfly::core::RewriteConfigText(once, options, Canonical) == once);
  return 0;
}
