#include "src/server/function_payload.h"

#include <cstdint>

#include "helio/base/strings.h"
#include "src/core/crc64.h"
#include "src/core/lzf.h"

namespace damselfly {
namespace {

constexpr uint8_t kOpcodeFunctionPreGa = 246;
constexpr uint8_t kOpcodeFunction2 = 245;
constexpr uint16_t kRdbVersion = 10;
constexpr size_t kFooterBytes = 10;

void AppendRdbLength(uint64_t length, std::string* out) {
  if (length < (1 << 6)) {
    out->push_back(char(length));
  } else if (length < (1 << 14)) {
    out->push_back(char(0x40 | (length >> 8)));
    out->push_back(char(length & 0xff));
  } else {
    const bool wide = length > UINT32_MAX;
    out->push_back(char(wide ? 0x81 : 0x80));
    for (int shift = wide ? 56 : 24; shift >= 0; shift -= 8) out->push_back(char(length >> shift));
  }
}

// As Redis writes strings over 20 bytes with rdbcompression on (its default): LZF when
// that saves more than 4 bytes, else raw.
void AppendRdbString(std::string_view value, std::string* out) {
  if (value.size() > 20) {
    std::string compressed(value.size() - 4, '\0');
    size_t length =
        core::LzfCompress(value.data(), value.size(), compressed.data(), compressed.size());
    if (length > 0) {
      out->push_back(char(0xc3));  // RDB_ENCVAL << 6 | RDB_ENC_LZF
      AppendRdbLength(length, out);
      AppendRdbLength(value.size(), out);
      out->append(compressed.data(), length);
      return;
    }
  }
  AppendRdbLength(value.size(), out);
  out->append(value);
}

// Reads RDB payload bytes: lengths and strings in any of Redis's encodings.
class RdbReader {
 public:
  explicit RdbReader(std::string_view data) : data_(data) {}
  bool empty() const { return data_.empty(); }
  bool ReadByte(uint8_t* byte) {
    if (data_.empty()) return false;
    *byte = uint8_t(data_[0]);
    data_.remove_prefix(1);
    return true;
  }
  // A length; *encoding is -1 for a plain length, else the RDB_ENC_* of a special one.
  bool ReadLength(uint64_t* length, int* encoding) {
    uint8_t first;
    if (!ReadByte(&first)) return false;
    *encoding = -1;
    switch (first >> 6) {
      case 0:
        *length = first & 0x3f;
        return true;
      case 1: {
        uint8_t second;
        if (!ReadByte(&second)) return false;
        *length = uint64_t(first & 0x3f) << 8 | second;
        return true;
      }
      case 2: {
        int bytes = first == 0x80 ? 4 : first == 0x81 ? 8 : 0;
        if (bytes == 0 || data_.size() < size_t(bytes)) return false;
        *length = 0;
        for (int i = 0; i < bytes; ++i) *length = *length << 8 | uint8_t(data_[i]);
        data_.remove_prefix(bytes);
        return true;
      }
      default:
        *encoding = first & 0x3f;
        *length = 0;
        return true;
    }
  }
  bool ReadString(std::string* value) {
    uint64_t length;
    int encoding;
    if (!ReadLength(&length, &encoding)) return false;
    if (encoding == -1) {
      if (data_.size() < length) return false;
      value->assign(data_.substr(0, length));
      data_.remove_prefix(length);
      return true;
    }
    if (encoding <= 2) {  // RDB_ENC_INT8, INT16, INT32: little-endian integers
      const size_t bytes = size_t(1) << encoding;
      if (data_.size() < bytes) return false;
      uint32_t raw = 0;
      for (size_t i = 0; i < bytes; ++i) raw |= uint32_t(uint8_t(data_[i])) << (8 * i);
      data_.remove_prefix(bytes);
      int64_t number = bytes == 1 ? int8_t(raw) : bytes == 2 ? int16_t(raw) : int32_t(raw);
      *value = std::to_string(number);
      return true;
    }
    uint64_t compressed_length, plain_length;
    if (encoding != 3 || !ReadLength(&compressed_length, &encoding) || encoding != -1 ||
        !ReadLength(&plain_length, &encoding) || encoding != -1 ||
        data_.size() < compressed_length) {
      return false;
    }
    value->resize(plain_length);
    if (!core::LzfDecompress(data_.data(), compressed_length, value->data(), plain_length)) {
      return false;
    }
    data_.remove_prefix(compressed_length);
    return true;
  }

 private:
  std::string_view data_;
};

// A library in the format of Redis 7.0's release candidates (name, engine, optional
// description, code without shebang), which Redis 7.0 still restores: as the code
// FUNCTION LOAD would take.
bool ReadPreGaLibrary(RdbReader* reader, std::string* code, std::string* error) {
  std::string name, engine, description, body;
  uint64_t has_description;
  int encoding;
  if (!reader->ReadString(&name)) {
    *error = "ERR Failed loading library name";
  } else if (!reader->ReadString(&engine)) {
    *error = "ERR Failed loading engine name";
  } else if (!reader->ReadLength(&has_description, &encoding) || encoding != -1) {
    *error = "ERR Failed loading library description indicator";
  } else if (has_description && !reader->ReadString(&description)) {
    *error = "ERR Failed loading library description";
  } else if (!reader->ReadString(&body)) {
    *error = "ERR Failed loading library blob";
  } else {
    *code = helio::StrCat("#!", engine, " name=", name, "\n", body);
    return true;
  }
  return false;
}

}  // namespace

std::string DumpFunctionPayload(absl::Span<const std::string_view> codes) {
  std::string payload;
  for (std::string_view code : codes) {
    payload.push_back(char(kOpcodeFunction2));
    AppendRdbString(code, &payload);
  }
  payload.push_back(char(kRdbVersion & 0xff));
  payload.push_back(char(kRdbVersion >> 8));
  const uint64_t crc = core::Crc64(0, payload);
  for (int i = 0; i < 8; ++i) payload.push_back(char(crc >> (8 * i)));
  return payload;
}

bool ReadFunctionPayload(std::string_view payload,
                         absl::FunctionRef<bool(std::string code, std::string* error)> library,
                         std::string* error) {
  if (payload.size() < kFooterBytes) {
    *error = "ERR DUMP payload version or checksum are wrong";
    return false;
  }
  const std::string_view footer = payload.substr(payload.size() - kFooterBytes);
  const uint16_t version = uint8_t(footer[0]) | uint16_t(uint8_t(footer[1])) << 8;
  uint64_t crc = 0;
  for (int i = 0; i < 8; ++i) crc |= uint64_t(uint8_t(footer[2 + i])) << (8 * i);
  if (version > kRdbVersion || core::Crc64(0, payload.substr(0, payload.size() - 8)) != crc) {
    *error = "ERR DUMP payload version or checksum are wrong";
    return false;
  }
  RdbReader reader(payload.substr(0, payload.size() - kFooterBytes));
  while (!reader.empty()) {
    uint8_t type;
    reader.ReadByte(&type);
    std::string code;
    if (type == kOpcodeFunctionPreGa) {
      if (!ReadPreGaLibrary(&reader, &code, error)) return false;
    } else if (type != kOpcodeFunction2) {
      *error = "ERR given type is not a function";
      return false;
    } else if (!reader.ReadString(&code)) {
      *error = "ERR Failed loading library payload";
      return false;
    }
    if (!library(std::move(code), error)) return false;
  }
  return true;
}

}  // namespace damselfly
