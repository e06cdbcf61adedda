"""String commands with Redis 7.0's exact replies and error texts."""

import time

import pytest

from helpers import err, json_records

SYNTAX = err("ERR syntax error")
NOT_INT = err("ERR value is not an integer or out of range")
NOT_FLOAT = err("ERR value is not a valid float")
OVERFLOW = err("ERR increment or decrement would overflow")
LLONG_MAX = "9223372036854775807"
LLONG_MIN = "-9223372036854775808"


def arity(cmd):
    return err(f"ERR wrong number of arguments for '{cmd}' command")


def invalid_expire(cmd):
    return err(f"ERR invalid expire time in '{cmd}' command")


# -------------------------------------------------------------------------- SET / GET


def test_set_get_basic(server):
    c = server.raw()
    assert c.raw_call("SET", "k", "v") == b"+OK\r\n"
    assert c.raw_call("GET", "k") == b"$1\r\nv\r\n"
    assert c.raw_call("GET", "missing") == b"$-1\r\n"
    assert c("SET", "k", "") == "OK"
    assert c.raw_call("GET", "k") == b"$0\r\n\r\n"
    assert c("SET", "k", "overwritten") == "OK"
    assert c("GET", "k") == b"overwritten"
    assert c("SET", "k") == arity("set")
    assert c("SET") == arity("set")
    assert c("GET") == arity("get")
    assert c("GET", "a", "b") == arity("get")


def test_set_large_value(server):
    c = server.raw()
    value = bytes(range(256)) * 4096  # 1 MiB
    assert c("SET", "big", value) == "OK"
    assert c("GET", "big") == value
    assert c("STRLEN", "big") == len(value)


def test_set_ex_px_ttl(server):
    c = server.raw()
    assert c("SET", "k", "v", "EX", "100") == "OK"
    assert c("TTL", "k") == 100
    assert c("SET", "k", "v", "PX", "100000") == "OK"
    assert 99000 <= c("PTTL", "k") <= 100000
    assert c("SET", "k", "v", "ex", "50") == "OK"  # options are case-insensitive
    assert c("TTL", "k") == 50
    # A plain SET clears the TTL.
    assert c("SET", "k", "v") == "OK"
    assert c("TTL", "k") == -1


def test_set_exat_pxat(server):
    c = server.raw()
    at = int(time.time()) + 1000
    assert c("SET", "k", "v", "EXAT", at) == "OK"
    assert 998 <= c("TTL", "k") <= 1000
    assert c("EXPIRETIME", "k") == at
    assert c("SET", "k", "v", "PXAT", at * 1000 + 123) == "OK"
    assert c("PEXPIRETIME", "k") == at * 1000 + 123
    # A deadline in the past: OK, and the key is gone at once.
    assert c("SET", "k", "v", "EXAT", "1") == "OK"
    assert c("EXISTS", "k") == 0
    assert c("SET", "k", "v", "PXAT", "1") == "OK"
    assert c("GET", "k") is None


def test_set_invalid_expire(server):
    c = server.raw()
    for opt in ("EX", "PX", "EXAT", "PXAT"):
        assert c("SET", "k", "v", opt, "0") == invalid_expire("set"), opt
        assert c("SET", "k", "v", opt, "-1") == invalid_expire("set"), opt
        assert c("SET", "k", "v", opt, "abc") == NOT_INT, opt
        assert c("SET", "k", "v", opt, "1.5") == NOT_INT, opt
    assert c("SET", "k", "v", "EX", LLONG_MAX) == invalid_expire("set")
    assert c("SET", "k", "v", "PX", LLONG_MAX) == invalid_expire("set")
    assert c("EXISTS", "k") == 0


def test_set_syntax_errors(server):
    c = server.raw()
    for args in (("EX", "10", "PX", "100"), ("PX", "10", "EX", "100"), ("EX", "10", "EXAT", "1"),
                 ("PXAT", "10", "EX", "100"), ("NX", "XX"), ("XX", "NX"), ("KEEPTTL", "EX", "10"),
                 ("EX", "10", "KEEPTTL"), ("KEEPTTL", "PX", "10"), ("EX",), ("PX",), ("FOO",),
                 ("NX", "FOO"), ("EX", "10", "EXTRA")):
        assert c("SET", "k", "v", *args) == SYNTAX, args
    assert c("EXISTS", "k") == 0


def test_set_repeated_same_expire_option(server):
    c = server.raw()
    # Redis accepts a repeated EX; the last one wins.
    assert c("SET", "k", "v", "EX", "10", "EX", "20") == "OK"
    assert c("TTL", "k") == 20


def test_set_nx_xx(server):
    c = server.raw()
    assert c.raw_call("SET", "k", "v1", "XX") == b"$-1\r\n"
    assert c("EXISTS", "k") == 0
    assert c("SET", "k", "v1", "NX") == "OK"
    assert c.raw_call("SET", "k", "v2", "NX") == b"$-1\r\n"
    assert c("GET", "k") == b"v1"
    assert c("SET", "k", "v3", "XX") == "OK"
    assert c("GET", "k") == b"v3"
    assert c("SET", "k", "v4", "nx") is None


def test_set_get_option(server):
    c = server.raw()
    assert c("SET", "k", "v1", "GET") is None
    assert c("SET", "k", "v2", "GET") == b"v1"
    assert c("GET", "k") == b"v2"
    # NX + GET is allowed since 7.0: returns the old value, does not set.
    assert c("SET", "k", "v3", "NX", "GET") == b"v2"
    assert c("GET", "k") == b"v2"
    assert c("SET", "new", "x", "NX", "GET") is None
    assert c("GET", "new") == b"x"
    assert c("SET", "k", "v4", "XX", "GET") == b"v2"
    assert c("SET", "nokey", "v", "XX", "GET") is None
    assert c("EXISTS", "nokey") == 0
    assert c("SET", "k", "v5", "GET", "EX", "100") == b"v4"
    assert c("TTL", "k") == 100


def test_set_keepttl(server):
    c = server.raw()
    assert c("SET", "k", "v", "EX", "100") == "OK"
    assert c("SET", "k", "v2", "KEEPTTL") == "OK"
    assert c("TTL", "k") == 100
    assert c("GET", "k") == b"v2"
    assert c("SET", "k", "v3") == "OK"
    assert c("TTL", "k") == -1
    assert c("SET", "fresh", "v", "KEEPTTL") == "OK"
    assert c("TTL", "fresh") == -1


# ---------------------------------------------------------------- GETSET / GETDEL / GETEX


def test_getset(server):
    c = server.raw()
    assert c("GETSET", "k", "v1") is None
    assert c("GETSET", "k", "v2") == b"v1"
    assert c("GET", "k") == b"v2"
    c("SET", "t", "v", "EX", "100")
    assert c("GETSET", "t", "w") == b"v"
    assert c("TTL", "t") == -1  # GETSET discards the TTL
    assert c("GETSET", "k") == arity("getset")


def test_getdel(server):
    c = server.raw()
    c("SET", "k", "v")
    assert c("GETDEL", "k") == b"v"
    assert c("EXISTS", "k") == 0
    assert c("GETDEL", "k") is None
    assert c("GETDEL") == arity("getdel")


def test_getex(server):
    c = server.raw()
    assert c("GETEX", "missing") is None
    assert c("GETEX", "missing", "EX", "10") is None
    assert c("EXISTS", "missing") == 0
    c("SET", "k", "v")
    assert c("GETEX", "k") == b"v"
    assert c("TTL", "k") == -1
    assert c("GETEX", "k", "EX", "100") == b"v"
    assert c("TTL", "k") == 100
    assert c("GETEX", "k", "PERSIST") == b"v"
    assert c("TTL", "k") == -1
    assert c("GETEX", "k", "PX", "100000") == b"v"
    assert 99000 <= c("PTTL", "k") <= 100000
    at = int(time.time()) + 500
    assert c("GETEX", "k", "EXAT", at) == b"v"
    assert c("EXPIRETIME", "k") == at
    assert c("GETEX", "k", "PXAT", at * 1000 + 7) == b"v"
    assert c("PEXPIRETIME", "k") == at * 1000 + 7
    # A plain GETEX keeps the TTL.
    assert c("GETEX", "k") == b"v"
    assert c("PEXPIRETIME", "k") == at * 1000 + 7
    # A deadline in the past returns the value and deletes the key.
    assert c("GETEX", "k", "EXAT", "1") == b"v"
    assert c("EXISTS", "k") == 0


def test_getex_errors(server):
    c = server.raw()
    c("SET", "k", "v")
    for opt in ("EX", "PX", "EXAT", "PXAT"):
        assert c("GETEX", "k", opt, "0") == invalid_expire("getex"), opt
        assert c("GETEX", "k", opt, "-1") == invalid_expire("getex"), opt
        assert c("GETEX", "k", opt, "abc") == NOT_INT, opt
    assert c("GETEX", "k", "EX", LLONG_MAX) == invalid_expire("getex")
    for args in (("EX", "10", "PX", "10"), ("EX", "10", "PERSIST"), ("PERSIST", "EX", "10"),
                 ("FOO",), ("EX",), ("PERSIST", "FOO")):
        assert c("GETEX", "k", *args) == SYNTAX, args
    assert c("GETEX") == arity("getex")
    assert c("TTL", "k") == -1


# ------------------------------------------------------------- SETNX / SETEX / PSETEX


def test_setnx(server):
    c = server.raw()
    assert c("SETNX", "k", "v1") == 1
    assert c("SETNX", "k", "v2") == 0
    assert c("GET", "k") == b"v1"
    assert c("SETNX", "k") == arity("setnx")


def test_setex_psetex(server):
    c = server.raw()
    assert c("SETEX", "k", "100", "v") == "OK"
    assert c("GET", "k") == b"v"
    assert c("TTL", "k") == 100
    assert c("PSETEX", "p", "100000", "v") == "OK"
    assert 99000 <= c("PTTL", "p") <= 100000
    for secs in ("0", "-5", LLONG_MAX):
        assert c("SETEX", "e", secs, "v") == invalid_expire("setex"), secs
    for ms in ("0", "-5", LLONG_MAX):
        assert c("PSETEX", "e", ms, "v") == invalid_expire("psetex"), ms
    assert c("SETEX", "e", "abc", "v") == NOT_INT
    assert c("PSETEX", "e", "1.5", "v") == NOT_INT
    assert c("EXISTS", "e") == 0
    assert c("SETEX", "e", "10") == arity("setex")
    assert c("PSETEX", "e", "10") == arity("psetex")


# ------------------------------------------------------------------- APPEND / STRLEN


def test_append_strlen(server):
    c = server.raw()
    assert c("STRLEN", "k") == 0
    assert c("APPEND", "k", "hello") == 5
    assert c("APPEND", "k", " world") == 11
    assert c("GET", "k") == b"hello world"
    assert c("STRLEN", "k") == 11
    assert c("APPEND", "k", "") == 11
    assert c("APPEND", "empty", "") == 0
    assert c("EXISTS", "empty") == 1
    c("SET", "n", "12")
    assert c("APPEND", "n", "34") == 4
    assert c("GET", "n") == b"1234"
    assert c("INCR", "n") == 1235
    c("SET", "t", "v", "EX", "100")
    c("APPEND", "t", "w")
    assert c("TTL", "t") == 100  # APPEND keeps the TTL
    assert c("APPEND", "k") == arity("append")
    assert c("STRLEN") == arity("strlen")


# ------------------------------------------------------------------- INCR / DECR family


def test_incr_decr_basic(server):
    c = server.raw()
    assert c("INCR", "n") == 1
    assert c("INCR", "n") == 2
    assert c("INCRBY", "n", "10") == 12
    assert c("DECR", "n") == 11
    assert c("DECRBY", "n", "20") == -9
    assert c("INCRBY", "n", "-1") == -10
    assert c("DECRBY", "n", "-10") == 0
    assert c("GET", "n") == b"0"
    assert c("DECR", "fresh") == -1
    assert c("INCRBY", "fresh2", "-5") == -5
    c("SET", "neg", "-100")
    assert c("INCR", "neg") == -99
    c("SET", "t", "5", "EX", "100")
    assert c("INCR", "t") == 6
    assert c("TTL", "t") == 100  # INCR keeps the TTL
    assert c.raw_call("INCR", "n") == b":1\r\n"


def test_incr_not_an_integer(server):
    c = server.raw()
    for value in ("abc", " 1", "1 ", "01", "1.0", "+1", "-0", "", "1e3",
                  "9223372036854775808", "0x10"):
        c("SET", "k", value)
        assert c("INCR", "k") == NOT_INT, value
        assert c("DECR", "k") == NOT_INT, value
        assert c("GET", "k") == value.encode()
    c("SET", "k", "1")
    for incr in ("1.5", "abc", "", "9223372036854775808", " 1"):
        assert c("INCRBY", "k", incr) == NOT_INT, incr
        assert c("DECRBY", "k", incr) == NOT_INT, incr
    assert c("GET", "k") == b"1"


def test_incr_overflow(server):
    c = server.raw()
    c("SET", "k", LLONG_MAX)
    assert c("INCR", "k") == OVERFLOW
    assert c("INCRBY", "k", "1") == OVERFLOW
    assert c("DECRBY", "k", "-1") == OVERFLOW
    assert c("INCRBY", "k", "0") == int(LLONG_MAX)
    c("SET", "k", LLONG_MIN)
    assert c("DECR", "k") == OVERFLOW
    assert c("DECRBY", "k", "1") == OVERFLOW
    assert c("INCRBY", "k", "-1") == OVERFLOW
    assert c("GET", "k") == LLONG_MIN.encode()
    c("SET", "k", "0")
    # Negating LLONG_MIN is itself an overflow, with its own message.
    assert c("DECRBY", "k", LLONG_MIN) == err("ERR decrement would overflow")
    assert c("INCRBY", "k", LLONG_MIN) == int(LLONG_MIN)
    c("SET", "k", "-1")
    assert c("DECRBY", "k", LLONG_MAX) == int(LLONG_MIN)


def test_incr_arity(server):
    c = server.raw()
    assert c("INCR") == arity("incr")
    assert c("INCR", "a", "b") == arity("incr")
    assert c("INCRBY", "a") == arity("incrby")
    assert c("DECR") == arity("decr")
    assert c("DECRBY", "a") == arity("decrby")


# ------------------------------------------------------------------------ INCRBYFLOAT


@pytest.mark.parametrize("start,incr,expected", [
    ("10.50", "0.1", b"10.6"),
    ("5.0e3", "2.0e2", b"5200"),
    (None, "3.0e3", b"3000"),
    (None, "5.0e3", b"5000"),
    (None, "10.5", b"10.5"),
    ("10.5", "1.5", b"12"),
    ("1", "0.0001", b"1.0001"),
    ("1.0001", "-1.0001", b"0"),
    ("3", "-5", b"-2"),
    ("0", "-0.5", b"-0.5"),
    ("7", "1e-5", b"7.00001"),
    ("100", "0", b"100"),
])
def test_incrbyfloat_results(server, start, incr, expected):
    c = server.raw()
    if start is not None:
        c("SET", "f", start)
    assert c.raw_call("INCRBYFLOAT", "f", incr) == b"$%d\r\n%s\r\n" % (len(expected), expected)
    assert c("GET", "f") == expected


def test_incrbyfloat_sequence(server):
    c = server.raw()
    c("SET", "f", "10.50")
    assert c("INCRBYFLOAT", "f", "0.1") == b"10.6"
    assert c("INCRBYFLOAT", "f", "-5") == b"5.6"
    c("SET", "t", "1", "EX", "100")
    assert c("INCRBYFLOAT", "t", "1") == b"2"
    assert c("TTL", "t") == 100


def test_incrbyfloat_errors(server):
    c = server.raw()
    c("SET", "f", "1")
    for bad in ("nan", "abc", "", " 1", "1 ", "1.0.0"):
        assert c("INCRBYFLOAT", "f", bad) == NOT_FLOAT, bad
    for bad in ("inf", "-inf", "+inf"):
        assert c("INCRBYFLOAT", "f", bad) == err(
            "ERR increment would produce NaN or Infinity"), bad
    assert c("GET", "f") == b"1"
    for stored in ("abc", "nan", " 1", ""):
        c("SET", "s", stored)
        assert c("INCRBYFLOAT", "s", "1") == NOT_FLOAT, stored
    assert c("INCRBYFLOAT", "f") == arity("incrbyfloat")


# ------------------------------------------------------------------ GETRANGE / SUBSTR


@pytest.mark.parametrize("start,end,expected", [
    (0, 3, b"This"),
    (-3, -1, b"ing"),
    (0, -1, b"This is a string"),
    (10, 100, b"string"),
    (5, 3, b""),
    (100, 200, b""),
    (-1, -5, b""),
    (-100, 3, b"This"),
    (-100, -50, b"T"),  # both clamp to 0 (Redis 7.0 behaviour)
    (0, -100, b"T"),
    (15, 15, b"g"),
])
def test_getrange(server, start, end, expected):
    c = server.raw()
    c("SET", "s", "This is a string")
    assert c("GETRANGE", "s", start, end) == expected
    assert c("SUBSTR", "s", start, end) == expected


def test_getrange_edge_cases(server):
    c = server.raw()
    assert c.raw_call("GETRANGE", "missing", "0", "-1") == b"$0\r\n\r\n"
    c("SET", "e", "")
    assert c("GETRANGE", "e", "0", "-1") == b""
    c("SET", "n", "12345")
    assert c("GETRANGE", "n", "1", "2") == b"23"
    assert c("GETRANGE", "n", "a", "1") == NOT_INT
    assert c("GETRANGE", "n", "0") == arity("getrange")
    assert c("SUBSTR", "n", "0") == arity("substr")


# --------------------------------------------------------------------------- SETRANGE


def test_setrange(server):
    c = server.raw()
    c("SET", "w", "Hello World")
    assert c("SETRANGE", "w", "6", "Redis") == 11
    assert c("GET", "w") == b"Hello Redis"
    assert c("SETRANGE", "w", "20", "!") == 21
    assert c("GET", "w") == b"Hello Redis" + b"\x00" * 9 + b"!"
    assert c("SETRANGE", "pad", "5", "x") == 6
    assert c("GET", "pad") == b"\x00\x00\x00\x00\x00x"
    c("SET", "n", "12345")
    assert c("SETRANGE", "n", "0", "9") == 5
    assert c("GET", "n") == b"92345"
    assert c("INCR", "n") == 92346
    c("SET", "t", "abc", "EX", "100")
    assert c("SETRANGE", "t", "1", "X") == 3
    assert c("GET", "t") == b"aXc"
    assert c("TTL", "t") == 100


def test_setrange_empty_value(server):
    c = server.raw()
    # An empty value on a missing key creates nothing, whatever the offset.
    assert c("SETRANGE", "nk", "0", "") == 0
    assert c("SETRANGE", "nk", "10", "") == 0
    assert c("EXISTS", "nk") == 0
    c("SET", "k", "abc")
    assert c("SETRANGE", "k", "10", "") == 3
    assert c("GET", "k") == b"abc"


def test_setrange_errors(server):
    c = server.raw()
    c("SET", "k", "abc")
    assert c("SETRANGE", "k", "-1", "x") == err("ERR offset is out of range")
    assert c("SETRANGE", "k", "536870912", "x") == err(
        "ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    assert c("SETRANGE", "k", "abc", "x") == NOT_INT
    assert c("SETRANGE", "k", "1") == arity("setrange")
    assert c("GET", "k") == b"abc"


# ------------------------------------------- values damselfly stores compressed (LZF)
# Strings of 512 B to 64 KiB that repeat themselves are kept compressed in damselfly; no
# command may tell. These run against redis-server too, as the reference.

def compressible_values():
    return {
        "padded": b"value:42" + b"\0" * 1016,  # DEBUG POPULATE's shape
        "x511": b"x" * 511,
        "x512": b"x" * 512,
        "x513": b"x" * 513,
        "json": json_records(1024),
        "json_big": json_records(65536),
        "beyond": b"ab" * 32769,  # 65538 bytes: stays uncompressed
        "binary_runs": (bytes(range(256)) * 3 + b"\xff" * 300),
    }


def test_compressible_values_read_back_exactly(server):
    c = server.raw()
    values = compressible_values()
    for name, value in values.items():
        assert c("SET", name, value) == "OK"
    for name, value in values.items():
        assert c("GET", name) == value, name
        assert c("STRLEN", name) == len(value), name
        assert c("GETRANGE", name, "0", "-1") == value, name
        assert c("GETRANGE", name, "5", "300") == value[5:301], name
        assert c("GETRANGE", name, "-20", "-1") == value[-20:], name
        assert c("OBJECT", "ENCODING", name) == b"raw", name
        assert c("INCR", name) == NOT_INT
    assert c("MGET", *values) == list(values.values())


def test_compressible_values_modified_in_place(server):
    c = server.raw()
    value = json_records(1024)
    c("SET", "k", value)
    assert c("APPEND", "k", b"\0" * 500) == len(value) + 500
    value += b"\0" * 500
    assert c("GET", "k") == value
    assert c("SETRANGE", "k", "100", "CHANGED") == len(value)
    value = value[:100] + b"CHANGED" + value[107:]
    assert c("GET", "k") == value
    assert c("SETRANGE", "k", str(len(value) + 10), "end") == len(value) + 13
    value += b"\0" * 10 + b"end"
    assert c("GET", "k") == value
    assert c("GETSET", "k", b"y" * 600) == value
    assert c("SET", "k", b"z" * 700, "GET") == b"y" * 600
    assert c("GETDEL", "k") == b"z" * 700
    assert c("EXISTS", "k") == 0


def test_compressible_keys(server):
    c = server.raw()
    keys = [b"k" * 600, b"user:" + b"0" * 1000, b"user:" + b"0" * 999 + b"1"]
    for i, key in enumerate(keys):
        assert c("SET", key, str(i)) == "OK"
    for i, key in enumerate(keys):
        assert c("GET", key) == str(i).encode()
    assert sorted(c("KEYS", "*")) == sorted(keys)
    assert c("RENAME", keys[0], b"m" * 800) == "OK"
    assert c("GET", b"m" * 800) == b"0"
    assert c("DEL", *keys[1:]) == 2
    assert c("DBSIZE") == 1


# -------------------------------------------------------------------------- LCS

LCS_TYPE = err("ERR The specified keys must contain string values")


def lcs_reference(a, b, min_match_len=0):
    """Redis's LCS: the subsequence and the runs IDX reports (walking back, the table's
    ties shorten b), as [[a_start, a_end], [b_start, b_end], len]."""
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            t[i][j] = t[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(t[i - 1][j], t[i][j - 1])
    i, j, out, runs, run = len(a), len(b), [], [], None
    while i > 0 and j > 0:
        close = False
        if a[i - 1] == b[j - 1]:
            out.append(a[i - 1:i])
            run = [i - 1, i - 1, j - 1, j - 1] if run is None else [i - 1, run[1], j - 1, run[3]]
            close = i == 1 or j == 1
            i, j = i - 1, j - 1
        else:
            if t[i - 1][j] > t[i][j - 1]:
                i -= 1
            else:
                j -= 1
            close = run is not None
        if close:
            length = run[1] - run[0] + 1
            if length >= min_match_len:
                runs.append([[run[0], run[1]], [run[2], run[3]], length])
            run = None
    return b"".join(reversed(out)), runs, t[len(a)][len(b)]


def keys_on_two_shards(c, target):
    """Two key names that damselfly (2 threads) keeps on different shards."""
    if target != "damselfly":
        return "lcs:a", "lcs:b"
    names = [f"lcs:{i}" for i in range(64)]
    first = c("DEBUG", "KEYSHARD", names[0])
    return names[0], next(n for n in names if c("DEBUG", "KEYSHARD", n) != first)


def test_lcs_basic_replies(server):
    c = server.raw()
    c("MSET", "k1{t}", "ohmytext", "k2{t}", "mynewtext")
    assert c.raw_call("LCS", "k1{t}", "k2{t}") == b"$6\r\nmytext\r\n"
    assert c.raw_call("LCS", "k1{t}", "k2{t}", "LEN") == b":6\r\n"
    assert c("LCS", "k1{t}", "k2{t}", "IDX") == [
        b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]
    assert c("lcs", "k1{t}", "k2{t}", "idx", "minmatchlen", "4", "withmatchlen") == [
        b"matches", [[[4, 7], [5, 8], 4]], b"len", 6]
    assert c("LCS", "k1{t}", "k2{t}", "WITHMATCHLEN", "IDX", "MINMATCHLEN", "-5") == [
        b"matches", [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], b"len", 6]
    # WITHMATCHLEN and MINMATCHLEN without IDX change nothing; the last MINMATCHLEN wins.
    assert c("LCS", "k1{t}", "k2{t}", "WITHMATCHLEN", "MINMATCHLEN", "9") == b"mytext"
    assert c("LCS", "k1{t}", "k2{t}", "IDX", "MINMATCHLEN", "9", "MINMATCHLEN", "3") == [
        b"matches", [[[4, 7], [5, 8]]], b"len", 6]
    # Missing keys are empty strings.
    assert c("LCS", "k1{t}", "nokey{t}") == b""
    assert c("LCS", "nokey{t}", "k1{t}", "LEN") == 0
    assert c("LCS", "nokey{t}", "nokey2{t}", "IDX") == [b"matches", [], b"len", 0]
    # Integers are compared as their text; binary data byte by byte.
    c("MSET", "n1{t}", "12345", "n2{t}", "2340")
    assert c("LCS", "n1{t}", "n2{t}") == b"234"
    c("MSET", "b1{t}", b"a\x00b\xffc", "b2{t}", b"\x00\xffc")
    assert c("LCS", "b1{t}", "b2{t}") == b"\x00\xffc"
    assert c("LCS", "b1{t}", "b2{t}", "IDX") == [
        b"matches", [[[3, 4], [1, 2]], [[1, 1], [0, 0]]], b"len", 3]


def test_lcs_resp3(server):
    c = server.raw()
    c("HELLO", "3")
    c("MSET", "k1{t}", "ohmytext", "k2{t}", "mynewtext")
    assert c("LCS", "k1{t}", "k2{t}", "IDX", "WITHMATCHLEN") == {
        b"matches": [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], b"len": 6}
    assert c.raw_call("LCS", "nokey{t}", "k2{t}", "IDX") == (
        b"%2\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n")
    assert c("LCS", "k1{t}", "k2{t}", "LEN") == 6
    assert c("LCS", "k1{t}", "k2{t}") == b"mytext"


def test_lcs_errors(server):
    c = server.raw()
    c("MSET", "k1{t}", "ohmytext", "k2{t}", "mynewtext")
    assert c("LCS") == arity("lcs")
    assert c("LCS", "k1{t}") == arity("lcs")
    assert c("LCS", "k1{t}", "k2{t}", "LEN", "IDX") == err(
        "ERR If you want both the length and indexes, please just use IDX.")
    assert c("LCS", "k1{t}", "k2{t}", "IDX", "foo") == SYNTAX
    assert c("LCS", "k1{t}", "k2{t}", "MINMATCHLEN") == SYNTAX  # without its value
    assert c("LCS", "k1{t}", "k2{t}", "MINMATCHLEN", "x") == NOT_INT
    assert c("LCS", "k1{t}", "k2{t}", "MINMATCHLEN", "1.5", "IDX") == NOT_INT
    # The options are checked before the table's size, and the size before anything runs.
    c("SET", "big{t}", "t" * 20000)
    assert c("LCS", "big{t}", "k1{t}", "foo") == SYNTAX
    assert c("LCS", "big{t}", "big{t}", "LEN") == err(
        "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
    assert c("LCS", "big{t}", "k1{t}", "LEN") == 2


def test_lcs_wrong_type(server):
    c = server.raw()
    c("SET", "k1{t}", "ohmytext")
    if isinstance(c("RPUSH", "list{t}", "x"), Exception):
        pytest.skip("the server has no second data type yet")
    assert c("LCS", "k1{t}", "list{t}") == LCS_TYPE
    # The types are checked before the options.
    assert c("LCS", "list{t}", "nokey{t}", "LEN", "IDX") == LCS_TYPE


@pytest.mark.parametrize("same_shard", [True, False])
def test_lcs_matches_reference(server, target, same_shard):
    c = server.raw()
    if same_shard:
        ka, kb = "dna:a{t}", "dna:b{t}"
    else:
        ka, kb = keys_on_two_shards(c, target)
    seed = 12345
    def dna(n):
        nonlocal seed
        out = bytearray()
        for _ in range(n):
            seed = (seed * 1103515245 + 12345) % (1 << 31)
            out.append(b"ACGT"[(seed >> 16) % 4])
        return bytes(out)
    a, b = dna(300), dna(250)
    c("SET", ka, a)
    c("SET", kb, b)
    subsequence, runs, length = lcs_reference(a, b)
    assert c("LCS", ka, kb) == subsequence
    assert c("LCS", kb, ka, "LEN") == length
    assert c("LCS", ka, kb, "IDX", "WITHMATCHLEN") == [b"matches", runs, b"len", length]
    long_runs = lcs_reference(a, b, 4)[1]
    assert c("LCS", ka, kb, "IDX", "MINMATCHLEN", "4") == [
        b"matches", [r[:2] for r in long_runs], b"len", length]
    assert c("LCS", ka, "missing" + ka) == b""


def test_lcs_across_shards(server, target):
    c = server.raw()
    ka, kb = keys_on_two_shards(c, target)
    c("SET", ka, "ohmytext")
    assert c("LCS", ka, kb) == b""
    c("SET", kb, "mynewtext")
    assert c("LCS", ka, kb, "IDX") == [b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]
    assert c("LCS", ka, kb, "LEN", "IDX") == err(
        "ERR If you want both the length and indexes, please just use IDX.")
    assert c("LCS", ka, kb, "bad") == SYNTAX
    c("HELLO", "3")
    assert c("LCS", ka, kb, "IDX") == {b"matches": [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len": 6}
    # Inside MULTI/EXEC, and while another client changes one of the keys.
    assert c("MULTI") == "OK"
    assert c("LCS", kb, ka) == "QUEUED"
    assert c("SET", kb, "text") == "QUEUED"
    assert c("LCS", ka, kb, "LEN") == "QUEUED"
    assert c("EXEC") == [b"mytext", "OK", 4]
