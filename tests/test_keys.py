"""Generic key commands, TTLs and expiry."""

import time

import pytest

from helpers import err, info_fields, set_many, wait_for

NOT_INT = err("ERR value is not an integer or out of range")
NX_XX_GT_LT = err("ERR NX and XX, GT or LT options at the same time are not compatible")
GT_LT = err("ERR GT and LT options at the same time are not compatible")
NO_SUCH_KEY = err("ERR no such key")


def arity(cmd):
    return err(f"ERR wrong number of arguments for '{cmd}' command")


# ------------------------------------------------------------ DEL / UNLINK / EXISTS / TOUCH


def test_del_counts(server):
    c = server.raw()
    set_many(c, {"a": "1", "b": "2", "c": "3"})
    assert c("DEL", "a", "b", "x") == 2
    assert c("DEL", "a") == 0
    assert c("DEL", "c", "c") == 1
    assert c("DBSIZE") == 0
    assert c("DEL") == arity("del")


def test_unlink_counts(server):
    c = server.raw()
    set_many(c, {"a": "1", "b": "2"})
    assert c("UNLINK", "a", "a", "x") == 1
    assert c("UNLINK", "b") == 1
    assert c("EXISTS", "a", "b") == 0
    assert c("UNLINK") == arity("unlink")


def test_exists_counts_repeats(server):
    c = server.raw()
    set_many(c, {"a": "1", "b": "2"})
    assert c("EXISTS", "a") == 1
    assert c("EXISTS", "a", "a", "b", "x") == 3
    assert c("EXISTS", "x", "y") == 0
    assert c("EXISTS") == arity("exists")


def test_touch_counts(server):
    c = server.raw()
    set_many(c, {"a": "1", "b": "2"})
    assert c("TOUCH", "a", "b", "x", "a") == 3
    assert c("TOUCH", "x") == 0
    assert c("TOUCH") == arity("touch")


def test_type(server):
    c = server.raw()
    c("SET", "s", "v")
    assert c.raw_call("TYPE", "s") == b"+string\r\n"
    assert c.raw_call("TYPE", "missing") == b"+none\r\n"
    c("SET", "n", "123")
    assert c("TYPE", "n") == "string"
    assert c("TYPE") == arity("type")


# ----------------------------------------------------------------------- EXPIRE family


def test_expire_ttl_pttl(server):
    c = server.raw()
    c("SET", "k", "v")
    assert c("TTL", "k") == -1
    assert c("PTTL", "k") == -1
    assert c("TTL", "missing") == -2
    assert c("PTTL", "missing") == -2
    assert c("EXPIRE", "k", "100") == 1
    assert c("TTL", "k") == 100
    assert 99000 <= c("PTTL", "k") <= 100000
    assert c("PEXPIRE", "k", "50000") == 1
    assert 49000 <= c("PTTL", "k") <= 50000
    assert c("TTL", "k") == 50
    assert c("EXPIRE", "missing", "10") == 0
    assert c("PEXPIRE", "missing", "10") == 0


def test_expireat_pexpireat_and_expiretime(server):
    c = server.raw()
    c("SET", "k", "v")
    assert c("EXPIRETIME", "k") == -1
    assert c("PEXPIRETIME", "k") == -1
    assert c("EXPIRETIME", "missing") == -2
    assert c("PEXPIRETIME", "missing") == -2
    assert c("EXPIREAT", "k", "4000000000") == 1
    assert c("EXPIRETIME", "k") == 4000000000
    assert c("PEXPIRETIME", "k") == 4000000000000
    assert c("PEXPIREAT", "k", "4000000000123") == 1
    assert c("EXPIRETIME", "k") == 4000000000
    assert c("PEXPIRETIME", "k") == 4000000000123
    assert c("EXPIREAT", "missing", "4000000000") == 0


def test_expire_in_the_past_deletes(server):
    c = server.raw()
    for cmd, arg in (("EXPIRE", "-1"), ("EXPIRE", "0"), ("PEXPIRE", "0"), ("PEXPIRE", "-100"),
                     ("EXPIREAT", "1"), ("PEXPIREAT", "1")):
        c("SET", "k", "v")
        assert c(cmd, "k", arg) == 1, (cmd, arg)
        assert c("EXISTS", "k") == 0, (cmd, arg)


def test_expire_nx_xx(server):
    c = server.raw()
    c("SET", "k", "v")
    assert c("EXPIRE", "k", "100", "XX") == 0
    assert c("TTL", "k") == -1
    assert c("EXPIRE", "k", "100", "NX") == 1
    assert c("EXPIRE", "k", "200", "NX") == 0
    assert c("TTL", "k") == 100
    assert c("EXPIRE", "k", "50", "XX") == 1
    assert c("TTL", "k") == 50
    assert c("EXPIRE", "k", "60", "xx") == 1  # case-insensitive
    assert c("TTL", "k") == 60
    assert c("EXPIRE", "missing", "10", "NX") == 0


def test_expire_gt_lt(server):
    c = server.raw()
    c("SET", "k", "v")
    # No TTL counts as an infinite TTL: GT never applies, LT always does.
    assert c("EXPIRE", "k", "50", "GT") == 0
    assert c("TTL", "k") == -1
    assert c("EXPIRE", "k", "50", "LT") == 1
    assert c("TTL", "k") == 50
    assert c("EXPIRE", "k", "40", "GT") == 0
    assert c("EXPIRE", "k", "60", "GT") == 1
    assert c("TTL", "k") == 60
    assert c("EXPIRE", "k", "70", "LT") == 0
    assert c("EXPIRE", "k", "30", "LT") == 1
    assert c("TTL", "k") == 30
    assert c("EXPIRE", "k", "10", "XX", "GT") == 0
    assert c("EXPIRE", "k", "40", "XX", "GT") == 1
    assert c("TTL", "k") == 40
    assert c("PEXPIRE", "k", "100000", "GT") == 1
    assert c("TTL", "k") == 100
    assert c("EXPIRE", "k", "-1", "XX", "LT") == 1
    assert c("EXISTS", "k") == 0


def test_expire_option_errors(server):
    c = server.raw()
    c("SET", "k", "v")
    for cmd, t in (("EXPIRE", "10"), ("PEXPIRE", "10000"), ("EXPIREAT", "4000000000"),
                   ("PEXPIREAT", "4000000000000")):
        assert c(cmd, "k", t, "NX", "XX") == NX_XX_GT_LT, cmd
        assert c(cmd, "k", t, "NX", "GT") == NX_XX_GT_LT, cmd
        assert c(cmd, "k", t, "NX", "LT") == NX_XX_GT_LT, cmd
        assert c(cmd, "k", t, "GT", "LT") == GT_LT, cmd
        assert c(cmd, "k", t, "FOO") == err("ERR Unsupported option FOO"), cmd
        assert c(cmd, "k", "abc") == NOT_INT, cmd
        assert c(cmd, "k") == arity(cmd.lower()), cmd
    assert c("EXPIRE", "k", "9223372036854775807") == err(
        "ERR invalid expire time in 'expire' command")
    assert c("PEXPIRE", "k", "9223372036854775807") == err(
        "ERR invalid expire time in 'pexpire' command")
    assert c("EXPIREAT", "k", "9223372036854775807") == err(
        "ERR invalid expire time in 'expireat' command")
    assert c("TTL", "k") == -1


def test_persist(server):
    c = server.raw()
    c("SET", "k", "v", "EX", "100")
    assert c("PERSIST", "k") == 1
    assert c("TTL", "k") == -1
    assert c("PERSIST", "k") == 0
    assert c("PERSIST", "missing") == 0
    assert c("GET", "k") == b"v"
    assert c("PERSIST") == arity("persist")


# ------------------------------------------------------------------------------- KEYS

PATTERN_KEYS = ["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "h?llo", "hbllo",
                "ab", "a[b", "a\\b", "x"]


@pytest.mark.parametrize("pattern,expected", [
    ("*", PATTERN_KEYS),
    ("h?llo", ["hello", "hallo", "hxllo", "h*llo", "h?llo", "hbllo"]),
    ("h*llo", ["hello", "hallo", "hxllo", "hllo", "heeeello", "h*llo", "h?llo", "hbllo"]),
    ("h[ae]llo", ["hello", "hallo"]),
    ("h[^e]llo", ["hallo", "hxllo", "h*llo", "h?llo", "hbllo"]),
    ("h[!e]llo", ["hello"]),  # '!' is no negation in Redis globs: a set of '!' and 'e'
    ("h[a-b]llo", ["hallo", "hbllo"]),
    ("h\\*llo", ["h*llo"]),
    ("h\\?llo", ["h?llo"]),
    ("a\\[b", ["a[b"]),
    ("a\\\\b", ["a\\b"]),
    ("?", ["x"]),
    ("??", ["ab"]),
    ("nomatch*", []),
    ("hello", ["hello"]),
])
def test_keys_patterns(server, pattern, expected):
    c = server.raw()
    set_many(c, [(k, "1") for k in PATTERN_KEYS])
    got = sorted(k.decode() for k in c("KEYS", pattern))
    assert got == sorted(expected)


def test_keys_empty_and_arity(server):
    c = server.raw()
    assert c.raw_call("KEYS", "*") == b"*0\r\n"
    assert c("KEYS") == arity("keys")


def test_keys_skips_expired(server):
    c = server.raw()
    c("SET", "live", "1")
    c("SET", "dead", "1", "PX", "1")
    time.sleep(0.01)
    assert c("KEYS", "*") == [b"live"]


# ------------------------------------------------------------------------------- SCAN


def scan_all(c, *args):
    cursor, seen, calls = b"0", [], 0
    while True:
        reply = c("SCAN", cursor, *args)
        assert isinstance(reply, list) and len(reply) == 2, reply
        cursor, keys = reply
        assert isinstance(cursor, bytes) and cursor.isdigit(), cursor
        seen.extend(keys)
        calls += 1
        assert calls < 100000, "SCAN does not terminate"
        if cursor == b"0":
            return seen, calls


def test_scan_full_iteration(server):
    c = server.raw()
    keys = [f"key:{i}".encode() for i in range(1000)] + [b"bin\x00\r\nkey", b"", b"\xff\xfe"]
    c.send_many([("SET", k, "v") for k in keys])
    for _ in keys:
        assert c.read() == "OK"
    seen, calls = scan_all(c)
    # No modification during the scan: every key exactly once.
    assert sorted(seen) == sorted(keys)
    assert calls > 1
    seen, _ = scan_all(c, "COUNT", "100")
    assert sorted(seen) == sorted(keys)


def test_scan_deletes_the_expired_keys_it_passes(server_factory, target):
    """As Redis 7.0: SCAN skips keys past their deadline and deletes them (with active
    expiry off, nothing else would), so DBSIZE and INFO's expired_keys follow."""
    c = server_factory(*(("--enable-debug-command=local",) if target == "redis" else ())).raw()
    assert c("DEBUG", "SET-ACTIVE-EXPIRE", 0) == "OK"
    try:
        c.send_many([("SET", f"gone:{i}", "v", "PX", 1) for i in range(50)] +
                    [("SET", f"kept:{i}", "v") for i in range(50)])
        for _ in range(100):
            assert c.read() == "OK"
        time.sleep(0.01)
        expired_before = int(info_fields(c, "stats")["expired_keys"])
        assert c("DBSIZE") == 100  # counted until something deletes them
        seen, _ = scan_all(c)
        assert sorted(seen) == sorted(f"kept:{i}".encode() for i in range(50))
        assert c("DBSIZE") == 50
        assert int(info_fields(c, "stats")["expired_keys"]) == expired_before + 50
    finally:
        assert c("DEBUG", "SET-ACTIVE-EXPIRE", 1) == "OK"


def test_scan_match(server):
    c = server.raw()
    c.send_many([("SET", f"user:{i}", i) for i in range(200)] +
                [("SET", f"item:{i}", i) for i in range(200)])
    for _ in range(400):
        assert c.read() == "OK"
    seen, _ = scan_all(c, "MATCH", "user:1*", "COUNT", "50")
    expected = {f"user:{i}".encode() for i in range(200) if str(i).startswith("1")}
    assert len(seen) == len(expected) and set(seen) == expected


def test_scan_type(server):
    c = server.raw()
    for i in range(50):
        c("SET", f"s{i}", i)
    seen, _ = scan_all(c, "TYPE", "string")
    assert sorted(seen) == sorted(f"s{i}".encode() for i in range(50))
    seen, _ = scan_all(c, "TYPE", "hash")
    assert seen == []
    seen, _ = scan_all(c, "TYPE", "STRING", "MATCH", "s1*", "COUNT", "7")
    assert sorted(seen) == sorted(f"s{i}".encode() for i in range(50) if str(i).startswith("1"))


def test_scan_empty_and_errors(server):
    c = server.raw()
    assert c.raw_call("SCAN", "0") == b"*2\r\n$1\r\n0\r\n*0\r\n"
    assert c("SCAN", "abc") == err("ERR invalid cursor")
    assert c("SCAN", "18446744073709551616") == err("ERR invalid cursor")
    assert c("SCAN", "0", "COUNT", "0") == err("ERR syntax error")
    assert c("SCAN", "0", "COUNT", "-1") == err("ERR syntax error")
    assert c("SCAN", "0", "COUNT", "abc") == NOT_INT
    assert c("SCAN", "0", "MATCH") == err("ERR syntax error")
    assert c("SCAN", "0", "FOO", "bar") == err("ERR syntax error")
    assert c("SCAN") == arity("scan")


# -------------------------------------------------------------------------- RANDOMKEY


def test_randomkey(server):
    c = server.raw()
    assert c.raw_call("RANDOMKEY") == b"$-1\r\n"
    keys = {f"k{i}".encode() for i in range(20)}
    for k in keys:
        c("SET", k, "v")
    for _ in range(20):
        assert c("RANDOMKEY") in keys
    assert c("RANDOMKEY", "x") == arity("randomkey")


# --------------------------------------------------------------------- RENAME / RENAMENX


def test_rename(server):
    c = server.raw()
    c("SET", "a", "va")
    assert c("RENAME", "a", "b") == "OK"
    assert c("EXISTS", "a") == 0
    assert c("GET", "b") == b"va"
    c("SET", "c", "vc")
    assert c("RENAME", "b", "c") == "OK"  # overwrites
    assert c("GET", "c") == b"va"
    assert c("DBSIZE") == 1
    assert c("RENAME", "missing", "x") == NO_SUCH_KEY
    assert c("RENAME", "missing", "missing") == NO_SUCH_KEY
    assert c("RENAME", "c", "c") == "OK"
    assert c("GET", "c") == b"va"
    assert c("RENAME", "c") == arity("rename")


def test_renamenx(server):
    c = server.raw()
    c("SET", "a", "va")
    c("SET", "b", "vb")
    assert c("RENAMENX", "a", "b") == 0
    assert c("GET", "a") == b"va" and c("GET", "b") == b"vb"
    assert c("RENAMENX", "a", "new") == 1
    assert c("EXISTS", "a") == 0
    assert c("GET", "new") == b"va"
    assert c("RENAMENX", "new", "new") == 0
    assert c("RENAMENX", "missing", "x") == NO_SUCH_KEY
    assert c("RENAMENX", "a") == arity("renamenx")


def test_rename_moves_ttl(server):
    c = server.raw()
    c("SET", "t", "v", "EX", "100")
    assert c("RENAME", "t", "t2") == "OK"
    assert c("TTL", "t2") == 100
    # The destination's own TTL is replaced by the source's (here: none).
    c("SET", "dst", "old", "EX", "100")
    c("SET", "src", "new")
    assert c("RENAME", "src", "dst") == "OK"
    assert c("TTL", "dst") == -1
    assert c("GET", "dst") == b"new"
    c("SET", "n1", "v", "PX", "500000")
    assert c("RENAMENX", "n1", "n2") == 1
    assert 499000 <= c("PTTL", "n2") <= 500000


def test_rename_across_many_keys(server):
    # Source and destination very likely live on different shards for some of these.
    c = server.raw()
    for i in range(64):
        c("SET", f"src{i}", f"v{i}")
    for i in range(64):
        assert c("RENAME", f"src{i}", f"dst{i}") == "OK"
    for i in range(64):
        assert c("GET", f"dst{i}") == f"v{i}".encode()
    assert c("DBSIZE") == 64


# --------------------------------------------------------------------- OBJECT ENCODING


@pytest.mark.parametrize("value,encoding", [
    ("1", b"int"),
    ("-1", b"int"),
    ("12345", b"int"),
    ("9223372036854775807", b"int"),
    ("9223372036854775808", b"embstr"),
    ("0123", b"embstr"),
    (" 1", b"embstr"),
    ("hello", b"embstr"),
    ("x" * 44, b"embstr"),
    ("x" * 45, b"raw"),
    ("x" * 1000, b"raw"),
])
def test_object_encoding(server, value, encoding):
    c = server.raw()
    c("SET", "k", value)
    assert c("OBJECT", "ENCODING", "k") == encoding


def test_object_encoding_changes(server):
    c = server.raw()
    c("SET", "k", "abc")
    c("APPEND", "k", "d")
    assert c("OBJECT", "ENCODING", "k") == b"raw"
    c("SET", "n", "10")
    c("INCR", "n")
    assert c("OBJECT", "ENCODING", "n") == b"int"
    c("SET", "r", "12345")
    c("SETRANGE", "r", "1", "ab")
    assert c("OBJECT", "ENCODING", "r") == b"raw"
    assert c.raw_call("OBJECT", "ENCODING", "missing") == b"$-1\r\n"
    assert c("OBJECT", "FOO", "k") == err("ERR unknown subcommand 'FOO'. Try OBJECT HELP.")
    assert c("OBJECT", "ENCODING") == arity("object|encoding")


# ----------------------------------------------------------------------------- expiry


def test_lazy_expiry_on_access(server):
    c = server.raw()
    start = time.monotonic()
    c("SET", "k", "v", "PX", "50")
    value = c("GET", "k")
    if time.monotonic() - start < 0.045:  # only meaningful when the GET surely came first
        assert value == b"v"
    time.sleep(max(0.0, start + 0.07 - time.monotonic()))
    assert c("GET", "k") is None
    assert c("TTL", "k") == -2
    assert c("EXISTS", "k") == 0


def test_expired_key_invisible_everywhere(server):
    c = server.raw()
    for cmd in (("GET", "k"), ("EXISTS", "k"), ("TTL", "k"), ("STRLEN", "k"), ("TYPE", "k"),
                ("GETRANGE", "k", "0", "-1"), ("APPEND", "k", "x"), ("INCR", "k"),
                ("SETNX", "k", "new"), ("RENAME", "k", "k2")):
        c("SET", "k", "old", "PX", "20")
        time.sleep(0.03)
        reply = c(*cmd)
        expected = {"GET": None, "EXISTS": 0, "TTL": -2, "STRLEN": 0, "TYPE": "none",
                    "GETRANGE": b"", "APPEND": 1, "INCR": 1, "SETNX": 1,
                    "RENAME": NO_SUCH_KEY}[cmd[0]]
        assert reply == expected, cmd
        c("DEL", "k")


def test_active_expiry_without_access(server):
    c = server.raw()
    before = int(info_fields(c, "stats")["expired_keys"])
    c.send_many([("SET", f"exp:{i}", "v", "PX", "50") for i in range(100)])
    for _ in range(100):
        assert c.read() == "OK"
    c("SET", "keeper", "v")
    assert c("DBSIZE") >= 1
    # No command touches the keys: only the active expiry cycle can remove them.
    wait_for(lambda: c("DBSIZE") == 1, timeout=5, what="DBSIZE == 1 after active expiry")
    keyspace = info_fields(c, "keyspace")
    assert keyspace["db0"].startswith("keys=1,expires=0,"), keyspace
    after = int(info_fields(c, "stats")["expired_keys"])
    assert after - before == 100


# ------------------------------------------------------------------ MOVE, SWAPDB, key specs


def test_move(server):
    c = server.raw()
    c("SET", "k", "v", "EX", "100")
    assert c("MOVE", "k", "1") == 1
    assert c("EXISTS", "k") == 0
    c("SET", "k", "again")
    assert c("TTL", "k") == -1  # the deadline left with the key
    c("DEL", "k")
    c("SELECT", "1")
    assert c("GET", "k") == b"v"
    assert 0 < c("TTL", "k") <= 100  # the deadline moves with the key
    c("SELECT", "0")
    assert c("MOVE", "k", "1") == 0  # missing here
    c("SET", "k", "here")
    assert c("MOVE", "k", "1") == 0  # exists there
    assert c("GET", "k") == b"here"
    assert c("MOVE", "k", "0") == err("ERR source and destination objects are the same")
    assert c("MOVE", "k", "100000") == err("ERR DB index is out of range")
    assert c("MOVE", "k", "-1") == err("ERR DB index is out of range")
    assert c("MOVE", "k", "x") == err("ERR value is not an integer or out of range")
    assert c("MOVE", "k") == err("ERR wrong number of arguments for 'move' command")


def test_rename_leaves_no_deadline_behind(server):
    c = server.raw()
    c("SET", "{r}a", "v", "EX", "100")
    assert c("RENAME", "{r}a", "{r}b") == "OK"
    assert 0 < c("TTL", "{r}b") <= 100
    c("SET", "{r}a", "new")
    assert c("TTL", "{r}a") == -1
    c("SET", "{r}c", "v")
    c("SET", "{r}d", "v", "EX", "100")
    assert c("RENAME", "{r}c", "{r}d") == "OK"  # the target's deadline goes too
    assert c("TTL", "{r}d") == -1


def test_swapdb(server):
    c, other = server.raw(), server.raw()
    c("SET", "a", "in0")
    other("SELECT", "1")
    other("SET", "b", "in1")
    assert c("SWAPDB", "0", "1") == "OK"
    assert c("GET", "b") == b"in1"
    assert c("EXISTS", "a") == 0
    assert other("GET", "a") == b"in0"
    assert c("SWAPDB", "0", "0") == "OK"
    assert c("DBSIZE") == 1
    assert c("SWAPDB", "x", "1") == err("ERR invalid first DB index")
    assert c("SWAPDB", "0", "x") == err("ERR invalid second DB index")
    assert c("SWAPDB", "0", "100000") == err("ERR DB index is out of range")
    assert c("SWAPDB", "-1", "0") == err("ERR DB index is out of range")


def test_command_getkeys_and_flags(server):
    c = server.raw()
    assert c("COMMAND", "GETKEYS", "MSET", "a", "1", "b", "2") == [b"a", b"b"]
    assert c("COMMAND", "GETKEYS", "RENAME", "a", "b") == [b"a", b"b"]
    assert c("COMMAND", "GETKEYSANDFLAGS", "COPY", "a", "b") == [
        [b"a", ["RO", "access"]], [b"b", ["OW", "update"]]]
    assert c("COMMAND", "GETKEYSANDFLAGS", "DEL", "a", "b") == [
        [b"a", ["RM", "delete"]], [b"b", ["RM", "delete"]]]
    assert c("COMMAND", "GETKEYSANDFLAGS", "GET", "a") == [[b"a", ["RO", "access"]]]
    assert c("COMMAND", "GETKEYS", "PING", "x") == err("ERR The command has no key arguments")
    assert c("COMMAND", "GETKEYS", "NOPE", "a") == err("ERR Invalid command specified")
    assert c("COMMAND", "GETKEYS", "GET", "a", "b") == err(
        "ERR Invalid number of arguments specified for command")
    assert c("COMMAND", "GETKEYS", "GET") == err(
        "ERR wrong number of arguments for 'command|getkeys' command")
    # SET's and BITFIELD's key flags depend on the call (variable_flags).
    rw = ["RW", "access", "update"]
    for call, flags in ((("SET", "a", "b"), ["OW", "update"]),
                        (("SET", "a", "b", "EX", "10", "get"), rw),
                        (("SET", "a", "b", "getx"), ["OW", "update"]),
                        (("BITFIELD", "a"), ["RO", "access"]),
                        (("BITFIELD", "a", "OVERFLOW", "SAT", "GET", "u8", "0"), ["RO", "access"]),
                        (("BITFIELD", "a", "GET", "u8", "0", "INCRBY", "u8", "0", "1"), rw),
                        (("BITFIELD", "a", "GET", "u8"), rw)):
        assert c("COMMAND", "GETKEYSANDFLAGS", *call) == [[b"a", flags]], call
    assert c("COMMAND", "GETKEYSANDFLAGS", "MSET", "a", "1", "b", "2") == [
        [b"a", ["OW", "update"]], [b"b", ["OW", "update"]]]
    assert c("COMMAND", "GETKEYSANDFLAGS", "ZPOPMIN", "a") == [[b"a", ["RW", "access", "delete"]]]
    assert c("COMMAND", "GETKEYSANDFLAGS", "TYPE", "a") == [[b"a", ["RO"]]]
    assert c("COMMAND", "GETKEYS", "EVAL", "return 1", "0") == []
    assert c("COMMAND", "GETKEYS", "FCALL", "f", "0") == []
    info = c("COMMAND", "INFO", "RENAME")[0]
    specs = info[8]
    assert len(specs) == 2
    assert c("COMMAND", "INFO", "MOVE")[0][3:6] == [1, 1, 1]


def test_object_idletime(server):
    c = server.raw()
    c("SET", "foo", "bar")
    c("SET", "other", "x")
    assert c("OBJECT", "IDLETIME", "foo") <= 1
    assert c("OBJECT", "IDLETIME", "missing") is None
    time.sleep(2.5)
    # TTL, TYPE, EXISTS and OBJECT do not count as a use ...
    for cmd in (("TTL", "foo"), ("TYPE", "foo"), ("EXISTS", "foo"), ("OBJECT", "ENCODING", "foo")):
        c(*cmd)
    assert c("OBJECT", "IDLETIME", "foo") >= 2
    # ... reads, writes and TOUCH do.
    assert c("GET", "foo") == b"bar"
    assert c("OBJECT", "IDLETIME", "foo") <= 1
    assert c("TOUCH", "other") == 1
    assert c("OBJECT", "IDLETIME", "other") <= 1
