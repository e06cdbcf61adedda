// HyperLogLog in Redis 7.0's exact byte format, so that a value moves between redis-server
// and damselfly (GET/SET, DUMP/RESTORE, RDB) and PFCOUNT gives Redis's estimate for the
// same elements.
//
// The format (a string value):
//
//   byte 0..3   "HYLL"
//   byte 4      encoding: 0 dense, 1 sparse
//   byte 5..7   unused, zero
//   byte 8..15  the cached cardinality, little-endian; the top bit of byte 15 set means
//               "stale" (any change sets it, PFCOUNT of one key recomputes and clears it)
//   byte 16..   the registers: 16384 of them, each the longest run of zero bits (plus one)
//               seen among the hashes that select it.
//
// - dense: 16384 6-bit registers packed from the lowest bit of byte 16 upwards (register
//   i is bits [6i, 6i + 6) of the little-endian bit string): 12304 bytes in all.
// - sparse: run-length opcodes: ZERO 00xxxxxx (1..64 zero registers), XZERO 01xxxxxx
//   yyyyyyyy (1..16384 zero registers, 14-bit length), VAL 1vvvvvxx (1..4 registers of
//   value 1..32). A new HLL is one XZERO of 16384 (18 bytes). A register above 32, or a
//   sparse form that would grow past `sparse_max_bytes` (hll-sparse-max-bytes), promotes
//   the value to dense, once and for all.
//
// An element is hashed with MurmurHash64A (seed 0xadc83b19); the low 14 bits choose the
// register, and the position of the lowest set bit among the 50 bits above them (1-based,
// 51 when none is set) is the candidate value. The estimate is Ertl's improved raw
// estimator (arXiv:1702.01284) over the register histogram, as Redis 7.0 computes it.
//
// The operations below mirror Redis's step for step where the bytes depend on the order of
// the steps (how a sparse opcode is split and merged, when a value is promoted), because
// byte equality with redis-server is the contract: tests compare GET replies.
//
// Corrupt values are found where Redis finds them: IsHll() is the header check every
// command makes first ("WRONGTYPE Key is not a valid HyperLogLog string value."); sparse
// opcodes that do not cover exactly 16384 registers are found while a sparse value is
// read or changed (kCorrupt: "INVALIDOBJ Corrupted HLL object detected"). A dense value of
// the right length is never corrupt.
//
// Thread-safety: pure functions on the caller's buffers; any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace damselfly::core::hll {

inline constexpr int kIndexBits = 14;                  // Redis's HLL_P
inline constexpr size_t kRegisters = 1 << kIndexBits;  // 16384
inline constexpr int kRunBits = 64 - kIndexBits;       // Redis's HLL_Q: 50
inline constexpr int kRegisterBits = 6;
inline constexpr uint8_t kRegisterMax = (1 << kRegisterBits) - 1;
inline constexpr size_t kHeaderBytes = 16;
inline constexpr size_t kDenseBytes = kHeaderBytes + kRegisters * kRegisterBits / 8;  // 12304
inline constexpr size_t kDefaultSparseMaxBytes = 3000;
inline constexpr uint64_t kHashSeed = 0xadc83b19ULL;

enum class Encoding : uint8_t { kDense = 0, kSparse = 1 };

// The result of a change: nothing changed, some register (or the encoding) changed, or
// the sparse opcodes are corrupt (the value may then hold the changes made before).
enum class Change : uint8_t { kUnchanged, kChanged, kCorrupt };

// Registers one byte each (not the 6-bit packing): the merge of several HLLs.
using RawRegisters = std::array<uint8_t, kRegisters>;

// Redis's MurmurHash64A (MurmurHash2, 64-bit, read little-endian on any host).
uint64_t MurmurHash64A(std::string_view data, uint64_t seed);

// The register an element selects and the value it offers (1..51).
struct Observation {
  uint32_t index;
  uint8_t count;
};
Observation Observe(std::string_view element);

// Whether `value` passes Redis's header checks: at least 16 bytes, the magic, a known
// encoding, and exactly kDenseBytes when dense. The rest of the functions REQUIRE it.
bool IsHll(std::string_view value);
Encoding EncodingOf(std::string_view hll);

// An empty HLL, as PFADD creates it: sparse, one XZERO, cached cardinality 0 (valid).
std::string MakeEmpty();

// The cached cardinality, nullopt when stale.
std::optional<uint64_t> CachedCardinality(std::string_view hll);
// Writes `card` as the cached cardinality (valid). `header` is the value's first 16 bytes.
void SetCachedCardinality(char* header, uint64_t card);
// Marks the cached cardinality stale.
void InvalidateCache(char* header);

// Raises register `index` of a dense HLL of kDenseBytes at `dense` to `count` if lower.
// In place: a dense value never changes size.
Change DenseSet(char* dense, uint32_t index, uint8_t count);
// Adds `element` to a dense HLL of kDenseBytes at `dense`. Never kCorrupt.
Change DenseAdd(char* dense, std::string_view element);

// Adds `element` to *hll (dense or sparse), promoting a sparse one as Redis does.
// Does not mark the cache stale for a dense value (the caller does once per command, as
// Redis); a changed sparse value is marked by the call.
Change Add(std::string* hll, std::string_view element, size_t sparse_max_bytes);
// Raises register `index` of *hll to `count` if lower (Add without the hash).
Change Set(std::string* hll, uint32_t index, uint8_t count, size_t sparse_max_bytes);

// Rewrites a sparse *hll as dense (the cached cardinality kept); false when the sparse
// opcodes are corrupt (*hll unchanged). A dense *hll is left as it is.
bool SparseToDense(std::string* hll);

// Raises each of `max` to the register of `hll`, as PFMERGE and PFCOUNT of several keys
// merge; false when the sparse opcodes are corrupt (`max` may be partly raised).
bool MergeInto(std::string_view hll, RawRegisters* max);

// Writes every non-zero register of `max` into *hll (in index order, through Set: the
// sparse bytes are Redis's), converting to dense first when `to_dense`, then marks the
// cache stale: PFMERGE's write of its destination. False when *hll is corrupt.
bool StoreRegisters(std::string* hll, const RawRegisters& max, bool to_dense,
                    size_t sparse_max_bytes);

// The estimate of an HLL's cardinality; nullopt when its sparse opcodes are corrupt.
std::optional<uint64_t> Count(std::string_view hll);
// The estimate for merged registers.
uint64_t CountRaw(const RawRegisters& registers);

// Register `index` of a dense HLL (PFDEBUG GETREG).
uint8_t DenseRegister(std::string_view dense, uint32_t index);

// PFDEBUG DECODE's text of a sparse HLL: "z:<len>", "Z:<len>", "v:<value>,<len>" joined
// by spaces.
std::string DecodeSparse(std::string_view sparse);

// PFSELFTEST: checks the dense register packing on random values and the estimate of a
// dense and a sparse HLL against each other and against the true count up to 10^7
// elements. Returns "" on success, else the error reply text (TESTFAILED ...).
std::string SelfTest(size_t sparse_max_bytes);

}  // namespace damselfly::core::hll
