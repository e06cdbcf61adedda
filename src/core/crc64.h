// CRC64 as Redis computes it (src/crc64.c): the Jones polynomial 0xad93d23594c935a9,
// reflected input and output, initial value 0 and no final xor. Redis checks it at the
// end of RDB files and of DUMP / FUNCTION DUMP payloads (stored little endian), so
// damselfly needs the same function to read theirs and write payloads they accept.
//
// Check value: Crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
//
// Thread-safety: pure functions; the table is built at compile time.
#pragma once

#include <cstdint>
#include <string_view>

namespace damselfly::core {

// Extends `crc` (0 to start) with `data`: Crc64(Crc64(0, a), b) == Crc64(0, a + b).
uint64_t Crc64(uint64_t crc, std::string_view data);

// The CRC of a + b from crc_a = Crc64(0, a), crc_b = Crc64(0, b) and b's length, in
// O(log length) 64x64 bit-matrix steps: pieces of a file checksummed by different threads
// combine into the file's CRC in file order.
uint64_t Crc64Combine(uint64_t crc_a, uint64_t crc_b, uint64_t length_b);

}  // namespace damselfly::core
