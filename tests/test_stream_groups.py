"""Stream consumer groups (XGROUP XREADGROUP XACK XPENDING XCLAIM XAUTOCLAIM XINFO) with
Redis 7.0's exact replies and error texts; validated against redis-server 7.0."""

import threading
import time

from helpers import err

SYNTAX = err("ERR syntax error")
NOT_INT = err("ERR value is not an integer or out of range")
INVALID_ID = err("ERR Invalid stream ID specified as stream command argument")
WRONGTYPE = err("WRONGTYPE Operation against a key holding the wrong kind of value")
NEEDS_KEY = err("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you "
                "may want to use the MKSTREAM option to create an empty stream automatically.")


def arity(cmd):
    return err(f"ERR wrong number of arguments for '{cmd}' command")


def sub_syntax(sub, container="XGROUP"):
    return err(f"ERR unknown subcommand or wrong number of arguments for '{sub}'. "
               f"Try {container} HELP.")


def as_dict(flat):
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def wait_blocked(server, count):
    probe = server.raw()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if probe("INFO", "clients").find(f"blocked_clients:{count}".encode()) >= 0:
            return
        time.sleep(0.01)
    raise AssertionError(f"never {count} blocked clients")


def blocked_call(server, *args):
    """Runs a command on a new connection in a thread; returns (thread, result dict)."""
    result = {}
    conn = server.raw()

    def run():
        result["reply"] = conn(*args)

    t = threading.Thread(target=run)
    t.start()
    return t, result


def test_xgroup_create_and_errors(server):
    c = server.raw()
    assert c("XGROUP", "CREATE", "s", "g", "$") == NEEDS_KEY
    assert c("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") == "OK"
    assert c("TYPE", "s") == "stream"
    assert c("XGROUP", "CREATE", "s", "g", "$") == err("BUSYGROUP Consumer Group name already exists")
    assert c("XGROUP", "CREATE", "s", "g2", "1-1", "ENTRIESREAD") == sub_syntax("CREATE")
    assert c("XGROUP", "create", "s", "g2", "1-1", "foo") == sub_syntax("create")
    assert c("XGROUP", "CREATE", "s", "g2", "1-1", "ENTRIESREAD", "-5") == \
        err("ERR value for ENTRIESREAD must be positive or -1")
    assert c("XGROUP", "CREATE", "s", "g2", "1-1", "ENTRIESREAD", "x") == NOT_INT
    assert c("XGROUP", "CREATE", "s", "g2", "abc") == INVALID_ID
    assert c("XGROUP", "CREATE", "nokey", "g2", "abc") == NEEDS_KEY
    assert c("XGROUP", "CREATE", "s") == arity("xgroup|create")
    assert c("XGROUP", "DESTROY", "s", "g", "x") == arity("xgroup|destroy")
    assert c("XGROUP", "CREATECONSUMER", "s", "g") == arity("xgroup|createconsumer")
    assert c("XGROUP", "FOO", "s") == err("ERR unknown subcommand 'FOO'. Try XGROUP HELP.")
    assert c("XGROUP", "SETID", "s", "nog", "0") == \
        err("NOGROUP No such consumer group 'nog' for key name 's'")
    assert c("XGROUP", "SETID", "nokey", "g", "0") == NEEDS_KEY
    assert c("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "3", "x") == sub_syntax("SETID")
    assert c("XGROUP", "SETID", "s", "g", "0", "FOO", "3") == sub_syntax("SETID")
    assert c("XGROUP", "SETID", "s", "g", "abc") == INVALID_ID
    assert c("XGROUP", "DESTROY", "s", "nog") == 0
    assert c("XGROUP", "DESTROY", "nokey", "g") == NEEDS_KEY
    assert c("XGROUP", "CREATECONSUMER", "s", "g", "c") == 1
    assert c("XGROUP", "CREATECONSUMER", "s", "g", "c") == 0
    assert c("XGROUP", "CREATECONSUMER", "s", "nog", "c") == \
        err("NOGROUP No such consumer group 'nog' for key name 's'")
    assert c("XGROUP", "DELCONSUMER", "s", "g", "c") == 0
    assert c("XGROUP", "DELCONSUMER", "s", "g", "zz") == 0
    assert c("XGROUP", "DESTROY", "s", "g") == 1
    c("SET", "str", "x")
    assert c("XGROUP", "CREATE", "str", "g", "0") == WRONGTYPE
    help_lines = c("XGROUP", "HELP")
    assert help_lines[0] == "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert len(help_lines) == 17


def test_xreadgroup_new_and_history(server):
    c = server.raw()
    c("XADD", "s", "1-1", "a", "1")
    c("XADD", "s", "2-1", "b", "2")
    c("XADD", "s", "3-1", "c", "3")
    assert c("XGROUP", "CREATE", "s", "g", "0") == "OK"
    assert c("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">") == \
        [[b"s", [[b"1-1", [b"a", b"1"]]]]]
    assert c("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">") == \
        [[b"s", [[b"2-1", [b"b", b"2"]], [b"3-1", [b"c", b"3"]]]]]
    assert c.raw_call("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">") == b"*-1\r\n"
    # History: the consumer's own pending entries after the ID.
    assert c("XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", "0") == \
        [[b"s", [[b"2-1", [b"b", b"2"]], [b"3-1", [b"c", b"3"]]]]]
    assert c("XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", "s", "2-1") == \
        [[b"s", [[b"3-1", [b"c", b"3"]]]]]
    assert c("XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", "0") == [[b"s", []]]
    # A deleted pending entry comes back as [id, nil].
    c("XDEL", "s", "2-1")
    assert c.raw_call("XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", "s", "0") == \
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*-1\r\n"
    # Delivery counts: bob's 3-1 was read three times.
    pending = c("XPENDING", "s", "g", "-", "+", "10")
    assert [(p[0], p[1], p[3]) for p in pending] == \
        [(b"1-1", b"alice", 1), (b"2-1", b"bob", 2), (b"3-1", b"bob", 3)]
    # NOACK delivers without a pending entry.
    c("XADD", "s", "4-1", "d", "4")
    assert c("XREADGROUP", "GROUP", "g", "dave", "NOACK", "STREAMS", "s", ">") == \
        [[b"s", [[b"4-1", [b"d", b"4"]]]]]
    assert c("XPENDING", "s", "g")[0] == 3
    consumers = [as_dict(x)[b"name"] for x in c("XINFO", "CONSUMERS", "s", "g")]
    assert consumers == [b"alice", b"bob", b"carol", b"dave"]


def test_xreadgroup_errors(server):
    c = server.raw()
    c("XADD", "s", "1-1", "a", "1")
    c("SET", "str", "x")
    nogroup = err("NOGROUP No such key 's' or consumer group 'g' in XREADGROUP with GROUP option")
    assert c("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") == nogroup
    assert c("XREADGROUP", "STREAMS", "s", ">") == arity("xreadgroup")
    assert c("XREADGROUP", "COUNT", "1", "NOACK", "STREAMS", "s", ">") == \
        err("ERR Missing GROUP option for XREADGROUP")
    assert c("XREADGROUP", "GROUP", "g", "c", "COUNT", "x", "STREAMS", "s", ">") == NOT_INT
    assert c("XREADGROUP", "GROUP", "g", "c", "BLOCK", "-1", "STREAMS", "s", ">") == \
        err("ERR timeout is negative")
    assert c("XREADGROUP", "GROUP", "g", "c", "BLOCK", "x", "STREAMS", "s", ">") == \
        err("ERR timeout is not an integer or out of range")
    assert c("XREADGROUP", "GROUP", "g", "c", "FOO", "STREAMS", "s", ">") == SYNTAX
    assert c("XREADGROUP", "STREAMS", "s", ">", "GROUP", "g", "c") == \
        err("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
            "specified.")
    assert c("XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">") == WRONGTYPE
    c("XGROUP", "CREATE", "s", "g", "0")
    assert c("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "str", ">", ">") == WRONGTYPE
    assert c("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$") == err(
        "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
        "history of this consumer by specifying a proper ID, or use the > ID to get new "
        "messages. The $ ID would just return an empty result set.")
    assert c("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "abc") == INVALID_ID
    # An error in a later key changes nothing: the first stream was not read.
    assert c("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "nokey", ">", ">") == \
        err("NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option")
    assert c("XPENDING", "s", "g")[0] == 0
    assert c("XREAD", "GROUP", "g", "c", "STREAMS", "s", ">") == \
        err("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
    assert c("XREAD", "NOACK", "STREAMS", "s", "0") == \
        err("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")


def test_xack(server):
    c = server.raw()
    for i in range(1, 4):
        c("XADD", "s", f"{i}-0", "f", str(i))
    c("XGROUP", "CREATE", "s", "g", "0")
    c("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert c("XACK", "s", "g") == arity("xack")
    assert c("XACK", "s", "g", "1-0", "abc") == INVALID_ID
    assert c("XACK", "s", "nog", "abc") == 0
    assert c("XACK", "nokey", "g", "1") == 0
    c("SET", "str", "x")
    assert c("XACK", "str", "g", "1") == WRONGTYPE
    assert c("XACK", "s", "g", "1-0", "2", "9") == 2
    assert c("XACK", "s", "g", "1-0") == 0
    assert c("XPENDING", "s", "g") == [1, b"3-0", b"3-0", [[b"c", b"1"]]]


def test_xpending(server):
    c = server.raw()
    c("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    assert c.raw_call("XPENDING", "s", "g") == b"*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"
    for i in range(1, 6):
        c("XADD", "s", f"{i}-0", "f", str(i))
    c("XREADGROUP", "GROUP", "g", "a", "COUNT", "2", "STREAMS", "s", ">")
    c("XREADGROUP", "GROUP", "g", "b", "COUNT", "3", "STREAMS", "s", ">")
    c("XGROUP", "CREATECONSUMER", "s", "g", "idle")
    assert c("XPENDING", "s", "g") == [5, b"1-0", b"5-0", [[b"a", b"2"], [b"b", b"3"]]]
    rows = c("XPENDING", "s", "g", "-", "+", "10")
    assert [r[0] for r in rows] == [b"1-0", b"2-0", b"3-0", b"4-0", b"5-0"]
    assert all(0 <= r[2] < 5000 and r[3] == 1 for r in rows)
    assert [r[0] for r in c("XPENDING", "s", "g", "(1", "(4", "10")] == [b"2-0", b"3-0", b"4-0"]
    assert [r[0] for r in c("XPENDING", "s", "g", "(1", "(4-0", "10")] == [b"2-0", b"3-0"]
    assert [r[0] for r in c("XPENDING", "s", "g", "-", "+", "10", "b")] == [b"3-0", b"4-0", b"5-0"]
    assert c("XPENDING", "s", "g", "-", "+", "10", "nobody") == []
    assert c("XPENDING", "s", "g", "-", "+", "-1") == []
    assert len(c("XPENDING", "s", "g", "IDLE", "-5", "-", "+", "2")) == 2
    assert c("XPENDING", "s", "g", "IDLE", "100000", "-", "+", "10") == []
    assert [r[0] for r in c("XPENDING", "s", "g", "-", "+", "10", "b", "extra")] == \
        [b"3-0", b"4-0", b"5-0"]
    assert c("XPENDING", "s", "g", "-", "+") == SYNTAX
    assert c("XPENDING", "s", "g", "IDLE", "5", "-", "+") == SYNTAX
    assert c("XPENDING", "s", "g", "IDLE", "5") == SYNTAX
    assert c("XPENDING", "s", "g", "IDLE", "x", "-", "+", "10") == NOT_INT
    assert c("XPENDING", "s", "g", "-", "+", "x") == NOT_INT
    assert c("XPENDING", "s", "g", "abc", "+", "10") == INVALID_ID
    assert c("XPENDING", "s", "g", "(-", "+", "10") == INVALID_ID
    assert c("XPENDING", "s", "g", "-", "(0-0", "10") == err("ERR invalid end ID for the interval")
    assert c("XPENDING", "s", "nog") == err("NOGROUP No such key 's' or consumer group 'nog'")
    assert c("XPENDING", "nokey", "g") == err("NOGROUP No such key 'nokey' or consumer group 'g'")
    assert c("XPENDING", "s") == arity("xpending")
    c("SET", "str", "x")
    assert c("XPENDING", "str", "g") == WRONGTYPE


def test_xclaim(server):
    c = server.raw()
    for i in range(1, 4):
        c("XADD", "s", f"{i}-0", "f", str(i))
    c("XGROUP", "CREATE", "s", "g", "0")
    c("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    assert c("XCLAIM", "s", "g", "b", "0") == arity("xclaim")
    assert c("XCLAIM", "s", "g", "b", "x", "1-0") == err("ERR Invalid min-idle-time argument for XCLAIM")
    assert c("XCLAIM", "s", "g", "b", "0", "abc") == err("ERR Unrecognized XCLAIM option 'abc'")
    assert c("XCLAIM", "s", "g", "b", "0", "1-0", "IDLE", "x") == \
        err("ERR Invalid IDLE option argument for XCLAIM")
    assert c("XCLAIM", "s", "g", "b", "0", "1-0", "TIME", "x") == \
        err("ERR Invalid TIME option argument for XCLAIM")
    assert c("XCLAIM", "s", "g", "b", "0", "1-0", "RETRYCOUNT", "x") == \
        err("ERR Invalid RETRYCOUNT option argument for XCLAIM")
    assert c("XCLAIM", "s", "g", "b", "0", "1-0", "LASTID", "x") == INVALID_ID
    assert c("XCLAIM", "s", "g", "b", "0", "1-0", "IDLE") == err("ERR Unrecognized XCLAIM option 'IDLE'")
    assert c("XCLAIM", "s", "nog", "b", "0", "1-0") == err("NOGROUP No such key 's' or consumer group 'nog'")
    assert c("XCLAIM", "nokey", "g", "b", "0", "1-0") == err("NOGROUP No such key 'nokey' or consumer group 'g'")
    # A high min-idle-time claims nothing.
    assert c("XCLAIM", "s", "g", "b", "3600000", "1-0") == []
    assert c("XCLAIM", "s", "g", "b", "0", "1-0") == [[b"1-0", [b"f", b"1"]]]
    assert c("XCLAIM", "s", "g", "b", "0", "2-0", "JUSTID") == [b"2-0"]
    assert c("XCLAIM", "s", "g", "b", "0", "3-0", "RETRYCOUNT", "7", "IDLE", "500000", "JUSTID") == [b"3-0"]
    rows = {r[0]: r for r in c("XPENDING", "s", "g", "-", "+", "10")}
    assert rows[b"1-0"][1] == b"b" and rows[b"1-0"][3] == 2
    assert rows[b"2-0"][3] == 1  # JUSTID does not count a delivery
    assert rows[b"3-0"][3] == 7 and rows[b"3-0"][2] >= 500000
    # An entry deleted from the stream leaves the PEL and is not claimed.
    c("XDEL", "s", "2-0")
    assert c("XCLAIM", "s", "g", "a", "0", "2-0") == []
    assert c("XPENDING", "s", "g")[0] == 2
    # FORCE creates a pending entry for an entry that is in the stream.
    c("XADD", "s", "4-0", "f", "4")
    assert c("XCLAIM", "s", "g", "a", "0", "4-0", "9-0") == []
    assert c("XCLAIM", "s", "g", "a", "0", "4-0", "9-0", "FORCE", "JUSTID") == [b"4-0"]
    assert [r[0] for r in c("XPENDING", "s", "g", "-", "+", "10", "a")] == [b"4-0"]
    # LASTID moves the group's last ID forward only.
    c("XCLAIM", "s", "g", "a", "0", "1-0", "LASTID", "100-0", "JUSTID")
    group = as_dict(c("XINFO", "GROUPS", "s")[0])
    assert group[b"last-delivered-id"] == b"100-0"


def test_xautoclaim(server):
    c = server.raw()
    for i in range(1, 6):
        c("XADD", "s", f"{i}-0", "f", str(i))
    c("XGROUP", "CREATE", "s", "g", "0")
    c("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    assert c("XAUTOCLAIM", "s", "g", "b", "x", "0") == \
        err("ERR Invalid min-idle-time argument for XAUTOCLAIM")
    assert c("XAUTOCLAIM", "s", "g", "b", "0", "abc") == INVALID_ID
    assert c("XAUTOCLAIM", "s", "g", "b", "0", "0", "COUNT", "0") == err("ERR COUNT must be > 0")
    assert c("XAUTOCLAIM", "s", "g", "b", "0", "0", "COUNT", "x") == err("ERR COUNT must be > 0")
    assert c("XAUTOCLAIM", "s", "g", "b", "0", "0", "FOO") == SYNTAX
    assert c("XAUTOCLAIM", "s", "nog", "b", "0", "0") == \
        err("NOGROUP No such key 's' or consumer group 'nog'")
    assert c("XAUTOCLAIM", "s", "g", "b", "0") == arity("xautoclaim")
    assert c("XAUTOCLAIM", "s", "g", "b", "0", "0", "COUNT", "2") == \
        [b"3-0", [[b"1-0", [b"f", b"1"]], [b"2-0", [b"f", b"2"]]], []]
    c("XDEL", "s", "3-0")
    assert c("XAUTOCLAIM", "s", "g", "b", "0", "3-0", "COUNT", "2", "JUSTID") == \
        [b"5-0", [b"4-0"], [b"3-0"]]
    assert c("XAUTOCLAIM", "s", "g", "b", "0", "(4-0", "JUSTID") == [b"0-0", [b"5-0"], []]
    assert c("XAUTOCLAIM", "s", "g", "b", "3600000", "0") == [b"0-0", [], []]
    assert c("XPENDING", "s", "g") == [4, b"1-0", b"5-0", [[b"b", b"4"]]]


def test_xinfo(server):
    c = server.raw()
    assert c("XINFO", "STREAM", "nokey") == err("ERR no such key")
    assert c("XINFO", "GROUPS", "nokey") == err("ERR no such key")
    c("XADD", "s", "1-1", "a", "1")
    c("XADD", "s", "2-1", "b", "2")
    c("XGROUP", "CREATE", "s", "g", "$")
    c("XGROUP", "CREATE", "s", "g2", "0")
    assert c("XINFO", "CONSUMERS", "s", "nog") == \
        err("NOGROUP No such consumer group 'nog' for key name 's'")
    assert c("XINFO", "STREAM", "s", "FULL", "COUNT", "x") == NOT_INT
    assert c("XINFO", "STREAM", "s", "foo") == sub_syntax("STREAM", "XINFO")
    assert c("XINFO", "STREAM", "s", "FULL", "foo", "1") == sub_syntax("STREAM", "XINFO")
    assert c("XINFO", "FOO", "s") == err("ERR unknown subcommand 'FOO'. Try XINFO HELP.")
    assert c("XINFO", "GROUPS") == arity("xinfo|groups")
    c("SET", "str", "x")
    assert c("XINFO", "STREAM", "str") == WRONGTYPE
    c("XREADGROUP", "GROUP", "g2", "c1", "COUNT", "1", "STREAMS", "s", ">")
    groups = [as_dict(g) for g in c("XINFO", "GROUPS", "s")]
    assert groups == [
        {b"name": b"g", b"consumers": 0, b"pending": 0, b"last-delivered-id": b"2-1",
         b"entries-read": None, b"lag": 0},
        {b"name": b"g2", b"consumers": 1, b"pending": 1, b"last-delivered-id": b"1-1",
         b"entries-read": 1, b"lag": 1}]
    consumer = as_dict(c("XINFO", "CONSUMERS", "s", "g2")[0])
    assert consumer[b"name"] == b"c1" and consumer[b"pending"] == 1 and consumer[b"idle"] < 5000
    info = as_dict(c("XINFO", "STREAM", "s"))
    assert list(info) == [b"length", b"radix-tree-keys", b"radix-tree-nodes", b"last-generated-id",
                          b"max-deleted-entry-id", b"entries-added", b"recorded-first-entry-id",
                          b"groups", b"first-entry", b"last-entry"]
    assert info[b"length"] == 2 and info[b"groups"] == 2 and info[b"entries-added"] == 2
    assert info[b"first-entry"] == [b"1-1", [b"a", b"1"]]
    assert info[b"last-entry"] == [b"2-1", [b"b", b"2"]]
    full = as_dict(c("XINFO", "STREAM", "s", "FULL"))
    assert list(full) == [b"length", b"radix-tree-keys", b"radix-tree-nodes", b"last-generated-id",
                          b"max-deleted-entry-id", b"entries-added", b"recorded-first-entry-id",
                          b"entries", b"groups"]
    assert full[b"entries"] == [[b"1-1", [b"a", b"1"]], [b"2-1", [b"b", b"2"]]]
    g2 = as_dict(full[b"groups"][1])
    assert list(g2) == [b"name", b"last-delivered-id", b"entries-read", b"lag", b"pel-count",
                        b"pending", b"consumers"]
    assert g2[b"pending"][0][:2] == [b"1-1", b"c1"] and g2[b"pending"][0][3] == 1
    c1 = as_dict(g2[b"consumers"][0])
    assert list(c1) == [b"name", b"seen-time", b"pel-count", b"pending"]
    assert c1[b"pending"][0][0] == b"1-1"
    assert as_dict(c("XINFO", "STREAM", "s", "FULL", "COUNT", "1"))[b"entries"] == \
        [[b"1-1", [b"a", b"1"]]]
    empty = server.raw()
    empty("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM")
    assert empty.raw_call("XINFO", "STREAM", "e").endswith(
        b"$11\r\nfirst-entry\r\n$-1\r\n$10\r\nlast-entry\r\n$-1\r\n")
    help_lines = c("XINFO", "HELP")
    assert help_lines[0] == "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"


def test_lag_and_entries_read(server):
    c = server.raw()

    def group(key, index=0):
        return as_dict(as_dict(c("XINFO", "STREAM", key, "FULL"))[b"groups"][index])

    c("XGROUP", "CREATE", "x", "g1", "0", "MKSTREAM")
    assert (group("x")[b"entries-read"], group("x")[b"lag"]) == (None, 0)
    c("XADD", "x", "1-0", "data", "a")
    c("XDEL", "x", "1-0")
    assert (group("x")[b"entries-read"], group("x")[b"lag"]) == (None, 0)
    c("DEL", "x")
    for i in range(1, 6):
        c("XADD", "x", f"{i}-0", "data", str(i))
    c("XDEL", "x", "3-0")
    c("XGROUP", "CREATE", "x", "g1", "0")
    c("XGROUP", "CREATE", "x", "g2", "0")
    assert (group("x")[b"entries-read"], group("x")[b"lag"]) == (None, None)
    for _ in range(3):
        c("XREADGROUP", "GROUP", "g1", "c", "COUNT", "1", "STREAMS", "x", ">")
        assert (group("x")[b"entries-read"], group("x")[b"lag"]) == (None, None)
    c("XREADGROUP", "GROUP", "g1", "c", "COUNT", "1", "STREAMS", "x", ">")
    assert (group("x")[b"entries-read"], group("x")[b"lag"]) == (5, 0)
    c("XADD", "x", "6-0", "data", "f")
    assert (group("x")[b"entries-read"], group("x")[b"lag"]) == (5, 1)
    c("XTRIM", "x", "MINID", "=", "3-0")
    assert (group("x", 1)[b"entries-read"], group("x", 1)[b"lag"]) == (None, 3)
    c("XTRIM", "x", "MINID", "=", "5-0")
    assert (group("x", 1)[b"entries-read"], group("x", 1)[b"lag"]) == (None, 2)
    c("XGROUP", "SETID", "x", "g2", "0", "ENTRIESREAD", "0")
    assert (group("x", 1)[b"entries-read"], group("x", 1)[b"lag"]) == (0, 6)
    c("XGROUP", "CREATE", "y", "g", "$", "MKSTREAM", "ENTRIESREAD", "3")
    assert group("y")[b"entries-read"] == 3


def test_setid_reassigns_pending(server):
    c = server.raw()
    for i in range(1, 4):
        c("XADD", "s", f"{i}-0", "f", str(i))
    c("XGROUP", "CREATE", "s", "g", "0")
    c("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s", ">")
    assert c("XGROUP", "SETID", "s", "g", "0") == "OK"
    c("XREADGROUP", "GROUP", "g", "b", "COUNT", "1", "STREAMS", "s", ">")
    assert c("XPENDING", "s", "g") == [3, b"1-0", b"3-0", [[b"a", b"2"], [b"b", b"1"]]]
    assert c("XGROUP", "DELCONSUMER", "s", "g", "a") == 2
    assert c("XPENDING", "s", "g") == [1, b"1-0", b"1-0", [[b"b", b"1"]]]


def test_blocking_xreadgroup(server):
    c = server.raw()
    c("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    start = time.monotonic()
    assert c.raw_call("XREADGROUP", "GROUP", "g", "a", "BLOCK", "100", "STREAMS", "s", ">") == \
        b"*-1\r\n"
    assert time.monotonic() - start >= 0.09
    # Not created while it only waited (Redis 7.0 creates the consumer when it is served).
    assert c("XINFO", "CONSUMERS", "s", "g") == []
    # Several streams (on several shards in damselfly): the one written wakes the reader.
    c("XGROUP", "CREATE", "other", "g", "$", "MKSTREAM")
    t, result = blocked_call(server, "XREADGROUP", "GROUP", "g", "a", "BLOCK", "5000",
                             "STREAMS", "other", "s", ">", ">")
    wait_blocked(server, 1)
    c("XADD", "s", "1-0", "f", "v")
    t.join(10)
    assert result["reply"] == [[b"s", [[b"1-0", [b"f", b"v"]]]]]
    assert c("XPENDING", "s", "g") == [1, b"1-0", b"1-0", [[b"a", b"1"]]]
    # A history ID never blocks.
    assert c("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", "1-0") == [[b"s", []]]


def test_blocking_xreadgroup_ends_with_errors(server):
    c = server.raw()
    cases = [
        (["DEL", "s"], err("UNBLOCKED the stream key no longer exists")),
        (["SET", "s", "x"], err("UNBLOCKED the stream key no longer exists")),
        (["XGROUP", "DESTROY", "s", "g"],
         err("NOGROUP the consumer group this client was blocked on no longer exists")),
        (["FLUSHALL"], err("UNBLOCKED the stream key no longer exists")),
    ]
    for command, expected in cases:
        c("DEL", "s")
        c("XADD", "s", "1-0", "f", "v")
        c("XGROUP", "CREATE", "s", "g", "$")
        t, result = blocked_call(server, "XREADGROUP", "GROUP", "g", "a", "BLOCK", "0",
                                 "STREAMS", "s", ">")
        wait_blocked(server, 1)
        c(*command)
        t.join(10)
        assert result["reply"] == expected, command


def test_blocking_xreadgroup_not_served_by_deleted_entries(server):
    c = server.raw()
    c("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    c("XADD", "s", "666", "f", "v")
    c("XDEL", "s", "666")
    assert c.raw_call("XREADGROUP", "GROUP", "g", "a", "BLOCK", "10", "STREAMS", "s", ">") == \
        b"*-1\r\n"
    for history in ("0", "600", "666", "700"):
        assert c("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", history) == \
            [[b"s", []]]


def test_xreadgroup_in_multi_and_scripts(server):
    c = server.raw()
    c("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    assert c("MULTI") == "OK"
    assert c("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">") == "QUEUED"
    assert c.raw_call("EXEC") == b"*1\r\n*-1\r\n"
    c("XADD", "s", "1-0", "f", "v")
    assert c("EVAL", "return redis.call('xreadgroup', 'group', 'g', 'a', 'streams', KEYS[1], '>')",
             "1", "s") == [[b"s", [[b"1-0", [b"f", b"v"]]]]]
    assert c("XPENDING", "s", "g")[0] == 1


def test_keyspace_events(server):
    c = server.raw()
    c("CONFIG", "SET", "notify-keyspace-events", "Et")
    sub = server.raw()
    sub("SUBSCRIBE", "__keyevent@0__:xgroup-create", "__keyevent@0__:xgroup-setid",
        "__keyevent@0__:xgroup-createconsumer", "__keyevent@0__:xgroup-delconsumer",
        "__keyevent@0__:xgroup-destroy")
    for _ in range(4):
        sub.read()
    try:
        c("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
        c("XGROUP", "SETID", "s", "g", "0")
        c("XGROUP", "CREATECONSUMER", "s", "g", "a")
        c("XADD", "s", "1-0", "f", "v")
        c("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", ">")
        c("XACK", "s", "g", "1-0")  # no event
        c("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", "0")  # no event
        c("XGROUP", "SETID", "s", "g", "0")
        c("XREADGROUP", "GROUP", "g", "b", "STREAMS", "s", ">")
        c("XCLAIM", "s", "g", "z", "0", "1-0")  # creates z
        c("XAUTOCLAIM", "s", "g", "y", "0", "0")  # creates y
        c("XGROUP", "DELCONSUMER", "s", "g", "a")
        c("XGROUP", "DELCONSUMER", "s", "g", "nobody")
        c("XGROUP", "DESTROY", "s", "g")
        got = [sub.read()[1].decode().split(":")[1] for _ in range(9)]
        assert got == ["xgroup-create", "xgroup-setid", "xgroup-createconsumer",
                       "xgroup-createconsumer", "xgroup-setid", "xgroup-createconsumer",
                       "xgroup-createconsumer", "xgroup-delconsumer", "xgroup-destroy"]
    finally:
        c("CONFIG", "SET", "notify-keyspace-events", "")


def test_groups_survive_rename_and_count_in_memory_usage(server):
    c = server.raw()
    for i in range(1, 50):
        c("XADD", "s{a}", f"{i}-0", "f", str(i))
    before = c("MEMORY", "USAGE", "s{a}")
    c("XGROUP", "CREATE", "s{a}", "g", "0")
    c("XREADGROUP", "GROUP", "g", "a", "STREAMS", "s{a}", ">")
    assert c("MEMORY", "USAGE", "s{a}") > before
    assert c("RENAME", "s{a}", "t{b}") == "OK"
    assert c("XPENDING", "t{b}", "g") == [49, b"1-0", b"49-0", [[b"a", b"49"]]]
