// The numbers of Redis's RDB format, version 10 (Redis 7.0), as its file format
// documentation and rdb.h define them: the file header, the opcodes between entries, the
// value types, and the length and string encodings. The encoder (server/rdb_save.h) and
// the decoder (server/rdb_load.h) share them; the RDB 9 types (Redis 6.x: ziplists,
// zipmaps) are here because the decoder still reads them.
//
// A file is:
//   "REDIS0010"  AUX*  (SELECTDB db RESIZEDB n m  entry*)*  EOF  crc64 (8 bytes LE)
// an entry:
//   [EXPIRETIME_MS ms(8 bytes LE)] [IDLE len | FREQ byte] type key value
// A DUMP payload is:  type value  version(2 bytes LE)  crc64 (8 bytes LE)
//
// Thread-safety: constants only.
#pragma once

#include <cstdint>
#include <string_view>

namespace damselfly::core::rdb {

inline constexpr uint16_t kVersion = 10;
// The file starts with kMagic and the version as 4 decimal digits: "REDIS0010".
inline constexpr std::string_view kMagic = "REDIS";
inline constexpr size_t kHeaderBytes = 9;

// Lengths: the two high bits of the first byte say how the length is stored.
//   00xxxxxx            6 bits
//   01xxxxxx xxxxxxxx   14 bits, big endian
//   10000000 + 4 bytes  32 bits, big endian
//   10000001 + 8 bytes  64 bits, big endian
//   11xxxxxx            not a length: a string in the special encoding xxxxxx
inline constexpr uint8_t kLen6Bit = 0;
inline constexpr uint8_t kLen14Bit = 1;
inline constexpr uint8_t kLen32Bit = 0x80;
inline constexpr uint8_t kLen64Bit = 0x81;
inline constexpr uint8_t kEncVal = 3;

// Special string encodings (the low 6 bits after kEncVal): integers little endian, or an
// LZF stream (core/lzf.h) preceded by its compressed and uncompressed lengths.
inline constexpr uint8_t kEncInt8 = 0;
inline constexpr uint8_t kEncInt16 = 1;
inline constexpr uint8_t kEncInt32 = 2;
inline constexpr uint8_t kEncLzf = 3;

// Value types.
inline constexpr uint8_t kTypeString = 0;
inline constexpr uint8_t kTypeList = 1;  // RDB 9 and older: a length and the elements
inline constexpr uint8_t kTypeSet = 2;
inline constexpr uint8_t kTypeZSet = 3;  // scores as text (see kDoubleNaN...)
inline constexpr uint8_t kTypeHash = 4;
inline constexpr uint8_t kTypeZSet2 = 5;  // scores as binary doubles, little endian
inline constexpr uint8_t kTypeModule = 6;
inline constexpr uint8_t kTypeModule2 = 7;
inline constexpr uint8_t kTypeHashZipmap = 9;
inline constexpr uint8_t kTypeListZiplist = 10;
inline constexpr uint8_t kTypeSetIntset = 11;
inline constexpr uint8_t kTypeZSetZiplist = 12;
inline constexpr uint8_t kTypeHashZiplist = 13;
inline constexpr uint8_t kTypeListQuicklist = 14;  // nodes are ziplists
inline constexpr uint8_t kTypeStreamListpacks = 15;
inline constexpr uint8_t kTypeHashListpack = 16;
inline constexpr uint8_t kTypeZSetListpack = 17;
inline constexpr uint8_t kTypeListQuicklist2 = 18;  // nodes are listpacks or plain
inline constexpr uint8_t kTypeStreamListpacks2 = 19;
// Redis 7.2's, which Redis 7.0 cannot load: read, never written.
inline constexpr uint8_t kTypeSetListpack = 20;

// Opcodes, in the type's place before an entry.
inline constexpr uint8_t kOpFunction2 = 245;
inline constexpr uint8_t kOpFunctionPreGa = 246;
inline constexpr uint8_t kOpModuleAux = 247;
inline constexpr uint8_t kOpIdle = 248;
inline constexpr uint8_t kOpFreq = 249;
inline constexpr uint8_t kOpAux = 250;
inline constexpr uint8_t kOpResizeDb = 251;
inline constexpr uint8_t kOpExpireTimeMs = 252;
inline constexpr uint8_t kOpExpireTime = 253;  // seconds, 4 bytes: RDB 1 to 8
inline constexpr uint8_t kOpSelectDb = 254;
inline constexpr uint8_t kOpEof = 255;

// A kTypeListQuicklist2 node's container.
inline constexpr uint8_t kQuicklistNodePlain = 1;   // one element, as a string
inline constexpr uint8_t kQuicklistNodePacked = 2;  // a listpack

// kTypeZSet's text scores: a length byte, or one of these alone.
inline constexpr uint8_t kDoubleNaN = 253;
inline constexpr uint8_t kDoublePosInf = 254;
inline constexpr uint8_t kDoubleNegInf = 255;

// Stream node entries (a stream listpack's per-entry flags).
inline constexpr int64_t kStreamItemDeleted = 1;
inline constexpr int64_t kStreamItemSameFields = 2;
// A stream node's key: its master ID, ms and seq as big-endian 64-bit words.
inline constexpr size_t kStreamIdBytes = 16;

// The AUX field damselfly writes before a key that has memcached client flags (and cas
// unique): "<flags>" or "<flags> <cas>". Redis skips AUX fields it does not know, so the
// file stays loadable by redis-server, which drops the flags.
inline constexpr std::string_view kAuxMcFlags = "mc-flags";

}  // namespace damselfly::core::rdb
