// Tests for MemcacheParser. Every expected reply text, every resynchronisation and every
// boundary below was first observed on a live memcached 1.6.18 (-U 0 -t 1), talking to
// it over a socket; the deviations we chose are marked "Deviation".
#include "src/facade/memcache_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "helio/base/strings.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <string_view>
#include <vector>

// Counts heap allocations while g_count_allocations is set (NoAllocationInSteadyState).
// The replacement operator new/delete pair over malloc/free is correct; GCC 12 flags
// the free as mismatched once it inlines the replacement into callers.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
bool g_count_allocations = false;
size_t g_allocations = 0;
}  // namespace

void* operator new(size_t size) {
  if (g_count_allocations) ++g_allocations;
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace damselfly::facade {
namespace {

using namespace std::literals;
using ::testing::ElementsAre;
using Result = MemcacheParser::Result;
using Limits = MemcacheParser::Limits;
using Type = MemcacheCommand::Type;

constexpr char kUnknown[] = "ERR:ERROR";
constexpr char kBadFormat[] = "ERR:CLIENT_ERROR bad command line format";
constexpr char kBadFormatNoreply[] = "ERR:CLIENT_ERROR bad command line format [noreply]";
constexpr char kBadChunk[] = "ERR:CLIENT_ERROR bad data chunk";
constexpr char kTooLarge[] = "ERR:SERVER_ERROR object too large for cache";
constexpr char kBadExptime[] = "ERR:CLIENT_ERROR invalid exptime argument";
constexpr char kBadDelta[] = "ERR:CLIENT_ERROR invalid numeric delta argument";
constexpr char kDeleteUsage[] =
    "ERR:CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]";
constexpr char kDuplicateFlag[] = "ERR:CLIENT_ERROR duplicate flag";
constexpr char kInvalidFlag[] = "ERR:CLIENT_ERROR invalid flag";
constexpr char kBadToken[] = "ERR:CLIENT_ERROR bad token in command line format";
constexpr char kBadBase64[] = "ERR:CLIENT_ERROR error decoding key";
constexpr char kBadModeLength[] = "ERR:CLIENT_ERROR incorrect length for M token";
constexpr char kInvalidOrDuplicate[] = "ERR:CLIENT_ERROR invalid or duplicate flag";
constexpr char kOpaqueTooLong[] = "ERR:CLIENT_ERROR opaque token too long";
constexpr char kClosed[] = "ERR: [close]";
constexpr char kOutOfMemory[] = "ERR:SERVER_ERROR out of memory reading request [close]";
constexpr char kPending[] = "PENDING";

std::string Repeat(std::string_view piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += piece;
  return out;
}


bool HasData(Type type) {
  switch (type) {
    case Type::kSet: case Type::kAdd: case Type::kReplace: case Type::kAppend:
    case Type::kPrepend: case Type::kCas: case Type::kMetaSet:
      return true;
    default:
      return false;
  }
}

// The command name, keys, meta flags as sent and the data block: what most tests check.
std::string Brief(const MemcacheCommand& c) {
  std::string out(MemcacheCommandName(c.type));
  for (std::string_view key : c.keys) out += " " + helio::CEscape(key);
  for (const MetaFlag& flag : c.meta.flags) {
    out += " " + std::string(1, flag.letter) + helio::CEscape(flag.token);
  }
  if (HasData(c.type)) out += " \"" + helio::CEscape(c.data) + "\"";
  return out;
}

// Every field: what the split tests compare.
std::string Full(const MemcacheCommand& c) {
  const MetaArgs& m = c.meta;
  std::string out = Brief(c);
  char buf[512];
  snprintf(buf, sizeof(buf),
           " flags=%u exptime=%lld cas=%llu delta=%llu delay=%lld verbosity=%u noreply=%d"
           " letters=%llx T=%lld N=%lld R=%lld C=%llu D=%llu J=%llu F=%u mode=%d",
           c.flags, static_cast<long long>(c.exptime),
           static_cast<unsigned long long>(c.cas_unique), static_cast<unsigned long long>(c.delta),
           static_cast<long long>(c.delay), c.verbosity, c.noreply,
           static_cast<unsigned long long>(m.letters), static_cast<long long>(m.ttl),
           static_cast<long long>(m.vivify_ttl), static_cast<long long>(m.recache_ttl),
           static_cast<unsigned long long>(m.compare_cas), static_cast<unsigned long long>(m.delta),
           static_cast<unsigned long long>(m.initial), m.client_flags, static_cast<int>(m.mode));
  return out + buf + " O=" + helio::CEscape(m.opaque) + " b=" + helio::CEscape(m.encoded_key);
}

std::string RenderError(const MemcacheParser::Error& e) {
  std::string out = "ERR:" + std::string(e.reply);
  if (e.noreply) out += " [noreply]";
  if (e.close_connection) out += " [close]";
  return out;
}

// A connection's read buffer that moves on every Parse call: the old bytes are
// overwritten before they are freed, so a parser that kept a pointer would misparse.
class MovingBuffer {
 public:
  void Append(std::string_view bytes) { Reallocate(view(), bytes); }
  void Consume(size_t n) { Reallocate(view().substr(n), {}); }
  void Move() { Reallocate(view(), {}); }
  std::string_view view() const { return {data_.get(), size_}; }

 private:
  void Reallocate(std::string_view keep, std::string_view extra) {
    auto fresh = std::make_unique<char[]>(keep.size() + extra.size() + 1);
    if (!keep.empty()) memcpy(fresh.get(), keep.data(), keep.size());
    if (!extra.empty()) memcpy(fresh.get() + keep.size(), extra.data(), extra.size());
    if (data_) memset(data_.get(), '#', size_);
    size_ = keep.size() + extra.size();
    data_ = std::move(fresh);
  }
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
};

// Plays `stream` to the parser the way a connection does: the bytes arrive in `pieces`
// (sizes; whatever is left arrives last), and after each arrival Parse runs until it
// asks for more. Returns one entry per command (Brief, or Full if `full`) and per error,
// then "PENDING" if the stream ends inside a request or a swallowed block.
std::vector<std::string> Drive(MemcacheParser* parser, std::string_view stream,
                               const std::vector<size_t>& pieces, bool full = false) {
  std::vector<std::string> out;
  MovingBuffer buffer;
  size_t delivered = 0;
  for (size_t piece = 0; delivered < stream.size() || piece == 0; ++piece) {
    const size_t n = piece < pieces.size() ? std::min(pieces[piece], stream.size() - delivered)
                                           : stream.size() - delivered;
    buffer.Append(stream.substr(delivered, n));
    delivered += n;
    while (true) {
      buffer.Move();
      MemcacheCommand cmd;
      size_t consumed = 12345;
      const Result result = parser->Parse(buffer.view(), &consumed, &cmd);
      if (result == Result::kNeedMore) {
        EXPECT_EQ(consumed, 0u) << "kNeedMore must consume nothing";
        break;
      }
      EXPECT_LE(consumed, buffer.view().size());
      if (result == Result::kCommand) out.push_back(full ? Full(cmd) : Brief(cmd));
      if (result == Result::kSkipped) {
        EXPECT_GT(consumed, 0u);
      }
      if (result == Result::kError) {
        out.push_back(RenderError(parser->error()));
        if (parser->error().close_connection) return out;
      }
      buffer.Consume(consumed);
    }
  }
  if (!buffer.view().empty() || parser->skip_remaining() > 0) out.push_back(kPending);
  return out;
}

std::vector<std::string> Outcomes(std::string_view stream, Limits limits = {}) {
  MemcacheParser parser(limits);
  return Drive(&parser, stream, {});
}

class MemcacheParserTest : public ::testing::Test {
 protected:
  // Parses exactly one command out of `input`, which must hold exactly that. The input
  // is kept until the test ends: the command's views point into it.
  MemcacheCommand ParseCommand(MemcacheParser* parser, std::string input) {
    const std::string& kept = inputs_.emplace_back(std::move(input));
    MemcacheCommand cmd;
    size_t consumed = 0;
    EXPECT_EQ(parser->Parse(kept, &consumed, &cmd), Result::kCommand) << helio::CEscape(kept);
    EXPECT_EQ(consumed, kept.size()) << helio::CEscape(kept);
    return cmd;
  }

 private:
  std::deque<std::string> inputs_;
};

// ---------------------------------------------------------------------------------------
// Command forms.

TEST_F(MemcacheParserTest, StorageCommands) {
  MemcacheParser parser;
  MemcacheCommand cmd = ParseCommand(&parser, "set k 5 -1 3\r\nabc\r\n");
  EXPECT_EQ(cmd.type, Type::kSet);
  EXPECT_EQ(cmd.key(), "k");
  EXPECT_EQ(cmd.keys.size(), 1u);
  EXPECT_EQ(cmd.flags, 5u);
  EXPECT_EQ(cmd.exptime, -1);
  EXPECT_EQ(cmd.data, "abc");
  EXPECT_FALSE(cmd.noreply);

  cmd = ParseCommand(&parser, "add k 0 2592001 0\r\n\r\n");
  EXPECT_EQ(cmd.type, Type::kAdd);
  EXPECT_EQ(cmd.exptime, 2592001);
  EXPECT_EQ(cmd.data, "");

  cmd = ParseCommand(&parser, "replace k 1 2 1 noreply\r\nx\r\n");
  EXPECT_EQ(cmd.type, Type::kReplace);
  EXPECT_TRUE(cmd.noreply);
  EXPECT_EQ(ParseCommand(&parser, "append k 0 0 1\r\nx\r\n").type, Type::kAppend);
  EXPECT_EQ(ParseCommand(&parser, "prepend k 0 0 1 noreply\r\nx\r\n").type, Type::kPrepend);

  cmd = ParseCommand(&parser, "cas k 7 8 3 18446744073709551615 noreply\r\nxyz\r\n");
  EXPECT_EQ(cmd.type, Type::kCas);
  EXPECT_EQ(cmd.flags, 7u);
  EXPECT_EQ(cmd.exptime, 8);
  EXPECT_EQ(cmd.cas_unique, UINT64_MAX);
  EXPECT_EQ(cmd.data, "xyz");
  EXPECT_TRUE(cmd.noreply);

  // Only a last token "noreply" counts; anything else in that slot is ignored.
  EXPECT_FALSE(ParseCommand(&parser, "set k 0 0 1 foo\r\na\r\n").noreply);
  EXPECT_FALSE(ParseCommand(&parser, "cas k 0 0 1 5 foo\r\na\r\n").noreply);
  // Runs of spaces and leading spaces are fine.
  EXPECT_EQ(Brief(ParseCommand(&parser, "  set  k   0 0  1  \r\nc\r\n")), "set k \"c\"");
}

TEST_F(MemcacheParserTest, RetrievalCommands) {
  MemcacheParser parser;
  MemcacheCommand cmd = ParseCommand(&parser, "get a b c\r\n");
  EXPECT_EQ(cmd.type, Type::kGet);
  EXPECT_THAT(cmd.keys, ElementsAre("a", "b", "c"));
  EXPECT_THAT(ParseCommand(&parser, "gets a\r\n").keys, ElementsAre("a"));
  EXPECT_EQ(ParseCommand(&parser, "gets a\r\n").type, Type::kGets);
  EXPECT_THAT(ParseCommand(&parser, "get k k k\r\n").keys, ElementsAre("k", "k", "k"));
  // get has no noreply: it is a key.
  EXPECT_THAT(ParseCommand(&parser, "get k noreply\r\n").keys, ElementsAre("k", "noreply"));

  cmd = ParseCommand(&parser, "gat 100 a b\r\n");
  EXPECT_EQ(cmd.type, Type::kGat);
  EXPECT_EQ(cmd.exptime, 100);
  EXPECT_THAT(cmd.keys, ElementsAre("a", "b"));
  cmd = ParseCommand(&parser, "gats -1 a\r\n");
  EXPECT_EQ(cmd.type, Type::kGats);
  EXPECT_EQ(cmd.exptime, -1);
  // Surprise: memcached answers a gat without keys with "END", not "ERROR".
  cmd = ParseCommand(&parser, "gat 0\r\n");
  EXPECT_EQ(cmd.type, Type::kGat);
  EXPECT_TRUE(cmd.keys.empty());
  EXPECT_TRUE(ParseCommand(&parser, "gats 5\r\n").keys.empty());
}

TEST_F(MemcacheParserTest, TouchArithmeticDelete) {
  MemcacheParser parser;
  MemcacheCommand cmd = ParseCommand(&parser, "touch k 10\r\n");
  EXPECT_EQ(cmd.type, Type::kTouch);
  EXPECT_EQ(cmd.key(), "k");
  EXPECT_EQ(cmd.exptime, 10);
  EXPECT_TRUE(ParseCommand(&parser, "touch k 10 noreply\r\n").noreply);
  EXPECT_FALSE(ParseCommand(&parser, "touch k 1 x\r\n").noreply);

  cmd = ParseCommand(&parser, "incr k 5\r\n");
  EXPECT_EQ(cmd.type, Type::kIncr);
  EXPECT_EQ(cmd.delta, 5u);
  cmd = ParseCommand(&parser, "decr k 18446744073709551615 noreply\r\n");
  EXPECT_EQ(cmd.type, Type::kDecr);
  EXPECT_EQ(cmd.delta, UINT64_MAX);
  EXPECT_TRUE(cmd.noreply);
  EXPECT_FALSE(ParseCommand(&parser, "incr k 1 x\r\n").noreply);

  for (const char* line : {"delete k\r\n", "delete k 0\r\n"}) {
    cmd = ParseCommand(&parser, line);
    EXPECT_EQ(cmd.type, Type::kDelete);
    EXPECT_EQ(cmd.key(), "k");
    EXPECT_FALSE(cmd.noreply);
  }
  EXPECT_TRUE(ParseCommand(&parser, "delete k noreply\r\n").noreply);
  EXPECT_TRUE(ParseCommand(&parser, "delete k 0 noreply\r\n").noreply);
  // With one token after "delete" there is no noreply to look for: the key is "noreply".
  cmd = ParseCommand(&parser, "delete noreply\r\n");
  EXPECT_EQ(cmd.key(), "noreply");
  EXPECT_FALSE(cmd.noreply);
}

TEST_F(MemcacheParserTest, AdministrativeCommands) {
  MemcacheParser parser;
  MemcacheCommand cmd = ParseCommand(&parser, "flush_all\r\n");
  EXPECT_EQ(cmd.type, Type::kFlushAll);
  EXPECT_EQ(cmd.delay, 0);
  EXPECT_FALSE(cmd.noreply);
  EXPECT_EQ(ParseCommand(&parser, "flush_all 10\r\n").delay, 10);
  EXPECT_EQ(ParseCommand(&parser, "flush_all -1\r\n").delay, -1);
  cmd = ParseCommand(&parser, "flush_all noreply\r\n");
  EXPECT_EQ(cmd.delay, 0);
  EXPECT_TRUE(cmd.noreply);
  cmd = ParseCommand(&parser, "flush_all 10 noreply\r\n");
  EXPECT_EQ(cmd.delay, 10);
  EXPECT_TRUE(cmd.noreply);
  cmd = ParseCommand(&parser, "flush_all 7 x\r\n");  // a second token that is not noreply
  EXPECT_EQ(cmd.delay, 7);
  EXPECT_FALSE(cmd.noreply);

  EXPECT_EQ(ParseCommand(&parser, "version\r\n").type, Type::kVersion);
  EXPECT_EQ(ParseCommand(&parser, "version a b c\r\n").type, Type::kVersion);
  EXPECT_EQ(ParseCommand(&parser, "quit\r\n").type, Type::kQuit);
  EXPECT_EQ(ParseCommand(&parser, "quit x\r\n").type, Type::kQuit);
  cmd = ParseCommand(&parser, "verbosity 1\r\n");
  EXPECT_EQ(cmd.type, Type::kVerbosity);
  EXPECT_EQ(cmd.verbosity, 1u);
  cmd = ParseCommand(&parser, "verbosity 5 noreply\r\n");
  EXPECT_EQ(cmd.verbosity, 5u);
  EXPECT_TRUE(cmd.noreply);
  EXPECT_FALSE(ParseCommand(&parser, "verbosity 1 x\r\n").noreply);

  cmd = ParseCommand(&parser, "stats\r\n");
  EXPECT_EQ(cmd.type, Type::kStats);
  EXPECT_TRUE(cmd.keys.empty());
  EXPECT_THAT(ParseCommand(&parser, "stats items\r\n").keys, ElementsAre("items"));
  EXPECT_THAT(ParseCommand(&parser, "stats cachedump 1 0\r\n").keys,
              ElementsAre("cachedump", "1", "0"));
}

TEST_F(MemcacheParserTest, MetaNoopAndDebug) {
  MemcacheParser parser;
  EXPECT_EQ(ParseCommand(&parser, "mn\r\n").type, Type::kMetaNoop);
  EXPECT_EQ(ParseCommand(&parser, "mn x y\r\n").type, Type::kMetaNoop);  // ignored
  MemcacheCommand cmd = ParseCommand(&parser, "me k\r\n");
  EXPECT_EQ(cmd.type, Type::kMetaDebug);
  EXPECT_EQ(cmd.key(), "k");
  EXPECT_FALSE(cmd.meta.Has('b'));
  EXPECT_EQ(ParseCommand(&parser, "me k x y\r\n").key(), "k");
  cmd = ParseCommand(&parser, "me YQ== b\r\n");
  EXPECT_EQ(cmd.key(), "a");
  EXPECT_TRUE(cmd.meta.Has('b'));
  EXPECT_EQ(cmd.meta.encoded_key, "YQ==");
}

TEST_F(MemcacheParserTest, MetaGetFlags) {
  MemcacheParser parser;
  MemcacheCommand cmd = ParseCommand(&parser, "mg k v k f t c s T30 N5 R10 O123 q h l u\r\n");
  EXPECT_EQ(cmd.type, Type::kMetaGet);
  EXPECT_EQ(cmd.key(), "k");
  EXPECT_EQ(Brief(cmd), "mg k v k f t c s T30 N5 R10 O123 q h l u");
  for (char letter : std::string_view("vkftcsTNROqhlu")) {
    EXPECT_TRUE(cmd.meta.Has(letter)) << letter;
  }
  for (char letter : std::string_view("bCDEFIJLMP")) EXPECT_FALSE(cmd.meta.Has(letter)) << letter;
  EXPECT_EQ(cmd.meta.ttl, 30);
  EXPECT_EQ(cmd.meta.vivify_ttl, 5);
  EXPECT_EQ(cmd.meta.recache_ttl, 10);
  EXPECT_EQ(cmd.meta.opaque, "123");
  EXPECT_EQ(cmd.meta.mode, MetaMode::kNone);
  EXPECT_FALSE(cmd.noreply);  // meta commands use Has('q')

  // A value glued to a flag that takes none is kept and ignored ("vk" is v).
  cmd = ParseCommand(&parser, "mg k vk\r\n");
  ASSERT_EQ(cmd.meta.flags.size(), 1u);
  EXPECT_EQ(cmd.meta.flags[0].letter, 'v');
  EXPECT_EQ(cmd.meta.flags[0].token, "k");
  EXPECT_TRUE(ParseCommand(&parser, "mg k\r\n").meta.flags.empty());
  // An empty opaque is an opaque ("HD O").
  cmd = ParseCommand(&parser, "mg k O\r\n");
  EXPECT_TRUE(cmd.meta.Has('O'));
  EXPECT_EQ(cmd.meta.opaque, "");
  // Numbers take the strtol rules: the T value is raw, as for classic exptimes.
  EXPECT_EQ(ParseCommand(&parser, "mg k T2147483648\r\n").meta.ttl, 2147483648);
  EXPECT_EQ(ParseCommand(&parser, "mg k T-5 N-5 R-5\r\n").meta.recache_ttl, -5);
  // F keeps the low 32 bits, like classic flags; M with two bytes is ignored by mg.
  EXPECT_EQ(ParseCommand(&parser, "mg k F4294967297\r\n").meta.client_flags, 1u);
  EXPECT_EQ(ParseCommand(&parser, "mg k MZ\r\n").meta.mode, MetaMode::kNone);
}

TEST_F(MemcacheParserTest, MetaSet) {
  MemcacheParser parser;
  MemcacheCommand cmd = ParseCommand(&parser, "ms k 2 T10 F3 C7 I q k MA\r\nhi\r\n");
  EXPECT_EQ(cmd.type, Type::kMetaSet);
  EXPECT_EQ(cmd.key(), "k");
  EXPECT_EQ(cmd.data, "hi");
  EXPECT_EQ(cmd.meta.ttl, 10);
  EXPECT_EQ(cmd.meta.client_flags, 3u);
  EXPECT_EQ(cmd.meta.compare_cas, 7u);
  EXPECT_TRUE(cmd.meta.Has('I'));
  EXPECT_TRUE(cmd.meta.Has('q'));
  EXPECT_EQ(cmd.meta.mode, MetaMode::kAppend);
  EXPECT_EQ(Brief(cmd), "ms k T10 F3 C7 I q k MA \"hi\"");

  cmd = ParseCommand(&parser, "ms k 0\r\n\r\n");
  EXPECT_EQ(cmd.data, "");
  EXPECT_EQ(cmd.meta.mode, MetaMode::kSet);
  EXPECT_TRUE(cmd.meta.flags.empty());

  const std::pair<const char*, MetaMode> modes[] = {
      {"MS", MetaMode::kSet},     {"ME", MetaMode::kAdd},     {"MA", MetaMode::kAppend},
      {"MP", MetaMode::kPrepend}, {"MR", MetaMode::kReplace},
  };
  for (const auto& [token, mode] : modes) {
    EXPECT_EQ(ParseCommand(&parser, "ms k 1 "s + token + "\r\nx\r\n").meta.mode, mode) << token;
  }
  // ms takes the token count limit with its length: 16 flags are fine.
  cmd = ParseCommand(&parser, "ms k 1 c f h k l q s t u v I L P O1 T1 N1\r\nx\r\n");
  EXPECT_EQ(cmd.meta.flags.size(), 16u);
}

TEST_F(MemcacheParserTest, MetaDeleteAndArithmetic) {
  MemcacheParser parser;
  MemcacheCommand cmd = ParseCommand(&parser, "md k q C5 I T30\r\n");
  EXPECT_EQ(cmd.type, Type::kMetaDelete);
  EXPECT_EQ(cmd.meta.compare_cas, 5u);
  EXPECT_EQ(cmd.meta.ttl, 30);
  EXPECT_TRUE(cmd.meta.Has('I'));
  EXPECT_EQ(cmd.meta.mode, MetaMode::kNone);

  cmd = ParseCommand(&parser, "ma k\r\n");
  EXPECT_EQ(cmd.type, Type::kMetaArithmetic);
  EXPECT_EQ(cmd.meta.mode, MetaMode::kIncrement);
  EXPECT_EQ(cmd.meta.delta, 1u);
  EXPECT_EQ(cmd.meta.initial, 0u);
  cmd = ParseCommand(&parser, "ma k MD D5 J10 N0 v t\r\n");
  EXPECT_EQ(cmd.meta.mode, MetaMode::kDecrement);
  EXPECT_EQ(cmd.meta.delta, 5u);
  EXPECT_EQ(cmd.meta.initial, 10u);
  EXPECT_TRUE(cmd.meta.Has('N'));
  EXPECT_EQ(cmd.meta.vivify_ttl, 0);
  EXPECT_EQ(ParseCommand(&parser, "ma k M-\r\n").meta.mode, MetaMode::kDecrement);
  EXPECT_EQ(ParseCommand(&parser, "ma k M+\r\n").meta.mode, MetaMode::kIncrement);
  EXPECT_EQ(ParseCommand(&parser, "ma k MI\r\n").meta.mode, MetaMode::kIncrement);
}

TEST_F(MemcacheParserTest, MetaBase64Keys) {
  // memcached's decoder: groups of four, stops after the first padded group, skips bytes
  // outside the alphabet (as long as the rest groups by four), drops stray low bits.
  const std::pair<const char*, std::string> decoded[] = {
      {"YQ==", "a"},       {"a2V5", "key"},      {"YQ==YQ==", "a"},  {"YR==", "a"},
      {"YQ=A", "a\0"s},    {"YWJj!!!!", "abc"},  {"YQ==!!!!", "a"}, {"AA==", "\0"s},
      {"YWJjYWJj", "abcabc"},
  };
  MemcacheParser parser;
  for (const auto& [encoded, key] : decoded) {
    MemcacheCommand cmd = ParseCommand(&parser, "mg "s + encoded + " b k v\r\n");
    EXPECT_EQ(cmd.key(), key) << encoded;
    EXPECT_EQ(cmd.meta.encoded_key, encoded);
    EXPECT_TRUE(cmd.meta.Has('b'));
  }
  for (const char* bad : {"YQ", "YQ=", "YQ===", "a2V", "a2V5a", "a-V5", "YW!j", "YQ==Y", "Y===",
                          "====", "k", "YWJjY"}) {
    EXPECT_THAT(Outcomes("mg "s + bad + " b v\r\n"), ElementsAre(kBadBase64)) << bad;
    EXPECT_THAT(Outcomes("md "s + bad + " b\r\n"), ElementsAre(kInvalidOrDuplicate)) << bad;
    EXPECT_THAT(Outcomes("ma "s + bad + " b\r\n"), ElementsAre(kInvalidOrDuplicate)) << bad;
    EXPECT_THAT(Outcomes("me "s + bad + " b\r\n"), ElementsAre(kBadFormat)) << bad;
  }
  EXPECT_EQ(ParseCommand(&parser, "ms YQ== 1 b\r\nz\r\n").key(), "a");
  EXPECT_EQ(ParseCommand(&parser, "md YQ== b\r\n").key(), "a");
  // The decoded key lives in the parser; the data block still points into the input.
  MemcacheCommand cmd = ParseCommand(&parser, "ms a2V5 3 b\r\nval\r\n");
  EXPECT_EQ(cmd.key(), "key");
  EXPECT_EQ(cmd.data, "val");
}

// ---------------------------------------------------------------------------------------
// Errors: exact texts, noreply, and what the next bytes parse as.

struct ErrorCase {
  std::string input;
  std::vector<std::string> outcomes;  // "mn" is appended to input and expected last
};

void CheckErrorCases(const std::vector<ErrorCase>& cases, Limits limits = {}) {
  for (const ErrorCase& c : cases) {
    std::vector<std::string> expected = c.outcomes;
    expected.push_back("mn");
    EXPECT_EQ(Outcomes(c.input + "mn\r\n", limits), expected) << helio::CEscape(c.input);
  }
}

TEST_F(MemcacheParserTest, UnknownCommandsAndWrongArityGetError) {
  // The connection stays open and the next line parses normally.
  CheckErrorCases({
      {"\r\n", {kUnknown}},
      {"\n", {kUnknown}},
      {"   \r\n", {kUnknown}},
      {"\r\r\n", {kUnknown}},
      {"foo bar\r\n", {kUnknown}},
      {"SET k 0 0 1\r\n", {kUnknown}},  // names are case-sensitive
      {"GET k\r\n", {kUnknown}},
      {"MG k v\r\n", {kUnknown}},
      {"mgx k v\r\n", {kUnknown}},
      {"get\tk\r\n", {kUnknown}},  // only ' ' separates tokens
      {"version\r\r\n", {kUnknown}},  // one '\r' is dropped: the name is "version\r"
      {"get\r\n", {kUnknown}},
      {"get \r\n", {kUnknown}},
      {"gets\r\n", {kUnknown}},
      {"gat\r\n", {kUnknown}},
      {"gats\r\n", {kUnknown}},
      {"touch k\r\n", {kUnknown}},
      {"touch k 1 noreply x\r\n", {kUnknown}},
      {"incr k\r\n", {kUnknown}},
      {"incr k 1 2 3\r\n", {kUnknown}},
      {"decr\r\n", {kUnknown}},
      {"delete\r\n", {kUnknown}},
      {"delete k 0 0 0\r\n", {kUnknown}},
      {"flush_all 1 2 3\r\n", {kUnknown}},
      {"verbosity\r\n", {kUnknown}},
      {"verbosity 1 2 3\r\n", {kUnknown}},
      {"set k 0 0\r\n", {kUnknown}},
      {"set k 0 0 1 noreply extra\r\n", {kUnknown}},
      {"set k noreply\r\n", {kUnknown}},  // arity first: "ERROR" is sent despite noreply
      {"cas k 0 0 1\r\n", {kUnknown}},
      {"cas k 0 0 1 1 noreply x\r\n", {kUnknown}},
      {"mg\r\n", {kUnknown}},
      {"ms\r\n", {kUnknown}},
      {"md\r\n", {kUnknown}},
      {"ma\r\n", {kUnknown}},
      {"me\r\n", {kBadFormat}},  // me is the odd one out
  });
}

TEST_F(MemcacheParserTest, ClassicClientErrors) {
  CheckErrorCases({
      // A malformed storage line does not swallow its block: it is parsed as a line.
      {"set k 0 0 -1\r\n", {kBadFormat}},
      {"set k 0 0 abc\r\nabc\r\n", {kBadFormat, kUnknown}},
      {"set k 0 0 1x\r\na\r\n", {kBadFormat, kUnknown}},
      {"set k -1 0 1\r\na\r\n", {kBadFormat, kUnknown}},
      {"set k 18446744073709551616 0 1\r\na\r\n", {kBadFormat, kUnknown}},
      {"set k 0 9223372036854775808 1\r\na\r\n", {kBadFormat, kUnknown}},
      {"set k 0 0 2147483646\r\n", {kBadFormat}},  // > INT_MAX - 2
      {"set k 0 0 2147483647\r\n", {kBadFormat}},
      {"set k 0 0 9223372036854775808\r\n", {kBadFormat}},
      {"cas k 0 0 1 x\r\na\r\n", {kBadFormat, kUnknown}},
      {"cas k 0 0 1 -1\r\na\r\n", {kBadFormat, kUnknown}},
      {"cas k 0 0 1 18446744073709551616\r\na\r\n", {kBadFormat, kUnknown}},
      {"set k 0 0 -1 noreply\r\n", {kBadFormatNoreply}},
      {"set k 0 0 noreply\r\n", {kBadFormatNoreply}},  // the length is "noreply"
      {"get k " + std::string(251, 'x') + "\r\n", {kBadFormat}},
      {"incr k x\r\n", {kBadDelta}},
      {"incr k -1\r\n", {kBadDelta}},
      {"incr k 18446744073709551616\r\n", {kBadDelta}},
      {"decr k 1.5\r\n", {kBadDelta}},
      {"incr k noreply\r\n", {kBadDelta + " [noreply]"s}},
      {"incr k x noreply\r\n", {kBadDelta + " [noreply]"s}},
      {"touch k x\r\n", {kBadExptime}},
      {"touch k noreply\r\n", {kBadExptime + " [noreply]"s}},
      {"touch k x noreply\r\n", {kBadExptime + " [noreply]"s}},
      {"gat x k\r\n", {kBadExptime}},
      {"gat x " + std::string(251, 'x') + "\r\n", {kBadExptime}},  // exptime first
      {"gats 1 k " + std::string(251, 'x') + "\r\n", {kBadFormat}},
      {"delete k 1\r\n", {kDeleteUsage}},
      {"delete k x\r\n", {kDeleteUsage}},
      {"delete k noreply x\r\n", {kDeleteUsage}},
      {"delete k 1 noreply\r\n", {kDeleteUsage + " [noreply]"s}},
      {"delete " + std::string(251, 'x') + " 1\r\n", {kDeleteUsage}},  // before the key
      {"delete " + std::string(251, 'x') + " noreply\r\n", {kBadFormatNoreply}},
      {"flush_all x\r\n", {kBadExptime}},
      {"flush_all noreply x\r\n", {kBadExptime}},
      {"flush_all x noreply\r\n", {kBadExptime + " [noreply]"s}},
      {"flush_all 9223372036854775808\r\n", {kBadExptime}},
      {"verbosity x\r\n", {kBadFormat}},
      {"verbosity noreply\r\n", {kBadFormatNoreply}},
  });
}

TEST_F(MemcacheParserTest, MetaErrors) {
  const std::string opaque31 = "O" + std::string(31, '1');
  const std::string opaque32 = "O" + std::string(32, '1');
  const std::string key251(251, 'k');
  CheckErrorCases({
      {"mg k v v\r\n", {kDuplicateFlag}},
      {"mg k z\r\n", {kInvalidFlag}},
      {"mg k S1\r\n", {kInvalidFlag}},
      {"mg k \x80\r\n", {kDuplicateFlag}},  // letters >= 127 read as duplicates
      {"mg k \x7f\r\n", {kDuplicateFlag}},
      {"mg k \x01\r\n", {kInvalidFlag}},
      {"mg k T\r\n", {kBadToken}},
      {"mg k Tx\r\n", {kBadToken}},
      {"mg k T9223372036854775808\r\n", {kBadToken}},
      {"mg k Nx\r\n", {kBadToken}},
      {"mg k Rx\r\n", {kBadToken}},
      {"mg k Cx\r\n", {kBadToken}},
      // E (a new cas, memcached 1.6.21) is not a flag of 1.6.18's, in any command.
      {"mg k E5\r\n", {kInvalidFlag}},
      {"mg k Ex\r\n", {kInvalidFlag}},
      {"md k E5\r\n", {kInvalidOrDuplicate}},
      {"ma k E5\r\n", {kInvalidOrDuplicate}},
      {"mg k Jx\r\n", {"ERR:CLIENT_ERROR invalid numeric initial value"}},
      {"mg k Dx\r\n", {"ERR:CLIENT_ERROR invalid numeric delta value"}},
      {"mg k Fx\r\n", {kBadFormat}},  // F has no message of its own
      {"mg k F-1\r\n", {kBadFormat}},
      {"mg k M\r\n", {kBadModeLength}},
      {"mg k Mxx\r\n", {kBadModeLength}},
      {"mg k " + opaque32 + "\r\n", {kOpaqueTooLong}},
      {"mg k " + opaque32 + " z\r\n", {kInvalidFlag}},  // the pre-parse comes first
      // The pre-parse stops at a duplicate or invalid letter; numeric errors go on and
      // the last one's text wins.
      {"mg k Tx z\r\n", {kInvalidFlag}},
      {"mg k z Tx\r\n", {kInvalidFlag}},
      {"mg k Tx Fx\r\n", {kBadToken}},
      {"mg k Fx Tx\r\n", {kBadToken}},
      {"mg k Fx Mxx\r\n", {kBadModeLength}},
      {"mg k Mxx Tx\r\n", {kBadToken}},
      {"mg k Jx Dx\r\n", {"ERR:CLIENT_ERROR invalid numeric delta value"}},
      {"mg k b Tx\r\n", {kBadToken}},
      {"mg k Tx b\r\n", {kBadBase64}},
      // At most 19 tokens: 17 flags for mg, md, ma; checked before the flags.
      {"mg k" + Repeat(" c", 18) + "\r\n", {"ERR:CLIENT_ERROR options flags are too long"}},
      {"mg k" + Repeat(" c", 17) + "\r\n", {kDuplicateFlag}},
      {"mg " + key251 + Repeat(" c", 21) + "\r\n", {kBadFormat}},
      {"md k" + Repeat(" c", 18) + "\r\n", {"ERR:CLIENT_ERROR options flags too long"}},
      {"ma k" + Repeat(" c", 18) + "\r\n", {"ERR:CLIENT_ERROR options flags too long"}},
      // md and ma report every pre-parse failure the same way.
      {"md k z\r\n", {kInvalidOrDuplicate}},
      {"md k v v\r\n", {kInvalidOrDuplicate}},
      {"md k Tx\r\n", {kInvalidOrDuplicate}},
      {"md k C5 x\r\n", {kInvalidOrDuplicate}},
      {"md k " + opaque32 + "\r\n", {kOpaqueTooLong}},
      {"ma k z\r\n", {kInvalidOrDuplicate}},
      {"ma k D\r\n", {kInvalidOrDuplicate}},
      {"ma k Dx\r\n", {kInvalidOrDuplicate}},
      {"ma k D-1\r\n", {kInvalidOrDuplicate}},
      {"ma k J-1\r\n", {kInvalidOrDuplicate}},
      {"ma k M\r\n", {kInvalidOrDuplicate}},
      {"ma k D5 Mxx\r\n", {kInvalidOrDuplicate}},
      {"ma k Mx\r\n", {"ERR:CLIENT_ERROR invalid mode for ma M token"}},
      {"ma k Mi\r\n", {"ERR:CLIENT_ERROR invalid mode for ma M token"}},  // uppercase only
      {"ma k Md\r\n", {"ERR:CLIENT_ERROR invalid mode for ma M token"}},
      {"ma k MX " + opaque32 + "\r\n", {"ERR:CLIENT_ERROR invalid mode for ma M token"}},
      {"ma k " + opaque32 + " MX\r\n", {"ERR:CLIENT_ERROR invalid mode for ma M token"}},
      {"ma k " + opaque32 + "\r\n", {kOpaqueTooLong}},
      {"me " + key251 + "\r\n", {kBadFormat}},
      // Meta errors are sent even with q.
      {"mg k v z q\r\n", {kInvalidFlag}},
  });
  MemcacheParser parser;
  EXPECT_EQ(ParseCommand(&parser, "mg k " + opaque31 + "\r\n").meta.opaque.size(), 31u);
  const MemcacheCommand cmd =
      ParseCommand(&parser, "mg k c f h k l q s t u v I L P O1 T1 N1 R1\r\n");  // 17 flags
  EXPECT_EQ(cmd.meta.flags.size(), 17u);
}

TEST_F(MemcacheParserTest, MetaSetErrorsSwallowTheBlockOnceTheLengthIsKnown) {
  const std::string opaque32 = "O" + std::string(32, '1');
  Limits limits;
  limits.max_item_size = 16;
  CheckErrorCases(
      {
          // Before the length is read: the block is parsed as a line.
          {"ms k\r\n", {kBadFormat}},
          {"ms " + std::string(251, 'k') + " 1\r\na\r\n", {kBadFormat, kUnknown}},
          {"ms k x\r\na\r\n", {kBadFormat, kUnknown}},
          {"ms k -1\r\na\r\n", {kBadFormat, kUnknown}},
          {"ms k 1" + Repeat(" c", 17) + "\r\na\r\n",
           {"ERR:CLIENT_ERROR options flags too long", kUnknown}},
          {"ms k x" + Repeat(" c", 17) + "\r\n", {"ERR:CLIENT_ERROR options flags too long"}},
          // After it: the block goes, whatever it holds.
          {"ms k 1 z\r\na\r\n", {kInvalidFlag}},
          {"ms k 1 E5\r\na\r\n", {kInvalidFlag}},
          {"ms k 1 v v\r\na\r\n", {kDuplicateFlag}},
          {"ms k 1 Tx\r\naXY", {kBadToken}},  // the two bytes after the block are not checked
          {"ms k 1 b\r\na\r\n", {kBadBase64}},
          {"ms k 1 Tx b\r\na\r\n", {kBadBase64}},
          {"ms k 1 b Tx\r\na\r\n", {kBadToken}},
          {"ms k 1 Mxx\r\na\r\n", {kBadModeLength}},
          {"ms k 1 MX\r\na\r\n", {"ERR:CLIENT_ERROR invalid mode for ms M token"}},
          {"ms k 1 Ms\r\na\r\n", {"ERR:CLIENT_ERROR invalid mode for ms M token"}},
          {"ms k 1 " + opaque32 + "\r\na\r\n", {kOpaqueTooLong}},
          // Mode, then opaque, then size, whatever the order of the flags.
          {"ms k 1 " + opaque32 + " MX\r\na\r\n", {"ERR:CLIENT_ERROR invalid mode for ms M token"}},
          {"ms k 17 " + opaque32 + "\r\n" + std::string(17, 'x') + "\r\n", {kOpaqueTooLong}},
          {"ms k 17 MX\r\n" + std::string(17, 'x') + "\r\n",
           {"ERR:CLIENT_ERROR invalid mode for ms M token"}},
          {"ms k 17 z\r\n" + std::string(17, 'x') + "\r\n", {kInvalidFlag}},
          {"ms k 17 q\r\n" + std::string(17, 'x') + "\r\n", {kTooLarge}},  // q: still sent
          // A bad chunk is always reported, q or not.
          {"ms k 1 q\r\nab\r\n", {kBadChunk, kUnknown}},
      },
      limits);
}

TEST_F(MemcacheParserTest, BadDataChunkResynchronisesAfterLengthPlusTwo) {
  // memcached consumes exactly length + 2 bytes and parses on from there.
  EXPECT_THAT(Outcomes("set k 0 0 3\r\nabcd\r\nget k\r\n"),
              ElementsAre(kBadChunk, kUnknown, "get k"));  // "\n" alone: ERROR
  EXPECT_THAT(Outcomes("set k 0 0 3\r\nabcdefg\r\nget k\r\n"),
              ElementsAre(kBadChunk, kUnknown, "get k"));  // "fg"
  EXPECT_THAT(Outcomes("set k 0 0 3\nabc\nget k\n"),
              ElementsAre(kBadChunk, kUnknown));  // ate "abc\ng": "et k" is unknown
  EXPECT_THAT(Outcomes("set k 0 0 3\r\nabc\rXget k\r\n"), ElementsAre(kBadChunk, "get k"));
  EXPECT_THAT(Outcomes("set k 0 0 3\r\nabc\n\nget k\r\n"), ElementsAre(kBadChunk, "get k"));
  EXPECT_THAT(Outcomes("set k 0 0 3\r\nab\r\n\r\nget k\r\n"),
              ElementsAre(kBadChunk, kUnknown, "get k"));
  EXPECT_THAT(Outcomes("set k 0 0 1 noreply\r\nab\r\nget k\r\n"),
              ElementsAre(kBadChunk + " [noreply]"s, kUnknown, "get k"));
  // Data blocks need "\r\n": a bare "\n" is a bad chunk (command lines accept it).
  EXPECT_THAT(Outcomes("set k 0 0 1\na\nmn\n"), ElementsAre(kBadChunk, kUnknown));  // "n"
  EXPECT_THAT(Outcomes("set k 0 0 1\na\n\nmn\n"), ElementsAre(kBadChunk, "mn"));
  EXPECT_THAT(Outcomes("set k 0 0 3\r\nabc"), ElementsAre(kPending));
  EXPECT_THAT(Outcomes("set k 0 0 3\r\nabc\r"), ElementsAre(kPending));
}

TEST_F(MemcacheParserTest, NoreplyMarksTheErrorsMemcachedSuppresses) {
  Limits limits;
  limits.max_item_size = 4;
  EXPECT_THAT(Outcomes("set k 0 0 5 noreply\r\n12345\r\nmn\r\n", limits),
              ElementsAre(kTooLarge + " [noreply]"s, "mn"));
  EXPECT_THAT(Outcomes("set " + std::string(251, 'k') + " 0 0 1 noreply\r\na\r\n"),
              ElementsAre(kBadFormatNoreply, kUnknown));
  // The next error on the connection is sent again.
  EXPECT_THAT(Outcomes("set k 0 0 1 noreply\r\nab\r\n\r\n"),
              ElementsAre(kBadChunk + " [noreply]"s, kUnknown, kUnknown));
}

// ---------------------------------------------------------------------------------------
// Limits.

TEST_F(MemcacheParserTest, KeyLength250Vs251) {
  const std::string ok(250, 'k');
  const std::string bad(251, 'k');
  const std::vector<std::pair<std::string, std::string>> forms = {
      {"set K 0 0 1\r\na\r\n", "set K \"a\""},
      {"cas K 0 0 1 1\r\na\r\n", "cas K \"a\""},
      {"get K\r\n", "get K"},
      {"get a K\r\n", "get a K"},
      {"gets K\r\n", "gets K"},
      {"gat 1 K\r\n", "gat K"},
      {"gats 1 K\r\n", "gats K"},
      {"touch K 1\r\n", "touch K"},
      {"incr K 1\r\n", "incr K"},
      {"decr K 1\r\n", "decr K"},
      {"delete K\r\n", "delete K"},
      {"mg K v\r\n", "mg K v"},
      {"ms K 1\r\na\r\n", "ms K \"a\""},
      {"md K\r\n", "md K"},
      {"ma K\r\n", "ma K"},
      {"me K\r\n", "me K"},
  };
  auto with = [](std::string text, const std::string& key) {
    return text.replace(text.find('K'), 1, key);
  };
  for (const auto& [form, brief] : forms) {
    EXPECT_THAT(Outcomes(with(form, ok)), ElementsAre(with(brief, ok))) << form;
    std::vector<std::string> expected = {kBadFormat};
    if (HasData(form[0] == 'c' ? Type::kCas : form[0] == 's' ? Type::kSet
                : form[1] == 's' ? Type::kMetaSet : Type::kGet)) {
      expected.push_back(kUnknown);  // the block "a" is read as a command line
    }
    EXPECT_EQ(Outcomes(with(form, bad)), expected) << form;
  }
}

TEST_F(MemcacheParserTest, ControlBytesInKeys) {
  // memcached 1.6.18 stores and finds keys with control bytes; only strict_keys refuses.
  EXPECT_THAT(Outcomes("set k\x01 0 0 1\r\na\r\nget k\x7f\xff k\t k\r\r\n"),
              ElementsAre("set k\\x01 \"a\"", "get k\\x7f\\xff k\\x09 k\\x0d"));
  Limits strict;
  strict.strict_keys = true;
  EXPECT_THAT(Outcomes("set k\x01 0 0 1\r\na\r\n", strict), ElementsAre(kBadFormat, kUnknown));
  EXPECT_THAT(Outcomes("get a k\x7f\r\n", strict), ElementsAre(kBadFormat));
  EXPECT_THAT(Outcomes("mg k\t v\r\n", strict), ElementsAre(kBadFormat));
  EXPECT_THAT(Outcomes("get a\xff\r\n", strict), ElementsAre("get a\\xff"));
  // A base64 key may decode to anything.
  EXPECT_THAT(Outcomes("mg AA== b\r\n", strict), ElementsAre("mg \\x00 b"));
}

TEST_F(MemcacheParserTest, ItemSizeLimitBoundary) {
  const size_t limit = 1u << 20;  // the default, memcached's -I
  MemcacheParser parser;
  const std::string fits = "set k 0 0 " + std::to_string(limit) + "\r\n" + std::string(limit, 'v') +
                           "\r\n";
  MemcacheCommand cmd = ParseCommand(&parser, fits);
  EXPECT_EQ(cmd.data.size(), limit);
  EXPECT_EQ(ParseCommand(&parser, "ms k " + std::to_string(limit) + " T0\r\n" +
                                      std::string(limit, 'v') + "\r\n")
                .data.size(),
            limit);

  const std::string too_big = "set k 0 0 " + std::to_string(limit + 1) + "\r\n";
  const std::string block(limit + 1, 'v');
  EXPECT_THAT(Outcomes(too_big + block + "\r\nmn\r\n"), ElementsAre(kTooLarge, "mn"));
  EXPECT_THAT(Outcomes("ms k " + std::to_string(limit + 1) + "\r\n" + block + "\r\nmn\r\n"),
              ElementsAre(kTooLarge, "mn"));

  Limits small;
  small.max_item_size = 10;
  EXPECT_THAT(Outcomes("set k 0 0 10\r\n0123456789\r\nmn\r\n", small),
              ElementsAre("set k \"0123456789\"", "mn"));
  EXPECT_THAT(Outcomes("set k 0 0 11\r\n0123456789A\r\nmn\r\n", small),
              ElementsAre(kTooLarge, "mn"));
}

TEST_F(MemcacheParserTest, SwallowedBlockArrivingInPieces) {
  Limits limits;
  limits.max_item_size = 10;
  MemcacheParser parser(limits);
  MemcacheCommand cmd;
  size_t consumed = 0;
  const std::string line = "set k 0 0 100\r\n";
  ASSERT_EQ(parser.Parse(line + "0123", &consumed, &cmd), Result::kError);
  EXPECT_EQ(parser.error().reply, "SERVER_ERROR object too large for cache");
  EXPECT_FALSE(parser.error().close_connection);
  EXPECT_EQ(consumed, line.size() + 4);  // the line and the block's first bytes
  EXPECT_EQ(parser.skip_remaining(), 98u);

  EXPECT_EQ(parser.Parse("", &consumed, &cmd), Result::kNeedMore);
  EXPECT_EQ(consumed, 0u);
  std::string rest = std::string(96, 'x') + "XY";  // memcached does not check the "\r\n"
  while (!rest.empty()) {
    const std::string piece = rest.substr(0, 7);
    ASSERT_EQ(parser.Parse(piece, &consumed, &cmd), Result::kSkipped);
    EXPECT_EQ(consumed, piece.size());
    rest.erase(0, piece.size());
  }
  EXPECT_EQ(parser.skip_remaining(), 0u);
  EXPECT_EQ(Brief(ParseCommand(&parser, "get k\r\n")), "get k");

  // The skip stops exactly at the end of the block even if more is buffered.
  ASSERT_EQ(parser.Parse(line, &consumed, &cmd), Result::kError);
  EXPECT_EQ(consumed, line.size());
  ASSERT_EQ(parser.Parse(std::string(102, 'x') + "get j\r\n", &consumed, &cmd), Result::kSkipped);
  EXPECT_EQ(consumed, 102u);
}

TEST_F(MemcacheParserTest, LineLength) {
  const std::string x2048(2048, 'x');
  // memcached closes (silently) once it holds more than 2048 bytes without a '\n'.
  EXPECT_THAT(Outcomes(x2048 + "\n"), ElementsAre(kUnknown));
  EXPECT_THAT(Outcomes(x2048.substr(1) + "\r\n"), ElementsAre(kUnknown));
  EXPECT_THAT(Outcomes(x2048 + "\r\n"), ElementsAre(kClosed));
  EXPECT_THAT(Outcomes(x2048), ElementsAre(kPending));
  EXPECT_THAT(Outcomes(x2048 + "x"), ElementsAre(kClosed));
  EXPECT_THAT(Outcomes("mn\r\n" + x2048 + "xx\r\nmn\r\n"), ElementsAre("mn", kClosed));
  // Deviation by design: memcached processes such a line if it arrives in one read.
  EXPECT_THAT(Outcomes("set " + std::string(3000, 'k') + " 0 0 1\r\na\r\n"), ElementsAre(kClosed));

  // get/gets lines may be longer, after at most 100 leading spaces.
  std::string keys;
  for (int i = 0; i < 1500; ++i) keys += "k ";
  auto get_keys = [](const std::vector<std::string>& outcomes) {
    return outcomes.size() == 1 ? std::count(outcomes[0].begin(), outcomes[0].end(), ' ') : -1;
  };
  EXPECT_EQ(get_keys(Outcomes("get " + keys + "\r\n")), 1500);
  EXPECT_EQ(get_keys(Outcomes("gets " + keys + "\r\n")), 1500);
  EXPECT_EQ(get_keys(Outcomes(std::string(100, ' ') + "get " + keys + "\r\n")), 1500);
  EXPECT_THAT(Outcomes(std::string(101, ' ') + "get " + keys + "\r\n"), ElementsAre(kClosed));
  EXPECT_THAT(Outcomes("gat 0 " + keys + "\r\n"), ElementsAre(kClosed));
  EXPECT_THAT(Outcomes("get " + std::string(3000, 'k') + "\r\n"), ElementsAre(kBadFormat));

  // Our bound on those lines: memcached's reply when it cannot grow its buffer.
  Limits limits;
  limits.max_get_line_length = 2500;
  EXPECT_THAT(Outcomes("get " + keys + "\r\n", limits), ElementsAre(kOutOfMemory));
  EXPECT_THAT(Outcomes("get " + keys, limits), ElementsAre(kOutOfMemory));
  EXPECT_EQ(get_keys(Outcomes("get " + keys.substr(0, 2490) + "\r\n", limits)), 1245);
}

// ---------------------------------------------------------------------------------------
// Line and number details.

TEST_F(MemcacheParserTest, LineEndingsAndNul) {
  EXPECT_THAT(Outcomes("get k\nget k\r\nget k\r\r\nget a\rb\r\n"),
              ElementsAre("get k", "get k", "get k\\x0d", "get a\\x0db"));
  EXPECT_THAT(Outcomes("set k 0 0 1\na\r\n"), ElementsAre("set k \"a\""));
  // The length token "1\r" is 1: strtol stops at whitespace.
  EXPECT_THAT(Outcomes("set k 0 0 1\r\r\na\r\n"), ElementsAre("set k \"a\""));
  // memcached reads the line as a C string: it ends at the first NUL.
  EXPECT_THAT(Outcomes("get a\0 b\r\nmn\r\n"sv), ElementsAre("get a", "mn"));
  EXPECT_THAT(Outcomes("set k\0x 0 0 1\r\na\r\n"sv), ElementsAre(kUnknown, kUnknown));
  EXPECT_THAT(Outcomes("\0get k\r\n"sv), ElementsAre(kUnknown));
}

TEST_F(MemcacheParserTest, BinaryDataBlocks) {
  MemcacheParser parser;
  const std::string data = "\r\n\0\xff\r\n\0x"s;
  MemcacheCommand cmd = ParseCommand(&parser, "set k 0 0 8\r\n" + data + "\r\n");
  EXPECT_EQ(cmd.data, data);
  cmd = ParseCommand(&parser, "ms k 8 T0\r\n" + data + "\r\n");
  EXPECT_EQ(cmd.data, data);
  // A block that looks like commands is data.
  EXPECT_THAT(Outcomes("set k 0 0 7\r\nget k\r\n\r\nmn\r\n"),
              ElementsAre("set k \"get k\\x0d\\x0a\"", "mn"));
}

TEST_F(MemcacheParserTest, NumbersFollowStrtolAndSafeChecks) {
  MemcacheParser parser;
  auto set = [&](const std::string& flags, const std::string& exptime, const std::string& length) {
    return ParseCommand(&parser, "set k " + flags + " " + exptime + " " + length + "\r\na\r\n");
  };
  EXPECT_EQ(set("4294967296", "0", "1").flags, 0u);  // low 32 bits
  EXPECT_EQ(set("4294967295", "0", "1").flags, 4294967295u);
  EXPECT_EQ(set("18446744073709551615", "0", "1").flags, 4294967295u);
  EXPECT_EQ(set("-18446744073709551615", "0", "1").flags, 1u);
  EXPECT_EQ(set("+7", "0", "1").flags, 7u);
  EXPECT_EQ(set("\t5", "0", "1").flags, 5u);
  EXPECT_EQ(set("5\tjunk", "0", "1").flags, 5u);
  EXPECT_EQ(set("0\t", "0", "1\t").data, "a");
  EXPECT_EQ(set("0", "2147483648", "1").exptime, 2147483648);  // raw; memcached: int32
  EXPECT_EQ(set("0", "-2147483649", "1").exptime, -2147483649);
  EXPECT_EQ(set("0", "-9223372036854775808", "1").exptime, INT64_MIN);
  EXPECT_EQ(set("0", "0", "+1").data, "a");
  EXPECT_EQ(set("0", "0", "01").data, "a");
  EXPECT_EQ(set("0", "0", "4294967297").data, "a");  // the int32 of 4294967297 is 1
  EXPECT_EQ(set("0", "0", "-4294967295").data, "a");

  auto delta = [&](const std::string& token) {
    return ParseCommand(&parser, "incr n " + token + "\r\n").delta;
  };
  EXPECT_EQ(delta("+1"), 1u);
  EXPECT_EQ(delta("\t1"), 1u);
  EXPECT_EQ(delta("1\tx"), 1u);
  EXPECT_EQ(delta("-0"), 0u);
  EXPECT_EQ(delta("-9223372036854775809"), 9223372036854775807u);  // strtoull wraps
  EXPECT_EQ(delta("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseCommand(&parser, "cas k 0 0 1 -0\r\na\r\n").cas_unique, 0u);
  EXPECT_EQ(ParseCommand(&parser, "verbosity 4294967297\r\n").verbosity, 1u);
}

// ---------------------------------------------------------------------------------------
// Incremental parsing.

TEST_F(MemcacheParserTest, NeedMoreConsumesNothing) {
  const std::string request = "ms k 5 T10\r\nhello\r\n";
  MemcacheParser parser;
  MemcacheCommand cmd;
  for (size_t n = 0; n < request.size(); ++n) {
    size_t consumed = 99;
    EXPECT_EQ(parser.Parse(std::string_view(request).substr(0, n), &consumed, &cmd),
              Result::kNeedMore)
        << n;
    EXPECT_EQ(consumed, 0u);
  }
  EXPECT_EQ(parser.bytes_needed(), request.size());
  EXPECT_EQ(ParseCommand(&parser, request).data, "hello");
  EXPECT_EQ(parser.bytes_needed(), 0u);
}

TEST_F(MemcacheParserTest, ResetForgetsPartialRequestsAndSwallows) {
  Limits limits;
  limits.max_item_size = 4;
  MemcacheParser parser(limits);
  MemcacheCommand cmd;
  size_t consumed = 0;
  EXPECT_EQ(parser.Parse("set k 0 0 5\r\n", &consumed, &cmd), Result::kError);
  EXPECT_EQ(parser.skip_remaining(), 7u);
  parser.Reset();
  EXPECT_EQ(parser.skip_remaining(), 0u);
  EXPECT_EQ(parser.Parse("set k 0 0 3\r\nab", &consumed, &cmd), Result::kNeedMore);
  parser.Reset();
  EXPECT_EQ(Brief(ParseCommand(&parser, "get k\r\n")), "get k");
}

// Requests covering every command form, error and resynchronisation, each followed by
// "mn" so that what the parser does next is checked too.
std::vector<std::string> SplitCorpus() {
  return {
      "set k 0 0 3\r\nabc\r\n",
      "add k 1 2 3 noreply\r\nabc\r\n",
      "cas k 0 0 2 99\r\n\r\n\r\n",
      "set k 0 0 4\n\0\r\n\n\r\n"s,
      "replace k 0 0 1\r\nx\r\nappend k 0 0 1\r\nx\r\nprepend k 0 0 1\r\nx\r\n",
      "get a b c\r\n",
      "gets a\n",
      "gat 10 a b\r\ngats 0\r\n",
      "touch k 10 noreply\r\n",
      "incr k 18446744073709551615\r\ndecr k 1\r\n",
      "delete k 0 noreply\r\n",
      "flush_all 10\r\nversion\r\nverbosity 1\r\nstats items\r\nquit\r\n",
      "mn\r\nme k\r\n",
      "mg k v f t O123 q\r\n",
      "ms k 2 T10 F3 MA\r\nhi\r\n",
      "md k q C5\r\nma k MD D5 J10 N0\r\n",
      "mg YQ== b k v\r\n",
      "\r\n",
      "foo bar\r\n",
      "set k 0 0 3\r\nabcd\r\n",
      "set k 0 0 -1\r\nabc\r\n",
      "set k 0 0 17\r\n" + std::string(17, 'x') + "\r\n",
      "set k 0 0 17 noreply\r\n" + std::string(17, 'x') + "XY",
      "ms k 17 T1\r\n" + std::string(17, 'x') + "\r\n",
      "ms k 1 z\r\na\r\n",
      "get " + std::string(251, 'x') + "\r\n",
      "incr k x\r\n",
      "delete k 1\r\n",
      "mg k v v\r\n",
      "md k z\r\n",
      "get a\0 b\r\n"s,
      "set k 0 0 3\nabc\nget k\n",
      std::string(2049, 'x'),
      "get " + std::string(3000, 'k') + " k\r\n",
  };
}

TEST_F(MemcacheParserTest, EverySplitGivesTheSameResults) {
  Limits limits;
  limits.max_item_size = 16;
  for (const std::string& request : SplitCorpus()) {
    const std::string stream = request + "mn\r\n";
    MemcacheParser whole_parser(limits);
    const std::vector<std::string> expected = Drive(&whole_parser, stream, {}, true);
    ASSERT_FALSE(expected.empty());
    for (size_t split = 1; split < stream.size(); ++split) {
      MemcacheParser parser(limits);
      ASSERT_EQ(Drive(&parser, stream, {split}, true), expected)
          << helio::CEscape(stream) << " split at " << split;
    }
    MemcacheParser bytewise(limits);
    EXPECT_EQ(Drive(&bytewise, stream, std::vector<size_t>(stream.size(), 1), true), expected)
        << helio::CEscape(stream) << " byte by byte";
  }
}

TEST_F(MemcacheParserTest, OneParserForTheWholeCorpusInRandomPieces) {
  Limits limits;
  limits.max_item_size = 16;
  std::string stream;
  for (const std::string& request : SplitCorpus()) {
    if (request.size() < 2000) stream += request;
  }
  stream += "mn\r\n";
  MemcacheParser whole_parser(limits);
  const std::vector<std::string> expected = Drive(&whole_parser, stream, {}, true);
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<size_t> pieces;
    for (size_t total = 0; total < stream.size();) {
      pieces.push_back(1 + rng() % 40);
      total += pieces.back();
    }
    MemcacheParser parser(limits);
    ASSERT_EQ(Drive(&parser, stream, pieces, true), expected) << "round " << round;
  }
}

std::string PipelinedCommand(int i, std::string* brief) {
  const std::string k = "key:" + std::to_string(i);
  switch (i % 6) {
    case 0:
      *brief = "set " + k + " \"v" + std::to_string(i) + "\"";
      return "set " + k + " 0 0 " + std::to_string(std::to_string(i).size() + 1) + "\r\nv" +
             std::to_string(i) + "\r\n";
    case 1:
      *brief = "get " + k + " other";
      return "get " + k + " other\r\n";
    case 2:
      *brief = "mg " + k + " v t O" + std::to_string(i);
      return "mg " + k + " v t O" + std::to_string(i) + "\r\n";
    case 3:
      *brief = "ms " + k + " T0 \"ab\\x0d\\x0a\"";
      return "ms " + k + " 4 T0\r\nab\r\n\r\n";
    case 4:
      *brief = "incr " + k;
      return "incr " + k + " 7\r\n";
    default:
      *brief = "delete " + k;
      return "delete " + k + "\n";
  }
}

TEST_F(MemcacheParserTest, ThousandPipelinedCommands) {
  std::string stream;
  std::vector<std::string> expected;
  for (int i = 0; i < 1000; ++i) {
    std::string brief;
    stream += PipelinedCommand(i, &brief);
    expected.push_back(brief);
  }
  MemcacheParser parser;
  MemcacheCommand cmd;
  std::string_view rest = stream;
  for (int i = 0; i < 1000; ++i) {
    size_t consumed = 0;
    ASSERT_EQ(parser.Parse(rest, &consumed, &cmd), Result::kCommand) << i;
    ASSERT_EQ(Brief(cmd), expected[i]);
    rest.remove_prefix(consumed);
  }
  EXPECT_TRUE(rest.empty());

  MemcacheParser chunked;
  std::vector<size_t> pieces(stream.size() / 1000 + 1, 1000);
  EXPECT_EQ(Drive(&chunked, stream, pieces), expected);
}

TEST_F(MemcacheParserTest, NoAllocationInSteadyState) {
  Limits limits;
  limits.max_item_size = 16;
  std::string stream;
  for (const std::string& request : SplitCorpus()) {
    if (request.size() < 2000) stream += request;
  }
  for (int i = 0; i < 60; ++i) {
    std::string brief;
    stream += PipelinedCommand(i, &brief);
  }
  MemcacheParser parser(limits);
  MemcacheCommand cmd;
  auto parse_all = [&] {
    std::string_view rest = stream;
    size_t commands = 0;
    while (!rest.empty()) {
      size_t consumed = 0;
      const Result result = parser.Parse(rest, &consumed, &cmd);
      if (result == Result::kNeedMore) break;
      commands += result == Result::kCommand;
      rest.remove_prefix(consumed);
    }
    return commands;
  };
  const size_t commands = parse_all();  // warms the parser's vectors up
  g_allocations = 0;
  g_count_allocations = true;
  const size_t again = parse_all();
  g_count_allocations = false;
  EXPECT_EQ(again, commands);
  EXPECT_EQ(g_allocations, 0u);
}

TEST_F(MemcacheParserTest, CommandNames) {
  EXPECT_EQ(MemcacheCommandName(Type::kSet), "set");
  EXPECT_EQ(MemcacheCommandName(Type::kFlushAll), "flush_all");
  EXPECT_EQ(MemcacheCommandName(Type::kMetaArithmetic), "ma");
  EXPECT_EQ(MemcacheCommandName(Type::kMetaDebug), "me");
}

}  // namespace
}  // namespace damselfly::facade
