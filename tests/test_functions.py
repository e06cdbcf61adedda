"""Lua functions (issue 17): FUNCTION LOAD [REPLACE], LIST [WITHCODE] [LIBRARYNAME], DELETE,
FLUSH, DUMP, RESTORE, STATS and KILL, FCALL and FCALL_RO, with Redis 7.0's exact replies and
error texts: libraries (#!lua name=...), redis.register_function and its flags.

Validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis).
"""

import pytest

from helpers import err
from script_helpers import KEYS_GT_ARGS, KEYS_NEGATIVE, NOTBUSY, RO_WRITE, function_error


@pytest.fixture
def c(server):
    """A raw RESP2 connection on a server without function libraries."""
    conn = server.raw()
    assert conn("FUNCTION", "FLUSH") == "OK"
    return conn


LIB = """#!lua name=mylib
redis.register_function('myfunc', function(keys, args) return redis.call('incr', keys[1]) end)
redis.register_function{function_name='ro', callback=function(keys, args)
  return redis.call('get', keys[1]) end, flags={'no-writes'}}
redis.register_function{function_name='badro', callback=function(keys, args)
  return redis.call('set', keys[1], 'x') end, flags={'no-writes'}}
redis.register_function('echo', function(keys, args) return {keys, args} end)"""

LIB_LIST = [b"library_name", b"mylib", b"engine", b"LUA", b"functions", [
    [b"name", b"badro", b"description", None, b"flags", ["no-writes"]],
    [b"name", b"echo", b"description", None, b"flags", []],
    [b"name", b"myfunc", b"description", None, b"flags", []],
    [b"name", b"ro", b"description", None, b"flags", ["no-writes"]],
]]
LIB_WITH_CODE = LIB_LIST + [b"library_code", LIB.encode()]


def sorted_functions(listing):
    """FUNCTION LIST with each library's functions sorted by name (Redis lists them in the
    order of its hash table)."""
    out = []
    for lib in listing:
        lib = list(lib)
        i = lib.index(b"functions") + 1
        lib[i] = sorted(lib[i], key=lambda f: f[1])
        out.append(lib)
    return out


def test_function_load_and_fcall(c):
    assert c("FUNCTION", "LOAD", LIB) == b"mylib"
    assert c("FCALL", "myfunc", "1", "k") == 1
    assert c("FCALL", "myfunc", "1", "k") == 2
    assert c("FCALL", "ro", "1", "k") == b"2"
    assert c("FCALL_RO", "ro", "1", "k") == b"2"
    assert c("FCALL", "echo", "2", "k1", "k2", "a1") == [[b"k1", b"k2"], [b"a1"]]
    assert c("FCALL_RO", "myfunc", "1", "k") == \
        err("ERR Can not execute a script with write flag using *_ro command.")
    assert c("FCALL", "badro", "1", "k") == function_error(RO_WRITE, "badro", 6)
    assert c("GET", "k") == b"2"
    assert c("FCALL", "myfunc", "0") == function_error(
        "ERR Lua redis lib command arguments must be strings or integers", "myfunc", 2)


@pytest.mark.parametrize("args, reply", [
    (("FCALL", "myfunc"), err("ERR wrong number of arguments for 'fcall' command")),
    (("FCALL_RO", "ro"), err("ERR wrong number of arguments for 'fcall_ro' command")),
    (("FCALL", "nosuch", "0"), err("ERR Function not found")),
    (("FCALL_RO", "nosuch", "0"), err("ERR Function not found")),
    (("FCALL", "myfunc", "2", "k"), KEYS_GT_ARGS),
    (("FCALL", "myfunc", "-1"), KEYS_NEGATIVE),
    (("FCALL", "myfunc", "x"), err("ERR Bad number of keys provided")),
])
def test_fcall_errors(c, args, reply):
    assert c("FUNCTION", "LOAD", LIB) == b"mylib"
    assert c(*args) == reply


@pytest.mark.parametrize("code, message", [
    ("return 1", "ERR Missing library metadata"),
    ("#!lua\nreturn 1", "ERR Library name was not given"),
    ("#!lua name=empty\nreturn 1", "ERR No functions registered"),
    ("#!lua name=bad name\nreturn 1", "ERR Invalid metadata value given: name"),
    ("#!lua name=x foo=bar\nreturn 1", "ERR Invalid metadata value given: foo=bar"),
    ("#!lua name=x\nredis.register_function('myfunc', function() return 1 end)",
     "ERR Function myfunc already exists"),
    ("#!lua name=x\nredis.register_function('f1', function() return 1 end)\n"
     "redis.register_function('f1', function() return 1 end)",
     "ERR Error registering functions: ERR Function already exists in the library"),
    ("#!lua name=x\nredis.register_function{function_name='f2', callback=function() return 1 "
     "end, flags={'bogus'}}", "ERR Error registering functions: ERR unknown flag given"),
    ("#!lua name=x\nredis.call('set', 'a', 'b')",
     "ERR Error registering functions: ERR user_function:2: Script attempted to access "
     "nonexistent global variable 'call'"),
    ("#!lua name=x\nreturn (",
     "ERR Error compiling function: user_function:2: unexpected symbol near '<eof>'"),
    ("#!lua name=x\nredis.register_function('bad name', function() return 1 end)",
     "ERR Error registering functions: ERR Library names can only contain letters, numbers, "
     "or underscores(_) and must be at least one character long"),
    ("#!lua name=x\nredis.register_function('f3')",
     "ERR Error registering functions: ERR calling redis.register_function with a single "
     "argument is only applicable to Lua table (representing named arguments)."),
    ("#!lua name=x\nredis.register_function{function_name='g', callback=5}",
     "ERR Error registering functions: ERR callback argument given to "
     "redis.register_function must be a function"),
    ("#!lua name=x\nredis.register_function{function_name='g', callback=function() return 1 "
     "end, bogus=1}",
     "ERR Error registering functions: ERR unknown argument given to redis.register_function"),
    ("#!lua name=x\nredis.register_function{callback=function() return 1 end}",
     "ERR Error registering functions: ERR redis.register_function must get a function name "
     "argument"),
    ("#!lua name=x\nredis.register_function('g', 'notafunction')",
     "ERR Error registering functions: ERR second argument to redis.register_function must be "
     "a function"),
    # While loading, the redis table offers registration and logging, not calls or setresp.
    ("#!lua name=x\nredis.register_function('g', function() return 1 end)\nlocal x = redis.call",
     "ERR Error registering functions: ERR user_function:3: Script attempted to access "
     "nonexistent global variable 'call'"),
    ("#!lua name=x\nredis.register_function('g', function() return 1 end)\nredis.setresp(3)",
     "ERR Error registering functions: ERR user_function:3: Script attempted to access "
     "nonexistent global variable 'setresp'"),
])
def test_function_load_errors(c, code, message):
    assert c("FUNCTION", "LOAD", LIB) == b"mylib"
    assert c("FUNCTION", "LOAD", code) == err(message)
    assert len(c("FUNCTION", "LIST")) == 1


def test_function_flags_and_description(c):
    flags = ["no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"]
    lua_flags = ", ".join(f"'{f}'" for f in flags)
    assert c("FUNCTION", "LOAD", "#!lua name=flags\nredis.log(redis.LOG_NOTICE, 'loading')\n"
             "redis.register_function{function_name='f', callback=function(keys, args) "
             f"return {{#keys, #args, keys[1], args[1]}} end, flags={{{lua_flags}}}, "
             "description='all the flags'}") == b"flags"
    assert c("FUNCTION", "LIST") == [[
        b"library_name", b"flags", b"engine", b"LUA", b"functions",
        [[b"name", b"f", b"description", b"all the flags", b"flags", flags]]]]
    assert c("FCALL", "f", "1", "k", "a") == [1, 1, b"k", b"a"]
    assert c("FCALL_RO", "f", "0") == [0, 0]
    assert c("EVAL", f"#!lua flags={','.join(flags)}\nreturn 1", "0") == 1
    assert c("EVAL", "#!lua flags=\nreturn redis.call('set', 'x', 'y')", "0") == "OK"
    assert c("EVAL", "#!lua flags=no-writes,bad\nreturn 1", "0") == \
        err("ERR Unexpected flag in script shebang: bad")


def test_function_load_replace(c):
    assert c("FUNCTION", "LOAD", LIB) == b"mylib"
    assert c("FUNCTION", "LOAD", LIB) == err("ERR Library 'mylib' already exists")
    new = "#!lua name=mylib\nredis.register_function('other', function() return 'new' end)"
    assert c("FUNCTION", "LOAD", "REPLACE", new) == b"mylib"
    assert c("FCALL", "other", "0") == b"new"
    assert c("FCALL", "myfunc", "1", "k") == err("ERR Function not found")
    assert c("FUNCTION", "LOAD") == err("ERR wrong number of arguments for 'function|load' "
                                        "command")


def test_function_list(c):
    assert c("FUNCTION", "LIST") == []
    assert c("FUNCTION", "LOAD", LIB) == b"mylib"
    assert sorted_functions(c("FUNCTION", "LIST")) == [LIB_LIST]
    assert sorted_functions(c("FUNCTION", "LIST", "WITHCODE")) == [LIB_WITH_CODE]
    assert sorted_functions(c("FUNCTION", "LIST", "LIBRARYNAME", "my*")) == [LIB_LIST]
    assert sorted_functions(c("FUNCTION", "LIST", "LIBRARYNAME", "mylib", "WITHCODE")) == \
        [LIB_WITH_CODE]
    assert c("FUNCTION", "LIST", "LIBRARYNAME", "nomatch") == []
    assert c("FUNCTION", "LIST", "LIBRARYNAME") == \
        err("ERR library name argument was not given")
    assert c("FUNCTION", "LIST", "BAD") == err("ERR Unknown argument BAD")


def test_function_delete_flush_stats(c):
    assert c("FUNCTION", "STATS") == [b"running_script", None, b"engines",
                                      [b"LUA", [b"libraries_count", 0, b"functions_count", 0]]]
    assert c("FUNCTION", "LOAD", LIB) == b"mylib"
    assert c("FUNCTION", "STATS") == [b"running_script", None, b"engines",
                                      [b"LUA", [b"libraries_count", 1, b"functions_count", 4]]]
    assert c("FUNCTION", "DELETE", "nosuch") == err("ERR Library not found")
    assert c("FUNCTION", "DELETE") == \
        err("ERR wrong number of arguments for 'function|delete' command")
    assert c("FUNCTION", "DELETE", "mylib") == "OK"
    assert c("FUNCTION", "LIST") == []
    assert c("FCALL", "myfunc", "1", "k") == err("ERR Function not found")
    assert c("FUNCTION", "LOAD", LIB) == b"mylib"
    assert c("FUNCTION", "FLUSH", "ASYNC") == "OK"
    assert c("FUNCTION", "LIST") == []
    assert c("FUNCTION", "FLUSH", "BAD") == err("ERR FUNCTION FLUSH only supports SYNC|ASYNC "
                                                "option")
    assert c("FUNCTION", "KILL") == NOTBUSY
    assert c("FUNCTION", "FOO") == err("ERR unknown subcommand 'FOO'. Try FUNCTION HELP.")
    assert c("FUNCTION") == err("ERR wrong number of arguments for 'function' command")


def test_function_dump_restore(c):
    assert c("FUNCTION", "LOAD", LIB) == b"mylib"
    payload = c("FUNCTION", "DUMP")
    assert isinstance(payload, bytes)
    assert c("FUNCTION", "RESTORE", payload) == err("ERR Library mylib already exists")
    assert c("FUNCTION", "RESTORE", payload, "APPEND") == err("ERR Library mylib already exists")
    assert c("FUNCTION", "RESTORE", payload, "REPLACE") == "OK"
    assert c("FUNCTION", "RESTORE", payload, "BAD") == \
        err("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
    assert c("FUNCTION", "RESTORE", "garbage") == \
        err("ERR DUMP payload version or checksum are wrong")
    assert c("FUNCTION", "FLUSH") == "OK"
    assert c("FUNCTION", "RESTORE", payload) == "OK"
    assert sorted_functions(c("FUNCTION", "LIST", "WITHCODE")) == [LIB_WITH_CODE]
    other = "#!lua name=other\nredis.register_function('o', function() return 1 end)"
    assert c("FUNCTION", "LOAD", other) == b"other"
    assert c("FUNCTION", "RESTORE", payload, "FLUSH") == "OK"
    assert sorted_functions(c("FUNCTION", "LIST")) == [LIB_LIST]
    assert c("FCALL", "myfunc", "1", "k") == 1


def test_functions_reach_every_connection(server, c):
    others = [server.raw() for _ in range(4)]
    assert c("FUNCTION", "LOAD", "#!lua name=lib\nredis.register_function('one', "
             "function() return 1 end)") == b"lib"
    assert [o("FCALL", "one", "0") for o in others] == [1] * 4
    assert others[0]("FUNCTION", "DELETE", "lib") == "OK"
    assert [o("FCALL", "one", "0") for o in others + [c]] == [err("ERR Function not found")] * 5
