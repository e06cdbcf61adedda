// LzfImage: bytes kept LZF-compressed (core/lzf.h) in one ObjMalloc block, as Redis's
// quicklist keeps its nodes and damselfly's quicklist and stream keep theirs. The block
// is: the raw length u32, the LZF stream's length u32, the LZF stream. RDB and DUMP write
// the stream as it is (an RDB_ENC_LZF string), so it is kept whole and exposed.
// Compression must pay, by Redis's quicklist rules (MIN_COMPRESS_BYTES/IMPROVE): inputs
// under 48 bytes stay plain, and an image must be at least 8 bytes smaller.
//
// Thread-safety: images are plain memory, owned by their caller; the functions use a
// thread_local scratch buffer, so any thread may call them.
#pragma once

#include <cstdint>
#include <string_view>

namespace damselfly::core {

// The image of `raw`, or nullptr when compressing it does not pay. Free with FreeLzfImage.
uint8_t* MakeLzfImage(std::string_view raw);
void FreeLzfImage(uint8_t* image);

// The length of the bytes an image holds.
uint32_t LzfImageRawSize(const uint8_t* image);
// The image's LZF stream.
std::string_view LzfImageStream(const uint8_t* image);
// The bytes an image holds, decompressed into this thread's scratch buffer: valid until
// the next MakeLzfImage or DecompressLzfImage on this thread.
std::string_view DecompressLzfImage(const uint8_t* image);

}  // namespace damselfly::core
