// FUNCTION and FCALL through the Service, with 1, 2 and 4 shards: the library set seen
// from every thread after LOAD, REPLACE, DELETE and FLUSH (interpreters reload what
// moved), DUMP/RESTORE payloads, flags, busy functions. The Lua side (register_function
// and its error texts) is src/core/interpreter_test.cc's; tests/test_functions.py checks
// replies against redis-server.
#include <unistd.h>

#include <string>

#include "helio/base/strings.h"
#include "src/server/test_utils.h"

namespace damselfly {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

// A library `lib` with one function `fn` whose body is `body`.
std::string Library(std::string_view lib, std::string_view fn, std::string_view body,
                    std::string_view flags = "") {
  return helio::StrCat("#!lua name=", lib, "\nredis.register_function{function_name='", fn,
                       "', callback=function(keys, args) ", body, " end, flags={", flags, "}}");
}

class FunctionFamilyTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    EXPECT_EQ(Run({"function", "flush"}), "OK");
  }
};

TEST_P(FunctionFamilyTest, LoadAndCallFromEveryThread) {
  EXPECT_EQ(Run({"function", "load",
                 Library("lib", "setter", "return redis.call('set', keys[1], args[1])")}),
            "lib");
  for (unsigned thread = 0; thread < num_shards(); ++thread) {
    const std::string key = KeyOnShard(num_shards() - 1 - thread, "k");
    EXPECT_EQ(RunOnThread(thread, {"fcall", "setter", "1", key, "v"}), "OK");
    // Function names are case-insensitive.
    EXPECT_EQ(RunOnThread(thread, {"fcall", "SETTER", "1", key, "w"}), "OK");
    EXPECT_EQ(Run({"get", key}), "w");
  }
}

TEST_P(FunctionFamilyTest, LongFunctionNamesAreCaseInsensitiveToo) {
  const std::string name(70, 'f');
  EXPECT_EQ(Run({"function", "load", Library("lib", name, "return 5")}), "lib");
  EXPECT_EQ(Run({"fcall", helio::AsciiStrToUpper(name), "0"}), 5);
}

TEST_P(FunctionFamilyTest, UndeclaredKeysOnEveryShard) {
  // A function that names its keys in its arguments, as BullMQ's scripts build theirs.
  EXPECT_EQ(Run({"function", "load",
                 Library("lib", "bump",
                         "redis.call('incr', args[1]) redis.call('incr', args[2]) "
                         "return redis.call('mget', args[1], args[2])")}),
            "lib");
  const std::string a = KeyOnShard(0, "a"), b = KeyOnShard(num_shards() - 1, "b");
  for (unsigned thread = 0; thread < num_shards(); ++thread) {
    EXPECT_THAT(RunOnThread(thread, {"fcall", "bump", "0", a, b}),
                RespArray(ElementsAre(helio::StrCat(thread + 1), helio::StrCat(thread + 1))));
  }
}

TEST_P(FunctionFamilyTest, ReplaceDeleteAndFlushReachEveryThread) {
  EXPECT_EQ(Run({"function", "load", Library("lib", "f", "return 1")}), "lib");
  for (unsigned thread = 0; thread < num_shards(); ++thread) {
    EXPECT_EQ(RunOnThread(thread, {"fcall", "f", "0"}), 1);
  }
  EXPECT_THAT(Run({"function", "load", Library("lib", "f", "return 2")}),
              ErrArg("ERR Library 'lib' already exists"));
  EXPECT_EQ(Run({"function", "load", "REPLACE", Library("lib", "f", "return 2")}), "lib");
  for (unsigned thread = 0; thread < num_shards(); ++thread) {
    EXPECT_EQ(RunOnThread(thread, {"fcall", "f", "0"}), 2);
  }
  EXPECT_EQ(Run({"function", "load", "replace", Library("lib", "g", "return 3")}), "lib");
  for (unsigned thread = 0; thread < num_shards(); ++thread) {
    EXPECT_THAT(RunOnThread(thread, {"fcall", "f", "0"}), ErrArg("ERR Function not found"));
    EXPECT_EQ(RunOnThread(thread, {"fcall", "g", "0"}), 3);
  }
  EXPECT_EQ(Run({"function", "delete", "lib"}), "OK");
  EXPECT_THAT(Run({"function", "delete", "lib"}), ErrArg("ERR Library not found"));
  EXPECT_THAT(RunOnThread(num_shards() - 1, {"fcall", "g", "0"}), ErrArg("ERR Function not found"));
  // The name is free again, in interpreters that had loaded the old library too.
  EXPECT_EQ(Run({"function", "load", Library("other", "g", "return 4")}), "other");
  EXPECT_EQ(RunOnThread(num_shards() - 1, {"fcall", "g", "0"}), 4);
  EXPECT_EQ(Run({"function", "flush", "async"}), "OK");
  EXPECT_THAT(Run({"fcall", "g", "0"}), ErrArg("ERR Function not found"));
}

TEST_P(FunctionFamilyTest, LoadErrors) {
  EXPECT_EQ(Run({"function", "load", Library("a", "f", "return 1")}), "a");
  EXPECT_THAT(Run({"function", "load", Library("b", "F", "return 1")}),
              ErrArg("ERR Function F already exists"));
  EXPECT_THAT(Run({"function", "load", "return 1"}), ErrArg("ERR Missing library metadata"));
  EXPECT_THAT(Run({"function", "load", "#!lua name=x"}), ErrArg("ERR Invalid library metadata"));
  EXPECT_THAT(Run({"function", "load", "#!lua\nreturn 1"}),
              ErrArg("ERR Library name was not given"));
  EXPECT_THAT(Run({"function", "load", "#!lua name=x name=y\nreturn 1"}),
              ErrArg("ERR Invalid metadata value, name argument was given multiple times"));
  EXPECT_THAT(Run({"function", "load", "#!lua nam=x\nreturn 1"}),
              ErrArg("ERR Invalid metadata value given: nam=x"));
  EXPECT_THAT(Run({"function", "load", "#!lua name=a-b\nreturn 1"}),
              ErrArg("ERR Library names can only contain letters, numbers, or underscores(_) "
                     "and must be at least one character long"));
  EXPECT_THAT(Run({"function", "load", "#!js name=x\nreturn 1"}),
              ErrArg("ERR Engine 'js' not found"));
  EXPECT_THAT(Run({"function", "load", "#!lua name=x\nreturn 1"}),
              ErrArg("ERR No functions registered"));
  EXPECT_THAT(Run({"function", "load", "x", Library("x", "g", "return 1")}),
              ErrArg("ERR Unknown option given: x"));
  EXPECT_THAT(Run({"function", "load"}), ErrArg(ArityError("function|load")));
  // Quoted words, as Redis splits the shebang line; the engine name is case-insensitive.
  EXPECT_EQ(Run({"function", "load",
                 "#!LUA \"name=q\"\nredis.register_function('q', "
                 "function() return 1 end)"}),
            "q");
  EXPECT_THAT(Run({"fcall", "q", "0"}), IntArg(1));
  // Nothing of a failed load stays.
  EXPECT_THAT(Run({"function", "list"}), ArrLen(2));
}

TEST_P(FunctionFamilyTest, FcallErrorsAndFlags) {
  EXPECT_EQ(Run({"function", "load",
                 "#!lua name=lib\n"
                 "redis.register_function('writer', function(keys, args) "
                 "return redis.call('set', keys[1], 'x') end)\n"
                 "redis.register_function{function_name='reader', callback=function(keys, args) "
                 "return redis.call('get', keys[1]) end, flags={'no-writes'}}\n"
                 "redis.register_function{function_name='sneaky', callback=function(keys, args) "
                 "return redis.call('set', keys[1], 'y') end, flags={'no-writes'}}"}),
            "lib");
  EXPECT_THAT(Run({"fcall", "nope", "0"}), ErrArg("ERR Function not found"));
  EXPECT_THAT(Run({"fcall", "writer", "x"}), ErrArg("ERR Bad number of keys provided"));
  EXPECT_THAT(Run({"fcall", "writer", "-1"}), ErrArg("ERR Number of keys can't be negative"));
  EXPECT_THAT(Run({"fcall", "writer", "2", "k"}),
              ErrArg("ERR Number of keys can't be greater than number of args"));
  EXPECT_THAT(Run({"fcall"}), ErrArg(ArityError("fcall")));
  EXPECT_THAT(Run({"fcall_ro", "writer", "1", "k"}),
              ErrArg("ERR Can not execute a script with write flag using *_ro command."));
  EXPECT_EQ(Run({"fcall", "writer", "1", "k"}), "OK");
  EXPECT_EQ(Run({"fcall_ro", "reader", "1", "k"}), "x");
  EXPECT_THAT(Run({"fcall", "sneaky", "1", "k"}),
              ErrArg("ERR Write commands are not allowed from read-only scripts."));
  EXPECT_EQ(Run({"get", "k"}), "x");
  // FCALL inside MULTI/EXEC.
  EXPECT_EQ(Run({"multi"}), "OK");
  EXPECT_EQ(Run({"fcall", "writer", "1", "k2"}), "QUEUED");
  EXPECT_EQ(Run({"fcall_ro", "reader", "1", "k2"}), "QUEUED");
  EXPECT_THAT(Run({"exec"}), RespArray(ElementsAre("OK", "x")));
}

TEST_P(FunctionFamilyTest, List) {
  EXPECT_EQ(Run({"function", "load",
                 "#!lua name=lib1\nredis.register_function{function_name='f1', "
                 "callback=function() return 1 end, flags={'allow-oom', 'no-writes'}, "
                 "description='one'}"}),
            "lib1");
  EXPECT_EQ(Run({"function", "load", Library("other", "f2", "return 2")}), "other");
  RespValue list = Run({"function", "list", "libraryname", "LIB*", "withcode"});
  ASSERT_THAT(list, ArrLen(1));
  EXPECT_THAT(
      list.elements[0],
      RespArray(ElementsAre(
          "library_name", "lib1", "engine", "LUA", "functions",
          RespArray(ElementsAre(
              RespArray(ElementsAre("name", "f1", "description", "one", "flags",
                                    RespArray(ElementsAre("no-writes", "allow-oom")))))),
          "library_code", testing::Field(&RespValue::str, HasSubstr("description='one'")))));
  list = Run({"function", "list", "libraryname", "oth*"});
  ASSERT_THAT(list, ArrLen(1));
  EXPECT_THAT(
      list.elements[0],
      RespArray(ElementsAre("library_name", "other", "engine", "LUA", "functions",
                            RespArray(ElementsAre(RespArray(ElementsAre(
                                "name", "f2", "description", IsNil(), "flags", ArrLen(0))))))));
  EXPECT_THAT(Run({"function", "list"}), ArrLen(2));
  EXPECT_THAT(Run({"function", "list", "libraryname"}),
              ErrArg("ERR library name argument was not given"));
  EXPECT_THAT(Run({"function", "list", "withcode", "withcode"}),
              ErrArg("ERR Unknown argument withcode"));
  // RESP3: maps and a set of flags.
  EXPECT_EQ(Run({"hello", "3"}).type, RespValue::Type::kMap);
  list = Run({"function", "list", "libraryname", "lib1"});
  ASSERT_THAT(list, ArrLen(1));
  EXPECT_EQ(list.elements[0].type, RespValue::Type::kMap);
  EXPECT_EQ(list.elements[0].elements[5].elements[0].elements[5].type, RespValue::Type::kSet);
}

TEST_P(FunctionFamilyTest, StatsAndFlush) {
  EXPECT_EQ(Run({"function", "load", Library("a", "f1", "return 1")}), "a");
  EXPECT_THAT(
      Run({"function", "stats"}),
      RespArray(ElementsAre(
          "running_script", IsNil(), "engines",
          RespArray(ElementsAre("LUA", RespArray(ElementsAre("libraries_count", IntArg(1),
                                                             "functions_count", IntArg(1))))))));
  EXPECT_THAT(Run({"function", "flush", "x"}),
              ErrArg("ERR FUNCTION FLUSH only supports SYNC|ASYNC option"));
  EXPECT_THAT(Run({"function", "flush", "sync", "async"}),
              ErrArg("ERR unknown subcommand or wrong number of arguments for 'flush'. Try "
                     "FUNCTION HELP."));
  EXPECT_EQ(Run({"function", "flush", "SYNC"}), "OK");
  EXPECT_THAT(Run({"function", "list"}), ArrLen(0));
  EXPECT_THAT(Run({"function", "kill"}), ErrArg("NOTBUSY No scripts in execution right now."));
  EXPECT_THAT(Run({"function", "help"}), ArrLen(40));
}

TEST_P(FunctionFamilyTest, DumpAndRestore) {
  // FUNCTION DUMP of redis-server 7.0.15 with no library.
  const std::string empty("\x0a\x00\x5d\x9b\x5c\x40\x0f\x7f\xa2\xda", 10);
  EXPECT_EQ(Run({"function", "dump"}), empty);
  EXPECT_EQ(Run({"function", "restore", empty}), "OK");
  // Redis's payload for "#!lua name=x\nredis.register_function('x1', function() return 1
  // end)": the code as a raw RDB string (LZF cannot shrink it by 5 bytes).
  const std::string code = "#!lua name=x\nredis.register_function('x1', function() return 1 end)";
  RespValue dump;
  EXPECT_EQ(Run({"function", "load", code}), "x");
  dump = Run({"function", "dump"});
  ASSERT_EQ(dump.type, RespValue::Type::kBulk);
  EXPECT_EQ(Run({"function", "flush"}), "OK");
  EXPECT_EQ(Run({"function", "restore", dump.str}), "OK");
  EXPECT_EQ(Run({"fcall", "x1", "0"}), 1);
  EXPECT_THAT(Run({"function", "restore", dump.str}), ErrArg("ERR Library x already exists"));
  EXPECT_THAT(Run({"function", "restore", dump.str, "APPEND"}),
              ErrArg("ERR Library x already exists"));
  EXPECT_EQ(Run({"function", "restore", dump.str, "replace"}), "OK");
  EXPECT_EQ(Run({"function", "load", Library("y", "y1", "return 2")}), "y");
  EXPECT_EQ(Run({"function", "restore", dump.str, "FLUSH"}), "OK");
  EXPECT_THAT(Run({"function", "list"}), ArrLen(1));
  EXPECT_THAT(Run({"fcall", "y1", "0"}), ErrArg("ERR Function not found"));
  // A library of another name with a function taken.
  EXPECT_EQ(Run({"function", "delete", "x"}), "OK");
  EXPECT_EQ(Run({"function", "load", Library("z", "x1", "return 3")}), "z");
  EXPECT_THAT(Run({"function", "restore", dump.str, "REPLACE"}),
              ErrArg("ERR Function x1 already exists"));
  EXPECT_EQ(Run({"fcall", "x1", "0"}), 3);

  std::string corrupt = dump.str;
  corrupt[5] ^= 1;
  EXPECT_THAT(Run({"function", "restore", corrupt}),
              ErrArg("ERR DUMP payload version or checksum are wrong"));
  EXPECT_THAT(Run({"function", "restore", "short"}),
              ErrArg("ERR DUMP payload version or checksum are wrong"));
  EXPECT_THAT(Run({"function", "restore", dump.str, "bad"}),
              ErrArg("ERR Wrong restore policy given, value should be either FLUSH, APPEND or "
                     "REPLACE."));
  EXPECT_THAT(Run({"function", "restore", dump.str, "flush", "x"}),
              ErrArg("ERR unknown subcommand or wrong number of arguments for 'restore'. Try "
                     "FUNCTION HELP."));
}

TEST_P(FunctionFamilyTest, BusyFunctionStatsAndKill) {
  EXPECT_EQ(
      Run({"function", "load",
           Library("spin", "spin", "local a = 1 while true do a = a + 1 end", "'no-writes'")}),
      "spin");
  EXPECT_EQ(Run({"config", "set", "busy-reply-threshold", "50"}), "OK");
  std::unique_ptr<TestConnection> runner = Connect(0);
  runner->Start({"fcall", "spin", "0"});
  usleep(200'000);
  std::unique_ptr<TestConnection> other = Connect(num_shards() - 1);
  EXPECT_THAT(other->Run(std::vector<std::string_view>{"get", "k"}),
              ErrArg("BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                     "SHUTDOWN NOSAVE."));
  RespValue stats = other->Run(std::vector<std::string_view>{"function", "stats"});
  ASSERT_THAT(stats, ArrLen(4));
  EXPECT_THAT(stats.elements[1], RespArray(ElementsAre("name", "spin", "command",
                                                       RespArray(ElementsAre("fcall", "spin", "0")),
                                                       "duration_ms", testing::_)));
  EXPECT_GE(stats.elements[1].elements[5].integer, 100);
  EXPECT_THAT(other->Run(std::vector<std::string_view>{"script", "kill"}),
              ErrArg("BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                     "SHUTDOWN NOSAVE."));
  EXPECT_EQ(other->Run(std::vector<std::string_view>{"function", "kill"}), "OK");
  EXPECT_THAT(runner->Finish(), ErrArg("Script killed by user with"));
  EXPECT_THAT(other->Run(std::vector<std::string_view>{"get", "k"}), IsNil());
  EXPECT_EQ(Run({"config", "set", "busy-reply-threshold", "5000"}), "OK");
}

INSTANTIATE_SHARD_COUNTS(FunctionFamilyTest);

}  // namespace
}  // namespace damselfly
