#include "src/core/pair_pack.h"

#include <cassert>
#include <cstring>

#include "src/core/listpack_value.h"
#include "src/core/obj_malloc.h"

namespace damselfly::core {

PairPack::PairPack() {
  capacity_ = ObjGoodSize(kHeaderSize);
  data_ = static_cast<uint8_t*>(ObjMalloc(capacity_));
  WriteHeader(data_, kHeaderSize, 0);
}

PairPack::~PairPack() { ObjFree(data_); }

PairPack::PairPack(PairPack&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

PairPack& PairPack::operator=(PairPack&& other) noexcept {
  if (this != &other) {
    ObjFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

PairPack::Value PairPack::Get(Pos pos) const { return lp_value::Read(data_ + pos); }

PairPack::Pos PairPack::After(Pos pos) const { return pos + lp_value::SizeAt(data_ + pos); }

PairPack::Pos PairPack::Find(std::string_view first) const {
  // Decide once how `first` is stored; an element can only match in the same form.
  const lp_value::Encoded key = lp_value::Encode(first);
  const Pos end = End();
  for (Pos pos = kHeaderSize; pos < end; pos = After(After(pos))) {
    if (lp_value::Matches(data_ + pos, key)) return pos;
  }
  return kNoPos;
}

PairPack::Pos PairPack::SeekPair(size_t index) const {
  assert(index < Size());
  Pos pos = kHeaderSize;
  for (; index > 0; --index) pos = After(After(pos));
  return pos;
}

uint8_t* PairPack::Splice(Pos off, uint32_t remove, uint32_t insert) {
  const uint32_t total = ByteSize();
  const uint32_t new_total = total - remove + insert;
  assert(new_total <= kMaxBytes);
  uint8_t* at = lp_value::SpliceBlock(&data_, &capacity_, total, off, remove, insert);
  WriteHeader(data_, new_total, Size());
  return at;
}

void PairPack::Append(std::string_view first, std::string_view second) {
  const lp_value::Encoded a = lp_value::Encode(first), b = lp_value::Encode(second);
  uint8_t* p = Splice(End(), 0, a.size + b.size);
  lp_value::Write(p, a);
  lp_value::Write(p + a.size, b);
  AddPairs(1);
}

void PairPack::ReplaceSecond(Pos pair, std::string_view second) {
  const Pos pos = After(pair);
  const lp_value::Encoded e = lp_value::Encode(second);
  lp_value::Write(Splice(pos, After(pos) - pos, e.size), e);
}

void PairPack::ErasePair(Pos pair) {
  Splice(pair, After(After(pair)) - pair, 0);
  AddPairs(-1);
}

void PairPack::AppendListpack(std::string* out) const {
  const Pos end = End();
  uint64_t total = lp_value::kListpackFrameBytes;
  for (Pos pos = kHeaderSize; pos < end; pos = After(pos)) {
    uint64_t size = lp_value::SizeAt(data_ + pos);
    total += size + lp_value::EncodeBacklen(nullptr, size);
  }
  uint8_t* p = lp_value::AppendListpackFrame(out, total, 2 * Size());
  for (Pos pos = kHeaderSize; pos < end; pos = After(pos)) {
    uint64_t size = lp_value::SizeAt(data_ + pos);
    memcpy(p, data_ + pos, size);
    p += size;
    p += lp_value::EncodeBacklen(p, size);
  }
}

bool PairPack::ListpackFits(const Listpack& lp) {
  // The pack drops a back-length of at least a byte per element, and the listpack's two
  // header bytes more than the pack's and its terminator.
  return lp.ByteSize() - 3 <= kMaxBytes && lp.Size() / 2 <= kMaxPairs;
}

PairPack PairPack::FromListpack(const Listpack& lp) {
  assert(ListpackFits(lp) && lp.Size() % 2 == 0);
  uint64_t total = kHeaderSize;
  for (Listpack::Pos pos = lp.First(); pos != Listpack::kNoPos; pos = lp.Next(pos)) {
    total += lp_value::SizeAt(reinterpret_cast<const uint8_t*>(lp.bytes().data()) + pos);
  }
  PairPack pack;
  uint8_t* p = pack.Splice(kHeaderSize, 0, total - kHeaderSize);
  const uint8_t* src = reinterpret_cast<const uint8_t*>(lp.bytes().data());
  for (Listpack::Pos pos = lp.First(); pos != Listpack::kNoPos; pos = lp.Next(pos)) {
    uint64_t size = lp_value::SizeAt(src + pos);
    memcpy(p, src + pos, size);
    p += size;
  }
  pack.AddPairs(lp.Size() / 2);
  return pack;
}

bool PairPack::ValidStringPairs() const {
  const Pos end = End();
  size_t elements = 0;
  for (Pos pos = kHeaderSize; pos < end; ++elements) {
    uint64_t size = lp_value::CheckedSizeAt(data_ + pos, end - pos);
    if (size == 0) return false;
    pos += size;
  }
  return elements == 2 * Size();
}

std::optional<PairPack> PairPack::FromBytes(std::string_view bytes) {
  const auto* src = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < kHeaderSize || (ReadHeader(src) & kMaxBytes) != bytes.size()) {
    return std::nullopt;
  }
  PairPack pack;
  memcpy(pack.Splice(kHeaderSize, 0, bytes.size() - kHeaderSize), src + kHeaderSize,
         bytes.size() - kHeaderSize);
  pack.AddPairs(ReadHeader(src) >> 20);
  return pack;
}

}  // namespace damselfly::core
