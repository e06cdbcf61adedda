#include "src/core/glob_matcher.h"

#include <cctype>
#include <cstddef>

namespace damselfly::core {

namespace {

unsigned char Fold(unsigned char c, bool nocase) { return nocase ? std::tolower(c) : c; }

// Matches `c` against the set that starts after '[' at pattern[*pos]; leaves *pos on the
// closing ']' (or the pattern's end for an unterminated set, which Redis accepts).
bool MatchSet(std::string_view pattern, size_t* pos, unsigned char c, bool nocase) {
  size_t i = *pos;
  bool negate = i < pattern.size() && pattern[i] == '^';  // only '^', as in Redis
  if (negate) ++i;
  bool matched = false;
  c = Fold(c, nocase);
  while (i < pattern.size() && pattern[i] != ']') {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      ++i;
      matched |= Fold(pattern[i], nocase) == c;
    } else if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      unsigned char lo = Fold(pattern[i], nocase), hi = Fold(pattern[i + 2], nocase);
      if (lo > hi) std::swap(lo, hi);
      matched |= c >= lo && c <= hi;
      i += 2;
    } else {
      matched |= Fold(pattern[i], nocase) == c;
    }
    ++i;
  }
  *pos = i;
  return matched != negate;
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view subject, bool nocase) {
  size_t p = 0, s = 0;
  size_t star_p = std::string_view::npos, star_s = 0;  // where to resume after a '*'
  while (s < subject.size()) {
    if (p < pattern.size()) {
      char pc = pattern[p];
      if (pc == '*') {
        while (p < pattern.size() && pattern[p] == '*') ++p;
        if (p == pattern.size()) return true;
        star_p = p;
        star_s = s;
        continue;
      }
      bool ok;
      size_t next = p + 1;
      if (pc == '?') {
        ok = true;
      } else if (pc == '[') {
        size_t set_end = p + 1;
        ok = MatchSet(pattern, &set_end, subject[s], nocase);
        next = set_end < pattern.size() ? set_end + 1 : set_end;
      } else if (pc == '\\' && p + 1 < pattern.size()) {
        ok = Fold(pattern[p + 1], nocase) == Fold(subject[s], nocase);
        next = p + 2;
      } else {
        ok = Fold(pc, nocase) == Fold(subject[s], nocase);
      }
      if (ok) {
        p = next;
        ++s;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;  // let the last '*' swallow one more byte
    s = ++star_s;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace damselfly::core
