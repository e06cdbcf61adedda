"""Hash commands with Redis 7.0's exact replies, error texts and encodings."""

import socket
import time

import pytest

from helpers import err

SYNTAX = err("ERR syntax error")
NOT_INT = err("ERR value is not an integer or out of range")
NOT_FLOAT = err("ERR value is not a valid float")
HASH_NOT_INT = err("ERR hash value is not an integer")
HASH_NOT_FLOAT = err("ERR hash value is not a float")
OVERFLOW = err("ERR increment or decrement would overflow")
OUT_OF_RANGE = err("ERR value is out of range")
LONG_RANGE = err("ERR value is out of range, value must between -9223372036854775807 and "
                 "9223372036854775807")
WRONGTYPE = err("WRONGTYPE Operation against a key holding the wrong kind of value")


def arity(cmd):
    return err(f"ERR wrong number of arguments for '{cmd}' command")


@pytest.fixture
def limits(server):
    """Restores the listpack limits a test changes."""
    c = server.raw()
    yield c
    c("CONFIG", "SET", "hash-max-listpack-entries", "512")
    c("CONFIG", "SET", "hash-max-listpack-value", "64")


def encoding(c, key):
    return c("OBJECT", "ENCODING", key)


def test_hset_hget_hmset_hmget(server):
    c = server.raw()
    assert c("HSET", "h", "a", "1", "b", "2") == 2
    assert c("HSET", "h", "a", "x", "c", "3") == 1
    assert c.raw_call("HGET", "h", "a") == b"$1\r\nx\r\n"
    assert c.raw_call("HGET", "h", "zz") == b"$-1\r\n"
    assert c.raw_call("HGET", "missing", "a") == b"$-1\r\n"
    assert c("HMSET", "h", "d", "4", "e", "5") == "OK"
    assert c("HMGET", "h", "a", "zz", "e") == [b"x", None, b"5"]
    assert c("HMGET", "missing", "a") == [None]
    assert c("HLEN", "h") == 5
    assert c("HLEN", "missing") == 0
    assert c("TYPE", "h") == "hash"
    assert c("HSET", "h", "a") == arity("hset")
    assert c("HSET", "h", "a", "1", "b") == arity("hset")
    assert c("HSET", "h") == arity("hset")
    assert c("HMSET", "h", "a", "1", "b") == arity("hmset")
    assert c("HGET", "h") == arity("hget")
    assert c("HMGET", "h") == arity("hmget")
    assert c("HLEN") == arity("hlen")


def test_binary_fields_and_values(server):
    c = server.raw()
    field, value = b"f\x00\xff\r\n", b"\x00v\r\n\xfe"
    assert c("HSET", "h", field, value, b"", b"") == 2
    assert c("HGET", "h", field) == value
    assert c("HGET", "h", b"") == b""
    assert c("HEXISTS", "h", b"f") == 0
    assert sorted(c("HKEYS", "h")) == sorted([field, b""])
    assert c("HSTRLEN", "h", field) == len(value)


def test_wrongtype(server):
    c = server.raw()
    c("SET", "s", "v")
    for cmd in (["HSET", "s", "a", "1"], ["HSETNX", "s", "a", "1"], ["HGET", "s", "a"],
                ["HMGET", "s", "a"], ["HMSET", "s", "a", "1"], ["HDEL", "s", "a"], ["HLEN", "s"],
                ["HEXISTS", "s", "a"], ["HSTRLEN", "s", "a"], ["HINCRBY", "s", "a", "1"],
                ["HINCRBYFLOAT", "s", "a", "1"], ["HKEYS", "s"], ["HVALS", "s"],
                ["HGETALL", "s"], ["HRANDFIELD", "s"], ["HRANDFIELD", "s", "1"],
                ["HSCAN", "s", "0"]):
        assert c(*cmd) == WRONGTYPE, cmd
    c("HSET", "h", "a", "1")
    assert c("GET", "h") == WRONGTYPE
    assert c("INCR", "h") == WRONGTYPE


def test_hsetnx_hexists_hstrlen(server):
    c = server.raw()
    assert c("HSETNX", "h", "a", "1") == 1
    assert c("HSETNX", "h", "a", "2") == 0
    assert c("HGET", "h", "a") == b"1"
    assert c("HSETNX", "h", "a") == arity("hsetnx")
    assert c("HEXISTS", "h", "a") == 1
    assert c("HEXISTS", "h", "b") == 0
    assert c("HEXISTS", "missing", "b") == 0
    c("HSET", "h", "n", "-9223372036854775808", "s", "hello")
    assert c("HSTRLEN", "h", "n") == 20
    assert c("HSTRLEN", "h", "s") == 5
    assert c("HSTRLEN", "h", "x") == 0
    assert c("HSTRLEN", "missing", "x") == 0


def test_hdel_deletes_emptied_hash(server, limits):
    c = server.raw()
    c("HSET", "h", "a", "1", "b", "2")
    assert c("HDEL", "h", "a", "a", "zz") == 1
    assert c("HDEL", "missing", "a") == 0
    assert c("HDEL", "h") == arity("hdel")
    assert c("HDEL", "h", "b") == 1
    assert c("EXISTS", "h") == 0
    c("CONFIG", "SET", "hash-max-listpack-entries", "2")
    c("HSET", "t", "a", "1", "b", "2", "c", "3")
    assert encoding(c, "t") == b"hashtable"
    assert c("HDEL", "t", "a", "b", "c", "d") == 3
    assert c("EXISTS", "t") == 0


def test_hincrby(server):
    c = server.raw()
    assert c("HINCRBY", "h", "a", "5") == 5
    assert c("HINCRBY", "h", "a", "-7") == -2
    assert c("HINCRBY", "h", "a", "x") == NOT_INT
    assert c("HINCRBY", "h", "a", "1.5") == NOT_INT
    assert c("HINCRBY", "h", "a", "9223372036854775808") == NOT_INT
    c("HSET", "h", "s", "abc", "sp", " 1", "max", "9223372036854775806", "min",
      "-9223372036854775807")
    assert c("HINCRBY", "h", "s", "1") == HASH_NOT_INT
    assert c("HINCRBY", "h", "sp", "1") == HASH_NOT_INT
    assert c("HINCRBY", "h", "max", "1") == 9223372036854775807
    assert c("HINCRBY", "h", "max", "1") == OVERFLOW
    assert c("HINCRBY", "h", "min", "-1") == -9223372036854775808
    assert c("HINCRBY", "h", "min", "-1") == OVERFLOW
    assert c("HINCRBY", "h", "a") == arity("hincrby")
    assert c("HINCRBY", "new", "a", "x") == NOT_INT
    assert c("EXISTS", "new") == 0


def test_hincrbyfloat(server):
    c = server.raw()
    assert c("HINCRBYFLOAT", "h", "a", "10.5") == b"10.5"
    assert c("HINCRBYFLOAT", "h", "a", "0.1") == b"10.6"
    assert c("HINCRBYFLOAT", "h", "b", "5.0e3") == b"5000"
    assert c("HINCRBYFLOAT", "h", "c", "1e20") == b"100000000000000000000"
    assert c("HINCRBYFLOAT", "h", "d", "1.5e-10") == b"0.00000000015"
    assert c("HINCRBYFLOAT", "h", "e", "0x10") == b"16"
    assert c("HINCRBYFLOAT", "h", "a", "inf") == err("ERR value is NaN or Infinity")
    assert c("HINCRBYFLOAT", "h", "a", "-inf") == err("ERR value is NaN or Infinity")
    assert c("HINCRBYFLOAT", "h", "a", "nan") == NOT_FLOAT
    assert c("HINCRBYFLOAT", "h", "a", " 1") == NOT_FLOAT
    assert c("HINCRBYFLOAT", "h", "a", "1 ") == NOT_FLOAT
    c("HSET", "h", "s", "abc", "sp", " 2", "big", "1e308")
    assert c("HINCRBYFLOAT", "h", "s", "1") == HASH_NOT_FLOAT
    assert c("HINCRBYFLOAT", "h", "sp", "1") == HASH_NOT_FLOAT
    assert c("HINCRBYFLOAT", "h", "big", "1e308").startswith(b"199999999999999999993")
    # 1e308 as a long double doubles again; 1e4932 overflows even that.
    c("HSET", "h", "huge", "1e4932")
    assert c("HINCRBYFLOAT", "h", "huge", "1e4932") == err(
        "ERR increment would produce NaN or Infinity")
    assert c("HINCRBYFLOAT", "h", "a") == arity("hincrbyfloat")


def test_hkeys_hvals_hgetall(server):
    c = server.raw()
    c("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert c("HGETALL", "h") == [b"a", b"1", b"b", b"2", b"c", b"3"]
    assert c("HKEYS", "h") == [b"a", b"b", b"c"]
    assert c("HVALS", "h") == [b"1", b"2", b"3"]
    assert c("HGETALL", "missing") == []
    assert c("HKEYS", "missing") == []
    assert c("HVALS", "missing") == []
    c("HELLO", "3")
    assert c("HGETALL", "h") == {b"a": b"1", b"b": b"2", b"c": b"3"}
    assert c.raw_call("HGETALL", "missing") == b"%0\r\n"


def test_hgetall_hashtable(server, limits):
    c = server.raw()
    c("CONFIG", "SET", "hash-max-listpack-entries", "10")
    pairs = {f"f{i}".encode(): f"v{i}".encode() for i in range(100)}
    c("HSET", "h", *[x for kv in pairs.items() for x in kv])
    assert encoding(c, "h") == b"hashtable"
    flat = c("HGETALL", "h")
    assert dict(zip(flat[::2], flat[1::2])) == pairs
    assert sorted(c("HKEYS", "h")) == sorted(pairs)
    assert sorted(c("HVALS", "h")) == sorted(pairs.values())


def test_hrandfield_errors_and_empty(server):
    c = server.raw()
    assert c("HRANDFIELD", "missing") is None
    assert c("HRANDFIELD", "missing", "3") == []
    assert c("HRANDFIELD", "missing", "x") == NOT_INT
    assert c("HRANDFIELD") == arity("hrandfield")
    c("HSET", "h", "a", "1", "b", "2", "c", "3")
    assert c("HRANDFIELD", "h", "1", "foo") == SYNTAX
    assert c("HRANDFIELD", "h", "1", "WITHVALUES", "x") == SYNTAX
    assert c("HRANDFIELD", "h", "-9223372036854775808") == LONG_RANGE
    assert c("HRANDFIELD", "h", "-9223372036854775808", "WITHVALUES") == LONG_RANGE
    assert c("HRANDFIELD", "h", "-9223372036854770000", "WITHVALUES") == OUT_OF_RANGE
    assert c("HRANDFIELD", "h", "9223372036854775807", "WITHVALUES") == OUT_OF_RANGE
    assert c("HRANDFIELD", "h", "4611686018427387904", "WITHVALUES") == OUT_OF_RANGE
    assert len(c("HRANDFIELD", "h", "4611686018427387903", "WITHVALUES")) == 6
    assert c("HRANDFIELD", "h", "9223372036854775808") == NOT_INT
    assert c("HRANDFIELD", "h", "0") == []
    assert c("HRANDFIELD", "h", "0", "withvalues") == []


@pytest.mark.parametrize("entries", ["512", "2"])
def test_hrandfield_counts(server, limits, entries):
    c = server.raw()
    c("CONFIG", "SET", "hash-max-listpack-entries", entries)
    fields = {f"f{i}".encode(): f"{i}".encode() for i in range(20)}
    c("HSET", "h", *[x for kv in fields.items() for x in kv])
    assert c("HRANDFIELD", "h") in fields
    # Positive counts give distinct fields, at most the whole hash.
    for count in (1, 5, 15, 19, 20, 1000, 9223372036854775807):
        got = c("HRANDFIELD", "h", str(count))
        assert len(got) == min(count, 20) and len(set(got)) == len(got)
        assert set(got) <= set(fields)
    # Negative counts repeat.
    got = c("HRANDFIELD", "h", "-100")
    assert len(got) == 100 and set(got) <= set(fields)
    flat = c("HRANDFIELD", "h", "-50", "WITHVALUES")
    assert len(flat) == 100
    assert all(fields[f] == v for f, v in zip(flat[::2], flat[1::2]))
    flat = c("HRANDFIELD", "h", "7", "WITHVALUES")
    assert len(flat) == 14 and len(set(flat[::2])) == 7
    # Every field comes up.
    seen = set(c("HRANDFIELD", "h", "-2000"))
    assert seen == set(fields)
    # RESP3: pairs as two-element arrays.
    c("HELLO", "3")
    pairs = c("HRANDFIELD", "h", "-5", "WITHVALUES")
    assert len(pairs) == 5 and all(len(p) == 2 and fields[p[0]] == p[1] for p in pairs)
    pairs = c("HRANDFIELD", "h", "30", "WITHVALUES")
    assert len(pairs) == 20
    assert c("HRANDFIELD", "h", "3")[0] in fields


def test_hscan_listpack_returns_all_at_once(server):
    c = server.raw()
    c("HSET", "h", "a", "1", "b", "2", "ab", "3")
    assert c("HSCAN", "h", "0") == [b"0", [b"a", b"1", b"b", b"2", b"ab", b"3"]]
    assert c("HSCAN", "h", "0", "COUNT", "1") == [b"0", [b"a", b"1", b"b", b"2", b"ab", b"3"]]
    assert c("HSCAN", "h", "0", "MATCH", "a*") == [b"0", [b"a", b"1", b"ab", b"3"]]
    assert c("HSCAN", "h", "x") == err("ERR invalid cursor")
    assert c("HSCAN", "h", "0", "COUNT", "0") == SYNTAX
    assert c("HSCAN", "h", "0", "COUNT", "x") == NOT_INT
    assert c("HSCAN", "h", "0", "TYPE", "hash") == SYNTAX
    assert c("HSCAN", "h", "0", "MATCH") == SYNTAX
    assert c("HSCAN", "missing", "0") == [b"0", []]
    assert c("HSCAN", "missing", "0", "COUNT", "x") == [b"0", []]
    assert c("HSCAN", "h") == arity("hscan")


def test_hscan_hashtable_visits_everything(server, limits):
    c = server.raw()
    c("CONFIG", "SET", "hash-max-listpack-entries", "16")
    for i in range(0, 3000, 500):
        c("HSET", "h", *[x for j in range(i, i + 500) for x in (f"f{j}", "v")])
    assert encoding(c, "h") == b"hashtable"
    seen, cursor, calls = set(), b"0", 0
    while True:
        cursor, items = c("HSCAN", "h", cursor, "COUNT", "100")
        seen.update(items[::2])
        calls += 1
        if cursor == b"0":
            break
    assert len(seen) == 3000 and calls > 5
    _, items = c("HSCAN", "h", "0", "MATCH", "f1*", "COUNT", "100000")
    assert set(items[::2]) == {f.encode() for f in (f"f{j}" for j in range(3000))
                               if f.startswith("f1")}


def test_hscan_survives_growth_and_shrink(server, limits):
    """Fields present for the whole scan come back even as the table grows and shrinks."""
    c = server.raw()
    c("CONFIG", "SET", "hash-max-listpack-entries", "16")
    c("HSET", "h", *[x for j in range(1000) for x in (f"stable{j}", "v")])
    seen, cursor, step = set(), b"0", 0
    while True:
        cursor, items = c("HSCAN", "h", cursor, "COUNT", "20")
        seen.update(items[::2])
        if step % 3 == 0:
            c("HSET", "h", *[x for j in range(300) for x in (f"tmp{step}_{j}", "v")])
        elif step % 3 == 2:
            c("HDEL", "h", *[f"tmp{s}_{j}" for s in range(step) for j in range(300)])
        step += 1
        if cursor == b"0":
            break
    assert {f"stable{j}".encode() for j in range(1000)} <= seen


def test_conversion_thresholds(server, limits):
    c = server.raw()
    c("CONFIG", "SET", "hash-max-listpack-entries", "4")
    c("CONFIG", "SET", "hash-max-listpack-value", "8")
    c("HSET", "h", "1", "a", "2", "b", "3", "c", "4", "d")
    assert encoding(c, "h") == b"listpack"
    c("HSET", "h", "4", "updated")
    assert encoding(c, "h") == b"listpack"
    c("HSET", "h", "5", "e")
    assert encoding(c, "h") == b"hashtable"
    c("HDEL", "h", "1", "2", "3", "4")
    assert encoding(c, "h") == b"hashtable"
    assert c("HGETALL", "h") == [b"5", b"e"]
    # Value length: 8 bytes stay, 9 convert; fields too.
    c("HSET", "v", "f", "12345678")
    assert encoding(c, "v") == b"listpack"
    c("HSET", "v", "g", "123456789")
    assert encoding(c, "v") == b"hashtable"
    c("HSET", "w", "123456789", "x")
    assert encoding(c, "w") == b"hashtable"
    # HSETNX of an existing field converts nothing; of a new one it does.
    c("HSET", "n", "f", "1")
    assert c("HSETNX", "n", "f", "123456789") == 0
    assert encoding(c, "n") == b"listpack"
    assert c("HSETNX", "n", "g", "123456789") == 1
    assert encoding(c, "n") == b"hashtable"
    # HINCRBY with a long field converts; HINCRBYFLOAT's short results do not.
    c("HINCRBY", "i", "123456789", "1")
    assert encoding(c, "i") == b"hashtable"
    c("HINCRBYFLOAT", "j", "f", "1.5")
    assert encoding(c, "j") == b"listpack"
    # Raising the limits later does not convert back.
    c("CONFIG", "SET", "hash-max-listpack-entries", "512")
    c("HSET", "h", "6", "f")
    assert encoding(c, "h") == b"hashtable"
    # The *-ziplist-* aliases set the same limits.
    c("CONFIG", "SET", "hash-max-ziplist-entries", "1")
    c("HSET", "z", "a", "1", "b", "2")
    assert encoding(c, "z") == b"hashtable"


def test_rename_copy_move_memory_usage_scan_type(server):
    c = server.raw()
    c("HSET", "h", "a", "1", "b", "2")
    c("SET", "s", "v")
    assert c("SCAN", "0", "TYPE", "hash", "COUNT", "1000") == [b"0", [b"h"]]
    assert c("MEMORY", "USAGE", "h") > 0
    assert c("RENAME", "h", "h2") == "OK"
    assert c("HGETALL", "h2") == [b"a", b"1", b"b", b"2"]
    assert c("COPY", "h2", "h3") == 1
    c("HSET", "h3", "c", "3")
    assert c("HLEN", "h2") == 2
    assert c("HLEN", "h3") == 3
    c("HSET", "h3", "long", "x" * 100)
    assert encoding(c, "h3") == b"hashtable"
    for i in range(10):  # keys on every shard
        assert c("COPY", "h3", f"copy{i}") == 1
        assert c("HGET", f"copy{i}", "long") == b"x" * 100
        assert encoding(c, f"copy{i}") == b"hashtable"
        assert c("RENAME", f"copy{i}", f"renamed{i}") == "OK"
        assert c("HLEN", f"renamed{i}") == 4
    assert c("MOVE", "h3", "1") == 1
    c("SELECT", "1")
    assert c("HGET", "h3", "c") == b"3"
    assert c("TYPE", "h3") == "hash"


def test_redis_py_client(server):
    r = server.client()
    assert r.hset("h", mapping={"a": 1, "b": "x"}) == 2
    assert r.hgetall("h") == {b"a": b"1", b"b": b"x"}
    assert r.hincrby("h", "a", 2) == 3
    assert r.hincrbyfloat("h", "f", 0.5) == 0.5
    assert r.hkeys("h") == [b"a", b"b", b"f"]
    assert r.hexists("h", "b")
    assert r.hdel("h", "a", "b", "f") == 3
    assert not r.exists("h")


def test_declared_huge_argument_refused_cleanly(server):
    """An HSET that announces a 512 MiB + 1 value is refused as Redis refuses it, and the
    connection and server stay usable."""
    s = socket.create_connection((server.host, server.port))
    try:
        s.sendall(b"*4\r\n$4\r\nHSET\r\n$1\r\nh\r\n$1\r\nf\r\n$536870913\r\n")
        s.settimeout(5)
        reply = s.recv(1000)
        assert reply.startswith(b"-ERR Protocol error: invalid bulk length")
    finally:
        s.close()
    c = server.raw()
    assert c("PING") == "PONG"
    assert c("EXISTS", "h") == 0


@pytest.mark.damselfly_only
def test_memcache_commands_on_a_hash_key(mc_server):
    """A hash key seen from the memcached port: get answers as a miss, writes that would
    read the value as a string refuse, set replaces it; nothing crashes."""
    r = mc_server.client()
    r.hset("h", "f", "v")
    mc = mc_server.mc_raw()
    assert mc.call(b"get h\r\n") == b"END\r\n"
    assert mc.call(b"gets h\r\n") == b"END\r\n"
    assert mc.call(b"append h 0 0 1\r\nx\r\n") == b"NOT_STORED\r\n"
    assert mc.call(b"incr h 1\r\n") == b"NOT_FOUND\r\n"
    assert r.type("h") == b"hash"
    assert mc.call(b"set h 0 0 1\r\nx\r\n") == b"STORED\r\n"
    assert r.get("h") == b"x"
