// LZF: the byte-oriented LZ77 format of liblzf, the one Redis writes for compressed
// strings in RDB files. damselfly uses it in two places: snapshots (to read and write
// Redis's compressed RDB strings) and memory (CompactObj keeps a large value compressed
// when that puts it in a smaller allocation size class).
//
// The stream is a sequence of runs, each opened by a control byte c:
//   c < 32   literal run: the next c + 1 bytes are output as they are;
//   c >= 32  back reference: n = c >> 5 (1..7); when n == 7 the next byte is added to n;
//            then one byte `low`; output n + 2 bytes copied from distance
//            ((c & 31) << 8 | low) + 1 back in the output. The copy may overlap the bytes
//            it produces (distance 1 repeats one byte).
// So literal runs are 1..32 bytes, references 3..264 bytes long and 1..8192 bytes back.
// The stream does not record the decompressed length; callers store it.
//
// Any valid stream decompresses the same way whichever compressor wrote it; the
// compressor here is our own (a hash of 3 bytes per position, greedy matching). Its
// output is a pure function of the input: CompactObj relies on that to compare stored
// forms byte for byte.
//
// Thread-safe: the compressor uses a thread_local hash table.
#pragma once

#include <cstddef>
#include <cstdint>

namespace damselfly::core {

// Compresses src[0, len) into dst[0, capacity). Returns the compressed length, or 0 when
// the stream would not fit in `capacity` bytes (it stops as soon as it knows), when the
// first 64 bytes hold no repeat at all, and for len == 0. The second rule bounds the
// cost of incompressible input: random, encrypted or already compressed data shows that
// it does not repeat itself that early, and going on would cost a hash probe per byte for
// nothing. Cost otherwise: up to one probe per input byte outside matches.
// REQUIRES: len < 2^32.
size_t LzfCompress(const void* src, size_t len, void* dst, size_t capacity);

// Decompresses the stream src[0, len) into dst[0, out_len). Returns true when the stream
// is well formed and produces exactly out_len bytes; false otherwise (truncated run,
// reference before the start, output longer or shorter than out_len). Never reads or
// writes outside the two ranges, whatever the input; on false, dst holds garbage.
bool LzfDecompress(const void* src, size_t len, void* dst, size_t out_len);

}  // namespace damselfly::core
