// Fuzzes RESTORE's payload decoding (DecodeDumpPayload, src/server/rdb_load.h): the
// codec RESTORE runs on the shard thread, without the command around it (no server set
// up per input).
//
// Input: one control byte, then a payload. With the control byte's low bit clear the
// payload is the value bytes only and gets a valid footer (version 10 and the CRC64 of
// the bytes before it), so mutations reach the value decoders instead of stopping at the
// checksum; with it set the payload is taken as it is, footer included.
//
// Oracle besides the sanitizers: a value that decodes is dumped again (MakeDumpPayload,
// what DUMP sends), and that payload must decode too and dump to the same size (the
// second dump may order hash or set elements differently, never change their encoding
// sizes).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "src/core/crc64.h"
#include "src/core/rdb_format.h"
#include "src/server/rdb_load.h"
#include "src/server/rdb_save.h"

namespace {

void Check(bool condition) {
  if (!condition) abort();
}

std::string WithFooter(std::string_view value) {
  std::string payload(value);
  payload.push_back(char(damselfly::core::rdb::kVersion));
  payload.push_back(0);
  const uint64_t crc = damselfly::core::Crc64(0, payload);
  for (int i = 0; i < 8; ++i) payload.push_back(char(crc >> (8 * i)));
  return payload;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string payload = (data[0] & 1) ? std::string(bytes) : WithFooter(bytes);

  damselfly::PrimeValue value;
  std::string error;
  if (!damselfly::DecodeDumpPayload(payload, &value, &error)) {
    Check(error == "ERR DUMP payload version or checksum are wrong" ||
          error == "ERR Bad data format");
    return 0;
  }
  const std::string dumped = damselfly::MakeDumpPayload(value);
  damselfly::PrimeValue again;
  Check(damselfly::DecodeDumpPayload(dumped, &again, &error));
  Check(damselfly::MakeDumpPayload(again).size() == dumped.size());
  return 0;
}
