"""Stream commands (no consumer groups yet) with Redis 7.0's exact replies and error texts."""

import threading
import time

from helpers import err

SYNTAX = err("ERR syntax error")
NOT_INT = err("ERR value is not an integer or out of range")
INVALID_ID = err("ERR Invalid stream ID specified as stream command argument")
WRONGTYPE = err("WRONGTYPE Operation against a key holding the wrong kind of value")
SMALLER = err("ERR The ID specified in XADD is equal or smaller than the target stream top item")


def arity(cmd):
    return err(f"ERR wrong number of arguments for '{cmd}' command")


def test_xadd_ids(server):
    c = server.raw()
    assert c("XADD", "s", "1-1", "a", "1") == b"1-1"
    assert c("XADD", "s", "1-*", "a", "2") == b"1-2"
    assert c("XADD", "s", "3", "a", "3") == b"3-0"
    assert c("XADD", "s", "3-0", "a", "3") == SMALLER
    assert c("XADD", "s", "2-*", "a", "3") == SMALLER
    assert c("XADD", "s", "0-0", "a", "3") == err("ERR The ID specified in XADD must be greater than 0-0")
    assert c("XADD", "new", "0", "a", "3") == err("ERR The ID specified in XADD must be greater than 0-0")
    assert c("XADD", "new", "0-*", "a", "3") == b"0-1"
    auto = c("XADD", "s", "*", "a", "4")
    ms, seq = auto.split(b"-")
    assert abs(int(ms) - time.time() * 1000) < 60000 and seq == b"0"
    for bad in ("abc", "1-abc", "-", "+", "1-", "-1", "1-2-3", "18446744073709551616"):
        assert c("XADD", "s", bad, "a", "1") == INVALID_ID, bad
    assert c("XADD", "s", "*", "a") == arity("xadd")
    assert c("XADD", "s", "*") == arity("xadd")
    assert c("XADD", "s") == arity("xadd")
    assert c("XADD", "m", "18446744073709551615-18446744073709551615", "a", "1") == \
        b"18446744073709551615-18446744073709551615"
    assert c("XADD", "m", "*", "a", "1") == \
        err("ERR The stream has exhausted the last possible ID, unable to add more items")
    assert c("XLEN", "s") == 4
    assert c("XLEN", "nokey") == 0
    assert c("TYPE", "s") == "stream"
    assert c("OBJECT", "ENCODING", "s") == b"stream"


def test_xadd_options(server):
    c = server.raw()
    assert c.raw_call("XADD", "s", "NOMKSTREAM", "*", "a", "1") == b"$-1\r\n"
    assert c("EXISTS", "s") == 0
    for i in range(1, 11):
        c("XADD", "s", "MAXLEN", "5", f"{i}-0", "f", str(i))
    assert c("XLEN", "s") == 5
    assert c("XADD", "s", "MINID", "=", "9", "11-0", "f", "v") == b"11-0"
    assert c("XLEN", "s") == 3
    assert c("XADD", "s", "MAXLEN", "1", "LIMIT", "10", "*", "a", "1") == \
        err("ERR syntax error, LIMIT cannot be used without the special ~ option")
    assert c("XADD", "s", "MAXLEN", "-1", "*", "a", "1") == err("ERR The MAXLEN argument must be >= 0.")
    assert c("XADD", "s", "MAXLEN", "x", "*", "a", "1") == NOT_INT
    assert c("XADD", "s", "MAXLEN", "~", "1", "LIMIT", "-1", "*", "a", "1") == \
        err("ERR The LIMIT argument must be >= 0.")
    assert c("XADD", "s", "MAXLEN", "1", "MINID", "1", "*", "a", "1") == \
        err("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
    assert c("XADD", "s", "MINID", "bad", "*", "a", "1") == INVALID_ID
    assert c("XADD", "s", "LIMIT", "5", "*", "a", "1") == \
        err("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
    assert c("XADD", "s", "MINID", "~", "0", "LIMIT", "1000001", "20-0", "a", "1") == b"20-0"
    # "~" leaves whole nodes of 100 entries: 1000 entries trimmed to ~555 keep 600.
    for i in range(1000):
        c("XADD", "big", "*", "f", "v")
    c("XADD", "big", "MAXLEN", "~", "555", "*", "f", "v")
    assert c("XLEN", "big") == 601


def test_xrange_xrevrange(server):
    c = server.raw()
    c("XADD", "s", "1-1", "a", "1", "b", "2")
    c("XADD", "s", "1-2", "a", "3")
    c("XADD", "s", "2-0", "c", "4")
    e1 = [b"1-1", [b"a", b"1", b"b", b"2"]]
    e2 = [b"1-2", [b"a", b"3"]]
    e3 = [b"2-0", [b"c", b"4"]]
    assert c("XRANGE", "s", "-", "+") == [e1, e2, e3]
    assert c("XRANGE", "s", "1", "1") == [e1, e2]
    assert c("XRANGE", "s", "(1-1", "+") == [e2, e3]
    assert c("XRANGE", "s", "-", "(2-0") == [e1, e2]
    assert c("XRANGE", "s", "-", "+", "COUNT", "2") == [e1, e2]
    assert c.raw_call("XRANGE", "s", "-", "+", "COUNT", "0") == b"*-1\r\n"
    assert c.raw_call("XRANGE", "s", "-", "+", "COUNT", "-1") == b"*-1\r\n"
    assert c.raw_call("XRANGE", "nokey", "-", "+", "COUNT", "0") == b"*0\r\n"
    assert c("XRANGE", "s", "2", "1") == []
    assert c("XREVRANGE", "s", "+", "-") == [e3, e2, e1]
    assert c("XREVRANGE", "s", "+", "-", "COUNT", "1") == [e3]
    assert c("XREVRANGE", "s", "1-2", "(1-1") == [e2]
    assert c("XRANGE", "nokey", "-", "+") == []
    assert c("XRANGE", "s", "x", "+") == INVALID_ID
    assert c("XRANGE", "s", "(+", "+") == INVALID_ID  # after "(", IDs only
    assert c("XRANGE", "s", "-", "(-") == INVALID_ID
    assert c("XRANGE", "s", "(18446744073709551615-18446744073709551615", "+") == \
        err("ERR invalid start ID for the interval")
    assert c("XRANGE", "s", "-", "(0-0") == err("ERR invalid end ID for the interval")
    assert c("XRANGE", "s", "(1", "+") == [e1, e2, e3]  # after 1-0
    assert c("XRANGE", "s", "-", "+", "COUNT") == SYNTAX
    assert c("XRANGE", "s", "-", "+", "COUNT", "x") == NOT_INT
    assert c("XRANGE", "s", "-") == arity("xrange")
    assert c.raw_call("XRANGE", "s", "2", "+") == b"*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nc\r\n$1\r\n4\r\n"


def test_xdel_xtrim(server):
    c = server.raw()
    for i in range(1, 11):
        c("XADD", "s", f"{i}-0", "f", "v")
    assert c("XDEL", "s", "1-0", "2", "99") == 2
    assert c("XDEL", "s", "bad") == INVALID_ID
    assert c("XDEL", "nokey", "bad") == 0
    assert c("XDEL", "s") == arity("xdel")
    assert c("XTRIM", "s", "MAXLEN", "5") == 3
    assert c("XTRIM", "s", "MINID", "8") == 2
    assert c("XLEN", "s") == 3
    assert c("XTRIM", "s", "MAXLEN", "~", "0") == 3  # the whole node goes
    assert c("XLEN", "s") == 0
    assert c("XTRIM", "s", "MAXLEN", "-1") == err("ERR The MAXLEN argument must be >= 0.")
    assert c("XTRIM", "s", "FOO", "1") == SYNTAX
    assert c("XTRIM", "s", "MAXLEN", "1", "LIMIT", "1") == \
        err("ERR syntax error, LIMIT cannot be used without the special ~ option")
    assert c("XTRIM", "nokey", "FOO", "1") == SYNTAX  # parsed before the look-up
    assert c("XTRIM", "nokey", "MAXLEN", "1") == 0
    assert c("XTRIM", "s") == arity("xtrim")


def test_xsetid(server):
    c = server.raw()
    c("XADD", "s", "5-0", "f", "v")
    assert c("XSETID", "s", "1-0") == \
        err("ERR The ID specified in XSETID is smaller than the target stream top item")
    assert c("XSETID", "nokey", "1-0") == err("ERR no such key")
    assert c("XSETID", "s", "9-0", "MAXDELETEDID", "10-0") == \
        err("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
    assert c("XSETID", "s", "9-0", "ENTRIESADDED", "0") == \
        err("ERR The entries_added specified in XSETID is smaller than the target stream length")
    assert c("XSETID", "s", "9-0", "ENTRIESADDED", "-1") == err("ERR entries_added must be positive")
    assert c("XSETID", "s", "9-0", "FOO") == SYNTAX
    assert c("XSETID", "s", "x") == INVALID_ID
    assert c("XSETID", "s", "9-0", "ENTRIESADDED", "3", "MAXDELETEDID", "2-0") == "OK"
    assert c("XADD", "s", "9-*", "f", "v") == b"9-1"
    c("XDEL", "s", "5-0", "9-1")
    assert c("XSETID", "s", "1-0") == "OK"  # an empty stream takes any ID


def test_xread(server):
    c = server.raw()
    c("XADD", "a", "1-1", "f", "1")
    c("XADD", "b{x}", "2-1", "f", "2")
    c("XADD", "b{x}", "3-1", "f", "3")
    assert c("XREAD", "COUNT", "1", "STREAMS", "a", "b{x}", "0", "2-1") == \
        [[b"a", [[b"1-1", [b"f", b"1"]]]], [b"b{x}", [[b"3-1", [b"f", b"3"]]]]]
    assert c.raw_call("XREAD", "STREAMS", "a", "b{x}", "$", "$") == b"*-1\r\n"
    assert c.raw_call("XREAD", "STREAMS", "nokey", "0") == b"*-1\r\n"
    assert c("XREAD", "STREAMS", "a", "b{x}", "0") == \
        err("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
    assert c("XREAD", "COUNT", "1", "a", "0") == SYNTAX
    assert c("XREAD", "STREAMS", "a", "x") == INVALID_ID
    assert c("XREAD", "STREAMS", "a", "+") == INVALID_ID
    assert c("XREAD", "STREAMS", "a", "-") == INVALID_ID
    assert c("XREAD", "STREAMS", "a", ">") == err(
        "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
        "<consumer> option.")
    assert c("XREAD", "COUNT", "x", "STREAMS", "a", "0") == NOT_INT
    assert c("XREAD", "BLOCK", "-1", "STREAMS", "a", "0") == err("ERR timeout is negative")
    assert c("XREAD", "BLOCK", "x", "STREAMS", "a", "0") == \
        err("ERR timeout is not an integer or out of range")
    c("SET", "str", "v")
    assert c("XREAD", "STREAMS", "str", "0") == WRONGTYPE
    assert c("HELLO", "3")[b"proto"] == 3
    assert c.raw_call("XREAD", "STREAMS", "a", "0") == \
        b"%1\r\n$1\r\na\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nf\r\n$1\r\n1\r\n"
    assert c.raw_call("XREAD", "STREAMS", "a", "$") == b"_\r\n"


def test_xread_block(server):
    c = server.raw()
    c("XADD", "s", "1-1", "f", "1")
    start = time.monotonic()
    assert c.raw_call("XREAD", "BLOCK", "100", "STREAMS", "s", "$") == b"*-1\r\n"
    assert time.monotonic() - start >= 0.09
    result = {}

    def reader():
        r = server.raw()
        result["got"] = r("XREAD", "BLOCK", "5000", "STREAMS", "other", "s", "0-0", "$")

    t = threading.Thread(target=reader)
    t.start()
    waiter = server.raw()
    deadline = time.monotonic() + 5
    while waiter("INFO", "clients").find(b"blocked_clients:1") < 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    c("XADD", "s", "2-1", "f", "2")
    t.join(10)
    assert result["got"] == [[b"s", [[b"2-1", [b"f", b"2"]]]]]


def test_wrongtype_and_generic(server):
    c = server.raw()
    c("SET", "str", "v")
    for cmd in (["XADD", "str", "*", "a", "1"], ["XRANGE", "str", "-", "+"],
                ["XREVRANGE", "str", "+", "-"], ["XLEN", "str"], ["XDEL", "str", "1"],
                ["XTRIM", "str", "MAXLEN", "1"], ["XSETID", "str", "1-0"]):
        assert c(*cmd) == WRONGTYPE, cmd
    c("XADD", "s", "1-1", "a", "1")
    assert c("GET", "s") == WRONGTYPE
    assert c("HSET", "s", "a", "1") == WRONGTYPE
    assert c("RENAME", "s", "t") == "OK"
    assert c("XRANGE", "t", "-", "+") == [[b"1-1", [b"a", b"1"]]]
    assert c("COPY", "t", "u") == 1
    assert c("XADD", "u", "1-*", "b", "2") == b"1-2"
    assert c("XLEN", "t") == 1
    assert c("EXPIRE", "t", "100") == 1
    assert c("DEL", "t", "u") == 2
    c("XADD", "s", "1-1", "a", "1")
    assert c("MEMORY", "USAGE", "s") > 0


def test_keyspace_events(server):
    c = server.raw()
    c("CONFIG", "SET", "notify-keyspace-events", "KEt")
    try:
        sub = server.client()
        p = sub.pubsub()
        p.psubscribe("__keyspace@0__:*")
        p.get_message(timeout=1)
        c("XADD", "s", "MAXLEN", "1", "1-1", "a", "1")
        c("XADD", "s", "MAXLEN", "1", "2-1", "a", "1")
        c("XDEL", "s", "2-1")
        c("XADD", "s", "3-1", "a", "1")
        c("XTRIM", "s", "MAXLEN", "0")
        c("XSETID", "s", "5-0")
        events = []
        deadline = time.monotonic() + 3
        while len(events) < 7 and time.monotonic() < deadline:
            m = p.get_message(timeout=0.5)
            if m and m["type"] == "pmessage":
                events.append(m["data"])
        assert events == [b"xadd", b"xadd", b"xtrim", b"xdel", b"xadd", b"xtrim", b"xsetid"]
        p.close()
    finally:
        c("CONFIG", "SET", "notify-keyspace-events", "")


def test_old_history_over_many_nodes(server):
    """Reads and changes deep in a long stream (damselfly keeps its closed nodes
    compressed): pages forward and back, XDEL and exact trims inside old nodes, DUMP and
    RESTORE, all as in Redis."""
    c = server.raw()
    model = {}
    for i in range(1, 2501):
        fields = ["f1", "v1", "f2", str(i % 13), "f3", "x" * (i % 40)] if i % 50 else ["o", str(i)]
        assert c("XADD", "s", f"{i}-{i % 3}", *fields) == f"{i}-{i % 3}".encode()
        model[(i, i % 3)] = [f.encode() for f in fields]

    def expected(ids):
        return [[f"{ms}-{seq}".encode(), model[(ms, seq)]] for ms, seq in ids]

    ids = sorted(model)
    assert c("XRANGE", "s", "-", "+", "COUNT", "100") == expected(ids[:100])
    for start in (0, 97, 1234, 2450):
        ms, seq = ids[start]
        assert c("XRANGE", "s", f"{ms}-{seq}", "+", "COUNT", "150") == expected(ids[start:start + 150])
        assert c("XREVRANGE", "s", f"{ms}-{seq}", "-", "COUNT", "120") == \
            expected(ids[max(0, start - 119):start + 1][::-1])
    # XDEL in old nodes, twice in one, and one ID that is not there.
    gone = [ids[5], ids[6], ids[777], ids[1500]]
    assert c("XDEL", "s", *[f"{ms}-{seq}" for ms, seq in gone], "3000-0") == 4
    for key in gone:
        del model[key]
    ids = sorted(model)
    assert c("XLEN", "s") == len(ids)
    assert c("XRANGE", "s", "1-0", "20-0") == expected([k for k in ids if k <= (20, 0)])
    assert c("XRANGE", "s", "770-0", "790-0") == expected([k for k in ids if (770, 0) <= k <= (790, 0)])
    assert c("XRANGE", "s", "-", "+") == expected(ids)
    assert c("XADD", "s", "2501-0", "f1", "v1") == b"2501-0"
    model[(2501, 0)] = [b"f1", b"v1"]
    # Exact trims inside the first node, then by MINID into the old middle.
    assert c("XTRIM", "s", "MAXLEN", str(len(model) - 10)) == 10
    assert c("XTRIM", "s", "MINID", "1000-0") == len([k for k in sorted(model)[10:] if k < (1000, 0)])
    ids = [k for k in sorted(model) if k >= (1000, 0)]
    assert c("XRANGE", "s", "-", "+") == expected(ids)
    assert c("XRANGE", "s", "-", "+", "COUNT", "1") == expected(ids[:1])
    payload = c("DUMP", "s")
    assert c("RESTORE", "copy", "0", payload) == "OK"
    assert c("XRANGE", "copy", "-", "+") == expected(ids)
    assert c("XADD", "copy", "*", "f1", "v1")
    assert c("XLEN", "copy") == len(ids) + 1
