"""The memcache port and RESP transactions: memcache commands wait for the keys a
transaction (MSET, MULTI/EXEC) holds, a multi-key get across shards is atomic like MGET,
and memcache writes invalidate RESP WATCHes. With 2 and 4 threads (shards)."""

import random
import threading

import pytest

from resp_client import RawConnection

pytestmark = pytest.mark.damselfly_only

SECONDS = 3


@pytest.fixture(params=[2, 4], ids=lambda n: f"{n}threads")
def srv(request, mc_server_factory):
    srv = mc_server_factory(f"--proactor_threads={request.param}")
    srv.shards = request.param
    return srv


def spread_keys(srv, count):
    """`count` keys whose shards take turns, so a get of them visits every shard."""
    c = RawConnection(srv.host, srv.port)
    by_shard = {s: [] for s in range(srv.shards)}
    n = 0
    while any(len(v) < count for v in by_shard.values()):
        by_shard[c("DEBUG", "KEYSHARD", f"k{n}")].append(f"k{n}")
        n += 1
    return [by_shard[i % srv.shards][i // srv.shards] for i in range(count)]


def run_for(seconds, stop, workers):
    """Runs the callables in threads until `seconds` pass or one sets `stop`; re-raises
    the first exception a worker raised."""
    errors = []

    def wrap(fn):
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append(e)
            stop.set()

    threads = [threading.Thread(target=wrap, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join(timeout=30)
        assert not t.is_alive(), "a worker hung"
    if errors:
        raise errors[0]


def parse_values(reply):
    """{key: value} of a get reply."""
    values, lines = {}, reply.split(b"\r\n")
    i = 0
    while lines[i] != b"END":
        _, key, _, _ = lines[i].split(b" ")
        values[key.decode()] = lines[i + 1]
        i += 2
    return values


def test_multi_key_get_never_sees_half_an_mset(srv):
    keys = spread_keys(srv, 10)
    RawConnection(srv.host, srv.port)("MSET", *[x for k in keys for x in (k, "0")])
    stop = threading.Event()
    problems, gets = [], [0]

    def writer(seed):
        c, rng = RawConnection(srv.host, srv.port), random.Random(seed)
        while not stop.is_set():
            value = str(rng.randrange(1 << 30))
            c("MSET", *[x for k in keys for x in (k, value)])

    def reader():
        mc = srv.mc_raw()
        request = ("get " + " ".join(keys) + "\r\n").encode()
        while not stop.is_set():
            values = parse_values(mc.call(request))
            gets[0] += 1
            if len(values) != len(keys) or len(set(values.values())) != 1:
                problems.append(values)
                stop.set()

    run_for(SECONDS, stop, [lambda s=s: writer(s) for s in range(4)] + [reader] * 4)
    assert not problems, f"torn get after {gets[0]} gets: {problems[0]}"
    assert gets[0] > 100


def test_single_key_commands_wait_for_a_multi_exec(srv):
    """Transfers between two keys on different shards in MULTI/EXEC, while memcache
    readers fetch each key separately, in the order a transfer writes them: since a
    reader that saw the new value of the first key must then see the second key of the
    same transfer, the total read that way never drops below the starting total."""
    a, b = spread_keys(srv, 2)
    c = RawConnection(srv.host, srv.port)
    c("MSET", a, "1000", b, "1000")
    stop = threading.Event()
    problems = []

    def mover():
        conn = RawConnection(srv.host, srv.port)
        while not stop.is_set():
            conn("MULTI")
            conn("DECRBY", a, "1")
            conn("INCRBY", b, "1")
            conn("EXEC")

    def reader():
        mc = srv.mc_raw()
        while not stop.is_set():
            first = int(parse_values(mc.call(f"get {a}\r\n".encode()))[a])
            second = int(parse_values(mc.call(f"get {b}\r\n".encode()))[b])
            if first + second < 2000:
                problems.append((first, second))
                stop.set()

    run_for(SECONDS, stop, [mover] * 2 + [reader] * 3)
    assert not problems, f"read a={problems[0][0]} then b={problems[0][1]}: an EXEC seen half done"
    assert int(c("GET", a)) + int(c("GET", b)) == 2000


def test_memcache_write_invalidates_a_watch(srv):
    c = RawConnection(srv.host, srv.port)
    c("SET", "w", "1")
    assert c("WATCH", "w") == "OK"
    assert srv.mc_raw().call(b"set w 0 0 1\r\n2\r\n") == b"STORED\r\n"
    assert c("MULTI") == "OK"
    c("SET", "w", "3")
    assert c("EXEC") is None
    assert c("GET", "w") == b"2"
    # touch (a TTL change) counts as a write too, as EXPIRE does
    assert c("WATCH", "w") == "OK"
    assert srv.mc_raw().call(b"touch w 100\r\n") == b"TOUCHED\r\n"
    c("MULTI")
    c("SET", "w", "4")
    assert c("EXEC") is None
