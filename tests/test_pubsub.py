"""Pub/sub (SUBSCRIBE & co, PUBLISH, PUBSUB, shard channels) and client-output-buffer-limit,
validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis).

The shared server runs two proactor threads; connections are spread over them, so the
counts below include subscribers on both threads."""

import os
import socket
import time

import pytest

from helpers import err, parse_info, read_all, wait_for
from resp_client import Push, RawConnection

CONTEXT_ERR = ("ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / "
               "RESET are allowed in this context")


def subscribed(server, *channels, command="SUBSCRIBE"):
    c = server.raw()
    c.send(command, *channels)
    for _ in channels:
        c.read()
    return c


def test_resp2_confirmations_exact_bytes(server):
    c = server.raw()
    c.send("UNSUBSCRIBE")
    assert c.read_raw_reply() == b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n"
    c.send("PUNSUBSCRIBE")
    assert c.read_raw_reply() == b"*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:0\r\n"
    c.send("SUNSUBSCRIBE")
    assert c.read_raw_reply() == b"*3\r\n$12\r\nsunsubscribe\r\n$-1\r\n:0\r\n"
    c.send("UNSUBSCRIBE", "x")
    assert c.read_raw_reply() == b"*3\r\n$11\r\nunsubscribe\r\n$1\r\nx\r\n:0\r\n"
    c.send("SUBSCRIBE", "c1", "c2", "c1")
    assert [c.read_raw_reply() for _ in range(3)] == [
        b"*3\r\n$9\r\nsubscribe\r\n$2\r\nc1\r\n:1\r\n",
        b"*3\r\n$9\r\nsubscribe\r\n$2\r\nc2\r\n:2\r\n",
        b"*3\r\n$9\r\nsubscribe\r\n$2\r\nc1\r\n:2\r\n"]
    c.send("PSUBSCRIBE", "p*")
    assert c.read_raw_reply() == b"*3\r\n$10\r\npsubscribe\r\n$2\r\np*\r\n:3\r\n"
    # Shard channels count apart.
    c.send("SSUBSCRIBE", "s1", "s2")
    assert [c.read_raw_reply() for _ in range(2)] == [
        b"*3\r\n$10\r\nssubscribe\r\n$2\r\ns1\r\n:1\r\n",
        b"*3\r\n$10\r\nssubscribe\r\n$2\r\ns2\r\n:2\r\n"]
    c.send("PUNSUBSCRIBE", "zz")
    assert c.read_raw_reply() == b"*3\r\n$12\r\npunsubscribe\r\n$2\r\nzz\r\n:3\r\n"
    c.send("UNSUBSCRIBE", "c2")
    assert c.read_raw_reply() == b"*3\r\n$11\r\nunsubscribe\r\n$2\r\nc2\r\n:2\r\n"
    c.send("PUNSUBSCRIBE")
    assert c.read_raw_reply() == b"*3\r\n$12\r\npunsubscribe\r\n$2\r\np*\r\n:1\r\n"


def test_resp2_messages_exact_bytes(server):
    sub = server.raw()
    sub.send("SUBSCRIBE", "news")
    sub.read()
    sub.send("PSUBSCRIBE", "n*")
    sub.read()
    sub.send("SSUBSCRIBE", "shard")
    sub.read()
    pub = server.raw()
    assert pub("PUBLISH", "news", "hello") == 2
    assert sub.read_raw_reply() == b"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$5\r\nhello\r\n"
    assert sub.read_raw_reply() == (b"*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n"
                                    b"$5\r\nhello\r\n")
    assert pub("SPUBLISH", "shard", "") == 1
    assert sub.read_raw_reply() == b"*3\r\n$8\r\nsmessage\r\n$5\r\nshard\r\n$0\r\n\r\n"
    # A shard channel is not an ordinary channel, and patterns do not see it.
    assert pub("PUBLISH", "shard", "x") == 0
    assert pub("SPUBLISH", "news", "x") == 0
    assert pub("PUBLISH", "nobody", "x") == 1  # the pattern n*
    assert sub.read() == [b"pmessage", b"n*", b"nobody", b"x"]


def test_resp3_push_forms(server):
    sub = server.raw()
    sub("HELLO", "3")
    sub.send("SUBSCRIBE", "c")
    assert sub.read_raw_reply() == b">3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n"
    # No restriction under RESP3: ordinary commands and their replies interleave.
    assert sub("GET", "missing") is None
    assert sub("PING") == "PONG"
    pub = server.raw()
    assert pub("PUBLISH", "c", "m1") == 1
    assert sub.read_raw_reply() == b">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$2\r\nm1\r\n"
    sub.send("UNSUBSCRIBE", "c", "other")
    assert sub.read_raw_reply() == b">3\r\n$11\r\nunsubscribe\r\n$1\r\nc\r\n:0\r\n"
    assert sub.read_raw_reply() == b">3\r\n$11\r\nunsubscribe\r\n$5\r\nother\r\n:0\r\n"
    sub.send("UNSUBSCRIBE")
    assert sub.read_raw_reply() == b">3\r\n$11\r\nunsubscribe\r\n_\r\n:0\r\n"
    sub.send("PSUBSCRIBE", "a*")
    assert sub.read_raw_reply() == b">3\r\n$10\r\npsubscribe\r\n$2\r\na*\r\n:1\r\n"
    assert pub("PUBLISH", "ab", "m2") == 1
    assert sub.read_raw_reply() == (b">4\r\n$8\r\npmessage\r\n$2\r\na*\r\n$2\r\nab\r\n"
                                    b"$2\r\nm2\r\n")


def test_resp2_subscribed_mode_restrictions(server):
    c = subscribed(server, "c")
    assert c("GET", "x") == err(CONTEXT_ERR.format("get"))
    assert c("CLIENT", "ID") == err(CONTEXT_ERR.format("client|id"))
    assert c("HELLO", "3") == err(CONTEXT_ERR.format("hello"))
    assert c("PUBLISH", "c", "x") == err(CONTEXT_ERR.format("publish"))
    c.send("PING")
    assert c.read_raw_reply() == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
    c.send("PING", "hi")
    assert c.read_raw_reply() == b"*2\r\n$4\r\npong\r\n$2\r\nhi\r\n"
    c.send("UNSUBSCRIBE")
    c.read()
    assert c("PING") == "PONG"
    assert c("GET", "x") is None
    # A shard subscription alone is subscribed mode too.
    c.send("SSUBSCRIBE", "s")
    c.read()
    assert c("GET", "x") == err(CONTEXT_ERR.format("get"))
    c.send("SUNSUBSCRIBE")
    c.read()
    assert c("GET", "x") is None


def test_hello_2_while_subscribed_under_resp3(server):
    c = server.raw()
    c("HELLO", "3")
    c.send("SUBSCRIBE", "c")
    c.read()
    c.send("HELLO", "2")
    c.read()
    assert c("GET", "x") == err(CONTEXT_ERR.format("get"))
    pub = server.raw()
    assert pub("PUBLISH", "c", "m") == 1
    assert c.read_raw_reply() == b"*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\nm\r\n"


def test_quit_and_reset_in_subscribed_mode(server):
    c = subscribed(server, "c")
    c.send("PSUBSCRIBE", "p*")
    c.read()
    assert c("RESET") == "RESET"
    assert c("GET", "x") is None
    pub = server.raw()
    assert pub("PUBLISH", "c", "x") == 0
    assert pub("PUBSUB", "NUMPAT") == 0
    q = subscribed(server, "c")
    assert q("QUIT") == "OK"
    wait_for(lambda: pub("PUBSUB", "NUMSUB", "c") == [b"c", 0], what="the quitter to leave")


def test_subscribe_in_multi(server):
    c = server.raw()
    assert c("MULTI") == "OK"
    assert c("SUBSCRIBE", "q") == "QUEUED"
    assert c("SSUBSCRIBE", "q") == "QUEUED"
    assert c("EXEC") == [[b"subscribe", b"q", 1],
                         err("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")]
    assert server.raw()("PUBLISH", "q", "m") == 1
    assert c.read() == [b"message", b"q", b"m"]


def test_publish_counts_across_threads(server):
    subs = [subscribed(server, "chan") for _ in range(4)]
    pat = subscribed(server, "ch*", "c*", command="PSUBSCRIBE")
    shard = subscribed(server, "chan", command="SSUBSCRIBE")
    pub = server.raw()
    assert pub("PUBLISH", "chan", "hi") == 6  # 4 channel subscribers + 2 matching patterns
    for s in subs:
        assert s.read() == [b"message", b"chan", b"hi"]
    assert sorted(tuple(pat.read()) for _ in range(2)) == [
        (b"pmessage", b"c*", b"chan", b"hi"), (b"pmessage", b"ch*", b"chan", b"hi")]
    assert pub("SPUBLISH", "chan", "s") == 1
    assert shard.read() == [b"smessage", b"chan", b"s"]
    assert pub("PUBSUB", "NUMSUB", "chan", "none") == [b"chan", 4, b"none", 0]
    assert pub("PUBSUB", "SHARDNUMSUB", "chan") == [b"chan", 1]
    assert pub("PUBSUB", "NUMPAT") == 2
    subs[0].close()
    wait_for(lambda: pub("PUBLISH", "chan", "again") == 5, what="the closed subscriber to go")


def test_pubsub_introspection(server):
    c = server.raw()
    assert c("PUBSUB", "CHANNELS") == []
    a = subscribed(server, "news.tech", "news.art", "weather")
    b = subscribed(server, "news.tech")
    subscribed(server, "n*", "w*", command="PSUBSCRIBE")
    subscribed(server, "n*", command="PSUBSCRIBE")
    subscribed(server, "shard1", "shard2", command="SSUBSCRIBE")
    assert sorted(c("PUBSUB", "CHANNELS")) == [b"news.art", b"news.tech", b"weather"]
    assert sorted(c("PUBSUB", "CHANNELS", "news.*")) == [b"news.art", b"news.tech"]
    assert c("PUBSUB", "CHANNELS", "nope*") == []
    assert sorted(c("PUBSUB", "SHARDCHANNELS")) == [b"shard1", b"shard2"]
    assert c("PUBSUB", "SHARDCHANNELS", "*1") == [b"shard1"]
    assert c("PUBSUB", "NUMSUB", "news.tech", "weather") == [b"news.tech", 2, b"weather", 1]
    assert c("PUBSUB", "NUMSUB") == []
    assert c("PUBSUB", "SHARDNUMSUB", "shard1", "x") == [b"shard1", 1, b"x", 0]
    assert c("PUBSUB", "NUMPAT") == 2  # distinct patterns
    info = parse_info(c("INFO", "stats"))["stats"]
    assert (info["pubsub_channels"], info["pubsub_patterns"], info["pubsubshard_channels"]) == \
        ("3", "2", "2")
    b.send("UNSUBSCRIBE")
    b.read()
    a.close()
    wait_for(lambda: c("PUBSUB", "CHANNELS") == [], what="the subscribers to leave")
    assert c("PUBSUB", "NUMSUB", "news.tech") == [b"news.tech", 0]


def test_pubsub_errors_and_help(server):
    c = server.raw()
    for cmd in (["SUBSCRIBE"], ["PSUBSCRIBE"], ["SSUBSCRIBE"], ["PUBLISH", "a"],
                ["SPUBLISH", "a", "b", "c"], ["PUBSUB"]):
        assert c(*cmd) == err(f"ERR wrong number of arguments for '{cmd[0].lower()}' command")
    assert c("PUBSUB", "foo") == err("ERR unknown subcommand 'foo'. Try PUBSUB HELP.")
    assert c("PUBSUB", "CHANNELS", "a", "b") == err(
        "ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.")
    assert c("PUBSUB", "NUMPAT", "x") == err(
        "ERR wrong number of arguments for 'pubsub|numpat' command")
    help_lines = c("PUBSUB", "HELP")
    assert help_lines[0] == "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert len(help_lines) == 14 and help_lines[-1] == "    Prints this help."


def test_client_list_and_kill_by_type(server):
    sub = subscribed(server, "a", "b")
    sub.send("PSUBSCRIBE", "p*")
    sub.read()
    sub.send("SSUBSCRIBE", "s")
    sub.read()
    c = server.raw()
    listing = c("CLIENT", "LIST", "TYPE", "pubsub").decode()
    assert listing.count("\n") == 1
    assert " flags=P " in listing and " sub=2 psub=1 ssub=1 " in listing
    assert " omem=0 " in listing
    normal = c("CLIENT", "LIST", "TYPE", "normal").decode()
    assert " flags=P " not in normal and normal.count("\n") == 1
    assert c("CLIENT", "KILL", "TYPE", "pubsub") == 1
    # The killed connection closes on its own thread, maybe after this reply.
    wait_for(lambda: c("PUBLISH", "a", "x") == 0 and c("CLIENT", "LIST", "TYPE", "pubsub") == b"",
             what="the killed subscriber to be gone")


def test_message_order_per_publisher(server):
    sub = subscribed(server, "seq")
    pub = server.raw()
    pub.send_many([("PUBLISH", "seq", str(i)) for i in range(2000)])
    assert [pub.read() for _ in range(2000)] == [1] * 2000
    got = [sub.read()[2] for _ in range(2000)]
    assert got == [str(i).encode() for i in range(2000)]


def test_redis_py_pubsub(server):
    r = server.client()
    p = r.pubsub()
    p.subscribe("rp")
    p.psubscribe("r*")
    assert p.get_message(timeout=2)["type"] == "subscribe"
    assert p.get_message(timeout=2)["type"] == "psubscribe"
    assert r.publish("rp", "hello") == 2
    m1 = p.get_message(timeout=2)
    m2 = p.get_message(timeout=2)
    assert (m1["type"], m1["channel"], m1["data"]) == ("message", b"rp", b"hello")
    assert (m2["type"], m2["pattern"], m2["data"]) == ("pmessage", b"r*", b"hello")
    assert r.pubsub_numsub("rp") == [(b"rp", 1)]
    p.unsubscribe()
    p.punsubscribe()
    assert p.get_message(timeout=2)["type"] == "unsubscribe"
    assert p.get_message(timeout=2)["type"] == "punsubscribe"
    p.close()


def test_client_output_buffer_limit_config(server):
    c = server.raw()
    default = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
    assert c("CONFIG", "GET", "client-output-buffer-limit") == [b"client-output-buffer-limit",
                                                                 default.encode()]
    prefix = ("ERR CONFIG SET failed (possibly related to argument "
              "'client-output-buffer-limit') - ")
    for value, reason in [("normal 0 0", "Wrong number of arguments in buffer limit "
                                         "configuration."),
                          ("foo 0 0 0", "Invalid client class specified in buffer limit "
                                        "configuration."),
                          ("pubsub 1mb 512kb x", "Error in hard, soft or soft_seconds setting "
                                                 "in buffer limit configuration."),
                          ("pubsub -1 0 0", "Error in hard, soft or soft_seconds setting in "
                                            "buffer limit configuration.")]:
        assert c("CONFIG", "SET", "client-output-buffer-limit", value) == err(prefix + reason)
    try:
        assert c("CONFIG", "SET", "client-output-buffer-limit",
                 "PUBSUB 1mb 512kb 10 replica 1k 2k 3") == "OK"
        assert c("CONFIG", "GET", "client-output-buffer-limit")[1] == (
            b"normal 0 0 0 slave 1000 2000 3 pubsub 1048576 524288 10")
        assert c("CONFIG", "SET", "client-output-buffer-limit", "") == "OK"
    finally:
        c("CONFIG", "SET", "client-output-buffer-limit", default)


def _rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _stalled_subscriber(srv, channel):
    """A subscriber with a tiny receive buffer that never reads after its confirmation."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((srv.host, srv.port))
    s.sendall(b"*2\r\n$9\r\nSUBSCRIBE\r\n$%d\r\n%s\r\n" % (len(channel), channel))
    s.recv(100)
    return s


def _closed(sock):
    sock.settimeout(0.2)
    try:
        while True:
            data = sock.recv(1 << 20)
            if not data:
                return True
    except (socket.timeout, TimeoutError):
        return False
    except ConnectionResetError:
        return True


def test_stalled_subscriber_hits_hard_limit(server_factory):
    srv = server_factory()
    c = RawConnection(srv.host, srv.port)
    assert c("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 0 0") == "OK"
    stalled = _stalled_subscriber(srv, b"big")
    reader = subscribed(srv, "big")
    payload = b"x" * 100_000
    rss_before = _rss_bytes(srv.proc.pid)
    # 64 MB published: far past what the kernel's socket buffers absorb.
    for _ in range(16):
        c.send_many([("PUBLISH", "big", payload)] * 40)
        assert [c.read() for _ in range(40)][0] >= 1
        read_all(reader, timeout=0.01)
    wait_for(lambda: c("PUBSUB", "NUMSUB", "big") == [b"big", 1], timeout=5,
             what="the stalled subscriber to be disconnected")
    assert _closed(stalled)
    grown = _rss_bytes(srv.proc.pid) - rss_before
    # AddressSanitizer keeps freed blocks in quarantine (256 MB): RSS says nothing there.
    if "asan" not in os.environ.get("DAMSELFLY_BUILD_DIR", ""):
        assert grown < 24 << 20, f"RSS grew by {grown} bytes"
    # The reader that keeps up is still there.
    assert c("PUBLISH", "big", "last") == 1
    c.close()
    reader.close()
    stalled.close()


def test_stalled_subscriber_over_soft_limit_too_long(server_factory):
    srv = server_factory()
    c = RawConnection(srv.host, srv.port)
    assert c("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 256kb 1") == "OK"
    stalled = _stalled_subscriber(srv, b"soft")
    payload = b"y" * 100_000
    # Enough to fill the kernel's buffers and pass the soft limit, not for long yet.
    c.send_many([("PUBLISH", "soft", payload)] * 150)
    assert [c.read() for _ in range(150)][-1] == 1
    assert c("PUBSUB", "NUMSUB", "soft") == [b"soft", 1]
    time.sleep(2.2)
    c("PUBLISH", "soft", payload)  # the check happens as output is added, as in Redis
    wait_for(lambda: c("PUBSUB", "NUMSUB", "soft") == [b"soft", 0], timeout=5,
             what="the subscriber over its soft limit to be disconnected")
    assert _closed(stalled)
    c.close()
    stalled.close()


def test_monitor_bounded_by_normal_class(server_factory):
    srv = server_factory()
    c = RawConnection(srv.host, srv.port)
    assert c("CONFIG", "SET", "client-output-buffer-limit", "normal 256kb 0 0") == "OK"
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((srv.host, srv.port))
    s.sendall(b"*1\r\n$7\r\nMONITOR\r\n")
    s.recv(5)
    value = "z" * 50_000
    for _ in range(10):
        c.send_many([("SET", "k", value)] * 50)
        [c.read() for _ in range(50)]
    wait_for(lambda: b"flags=N" in c("CLIENT", "LIST") and
             c("CLIENT", "LIST").count(b"\n") == 1, timeout=5,
             what="the stalled monitor to be disconnected")
    assert _closed(s)
    c("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
    c.close()
    s.close()


def test_client_list_omem_of_stalled_subscriber(server):
    stalled = _stalled_subscriber(server, b"omem")
    c = server.raw()
    c.send_many([("PUBLISH", "omem", b"o" * 100_000)] * 100)  # 10 MB, under the 32 MB limit
    assert [c.read() for _ in range(100)] == [1] * 100

    def omem():
        line = c("CLIENT", "LIST", "TYPE", "pubsub").decode()
        fields = dict(f.split("=", 1) for f in line.split())
        return int(fields["omem"]) > 1_000_000 and int(fields["tot-mem"]) >= int(fields["omem"])

    wait_for(omem, what="omem to show the unsent messages")
    assert c("CLIENT", "KILL", "TYPE", "pubsub") == 1
    stalled.close()
