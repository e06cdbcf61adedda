// Fuzzes the RDB file loader (RdbLoader over an RdbSource, src/server/rdb_load.h) with a
// whole file given as bytes: header, AUX fields, FUNCTION2 records, SELECTDB and
// RESIZEDB, expiry/IDLE/FREQ opcodes, keys of every type and encoding, EOF and checksum.
// The bytes arrive through a source that returns them in small, varying pieces, as a
// socket or a short file read would, so the loader's buffering is exercised too.
//
// Oracle besides the sanitizers: every key the loader hands out is dumped
// (MakeDumpPayload) and that payload must decode again: what damselfly loads, it can
// write and read back.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "src/server/rdb_load.h"
#include "src/server/rdb_save.h"

namespace {

void Check(bool condition) {
  if (!condition) abort();
}

// Hands out the input in pieces of 1 to 4096 bytes, the sizes cycling with the input.
class PiecewiseSource : public damselfly::RdbSource {
 public:
  explicit PiecewiseSource(std::string_view data) : data_(data) {}

  size_t Read(char* dst, size_t n) override {
    const size_t piece = 1 + (reads_++ * 977 + data_.size()) % 4096;
    const size_t count = std::min({n, piece, data_.size()});
    memcpy(dst, data_.data(), count);
    data_.remove_prefix(count);
    return count;
  }

 private:
  std::string_view data_;
  size_t reads_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  PiecewiseSource source(std::string_view(reinterpret_cast<const char*>(data), size));
  damselfly::RdbLoader loader(&source);
  if (!loader.LoadHeader()) return 0;
  Check(loader.version() >= 1 && loader.version() <= 10);
  damselfly::RdbEntry entry;
  while (loader.Next(&entry)) {
    Check(loader.error().empty());
    const std::string dumped = damselfly::MakeDumpPayload(entry.value);
    damselfly::PrimeValue again;
    std::string error;
    Check(damselfly::DecodeDumpPayload(dumped, &again, &error));
    entry = damselfly::RdbEntry();
  }
  loader.Aux("redis-ver");
  return 0;
}
