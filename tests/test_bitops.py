"""Bitmap commands (SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO) with Redis
7.0's exact replies and error texts, validated against redis-server 7.0.
"""

import random

import pytest

from helpers import err

SYNTAX = err("ERR syntax error")
NOT_INT = err("ERR value is not an integer or out of range")
OFFSET = err("ERR bit offset is not an integer or out of range")
BIT = err("ERR bit is not an integer or out of range")
BIT_ARG = err("ERR The bit argument must be 1 or 0.")
FIELD_TYPE = err("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not "
                 "supported but i64 is.")
WRONGTYPE = err("WRONGTYPE Operation against a key holding the wrong kind of value")
LLONG_MAX = 9223372036854775807
LLONG_MIN = -9223372036854775808


def arity(cmd):
    return err(f"ERR wrong number of arguments for '{cmd}' command")


def test_setbit_getbit(server):
    c = server.raw()
    assert c("SETBIT", "k", 7, 1) == 0
    assert c("GET", "k") == b"\x01"
    assert c("SETBIT", "k", 7, 1) == 1
    assert c("SETBIT", "k", 7, 0) == 1
    assert c("SETBIT", "k", 100, 1) == 0
    assert c("GET", "k") == b"\x00" * 12 + b"\x08"
    assert c("GETBIT", "k", 100) == 1
    assert c("GETBIT", "k", 101) == 0
    assert c("GETBIT", "k", 4294967295) == 0  # past the end: no allocation
    assert c("GETBIT", "missing", 0) == 0
    assert c("OBJECT", "ENCODING", "k") == b"raw"


def test_setbit_errors(server):
    c = server.raw()
    assert c("SETBIT", "k", -1, 1) == OFFSET
    assert c("SETBIT", "k", 4294967296, 1) == OFFSET  # beyond 512 MB
    assert c("SETBIT", "k", 2**63, 1) == OFFSET
    assert c("SETBIT", "k", "1.5", 1) == OFFSET
    assert c("SETBIT", "k", "+1", 1) == OFFSET
    assert c("SETBIT", "k", 1, 2) == BIT
    assert c("SETBIT", "k", 1, "x") == BIT
    assert c("SETBIT", "k", 1, -1) == BIT
    assert c("GETBIT", "k", -1) == OFFSET
    assert c("GETBIT", "k", "x") == OFFSET
    assert c("SETBIT", "k", 1) == arity("setbit")
    assert c("SETBIT", "k", 1, 1, 1) == arity("setbit")
    assert c("GETBIT", "k") == arity("getbit")
    assert c("EXISTS", "k") == 0
    c("RPUSH", "l", "a")
    assert c("SETBIT", "l", 0, 1) == WRONGTYPE
    assert c("GETBIT", "l", 0) == WRONGTYPE
    assert c("SETBIT", "l", "x", 1) == OFFSET  # arguments before the type


def test_setbit_on_every_string_encoding(server):
    c = server.raw()
    c("SET", "int", "123")
    assert c("SETBIT", "int", 7, 0) == 1
    assert c("GET", "int") == b"023"
    assert c("OBJECT", "ENCODING", "int") == b"raw"
    assert c("SETBIT", "int", 7, 1) == 0
    assert c("INCR", "int") == 124
    text = "".join(chr(ord("a") + i % 26) for i in range(100))
    c("SET", "text", text)
    assert c("SETBIT", "text", 2, 0) == 1
    assert c("GET", "text") == ("A" + text[1:]).encode()
    zeros = b"\x00" * 4096
    c("SET", "zeros", zeros)
    assert c("SETBIT", "zeros", 4096 * 8 - 1, 1) == 0
    assert c("GET", "zeros") == zeros[:-1] + b"\x01"
    assert c("BITCOUNT", "zeros") == 1
    assert c("OBJECT", "ENCODING", "zeros") == b"raw"
    assert c("APPEND", "zeros", "x") == 4097
    assert c("BITCOUNT", "zeros") == 5  # "x" has four


def test_setbit_sequential_growth(server):
    c = server.raw()
    bits = 80000
    pipe = server.client().pipeline(transaction=False)
    for i in range(0, bits, 7):
        pipe.setbit("seq", i, 1)
    assert all(r == 0 for r in pipe.execute())
    assert c("BITCOUNT", "seq") == len(range(0, bits, 7))
    assert c("STRLEN", "seq") == (bits - 1 - (bits - 1) % 7) // 8 + 1


def test_binary_bitmap_model(server):
    """Random SETBITs against a Python model, read back with every command."""
    c = server.raw()
    rng = random.Random(5)
    model = bytearray()
    for _ in range(300):
        offset = rng.randrange(0, 3000)
        bit = rng.randrange(0, 2)
        byte = offset // 8
        if byte >= len(model):
            model.extend(b"\x00" * (byte + 1 - len(model)))
        old = (model[byte] >> (7 - offset % 8)) & 1
        if bit:
            model[byte] |= 0x80 >> (offset % 8)
        else:
            model[byte] &= ~(0x80 >> (offset % 8)) & 0xFF
        assert c("SETBIT", "m", offset, bit) == old
    assert c("GET", "m") == bytes(model)
    ones = sum(bin(b).count("1") for b in model)
    assert c("BITCOUNT", "m") == ones
    for _ in range(50):
        a, b = sorted(rng.randrange(0, len(model) * 8) for _ in range(2))
        want = sum((model[i // 8] >> (7 - i % 8)) & 1 for i in range(a, b + 1))
        assert c("BITCOUNT", "m", a, b, "BIT") == want
        first = next((i for i in range(a, b + 1) if (model[i // 8] >> (7 - i % 8)) & 1), -1)
        assert c("BITPOS", "m", 1, a, b, "BIT") == first


def test_bitcount(server):
    c = server.raw()
    c("SET", "s", "foobar")
    assert c("BITCOUNT", "s") == 26
    assert c("BITCOUNT", "s", 0, 0) == 4
    assert c("BITCOUNT", "s", 1, 1) == 6
    assert c("BITCOUNT", "s", 1, 1, "BYTE") == 6
    assert c("BITCOUNT", "s", 5, 30, "bit") == 17
    assert c("BITCOUNT", "s", -2, -1) == 7
    assert c("BITCOUNT", "s", -1, -2) == 0
    assert c("BITCOUNT", "s", -100, 100) == 26
    assert c("BITCOUNT", "s", 0, -100) == 4  # the end clamps to 0
    assert c("BITCOUNT", "s", LLONG_MIN, LLONG_MAX) == 26
    assert c("BITCOUNT", "s", 10, 20) == 0
    assert c("BITCOUNT", "s", -9, -1, "BIT") == 5
    assert c("BITCOUNT", "s", 1) == SYNTAX
    assert c("BITCOUNT", "s", "a", 1) == NOT_INT
    assert c("BITCOUNT", "s", 1, "b") == NOT_INT
    assert c("BITCOUNT", "s", 1, 2, "bits") == SYNTAX
    assert c("BITCOUNT", "s", 1, 2, "bit", "x") == SYNTAX
    assert c("BITCOUNT") == arity("bitcount")
    # Redis 7.0 looks the key up first: a missing key counts 0 whatever the arguments.
    assert c("BITCOUNT", "missing", "a", "b") == 0
    assert c("BITCOUNT", "missing", 1) == 0
    c("SET", "n", 1234)
    assert c("BITCOUNT", "n") == 13
    c("SET", "empty", "")  # an existing empty string has its arguments checked
    assert c("BITCOUNT", "empty") == 0
    assert c("BITCOUNT", "empty", 0, -1, "BIT") == 0
    assert c("BITCOUNT", "empty", "a", "b") == NOT_INT
    assert c("BITCOUNT", "empty", 1) == SYNTAX
    assert c("BITPOS", "empty", 0) == -1
    assert c("BITPOS", "empty", 1) == -1
    c("RPUSH", "l", "a")
    assert c("BITCOUNT", "l") == WRONGTYPE


def test_bitpos(server):
    c = server.raw()
    c("SET", "s", b"\xff\xf0\x00")
    assert c("BITPOS", "s", 0) == 12
    assert c("BITPOS", "s", 1) == 0
    assert c("BITPOS", "s", 1, 2) == -1
    assert c("BITPOS", "s", 0, 2, -1, "BYTE") == 16
    assert c("BITPOS", "s", 1, 7, 15, "BIT") == 7
    assert c("BITPOS", "s", 0, 7, 11, "bit") == -1
    assert c("BITPOS", "s", 0, -5, -1, "bit") == 19
    c("SET", "ones", b"\xff\xff")
    assert c("BITPOS", "ones", 0) == 16
    assert c("BITPOS", "ones", 0, 1) == 16
    assert c("BITPOS", "ones", 0, 0, -1) == -1
    assert c("BITPOS", "ones", 0, 5) == -1
    assert c("BITPOS", "ones", 1, -1) == 8
    assert c("BITPOS", "missing", 0) == 0
    assert c("BITPOS", "missing", 1) == -1
    assert c("BITPOS", "missing", 1, "a") == -1  # missing: answered before the range
    assert c("BITPOS", "s", 2) == BIT_ARG
    assert c("BITPOS", "s", "x") == NOT_INT
    assert c("BITPOS", "s", 1, "a") == NOT_INT
    assert c("BITPOS", "s", 1, "a", "b", "foo") == NOT_INT
    assert c("BITPOS", "s", 1, 0, "a", "foo") == SYNTAX  # the unit before the end
    assert c("BITPOS", "s", 1, 0, 1, "bit", "x") == SYNTAX
    assert c("BITPOS", "s") == arity("bitpos")
    c("RPUSH", "l", "a")
    assert c("BITPOS", "l", 1) == WRONGTYPE


def test_bitop(server):
    c = server.raw()
    c("SET", "a", b"\xff\x0f")
    c("SET", "b", b"\xf0")
    assert c("BITOP", "AND", "dst", "a", "b") == 2
    assert c("GET", "dst") == b"\xf0\x00"
    assert c("OBJECT", "ENCODING", "dst") == b"raw"
    assert c("BITOP", "or", "dst", "a", "b") == 2
    assert c("GET", "dst") == b"\xff\x0f"
    assert c("BITOP", "Xor", "dst", "a", "b", "missing") == 2
    assert c("GET", "dst") == b"\x0f\x0f"
    c("EXPIRE", "dst", 100)
    assert c("BITOP", "NOT", "dst", "b") == 1
    assert c("GET", "dst") == b"\x0f"
    assert c("TTL", "dst") == -1
    assert c("BITOP", "AND", "dst", "missing", "missing2") == 0
    assert c("EXISTS", "dst") == 0
    assert c("BITOP", "AND", "a", "a", "b") == 2
    assert c("GET", "a") == b"\xf0\x00"
    c("SET", "n", 12)  # an int value is combined as its digits
    assert c("BITOP", "OR", "dst", "n") == 2
    assert c("GET", "dst") == b"12"
    c("RPUSH", "l", "x")
    c("SET", "dst", "keep")
    assert c("BITOP", "AND", "dst", "a", "l") == WRONGTYPE
    assert c("GET", "dst") == b"keep"
    assert c("BITOP", "AND", "l", "a") == 2  # the destination may hold any type
    assert c("TYPE", "l") == "string"
    assert c("BITOP", "NAND", "dst", "a") == SYNTAX
    assert c("BITOP", "NOT", "dst", "a", "b") == err(
        "ERR BITOP NOT must be called with a single source key.")
    assert c("BITOP", "AND", "dst") == arity("bitop")


def test_bitop_across_slots_of_a_multi_shard_server(server):
    """Keys without a common tag spread over the shards; the result is the same."""
    c = server.raw()
    rng = random.Random(9)
    values = {f"src{i}": bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
              for i in range(8)}
    for key, value in values.items():
        c("SET", key, value)
    n = max(len(v) for v in values.values())
    want = bytearray(n)
    for value in values.values():
        for i, byte in enumerate(value):
            want[i] ^= byte
    assert c("BITOP", "XOR", "result", *values) == n
    assert c("GET", "result") == bytes(want)


def test_bitfield(server):
    c = server.raw()
    assert c("BITFIELD", "k", "SET", "u8", 0, 255, "GET", "u8", 0) == [0, 255]
    assert c("BITFIELD", "k", "INCRBY", "u8", 0, 10) == [9]
    assert c("BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "u8", 0, 300) == [255]
    assert c("BITFIELD", "k", "overflow", "fail", "incrby", "u8", 0, 1) == [None]
    assert c("BITFIELD", "k", "GET", "i8", 0, "GET", "i4", 4, "GET", "u1", 7) == [-1, -1, 1]
    assert c("BITFIELD", "k", "SET", "i16", "#1", -2, "GET", "i16", "#1") == [0, -2]
    assert c("GET", "k") == b"\xff\x00\xff\xfe"
    assert c("BITFIELD", "k", "SET", "u8", 0, -5, "GET", "u8", 0) == [255, 251]
    assert c("BITFIELD", "k", "OVERFLOW", "SAT", "SET", "u8", 0, -5) == [251]
    assert c("BITFIELD", "k", "GET", "u8", 0) == [255]
    assert c("BITFIELD", "k", "OVERFLOW", "SAT", "SET", "i8", 0, 200, "GET", "i8", 0) == [-1, 127]
    assert c("BITFIELD", "k", "SET", "i8", 0, 200, "GET", "i8", 0) == [127, -56]
    assert c("BITFIELD", "k", "OVERFLOW", "WRAP", "INCRBY", "i8", 0, -100) == [100]
    assert c("BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "i8", 0, -300) == [-128]
    # Several OVERFLOWs: each applies to the operations after it.
    assert c("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "i8", 0, -1,
             "OVERFLOW", "WRAP", "INCRBY", "i8", 0, -1) == [None, 127]
    assert c("BITFIELD", "w", "SET", "i64", 0, LLONG_MIN, "GET", "i64", 0) == [0, LLONG_MIN]
    assert c("BITFIELD", "w", "INCRBY", "i64", 0, -1) == [LLONG_MAX]
    assert c("BITFIELD", "w", "OVERFLOW", "SAT", "INCRBY", "i64", 0, 1) == [LLONG_MAX]
    assert c("BITFIELD", "w", "SET", "u63", 1, LLONG_MAX, "GET", "u63", 1) == [LLONG_MAX,
                                                                               LLONG_MAX]
    assert c("BITFIELD", "w", "INCRBY", "u63", 1, 1) == [0]
    assert c("BITFIELD", "w", "GET", "u1", 0, "GET", "i1", 0, "GET", "i1", 1) == [0, 0, 0]
    # Odd offsets and widths that straddle bytes.
    assert c("BITFIELD", "x", "SET", "u13", 5, 8191, "GET", "u13", 5, "GET", "u16", 0) == [
        0, 8191, 2047]
    assert c("GET", "x") == b"\x07\xff\xc0"


def test_bitfield_missing_keys_and_fail(server):
    c = server.raw()
    assert c("BITFIELD", "new") == []
    assert c("BITFIELD", "new", "GET", "u8", 100) == [0]
    assert c("EXISTS", "new") == 0
    # OVERFLOW FAIL refuses the write but the string was made as long as the field.
    assert c("BITFIELD", "new", "OVERFLOW", "FAIL", "SET", "u2", 14, 9) == [None]
    assert c("GET", "new") == b"\x00\x00"
    assert c("BITFIELD_RO", "new", "GET", "u4", 0) == [0]
    assert c("BITFIELD_RO", "missing", "GET", "i64", 1000) == [0]
    assert c("BITFIELD_RO", "new") == []


def test_bitfield_errors(server):
    c = server.raw()
    c("SET", "k", "x")
    assert c("BITFIELD", "k", "GET", "u64", 0) == FIELD_TYPE
    assert c("BITFIELD", "k", "GET", "i65", 0) == FIELD_TYPE
    assert c("BITFIELD", "k", "GET", "I8", 0) == FIELD_TYPE
    assert c("BITFIELD", "k", "GET", "i0", 0) == FIELD_TYPE
    assert c("BITFIELD", "k", "GET", "i08", 0) == FIELD_TYPE
    assert c("BITFIELD", "k", "GET", "x8", 0) == FIELD_TYPE
    assert c("BITFIELD", "k", "GET", "i8", -1) == OFFSET
    assert c("BITFIELD", "k", "GET", "i8", "#-1") == OFFSET
    assert c("BITFIELD", "k", "GET", "i8", "+1") == OFFSET
    assert c("BITFIELD", "k", "GET", "i8", 4294967296) == OFFSET
    assert c("BITFIELD", "k", "GET", "i8", "#536870912") == OFFSET  # 2^32 bits
    assert c("BITFIELD", "k", "SET", "i8", 0, "x") == NOT_INT
    assert c("BITFIELD", "k", "INCRBY", "i8", 0, "1.5") == NOT_INT
    assert c("BITFIELD", "k", "OVERFLOW", "foo") == err("ERR Invalid OVERFLOW type specified")
    assert c("BITFIELD", "k", "OVERFLOW") == SYNTAX
    assert c("BITFIELD", "k", "GET", "i8") == SYNTAX
    assert c("BITFIELD", "k", "SET", "i8", 0) == SYNTAX
    assert c("BITFIELD", "k", "foo") == SYNTAX
    # The first bad subcommand gives its error; nothing runs.
    assert c("BITFIELD", "k", "SET", "u8", 0, 65, "GET", "u64", 0) == FIELD_TYPE
    assert c("GET", "k") == b"x"
    assert c("BITFIELD_RO", "k", "SET", "i8", 0, 1) == err(
        "ERR BITFIELD_RO only supports the GET subcommand")
    assert c("BITFIELD_RO", "k", "INCRBY", "i8", 0, 1, "GET", "x", 0) == FIELD_TYPE
    assert c("BITFIELD") == arity("bitfield")
    assert c("BITFIELD_RO") == arity("bitfield_ro")
    c("RPUSH", "l", "a")
    assert c("BITFIELD", "l") == WRONGTYPE
    assert c("BITFIELD", "l", "GET", "i8", 0) == WRONGTYPE
    assert c("BITFIELD", "l", "SET", "i8", 0, 1) == WRONGTYPE
    assert c("BITFIELD_RO", "l", "GET", "i8", 0) == WRONGTYPE


def test_keyspace_events(server):
    c = server.raw()
    sub = server.client().pubsub()
    sub.psubscribe("__keyevent@*__:*")
    assert sub.get_message(timeout=2)["type"] == "psubscribe"
    c("CONFIG", "SET", "notify-keyspace-events", "E$g")
    try:
        c("SETBIT", "a", 1, 1)
        c("SETBIT", "a", 1, 1)  # the bit was set already: no event
        c("SETBIT", "a", 30, 0)  # grows the string: an event
        c("BITFIELD", "a", "INCRBY", "u8", 0, 1)
        c("BITFIELD", "a", "SET", "u8", 0, 65)  # the same value: no event
        c("BITFIELD", "a", "OVERFLOW", "FAIL", "INCRBY", "u2", 0, 9)  # refused: no event
        c("BITFIELD", "a", "GET", "u8", 0)
        c("BITOP", "NOT", "b", "a")
        c("BITOP", "AND", "b", "missing")
        c("SET", "end", "x")
        events = []
        while True:
            message = sub.get_message(timeout=2)
            assert message is not None
            events.append((message["channel"].decode().split(":", 1)[1], message["data"]))
            if message["data"] == b"end":
                break
    finally:
        c("CONFIG", "SET", "notify-keyspace-events", "")
        sub.close()
    assert events == [("setbit", b"a"), ("setbit", b"a"), ("setbit", b"a"), ("set", b"b"),
                      ("del", b"b"), ("set", b"end")]


def test_command_info(server):
    c = server.raw()
    info = c("COMMAND", "INFO", "SETBIT", "GETBIT", "BITOP", "BITFIELD_RO")
    assert [entry[:6] for entry in info] == [
        [b"setbit", 4, ["write", "denyoom"], 1, 1, 1],
        [b"getbit", 3, ["readonly", "fast"], 1, 1, 1],
        [b"bitop", -4, ["write", "denyoom"], 2, -1, 1],
        [b"bitfield_ro", -2, ["readonly", "fast"], 1, 1, 1],
    ]
    assert info[0][6] == ["@write", "@bitmap", "@slow"]
    assert info[1][6] == ["@read", "@bitmap", "@fast"]


@pytest.mark.damselfly_only
def test_setbit_on_a_memcache_value(mc_server):
    """A value stored through memcache is a string too: SETBIT changes it in place, and
    memcache then reads the new bytes (flags 0: a RESP write makes a new item)."""
    raw = mc_server.mc_raw()
    r = mc_server.client()
    assert raw.call(b"set k 5 0 3\r\nabc\r\n") == b"STORED\r\n"
    assert r.setbit("k", 2, 0) == 1  # 'a' -> 'A'
    assert raw.call(b"get k\r\n") == b"VALUE k 0 3\r\nAbc\r\nEND\r\n"
    assert r.setbit("k", 31, 1) == 0  # grows by one byte
    assert raw.call(b"get k\r\n") == b"VALUE k 0 4\r\nAbc\x01\r\nEND\r\n"
    assert raw.call(b"append k 0 0 1\r\n!\r\n") == b"STORED\r\n"
    assert r.get("k") == b"Abc\x01!"
    assert r.bitcount("k") == 12


def test_offsets_bounded_by_proto_max_bulk_len(server_factory, target):
    flag = "proto_max_bulk_len" if target == "damselfly" else "proto-max-bulk-len"
    srv = server_factory(f"--{flag}=1048576")
    c = srv.raw()
    assert c("SETBIT", "k", 8388608, 1) == OFFSET  # its byte would be the 1 MiB + 1st
    assert c("GETBIT", "k", 8388608) == OFFSET
    assert c("BITFIELD", "k", "SET", "u8", 8388608, 1) == OFFSET
    assert c("BITFIELD", "k", "GET", "u8", "#1048576") == OFFSET
    assert c("EXISTS", "k") == 0
    assert c("SETBIT", "k", 8388607, 1) == 0
    assert c("STRLEN", "k") == 1048576
    assert c("BITCOUNT", "k") == 1
    assert c("BITPOS", "k", 1) == 8388607


def test_bitop_sees_multi_key_writes_whole(server):
    """BITOP reads all its sources at one moment: while another client MSETs two keys to
    equal values, their XOR is always zero bytes (xa and xb live on different shards of
    the tests' two-thread server: DEBUG KEYSHARD gives 1 and 0)."""
    import threading

    stop = threading.Event()

    def writer():
        w = server.raw()
        i = 0
        while not stop.is_set():
            value = bytes([i % 256]) * 64
            w("MSET", "xa", value, "xb", value)
            i += 1

    thread = threading.Thread(target=writer)
    c = server.raw()
    c("MSET", "xa", b"\x00" * 64, "xb", b"\x00" * 64)
    thread.start()
    try:
        for _ in range(300):
            assert c("BITOP", "XOR", "xr", "xa", "xb") == 64
            assert c("BITCOUNT", "xr") == 0
    finally:
        stop.set()
        thread.join()
