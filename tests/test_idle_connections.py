"""Idle connections: what they cost the server, and that they keep working.

damselfly parks a connection that has been idle for --conn_park_idle_ms with nothing
buffered: its fiber and stack go away, its read buffer's pages go back to the kernel, and
it wakes up in a new fiber when bytes arrive. The memory tests read the server's resident
set size (damselfly only); the behaviour tests also run against redis-server, where the
connections simply stay idle.
"""

import random
import resource
import selectors
import socket
import threading
import time

import pytest

from conftest import HOST, TARGET

PARK_MS = 50
# Long enough for every connection to park: idle for PARK_MS, then noticed by the next
# sweep (every PARK_MS / 2), then a little scheduling.
PARKED_AFTER_S = 0.3
CONNECTIONS = 2000
MAX_BYTES_PER_IDLE_CONNECTION = 4096


def park_flags():
    return (f"--conn_park_idle_ms={PARK_MS}",) if TARGET == "damselfly" else ()


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


def open_idle(port, count, timeout_s=30.0):
    """Opens `count` connections that have each sent PING and received +PONG."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < count + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 100), hard))
    socks = [socket.create_connection((HOST, port), timeout=timeout_s) for _ in range(count)]
    sel = selectors.DefaultSelector()
    for s in socks:
        s.sendall(b"PING\r\n")
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, bytearray())
    waiting, deadline = count, time.monotonic() + timeout_s
    while waiting:
        assert time.monotonic() < deadline, f"{waiting} connections got no +PONG"
        for key, _ in sel.select(timeout=1.0):
            key.data.extend(key.fileobj.recv(64))
            if key.data.endswith(b"\r\n"):
                assert bytes(key.data) == b"+PONG\r\n"
                sel.unregister(key.fileobj)
                waiting -= 1
    sel.close()
    return socks


def settled_rss_kib(pid, settle_s=PARKED_AFTER_S * 3):
    """RSS once it stopped moving (read until two reads 0.2 s apart agree)."""
    time.sleep(settle_s)
    last = rss_kib(pid)
    for _ in range(25):
        time.sleep(0.2)
        now = rss_kib(pid)
        if now == last:
            break
        last = now
    return last


def measure(srv, count):
    """RSS (KiB) before `count` idle connections, with them open, and after they closed."""
    pid = srv.proc.pid
    with open(f"/proc/{pid}/maps") as maps:
        if "libasan" in maps.read():
            pytest.skip("under AddressSanitizer, RSS measures its allocator and shadow memory")
    # A first batch of connections warms up what stays allocated for good (the live
    # connection list, the pool of read buffers), as in a server that has run a while.
    for s in open_idle(srv.port, 100):
        s.close()
    before = settled_rss_kib(pid)
    socks = open_idle(srv.port, count)
    idle = settled_rss_kib(pid)
    for s in socks:
        s.close()
    return before, idle, settled_rss_kib(pid)


@pytest.mark.damselfly_only
def test_idle_connections_cost_at_most_4_kib_each(server_factory):
    srv = server_factory("--proactor_threads=1", *park_flags())
    before, idle, closed = measure(srv, CONNECTIONS)
    assert (idle - before) * 1024 / CONNECTIONS <= MAX_BYTES_PER_IDLE_CONNECTION, (before, idle)
    # Closing wakes every parked connection in a new fiber: that must leave nothing
    # behind. (The ~1 KiB of objects each held stays in the allocator, for reuse.)
    assert closed <= idle + 256, (before, idle, closed)


@pytest.mark.damselfly_only
def test_closing_returns_stacks_and_buffers(server_factory):
    # Parking off: each idle connection keeps its fiber stack and the touched page of its
    # read buffer, which is what parking saves; closing gives them back.
    srv = server_factory("--proactor_threads=1", "--conn_park_idle_ms=0")
    before, idle, closed = measure(srv, CONNECTIONS)
    assert (idle - before) * 1024 / CONNECTIONS > 2 * MAX_BYTES_PER_IDLE_CONNECTION
    assert closed - before <= (idle - before) / 4, (before, idle, closed)


@pytest.mark.damselfly_only
def test_client_list_shows_no_query_buffer_for_parked_connections(server_factory):
    srv = server_factory(*park_flags())
    idle = srv.raw()
    assert idle("CLIENT", "SETNAME", "sleeper") == "OK"
    time.sleep(PARKED_AFTER_S)
    listing = srv.client().execute_command("CLIENT", "LIST")
    line = next(entry for entry in listing.decode().splitlines() if "name=sleeper" in entry)
    assert " qbuf=0 qbuf-free=0 " in line
    assert idle("PING") == "PONG"


def test_parked_connections_keep_working(server_factory):
    srv = server_factory(*park_flags())
    conns = [srv.raw() for _ in range(50)]
    for i, c in enumerate(conns):
        assert c("SET", f"key:{i}", f"value:{i}") == "OK"
    time.sleep(PARKED_AFTER_S)
    for i, c in enumerate(conns):
        assert c("GET", f"key:{i}") == f"value:{i}".encode()
    time.sleep(PARKED_AFTER_S)
    # A pipeline, and a request bigger than the read buffer, wake a parked connection.
    c = conns[0]
    c.send_many([("INCR", "counter")] * 100)
    assert [c.read() for _ in range(100)] == list(range(1, 101))
    time.sleep(PARKED_AFTER_S)
    big = b"x" * (1 << 20)
    assert c("SET", "big", big) == "OK"
    assert c("STRLEN", "big") == len(big)


def test_parked_connection_keeps_its_state(server_factory):
    srv = server_factory(*park_flags())
    c = srv.raw()
    assert c("SELECT", "3") == "OK"
    assert c("CLIENT", "SETNAME", "keeper") == "OK"
    assert c("MULTI") == "OK"
    assert c("SET", "k", "v") == "QUEUED"
    time.sleep(PARKED_AFTER_S)
    assert c("EXEC") == ["OK"]
    assert c("CLIENT", "GETNAME") == b"keeper"
    assert c("GET", "k") == b"v"
    assert srv.client().get("k") is None  # it went to database 3


def test_request_split_across_idle_time(server_factory):
    # Half a request then silence: the connection holds bytes, so it must not park
    # (or lose them); the rest completes it.
    srv = server_factory(*park_flags())
    c = srv.raw()
    c.send_raw(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhel")
    time.sleep(PARKED_AFTER_S)
    c.send_raw(b"lo\r\n")
    assert c.read() == "OK"
    assert c("GET", "k") == b"hello"


def test_parked_connection_can_be_killed_and_can_leave(server_factory):
    srv = server_factory(*park_flags())
    admin = srv.client()
    victim = srv.raw()
    victim_id = victim("CLIENT", "ID")
    leaver = srv.raw()
    assert leaver("PING") == "PONG"
    time.sleep(PARKED_AFTER_S)
    assert admin.execute_command("CLIENT", "KILL", "ID", victim_id) == 1
    assert victim.read_until_closed() == b""
    connected = admin.info("clients")["connected_clients"]
    leaver.close()
    deadline = time.monotonic() + 5
    while admin.info("clients")["connected_clients"] != connected - 1:
        assert time.monotonic() < deadline, "the closed connection is still listed"
        time.sleep(0.02)


def test_monitor_keeps_streaming_after_idle_time(server_factory):
    srv = server_factory(*park_flags())
    monitor = srv.raw()
    assert monitor("MONITOR") == "OK"
    time.sleep(PARKED_AFTER_S)
    srv.client().set("seen", "1")
    deadline = time.monotonic() + 5
    seen = b""
    while b'"set" "seen" "1"' not in seen.lower():
        assert time.monotonic() < deadline, seen
        seen += monitor.recv_available(0.1)


def test_subscriber_keeps_receiving_after_idle_time(server_factory):
    srv = server_factory(*park_flags())
    subscriber = srv.raw()
    assert subscriber("SUBSCRIBE", "news") == [b"subscribe", b"news", 1]
    time.sleep(PARKED_AFTER_S)
    assert srv.client().publish("news", "hello") == 1
    assert subscriber.read() == [b"message", b"news", b"hello"]
    assert subscriber("UNSUBSCRIBE", "news") == [b"unsubscribe", b"news", 0]
    time.sleep(PARKED_AFTER_S)  # a plain connection again: it may park, and wakes up
    assert subscriber("PING") == "PONG"


def test_parked_memcache_connection_keeps_working(mc_server_factory):
    srv = mc_server_factory(*park_flags())
    c = srv.mc_raw()
    assert c.call(b"set k 0 0 5\r\nhello\r\n") == b"STORED\r\n"
    time.sleep(PARKED_AFTER_S)
    assert c.call(b"get k\r\n") == b"VALUE k 0 5\r\nhello\r\nEND\r\n"


@pytest.mark.damselfly_only
@pytest.mark.parametrize("backend", ["io_uring", "epoll"])
def test_connections_that_park_and_wake_all_the_time(server_factory, backend):
    # With a 1 ms threshold the sweep interrupts receives while requests are arriving, so
    # the races between a sweep, a request and a wake-up are all taken many times: every
    # reply must still arrive, in order, on the right connection.
    flags = ["--conn_park_idle_ms=1", "--proactor_threads=2"]
    if backend == "epoll":
        flags.append("--force_epoll")
    srv = server_factory(*flags)
    conns = [srv.raw() for _ in range(16)]
    rounds = 60
    errors = []

    def client(i, c):
        rng = random.Random(i)
        try:
            for r in range(rounds):
                depth = rng.choice([1, 1, 2, 8])
                c.send_many([("INCR", f"counter:{i}")] * depth)
                got = [c.read() for _ in range(depth)]
                expected = list(range(r * 8 + 1, r * 8 + depth + 1))
                if got != expected:
                    errors.append((i, r, got, expected))
                    return
                if depth < 8:
                    c.send_many([("INCR", f"counter:{i}")] * (8 - depth))
                    for _ in range(8 - depth):
                        c.read()
                time.sleep(rng.choice([0, 0.001, 0.002, 0.004]))
        except Exception as e:  # reported below, with the client's number
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=client, args=(i, c)) for i, c in enumerate(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors[:3]
    admin = srv.client()
    for i in range(len(conns)):
        assert admin.get(f"counter:{i}") == str(rounds * 8).encode()
