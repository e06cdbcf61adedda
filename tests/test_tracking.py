"""CLIENT TRACKING (client-side caching): CLIENT TRACKING / CACHING / GETREDIR /
TRACKINGINFO and the invalidation messages, validated against redis-server 7.0
(DAMSELFLY_TEST_TARGET=redis).

The shared server runs two proactor threads and connections go to them in turn, so a
test that opens a reader and several writers has invalidations cross threads."""

import socket
import time

import pytest

from helpers import err, parse_info, read_all, wait_for
from resp_client import Push, RawConnection

OVERLAP_EXISTING = ("ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a "
                    "single client must not overlap.")
OVERLAP_PROVIDED = ("ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a "
                    "single client must not overlap.")
CACHING_ERR = ("ERR CLIENT CACHING can be called only when the client is in tracking mode with "
               "OPTIN or OPTOUT mode enabled")


def resp3(server):
    c = server.raw()
    c("HELLO", "3")
    return c


def redirect_target(server):
    """A RESP2 client subscribed to __redis__:invalidate, and its id."""
    c = server.raw()
    client_id = c("CLIENT", "ID")
    c.send("SUBSCRIBE", "__redis__:invalidate")
    c.read()
    return c, client_id


def invalidated(c):
    """The keys of the next redirected (RESP2 message) invalidation."""
    message = c.read()
    assert message[:2] == [b"message", b"__redis__:invalidate"]
    return message[2]


def tracking_info(c):
    """CLIENT TRACKINGINFO as a dict (a RESP2 map is a flat array)."""
    reply = c("CLIENT", "TRACKINGINFO")
    return reply if isinstance(reply, dict) else dict(zip(reply[::2], reply[1::2]))


def writers(server, n=3):
    return [server.raw() for _ in range(n)]


def test_errors(server):
    c = server.raw()
    assert c("CLIENT", "TRACKING") == err(
        "ERR wrong number of arguments for 'client|tracking' command")
    assert c("CLIENT", "CACHING") == err(
        "ERR wrong number of arguments for 'client|caching' command")
    assert c("CLIENT", "TRACKING", "maybe") == err("ERR syntax error")
    assert c("CLIENT", "TRACKING", "on", "foo") == err("ERR syntax error")
    assert c("CLIENT", "TRACKING", "on", "REDIRECT") == err("ERR syntax error")
    assert c("CLIENT", "TRACKING", "off", "x") == err("ERR syntax error")
    assert c("CLIENT", "TRACKING", "on", "REDIRECT", "abc") == err(
        "ERR value is not an integer or out of range")
    assert c("CLIENT", "TRACKING", "on", "REDIRECT", "999999") == err(
        "ERR The client ID you want redirect to does not exist")
    assert c("CLIENT", "TRACKING", "on", "PREFIX", "a") == err(
        "ERR PREFIX option requires BCAST mode to be enabled")
    assert c("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT") == err(
        "ERR You can't specify both OPTIN mode and OPTOUT mode")
    assert c("CLIENT", "TRACKING", "on", "BCAST", "OPTIN") == err(
        "ERR OPTIN and OPTOUT are not compatible with BCAST")
    assert c("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a", "PREFIX", "ab") == err(
        OVERLAP_PROVIDED.format("a", "ab"))
    assert c("CLIENT", "CACHING", "yes") == err(CACHING_ERR)
    assert c("CLIENT", "TRACKING", "on", "OPTIN") == "OK"
    assert c("CLIENT", "CACHING", "no") == err(
        "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
    assert c("CLIENT", "CACHING", "maybe") == err("ERR syntax error")
    assert c("CLIENT", "TRACKING", "on", "OPTOUT") == err(
        "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
        "and then re-enabling it with a different mode.")
    assert c("CLIENT", "TRACKING", "on", "BCAST") == err(
        "ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
        "and then re-enabling it with a different mode.")
    assert c("CLIENT", "TRACKING", "off") == "OK"
    assert c("CLIENT", "TRACKING", "on", "OPTOUT") == "OK"
    assert c("CLIENT", "CACHING", "yes") == err(
        "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
    assert c("CLIENT", "TRACKING", "off") == "OK"
    assert c("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "foo", "PREFIX", "bar") == "OK"
    assert c("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "fo") == err(
        OVERLAP_EXISTING.format("fo", "foo"))
    assert c("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "barb") == err(
        OVERLAP_EXISTING.format("barb", "bar"))


def test_trackinginfo_and_getredir(server):
    c = server.raw()
    assert c.raw_call("CLIENT", "TRACKINGINFO") == (
        b"*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n"
        b"$8\r\nprefixes\r\n*0\r\n")
    assert c("CLIENT", "GETREDIR") == -1
    c("CLIENT", "TRACKING", "on", "OPTIN")
    c("CLIENT", "CACHING", "yes")
    assert c.raw_call("CLIENT", "TRACKINGINFO") == (
        b"*6\r\n$5\r\nflags\r\n*3\r\n$2\r\non\r\n$5\r\noptin\r\n$11\r\ncaching-yes\r\n"
        b"$8\r\nredirect\r\n:0\r\n$8\r\nprefixes\r\n*0\r\n")
    c("GET", "x")  # CACHING yes lasts one command
    assert tracking_info(c)[b"flags"] == [b"on", b"optin"]
    assert c("CLIENT", "GETREDIR") == 0
    c("CLIENT", "TRACKING", "off")
    c("CLIENT", "TRACKING", "on", "OPTOUT")
    c("CLIENT", "CACHING", "no")
    assert tracking_info(c)[b"flags"] == [b"on", b"optout", b"caching-no"]
    c("CLIENT", "TRACKING", "off")
    target, target_id = redirect_target(server)
    c("CLIENT", "TRACKING", "on", "BCAST", "NOLOOP", "REDIRECT", str(target_id), "PREFIX", "a",
      "PREFIX", "b")
    assert c("CLIENT", "GETREDIR") == target_id
    c("HELLO", "3")
    assert c.raw_call("CLIENT", "TRACKINGINFO") == (
        b"%3\r\n$5\r\nflags\r\n~3\r\n$2\r\non\r\n$5\r\nbcast\r\n$6\r\nnoloop\r\n"
        b"$8\r\nredirect\r\n:" + str(target_id).encode() +
        b"\r\n$8\r\nprefixes\r\n*2\r\n$1\r\na\r\n$1\r\nb\r\n")
    c("CLIENT", "TRACKING", "off")
    c("CLIENT", "TRACKING", "on", "BCAST")
    assert tracking_info(c)[b"prefixes"] == [b""]


def test_resp3_default_mode_exact_bytes(server):
    reader = resp3(server)
    assert reader("CLIENT", "TRACKING", "on") == "OK"
    for w in writers(server):  # on both threads
        w("SET", "k", "1")
        assert reader("GET", "k") == b"1"
        assert w("SET", "k", "2") == "OK"
        assert reader.read_raw_reply() == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"
        # Invalidated once: the key is forgotten until read again.
        w("SET", "k", "3")
        assert read_all(reader, 0.1) == []


def test_not_read_not_invalidated_and_missing_keys_tracked(server):
    reader = resp3(server)
    reader("CLIENT", "TRACKING", "on")
    w = server.raw()
    w("SET", "b", "1")
    assert reader("GET", "missing") is None
    w("INCR", "b")  # never read
    w("SET", "missing", "now")
    assert read_all(reader) == [Push([b"invalidate", [b"missing"]])]


def test_own_write_invalidation_follows_reply(server):
    c = resp3(server)
    c("CLIENT", "TRACKING", "on")
    c("HSET", "h", "f", "1")
    c("HGET", "h", "f")
    c.send("HDEL", "h", "f")
    assert c.read() == 1
    assert c.read() == Push([b"invalidate", [b"h"]])
    # Inside a transaction, after EXEC's whole reply.
    c("MSET", "a", "1", "b", "2")
    c("GET", "a")
    c("MULTI")
    c("INCR", "a")
    c("GET", "b")
    c.send("EXEC")
    assert c.read() == [2, b"2"]
    assert c.read() == Push([b"invalidate", [b"a"]])


def test_redirect_resp2(server):
    target, target_id = redirect_target(server)
    r = server.raw()
    assert r("CLIENT", "TRACKING", "on", "REDIRECT", str(target_id)) == "OK"
    for w in writers(server):
        w("SET", "a", "1")
        r("GET", "a")
        w("INCR", "a")
        assert target.read_raw_reply() == (
            b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\na\r\n")
    # Different clients redirect to the same connection.
    r2 = server.raw()
    r2("CLIENT", "TRACKING", "on", "REDIRECT", str(target_id))
    r("GET", "k1")
    r2("GET", "k2")
    server.raw()("MSET", "k1", "1", "k2", "2")
    assert sorted([invalidated(target)[0], invalidated(target)[0]]) == [b"k1", b"k2"]


def test_redirect_to_unsubscribed_resp2_sends_nothing(server):
    target = server.raw()
    target_id = target("CLIENT", "ID")
    r = server.raw()
    r("CLIENT", "TRACKING", "on", "REDIRECT", str(target_id))
    r("GET", "a")
    server.raw()("SET", "a", "1")
    assert target("PING") == "PONG"
    assert read_all(target, 0.1) == []


def test_redirect_broken(server):
    target, target_id = redirect_target(server)
    r = resp3(server)
    r("CLIENT", "TRACKING", "on", "REDIRECT", str(target_id))
    r("GET", "k")
    target.close()
    w = server.raw()
    # The target's close is asynchronous; wait until the server no longer lists it.
    wait_for(lambda: f"id={target_id} ".encode() not in w("CLIENT", "LIST"))
    w("SET", "k", "1")
    assert r.read() == Push([b"tracking-redir-broken", target_id])
    assert tracking_info(r)[b"flags"] == [b"on", b"broken_redirect"]
    r("GET", "k")
    w("SET", "k", "2")  # said again at each invalidation
    assert r.read() == Push([b"tracking-redir-broken", target_id])


def test_noloop(server):
    target, target_id = redirect_target(server)
    r = server.raw()
    r("CLIENT", "TRACKING", "on", "REDIRECT", str(target_id), "NOLOOP")
    r("MGET", "other1", "loop", "other2")
    w = server.raw()
    w("SET", "other1", "1")
    r("SET", "loop", "1")
    w("SET", "other2", "1")
    assert [invalidated(target), invalidated(target)] == [[b"other1"], [b"other2"]]


def test_optin_optout(server):
    target, target_id = redirect_target(server)
    r = server.raw()
    w = server.raw()
    r("CLIENT", "TRACKING", "on", "OPTIN", "REDIRECT", str(target_id))
    r("GET", "k1")  # not cached: no CACHING yes
    r("CLIENT", "CACHING", "yes")
    r("GET", "k2")
    w("MSET", "k1", "1", "k2", "2")
    assert invalidated(target) == [b"k2"]
    r("CLIENT", "TRACKING", "off")
    r("CLIENT", "TRACKING", "on", "OPTOUT", "REDIRECT", str(target_id))
    r("CLIENT", "CACHING", "no")
    r("GET", "k1")  # not cached
    r("GET", "k2")
    w("MSET", "k1", "1", "k2", "2")
    assert invalidated(target) == [b"k2"]
    assert read_all(target, 0.1) == []


def test_bcast_prefixes(server):
    target, target_id = redirect_target(server)
    r = server.raw()
    r("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(target_id))
    w = server.raw()
    w("MSET", "a{t}", "1", "b{t}", "2", "c{t}", "3")  # one message for one command
    assert sorted(invalidated(target)) == [b"a{t}", b"b{t}", b"c{t}"]
    r("CLIENT", "TRACKING", "off")
    r("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(target_id), "PREFIX", "a:",
      "PREFIX", "b:")
    w("MULTI")
    for key in ("a:1{t}", "a:2{t}", "b:1{t}", "b:2{t}", "c:1{t}"):
        w("INCR", key)
    w("EXEC")
    # One message per prefix.
    got = sorted([sorted(invalidated(target)), sorted(invalidated(target))])
    assert got == [[b"a:1{t}", b"a:2{t}"], [b"b:1{t}", b"b:2{t}"]]
    r("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(target_id), "PREFIX", "c:")
    w("INCR", "c:1234")
    assert invalidated(target) == [b"c:1234"]
    assert read_all(target, 0.1) == []


def test_bcast_noloop(server):
    target, target_id = redirect_target(server)
    r = server.raw()
    r("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(target_id), "NOLOOP")
    w = server.raw()
    w("SET", "other1", "1")
    r("SET", "loop", "1")
    w("SET", "other2", "1")
    assert [invalidated(target), invalidated(target)] == [[b"other1"], [b"other2"]]


def test_switch_to_bcast_forgets_default_keys(server):
    c = resp3(server)
    c("CLIENT", "TRACKING", "on")
    c("GET", "key1")
    c("CLIENT", "TRACKING", "off")
    c("CLIENT", "TRACKING", "on", "BCAST")
    server.raw()("INCR", "key1")
    assert c.read() == Push([b"invalidate", [b"key1"]])  # the BCAST one only
    assert c("PING") == "PONG"


def test_expiry_invalidates(server):
    c = resp3(server)
    c("CLIENT", "TRACKING", "on")
    server.raw()("SET", "k", "v", "PX", "50")
    c("GET", "k")
    time.sleep(0.2)
    # Active expiry finds it (or this read, lazily); either way the push comes first.
    c.send("GET", "other")
    assert c.read() == Push([b"invalidate", [b"k"]])
    assert c.read() is None


def test_flush_sends_null(server):
    target, target_id = redirect_target(server)
    r = server.raw()
    r("CLIENT", "TRACKING", "on", "REDIRECT", str(target_id))
    r("GET", "k")
    server.raw()("FLUSHALL")
    assert target.read_raw_reply() == (
        b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n")
    c = resp3(server)
    c("CLIENT", "TRACKING", "on")
    c("SET", "a", "1")
    c("GET", "a")
    c.send("FLUSHDB")
    assert c.read_raw_reply() == b"+OK\r\n"
    assert c.read_raw_reply() == b">2\r\n$10\r\ninvalidate\r\n_\r\n"
    assert parse_info(c("INFO", "stats"))["stats"]["tracking_total_keys"] == "0"


def test_info_and_client_list(server):
    c = server.raw()
    c("CLIENT", "TRACKING", "on")
    c("GET", "k1")
    c("GET", "k2")
    b = server.raw()
    b("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p:")
    info = parse_info(c("INFO"))
    assert info["clients"]["tracking_clients"] == "2"
    assert info["stats"]["tracking_total_keys"] == "2"
    assert info["stats"]["tracking_total_items"] == "2"
    assert info["stats"]["tracking_total_prefixes"] == "1"
    line = c("CLIENT", "INFO").decode()
    assert " flags=t " in line and " redir=0 " in line
    assert " flags=tB " in b("CLIENT", "INFO").decode()
    assert " redir=-1 " in server.raw()("CLIENT", "INFO").decode()
    b.close()
    c("CLIENT", "TRACKING", "off")
    wait_for(lambda: parse_info(c("INFO", "clients"))["clients"]["tracking_clients"] == "0")


def test_table_max_keys_evicts(server):
    target, target_id = redirect_target(server)
    r = server.raw()
    r("CLIENT", "TRACKING", "on", "REDIRECT", str(target_id))
    try:
        for i in range(20):
            r("GET", f"key{i}")
        assert r("CONFIG", "GET", "tracking-table-max-keys") == [
            b"tracking-table-max-keys", b"1000000"]
        assert r("CONFIG", "SET", "tracking-table-max-keys", "5") == "OK"
        evicted = [invalidated(target) for _ in range(15)]
        assert len({k[0] for k in evicted}) == 15
        assert parse_info(r("INFO", "stats"))["stats"]["tracking_total_keys"] == "5"
    finally:
        r("CONFIG", "SET", "tracking-table-max-keys", "1000000")


def test_reset_and_close_stop_tracking(server):
    c = resp3(server)
    c("CLIENT", "TRACKING", "on")
    assert c("RESET") == "RESET"
    assert c("CLIENT", "GETREDIR") == -1
    c("GET", "k")
    server.raw()("SET", "k", "1")
    assert read_all(c, 0.1) == []


def test_redis_py_redirect_pubsub(server):
    r = server.client()
    pubsub = r.pubsub()
    pubsub.subscribe("__redis__:invalidate")
    assert pubsub.get_message(timeout=2)["type"] == "subscribe"
    target_id = next(c["id"] for c in r.client_list() if c["cmd"] == "subscribe")
    reader = server.client(single_connection_client=True)
    assert reader.client_tracking_on(clientid=int(target_id))
    reader.get("cached")
    r.set("cached", "new")
    message = wait_for(lambda: pubsub.get_message(timeout=0.2))
    assert message["channel"] == b"__redis__:invalidate"
    assert message["data"] == [b"cached"]
    pubsub.close()


@pytest.mark.damselfly_only
def test_memcache_write_invalidates(mc_server_factory):
    srv = mc_server_factory()
    c = RawConnection("127.0.0.1", srv.port)
    c("HELLO", "3")
    c("CLIENT", "TRACKING", "on")
    c("GET", "mk")
    with socket.create_connection(("127.0.0.1", srv.mc_port)) as mc:
        mc.sendall(b"set mk 0 0 1\r\nx\r\n")
        assert mc.recv(100) == b"STORED\r\n"
        assert c.read() == Push([b"invalidate", [b"mk"]])
        c("GET", "mk")
        mc.sendall(b"flush_all\r\n")
        assert mc.recv(100) == b"OK\r\n"
        assert c.read() == Push([b"invalidate", None])
    c.close()


def test_bcast_on_a_fresh_server(server_factory):
    # No tracked read came first: BCAST alone must make every shard listen.
    srv = server_factory()
    target = srv.raw()
    target_id = target("CLIENT", "ID")
    target.send("SUBSCRIBE", "__redis__:invalidate")
    target.read()
    r = srv.raw()
    r("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(target_id))
    srv.raw()("MSET", "a{t}", "1", "b{t}", "2")
    assert sorted(invalidated(target)) == [b"a{t}", b"b{t}"]


def test_noloop_does_not_hide_expiry(server):
    target, target_id = redirect_target(server)
    r = server.raw()
    r("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(target_id), "NOLOOP")
    r("SET", "mykey", "v", "PX", "1")  # own write: not sent
    r("SET", "other", "v")  # own write: not sent
    time.sleep(0.05)
    r("GET", "mykey")  # expired by now (lazily here, or actively before)
    assert invalidated(target) == [b"mykey"]
    assert read_all(target, 0.1) == []


def test_scripts_track_their_declared_keys(server):
    """A script that calls a read-only command tracks the keys it declared, not the keys
    of that command; a script without reads, and EVAL_RO by itself, track nothing."""
    reader = resp3(server)
    reader("CLIENT", "TRACKING", "on")
    w = server.raw()
    w("MSET", "k1{t}", "1", "k2{t}", "1", "k3{t}", "1")
    reader("EVAL", "redis.call('set', KEYS[1], 'x')", "2", "k1{t}", "k2{t}")
    reader("EVAL_RO", "return redis.call('ping')", "2", "k1{t}", "k2{t}")
    w("MSET", "k1{t}", "2", "k2{t}", "2")
    assert read_all(reader) == []
    reader("EVAL", "return redis.call('get', 'k3{t}')", "2", "k1{t}", "k2{t}")
    w("SET", "k3{t}", "2")  # read by the script, but not declared
    w("SET", "k2{t}", "3")
    w("SET", "k1{t}", "3")
    assert read_all(reader) == [Push([b"invalidate", [b"k2{t}"]]),
                                Push([b"invalidate", [b"k1{t}"]])]
    reader("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k1{t}")
    w("SET", "k1{t}", "4")
    assert read_all(reader) == [Push([b"invalidate", [b"k1{t}"]])]


def test_served_blmove_invalidation_follows_reply(server):
    """A BLMOVE served by another client's push changes the destination as the blocked
    client's own command: the invalidation follows its reply (unit/tracking's test)."""
    c = resp3(server)
    w = server.raw()
    w("DEL", "src{t}", "dst{t}")
    w("RPUSH", "dst{t}", "a")
    c("CLIENT", "TRACKING", "on")
    assert c("LRANGE", "dst{t}", "0", "-1") == [b"a"]
    c.send("BLMOVE", "src{t}", "dst{t}", "LEFT", "LEFT", "0")
    wait_for(lambda: parse_info(w("INFO", "clients"))["clients"]["blocked_clients"] == "1",
             what="the BLMOVE to block")
    w("RPUSH", "src{t}", "foo")
    assert c.read() == b"foo"
    assert c.read() == Push([b"invalidate", [b"dst{t}"]])


@pytest.mark.parametrize("reply_off", [False, True])
def test_resp3_redirect_target_without_subscriptions(server, reply_off):
    """A RESP3 client that neither tracks nor subscribes receives the invalidations
    redirected to it as pushes, also under CLIENT REPLY OFF (unit/tracking's test)."""
    target = resp3(server)
    target_id = target("CLIENT", "ID")
    reader = server.raw()
    assert reader("CLIENT", "TRACKING", "on", "REDIRECT", str(target_id)) == "OK"
    writer = server.raw()
    writer("SET", "redir-key", "a")
    assert reader("GET", "redir-key") == b"a"
    if reply_off:
        target.send("CLIENT", "REPLY", "OFF")
    writer("SET", "redir-key", "b")
    assert target.read() == Push([b"invalidate", [b"redir-key"]])
    if reply_off:
        assert target("CLIENT", "REPLY", "ON") == "OK"
    assert target("PING") == "PONG"
    # The target keeps receiving after it subscribed and unsubscribed (its queue stays).
    target("SUBSCRIBE", "chan")
    target("UNSUBSCRIBE", "chan")
    assert reader("GET", "redir-key") == b"b"
    writer("DEL", "redir-key")
    assert target.read() == Push([b"invalidate", [b"redir-key"]])


def test_redirect_to_self(server):
    c = resp3(server)
    own_id = c("CLIENT", "ID")
    assert c("CLIENT", "TRACKING", "on", "REDIRECT", str(own_id)) == "OK"
    assert c("GET", "self-key") is None
    server.raw()("SET", "self-key", "1")
    assert c.read() == Push([b"invalidate", [b"self-key"]])
    assert c("CLIENT", "GETREDIR") == own_id


def test_eviction_invalidation_precedes_reply(server):
    """A key evicted to make room before a read command: its invalidation arrives before
    the command's reply, as Redis evicts before it runs the command (unit/tracking's
    test). The keys share a hash tag, so one shard holds both."""
    server.raw()("FLUSHALL")  # no other volatile key may be the one evicted
    c = resp3(server)
    c("CLIENT", "TRACKING", "on")
    old_policy = c("CONFIG", "GET", "maxmemory-policy")[b"maxmemory-policy"]
    try:
        used = int(parse_info(c("INFO", "memory"))["memory"]["used_memory"])
        c("CONFIG", "SET", "maxmemory", str(used + 100 * 1024))
        c("CONFIG", "SET", "maxmemory-policy", "volatile-random")
        c("SETEX", "{ev}volatile", "10000", "x")
        assert c("GET", "{ev}volatile") == b"x"
        c("SETBIT", "{ev}big", "1600000", "0")  # 200 KB: over the limit once written
        c.send("GETBIT", "{ev}big", "0")
        assert c.read() == Push([b"invalidate", [b"{ev}volatile"]])
        assert c.read() == 0
        assert c("EXISTS", "{ev}volatile") == 0
    finally:
        c("CONFIG", "SET", "maxmemory", "0")
        c("CONFIG", "SET", "maxmemory-policy", old_policy)
        server.raw()("DEL", "{ev}big")
