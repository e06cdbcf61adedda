"""List commands with Redis 7.0's exact replies and error texts (validated against
redis-server 7.0 with DAMSELFLY_TEST_TARGET=redis)."""

import threading

import pytest

from helpers import err

SYNTAX = err("ERR syntax error")
NOT_INT = err("ERR value is not an integer or out of range")
WRONGTYPE = err("WRONGTYPE Operation against a key holding the wrong kind of value")
POSITIVE = err("ERR value is out of range, must be positive")
LLONG_MAX = "9223372036854775807"
LLONG_MIN = "-9223372036854775808"


def arity(cmd):
    return err(f"ERR wrong number of arguments for '{cmd}' command")


def test_push_pop_both_ends(server):
    c = server.raw()
    assert c("RPUSH", "l", "a", "b", "c") == 3
    assert c("LPUSH", "l", "x", "y") == 5  # y x a b c
    assert c("LRANGE", "l", "0", "-1") == [b"y", b"x", b"a", b"b", b"c"]
    assert c("LLEN", "l") == 5
    assert c.raw_call("LPOP", "l") == b"$1\r\ny\r\n"
    assert c("RPOP", "l") == b"c"
    assert c("LPOP", "l", "2") == [b"x", b"a"]
    assert c("RPOP", "l", LLONG_MAX) == [b"b"]
    assert c("EXISTS", "l") == 0
    assert c("LLEN", "l") == 0
    # Nulls: a bulk without count, an array with one (RESP2).
    assert c.raw_call("LPOP", "l") == b"$-1\r\n"
    assert c.raw_call("RPOP", "l", "3") == b"*-1\r\n"
    assert c.raw_call("LPOP", "l", "0") == b"*-1\r\n"


def test_pop_count_rules(server):
    c = server.raw()
    c("RPUSH", "l", "1", "2")
    assert c.raw_call("LPOP", "l", "0") == b"*0\r\n"
    assert c("LPOP", "l", "-1") == POSITIVE
    assert c("LPOP", "l", "abc") == POSITIVE
    assert c("LPOP", "l", LLONG_MIN) == POSITIVE
    assert c("LPOP", "l", "1", "2") == arity("lpop")
    assert c("RPOP") == arity("rpop")
    assert c("LLEN", "l") == 2


def test_resp3_nulls(server):
    c = server.raw()
    c("HELLO", "3")
    assert c.raw_call("LPOP", "missing") == b"_\r\n"
    assert c.raw_call("LPOP", "missing", "2") == b"_\r\n"
    assert c.raw_call("LINDEX", "missing", "0") == b"_\r\n"
    assert c.raw_call("LPOS", "missing", "x") == b"_\r\n"
    assert c.raw_call("LMPOP", "1", "missing", "LEFT") == b"_\r\n"
    assert c.raw_call("RPOPLPUSH", "missing", "d") == b"_\r\n"


def test_pushx(server):
    c = server.raw()
    assert c("LPUSHX", "l", "a") == 0
    assert c("RPUSHX", "l", "a", "b") == 0
    assert c("EXISTS", "l") == 0
    c("RPUSH", "l", "m")
    assert c("LPUSHX", "l", "a", "b") == 3
    assert c("RPUSHX", "l", "z") == 4
    assert c("LRANGE", "l", "0", "-1") == [b"b", b"a", b"m", b"z"]
    assert c("LPUSHX", "l") == arity("lpushx")


def test_binary_and_integer_elements(server):
    c = server.raw()
    binary = bytes(range(256))
    values = [binary, b"", b"0", b"-1", b"007", b"+5", LLONG_MIN.encode(), b"12345678901234567890",
              b"x" * 70000]
    assert c("RPUSH", "l", *values) == len(values)
    assert c("LRANGE", "l", "0", "-1") == values
    assert c("LINDEX", "l", "0") == binary
    assert c("LPOS", "l", "007") == 4
    assert c("LPOS", "l", "7") is None
    assert c("LREM", "l", "0", "-1") == 1
    assert c("RPOP", "l") == b"x" * 70000


def test_lrange_and_lindex_indexes(server):
    c = server.raw()
    c("RPUSH", "l", *[str(i) for i in range(10)])
    assert c("LRANGE", "l", "-3", "-1") == [b"7", b"8", b"9"]
    assert c("LRANGE", "l", "-100", "1") == [b"0", b"1"]
    assert c("LRANGE", "l", "8", "100") == [b"8", b"9"]
    assert c("LRANGE", "l", "5", "4") == []
    assert c("LRANGE", "l", "10", "20") == []
    assert c("LRANGE", "l", LLONG_MIN, LLONG_MAX) == [str(i).encode() for i in range(10)]
    assert c("LRANGE", "missing", "0", "-1") == []
    assert c("LRANGE", "l", "x", "1") == NOT_INT
    assert c("LRANGE", "missing", "0", "1.5") == NOT_INT
    assert c("LRANGE", "l", "0") == arity("lrange")
    assert c("LINDEX", "l", "-1") == b"9"
    assert c("LINDEX", "l", "-10") == b"0"
    assert c("LINDEX", "l", "-11") is None
    assert c("LINDEX", "l", LLONG_MAX) is None
    assert c("LINDEX", "l", "one") == NOT_INT
    assert c("LINDEX", "missing", "one") is None  # the key is looked up first
    assert c("LINDEX", "l") == arity("lindex")


def test_lset(server):
    c = server.raw()
    c("RPUSH", "l", "a", "b", "c")
    assert c("LSET", "l", "0", "A") == "OK"
    assert c("LSET", "l", "-1", "C") == "OK"
    assert c("LRANGE", "l", "0", "-1") == [b"A", b"b", b"C"]
    assert c("LSET", "l", "3", "x") == err("ERR index out of range")
    assert c("LSET", "l", "-4", "x") == err("ERR index out of range")
    assert c("LSET", "l", "x", "x") == NOT_INT
    assert c("LSET", "missing", "0", "x") == err("ERR no such key")
    assert c("LSET", "missing", "x", "x") == err("ERR no such key")
    assert c("LSET", "l", "0") == arity("lset")


def test_linsert(server):
    c = server.raw()
    c("RPUSH", "l", "a", "b", "a")
    assert c("LINSERT", "l", "BEFORE", "a", "x") == 4
    assert c("LINSERT", "l", "after", "b", "y") == 5
    assert c("LRANGE", "l", "0", "-1") == [b"x", b"a", b"b", b"y", b"a"]
    assert c("LINSERT", "l", "before", "nope", "z") == -1
    assert c("LINSERT", "missing", "before", "a", "z") == 0
    assert c("LINSERT", "l", "middle", "a", "z") == SYNTAX
    assert c("LINSERT", "missing", "middle", "a", "z") == SYNTAX
    assert c("LINSERT", "l", "before", "a") == arity("linsert")


def test_lrem(server):
    c = server.raw()
    c("RPUSH", "l", "a", "b", "a", "c", "a", "b")
    assert c("LREM", "l", "-2", "a") == 2
    assert c("LRANGE", "l", "0", "-1") == [b"a", b"b", b"c", b"b"]
    assert c("LREM", "l", "1", "b") == 1
    assert c("LREM", "l", "0", "nothing") == 0
    assert c("LREM", "l", LLONG_MIN, "b") == 1
    assert c("LRANGE", "l", "0", "-1") == [b"a", b"c"]
    assert c("LREM", "l", "0", "a") == 1
    assert c("LREM", "l", "0", "c") == 1
    assert c("EXISTS", "l") == 0
    assert c("LREM", "missing", "0", "a") == 0
    assert c("LREM", "l", "x", "a") == NOT_INT
    assert c("LREM", "l", "0") == arity("lrem")


def test_ltrim(server):
    c = server.raw()
    c("RPUSH", "l", *[str(i) for i in range(10)])
    assert c("LTRIM", "l", "2", "-3") == "OK"
    assert c("LRANGE", "l", "0", "-1") == [b"2", b"3", b"4", b"5", b"6", b"7"]
    assert c("LTRIM", "l", "-100", "100") == "OK"
    assert c("LLEN", "l") == 6
    assert c("LTRIM", "l", "4", "2") == "OK"
    assert c("EXISTS", "l") == 0
    assert c("LTRIM", "missing", "0", "1") == "OK"
    assert c("LTRIM", "l", "a", "1") == NOT_INT
    assert c("LTRIM", "l", "0") == arity("ltrim")


def test_lpos(server):
    c = server.raw()
    c("RPUSH", "l", "a", "b", "c", "a", "b", "c", "a")
    assert c("LPOS", "l", "a") == 0
    assert c("LPOS", "l", "c") == 2
    assert c("LPOS", "l", "a", "RANK", "2") == 3
    assert c("LPOS", "l", "a", "RANK", "-1") == 6
    assert c("LPOS", "l", "a", "RANK", "-3") == 0
    assert c("LPOS", "l", "a", "RANK", "4") is None
    assert c("LPOS", "l", "a", "COUNT", "0") == [0, 3, 6]
    assert c("LPOS", "l", "a", "COUNT", "2") == [0, 3]
    assert c("LPOS", "l", "a", "COUNT", "2", "RANK", "-1") == [6, 3]
    assert c("LPOS", "l", "a", "COUNT", "0", "MAXLEN", "4") == [0, 3]
    assert c("LPOS", "l", "a", "RANK", "-1", "MAXLEN", "1") == 6
    assert c("LPOS", "l", "a", "RANK", "-1", "MAXLEN", "2", "COUNT", "0") == [6]
    assert c("LPOS", "l", "z", "COUNT", "0") == []
    assert c("LPOS", "l", "z") is None
    assert c("LPOS", "missing", "z", "COUNT", "1") == []
    assert c("LPOS", "l", "a", "RANK", "0") == err(
        "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
        "or use negative to start from the end of the list")
    assert c("LPOS", "l", "a", "RANK", "x") == NOT_INT
    assert c("LPOS", "l", "a", "COUNT", "-1") == err("ERR COUNT can't be negative")
    assert c("LPOS", "l", "a", "MAXLEN", "-1") == err("ERR MAXLEN can't be negative")
    assert c("LPOS", "l", "a", "COUNT") == SYNTAX
    assert c("LPOS", "l", "a", "FOO", "1") == SYNTAX
    assert c("LPOS", "l") == arity("lpos")


def test_lmove_and_rpoplpush(server):
    c = server.raw()
    c("RPUSH", "src", "1", "2", "3")
    assert c("LMOVE", "src", "dst", "LEFT", "RIGHT") == b"1"
    assert c("LMOVE", "src", "dst", "right", "left") == b"3"
    assert c("RPOPLPUSH", "src", "dst") == b"2"
    assert c("EXISTS", "src") == 0
    assert c("LRANGE", "dst", "0", "-1") == [b"2", b"3", b"1"]
    assert c("RPOPLPUSH", "src", "dst") is None
    assert c("LMOVE", "src", "dst", "LEFT", "LEFT") is None
    # The same list: a rotation.
    assert c("RPOPLPUSH", "dst", "dst") == b"1"
    assert c("LMOVE", "dst", "dst", "LEFT", "RIGHT") == b"1"
    assert c("LRANGE", "dst", "0", "-1") == [b"2", b"3", b"1"]
    assert c("LMOVE", "dst", "x", "UP", "LEFT") == SYNTAX
    assert c("LMOVE", "dst", "x", "LEFT") == arity("lmove")
    assert c("RPOPLPUSH", "dst") == arity("rpoplpush")


def test_lmove_wrong_types(server):
    c = server.raw()
    c("SET", "str", "v")
    c("RPUSH", "l", "a", "b")
    # A WRONGTYPE destination leaves the source as it was.
    assert c("RPOPLPUSH", "l", "str") == WRONGTYPE
    assert c("LMOVE", "l", "str", "LEFT", "LEFT") == WRONGTYPE
    assert c("LRANGE", "l", "0", "-1") == [b"a", b"b"]
    assert c("RPOPLPUSH", "str", "l") == WRONGTYPE
    # A missing source answers nil before the destination is looked at.
    assert c("RPOPLPUSH", "missing", "str") is None
    assert c("GET", "str") == b"v"


def test_lmove_across_many_keys_is_atomic(server):
    """Clients move elements around a ring of lists (on every shard) while others count
    them: the total never changes."""
    keys = [f"ring{i}" for i in range(8)]
    setup = server.raw()
    for k in keys:
        setup("RPUSH", k, *[f"{k}-{j}" for j in range(20)])
    total = 8 * 20
    stop = threading.Event()
    errors = []

    def mover(n):
        c = server.raw()
        i = n
        while not stop.is_set():
            src, dst = keys[i % 8], keys[(i * 3 + 1) % 8]
            reply = c("LMOVE", src, dst, "LEFT", "RIGHT")
            if isinstance(reply, Exception):
                errors.append(reply)
            i += 1

    def counter():
        c = server.raw()
        for _ in range(200):
            c.send("MULTI")
            for k in keys:
                c.send("LLEN", k)
            c.send("EXEC")
            replies = [c.read() for _ in range(len(keys) + 2)]
            if sum(replies[-1]) != total:
                errors.append(replies[-1])

    movers = [threading.Thread(target=mover, args=(n,)) for n in range(6)]
    for t in movers:
        t.start()
    counter()
    stop.set()
    for t in movers:
        t.join()
    assert errors == []
    assert sum(setup("LLEN", k) for k in keys) == total


def test_lmpop(server):
    c = server.raw()
    c("RPUSH", "b", "1", "2", "3")
    assert c("LMPOP", "2", "a", "b", "LEFT") == [b"b", [b"1"]]
    assert c("LMPOP", "2", "a", "b", "RIGHT", "COUNT", "10") == [b"b", [b"3", b"2"]]
    assert c("EXISTS", "b") == 0
    assert c.raw_call("LMPOP", "2", "a", "b", "LEFT") == b"*-1\r\n"
    c("SET", "a", "x")
    c("RPUSH", "b", "1")
    assert c("LMPOP", "2", "a", "b", "LEFT") == WRONGTYPE
    assert c("LMPOP", "2", "missing", "b", "LEFT") == [b"b", [b"1"]]
    assert c("LMPOP", "0", "a", "LEFT") == err("ERR numkeys should be greater than 0")
    assert c("LMPOP", "-1", "a", "LEFT") == err("ERR numkeys should be greater than 0")
    assert c("LMPOP", "x", "a", "LEFT") == err("ERR numkeys should be greater than 0")
    assert c("LMPOP", "3", "a", "LEFT") == SYNTAX
    assert c("LMPOP", "1", "a", "UP") == SYNTAX
    assert c("LMPOP", "1", "a", "LEFT", "COUNT", "0") == err("ERR count should be greater than 0")
    assert c("LMPOP", "1", "a", "LEFT", "COUNT") == SYNTAX
    assert c("LMPOP", "1", "a", "LEFT", "COUNT", "1", "COUNT", "1") == SYNTAX
    assert c("LMPOP", "1", "a") == arity("lmpop")


def test_wrong_type_everywhere(server):
    c = server.raw()
    c("SET", "s", "v")
    for cmd in (("LPUSH", "s", "x"), ("RPUSH", "s", "x"), ("LPUSHX", "s", "x"),
                ("RPUSHX", "s", "x"), ("LPOP", "s"), ("RPOP", "s", "1"), ("LLEN", "s"),
                ("LRANGE", "s", "0", "1"), ("LINDEX", "s", "0"), ("LSET", "s", "0", "x"),
                ("LINSERT", "s", "BEFORE", "a", "b"), ("LREM", "s", "0", "x"),
                ("LTRIM", "s", "0", "1"), ("LPOS", "s", "x")):
        assert c(*cmd) == WRONGTYPE, cmd
    c("RPUSH", "l", "a")
    assert c("GET", "l") == WRONGTYPE
    assert c("APPEND", "l", "x") == WRONGTYPE
    assert c("GET", "s") == b"v"


def test_type_scan_rename_copy_move(server):
    c = server.raw()
    c("RPUSH", "l", "a", "b")
    c("SET", "s", "v")
    assert c("TYPE", "l") == "list"
    assert c("SCAN", "0", "TYPE", "list", "COUNT", "100") == [b"0", [b"l"]]
    assert c("MEMORY", "USAGE", "l") > 0
    assert c("COPY", "l", "l2") == 1
    assert c("RPUSH", "l2", "c") == 3
    assert c("LLEN", "l") == 2
    assert c("RENAME", "l2", "l3") == "OK"
    assert c("LRANGE", "l3", "0", "-1") == [b"a", b"b", b"c"]
    assert c("MOVE", "l3", "1") == 1
    c("SELECT", "1")
    assert c("LPOP", "l3") == b"a"
    c("SELECT", "0")
    c("EXPIRE", "l", "100")
    assert c("RENAME", "l", "moved") == "OK"
    assert 0 < c("TTL", "moved") <= 100


def test_big_list_in_nodes(server):
    """A list past one node: quicklist in both servers (Redis 7.0 reports it for every
    list); values read back in order from both ends and the middle."""
    c = server.raw()
    n = 20000
    for start in range(0, n, 1000):
        c("RPUSH", "big", *[f"value-{i}" for i in range(start, start + 1000)])
    assert c("LLEN", "big") == n
    assert c("OBJECT", "ENCODING", "big") == b"quicklist"
    assert c("LINDEX", "big", "12345") == b"value-12345"
    assert c("LRANGE", "big", "9998", "10001") == [b"value-9998", b"value-9999",
                                                  b"value-10000", b"value-10001"]
    assert c("LINSERT", "big", "AFTER", "value-10000", "new") == n + 1
    assert c("LSET", "big", "-1", "last") == "OK"
    assert c("LREM", "big", "1", "value-5") == 1
    assert c("LPOS", "big", "new") == 10000
    assert c("LTRIM", "big", "100", "-101") == "OK"
    assert c("LLEN", "big") == n + 1 - 1 - 200
    assert c("LPOP", "big") == b"value-101"


def test_compressed_nodes(server):
    c = server.raw()
    assert c("CONFIG", "SET", "list-compress-depth", "1") == "OK"
    try:
        values = [(b"%d" % i) * 50 for i in range(3000)]
        for start in range(0, len(values), 500):
            c("RPUSH", "z", *values[start:start + 500])
        assert c("LRANGE", "z", "0", "-1") == values
        assert c("LINDEX", "z", "1500") == values[1500]
        assert c("LINSERT", "z", "BEFORE", values[1500], "in") == 3001
        assert c("LRANGE", "z", "1499", "1501") == [values[1499], b"in", values[1500]]
    finally:
        c("CONFIG", "SET", "list-compress-depth", "0")


def test_encoding_is_quicklist_at_every_size(server):
    """Redis 7.0 reports quicklist for every list; damselfly keeps a small list as one
    listpack inside (Redis 7.2's layout) but answers as 7.0 does."""
    c = server.raw()
    assert c("CONFIG", "SET", "list-max-listpack-size", "4") == "OK"
    try:
        c("RPUSH", "l", "1")
        assert c("OBJECT", "ENCODING", "l") == b"quicklist"
        c("RPUSH", "l", "2", "3", "4", "5")
        assert c("OBJECT", "ENCODING", "l") == b"quicklist"
        c("RPOP", "l", "3")
        assert c("OBJECT", "ENCODING", "l") == b"quicklist"
        assert c("LRANGE", "l", "0", "-1") == [b"1", b"2"]
    finally:
        c("CONFIG", "SET", "list-max-listpack-size", "-2")


def test_watch_sees_list_changes(server):
    c = server.raw()
    other = server.raw()
    c("RPUSH", "l", "a")
    c("WATCH", "l")
    other("LPUSH", "l", "b")
    c("MULTI")
    c("LLEN", "l")
    assert c("EXEC") is None
    # A command that changes nothing leaves the watch intact.
    c("WATCH", "l")
    other("LREM", "l", "0", "nothing")
    other("LPUSHX", "missing", "x")
    c("MULTI")
    c("LLEN", "l")
    assert c("EXEC") == [2]


def test_redis_py_api(server):
    r = server.client()
    assert r.rpush("rl", "a", "b", "c") == 3
    assert r.lpop("rl") == b"a"
    assert r.lpop("rl", 5) == [b"b", b"c"]
    assert r.lpop("rl") is None
    r.rpush("rl", 1, 2, 3)
    assert r.lmove("rl", "other", "LEFT", "RIGHT") == b"1"
    assert r.lmpop(2, "none", "rl", direction="RIGHT", count=2) == [b"rl", [b"3", b"2"]]
    assert r.lpos("other", "1") == 0


def test_rotation_of_one_key_keeps_it_and_its_ttl(server):
    c = server.client()
    c.rpush("one", "a")
    c.expire("one", 100)
    assert c.rpoplpush("one", "one") == b"a"
    assert c.lrange("one", 0, -1) == [b"a"]
    assert 0 < c.ttl("one") <= 100
    c.rpush("two", "a", "b")
    c.expire("two", 100)
    assert c.lmove("two", "two", "LEFT", "RIGHT") == b"a"
    assert c.lrange("two", 0, -1) == [b"b", b"a"]
    assert 0 < c.ttl("two") <= 100


def test_large_elements_in_plain_nodes(server_factory, target):
    """DEBUG QUICKLIST-PACKED-THRESHOLD: elements of that size or more get a node of their
    own (Redis's plain nodes); every command keeps its answers, across nodes of both kinds.
    A server of its own: the threshold is the process's."""
    c = server_factory(*(("--enable-debug-command=local",) if target == "redis" else ())).raw()
    bad = err("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
    assert c("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "abc") == bad
    assert c("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb") == bad
    assert c("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "4294967296") == bad
    assert c("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5b") == "OK"
    try:
        big = [ch * 1000 for ch in (b"a", b"b", b"c")]
        assert c("RPUSH", "l", "aa", "bb", "cc", "dd", "ee") == 5
        assert c("LSET", "l", "2", b"x" * 10) == "OK"  # splits the packed node
        assert c("LINSERT", "l", "AFTER", "bb", big[0]) == 6
        assert c("LPUSH", "l", big[1], "9") == 8
        assert c("RPUSH", "l", big[2]) == 9
        expected = [b"9", big[1], b"aa", b"bb", big[0], b"x" * 10, b"dd", b"ee", big[2]]
        assert c("LRANGE", "l", "0", "-1") == expected
        assert c("LPOS", "l", big[0]) == 4
        assert c("LINDEX", "l", "-1") == big[2]
        assert c("LSET", "l", "4", "small") == "OK"  # plain to packed
        assert c("LREM", "l", "0", b"x" * 10) == 1
        assert c("LTRIM", "l", "1", "-2") == "OK"
        assert c("LRANGE", "l", "0", "-1") == [big[1], b"aa", b"bb", b"small", b"dd", b"ee"]
        assert c("LMOVE", "l", "m", "LEFT", "RIGHT") == big[1]
        assert c("LPOP", "m") == big[1]
        assert c("RPOP", "l", "6") == [b"ee", b"dd", b"small", b"bb", b"aa"]
        assert c("EXISTS", "l", "m") == 0
    finally:
        assert c("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0") == "OK"
