"""Multi-key atomicity (VLL transactions), MULTI/EXEC/DISCARD and WATCH/UNWATCH.

Every test runs against a server with 2 and with 4 proactor threads (shards). Keys that
must live on different shards are picked with DEBUG KEYSHARD on damselfly; against
redis-server (one keyspace) any names do.

DAMSELFLY_TORN_READ_SECONDS sets how long the torn-read test loads the server (default 5).
"""

import os
import random
import socket
import threading
import time

import pytest

from conftest import TARGET, ServerHandle
from helpers import err, info_fields, wait_for
from resp_client import RawConnection, RespError, encode_command

TORN_READ_SECONDS = float(os.environ.get("DAMSELFLY_TORN_READ_SECONDS", "5"))
EXECABORT = err("EXECABORT Transaction discarded because of previous errors.")
NO_SUCH_KEY = err("ERR no such key")


@pytest.fixture(scope="module", params=[2, 4], ids=lambda n: f"{n}threads")
def tx_server(request):
    if TARGET == "redis" and request.param != 2:
        pytest.skip("redis-server has no shards: one run validates the tests")
    extra = [f"--proactor_threads={request.param}"] if TARGET == "damselfly" else []
    srv = ServerHandle(extra).start()
    srv.shards = request.param if TARGET == "damselfly" else 1
    yield srv
    problem = srv.stop()
    if problem:
        pytest.fail(f"{srv}: {problem}\n--- server log ---\n{srv.log_tail()}", pytrace=False)
    srv.cleanup_files()


@pytest.fixture
def srv(tx_server):
    with RawConnection(tx_server.host, tx_server.port) as c:
        assert c("FLUSHALL") == "OK"
    yield tx_server
    tx_server.close_clients()
    assert tx_server.is_alive(), tx_server.log_tail()


def spread_keys(srv, count, prefix="key"):
    """`count` key names whose shards take turns (key i on shard i % shards)."""
    if srv.shards == 1:
        return [f"{prefix}:{i}" for i in range(count)]
    c = srv.raw()
    by_shard = {s: [] for s in range(srv.shards)}
    n = 0
    while any(len(v) < count for v in by_shard.values()):
        name = f"{prefix}:{n}"
        n += 1
        by_shard[c("DEBUG", "KEYSHARD", name)].append(name)
    return [by_shard[i % srv.shards][i // srv.shards] for i in range(count)]


def two_shard_keys(srv, prefix="key"):
    return spread_keys(srv, 2, prefix)


def run_threads(workers):
    """Runs the callables in threads; re-raises the first exception one of them raised."""
    errors = []

    def wrap(fn):
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive(), "a worker hung"
    if errors:
        raise errors[0]


def run_while_checking(workers, checker, checkers=1):
    """Runs the workers in threads while `checkers` threads run checker(stop) until they end."""
    stop = threading.Event()
    check_threads = [threading.Thread(target=checker, args=(stop,)) for _ in range(checkers)]
    for t in check_threads:
        t.start()
    try:
        run_threads(workers)
    finally:
        stop.set()
        for t in check_threads:
            t.join(timeout=30)


def pair_workers(srv, count, rounds, keys, step):
    """`count` workers, each calling step(conn, rng, a, b) `rounds` times on two random keys."""
    def worker(seed):
        def run():
            rng = random.Random(seed)
            conn = RawConnection(srv.host, srv.port)
            for _ in range(rounds):
                a, b = rng.sample(keys, 2)
                step(conn, rng, a, b)
            conn.close()
        return run
    return [worker(i) for i in range(count)]


# ------------------------------------------------------------------ multi-key commands


def test_mset_mget_across_shards(srv):
    c = srv.raw()
    keys = spread_keys(srv, 8)
    args = []
    for i, k in enumerate(keys):
        args += [k, f"v{i}"]
    assert c("MSET", *args) == "OK"
    assert c("MGET", *keys, "missing") == [f"v{i}".encode() for i in range(8)] + [None]
    assert c("MSET", keys[0], "x", keys[0], "y") == "OK"  # the last value wins
    assert c("GET", keys[0]) == b"y"
    assert c("MSET", "a") == err("ERR wrong number of arguments for 'mset' command")
    assert c("MSET", "a", "1", "b") == err("ERR wrong number of arguments for 'mset' command")
    assert c("MGET") == err("ERR wrong number of arguments for 'mget' command")


def test_mset_clears_ttl_and_mget_skips_other_types(srv):
    c = srv.raw()
    a, b = two_shard_keys(srv)
    assert c("SET", a, "1", "EX", "100") == "OK"
    assert c("MSET", a, "2", b, "3") == "OK"
    assert c("TTL", a) == -1


def test_msetnx_is_all_or_nothing(srv):
    c = srv.raw()
    keys = spread_keys(srv, 6)
    assert c("SET", keys[5], "old") == "OK"
    args = [x for k in keys for x in (k, "new")]
    assert c("MSETNX", *args) == 0
    assert c("MGET", *keys) == [None] * 5 + [b"old"]
    assert c("DEL", keys[5]) == 1
    assert c("MSETNX", *args) == 1
    assert c("MGET", *keys) == [b"new"] * 6
    assert c("MSETNX", "a", "1", "b") == err("ERR wrong number of arguments for 'msetnx' command")


def test_del_exists_unlink_touch_across_shards(srv):
    c = srv.raw()
    keys = spread_keys(srv, 6)
    c("MSET", *[x for k in keys for x in (k, "v")])
    assert c("EXISTS", *keys, keys[0], "missing") == 7
    assert c("TOUCH", *keys, "missing") == 6
    assert c("DEL", keys[0], keys[1], keys[1], "missing") == 2
    assert c("UNLINK", *keys) == 4
    assert c("EXISTS", *keys) == 0


def test_rename_across_shards_moves_value_and_ttl(srv):
    c = srv.raw()
    a, b = two_shard_keys(srv)
    assert c("SET", a, "payload", "PX", "100000") == "OK"
    assert c("RENAME", a, b) == "OK"
    assert c("EXISTS", a) == 0
    assert c("GET", b) == b"payload"
    assert 99000 < c("PTTL", b) <= 100000
    assert c("RENAME", a, b) == NO_SUCH_KEY
    assert c("SET", a, "other") == "OK"
    assert c("RENAME", a, b) == "OK"  # overwrites, and the target loses its TTL
    assert c("PTTL", b) == -1
    assert c("GET", b) == b"other"


def test_renamenx_across_shards(srv):
    c = srv.raw()
    a, b = two_shard_keys(srv)
    assert c("RENAMENX", a, b) == NO_SUCH_KEY
    c("SET", a, "1")
    c("SET", b, "2")
    assert c("RENAMENX", a, b) == 0
    assert c("MGET", a, b) == [b"1", b"2"]
    c("DEL", b)
    assert c("RENAMENX", a, b) == 1
    assert c("MGET", a, b) == [None, b"1"]


def test_copy(srv):
    c = srv.raw()
    a, b = two_shard_keys(srv)
    assert c("COPY", a, b) == 0
    c("SET", a, "v", "PX", "100000")
    assert c("COPY", a, b) == 1
    assert c("MGET", a, b) == [b"v", b"v"]
    assert 99000 < c("PTTL", b) <= 100000
    c("SET", a, "w")
    assert c("COPY", a, b) == 0
    assert c("COPY", a, b, "REPLACE") == 1
    assert c("GET", b) == b"w"
    assert c("PTTL", b) == -1
    assert c("COPY", a, a) == err("ERR source and destination objects are the same")
    assert c("COPY", a, a, "DB", "1") == 1
    assert c("COPY", a, b, "DB", "x") == err("ERR value is not an integer or out of range")
    assert c("COPY", a, b, "DB", "99") == err("ERR DB index is out of range")
    assert c("COPY", a, b, "FOO") == err("ERR syntax error")
    assert c("COPY", a, b, "DB") == err("ERR syntax error")
    c("SELECT", "1")
    assert c("GET", a) == b"w"


# ------------------------------------------------------------------ MULTI / EXEC


def test_multi_exec_replies_in_order(srv):
    c = srv.raw()
    a, b = two_shard_keys(srv)
    assert c("MULTI") == "OK"
    assert c("SET", a, "1") == "QUEUED"
    assert c("INCR", a) == "QUEUED"
    assert c("MSET", b, "x", "other", "y") == "QUEUED"
    assert c("MGET", a, b) == "QUEUED"
    assert c("PING") == "QUEUED"
    assert c("EXEC") == ["OK", 2, "OK", [b"2", b"x"], "PONG"]
    assert c("MULTI") == "OK"
    assert c("EXEC") == []


def test_multi_control_errors(srv):
    c = srv.raw()
    assert c("EXEC") == err("ERR EXEC without MULTI")
    assert c("DISCARD") == err("ERR DISCARD without MULTI")
    assert c("MULTI") == "OK"
    assert c("MULTI") == err("ERR MULTI calls can not be nested")
    assert c("WATCH", "a") == err("ERR WATCH inside MULTI is not allowed")
    assert c("SET", "a", "1") == "QUEUED"
    assert c("EXEC") == ["OK"]  # neither error aborts the transaction
    assert c("MULTI") == "OK"
    assert c("SET", "a", "2") == "QUEUED"
    assert c("DISCARD") == "OK"
    assert c("GET", "a") == b"1"


def test_queuing_errors_abort_exec(srv):
    c = srv.raw()
    assert c("MULTI") == "OK"
    assert c("SET", "a", "1") == "QUEUED"
    assert c("NOSUCHCOMMAND") == err(
        "ERR unknown command 'NOSUCHCOMMAND', with args beginning with: ")
    assert c("EXEC") == EXECABORT
    assert c("EXISTS", "a") == 0
    assert c("MULTI") == "OK"
    assert c("GET") == err("ERR wrong number of arguments for 'get' command")
    assert c("SET", "a", "1") == "QUEUED"
    assert c("EXEC") == EXECABORT
    assert c("EXISTS", "a") == 0
    assert c("EXEC") == err("ERR EXEC without MULTI")


def test_runtime_errors_inside_exec(srv):
    c = srv.raw()
    a, b = two_shard_keys(srv)
    c("SET", a, "not a number")
    assert c("MULTI") == "OK"
    assert c("INCR", a) == "QUEUED"
    assert c("SET", b, "1") == "QUEUED"
    assert c("RENAME", "missing", b) == "QUEUED"
    assert c("MSET", a, "1", b) == "QUEUED"  # arity -3 passes; the pairs fail at run time
    reply = c("EXEC")
    assert reply == [err("ERR value is not an integer or out of range"), "OK", NO_SUCH_KEY,
                     err("ERR wrong number of arguments for 'mset' command")]
    assert c("GET", b) == b"1"


def test_select_inside_multi(srv):
    c = srv.raw()
    assert c("MULTI") == "OK"
    assert c("SET", "a", "db0") == "QUEUED"
    assert c("SELECT", "1") == "QUEUED"
    assert c("SET", "a", "db1") == "QUEUED"
    assert c("EXEC") == ["OK", "OK", "OK"]
    assert c("GET", "a") == b"db1"
    c("SELECT", "0")
    assert c("GET", "a") == b"db0"


def test_reset_discards_multi(srv):
    c = srv.raw()
    assert c("MULTI") == "OK"
    assert c("SET", "a", "1") == "QUEUED"
    assert c("RESET") == "RESET"
    assert c("EXEC") == err("ERR EXEC without MULTI")
    assert c("EXISTS", "a") == 0


# ------------------------------------------------------------------ WATCH


def watched_exec(c, *commands):
    assert c("MULTI") == "OK"
    for cmd in commands:
        assert c(*cmd) == "QUEUED"
    return c("EXEC")


def test_watch_unchanged_key_executes(srv):
    c = srv.raw()
    a, b = two_shard_keys(srv)
    c("SET", a, "1")
    assert c("WATCH", a, b) == "OK"
    assert c("GET", a) == b"1"  # reads do not invalidate
    assert watched_exec(c, ("SET", b, "2")) == ["OK"]


def test_watch_invalidated_by_other_client(srv):
    c, other = srv.raw(), srv.raw()
    a, b = two_shard_keys(srv)
    assert c("WATCH", a, b) == "OK"
    assert other("SET", b, "x") == "OK"
    assert watched_exec(c, ("SET", a, "mine")) is None
    assert c("EXISTS", a) == 0
    # EXEC dropped the watches: the next transaction runs.
    assert other("SET", b, "y") == "OK"
    assert watched_exec(c, ("SET", a, "mine")) == ["OK"]


def test_watch_invalidated_by_multi_key_write(srv):
    c, other = srv.raw(), srv.raw()
    a, b = two_shard_keys(srv)
    assert c("WATCH", b) == "OK"
    assert other("MSET", a, "1", b, "2") == "OK"
    assert watched_exec(c, ("GET", a)) is None


def test_unwatch_and_discard_forget_watches(srv):
    c, other = srv.raw(), srv.raw()
    assert c("WATCH", "a") == "OK"
    assert c("UNWATCH") == "OK"
    other("SET", "a", "1")
    assert watched_exec(c, ("GET", "a")) == [b"1"]
    assert c("WATCH", "a") == "OK"
    assert c("MULTI") == "OK"
    assert c("DISCARD") == "OK"
    other("SET", "a", "2")
    assert watched_exec(c, ("GET", "a")) == [b"2"]


def test_watch_invalidated_by_expiry(srv):
    c = srv.raw()
    c("SET", "a", "1", "PX", "50")
    assert c("WATCH", "a") == "OK"
    time.sleep(0.15)
    assert watched_exec(c, ("SET", "b", "1")) is None
    # A key that had already expired when watched does not count.
    c("SET", "a", "1", "PX", "20")
    time.sleep(0.1)
    assert c("WATCH", "a") == "OK"
    assert watched_exec(c, ("SET", "b", "2")) == ["OK"]


def test_watch_and_flushdb(srv):
    c, other = srv.raw(), srv.raw()
    assert c("WATCH", "missing") == "OK"
    assert other("FLUSHDB") == "OK"
    assert watched_exec(c, ("SET", "b", "1")) == ["OK"]  # the key did not exist
    c("SET", "a", "1")
    assert c("WATCH", "a") == "OK"
    assert other("FLUSHALL") == "OK"
    assert watched_exec(c, ("SET", "b", "1")) is None


def test_watch_other_database(srv):
    c, other = srv.raw(), srv.raw()
    assert c("WATCH", "a") == "OK"
    other("SELECT", "1")
    assert other("SET", "a", "1") == "OK"  # another database's "a"
    assert watched_exec(c, ("SET", "b", "1")) == ["OK"]


def test_disconnects_leave_nothing_locked(srv):
    """Clients that vanish inside MULTI, after WATCH or with transactions in flight."""
    keys = spread_keys(srv, 4)
    commands = [("WATCH", keys[0]), ("MULTI",)] + [("SET", k, "1") for k in keys] + [
        ("EXEC",), ("MSET", *[x for k in keys for x in (k, "2")]), ("RENAME", keys[0], keys[1])]
    payload = b"".join(encode_command(*cmd) for cmd in commands)
    c = srv.raw(timeout=5)
    clients_before = info_fields(c, "clients")["connected_clients"]
    received_before = int(info_fields(c, "stats")["total_connections_received"])
    for _ in range(20):
        s = socket.create_connection((srv.host, srv.port))
        s.sendall(payload * 20 + encode_command("WATCH", keys[2]) + encode_command("MULTI"))
        s.close()
    wait_for(lambda: int(info_fields(c, "stats")["total_connections_received"]) ==
             received_before + 20, timeout=10, what="the server to accept the 20 clients")
    wait_for(lambda: info_fields(c, "clients")["connected_clients"] == clients_before, timeout=10,
             what="the vanished clients to be gone")
    assert c("MSET", *[x for k in keys for x in (k, "3")]) == "OK"
    assert c("MGET", *keys) == [b"3"] * 4
    assert c("RENAME", keys[0], keys[1]) == "OK"


# ------------------------------------------------------------------ under load


def test_no_torn_mget_while_msets_run(srv):
    """16 writers MSET the same 10 keys to one value each; 16 readers MGET them."""
    keys = spread_keys(srv, 10, "torn")
    srv.raw()("MSET", *[x for k in keys for x in (k, "init")])
    deadline = time.monotonic() + TORN_READ_SECONDS
    reads, torn = [0], []

    def writer():
        c = RawConnection(srv.host, srv.port)
        rng = random.Random()
        while time.monotonic() < deadline:
            value = str(rng.getrandbits(48))
            assert c("MSET", *[x for k in keys for x in (k, value)]) == "OK"
        c.close()

    def reader():
        c = RawConnection(srv.host, srv.port)
        while time.monotonic() < deadline:
            values = c("MGET", *keys)
            reads[0] += 1
            if len(set(values)) != 1:
                torn.append(values)
        c.close()

    run_threads([writer] * 16 + [reader] * 16)
    print(f"torn-read test: {reads[0]} MGETs in {TORN_READ_SECONDS:g} s, {len(torn)} torn")
    assert not torn, f"{len(torn)} torn MGETs of {reads[0]}, e.g. {torn[0]}"
    assert reads[0] > 100


def test_rename_chains_never_lose_or_duplicate(srv):
    """Tokens move between slots with RENAMENX; atomic MGETs always see each token once."""
    slots = spread_keys(srv, 24, "slot")
    tokens = 8
    c = srv.raw()
    c("MSET", *[x for i in range(tokens) for x in (slots[i], f"token{i}")])
    expected = sorted(f"token{i}".encode() for i in range(tokens))
    bad = []

    def move(conn, rng, src, dst):
        reply = conn("RENAMENX", src, dst)
        assert reply in (0, 1, NO_SUCH_KEY), reply

    def checker(stop):
        conn = RawConnection(srv.host, srv.port)
        while not stop.is_set():
            values = sorted(v for v in conn("MGET", *slots) if v is not None)
            if values != expected:
                bad.append(values)
        conn.close()

    run_while_checking(pair_workers(srv, 12, 400, slots, move), checker)
    assert not bad, f"{len(bad)} reads saw a lost or duplicated token, e.g. {bad[0]}"
    values = sorted(v for v in c("MGET", *slots) if v is not None)
    assert values == expected
    assert c("DBSIZE") == tokens


def test_multi_exec_transfers_keep_the_total(srv):
    """32 clients move amounts between 100 accounts in MULTI/EXEC; reads see the total."""
    accounts = spread_keys(srv, 100, "acct")
    c = srv.raw()
    c("MSET", *[x for a in accounts for x in (a, "1000")])
    total = 100 * 1000
    bad, reads = [], [0]

    def transfer(conn, rng, src, dst):
        amount = rng.randint(1, 50)
        conn.send_many([("MULTI",), ("DECRBY", src, amount), ("INCRBY", dst, amount), ("EXEC",)])
        replies = [conn.read() for _ in range(4)]
        assert replies[:3] == ["OK", "QUEUED", "QUEUED"], replies
        assert isinstance(replies[3], list) and len(replies[3]) == 2, replies

    def reader(stop):
        conn = RawConnection(srv.host, srv.port)
        use_multi = False
        while not stop.is_set():
            if use_multi:
                conn.send_many([("MULTI",)] + [("GET", a) for a in accounts] + [("EXEC",)])
                replies = [conn.read() for _ in range(len(accounts) + 2)]
                values = replies[-1]
            else:
                values = conn("MGET", *accounts)
            use_multi = not use_multi
            reads[0] += 1
            s = sum(int(v) for v in values)
            if s != total:
                bad.append(s)
        conn.close()

    run_while_checking(pair_workers(srv, 32, 100, accounts, transfer), reader, checkers=2)
    assert not bad, f"{len(bad)} of {reads[0]} reads saw a wrong total, e.g. {bad[:5]}"
    assert reads[0] > 0
    assert sum(int(v) for v in c("MGET", *accounts)) == total


def test_watch_optimistic_increments_are_exact(srv):
    """32 clients increment a counter with WATCH/GET/MULTI/SET/EXEC, retrying on nil."""
    counter, other = two_shard_keys(srv, "ctr")
    c = srv.raw()
    c("SET", counter, "0")
    per_client = 10
    aborted = [0]

    def incrementer():
        conn = RawConnection(srv.host, srv.port)
        done = 0
        while done < per_client:
            assert conn("WATCH", counter) == "OK"
            value = int(conn("GET", counter))
            conn.send_many([("MULTI",), ("SET", counter, value + 1), ("INCR", other), ("EXEC",)])
            replies = [conn.read() for _ in range(4)]
            if replies[3] is None:
                aborted[0] += 1
            else:
                assert replies[3][0] == "OK", replies
                done += 1
        conn.close()

    run_threads([incrementer] * 32)
    assert c("GET", counter) == str(32 * per_client).encode()
    assert c("GET", other) == str(32 * per_client).encode()


def test_pipelined_watch_inside_multi_does_not_run_what_follows(srv):
    c = srv.raw()
    c.send_many([("MULTI",), ("WATCH", "a"), ("SET", "a", "1"), ("SET", "a", "2"), ("DISCARD",)])
    assert [c.read() for _ in range(5)] == [
        "OK", err("ERR WATCH inside MULTI is not allowed"), "QUEUED", "QUEUED", "OK"]
    assert c("EXISTS", "a") == 0


def test_unwatch_queued_inside_exec(srv):
    c = srv.raw()
    long_key = "watched-key-with-a-name-too-long-for-small-string-storage"
    assert c("WATCH", long_key, "b") == "OK"
    assert watched_exec(c, ("UNWATCH",), ("SET", long_key, "1")) == ["OK", "OK"]
    assert c("GET", long_key) == b"1"


def test_pipelined_watch_then_own_write(srv):
    """WATCH and a write to the key in one pipeline (one hop to the shard) still count."""
    c = srv.raw()
    c.send_many([("WATCH", "a"), ("SET", "a", "1"), ("MULTI",), ("GET", "a"), ("EXEC",)])
    assert [c.read() for _ in range(5)] == ["OK", "OK", "OK", "QUEUED", None]


# ------------------------------------------------------------------ WATCH counts real changes


@pytest.mark.parametrize("no_op", [
    ("SET", "{a}", "new", "NX"),     # SET NX of an existing key
    ("SET", "{a}missing", "v", "XX"),  # SET XX of a missing key
    ("DEL", "{a}missing"),           # DEL of a missing key
    ("EXPIRE", "{a}", "100", "XX"),  # EXPIRE XX of a key without a TTL
    ("PERSIST", "{a}"),              # PERSIST of a key without a TTL
    ("GETDEL", "{a}missing"),        # failed GETDEL
    ("SETNX", "{a}", "x"),
    ("RENAMENX", "{a}missing", "{a}"),
    ("INCR", "{a}"),                  # fails: not an integer
    ("GETEX", "{a}"),                 # no option: a read
    ("APPEND", "{a}unwatched", "x"),  # a real change of another key
], ids=lambda cmd: " ".join(cmd))
def test_watch_ignores_writes_that_change_nothing(srv, no_op):
    c, other = srv.raw(), srv.raw()
    c("SET", "{a}", "value")
    assert c("WATCH", "{a}", "{a}missing") == "OK"
    other(*no_op)
    assert watched_exec(c, ("SET", "{a}other", "1")) == ["OK"]


def test_watch_sees_real_changes_of_each_kind(srv):
    c, other = srv.raw(), srv.raw()
    changes = [
        ("SET", "{a}", "new", "XX"), ("EXPIRE", "{a}", "100"), ("PERSIST", "{a}"),
        ("APPEND", "{a}", "x"), ("DEL", "{a}"), ("SETNX", "{a}", "x"),
        ("RENAME", "{a}", "{a}2"), ("RENAME", "{a}2", "{a}"), ("MOVE", "{a}", "1"),
    ]
    for change in changes:
        c("SELECT", "0")
        if change[0] == "PERSIST":
            c("EXPIRE", "{a}", "100")
        if change[0] == "RENAME" and change[1] == "{a}2":
            c("SET", "{a}2", "v")
        if change[0] not in ("SETNX",) and not c("EXISTS", "{a}"):
            c("SET", "{a}", "v")
        assert c("WATCH", "{a}") == "OK", change
        assert not isinstance(other(*change), RespError), change
        assert watched_exec(c, ("SET", "{a}other", "1")) is None, change
        other("SELECT", "1")
        other("DEL", "{a}")
        other("SELECT", "0")


def test_watch_and_swapdb(srv):
    c, other = srv.raw(), srv.raw()
    assert c("WATCH", "{a}missing") == "OK"
    assert other("SWAPDB", "0", "1") == "OK"
    assert watched_exec(c, ("SET", "{a}x", "1")) == ["OK"]  # existed in neither database
    other("SELECT", "1")
    other("SET", "{a}", "in1")
    assert c("WATCH", "{a}") == "OK"
    assert other("SWAPDB", "0", "1") == "OK"
    assert watched_exec(c, ("GET", "{a}")) is None  # existed in the other database
    assert c("GET", "{a}") == b"in1"


def test_flushall_and_swapdb_inside_exec(srv):
    c = srv.raw()
    a, b = two_shard_keys(srv)
    c("SET", a, "1")
    assert c("MULTI") == "OK"
    for cmd in (("SET", b, "2"), ("SWAPDB", "0", "1"), ("DBSIZE",), ("SELECT", "1"),
                ("MGET", a, b), ("FLUSHALL",), ("DBSIZE",)):
        assert c(*cmd) == "QUEUED"
    assert c("EXEC") == ["OK", "OK", 0, "OK", [b"1", b"2"], "OK", 0]


def test_pipelined_multi_key_commands_after_single_key_ones(srv):
    # A pipeline squashed into one hop runs each command with its own key specs: DEL and
    # MGET after a SET see all their keys, not the first command's one key.
    c = srv.raw()
    commands = [("SET", "{p}1", "x"), ("SET", "{p}2", "y"), ("DEL", "{p}1", "{p}2"),
                ("MSET", "{p}1", "1", "{p}2", "2"), ("GET", "{p}1"), ("MGET", "{p}1", "{p}2"),
                ("EXISTS", "{p}1", "{p}2", "{p}3"), ("UNLINK", "{p}1", "{p}2")]
    c.send_many(commands)
    assert [c.read() for _ in commands] == ["OK", "OK", 2, "OK", b"1", [b"1", b"2"], 2, 2]


def test_refused_exec_aborts_the_transaction(tx_server):
    """An EXEC refused before it runs answers EXECABORT with the reason (Redis's
    rejectCommand), inside MULTI or not, and the transaction is gone."""
    c = tx_server.raw()
    arity = err("EXECABORT Transaction discarded because of: wrong number of arguments for "
                "'exec' command")
    assert c("MULTI") == "OK"
    assert c("SET", "refused-exec", "1") == "QUEUED"
    assert c("EXEC", "extra") == arity
    assert c("EXEC") == err("ERR EXEC without MULTI")
    assert c("GET", "refused-exec") is None
    assert c("EXEC", "extra") == arity


def test_multi_past_maxmemory(tx_server):
    """Past maxmemory (noeviction) Redis refuses to queue any command inside MULTI, since
    queuing takes memory, and refuses an EXEC that holds a denyoom command; an EXEC of
    reads still runs, and DISCARD works."""
    c, admin = tx_server.raw(), tx_server.raw()
    oom = "OOM command not allowed when used memory > 'maxmemory'."

    def limit_to_one_byte():
        # damselfly's shards publish their memory every 1/hz s: a server started a moment
        # ago may not have yet.
        assert admin("CONFIG", "SET", "maxmemory", "1") == "OK"
        wait_for(lambda: admin("SET", "oom-probe", "1") == err(oom), what="OOM", timeout=5)

    assert c("SET", "oom-multi", "value") == "OK"
    try:
        assert c("MULTI") == "OK"
        assert c("GET", "oom-multi") == "QUEUED"
        assert c("PING") == "QUEUED"
        limit_to_one_byte()
        assert c("EXEC") == [b"value", "PONG"]

        assert admin("CONFIG", "SET", "maxmemory", "0") == "OK"
        assert c("MULTI") == "OK"
        assert c("SET", "oom-multi", "1") == "QUEUED"
        assert c("GET", "oom-multi") == "QUEUED"
        limit_to_one_byte()
        assert c("EXEC") == err("EXECABORT Transaction discarded because of: " + oom)
        assert c("GET", "oom-multi") == b"value"  # not run, and no longer in MULTI

        assert c("MULTI") == "OK"
        assert c("GET", "oom-multi") == err(oom)  # queuing is refused, even a read
        assert c("SET", "oom-multi", "2") == err(oom)
        assert c("EXEC") == EXECABORT
        assert c("MULTI") == "OK"
        assert c("GET", "oom-multi") == err(oom)
        assert c("DISCARD") == "OK"
        assert c("GET", "oom-multi") == b"value"
    finally:
        admin("CONFIG", "SET", "maxmemory", "0")
