"""DUMP and RESTORE: Redis 7.0's replies and error texts, and payloads moving between the
server under test and a reference redis-server 7.0 both ways, for every type and encoding.

The cross tests start their own redis-server (skipped when it is not installed); against
DAMSELFLY_TEST_TARGET=redis both ends are redis-server, which validates the tests.
"""

import shutil
import time

import pytest
import redis

from conftest import ServerHandle

BAD_PAYLOAD = "DUMP payload version or checksum are wrong"


@pytest.fixture(scope="module")
def reference():
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    handle = ServerHandle(target="redis").start()
    yield handle
    handle.stop()
    handle.cleanup_files()


@pytest.fixture
def ref(reference):
    client = reference.client()
    client.flushall()
    yield client
    client.close()


def content(c, key):
    """The value of `key` as commands read it, independent of its encoding."""
    kind = c.type(key).decode()
    if kind == "string":
        return kind, c.get(key)
    if kind == "list":
        return kind, c.lrange(key, 0, -1)
    if kind == "hash":
        return kind, sorted(c.hgetall(key).items())
    if kind == "set":
        return kind, sorted(c.smembers(key))
    if kind == "zset":
        return kind, c.zrange(key, 0, -1, withscores=True)
    if kind == "stream":
        return kind, c.xrange(key)
    return kind, None


def fill(c):
    """One key of each type and encoding (as Redis 7.0 names them)."""
    c.set("int", "12345")
    c.set("neg", "-70000")
    c.set("embstr", "hello")
    c.set("raw", "x" * 100)
    c.set("json", '{"name": "value", "list": [1, 2, 3]} ' * 40)
    c.set("binary", bytes(range(256)) * 4)
    c.rpush("list_small", "a", "1", "-2", "b" * 70)
    c.rpush("list_big", *[f"element-{i}" for i in range(3000)])
    c.hset("hash_small", mapping={"f1": "v1", "f2": "2"})
    c.hset("hash_big", mapping={f"field{i}": f"value{i}" for i in range(600)})
    c.hset("hash_long", mapping={"f": "v" * 100})
    c.sadd("set_ints", 1, 2, 3, -100000)
    c.sadd("set_strs", "a", "b", "c")
    c.sadd("set_big", *[f"m{i}" for i in range(600)])
    c.sadd("set_many_ints", *range(1000))
    c.zadd("zset_small", {"a": 1, "b": 2.5, "c": float("inf")})
    c.zadd("zset_big", {f"m{i}": i / 7 for i in range(300)})
    for i in range(1, 260):
        fields = {"f": i, "g": "x"} if i % 9 else {"other": i}
        c.xadd("stream", fields, id=f"{i}-{i % 4}")
    c.xdel("stream", "18-2")
    return [k.decode() for k in sorted(c.keys("*"))]


def test_dump_restore_simple_key(server):
    c = server.client()
    c.set("foo", "bar")
    payload = c.dump("foo")
    c.delete("foo")
    assert c.restore("foo", 0, payload) == b"OK"
    assert c.get("foo") == b"bar"
    assert c.ttl("foo") == -1


def test_dump_missing_key_is_nil(server):
    assert server.client().dump("nosuchkey") is None


def test_restore_errors(server):
    c = server.client()
    c.set("k", "v")
    payload = c.dump("k")
    with pytest.raises(redis.ResponseError, match="Target key name already exists.$"):
        c.execute_command("RESTORE", "k", 0, payload)
    with pytest.raises(redis.ResponseError, match="^Invalid TTL value, must be >= 0$"):
        c.execute_command("RESTORE", "n", -1, payload)
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        c.execute_command("RESTORE", "n", "abc", payload)
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        c.execute_command("RESTORE", "n", 0, payload, "BLAH")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        c.execute_command("RESTORE", "n", 0, payload, "IDLETIME")
    with pytest.raises(redis.ResponseError, match="^syntax error$"):
        c.execute_command("RESTORE", "n", 0, payload, "IDLETIME", 1, "FREQ", 1)
    with pytest.raises(redis.ResponseError, match="^Invalid IDLETIME value, must be >= 0$"):
        c.execute_command("RESTORE", "n", 0, payload, "IDLETIME", -5)
    with pytest.raises(redis.ResponseError, match="^Invalid FREQ value, must be >= 0 and <= 255$"):
        c.execute_command("RESTORE", "n", 0, payload, "FREQ", 300)
    with pytest.raises(redis.ResponseError, match=f"^{BAD_PAYLOAD}$"):
        c.execute_command("RESTORE", "n", 0, b"not a payload")
    with pytest.raises(redis.ResponseError, match=f"^{BAD_PAYLOAD}$"):
        c.execute_command("RESTORE", "n", 0, payload[:-1] + bytes([payload[-1] ^ 1]))
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments for 'restore' command$"):
        c.execute_command("RESTORE", "n", 0)
    with pytest.raises(redis.ResponseError, match="^wrong number of arguments for 'dump' command$"):
        c.execute_command("DUMP")
    assert c.exists("n") == 0


def test_restore_bad_data_format(server, ref):
    # A payload redis-server accepts the footer of, holding a value type 99.
    c = server.client()
    ref.set("k", "v")
    good = ref.dump("k")
    bad = crc_fixed(b"\x63" + good[1:-10])
    for client in (c, ref):
        with pytest.raises(redis.ResponseError, match="^Bad data format$"):
            client.execute_command("RESTORE", "n", 0, bad)


def crc_fixed(value):
    """value + version 10 + Redis's CRC64 (Jones, reflected), as DUMP ends a payload."""
    body = value + b"\x0a\x00"
    crc = 0
    for byte in body:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x95AC9329AC4BC9B5 if crc & 1 else 0)
    return body + crc.to_bytes(8, "little")


def test_restore_ttl_options(server):
    c = server.client()
    c.set("k", "v")
    payload = c.dump("k")
    assert c.restore("t", 3000, payload)
    assert 2000 <= c.pttl("t") <= 3000
    assert c.restore("big", 2569591501000, payload)  # beyond 32 bits
    assert 2569591501000 - 1000 <= c.pttl("big") <= 2569591501000
    deadline = int(time.time() * 1000) + 3000
    assert c.restore("abs", deadline, payload, absttl=True)
    assert 2000 <= c.pttl("abs") <= 3100
    assert c.execute_command("PEXPIRETIME", "abs") == deadline
    # A deadline in the past: OK and no key; with REPLACE the existing key is deleted.
    assert c.restore("past", 1000, payload, absttl=True)
    assert c.exists("past") == 0
    assert c.restore("k", 1000, payload, absttl=True, replace=True)
    assert c.exists("k") == 0


def test_restore_replace(server):
    c = server.client()
    c.set("a", "one")
    c.rpush("b", "x")
    payload = c.dump("a")
    with pytest.raises(redis.ResponseError, match="Target key name already exists.$"):
        c.restore("b", 0, payload)
    assert c.restore("b", 0, payload, replace=True)
    assert c.type("b") == b"string" and c.get("b") == b"one"
    c.expire("b", 100)
    assert c.restore("b", 0, payload, replace=True)
    assert c.ttl("b") == -1


def test_restore_idletime(server):
    c = server.client()
    c.set("k", "v")
    payload = c.dump("k")
    assert c.restore("i", 0, payload, idletime=1000)
    assert 1000 <= c.object("idletime", "i") <= 1010
    assert c.restore("f", 0, payload, frequency=100)
    assert c.get("f") == b"v"


def test_restore_freq_under_an_lfu_policy(server):
    c = server.client()
    c.set("k", "v")
    payload = c.dump("k")
    try:
        c.config_set("maxmemory-policy", "allkeys-lfu")
        assert c.restore("f", 0, payload, frequency=100)
        assert c.object("freq", "f") == 100
        # IDLETIME is ignored under LFU, as in Redis: the key keeps its new counter.
        assert c.restore("i", 0, payload, idletime=1000)
        assert c.object("freq", "i") == 5
    finally:
        c.config_set("maxmemory-policy", "noeviction")


def test_dump_restore_every_type_in_place(server):
    c = server.client()
    keys = fill(c)
    expected = {k: content(c, k) for k in keys}
    encodings = {k: c.object("encoding", k) for k in keys}
    payloads = {k: c.dump(k) for k in keys}
    c.flushall()
    for k in keys:
        assert c.restore(k, 0, payloads[k]), k
        assert content(c, k) == expected[k], k
        assert c.object("encoding", k) == encodings[k], k


@pytest.mark.parametrize("direction", ["from_redis", "to_redis"])
def test_payloads_cross_servers(server, ref, direction):
    c = server.client()
    source, target = (ref, c) if direction == "from_redis" else (c, ref)
    keys = fill(source)
    for k in keys:
        payload = source.dump(k)
        assert target.restore(k, 0, payload), k
        assert content(target, k) == content(source, k), k


def test_small_payloads_are_byte_identical(server, ref):
    """Where both servers keep the same encoding, damselfly's payload is Redis's."""
    c = server.client()
    for client in (c, ref):
        client.set("s", "hello")
        client.set("i", "-12345")
        client.rpush("l", "a", "1", "bb")
        client.hset("h", mapping={"f": "v", "n": "5"})
        client.sadd("si", 3, 1, 2)
        client.zadd("z", {"a": 1, "b": 2.5})
        client.xadd("x", {"f": "v"}, id="1-1")
        client.xadd("x", {"f": "w"}, id="1-2")
        client.xadd("x", {"g": "1"}, id="2-0")
        # Small hashes and sorted sets are pair packs in damselfly's memory (no
        # back-lengths, delta-coded scores): their payloads are the listpacks Redis holds,
        # after deletions, overwrites, moved members and every kind of score.
        client.hset("h2", mapping={"a": "1", "b": "hello", "c": "-5", "d": "3.5", "e": "x" * 60})
        client.hdel("h2", "b")
        client.hset("h2", "a", "99999999999")
        client.zadd("z2", {"a": 1, "b": 2.5, "c": -3, "d": 1e20, "e": float("inf"),
                           "f": 1732752000123, "g": 0, "h": -0.0, "i": 70000, "7": 4096})
        client.zadd("z2", {"a": 7})
        client.zrem("z2", "c")
    # (The stream's 56-byte node is not in the list: LZF saves 4 bytes of it with our
    # compressor and less with Redis's, so the two payloads differ, both valid.)
    for k in ("h2", "z2"):
        assert c.object("encoding", k) in (b"listpack", "listpack"), k
    for k in ("s", "i", "l", "h", "si", "z", "h2", "z2"):
        assert c.dump(k) == ref.dump(k), k


def test_restore_rejects_corrupt_payloads_from_redis(server, ref):
    """Mutations of a real payload, with a valid checksum, never crash the server."""
    c = server.client()
    ref.hset("h", mapping={f"f{i}": f"v{i}" for i in range(10)})
    ref.rpush("l", *range(50))
    ref.zadd("z", {f"m{i}": i for i in range(20)})
    for key in ("h", "l", "z"):
        value = ref.dump(key)[:-10]
        for i in range(1, len(value), 3):
            mutated = value[:i] + bytes([value[i] ^ 0x5A]) + value[i + 1:]
            try:
                c.restore("m", 0, crc_fixed(mutated), replace=True)
            except redis.ResponseError as e:
                assert str(e) == "Bad data format"
    assert c.ping()


def fill_groups(c):
    """Streams with consumer groups: pending entries, consumers with and without any, and
    groups whose entries-read is known and unknown."""
    c.xadd("s", {"f": "v"}, id="1-1")
    c.xadd("s", {"f": "w"}, id="1-2")
    c.xadd("s", {"g": "1"}, id="2-0")
    c.xgroup_create("s", "g1", id="0")
    c.xgroup_create("s", "g2", id="$")
    c.xgroup_create("s", "g3", id="1-2")
    c.xreadgroup("g1", "alice", {"s": ">"}, count=2)
    c.xreadgroup("g1", "bob", {"s": ">"}, count=1)
    c.xack("s", "g1", "1-2")
    c.xclaim("s", "g1", "bob", 0, ["1-1"])
    c.xgroup_createconsumer("s", "g2", "carol")
    for i in range(1, 401):
        c.xadd("big", {"n": i, "pad": "x" * (i % 50)}, id=f"{i}-0")
    c.xdel("big", "10-0")
    for name in ("a", "b", "c"):
        c.xgroup_create("big", name, id="0")
        for consumer in range(5):
            c.xreadgroup(name, f"consumer-{consumer}", {"big": ">"}, count=60)
    c.xack("big", "a", *[f"{i}-0" for i in range(20, 80)])
    c.xclaim("big", "b", "consumer-9", 0, [f"{i}-0" for i in range(100, 140)])
    c.xgroup_setid("big", "c", "5-0")
    c.xgroup_create("empty", "g", id="$", mkstream=True)
    c.xgroup_createconsumer("empty", "g", "idle")
    return ["big", "empty", "s"]


def groups_state(c, key):
    """XINFO STREAM FULL without the node layout (which differs between the servers), and
    every group's XPENDING, summary and extended (without the idle times, which run)."""
    info = c.xinfo_stream(key, full=True)
    for field in ("radix-tree-keys", "radix-tree-nodes"):
        info.pop(field)
    pending = {}
    for group in c.xinfo_groups(key):
        name = group["name"]
        summary = c.xpending(key, name)
        entries = c.xpending_range(key, name, "-", "+", 1000)
        pending[name] = (summary, [(e["message_id"], e["consumer"], e["times_delivered"])
                                   for e in entries])
    return info, pending


@pytest.mark.parametrize("direction", ["in_place", "from_redis", "to_redis"])
def test_stream_groups_move(server, ref, direction):
    """Consumer groups, their PELs and consumers survive DUMP / RESTORE, between servers
    too: XINFO STREAM FULL and XPENDING read the same on both ends."""
    c = server.client()
    source, target = {"in_place": (c, c), "from_redis": (ref, c), "to_redis": (c, ref)}[direction]
    for key in fill_groups(source):
        before = groups_state(source, key)
        assert before[0]["groups"], key
        target.restore(f"{key}-copy", 0, source.dump(key))
        assert groups_state(target, f"{key}-copy") == before, key


def test_stream_groups_corrupt_payload(server, ref):
    """A consumer's pending ID missing from its group's PEL is refused, as Redis's
    sanitization does (here: the consumer's ID 1-1 rewritten as 1-3)."""
    ref.xadd("s", {"f": "v"}, id="1-1")
    ref.xgroup_create("s", "g", id="0")
    ref.xreadgroup("g", "c", {"s": ">"})
    value = ref.dump("s")[:-10]
    consumer_id = b"\x00" * 7 + b"\x01" + b"\x00" * 7 + b"\x01"
    at = value.rindex(consumer_id)
    mutated = value[:at + 15] + b"\x03" + value[at + 16:]
    for client in (server.client(), ref):
        with pytest.raises(redis.ResponseError, match="^Bad data format$"):
            client.restore("m", 0, crc_fixed(mutated))


def test_stream_groups_survive_debug_reload(server_factory, target):
    """Snapshots write values with the same codec: groups come back from DEBUG RELOAD."""
    extra = ("--enable-debug-command=local",) if target == "redis" else ()
    c = server_factory(*extra).client()
    keys = fill_groups(c)
    before = {k: groups_state(c, k) for k in keys}
    assert c.execute_command("DEBUG", "RELOAD")
    assert {k: groups_state(c, k) for k in keys} == before
