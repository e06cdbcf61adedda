"""DEBUG DIGEST and DEBUG DIGEST-VALUE against redis-server 7.0: the same commands on the
server under test and on a reference redis-server give the same digests, for every type
and encoding, expiry and database; then data moved between the two servers (an RDB file
written by one and loaded by the other, DUMP on one and RESTORE on the other) keeps its
digest both ways (issue #18 point 7).

Each test runs its commands on both servers and compares. Against
DAMSELFLY_TEST_TARGET=redis both are redis-server, which validates the tests. Skipped
without redis-server.
"""

import os
import random
import shutil

import pytest
import redis

from conftest import TARGET, ServerHandle

ZEROS = "0" * 40
DEBUG_ARGS = ["--enable-debug-command=yes"]


def debug_args(target):
    return DEBUG_ARGS if target == "redis" else []


def start_server(target, *extra):
    return ServerHandle(debug_args(target) + list(extra), target=target).start()


def stop_server(handle):
    problem = handle.stop()
    handle.cleanup_files()
    assert problem is None, f"{handle}: {problem}\n{handle.log_tail()}"


@pytest.fixture(scope="module")
def servers():
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    under_test = start_server(TARGET)
    reference = start_server("redis")
    yield under_test, reference
    stop_server(under_test)
    stop_server(reference)


@pytest.fixture
def pair(servers):
    """(client of the server under test, client of the reference), both emptied."""
    clients = [handle.client() for handle in servers]
    for c in clients:
        c.flushall()
    yield clients
    for c in clients:
        c.flushall()
        c.close()


def on_both(clients, *args):
    return [c.execute_command(*args) for c in clients]


def digest(c):
    return c.execute_command("DEBUG", "DIGEST").decode()


def value_digests(c):
    """{(db, key): DIGEST-VALUE} over every database."""
    out = {}
    for db in range(16):
        c.execute_command("SELECT", db)
        keys = sorted(c.keys("*"))
        if keys:
            for key, d in zip(keys, c.execute_command("DEBUG", "DIGEST-VALUE", *keys)):
                out[(db, key)] = d.decode()
    c.execute_command("SELECT", 0)
    return out


def assert_same_digests(c, ref):
    assert digest(c) == digest(ref)
    mine, theirs = value_digests(c), value_digests(ref)
    assert mine.keys() == theirs.keys()
    differ = [k for k in mine if mine[k] != theirs[k]]
    assert not differ, f"DIGEST-VALUE differs for {differ}"


def fill_every_encoding(c):
    """Every type in every encoding Redis 7.0 has (and damselfly's own, such as packed
    ASCII, compressed strings and listpack sets), with TTLs and several databases."""
    # Strings: int, embstr, raw, long (compressible), binary, empty, almost-integers.
    c.set("int", "12345")
    c.set("neg", "-70000")
    c.set("zero", "0")
    c.set("max", "9223372036854775807")
    c.set("min", "-9223372036854775808")
    c.set("toolong", "92233720368547758070")
    c.set("padded", "007")
    c.set("plus", "+5")
    c.set("float", "1.5")
    c.set("embstr", "hello")
    c.set("raw", "x" * 100)
    c.set("big", "ab" * 5000)
    c.set("json", b"".join(b'{"id":%d},' % i for i in range(500)))
    c.set("binary", bytes(range(256)))
    c.set("empty", "")
    c.append("appended", "abc")
    c.append("appended", "123")
    c.incr("counter")
    c.incrby("counter", 41)
    c.setbit("bitmap", 1000, 1)
    c.setrange("ranged", 10, "x")
    # HyperLogLogs: sparse, dense, with a cached and an invalid cardinality.
    c.pfadd("hll_sparse", "a", "b", "c")
    c.pfadd("hll_counted", "a", "b", "c")
    c.pfcount("hll_counted")
    c.pfadd("hll_dense", *[f"e{i}" for i in range(5000)])
    # Lists: listpack (strings, integers), quicklist, elements of every size.
    c.rpush("list_small", "a", "1", "bb", "-2", "", "9223372036854775807")
    c.lpush("list_pushed_left", "c", "b", "a")
    c.rpush("list_big", *[f"element:{i}" for i in range(1000)])
    c.rpush("list_wide", *["y" * 300 for _ in range(50)], "tail")
    c.rpush("list_ints", *range(-300, 300))
    # Hashes: listpack, hashtable by count and by value length.
    c.hset("hash_small", mapping={"f": "v", "n": "5", "neg": "-1", "": "empty field"})
    c.hset("hash_big", mapping={f"f{i}": f"v{i}" for i in range(300)})
    c.hset("hash_long", mapping={"f": "z" * 100})
    c.hset("hash_ints", mapping={str(i): i * 3 for i in range(10)})
    # Sets: intset, small strings, hashtable by count (integers and strings).
    c.sadd("intset", 3, 1, 2, -5, 9223372036854775807, -9223372036854775808)
    c.sadd("set_small", "x", "y", "10")
    c.sadd("set_big_ints", *range(600))
    c.sadd("set_big", *[f"m{i}" for i in range(300)])
    c.sadd("set_long", "w" * 100)
    # Sorted sets: listpack and skiplist; scores as Redis prints them with %.17g.
    c.zadd("zset_small", {"a": 1.5, "b": -2, "c": 0.1, "d": float("inf"),
                          "e": float("-inf"), "7": 3, "f": 1e20, "g": 1 / 3,
                          "h": 2 ** 53 + 1, "i": 5e-324, "j": 0})
    c.zadd("zset_big", {f"m{i}": i / 7 for i in range(300)})
    c.zadd("zset_long", {"q" * 100: 2.5})
    c.zadd("zset_ties", {"b": 1, "a": 1, "c": 1})
    c.zincrby("zset_incr", 0.1, "x")
    c.zincrby("zset_incr", 0.2, "x")
    # Streams: one node and many, deleted entries, trimmed, empty, with groups (which
    # Redis 7.0's digest leaves out).
    c.xadd("stream", {"f": "v"}, id="1-1")
    c.xadd("stream", {"f": "w", "g": "x"}, id="2-0")
    for i in range(1000):
        c.xadd("stream_big", {"field": i, "other": f"value{i % 7}"} if i % 5 else {"x": i},
               id=f"{1000 + i // 3}-{i % 3}")
    c.xdel("stream_big", *[e[0] for e in c.xrange("stream_big", count=40)][::3])
    for i in range(200):
        c.xadd("stream_trimmed", {"a": i}, id=f"{i + 1}-0")
    c.xtrim("stream_trimmed", maxlen=50)
    c.xadd("stream_emptied", {"a": 1}, id="5-5")
    c.xdel("stream_emptied", "5-5")
    c.xgroup_create("stream_groups", "g1", id="0", mkstream=True)
    c.xadd("stream_groups", {"k": "v"}, id="10-1")
    c.xadd("stream_groups", {"k": "w"}, id="10-2")
    c.xgroup_create("stream_groups", "g2", id="$")
    c.xreadgroup("g1", "alice", {"stream_groups": ">"}, count=1)
    c.xreadgroup("g1", "bob", {"stream_groups": ">"})
    c.xack("stream_groups", "g1", "10-1")
    # Expiry: counted as a mark, whatever the deadline.
    c.set("ttl_string", "v", ex=1000)
    c.hset("ttl_hash", "f", "v")
    c.pexpire("ttl_hash", 5_000_000)
    c.rpush("ttl_list", "a")
    c.expireat("ttl_list", 4_000_000_000)
    c.set("persisted", "v", ex=100)
    c.persist("persisted")
    # Other databases, one of them the last.
    for db, key in ((1, "one"), (5, "five"), (15, "fifteen")):
        c.execute_command("SELECT", db)
        c.set(key, db)
        c.rpush(f"{key}:list", "a", "b")
        c.set("int", "12345")  # the same key and value as db 0's
    c.execute_command("SELECT", 0)


def test_every_type_and_encoding_digests_as_redis(pair):
    c, ref = pair
    for client in pair:
        fill_every_encoding(client)
    assert c.dbsize() == ref.dbsize()
    assert_same_digests(c, ref)
    assert digest(c) != ZEROS


def test_small_values_known_to_redis(pair):
    """Digests of single values, checked against each other and against the reference."""
    c, ref = pair
    cases = [("SET", "k", "v"), ("SET", "k", "1"), ("RPUSH", "k", "1", "a"),
             ("SADD", "k", "1"), ("SADD", "k", "a"), ("HSET", "k", "a", "1"),
             ("ZADD", "k", "1", "a"), ("XADD", "k", "1-1", "a", "1"), ("PFADD", "k", "a")]
    seen = set()
    for case in cases:
        on_both(pair, "DEL", "k")
        on_both(pair, *case)
        assert_same_digests(c, ref)
        seen.add(digest(c))
    assert len(seen) == len(cases)  # every type and content gives its own digest


def test_empty_dataset_gives_forty_zeros(pair):
    c, ref = pair
    assert digest(c) == digest(ref) == ZEROS
    on_both(pair, "SET", "k", "v")
    on_both(pair, "DEL", "k")
    assert digest(c) == digest(ref) == ZEROS
    on_both(pair, "SELECT", 9)
    on_both(pair, "SET", "k", "v")
    assert digest(c) == digest(ref) != ZEROS
    on_both(pair, "FLUSHDB")
    assert digest(c) == digest(ref) == ZEROS


def test_replies_and_errors_are_redis_bytes(servers):
    """Status replies (not bulk), the empty array, zeros for a missing key, the error of
    DIGEST with arguments, and the arity error."""
    under_test, reference = servers
    with under_test.raw() as a, reference.raw() as b:
        for conn in (a, b):
            conn("FLUSHALL")
            conn("SET", "k", "v")
        for args in (("DEBUG", "DIGEST"), ("debug", "digest"), ("DEBUG", "DIGEST-VALUE"),
                     ("DEBUG", "DIGEST-VALUE", "k", "missing", "k"),
                     ("DEBUG", "DIGEST", "extra"), ("DEBUG", "Digest", "k", "v"),
                     ("DEBUG",)):
            assert a.raw_call(*args) == b.raw_call(*args), args
        assert a.raw_call("DEBUG", "DIGEST") == b"+264ccf65edec66bccfa7cc659414ccca432057d2\r\n"
        for conn in (a, b):
            conn("FLUSHALL")


def test_key_order_does_not_count_but_database_and_expiry_do(pair):
    c, ref = pair
    keys = [f"key:{i}" for i in range(200)]
    for k in keys:
        on_both(pair, "SET", k, k.upper())
    first = digest(c)
    assert first == digest(ref)
    on_both(pair, "FLUSHALL")
    for k in reversed(keys):
        on_both(pair, "SET", k, k.upper())
    assert digest(c) == digest(ref) == first
    # A key moved to another database changes the digest; moved back, it is restored.
    on_both(pair, "MOVE", "key:7", 3)
    moved = digest(c)
    assert moved == digest(ref) != first
    on_both(pair, "SWAPDB", 0, 3)
    assert digest(c) == digest(ref) not in (first, moved)
    on_both(pair, "SWAPDB", 0, 3)
    assert digest(c) == digest(ref) == moved
    on_both(pair, "SELECT", 3)
    on_both(pair, "MOVE", "key:7", 0)
    on_both(pair, "SELECT", 0)
    assert digest(c) == digest(ref) == first
    # A deadline counts as a mark: any deadline gives the same digest.
    on_both(pair, "EXPIRE", "key:1", 1000)
    with_ttl = digest(c)
    assert with_ttl == digest(ref) != first
    on_both(pair, "EXPIRE", "key:1", 5000)
    assert digest(c) == digest(ref) == with_ttl
    assert c.execute_command("DEBUG", "DIGEST-VALUE", "key:1") == \
        ref.execute_command("DEBUG", "DIGEST-VALUE", "key:1")
    on_both(pair, "PERSIST", "key:1")
    assert digest(c) == digest(ref) == first


def test_encoding_changes_keep_the_digest(pair):
    """A value converted to a larger encoding digests as the same content did."""
    c, ref = pair
    on_both(pair, "RPUSH", "l", *range(200))
    on_both(pair, "SADD", "s", *range(200))
    on_both(pair, "HSET", "h", *[x for i in range(200) for x in (f"f{i}", i)])
    on_both(pair, "ZADD", "z", *[x for i in range(200) for x in (i / 2, f"m{i}")])
    before = value_digests(c)
    assert before == value_digests(ref)
    for client in pair:
        client.rpush("l", "x" * 100)
        client.rpop("l")
        client.sadd("s", "not-an-int")
        client.srem("s", "not-an-int")
        client.hset("h", "long", "v" * 100)
        client.hdel("h", "long")
        client.zadd("z", {"m" * 100: 1})
        client.zrem("z", "m" * 100)
    assert value_digests(c) == value_digests(ref) == before


def test_digest_inside_multi_exec(pair):
    c, ref = pair
    for client in pair:
        client.set("a", 1)
        client.rpush("b", "x")
        pipe = client.pipeline(transaction=True)
        pipe.set("c", 3)
        pipe.execute_command("DEBUG", "DIGEST")
        pipe.incr("a")
        pipe.execute_command("DEBUG", "DIGEST")
        client.results = pipe.execute()
    assert c.results == ref.results
    assert c.results[1] != c.results[3]


def test_random_dataset(pair):
    """A seeded mix of writes of every type, compared after every few hundred."""
    c, ref = pair
    rng = random.Random(18)
    members = [f"m{i}" for i in range(40)] + [str(i) for i in range(40)]
    for step in range(1200):
        key = f"k{rng.randrange(150)}"
        kind = rng.randrange(9)
        m = rng.choice(members)
        if kind == 0:
            args = ("SET", key, rng.choice([m, rng.randrange(-1000, 1000), "v" * rng.randrange(50)]))
        elif kind == 1:
            args = ("RPUSH", f"l:{key}", m)
        elif kind == 2:
            args = ("SADD", f"s:{key}", m)
        elif kind == 3:
            args = ("HSET", f"h:{key}", m, rng.randrange(100))
        elif kind == 4:
            args = ("ZADD", f"z:{key}", rng.choice([rng.randrange(-50, 50), rng.random() * 100]), m)
        elif kind == 5:
            args = ("XADD", f"x:{key}", f"{step + 1}-1", "f", m)
        elif kind == 6:
            args = ("EXPIRE", key, 100000)
        elif kind == 7:
            args = ("DEL", rng.choice([key, f"l:{key}", f"s:{key}", f"z:{key}"]))
        else:
            args = ("SELECT", rng.randrange(4))
        on_both(pair, *args)
        if step % 300 == 299:
            on_both(pair, "SELECT", 0)
            assert_same_digests(c, ref)


# --------------------------------------------------------------------------- round trips


def rdb_path(handle):
    return os.path.join(handle.workdir, "dump.rdb")


def load_copy(target, rdb_file):
    """A new server of `target` that starts from a copy of `rdb_file`."""
    handle = ServerHandle(debug_args(target) + ["--dbfilename=dump.rdb"], target=target)
    shutil.copy(rdb_file, rdb_path(handle))
    return handle.start()


@pytest.mark.parametrize("first", ["redis", TARGET])
def test_rdb_round_trip_keeps_the_digest(first):
    """first fills and SAVEs; the other loads the file and SAVEs; first loads that back.
    DEBUG DIGEST agrees at every step."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    second = TARGET if first == "redis" else "redis"
    origin = start_server(first)
    handles = [origin]
    try:
        c = origin.client()
        fill_every_encoding(c)
        expected = digest(c)
        expected_values = value_digests(c)
        assert c.save()
        there = load_copy(second, rdb_path(origin))
        handles.append(there)
        assert digest(there.client()) == expected
        assert value_digests(there.client()) == expected_values
        assert there.client().save()
        back = load_copy(first, rdb_path(there))
        handles.append(back)
        assert digest(back.client()) == expected
    finally:
        for handle in handles:
            stop_server(handle)


def test_dump_restore_round_trip_keeps_the_digest(pair):
    """Every key DUMPed by the reference RESTOREs on the server under test with the same
    digest, and the other way round."""
    c, ref = pair
    fill_every_encoding(ref)
    expected = digest(ref)
    for source, sink in ((ref, c), (c, ref)):
        for db in range(16):
            source.execute_command("SELECT", db)
            sink.execute_command("SELECT", db)
            for key in source.keys("*"):
                ttl = source.pttl(key)
                sink.restore(key, max(ttl, 0), source.dump(key), replace=True)
        source.execute_command("SELECT", 0)
        sink.execute_command("SELECT", 0)
        assert digest(sink) == expected
        assert value_digests(sink) == value_digests(source)
        source.flushall()
