"""A memcache client that asks for much more than it reads must not grow the server's
memory: replies wait in the kernel's socket buffers and a bounded output buffer, and the
connection stops reading requests while its sends block. Other clients are still served."""

import socket
import time

import pytest

from helpers import wait_for

pytestmark = pytest.mark.damselfly_only

MIB = 1 << 20


def _rss_bytes(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _send_without_reading(srv, payload, seconds=5):
    s = socket.create_connection((srv.host, srv.mc_port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
    s.setblocking(False)
    sent, deadline = 0, time.monotonic() + seconds
    while sent < len(payload) and time.monotonic() < deadline:
        try:
            sent += s.send(payload[sent:])
        except BlockingIOError:
            time.sleep(0.01)  # the server stopped reading: back-pressure reached us
    return s


def _check_bounded(srv, before, reader):
    time.sleep(0.5)
    probe = srv.mc_client()
    try:
        start = time.monotonic()
        assert probe.version()
        assert time.monotonic() - start < 1.0
        grown = _rss_bytes(srv.proc.pid) - before
        assert grown < 128 * MIB, f"RSS grew by {grown // MIB} MiB"
    finally:
        reader.close()
    wait_for(lambda: probe.get("big") is not None, what="server healthy after the reader left")


def _store_big(srv):
    # Just under the 1 MiB item limit; not ASCII, so it is stored unpacked.
    assert srv.mc_client().set("big", b"\xff" * (MIB - 1024))


def test_pipelined_gets_without_reading(mc_server_factory):
    """2,000 pipelined `get big` (2 GiB of replies)."""
    srv = mc_server_factory()
    _store_big(srv)
    before = _rss_bytes(srv.proc.pid)
    _check_bounded(srv, before, _send_without_reading(srv, b"get big\r\n" * 2000))


def test_one_get_of_many_large_values_without_reading(mc_server_factory):
    """One `get` naming the same 1 MiB item 2,000 times (2 GiB in one reply)."""
    srv = mc_server_factory()
    _store_big(srv)
    before = _rss_bytes(srv.proc.pid)
    _check_bounded(srv, before, _send_without_reading(srv, b"get" + b" big" * 2000 + b"\r\n"))
