// CompactObj: a 16-byte holder for a key or a value (a string, or a pointer to a typed
// object: a list, a hash...), the unit a shard's table stores per entry.
//
// The problem. A Redis-style store keeps tens of millions of small keys and values; with
// std::string (32 bytes, plus a heap block past 15 characters) or Redis's 16-byte robj
// plus an sds header and terminator in the allocation, metadata easily outweighs the
// data. CompactObj spends 16 bytes in the table and allocates only when the content
// cannot live inside those 16 bytes; a heap block then holds the bytes and nothing else.
//
// Layout (little-endian, 8-byte aligned):
//
//   byte  0                                          13   14     15
//        +---------------------------------------------+------+-------+
//        | payload                                     | tag  | flags |
//        +---------------------------------------------+------+-------+
//   tag:   bits 0-2 the encoding, bits 3-7 `small_len` (a length 0..31, inline encodings)
//   flags: bit 0 has_expire, bit 1 has_mc_flags, bit 2 raw (see MarkRaw), bits 3-7 spare
//          (SpareBits); an object used as a table key never carries the first three, so
//          its whole flags byte is its holder's (KeyFlagBits)
//
//   encoding        payload                                        small_len
//   kInlineRaw      the bytes in [0, len), zeros after             len, 0..14
//   kInlinePacked   the chars packed 7 bits each in [0, 14)        len, 15..16
//   kInt            int64 in [0, 8), zeros after                   decimal length, 1..20
//   kHeapRaw        block pointer in [0, 8), 48-bit length [8, 14) 0
//   kHeapPacked     block pointer in [0, 8), 48-bit length [8, 14) 0
//   kHeapLzf        block pointer in [0, 8), 24-bit length [8, 11),     0
//                   24-bit block length [11, 14)
//   kObject         a TypedObject (typed_object.h), owned: pointer in [0, 8), the
//                   server's type number in [8] and encoding number in [9]
//   kBlock          a typed value's bare heap block (a small list's, hash's or sorted
//                   set's listpack), owned: pointer in [0, 8), type in [8], encoding
//                   in [9], the block's capacity in [10, 14)
//
// Why these numbers:
//  - 14 inline bytes: two bytes of metadata (tag, flags) are the least that can carry the
//    encoding, an inline length and the per-key flag bits, and the rest of 16 is payload.
//    Most keys ("user:1234", "session:42") and many values fit; they cost no allocation.
//  - 16 inline characters: ASCII strings (every byte < 0x80) waste the top bit of each
//    byte, so 8 characters pack into 7 bytes and 16 characters into 14. Packing is used
//    inline only for 15 and 16 characters; up to 14 the raw form fits and costs nothing to
//    read.
//  - ints: a string that Redis's string2ll accepts (optional '-', no '+', no leading
//    zeros, no "-0", within int64) is stored as its int64 and printed back byte for byte.
//    INCR and friends then read and write the number without parsing, and a 20-digit
//    string takes no allocation. Any other numeric-looking string ("007", "+1", "-0",
//    "99999999999999999999") stays a string.
//  - heap strings: the block is exactly the stored bytes (ObjMalloc(length), or the packed
//    size), with the length kept here, so a 1024-byte binary value costs one 1024-byte
//    allocation. 48 bits of length are far beyond any bulk-length limit.
//  - heap packing for ASCII strings of 17..kMaxHeapPackedLen (4096) characters whose
//    packed block (7/8 of the length) falls into a smaller mimalloc size class than the
//    raw one: an 18-character key takes a 16-byte block instead of 32, a 36-character
//    one 32 instead of 48, a 1 KiB ASCII value 896 bytes instead of 1024. Where the size
//    class would be the same (20 to 32 characters: 32 bytes either way; 910 of the 4,080
//    lengths from 17 to 4096) packing saves nothing, so the string stays raw.
//    The price of packing is paid on reads: GetSlice must decode into a scratch string
//    instead of returning a view of the block, an extra pass over the value on every GET
//    (about 1 ns per 8 characters, word at a time: some 150 ns at 1 KiB, 550 ns at 4 KiB,
//    small next to the syscalls of a request). Beyond 4 KiB that pass and the transient
//    copy of the whole value grow with every GET, while such values are few, so large
//    strings stay raw and can be sent straight from the block.
//  - strings with any byte >= 0x80 (UTF-8 text, binary data) are never packed. Bytes
//    below 0x80, control characters such as NUL, CR and LF included, pack losslessly.
//  - LZF compression (lzf.h) for strings of kMinCompressLen..kMaxCompressLen (512 B to
//    64 KiB) bytes, when the compressed stream falls into a smaller size class than the
//    block the string would otherwise take (packed or raw). Text, JSON, serialized
//    records and padded values repeat themselves: the 1 KiB JSON records of
//    compact_object_bench take 392-byte blocks on average instead of 896, a value padded
//    with zeros (DEBUG POPULATE's) 32 bytes. Costs per value, measured with
//    compact_object_bench (docs/benchmarks.md), at 1 KiB: storing JSON 1.2 us instead of
//    0.3 (storing padded or repeated values is faster than packing them); reading it
//    0.2 us instead of 0.15; a failed attempt on random text or bytes 45-130 ns (the
//    compressor gives up when the first 64 bytes hold no repeat, see lzf.h). Below 512
//    bytes that failed attempt is too dear: on redis-benchmark's random 256-byte values
//    it added 26% to the instructions per request (tools/instr-ab.sh), while such a
//    value has at most a few hundred bytes to save. Above 64 KiB every read would decode
//    the whole value into a transient copy (as for packing, see above), and such values
//    are few. Compression is on by default and can be switched off for the process
//    (SetCompression) before any object exists; SetUncompressedString skips it for one
//    string (APPEND and SETRANGE results, which would otherwise be compressed whole again
//    on every append).
//
// Canonical form. The encoding is a function of the content: SetString always picks,
// in this order, kInt, kInlineRaw (<= 14 bytes), kInlinePacked (ASCII, 15..16),
// kHeapLzf (512..65536, when it saves a size class), kHeapPacked (ASCII, 17..4096, when
// PackingSaves(length)), kHeapRaw; unused payload bits are zero, and the compressor's
// output is a function of its input. So two objects hold the same string exactly when
// their tags and stored bytes are equal, which makes comparing two objects a memcmp of
// their stored forms, packed, compressed or not. The one exception is
// SetUncompressedString, which skips kHeapLzf: operator== decodes in that case only.
//
// Thread-safety: none; an object belongs to one shard thread. Its heap block comes from
// that thread's ObjMalloc heap and must be freed there (see obj_malloc.h): destroy or
// overwrite an object only on the thread that created its content. Const methods may
// run concurrently with each other.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "src/core/typed_object.h"

namespace damselfly::core {

// Returns the 64-bit hash of `key` that CompactObj::Hash() returns for an object holding
// `key` in any encoding; tables hash lookup keys with it. It is absl::Hash over the bytes
// (as absl::string_view: abseil's own string hash), seeded per process: stable within a
// process, never to be persisted or sent to another process. It differs on purpose from
// the shard hash (EngineShardSet's absl::Hash<std::string_view>, which Debian's abseil
// computes through std::hash): a table inside a shard must not use the bits that chose
// the shard, or all of its keys would agree on them.
inline uint64_t HashKey(std::string_view key) {
  return absl::Hash<absl::string_view>{}(absl::string_view(key.data(), key.size()));
}

class alignas(8) CompactObj {
 public:
  static constexpr size_t kInlineLen = 14;           // raw bytes that fit inline
  static constexpr size_t kInlinePackedLen = 16;     // ASCII chars that fit inline, packed
  static constexpr size_t kMaxHeapPackedLen = 4096;  // longest ASCII string packed on heap
  static constexpr size_t kMaxIntLen = 20;           // "-9223372036854775808"
  static constexpr size_t kEmbstrMaxLen = 44;        // Redis's OBJ_ENCODING_EMBSTR_SIZE_LIMIT
  static constexpr size_t kMinCompressLen = 512;     // shortest string tried with LZF
  static constexpr size_t kMaxCompressLen = 65536;   // longest; both lengths fit 24 bits

  // Switches LZF compression of large strings on (the default) or off for the whole
  // process. The canonical form depends on it, so: REQUIRES no CompactObj holds a heap
  // string yet (call it at start-up, before any shard stores anything).
  static void SetCompression(bool enabled);

  // The strings this thread holds compressed: how many, their length in total, and the
  // usable bytes of their blocks (ObjUsableSize). Kept per thread as the objects are set
  // and released, like ObjMalloc's counter, so reading it costs nothing; objects must be
  // released on the thread that set them (see the thread-safety note above).
  struct CompressionStats {
    uint64_t strings = 0, string_bytes = 0, block_bytes = 0;
    bool operator==(const CompressionStats&) const = default;
  };
  static CompressionStats ThreadCompressionStats();

  // Whether an ASCII string of `len` (17..kMaxHeapPackedLen) characters is stored packed
  // on the heap: when its packed block takes a smaller allocation than the raw one.
  static bool PackingSaves(size_t len);

  // An empty string with no flags. An all-zero object is this state, too.
  CompactObj() = default;

  // An object holding `value`, as SetString.
  explicit CompactObj(std::string_view value) { SetString(value); }

  // Takes over `other`'s content and flags; `other` becomes an empty string with no flags.
  CompactObj(CompactObj&& other) noexcept { TakeFrom(&other); }
  CompactObj& operator=(CompactObj&& other) noexcept {
    if (this != &other) {
      ReleaseHeap();
      TakeFrom(&other);
    }
    return *this;
  }

  // Copies allocate, so they are explicit: see Clone().
  CompactObj(const CompactObj&) = delete;
  CompactObj& operator=(const CompactObj&) = delete;

  ~CompactObj() { ReleaseHeap(); }

  // Returns a deep copy: same string, same encoding, same flags.
  CompactObj Clone() const;

  // Stores `value` (binary-safe) in its canonical encoding (see the top of this file).
  // Frees the previous heap block, or reuses it when the new content needs a block of
  // exactly the same size. Keeps has_expire, has_mc_flags and the spare bits; clears the
  // raw mark. `value` may point into this object's own content.
  void SetString(std::string_view value) { StoreString(value, /*may_compress=*/true); }

  // As SetString, but never compresses: for strings rebuilt whole on every small change
  // (APPEND, SETRANGE), where compressing the whole value again each time costs far
  // more than the change: 128-byte APPENDs of JSON up to 64 KiB took 34-35 us each with
  // compression, 0.9 without (compact_object_bench).
  void SetUncompressedString(std::string_view value) {
    StoreString(value, /*may_compress=*/false);
  }

  // Stores the decimal string of `value`; equivalent to SetString(to_string(value)).
  // Flags as SetString.
  void SetInt(int64_t value);

  // Holds `object` (made by TypedObject::Make on this thread), taking ownership, with the
  // caller's numbers for its type and encoding; frees the previous content. Keeps
  // has_expire, has_mc_flags and the spare bits; clears the raw mark.
  // REQUIRES: type != 0 (0 is how PrimeValue numbers strings), object != nullptr.
  void SetObject(uint8_t type, uint8_t encoding, TypedObject* object);
  // Holds `block` (ObjMalloc'd on this thread), owned, as a typed value with no
  // TypedObject around it, and `capacity`, the block's size as its user counts it; the
  // user knows the block's format from the type and encoding numbers. Why: an object
  // wrapper costs a 32-byte block per key, which for a small collection (a 10-field
  // hash's listpack is about 96 bytes) is a quarter of its memory. Frees the previous
  // content; flags as SetObject. REQUIRES: type != 0, block != nullptr.
  void SetBlock(uint8_t type, uint8_t encoding, void* block, uint32_t capacity);
  // Whether this holds a block (SetBlock).
  bool IsBlock() const { return encoding() == kBlock; }
  // The block and its capacity. REQUIRE: IsBlock().
  void* GetBlock() const { return HeapPtr(); }
  uint32_t BlockCapacity() const {
    uint32_t capacity;
    std::memcpy(&capacity, payload_ + kBlockCapacityOffset, sizeof(capacity));
    return capacity;
  }
  // Records that the block's user moved it (and freed the old one): a write that grew
  // or shrank it. Type, encoding and flags stay. REQUIRES: IsBlock().
  void MoveBlock(void* block, uint32_t capacity) {
    std::memcpy(payload_, &block, sizeof(block));
    std::memcpy(payload_ + kBlockCapacityOffset, &capacity, sizeof(capacity));
  }
  // Lets go of the block without freeing it (its user took it over): this becomes the
  // empty string; flags stay. REQUIRES: IsBlock().
  void ForgetBlock() {
    const uint8_t empty[kInlineLen] = {};
    SetContent(empty, MakeTag(kInlineRaw, 0));
  }
  // Whether this holds a typed value (SetObject or SetBlock) rather than a string. The
  // string methods below (Size, GetSlice, Hash, ==...) REQUIRE !IsObject(); MallocUsed
  // works for all.
  bool IsObject() const { return encoding() >= kObject; }
  // The type number given to SetObject; 0 for a string.
  uint8_t ObjectType() const { return IsObject() ? payload_[kObjTypeOffset] : 0; }
  // The encoding number given to SetObject or SetBlock (or SetObjectEncoding).
  // REQUIRES: IsObject().
  uint8_t ObjectEncoding() const { return payload_[kObjEncodingOffset]; }
  // Records a new encoding of the same object (a set converted in place from intset to
  // hashtable keeps its TypedObject). REQUIRES: IsObject().
  void SetObjectEncoding(uint8_t encoding) { payload_[kObjEncodingOffset] = encoding; }
  // The held object, or nullptr when this holds a string or a block.
  TypedObject* GetObject() const {
    return encoding() == kObject ? static_cast<TypedObject*>(HeapPtr()) : nullptr;
  }

  // Returns the length of the logical string. O(1).
  size_t Size() const { return encoding() < kHeapRaw ? SmallLen() : HeapLen(); }

  // Returns the logical string. When it is stored as plain bytes (kInlineRaw, kHeapRaw)
  // this is a view of the object's own storage and *scratch is untouched; otherwise the
  // string is decoded into *scratch (replacing its content) and the view refers to it.
  // The view is valid until this object is modified, moved or destroyed, or *scratch is
  // modified: note that a view of an inline string points into the object itself.
  // REQUIRES: scratch != nullptr (it is only written when needed).
  std::string_view GetSlice(std::string* scratch) const {
    return IsRawString() ? RawView() : DecodeInto(scratch);
  }

  // Replaces *out with the logical string.
  void GetString(std::string* out) const;

  // Appends the logical string to *out, decoding straight into it (no scratch copy).
  void AppendTo(std::string* out) const;

  // Hints the CPU to fetch the heap block, if any (its first 256 bytes), so that a
  // batch of lookups can overlap their cache misses before the values are read. No
  // effect on the content.
  void PrefetchHeap() const {
    if (!IsHeapString()) return;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(HeapPtr());
    const uintptr_t end = begin + std::min<size_t>(HeapBlockLen(), 256);
    for (uintptr_t line = begin & ~uintptr_t{63}; line < end; line += 64) {
      __builtin_prefetch(reinterpret_cast<const void*>(line));
    }
  }

  // Returns the LZF stream (core/lzf.h) of a string stored compressed, else an empty
  // view; the string's length is Size(). An RDB writer stores the stream as it is instead
  // of compressing the value again. Valid as GetSlice's views.
  std::string_view CompressedView() const {
    if (encoding() != kHeapLzf) return {};
    return std::string_view(static_cast<const char*>(HeapPtr()), HeapBlockLen());
  }

  // Returns the value when the string is a canonical int64 (as Redis's string2ll
  // accepts it), otherwise nullopt. O(1) but for a string written in place
  // (GetMutableBytes), which may hold digits as plain bytes and is parsed.
  std::optional<int64_t> TryGetInt() const {
    if (encoding() == kInt) return IntValue();
    if (!IsMarkedRaw()) return std::nullopt;
    return ParseRawInt();
  }

  // Whether the logical string equals `value`. Never allocates: packed strings are
  // decoded 8 characters at a time and compared as they are decoded, compressed ones
  // decoded into a per-thread buffer first.
  bool operator==(std::string_view value) const {
    return IsRawString() ? RawView() == value : EqualsDecoded(value);
  }

  // Whether both hold the same logical string (flags are not compared). By the canonical
  // form this compares tags and then the stored bytes, packed or not, without decoding;
  // only a compressed string against an uncompressed one (SetUncompressedString) of the
  // same length is decoded.
  bool operator==(const CompactObj& other) const {
    if (tag_ != other.tag_) return EqualsOtherEncoding(other);
    if (IsInline()) return std::memcmp(payload_, other.payload_, kInlineLen) == 0;
    return HeapEquals(other);
  }

  // Returns HashKey() of the logical string. Plain bytes are hashed in place; other
  // encodings are decoded first (inline ones on the stack, heap ones into a per-thread
  // buffer).
  uint64_t Hash() const { return IsRawString() ? HashKey(RawView()) : HashDecoded(); }

  // Returns the bytes of this object's heap block (ObjUsableSize: for a string or a
  // SetBlock block), or its typed object's MallocUsed, 0 when inline. The 16 bytes of the
  // object itself are not included.
  size_t MallocUsed() const;

  // Whether the content lives in the 16 bytes (no heap block).
  bool IsInline() const { return encoding() < kHeapRaw; }

  // Returns what Redis's OBJECT ENCODING reports for a string value with this content:
  // "int" for a canonical int64, "embstr" up to 44 bytes, "raw" beyond, and "raw" for
  // any content while the raw mark is set.
  const char* RedisEncodingName() const;

  // Returns the string's bytes for writing in place (SETBIT, BITFIELD, a dense
  // HyperLogLog's registers), first making the string at least `min_len` bytes long with
  // zero bytes. A string stored packed, compressed or as an int is decoded once into plain
  // bytes and marked raw (MarkRaw); it then stays plain bytes, so later calls write where
  // the bytes are, until SetString or SetInt stores a new string. Up to kInlineLen bytes
  // stay inline. An empty string gets a block of exactly `min_len`; a longer one grows as
  // Redis grows a string (to twice the length below 1 MiB, by 1 MiB above), so a bitmap
  // filled from its start is not copied once per byte. The pointer is valid until the
  // object next changes. Such a string is off the canonical form (plain bytes where
  // SetString would store an int or pack); TryGetInt and operator== allow for it.
  // REQUIRES: !IsObject(); min_len < 2^48.
  char* GetMutableBytes(size_t min_len);

  // Sets or clears the raw mark. Redis reports every string built by APPEND or SETRANGE
  // as "raw" whatever its length, so the server marks those; SetString/SetInt clear it.
  void MarkRaw(bool raw) { SetFlag(kRawFlag, raw); }
  bool IsMarkedRaw() const { return flags_ & kRawFlag; }

  // Bits the holder keeps in the object for its own purposes (the server: part of a
  // key's access stamp); moves, SetString and SetObject keep them. Any object has the 5
  // spare flag bits; an object used as a table key, which never carries the expire,
  // memcached or raw flags, has the whole flags byte. REQUIRES: bits < 32 for
  // SetSpareBits.
  uint8_t SpareBits() const { return flags_ >> kSpareShift; }
  void SetSpareBits(uint8_t bits) { flags_ = uint8_t((flags_ & kFlagMask) | (bits << kSpareShift)); }
  uint8_t KeyFlagBits() const { return flags_; }
  void SetKeyFlagBits(uint8_t bits) { flags_ = bits; }

  // Whether the key has a deadline in the shard's expire table.
  bool HasExpire() const { return flags_ & kExpireFlag; }
  void SetExpire(bool has_expire) { SetFlag(kExpireFlag, has_expire); }

  // Whether the key has Memcached client flags, kept outside the object.
  bool HasMcFlags() const { return flags_ & kMcFlagsFlag; }
  void SetMcFlags(bool has_mc_flags) { SetFlag(kMcFlagsFlag, has_mc_flags); }

 private:
  enum Encoding : uint8_t {
    kInlineRaw = 0,  // the all-zero object is the empty string
    kInlinePacked = 1,
    kInt = 2,
    kHeapRaw = 3,  // encodings from here on own a heap block
    kHeapPacked = 4,
    kHeapLzf = 5,
    kObject = 6,
    kBlock = 7,  // the typed encodings are numbered last (IsObject)
  };

  enum Flag : uint8_t {
    kExpireFlag = 1 << 0,
    kMcFlagsFlag = 1 << 1,
    kRawFlag = 1 << 2,
  };

  static constexpr uint8_t kEncodingMask = 0x7;
  static constexpr uint8_t kFlagMask = 0x7;  // the flags above; the rest are spare
  static constexpr int kSpareShift = 3;
  static constexpr int kSmallLenShift = 3;
  static constexpr size_t kHeapLenOffset = 8;  // the 48-bit length, after the pointer
  static constexpr size_t kHeapLenBytes = 6;
  static constexpr int kLzfLenBits = 24;  // kHeapLzf splits the 48 bits in two
  static constexpr uint64_t kLzfLenMask = (uint64_t{1} << kLzfLenBits) - 1;
  static constexpr size_t kObjTypeOffset = 8;  // kObject, kBlock: type, encoding after the pointer
  static constexpr size_t kObjEncodingOffset = 9;
  static constexpr size_t kBlockCapacityOffset = 10;  // kBlock: 32 bits after those two

  Encoding encoding() const { return static_cast<Encoding>(tag_ & kEncodingMask); }
  size_t SmallLen() const { return tag_ >> kSmallLenShift; }
  bool IsRawString() const { return encoding() == kInlineRaw || encoding() == kHeapRaw; }
  bool IsHeapString() const { return encoding() >= kHeapRaw && encoding() <= kHeapLzf; }

  // REQUIRES: IsRawString().
  std::string_view RawView() const {
    if (encoding() == kInlineRaw) {
      return std::string_view(reinterpret_cast<const char*>(payload_), SmallLen());
    }
    return std::string_view(static_cast<const char*>(HeapPtr()), HeapLen());
  }
  void* HeapPtr() const {
    void* ptr;
    std::memcpy(&ptr, payload_, sizeof(ptr));
    return ptr;
  }
  uint64_t HeapLenField() const {
    uint64_t field = 0;
    std::memcpy(&field, payload_ + kHeapLenOffset, kHeapLenBytes);
    return field;
  }
  size_t HeapLen() const {
    return encoding() == kHeapLzf ? HeapLenField() & kLzfLenMask : HeapLenField();
  }
  int64_t IntValue() const {
    int64_t value;
    std::memcpy(&value, payload_, sizeof(value));
    return value;
  }
  // Bytes in the heap block: the length, its packed size, or the compressed stream's.
  size_t HeapBlockLen() const;

  static uint8_t MakeTag(Encoding encoding, size_t small_len) {
    return encoding | (small_len << kSmallLenShift);
  }

  void SetFlag(Flag flag, bool on) { flags_ = on ? (flags_ | flag) : (flags_ & ~flag); }

  // Frees the heap block or typed object, if any, leaving the payload stale. One compare
  // for inline content: the encodings that own memory are numbered last.
  void ReleaseHeap() {
    if (encoding() >= kHeapRaw) ReleaseOwned();
  }
  void ReleaseOwned();

  // Adds (+1) or removes (-1) this object's content in ThreadCompressionStats() when it
  // is compressed.
  void CountCompressed(int sign) const;

  // Replaces payload and tag and clears the raw mark; the caller has released the old
  // heap block, or reuses it in `payload`.
  void SetContent(const uint8_t (&payload)[kInlineLen], uint8_t tag);

  // Moves other's bytes here and leaves `other` empty. REQUIRES: no heap block here.
  void TakeFrom(CompactObj* other);

  // Decodes kInt or kInlinePacked into `buf`; returns the view of it.
  std::string_view DecodeInline(char (&buf)[kMaxIntLen]) const;

  // Decodes kHeapPacked or kHeapLzf into dst[0, HeapLen()).
  void DecodeHeap(char* dst) const;

  // The slow paths of GetSlice, Hash and operator== for the encodings that are not raw,
  // and of operator== for heap blocks.
  std::string_view DecodeInto(std::string* scratch) const;
  uint64_t HashDecoded() const;
  bool EqualsDecoded(std::string_view value) const;
  bool HeapEquals(const CompactObj& other) const;
  bool EqualsOtherEncoding(const CompactObj& other) const;
  std::optional<int64_t> ParseRawInt() const;
  // GetMutableBytes for a kHeapRaw string that grows from `len` to `new_len` bytes.
  void GrowHeapRaw(size_t len, size_t new_len);

  void StoreString(std::string_view value, bool may_compress);
  // SetObject (kind kObject, capacity 0) and SetBlock (kBlock).
  void SetTyped(Encoding kind, uint8_t type, uint8_t encoding, void* ptr, uint32_t capacity);

  uint8_t payload_[kInlineLen] = {};
  uint8_t tag_ = 0;
  uint8_t flags_ = 0;
};

static_assert(sizeof(CompactObj) == 16);

}  // namespace damselfly::core
