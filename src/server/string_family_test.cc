// String commands through the Service, with 1, 2 and 4 shards (test_utils.h). Error
// texts are Redis 7.0's (checked against redis-server 7.0.15; tests/test_strings.py
// checks them over the wire too).
#include <string>
#include <vector>

#include "helio/base/strings.h"
#include "helio/base/time.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;

constexpr std::string_view kSyntaxErr = "ERR syntax error";
constexpr std::string_view kNotInt = "ERR value is not an integer or out of range";
constexpr std::string_view kNotFloat = "ERR value is not a valid float";
constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";

class StringFamilyTest : public ServiceTest {};

TEST_P(StringFamilyTest, SetGet) {
  EXPECT_EQ(Run({"set", "k", "v"}), "OK");
  EXPECT_EQ(Run({"get", "k"}), "v");
  EXPECT_EQ(Run({"set", "k", ""}), "OK");
  EXPECT_EQ(Run({"get", "k"}), "");
  EXPECT_THAT(Run({"get", "missing"}), IsNil());
  EXPECT_THAT(Run({"set", "k"}), ErrArg(ArityError("set")));
  EXPECT_THAT(Run({"get", "a", "b"}), ErrArg(ArityError("get")));
}

TEST_P(StringFamilyTest, SetConditionsAndGet) {
  EXPECT_THAT(Run({"set", "k", "v1", "XX"}), IsNil());
  EXPECT_EQ(Run({"exists", "k"}), 0);
  EXPECT_EQ(Run({"set", "k", "v1", "NX"}), "OK");
  EXPECT_THAT(Run({"set", "k", "v2", "nx"}), IsNil());
  EXPECT_EQ(Run({"set", "k", "v3", "XX"}), "OK");
  EXPECT_EQ(Run({"get", "k"}), "v3");
  // GET returns the old value; with NX (allowed since 7.0) it does not set.
  EXPECT_EQ(Run({"set", "k", "v4", "GET"}), "v3");
  EXPECT_EQ(Run({"set", "k", "v5", "NX", "GET"}), "v4");
  EXPECT_EQ(Run({"get", "k"}), "v4");
  EXPECT_THAT(Run({"set", "new", "x", "XX", "GET"}), IsNil());
  EXPECT_EQ(Run({"exists", "new"}), 0);
}

TEST_P(StringFamilyTest, SetExpiryOptions) {
  EXPECT_EQ(Run({"set", "k", "v", "EX", "100"}), "OK");
  EXPECT_EQ(Run({"ttl", "k"}), 100);
  EXPECT_EQ(Run({"set", "k", "v2", "KEEPTTL"}), "OK");
  EXPECT_EQ(Run({"ttl", "k"}), 100);
  EXPECT_EQ(Run({"set", "k", "v", "EX", "10", "EX", "20"}), "OK");  // the last one wins
  EXPECT_EQ(Run({"ttl", "k"}), 20);
  EXPECT_EQ(Run({"set", "k", "v"}), "OK");  // a plain SET drops the TTL
  EXPECT_EQ(Run({"ttl", "k"}), -1);

  EXPECT_EQ(Run({"set", "k", "v", "PX", "100000"}), "OK");
  RespValue pttl = Run({"pttl", "k"});
  EXPECT_GT(pttl.integer, 99000);
  EXPECT_LE(pttl.integer, 100000);

  const int64_t at_s = UnixTimeMs() / 1000 + 1000;
  EXPECT_EQ(Run({"set", "k", "v", "EXAT", helio::StrCat(at_s)}), "OK");
  EXPECT_EQ(Run({"expiretime", "k"}), at_s);
  EXPECT_EQ(Run({"set", "k", "v", "PXAT", helio::StrCat(at_s * 1000 + 123)}), "OK");
  EXPECT_EQ(Run({"pexpiretime", "k"}), at_s * 1000 + 123);
  // A deadline in the past: OK, and the key is gone at once.
  EXPECT_EQ(Run({"set", "k", "v", "PXAT", "1"}), "OK");
  EXPECT_EQ(Run({"exists", "k"}), 0);
}

TEST_P(StringFamilyTest, SetOptionErrors) {
  for (std::string_view option : {"EX", "PX", "EXAT", "PXAT"}) {
    EXPECT_THAT(Run({"set", "k", "v", option, "0"}),
                ErrArg("ERR invalid expire time in 'set' command"))
        << option;
    EXPECT_THAT(Run({"set", "k", "v", option, "-1"}), ErrArg("invalid expire time")) << option;
    EXPECT_THAT(Run({"set", "k", "v", option, "1.5"}), ErrArg(kNotInt)) << option;
  }
  const std::vector<std::vector<std::string_view>> bad = {
      {"EX", "10", "PX", "100"}, {"NX", "XX"}, {"KEEPTTL", "EX", "10"},
      {"EX", "10", "KEEPTTL"},   {"EX"},       {"FOO"},
      {"EX", "10", "EXTRA"}};
  for (const std::vector<std::string_view>& options : bad) {
    std::vector<std::string_view> command = {"set", "k", "v"};
    command.insert(command.end(), options.begin(), options.end());
    EXPECT_THAT(Run(command), ErrArg(kSyntaxErr)) << command.size();
  }
  EXPECT_EQ(Run({"exists", "k"}), 0);
}

TEST_P(StringFamilyTest, GetSetGetDelGetEx) {
  EXPECT_THAT(Run({"getset", "k", "v1"}), IsNil());
  EXPECT_EQ(Run({"set", "k", "v1", "EX", "100"}), "OK");
  EXPECT_EQ(Run({"getset", "k", "v2"}), "v1");
  EXPECT_EQ(Run({"ttl", "k"}), -1);  // GETSET drops the TTL

  EXPECT_EQ(Run({"getex", "k", "EX", "100"}), "v2");
  EXPECT_EQ(Run({"ttl", "k"}), 100);
  EXPECT_EQ(Run({"getex", "k"}), "v2");
  EXPECT_EQ(Run({"ttl", "k"}), 100);  // a plain GETEX keeps it
  EXPECT_EQ(Run({"getex", "k", "PERSIST"}), "v2");
  EXPECT_EQ(Run({"ttl", "k"}), -1);
  EXPECT_THAT(Run({"getex", "k", "EX", "10", "PERSIST"}), ErrArg(kSyntaxErr));
  EXPECT_THAT(Run({"getex", "k", "PX", "0"}), ErrArg("ERR invalid expire time in 'getex' command"));

  EXPECT_EQ(Run({"getdel", "k"}), "v2");
  EXPECT_THAT(Run({"getdel", "k"}), IsNil());
  EXPECT_EQ(Run({"exists", "k"}), 0);
}

TEST_P(StringFamilyTest, SetNxSetExPSetEx) {
  EXPECT_EQ(Run({"setnx", "k", "v1"}), 1);
  EXPECT_EQ(Run({"setnx", "k", "v2"}), 0);
  EXPECT_EQ(Run({"get", "k"}), "v1");
  EXPECT_EQ(Run({"setex", "k", "100", "v"}), "OK");
  EXPECT_EQ(Run({"ttl", "k"}), 100);
  EXPECT_EQ(Run({"psetex", "k", "100000", "v"}), "OK");
  EXPECT_EQ(Run({"ttl", "k"}), 100);
  EXPECT_THAT(Run({"setex", "e", "0", "v"}), ErrArg("ERR invalid expire time in 'setex' command"));
  EXPECT_THAT(Run({"psetex", "e", "-5", "v"}),
              ErrArg("ERR invalid expire time in 'psetex' command"));
  EXPECT_THAT(Run({"setex", "e", "abc", "v"}), ErrArg(kNotInt));
  EXPECT_EQ(Run({"exists", "e"}), 0);
}

TEST_P(StringFamilyTest, IncrDecr) {
  EXPECT_EQ(Run({"incr", "n"}), 1);
  EXPECT_EQ(Run({"incrby", "n", "10"}), 11);
  EXPECT_EQ(Run({"decr", "n"}), 10);
  EXPECT_EQ(Run({"decrby", "n", "20"}), -10);
  EXPECT_EQ(Run({"get", "n"}), "-10");
  EXPECT_EQ(Run({"set", "t", "5", "EX", "100"}), "OK");
  EXPECT_EQ(Run({"incr", "t"}), 6);
  EXPECT_EQ(Run({"ttl", "t"}), 100);  // INCR keeps the TTL
}

TEST_P(StringFamilyTest, IncrErrors) {
  for (std::string_view value : {"abc", " 1", "01", "1.0", "+1", "", "9223372036854775808"}) {
    EXPECT_EQ(Run({"set", "k", value}), "OK");
    EXPECT_THAT(Run({"incr", "k"}), ErrArg(kNotInt)) << value;
    EXPECT_THAT(Run({"decrby", "k", "1"}), ErrArg(kNotInt)) << value;
    EXPECT_EQ(Run({"get", "k"}), value);  // unchanged
  }
  EXPECT_EQ(Run({"set", "k", "1"}), "OK");
  EXPECT_THAT(Run({"incrby", "k", "1.5"}), ErrArg(kNotInt));
  EXPECT_EQ(Run({"set", "k", "9223372036854775807"}), "OK");
  EXPECT_THAT(Run({"incr", "k"}), ErrArg(kOverflow));
  EXPECT_EQ(Run({"set", "k", "-9223372036854775808"}), "OK");
  EXPECT_THAT(Run({"decr", "k"}), ErrArg(kOverflow));
  EXPECT_EQ(Run({"set", "k", "0"}), "OK");
  EXPECT_THAT(Run({"decrby", "k", "-9223372036854775808"}), ErrArg("ERR decrement would overflow"));
  EXPECT_THAT(Run({"incr"}), ErrArg(ArityError("incr")));
  EXPECT_THAT(Run({"incrby", "k"}), ErrArg(ArityError("incrby")));
}

TEST_P(StringFamilyTest, IncrByFloat) {
  EXPECT_EQ(Run({"set", "f", "10.50"}), "OK");
  EXPECT_EQ(Run({"incrbyfloat", "f", "0.1"}), "10.6");
  EXPECT_EQ(Run({"incrbyfloat", "new", "3.0e3"}), "3000");
  EXPECT_THAT(Run({"incrbyfloat", "f", "abc"}), ErrArg(kNotFloat));
  EXPECT_EQ(Run({"set", "s", "text"}), "OK");
  EXPECT_THAT(Run({"incrbyfloat", "s", "1"}), ErrArg(kNotFloat));
}

TEST_P(StringFamilyTest, AppendStrlenRanges) {
  EXPECT_EQ(Run({"strlen", "k"}), 0);
  EXPECT_EQ(Run({"append", "k", "hello"}), 5);
  EXPECT_EQ(Run({"append", "k", " world"}), 11);
  EXPECT_EQ(Run({"strlen", "k"}), 11);
  EXPECT_EQ(Run({"getrange", "k", "0", "4"}), "hello");
  EXPECT_EQ(Run({"getrange", "k", "-5", "-1"}), "world");
  EXPECT_EQ(Run({"getrange", "k", "5", "1"}), "");
  EXPECT_EQ(Run({"setrange", "k", "6", "W"}), 11);
  EXPECT_EQ(Run({"get", "k"}), "hello World");
  EXPECT_EQ(Run({"setrange", "pad", "3", "x"}), 4);
  EXPECT_EQ(Run({"get", "pad"}), std::string_view("\0\0\0x", 4));
  EXPECT_THAT(Run({"setrange", "k", "-1", "x"}), ErrArg("ERR offset is out of range"));
  EXPECT_EQ(Run({"set", "n", "12"}), "OK");
  EXPECT_EQ(Run({"append", "n", "34"}), 4);
  EXPECT_EQ(Run({"incr", "n"}), 1235);  // an integer again after APPEND
}

// OBJECT ENCODING follows the value as commands change it (the model for the collection
// families' encoding switches).
TEST_P(StringFamilyTest, EncodingSwitches) {
  const std::vector<std::pair<std::string, std::string_view>> cases = {
      {"12345", "int"},
      {"-1", "int"},
      {"9223372036854775808", "embstr"},
      {"0123", "embstr"},
      {std::string(44, 'x'), "embstr"},
      {std::string(45, 'x'), "raw"}};
  for (const auto& [value, encoding] : cases) {
    EXPECT_EQ(Run({"set", "k", value}), "OK");
    EXPECT_EQ(Run({"object", "encoding", "k"}), encoding) << value;
    EXPECT_EQ(Run({"get", "k"}), value);
  }
  EXPECT_EQ(Run({"set", "k", "abc"}), "OK");
  EXPECT_EQ(Run({"append", "k", "d"}), 4);
  EXPECT_EQ(Run({"object", "encoding", "k"}), "raw");  // APPEND leaves a raw string
  EXPECT_EQ(Run({"set", "n", "10"}), "OK");
  EXPECT_EQ(Run({"incr", "n"}), 11);
  EXPECT_EQ(Run({"object", "encoding", "n"}), "int");
  EXPECT_EQ(Run({"setrange", "n", "1", "ab"}), 3);
  EXPECT_EQ(Run({"object", "encoding", "n"}), "raw");
  EXPECT_EQ(Run({"get", "n"}), "1ab");
  EXPECT_THAT(Run({"object", "encoding", "missing"}), IsNil());
}

// Values LZF compresses (512 B to 64 KiB of text) read back exactly, also after a change.
TEST_P(StringFamilyTest, CompressibleValues) {
  std::string text;
  for (int i = 0; text.size() < 4000; ++i) helio::StrAppend(&text, "word", i % 17, " ");
  EXPECT_EQ(Run({"set", "k", text}), "OK");
  EXPECT_EQ(Run({"get", "k"}), text);
  EXPECT_EQ(Run({"append", "k", "tail"}), int64_t(text.size() + 4));
  EXPECT_EQ(Run({"getrange", "k", "-8", "-1"}), text.substr(text.size() - 4) + "tail");
  EXPECT_EQ(Run({"setrange", "k", "0", "WORD"}), int64_t(text.size() + 4));
  EXPECT_EQ(Run({"get", "k"}), "WORD" + text.substr(4) + "tail");
}

// MSET / MGET / MSETNX with keys on every shard: one atomic cross-shard transaction.
TEST_P(StringFamilyTest, MultiKeyAcrossShards) {
  std::vector<std::string> keys;
  for (int i = 0; i < 8; ++i) keys.push_back(KeyOnShard(i % num_shards(), helio::StrCat("m", i)));
  std::vector<std::string_view> mset = {"mset"}, mget = {"mget"};
  for (const std::string& key : keys) {
    mset.insert(mset.end(), {key, key});
    mget.push_back(key);
  }
  mget.push_back("missing");
  EXPECT_EQ(Run(mset), "OK");
  RespValue values = Run(mget);
  ASSERT_THAT(values, ArrLen(9));
  for (size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(values.elements[i], keys[i]);
  EXPECT_THAT(values.elements[8], IsNil());

  // MSETNX sets all or nothing: one existing key on the last shard blocks the rest.
  const std::string fresh = KeyOnShard(0, "fresh");
  EXPECT_EQ(Run({"msetnx", fresh, "1", keys.back(), "2"}), 0);
  EXPECT_EQ(Run({"exists", fresh}), 0);
  EXPECT_EQ(Run({"get", keys.back()}), keys.back());
  EXPECT_EQ(Run({"msetnx", fresh, "1", KeyOnShard(num_shards() - 1, "fresh2"), "2"}), 1);
  EXPECT_EQ(Run({"get", fresh}), "1");

  // MSET drops the TTL of the keys it overwrites.
  EXPECT_EQ(Run({"set", keys[1], "x", "EX", "100"}), "OK");
  EXPECT_EQ(Run({"mset", keys[0], "a", keys[1], "b"}), "OK");
  EXPECT_EQ(Run({"ttl", keys[1]}), -1);
  EXPECT_THAT(Run({"mget", keys[0], keys[1]}), RespArray(ElementsAre("a", "b")));

  EXPECT_THAT(Run({"mset", keys[0], "a", keys[1]}), ErrArg(ArityError("mset")));
  EXPECT_THAT(Run({"msetnx", keys[0]}), ErrArg(ArityError("msetnx")));
  EXPECT_THAT(Run({"mget"}), ErrArg(ArityError("mget")));
}

// A pipeline of writes and reads on all shards, issued from the last thread (so most of
// it hops, and runs of one shard are squashed), sees its own writes in order.
TEST_P(StringFamilyTest, PipelinedWritesAndReads) {
  std::vector<std::string> keys;
  for (int i = 0; i < 12; ++i)
    keys.push_back(KeyOnShard(i / 3 % num_shards(), helio::StrCat("p", i)));
  std::vector<std::vector<std::string_view>> commands;
  for (const std::string& key : keys) {
    commands.push_back({"set", key, key});
    commands.push_back({"append", key, "+"});
    commands.push_back({"get", key});
  }
  std::vector<RespValue> replies = Connect(num_shards() - 1)->RunPipeline(commands);
  ASSERT_EQ(replies.size(), 3 * keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(replies[3 * i], "OK");
    EXPECT_EQ(replies[3 * i + 1], int64_t(keys[i].size() + 1));
    EXPECT_EQ(replies[3 * i + 2], keys[i] + "+");
  }
}

INSTANTIATE_SHARD_COUNTS(StringFamilyTest);

}  // namespace
}  // namespace damselfly
