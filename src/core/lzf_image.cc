#include "src/core/lzf_image.h"

#include <cassert>
#include <cstring>
#include <string>

#include "src/core/lzf.h"
#include "src/core/obj_malloc.h"

namespace damselfly::core {
namespace {

constexpr size_t kMinCompressBytes = 48;
constexpr size_t kMinCompressGain = 8;
constexpr size_t kHeader = 8;  // the two u32 lengths

uint32_t ReadU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

void WriteU32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

thread_local std::string scratch;

}  // namespace

uint8_t* MakeLzfImage(std::string_view raw) {
  if (raw.size() < kMinCompressBytes) return nullptr;
  scratch.resize(raw.size());
  const size_t len =
      LzfCompress(raw.data(), raw.size(), scratch.data(), raw.size() - kMinCompressGain);
  if (len == 0) return nullptr;
  auto* image = static_cast<uint8_t*>(ObjMalloc(kHeader + len));
  WriteU32(image, uint32_t(raw.size()));
  WriteU32(image + 4, uint32_t(len));
  std::memcpy(image + kHeader, scratch.data(), len);
  return image;
}

void FreeLzfImage(uint8_t* image) { ObjFree(image); }

uint32_t LzfImageRawSize(const uint8_t* image) { return ReadU32(image); }

std::string_view LzfImageStream(const uint8_t* image) {
  return {reinterpret_cast<const char*>(image) + kHeader, ReadU32(image + 4)};
}

std::string_view DecompressLzfImage(const uint8_t* image) {
  const uint32_t raw = ReadU32(image);
  scratch.resize(raw);
  const std::string_view stream = LzfImageStream(image);
  const bool ok = LzfDecompress(stream.data(), stream.size(), scratch.data(), raw);
  assert(ok);  // images are made here, from whole inputs
  (void)ok;
  return scratch;
}

}  // namespace damselfly::core
