// Bitmap commands through the Service, with 1, 2 and 4 shards (test_utils.h). Replies and
// error texts are Redis 7.0's (checked against redis-server 7.0.15; tests/test_bitops.py
// checks them over the wire too).
#include <string>
#include <vector>

#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;

constexpr std::string_view kOffsetErr = "ERR bit offset is not an integer or out of range";
constexpr std::string_view kBitErr = "ERR bit is not an integer or out of range";
constexpr std::string_view kNotInt = "ERR value is not an integer or out of range";
constexpr std::string_view kTypeErr =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "
    "i64 is.";

class BitopsFamilyTest : public ServiceTest {};

TEST_P(BitopsFamilyTest, SetBitGetBit) {
  EXPECT_EQ(Run({"setbit", "k", "7", "1"}), 0);
  EXPECT_EQ(Run({"get", "k"}), "\x01");
  EXPECT_EQ(Run({"setbit", "k", "7", "1"}), 1);
  EXPECT_EQ(Run({"setbit", "k", "7", "0"}), 1);
  EXPECT_EQ(Run({"setbit", "k", "1", "1"}), 0);
  EXPECT_EQ(Run({"get", "k"}), "@");
  EXPECT_EQ(Run({"setbit", "k", "100", "1"}), 0);  // grows with zero bytes
  EXPECT_EQ(Run({"strlen", "k"}), 13);
  EXPECT_EQ(Run({"getbit", "k", "100"}), 1);
  EXPECT_EQ(Run({"getbit", "k", "99"}), 0);
  EXPECT_EQ(Run({"getbit", "k", "4294967295"}), 0);  // past the end
  EXPECT_EQ(Run({"getbit", "missing", "0"}), 0);
  EXPECT_EQ(Run({"object", "encoding", "k"}), "raw");

  EXPECT_THAT(Run({"setbit", "k", "-1", "1"}), ErrArg(kOffsetErr));
  EXPECT_THAT(Run({"setbit", "k", "4294967296", "1"}), ErrArg(kOffsetErr));  // 512 MB
  EXPECT_THAT(Run({"setbit", "k", "x", "1"}), ErrArg(kOffsetErr));
  EXPECT_THAT(Run({"setbit", "k", "1", "2"}), ErrArg(kBitErr));
  EXPECT_THAT(Run({"setbit", "k", "1", "-1"}), ErrArg(kBitErr));
  EXPECT_THAT(Run({"getbit", "k", "-1"}), ErrArg(kOffsetErr));
  EXPECT_THAT(Run({"setbit", "k", "1"}), ErrArg(ArityError("setbit")));
  EXPECT_THAT(Run({"getbit", "k"}), ErrArg(ArityError("getbit")));
  EXPECT_EQ(Run({"lpush", "l", "a"}), 1);
  EXPECT_THAT(Run({"setbit", "l", "1", "1"}), ErrArg("WRONGTYPE"));
  EXPECT_THAT(Run({"getbit", "l", "1"}), ErrArg("WRONGTYPE"));
  // The arguments are checked before the type, as Redis does.
  EXPECT_THAT(Run({"setbit", "l", "x", "1"}), ErrArg(kOffsetErr));
}

// Values stored as an int, packed ASCII or LZF-compressed are converted once, then written
// in place; the string reads back right through every path.
TEST_P(BitopsFamilyTest, SetBitOnEveryEncoding) {
  EXPECT_EQ(Run({"set", "int", "123"}), "OK");
  EXPECT_EQ(Run({"setbit", "int", "7", "0"}), 1);  // '1' = 0x31 -> '0'
  EXPECT_EQ(Run({"get", "int"}), "023");
  EXPECT_EQ(Run({"object", "encoding", "int"}), "raw");
  EXPECT_EQ(Run({"setbit", "int", "7", "1"}), 0);
  EXPECT_EQ(Run({"incr", "int"}), 124);  // digits written in place still count as a number

  const std::string packed = "abcdefghijklmnopqrstuvwxyz0123456789";  // 36 ASCII: packed
  EXPECT_EQ(Run({"set", "packed", packed}), "OK");
  EXPECT_EQ(Run({"setbit", "packed", "2", "0"}), 1);  // 'a' 0x61 -> 0x41 'A'
  EXPECT_EQ(Run({"get", "packed"}), "A" + packed.substr(1));
  EXPECT_EQ(Run({"setbit", "packed", "2", "1"}), 0);
  EXPECT_EQ(Run({"get", "packed"}), packed);

  const std::string zeros(4096, '\0');  // LZF-compressed
  EXPECT_EQ(Run({"set", "lzf", zeros}), "OK");
  EXPECT_EQ(Run({"setbit", "lzf", "32767", "1"}), 0);
  EXPECT_EQ(Run({"bitcount", "lzf"}), 1);
  EXPECT_EQ(Run({"bitpos", "lzf", "1"}), 32767);
  std::string expected = zeros;
  expected.back() = '\x01';
  EXPECT_EQ(Run({"get", "lzf"}), expected);
  EXPECT_EQ(Run({"object", "encoding", "lzf"}), "raw");

  // APPEND and SETRANGE on a bitmap keep working, and a SET makes it a plain value again.
  EXPECT_EQ(Run({"append", "lzf", "x"}), 4097);
  EXPECT_EQ(Run({"set", "int", "5"}), "OK");
  EXPECT_EQ(Run({"object", "encoding", "int"}), "int");
}

// A bitmap filled from its start grows in place, amortised (it would copy the whole value
// per byte otherwise), and stays right.
TEST_P(BitopsFamilyTest, SequentialGrowth) {
  constexpr int kBits = 40000;
  std::vector<std::vector<std::string_view>> batch;
  std::vector<std::string> offsets;
  offsets.reserve(kBits);
  for (int i = 0; i < kBits; i += 3) offsets.push_back(std::to_string(i));
  for (const std::string& offset : offsets) batch.push_back({"setbit", "seq", offset, "1"});
  std::unique_ptr<TestConnection> conn = Connect(0);
  for (const RespValue& reply : conn->RunPipeline(batch)) ASSERT_EQ(reply, 0);
  EXPECT_EQ(Run({"bitcount", "seq"}), int64_t(offsets.size()));
  EXPECT_EQ(Run({"strlen", "seq"}), (kBits - 1) / 8 + 1);
  EXPECT_EQ(Run({"getbit", "seq", "39999"}), 1);
  EXPECT_EQ(Run({"getbit", "seq", "39998"}), 0);
  EXPECT_GE(Run({"memory", "usage", "seq"}).integer, (kBits - 1) / 8 + 1);
}

TEST_P(BitopsFamilyTest, BitCount) {
  EXPECT_EQ(Run({"set", "s", "foobar"}), "OK");
  EXPECT_EQ(Run({"bitcount", "s"}), 26);
  EXPECT_EQ(Run({"bitcount", "s", "0", "0"}), 4);
  EXPECT_EQ(Run({"bitcount", "s", "1", "1"}), 6);
  EXPECT_EQ(Run({"bitcount", "s", "1", "1", "byte"}), 6);
  EXPECT_EQ(Run({"bitcount", "s", "5", "30", "BIT"}), 17);
  EXPECT_EQ(Run({"bitcount", "s", "-2", "-1"}), 7);
  EXPECT_EQ(Run({"bitcount", "s", "-1", "-2"}), 0);
  EXPECT_EQ(Run({"bitcount", "s", "-100", "100"}), 26);
  EXPECT_EQ(Run({"bitcount", "s", "10", "20"}), 0);
  EXPECT_EQ(Run({"bitcount", "missing", "a", "b"}), 0);  // Redis 7.0 looks the key up first
  EXPECT_THAT(Run({"bitcount", "s", "1"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"bitcount", "s", "a", "1"}), ErrArg(kNotInt));
  EXPECT_THAT(Run({"bitcount", "s", "1", "2", "bits"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"bitcount", "s", "1", "2", "bit", "x"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"bitcount"}), ErrArg(ArityError("bitcount")));
  EXPECT_EQ(Run({"set", "n", "1234"}), "OK");  // an int value is counted as its digits
  EXPECT_EQ(Run({"bitcount", "n"}), 13);
}

TEST_P(BitopsFamilyTest, BitPos) {
  EXPECT_EQ(Run({"set", "s", std::string("\xff\xf0\x00", 3)}), "OK");
  EXPECT_EQ(Run({"bitpos", "s", "0"}), 12);
  EXPECT_EQ(Run({"bitpos", "s", "1", "2"}), -1);
  EXPECT_EQ(Run({"bitpos", "s", "0", "2", "-1", "byte"}), 16);
  EXPECT_EQ(Run({"bitpos", "s", "1", "7", "15", "bit"}), 7);
  EXPECT_EQ(Run({"bitpos", "s", "0", "7", "11", "bit"}), -1);
  EXPECT_EQ(Run({"set", "ones", "\xff\xff"}), "OK");
  EXPECT_EQ(Run({"bitpos", "ones", "0"}), 16);  // no end given: the zeros after the string
  EXPECT_EQ(Run({"bitpos", "ones", "0", "1"}), 16);
  EXPECT_EQ(Run({"bitpos", "ones", "0", "0", "-1"}), -1);  // an explicit end: none
  EXPECT_EQ(Run({"bitpos", "ones", "0", "5"}), -1);        // empty range
  EXPECT_EQ(Run({"bitpos", "missing", "0"}), 0);
  EXPECT_EQ(Run({"bitpos", "missing", "1"}), -1);
  EXPECT_THAT(Run({"bitpos", "s", "2"}), ErrArg("ERR The bit argument must be 1 or 0."));
  EXPECT_THAT(Run({"bitpos", "s", "x"}), ErrArg(kNotInt));
  EXPECT_THAT(Run({"bitpos", "s", "1", "a"}), ErrArg(kNotInt));
  EXPECT_THAT(Run({"bitpos", "s", "1", "0", "a", "foo"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"bitpos", "s", "1", "0", "1", "bit", "x"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"bitpos", "s"}), ErrArg(ArityError("bitpos")));
  EXPECT_EQ(Run({"lpush", "l", "a"}), 1);
  EXPECT_THAT(Run({"bitpos", "l", "1"}), ErrArg("WRONGTYPE"));
  EXPECT_THAT(Run({"bitcount", "l"}), ErrArg("WRONGTYPE"));
}

// BITOP's sources and destination on different shards when there are several.
TEST_P(BitopsFamilyTest, BitOpAcrossShards) {
  const std::string a = KeyOnShard(0, "a"), b = KeyOnShard(num_shards() - 1, "b");
  const std::string dst = KeyOnShard(num_shards() > 1 ? 1 : 0, "dst");
  EXPECT_EQ(Run({"set", a, std::string("\xff\x0f", 2)}), "OK");
  EXPECT_EQ(Run({"set", b, "\xf0"}), "OK");
  EXPECT_EQ(Run({"bitop", "and", dst, a, b}), 2);
  EXPECT_EQ(Run({"get", dst}), std::string("\xf0\x00", 2));
  EXPECT_EQ(Run({"object", "encoding", dst}), "raw");
  EXPECT_EQ(Run({"bitop", "OR", dst, a, b}), 2);
  EXPECT_EQ(Run({"get", dst}), std::string("\xff\x0f", 2));
  EXPECT_EQ(Run({"bitop", "xor", dst, a, b, "missing"}), 2);
  EXPECT_EQ(Run({"get", dst}), std::string("\x0f\x0f", 2));
  EXPECT_EQ(Run({"expire", dst, "100"}), 1);
  EXPECT_EQ(Run({"bitop", "not", dst, b}), 1);
  EXPECT_EQ(Run({"get", dst}), "\x0f");
  EXPECT_EQ(Run({"ttl", dst}), -1);  // the result is a new value
  EXPECT_EQ(Run({"bitop", "and", dst, "missing1", "missing2"}), 0);
  EXPECT_EQ(Run({"exists", dst}), 0);            // an empty result deletes the destination
  EXPECT_EQ(Run({"bitop", "and", a, a, b}), 2);  // the destination is a source
  EXPECT_EQ(Run({"get", a}), std::string("\xf0\x00", 2));

  const std::string list = KeyOnShard(num_shards() - 1, "list");
  EXPECT_EQ(Run({"lpush", list, "x"}), 1);
  EXPECT_THAT(Run({"bitop", "and", dst, a, list}), ErrArg("WRONGTYPE"));
  EXPECT_EQ(Run({"exists", dst}), 0);
  EXPECT_EQ(Run({"set", dst, "keep"}), "OK");
  EXPECT_THAT(Run({"bitop", "or", dst, a, list}), ErrArg("WRONGTYPE"));
  EXPECT_EQ(Run({"get", dst}), "keep");  // nothing written when a source is wrong
  EXPECT_THAT(Run({"bitop", "nand", dst, a}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"bitop", "not", dst, a, a}),
              ErrArg("ERR BITOP NOT must be called with a single source key."));
  EXPECT_THAT(Run({"bitop", "and", dst}), ErrArg(ArityError("bitop")));
  // Inside MULTI/EXEC, on EXEC's transaction.
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"bitop", "not", dst, a}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre(2)));
  EXPECT_EQ(Run({"get", dst}), std::string("\x0f\xff", 2));
}

TEST_P(BitopsFamilyTest, BitField) {
  EXPECT_THAT(Run({"bitfield", "k", "set", "u8", "0", "255", "get", "u8", "0"}),
              RespArray(ElementsAre(0, 255)));
  EXPECT_THAT(Run({"bitfield", "k", "incrby", "u8", "0", "10"}), RespArray(ElementsAre(9)));
  EXPECT_THAT(Run({"bitfield", "k", "overflow", "sat", "incrby", "u8", "0", "300"}),
              RespArray(ElementsAre(255)));
  EXPECT_THAT(Run({"bitfield", "k", "overflow", "fail", "incrby", "u8", "0", "1"}),
              RespArray(ElementsAre(IsNil())));
  EXPECT_THAT(Run({"bitfield", "k", "get", "i8", "0", "get", "i4", "4", "get", "u1", "7"}),
              RespArray(ElementsAre(-1, -1, 1)));
  // #N offsets count in fields of the type's width.
  EXPECT_THAT(Run({"bitfield", "k", "set", "i16", "#1", "-2", "get", "i16", "#1"}),
              RespArray(ElementsAre(0, -2)));
  EXPECT_EQ(Run({"strlen", "k"}), 4);
  EXPECT_THAT(
      Run({"bitfield", "k64", "set", "i64", "0", "-9223372036854775808", "get", "i64", "0"}),
      RespArray(ElementsAre(0, INT64_MIN)));
  EXPECT_THAT(Run({"bitfield", "k64", "overflow", "wrap", "incrby", "i64", "0", "-1"}),
              RespArray(ElementsAre(INT64_MAX)));
  EXPECT_THAT(Run({"bitfield", "k64", "set", "u63", "1", "9223372036854775807", "get", "u63", "1"}),
              RespArray(ElementsAre(INT64_MAX, INT64_MAX)));
  EXPECT_THAT(Run({"bitfield", "k", "set", "u8", "0", "-5", "get", "u8", "0"}),
              RespArray(ElementsAre(255, 251)));
  EXPECT_THAT(Run({"bitfield", "new"}), RespArray(ElementsAre()));
  EXPECT_THAT(Run({"bitfield", "new", "get", "u8", "100"}), RespArray(ElementsAre(0)));
  EXPECT_EQ(Run({"exists", "new"}), 0);
  // OVERFLOW FAIL still creates and grows the string, as Redis does.
  EXPECT_THAT(Run({"bitfield", "new", "overflow", "fail", "set", "u2", "14", "9"}),
              RespArray(ElementsAre(IsNil())));
  EXPECT_EQ(Run({"get", "new"}), std::string("\0\0", 2));
  EXPECT_THAT(Run({"bitfield_ro", "k", "get", "u4", "0"}), RespArray(ElementsAre(15)));

  EXPECT_THAT(Run({"bitfield", "k", "get", "u64", "0"}), ErrArg(kTypeErr));
  EXPECT_THAT(Run({"bitfield", "k", "get", "i65", "0"}), ErrArg(kTypeErr));
  EXPECT_THAT(Run({"bitfield", "k", "get", "I8", "0"}), ErrArg(kTypeErr));
  EXPECT_THAT(Run({"bitfield", "k", "get", "i0", "0"}), ErrArg(kTypeErr));
  EXPECT_THAT(Run({"bitfield", "k", "get", "i8", "-1"}), ErrArg(kOffsetErr));
  EXPECT_THAT(Run({"bitfield", "k", "get", "i8", "#-1"}), ErrArg(kOffsetErr));
  EXPECT_THAT(Run({"bitfield", "k", "get", "i8", "4294967296"}), ErrArg(kOffsetErr));
  EXPECT_THAT(Run({"bitfield", "k", "set", "i8", "0", "x"}), ErrArg(kNotInt));
  EXPECT_THAT(Run({"bitfield", "k", "overflow", "foo"}),
              ErrArg("ERR Invalid OVERFLOW type specified"));
  EXPECT_THAT(Run({"bitfield", "k", "get", "i8"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"bitfield", "k", "foo"}), ErrArg("ERR syntax error"));
  EXPECT_THAT(Run({"bitfield_ro", "k", "set", "i8", "0", "1"}),
              ErrArg("ERR BITFIELD_RO only supports the GET subcommand"));
  EXPECT_THAT(Run({"bitfield"}), ErrArg(ArityError("bitfield")));
  EXPECT_EQ(Run({"lpush", "l", "a"}), 1);
  EXPECT_THAT(Run({"bitfield", "l"}), ErrArg("WRONGTYPE"));
  EXPECT_THAT(Run({"bitfield", "l", "set", "i8", "0", "1"}), ErrArg("WRONGTYPE"));
  EXPECT_THAT(Run({"bitfield_ro", "l", "get", "i8", "0"}), ErrArg("WRONGTYPE"));
}

TEST_P(BitopsFamilyTest, KeyspaceEvents) {
  std::unique_ptr<TestConnection> subscriber = Connect(num_shards() - 1);
  EXPECT_THAT(subscriber->Run({"psubscribe", "__keyevent@*__:*"}), ArrLen(3));
  EXPECT_EQ(Run({"config", "set", "notify-keyspace-events", "E$g"}), "OK");
  Run({"setbit", "{t}a", "1", "1"});
  Run({"setbit", "{t}a", "1", "1"});   // the bit was set already: no event, as Redis 7.0
  Run({"setbit", "{t}a", "30", "0"});  // grows the string: an event
  Run({"bitfield", "{t}a", "incrby", "u8", "0", "1"});
  Run({"bitfield", "{t}a", "set", "u8", "0", "65"});  // the same value: no event
  Run({"bitfield", "{t}a", "overflow", "fail", "incrby", "u2", "0", "9"});  // refused
  Run({"bitfield", "{t}a", "get", "u8", "0"});                              // a read: nothing
  Run({"bitop", "not", "{t}b", "{t}a"});
  Run({"bitop", "and", "{t}b", "{t}missing"});
  EXPECT_EQ(Run({"config", "set", "notify-keyspace-events", ""}), "OK");
  auto event = [](std::string_view name, std::string_view key) {
    return RespArray(ElementsAre("pmessage", "__keyevent@*__:*",
                                 std::string("__keyevent@0__:") + std::string(name), key));
  };
  EXPECT_THAT(subscriber->TakePushes(),
              ElementsAre(event("setbit", "{t}a"), event("setbit", "{t}a"), event("setbit", "{t}a"),
                          event("set", "{t}b"), event("del", "{t}b")));
  EXPECT_THAT(subscriber->Run({"punsubscribe"}), ArrLen(3));
}

TEST_P(BitopsFamilyTest, WatchSeesSetBit) {
  EXPECT_EQ(Run({"set", "w", "x"}), "OK");
  EXPECT_EQ(Run({"watch", "w"}), "OK");
  std::unique_ptr<TestConnection> other = Connect(num_shards() - 1);
  EXPECT_EQ(other->Run({"setbit", "w", "0", "1"}), 0);
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"get", "w"}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), IsNil());
}

INSTANTIATE_SHARD_COUNTS(BitopsFamilyTest);

}  // namespace
}  // namespace damselfly
