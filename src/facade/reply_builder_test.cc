// Expected bytes below were observed from redis-server 7.0.15 over raw sockets, in RESP2
// and after HELLO 3, unless a comment says otherwise.
#include "src/facade/reply_builder.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace damselfly::facade {
namespace {

using namespace std::literals;

class ReplyBuilderTest : public testing::Test {
 protected:
  // Returns the serialised output and clears it.
  std::string Take() {
    std::string out(rb_.output());
    rb_.ClearOutput();
    return out;
  }

  void Resp3() { rb_.set_protocol(RespVersion::kResp3); }
  void Resp2() { rb_.set_protocol(RespVersion::kResp2); }

  ReplyBuilder rb_;
};

TEST_F(ReplyBuilderTest, DefaultsToResp2AndEmpty) {
  EXPECT_EQ(rb_.protocol(), RespVersion::kResp2);
  EXPECT_EQ(rb_.output(), "");
  EXPECT_EQ(rb_.output_size(), 0u);
  EXPECT_EQ(rb_.errors_sent(), 0u);
}

TEST_F(ReplyBuilderTest, OkAndSimpleString) {
  for (RespVersion v : {RespVersion::kResp2, RespVersion::kResp3}) {
    rb_.set_protocol(v);
    rb_.SendOk();
    EXPECT_EQ(Take(), "+OK\r\n");
    rb_.SendSimpleString("PONG");
    EXPECT_EQ(Take(), "+PONG\r\n");
    rb_.SendSimpleString("");  // EVAL "return {ok=''}" -> "+\r\n"
    EXPECT_EQ(Take(), "+\r\n");
    rb_.SendSimpleString("with\0nul"s);
    EXPECT_EQ(Take(), "+with\0nul\r\n"s);
  }
}

TEST_F(ReplyBuilderTest, LongSimpleString) {
  // Longer than the inline assembly buffer.
  for (size_t len : {255u, 256u, 257u, 1000u, 70000u}) {
    std::string s(len, 'x');
    rb_.SendSimpleString(s);
    EXPECT_EQ(Take(), "+" + s + "\r\n") << len;
  }
}

TEST_F(ReplyBuilderTest, Error) {
  rb_.SendError("ERR syntax error");
  EXPECT_EQ(Take(), "-ERR syntax error\r\n");
  EXPECT_EQ(rb_.errors_sent(), 1u);

  Resp3();
  rb_.SendError("WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(Take(), "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
  EXPECT_EQ(rb_.errors_sent(), 2u);

  rb_.SendError("");  // EVAL "return {err=''}" -> "-\r\n"
  EXPECT_EQ(Take(), "-\r\n");
  EXPECT_EQ(rb_.errors_sent(), 3u);
}

TEST_F(ReplyBuilderTest, ErrorSanitisesCrLf) {
  // Redis: EVAL "return {err='bad\r\nthing'}" -> "-bad  thing\r\n";
  // redis.error_reply('My\nErr\rx') -> "-ERR My Err x\r\n".
  rb_.SendError("bad\r\nthing");
  EXPECT_EQ(Take(), "-bad  thing\r\n");
  rb_.SendError("ERR My\nErr\rx");
  EXPECT_EQ(Take(), "-ERR My Err x\r\n");
  rb_.SendError("\r\n");
  EXPECT_EQ(Take(), "-  \r\n");
  rb_.SendError("ERR trailing\n");
  EXPECT_EQ(Take(), "-ERR trailing \r\n");
  rb_.SendError("ERR nul\0kept"s);
  EXPECT_EQ(Take(), "-ERR nul\0kept\r\n"s);
  EXPECT_EQ(rb_.errors_sent(), 5u);

  // A long message takes the non-inline path; sanitising must cover all of it and only it.
  rb_.SendOk();
  std::string msg = "ERR " + std::string(1000, 'a') + "\r\n" + std::string(1000, 'b') + "\n";
  rb_.SendError(msg);
  rb_.SendLong(1);
  std::string want = "ERR " + std::string(1000, 'a') + "  " + std::string(1000, 'b') + " ";
  EXPECT_EQ(Take(), "+OK\r\n-" + want + "\r\n:1\r\n");
  EXPECT_EQ(rb_.errors_sent(), 6u);
}

TEST_F(ReplyBuilderTest, ErrorsSentCountsOnlyErrors) {
  rb_.SendOk();
  rb_.SendNull();
  rb_.SendLong(-1);
  rb_.SendBulk("ERR not an error");
  EXPECT_EQ(rb_.errors_sent(), 0u);
  for (int i = 0; i < 10; ++i) rb_.SendError("ERR x");
  EXPECT_EQ(rb_.errors_sent(), 10u);
  rb_.ClearOutput();  // output handling does not reset the counter
  rb_.ConsumeOutput(0);
  EXPECT_EQ(rb_.errors_sent(), 10u);
}

TEST_F(ReplyBuilderTest, Long) {
  const std::pair<int64_t, const char*> cases[] = {
      {0, ":0\r\n"},
      {1, ":1\r\n"},
      {-1, ":-1\r\n"},
      {12345, ":12345\r\n"},
      {9, ":9\r\n"},
      {10, ":10\r\n"},
      {-10, ":-10\r\n"},
      {999999999999, ":999999999999\r\n"},
      {INT64_MAX, ":9223372036854775807\r\n"},
      // EVAL "return 9223372036854775807" -> ":-9223372036854775808\r\n"
      {INT64_MIN, ":-9223372036854775808\r\n"},
      {INT64_MIN + 1, ":-9223372036854775807\r\n"},
  };
  for (RespVersion v : {RespVersion::kResp2, RespVersion::kResp3}) {
    rb_.set_protocol(v);
    for (auto [value, want] : cases) {
      rb_.SendLong(value);
      EXPECT_EQ(Take(), want) << value;
    }
  }
}

TEST_F(ReplyBuilderTest, Bulk) {
  for (RespVersion v : {RespVersion::kResp2, RespVersion::kResp3}) {
    rb_.set_protocol(v);
    rb_.SendBulk("Hello World");  // DEBUG PROTOCOL string
    EXPECT_EQ(Take(), "$11\r\nHello World\r\n");
    rb_.SendBulk("");  // EVAL "return ''"
    EXPECT_EQ(Take(), "$0\r\n\r\n");
    rb_.SendBulk("a\r\nb\0c\n\r"s);
    EXPECT_EQ(Take(), "$8\r\na\r\nb\0c\n\r\r\n"s);
    std::string all_bytes;
    for (int c = 0; c < 256; ++c) all_bytes.push_back(static_cast<char>(c));
    rb_.SendBulk(all_bytes);
    EXPECT_EQ(Take(), "$256\r\n" + all_bytes + "\r\n");
  }
}

TEST_F(ReplyBuilderTest, BulkAroundInlineThreshold) {
  for (size_t len = 0; len < 600; ++len) {
    std::string payload(len, static_cast<char>('a' + len % 26));
    rb_.SendOk();
    rb_.SendBulk(payload);
    rb_.SendLong(7);
    EXPECT_EQ(Take(), "+OK\r\n$" + std::to_string(len) + "\r\n" + payload + "\r\n:7\r\n") << len;
  }
}

TEST_F(ReplyBuilderTest, LargeBulk) {
  std::string payload(1 << 20, '\0');
  std::mt19937 gen(42);
  for (char& c : payload) c = static_cast<char>(gen());
  payload[100] = '\r';
  payload[101] = '\n';

  rb_.SendOk();
  rb_.SendBulk(payload);
  rb_.SendOk();
  std::string_view out = rb_.output();
  const std::string_view header = "+OK\r\n$1048576\r\n";
  ASSERT_EQ(out.size(), header.size() + payload.size() + 2 + 5);
  EXPECT_EQ(out.substr(0, header.size()), header);
  EXPECT_TRUE(out.substr(header.size(), payload.size()) == payload);
  EXPECT_EQ(out.substr(header.size() + payload.size()), "\r\n+OK\r\n");
}

TEST_F(ReplyBuilderTest, Null) {
  // GET nokey: RESP2 "$-1\r\n", RESP3 "_\r\n".
  rb_.SendNull();
  EXPECT_EQ(Take(), "$-1\r\n");
  Resp3();
  rb_.SendNull();
  EXPECT_EQ(Take(), "_\r\n");
}

TEST_F(ReplyBuilderTest, NullArray) {
  // LPOP nolist 2, BLPOP timeout: RESP2 "*-1\r\n", RESP3 "_\r\n".
  rb_.SendNullArray();
  EXPECT_EQ(Take(), "*-1\r\n");
  Resp3();
  rb_.SendNullArray();
  EXPECT_EQ(Take(), "_\r\n");
}

struct DoubleCase {
  double value;
  const char* text;  // as Redis renders it (printf "%.17g")
};

// Observed via ZSCORE (after ZADD) and EVAL "return {double=...}".
const DoubleCase kDoubleCases[] = {
    {1.5, "1.5"},
    {0.1, "0.10000000000000001"},
    {3, "3"},
    {100, "100"},
    {0.0, "0"},
    {-0.0, "-0"},  // EVAL "return {double=-0.0}"
    {-1.5, "-1.5"},
    {-2.5, "-2.5"},
    {1e300, "1.0000000000000001e+300"},
    {1e-300, "1e-300"},
    {123456789012345678.0, "1.2345678901234568e+17"},
    {1e16, "10000000000000000"},
    {1e17, "1e+17"},
    {9007199254740992.0, "9007199254740992"},         // 2^53
    {9223372036854775808.0, "9.2233720368547758e+18"},  // 2^63
    {-9223372036854775808.0, "-9.2233720368547758e+18"},
    {std::numeric_limits<double>::max(), "1.7976931348623157e+308"},
    {std::numeric_limits<double>::min(), "2.2250738585072014e-308"},
    {std::numeric_limits<double>::denorm_min(), "4.9406564584124654e-324"},  // ZADD 5e-324
    {123456.789, "123456.789"},
    {0.0001, "0.0001"},
    {0.00001, "1.0000000000000001e-05"},
    {3.141, "3.141"},  // DEBUG PROTOCOL double
    {std::numeric_limits<double>::infinity(), "inf"},
    {-std::numeric_limits<double>::infinity(), "-inf"},
    // NaN keeps its sign, as printf renders it: EVAL "return {double=-(0/0)}" -> "nan",
    // EVAL "return {double=0/0}" -> "-nan" (x86 0/0 yields a NaN with the sign bit set).
    {std::numeric_limits<double>::quiet_NaN(), "nan"},
    {-std::numeric_limits<double>::quiet_NaN(), "-nan"},
};

TEST_F(ReplyBuilderTest, DoubleResp2IsBulk) {
  for (const DoubleCase& c : kDoubleCases) {
    rb_.SendDouble(c.value);
    EXPECT_EQ(Take(), "$" + std::to_string(strlen(c.text)) + "\r\n" + c.text + "\r\n") << c.text;
  }
  rb_.SendDouble(0.1);
  EXPECT_EQ(Take(), "$19\r\n0.10000000000000001\r\n");
  rb_.SendDouble(std::numeric_limits<double>::infinity());
  EXPECT_EQ(Take(), "$3\r\ninf\r\n");
  rb_.SendDouble(-std::numeric_limits<double>::infinity());
  EXPECT_EQ(Take(), "$4\r\n-inf\r\n");
}

TEST_F(ReplyBuilderTest, DoubleResp3) {
  Resp3();
  for (const DoubleCase& c : kDoubleCases) {
    rb_.SendDouble(c.value);
    EXPECT_EQ(Take(), std::string(",") + c.text + "\r\n") << c.text;
  }
  rb_.SendDouble(1.5);
  EXPECT_EQ(Take(), ",1.5\r\n");
  rb_.SendDouble(std::numeric_limits<double>::infinity());
  EXPECT_EQ(Take(), ",inf\r\n");
}

// Redis formats with snprintf("%.17g"); compare on many bit patterns and decimal values.
TEST_F(ReplyBuilderTest, DoubleMatchesPrintf17g) {
  Resp3();
  std::mt19937_64 gen(20240601);
  std::uniform_real_distribution<double> unit(-1e6, 1e6);
  char expect[64];
  for (int i = 0; i < 20000; ++i) {
    double value;
    if (i % 2 == 0) {
      uint64_t bits = gen();
      std::memcpy(&value, &bits, sizeof(value));
    } else if (i % 4 == 1) {
      value = unit(gen);
    } else {
      value = static_cast<double>(static_cast<int64_t>(gen() >> (gen() % 64)));
    }
    int n = snprintf(expect, sizeof(expect), ",%.17g\r\n", value);
    rb_.SendDouble(value);
    ASSERT_EQ(Take(), std::string_view(expect, n)) << "bits of " << expect;
  }
}

TEST_F(ReplyBuilderTest, BigNumber) {
  const char* big = "1234567999999999999999999999999999999";  // DEBUG PROTOCOL bignum
  rb_.SendBigNumber(big);
  EXPECT_EQ(Take(), "$37\r\n1234567999999999999999999999999999999\r\n");
  rb_.SendBigNumber("-123");
  EXPECT_EQ(Take(), "$4\r\n-123\r\n");
  Resp3();
  rb_.SendBigNumber(big);
  EXPECT_EQ(Take(), "(1234567999999999999999999999999999999\r\n");
  rb_.SendBigNumber("-123");
  EXPECT_EQ(Take(), "(-123\r\n");
  std::string long_digits(1000, '9');
  rb_.SendBigNumber(long_digits);
  EXPECT_EQ(Take(), "(" + long_digits + "\r\n");
}

TEST_F(ReplyBuilderTest, Verbatim) {
  // DEBUG PROTOCOL verbatim.
  rb_.SendVerbatim("This is a verbatim\nstring");
  EXPECT_EQ(Take(), "$25\r\nThis is a verbatim\nstring\r\n");
  rb_.SendVerbatim("", "mkd");
  EXPECT_EQ(Take(), "$0\r\n\r\n");

  Resp3();
  rb_.SendVerbatim("This is a verbatim\nstring");
  EXPECT_EQ(Take(), "=29\r\ntxt:This is a verbatim\nstring\r\n");
  // EVAL "return {verbatim_string={format='txt', string='hi'}}" and format='mkd', string=''.
  rb_.SendVerbatim("hi", "txt");
  EXPECT_EQ(Take(), "=6\r\ntxt:hi\r\n");
  rb_.SendVerbatim("", "mkd");
  EXPECT_EQ(Take(), "=4\r\nmkd:\r\n");

  // LATENCY DOCTOR: RESP2 "$288\r\n...", RESP3 "=292\r\ntxt:...".
  std::string doctor(287, 'd');
  doctor += '\n';
  rb_.SendVerbatim(doctor);
  EXPECT_EQ(Take(), "=292\r\ntxt:" + doctor + "\r\n");
  Resp2();
  rb_.SendVerbatim(doctor);
  EXPECT_EQ(Take(), "$288\r\n" + doctor + "\r\n");

  Resp3();
  for (size_t len = 240; len < 270; ++len) {  // around the inline threshold
    std::string text(len, 'v');
    rb_.SendVerbatim(text);
    EXPECT_EQ(Take(), "=" + std::to_string(len + 4) + "\r\ntxt:" + text + "\r\n") << len;
  }
}

TEST_F(ReplyBuilderTest, Bool) {
  // EVAL "redis.setresp(3); return true/false": RESP2 ":1"/":0", RESP3 "#t"/"#f".
  rb_.SendBool(true);
  rb_.SendBool(false);
  EXPECT_EQ(Take(), ":1\r\n:0\r\n");
  Resp3();
  rb_.SendBool(true);
  rb_.SendBool(false);
  EXPECT_EQ(Take(), "#t\r\n#f\r\n");
}

TEST_F(ReplyBuilderTest, AggregateHeaders) {
  rb_.StartArray(3);
  rb_.StartArray(0);
  rb_.SendEmptyArray();
  rb_.StartMap(3);
  rb_.StartMap(0);
  rb_.StartSet(2);
  rb_.StartSet(0);
  rb_.StartPush(3);
  EXPECT_EQ(Take(), "*3\r\n*0\r\n*0\r\n*6\r\n*0\r\n*2\r\n*0\r\n*3\r\n");

  Resp3();
  rb_.StartArray(3);
  rb_.StartArray(0);
  rb_.SendEmptyArray();
  rb_.StartMap(3);
  rb_.StartMap(0);  // HGETALL nokey -> "%0\r\n"
  rb_.StartSet(2);
  rb_.StartSet(0);  // SMEMBERS nokey -> "~0\r\n"
  rb_.StartPush(3);
  EXPECT_EQ(Take(), "*3\r\n*0\r\n*0\r\n%3\r\n%0\r\n~2\r\n~0\r\n>3\r\n");

  rb_.StartArray(size_t{1} << 40);
  EXPECT_EQ(Take(), "*1099511627776\r\n");
}

TEST_F(ReplyBuilderTest, NestedArrays) {
  // EVAL "return {1,{2,'x'},{}}" in both protocols.
  for (RespVersion v : {RespVersion::kResp2, RespVersion::kResp3}) {
    rb_.set_protocol(v);
    rb_.StartArray(3);
    rb_.SendLong(1);
    rb_.StartArray(2);
    rb_.SendLong(2);
    rb_.SendBulk("x");
    rb_.SendEmptyArray();
    EXPECT_EQ(Take(), "*3\r\n:1\r\n*2\r\n:2\r\n$1\r\nx\r\n*0\r\n");
  }
}

// DEBUG PROTOCOL map: {0: false, 1: true, 2: false}.
void DebugProtocolMap(ReplyBuilder& rb) {
  rb.StartMap(3);
  for (int i = 0; i < 3; ++i) {
    rb.SendLong(i);
    rb.SendBool(i == 1);
  }
}

TEST_F(ReplyBuilderTest, MapOfBools) {
  DebugProtocolMap(rb_);
  EXPECT_EQ(Take(), "*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n");
  Resp3();
  DebugProtocolMap(rb_);
  EXPECT_EQ(Take(), "%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n");
}

TEST_F(ReplyBuilderTest, HelloMapNested) {
  // The HELLO 3 reply of redis-server 7.0.15, byte for byte.
  Resp3();
  rb_.StartMap(7);
  rb_.SendBulk("server");
  rb_.SendBulk("redis");
  rb_.SendBulk("version");
  rb_.SendBulk("7.0.15");
  rb_.SendBulk("proto");
  rb_.SendLong(3);
  rb_.SendBulk("id");
  rb_.SendLong(4);
  rb_.SendBulk("mode");
  rb_.SendBulk("standalone");
  rb_.SendBulk("role");
  rb_.SendBulk("master");
  rb_.SendBulk("modules");
  rb_.SendEmptyArray();
  EXPECT_EQ(Take(),
            "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n"
            "$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:4\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n"
            "$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n");
}

TEST_F(ReplyBuilderTest, MapContainingSetAndNullAndDouble) {
  auto build = [this] {
    rb_.StartMap(2);
    rb_.SendBulk("members");
    rb_.StartSet(2);
    rb_.SendBulk("x");
    rb_.SendBulk("y");
    rb_.SendBulk("score");
    rb_.StartArray(2);
    rb_.SendDouble(1.5);
    rb_.SendNull();
  };
  build();
  EXPECT_EQ(Take(),
            "*4\r\n$7\r\nmembers\r\n*2\r\n$1\r\nx\r\n$1\r\ny\r\n"
            "$5\r\nscore\r\n*2\r\n$3\r\n1.5\r\n$-1\r\n");
  Resp3();
  build();
  EXPECT_EQ(Take(),
            "%2\r\n$7\r\nmembers\r\n~2\r\n$1\r\nx\r\n$1\r\ny\r\n"
            "$5\r\nscore\r\n*2\r\n,1.5\r\n_\r\n");
}

TEST_F(ReplyBuilderTest, PushSubscribe) {
  // SUBSCRIBE ch: RESP2 "*3...", RESP3 ">3...".
  auto build = [this] {
    rb_.StartPush(3);
    rb_.SendBulk("subscribe");
    rb_.SendBulk("ch");
    rb_.SendLong(1);
  };
  build();
  EXPECT_EQ(Take(), "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
  Resp3();
  build();
  EXPECT_EQ(Take(), ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n");
}

TEST_F(ReplyBuilderTest, SetReply) {
  // SMEMBERS s (x, y): RESP2 "*2...", RESP3 "~2...".
  auto build = [this] {
    rb_.StartSet(2);
    rb_.SendBulk("x");
    rb_.SendBulk("y");
  };
  build();
  EXPECT_EQ(Take(), "*2\r\n$1\r\nx\r\n$1\r\ny\r\n");
  Resp3();
  build();
  EXPECT_EQ(Take(), "~2\r\n$1\r\nx\r\n$1\r\ny\r\n");
}

TEST_F(ReplyBuilderTest, BulkArray) {
  for (RespVersion v : {RespVersion::kResp2, RespVersion::kResp3}) {
    rb_.set_protocol(v);
    rb_.SendBulkArray(absl::Span<const std::string_view>());
    EXPECT_EQ(Take(), "*0\r\n");
    std::vector<std::string_view> values = {"x", "", "a\r\n\0b"sv};
    rb_.SendBulkArray(values);
    EXPECT_EQ(Take(), "*3\r\n$1\r\nx\r\n$0\r\n\r\n$5\r\na\r\n\0b\r\n"s);

    std::string big(5000, 'z');
    std::vector<std::string_view> many(100, "v");
    many[50] = big;
    rb_.SendBulkArray(many);
    std::string want = "*100\r\n";
    for (int i = 0; i < 100; ++i) want += i == 50 ? "$5000\r\n" + big + "\r\n" : "$1\r\nv\r\n";
    EXPECT_EQ(Take(), want);
  }
}

// Values of owned strings, around the inline limit (256) and across many stack chunks.
TEST_F(ReplyBuilderTest, BulkArrayOfStringsAcrossChunks) {
  std::vector<std::string> values;
  std::string want = "*300\r\n";
  for (int i = 0; i < 300; ++i) {
    values.emplace_back(250 + i % 10, char('a' + i % 26));
    want += "$" + std::to_string(values.back().size()) + "\r\n" + values.back() + "\r\n";
  }
  rb_.SendBulkArray(values);
  EXPECT_EQ(Take(), want);
  rb_.SendBulkArray(std::vector<std::string>{});
  EXPECT_EQ(Take(), "*0\r\n");
}

TEST_F(ReplyBuilderTest, ProtocolSwitchAffectsOnlyLaterReplies) {
  rb_.SendNull();
  Resp3();
  rb_.SendNull();
  Resp2();
  rb_.SendDouble(2);
  EXPECT_EQ(Take(), "$-1\r\n_\r\n$1\r\n2\r\n");
}

TEST_F(ReplyBuilderTest, RepliesAccumulate) {
  rb_.SendOk();
  rb_.SendLong(5);
  rb_.SendBulk("v");
  rb_.SendError("ERR e");
  EXPECT_EQ(rb_.output(), "+OK\r\n:5\r\n$1\r\nv\r\n-ERR e\r\n");
  EXPECT_EQ(rb_.output_size(), rb_.output().size());
}

TEST_F(ReplyBuilderTest, ConsumeOutputFull) {
  rb_.SendOk();
  rb_.SendLong(1);
  rb_.ConsumeOutput(rb_.output_size());
  EXPECT_EQ(rb_.output(), "");
  EXPECT_EQ(rb_.output_size(), 0u);
  rb_.SendOk();
  EXPECT_EQ(rb_.output(), "+OK\r\n");
}

TEST_F(ReplyBuilderTest, ConsumeOutputPartial) {
  rb_.SendOk();
  rb_.SendLong(1);
  rb_.ConsumeOutput(0);
  EXPECT_EQ(rb_.output(), "+OK\r\n:1\r\n");
  rb_.ConsumeOutput(3);
  EXPECT_EQ(rb_.output(), "\r\n:1\r\n");
  EXPECT_EQ(rb_.output_size(), 6u);
  rb_.SendBulk("abc");  // appends after the unsent tail
  EXPECT_EQ(rb_.output(), "\r\n:1\r\n$3\r\nabc\r\n");
  rb_.ConsumeOutput(rb_.output_size() - 1);
  EXPECT_EQ(rb_.output(), "\n");
  rb_.ConsumeOutput(1);
  EXPECT_EQ(rb_.output(), "");
}

TEST_F(ReplyBuilderTest, ConsumeOutputInChunksReassembles) {
  std::string payload(300000, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7 + i / 251);
  rb_.SendBulk(payload);
  rb_.SendOk();
  const std::string expected(rb_.output());

  std::string sent;
  size_t chunk = 1;
  while (rb_.output_size() > 0) {
    size_t n = std::min(chunk, rb_.output_size());
    sent.append(rb_.output().substr(0, n));
    rb_.ConsumeOutput(n);
    chunk = chunk * 3 + 1;
  }
  EXPECT_EQ(sent, expected);
}

TEST_F(ReplyBuilderTest, ClearOutput) {
  rb_.SendBulk("x");
  rb_.ClearOutput();
  EXPECT_EQ(rb_.output_size(), 0u);
  rb_.SendOk();
  EXPECT_EQ(rb_.output(), "+OK\r\n");
}

}  // namespace
}  // namespace damselfly::facade

namespace damselfly::facade {
namespace {

TEST(ReplyBuilderHelpTest, SimpleStringArray) {
  ReplyBuilder rb;
  constexpr std::string_view kLines[] = {"HELP line", "  indented"};
  rb.SendSimpleStringArray(kLines);
  EXPECT_EQ(rb.output(), "*2\r\n+HELP line\r\n+  indented\r\n");
}

}  // namespace
}  // namespace damselfly::facade
