// EVAL, EVALSHA, SCRIPT and how scripts run (script_runner.h) through the Service, with
// 1, 2 and 4 shards: declared and undeclared keys on chosen shards, the three run modes,
// MULTI/EXEC, busy scripts. The Lua side (conversions, sandbox, error texts) is
// src/core/interpreter_test.cc's; tests/test_scripting.py checks replies against
// redis-server.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "helio/base/strings.h"
#include "src/core/interpreter.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

class ScriptFamilyTest : public ServiceTest {
 protected:
  // An INFO stats field.
  int64_t Stat(std::string_view name) {
    RespValue info = Run({"info", "stats"});
    std::string key = helio::StrCat(name, ":");
    size_t at = info.str.find(key);
    if (at == std::string::npos) return -1;
    return std::atoll(info.str.c_str() + at + key.size());
  }
  // A script that spins for `ms` milliseconds (reading TIME, a command without keys) and
  // then returns `after`.
  static std::string Spin(int ms, std::string_view after) {
    return helio::StrCat(
        "local function now() local t = redis.call('TIME') return t[1] * 1000 + t[2] / 1000 "
        "end local start = now() while now() - start < ",
        ms, " do end ", after);
  }
};

TEST_P(ScriptFamilyTest, EvalAndEvalSha) {
  EXPECT_EQ(Run({"script", "flush"}), "OK");  // the cache outlives the suite's server
  EXPECT_EQ(Run({"eval", "return redis.call('set', KEYS[1], ARGV[1])", "1", "k", "v"}), "OK");
  EXPECT_EQ(Run({"get", "k"}), "v");
  const std::string body = "return redis.call('get', KEYS[1])";
  const std::string sha = Interpreter::Sha1Hex(body);
  EXPECT_THAT(Run({"evalsha", sha, "1", "k"}),
              ErrArg("NOSCRIPT No matching script. Please use EVAL."));
  EXPECT_EQ(Run({"script", "load", body}), sha);
  EXPECT_EQ(Run({"evalsha", sha, "1", "k"}), "v");
  // The SHA is case-insensitive.
  EXPECT_EQ(Run({"evalsha", helio::AsciiStrToUpper(sha), "1", "k"}), "v");
  EXPECT_THAT(Run({"script", "exists", sha, "0000"}), RespArray(ElementsAre(IntArg(1), IntArg(0))));
  EXPECT_EQ(Run({"script", "flush"}), "OK");
  EXPECT_THAT(Run({"script", "exists", sha}), RespArray(ElementsAre(IntArg(0))));
  EXPECT_THAT(Run({"evalsha", sha, "1", "k"}), ErrArg("NOSCRIPT"));
  // EVAL caches what it runs.
  EXPECT_EQ(Run({"eval", body, "1", "k"}), "v");
  EXPECT_EQ(Run({"evalsha", sha, "1", "k"}), "v");
}

TEST_P(ScriptFamilyTest, Errors) {
  EXPECT_THAT(Run({"eval", "return 1"}), ErrArg(ArityError("eval")));
  EXPECT_THAT(Run({"eval", "return 1", "x"}), ErrArg("ERR value is not an integer or out of range"));
  EXPECT_THAT(Run({"eval", "return 1", "-1"}), ErrArg("ERR Number of keys can't be negative"));
  EXPECT_THAT(Run({"eval", "return 1", "2", "a"}),
              ErrArg("ERR Number of keys can't be greater than number of args"));
  EXPECT_THAT(Run({"script", "flush", "x"}),
              ErrArg("ERR SCRIPT FLUSH only support SYNC|ASYNC option"));
  EXPECT_THAT(Run({"script", "kill"}), ErrArg("NOTBUSY No scripts in execution right now."));
  EXPECT_THAT(Run({"eval", "return redis.call('nosuch')", "0"}),
              ErrArg("ERR Unknown Redis command called from script"));
  EXPECT_THAT(Run({"eval", "return redis.call('get')", "0"}),
              ErrArg("ERR Wrong number of args calling Redis command from script"));
  for (const char* forbidden : {"return redis.call('blpop', 'l', 0)", "return redis.call('multi')",
                                "return redis.call('eval', 'return 1', 0)"}) {
    EXPECT_THAT(Run({"eval", forbidden, "0"}),
                ErrArg("ERR This Redis command is not allowed from script"))
        << forbidden;
  }
  EXPECT_THAT(Run({"eval_ro", "return redis.call('set', 'a', 'b')", "0"}),
              ErrArg("ERR Write commands are not allowed from read-only scripts."));
  EXPECT_EQ(Run({"exists", "a"}), 0);
}

TEST_P(ScriptFamilyTest, Shebang) {
  EXPECT_EQ(Run({"eval", "#!lua\nreturn 1", "0"}), 1);
  EXPECT_THAT(Run({"eval", "#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')", "0"}),
              ErrArg("ERR Write commands are not allowed from read-only scripts."));
  EXPECT_EQ(Run({"eval_ro", "#!lua flags=no-writes\nreturn 2", "0"}), 2);
  EXPECT_THAT(Run({"eval_ro", "#!lua\nreturn 1", "0"}),
              ErrArg("ERR Can not execute a script with write flag using *_ro command."));
  EXPECT_THAT(Run({"eval", "#!lua flags=bad\nreturn 1", "0"}),
              ErrArg("ERR Unexpected flag in script shebang: bad"));
  EXPECT_THAT(Run({"eval", "#!py\nreturn 1", "0"}),
              ErrArg("ERR Unexpected engine in script shebang: #!py"));
  EXPECT_THAT(Run({"eval", "#!lua name=x\nreturn 1", "0"}),
              ErrArg("ERR Unknown lua shebang option: name=x"));
}

TEST_P(ScriptFamilyTest, DeclaredKeysOnEveryShardFromEveryThread) {
  const std::string a = KeyOnShard(0, "a"), b = KeyOnShard(num_shards() - 1, "b");
  const std::string transfer =
      "redis.call('decrby', KEYS[1], ARGV[1]) redis.call('incrby', KEYS[2], ARGV[1]) "
      "return {redis.call('get', KEYS[1]), redis.call('get', KEYS[2])}";
  for (unsigned thread = 0; thread < num_shards(); ++thread) {
    EXPECT_THAT(RunOnThread(thread, {"eval", transfer, "2", a, b, "5"}), ArrLen(2));
  }
  EXPECT_EQ(Run({"get", a}), helio::StrCat(-5 * int(num_shards())));
  EXPECT_EQ(Run({"get", b}), helio::StrCat(5 * int(num_shards())));
  EXPECT_EQ(Stat("scripts_undeclared_keys"), 0);
}

TEST_P(ScriptFamilyTest, UndeclaredKeysAreLockedWhenReached) {
  const std::string a = KeyOnShard(0, "a"), b = KeyOnShard(num_shards() - 1, "b");
  const int64_t before = Stat("scripts_undeclared_keys");
  for (unsigned thread = 0; thread < num_shards(); ++thread) {
    EXPECT_THAT(RunOnThread(thread, {"eval",
                                     "redis.call('incr', ARGV[1]) redis.call('incr', ARGV[2]) "
                                     "return redis.call('mget', ARGV[1], ARGV[2])",
                                     "0", a, b}),
                RespArray(ElementsAre(helio::StrCat(thread + 1), helio::StrCat(thread + 1))));
  }
  EXPECT_EQ(Stat("scripts_undeclared_keys"), before + int64_t(num_shards()));
}

TEST_P(ScriptFamilyTest, SelectInsideScriptKeepsTheCallersDatabase) {
  EXPECT_EQ(Run({"eval", "redis.call('select', 1) return redis.call('set', 'k', 'one')", "0"}),
            "OK");
  EXPECT_EQ(Run({"exists", "k"}), 0);
  EXPECT_EQ(Run({"select", "1"}), "OK");
  EXPECT_EQ(Run({"get", "k"}), "one");
  EXPECT_EQ(Run({"select", "0"}), "OK");
}

TEST_P(ScriptFamilyTest, EvalInsideMultiExec) {
  const std::string a = KeyOnShard(0, "a"), b = KeyOnShard(num_shards() - 1, "b");
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"set", a, "1"}), "QUEUED");
  EXPECT_EQ(Run({"eval", "return redis.call('incr', KEYS[1]) + redis.call('incr', KEYS[2])", "2",
                 a, b}),
            "QUEUED");
  // An undeclared key inside EXEC.
  EXPECT_EQ(Run({"eval", "return redis.call('set', ARGV[1], 'x')", "0", KeyOnShard(0, "c")}),
            "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre("OK", IntArg(3), "OK")));
  EXPECT_EQ(Run({"get", KeyOnShard(0, "c")}), "x");
}

// Reaches the key ARGV[1] when given one; its first run (without) teaches the server that
// it keeps to its declared keys, so it is not run whole-shard.
constexpr std::string_view kReachIfAsked =
    "if ARGV[1] then return redis.call('get', ARGV[1]) end return 'none'";
constexpr std::string_view kWriteThenReachIfAsked =
    "redis.call('set', KEYS[1], 'x') "
    "if ARGV[1] then return redis.call('get', ARGV[1]) end return 'none'";

TEST_P(ScriptFamilyTest, HeldUndeclaredKeyBeforeAnyWriteRerunsWholeShard) {
  if (num_shards() < 2) GTEST_SKIP() << "needs a key held on another thread's shard";
  const std::string held = KeyOnShard(1, "held");
  EXPECT_EQ(Run({"eval", kReachIfAsked, "0"}), "none");
  // On thread 0 a script holds `held` (declared, shard 1; with a key of shard 0 it runs
  // as a transaction from thread 0) while it spins.
  const int64_t reruns = Stat("scripts_rerun_whole_shard");
  std::unique_ptr<TestConnection> holder = Connect(0);
  holder->Start({"eval", Spin(300, "return redis.call('set', KEYS[1], 'from holder')"), "2", held,
                 KeyOnShard(0, "other")});
  usleep(50'000);  // (thread 0 spins now: nothing may run there until the holder ends)
  // On thread 1 a script that kept to its declared keys before reaches `held` without
  // declaring it: it runs again whole-shard, after the holder.
  EXPECT_EQ(RunOnThread(1, {"eval", kReachIfAsked, "0", held}), "from holder");
  EXPECT_EQ(holder->Finish(), "OK");
  EXPECT_EQ(Stat("scripts_rerun_whole_shard"), reruns + 1);
}

TEST_P(ScriptFamilyTest, HeldUndeclaredKeyAfterAWriteWaitsForAnOlderHolder) {
  if (num_shards() < 2) GTEST_SKIP() << "needs a key held on another thread's shard";
  const std::string held = KeyOnShard(1, "held"), mine = KeyOnShard(1, "mine");
  EXPECT_EQ(Run({"eval", kWriteThenReachIfAsked, "1", mine}), "none");
  const int64_t reruns = Stat("scripts_rerun_whole_shard");
  std::unique_ptr<TestConnection> holder = Connect(0);
  holder->Start({"eval", Spin(300, "return redis.call('set', KEYS[1], 'from holder')"), "2", held,
                 KeyOnShard(0, "other")});
  usleep(50'000);  // (thread 0 spins now: nothing may run there until the holder ends)
  EXPECT_EQ(RunOnThread(1, {"eval", kWriteThenReachIfAsked, "1", mine, held}), "from holder");
  EXPECT_EQ(holder->Finish(), "OK");
  EXPECT_EQ(Stat("scripts_rerun_whole_shard"), reruns);
}

// A BullMQ-like script: its job key, built from ARGV, is not declared.
constexpr std::string_view kAddJob =
    "local id = redis.call('incr', KEYS[1]) "
    "redis.call('hset', ARGV[1] .. id, 'data', ARGV[2]) "
    "return redis.call('lpush', KEYS[2], id)";

TEST_P(ScriptFamilyTest, UndeclaredKeysOnTheDeclaredKeysShardRunLocal) {
  if (num_shards() < 2) GTEST_SKIP() << "with one shard no run is whole-shard";
  // With a hash-tag prefix every key of the queue lives on one shard.
  const int64_t whole = Stat("scripts_whole_shard");
  for (int i = 1; i <= 5; ++i) {
    EXPECT_THAT(Run({"eval", kAddJob, "2", "{q}:id", "{q}:wait", "{q}:job:", "x"}), IntArg(i));
  }
  EXPECT_EQ(Stat("scripts_whole_shard"), whole + 1) << "only the first run, which learns";
  EXPECT_EQ(Run({"hget", "{q}:job:5", "data"}), "x");
  EXPECT_GE(Stat("scripts_undeclared_keys"), 5);
}

TEST_P(ScriptFamilyTest, UndeclaredKeysOnAnotherShardRunWholeShard) {
  if (num_shards() < 2) GTEST_SKIP() << "with one shard no run is whole-shard";
  // The job keys (prefix "job:") land on other shards than the declared keys for some ids.
  const std::string id = KeyOnShard(0, "id"), wait = KeyOnShard(0, "wait");
  const int64_t whole = Stat("scripts_whole_shard");
  int runs = 0;
  for (int i = 1; i <= 20; ++i, ++runs) {
    EXPECT_THAT(Run({"eval", kAddJob, "2", id, wait, "job:", "x"}), IntArg(i));
  }
  // Once a job key was on another shard, every later run is whole-shard.
  EXPECT_GT(Stat("scripts_whole_shard"), whole + 1);
  EXPECT_THAT(Run({"llen", wait}), IntArg(runs));
}

TEST_P(ScriptFamilyTest, BusyScriptAndScriptKill) {
  EXPECT_EQ(Run({"config", "set", "busy-reply-threshold", "50"}), "OK");
  EXPECT_THAT(Run({"config", "get", "lua-time-limit"}), RespArray(ElementsAre("lua-time-limit", "50")));
  std::unique_ptr<TestConnection> reader = Connect(0);
  reader->Start({"eval", Spin(5000, "return 1"), "0"});
  usleep(200'000);
  std::unique_ptr<TestConnection> other = Connect(num_shards() - 1);
  EXPECT_THAT(other->Run(std::vector<std::string_view>{"get", "k"}),
              ErrArg("BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                     "SHUTDOWN NOSAVE."));
  EXPECT_EQ(other->Run(std::vector<std::string_view>{"script", "kill"}), "OK");
  EXPECT_THAT(reader->Finish(), ErrArg("Script killed by user with SCRIPT KILL"));
  EXPECT_THAT(other->Run(std::vector<std::string_view>{"get", "k"}), IsNil());

  // A script that wrote cannot be killed. It runs long enough to be still running when
  // the SCRIPT KILL comes under CI's load (ASAN, tests in parallel on two cores: 400 ms
  // was once not enough).
  std::unique_ptr<TestConnection> writer = Connect(0);
  writer->Start(
      {"eval", helio::StrCat("redis.call('set', 'w', 1) ", Spin(1500, "return 2")), "0"});
  usleep(200'000);
  EXPECT_THAT(other->Run(std::vector<std::string_view>{"script", "kill"}), ErrArg("UNKILLABLE"));
  EXPECT_EQ(writer->Finish(), 2);
  EXPECT_EQ(Run({"config", "set", "busy-reply-threshold", "5000"}), "OK");
}

INSTANTIATE_SHARD_COUNTS(ScriptFamilyTest);

}  // namespace
}  // namespace damselfly
