"""Set commands: replies, errors and edge cases as redis-server 7.0 gives them, encodings
and their conversions, RENAME/COPY/MOVE/SCAN TYPE of sets, and SMOVE's atomicity across
shards under concurrent clients.

Encodings: damselfly keeps small sets of strings in a listpack, as Redis 7.2 does, where
Redis 7.0 says "hashtable"; small_strings() names what the target reports."""

import random
import threading
import time

import pytest

from helpers import err
from resp_client import RespSet

WRONGTYPE = err("WRONGTYPE Operation against a key holding the wrong kind of value")
SYNTAX = err("ERR syntax error")
NOT_INT = err("ERR value is not an integer or out of range")
NOT_POSITIVE = err("ERR value is out of range, must be positive")


def arity(cmd):
    return err(f"ERR wrong number of arguments for '{cmd}' command")


def small_strings(target):
    """OBJECT ENCODING of a small set of strings."""
    return "listpack" if target == "damselfly" else "hashtable"


def members(c, key):
    return sorted(c("SMEMBERS", key))


# ------------------------------------------------------------------ single-key commands


def test_sadd_srem_scard_with_redis_py(server):
    r = server.client()
    assert r.sadd("s", "a", "b", "a") == 2
    assert r.sadd("s", "b", "c") == 1
    assert r.scard("s") == 3
    assert r.smembers("s") == {b"a", b"b", b"c"}
    assert r.sismember("s", "a") is True
    assert r.sismember("s", "z") is False
    assert r.smismember("s", ["a", "z", "c"]) == [1, 0, 1]
    assert r.srem("s", "a", "z", "a") == 1
    assert r.type("s") == b"set"
    assert r.srem("s", "b", "c") == 2
    assert r.exists("s") == 0  # emptied: deleted
    assert r.scard("s") == 0
    assert r.smembers("s") == set()
    assert r.srem("s", "x") == 0


def test_binary_and_empty_members(server):
    c = server.raw()
    assert c("SADD", "s", b"", b"\x00\xff", b"a b\r\n", "-0", "007", "+1") == 6
    assert sorted(c("SMEMBERS", "s")) == sorted([b"", b"\x00\xff", b"a b\r\n", b"-0", b"007", b"+1"])
    assert c("SISMEMBER", "s", b"\x00\xff") == 1
    assert c("SISMEMBER", "s", "0") == 0
    assert c("SISMEMBER", "s", "7") == 0
    assert c("SREM", "s", b"") == 1


def test_integer_members_keep_their_text(server):
    c = server.raw()
    assert c("SADD", "s", "1", "-9223372036854775808", "9223372036854775807", "10") == 4
    assert c("OBJECT", "ENCODING", "s") == b"intset"
    assert members(c, "s") == sorted([b"1", b"-9223372036854775808", b"9223372036854775807", b"10"])
    # Non-canonical integers are strings: the set converts.
    assert c("SADD", "s", "9223372036854775808") == 1
    assert c("SISMEMBER", "s", "9223372036854775808") == 1
    assert c("SISMEMBER", "s", "01") == 0


def test_wrong_type_everywhere(server):
    c = server.raw()
    c("SET", "str", "v")
    c("SADD", "s", "a")
    for cmd in (("SADD", "str", "a"), ("SREM", "str", "a"), ("SMEMBERS", "str"),
                ("SISMEMBER", "str", "a"), ("SMISMEMBER", "str", "a"), ("SCARD", "str"),
                ("SPOP", "str"), ("SPOP", "str", "2"), ("SRANDMEMBER", "str"),
                ("SRANDMEMBER", "str", "2"), ("SSCAN", "str", "0"),
                ("SINTER", "nokey", "str"), ("SINTER", "s", "str"), ("SUNION", "s", "str"),
                ("SDIFF", "nokey", "str"), ("SINTERCARD", "2", "nokey", "str"),
                ("SINTERSTORE", "d", "nokey", "str"), ("SUNIONSTORE", "d", "str"),
                ("SDIFFSTORE", "d", "s", "str"), ("SMOVE", "str", "s", "a"),
                ("SMOVE", "s", "str", "a")):
        assert c(*cmd) == WRONGTYPE, cmd
    assert c("GET", "str") == b"v"
    assert c("EXISTS", "d") == 0
    assert c("SMEMBERS", "s") == [b"a"]


def test_arity(server):
    c = server.raw()
    for cmd in (("SADD", "s"), ("SREM", "s"), ("SMEMBERS",), ("SISMEMBER", "s"),
                ("SMISMEMBER", "s"), ("SCARD",), ("SCARD", "s", "t"), ("SPOP",),
                ("SRANDMEMBER",), ("SMOVE", "a", "b"), ("SINTER",), ("SUNION",), ("SDIFF",),
                ("SINTERSTORE", "d"), ("SUNIONSTORE", "d"), ("SDIFFSTORE", "d"),
                ("SINTERCARD", "1"), ("SSCAN", "s")):
        assert c(*cmd) == arity(cmd[0].lower()), cmd
    assert c("SPOP", "s", "1", "2") == SYNTAX
    assert c("SRANDMEMBER", "s", "1", "2") == SYNTAX


def test_spop(server):
    c = server.raw()
    assert c("SPOP", "nokey") is None
    assert c("SPOP", "nokey", "3") == []
    assert c("SPOP", "s", "-1") == NOT_POSITIVE
    assert c("SPOP", "s", "x") == NOT_POSITIVE
    assert c("SPOP", "s", "9223372036854775808") == NOT_POSITIVE
    for first in ("1", "a"):
        c("SADD", "s", first, "2", "3", "4", "5")
        popped = [c("SPOP", "s")]
        assert c("SPOP", "s", "0") == []
        popped += c("SPOP", "s", "2")
        assert c("SCARD", "s") == 2
        popped += c("SPOP", "s", "9223372036854775807")  # all that is left
        assert sorted(popped) == sorted([first.encode(), b"2", b"3", b"4", b"5"])
        assert c("EXISTS", "s") == 0


def test_spop_large_set(server):
    c = server.raw()
    all_members = [f"m{i}".encode() for i in range(1000)]
    assert c("SADD", "big", *all_members) == 1000
    popped = []
    for _ in range(9):
        popped += c("SPOP", "big", "111")
    popped += [c("SPOP", "big")]
    assert len(set(popped)) == 1000
    assert sorted(popped) == sorted(all_members)
    assert c("EXISTS", "big") == 0


def test_srandmember(server):
    c = server.raw()
    assert c("SRANDMEMBER", "nokey") is None
    assert c("SRANDMEMBER", "nokey", "3") == []
    assert c("SRANDMEMBER", "nokey", "-3") == []
    assert c("SRANDMEMBER", "s", "x") == NOT_INT
    assert c("SRANDMEMBER", "s", "-0") == NOT_INT
    c("SADD", "s", "a", "b", "c")
    assert c("SRANDMEMBER", "s", "-9223372036854775808") == err(
        "ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807")
    assert c("SRANDMEMBER", "s") in (b"a", b"b", b"c")
    assert c("SRANDMEMBER", "s", "0") == []
    two = c("SRANDMEMBER", "s", "2")
    assert len(two) == 2 and len(set(two)) == 2
    assert sorted(c("SRANDMEMBER", "s", "3")) == [b"a", b"b", b"c"]
    assert sorted(c("SRANDMEMBER", "s", "100")) == [b"a", b"b", b"c"]
    repeated = c("SRANDMEMBER", "s", "-50")
    assert len(repeated) == 50 and set(repeated) == {b"a", b"b", b"c"}
    assert c("SCARD", "s") == 3


@pytest.mark.damselfly_only
def test_srandmember_huge_negative_count_refused(server):
    """The reply is built whole before it is sent: past 2^26 repeats damselfly refuses
    (as for HRANDFIELD), where redis-server would grow its output buffer until it died."""
    c = server.raw()
    c("SADD", "s", "a")
    assert c("SRANDMEMBER", "s", str(-(2 ** 26) - 1)) == err("ERR value is out of range")
    assert c("SRANDMEMBER", "s", "-9223372036854775807") == err("ERR value is out of range")
    assert len(c("SRANDMEMBER", "s", "-1000")) == 1000


@pytest.mark.parametrize("size", [5, 300])
def test_srandmember_distinct_from_every_encoding(server, size):
    c = server.raw()
    all_members = [f"m{i}".encode() for i in range(size)]
    c("SADD", "s", *all_members)
    for count in (1, size // 10, size // 2, size - 1):
        got = c("SRANDMEMBER", "s", str(count))
        assert len(got) == count and len(set(got)) == count
        assert set(got) <= set(all_members)


def test_sscan(server):
    c = server.raw()
    assert c("SSCAN", "nokey", "0") == [b"0", []]
    # A missing key answers before the options are read, as in Redis.
    assert c("SSCAN", "nokey", "0", "COUNT", "0") == [b"0", []]
    assert c("SSCAN", "s", "x") == err("ERR invalid cursor")
    assert c("SSCAN", "s", "18446744073709551616") == err("ERR invalid cursor")
    c("SADD", "s", "a1", "a2", "b1")
    cursor, got = c("SSCAN", "s", "0", "MATCH", "a*")
    assert cursor == b"0" and sorted(got) == [b"a1", b"a2"]
    assert c("SSCAN", "s", "-1")[0] == b"0"
    assert c("SSCAN", "s", "0", "COUNT", "0") == SYNTAX
    assert c("SSCAN", "s", "0", "COUNT", "x") == NOT_INT
    assert c("SSCAN", "s", "0", "COUNT") == SYNTAX
    assert c("SSCAN", "s", "0", "TYPE", "set") == SYNTAX
    assert c("SSCAN", "s", "0", "NOVALUE") == SYNTAX


def test_sscan_large_set_returns_everything(server):
    r = server.client()
    all_members = {f"member:{i}".encode() for i in range(2000)}
    r.sadd("big", *all_members)
    seen = set()
    cursor = 0
    calls = 0
    while True:
        cursor, got = r.sscan("big", cursor, count=50)
        seen.update(got)
        calls += 1
        if cursor == 0:
            break
    assert seen == all_members
    assert calls > 5
    assert set(r.sscan_iter("big", match="member:1??")) == {
        f"member:{i}".encode() for i in range(100, 200)}


# ------------------------------------------------------------------ multi-key commands


def test_sinter_sunion_sdiff(server):
    r = server.client()
    r.sadd("a", 1, 2, 3, "x")
    r.sadd("b", 2, 3, 4)
    r.sadd("c", 3, "x", "y")
    assert r.sinter("a", "b") == {b"2", b"3"}
    assert r.sinter("a", "b", "c") == {b"3"}
    assert r.sinter("a", "nokey") == set()
    assert r.sinter("a") == {b"1", b"2", b"3", b"x"}
    assert r.sunion("a", "c", "nokey") == {b"1", b"2", b"3", b"x", b"y"}
    assert r.sunion("nokey") == set()
    assert r.sdiff("a", "b", "c") == {b"1"}
    assert r.sdiff("a", "nokey") == {b"1", b"2", b"3", b"x"}
    assert r.sdiff("nokey", "a") == set()
    assert r.sdiff("a", "a") == set()


def test_store_variants(server):
    c = server.raw()
    c("SADD", "a", "1", "2", "3", "x")
    c("SADD", "b", "3", "x", "y")
    c("SET", "d", "old", "EX", "100")
    assert c("SUNIONSTORE", "d", "a", "b") == 5
    assert members(c, "d") == [b"1", b"2", b"3", b"x", b"y"]
    assert c("TTL", "d") == -1
    assert c("SINTERSTORE", "d", "a", "b") == 2
    assert members(c, "d") == [b"3", b"x"]
    assert c("SDIFFSTORE", "d", "a", "b") == 2
    assert members(c, "d") == [b"1", b"2"]
    assert c("SDIFFSTORE", "d", "d", "a") == 0  # the destination as a source; empty: deleted
    assert c("EXISTS", "d") == 0
    c("SET", "d", "x")
    assert c("SINTERSTORE", "d", "a", "nokey") == 0
    assert c("EXISTS", "d") == 0
    assert c("SUNIONSTORE", "d", "nokey") == 0
    assert c("SUNIONSTORE", "a", "a", "b") == 5


def test_sintercard(server):
    c = server.raw()
    c("SADD", "a", "1", "2", "3", "4")
    c("SADD", "b", "2", "3", "4", "5")
    assert c("SINTERCARD", "2", "a", "b") == 3
    assert c("SINTERCARD", "2", "a", "b", "LIMIT", "2") == 2
    assert c("SINTERCARD", "2", "a", "b", "LIMIT", "0") == 3
    assert c("SINTERCARD", "2", "a", "b", "limit", "1", "LIMIT", "10") == 3
    assert c("SINTERCARD", "2", "a", "nokey") == 0
    assert c("SINTERCARD", "1", "a") == 4
    assert c("SINTERCARD", "0", "a") == err("ERR numkeys should be greater than 0")
    assert c("SINTERCARD", "-1", "a") == err("ERR numkeys should be greater than 0")
    assert c("SINTERCARD", "x", "a") == err("ERR numkeys should be greater than 0")
    assert c("SINTERCARD", "3", "a", "b") == err(
        "ERR Number of keys can't be greater than number of args")
    assert c("SINTERCARD", "9223372036854775807", "a") == err(
        "ERR Number of keys can't be greater than number of args")
    assert c("SINTERCARD", "1", "a", "LIMIT", "-1") == err("ERR LIMIT can't be negative")
    assert c("SINTERCARD", "1", "a", "LIMIT", "x") == err("ERR LIMIT can't be negative")
    assert c("SINTERCARD", "1", "a", "LIMIT") == SYNTAX
    assert c("SINTERCARD", "1", "a", "b") == SYNTAX


def test_smove(server):
    c = server.raw()
    c("SADD", "src", "1", "2", "x")
    c("SADD", "dst", "3")
    c("SET", "str", "v")
    assert c("SMOVE", "nokey", "str", "1") == 0  # a missing source answers before types
    assert c("SMOVE", "src", "str", "9") == WRONGTYPE
    assert c("SMOVE", "src", "src", "1") == 1
    assert c("SMOVE", "src", "src", "9") == 0
    assert c("SMOVE", "src", "dst", "9") == 0
    assert c("SMOVE", "src", "dst", "1") == 1
    assert members(c, "src") == [b"2", b"x"]
    assert members(c, "dst") == [b"1", b"3"]
    c("SADD", "dst", "2")
    assert c("SMOVE", "src", "dst", "2") == 1  # already there: it still leaves the source
    assert members(c, "src") == [b"x"]
    assert c("SMOVE", "src", "new", "x") == 1
    assert c("EXISTS", "src") == 0
    assert members(c, "new") == [b"x"]
    assert c("OBJECT", "ENCODING", "new") == small_strings(server.target).encode()
    assert c("SMOVE", "dst", "new", "1") == 1
    assert c("OBJECT", "ENCODING", "new") == small_strings(server.target).encode()


def test_resp3_reply_types(server):
    c = server.raw()
    c("HELLO", "3")
    c("SADD", "a", "1", "2")
    c("SADD", "b", "2")
    for cmd in (("SMEMBERS", "a"), ("SMEMBERS", "nokey"), ("SINTER", "a", "b"),
                ("SUNION", "a", "b"), ("SDIFF", "a", "b"), ("SPOP", "nokey", "1"),
                ("SPOP", "a", "0")):
        assert isinstance(c(*cmd), RespSet), cmd
    assert c.raw_call("SMEMBERS", "b") == b"~1\r\n$1\r\n2\r\n"
    assert c.raw_call("SRANDMEMBER", "b", "1") == b"*1\r\n$1\r\n2\r\n"
    assert c.raw_call("SSCAN", "b", "0") == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\n2\r\n"
    assert c.raw_call("SPOP", "b", "5") == b"~1\r\n$1\r\n2\r\n"
    assert c.raw_call("SPOP", "b") == b"_\r\n"


# ------------------------------------------------------------------ encodings


def test_encodings_and_conversions(server):
    c = server.raw()
    c("SADD", "ints", *[str(i) for i in range(512)])
    assert c("OBJECT", "ENCODING", "ints") == b"intset"
    c("SADD", "ints", "512")
    assert c("OBJECT", "ENCODING", "ints") == b"hashtable"
    c("SADD", "strs", "a", "b")
    assert c("OBJECT", "ENCODING", "strs") == small_strings(server.target).encode()
    c("SADD", "mixed", "1", "2")
    c("SADD", "mixed", "a")
    assert c("OBJECT", "ENCODING", "mixed") == small_strings(server.target).encode()
    c("SADD", "long", "x" * 65)
    assert c("OBJECT", "ENCODING", "long") == b"hashtable"


def test_conversion_thresholds_with_config_set(server):
    c = server.raw()
    # set-max-listpack-* are Redis 7.2's; 7.0 has only the intset threshold.
    names = ["set-max-intset-entries"]
    if server.target == "damselfly":
        names += ["set-max-listpack-entries", "set-max-listpack-value"]
    saved = {k: c("CONFIG", "GET", k)[1] for k in names}
    try:
        assert c("CONFIG", "SET", "set-max-intset-entries", "4") == "OK"
        c("SADD", "i", "1", "2", "3", "4")
        assert c("OBJECT", "ENCODING", "i") == b"intset"
        c("SADD", "i", "4")
        assert c("OBJECT", "ENCODING", "i") == b"intset"
        c("SADD", "i", "5")
        assert c("OBJECT", "ENCODING", "i") == b"hashtable"
        c("SREM", "i", "1", "2", "3", "4")
        assert c("OBJECT", "ENCODING", "i") == b"hashtable"  # never converts back
        # A STORE builds its result fresh.
        assert c("SUNIONSTORE", "r", "i") == 1
        assert c("OBJECT", "ENCODING", "r") == b"intset"
        if server.target == "damselfly":
            assert c("CONFIG", "SET", "set-max-listpack-entries", "3") == "OK"
            assert c("CONFIG", "SET", "set-max-listpack-value", "5") == "OK"
            c("SADD", "l", "a", "bb", "12345")
            assert c("OBJECT", "ENCODING", "l") == b"listpack"
            c("SADD", "l", "d")
            assert c("OBJECT", "ENCODING", "l") == b"hashtable"
            c("SADD", "v", "abcdef")
            assert c("OBJECT", "ENCODING", "v") == b"hashtable"
    finally:
        for k, v in saved.items():
            c("CONFIG", "SET", k, v)


# ------------------------------------------------------------------ generic commands


def test_type_scan_memory_usage(server):
    c = server.raw()
    c("SADD", "s1", "a")
    c("SADD", "s2", "1")
    c("SET", "str", "v")
    assert c("TYPE", "s1") == "set"
    cursor, keys = c("SCAN", "0", "TYPE", "set", "COUNT", "100")
    assert cursor == b"0" and sorted(keys) == [b"s1", b"s2"]
    small = c("MEMORY", "USAGE", "s1")
    c("SADD", "s1", *[f"member:{i}" for i in range(1000)])
    assert c("MEMORY", "USAGE", "s1") > small + 1000 * 8


@pytest.mark.parametrize("kind", ["intset", "listpack", "hashtable"])
def test_rename_copy_move(server, kind):
    c = server.raw()
    content = {"intset": ["1", "2", "3"], "listpack": ["a", "1"],
               "hashtable": [f"m{i}" for i in range(300)]}[kind]
    c("SADD", "s", *content)
    expected = sorted(m.encode() for m in content)
    encoding = c("OBJECT", "ENCODING", "s")
    # Keys chosen to fall on different shards too (damselfly places keys by hash).
    for other in ("t", "other:1", "other:2", "other:3"):
        assert c("COPY", "s", other) == 1
        assert members(c, other) == expected
        assert c("OBJECT", "ENCODING", other) == encoding
        assert c("RENAME", other, other + ":r") == "OK"
        assert members(c, other + ":r") == expected
        assert c("SADD", other + ":r", "new") == 1  # an independent copy
    assert c("SISMEMBER", "s", "new") == 0
    assert c("MOVE", "s", "1") == 1
    c("SELECT", "1")
    assert members(c, "s") == expected
    assert c("OBJECT", "ENCODING", "s") == encoding


def test_multi_exec(server):
    c = server.raw()
    c("SADD", "a", "1", "2")
    c("SADD", "b", "2", "3")
    assert c("MULTI") == "OK"
    assert c("SMOVE", "a", "b", "1") == "QUEUED"
    assert c("SINTERSTORE", "c", "a", "b") == "QUEUED"
    assert c("SCARD", "b") == "QUEUED"
    assert c("EXEC") == [1, 1, 3]
    assert members(c, "c") == [b"2"]


# ------------------------------------------------------------------ atomicity


def test_smove_atomic_under_concurrent_clients(server):
    """16 clients SMOVE members among 8 sets (spread over the shards) for ~2 s while 4
    readers check, each in one MULTI/EXEC, that the SCARDs sum to the total and that the
    SUNION of all 8 holds every member once."""
    keys = [f"set:{i}" for i in range(8)]
    total = 400
    setup = server.client()
    for i in range(total):
        setup.sadd(keys[i % 8], f"m{i}")
    expected_members = {f"m{i}".encode() for i in range(total)}
    stop = threading.Event()
    errors = []
    moves = [0]
    checks = [0]

    def mover(seed):
        rng = random.Random(seed)
        r = server.client()
        try:
            while not stop.is_set():
                pipe = r.pipeline(transaction=False)
                for _ in range(8):
                    src, dst = rng.sample(keys, 2)
                    pipe.smove(src, dst, f"m{rng.randrange(total)}")
                pipe.execute()
                moves[0] += 8
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    def reader():
        r = server.client()
        try:
            while not stop.is_set():
                pipe = r.pipeline(transaction=True)
                for k in keys:
                    pipe.scard(k)
                pipe.sunion(*keys)
                replies = pipe.execute()
                if sum(replies[:8]) != total:
                    errors.append(f"SCARDs sum to {sum(replies[:8])}")
                if replies[8] != expected_members:
                    errors.append(f"SUNION has {len(replies[8])} members")
                checks[0] += 1
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=mover, args=(i,)) for i in range(16)]
    threads += [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(2.0)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert moves[0] > 100 and checks[0] > 10
    assert sum(setup.scard(k) for k in keys) == total
    assert set().union(*(setup.smembers(k) for k in keys)) == expected_members
