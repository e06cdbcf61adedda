// Fuzzes the RDB file loader (RdbLoader over an RdbSource, src/server/rdb_load.h) with a
// whole file given as bytes: header, AUX fields, FUNCTION2 records, SELECTDB and
// RESIZEDB, expiry/IDLE/FREQ opcodes, keys of every type and encoding, EOF and checksum.
// The bytes arrive through a source that returns them in small, varying pieces, as a
// socket or a short file read would, so the loader's buffering is exercised too.
//
// Each file is read three times: keeping every key, keeping none (every value is read
// past, SkipValue) and keeping about half of them. Oracles besides the sanitizers:
//  - every key the loader hands out is dumped (MakeDumpPayload) and that payload must
//    decode again: what damselfly loads, it can write and read back;
//  - skipping checks framing only, a subset of what loading checks: when the file loads
//    whole, the two other reads also reach its end without error, and the third hands
//    out exactly the kept keys of the first.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

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

enum class Keep { kAll, kNone, kEvenLastByte };

bool Kept(Keep keep, std::string_view key) {
  switch (keep) {
    case Keep::kAll:
      return true;
    case Keep::kNone:
      return false;
    case Keep::kEvenLastByte:
      return key.empty() || (key.back() & 1) == 0;
  }
  return true;
}

struct Outcome {
  bool whole = false;  // the end of the file was reached without error
  std::vector<std::string> keys;
};

Outcome Load(std::string_view file, Keep keep) {
  PiecewiseSource source(file);
  damselfly::RdbLoader loader(&source);
  Outcome outcome;
  if (!loader.LoadHeader()) return outcome;
  Check(loader.version() >= 1 && loader.version() <= 10);
  damselfly::RdbEntry entry;
  while (loader.Next(&entry, [keep](std::string_view key) { return Kept(keep, key); })) {
    Check(loader.error().empty() && Kept(keep, entry.key));
    const std::string dumped = damselfly::MakeDumpPayload(entry.value);
    damselfly::PrimeValue again;
    std::string error;
    Check(damselfly::DecodeDumpPayload(dumped, &again, &error));
    outcome.keys.push_back(entry.key);
    entry = damselfly::RdbEntry();
  }
  loader.Aux("redis-ver");
  outcome.whole = loader.error().empty();
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  const Outcome all = Load(file, Keep::kAll);
  const Outcome none = Load(file, Keep::kNone);
  const Outcome half = Load(file, Keep::kEvenLastByte);
  Check(none.keys.empty());
  if (all.whole) {
    Check(none.whole && half.whole);
    std::vector<std::string> kept;
    for (const std::string& key : all.keys) {
      if (Kept(Keep::kEvenLastByte, key)) kept.push_back(key);
    }
    Check(half.keys == kept);
  }
  return 0;
}
