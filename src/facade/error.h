// Redis's reply texts for errors that many commands share (without the leading '-').
#pragma once

#include <string_view>

namespace damselfly::facade {

inline constexpr char kSyntaxErr[] = "ERR syntax error";
inline constexpr char kInvalidIntErr[] = "ERR value is not an integer or out of range";
inline constexpr char kInvalidFloatErr[] = "ERR value is not a valid float";
inline constexpr char kIncrOverflowErr[] = "ERR increment or decrement would overflow";
inline constexpr char kWrongTypeErr[] =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr char kNoSuchKeyErr[] = "ERR no such key";
inline constexpr char kDbIndexOutOfRangeErr[] = "ERR DB index is out of range";
// An integer argument that must fit a C int (SELECT, COPY ... DB).
inline constexpr char kIntRangeErr[] =
    "ERR value is out of range, value must between -2147483648 and 2147483647";
// A count that must fit a long without being LONG_MIN (SRANDMEMBER, HRANDFIELD and
// ZRANDMEMBER counts, whose negation must exist).
inline constexpr char kLongRangeErr[] =
    "ERR value is out of range, value must between -9223372036854775807 and "
    "9223372036854775807";
inline constexpr char kNoAuthErr[] = "NOAUTH Authentication required.";
inline constexpr char kOomErr[] = "OOM command not allowed when used memory > 'maxmemory'.";
inline constexpr char kLoadingErr[] = "LOADING Redis is loading the dataset in memory";
inline constexpr char kWrongPassErr[] =
    "WRONGPASS invalid username-password pair or user is disabled.";
inline constexpr char kStringTooLongErr[] =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

// `arg` as Redis shows a client's argument in an error text (printf's %s of a C string):
// the bytes before the first NUL.
inline std::string_view AsCString(std::string_view arg) { return arg.substr(0, arg.find('\0')); }

}  // namespace damselfly::facade
