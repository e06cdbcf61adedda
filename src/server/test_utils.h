// In-process test harness for command families: a Service with its ProactorPool and
// EngineShardSet, and connections that run commands through Service::DispatchMany exactly
// as a socket connection's fiber does, minus the socket.
//
//   class StringFamilyTest : public ServiceTest {};
//
//   TEST_P(StringFamilyTest, SetGet) {
//     EXPECT_EQ(Run({"set", "k", "v"}), "OK");
//     EXPECT_EQ(Run({"get", "k"}), "v");
//     EXPECT_THAT(Run({"get"}), ErrArg("wrong number of arguments"));
//     EXPECT_THAT(Run({"mget", "k", "missing"}), RespArray(ElementsAre("v", IsNil())));
//   }
//
//   INSTANTIATE_SHARD_COUNTS(StringFamilyTest);  // Shards1/, Shards2/, Shards4/
//
// Thread contract:
//  - The test body runs on gtest's main thread, which is no proactor thread. Everything
//    here is called from it, and each Run* call blocks it until the replies are complete.
//  - A server has N proactor threads and N shards (shard i on thread i). It starts at the
//    first test of a suite (SetUp), serves every test of the suite, and stops in
//    TearDownTestSuite; INSTANTIATE_SHARD_COUNTS makes one suite per shard count so that
//    happens once per count. (ctest runs each test in its own process, so there it is
//    once per test.)
//  - A TestConnection lives on one proactor thread, like an accepted connection: it is
//    opened and closed there, and each Run* executes the commands on a new fiber of that
//    thread. Keys of shard i run inline on thread i and hop from any other thread, so a
//    test reaches both paths by choosing the connection's thread (RunOnThread, Connect).
//  - Commands of one test run one after the other; a test that needs two clients at
//    once interleaves their commands (WATCH on one, SET on another, EXEC on the first).
//
// State between tests: SetUp flushes every database and opens fresh connections (db 0,
// RESP2, no MULTI or WATCH). Server-wide settings changed with CONFIG SET stay for the
// rest of the suite: a test that changes one restores it.
//
// Pushes (SUBSCRIBE's messages, MONITOR's lines) are read with TakePushes. Commands that
// wait for another client (a blocking pop) run with Start, which returns at once, and
// Finish, which waits for the reply, while the test drives other connections in between.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "helio/io/proactor.h"
#include "src/facade/conn_context.h"
#include "src/facade/resp_parser.h"
#include "src/server/engine_shard.h"

namespace damselfly {

class Service;

// One reply, parsed from the bytes the connection's ReplyBuilder produced (RESP2, or
// RESP3 after HELLO 3).
struct RespValue {
  enum class Type {
    kStatus,     // +OK           str = "OK"
    kError,      // -ERR ...      str = "ERR ..." (without '-')
    kInt,        // :1            integer
    kBulk,       // $1 v          str
    kNull,       // $-1, RESP3 _
    kNullArray,  // *-1 (RESP2 only: RESP3 sends _)
    kArray,      // *n            elements
    kMap,        // RESP3 %n      elements: key, value, key, value...
    kSet,        // RESP3 ~n      elements
    kPush,       // RESP3 >n      elements
    kDouble,     // RESP3 ,1.5    str = "1.5"
    kBool,       // RESP3 #t/#f   integer = 1/0
    kBigNumber,  // RESP3 (123    str = "123"
    kVerbatim,   // RESP3 =n txt:...  str = the text after "txt:"
  };

  Type type = Type::kNull;
  std::string str;
  int64_t integer = 0;
  std::vector<RespValue> elements;
};

// Parses `data` as a sequence of complete replies. A malformed or truncated reply fails
// the current test (ADD_FAILURE) and ends the sequence.
std::vector<RespValue> ParseReplies(std::string_view data);

// A string equals a status, bulk, verbatim, double or big-number reply with that text
// (never an error: use ErrArg); an integer equals an integer reply.
bool operator==(const RespValue& value, std::string_view text);
bool operator==(const RespValue& value, int64_t integer);
// Prints as redis-cli does: "v", OK, (error) ERR..., (integer) 1, (nil), [..], {k: v}.
std::ostream& operator<<(std::ostream& os, const RespValue& value);

}  // namespace damselfly

// So that a failed EXPECT_EQ(Run(...), "v") shows "v", not the literal's address (gtest
// prints a char pointer compared with anything but a std::string as a pointer).
namespace testing::internal {
template <>
class FormatForComparison<const char*, damselfly::RespValue> {
 public:
  static std::string Format(const char* text) { return PrintToString(text); }
};
}  // namespace testing::internal

namespace damselfly {

// Redis's error texts the family tests expect, spelled out here rather than taken from
// the code under test.
inline constexpr std::string_view kWrongTypeText =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
// "ERR wrong number of arguments for '<command>' command".
std::string ArityError(std::string_view command);

// Matchers for EXPECT_THAT:
// An error reply whose text (without '-') contains `text`: ErrArg("WRONGTYPE").
testing::Matcher<const RespValue&> ErrArg(std::string_view text);
// An integer reply equal to `integer` (also: EXPECT_EQ(Run(...), 1)).
testing::Matcher<const RespValue&> IntArg(int64_t integer);
// A null reply: $-1, *-1 or RESP3 _.
testing::Matcher<const RespValue&> IsNil();
// An array, set, push or map reply with `length` elements (a map has 2 per pair).
testing::Matcher<const RespValue&> ArrLen(size_t length);
// An array, set, push or map reply whose elements match, e.g.
// RespArray(ElementsAre("a", IsNil(), 3)) or RespArray(UnorderedElementsAre("a", "b")).
testing::Matcher<const RespValue&> RespArray(
    testing::Matcher<const std::vector<RespValue>&> elements);

// A client connection on one proactor thread (see the thread contract above). Made by
// ServiceTest::Connect; closed (OnConnectionClose, on its thread) when destroyed, which
// must happen before the server stops.
class TestConnection {
 public:
  TestConnection(Service* service, helio::io::Proactor* proactor);
  ~TestConnection();
  TestConnection(const TestConnection&) = delete;
  TestConnection& operator=(const TestConnection&) = delete;

  // Runs one command and returns its reply. A command that produced no reply (after
  // QUIT, or on a connection CLIENT KILL closed) fails the test.
  RespValue Run(facade::CmdArgList args);
  // Runs the commands as one pipelined batch (one DispatchMany call, so consecutive
  // commands for one shard are squashed into one hop) and returns their replies.
  std::vector<RespValue> RunPipeline(absl::Span<const std::vector<std::string_view>> commands);
  // Starts one command without waiting for its reply (a blocking pop); Finish waits for
  // it (failing the test when it produced none) and returns it. One at a time; no Run
  // in between on this connection.
  void Start(std::vector<std::string> command);
  RespValue Finish();

  // The pushes (pub/sub messages, MONITOR lines) queued for this connection since the
  // last call, parsed. Without a socket they wait in the connection's push queue, apart
  // from the replies (so a test sees their order among themselves, not among replies).
  std::vector<RespValue> TakePushes();

  unsigned thread() const;
  // The connection's state as commands left it (db index, name, MULTI state...). Read it
  // only between Run calls.
  facade::ConnectionContext* context();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The fixture of a family's tests, parameterised by the number of shards (= threads).
class ServiceTest : public testing::TestWithParam<unsigned> {
 protected:
  // Starts the server for GetParam() shards unless it runs already with that many;
  // flushes every database; opens the default connection on thread 0.
  void SetUp() override;
  // Closes this test's connections.
  void TearDown() override;
  // Stops the server: shards, then threads (no leak under ASAN).
  static void TearDownTestSuite();

  unsigned num_shards() const { return GetParam(); }
  Service* service() const;

  // Runs a command on the default connection (thread 0).
  RespValue Run(facade::CmdArgList args) { return RunOnThread(0, args); }
  // Runs a command on this test's connection on proactor thread `thread` (made on first
  // use and kept for the test, so its database and MULTI state carry over).
  RespValue RunOnThread(unsigned thread, facade::CmdArgList args);
  // A new connection on `thread`, separate from those Run and RunOnThread use.
  std::unique_ptr<TestConnection> Connect(unsigned thread);

  // FLUSHALL through the default connection.
  void FlushAll();

  // The first of "<prefix>:0", "<prefix>:1"... that lives on `shard`, for tests that put
  // keys on chosen shards: KeyOnShard(0, "a") and KeyOnShard(num_shards() - 1, "b") are on
  // different shards whenever there are two or more.
  std::string KeyOnShard(ShardId shard, std::string_view prefix = "key") const;

  // INFO's blocked_clients, and a wait (up to 5 s) until it is `count`: a Start returns
  // before its blocking command ran.
  int BlockedClients();
  void WaitBlocked(int count);

 private:
  std::vector<std::unique_ptr<TestConnection>> connections_;  // index: thread
};

// Instantiates a ServiceTest fixture's TEST_Ps with 1, 2 and 4 shards, one test suite each.
#define INSTANTIATE_SHARD_COUNTS(fixture)                            \
  INSTANTIATE_TEST_SUITE_P(Shards1, fixture, ::testing::Values(1u)); \
  INSTANTIATE_TEST_SUITE_P(Shards2, fixture, ::testing::Values(2u)); \
  INSTANTIATE_TEST_SUITE_P(Shards4, fixture, ::testing::Values(4u))

}  // namespace damselfly
