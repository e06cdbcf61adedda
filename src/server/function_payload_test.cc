// FUNCTION DUMP / RESTORE payloads (function_payload.h) against bytes redis-server 7.0.15
// wrote. The commands around them are tested in function_family_test.cc.
#include "src/server/function_payload.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "src/core/crc64.h"

namespace damselfly {
namespace {

std::vector<std::string> Read(std::string_view payload, std::string* error) {
  std::vector<std::string> codes;
  ReadFunctionPayload(
      payload,
      [&](std::string code, std::string*) {
        codes.push_back(std::move(code));
        return true;
      },
      error);
  return codes;
}

// `body`, then the version and the checksum.
std::string Framed(std::string body) {
  body += std::string("\x0a\x00", 2);
  const uint64_t crc = core::Crc64(0, body);
  for (int i = 0; i < 8; ++i) body.push_back(char(crc >> (8 * i)));
  return body;
}

TEST(FunctionPayloadTest, ReadsRedisLzfCompressedLibrary) {
  // FUNCTION DUMP of redis-server 7.0.15 after loading this one library: Redis wrote
  // its code LZF compressed.
  const std::string code =
      "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return "
      "'myfunc myfunc myfunc' end)";
  const std::string payload(
      "\xf5\xc3\x40\x5b\x40\x6a\x1f\x23\x21\x6c\x75\x61\x20\x6e\x61\x6d\x65\x3d\x6d\x79\x6c\x69"
      "\x62\x0a\x72\x65\x64\x69\x73\x2e\x72\x65\x67\x69\x73\x74\x65\x72\x5f\x0b\x66\x75\x6e\x63"
      "\x74\x69\x6f\x6e\x28\x27\x6d\x79\x40\x0b\x02\x27\x2c\x20\x40\x06\x60\x12\x12\x6b\x65\x79"
      "\x73\x2c\x20\x61\x72\x67\x73\x29\x20\x72\x65\x74\x75\x72\x6e\x20\xa0\x25\x00\x20\x80\x2c"
      "\xa0\x06\x05\x27\x20\x65\x6e\x64\x29\x0a\x00\x6e\x87\xd3\x1c\x5d\x26\xdd\xe7",
      107);
  std::string error;
  EXPECT_EQ(Read(payload, &error), std::vector<std::string>{code});
  EXPECT_EQ(error, "");
}

TEST(FunctionPayloadTest, RoundTrip) {
  const std::string empty("\x0a\x00\x5d\x9b\x5c\x40\x0f\x7f\xa2\xda", 10);  // Redis's
  EXPECT_EQ(DumpFunctionPayload({}), empty);
  const std::string small = "#!lua name=a\nreturn 1";  // raw: too short to compress
  const std::string large = "#!lua name=b\n" + std::string(20000, 'x');  // 14+ bit lengths
  std::string incompressible = "#!lua name=c\n";
  for (int i = 0; i < 300; ++i) incompressible.push_back(char((i * 7919) % 251));
  const std::vector<std::string_view> codes = {small, large, incompressible};
  const std::string payload = DumpFunctionPayload(codes);
  EXPECT_EQ(payload[1], char(small.size()));
  EXPECT_EQ(uint8_t(payload[2 + small.size() + 1]), 0xc3);  // the large one compressed
  std::string error;
  EXPECT_EQ(Read(payload, &error), std::vector<std::string>(codes.begin(), codes.end()));
}

TEST(FunctionPayloadTest, RedisEncodings) {
  std::string error;
  // A 32-bit length, and integer-encoded strings (INT8, INT16, INT32).
  EXPECT_EQ(Read(Framed(std::string("\xf5\x80\x00\x00\x00\x03"
                                    "abc",
                                    9)),
                 &error),
            std::vector<std::string>{"abc"});
  EXPECT_EQ(
      Read(Framed(std::string("\xf5\xc0\xfe\xf5\xc1\x39\x30\xf5\xc2\x15\xcd\x5b\x07", 13)), &error),
      (std::vector<std::string>{"-2", "12345", "123456789"}));
  // A library of Redis 7.0's release candidates: name, engine, no description, code.
  EXPECT_EQ(Read(Framed(std::string("\xf6\x01x\x03LUA\x00\x08return 1", 17)), &error),
            std::vector<std::string>{"#!LUA name=x\nreturn 1"});
}

TEST(FunctionPayloadTest, Errors) {
  std::string error;
  auto read_error = [&](std::string_view payload) {
    error.clear();
    Read(payload, &error);
    return error;
  };
  std::string good = DumpFunctionPayload({});
  EXPECT_EQ(read_error("short"), "ERR DUMP payload version or checksum are wrong");
  std::string corrupt = good;
  corrupt[3] ^= 1;
  EXPECT_EQ(read_error(corrupt), "ERR DUMP payload version or checksum are wrong");
  std::string newer("\x0b\x00", 2);  // version 11, with a right checksum
  const uint64_t crc = core::Crc64(0, newer);
  for (int i = 0; i < 8; ++i) newer.push_back(char(crc >> (8 * i)));
  EXPECT_EQ(read_error(newer), "ERR DUMP payload version or checksum are wrong");
  EXPECT_EQ(read_error(Framed("\x01\x03"
                              "abc")),
            "ERR given type is not a function");
  EXPECT_EQ(read_error(Framed("\xf5\x7f")), "ERR Failed loading library payload");
  EXPECT_EQ(read_error(Framed("\xf5\xc3\x05\x10"
                              "abc")),
            "ERR Failed loading library payload");
  EXPECT_EQ(read_error(Framed("\xf6\x01x")), "ERR Failed loading engine name");
  // The callback's error stops the read.
  int calls = 0;
  EXPECT_FALSE(ReadFunctionPayload(
      DumpFunctionPayload({"#!lua name=a\n", "#!lua name=b\n"}),
      [&](std::string, std::string* error) {
        ++calls;
        *error = "ERR no";
        return false;
      },
      &error));
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(error, "ERR no");
}

}  // namespace
}  // namespace damselfly
