"""Lua scripting (issue 17): EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT with Redis 7.0's
exact replies and error texts; the conversions between Lua and RESP2/RESP3 both ways; errors
raised inside scripts; the sandbox and the redis API; the cjson, cmsgpack, bit and struct
libraries; script flags; the commands a script may not call; scripts inside MULTI/EXEC and
WATCH; keys a script did not declare, on several shards. FUNCTION and FCALL are in
test_functions.py, busy scripts and concurrent load in test_script_concurrency.py.

Validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis). Replies are read with the
raw client (resp_client), so error texts are compared whole, and RESP3 replies byte by byte.
"""

import time

import pytest

from helpers import err, info_fields, wait_for
from script_helpers import (KEYS_GT_ARGS, KEYS_NEGATIVE, NOSCRIPT, NOT_INTEGER, NOTBUSY,
                            RO_WRITE, keys_on_distinct_shards, script_error, sha1)

NOT_ALLOWED = "ERR This Redis command is not allowed from script"
RETURN_1_SHA = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
UNKNOWN_SHA = "f" * 40


@pytest.fixture
def c(server):
    """A raw RESP2 connection on a server whose script cache is empty."""
    conn = server.raw()
    assert conn("SCRIPT", "FLUSH") == "OK"
    return conn


# ----------------------------------------------------------------- EVAL and EVALSHA


@pytest.mark.parametrize("args, reply", [
    (("EVAL",), err("ERR wrong number of arguments for 'eval' command")),
    (("EVAL", "return 1"), err("ERR wrong number of arguments for 'eval' command")),
    (("EVALSHA", RETURN_1_SHA), err("ERR wrong number of arguments for 'evalsha' command")),
    (("EVAL_RO", "return 1"), err("ERR wrong number of arguments for 'eval_ro' command")),
    (("EVALSHA_RO", RETURN_1_SHA),
     err("ERR wrong number of arguments for 'evalsha_ro' command")),
    (("EVAL", "return 1", "2", "a"), KEYS_GT_ARGS),
    (("EVAL", "return 1", "-1"), KEYS_NEGATIVE),
    (("EVAL", "return 1", "abc"), NOT_INTEGER),
    (("EVAL", "return 1", "1.5", "k"), NOT_INTEGER),
    (("EVAL_RO", "return 1", "3", "a", "b"), KEYS_GT_ARGS),
    (("EVALSHA", UNKNOWN_SHA, "0"), NOSCRIPT),
    (("EVALSHA", "abc", "0"), NOSCRIPT),
    (("EVALSHA_RO", UNKNOWN_SHA, "0"), NOSCRIPT),
    (("EVAL", "return (", "0"),
     err("ERR Error compiling script (new function): user_script:1: unexpected symbol near "
         "'<eof>'")),
])
def test_eval_argument_errors(c, args, reply):
    assert c(*args) == reply


def test_eval_passes_keys_and_argv(c):
    assert c("EVAL", "return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}", "2", "k1",
             "k2", "a1", "a2") == [b"k1", b"k2", b"a1", b"a2", 2, 2]
    assert c("EVAL", "return {#KEYS, #ARGV}", "0") == [0, 0]
    assert c("EVAL", "return ARGV[1]", "0", b"bin\x00ary") == b"bin\x00ary"


def test_eval_calls_commands(c):
    assert c("EVAL", "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])",
             "1", "k", "v") == b"v"
    assert c("GET", "k") == b"v"
    assert c("EVAL", "return redis.call('incrby', KEYS[1], 5)", "1", "n") == 5
    assert c("EVAL", "return redis.call('ping')", "0") == "PONG"


def test_script_load_exists_and_evalsha(c):
    assert c("SCRIPT", "LOAD", "return 1") == RETURN_1_SHA.encode()
    assert c("SCRIPT", "EXISTS", RETURN_1_SHA, UNKNOWN_SHA) == [1, 0]
    assert c("EVALSHA", RETURN_1_SHA, "0") == 1
    assert c("EVALSHA", RETURN_1_SHA.upper(), "0") == 1  # Redis lower-cases the digest
    assert c("EVALSHA_RO", RETURN_1_SHA, "0") == 1
    # EVAL caches its script too.
    script = "return ARGV[1] .. '!'"
    assert c("SCRIPT", "EXISTS", sha1(script)) == [0]
    assert c("EVAL", script, "0", "hi") == b"hi!"
    assert c("SCRIPT", "EXISTS", sha1(script)) == [1]
    assert c("EVALSHA", sha1(script), "0", "yo") == b"yo!"


def test_script_cache_is_shared_by_all_connections(server, c):
    assert c("SCRIPT", "LOAD", "return 1") == RETURN_1_SHA.encode()
    # Connections land on different threads: the cache must be everywhere.
    for _ in range(4):
        other = server.raw()
        assert other("EVALSHA", RETURN_1_SHA, "0") == 1


def test_script_flush_reaches_every_connection(server, c):
    others = [server.raw() for _ in range(4)]
    c("SCRIPT", "LOAD", "return 1")
    assert [o("EVALSHA", RETURN_1_SHA, "0") for o in others] == [1] * 4
    assert others[0]("SCRIPT", "FLUSH") == "OK"
    assert [o("EVALSHA", RETURN_1_SHA, "0") for o in others + [c]] == [NOSCRIPT] * 5


def test_script_flush(c):
    c("SCRIPT", "LOAD", "return 1")
    assert c("SCRIPT", "FLUSH") == "OK"
    assert c("SCRIPT", "EXISTS", RETURN_1_SHA) == [0]
    assert c("EVALSHA", RETURN_1_SHA, "0") == NOSCRIPT
    c("SCRIPT", "LOAD", "return 1")
    assert c("SCRIPT", "FLUSH", "ASYNC") == "OK"
    assert c("SCRIPT", "EXISTS", RETURN_1_SHA) == [0]
    assert c("SCRIPT", "FLUSH", "sync") == "OK"


@pytest.mark.parametrize("args, reply", [
    (("SCRIPT",), err("ERR wrong number of arguments for 'script' command")),
    (("SCRIPT", "LOAD"), err("ERR wrong number of arguments for 'script|load' command")),
    (("SCRIPT", "EXISTS"), err("ERR wrong number of arguments for 'script|exists' command")),
    (("SCRIPT", "FLUSH", "BAD"), err("ERR SCRIPT FLUSH only support SYNC|ASYNC option")),
    (("SCRIPT", "FLUSH", "SYNC", "x"), err("ERR SCRIPT FLUSH only support SYNC|ASYNC option")),
    (("SCRIPT", "KILL"), NOTBUSY),
    (("SCRIPT", "FOO"), err("ERR unknown subcommand 'FOO'. Try SCRIPT HELP.")),
    (("SCRIPT", "LOAD", "return ("),
     err("ERR Error compiling script (new function): user_script:1: unexpected symbol near "
         "'<eof>'")),
])
def test_script_errors(c, args, reply):
    assert c(*args) == reply


# --------------------------------------------------------------- Lua -> RESP (RESP2)


@pytest.mark.parametrize("script, raw", [
    ("return 1", b":1\r\n"),
    ("return 3.99", b":3\r\n"),  # numbers truncate to integers
    ("return -3.99", b":-3\r\n"),
    ("return 0.5", b":0\r\n"),
    ("return 'str'", b"$3\r\nstr\r\n"),
    ("return 'a\\0b'", b"$3\r\na\x00b\r\n"),
    ("return true", b":1\r\n"),
    ("return false", b"$-1\r\n"),
    ("return nil", b"$-1\r\n"),
    ("return {}", b"*0\r\n"),
    ("return {foo='bar'}", b"*0\r\n"),  # only the array part is sent
    ("return {1, 2, nil, 4}", b"*2\r\n:1\r\n:2\r\n"),  # stops at the first nil
    ("return {1, false, 3}", b"*3\r\n:1\r\n$-1\r\n:3\r\n"),
    ("return {1, 'a', {2, {3}}, true}", b"*4\r\n:1\r\n$1\r\na\r\n*2\r\n:2\r\n*1\r\n:3\r\n:1\r\n"),
    ("return {ok='FINE'}", b"+FINE\r\n"),
    ("return {err='MY custom'}", b"-MY custom\r\n"),
    ("return {ok='x', err='y'}", b"-y\r\n"),
    ("return redis.status_reply('FINE')", b"+FINE\r\n"),
    ("return redis.error_reply('MY err')", b"-MY err\r\n"),
    ("return redis.error_reply('plain')", b"-ERR plain\r\n"),  # a code is added
    ("return {map={a=1}}", b"*2\r\n$1\r\na\r\n:1\r\n"),
    ("return {set={a=true}}", b"*1\r\n$1\r\na\r\n"),
    ("return {double=3.5}", b"$3\r\n3.5\r\n"),
    ("return {big_number='123456789012345678901234567890'}",
     b"$30\r\n123456789012345678901234567890\r\n"),
    ("return {verbatim_string={format='txt', string='hi'}}", b"$2\r\nhi\r\n"),
    ("redis.setresp(3) return true", b":1\r\n"),
    ("redis.setresp(3) return false", b":0\r\n"),
])
def test_lua_to_resp2(c, script, raw):
    assert c.raw_call("EVAL", script, "0") == raw


# --------------------------------------------------------------- Lua -> RESP (RESP3)


@pytest.mark.parametrize("script, raw", [
    ("return 1", b":1\r\n"),
    ("return 'str'", b"$3\r\nstr\r\n"),
    ("return true", b":1\r\n"),  # without redis.setresp(3), booleans stay RESP2's
    ("return false", b"_\r\n"),
    ("return nil", b"_\r\n"),
    ("return {1, false, 3}", b"*3\r\n:1\r\n_\r\n:3\r\n"),
    ("redis.setresp(3) return true", b"#t\r\n"),
    ("redis.setresp(3) return false", b"#f\r\n"),
    ("return {map={a=1}}", b"%1\r\n$1\r\na\r\n:1\r\n"),
    ("return {set={a=true}}", b"~1\r\n$1\r\na\r\n"),
    ("return {double=3.5}", b",3.5\r\n"),
    ("return {big_number='123456789012345678901234567890'}",
     b"(123456789012345678901234567890\r\n"),
    ("return {verbatim_string={format='txt', string='hi'}}", b"=6\r\ntxt:hi\r\n"),
    ("return {err='MY custom'}", b"-MY custom\r\n"),
    ("return {ok='FINE'}", b"+FINE\r\n"),
])
def test_lua_to_resp3(c, script, raw):
    assert c("HELLO", "3")[b"proto"] == 3
    assert c.raw_call("EVAL", script, "0") == raw


# --------------------------------------------------------------- RESP -> Lua


def test_resp2_replies_to_lua(c):
    c("HSET", "h", "f", "v")
    c("SET", "s", "x")
    assert c("EVAL", "return type(redis.call('get', 'nokey'))", "0") == b"boolean"
    assert c("EVAL", "return tostring(redis.call('get', 'nokey'))", "0") == b"false"
    assert c("EVAL", "return type(redis.call('exists', 'h'))", "0") == b"number"
    assert c("EVAL", "return redis.call('hgetall', 'h')", "0") == [b"f", b"v"]
    assert c("EVAL", "local r = redis.call('set', 'k', 'v') return type(r) .. ':' .. r.ok",
             "0") == b"table:OK"
    assert c("EVAL", "local r = redis.pcall('incr', 's') return type(r) .. ':' .. r.err",
             "0") == b"table:ERR value is not an integer or out of range"
    assert c("EVAL", "return redis.pcall('incr', 's')", "0") == NOT_INTEGER
    assert c("EVAL", "return redis.pcall('hget', 's', 'f')", "0") == \
        err("WRONGTYPE Operation against a key holding the wrong kind of value")


@pytest.mark.parametrize("value, stored", [
    ("3", b"3"), ("-7", b"-7"), ("1.5", b"1.5"), ("0.1", b"0.10000000000000001"),
    ("1e20", b"1e+20"), ("2^53", b"9007199254740992"), ("'text'", b"text"),
])
def test_lua_values_as_command_arguments(c, value, stored):
    # Numbers become strings as printf's %.17g writes them.
    assert c("EVAL", f"redis.call('set', KEYS[1], {value}) return redis.call('get', KEYS[1])",
             "1", "k") == stored


@pytest.mark.parametrize("value", ["true", "nil", "{}"])
def test_other_lua_values_are_not_command_arguments(c, value):
    script = f"return redis.call('set', 'k', {value})"
    message = "ERR Lua redis lib command arguments must be strings or integers"
    assert c("EVAL", script, "0") == script_error(message, script)
    assert c("EVAL", f"return redis.pcall('set', 'k', {value})", "0") == err(message)
    assert c("EXISTS", "k") == 0


def test_status_replies_inside_tables(c):
    c("RPUSH", "l", "a")
    assert c.raw_call("EVAL", "return {redis.call('type', 'l'), redis.call('set', 'k', 'v')}",
                      "0") == b"*2\r\n+list\r\n+OK\r\n"
    assert c("EVAL", "return redis.call('type', 'l').ok", "0") == b"list"
    assert c("EVAL", "return 2^53", "0") == 9007199254740992


def test_resp3_replies_to_lua(c):
    c("HSET", "h", "f", "v")
    c("SADD", "s", "m")
    c("ZADD", "z", "1.5", "m")
    # In RESP2 after setresp(3): maps and sets arrive as {map=...} and {set=...} tables,
    # doubles as {double=...}, null as nil; the reply is converted back for a RESP2 client.
    assert c("EVAL", "redis.setresp(3) local r = redis.call('hgetall', 'h') "
             "return {type(r), r.map.f}", "0") == [b"table", b"v"]
    assert c("EVAL", "redis.setresp(3) return tostring(redis.call('smembers', 's').set.m)",
             "0") == b"true"
    assert c("EVAL", "redis.setresp(3) return tostring(redis.call('zscore', 'z', 'm').double)",
             "0") == b"1.5"
    assert c("EVAL", "redis.setresp(3) return type(redis.call('get', 'nokey'))", "0") == b"nil"
    assert c.raw_call("EVAL", "redis.setresp(3) return redis.call('hgetall', 'h')", "0") == \
        b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
    assert c.raw_call("EVAL", "redis.setresp(3) return redis.call('zscore', 'z', 'm')",
                      "0") == b"$3\r\n1.5\r\n"
    assert c("HELLO", "3")[b"proto"] == 3
    for script, raw in [
            ("redis.setresp(3) return redis.call('hgetall', 'h')", b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n"),
            ("redis.setresp(3) return redis.call('smembers', 's')", b"~1\r\n$1\r\nm\r\n"),
            ("redis.setresp(3) return redis.call('zscore', 'z', 'm')", b",1.5\r\n"),
            ("redis.setresp(3) return redis.call('get', 'nokey')", b"_\r\n"),
            ("return redis.call('hgetall', 'h')", b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n"),
            ("redis.setresp(2) return redis.call('hgetall', 'h')", b"*2\r\n$1\r\nf\r\n$1\r\nv\r\n"),
    ]:
        assert c.raw_call("EVAL", script, "0") == raw, script


@pytest.mark.parametrize("script, message", [
    ("redis.setresp(4)", "ERR RESP version must be 2 or 3."),
    ("redis.setresp()", "ERR redis.setresp() requires one argument."),
])
def test_setresp_errors(c, script, message):
    assert c("EVAL", script, "0") == script_error(message, script)


# --------------------------------------------------------------- errors inside scripts


@pytest.mark.parametrize("script, message", [
    ("return redis.call('nosuch')", "ERR Unknown Redis command called from script"),
    ("return redis.call('get')", "ERR Wrong number of args calling Redis command from script"),
    ("return redis.call('hset', 'h', 'f')",
     "ERR Wrong number of args calling Redis command from script"),
    ("return redis.call()", "ERR Please specify at least one argument for this redis lib call"),
    ("return redis.call({})", "ERR Lua redis lib command arguments must be strings or integers"),
    ("error('boom')", "ERR user_script:1: boom"),
    ("error({err='MY custom'})", "MY custom"),
    ("error({err='nospace'})", "nospace"),
    ("return redis.sha1hex()", "ERR wrong number of arguments"),
])
def test_uncaught_errors_name_the_script_and_line(c, script, message):
    assert c("EVAL", script, "0") == script_error(message, script)


def test_error_from_a_called_command_keeps_its_text(c):
    c("SET", "s", "x")
    script = "return redis.call('incr', 's')"
    assert c("EVAL", script, "0") == script_error(NOT_INTEGER.message, script)
    script = "local x = 1\n\nreturn redis.call('incr', 's')"
    assert c("EVAL", script, "0") == script_error(NOT_INTEGER.message, script, line=3)


def test_writes_before_an_error_stay(c):
    # Redis does not roll a script back: what it wrote before failing stays written.
    c("SET", "s", "x")
    script = "redis.call('set', KEYS[1], 'written') redis.call('incr', 's') " \
             "redis.call('set', KEYS[1], 'not reached')"
    assert c("EVAL", script, "1", "a") == script_error(NOT_INTEGER.message, script)
    assert c("GET", "a") == b"written"
    # With pcall the script goes on.
    assert c("EVAL", "redis.pcall('incr', 's') redis.call('set', KEYS[1], 'after') "
             "return redis.call('get', KEYS[1])", "1", "a") == b"after"


def test_pipelined_evalsha_replies_in_order(c):
    sha = c("SCRIPT", "LOAD", "return redis.call('incr', KEYS[1]) * 1000 + tonumber(ARGV[1])")
    keys = [f"p:{i % 7}" for i in range(500)]
    c.send_many([("EVALSHA", sha, "1", k, str(i)) for i, k in enumerate(keys)])
    counts = {}
    for i, k in enumerate(keys):
        counts[k] = counts.get(k, 0) + 1
        assert c.read() == counts[k] * 1000 + i


def test_errors_on_later_lines(c):
    script = "local a = 1\nlocal b = 2\nerror('on three')"
    assert c("EVAL", script, "0") == script_error("ERR user_script:3: on three", script, 3)


@pytest.mark.parametrize("script, raw", [
    ("return redis.pcall('nosuch')", b"-ERR Unknown Redis command called from script\r\n"),
    ("return redis.pcall('get', 'k', 'extra')",
     b"-ERR Wrong number of args calling Redis command from script\r\n"),
    ("local ok, e = pcall(function() redis.call('nosuchcmd') end) return e",
     b"$44\r\nERR Unknown Redis command called from script\r\n"),
    ("local e = redis.pcall('nosuchcmd') return type(e) .. ':' .. e.err",
     b"$50\r\ntable:ERR Unknown Redis command called from script\r\n"),
    ("local ok, e = pcall(error, 'plain') return {tostring(ok), e}",
     b"*2\r\n$5\r\nfalse\r\n$5\r\nplain\r\n"),
    ("local ok, e = pcall(error, {err='CODE x'}) return e", b"$6\r\nCODE x\r\n"),
])
def test_pcall_catches_errors(c, script, raw):
    assert c.raw_call("EVAL", script, "0") == raw


# --------------------------------------------------------------- sandbox and redis API


@pytest.mark.parametrize("name", ["os", "io", "loadfile", "dofile", "require", "print",
                                  "setfenv", "getfenv", "newproxy", "debug", "nosuchvar"])
def test_sandbox_hides_globals(c, name):
    script = f"return {name}"
    assert c("EVAL", script, "0") == script_error(
        f"ERR user_script:1: Script attempted to access nonexistent global variable '{name}'",
        script)


@pytest.mark.parametrize("script", ["x = 1", "redis = nil", "_G.x = 1", "cjson = {}"])
def test_sandbox_protects_globals(c, script):
    assert c("EVAL", script, "0") == script_error(
        "ERR user_script:1: Attempt to modify a readonly table", script)


def test_sandbox_keeps_the_libraries_scripts_use(c):
    for name in ["loadstring", "string.format", "table.concat", "math.random", "tonumber",
                 "pcall", "cjson.encode", "cmsgpack.pack", "bit.band", "struct.pack",
                 "redis.sha1hex"]:
        assert c("EVAL", f"return type({name})", "0") == b"function", name
    assert c("EVAL", "return rawget(_G, 'os')", "0") is None
    assert c("EVAL", "local t = {} t.x = 1 return t.x", "0") == 1  # locals are free


def test_redis_api(c):
    assert c("EVAL", "return redis.sha1hex('')", "0") == \
        b"da39a3ee5e6b4b0d3255bfef95601890afd80709"
    assert c("EVAL", "return redis.sha1hex('return 1')", "0") == RETURN_1_SHA.encode()
    assert c("EVAL", "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, "
             "redis.LOG_WARNING}", "0") == [0, 1, 2, 3]
    assert c("EVAL", "return redis.log(redis.LOG_NOTICE, 'from a test')", "0") is None
    assert c("EVAL", "return redis.set_repl(redis.REPL_ALL)", "0") is None
    assert c("EVAL", "return redis.replicate_commands()", "0") == 1
    assert c("EVAL", "return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_REPLICA, "
             "redis.REPL_SLAVE, redis.REPL_ALL}", "0") == [0, 1, 2, 2, 3]
    assert c("EVAL", "return redis.breakpoint()", "0") is None
    assert c("EVAL", "return redis.debug('x')", "0") is None
    version = c("EVAL", "return redis.REDIS_VERSION", "0")
    assert version.startswith(b"7.")
    major, minor, patch = (int(x) for x in version.split(b"."))
    assert c("EVAL", "return redis.REDIS_VERSION_NUM", "0") == (major << 16) | (minor << 8) | patch


@pytest.mark.parametrize("script, raw", [
    ("return cjson.encode({1, 2, {a=3}})", b'$13\r\n[1,2,{"a":3}]\r\n'),
    ("return cjson.decode('[1,2,{\"a\":3}]')[3].a", b":3\r\n"),
    ("return cjson.encode(cjson.decode('{\"a\":[1,2,null]}'))", b'$16\r\n{"a":[1,2,null]}\r\n'),
    ("return type(cjson.null)", b"$8\r\nuserdata\r\n"),
    ("return cmsgpack.pack({1, 2, 3})", b"$4\r\n\x93\x01\x02\x03\r\n"),
    ("return cmsgpack.unpack(cmsgpack.pack({1, 'two', {3}}))",
     b"*3\r\n:1\r\n$3\r\ntwo\r\n*1\r\n:3\r\n"),
    ("return {cmsgpack.unpack(cmsgpack.pack(1, 'a'))}", b"*2\r\n:1\r\n$1\r\na\r\n"),
    ("return bit.band(0xff, 0x0f) .. ',' .. bit.bxor(5, 3) .. ',' .. bit.tohex(255)",
     b"$13\r\n15,6,000000ff\r\n"),
    ("return bit.lshift(1, 4)", b":16\r\n"),
    ("return struct.pack('>I2', 258)", b"$2\r\n\x01\x02\r\n"),
    ("return {struct.unpack('>I2', '\\1\\2')}", b"*2\r\n:258\r\n:3\r\n"),
    ("return struct.size('>I4')", b":4\r\n"),
])
def test_libraries(c, script, raw):
    assert c.raw_call("EVAL", script, "0") == raw


def bulk(data):
    return b"$%d\r\n%s\r\n" % (len(data), data)


# cmsgpack and struct are written here (Debian packages neither): their encodings, byte for
# byte as Redis's, and their errors.
@pytest.mark.parametrize("script, raw", [
    ("return cmsgpack.pack(0, -1, -32, -33, 127, 128, 255, 256, 65535, 65536, -129, -32769, "
     "2^32, -2^31 - 1)",
     bulk(b"\x00\xff\xe0\xd0\xdf\x7f\xcc\x80\xcc\xff\xcd\x01\x00\xcd\xff\xff"
          b"\xce\x00\x01\x00\x00\xd1\xff\x7f\xd2\xff\xff\x7f\xff"
          b"\xcf\x00\x00\x00\x01\x00\x00\x00\x00\xd3\xff\xff\xff\xff\x7f\xff\xff\xff")),
    ("return cmsgpack.pack(1.5, -0.25, 1e100)",  # float32 when exact, else float64
     bulk(b"\xca?\xc0\x00\x00\xca\xbe\x80\x00\x00\xcbT\xb2I\xad%\x94\xc3}")),
    ("return cmsgpack.pack('', 'abc', string.rep('x', 32), string.rep('y', 256))",
     bulk(b"\xa0\xa3abc\xd9\x20" + b"x" * 32 + b"\xda\x01\x00" + b"y" * 256)),
    ("return cmsgpack.pack(true, false, nil)", bulk(b"\xc3\xc2\xc0")),
    ("return cmsgpack.pack({a=1})", bulk(b"\x81\xa1a\x01")),
    ("return cmsgpack.pack({})", bulk(b"\x90")),
    ("return cmsgpack.pack({1, 2, nil, 4})", bulk(b"\x83\x01\x01\x02\x02\x04\x04")),
    ("return cmsgpack.pack({[1]=1, [3]=3})", bulk(b"\x82\x01\x01\x03\x03")),
    ("return cmsgpack.pack({1, {2, {3, {4}}}})", bulk(b"\x92\x01\x92\x02\x92\x03\x91\x04")),
    ("local t = cmsgpack.unpack(cmsgpack.pack({a=1, b={1,2}})) return {t.a, t.b[2]}",
     b"*2\r\n:1\r\n:2\r\n"),
    ("return {cmsgpack.unpack(cmsgpack.pack(1, 'two', 3.5))}",
     b"*3\r\n:1\r\n$3\r\ntwo\r\n:3\r\n"),
    ("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}", b"*2\r\n:1\r\n:1\r\n"),
    ("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}", b"*2\r\n:-1\r\n:3\r\n"),
    ("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}",
     b"*3\r\n:2\r\n:1\r\n:2\r\n"),
    ("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2, 2)}", b"*2\r\n:-1\r\n:3\r\n"),
    ("return tostring(cmsgpack.unpack(cmsgpack.pack(1.5)))", bulk(b"1.5")),
    ("return cmsgpack.unpack('\\192') == nil", b":1\r\n"),
    ("return struct.pack('<i4', -2)", bulk(b"\xfe\xff\xff\xff")),
    ("return struct.pack('>i4', -2)", bulk(b"\xff\xff\xff\xfe")),
    ("return struct.pack('b', -1) .. struct.pack('B', 255)", bulk(b"\xff\xff")),
    ("return struct.pack('<h', -2) .. struct.pack('<H', 65535)", bulk(b"\xfe\xff\xff\xff")),
    ("return struct.pack('<l', 1)", bulk(b"\x01" + b"\x00" * 7)),
    ("return struct.pack('>d', 1.5)", bulk(b"?\xf8" + b"\x00" * 6)),
    ("return struct.pack('<f', 0.5)", bulk(b"\x00\x00\x00?")),
    ("return struct.pack('s', 'ab')", bulk(b"ab\x00")),
    ("return struct.pack('c3', 'abcdef')", bulk(b"abc")),
    ("return struct.pack('c0', 'abc')", bulk(b"abc")),
    ("return struct.pack('!4 b i4', 1, 2)", bulk(b"\x01\x00\x00\x00\x02\x00\x00\x00")),
    ("return struct.pack('>I3', 65536 + 2)", bulk(b"\x01\x00\x02")),
    ("return struct.pack('x')", bulk(b"\x00")),
    ("return {struct.unpack('>i4', struct.pack('>i4', -7))}", b"*2\r\n:-7\r\n:5\r\n"),
    ("return {struct.unpack('<HB', '\\1\\2\\3')}", b"*3\r\n:513\r\n:3\r\n:4\r\n"),
    ("return {struct.unpack('s', 'ab\\0cd')}", b"*2\r\n$2\r\nab\r\n:4\r\n"),
    ("return {struct.unpack('c2', 'abcd', 2)}", b"*2\r\n$2\r\nbc\r\n:4\r\n"),
    ("return tostring(struct.unpack('>d', struct.pack('>d', 2.25)))", bulk(b"2.25")),
    ("return struct.size('<i4hd')", b":14\r\n"),
    ("return struct.size('!8 b d')", b":16\r\n"),
    ("return cjson.encode({[1]=1, a=2})", bulk(b'{"1":1,"a":2}')),
    ("return cjson.encode({1, nil, 3})", bulk(b"[1,null,3]")),
    ("return cjson.encode({a={b={c={}}}})", bulk(b'{"a":{"b":{"c":{}}}}')),
    ("return cjson.encode('a\"b\\n')", bulk(b'"a\\"b\\n"')),
    ("return cjson.encode(1.5) .. ' ' .. cjson.encode(10) .. ' ' .. cjson.encode(true)",
     bulk(b"1.5 10 true")),
    ("return cjson.encode(cjson.null)", bulk(b"null")),
    ("return bit.tobit(0xffffffff)", b":-1\r\n"),
    ("return bit.bnot(0)", b":-1\r\n"),
    ("return bit.rshift(-1, 28) .. ' ' .. bit.arshift(-256, 4) .. ' ' .. bit.rol(1, 33) .. ' ' "
     ".. bit.bswap(0x12345678)", bulk(b"15 -16 2 2018915346")),
    ("return bit.tohex(-1, 4) .. ' ' .. bit.tohex(255, -4)", bulk(b"ffff 00FF")),
    ("return bit.bor(1, 2, 4, 8)", b":15\r\n"),
])
def test_library_encodings(c, script, raw):
    assert c.raw_call("EVAL", script, "0") == raw


@pytest.mark.parametrize("script, message", [
    ("return tostring(cmsgpack.unpack('\\131'))", "ERR user_script:1: Missing bytes in input."),
    ("return cmsgpack.pack()",
     "ERR user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.)"),
    ("return struct.pack('i4', 'x')",
     "ERR user_script:1: bad argument #2 to 'pack' (number expected, got string)"),
    ("return struct.unpack('>i4', 'ab')",
     "ERR user_script:1: bad argument #2 to 'unpack' (data string too short)"),
    ("return struct.pack('z', 1)",
     "ERR user_script:1: bad argument #1 to 'pack' (invalid format option 'z')"),
    ("return cjson.decode('{bad')",
     "ERR user_script:1: Expected object key string but found invalid token at character 2"),
])
def test_library_errors(c, script, message):
    assert c("EVAL", script, "0") == script_error(message, script)


# --------------------------------------------------------------- flags and read-only


def test_shebang_no_writes(c):
    script = "#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')"
    assert c("EVAL", script, "0") == script_error(RO_WRITE, script, line=2)
    assert c("EXISTS", "a") == 0
    c("SET", "a", "v")
    assert c("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'a')", "0") == b"v"
    assert c("EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get', 'a')", "0") == b"v"
    assert c("EVAL", "#!lua\nreturn redis.call('set', 'a', 'w')", "0") == "OK"


@pytest.mark.parametrize("script, message", [
    ("#!lua flags=bad\nreturn 1", "ERR Unexpected flag in script shebang: bad"),
    ("#!lua name=x\nreturn 1", "ERR Unknown lua shebang option: name=x"),
    ("#!notlua\nreturn 1", "ERR Unexpected engine in script shebang: #!notlua"),
])
def test_shebang_errors(c, script, message):
    assert c("EVAL", script, "0") == err(message)


def test_eval_ro_refuses_writes(c):
    c("SET", "a", "v")
    script = "return redis.call('set', 'a', 'b')"
    assert c("EVAL_RO", script, "0") == script_error(RO_WRITE, script)
    assert c("GET", "a") == b"v"
    assert c("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "a") == b"v"
    sha = c("SCRIPT", "LOAD", script).decode()
    assert c("EVALSHA_RO", sha, "0") == script_error(RO_WRITE, script)
    assert c("GET", "a") == b"v"


def test_read_only_scripts_refuse_may_replicate_commands(c):
    """PUBLISH (may-replicate) counts as a write in a read-only script, as in Redis 7.0,
    so that such a script may run through CLIENT PAUSE WRITE."""
    script = "return redis.call('publish', 'ch', 'm')"
    assert c("EVAL_RO", script, "0") == script_error(RO_WRITE, script)
    flagged = "#!lua flags=no-writes\nreturn redis.call('publish', 'ch', 'm')"
    assert c("EVAL", flagged, "0") == script_error(RO_WRITE, flagged, line=2)
    assert c("EVAL", script, "0") == 0
    assert c("EVAL_RO", "return redis.call('pfcount', 'hll')", "0") == script_error(
        RO_WRITE, "return redis.call('pfcount', 'hll')")


def error_stats(c):
    stats = {name: value for name, value in info_fields(c, "errorstats").items()}
    stats["total"] = int(info_fields(c, "stats")["total_error_replies"])
    commands = info_fields(c, "commandstats")
    for name in ("set", "get", "select", "eval"):
        fields = dict(kv.split("=") for kv in commands.get(f"cmdstat_{name}", "").split(",")
                      if kv)
        stats[name] = (int(fields.get("calls", 0)), int(fields.get("rejected_calls", 0)),
                       int(fields.get("failed_calls", 0)))
    return stats


@pytest.mark.parametrize("script, reply, errors", [
    # A command's error counts once, when the command sends it, also when the script
    # returns it or catches it; EVAL fails only when its own reply is an error.
    ("return redis.call('select', 99)", "ERR DB index is out of range", {
        "errorstat_ERR": "count=1", "total": 1, "select": (1, 0, 1), "eval": (1, 0, 1)}),
    ("return redis.pcall('select', 99)", "ERR DB index is out of range", {
        "errorstat_ERR": "count=1", "total": 1, "select": (1, 0, 1), "eval": (1, 0, 1)}),
    ("redis.pcall('select', 99) return 1", 1, {
        "errorstat_ERR": "count=1", "total": 1, "select": (1, 0, 1), "eval": (1, 0, 0)}),
    # A refused call counts as the command's rejected call.
    ("return redis.call('get')", "ERR Wrong number of args calling Redis command from script", {
        "errorstat_ERR": "count=1", "total": 1, "get": (0, 1, 0), "eval": (1, 0, 1)}),
    ("redis.pcall('nosuchcommand') return 1", 1, {
        "errorstat_ERR": "count=1", "total": 1, "eval": (1, 0, 0)}),
    # The script's own errors count as EVAL's reply.
    ("return redis.error_reply('MY own')", "MY own", {
        "errorstat_MY": "count=1", "total": 1, "eval": (1, 0, 1)}),
])
def test_errors_inside_scripts_count_once(c, script, reply, errors):
    assert c("CONFIG", "RESETSTAT") == "OK"
    got = c("EVAL", script, "0")
    if isinstance(reply, str):
        assert isinstance(got, Exception) and str(got).startswith(reply), got
    else:
        assert got == reply
    stats = error_stats(c)
    for name, value in errors.items():
        assert stats[name] == value, (name, stats)
    for name in ("set", "get", "select"):
        if name not in errors:
            assert stats[name] == (0, 0, 0), (name, stats)


def test_oom_inside_a_script_is_a_rejected_call(c, server):
    admin = server.raw()
    assert c("CONFIG", "RESETSTAT") == "OK"
    try:
        assert admin("CONFIG", "SET", "maxmemory", "1") == "OK"
        # damselfly's shards publish their memory every 1/hz s.
        wait_for(lambda: isinstance(admin("SET", "oom-probe", "1"), Exception), what="OOM")
        assert c("CONFIG", "RESETSTAT") == "OK"
        script = "return redis.call('set', 'x', 'y')"
        got = c("EVAL", script, "1", "x")
        assert str(got).startswith("OOM command not allowed when used memory > 'maxmemory'.")
        stats = error_stats(c)
        assert (stats["errorstat_OOM"], stats["total"]) == ("count=1", 1), stats
        assert (stats["set"], stats["eval"]) == ((0, 1, 0), (1, 0, 1)), stats
    finally:
        admin("CONFIG", "SET", "maxmemory", "0")


@pytest.mark.parametrize("command", [
    "'multi'", "'exec'", "'discard'", "'watch', 'x'", "'unwatch'", "'eval', 'return 1', '0'",
    "'script', 'load', 'return 1'", "'function', 'list'", "'subscribe', 'x'",
    "'psubscribe', 'x'", "'monitor'", "'blpop', 'l', '0'", "'brpoplpush', 'a', 'b', '0'",
    "'blmove', 'a', 'b', 'left', 'left', '0'", "'bzpopmin', 'z', '0'",
    "'client', 'pause', '10'", "'auth', 'x'", "'hello'", "'shutdown'",
])
# (WAIT is refused too in Redis; damselfly has no WAIT yet: no replication.)
def test_commands_not_allowed_from_scripts(c, command):
    script = f"return redis.call({command})"
    assert c("EVAL", script, "0") == script_error(NOT_ALLOWED, script)


def test_blocking_commands_do_not_block_in_scripts(c):
    start = time.monotonic()
    assert c("EVAL", "return redis.call('blmpop', '0', '1', 'nolist', 'left')", "0") is None
    assert c("EVAL", "return redis.call('bzmpop', '0', '1', 'nozset', 'min')", "0") is None
    assert time.monotonic() - start < 2
    c("RPUSH", "l", "a")
    assert c("EVAL", "return redis.call('blmpop', '0', '1', KEYS[1], 'left')", "1", "l") == \
        [b"l", [b"a"]]


def test_xread_block_refused_in_scripts(c):
    commands = ["'xread', 'block', '0', 'streams', 's', '$'",
                "'xreadgroup', 'group', 'g', 'c', 'block', '0', 'streams', 's', '>'"]
    for command in commands:
        script = f"return redis.call({command})"
        name = command.split("'")[1]
        assert c("EVAL", script, "0") == script_error(
            f"ERR {name} command is not allowed with BLOCK option from scripts", script)


# --------------------------------------------------------------- transactions and keys


def test_eval_inside_multi_exec(server, c):
    a, b = keys_on_distinct_shards(server, 2, "tx")
    c("SET", a, "10")
    assert c("MULTI") == "OK"
    assert c("EVAL", "return redis.call('incrby', KEYS[1], ARGV[1])", "1", a, "5") == "QUEUED"
    assert c("SET", b, "x") == "QUEUED"
    assert c("EVAL", "return {redis.call('get', KEYS[1]), redis.call('get', KEYS[2])}", "2",
             a, b) == "QUEUED"
    sha = sha1("return redis.call('incrby', KEYS[1], ARGV[1])")
    assert c("EVALSHA", sha, "1", a, "1") == "QUEUED"
    # Keys on two shards that the script does not declare.
    assert c("EVAL", "return redis.call('incr', ARGV[1]) + #redis.call('get', ARGV[2])", "0",
             a, b) == "QUEUED"
    assert c("EXEC") == [15, "OK", [b"15", b"x"], 16, 18]


def test_script_error_inside_multi_does_not_abort_exec(c):
    c("SET", "s", "x")
    assert c("MULTI") == "OK"
    assert c("EVAL", "return redis.call('incr', 's')", "0") == "QUEUED"
    assert c("SET", "t", "1") == "QUEUED"
    assert c("EVALSHA", UNKNOWN_SHA, "0") == "QUEUED"
    reply = c("EXEC")
    assert reply[0] == script_error(NOT_INTEGER.message, "return redis.call('incr', 's')")
    assert reply[1:] == ["OK", NOSCRIPT]
    assert c("GET", "t") == b"1"


def test_eval_numkeys_is_checked_when_exec_runs_it(c):
    assert c("MULTI") == "OK"
    assert c("EVAL", "return 1", "2", "a") == "QUEUED"
    assert c("SET", "t", "1") == "QUEUED"
    assert c("EXEC") == [KEYS_GT_ARGS, "OK"]


def test_multi_exec_with_a_bad_eval_arity_is_discarded(c):
    assert c("MULTI") == "OK"
    assert c("EVAL", "return 1") == err("ERR wrong number of arguments for 'eval' command")
    assert c("EXEC") == err("EXECABORT Transaction discarded because of previous errors.")


@pytest.mark.parametrize("numkeys", ["1", "0"], ids=["declared", "undeclared"])
def test_a_script_writing_a_watched_key_aborts_exec(server, c, numkeys):
    watcher = server.raw()
    c("SET", "w", "1")
    assert watcher("WATCH", "w") == "OK"
    script = "return redis.call('incr', 'w')"
    assert c("EVAL", script, numkeys, *(["w"] if numkeys == "1" else [])) == 2
    assert watcher("MULTI") == "OK"
    assert watcher("SET", "w", "100") == "QUEUED"
    assert watcher("EXEC") is None
    assert c("GET", "w") == b"2"
    # A read-only script does not touch the watched key.
    assert watcher("WATCH", "w") == "OK"
    assert c("EVAL", "return redis.call('get', 'w')", numkeys,
             *(["w"] if numkeys == "1" else [])) == b"2"
    assert watcher("MULTI") == "OK"
    assert watcher("SET", "w", "100") == "QUEUED"
    assert watcher("EXEC") == ["OK"]


def test_undeclared_keys_across_shards(server, c):
    keys = keys_on_distinct_shards(server, 4, "undeclared")
    script = """
local total = 0
for i, k in ipairs(ARGV) do
  redis.call('set', k, i)
  total = total + redis.call('get', k)
end
return total"""
    assert c("EVAL", script, "0", *keys) == 10  # keys passed as ARGV: none declared
    assert c("MGET", *keys) == [b"1", b"2", b"3", b"4"]
    # One declared key, the rest undeclared.
    assert c("EVAL", "redis.call('incr', KEYS[1]) for _, k in ipairs(ARGV) do "
             "redis.call('incr', k) end return redis.call('get', ARGV[1])", "1", keys[0],
             *keys[1:]) == b"3"
    assert c("MGET", *keys) == [b"2", b"3", b"4", b"5"]


def test_keyspace_wide_and_multi_key_commands_inside_scripts(server, c):
    keys = keys_on_distinct_shards(server, 4, "wide")
    c("MSET", *[x for i, k in enumerate(keys) for x in (k, str(i))])
    assert c("EVAL", "return redis.call('dbsize')", "0") == 4
    assert sorted(c("EVAL", "return redis.call('keys', '*')", "0")) == sorted(
        k.encode() for k in keys)
    cursor, found = c("EVAL", "return redis.call('scan', '0', 'count', '100')", "0")
    assert cursor == b"0" and sorted(found) == sorted(k.encode() for k in keys)
    assert c("EVAL", "return redis.call('mget', unpack(ARGV))", "0", *keys) == \
        [b"0", b"1", b"2", b"3"]
    assert c("EVAL", "return redis.call('exists', unpack(ARGV))", "0", *keys, "nokey") == 4
    assert c("EVAL", "return redis.call('del', ARGV[1], ARGV[2])", "0", *keys) == 2
    assert c("EVAL", "return redis.call('dbsize')", "0") == 2
    assert c("EVAL", "redis.call('set', KEYS[1], 'x') redis.call('flushdb') "
             "return redis.call('dbsize')", "1", keys[0]) == 0
    assert c("DBSIZE") == 0


def test_sort_by_constant_of_a_set_is_sorted_inside_scripts(c):
    # A set has no order of its own: Redis sorts SORT ... BY <constant> of a set
    # lexicographically when a script calls it (and with STORE), not when a client does.
    members = ["z", "a", "aa", "b", "azz", "c"]
    c("SADD", "sortset", *members)
    assert c("EVAL", "return redis.call('sort', KEYS[1], 'by', 'nosort')", "1",
             "sortset") == [m.encode() for m in sorted(members)]
    assert c("EVAL", "return redis.call('sort', KEYS[1], 'by', 'nosort', 'desc')", "1",
             "sortset") == [m.encode() for m in sorted(members, reverse=True)]
    assert sorted(c("SORT", "sortset", "BY", "nosort")) == sorted(m.encode() for m in members)


def test_keys_do_not_expire_in_the_middle_of_a_script(server):
    # Redis 7 reads the clock once per script for expiry: a key set to live 5 ms is still
    # there after the script spent 150 ms, and gone once it returns. Neither lookups nor
    # the active expiry cycle (10 times a second) may take it meanwhile. Two connections,
    # so that on a server of two threads one runs the script on the key's thread and the
    # other from the other thread (between whose hops the key's thread is free).
    script = """
redis.call('set', KEYS[1], 'v', 'px', 5)
local t0 = redis.call('time')
local start = tonumber(t0[1]) * 1000000 + tonumber(t0[2])
while true do
  local t = redis.call('time')
  if tonumber(t[1]) * 1000000 + tonumber(t[2]) - start > 150000 then break end
end
return {redis.call('get', KEYS[1]), redis.call('exists', KEYS[1])}"""
    for _ in range(2):
        with server.raw() as c:
            assert c("EVAL", script, "1", "k") == [b"v", 1]
            wait_for(lambda: c("GET", "k") is None, timeout=2, what="the key to expire")


def test_publish_from_a_script(server, c):
    sub = server.raw()
    assert sub("SUBSCRIBE", "news") == [b"subscribe", b"news", 1]
    assert c("EVAL", "return redis.call('publish', 'news', ARGV[1])", "0", "hello") == 1
    assert sub.read() == [b"message", b"news", b"hello"]


def test_select_inside_a_script_does_not_change_the_callers_db(c):
    c("SET", "x", "db0")
    assert c("EVAL", "redis.call('select', '1') redis.call('set', 'x', 'db1') "
             "return redis.call('get', 'x')", "0") == b"db1"
    assert c("GET", "x") == b"db0"
    assert c("SELECT", "1") == "OK"
    assert c("GET", "x") == b"db1"
    assert c("EVAL", "return redis.call('get', 'x')", "0") == b"db1"  # the caller's db
    assert c("FLUSHDB") == "OK"
