#include "src/core/string_set.h"

#include <cstring>
#include <utility>

namespace damselfly::core {

namespace dense_internal {

char* LenPrefixed::Write(char* dst, std::string_view s) {
  if (s.size() < 255) {
    *dst++ = static_cast<char>(s.size());
  } else {
    *dst++ = static_cast<char>(0xFF);
    uint32_t len = static_cast<uint32_t>(s.size());
    std::memcpy(dst, &len, sizeof(len));
    dst += sizeof(len);
  }
  if (!s.empty()) std::memcpy(dst, s.data(), s.size());
  return dst + s.size();
}

}  // namespace dense_internal

using dense_internal::LenPrefixed;

StringSet& StringSet::operator=(StringSet&& other) noexcept {
  Clear();
  set_ = std::move(other.set_);
  std::swap(blocks_bytes_, other.blocks_bytes_);
  return *this;
}

bool StringSet::Add(std::string_view member) {
  const uint64_t hash = set_.Hash(member);
  if (set_.Find(member, hash) != nullptr) return false;
  char* block =
      static_cast<char*>(ObjMalloc(LenPrefixed::HeaderSize(member.size()) + member.size()));
  LenPrefixed::Write(block, member);
  blocks_bytes_ += ObjUsableSize(block);
  set_.Insert(reinterpret_cast<Block*>(block), hash);
  return true;
}

bool StringSet::Remove(std::string_view member) {
  Block* b = set_.Erase(member);
  if (b == nullptr) return false;
  FreeBlock(b);
  return true;
}

std::string StringSet::Pop(uint64_t rnd) {
  Block* b = set_.EraseRandom(rnd);
  std::string member(Key(b));
  FreeBlock(b);
  return member;
}

void StringSet::Clear() {
  set_.ForEach([](Block* b) { ObjFree(b); });
  set_.Clear();
  blocks_bytes_ = 0;
}

bool StringSet::FreeSome(size_t max) {
  return set_.DrainSome(max, [this](Block* b) { FreeBlock(b); });
}

void StringSet::FreeBlock(Block* b) {
  blocks_bytes_ -= ObjUsableSize(b);
  ObjFree(b);
}

}  // namespace damselfly::core
