#include "src/core/ascii_pack.h"

#include "src/core/ascii_pack_loops.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace damselfly::core {

// Defined in ascii_pack_bmi2.cc, which is compiled with -mbmi2.
void AsciiPackBmi2(const char* src, size_t len, uint8_t* dst);
void AsciiUnpackBmi2(const uint8_t* src, size_t len, char* dst);

namespace {

bool DetectFastBmi2() {
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("bmi2")) return false;
  if (!__builtin_cpu_is("amd")) return true;
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  unsigned family = (eax >> 8) & 0xf;
  if (family == 0xf) family += (eax >> 20) & 0xff;
  return family >= 0x19;  // Zen 3 and later run pext/pdep in hardware
#else
  return false;
#endif
}

bool use_bmi2 = DetectFastBmi2();

}  // namespace

bool AsciiPackUsesBmi2() { return use_bmi2; }
void ForceAsciiPackPortable(bool portable) { use_bmi2 = !portable && DetectFastBmi2(); }

void AsciiPack(const char* src, size_t len, uint8_t* dst) {
  if (use_bmi2) return AsciiPackBmi2(src, len, dst);
  PackLoop<PortableGroups>(src, len, dst);
}

void AsciiUnpack(const uint8_t* src, size_t len, char* dst) {
  if (use_bmi2) return AsciiUnpackBmi2(src, len, dst);
  UnpackLoop<PortableGroups>(src, len, dst);
}

}  // namespace damselfly::core
