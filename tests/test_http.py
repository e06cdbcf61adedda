"""HTTP on the RESP port: the status page and /metrics endpoints' transport (keep-alive,
Content-Length, pipelining, 400/404/405/431, slow and huge headers), --admin_port and
--primary_port_http_enabled. damselfly only: redis-server does not speak HTTP."""

import re
import socket
import time

import pytest
import redis

pytestmark = pytest.mark.damselfly_only


def connect(port, host="127.0.0.1", timeout=5.0):
    s = socket.create_connection((host, port), timeout=timeout)
    s.settimeout(timeout)
    return s


def read_response(sock, buf=b"", head_only=False):
    """Reads one response; returns (status, headers dict (lower-case names), body, rest).
    head_only: the response to a HEAD request, which has no body."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a full head: {buf!r}")
        buf += chunk
    head, _, buf = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    version, status, _reason = lines[0].split(" ", 2)
    assert version == "HTTP/1.1"
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = 0 if head_only else int(headers["content-length"])
    while len(buf) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the full body")
        buf += chunk
    return int(status), headers, buf[:length], buf[length:]


def read_until_closed(sock):
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def get(port, path, extra=""):
    with connect(port) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{extra}\r\n".encode())
        return read_response(s)


def test_status_page(server):
    server.client().set("k", "v")
    status, headers, body, _ = get(server.port, "/")
    assert status == 200
    assert headers["content-type"].startswith("text/html")
    text = body.decode()
    for word in ("version", "uptime_in_seconds", "role", "used_memory", "connected_clients", "keys"):
        assert word in text


def test_metrics_content_type(server):
    status, headers, body, _ = get(server.port, "/metrics")
    assert status == 200
    assert headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert b"damselfly_uptime_in_seconds" in body


def test_unknown_path_is_404_and_keeps_the_connection(server):
    with connect(server.port) as s:
        s.sendall(b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
        status, headers, _, rest = read_response(s)
        assert status == 404 and "connection" not in headers
        s.sendall(b"GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        status, _, _, _ = read_response(s, rest)
        assert status == 200


def test_head_and_other_methods(server):
    with connect(server.port) as s:
        s.sendall(b"HEAD /metrics HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n")
        status, headers, body, rest = read_response(s, head_only=True)
        # HEAD: the real Content-Length but no body, so the next response follows at once.
        assert status == 200 and int(headers["content-length"]) > 0 and body == b""
        status, headers, body, _ = read_response(s, rest)
        assert status == 200 and body.startswith(b"<!DOCTYPE html>")
    with connect(server.port) as s:
        s.sendall(b"POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc")
        status, headers, _, _ = read_response(s)
        assert status == 405 and headers["allow"] == "GET, HEAD"


def test_pipelined_requests_answered_in_order(server):
    with connect(server.port) as s:
        s.sendall(b"GET / HTTP/1.1\r\n\r\nGET /x HTTP/1.1\r\n\r\n"
                  b"GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n")
        data = read_until_closed(s)
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", data)
    assert statuses == [b"200", b"404", b"200"]


def test_request_split_into_single_bytes(server):
    with connect(server.port) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for byte in b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n":
            s.sendall(bytes([byte]))
        status, _, body, _ = read_response(s)
        assert status == 200 and b"damselfly_connected_clients" in body


def test_http10_closes_unless_keep_alive(server):
    with connect(server.port) as s:
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        status, headers, _, rest = read_response(s)
        assert status == 200 and headers["connection"] == "close"
        assert rest + read_until_closed(s) == b""


@pytest.mark.parametrize("request_bytes, status", [
    (b"GET / HTTP/1.1\r\nno colon here\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nX: 1\r\n folded\r\n\r\n", 400),
    (b"GET /  HTTP/1.1\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400),
    (b"GET / HTTP/2.0\r\n\r\n", 505),
    (b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
])
def test_garbage_gets_an_error_and_close(server, request_bytes, status):
    with connect(server.port) as s:
        s.sendall(request_bytes)
        got, headers, _, rest = read_response(s)
        assert got == status and headers["connection"] == "close"
        assert rest + read_until_closed(s) == b""
    assert server.client().ping()


def test_huge_header_is_431(server):
    with connect(server.port) as s:
        s.sendall(b"GET / HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n")
        status, headers, _, _ = read_response(s)
        assert status == 431 and headers["connection"] == "close"
    assert server.client().ping()


def test_slow_headers_time_out(server_factory):
    srv = server_factory("--http_header_timeout_ms=300")
    with connect(srv.port) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # never finishes the head
        start = time.monotonic()
        assert read_until_closed(s) == b""
        assert time.monotonic() - start < 3
    assert srv.client().ping()


def test_idle_keepalive_times_out(server_factory):
    srv = server_factory("--http_keepalive_timeout_ms=300")
    with connect(srv.port) as s:
        s.sendall(b"GET / HTTP/1.1\r\n\r\n")
        status, _, _, _ = read_response(s)
        assert status == 200
        assert read_until_closed(s) == b""


def test_resp_inline_commands_still_work(server):
    c = server.raw()
    assert c("SET", "GET", "x") == "OK"
    with connect(server.port) as s:
        s.sendall(b"GET GET\r\nGET / HTTP\r\n")
        data = b""
        while data.count(b"\r\n") < 3:
            data += s.recv(4096)
        assert data.startswith(b"$1\r\nx\r\n-ERR wrong number of arguments for 'get' command")


def test_http_can_be_disabled_on_the_main_port(server_factory):
    srv = server_factory("--primary_port_http_enabled=false")
    with connect(srv.port) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")
        data = s.recv(4096)
        assert data.startswith(b"-ERR wrong number of arguments for 'get' command")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_admin_port_serves_resp_and_http(server_factory):
    admin = free_port()
    srv = server_factory("--requirepass=secret", f"--admin_port={admin}",
                         "--admin_bind=127.0.0.1", "--admin_nopass",
                         "--primary_port_http_enabled=false")
    status, _, body, _ = get(admin, "/metrics")
    assert status == 200 and b"damselfly_connected_clients" in body
    client = redis.Redis(host="127.0.0.1", port=admin)
    try:
        assert client.set("k", "v") and client.get("k") == b"v"  # no AUTH needed here
    finally:
        client.close()
    main = redis.Redis(host="127.0.0.1", port=srv.port)
    try:
        with pytest.raises(redis.AuthenticationError):
            main.get("k")
    finally:
        main.close()


def test_admin_port_needs_auth_without_nopass(server_factory):
    admin = free_port()
    server_factory("--requirepass=secret", f"--admin_port={admin}", "--admin_bind=127.0.0.1")
    client = redis.Redis(host="127.0.0.1", port=admin)
    try:
        with pytest.raises(redis.AuthenticationError):
            client.get("k")
    finally:
        client.close()
