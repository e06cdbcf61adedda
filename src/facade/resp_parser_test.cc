// Tests for RespParser. Expected error texts and boundaries were taken from a live
// redis-server 7.0.15 (see the kRedisCorpus comment).
#include "src/facade/resp_parser.h"

#include <gtest/gtest.h>

#include "helio/base/strings.h"

#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace damselfly::facade {
namespace {

using namespace std::literals;
using Result = RespParser::Result;
using Limits = RespParser::Limits;

constexpr char kInvalidMultibulkLen[] = "ERR Protocol error: invalid multibulk length";
constexpr char kInvalidBulkLen[] = "ERR Protocol error: invalid bulk length";
constexpr char kUnauthMultibulkLen[] = "ERR Protocol error: unauthenticated multibulk length";
constexpr char kUnauthBulkLen[] = "ERR Protocol error: unauthenticated bulk length";
constexpr char kTooBigMbulk[] = "ERR Protocol error: too big mbulk count string";
constexpr char kTooBigBulk[] = "ERR Protocol error: too big bulk count string";
constexpr char kTooBigInline[] = "ERR Protocol error: too big inline request";
constexpr char kUnbalanced[] = "ERR Protocol error: unbalanced quotes in request";


// What a connection sees from one Parse call that did not ask for more bytes, plus
// kNeedMore at the end of a stream that left a request incomplete.
struct Outcome {
  Result kind;
  std::vector<std::string> args;  // kCommand
  std::string error;              // kError

  bool operator==(const Outcome&) const = default;
};

void PrintTo(const Outcome& o, std::ostream* os) {
  switch (o.kind) {
    case Result::kCommand:
      *os << "Command(";
      for (size_t i = 0; i < o.args.size(); ++i)
        *os << (i ? ", " : "") << '"' << helio::CEscape(o.args[i]) << '"';
      *os << ")";
      break;
    case Result::kSkipped:
      *os << "Skipped";
      break;
    case Result::kNeedMore:
      *os << "Pending";
      break;
    case Result::kError:
      *os << "Error(" << helio::CEscape(o.error) << ")";
      break;
  }
}

Outcome Cmd(std::vector<std::string> args) {
  return {Result::kCommand, std::move(args), {}};
}
Outcome Skip() {
  return {Result::kSkipped, {}, {}};
}
Outcome Err(std::string error) {
  return {Result::kError, {}, std::move(error)};
}
Outcome Pending() {
  return {Result::kNeedMore, {}, {}};
}

using Outcomes = std::vector<Outcome>;

std::string Multibulk(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) {
    out += "$" + std::to_string(a.size()) + "\r\n";
    out += a;
    out += "\r\n";
  }
  return out;
}

enum class Buffering {
  kInPlace,  // one buffer holding the whole stream; the parser sees a growing window
  kMoving,   // the unconsumed bytes move to a new, exactly sized allocation before every
             // Parse call; the old copy is scribbled over and freed
};

// Simulates a connection receiving `stream` in chunks that end at `cuts` (increasing
// offsets, the last one stream.size()). Checks the per-call contract on the way.
Outcomes Feed(RespParser* parser, std::string_view stream, const std::vector<size_t>& cuts,
             Buffering buffering) {
  Outcomes out;
  size_t start = 0;  // stream offset of the first unconsumed byte
  std::unique_ptr<char[]> copy;
  size_t copy_len = 0;
  for (size_t cut : cuts) {
    while (true) {
      std::string_view input = stream.substr(start, cut - start);
      if (buffering == Buffering::kMoving) {
        auto fresh = std::make_unique<char[]>(input.size());
        if (!input.empty()) memcpy(fresh.get(), input.data(), input.size());
        if (copy_len > 0) memset(copy.get(), 0xA5, copy_len);
        copy = std::move(fresh);
        copy_len = input.size();
        input = std::string_view(copy.get(), copy_len);
      }
      size_t consumed = 0xdead;
      const Result result = parser->Parse(input, &consumed);
      if (result == Result::kNeedMore) {
        EXPECT_EQ(consumed, 0u);
        break;
      }
      if (result == Result::kError) {
        EXPECT_EQ(consumed, 0u);
        out.push_back(Err(parser->error()));
        return out;
      }
      EXPECT_GT(consumed, 0u);
      EXPECT_LE(consumed, input.size());
      if (consumed == 0 || consumed > input.size()) return out;
      if (result == Result::kSkipped) {
        out.push_back(Skip());
      } else {
        EXPECT_EQ(result, Result::kCommand);
        const CmdArgList args = parser->args();
        EXPECT_FALSE(args.empty());
        std::vector<std::string> copied;
        const char* prev_end = input.data();
        for (std::string_view a : args) {
          copied.emplace_back(a);
          if (input[0] == '*') {
            // Multibulk arguments are views into the input, in order.
            EXPECT_GE(a.data(), prev_end);
            EXPECT_LE(a.data() + a.size(), input.data() + consumed);
            prev_end = a.data() + a.size();
          }
        }
        out.push_back(Cmd(std::move(copied)));
      }
      start += consumed;
    }
  }
  if (start < stream.size()) out.push_back(Pending());
  return out;
}

std::vector<size_t> AllAtOnce(size_t n) {
  return {n};
}

std::vector<size_t> ByteAtATime(size_t n) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i <= n; ++i) cuts.push_back(i);
  if (cuts.empty()) cuts.push_back(0);
  return cuts;
}

std::vector<size_t> RandomCuts(size_t n, size_t max_chunk, std::mt19937* rng) {
  std::vector<size_t> cuts;
  size_t pos = 0;
  while (pos < n) {
    pos = std::min(n, pos + 1 + (*rng)() % max_chunk);
    cuts.push_back(pos);
  }
  if (cuts.empty()) cuts.push_back(0);
  return cuts;
}

std::string Describe(std::string_view stream, const std::vector<size_t>& cuts,
                     Buffering buffering) {
  std::string s = "stream \"" + helio::CEscape(stream.substr(0, 200)) + "\" (" +
                  std::to_string(stream.size()) + " bytes), " + std::to_string(cuts.size()) +
                  " chunks, first cut " + std::to_string(cuts.front()) +
                  (buffering == Buffering::kMoving ? ", moving buffer" : ", in place");
  return s;
}

// Runs `stream` split at `cuts` with a reused (Reset) parser; returns false on mismatch.
bool Check(RespParser* parser, std::string_view stream, const std::vector<size_t>& cuts,
           Buffering buffering, const Outcomes& expected) {
  parser->Reset();
  const Outcomes got = Feed(parser, stream, cuts, buffering);
  if (got == expected) return true;
  ADD_FAILURE() << Describe(stream, cuts, buffering) << "\n got: " << testing::PrintToString(got)
                << "\nwant: " << testing::PrintToString(expected);
  return false;
}

// All at once, one byte at a time, and (if `two_pieces`) in two pieces split at every
// byte boundary; each in place and with a moving buffer.
void CheckAllSplits(std::string_view stream, const Outcomes& expected, Limits limits = {},
                    bool two_pieces = true, bool unauthenticated = false) {
  RespParser parser(limits);
  parser.set_unauthenticated(unauthenticated);
  const size_t n = stream.size();
  for (Buffering b : {Buffering::kInPlace, Buffering::kMoving}) {
    if (!Check(&parser, stream, AllAtOnce(n), b, expected)) return;
    if (!Check(&parser, stream, ByteAtATime(n), b, expected)) return;
    if (!two_pieces) continue;
    for (size_t k = 1; k < n; ++k) {
      if (!Check(&parser, stream, {k, n}, b, expected)) return;
    }
  }
}

// For big streams: all at once, one byte at a time in place (a moving buffer would be
// quadratic), and random chunks in both modes.
void CheckBigStream(std::string_view stream, const Outcomes& expected, Limits limits = {},
                    bool unauthenticated = false) {
  RespParser parser(limits);
  parser.set_unauthenticated(unauthenticated);
  const size_t n = stream.size();
  std::mt19937 rng(7);
  for (Buffering b : {Buffering::kInPlace, Buffering::kMoving}) {
    if (!Check(&parser, stream, AllAtOnce(n), b, expected)) return;
    if (!Check(&parser, stream, RandomCuts(n, 4096, &rng), b, expected)) return;
    if (!Check(&parser, stream, RandomCuts(n, 64, &rng), b, expected)) return;
  }
  Check(&parser, stream, ByteAtATime(n), Buffering::kInPlace, expected);
}

// ---------------------------------------------------------------------------------
// Well-formed requests. Behaviour of the odd ones was checked against redis-server 7.0.

struct Case {
  std::string input;
  Outcomes expected;
};

std::vector<Case> ValidCorpus() {
  return {
      // Multibulk.
      {"*1\r\n$4\r\nPING\r\n", {Cmd({"PING"})}},
      {"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n", {Cmd({"SET", "key", "value"})}},
      {std::string("*2\r\n$4\r\nECHO\r\n$8\r\n\r\n\0\r\n\0\r\n\r\n"sv),
       {Cmd({"ECHO", std::string("\r\n\0\r\n\0\r\n"sv)})}},
      {std::string("*1\r\n$1\r\n\0\r\n"sv), {Cmd({std::string(1, '\0')})}},
      {"*3\r\n$0\r\n\r\n$0\r\n\r\n$1\r\nx\r\n", {Cmd({"", "", "x"})}},
      {"*1\r\n$0\r\n\r\n", {Cmd({""})}},
      {"*3\r\n$2\r\n*1\r\n$2\r\n$4\r\n$2\r\n\r\n\r\n", {Cmd({"*1", "$4", "\r\n"})}},
      {"*2\r\n$3\r\nGET\r\n$10\r\n0123456789\r\n", {Cmd({"GET", "0123456789"})}},
      {"*12\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n"
       "$1\r\ng\r\n$1\r\nh\r\n$1\r\ni\r\n$1\r\nj\r\n$1\r\nk\r\n$1\r\nl\r\n",
       {Cmd({"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"})}},
      // Empty multibulk requests are skipped.
      {"*0\r\n", {Skip()}},
      {"*-1\r\n", {Skip()}},
      {"*-5\r\n", {Skip()}},
      {"*-9223372036854775808\r\n", {Skip()}},
      // Redis skips the byte after a line's '\r' and the two bytes after bulk data
      // without looking at them.
      {"*1\r\n$4\r\nPINGxx", {Cmd({"PING"})}},
      {"*1\r\n$4\r\nPINGx\n", {Cmd({"PING"})}},
      {"*0\rx", {Skip()}},
      {"*2\rx$4\rxECHO\n\n$3\r\rabc\r\r", {Cmd({"ECHO", "abc"})}},
      {"*1\r\n$4\r\r\nPING\r\n", {Cmd({"\nPIN"}), Skip()}},
      // A multibulk request followed by an empty inline line.
      {"*1\r\n$4\r\nPING\r\n\n", {Cmd({"PING"}), Skip()}},
      {"*1\r\n$4\r\nPING\r\n\r\n", {Cmd({"PING"}), Skip()}},
      // Inline.
      {"PING\r\n", {Cmd({"PING"})}},
      {"PING\n", {Cmd({"PING"})}},
      {"set key value\n", {Cmd({"set", "key", "value"})}},
      {"  ECHO   \"hello world\"  \r\n", {Cmd({"ECHO", "hello world"})}},
      {"ECHO\ta\n", {Cmd({"ECHO", "a"})}},
      {"ECHO a\rb\n", {Cmd({"ECHO", "a", "b"})}},
      {"PING\rPING\n", {Cmd({"PING", "PING"})}},
      {"ECHO \"a\"\r\r\n", {Cmd({"ECHO", "a"})}},
      {"ECHO a\r\r\n", {Cmd({"ECHO", "a"})}},
      // '\v' and '\f' separate arguments only where Redis skips blanks.
      {"ECHO a\vb\n", {Cmd({"ECHO", "a\vb"})}},
      {"ECHO a\fb\n", {Cmd({"ECHO", "a\fb"})}},
      {"ECHO \va\n", {Cmd({"ECHO", "a"})}},
      {"ECHO \"a\"\f\n", {Cmd({"ECHO", "a"})}},
      {"ECHO \"a\vb\"\v\n", {Cmd({"ECHO", "a\vb"})}},
      // Double quotes and their escapes.
      {"ECHO \"a\\x41\\x4a\\x4Gz\"\n", {Cmd({"ECHO", "aAJx4Gz"})}},
      {"ECHO \"a\\n\\r\\t\\b\\a\\\\\\\"\\z\\0\"\n", {Cmd({"ECHO", "a\n\r\t\b\a\\\"z0"})}},
      {"ECHO \"\\xff\\x00\"\n", {Cmd({"ECHO", std::string("\xff\0"sv)})}},
      {"ECHO \"\\x\"\n", {Cmd({"ECHO", "x"})}},
      {"ECHO \"\\x4\"\n", {Cmd({"ECHO", "x4"})}},
      {"ECHO \"\\xZZ\"\n", {Cmd({"ECHO", "xZZ"})}},
      {"ECHO \"\\x\\x41\"\n", {Cmd({"ECHO", "xA"})}},
      {"ECHO \"a'b\"\n", {Cmd({"ECHO", "a'b"})}},
      {"ECHO \"\"\n", {Cmd({"ECHO", ""})}},
      {"\"ECHO\" x\n", {Cmd({"ECHO", "x"})}},
      {"ECHO \"a\" \"\" 'b'\n", {Cmd({"ECHO", "a", "", "b"})}},
      // Single quotes: only \' is an escape.
      {"ECHO 'a\\'b\\\\c\\nd'\n", {Cmd({"ECHO", "a'b\\\\c\\nd"})}},
      {"ECHO 'a\"b'\n", {Cmd({"ECHO", "a\"b"})}},
      {"ECHO ''\n", {Cmd({"ECHO", ""})}},
      // A quote inside an unquoted argument starts a quoted part of the same argument,
      // which ends the argument.
      {"ECHO foo\"bar baz\"\n", {Cmd({"ECHO", "foobar baz"})}},
      {"ECHO a'b'\n", {Cmd({"ECHO", "ab"})}},
      {"ECHO a\"b\" c\n", {Cmd({"ECHO", "ab", "c"})}},
      // Blank lines are skipped.
      {"\n", {Skip()}},
      {"\r\n", {Skip()}},
      {"   \t \r\n", {Skip()}},
      {"\r\r\n", {Skip()}},
      {"\v\f\n", {Skip()}},
      // Mixed in one buffer.
      {"PING\r\n*1\r\n$4\r\nPING\r\n\nECHO x\n*0\r\n",
       {Cmd({"PING"}), Cmd({"PING"}), Skip(), Cmd({"ECHO", "x"}), Skip()}},
  };
}

TEST(RespParserTest, ValidCorpusAtEverySplit) {
  for (const Case& c : ValidCorpus()) {
    SCOPED_TRACE(helio::CEscape(c.input));
    CheckAllSplits(c.input, c.expected);
  }
}

// 1000 pipelined commands of all kinds in one buffer.
std::string Pipeline(Outcomes* expected) {
  std::string stream;
  const std::vector<Case> corpus = ValidCorpus();
  for (int i = 0; i < 1000; ++i) {
    if (i % 3 == 0) {
      const Case& c = corpus[i % corpus.size()];
      stream += c.input;
      expected->insert(expected->end(), c.expected.begin(), c.expected.end());
    } else if (i % 3 == 1) {
      std::vector<std::string> args = {"SET", "key:" + std::to_string(i),
                                       std::string(i % 50, static_cast<char>(i))};
      if (i % 7 == 0) args.push_back("");
      stream += Multibulk(args);
      expected->push_back(Cmd(args));
    } else {
      stream += "HSET h" + std::to_string(i) + " \"f\\x00\" v\r\n";
      expected->push_back(Cmd({"HSET", "h" + std::to_string(i), std::string("f\0"sv), "v"}));
    }
  }
  return stream;
}

TEST(RespParserTest, PipelineOfThousandCommands) {
  Outcomes expected;
  const std::string stream = Pipeline(&expected);
  RespParser parser;
  std::mt19937 rng(42);
  const size_t n = stream.size();
  for (Buffering b : {Buffering::kInPlace, Buffering::kMoving}) {
    Check(&parser, stream, AllAtOnce(n), b, expected);
    Check(&parser, stream, ByteAtATime(n), b, expected);
    for (size_t max_chunk : {3, 17, 100, 1000}) {
      Check(&parser, stream, RandomCuts(n, max_chunk, &rng), b, expected);
    }
  }
}

// Two pieces split at every byte boundary of the first commands of the pipeline (every
// boundary of the whole pipeline would be quadratic; the parser is back in its initial
// state after each command, so this covers every kind of boundary).
TEST(RespParserTest, PipelineTwoPiecesAtEveryBoundary) {
  Outcomes expected;
  const std::string full = Pipeline(&expected);
  // Cut after the 45th command: find its end by parsing.
  RespParser parser;
  size_t end = 0, count = 0;
  while (count < 45) {
    size_t consumed;
    ASSERT_NE(parser.Parse(std::string_view(full).substr(end), &consumed), Result::kNeedMore);
    end += consumed;
    ++count;
  }
  const std::string_view stream = std::string_view(full).substr(0, end);
  expected.resize(45);
  for (Buffering b : {Buffering::kInPlace, Buffering::kMoving}) {
    for (size_t k = 1; k < stream.size(); ++k) {
      if (!Check(&parser, stream, {k, stream.size()}, b, expected)) return;
    }
  }
}

TEST(RespParserTest, BigArguments) {
  const std::string big(100000, 'v');
  std::string binary(70000, '\0');
  for (size_t i = 0; i < binary.size(); ++i) binary[i] = "\r\n\0$*x"[i % 6];
  const std::string stream = Multibulk({"SET", "k", big}) + Multibulk({"SET", binary, "x"}) +
                             "PING\r\n" + Multibulk({big, binary});
  CheckBigStream(stream, {Cmd({"SET", "k", big}), Cmd({"SET", binary, "x"}), Cmd({"PING"}),
                          Cmd({big, binary})});
}

// The whole valid corpus, the pipeline and big arguments in one stream.
TEST(RespParserTest, MixedStream) {
  std::string stream;
  Outcomes expected;
  for (const Case& c : ValidCorpus()) {
    stream += c.input;
    expected.insert(expected.end(), c.expected.begin(), c.expected.end());
  }
  stream += Pipeline(&expected);
  const std::string big(50000, 'b');
  stream += Multibulk({"SET", big, "v"});
  expected.push_back(Cmd({"SET", big, "v"}));
  CheckBigStream(stream, expected);
}

// ---------------------------------------------------------------------------------
// Malformed and incomplete requests.
//
// Generated by sending each input to redis-server 7.0.15 on a fresh connection:
// `commands` is the number of replies before the protocol error (or in total when
// Redis kept waiting), `error` the error reply without '-' and "\r\n" (Redis then
// closed the connection), or nullptr when Redis replied nothing more and kept the
// connection open (incomplete request, or one whose terminator Redis cannot see
// because a NUL precedes it).
struct RedisCase {
  std::string_view input;
  size_t commands;
  const char* error;
};

const RedisCase kRedisCorpus[] = {
    {"*abc\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*-0\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*+1\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*01\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*00\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*-01\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*-\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"* 1\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*1 \r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*1\n$4\r\nPING\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*2147483648\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*99999999999999999999\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*-9223372036854775809\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*9223372036854775808\r\n"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*abc\rz"sv, 0, "ERR Protocol error: invalid multibulk length"},
    {"*1\r\nx4\r\nPING\r\n"sv, 0, "ERR Protocol error: expected '$', got 'x'"},
    {"*1\r\n\r\n"sv, 0, "ERR Protocol error: expected '$', got ' '"},
    {"*1\r\n\n\r\n"sv, 0, "ERR Protocol error: expected '$', got ' '"},
    {"*1\r\n:4\r\n"sv, 0, "ERR Protocol error: expected '$', got ':'"},
    {"*1\r\n\xff\r\n"sv, 0, "ERR Protocol error: expected '$', got '\xff'"},
    {"*1\r\n\x01\r\n"sv, 0, "ERR Protocol error: expected '$', got '\x01'"},
    {"*1\r\n\t\r\n"sv, 0, "ERR Protocol error: expected '$', got '\t'"},
    {"*1\r\n\"\r\n"sv, 0, "ERR Protocol error: expected '$', got '\"'"},
    {"*1\r\n\\\r\n"sv, 0, "ERR Protocol error: expected '$', got '\\'"},
    {"*1\r\n'\r\n"sv, 0, "ERR Protocol error: expected '$', got '''"},
    {"*1\rx\n$4\r\nPING\r\n"sv, 0, "ERR Protocol error: expected '$', got ' '"},
    {"*2\r\n$4\r\nECHO\r\n*1\r\n"sv, 0, "ERR Protocol error: expected '$', got '*'"},
    {"*1\r\nx\rz"sv, 0, "ERR Protocol error: expected '$', got 'x'"},
    {"*1\r\n$-1\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$abc\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$+4\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$04\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$00\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$-0\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$4 \r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$ 4\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$4\nPING\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$536870913\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$99999999999999999999\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$9223372036854775808\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$-9223372036854775808\r\n"sv, 0, "ERR Protocol error: invalid bulk length"},
    {"ECHO \"abc\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO 'abc\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO \"x\"y\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO 'x'y\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO ''''\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO ab\"c\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO 'a\\'\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO \"a\\\"\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO \"a\\\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO \"a\"\"b\"\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"\"\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"'\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO foo\"bar\"x\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO a\"b c\"d\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO \"a\"'b'\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"ECHO \"\\x4\"x\n"sv, 0, "ERR Protocol error: unbalanced quotes in request"},
    {"PING\r\n*1\r\n$x\r\n"sv, 1, "ERR Protocol error: invalid bulk length"},
    {"*1\r\n$4\r\nPING\r\n*1\r\nx\r\n"sv, 1, "ERR Protocol error: expected '$', got 'x'"},
    {"*1\r\n$4\r\nPINGxx*1\r\n$-2\r\n"sv, 1, "ERR Protocol error: invalid bulk length"},
    {"*0\r\n*-1\r\nPING\r\n\r\n  \n*1\r\n$4\r\nPING\r\n\"\r\n"sv, 2,
     "ERR Protocol error: unbalanced quotes in request"},
    {"*2\r\n$4\r\nPING\r\n$1\r\n\r\n'\n"sv, 1, nullptr},
    {"*1\r\n$4\rxPINGab*1\r\n$4\r\nPING\r\n$"sv, 2, nullptr},
    {"*1\x00\r\n"sv, 0, nullptr},
    {"*1\r\n$\x00" "4\r\nPING\r\n"sv, 0, nullptr},
    {"*1\r\n\x00\r\n"sv, 0, nullptr},
    {"*1\r\nx\x00\r\n"sv, 0, nullptr},
    {"*1\r\n$4\x00\r\nPING\r\n"sv, 0, nullptr},
    {"PING\x00\n"sv, 0, nullptr},
    {"PING\r\nPI\x00NG\r\n"sv, 1, nullptr},
    {"\x00"sv, 0, nullptr},
    {"\x00\r\n"sv, 0, nullptr},
    {"*1\r\nx"sv, 0, nullptr},
    {"*abc"sv, 0, nullptr},
    {"*abc\r"sv, 0, nullptr},
    {"*1\r\n$4\r\nPING\r"sv, 0, nullptr},
    {"*0\r"sv, 0, nullptr},
    {"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\n\x00ING\r\n"sv, 2, nullptr},
};

TEST(RespParserTest, RedisCorpusAtEverySplit) {
  for (const RedisCase& c : kRedisCorpus) {
    SCOPED_TRACE(helio::CEscape(c.input));
    RespParser parser;
    const Outcomes once = Feed(&parser, c.input, AllAtOnce(c.input.size()), Buffering::kInPlace);
    size_t commands = 0;
    for (const Outcome& o : once) commands += o.kind == Result::kCommand;
    EXPECT_EQ(commands, c.commands);
    ASSERT_FALSE(once.empty());
    if (c.error != nullptr) {
      EXPECT_EQ(once.back(), Err(c.error));
    } else {
      EXPECT_NE(once.back().kind, Result::kError);
    }
    // Every split gives the same outcome.
    CheckAllSplits(c.input, once);
  }
}

// Errors on the first line: no byte after it is needed, and none before its terminator
// suffices.
TEST(RespParserTest, ErrorsNeedTheWholeLine) {
  for (std::string_view line : {"*abc\r\n"sv, "*1\r\nx\r\n"sv, "*1\r\n$-1\r\n"sv}) {
    RespParser parser;
    for (size_t k = 0; k + 1 < line.size(); ++k) {
      size_t consumed = 1;
      EXPECT_EQ(parser.Parse(line.substr(0, k), &consumed), Result::kNeedMore) << k;
      EXPECT_EQ(consumed, 0u);
    }
    size_t consumed = 1;
    EXPECT_EQ(parser.Parse(line, &consumed), Result::kError);
    EXPECT_EQ(consumed, 0u);
  }
}

TEST(RespParserTest, ExpectedDollarShowsTheByte) {
  for (int c = 1; c < 256; ++c) {
    if (c == '$' || c == '\r') continue;
    std::string input = "*1\r\n";
    input += static_cast<char>(c);
    input += "\r\n";
    std::string want = "ERR Protocol error: expected '$', got '";
    want += c == '\n' ? ' ' : static_cast<char>(c);
    want += "'";
    CheckAllSplits(input, {Err(want)}, {}, /*two_pieces=*/false);
  }
  // '\r' as the first byte is the line's terminator.
  CheckAllSplits("*1\r\n\r\n", {Err("ERR Protocol error: expected '$', got ' '")});
}

// ---------------------------------------------------------------------------------
// Arguments are views into the caller's buffer.

TEST(RespParserTest, MultibulkArgsPointIntoInput) {
  const std::string buf = "*2\r\n$3\r\nfoo\r\n$3\r\nbar\r\n*1\r\n$4\r\nPING\r\n";
  RespParser parser;
  size_t consumed;
  ASSERT_EQ(parser.Parse(buf, &consumed), Result::kCommand);
  EXPECT_EQ(consumed, 22u);
  ASSERT_EQ(parser.args().size(), 2u);
  EXPECT_EQ(parser.args()[0].data(), buf.data() + 8);
  EXPECT_EQ(parser.args()[0].size(), 3u);
  EXPECT_EQ(parser.args()[1].data(), buf.data() + 17);
  EXPECT_EQ(parser.args()[1].size(), 3u);
  const std::string_view rest = std::string_view(buf).substr(consumed);
  ASSERT_EQ(parser.Parse(rest, &consumed), Result::kCommand);
  EXPECT_EQ(consumed, rest.size());
  ASSERT_EQ(parser.args().size(), 1u);
  EXPECT_EQ(parser.args()[0].data(), rest.data() + 8);
}

TEST(RespParserTest, InlineArgsPointIntoInputUnlessQuoted) {
  const std::string buf = "SET  key \"v w\" x'y'\r\n";
  RespParser parser;
  size_t consumed;
  ASSERT_EQ(parser.Parse(buf, &consumed), Result::kCommand);
  EXPECT_EQ(consumed, buf.size());
  const CmdArgList args = parser.args();
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[0].data(), buf.data());
  EXPECT_EQ(args[0], "SET");
  EXPECT_EQ(args[1].data(), buf.data() + 5);
  EXPECT_EQ(args[1], "key");
  EXPECT_EQ(args[2], "v w");
  EXPECT_EQ(args[3], "xy");
}

// Many quoted arguments: the scratch buffer grows while they are unescaped; no view
// may point into a released allocation (ASAN checks this).
TEST(RespParserTest, ManyQuotedInlineArgs) {
  std::string line = "CMD";
  std::vector<std::string> want = {"CMD"};
  for (int i = 0; i < 300; ++i) {
    const std::string arg(i % 97, static_cast<char>('a' + i % 26));
    line += " \"" + arg + "\\n\" plain" + std::to_string(i);
    want.push_back(arg + "\n");
    want.push_back("plain" + std::to_string(i));
  }
  line += "\r\n";
  CheckBigStream(line, {Cmd(want)});
}

// ---------------------------------------------------------------------------------
// Incremental parsing.

TEST(RespParserTest, NeedMoreConsumesNothing) {
  const std::string req = Multibulk({"SET", "key", "value"}) + "GET key\r\n";
  RespParser parser;
  for (size_t k = 0; k < 33; ++k) {  // every proper prefix of the first request
    size_t consumed = 99;
    ASSERT_EQ(parser.Parse(std::string_view(req).substr(0, k), &consumed), Result::kNeedMore)
        << k;
    EXPECT_EQ(consumed, 0u);
  }
  size_t consumed = 0;
  ASSERT_EQ(parser.Parse(req, &consumed), Result::kCommand);
  EXPECT_EQ(consumed, 33u);
  const std::string_view rest = std::string_view(req).substr(consumed);
  for (size_t k = 0; k < rest.size(); ++k) {
    size_t c = 99;
    ASSERT_EQ(parser.Parse(rest.substr(0, k), &c), Result::kNeedMore) << k;
    EXPECT_EQ(c, 0u);
  }
  ASSERT_EQ(parser.Parse(rest, &consumed), Result::kCommand);
  EXPECT_EQ(consumed, rest.size());
  EXPECT_EQ(parser.args()[1], "key");
}

TEST(RespParserTest, ResumesAfterBufferMoved) {
  const std::string first = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva";
  auto old_buf = std::make_unique<std::string>(first);
  RespParser parser;
  size_t consumed;
  ASSERT_EQ(parser.Parse(*old_buf, &consumed), Result::kNeedMore);
  EXPECT_EQ(consumed, 0u);
  std::string moved = *old_buf + "lue\r\n";
  old_buf->assign(old_buf->size(), '#');  // stale pointers would see '#'
  old_buf.reset();
  ASSERT_EQ(parser.Parse(moved, &consumed), Result::kCommand);
  EXPECT_EQ(consumed, moved.size());
  ASSERT_EQ(parser.args().size(), 3u);
  EXPECT_EQ(parser.args()[0], "SET");
  EXPECT_EQ(parser.args()[1], "key");
  EXPECT_EQ(parser.args()[2], "value");
  for (std::string_view a : parser.args()) {
    EXPECT_GE(a.data(), moved.data());
    EXPECT_LE(a.data() + a.size(), moved.data() + moved.size());
  }
}

// The parser keeps offsets and does not look at the parsed part of a request again:
// changing those bytes between calls (which the contract forbids) goes unnoticed, while
// the arguments are taken from the new buffer.
TEST(RespParserTest, DoesNotRescanParsedBytes) {
  std::string buf = "*2\r\n$3\r\nfoo\r\n$3\r\nba";
  RespParser parser;
  size_t consumed;
  ASSERT_EQ(parser.Parse(buf, &consumed), Result::kNeedMore);
  buf[1] = 'X';         // the count
  buf[5] = 'Y';         // the first bulk length
  buf.replace(8, 3, "FOO");
  buf += "r\r\n";
  ASSERT_EQ(parser.Parse(buf, &consumed), Result::kCommand);
  ASSERT_EQ(parser.args().size(), 2u);
  EXPECT_EQ(parser.args()[0], "FOO");
  EXPECT_EQ(parser.args()[1], "bar");
}

// A long line arriving one byte at a time is searched once (a rescan per call would
// make this quadratic: billions of byte comparisons).
TEST(RespParserTest, LongLinesAreNotRescanned) {
  RespParser parser;
  const std::string line = "ECHO " + std::string(65000, 'a') + "\r\n";
  size_t consumed = 0;
  for (size_t k = 1; k < line.size(); ++k) {
    ASSERT_EQ(parser.Parse(std::string_view(line).substr(0, k), &consumed), Result::kNeedMore);
  }
  ASSERT_EQ(parser.Parse(line, &consumed), Result::kCommand);
  EXPECT_EQ(parser.args()[1].size(), 65000u);

  const std::string count = "*-" + std::string(65000, '0') + "\r\n";
  for (size_t k = 1; k < count.size(); ++k) {
    ASSERT_EQ(parser.Parse(std::string_view(count).substr(0, k), &consumed), Result::kNeedMore);
  }
  ASSERT_EQ(parser.Parse(count, &consumed), Result::kError);
  EXPECT_EQ(parser.error(), kInvalidMultibulkLen);
}

TEST(RespParserTest, BytesNeeded) {
  RespParser parser;
  EXPECT_EQ(parser.bytes_needed(), 0u);
  const std::string value(100000, 'v');
  const std::string req = Multibulk({"SET", "key", value});
  const size_t header = req.size() - value.size() - 2;  // up to the value
  size_t consumed;
  ASSERT_EQ(header, 31u);  // *3 $3 SET $3 key $100000
  // Growing prefixes, as a connection would feed them: 0 (unknown) while waiting for a
  // line, the end of the current argument once its length is known.
  const std::pair<size_t, size_t> steps[] = {
      {1, 0},  {3, 0},  {4, 0},  {5, 0},  {7, 0},  {8, 13},  {10, 13}, {12, 13},
      {13, 0}, {16, 0}, {17, 22}, {22, 0}, {30, 0}, {header, req.size()},
      {header + 1, req.size()}, {header + 50000, req.size()}, {req.size() - 1, req.size()}};
  for (auto [k, needed] : steps) {
    ASSERT_EQ(parser.Parse(std::string_view(req).substr(0, k), &consumed), Result::kNeedMore);
    EXPECT_EQ(parser.bytes_needed(), needed) << k;
  }
  ASSERT_EQ(parser.Parse(req, &consumed), Result::kCommand);
  EXPECT_EQ(parser.bytes_needed(), 0u);

  // After an argument completes, the next line is unknown again.
  const std::string two = "*2\r\n$1\r\na\r\n$3\r\nbcd\r\n";
  ASSERT_EQ(parser.Parse(std::string_view(two).substr(0, 8), &consumed), Result::kNeedMore);
  EXPECT_EQ(parser.bytes_needed(), 11u);
  ASSERT_EQ(parser.Parse(std::string_view(two).substr(0, 12), &consumed), Result::kNeedMore);
  EXPECT_EQ(parser.bytes_needed(), 0u);
  ASSERT_EQ(parser.Parse(std::string_view(two).substr(0, 16), &consumed), Result::kNeedMore);
  EXPECT_EQ(parser.bytes_needed(), two.size());

  // The largest bulk the defaults allow.
  parser.Reset();
  ASSERT_EQ(parser.Parse("*1\r\n$536870912\r\n", &consumed), Result::kNeedMore);
  EXPECT_EQ(parser.bytes_needed(), 4u + 12u + 536870912u + 2u);
  parser.Reset();
  EXPECT_EQ(parser.bytes_needed(), 0u);
  // Inline requests: never known.
  ASSERT_EQ(parser.Parse("GET ke", &consumed), Result::kNeedMore);
  EXPECT_EQ(parser.bytes_needed(), 0u);
}

// ---------------------------------------------------------------------------------
// Limits, each at its boundary.

TEST(RespParserTest, MaxBulkLen) {
  Limits limits;
  limits.max_bulk_len = 10;
  CheckAllSplits(Multibulk({"0123456789"}), {Cmd({"0123456789"})}, limits);
  CheckAllSplits("*1\r\n$11\r\n", {Err(kInvalidBulkLen)}, limits);
  CheckAllSplits("*2\r\n$1\r\na\r\n$11\r\n", {Err(kInvalidBulkLen)}, limits);
  // Defaults: 512MB (proto-max-bulk-len).
  CheckAllSplits("*1\r\n$536870912\r\n", {Pending()});
  CheckAllSplits("*1\r\n$536870913\r\n", {Err(kInvalidBulkLen)});
}

TEST(RespParserTest, MaxArgs) {
  Limits limits;
  limits.max_args = 3;
  CheckAllSplits(Multibulk({"a", "b", "c"}), {Cmd({"a", "b", "c"})}, limits);
  CheckAllSplits("*4\r\n", {Err(kInvalidMultibulkLen)}, limits);
  CheckAllSplits("*-4\r\n", {Skip()}, limits);
  // Defaults: Redis 7.0 caps the count at INT_MAX only (1024*1024 before 6.2).
  CheckAllSplits("*1048577\r\n", {Pending()});
  CheckAllSplits("*2147483647\r\n", {Pending()});
  CheckAllSplits("*2147483648\r\n", {Err(kInvalidMultibulkLen)});
  limits.max_args = SIZE_MAX;
  CheckAllSplits("*2147483648\r\n", {Err(kInvalidMultibulkLen)}, limits);
}

// A command of more than kRetainedArgs arguments: its lists are freed by ShrinkArgs, and
// what the parser holds is reported by bytes_held.
TEST(RespParserTest, BigCommandAndShrinkArgs) {
  RespParser parser;
  std::vector<std::string> args(1100000, "a");
  args[0] = "MSET";
  std::string request = Multibulk(args);
  size_t consumed = 0;
  ASSERT_EQ(parser.Parse(request, &consumed), RespParser::Result::kCommand);
  EXPECT_EQ(consumed, request.size());
  EXPECT_EQ(parser.args().size(), args.size());
  EXPECT_EQ(parser.args().back(), "a");
  EXPECT_GE(parser.bytes_held(), args.size() * 16);  // the views; the offsets are gone
  parser.ShrinkArgs();
  EXPECT_LT(parser.bytes_held(), 1024u * 32);
  ASSERT_EQ(parser.Parse(Multibulk({"PING"}), &consumed), RespParser::Result::kCommand);
  EXPECT_EQ(parser.args().size(), 1u);
}

// Redis's 64KiB line limit (PROTO_INLINE_MAX_SIZE) covers inline requests and the
// count lines of multibulk requests. A line is too big when its first
// max_inline_len + 1 bytes hold no terminator: exactly when Redis, receiving the bytes
// one at a time, would have buffered more than 64KiB without seeing one.
TEST(RespParserTest, LineLimitSmall) {
  Limits limits;
  limits.max_inline_len = 16;
  const std::string a16(16, 'A'), a15(15, 'A');
  CheckAllSplits(a16, {Pending()}, limits);
  CheckAllSplits(a16 + "A", {Err(kTooBigInline)}, limits);
  CheckAllSplits(a16 + "\n", {Cmd({a16})}, limits);
  CheckAllSplits(a15 + "\r\n", {Cmd({a15})}, limits);
  CheckAllSplits(a16 + "\r\n", {Err(kTooBigInline)}, limits);
  CheckAllSplits(a16 + "A\n", {Err(kTooBigInline)}, limits);
  // Only the current line counts.
  CheckAllSplits("PING\n" + a16 + "\nPING\n", {Cmd({"PING"}), Cmd({a16}), Cmd({"PING"})},
                 limits);

  // Count line: '*' and digits.
  const std::string d14(14, '1'), d15(15, '1');
  CheckAllSplits("*" + d15, {Pending()}, limits);
  CheckAllSplits("*" + d15 + "1", {Err(kTooBigMbulk)}, limits);
  CheckAllSplits("*-" + d14 + "\r\n", {Skip()}, limits);  // '\r' at offset 16
  CheckAllSplits("*-" + d15 + "\r\n", {Err(kTooBigMbulk)}, limits);
  // Bulk length line, counted from its '$'.
  CheckAllSplits("*1\r\n$" + d15, {Pending()}, limits);
  CheckAllSplits("*1\r\n$" + d15 + "1", {Err(kTooBigBulk)}, limits);
  CheckAllSplits("*1\r\nx" + d15 + "1", {Err(kTooBigBulk)}, limits);
  CheckAllSplits("*2\r\n$1\r\nx\r\n$-" + d15 + "\r\n", {Err(kTooBigBulk)}, limits);
  CheckAllSplits("*2\r\n$1\r\nx\r\n$-" + d14 + "\r\n", {Err(kInvalidBulkLen)}, limits);

  // Tiny limit: also applies to the usual short lines.
  limits.max_inline_len = 2;
  CheckAllSplits("*1\r\n$1\r\nx\r\n", {Cmd({"x"})}, limits);
  CheckAllSplits("*10\r\n", {Err(kTooBigMbulk)}, limits);
  CheckAllSplits("*1\r\n$10\r\n", {Err(kTooBigBulk)}, limits);
  CheckAllSplits("ab\n", {Cmd({"ab"})}, limits);
  CheckAllSplits("abc\n", {Err(kTooBigInline)}, limits);
}

TEST(RespParserTest, LineLimitDefault) {
  const size_t k64 = 65536;
  CheckBigStream(std::string(k64, 'A'), {Pending()});
  CheckBigStream(std::string(k64 + 1, 'A'), {Err(kTooBigInline)});
  const std::string a = std::string(k64 - 5, 'A');  // "ECHO " + a is 64KiB
  CheckBigStream("ECHO " + a + "\n", {Cmd({"ECHO", a})});
  CheckBigStream("ECHO " + a.substr(1) + "\r\n", {Cmd({"ECHO", a.substr(1)})});
  CheckBigStream("ECHO " + a + "A\n", {Err(kTooBigInline)});
  CheckBigStream("*" + std::string(k64 - 1, '1'), {Pending()});
  CheckBigStream("*" + std::string(k64, '1'), {Err(kTooBigMbulk)});
  CheckBigStream("*1\r\n$" + std::string(k64 - 1, '1'), {Pending()});
  CheckBigStream("*1\r\n$" + std::string(k64, '1'), {Err(kTooBigBulk)});
  CheckBigStream("*1\r\nx" + std::string(k64, '1'), {Err(kTooBigBulk)});
}

// Redis finds line terminators with strchr(), which stops at a NUL: a NUL before the
// terminator makes Redis wait until more than 64KiB are buffered, then fail.
// (Checked against redis-server 7.0 with the same inputs.)
TEST(RespParserTest, NulBeforeTerminator) {
  const size_t k64 = 65536;
  const std::string count = std::string("*1\0"sv) + std::string(k64 - 3, '1');
  CheckBigStream(count, {Pending()});
  CheckBigStream(count + "\r\n", {Err(kTooBigMbulk)});
  const std::string bulk = std::string("*1\r\n$\0"sv) + std::string(k64 - 2, '1') + "\r\n";
  CheckBigStream(bulk.substr(0, 4 + k64), {Pending()});
  CheckBigStream(bulk, {Err(kTooBigBulk)});
  const std::string inline_req = std::string("PING\0"sv) + std::string(k64 - 5, ' ');
  CheckBigStream(inline_req, {Pending()});
  CheckBigStream(inline_req + "\n", {Err(kTooBigInline)});
  CheckBigStream("PING\n" + inline_req + "\nPING\n", {Cmd({"PING"}), Err(kTooBigInline)});

  Limits limits;
  limits.max_inline_len = 8;
  CheckAllSplits("*1\0\r\n$4\r"sv, {Pending()}, limits);  // 8 bytes buffered
  CheckAllSplits("*1\0\r\n$4\r\n"sv, {Err(kTooBigMbulk)}, limits);
  CheckAllSplits("*1\r\nx\0\r\n$4\r\n"sv, {Pending()}, limits);
  CheckAllSplits("*1\r\nx\0\r\n$4\r\nP"sv, {Err(kTooBigBulk)}, limits);
  CheckAllSplits("\0\nPING\n\n"sv, {Pending()}, limits);
  CheckAllSplits("\0\nPING\n\nx"sv, {Err(kTooBigInline)}, limits);
  // A NUL after the terminator does not matter.
  CheckAllSplits("*1\r\n$1\r\n\0\r\n\0"sv, {Cmd({std::string(1, '\0')}), Pending()}, limits);
}

// ---------------------------------------------------------------------------------
// Unauthenticated clients (checked against redis-server --requirepass).

TEST(RespParserTest, Unauthenticated) {
  const auto check = [](std::string_view input, const Outcomes& expected) {
    if (input.size() < 200) {
      CheckAllSplits(input, expected, {}, /*two_pieces=*/true, /*unauthenticated=*/true);
    } else {
      CheckBigStream(input, expected, {}, /*unauthenticated=*/true);
    }
  };
  const std::string a10 = "*10\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n"
                          "$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n$1\r\na\r\n";
  check(a10, {Cmd(std::vector<std::string>(10, "a"))});
  check("*11\r\n", {Err(kUnauthMultibulkLen)});
  check("*-5\r\n", {Skip()});
  check("*2147483648\r\n", {Err(kInvalidMultibulkLen)});
  check("*1\r\n$16384\r\n", {Pending()});
  const std::string v(16384, 'v');
  check(Multibulk({"ECHO", v}), {Cmd({"ECHO", v})});
  check("*1\r\n$16385\r\n", {Err(kUnauthBulkLen)});
  check("*1\r\n$536870913\r\n", {Err(kInvalidBulkLen)});
  check("*1\r\n$-1\r\n", {Err(kInvalidBulkLen)});
  // Inline requests are not limited.
  std::string many = "A";
  for (int i = 0; i < 20; ++i) many += " A";
  check(many + "\n", {Cmd(std::vector<std::string>(21, "A"))});
  const std::string w(30000, 'w');
  check("ECHO " + w + "\n", {Cmd({"ECHO", w})});
  // The general limits are checked first.
  Limits limits;
  limits.max_args = 5;
  CheckAllSplits("*6\r\n", {Err(kInvalidMultibulkLen)}, limits, true, true);

  // Authentication lifts the limits.
  RespParser parser;
  parser.set_unauthenticated(true);
  size_t consumed;
  ASSERT_EQ(parser.Parse("*11\r\n", &consumed), Result::kError);
  parser.Reset();
  parser.set_unauthenticated(false);
  EXPECT_EQ(parser.Parse("*11\r\n", &consumed), Result::kNeedMore);
  EXPECT_EQ(parser.Parse("*11\r\n$16385\r\n", &consumed), Result::kNeedMore);
}

// ---------------------------------------------------------------------------------
// Errors and Reset().

TEST(RespParserTest, ErrorIsStickyUntilReset) {
  RespParser parser;
  size_t consumed = 7;
  ASSERT_EQ(parser.Parse("*1\r\n$x\r\nPING\r\n", &consumed), Result::kError);
  EXPECT_EQ(consumed, 0u);
  EXPECT_EQ(parser.error(), kInvalidBulkLen);
  EXPECT_EQ(parser.bytes_needed(), 0u);
  consumed = 7;
  EXPECT_EQ(parser.Parse("PING\r\n", &consumed), Result::kError);
  EXPECT_EQ(consumed, 0u);
  parser.Reset();
  EXPECT_TRUE(parser.error().empty());
  ASSERT_EQ(parser.Parse("PING\r\n", &consumed), Result::kCommand);
  EXPECT_EQ(consumed, 6u);
  EXPECT_EQ(parser.args()[0], "PING");
}

TEST(RespParserTest, ResetForgetsPartialRequest) {
  const std::string partials[] = {
      "*2\r\n$3\r\nfoo",             // in bulk data
      "*2\r\n$3\r\nfoo\r\n$",        // in a bulk length line
      "*2",                          // in the count line
      "GET ke",                      // inline
      std::string("PI\0NG\r"sv),     // inline, NUL before the newline
      std::string("*1\0\r\n"sv),     // count line, NUL before the terminator
      "*1\r\n$100000\r\nabc",        // big bulk, bytes_needed known
  };
  for (const std::string& partial : partials) {
    RespParser parser;
    size_t consumed;
    ASSERT_EQ(parser.Parse(partial, &consumed), Result::kNeedMore) << helio::CEscape(partial);
    parser.Reset();
    EXPECT_EQ(parser.bytes_needed(), 0u);
    ASSERT_EQ(parser.Parse("*1\r\n$4\r\nPING\r\n", &consumed), Result::kCommand);
    EXPECT_EQ(consumed, 14u);
    ASSERT_EQ(parser.args().size(), 1u);
    EXPECT_EQ(parser.args()[0], "PING");
    parser.Reset();
    ASSERT_EQ(parser.Parse("ECHO x\n", &consumed), Result::kCommand);
    EXPECT_EQ(parser.args()[1], "x");
  }
}

TEST(RespParserTest, EmptyInput) {
  RespParser parser;
  size_t consumed = 3;
  EXPECT_EQ(parser.Parse("", &consumed), Result::kNeedMore);
  EXPECT_EQ(consumed, 0u);
  EXPECT_EQ(parser.Parse(std::string_view(), &consumed), Result::kNeedMore);
  EXPECT_EQ(parser.bytes_needed(), 0u);
}

// ---------------------------------------------------------------------------------
// Randomized round trips (fixed seeds; std::mt19937 output is portable).

std::string RandomBytes(std::mt19937* rng, size_t len) {
  static constexpr char kSpecial[] = {'\r', '\n', '\0', '$', '*', '"', '\'', '\\', ' ', '\t',
                                      '\v', '\f', 'x',  '0', '9', '-'};
  std::string s(len, '\0');
  for (char& c : s) {
    const uint32_t r = (*rng)();
    c = (r & 1) ? kSpecial[(r >> 1) % sizeof(kSpecial)] : static_cast<char>(r >> 8);
  }
  return s;
}

std::vector<std::string> RandomArgs(std::mt19937* rng) {
  std::vector<std::string> args(1 + (*rng)() % 6);
  for (std::string& a : args) {
    const uint32_t r = (*rng)();
    const size_t len = (r % 10 == 0) ? r % 3000 : r % 40;
    a = RandomBytes(rng, len);
  }
  return args;
}

bool PlainInline(const std::string& a, bool first) {
  if (a.empty() || (first && a[0] == '*')) return false;
  for (char c : a) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f' ||
        c == '"' || c == '\'' || c == '\0')
      return false;
  }
  return true;
}

// Encodes an inline request with Redis's quoting rules.
std::string InlineRequest(const std::vector<std::string>& args, std::mt19937* rng) {
  static constexpr char kBlank[] = {' ', '\t', '\v', '\f', '\r'};
  std::string line;
  for (int i = (*rng)() % 3; i > 0; --i) line += kBlank[(*rng)() % sizeof(kBlank)];
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i > 0) {
      line += (*rng)() % 2 ? ' ' : '\t';  // '\v' and '\f' do not end a plain argument
      for (int k = (*rng)() % 3; k > 0; --k) line += kBlank[(*rng)() % sizeof(kBlank)];
    }
    const bool single_ok = a.find_first_of(std::string("\\\n\0"sv)) == std::string::npos;
    if (PlainInline(a, i == 0) && (*rng)() % 4 != 0) {
      line += a;
    } else if (single_ok && (*rng)() % 2) {
      line += '\'';
      for (char c : a) {
        if (c == '\'') line += '\\';
        line += c;
      }
      line += '\'';
    } else {
      line += '"';
      for (char c : a) {
        const uint32_t r = (*rng)();
        switch (c) {
          case '"': line += "\\\""; continue;
          case '\\': line += "\\\\"; continue;
          case '\n': line += r % 2 ? "\\n" : "\\x0a"; continue;
          case '\r': line += r % 2 ? "\\r" : "\\x0D"; continue;
          case '\t': line += r % 2 ? "\\t" : "\t"; continue;
          case '\b': line += "\\b"; continue;
          case '\a': line += "\\a"; continue;
          case '\0': line += "\\x00"; continue;
          default: break;
        }
        const unsigned char u = c;
        if (u >= 32 && u < 127 && r % 8 != 0) {
          line += c;
        } else {
          char buf[8];
          snprintf(buf, sizeof(buf), r % 2 ? "\\x%02x" : "\\x%02X", u);
          line += buf;
        }
      }
      line += '"';
    }
  }
  for (int i = (*rng)() % 2; i > 0; --i) line += ' ';
  line += (*rng)() % 2 ? "\r\n" : "\n";
  return line;
}

TEST(RespParserTest, RandomRoundTrip) {
  std::mt19937 rng(20240521);
  for (int round = 0; round < 4; ++round) {
    std::string stream;
    Outcomes expected;
    for (int i = 0; i < 250; ++i) {
      const std::vector<std::string> args = RandomArgs(&rng);
      const uint32_t kind = rng() % 4;
      if (kind == 0) {
        stream += InlineRequest(args, &rng);
      } else {
        stream += Multibulk(args);
      }
      expected.push_back(Cmd(args));
    }
    RespParser parser;
    for (Buffering b : {Buffering::kInPlace, Buffering::kMoving}) {
      for (size_t max_chunk : {1, 7, 64, 1500, 100000}) {
        if (b == Buffering::kMoving && max_chunk == 1) continue;  // quadratic copying
        if (!Check(&parser, stream, RandomCuts(stream.size(), max_chunk, &rng), b, expected))
          return;
      }
    }
  }
}

}  // namespace
}  // namespace damselfly::facade
