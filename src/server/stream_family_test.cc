// Stream commands through the Service, with 1, 2 and 4 shards (test_utils.h). Error texts
// are Redis 7.0's (checked against redis-server 7.0.15; tests/test_streams.py checks them
// over the wire too).
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;

class StreamFamilyTest : public ServiceTest {};

constexpr char kInvalidId[] = "Invalid stream ID specified as stream command argument";

TEST_P(StreamFamilyTest, AddRangeLen) {
  EXPECT_EQ(Run({"xadd", "s", "1-1", "a", "1", "b", "2"}), "1-1");
  EXPECT_EQ(Run({"xadd", "s", "1-*", "a", "3"}), "1-2");
  EXPECT_EQ(Run({"xadd", "s", "5", "a", "4"}), "5-0");
  EXPECT_EQ(Run({"xlen", "s"}), 3);
  EXPECT_EQ(Run({"xlen", "missing"}), 0);
  EXPECT_EQ(Run({"type", "s"}), "stream");
  EXPECT_EQ(Run({"object", "encoding", "s"}), "stream");
  EXPECT_THAT(Run({"xrange", "s", "-", "+"}),
              RespArray(ElementsAre(
                  RespArray(ElementsAre("1-1", RespArray(ElementsAre("a", "1", "b", "2")))),
                  RespArray(ElementsAre("1-2", RespArray(ElementsAre("a", "3")))),
                  RespArray(ElementsAre("5-0", RespArray(ElementsAre("a", "4")))))));
  EXPECT_THAT(
      Run({"xrange", "s", "(1-1", "1", "count", "5"}),
      RespArray(ElementsAre(RespArray(ElementsAre("1-2", RespArray(ElementsAre("a", "3")))))));
  EXPECT_THAT(
      Run({"xrevrange", "s", "+", "-", "count", "1"}),
      RespArray(ElementsAre(RespArray(ElementsAre("5-0", RespArray(ElementsAre("a", "4")))))));
  EXPECT_THAT(Run({"xrange", "missing", "-", "+"}), RespArray(ElementsAre()));
  EXPECT_THAT(Run({"xadd", "s", "5-0", "a", "1"}),
              ErrArg("equal or smaller than the target stream top item"));
  EXPECT_THAT(Run({"xadd", "t", "0-0", "a", "1"}), ErrArg("must be greater than 0-0"));
  EXPECT_THAT(Run({"xadd", "t", "1-x", "a", "1"}), ErrArg(kInvalidId));
  EXPECT_THAT(Run({"xadd", "t", "*", "a"}), ErrArg(ArityError("xadd")));
  EXPECT_THAT(Run({"xadd", "t", "maxlen", "1", "limit", "2", "*", "a", "1"}),
              ErrArg("LIMIT cannot be used without the special ~ option"));
  EXPECT_THAT(Run({"xadd", "t", "nomkstream", "*", "a", "1"}), IsNil());
  EXPECT_EQ(Run({"exists", "t"}), 0);
  EXPECT_THAT(Run({"xrange", "s", "(+", "+"}), ErrArg(kInvalidId));
  EXPECT_THAT(Run({"xrange", "s", "-", "(0-0"}), ErrArg("invalid end ID for the interval"));
}

TEST_P(StreamFamilyTest, WrongType) {
  Run({"set", "str", "v"});
  EXPECT_THAT(Run({"xadd", "str", "*", "a", "1"}), ErrArg("WRONGTYPE"));
  EXPECT_THAT(Run({"xlen", "str"}), ErrArg("WRONGTYPE"));
  EXPECT_THAT(Run({"xrange", "str", "-", "+"}), ErrArg("WRONGTYPE"));
  EXPECT_THAT(Run({"xread", "streams", "str", "0"}), ErrArg("WRONGTYPE"));
  Run({"xadd", "s", "1-1", "a", "1"});
  EXPECT_THAT(Run({"get", "s"}), ErrArg("WRONGTYPE"));
  EXPECT_THAT(Run({"lpush", "s", "x"}), ErrArg("WRONGTYPE"));
}

TEST_P(StreamFamilyTest, DelTrimSetId) {
  for (int i = 1; i <= 10; ++i) Run({"xadd", "s", std::to_string(i) + "-0", "f", "v"});
  EXPECT_EQ(Run({"xdel", "s", "1-0", "2", "99-0"}), 2);
  EXPECT_EQ(Run({"xdel", "missing", "bad"}), 0);
  EXPECT_THAT(Run({"xdel", "s", "bad"}), ErrArg(kInvalidId));
  EXPECT_EQ(Run({"xtrim", "s", "maxlen", "5"}), 3);
  EXPECT_EQ(Run({"xtrim", "s", "minid", "=", "8"}), 2);
  EXPECT_EQ(Run({"xlen", "s"}), 3);
  EXPECT_THAT(Run({"xtrim", "s", "maxlen", "-1"}), ErrArg("The MAXLEN argument must be >= 0."));
  EXPECT_THAT(Run({"xtrim", "s", "foo", "1"}), ErrArg("syntax error"));
  EXPECT_THAT(Run({"xtrim", "missing", "foo", "1"}), ErrArg("syntax error"));
  EXPECT_EQ(Run({"xtrim", "missing", "maxlen", "1"}), 0);
  EXPECT_THAT(Run({"xsetid", "s", "1-0"}),
              ErrArg("The ID specified in XSETID is smaller than the target stream top item"));
  EXPECT_THAT(Run({"xsetid", "missing", "1-0"}), ErrArg("no such key"));
  EXPECT_EQ(Run({"xsetid", "s", "20-0", "entriesadded", "30", "maxdeletedid", "15-0"}), "OK");
  EXPECT_THAT(Run({"xsetid", "s", "20-0", "entriesadded", "1"}),
              ErrArg("entries_added specified in XSETID is smaller than the target stream length"));
  EXPECT_EQ(Run({"xadd", "s", "20-*", "f", "v"}), "20-1");
}

TEST_P(StreamFamilyTest, ReadAcrossShards) {
  const std::string a = KeyOnShard(0, "a"), b = KeyOnShard(num_shards() - 1, "b");
  Run({"xadd", a, "1-1", "f", "1"});
  Run({"xadd", b, "2-1", "f", "2"});
  Run({"xadd", b, "3-1", "f", "3"});
  EXPECT_THAT(Run({"xread", "count", "1", "streams", a, b, "0", "2-1"}),
              RespArray(ElementsAre(
                  RespArray(ElementsAre(a, RespArray(ElementsAre(RespArray(ElementsAre(
                                               "1-1", RespArray(ElementsAre("f", "1")))))))),
                  RespArray(ElementsAre(b, RespArray(ElementsAre(RespArray(ElementsAre(
                                               "3-1", RespArray(ElementsAre("f", "3")))))))))));
  EXPECT_THAT(Run({"xread", "streams", a, b, "$", "$"}), IsNil());
  EXPECT_THAT(Run({"xread", "streams", a, b, "0"}), ErrArg("Unbalanced XREAD list of streams"));
  EXPECT_THAT(Run({"xread", "count", "1", a, "0"}), ErrArg("syntax error"));
  // A stream moved to another shard keeps its entries and IDs.
  EXPECT_EQ(Run({"rename", a, b}), "OK");
  EXPECT_EQ(Run({"xadd", b, "1-*", "f", "x"}), "1-2");
  EXPECT_EQ(Run({"xlen", b}), 2);
}

// Every XREAD waiting on a stream is served by the XADD (an XREAD takes nothing), each
// with the entries after its own ID; "$" is the last ID when the reader blocked.
TEST_P(StreamFamilyTest, BlockedReadersServedByOneAdd) {
  const std::string a = KeyOnShard(0, "a"), b = KeyOnShard(num_shards() - 1, "b");
  Run({"xadd", b, "1-1", "f", "1"});
  std::vector<std::unique_ptr<TestConnection>> readers;
  for (unsigned i = 0; i < 2; ++i) {
    readers.push_back(Connect(i % num_shards()));
    readers.back()->Start({"xread", "block", "5000", "streams", a, b, "$", "$"});
    WaitBlocked(int(i) + 1);
  }
  readers.push_back(Connect(0));
  readers.back()->Start({"xread", "block", "5000", "count", "1", "streams", b, "0-0"});
  EXPECT_THAT(readers.back()->Finish(), RespArray(ElementsAre(RespArray(ElementsAre(
                                            b, RespArray(ElementsAre(RespArray(ElementsAre(
                                                   "1-1", RespArray(ElementsAre("f", "1")))))))))));
  readers.pop_back();
  Run({"xadd", b, "2-1", "f", "2"});
  for (auto& reader : readers) {
    EXPECT_THAT(reader->Finish(), RespArray(ElementsAre(RespArray(ElementsAre(
                                      b, RespArray(ElementsAre(RespArray(ElementsAre(
                                             "2-1", RespArray(ElementsAre("f", "2")))))))))));
  }
  EXPECT_EQ(BlockedClients(), 0);
  // A timeout answers a null array; inside MULTI the command does not block.
  EXPECT_THAT(Run({"xread", "block", "10", "streams", a, "$"}), IsNil());
  Run({"multi"});
  Run({"xread", "block", "0", "streams", a, "$"});
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre(IsNil())));
}

// --- consumer groups

// An entry [id, [field, value]].
testing::Matcher<const RespValue&> Entry(std::string id, std::string field, std::string value) {
  return RespArray(ElementsAre(id, RespArray(ElementsAre(field, value))));
}

TEST_P(StreamFamilyTest, GroupReadAckPending) {
  EXPECT_THAT(Run({"xgroup", "create", "s", "g", "$"}), ErrArg("requires the key to exist"));
  EXPECT_EQ(Run({"xgroup", "create", "s", "g", "$", "mkstream"}), "OK");
  EXPECT_THAT(Run({"xgroup", "create", "s", "g", "0"}), ErrArg("BUSYGROUP"));
  Run({"xadd", "s", "1-0", "f", "1"});
  Run({"xadd", "s", "2-0", "f", "2"});
  EXPECT_THAT(Run({"xreadgroup", "group", "g", "a", "count", "1", "streams", "s", ">"}),
              RespArray(ElementsAre(
                  RespArray(ElementsAre("s", RespArray(ElementsAre(Entry("1-0", "f", "1"))))))));
  Run({"xreadgroup", "group", "g", "b", "streams", "s", ">"});
  EXPECT_THAT(Run({"xreadgroup", "group", "g", "b", "streams", "s", ">"}), IsNil());
  EXPECT_THAT(Run({"xpending", "s", "g"}),
              RespArray(ElementsAre(2, "1-0", "2-0",
                                    RespArray(ElementsAre(RespArray(ElementsAre("a", "1")),
                                                          RespArray(ElementsAre("b", "1")))))));
  EXPECT_EQ(Run({"xack", "s", "g", "1-0", "1-0", "5-0"}), 1);
  EXPECT_THAT(Run({"xack", "s", "g", "x"}), ErrArg(kInvalidId));
  EXPECT_THAT(
      Run({"xautoclaim", "s", "g", "a", "0", "0", "justid"}),
      RespArray(ElementsAre("0-0", RespArray(ElementsAre("2-0")), RespArray(ElementsAre()))));
  EXPECT_EQ(Run({"xgroup", "delconsumer", "s", "g", "a"}), 1);
  EXPECT_THAT(Run({"xpending", "s", "g"}), RespArray(ElementsAre(0, IsNil(), IsNil(), IsNil())));
  EXPECT_THAT(Run({"xinfo", "groups", "s"}),
              RespArray(ElementsAre(RespArray(ElementsAre("name", "g", "consumers", 1, "pending", 0,
                                                          "last-delivered-id", "2-0",
                                                          "entries-read", 2, "lag", 0)))));
}

// XREADGROUP reads streams of several shards in one transaction; an error in any key
// changes nothing.
TEST_P(StreamFamilyTest, GroupReadAcrossShards) {
  const std::string a = KeyOnShard(0, "a"), b = KeyOnShard(num_shards() - 1, "b");
  Run({"xadd", a, "1-0", "f", "a"});
  Run({"xadd", b, "2-0", "f", "b"});
  Run({"xgroup", "create", a, "g", "0"});
  EXPECT_THAT(Run({"xreadgroup", "group", "g", "c", "streams", a, b, ">", ">"}),
              ErrArg("NOGROUP No such key '" + b + "' or consumer group 'g'"));
  EXPECT_THAT(Run({"xpending", a, "g"}), RespArray(ElementsAre(0, IsNil(), IsNil(), IsNil())));
  Run({"xgroup", "create", b, "g", "0"});
  EXPECT_THAT(Run({"xreadgroup", "group", "g", "c", "streams", a, b, ">", ">"}),
              RespArray(ElementsAre(
                  RespArray(ElementsAre(a, RespArray(ElementsAre(Entry("1-0", "f", "a"))))),
                  RespArray(ElementsAre(b, RespArray(ElementsAre(Entry("2-0", "f", "b"))))))));
  // A history read answers every stream, an empty one too.
  Run({"xack", a, "g", "1-0"});
  EXPECT_THAT(Run({"xreadgroup", "group", "g", "c", "streams", a, b, "0", "0"}),
              RespArray(ElementsAre(
                  RespArray(ElementsAre(a, RespArray(ElementsAre()))),
                  RespArray(ElementsAre(b, RespArray(ElementsAre(Entry("2-0", "f", "b"))))))));
  // Groups move with their stream.
  EXPECT_EQ(Run({"rename", b, a}), "OK");
  EXPECT_THAT(Run({"xpending", a, "g", "-", "+", "10", "c"}),
              RespArray(ElementsAre(RespArray(ElementsAre("2-0", "c", testing::_, 2)))));
}

// A blocked XREADGROUP on streams of two shards is served by an XADD on either; the
// deletion of its key ends it with Redis's error.
TEST_P(StreamFamilyTest, BlockedGroupRead) {
  const std::string a = KeyOnShard(0, "a"), b = KeyOnShard(num_shards() - 1, "b");
  Run({"xgroup", "create", a, "g", "$", "mkstream"});
  Run({"xgroup", "create", b, "g", "$", "mkstream"});
  auto reader = Connect(num_shards() - 1);
  reader->Start({"xreadgroup", "group", "g", "c", "block", "5000", "streams", a, b, ">", ">"});
  WaitBlocked(1);
  Run({"xadd", a, "1-0", "f", "v"});
  EXPECT_THAT(reader->Finish(), RespArray(ElementsAre(RespArray(ElementsAre(
                                    a, RespArray(ElementsAre(Entry("1-0", "f", "v"))))))));
  EXPECT_THAT(Run({"xpending", a, "g"}),
              RespArray(ElementsAre(1, "1-0", "1-0",
                                    RespArray(ElementsAre(RespArray(ElementsAre("c", "1")))))));
  reader->Start({"xreadgroup", "group", "g", "c", "block", "0", "streams", a, b, ">", ">"});
  WaitBlocked(1);
  Run({"del", b});
  EXPECT_THAT(reader->Finish(), ErrArg("UNBLOCKED the stream key no longer exists"));
  reader->Start({"xreadgroup", "group", "g", "c", "block", "0", "streams", a, ">"});
  WaitBlocked(1);
  Run({"xgroup", "destroy", a, "g"});
  EXPECT_THAT(reader->Finish(), ErrArg("NOGROUP the consumer group this client was blocked on"));
  EXPECT_EQ(BlockedClients(), 0);
}

INSTANTIATE_SHARD_COUNTS(StreamFamilyTest);

}  // namespace
}  // namespace damselfly
