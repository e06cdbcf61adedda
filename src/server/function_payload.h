// FUNCTION DUMP / RESTORE payloads in Redis 7.0's format, so that payloads move between
// redis-server and damselfly both ways:
//
//   for each library: RDB_OPCODE_FUNCTION2 (245), the library's code as an RDB string
//   then: the RDB version (10), 2 bytes little endian
//         the CRC64 (src/core/crc64.h) of everything before it, 8 bytes little endian
//
// RDB strings are written as Redis writes them with rdbcompression on (its default): LZF
// when that saves more than 4 bytes of a string over 20 bytes, else raw with its length;
// they are read in every encoding Redis writes (raw, LZF, the integer forms). The
// libraries of Redis 7.0's release candidates (opcode 246: name, engine, description,
// code) are read too, as Redis 7.0 does, and given back as the code FUNCTION LOAD takes.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"

namespace damselfly {

// The payload of the libraries whose codes (shebang included) are `codes`.
std::string DumpFunctionPayload(absl::Span<const std::string_view> codes);

// Checks the payload's version and checksum and calls `library` with each library's code
// in order, stopping at the first that returns false (with *error set). False with Redis's
// error text ("ERR DUMP payload version or checksum are wrong", "ERR given type is not a
// function", "ERR Failed loading library payload", ...) when the payload is wrong.
bool ReadFunctionPayload(std::string_view payload,
                         absl::FunctionRef<bool(std::string code, std::string* error)> library,
                         std::string* error);

}  // namespace damselfly
