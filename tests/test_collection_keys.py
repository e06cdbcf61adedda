"""What every collection type shares with the rest of the keyspace: TYPE, OBJECT ENCODING,
SCAN ... TYPE, MEMORY USAGE, RENAME/COPY/MOVE across shards, FLUSHDB, and
DEBUG POPULATE's TYPE option (damselfly's) with DEBUG OBJECT. Validated against redis-server 7.0 where
Redis has the behaviour (DAMSELFLY_TEST_TARGET=redis)."""

import pytest

from helpers import err


def fill_all_types(c, suffix=""):
    c.set("str" + suffix, "v")
    c.rpush("list" + suffix, "a", "b", "c")
    c.hset("hash" + suffix, mapping={"f": "v", "g": "w"})
    c.sadd("iset" + suffix, 1, 2, 3)
    c.sadd("sset" + suffix, "a", "b")
    c.zadd("zset" + suffix, {"a": 1, "b": 2.5})


def test_type_encoding_and_scan_type(server, target):
    c = server.client()
    fill_all_types(c)
    assert [c.type(k) for k in ("str", "list", "hash", "iset", "sset", "zset")] == \
        [b"string", b"list", b"hash", b"set", b"set", b"zset"]
    assert c.object("encoding", "list") == b"quicklist"
    assert c.object("encoding", "hash") == b"listpack"
    assert c.object("encoding", "iset") == b"intset"
    # Redis 7.0 keeps small sets of strings in a hash table; damselfly (as Redis 7.2) in
    # a listpack.
    assert c.object("encoding", "sset") == (b"hashtable" if target == "redis" else b"listpack")
    assert c.object("encoding", "zset") == b"listpack"
    for type_name, expected in [("list", {b"list"}), ("hash", {b"hash"}),
                                ("set", {b"iset", b"sset"}), ("zset", {b"zset"}),
                                ("string", {b"str"})]:
        assert set(c.scan_iter(_type=type_name)) == expected, type_name


def test_memory_usage(server):
    c = server.client()
    fill_all_types(c)
    for key in ("list", "hash", "iset", "sset", "zset"):
        assert c.memory_usage(key) > 0, key
    big = {f"m{i}": i for i in range(1000)}
    c.zadd("bigz", big)
    assert c.object("encoding", "bigz") == b"skiplist"
    assert c.memory_usage("bigz") > c.memory_usage("zset")


def test_rename_copy_move_every_type_across_shards(server):
    c = server.client()
    fill_all_types(c)
    want = {
        "list": lambda k: c.lrange(k, 0, -1),
        "hash": lambda k: c.hgetall(k),
        "iset": lambda k: c.smembers(k),
        "sset": lambda k: c.smembers(k),
        "zset": lambda k: c.zrange(k, 0, -1, withscores=True),
    }
    before = {k: read(k) for k, read in want.items()}
    for k, read in want.items():
        # Many destination names, so some are on another shard than the source.
        for i in range(8):
            assert c.copy(k, f"{k}-copy{i}")
            assert read(f"{k}-copy{i}") == before[k]
            assert c.object("encoding", f"{k}-copy{i}") == c.object("encoding", k)
        assert c.rename(k, f"{k}-renamed")
        assert read(f"{k}-renamed") == before[k]
        assert c.move(f"{k}-renamed", 1)
        c.execute_command("SELECT", 1)
        assert read(f"{k}-renamed") == before[k]
        c.execute_command("SELECT", 0)
    c.flushdb()
    assert c.dbsize() == 0


def test_wrongtype_across_families(server):
    c = server.client()
    fill_all_types(c)
    wrong = "WRONGTYPE Operation against a key holding the wrong kind of value"
    r = server.raw()
    for command in (("LPUSH", "hash", "x"), ("HSET", "list", "f", "v"), ("SADD", "zset", "m"),
                    ("ZADD", "sset", "1", "m"), ("GET", "list"), ("INCR", "hash"),
                    ("LLEN", "str"), ("SCARD", "hash"), ("ZCARD", "list"), ("HLEN", "zset")):
        assert r(*command) == err(wrong), command


@pytest.mark.damselfly_only
def test_debug_populate_types(server):
    c = server.client()
    r = server.raw()
    assert r("DEBUG", "POPULATE", "20", "l", "8", "TYPE", "list", "ELEMENTS", "5") == "OK"
    assert r("DEBUG", "POPULATE", "20", "s", "8", "TYPE", "set", "ELEMENTS", "200") == "OK"
    assert r("DEBUG", "POPULATE", "20", "h", "0", "TYPE", "hash", "ELEMENTS", "3") == "OK"
    assert r("DEBUG", "POPULATE", "20", "z", "TYPE", "zset", "ELEMENTS", "130") == "OK"
    assert r("DEBUG", "POPULATE", "5", "k", "TYPE", "string") == "OK"
    assert c.dbsize() == 85
    assert c.llen("l:3") == 5
    assert c.lindex("l:3", 0) == b"value:3:0"
    assert c.scard("s:7") == 200
    assert c.object("encoding", "s:7") == b"hashtable"  # past set-max-listpack-entries
    assert c.hgetall("h:1") == {b"field:0": b"value:1:0", b"field:1": b"value:1:1",
                                b"field:2": b"value:1:2"}
    assert c.zcard("z:0") == 130
    assert c.object("encoding", "z:0") == b"skiplist"
    assert c.zscore("z:0", "value:0:129") == 129
    assert c.get("k:4") == b"value:4"
    assert c.debug_object("z:0")["encoding"] == "skiplist"
    assert c.debug_object("l:0")["encoding"] == "quicklist"
    assert r("DEBUG", "POPULATE", "1", "x", "0", "TYPE", "stream") == \
        err("ERR TYPE must be string, list, set, hash or zset")
    assert r("DEBUG", "POPULATE", "1", "x", "0", "ELEMENTS", "0") == \
        err("ERR value is out of range, must be positive")
    assert r("DEBUG", "POPULATE", "1", "x", "0", "TYPE") == err("ERR syntax error")
    assert r("DEBUG", "POPULATE", "1", "x", "0", "BOGUS", "1") == err("ERR syntax error")


@pytest.mark.damselfly_only
def test_debug_digest_value(server):
    c = server.client()
    r = server.raw()
    fill_all_types(c)
    for k in ("str", "list", "hash", "iset", "sset", "zset"):
        for i in range(6):  # copies on both shards
            c.copy(k, f"{k}:{i}")
        digests = r("DEBUG", "DIGEST-VALUE", k, *[f"{k}:{i}" for i in range(6)])
        assert len(set(digests)) == 1 and digests[0] != "0" * 40, k
    # Order counts for lists, not for sets or hashes; the encoding never does.
    c.rpush("l2", "c", "b", "a")
    c.sadd("s2", "b", "a")
    c.sadd("s3", *[f"m{i}" for i in range(300)])  # a hash table
    c.sadd("s4", *[f"m{i}" for i in reversed(range(300))])
    c.hset("h2", mapping={"g": "w", "f": "v"})
    d = dict(zip(["list", "l2", "sset", "s2", "s3", "s4", "hash", "h2", "missing"],
                 r("DEBUG", "DIGEST-VALUE", "list", "l2", "sset", "s2", "s3", "s4", "hash",
                   "h2", "missing")))
    assert d["list"] != d["l2"]
    assert d["sset"] == d["s2"] and d["s3"] == d["s4"] and d["hash"] == d["h2"]
    assert d["missing"] == "0" * 40


def test_scan_options_of_a_missing_key_are_not_read(server):
    r = server.raw()
    for command in ("HSCAN", "SSCAN", "ZSCAN"):
        assert r(command, "missing", "0", "COUNT", "0") == [b"0", []], command
        assert r(command, "missing", "0", "BOGUS") == [b"0", []], command
    server.client().zadd("z", {"a": 1})
    assert r("ZSCAN", "z", "0", "COUNT", "0") == err("ERR syntax error")
    assert r("ZSCAN", "z", "0", "COUNT", "x") == \
        err("ERR value is not an integer or out of range")
    assert r("SCAN", "0", "COUNT", "0") == err("ERR syntax error")
