#include "src/core/compact_object.h"

#include "src/core/ascii_pack.h"
#include "src/core/ascii_pack_loops.h"
#include "src/core/lzf.h"

#include <glog/logging.h>

#include <bit>
#include <charconv>
#include <memory>

#include "src/core/obj_malloc.h"

namespace damselfly::core {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the stored forms are little-endian words");

// Whether every byte of `text` is below 0x80, tested 8 bytes at a time.
bool IsAscii(std::string_view text) {
  const char* p = text.data();
  size_t left = text.size();
  uint64_t seen = 0;
  for (; left >= 8; p += 8, left -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    seen |= word;
  }
  for (; left > 0; ++p, --left) seen |= static_cast<uint8_t>(*p);
  return (seen & 0x8080808080808080ULL) == 0;
}

// Parses `text` when it is an int64 in the canonical form Redis's string2ll accepts:
// "0", or an optional '-' followed by 1-9 and more digits, within int64. Rejects "",
// "-", "-0", leading zeros, '+', spaces and overflow.
bool ParseCanonicalInt(std::string_view text, int64_t* out) {
  if (text.empty() || text.size() > CompactObj::kMaxIntLen) return false;
  if (text == "0") {
    *out = 0;
    return true;
  }
  const bool negative = text[0] == '-';
  size_t pos = negative ? 1 : 0;
  if (pos == text.size() || text[pos] < '1' || text[pos] > '9') return false;
  uint64_t magnitude = 0;
  for (; pos < text.size(); ++pos) {
    const unsigned digit = static_cast<unsigned char>(text[pos]) - '0';
    if (digit > 9) return false;
    if (magnitude > (UINT64_MAX - digit) / 10) return false;  // only 20 digits get here
    magnitude = magnitude * 10 + digit;
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : INT64_MAX;
  if (magnitude > limit) return false;
  // Two's complement negation; for 2^63 this yields INT64_MIN.
  *out = static_cast<int64_t>(negative ? 0 - magnitude : magnitude);
  return true;
}

bool compression_enabled = true;
thread_local CompactObj::CompressionStats compression_stats;

// A per-thread buffer of kMaxCompressLen bytes: the compressor's output before it is
// known to be worth a block, and decoded strings that are only compared or hashed.
uint8_t* ThreadScratch() {
  thread_local std::unique_ptr<uint8_t[]> buffer;
  if (!buffer) buffer = std::make_unique<uint8_t[]>(CompactObj::kMaxCompressLen);
  return buffer.get();
}

// Calls visit(chars, count) for each group of packed characters; see ascii_pack_loops.h.
template <typename Visit>
bool VisitPacked(const uint8_t* src, size_t len, Visit visit) {
  return VisitPackedLoop<PortableGroups>(src, len, visit);
}

}  // namespace

CompactObj CompactObj::Clone() const {
  DCHECK(!IsObject());
  CompactObj copy;
  std::memcpy(copy.payload_, payload_, kInlineLen);
  copy.tag_ = tag_;
  copy.flags_ = flags_;
  if (IsHeapString()) {
    const size_t block_len = HeapBlockLen();
    void* block = ObjMalloc(block_len);
    std::memcpy(block, HeapPtr(), block_len);
    std::memcpy(copy.payload_, &block, sizeof(block));
    copy.CountCompressed(+1);
  }
  return copy;
}

void CompactObj::StoreString(std::string_view value, bool may_compress) {
  int64_t int_value;
  if (ParseCanonicalInt(value, &int_value)) return SetInt(int_value);

  // Build the new payload before releasing the old block: `value` may live in it.
  uint8_t payload[kInlineLen] = {};
  const size_t len = value.size();
  if (len <= kInlineLen) {
    value.copy(reinterpret_cast<char*>(payload), len);
    ReleaseHeap();
    return SetContent(payload, MakeTag(kInlineRaw, len));
  }
  if (len <= kInlinePackedLen && IsAscii(value)) {
    AsciiPack(value.data(), len, payload);
    ReleaseHeap();
    return SetContent(payload, MakeTag(kInlinePacked, len));
  }
  const bool packed = len <= kMaxHeapPackedLen && PackingSaves(len) && IsAscii(value);
  Encoding encoding = packed ? kHeapPacked : kHeapRaw;
  size_t block_len = packed ? PackedLen(len) : len;
  const uint8_t* compressed = nullptr;
  if (may_compress && compression_enabled && len >= kMinCompressLen && len <= kMaxCompressLen) {
    uint8_t* scratch = ThreadScratch();
    const size_t stream_len = LzfCompress(value.data(), len, scratch, block_len - 1);
    if (stream_len > 0 && ObjGoodSize(stream_len) < ObjGoodSize(block_len)) {
      encoding = kHeapLzf;
      block_len = stream_len;
      compressed = scratch;
    }
  }

  DCHECK_LT(len, uint64_t{1} << (8 * kHeapLenBytes));
  const bool reuse = IsHeapString() && HeapBlockLen() == block_len;
  void* block = reuse ? HeapPtr() : ObjMalloc(block_len);
  if (compressed != nullptr) {
    std::memcpy(block, compressed, block_len);  // `value` was read before
  } else if (packed) {
    // A reused block cannot hold `value` here: no view of a packed or compressed block
    // is handed out, and a view of a raw block that packs to that block's size would be
    // longer than it.
    AsciiPack(value.data(), len, static_cast<uint8_t*>(block));
  } else {
    std::memmove(block, value.data(), len);  // `value` may be this very block
  }
  if (reuse) {
    CountCompressed(-1);
  } else {
    ReleaseHeap();
  }
  std::memcpy(payload, &block, sizeof(block));
  const uint64_t len_field =
      encoding == kHeapLzf ? len | uint64_t{block_len} << kLzfLenBits : len;
  std::memcpy(payload + kHeapLenOffset, &len_field, kHeapLenBytes);
  SetContent(payload, MakeTag(encoding, 0));
  CountCompressed(+1);
}

void CompactObj::SetCompression(bool enabled) { compression_enabled = enabled; }

CompactObj::CompressionStats CompactObj::ThreadCompressionStats() { return compression_stats; }

void CompactObj::CountCompressed(int sign) const {
  if (encoding() != kHeapLzf) return;
  const int64_t block_bytes = ObjUsableSize(HeapPtr());
  compression_stats.strings += sign;
  compression_stats.string_bytes += sign * static_cast<int64_t>(HeapLen());
  compression_stats.block_bytes += sign * block_bytes;
}

bool CompactObj::PackingSaves(size_t len) { return ObjGoodSize(PackedLen(len)) < ObjGoodSize(len); }

void CompactObj::SetInt(int64_t value) {
  char digits[kMaxIntLen];
  const auto [end, ec] = std::to_chars(digits, digits + kMaxIntLen, value);
  uint8_t payload[kInlineLen] = {};
  std::memcpy(payload, &value, sizeof(value));
  ReleaseHeap();
  SetContent(payload, MakeTag(kInt, end - digits));
}

void CompactObj::AppendTo(std::string* out) const {
  if (IsRawString()) {
    out->append(RawView());
  } else if (IsHeapString()) {
    const size_t at = out->size();
    out->resize(at + HeapLen());
    DecodeHeap(out->data() + at);
  } else {
    char buf[kMaxIntLen];
    out->append(DecodeInline(buf));
  }
}

void CompactObj::GetString(std::string* out) const {
  if (IsRawString()) {
    out->assign(RawView());
  } else {
    DecodeInto(out);
  }
}

size_t CompactObj::MallocUsed() const {
  if (encoding() == kObject) return GetObject()->MallocUsed();
  return IsInline() ? 0 : ObjUsableSize(HeapPtr());
}

void CompactObj::SetObject(uint8_t type, uint8_t encoding, TypedObject* object) {
  SetTyped(kObject, type, encoding, object, 0);
}

void CompactObj::SetBlock(uint8_t type, uint8_t encoding, void* block, uint32_t capacity) {
  SetTyped(kBlock, type, encoding, block, capacity);
}

void CompactObj::SetTyped(Encoding kind, uint8_t type, uint8_t encoding, void* ptr,
                          uint32_t capacity) {
  DCHECK_NE(type, 0);
  DCHECK(ptr != nullptr);
  ReleaseHeap();
  uint8_t payload[kInlineLen] = {};
  std::memcpy(payload, &ptr, sizeof(ptr));
  payload[kObjTypeOffset] = type;
  payload[kObjEncodingOffset] = encoding;
  std::memcpy(payload + kBlockCapacityOffset, &capacity, sizeof(capacity));  // kObject: 0
  SetContent(payload, MakeTag(kind, 0));
}

const char* CompactObj::RedisEncodingName() const {
  if (flags_ & kRawFlag) return "raw";
  if (encoding() == kInt) return "int";
  return Size() <= kEmbstrMaxLen ? "embstr" : "raw";
}

size_t CompactObj::HeapBlockLen() const {
  switch (encoding()) {
    case kHeapPacked:
      return PackedLen(HeapLen());
    case kHeapLzf:
      return HeapLenField() >> kLzfLenBits;
    default:
      return HeapLen();
  }
}

void CompactObj::ReleaseOwned() {
  if (encoding() == kObject) return TypedObject::Destroy(GetObject());
  if (encoding() == kBlock) return ObjFree(HeapPtr());
  CountCompressed(-1);
  ObjFree(HeapPtr());
}

void CompactObj::SetContent(const uint8_t (&payload)[kInlineLen], uint8_t tag) {
  std::memcpy(payload_, payload, kInlineLen);
  tag_ = tag;
  flags_ &= ~kRawFlag;
}

void CompactObj::TakeFrom(CompactObj* other) {
  std::memcpy(payload_, other->payload_, kInlineLen);
  tag_ = other->tag_;
  flags_ = other->flags_;
  std::memset(other->payload_, 0, kInlineLen);
  other->tag_ = 0;
  other->flags_ = 0;
}

std::string_view CompactObj::DecodeInline(char (&buf)[kMaxIntLen]) const {
  const size_t len = SmallLen();
  if (encoding() == kInt) {
    std::to_chars(buf, buf + kMaxIntLen, IntValue());
  } else {
    DCHECK_EQ(encoding(), kInlinePacked);
    AsciiUnpack(payload_, len, buf);
  }
  return std::string_view(buf, len);
}

void CompactObj::DecodeHeap(char* dst) const {
  const auto* block = static_cast<const uint8_t*>(HeapPtr());
  if (encoding() == kHeapPacked) return AsciiUnpack(block, HeapLen(), dst);
  DCHECK_EQ(encoding(), kHeapLzf);
  // The stream was written by LzfCompress from exactly HeapLen() bytes; failing to
  // decode it means the object's memory was overwritten.
  CHECK(LzfDecompress(block, HeapBlockLen(), dst, HeapLen())) << "corrupt LZF block";
}

std::string_view CompactObj::DecodeInto(std::string* scratch) const {
  if (IsHeapString()) {
    scratch->resize(HeapLen());
    DecodeHeap(scratch->data());
  } else {
    char buf[kMaxIntLen];
    scratch->assign(DecodeInline(buf));
  }
  return *scratch;
}

uint64_t CompactObj::HashDecoded() const {
  if (IsHeapString()) {
    char* decoded = reinterpret_cast<char*>(ThreadScratch());
    DecodeHeap(decoded);
    return HashKey(std::string_view(decoded, HeapLen()));
  }
  char buf[kMaxIntLen];
  return HashKey(DecodeInline(buf));
}

bool CompactObj::EqualsDecoded(std::string_view value) const {
  if (value.size() != Size()) return false;
  if (encoding() == kHeapLzf) {
    char* decoded = reinterpret_cast<char*>(ThreadScratch());
    DecodeHeap(decoded);
    return std::memcmp(decoded, value.data(), value.size()) == 0;
  }
  if (encoding() != kHeapPacked) {
    char buf[kMaxIntLen];
    return DecodeInline(buf) == value;
  }
  const char* next = value.data();
  return VisitPacked(static_cast<const uint8_t*>(HeapPtr()), HeapLen(),
                     [&next](uint64_t chars, size_t count) {
                       uint64_t expected = 0;
                       std::memcpy(&expected, next, count);
                       next += count;
                       return chars == expected;
                     });
}

bool CompactObj::EqualsOtherEncoding(const CompactObj& other) const {
  // A string written in place may be plain bytes where the canonical form is not.
  if ((flags_ | other.flags_) & kRawFlag) {
    std::string mine, theirs;
    return GetSlice(&mine) == other.GetSlice(&theirs);
  }
  // Different tags mean different strings, unless one is compressed and the other is not
  // (see SetUncompressedString). Compressed strings are long, so both live on the heap.
  if (encoding() != kHeapLzf && other.encoding() != kHeapLzf) return false;
  if (!IsHeapString() || !other.IsHeapString() || HeapLen() != other.HeapLen()) return false;
  const CompactObj& compressed = encoding() == kHeapLzf ? *this : other;
  const CompactObj& plain = encoding() == kHeapLzf ? other : *this;
  char* decoded = reinterpret_cast<char*>(ThreadScratch());
  compressed.DecodeHeap(decoded);
  return plain == std::string_view(decoded, compressed.HeapLen());
}

bool CompactObj::HeapEquals(const CompactObj& other) const {
  DCHECK(IsHeapString() && tag_ == other.tag_);
  // The length field holds the block length, too, for every heap encoding.
  return HeapLenField() == other.HeapLenField() &&
         std::memcmp(HeapPtr(), other.HeapPtr(), HeapBlockLen()) == 0;
}

std::optional<int64_t> CompactObj::ParseRawInt() const {
  if (!IsRawString()) return std::nullopt;
  int64_t value;
  if (!ParseCanonicalInt(RawView(), &value)) return std::nullopt;
  return value;
}

namespace {

// The capacity a string growing to `len` bytes gets: Redis's sdsMakeRoomFor policy.
size_t GrowthCapacity(size_t len) {
  constexpr size_t kMaxDoubling = size_t{1} << 20;
  return len < kMaxDoubling ? len * 2 : len + kMaxDoubling;
}

}  // namespace

char* CompactObj::GetMutableBytes(size_t min_len) {
  DCHECK(!IsObject());
  const size_t len = Size();
  const size_t new_len = std::max(len, min_len);
  DCHECK_LT(new_len, uint64_t{1} << (8 * kHeapLenBytes));
  if (encoding() == kHeapRaw) {
    if (new_len > len) GrowHeapRaw(len, new_len);
    flags_ |= kRawFlag;
    return static_cast<char*>(HeapPtr());
  }
  uint8_t payload[kInlineLen] = {};
  if (IsInline() && new_len <= kInlineLen) {
    char buf[kMaxIntLen];
    const std::string_view old = encoding() == kInlineRaw ? RawView() : DecodeInline(buf);
    old.copy(reinterpret_cast<char*>(payload), old.size());  // zeros follow
    SetContent(payload, MakeTag(kInlineRaw, new_len));
    flags_ |= kRawFlag;
    return reinterpret_cast<char*>(payload_);
  }
  // Decode once into a block of plain bytes, with room to grow when a string grows now
  // (an empty one is made exactly as long, as Redis makes a new bitmap).
  const size_t capacity =
      new_len > len && len > 0 ? ObjGoodSize(GrowthCapacity(new_len)) : new_len;
  char* block = static_cast<char*>(ObjMalloc(capacity));
  if (IsHeapString()) {
    DecodeHeap(block);
  } else {
    char buf[kMaxIntLen];
    const std::string_view old = encoding() == kInlineRaw ? RawView() : DecodeInline(buf);
    old.copy(block, old.size());
  }
  std::memset(block + len, 0, new_len - len);
  ReleaseHeap();
  std::memcpy(payload, &block, sizeof(block));
  std::memcpy(payload + kHeapLenOffset, &new_len, kHeapLenBytes);
  SetContent(payload, MakeTag(kHeapRaw, 0));
  flags_ |= kRawFlag;
  return block;
}

void CompactObj::GrowHeapRaw(size_t len, size_t new_len) {
  char* block = static_cast<char*>(ObjGrow(HeapPtr(), len, new_len, GrowthCapacity(new_len)));
  std::memset(block + len, 0, new_len - len);
  std::memcpy(payload_, &block, sizeof(block));
  std::memcpy(payload_ + kHeapLenOffset, &new_len, kHeapLenBytes);
}

}  // namespace damselfly::core
