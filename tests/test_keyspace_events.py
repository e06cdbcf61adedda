"""Keyspace notifications (notify-keyspace-events): CONFIG SET/GET, the start-up flag, and
the events each command publishes, in Redis 7.0's names, classes and order (validated
against redis-server 7.0 with DAMSELFLY_TEST_TARGET=redis).

A subscriber PSUBSCRIBEs to __key*@*__:*; after the commands a test PUBLISHes a sentinel
on a channel the pattern matches and reads up to it, so it neither sleeps nor misses a
late event. Keys a command touches together share a hash tag ({t}), which Redis ignores
and damselfly uses to keep them on one shard: events of one shard arrive in order.
"""

import subprocess
import threading
import time

import pytest

from conftest import damselfly_binary
from helpers import err

SENTINEL_CHANNEL = "__keyspace@0__:__sentinel__"
BAD_CLASS = err("ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events')"
                " - Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")


class Subscriber:
    def __init__(self, server):
        self.client = server.client(decode_responses=True)
        self.pubsub = self.client.pubsub()
        self.pubsub.psubscribe("__key*@*__:*")
        reply = self.pubsub.get_message(timeout=5)
        assert reply and reply["type"] == "psubscribe"

    def read(self, timeout=5.0):
        """Every notification up to the sentinel, as (channel, message) pairs."""
        self.client.publish(SENTINEL_CHANNEL, "end")
        out = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = self.pubsub.get_message(timeout=0.5)
            if m is None or m["type"] != "pmessage":
                continue
            if m["channel"] == SENTINEL_CHANNEL:
                return out
            out.append((m["channel"], m["data"]))
        raise AssertionError(f"no sentinel within {timeout}s; got {out}")

    def keyspace(self, db=0):
        """The keyspace events as 'key event' strings (every message must be one)."""
        prefix = f"__keyspace@{db}__:"
        events = self.read()
        assert all(channel.startswith(prefix) for channel, _ in events), events
        return [f"{channel[len(prefix):]} {message}" for channel, message in events]


@pytest.fixture
def r(server):
    c = server.client(decode_responses=True)
    yield c
    c.config_set("notify-keyspace-events", "")


@pytest.fixture
def sub(server):
    return Subscriber(server)


def run(r, *commands):
    for command in commands:
        try:
            r.execute_command(*command)
        except Exception:  # noqa: BLE001 - errors are part of some sequences
            pass


# ------------------------------------------------------------------------- config


@pytest.mark.parametrize("value, shown", [
    ("KEA", "AKE"), ("gKE", "gKE"), ("$lshzxeKE", "$lshzxeKE"), ("KA", "AK"), ("EA", "AE"),
    ("AKEnm", "AKEm"), ("g$lshzxetd", "A"), ("mEKndtexzhsl$g", "AKEm"), ("KEn", "nKE"),
    ("Et", "tE"), ("m", "m"), ("d", "d"), ("AAg", "A"), ("", ""),
])
def test_config_get_shows_redis_order(r, value, shown):
    assert r.config_set("notify-keyspace-events", value)
    assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": shown}


def test_config_set_errors(server, r):
    c = server.raw()
    assert c("CONFIG", "SET", "notify-keyspace-events", "KEg") == "OK"
    for bad in ("Q", "Kx?", "kea", " K", "KE A"):
        assert c("CONFIG", "SET", "notify-keyspace-events", bad) == BAD_CLASS
    assert c("CONFIG", "GET", "notify-keyspace-events") == [b"notify-keyspace-events", b"gKE"]
    # All or nothing: a bad value elsewhere leaves this one as it was.
    assert c("CONFIG", "SET", "notify-keyspace-events", "KEA", "maxmemory", "x") == err(
        "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a "
        "memory value")
    assert c("CONFIG", "GET", "notify-keyspace-events") == [b"notify-keyspace-events", b"gKE"]
    assert c("CONFIG", "SET", "notify-keyspace-events") == err(
        "ERR wrong number of arguments for 'config|set' command")


def test_start_up_flag(server_factory, target):
    name = "notify-keyspace-events" if target == "redis" else "notify_keyspace_events"
    srv = server_factory(f"--{name}=KEx")
    c = srv.client(decode_responses=True)
    assert c.config_get("notify-keyspace-events") == {"notify-keyspace-events": "xKE"}


# ------------------------------------------------------------------ channels, masks


def test_keyspace_and_keyevent_channels(r, sub):
    r.config_set("notify-keyspace-events", "KEA")
    r.set("foo", "bar")
    r.select(3)
    r.set("foo", "bar")
    assert sub.read() == [("__keyspace@0__:foo", "set"), ("__keyevent@0__:set", "foo"),
                          ("__keyspace@3__:foo", "set"), ("__keyevent@3__:set", "foo")]
    r.select(0)
    r.config_set("notify-keyspace-events", "KA")
    r.set("foo", "bar")
    r.config_set("notify-keyspace-events", "EA")
    r.set("foo", "bar")
    assert sub.read() == [("__keyspace@0__:foo", "set"), ("__keyevent@0__:set", "foo")]


def test_classes_mask_events(r, sub):
    r.config_set("notify-keyspace-events", "KEl")
    r.set("foo", "bar")
    r.lpush("mylist", "a")
    assert sub.read() == [("__keyspace@0__:mylist", "lpush"), ("__keyevent@0__:lpush", "mylist")]
    r.config_set("notify-keyspace-events", "A")  # classes but no channel
    r.set("foo", "bar")
    r.config_set("notify-keyspace-events", "KE")  # channels but no class
    r.set("foo", "bar")
    assert sub.read() == []


@pytest.mark.parametrize("flags, expected", [
    ("Kg", ["k expire", "k del"]),
    ("K$", ["k set", "n incrby"]),
    ("Kl", ["l lpush"]),
    ("Ks", ["s sadd"]),
    ("Kh", ["h hset"]),
    ("Kz", ["z zadd"]),
    ("Kn", ["k new", "n new", "l new", "s new", "h new", "z new"]),
    ("KA", ["k set", "n incrby", "l lpush", "s sadd", "h hset", "z zadd", "k expire",
            "k del"]),
])
def test_each_class(r, sub, flags, expected):
    r.config_set("notify-keyspace-events", flags)
    run(r, ["SET", "k", "v"], ["INCR", "n"], ["LPUSH", "l", "a"], ["SADD", "s", "a"],
        ["HSET", "h", "f", "v"], ["ZADD", "z", "1", "a"], ["EXPIRE", "k", "100"], ["DEL", "k"])
    assert sub.keyspace() == expected


# ------------------------------------------------------------------ per command

# (setup, commands, flags, expected 'key event' list on db 0's keyspace channel)
SCENARIOS = {
    "set": ([], [["SET", "k", "v"], ["SET", "k", "w"], ["SET", "k", "x", "NX"]], "An",
            ["k new", "k set", "k set"]),
    "set_with_ttl": ([], [["SET", "k", "v", "EX", "100"], ["SET", "k", "w", "KEEPTTL"],
                          ["SET", "k", "w", "GET"], ["SETEX", "k", "100", "v"],
                          ["PSETEX", "k", "100000", "v"], ["SET", "k", "v"]], "A",
                     ["k set", "k expire", "k set", "k set", "k set", "k expire", "k set",
                      "k expire", "k set"]),
    "setnx_getset": ([], [["SETNX", "k", "v"], ["SETNX", "k", "v"], ["GETSET", "k", "w"]], "An",
                     ["k new", "k set", "k set"]),
    "mset": ([], [["MSET", "{t}a", "1", "{t}b", "2"], ["MSETNX", "{t}c", "1", "{t}a", "1"]], "An",
             ["{t}a new", "{t}a set", "{t}b new", "{t}b set"]),
    "setrange_append": ([], [["SETRANGE", "k", "2", "xy"], ["SETRANGE", "k", "0", "z"],
                             ["SETRANGE", "k", "0", ""], ["APPEND", "k", "ab"]], "An",
                        ["k new", "k setrange", "k setrange", "k append"]),
    "counters": ([], [["INCR", "k"], ["INCRBY", "k", "5"], ["DECR", "k"], ["DECRBY", "k", "2"],
                      ["INCRBYFLOAT", "k", "1.5"]], "A",
                 ["k incrby", "k incrby", "k incrby", "k incrby", "k incrbyfloat"]),
    "getex_getdel": ([["SET", "k", "v"]],
                     [["GETEX", "k", "EX", "100"], ["GETEX", "k", "PERSIST"],
                      ["GETEX", "k", "PERSIST"], ["GETEX", "k"], ["GETDEL", "k"],
                      ["GETDEL", "k"]], "A",
                     ["k expire", "k persist", "k del"]),
    "del": ([["MSET", "{t}a", "1", "{t}b", "2"]],
            [["DEL", "{t}a", "{t}b", "{t}c"], ["UNLINK", "{t}x"]], "A",
            ["{t}a del", "{t}b del"]),
    "expire_persist": ([["SET", "k", "v"]],
                       [["EXPIRE", "k", "100"], ["PEXPIRE", "k", "100000"],
                        ["EXPIREAT", "k", "99999999999"], ["EXPIRE", "k", "100", "NX"],
                        ["PERSIST", "k"], ["PERSIST", "k"], ["EXPIRE", "k", "-1"],
                        ["EXPIRE", "k", "100"]], "A",
                       ["k expire", "k expire", "k expire", "k persist", "k del"]),
    "pexpireat_past": ([["SET", "k", "v"]], [["PEXPIREAT", "k", "1"]], "A", ["k del"]),
    "rename": ([["MSET", "{t}a", "1", "{t}b", "2"]],
               [["RENAME", "{t}a", "{t}c"], ["RENAME", "{t}c", "{t}b"],
                ["RENAMENX", "{t}b", "{t}a"], ["RENAME", "{t}a", "{t}a"],
                ["RENAME", "{t}zz", "{t}y"]], "An",
               ["{t}c new", "{t}a rename_from", "{t}c rename_to", "{t}b new",
                "{t}c rename_from", "{t}b rename_to", "{t}a new", "{t}b rename_from",
                "{t}a rename_to"]),
    "copy": ([["SET", "{t}a", "1"]],
             [["COPY", "{t}a", "{t}b"], ["COPY", "{t}a", "{t}b"],
              ["COPY", "{t}a", "{t}b", "REPLACE"]], "An",
             ["{t}b new", "{t}b copy_to", "{t}b new", "{t}b copy_to"]),
    "push": ([], [["LPUSH", "l", "a", "b"], ["RPUSH", "l", "c"], ["LPUSHX", "l", "d"],
                  ["RPUSHX", "l", "e"], ["LPUSHX", "m", "x"]], "An",
             ["l new", "l lpush", "l rpush", "l lpush", "l rpush"]),
    "pop_to_empty": ([["RPUSH", "l", "a", "b", "c"]],
                     [["RPOP", "l", "2"], ["LPOP", "l"], ["LPOP", "l"]], "A",
                     ["l rpop", "l lpop", "l del"]),
    "list_in_place": ([["RPUSH", "l", "a", "b", "a"]],
                      [["LSET", "l", "0", "x"], ["LINSERT", "l", "BEFORE", "x", "y"],
                       ["LINSERT", "l", "AFTER", "zz", "y"], ["LREM", "l", "0", "zz"],
                       ["LREM", "l", "1", "a"], ["LTRIM", "l", "0", "-1"],
                       ["LTRIM", "l", "5", "6"]], "A",
                      ["l lset", "l linsert", "l lrem", "l ltrim", "l ltrim", "l del"]),
    "lmove": ([["RPUSH", "{t}s", "a", "b"]],
              [["RPOPLPUSH", "{t}s", "{t}d"], ["LMOVE", "{t}s", "{t}d", "LEFT", "RIGHT"],
               ["RPOPLPUSH", "{t}d", "{t}d"]], "An",
              ["{t}d new", "{t}d lpush", "{t}s rpop", "{t}d rpush", "{t}s lpop", "{t}s del",
               "{t}d lpush", "{t}d rpop"]),
    "lmpop": ([["RPUSH", "{t}l", "a", "b"]],
              [["LMPOP", "2", "{t}x", "{t}l", "LEFT"],
               ["LMPOP", "1", "{t}l", "RIGHT", "COUNT", "5"]], "A",
              ["{t}l lpop", "{t}l rpop", "{t}l del"]),
    "sort_store": ([["RPUSH", "{t}l", "3", "1", "2"]],
                   [["SORT", "{t}l", "STORE", "{t}d"], ["SORT", "{t}x", "STORE", "{t}d"]], "An",
                   ["{t}d new", "{t}d sortstore", "{t}d del"]),
    "hash": ([], [["HSET", "h", "a", "1", "b", "2"], ["HSET", "h", "a", "1"],
                  ["HMSET", "h", "c", "1"], ["HSETNX", "h", "c", "1"], ["HSETNX", "h", "d", "1"],
                  ["HINCRBY", "h", "n", "1"], ["HINCRBYFLOAT", "h", "f", "1.5"],
                  ["HDEL", "h", "zz"], ["HDEL", "h", "a", "b", "c"], ["HDEL", "h", "d", "n", "f"]],
             "An",
             ["h new", "h hset", "h hset", "h hset", "h hset", "h hincrby", "h hincrbyfloat",
              "h hdel", "h hdel", "h del"]),
    "set_add_rem": ([], [["SADD", "s", "a", "b"], ["SADD", "s", "a"], ["SREM", "s", "zz"],
                         ["SREM", "s", "a"], ["SREM", "s", "b"]], "An",
                    ["s new", "s sadd", "s srem", "s srem", "s del"]),
    "spop": ([["SADD", "s", "a", "b", "c"]],
             [["SPOP", "s"], ["SPOP", "s", "1"], ["SPOP", "s", "5"]], "A",
             ["s spop", "s spop", "s spop", "s del"]),
    "smove": ([["SADD", "{t}s", "a", "b"]],
              [["SMOVE", "{t}s", "{t}d", "a"], ["SMOVE", "{t}s", "{t}d", "b"],
               ["SMOVE", "{t}d", "{t}e", "zz"]], "An",
              ["{t}s srem", "{t}d new", "{t}d sadd", "{t}s srem", "{t}s del", "{t}d sadd"]),
    "set_store": ([["SADD", "{t}a", "1", "2"], ["SADD", "{t}b", "2", "3"]],
                  [["SINTERSTORE", "{t}x", "{t}a", "{t}b"], ["SUNIONSTORE", "{t}x", "{t}a", "{t}b"],
                   ["SDIFFSTORE", "{t}x", "{t}a", "{t}b"], ["SINTERSTORE", "{t}x", "{t}a", "{t}zz"],
                   ["SINTERSTORE", "{t}x", "{t}a", "{t}zz"]], "An",
                  ["{t}x new", "{t}x sinterstore", "{t}x sunionstore", "{t}x sdiffstore",
                   "{t}x del"]),
    "zadd": ([], [["ZADD", "z", "1", "a", "2", "b"], ["ZADD", "z", "1", "a"],
                  ["ZADD", "z", "INCR", "5", "a"], ["ZINCRBY", "z", "1", "b"],
                  ["ZADD", "z", "NX", "1", "a"], ["ZADD", "z", "5", "c"], ["ZREM", "z", "zz"],
                  ["ZREM", "z", "c"]], "An",
             ["z new", "z zadd", "z zincr", "z zincr", "z zadd", "z zrem"]),
    "zremove": ([["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f"]],
                [["ZREMRANGEBYSCORE", "z", "9", "9"], ["ZREMRANGEBYSCORE", "z", "1", "1"],
                 ["ZREMRANGEBYRANK", "z", "0", "0"], ["ZPOPMIN", "z"], ["ZPOPMAX", "z"],
                 ["ZMPOP", "1", "z", "MIN"], ["ZREMRANGEBYLEX", "z", "-", "+"]], "A",
                ["z zremrangebyscore", "z zremrangebyrank", "z zpopmin", "z zpopmax",
                 "z zpopmin", "z zremrangebylex", "z del"]),
    "zstore": ([["ZADD", "{t}a", "1", "x", "2", "y"], ["ZADD", "{t}b", "2", "y", "3", "w"]],
               [["ZUNIONSTORE", "{t}d", "2", "{t}a", "{t}b"],
                ["ZINTERSTORE", "{t}d", "2", "{t}a", "{t}b"],
                ["ZDIFFSTORE", "{t}d", "2", "{t}a", "{t}b"],
                ["ZRANGESTORE", "{t}e", "{t}a", "0", "-1"],
                ["ZINTERSTORE", "{t}d", "2", "{t}a", "{t}zz"],
                ["ZRANGESTORE", "{t}e", "{t}a", "5", "6"]], "An",
               ["{t}d new", "{t}d zunionstore", "{t}d zinterstore", "{t}d zdiffstore",
                "{t}e new", "{t}e zrangestore", "{t}d del", "{t}e del"]),
    "wrongtype": ([["SET", "k", "v"]], [["LPUSH", "k", "a"], ["HSET", "k", "f", "v"]], "An", []),
    "multi_exec": ([], [["MULTI"], ["SET", "a", "1"], ["LPUSH", "l", "x"], ["DEL", "a"],
                        ["EXEC"]], "A",
                   ["a set", "l lpush", "a del"]),
    "whole_databases": ([["SET", "a", "1"]], [["SWAPDB", "0", "1"], ["FLUSHDB"], ["FLUSHALL"]],
                        "An", []),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_command_events(r, sub, name):
    setup, commands, flags, expected = SCENARIOS[name]
    run(r, *setup)
    r.config_set("notify-keyspace-events", "K" + flags)
    run(r, *commands)
    assert sub.keyspace() == expected


def test_move_and_copy_to_other_databases(r, sub):
    r.set("{t}a", "1")
    r.config_set("notify-keyspace-events", "KEAn")
    r.execute_command("MOVE", "{t}a", "1")
    r.execute_command("COPY", "{t}a", "{t}b", "DB", "0")  # {t}a is in db 1 now: no-op
    r.select(1)
    r.execute_command("COPY", "{t}a", "{t}b", "DB", "2")
    assert sub.read() == [
        ("__keyspace@1__:{t}a", "new"), ("__keyevent@1__:new", "{t}a"),
        ("__keyspace@0__:{t}a", "move_from"), ("__keyevent@0__:move_from", "{t}a"),
        ("__keyspace@1__:{t}a", "move_to"), ("__keyevent@1__:move_to", "{t}a"),
        ("__keyspace@2__:{t}b", "new"), ("__keyevent@2__:new", "{t}b"),
        ("__keyspace@2__:{t}b", "copy_to"), ("__keyevent@2__:copy_to", "{t}b"),
    ]


def test_new_keys_only(r, sub):
    r.config_set("notify-keyspace-events", "En")
    r.set("foo", "bar")
    r.set("foo", "baz")  # not new
    r.set("bar", "bar")
    r.set("baz", "v", xx=True)  # not created
    assert sub.read() == [("__keyevent@0__:new", "foo"), ("__keyevent@0__:new", "bar")]


def test_keymiss(r, sub):
    r.set("s", "v")
    r.config_set("notify-keyspace-events", "Em")
    run(r, ["GET", "m"], ["GET", "s"], ["MGET", "{t}m1", "{t}m2"], ["EXISTS", "m"], ["TYPE", "m"],
        ["TTL", "m"], ["LRANGE", "m", "0", "1"], ["HGET", "m", "f"], ["SISMEMBER", "m", "x"],
        ["ZSCORE", "m", "x"], ["STRLEN", "m"], ["SET", "m4", "v", "GET"])
    assert [key for _, key in sub.read()] == [
        "m", "{t}m1", "{t}m2", "m", "m", "m", "m", "m", "m", "m", "m", "m4"]
    # Writes look keys up without a miss, and m is not in A.
    run(r, ["INCR", "w1"], ["SET", "w2", "v", "NX"], ["DEL", "w3"], ["EXPIRE", "w4", "5"],
        ["APPEND", "w5", "x"], ["LPUSHX", "w6", "x"])
    r.config_set("notify-keyspace-events", "KEA")
    r.get("m")
    assert [(c, m) for c, m in sub.read() if "keymiss" in c + m] == []


def test_expired_fires_once(r, sub):
    r.config_set("notify-keyspace-events", "Ex")
    r.psetex("foo", 50, "1")
    deadline = time.monotonic() + 5
    while r.exists("foo") and time.monotonic() < deadline:  # lazily or actively: once
        time.sleep(0.02)
    assert sub.read() == [("__keyevent@0__:expired", "foo")]


def test_expired_by_active_expiry(r, sub):
    r.config_set("notify-keyspace-events", "Ex")
    r.psetex("foo", 50, "1")
    deadline = time.monotonic() + 5
    events = []
    while not events and time.monotonic() < deadline:  # nobody reads the key
        time.sleep(0.05)
        events = sub.read()
    assert events == [("__keyevent@0__:expired", "foo")]


@pytest.mark.damselfly_only
def test_memcache_writes(mc_server_factory):
    """memcache writes notify as the RESP commands that do the same: set (and expire for an
    exptime), incrby for incr and decr, append, expire for touch, del for delete."""
    srv = mc_server_factory()
    r = srv.client(decode_responses=True)
    sub = Subscriber(srv)
    r.config_set("notify-keyspace-events", "KAn")
    mc = srv.mc_raw()
    for line in (b"set k 0 0 1\r\n5\r\n", b"set t 0 100 1\r\nx\r\n", b"incr k 2\r\n",
                 b"decr k 1\r\n", b"append k 0 0 1\r\n0\r\n", b"touch k 100\r\n",
                 b"delete k\r\n", b"delete k\r\n"):
        mc.send(line)
        mc.readline()
    assert sub.keyspace() == ["k new", "k set", "t new", "t set", "t expire", "k incrby",
                              "k incrby", "k append", "k expire", "k del"]


@pytest.mark.damselfly_only
def test_start_up_flag_refuses_a_bad_class():
    res = subprocess.run([damselfly_binary(), "--notify_keyspace_events=KQ", "--port=0"],
                         capture_output=True, text=True, timeout=10)
    assert res.returncode != 0
    assert "invalid event class character in 'KQ'; use 'Ag$lshzxeKEtmdn'" in res.stderr


def wait_blocked(r, count, timeout=5.0):
    deadline = time.monotonic() + timeout
    while int(r.info("clients")["blocked_clients"]) < count:
        assert time.monotonic() < deadline, "client did not block"
        time.sleep(0.01)


@pytest.mark.parametrize("command, expected", [
    (["BLPOP", "{t}src", "0"], ["{t}src rpush", "{t}src lpop", "{t}src del"]),
    (["BLMOVE", "{t}src", "{t}dst", "RIGHT", "LEFT", "0"],
     ["{t}src rpush", "{t}dst lpush", "{t}src rpop", "{t}src del"]),
    (["BLMOVE", "{t}src", "{t}src", "RIGHT", "LEFT", "0"],
     ["{t}src rpush", "{t}src lpush", "{t}src rpop"]),
    (["BZPOPMIN", "{t}src", "0"], ["{t}src zadd", "{t}src zpopmin", "{t}src del"]),
])
def test_served_waiter_events(server, r, sub, command, expected):
    """A blocked client served by a push: the push's event, then the waiter's."""
    r.config_set("notify-keyspace-events", "KA")
    waiter = server.client(decode_responses=True)
    done = []
    thread = threading.Thread(target=lambda: done.append(waiter.execute_command(*command)))
    thread.start()
    wait_blocked(r, 1)
    if command[0] == "BZPOPMIN":
        r.zadd("{t}src", {"m": 1})
    else:
        r.rpush("{t}src", "x")
    thread.join(5)
    assert done
    assert sub.keyspace() == expected
