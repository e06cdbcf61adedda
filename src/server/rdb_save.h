// RdbSerializer: writes values, and the pieces of a file around them, in Redis 7.0's RDB
// format (version 10, core/rdb_format.h), so that redis-server loads what damselfly
// writes: DUMP payloads now, snapshot files next (the snapshot's shard fibers each own a
// serializer and hand its bytes to the file writer).
//
// The encodings written are the ones Redis 7.0 writes for the same content:
//   strings      integers of up to 32 bits as RDB_ENC_INT*; with compression on, strings
//                over 20 bytes as LZF when that saves more than 4 bytes (a value kept
//                compressed in memory is written as its stored LZF stream, not
//                compressed again); others raw;
//   lists        QUICKLIST_2, each node's listpack as it is (packed container);
//   hashes       HASH_LISTPACK (the listpack as it is) or HASH;
//   sets         SET_INTSET (the intset as it is) or SET. A listpack-encoded set (Redis
//                7.2's encoding, which damselfly uses) is written as SET, the plain form:
//                Redis 7.0 cannot load 7.2's SET_LISTPACK type, and the plain form costs
//                about a byte per member more;
//   sorted sets  ZSET_LISTPACK (the listpack as it is) or ZSET_2 (binary doubles, from
//                the highest score down, as Redis writes them so that loading appends);
//   streams      STREAM_LISTPACKS_2: nodes rebuilt in Redis's node format (master entry,
//                same-fields flag, lp-count) from the entries, split by the
//                stream-node-max-* limits, then length, last ID, first ID, max deleted
//                ID, entries added and the consumer groups (name, last ID, entries
//                read, PEL with delivery times and counts, consumers with seen times
//                and their IDs), byte for byte Redis 7.0's.
// Memcached client flags travel as an AUX field right before their key (rdb_format.h
// kAuxMcFlags), which redis-server skips.
//
// Output: bytes accumulate in a buffer; FlushIfLarger hands them to a sink once past a
// threshold. With SetSink, large collections are also flushed between elements, so a
// snapshot never holds a whole large value's encoding in memory. The CRC64 that ends a
// file covers everything written, flushed or not.
//
// Thread contract: not thread-safe; used on the thread that owns the values it writes
// (their shard's), as the values are read in place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "src/server/db_slice.h"
#include "src/server/prime_value.h"

namespace damselfly {

class RdbSerializer {
 public:
  using Sink = std::function<void(std::string_view bytes)>;

  // `compression`: Redis's rdbcompression (LZF for strings over 20 bytes).
  explicit RdbSerializer(bool compression);

  // After this, SaveEntry and SaveValue flush to `sink` whenever the buffer passes
  // `threshold` bytes, between the elements of a collection as well.
  void SetSink(size_t threshold, Sink sink);

  // --- file pieces.
  // "REDIS0010" and the AUX fields redis-ver, redis-bits, ctime and used-mem.
  void SaveHeader(std::string_view redis_ver, int64_t ctime_s, uint64_t used_mem);
  void SaveAux(std::string_view key, std::string_view value);
  // A FUNCTION2 record per library (its code), as Redis 7.0 writes after the AUX fields.
  void SaveFunctions(const std::vector<std::string>& codes);
  // SELECTDB db, then RESIZEDB with the database's key and deadline counts.
  void SaveSelectDb(DbIndex db, uint64_t db_size, uint64_t expires_size);
  // One key: its memcached flags AUX when `mc` is given, EXPIRETIME_MS when
  // expire_ms > 0, then type, key, value. The caller writes SaveSelectDb before the keys
  // of each database.
  void SaveEntry(std::string_view key, const PrimeValue& value, int64_t expire_ms,
                 const McMeta* mc = nullptr);
  // EOF and the CRC64 of all the bytes written (0 when `checksum` is false: Redis's
  // rdbchecksum no, which loaders then do not check).
  void SaveEof(bool checksum = true);

  // --- one value: its type byte and encoding (a DUMP payload's start).
  void SaveValue(const PrimeValue& value);

  // The bytes not flushed yet.
  std::string_view buffer() const { return buf_; }
  // Hands the buffer to `sink` and empties it when it holds more than `threshold` bytes.
  // Returns the bytes handed over.
  size_t FlushIfLarger(size_t threshold, const Sink& sink);
  // Takes the buffer (a DUMP payload, a test).
  std::string TakeBuffer();
  // Takes the buffer for a writer that checksums what it writes itself (snapshots) by
  // swapping it with *spare, emptied first: two buffers serve in turn and keep their
  // capacity. SaveEof's CRC does not cover these bytes.
  void SwapOutBuffer(std::string* spare);

  // --- primitives, for the file writer and tests.
  void SaveLength(uint64_t length);
  // A string as Redis's rdbSaveRawString writes it.
  void SaveString(std::string_view value);

 private:
  uint8_t SaveType(const PrimeValue& value);
  void SaveObject(const PrimeValue& value);
  void SaveStringValue(const PrimeValue& value);
  void SaveList(const PrimeValue& value);
  void SaveHash(const PrimeValue& value);
  void SaveSet(const PrimeValue& value);
  void SaveZSet(const PrimeValue& value);
  void SaveStream(const PrimeValue& value);
  void SaveStreamGroups(const PrimeValue& value);
  void SaveBinaryDouble(double value);
  // Flushes to the sink set by SetSink when past its threshold.
  void MaybeFlush();
  void Flush();

  std::string buf_;
  std::string listpack_;  // a small hash's or sorted set's listpack, made to be saved
  uint64_t crc_ = 0;  // of the bytes flushed so far
  bool compression_;
  size_t sink_threshold_ = 0;
  Sink sink_;
};

// DUMP's payload for `value`: the value, RDB version 10 (2 bytes little endian) and the
// CRC64 of both (8 bytes little endian). Redis writes it with rdbcompression's setting;
// damselfly with its default (on).
std::string MakeDumpPayload(const PrimeValue& value);

}  // namespace damselfly
