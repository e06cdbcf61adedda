"""Limits on clients (issue #21): maxclients on every port, multi-bulk requests of more
than 1,048,576 arguments, the query-buffer limit, and memcached's text-protocol
authentication on the memcached port while a password is set.

Validated first against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis) and memcached 1.6
(DAMSELFLY_TEST_TARGET=memcached) wherever the behaviour is theirs."""

import os
import resource
import socket
import subprocess
import sys
import urllib.request

import pytest

from conftest import McClosed, McConnection, damselfly_binary, free_port
from helpers import err, info_fields, wait_for
from resp_client import RawConnection, RespError, encode_command

MAXCLIENTS_REFUSAL = b"-ERR max number of clients reached\r\n"
MEMCACHED_REFUSAL = b"ERROR Too many open connections\r\n"
UNAUTHENTICATED = b"CLIENT_ERROR unauthenticated\r\n"


def connected_clients(c):
    return int(info_fields(c, "clients")["connected_clients"])


def rejected_connections(c):
    return int(info_fields(c, "stats")["rejected_connections"])


def mc_stats(conn):
    reply = conn.call(b"stats\r\n")
    return {line.split()[1].decode(): line.split()[2].decode()
            for line in reply.split(b"\r\n") if line.startswith(b"STAT ")}


def refusal(host, port):
    """What a new connection reads before the server closes it (b"" if it stays open)."""
    with RawConnection(host, port, timeout=5) as conn:
        try:
            return conn.read_until_closed(timeout=2)
        except TimeoutError:
            return b""


# ------------------------------------------------------------------------- maxclients


def test_maxclients_refuses_the_client_over_the_limit(server_factory):
    srv = server_factory()
    c = srv.raw()
    assert c("CONFIG", "GET", "maxclients") == [b"maxclients", b"10000"]
    assert c("CONFIG", "SET", "maxclients", "5") == "OK"
    assert c("CONFIG", "GET", "maxclients") == [b"maxclients", b"5"]
    assert info_fields(c, "clients")["maxclients"] == "5"
    wait_for(lambda: connected_clients(c) == 1, what="the start-up probe to go")
    others = [srv.raw() for _ in range(4)]
    for other in others:
        assert other("PING") == "PONG"
    assert refusal(srv.host, srv.port) == MAXCLIENTS_REFUSAL
    assert refusal(srv.host, srv.port) == MAXCLIENTS_REFUSAL
    assert rejected_connections(c) == 2
    assert connected_clients(c) == 5
    # A place that frees up is taken by the next client.
    others.pop().close()

    def admitted():
        with RawConnection(srv.host, srv.port, timeout=5) as conn:
            try:
                return conn("PING") == "PONG"
            except Exception:  # noqa: BLE001 - refused while the close is not seen yet
                return False

    wait_for(admitted, what="a freed place")
    # Lowering the limit below the clients connected closes nobody.
    assert c("CONFIG", "SET", "maxclients", "1") == "OK"
    assert all(other("PING") == "PONG" for other in others)
    assert refusal(srv.host, srv.port) == MAXCLIENTS_REFUSAL
    assert c("CONFIG", "RESETSTAT") == "OK"
    assert rejected_connections(c) == 0


def test_maxclients_config_errors(server):
    c = server.raw()
    prefix = "ERR CONFIG SET failed (possibly related to argument 'maxclients') - "
    assert c("CONFIG", "SET", "maxclients", "0") == err(
        prefix + "argument must be between 1 and 4294967295 inclusive")
    assert c("CONFIG", "SET", "maxclients", "4294967296") == err(
        prefix + "argument must be between 1 and 4294967295 inclusive")
    assert c("CONFIG", "SET", "maxclients", "ten") == err(
        prefix + "argument couldn't be parsed into an integer")
    assert c("CONFIG", "GET", "maxclients") == [b"maxclients", b"10000"]


def open_files_ceiling(pid):
    """The most open files the process can get: its hard limit, or the kernel's
    fs.nr_open when it may raise that (CAP_SYS_RESOURCE)."""
    hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)[1]
    probe = ("import resource as r; s, h = r.getrlimit(r.RLIMIT_NOFILE); "
             "r.setrlimit(r.RLIMIT_NOFILE, (s, h + 1))")
    if hard != resource.RLIM_INFINITY and subprocess.run(
            [sys.executable, "-c", probe], capture_output=True).returncode == 0:
        with open("/proc/sys/fs/nr_open") as f:
            return int(f.read())
    return hard


def test_maxclients_past_the_open_file_limit(server_factory):
    srv = server_factory()
    c = srv.raw()
    ceiling = open_files_ceiling(int(info_fields(c, "server")["process_id"]))
    if ceiling == resource.RLIM_INFINITY or ceiling > 4_000_000_000:
        pytest.skip(f"the open-file limit ({ceiling}) does not bound maxclients here")
    reply = c("CONFIG", "SET", "maxclients", str(ceiling + 1000))
    assert isinstance(reply, RespError), reply
    assert reply.message.startswith(
        "ERR CONFIG SET failed (possibly related to argument 'maxclients') - The operating "
        "system is not able to handle the specified number of clients, try with ")
    fitting = int(reply.message.rsplit(" ", 1)[1])
    assert ceiling - 100 < fitting < ceiling
    assert c("CONFIG", "GET", "maxclients") == [b"maxclients", b"10000"]
    assert f"You requested maxclients of {ceiling + 1000}" in srv.log_text()


@pytest.mark.damselfly_only
def test_maxclients_lowered_at_start_up_to_the_open_file_limit(tmp_path):
    """Started with an open-file limit of 200 it cannot raise, the server lowers
    maxclients and says so with Redis's lines."""
    def limit_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (200, 200))

    port = free_port()
    proc = subprocess.Popen([damselfly_binary(), f"--port={port}", "--bind=127.0.0.1",
                             "--proactor_threads=2"], preexec_fn=limit_files,
                            env=dict(os.environ, GLOG_logtostderr="1"), cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    try:
        def maxclients():
            try:
                with RawConnection("127.0.0.1", port, timeout=1) as conn:
                    return int(conn("CONFIG", "GET", "maxclients")[1])
            except OSError:
                return None

        fitting = wait_for(maxclients, timeout=10, what="the server")
    finally:
        proc.terminate()
        out = proc.communicate(timeout=10)[0].decode()
    assert 100 < fitting < 200
    assert "You requested maxclients of 10000 requiring at least" in out
    assert f"maxclients has been reduced to {fitting} to compensate for low ulimit" in out


@pytest.mark.damselfly_only
def test_maxclients_flag_must_be_positive(tmp_path):
    result = subprocess.run([damselfly_binary(), f"--port={free_port()}", "--bind=127.0.0.1",
                             "--maxclients=0"], cwd=tmp_path, capture_output=True, timeout=30,
                            env=dict(os.environ, GLOG_logtostderr="1"))
    assert result.returncode != 0
    assert b"--maxclients must be at least 1" in result.stderr


def mc_limited_server(request, target, clients):
    """A memcache server refusing past about `clients` connections: damselfly with
    --maxclients, or memcached with -c (which keeps a few places for itself)."""
    if target == "memcached":
        return request.getfixturevalue("memcached_factory")("-c", str(clients + 14))
    return request.getfixturevalue("mc_server_factory")(f"--maxclients={clients}")


def test_memcached_refuses_the_connection_over_the_limit(request, target, mc_server_factory):
    srv = mc_limited_server(request, target, 16)
    conns, refused = [], None
    try:
        for _ in range(40):
            conn = McConnection(srv.host, srv.mc_port, timeout=5)
            conns.append(conn)
            conn.sock.settimeout(0.3)
            try:
                refused = conn.sock.recv(100)
                break
            except socket.timeout:
                pass
        assert refused == MEMCACHED_REFUSAL
        with pytest.raises(McClosed):
            conns[-1].call(b"version\r\n")
    finally:
        for conn in conns:
            conn.close()

    def stats_when_admitted():
        try:
            with McConnection(srv.host, srv.mc_port, timeout=5) as conn:
                return mc_stats(conn)
        except McClosed:
            return None

    stats = wait_for(stats_when_admitted, what="a place")
    assert int(stats["rejected_connections"]) >= 1
    assert "max_connections" in stats


@pytest.mark.damselfly_only
def test_maxclients_counts_every_port(mc_server_factory):
    admin_port = free_port()
    srv = mc_server_factory("--maxclients=4", f"--admin_port={admin_port}")
    c = srv.raw()
    wait_for(lambda: connected_clients(c) == 1, what="the start-up probes to go")
    mc = srv.mc_raw()
    wait_for(lambda: mc_stats(mc)["curr_connections"] == "1", what="the memcache probe to go")
    others = [srv.raw(), srv.mc_raw()]
    assert others[0]("PING") == "PONG"
    assert others[1].call(b"version\r\n").startswith(b"VERSION ")
    # Four clients: the next one is refused on either port, each with its protocol's text.
    assert refusal(srv.host, srv.port) == MAXCLIENTS_REFUSAL
    with McConnection(srv.host, srv.mc_port, timeout=5) as refused:
        assert refused.read_until_closed(timeout=2) == MEMCACHED_REFUSAL
    assert refusal(srv.host, srv.port) == MAXCLIENTS_REFUSAL
    assert rejected_connections(c) == 2
    assert mc_stats(mc)["rejected_connections"] == "1"
    assert mc_stats(mc)["max_connections"] == "4"
    # The admin port is outside the limit.
    with RawConnection(srv.host, admin_port, timeout=5) as admin:
        assert admin("PING") == "PONG"
    with urllib.request.urlopen(f"http://{srv.host}:{admin_port}/metrics", timeout=5) as resp:
        metrics = resp.read().decode()
    assert "\ndamselfly_rejected_connections_total 2\n" in metrics
    assert "\ndamselfly_memcache_rejected_connections_total 1\n" in metrics
    assert mc.call(b"stats reset\r\n") == b"RESET\r\n"
    assert mc_stats(mc)["rejected_connections"] == "0"
    assert rejected_connections(c) == 2


# ------------------------------------------------------------- big multi-bulk requests


def mset_request(pairs, prefix=b"k"):
    """MSET of `pairs` pairs k<i> -> v<i>, encoded at C speed for a million arguments."""
    parts = [b"*%d\r\n$4\r\nMSET\r\n" % (1 + 2 * pairs)]
    for i in range(pairs):
        key, value = b"%s%d" % (prefix, i), b"v%d" % i
        parts.append(b"$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, len(value), value))
    return b"".join(parts)


def test_mset_of_more_than_1048576_arguments(server):
    pairs = 550_000  # 1,100,001 arguments
    c = server.raw(timeout=60)
    c.send_raw(mset_request(pairs))
    assert c.read() == "OK"
    assert c("DBSIZE") == pairs
    assert c("MGET", "k0", f"k{pairs - 1}", f"k{pairs}") == [b"v0", f"v{pairs - 1}".encode(), None]
    # The connection goes on serving small commands.
    assert c("PING") == "PONG"


def test_big_multibulk_after_auth(server_factory):
    srv = server_factory("--requirepass=pw")
    c = srv.raw(timeout=60)
    c.send_raw(encode_command("AUTH", "pw") + mset_request(550_000))
    assert c.read() == "OK"
    assert c.read() == "OK"
    assert c("DBSIZE") == 550_000


def test_unauthenticated_multibulk_limits(server_factory):
    srv = server_factory("--requirepass=pw")
    for count in (11, 1_048_576, 1_100_000):
        with srv.raw() as c:
            c.send_raw(b"*%d\r\n" % count)
            assert c.read_until_closed() == (
                b"-ERR Protocol error: unauthenticated multibulk length\r\n")
    with srv.raw() as c:
        c.send_raw(b"*1\r\n$16385\r\n")
        assert c.read_until_closed() == b"-ERR Protocol error: unauthenticated bulk length\r\n"
    with srv.raw() as c:
        assert c("PING") == err("NOAUTH Authentication required.")


def test_multibulk_count_limit_without_password(server):
    with server.raw() as c:
        c.send_raw(b"*2147483648\r\n")
        assert c.read_until_closed() == b"-ERR Protocol error: invalid multibulk length\r\n"
    with server.raw() as c:
        # INT_MAX arguments may be announced: the server waits for them.
        c.send_raw(b"*2147483647\r\n$4\r\nPING\r\n")
        assert c.recv_available(wait=0.3) == b""
        assert not c.closed


# ------------------------------------------------------------------ query-buffer limit


def test_query_buffer_limit_closes_the_client(server_factory):
    srv = server_factory()
    c = srv.raw()
    assert c("CONFIG", "GET", "client-query-buffer-limit") == [
        b"client-query-buffer-limit", b"1073741824"]
    prefix = "ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - "
    assert c("CONFIG", "SET", "client-query-buffer-limit", "1000") == err(
        prefix + "argument must be between 1048576 and 9223372036854775807 inclusive")
    assert c("CONFIG", "SET", "client-query-buffer-limit", "1mb") == "OK"
    assert c("CONFIG", "GET", "client-query-buffer-limit") == [
        b"client-query-buffer-limit", b"1048576"]
    # One argument of 2 MB, sent in pieces: the client is closed without a reply.
    with srv.raw() as big:
        big.send_raw(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n")
        try:
            for _ in range(40):
                big.send_raw(b"x" * 50_000)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert big.read_until_closed() == b""
    assert c("EXISTS", "k") == 0
    wait_for(lambda: "Closing client that reached max query buffer length" in srv.log_text(),
             what="the log line")
    # Within the limit all is well.
    assert c("SET", "k", b"x" * 500_000) == "OK"
    assert c("STRLEN", "k") == 500_000


@pytest.mark.damselfly_only
def test_query_buffer_limit_bounds_the_whole_request(server_factory):
    """Not as Redis, which bounds only the part of a request not parsed yet: the limit
    holds a whole request, and the parser's 16 bytes per argument count against it, so a
    request of many tiny arguments cannot make the server hold several times its size."""
    srv = server_factory("--max_client_query_buffer=4000000")
    c = srv.raw()
    assert c("CONFIG", "GET", "client-query-buffer-limit") == [
        b"client-query-buffer-limit", b"4000000"]
    with srv.raw() as many:
        request = mset_request(100_000)  # 2.4 MB, 200,001 arguments
        assert len(request) < 4_000_000
        try:
            many.send_raw(request)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert many.read_until_closed() == b""
    assert c("DBSIZE") == 0
    c.send_raw(mset_request(50_000))
    assert c.read() == "OK"
    assert c("DBSIZE") == 50_000


# ------------------------------------------------------------ memcached authentication


@pytest.fixture
def mc_auth_server(request, target, mc_server_factory, tmp_path):
    """A memcache server whose clients must authenticate as default/secret: memcached -Y,
    or damselfly with --requirepass."""
    if target == "memcached":
        auth_file = tmp_path / "auth"
        auth_file.write_text("default:secret\n")
        return request.getfixturevalue("memcached_factory")("-Y", str(auth_file))
    return mc_server_factory("--requirepass=secret")


def exchange(conn, request):
    """Sends one request and returns its one reply line (memcached answers one request
    per read before authentication, so requests go one at a time)."""
    conn.send(request)
    return conn.readline()


def test_memcached_commands_before_auth(mc_auth_server):
    conn = mc_auth_server.mc_raw()
    for request in (b"version\r\n", b"get a\r\n", b"gets a b\r\n", b"stats\r\n",
                    b"incr a 1\r\n", b"delete a\r\n", b"flush_all\r\n", b"mn\r\n",
                    b"mg a v\r\n", b"md a\r\n", b"ma a\r\n", b"quit\r\n", b"SET k 0 0 1\r\n",
                    b"add k 0 0 14\r\n", b"set k 0 0 -1\r\n", b"set k 0 14\r\n"):
        assert exchange(conn, request) == UNAUTHENTICATED, request
    # A data block after a refused line is read as a request of its own.
    assert exchange(conn, b"ms a 2\r\n") == UNAUTHENTICATED
    assert exchange(conn, b"hi\r\n") == UNAUTHENTICATED


def test_memcached_auth_failures(mc_auth_server):
    conn = mc_auth_server.mc_raw()
    assert exchange(conn, b"set k 0 0 12\r\ndefault nope\r\n") == (
        b"CLIENT_ERROR authentication failure\r\n")
    assert exchange(conn, b"set k 0 0 12\r\nother secret\r\n") == (
        b"CLIENT_ERROR authentication failure\r\n")
    assert exchange(conn, b"set k 0 0 6\r\nsecret\r\n") == (
        b"CLIENT_ERROR bad authentication token format\r\n")
    assert exchange(conn, b"set k 0 0 4\r\nabcdXY") == (
        b"CLIENT_ERROR bad command line termination\r\n")
    assert exchange(conn, b"version\r\n") == UNAUTHENTICATED
    # A data block past 16 KiB closes the connection.
    with McConnection(mc_auth_server.host, mc_auth_server.mc_port) as big:
        try:
            big.send(b"set k 0 0 16383\r\ndefault secret" + b" " * 16369 + b"\r\n")
        except McClosed:
            pass
        assert big.read_until_closed() == b""


def test_memcached_auth(mc_auth_server):
    conn = mc_auth_server.mc_raw()
    assert exchange(conn, b"set anykey 0 0 14\r\ndefault secret\r\n") == b"STORED\r\n"
    assert conn.call(b"get anykey\r\n") == b"END\r\n"  # nothing was stored
    assert conn.call(b"set a 0 0 1\r\nx\r\nget a\r\n") == b"STORED\r\nVALUE a 0 1\r\nx\r\nEND\r\n"
    assert conn.call(b"mg a v\r\n") == b"VA 1\r\nx\r\n"
    stats = mc_stats(conn)
    assert (stats["auth_cmds"], stats["auth_errors"]) == ("1", "0")
    # Pipelined with the commands after it.
    other = mc_auth_server.mc_raw()
    assert other.call(b"set k 0 0 14 noreply\r\ndefault secret\r\nget a\r\n") == (
        b"STORED\r\nVALUE a 0 1\r\nx\r\nEND\r\n")


def test_memcached_without_password_needs_no_auth(mc_server):
    conn = mc_server.mc_raw()
    assert conn.call(b"version\r\n").startswith(b"VERSION ")
    assert conn.call(b"set a 0 0 14\r\ndefault secret\r\nget a\r\n") == (
        b"STORED\r\nVALUE a 0 14\r\ndefault secret\r\nEND\r\n")


@pytest.mark.damselfly_only
def test_memcached_noauth_flag(mc_server_factory):
    srv = mc_server_factory("--requirepass=secret", "--memcached_noauth")
    assert srv.mc_raw().call(b"version\r\n").startswith(b"VERSION ")


@pytest.mark.damselfly_only
def test_memcached_auth_follows_config_set_requirepass(mc_server_factory):
    srv = mc_server_factory()
    before = srv.mc_raw()
    assert before.call(b"version\r\n").startswith(b"VERSION ")  # accepted before the change
    c = srv.raw()
    assert c("CONFIG", "SET", "requirepass", "s3") == "OK"
    # Connections opened before keep their state, as RESP ones do.
    assert before.call(b"version\r\n").startswith(b"VERSION ")
    after = srv.mc_raw()
    assert exchange(after, b"version\r\n") == UNAUTHENTICATED
    assert exchange(after, b"set k 0 0 10\r\ndefault s3\r\n") == b"STORED\r\n"
    assert after.call(b"version\r\n").startswith(b"VERSION ")
