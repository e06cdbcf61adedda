"""RESP protocol handling and robustness: pipelining, concurrency, partial and malformed
requests, binary safety, inline commands, error texts, RESP3."""

import socket
import threading
import time

import pytest

from helpers import err, info_fields, set_many, wait_for
from resp_client import RawConnection, Verbatim, encode_command


# ------------------------------------------------------------------------- pipelining


def build_pipeline(n):
    """n commands mixing reads and writes, with the replies a correct server gives, in order."""
    commands, expected = [], []
    store, counters, logs = {}, {}, {}
    for i in range(n):
        kind = i % 5
        if kind == 0:
            key, val = f"key:{i % 97}", f"val:{i}".encode()
            commands.append(("SET", key, val))
            store[key] = val
            expected.append("OK")
        elif kind == 1:
            key = f"key:{(i * 7) % 97}"
            commands.append(("GET", key))
            expected.append(store.get(key))
        elif kind == 2:
            key = f"counter:{i % 13}"
            counters[key] = counters.get(key, 0) + 1
            commands.append(("INCR", key))
            expected.append(counters[key])
        elif kind == 3:
            payload = f"payload-{i}-".encode() * (i % 4)
            commands.append(("ECHO", payload))
            expected.append(payload)
        else:
            key = f"log:{i % 7}"
            logs[key] = logs.get(key, 0) + 2
            commands.append(("APPEND", key, "ab"))
            expected.append(logs[key])
    return commands, expected


def test_pipeline_10000_commands_in_one_write(server):
    commands, expected = build_pipeline(10000)
    payload = b"".join(encode_command(*cmd) for cmd in commands)
    c = server.raw(timeout=30)
    # One sendall of the whole pipeline; it runs in a thread so that a server which stops
    # reading while its replies wait to be read cannot deadlock the test.
    sender = threading.Thread(target=c.sock.sendall, args=(payload,))
    sender.start()
    replies = [c.read() for _ in range(len(commands))]
    sender.join(timeout=30)
    for i, (got, want) in enumerate(zip(replies, expected)):
        assert got == want, f"reply {i} to {commands[i]!r}: {got!r} != {want!r}"
    assert c("PING") == "PONG"
    assert c.recv_available(0.05) == b""


def test_pipeline_redis_py(server):
    r = server.client()
    pipe = r.pipeline(transaction=False)
    for i in range(10000):
        pipe.set(f"p:{i}", i)
        pipe.incr(f"p:{i}")
    results = pipe.execute()
    assert results == [x for i in range(10000) for x in (True, i + 1)]
    assert r.dbsize() == 10000
    assert r.get("p:9999") == b"10000"


def test_pipeline_split_at_every_byte(server):
    c = server.raw()
    payload = (encode_command("SET", "frag", "a\r\nb") + encode_command("GET", "frag") +
               b"PING\r\n" + encode_command("ECHO", "x" * 20))
    for i in range(len(payload)):
        c.send_raw(payload[i:i + 1])
    assert c.read() == "OK"
    assert c.read() == b"a\r\nb"
    assert c.read() == "PONG"
    assert c.read() == b"x" * 20


def test_large_value_in_many_small_writes(server):
    c = server.raw()
    value = bytes(i % 251 for i in range(1 << 20))
    payload = encode_command("SET", "big", value)
    for off in range(0, len(payload), 4096):
        c.send_raw(payload[off:off + 4096])
    assert c.read() == "OK"
    assert c("GET", "big") == value


def test_command_with_many_arguments(server):
    c = server.raw()
    set_many(c, [(f"m:{i}", f"v{i}") for i in range(5000)])
    assert c("DBSIZE") == 5000
    assert c("DEL", *[f"m:{i}" for i in range(0, 5000, 2)]) == 2500
    assert c("EXISTS", *[f"m:{i}" for i in range(5000)]) == 2500


# ------------------------------------------------------------------------ concurrency


def test_200_concurrent_clients_incr(server):
    n_clients, per_client, n_keys = 200, 50, 10
    keys = [f"shared:{k}" for k in range(n_keys)]
    barrier = threading.Barrier(n_clients + 1, timeout=30)
    errors = []

    def worker(idx):
        try:
            c = RawConnection(server.host, server.port, timeout=30)
            try:
                assert c("PING") == "PONG"
                barrier.wait()
                for j in range(per_client):
                    reply = c("INCR", keys[(idx + j) % n_keys])
                    assert isinstance(reply, int), reply
            finally:
                c.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(f"client {idx}: {e!r}")
            try:
                barrier.abort()
            except threading.BrokenBarrierError:
                pass

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_clients)]
    for t in threads:
        t.start()
    observer = server.raw()
    try:
        barrier.wait()
        connected = int(info_fields(observer, "clients")["connected_clients"])
    finally:
        for t in threads:
            t.join(timeout=60)
    assert not errors, errors[:5]
    assert connected >= n_clients + 1
    expected = n_clients * per_client // n_keys
    values = [observer("GET", k) for k in keys]
    assert values == [str(expected).encode()] * n_keys


# ---------------------------------------------------------- partial / abandoned requests


@pytest.mark.parametrize("fragment", [
    b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$5\r\nva",   # inside the last bulk
    b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n",           # before the last bulk header
    b"*3\r\n$3\r\nSE",                              # inside the command name
    b"*3\r\n",                                      # just the array header
    b"*3",                                          # inside the array header
    b"*2\r\n$3\r\nGET\r\n$100000\r\n" + b"x" * 1000,  # a big bulk, mostly missing
    b"SET half inline",                             # inline, no line end
])
def test_half_request_then_disconnect(server, fragment):
    observer = server.raw()
    baseline = int(info_fields(observer, "clients")["connected_clients"])
    s = socket.create_connection((server.host, server.port), timeout=5)
    s.sendall(fragment)
    time.sleep(0.02)
    s.close()
    assert observer("PING") == "PONG"
    assert observer("EXISTS", "half") == 0
    wait_for(lambda: int(info_fields(observer, "clients")["connected_clients"]) <= baseline,
             what="the abandoned connection to be gone")
    # And the server still serves new connections.
    fresh = server.raw()
    assert fresh("SET", "after", "ok") == "OK"
    assert fresh("GET", "after") == b"ok"


def test_half_request_then_shutdown_write_side(server):
    s = socket.create_connection((server.host, server.port), timeout=5)
    s.sendall(b"*1\r\n$4\r\nPI")
    s.shutdown(socket.SHUT_WR)
    s.settimeout(5)
    assert s.recv(100) == b""  # the server closes its side and sends nothing
    s.close()
    assert server.raw()("PING") == "PONG"


# ------------------------------------------------------------------------ binary data


BINARY_KEYS = [b"k\r\nwith crlf", b"nul\x00inside", b"\x00", b"\r\n", b"", b"\xff\xfe\xfd",
               b"*1\r\n$4\r\nPING\r\n", b"$-1\r\n", b" spaced key "]


def test_binary_keys_and_values_roundtrip(server):
    c = server.raw()
    all_bytes = bytes(range(256))
    for i, key in enumerate(BINARY_KEYS):
        value = all_bytes * (i + 1) + b"\r\n\x00" + key
        assert c("SET", key, value) == "OK", key
        assert c("GET", key) == value, key
        assert c("STRLEN", key) == len(value), key
        assert c("APPEND", key, b"\x00\r\n") == len(value) + 3
    assert c("DBSIZE") == len(BINARY_KEYS)
    assert sorted(c("KEYS", "*")) == sorted(BINARY_KEYS)
    assert c("EXISTS", *BINARY_KEYS) == len(BINARY_KEYS)
    assert c("RENAME", b"nul\x00inside", b"nul\x00renamed") == "OK"
    assert c("GET", b"nul\x00renamed").startswith(all_bytes)
    assert c("DEL", *BINARY_KEYS) == len(BINARY_KEYS) - 1


def test_binary_redis_py(server):
    r = server.client()
    key, value = b"py\x00key\r\n", b"\x00\x01\r\n\xff" * 1000
    assert r.set(key, value) is True
    assert r.get(key) == value
    assert r.getrange(key, 0, 3) == b"\x00\x01\r\n"
    assert r.setrange(key, 1, b"\r\n") == len(value)
    assert r.get(key)[:4] == b"\x00\r\n\n"


# ---------------------------------------------------------------------------- inline


def test_inline_commands(server):
    c = server.raw()
    c.send_raw(b"PING\r\n")
    assert c.read_raw_reply() == b"+PONG\r\n"
    c.send_raw(b"PING\n")
    assert c.read_raw_reply() == b"+PONG\r\n"
    c.send_raw(b"   PING   \r\n")
    assert c.read_raw_reply() == b"+PONG\r\n"
    c.send_raw(b"\r\n\r\nPING\r\n")  # empty lines are skipped
    assert c.read_raw_reply() == b"+PONG\r\n"
    c.send_raw(b"SET a b\r\nGET a\r\n")
    assert c.read_raw_reply() == b"+OK\r\n"
    assert c.read_raw_reply() == b"$1\r\nb\r\n"
    c.send_raw(b"ping hello\r\n")
    assert c.read_raw_reply() == b"$5\r\nhello\r\n"
    c.send_raw(b"ECHO   x   y\r\n")
    assert c.read() == err("ERR wrong number of arguments for 'echo' command")
    c.send_raw(b"FOO a b\r\n")
    assert c.read() == err("ERR unknown command 'FOO', with args beginning with: 'a' 'b' ")


def test_inline_quoted_arguments(server):
    c = server.raw()
    c.send_raw(b'SET "k 1" "v\\x41\\n"\r\n')
    assert c.read() == "OK"
    assert c("GET", "k 1") == b"vA\n"
    c.send_raw(b"SET 'k 2' 'it\\'s'\r\n")
    assert c.read() == "OK"
    assert c("GET", "k 2") == b"it's"
    c.send_raw(b'ECHO "a\\tb\\\\c\\"d"\r\n')
    assert c.read() == b'a\tb\\c"d'
    c.send_raw(b'ECHO ""\r\n')
    assert c.read_raw_reply() == b"$0\r\n\r\n"
    c.send_raw(b"GET 'k 1'\r\n")
    assert c.read() == b"vA\n"


@pytest.mark.parametrize("line", [b'SET "a b\r\n', b"ECHO 'abc\r\n", b'ECHO "abc"def\r\n'])
def test_inline_unbalanced_quotes(server, line):
    c = server.raw()
    c.send_raw(line)
    assert c.read_until_closed() == b"-ERR Protocol error: unbalanced quotes in request\r\n"
    assert server.raw()("PING") == "PONG"


def test_inline_and_multibulk_mixed(server):
    c = server.raw()
    c.send_raw(b"SET mix 1\r\n" + encode_command("INCR", "mix") + b"INCR mix\r\n" +
               encode_command("GET", "mix"))
    assert [c.read() for _ in range(4)] == ["OK", 2, 3, b"3"]


# ------------------------------------------------------------------- protocol errors


@pytest.mark.parametrize("payload,error", [
    (b"*1\r\n$x\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*1\r\n$-5\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*1\r\n$536870913\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*1\r\nfoo\r\n", b"-ERR Protocol error: expected '$', got 'f'\r\n"),
    (b"*2\r\n$4\r\nECHO\r\n:1\r\n", b"-ERR Protocol error: expected '$', got ':'\r\n"),
])
def test_protocol_errors_close_connection(server, payload, error):
    c = server.raw()
    c.send_raw(payload)
    assert c.read_until_closed() == error
    assert server.raw()("PING") == "PONG"


def test_protocol_error_after_valid_command(server):
    c = server.raw()
    c.send_raw(encode_command("SET", "before", "1") + b"*1\r\n$x\r\n" +
               encode_command("SET", "after", "1"))
    assert c.read_until_closed() == b"+OK\r\n-ERR Protocol error: invalid bulk length\r\n"
    check = server.raw()
    assert check("EXISTS", "before") == 1
    assert check("EXISTS", "after") == 0


def test_empty_and_negative_multibulk_are_ignored(server):
    c = server.raw()
    c.send_raw(b"*0\r\n*-1\r\n" + encode_command("PING"))
    assert c.read_raw_reply() == b"+PONG\r\n"
    assert c.recv_available(0.05) == b""


# ------------------------------------------------------------ unknown command / arity


def test_unknown_command_error_text(server):
    c = server.raw()
    assert c.raw_call("FOO", "a", "b") == (
        b"-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n")
    assert c("FOO") == err("ERR unknown command 'FOO', with args beginning with: ")
    assert c("foo", "a") == err("ERR unknown command 'foo', with args beginning with: 'a' ")
    assert c("FOO", "") == err("ERR unknown command 'FOO', with args beginning with: '' ")
    # Newlines inside the echoed arguments are replaced by spaces.
    assert c("FOO", "a\r\nb") == err(
        "ERR unknown command 'FOO', with args beginning with: 'a  b' ")
    assert c("PING") == "PONG"


def test_unknown_command_truncation(server):
    c = server.raw()
    assert c("X" * 200, "a") == err(
        f"ERR unknown command '{'X' * 128}', with args beginning with: 'a' ")
    assert c("FOO", "a" * 200) == err(
        f"ERR unknown command 'FOO', with args beginning with: '{'a' * 128}' ")
    # Arguments are echoed until 128 characters of the list are used up.
    assert c("FOO", "a" * 100, "b" * 100, "c" * 100) == err(
        f"ERR unknown command 'FOO', with args beginning with: '{'a' * 100}' '{'b' * 25}' ")


def test_unknown_command_redis_py(server):
    import redis
    r = server.client()
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("FOO", "a", "b")
    # redis-py strips the "ERR " prefix.
    assert str(e.value) == "unknown command 'FOO', with args beginning with: 'a' 'b' "


def test_wrong_arity_uses_lowercase_name(server):
    c = server.raw()
    assert c.raw_call("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert c("GeT") == err("ERR wrong number of arguments for 'get' command")
    assert c("SET", "k") == err("ERR wrong number of arguments for 'set' command")
    assert c("INCRBY", "k") == err("ERR wrong number of arguments for 'incrby' command")
    assert c("CLIENT", "ID", "x") == err("ERR wrong number of arguments for 'client|id' command")


# ----------------------------------------------------------------------------- RESP3


def test_resp3_types(server):
    c = server.raw()
    c.send("HELLO", "3")
    assert c.read_raw_reply().startswith(b"%7\r\n")
    assert c.raw_call("GET", "missing") == b"_\r\n"
    assert c.raw_call("GETDEL", "missing") == b"_\r\n"
    assert c.raw_call("SET", "k", "v") == b"+OK\r\n"
    assert c.raw_call("SET", "k", "v2", "NX") == b"_\r\n"
    assert c.raw_call("GET", "k") == b"$1\r\nv\r\n"
    assert c.raw_call("INCR", "n") == b":1\r\n"
    assert c.raw_call("INCRBYFLOAT", "f", "10.5") == b"$4\r\n10.5\r\n"  # stays a bulk string
    assert c.raw_call("INCRBYFLOAT", "f", "0.1") == b"$4\r\n10.6\r\n"
    assert c.raw_call("EXISTS", "k", "nope") == b":1\r\n"
    assert c.raw_call("KEYS", "nomatch*") == b"*0\r\n"
    assert c.raw_call("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
    assert c.raw_call("OBJECT", "ENCODING", "missing") == b"_\r\n"
    assert c.raw_call("CLIENT", "GETNAME") == b"_\r\n"
    time_reply = c("TIME")
    assert isinstance(time_reply, list) and all(isinstance(x, bytes) for x in time_reply)
    assert c("SCAN", "0", "COUNT", "100")[0] == b"0"


def test_resp3_info_is_verbatim_text(server):
    c = server.raw()
    c("HELLO", "3")
    reply = c("INFO", "server")
    assert isinstance(reply, Verbatim) and reply.format == "txt"
    assert reply.startswith(b"# Server\r\n")
    client_info = c("CLIENT", "INFO")
    assert isinstance(client_info, Verbatim) and client_info.format == "txt"
    assert b" resp=3" in client_info


def test_resp3_protocol_switch_is_per_connection(server):
    a, b = server.raw(), server.raw()
    a("HELLO", "3")
    assert a.raw_call("GET", "missing") == b"_\r\n"
    assert b.raw_call("GET", "missing") == b"$-1\r\n"


# ------------------------------------------------------------------- memory under abuse


def _rss_bytes(conn):
    pid = int(info_fields(conn, "server")["process_id"])
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_declared_huge_arguments_do_not_reserve_memory(server):
    """Clients that announce ~512 MiB arguments and then send nothing must not make the
    server hold that memory: it grows buffers only as bytes actually arrive."""
    probe = server.raw()
    before = _rss_bytes(probe)
    socks = []
    try:
        for _ in range(16):
            s = socket.create_connection((server.host, server.port))
            s.sendall(b"*2\r\n$3\r\nSET\r\n$536870000\r\n" + b"x" * 1000)
            socks.append(s)
        time.sleep(0.3)
        assert probe("PING") == "PONG"
        grown = _rss_bytes(probe) - before
        assert grown < 64 << 20, f"RSS grew by {grown >> 20} MiB"
    finally:
        for s in socks:
            s.close()


@pytest.mark.damselfly_only
def test_client_that_stops_reading_does_not_grow_memory(server):
    """2,000 pipelined GETs of a 1 MiB value from a client that never reads: replies must
    wait in the kernel's socket buffers and a bounded reply buffer (a connection that blocks
    on send stops reading requests too), not pile up in the server: that would be 2 GiB.
    Other clients keep being served meanwhile. (redis-server does pile them up: its default
    client-output-buffer-limit for normal clients is unlimited.)"""
    probe = server.raw()
    assert probe("SET", "big", b"x" * (1 << 20)) == "OK"
    before = _rss_bytes(probe)
    s = socket.create_connection((server.host, server.port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
    request = b"*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n"
    s.setblocking(False)
    sent = 0
    deadline = time.monotonic() + 5
    payload = request * 2000
    while sent < len(payload) and time.monotonic() < deadline:
        try:
            sent += s.send(payload[sent:])
        except BlockingIOError:
            time.sleep(0.01)  # the server stopped reading: back-pressure reached us
    time.sleep(0.5)
    try:
        start = time.monotonic()
        assert probe("PING") == "PONG"
        assert time.monotonic() - start < 1.0
        grown = _rss_bytes(probe) - before
        assert grown < 128 << 20, f"RSS grew by {grown >> 20} MiB"
    finally:
        s.close()
    wait_for(lambda: probe("PING") == "PONG", what="server healthy after the reader left")
