// String helpers on std::string_view.
//
// Debian's abseil is built with its own absl::string_view (ABSL_OPTION_USE_STD_STRING_VIEW
// is 0), which std::string_view does not convert to, so absl::StrCat and friends reject
// the views our code passes around. These cover what we need, with the same names.
// Thread-safe: pure functions.
#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace helio {

namespace internal {

// One StrCat argument: a view of text, or an integer formatted into `digits`.
class StrPiece {
 public:
  StrPiece(std::string_view text) : view_(text) {}       // NOLINT: implicit by design
  StrPiece(const std::string& text) : view_(text) {}     // NOLINT
  StrPiece(const char* text) : view_(text) {}            // NOLINT
  StrPiece(char c) : view_(digits_, 1) { digits_[0] = c; }  // NOLINT
  template <typename Int, typename = std::enable_if_t<std::is_integral_v<Int> &&
                                                      !std::is_same_v<Int, char> &&
                                                      !std::is_same_v<Int, bool>>>
  StrPiece(Int value) {  // NOLINT
    auto [end, ec] = std::to_chars(digits_, digits_ + sizeof(digits_), value);
    view_ = std::string_view(digits_, end - digits_);
  }
  StrPiece(const StrPiece&) = delete;
  StrPiece& operator=(const StrPiece&) = delete;

  std::string_view view() const { return view_; }

 private:
  char digits_[24];
  std::string_view view_;
};

}  // namespace internal

// Appends every argument (text or integer) to *out.
inline void StrAppendPieces(std::string* out, std::initializer_list<std::string_view> pieces) {
  size_t size = out->size();
  for (std::string_view piece : pieces) size += piece.size();
  out->reserve(size);
  for (std::string_view piece : pieces) out->append(piece);
}

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  StrAppendPieces(out, {internal::StrPiece(args).view()...});
}

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  StrAppend(&out, args...);
  return out;
}

inline char AsciiToLower(char c) { return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c; }
inline char AsciiToUpper(char c) { return (c >= 'a' && c <= 'z') ? c - ('a' - 'A') : c; }

inline std::string AsciiStrToLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = AsciiToLower(c);
  return out;
}

inline std::string AsciiStrToUpper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = AsciiToUpper(c);
  return out;
}

inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiToLower(a[i]) != AsciiToLower(b[i])) return false;
  }
  return true;
}

// `text` with backslash, double quote and non-printable bytes escaped (\\, \", \xNN):
// binary data made readable for logs and test failure messages.
inline std::string CEscape(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 32 && c < 127) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  return out;
}

// Splits at any of `delimiters`, dropping empty pieces.
inline std::vector<std::string_view> SplitAny(std::string_view text, std::string_view delimiters) {
  std::vector<std::string_view> pieces;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find_first_of(delimiters, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) pieces.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return pieces;
}

// Hash and equality for std::string-keyed maps that are looked up by std::string_view
// without building a std::string.
struct StringViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};
struct StringViewEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const { return a == b; }
};

// Parses the whole of `text` as a decimal integer of type Int (no sign for unsigned
// types, no spaces); false on anything else or overflow.
template <typename Int>
bool SimpleAtoi(std::string_view text, Int* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace helio
