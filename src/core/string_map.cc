#include "src/core/string_map.h"

namespace damselfly::core {

using dense_internal::LenPrefixed;

StringMap& StringMap::operator=(StringMap&& other) noexcept {
  Clear();
  map_ = std::move(other.map_);
  std::swap(blocks_bytes_, other.blocks_bytes_);
  return *this;
}

std::pair<std::string_view, std::string_view> StringMap::Split(const Block* b) {
  const char* p = reinterpret_cast<const char*>(b);
  std::string_view field = LenPrefixed::Read(p);
  const char* value_at = field.data() + field.size();
  return {field, LenPrefixed::Read(value_at)};
}

StringMap::Block* StringMap::MakeBlock(std::string_view field, std::string_view value) {
  size_t size = LenPrefixed::HeaderSize(field.size()) + field.size() +
                LenPrefixed::HeaderSize(value.size()) + value.size();
  char* block = static_cast<char*>(ObjMalloc(size));
  LenPrefixed::Write(LenPrefixed::Write(block, field), value);
  blocks_bytes_ += ObjUsableSize(block);
  return reinterpret_cast<Block*>(block);
}

void StringMap::FreeBlock(Block* b) {
  blocks_bytes_ -= ObjUsableSize(b);
  ObjFree(b);
}

bool StringMap::Set(std::string_view field, std::string_view value) {
  Block* old = map_.Replace(MakeBlock(field, value));
  if (old == nullptr) return true;
  FreeBlock(old);
  return false;
}

bool StringMap::SetIfAbsent(std::string_view field, std::string_view value) {
  if (map_.Find(field) != nullptr) return false;
  map_.Insert(MakeBlock(field, value));
  return true;
}

std::optional<std::string_view> StringMap::Get(std::string_view field) const {
  const Block* b = map_.Find(field);
  if (b == nullptr) return std::nullopt;
  return Split(b).second;
}

bool StringMap::Remove(std::string_view field) {
  Block* b = map_.Erase(field);
  if (b == nullptr) return false;
  FreeBlock(b);
  return true;
}

bool StringMap::FreeSome(size_t max) {
  return map_.DrainSome(max, [this](Block* b) {
    blocks_bytes_ -= ObjUsableSize(b);
    ObjFree(b);
  });
}

void StringMap::Clear() {
  map_.ForEach([](Block* b) { ObjFree(b); });
  map_.Clear();
  blocks_bytes_ = 0;
}

}  // namespace damselfly::core
