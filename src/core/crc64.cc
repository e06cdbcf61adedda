#include "src/core/crc64.h"

#include <array>

namespace damselfly::core {
namespace {

// The polynomial with its bits reversed, for the reflected (LSB-first) form.
constexpr uint64_t kReflectedPoly = 0x95ac9329ac4bc9b5ULL;

// One byte at a time through a 256-entry table: Redis itself uses a sliced 8-table
// variant, but the payloads checked here are small and rare (DUMP, RESTORE, snapshots
// are read once), so 2 KiB of table is enough.
constexpr std::array<uint64_t, 256> MakeTable() {
  std::array<uint64_t, 256> table{};
  for (uint64_t byte = 0; byte < 256; ++byte) {
    uint64_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ kReflectedPoly : crc >> 1;
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<uint64_t, 256> kTable = MakeTable();

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view data) {
  for (unsigned char c : data) crc = kTable[(crc ^ c) & 0xff] ^ (crc >> 8);
  return crc;
}

}  // namespace damselfly::core
