"""SORT and SORT_RO over lists, sets and sorted sets: numeric and ALPHA order, LIMIT, BY and
GET patterns (string keys and hash fields, on any shard), STORE, and their errors.
Validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis)."""

import threading
import time

import pytest
import redis

from helpers import err


def error_of(fn):
    with pytest.raises(redis.ResponseError) as e:
        fn()
    return str(e.value)


def test_numeric_and_alpha_order(server):
    c = server.client()
    c.rpush("l", 3, 10, 1, -2.5, "1e1", "", 7)
    # Ties (10 and 1e1; "" is 0) are broken by the element bytes.
    assert c.sort("l") == [b"-2.5", b"", b"1", b"3", b"7", b"10", b"1e1"]
    assert c.sort("l", desc=True) == [b"1e1", b"10", b"7", b"3", b"1", b"", b"-2.5"]
    assert c.sort("l", alpha=True) == [b"", b"-2.5", b"1", b"10", b"1e1", b"3", b"7"]
    c.sadd("s", 5, 3, 9)
    assert c.sort("s") == [b"3", b"5", b"9"]
    c.zadd("z", {"20": 1, "3": 2, "100": 3})
    assert c.sort("z") == [b"3", b"20", b"100"]  # by member value, not score
    assert c.sort("missing") == []
    assert c.sort_ro("l", start=1, num=2) == [b"", b"1"]


def test_limit_windows(server):
    c = server.client()
    c.rpush("l", *range(10))
    r = server.raw()
    assert r("SORT", "l", "LIMIT", "2", "3") == [b"2", b"3", b"4"]
    assert r("SORT", "l", "LIMIT", "-5", "2") == [b"0", b"1"]
    assert r("SORT", "l", "LIMIT", "8", "100") == [b"8", b"9"]
    assert r("SORT", "l", "LIMIT", "10", "1") == []
    assert r("SORT", "l", "LIMIT", "3", "-1") == [b"3", b"4", b"5", b"6", b"7", b"8", b"9"]
    assert r("SORT", "l", "LIMIT", "0", "0") == []
    assert r("SORT", "l", "LIMIT", "9223372036854775807", "9223372036854775807") == []
    assert r("SORT", "l", "DESC", "LIMIT", "0", "2") == [b"9", b"8"]


def test_by_nosort_keeps_the_collection_order(server):
    c = server.client()
    r = server.raw()
    c.rpush("l", "c", "a", "b", "d")
    assert r("SORT", "l", "BY", "nosort") == [b"c", b"a", b"b", b"d"]
    assert r("SORT", "l", "BY", "nosort", "DESC") == [b"d", b"b", b"a", b"c"]
    assert r("SORT", "l", "BY", "nosort", "LIMIT", "1", "2") == [b"a", b"b"]
    assert r("SORT", "l", "BY", "nosort", "DESC", "LIMIT", "1", "2") == [b"b", b"a"]
    c.zadd("z", {"x": 3, "y": 1, "w": 2})
    assert r("SORT", "z", "BY", "nosort") == [b"y", b"w", b"x"]
    assert r("SORT", "z", "BY", "nosort", "DESC", "LIMIT", "0", "2") == [b"x", b"w"]
    # Stored from a set, the result is sorted ALPHA: a set has no order of its own.
    c.sadd("s", "b", "c", "a")
    assert r("SORT", "s", "BY", "nosort", "STORE", "dst") == 3
    assert c.lrange("dst", 0, -1) == [b"a", b"b", b"c"]
    # Numbers are not a problem without a sort.
    c.rpush("words", "x", "y")
    assert r("SORT", "words", "BY", "nosort") == [b"x", b"y"]


def test_by_and_get_patterns_across_shards(server):
    c = server.client()
    ids = [str(i) for i in range(40)]
    c.rpush("ids", *ids)
    for i in ids:
        c.set(f"weight_{i}", (int(i) * 7) % 40)  # a permutation of 0..39
        c.set(f"name_{i}", f"n{i}")
        c.hset(f"obj_{i}", mapping={"w": 100 - int(i), "title": f"t{i}"})
    by_weight = sorted(ids, key=lambda i: (int(i) * 7) % 40)
    assert c.sort("ids", by="weight_*") == [i.encode() for i in by_weight]
    assert c.sort("ids", by="obj_*->w", start=0, num=3) == [b"39", b"38", b"37"]
    assert c.sort("ids", by="weight_*", get="name_*", start=0, num=3) == \
        [f"n{i}".encode() for i in by_weight[:3]]
    assert c.sort("ids", by="weight_*", get=["#", "obj_*->title", "nothing_*", "const"],
                  start=0, num=2) == [by_weight[0].encode(), f"t{by_weight[0]}".encode(),
                                      None, None, by_weight[1].encode(),
                                      f"t{by_weight[1]}".encode(), None, None]
    # A missing weight sorts as 0; with ALPHA, missing values come first.
    c.delete("weight_5")
    assert c.sort("ids", by="weight_*", start=0, num=2) == [b"0", b"5"]
    c.rpush("names", "b", "a", "c")
    c.set("label_a", "zz")
    c.set("label_b", "yy")
    assert c.sort("names", by="label_*", alpha=True) == [b"c", b"b", b"a"]
    # A hash field pattern on a string key, or a string pattern on a hash: missing.
    assert c.sort("ids", by="nosuch", get="obj_*", start=0, num=1) == [None]


def test_store(server):
    c = server.client()
    r = server.raw()
    c.rpush("l", 3, 1, 2)
    c.set("dst", "a string")
    assert r("SORT", "l", "STORE", "dst") == 3
    assert c.type("dst") == b"list"
    assert c.lrange("dst", 0, -1) == [b"1", b"2", b"3"]
    # Missing GET values are stored as empty strings.
    c.set("v_1", "one")
    assert r("SORT", "l", "GET", "v_*", "STORE", "dst") == 3
    assert c.lrange("dst", 0, -1) == [b"one", b"", b""]
    # An empty result deletes the destination.
    assert r("SORT", "missing", "STORE", "dst") == 0
    assert c.exists("dst") == 0
    assert r("SORT", "l", "LIMIT", "5", "5", "STORE", "dst2") == 0
    # The source itself may be the destination.
    assert r("SORT", "l", "DESC", "STORE", "l") == 3
    assert c.lrange("l", 0, -1) == [b"3", b"2", b"1"]


def test_errors(server):
    c = server.client()
    r = server.raw()
    c.set("str", "x")
    c.hset("h", "f", "v")
    c.rpush("l", "1", "two")
    assert error_of(lambda: c.sort("str")).startswith("WRONGTYPE")
    assert error_of(lambda: c.sort("h")).startswith("WRONGTYPE")
    assert error_of(lambda: c.sort("l")) == "One or more scores can't be converted into double"
    c.set("w_1", "nan")
    assert error_of(lambda: c.sort("l", by="w_*")) == \
        "One or more scores can't be converted into double"
    assert c.sort("l", alpha=True) == [b"1", b"two"]
    assert r("SORT", "l", "LIMIT", "x", "1") == err("ERR value is not an integer or out of range")
    assert r("SORT", "l", "LIMIT", "1") == err("ERR syntax error")
    assert r("SORT", "l", "BY") == err("ERR syntax error")
    assert r("SORT", "l", "ALPHA", "BOGUS") == err("ERR syntax error")
    assert r("SORT_RO", "l", "ALPHA", "STORE", "d") == err("ERR syntax error")
    assert r("SORT") == err("ERR wrong number of arguments for 'sort' command")
    # Syntax is checked before the key's type.
    assert r("SORT", "str", "BOGUS") == err("ERR syntax error")
    assert c.exists("d") == 0


def test_getkeys_and_command_info(server):
    r = server.raw()
    assert r("COMMAND", "GETKEYS", "SORT", "a", "BY", "x", "GET", "y", "STORE", "d",
             "LIMIT", "0", "1") == [b"a", b"d"]
    assert r("COMMAND", "GETKEYS", "SORT", "a", "GET", "store") == [b"a"]
    assert r("COMMAND", "GETKEYS", "SORT_RO", "a", "BY", "b") == [b"a"]
    info = r("COMMAND", "INFO", "SORT")[0]
    assert info[0] == b"sort" and info[1] == -2
    assert "movablekeys" in info[2]
    specs = info[8]
    assert len(specs) == 3
    assert specs[1][:2] == [b"notes", b"For the optional BY/GET keyword. It is marked "
                            b"'unknown' because the key names derive from the content of "
                            b"the key we sort"]
    assert specs[2][specs[2].index(b"begin_search") + 1] == [b"type", b"unknown", b"spec", []]


def test_in_multi_exec(server):
    c = server.client()
    c.rpush("ids", 1, 2, 3)
    c.mset({"w_1": 3, "w_2": 1, "w_3": 2})
    p = c.pipeline(transaction=True)
    p.sort("ids", by="w_*")
    p.set("w_1", 0)
    p.sort("ids", by="w_*", get="#", store="out")
    p.sort("ids")
    assert p.execute() == [[b"2", b"3", b"1"], True, 3, [b"1", b"2", b"3"]]
    assert c.lrange("out", 0, -1) == [b"1", b"2", b"3"]


def test_pattern_reads_are_one_moment(server):
    """Writers set every weight to the same value with one MSET; a SORT ... GET reads
    them all from one moment, so it never sees two different values."""
    c = server.client()
    ids = [str(i) for i in range(32)]
    c.rpush("ids", *ids)
    c.mset({f"w_{i}": 0 for i in ids})
    stop = threading.Event()

    def writer():
        w = server.client()
        v = 0
        while not stop.is_set():
            v += 1
            w.mset({f"w_{i}": v for i in ids})

    threads = [threading.Thread(target=writer) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 1.5
        rounds = 0
        while time.monotonic() < deadline:
            values = c.sort("ids", by="nosort", get="w_*")
            assert len(set(values)) == 1, values
            rounds += 1
        assert rounds > 10
    finally:
        stop.set()
        for t in threads:
            t.join()
