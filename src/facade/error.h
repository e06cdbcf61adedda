// Redis's reply texts for errors that many commands share (without the leading '-').
#pragma once

namespace damselfly::facade {

inline constexpr char kSyntaxErr[] = "ERR syntax error";
inline constexpr char kInvalidIntErr[] = "ERR value is not an integer or out of range";
inline constexpr char kInvalidFloatErr[] = "ERR value is not a valid float";
inline constexpr char kIncrOverflowErr[] = "ERR increment or decrement would overflow";
inline constexpr char kWrongTypeErr[] =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr char kNoSuchKeyErr[] = "ERR no such key";
inline constexpr char kDbIndexOutOfRangeErr[] = "ERR DB index is out of range";
inline constexpr char kNoAuthErr[] = "NOAUTH Authentication required.";
inline constexpr char kOomErr[] = "OOM command not allowed when used memory > 'maxmemory'.";
inline constexpr char kWrongPassErr[] =
    "WRONGPASS invalid username-password pair or user is disabled.";
inline constexpr char kStringTooLongErr[] =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

}  // namespace damselfly::facade
