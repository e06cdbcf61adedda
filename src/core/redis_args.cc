#include "src/core/redis_args.h"

#include <cctype>

namespace damselfly::core {

namespace {

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)); }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = char(std::tolower(static_cast<unsigned char>(c)));
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

char Unescaped(char c) {
  switch (c) {
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'b': return '\b';
    case 'a': return '\a';
    default: return c;
  }
}

}  // namespace

bool SplitRedisArgs(std::string_view line, std::vector<std::string>* words) {
  size_t i = 0;
  const size_t n = line.size();
  auto at = [&](size_t k) { return k < n ? line[k] : '\0'; };
  while (true) {
    while (i < n && IsSpace(line[i])) ++i;
    if (i == n) return true;
    std::string word;
    char quote = 0;  // the quote we are inside, if any
    while (true) {
      if (i == n) {
        if (quote) return false;
        break;
      }
      const char c = line[i];
      if (quote != 0) {
        if (quote == '"' && c == '\\' && at(i + 1) == 'x' && HexValue(at(i + 2)) >= 0 &&
            HexValue(at(i + 3)) >= 0) {
          word += char(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3]));
          i += 4;
        } else if (quote == '"' && c == '\\' && i + 1 < n) {
          word += Unescaped(line[i + 1]);
          i += 2;
        } else if (quote == '\'' && c == '\\' && at(i + 1) == '\'') {
          word += '\'';
          i += 2;
        } else if (c == quote) {
          if (i + 1 < n && !IsSpace(line[i + 1])) return false;
          ++i;
          break;
        } else {
          word += c;
          ++i;
        }
      } else if (IsSpace(c)) {
        break;
      } else {
        if (c == '"' || c == '\'') {
          quote = c;
        } else {
          word += c;
        }
        ++i;
      }
    }
    words->push_back(std::move(word));
  }
}

std::string QuoteRedisArg(std::string_view arg) {
  std::string out = "\"";
  for (unsigned char c : arg) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      default:
        if (std::isprint(c)) {
          out += char(c);
        } else {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        }
    }
  }
  return out + "\"";
}

std::string QuoteRedisArgIfNeeded(std::string_view arg) {
  bool plain = !arg.empty();
  for (unsigned char c : arg) {
    if (c == '\\' || c == '"' || c == '\'' || !std::isprint(c) || std::isspace(c)) plain = false;
  }
  return plain ? std::string(arg) : QuoteRedisArg(arg);
}

std::string_view TrimBlanks(std::string_view s) {
  constexpr std::string_view kBlanks = " \t\r\n";
  while (!s.empty() && kBlanks.find(s.front()) != std::string_view::npos) s.remove_prefix(1);
  while (!s.empty() && kBlanks.find(s.back()) != std::string_view::npos) s.remove_suffix(1);
  return s;
}

}  // namespace damselfly::core
