#include "src/core/config_rewrite.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <unordered_map>

#include "src/core/redis_args.h"

namespace damselfly::core {

std::string RewriteConfigText(std::string_view old_text,
                              const std::vector<RewrittenOption>& options,
                              const std::function<std::string(std::string_view)>& canonical_name) {
  std::vector<std::optional<std::string>> lines;  // nullopt: dropped
  std::unordered_map<std::string, std::deque<size_t>> option_lines;
  bool has_signature = false;
  while (!old_text.empty()) {
    const size_t newline = old_text.find('\n');
    std::string_view line = TrimBlanks(old_text.substr(0, newline));
    old_text.remove_prefix(newline == std::string_view::npos ? old_text.size() : newline + 1);
    if (line == kConfigRewriteSignature) {
      has_signature = true;  // what follows was generated: it stays where it is
      lines.emplace_back(std::string(line));
      continue;
    }
    std::vector<std::string> args;
    if (!line.empty() && line[0] != '#' && SplitRedisArgs(line, &args) && !args.empty()) {
      std::transform(args[0].begin(), args[0].end(), args[0].begin(),
                     [](unsigned char c) { return char(std::tolower(c)); });
      std::string name = canonical_name(args[0]);
      if (!name.empty()) option_lines[name].push_back(lines.size());
    }
    lines.emplace_back(std::string(line));
  }

  std::vector<std::string> appended;
  for (const RewrittenOption& option : options) {
    std::deque<size_t>* old_lines = nullptr;
    if (auto it = option_lines.find(option.name); it != option_lines.end()) {
      old_lines = &it->second;
    }
    size_t forced_left = 0;
    for (const RewrittenOption::Line& line : option.lines) forced_left += line.force;
    for (const RewrittenOption::Line& line : option.lines) {
      // A line that need not be written takes an old line only when one is left over for
      // each forced line after it, so that a second rewrite changes nothing (Redis lets
      // "client-output-buffer-limit normal 0 0 0" take the line of a changed class).
      const size_t old_left = old_lines ? old_lines->size() : 0;
      if (line.force ? old_left > 0 : old_left > forced_left) {
        lines[old_lines->front()] = line.text;
        old_lines->pop_front();
      } else if (line.force) {
        appended.push_back(line.text);
      }
      forced_left -= line.force;
    }
    if (old_lines) {
      for (size_t index : *old_lines) lines[index].reset();  // the option has fewer lines now
      old_lines->clear();
    }
  }
  std::string out;
  for (const std::optional<std::string>& line : lines) {
    if (line) out += *line + "\n";
  }
  if (!appended.empty()) {
    if (!has_signature) {
      if (!out.empty() && out.size() >= 2 && out[out.size() - 2] != '\n') out += "\n";
      out += std::string(kConfigRewriteSignature) + "\n";
    }
    for (const std::string& line : appended) out += line + "\n";
  }
  return out;
}

}  // namespace damselfly::core
