// RdbLoader: reads Redis's RDB format, versions 1 to 10 (core/rdb_format.h), into
// damselfly's values: DUMP payloads for RESTORE now, whole files at start-up next.
//
// Every encoding Redis 7.0 writes is read (integer and LZF strings, quicklist 2 of
// listpacks or plain nodes, hash/zset listpacks, intsets, ZSET_2, streams of listpacks),
// and those of Redis 6.x and older (RDB 9: ziplist lists, hashes and sorted sets,
// quicklists of ziplists, zipmap hashes, plain LIST/SET/HASH, ZSET with text scores,
// STREAM_LISTPACKS), and Redis 7.2's SET_LISTPACK. A value is rebuilt through its object's
// own API with the server's current thresholds (collection_limits.h), so its encoding is
// the one damselfly would give the same content: a HASH of 5 small fields becomes a
// listpack, a HASH_LISTPACK of 1000 fields a hash table.
//
// Hostile input: every length is checked against the bytes that actually arrive (a string
// grows as its bytes are read, so a lying length costs no allocation beyond the input);
// listpacks, ziplists, zipmaps and intsets are validated whole before use; duplicate set
// members or hash fields, NaN scores, odd pair counts, empty collections, malformed stream
// nodes, inconsistent consumer groups (duplicates, a consumer's ID missing from its
// group's PEL, a PEL entry without a consumer) and unknown types are refused. A refused value is destroyed whole: the caller
// gets an error, never a partial object.
//
// Thread contract: not thread-safe; the values are built in the calling thread's heap
// (ObjMalloc), so call it on the thread of the shard that will own them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/server/db_slice.h"
#include "src/server/prime_value.h"

namespace damselfly {

namespace core {
class Stream;
}  // namespace core

// Where the loader's bytes come from: a file, a socket, a string.
class RdbSource {
 public:
  virtual ~RdbSource() = default;
  // Reads up to `n` bytes into dst; returns how many (0: the end of the input).
  virtual size_t Read(char* dst, size_t n) = 0;
};

class StringSource : public RdbSource {
 public:
  explicit StringSource(std::string_view data) : data_(data) {}
  size_t Read(char* dst, size_t n) override;

 private:
  std::string_view data_;
};

// One key of a file, with what the opcodes before it said.
struct RdbEntry {
  DbIndex db = 0;
  std::string key;
  PrimeValue value;
  int64_t expire_ms = 0;           // unix ms; 0: none
  std::optional<McMeta> mc;        // from an mc-flags AUX field (rdb_format.h)
  std::optional<uint64_t> idle_s;  // IDLE opcode
  std::optional<uint8_t> freq;     // FREQ opcode
};

class RdbLoader {
 public:
  // Reads from `source`, buffering what it reads.
  explicit RdbLoader(RdbSource* source) : source_(source) {}
  // Reads `data` in place, which must outlive the loader (a DUMP payload).
  explicit RdbLoader(std::string_view data) : data_(data) {}

  // --- files.
  // Reads "REDIS" and the version; false when it is not an RDB file or of a version
  // newer than 10.
  bool LoadHeader();
  int version() const { return version_; }
  // Reads up to the next key into *entry (true), or to the end (false with error()
  // empty: EOF met, checksum verified when the file has one). AUX fields are kept (aux());
  // keys whose collections are empty are skipped, as Redis does. False with error()
  // set when the input is malformed or truncated.
  bool Next(RdbEntry* entry) {
    return Next(entry, [](std::string_view) { return true; });
  }
  // The same, for the keys `keep` accepts: the values of the others are read past
  // without being decoded (only their framing is checked).
  bool Next(RdbEntry* entry, absl::FunctionRef<bool(std::string_view key)> keep);
  // The value of the AUX field `key` seen so far ("redis-ver", "ctime"...), or nullopt.
  std::optional<std::string> Aux(std::string_view key) const;
  // The libraries of FUNCTION2 opcodes met so far (their code, for FUNCTION LOAD).
  const std::vector<std::string>& functions() const { return functions_; }

  // --- one value.
  // Reads a value of RDB type `type` into *value. False with error() set when
  // malformed (*value unchanged); with empty_value() when well formed but an empty
  // collection (Redis skips such keys in files and refuses them in RESTORE).
  bool LoadValue(uint8_t type, PrimeValue* value);
  bool ReadType(uint8_t* type) { return ReadByte(type); }

  const std::string& error() const { return error_; }
  bool empty_value() const { return empty_value_; }
  // Whether every byte of the input was read.
  bool AtEnd();
  // The bytes of input consumed so far (after the last Next: where the file's RDB ends,
  // checksum included; an AOF's preamble is followed by commands).
  uint64_t consumed() const { return consumed_before_ + pos_; }

  // --- primitives, for the file reader and tests.
  bool ReadLength(uint64_t* length);
  bool ReadString(std::string* value);

 private:
  bool Fail(std::string_view what);
  // Fails for an empty collection (see empty_value()).
  bool Empty();
  bool Ensure(size_t n);
  bool ReadBytes(size_t n, std::string* out);
  bool ReadByte(uint8_t* byte);
  bool ReadLengthOrEncoding(uint64_t* length, bool* encoded);
  bool ReadLe(size_t bytes, uint64_t* value);
  bool ReadTextDouble(double* value);
  bool ReadBinaryDouble(double* value);

  // Reads past a value of RDB type `type` (or a string) without building it.
  bool SkipValue(uint8_t type);
  bool SkipString();
  bool SkipBytes(uint64_t n);

  bool LoadString(PrimeValue* value);
  bool LoadListElements(PrimeValue* value);
  bool LoadQuicklist(PrimeValue* value, bool ziplist_nodes);
  bool LoadListZiplist(PrimeValue* value);
  bool LoadSetElements(PrimeValue* value);
  bool LoadSetIntset(PrimeValue* value);
  bool LoadSetListpack(PrimeValue* value);
  bool LoadZSetElements(PrimeValue* value, bool binary_scores);
  bool LoadZSetPacked(PrimeValue* value, bool ziplist);
  bool LoadHashElements(PrimeValue* value);
  bool LoadHashPacked(PrimeValue* value, uint8_t type);
  bool LoadHashListpack(std::string_view blob, PrimeValue* value);
  bool BuildHash(const std::vector<std::string>& pairs, PrimeValue* value);
  bool LoadStream(PrimeValue* value, uint8_t type);
  bool LoadStreamGroups(uint8_t type, core::Stream* stream);

  RdbSource* source_ = nullptr;
  std::string buf_;        // what was read from the source
  std::string_view data_;  // the input at hand: buf_, or the in-memory input
  size_t pos_ = 0;         // data_[pos_, ...) is not consumed yet
  uint64_t consumed_before_ = 0;  // input consumed and dropped from buf_
  uint64_t crc_ = 0;       // of the bytes consumed before crc_from_
  size_t crc_from_ = 0;    // buf_ offset from which bytes are not in crc_ yet
  int version_ = 0;
  DbIndex db_ = 0;
  std::vector<std::pair<std::string, std::string>> aux_;
  std::vector<std::string> functions_;
  std::string error_;
  bool empty_value_ = false;
};

// RESTORE's decoding: checks the payload's footer (RDB version at most 10, CRC64) and
// reads the one value it holds into *value. False with Redis's error text in *error:
// "ERR DUMP payload version or checksum are wrong" or "ERR Bad data format".
bool DecodeDumpPayload(std::string_view payload, PrimeValue* value, std::string* error);

}  // namespace damselfly
