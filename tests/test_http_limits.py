"""HTTP on the RESP ports under a hostile or careless client, and behind a password
(issue #21, points 1, 4 and 5): output bounded per connection, no work for clients that
left, HTTP Basic authentication with --requirepass on --port and --admin_port and the
flags that lift it, and RSS that returns after a burst. damselfly only: redis-server does
not speak HTTP."""

import base64
import os
import resource
import shutil
import socket
import struct
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import HOST
from helpers import wait_for
from test_http import connect, free_port, read_response
from test_metrics import prometheus_query

pytestmark = pytest.mark.damselfly_only

METRICS = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


def skip_under_asan(srv):
    with open(f"/proc/{srv.proc.pid}/maps") as maps:
        if "libasan" in maps.read():
            pytest.skip("under AddressSanitizer, RSS measures its allocator and shadow memory")


def settled_rss_kib(pid, timeout_s=10.0):
    """RSS once it stopped falling: two reads 0.5 s apart within 64 KiB."""
    last = rss_kib(pid)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = rss_kib(pid)
        if abs(now - last) <= 64:
            return now
        last = now
    return last


def raise_fd_limit(count):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < count + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 100), hard))


def flood(port, connections, requests):
    """Opens `connections` connections that each send `requests` pipelined GET /metrics
    and never read; returns them."""
    raise_fd_limit(connections)
    socks = []
    for _ in range(connections):
        s = socket.create_connection((HOST, port), timeout=5)
        s.setblocking(False)
        try:
            s.send(METRICS * requests)  # what the kernel takes; the rest is not needed
        except BlockingIOError:
            pass
        socks.append(s)
    return socks


def reset(socks):
    """Closes with a reset (SO_LINGER 0), as a killed client's kernel would."""
    for s in socks:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()


def connected_clients(srv):
    """Clients connected besides the one asking (a client of its own, made once)."""
    if not hasattr(srv, "http_limits_client"):
        srv.http_limits_client = srv.client(socket_timeout=30)
    return srv.http_limits_client.info("clients")["connected_clients"] - 1


def basic(user, password):
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return f"Authorization: Basic {token}\r\n"


def get_status(port, path="/metrics", extra=""):
    with connect(port) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode())
        status, headers, body, _ = read_response(s)
        return status, headers, body


# ------------------------------------------------------------------ back-pressure


def test_pipelining_clients_that_do_not_read_hold_bounded_memory(server_factory):
    # 50 connections x 200 pipelined GET /metrics, never read. Each is answered until
    # its socket is full and one flush (64 KiB) is pending; then it is not read any
    # more. Answering everything would cost each connection 200 copies of the page.
    srv = server_factory("--metrics_cache_ms=0")
    skip_under_asan(srv)
    page = len(get_status(srv.port)[2])
    before = settled_rss_kib(srv.proc.pid)
    socks = flood(srv.port, 50, 200)
    time.sleep(1.5)
    peak = rss_kib(srv.proc.pid)
    reset(socks)
    assert 50 * 200 * page > 40 * 1024 * 1024  # what answering everything would hold
    # 42-49 KiB measured; main before the bound held 563 KiB per connection here.
    assert (peak - before) * 1024 / 50 < 160 * 1024, (before, peak, page)


def test_no_work_for_clients_that_left(server_factory):
    # Clients that pipeline and leave without reading: their connections end at the
    # next send, instead of every pipelined request being answered into a dead socket.
    srv = server_factory("--metrics_cache_ms=0")
    assert connected_clients(srv) == 0
    socks = flood(srv.port, 50, 400)
    time.sleep(0.5)
    reset(socks)
    # They end within milliseconds; before, answering what was read took about 6 s.
    wait_for(lambda: connected_clients(srv) == 0, timeout=3.0,
             what="the HTTP connections to end")
    assert srv.client().ping()


def test_slow_reader_gets_every_response(server_factory):
    # Back-pressure delays responses; it loses none and keeps their order.
    srv = server_factory()
    with connect(srv.port, timeout=10) as s:
        s.sendall(METRICS * 300 + b"GET /nope HTTP/1.1\r\nConnection: close\r\n\r\n")
        time.sleep(0.5)  # the server stops reading once its output is full
        rest = b""
        for _ in range(300):
            status, _, body, rest = read_response(s, rest)
            assert status == 200 and body.startswith(b"# HELP damselfly_")
        status, headers, _, rest = read_response(s, rest)
        assert status == 404 and headers["connection"] == "close"


def test_metrics_page_is_shared_within_the_cache_interval(server_factory):
    srv = server_factory("--metrics_cache_ms=60000")
    c = srv.client()
    first = get_status(srv.port)[2]
    c.set("k", "v")
    # Within the interval each thread answers with the page it rendered: the test
    # server has 2 threads, so 4 connections reach a thread that rendered before SET.
    pages = [get_status(srv.port)[2] for _ in range(4)]
    assert first in pages


def test_metrics_without_cache_are_fresh(server_factory):
    srv = server_factory("--metrics_cache_ms=0")
    c = srv.client()
    for i in range(5):
        c.set(f"k{i}", "v")
        body = get_status(srv.port)[2].decode()
        assert f'damselfly_commands_total{{cmd="set"}} {i + 1}\n' in body


def test_pipelined_requests_share_one_render(server_factory):
    # Requests that arrived before a render started are answered with it: the pipeline
    # reports one snapshot, not one per request.
    srv = server_factory("--metrics_cache_ms=0")
    with connect(srv.port) as s:
        s.sendall(METRICS * 20)
        rest, bodies = b"", set()
        for _ in range(20):
            _, _, body, rest = read_response(s, rest)
            bodies.add(body)
        assert len(bodies) == 1


# ------------------------------------------------------------------ authentication


def assert_401(status, headers, body):
    assert status == 401
    assert headers["www-authenticate"] == 'Basic realm="damselfly"'
    assert body == b"401 Unauthorized\n"


def test_password_asks_for_basic_auth_on_the_main_port(server_factory):
    srv = server_factory("--requirepass=s3cret:x")
    for path in ("/metrics", "/", "/nope"):
        assert_401(*get_status(srv.port, path))
    assert_401(*get_status(srv.port, extra=basic("default", "wrong")))
    assert_401(*get_status(srv.port, extra="Authorization: Bearer s3cret:x\r\n"))
    assert_401(*get_status(srv.port, extra="Authorization: Basic !!!\r\n"))
    # Any user name: only "default" exists, and scrape configurations must name one.
    for user in ("default", "prometheus", ""):
        status, _, body = get_status(srv.port, extra=basic(user, "s3cret:x"))
        assert status == 200 and b"damselfly_connected_clients" in body
    assert get_status(srv.port, "/nope", extra=basic("default", "s3cret:x"))[0] == 404


def test_401_keeps_the_connection_open(server_factory):
    srv = server_factory("--requirepass=secret")
    with connect(srv.port) as s:
        s.sendall(METRICS)
        status, headers, body, rest = read_response(s)
        assert_401(status, headers, body)
        assert "connection" not in headers
        s.sendall(f"GET /metrics HTTP/1.1\r\n{basic('default', 'secret')}\r\n".encode())
        status, _, _, _ = read_response(s, rest)
        assert status == 200


def test_no_password_no_auth(server_factory):
    srv = server_factory()
    assert get_status(srv.port)[0] == 200
    assert get_status(srv.port, extra=basic("default", "anything"))[0] == 200


def test_password_set_at_run_time_applies_to_open_connections(server_factory):
    srv = server_factory()
    with connect(srv.port) as s:
        s.sendall(METRICS)
        status, _, _, rest = read_response(s)
        assert status == 200
        srv.client().config_set("requirepass", "later")
        s.sendall(METRICS)
        status, headers, body, rest = read_response(s, rest)
        assert_401(status, headers, body)
        s.sendall(f"GET /metrics HTTP/1.1\r\n{basic('default', 'later')}\r\n".encode())
        assert read_response(s, rest)[0] == 200


def test_admin_port_asks_for_the_password_too(server_factory):
    admin = free_port()
    srv = server_factory("--requirepass=secret", f"--admin_port={admin}",
                         "--admin_bind=127.0.0.1")
    assert_401(*get_status(admin))
    assert get_status(admin, extra=basic("default", "secret"))[0] == 200
    assert_401(*get_status(srv.port))


def test_admin_nopass_opens_the_admin_port_only(server_factory):
    admin = free_port()
    srv = server_factory("--requirepass=secret", f"--admin_port={admin}",
                         "--admin_bind=127.0.0.1", "--admin_nopass")
    assert get_status(admin)[0] == 200
    assert_401(*get_status(srv.port))
    client = redis.Redis(host=HOST, port=admin)
    try:
        assert client.ping()  # RESP on the admin port needs no AUTH either
    finally:
        client.close()


def test_metrics_nopass_opens_http_on_both_ports(server_factory):
    admin = free_port()
    srv = server_factory("--requirepass=secret", f"--admin_port={admin}",
                         "--admin_bind=127.0.0.1", "--metrics_nopass")
    assert get_status(srv.port)[0] == 200
    assert get_status(admin)[0] == 200
    for port in (srv.port, admin):  # RESP still needs the password
        client = redis.Redis(host=HOST, port=port)
        try:
            with pytest.raises(redis.AuthenticationError):
                client.get("k")
        finally:
            client.close()


# ------------------------------------------------------------------ memory goes back


# What an HTTP burst leaves resident once it ended, over 45 runs of the test below on the
# 2-core machine (session 25): from -37% to +26% of its growth, bimodal, 400 or 800
# connections alike. The baseline itself sits 1.5-2 MiB higher or lower run to run: as with
# the connection bursts below, mimalloc 2.0.9 keeps a segment's freed spans while it holds a
# live block. So "near its level before" means well under half the burst kept: the failure
# this guards against (buffers of gone clients held, 1.87 GiB once) keeps all of it.
KEPT_AT_MOST = 0.40


def test_rss_returns_after_an_http_burst(server_factory):
    srv = server_factory("--metrics_cache_ms=0", "--memory_release_ms=100")
    skip_under_asan(srv)
    pid = srv.proc.pid
    # Two bursts warm up what stays for good (the fiber stack cache, buffer pools): after
    # one, a full run once measured its baseline 1.5 MiB low and kept 16% of the burst.
    # A burst lasts a second and at least until it has cost 8 MiB (400 connections'
    # replies: ~18 MiB once the server has rendered them all), so that a slow or busy
    # machine still measures a burst well above the noise: a fixed second once got 3.9 MiB.
    def burst(base_kib):
        start = time.monotonic()
        socks = flood(srv.port, 400, 200)
        peak = base_kib

        def grown():
            nonlocal peak
            peak = max(peak, rss_kib(pid))
            return peak - base_kib > 8 * 1024 and time.monotonic() > start + 1.0

        wait_for(grown, timeout=15.0, what="the burst to cost 8 MiB")
        reset(socks)
        wait_for(lambda: connected_clients(srv) == 0, timeout=15.0, what="the burst to end")
        return peak

    for _ in range(2):
        burst(rss_kib(pid))
    before = settled_rss_kib(pid)
    peak = burst(before)
    after = settled_rss_kib(pid)
    assert after - before <= (peak - before) * KEPT_AT_MOST, (before, peak, after)


# What mimalloc 2.0.9 keeps of a burst of 16 KiB replies depends on where their pages fell:
# a span freed in a segment that still holds a live block is decommitted only when that
# segment hands out a page again, which a quiet thread never asks for (docs/benchmarks.md,
# "What the release cannot return"). Run to run, 0% to 64% of such a burst stayed
# resident: at most the reply buffers (about 40 of the 64 MiB), since stacks and read
# buffers go back anyway.
REPLY_BUFFERS_KEPT_AT_MOST = 0.75


def test_rss_after_connection_bursts_is_returned_or_reused(server_factory):
    # 2,000 connections that each ran a command with a 16 KiB reply, then left; three times.
    srv = server_factory("--memory_release_ms=100")
    skip_under_asan(srv)
    pid = srv.proc.pid
    value = b"x" * 16384
    connected_clients(srv)
    srv.http_limits_client.set("big", value)
    raise_fd_limit(2000)

    def burst(count):
        socks = [socket.create_connection((HOST, srv.port), timeout=30) for _ in range(count)]
        for s in socks:
            s.sendall(b"GET big\r\n")
        for s in socks:
            got = b""
            while len(got) < len(value) + 9:
                got += s.recv(1 << 17)
        return socks

    for s in burst(2000):  # warms up what stays for good, as above
        s.close()
    wait_for(lambda: connected_clients(srv) == 0, timeout=10.0, what="the warm-up to end")
    before = settled_rss_kib(pid)
    seen = []
    for _ in range(3):
        socks = burst(2000)
        peak = rss_kib(pid)
        for s in socks:
            s.close()
        wait_for(lambda: connected_clients(srv) == 0, timeout=10.0, what="the connections to end")
        after = settled_rss_kib(pid)
        seen.append((peak, after))
        assert peak - before > 16 * 1024, (before, seen)
        assert after - before <= (peak - before) * REPLY_BUFFERS_KEPT_AT_MOST, (before, seen)
    # What a burst kept, the next one reused: the peaks do not add up.
    growth = seen[0][0] - before
    assert max(peak for peak, _ in seen) - seen[0][0] <= growth * 0.1, (before, seen)


@pytest.mark.skipif(shutil.which("prometheus") is None, reason="prometheus not installed")
def test_real_prometheus_scrapes_with_basic_auth(server_factory):
    # As docs/prometheus.yml configures it: basic_auth with the password in a file.
    srv = server_factory("--requirepass=scrape-me")
    workdir = tempfile.mkdtemp(prefix="damselfly-prometheus-")
    password_file = os.path.join(workdir, "damselfly.pass")
    with open(password_file, "w") as f:
        f.write("scrape-me")
    config = os.path.join(workdir, "prometheus.yml")
    with open(config, "w") as f:
        f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: damselfly
    basic_auth:
      username: default
      password_file: {password_file}
    static_configs:
      - targets: ['127.0.0.1:{srv.port}']
  - job_name: nopass
    static_configs:
      - targets: ['127.0.0.1:{srv.port}']
""")
    port = free_port()
    log_path = os.path.join(workdir, "prometheus.log")
    log = open(log_path, "wb")
    proc = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={workdir}/data",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        def up(job, value):
            return len(prometheus_query(port, f'up{{job="{job}"}} == {value}')) == 1
        assert wait_for(lambda: up("damselfly", 1), timeout=60, interval=0.2), \
            open(log_path).read()[-3000:]
        assert wait_for(lambda: up("nopass", 0), timeout=30, interval=0.2)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)
