// The BMI2 instantiation of the packing loops; this file alone is compiled with -mbmi2
// and runs only where ascii_pack.cc found pext/pdep in hardware.
#include <immintrin.h>

#include "src/core/ascii_pack_loops.h"

namespace damselfly::core {

namespace {

struct Bmi2Groups {
  static constexpr uint64_t kLowSevenBits = 0x7f7f7f7f7f7f7f7fULL;
  static uint64_t Pack(uint64_t chars) { return _pext_u64(chars, kLowSevenBits); }
  static uint64_t Unpack(uint64_t packed) {
    return _pdep_u64(packed & ((uint64_t{1} << 56) - 1), kLowSevenBits);
  }
};

}  // namespace

void AsciiPackBmi2(const char* src, size_t len, uint8_t* dst) {
  PackLoop<Bmi2Groups>(src, len, dst);
}

void AsciiUnpackBmi2(const uint8_t* src, size_t len, char* dst) {
  UnpackLoop<Bmi2Groups>(src, len, dst);
}

}  // namespace damselfly::core
