#include "src/facade/memcache_auth.h"

#include <cstdint>
#include <optional>

namespace damselfly::facade {

namespace {

constexpr size_t kMaxLineBytes = 2048;    // memcached's cut-off for a line without '\n'
constexpr size_t kMaxBlockBytes = 16384;  // memcached's read buffer, "\r\n" included

using Kind = MemcacheAuthStep::Kind;

// The next space-separated word of `*text` (memcached's tokenizer: runs of spaces are
// one separator; other whitespace belongs to words); empty at the end.
std::string_view NextWord(std::string_view* text) {
  size_t start = text->find_first_not_of(' ');
  if (start == std::string_view::npos) {
    *text = {};
    return {};
  }
  text->remove_prefix(start);
  size_t end = text->find(' ');
  std::string_view word = text->substr(0, end);
  text->remove_prefix(end == std::string_view::npos ? text->size() : end);
  return word;
}

// A decimal 32-bit unsigned number, nothing else.
std::optional<uint32_t> ParseU32(std::string_view word) {
  if (word.empty() || word.size() > 10) return std::nullopt;
  uint64_t value = 0;
  for (char c : word) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + uint64_t(c - '0');
  }
  if (value > UINT32_MAX) return std::nullopt;
  return uint32_t(value);
}

}  // namespace

MemcacheAuthStep ParseMemcacheAuth(std::string_view input, std::string_view password) {
  size_t newline = input.find('\n');
  if (newline == std::string_view::npos) {
    return {.kind = input.size() > kMaxLineBytes ? Kind::kClose : Kind::kNeedMore};
  }
  std::string_view line = input.substr(0, newline);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const size_t line_bytes = newline + 1;

  // set <key> <flags> <exptime> <bytes> [noreply]: only <bytes> matters.
  std::string_view rest = line;
  std::string_view words[5];
  for (std::string_view& word : words) word = NextWord(&rest);
  std::optional<uint32_t> bytes = ParseU32(words[4]);
  if (words[0] != "set" || !bytes) {
    return {.kind = Kind::kReply, .consumed = line_bytes, .reply = "CLIENT_ERROR unauthenticated"};
  }
  const size_t block_bytes = size_t(*bytes) + 2;
  if (block_bytes > kMaxBlockBytes) return {.kind = Kind::kClose};
  if (input.size() < line_bytes + block_bytes) return {.kind = Kind::kNeedMore};

  MemcacheAuthStep step{.kind = Kind::kReply, .consumed = line_bytes + block_bytes};
  std::string_view block = input.substr(line_bytes, block_bytes);
  if (block.substr(*bytes) != "\r\n") {
    step.reply = "CLIENT_ERROR bad command line termination";
    return step;
  }
  std::string_view credentials = block.substr(0, *bytes);
  std::string_view user = NextWord(&credentials);
  std::string_view pass = NextWord(&credentials);
  if (pass.empty()) {
    step.reply = "CLIENT_ERROR bad authentication token format";
    return step;
  }
  step.attempt = true;
  if (user == "default" && pass == password) {
    step.kind = Kind::kAuthenticated;
    step.reply = "STORED";
  } else {
    step.reply = "CLIENT_ERROR authentication failure";
  }
  return step;
}

}  // namespace damselfly::facade
