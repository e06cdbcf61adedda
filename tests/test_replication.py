"""Replication, the master's side: a real redis-server 7.0 replica (`--replicaof` the server
under test) does PSYNC, loads the RDB and applies the command stream; hand-driven replicas on
raw sockets check the protocol (SYNC, PSYNC ? -1, +FULLRESYNC, the RDB bulk, the stream,
REPLCONF ACK/GETACK, WAIT, PSYNC continuations from the backlog, the replica output-buffer
limit).

Convergence is checked key by key after `WAIT 1 5000`: same key sets per db, and for every key
the same TYPE, value (read with the type's own commands), DEBUG DIGEST-VALUE, stream metadata
(groups, consumers, pending entries) and PTTL (within a second).

Validated against redis-server 7.0 as the master (DAMSELFLY_TEST_TARGET=redis); the master is
then started with repl-diskless-sync off, so that it sends the RDB as a sized bulk at once as
damselfly does. damselfly masters run 4 proactor threads, so that multi-key commands span
shards.

Tests marked xfail(TARGET == "damselfly", strict=True) pin down where damselfly's master still
differs from Redis's (see each reason): the order of writes to different shards, MULTI/EXEC
blocks in the stream, WAIT's offset.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

from conftest import HOST, TARGET, LogFile, _register, free_port
from helpers import err, info_fields, wait_for
from resp_client import RawConnection, RespError, encode_command

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
LINK_UP_TIMEOUT_S = 15.0


# --------------------------------------------------------------------------- servers


def start_master(server_factory, *extra):
    """A master: damselfly with 4 shards, or redis-server with disk-based full syncs (no
    5-second diskless delay, and a sized RDB bulk as damselfly sends) and DEBUG allowed."""
    if TARGET == "redis":
        return server_factory("--enable-debug-command=local", "--repl-diskless-sync=no", *extra)
    return server_factory("--proactor_threads=4", *extra)


class Replica(LogFile):
    """A redis-server 7.0 started with --replicaof the master; logs to replica.log in its own
    directory. start() after stop() or shutdown_save() keeps the port and the directory."""

    def __init__(self, master, extra=()):
        self.master = master
        self.extra = list(extra)
        self.workdir = tempfile.mkdtemp(prefix="damselfly-replica-")
        self.log_path = os.path.join(self.workdir, "replica.log")
        self.port = None
        self.proc = None
        self.stopped_by_test = False
        self._conns = []

    def command_line(self):
        return [REDIS_SERVER, "--port", str(self.port), "--bind", HOST,
                "--replicaof", HOST, str(self.master.port), "--save", "", "--appendonly", "no",
                "--dir", self.workdir, "--enable-debug-command", "yes"] + self.extra

    def start(self, wait_up=True):
        restart = self.port is not None  # a restart keeps the port
        for attempt in range(3):  # a port picked as free can be taken before the bind
            if not restart and (attempt or self.port is None):
                self.port = free_port()
            with open(self.log_path, "ab") as log:
                log.write(f"=== starting: {' '.join(self.command_line())}\n".encode())
                log.flush()
                self.proc = subprocess.Popen(self.command_line(), stdout=log,
                                             stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                             cwd=self.workdir)
            if self._wait_ping():
                break
            self.kill()
            if restart or "Address already in use" not in self.log_text():
                raise RuntimeError(f"replica did not start\n{self.log_tail()}")
        else:
            raise RuntimeError(f"replica did not start\n{self.log_tail()}")
        self.stopped_by_test = False
        if wait_up:
            self.wait_link_up()
        return self

    def _wait_ping(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection((HOST, self.port), timeout=1) as s:
                    s.settimeout(1)
                    s.sendall(b"*1\r\n$4\r\nPING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return True
            except OSError:
                pass
            time.sleep(0.02)
        return False

    def info(self):
        return info_fields(self.raw(), "replication")

    def wait_link_up(self, timeout=LINK_UP_TIMEOUT_S):
        conn = self.raw()
        wait_for(lambda: info_fields(conn, "replication").get("master_link_status") == "up",
                 timeout=timeout, interval=0.05, what=f"{self} to report master_link_status:up")

    def raw(self):
        c = RawConnection(HOST, self.port, timeout=10)
        self._conns.append(c)
        return c

    def stop(self):
        """SIGTERM (no save: save ""); returns a problem description or None."""
        for c in self._conns:
            c.close()
        self._conns = []
        if self.proc is None:
            return None
        problem = None
        if self.proc.poll() is not None:
            if not self.stopped_by_test:
                problem = f"replica had exited (code {self.proc.returncode})"
        else:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()
                problem = "replica ignored SIGTERM"
        self.stopped_by_test = True
        return problem

    def shutdown_save(self):
        """SHUTDOWN SAVE: the replica writes dump.rdb with its master's replid and offset, so
        that on restart it asks for a continuation (PSYNC replid offset)."""
        conn = self.raw()
        try:
            conn("SHUTDOWN", "SAVE")
        except Exception:  # noqa: BLE001 - the connection closes without a reply
            pass
        self.proc.wait(timeout=10)
        assert self.proc.returncode == 0, self.log_tail()
        self.stopped_by_test = True
        assert os.path.exists(os.path.join(self.workdir, "dump.rdb"))

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __repr__(self):
        return f"<redis-server replica on {HOST}:{self.port}>"


@pytest.fixture
def replica_factory(request):
    """replica_factory(master) starts a redis-server replica of master and waits for
    master_link_status:up; stopped after the test (its log is attached to a failure)."""
    started = []

    def start(master, extra=(), wait_up=True):
        rep = Replica(master, extra)
        _register(request, rep)  # the log is attached to the report of a failed test
        started.append(rep)
        return rep.start(wait_up=wait_up)

    yield start
    problems = []
    for rep in started:
        problem = rep.stop()
        if problem:
            problems.append(f"{rep}: {problem}\n--- replica log ---\n{rep.log_tail()}")
        else:
            shutil.rmtree(rep.workdir, ignore_errors=True)
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture
def pair(server_factory, replica_factory):
    """(master, replica) with the replica online."""
    master = start_master(server_factory)
    return master, replica_factory(master)


# --------------------------------------------------------------------------- convergence


def ok(conn, *args):
    reply = conn(*args)
    assert not isinstance(reply, RespError), (args, reply)
    return reply


def flat_dict(flat):
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def keyspace(conn):
    """{db: (keys, expires)} from INFO keyspace."""
    out = {}
    for name, value in info_fields(conn, "keyspace").items():
        fields = dict(kv.split("=") for kv in value.split(","))
        out[int(name[2:])] = (int(fields["keys"]), int(fields["expires"]))
    return out


def all_keys(conn):
    keys, cursor = set(), b"0"
    while True:
        cursor, batch = conn("SCAN", cursor, "COUNT", 1000)
        keys.update(batch)
        if cursor == b"0":
            return keys


def stream_meta(conn, key):
    """A stream's state that XRANGE does not show and that does not depend on the encoding
    or on when it was read (no idle times, no radix tree sizes). A group's entries-read and
    lag are left out: Redis's own replicas do not always agree with their master on them (a
    COPY of a stream, or XCLAIM, leaves them unknown on the replica)."""
    info = flat_dict(conn("XINFO", "STREAM", key))
    meta = {f: info[f] for f in (b"length", b"last-generated-id", b"max-deleted-entry-id",
                                  b"entries-added", b"recorded-first-entry-id", b"groups")}
    groups = []
    for g in conn("XINFO", "GROUPS", key):
        g = flat_dict(g)
        name = g[b"name"]
        consumers = sorted((c[b"name"], c[b"pending"])
                           for c in map(flat_dict, conn("XINFO", "CONSUMERS", key, name)))
        pending = [(e[0], e[1], e[3]) for e in conn("XPENDING", key, name, "-", "+", 100000)]
        groups.append({"name": name, "consumers": consumers, "pending": pending,
                       **{f: g[f] for f in (b"consumers", b"pending", b"last-delivered-id")}})
    meta["groups-detail"] = sorted(groups, key=lambda g: g["name"])
    return meta


def pipelined(conn, commands, batch=500):
    """The replies to commands, sent in batches of `batch` per write."""
    out = []
    for i in range(0, len(commands), batch):
        chunk = commands[i:i + batch]
        conn.send_many(chunk)
        out.extend(conn.read() for _ in chunk)
    return out


VALUE_COMMANDS = {"string": ("GET",), "list": ("LRANGE", 0, -1), "hash": ("HGETALL",),
                  "set": ("SMEMBERS",), "zset": ("ZRANGE", 0, -1, "WITHSCORES")}


def keys_state(conn, keys):
    """{key: (type, value, digest, pttl)} for the keys of the selected db, each value read with
    its type's own commands (hashes as dicts, sets as sets, zsets as (member, float) pairs,
    streams as XRANGE plus stream_meta)."""
    keys = sorted(keys)
    kinds = pipelined(conn, [("TYPE", k) for k in keys])
    commands = []
    for key, kind in zip(keys, kinds):
        base = VALUE_COMMANDS.get(kind, ("XRANGE", "-", "+"))
        commands += [(base[0], key) + base[1:], ("DEBUG", "DIGEST-VALUE", key), ("PTTL", key)]
    replies = pipelined(conn, commands)
    state = {}
    for i, (key, kind) in enumerate(zip(keys, kinds)):
        value, digest, pttl = replies[3 * i:3 * i + 3]
        if kind == "hash":
            value = flat_dict(value)
        elif kind == "set":
            value = set(value)
        elif kind == "zset":
            value = [(value[j], float(value[j + 1])) for j in range(0, len(value), 2)]
        elif kind == "stream":
            value = (value, stream_meta(conn, key))
        state[key] = (kind, value, digest, pttl)
    return state


def mraw(master):
    """A raw connection to the master, authenticated when it has a password."""
    conn = master.raw()
    if master.password:
        assert conn("AUTH", master.password) == "OK"
    return conn


def sync_replica(master, replicas=1, timeout_ms=5000):
    """A write on a fresh connection, then WAIT on it (Redis's WAIT waits for the offset of the
    connection's own last write): once WAIT counts the replica, it has applied every write
    acknowledged before."""
    m = mraw(master)
    ok(m, "SET", "__repl_sync_marker__", "1")
    ok(m, "DEL", "__repl_sync_marker__")
    got = m("WAIT", replicas, timeout_ms)
    assert got == replicas, f"WAIT {replicas} {timeout_ms} answered {got!r}"


def assert_converged(master, replica, wait=True):
    """WAIT 1 5000 == 1, then every db holds the same keys with the same types, values,
    digests and TTLs on both sides."""
    if wait:
        sync_replica(master)
    m, r = mraw(master), replica.raw()
    m_space, r_space = keyspace(m), keyspace(r)
    assert m_space == r_space, f"INFO keyspace differs: master {m_space}, replica {r_space}"
    for db in sorted(m_space):
        ok(m, "SELECT", db)
        ok(r, "SELECT", db)
        assert m("DBSIZE") == r("DBSIZE"), db
        m_keys, r_keys = all_keys(m), all_keys(r)
        assert m_keys == r_keys, (f"db {db}: only on the master {sorted(m_keys - r_keys)[:20]}, "
                                  f"only on the replica {sorted(r_keys - m_keys)[:20]}")
        started = time.monotonic()
        m_state, r_state = keys_state(m, m_keys), keys_state(r, r_keys)
        # The master's TTLs are read first: the replica's have run down meanwhile.
        read_ms = (time.monotonic() - started) * 1000
        for key in sorted(m_keys):
            mk, mv, md, mttl = m_state[key]
            rk, rv, rd, rttl = r_state[key]
            assert mk == rk, f"db {db} key {key!r}: type {mk} on the master, {rk} on the replica"
            assert mv == rv, f"db {db} key {key!r} ({mk}): master {mv!r}\n replica {rv!r}"
            assert md == rd, f"db {db} key {key!r} ({mk}): DEBUG DIGEST-VALUE differs"
            if mttl < 0 or rttl < 0:
                assert mttl == rttl, f"db {db} key {key!r}: PTTL {mttl} vs {rttl} on the replica"
            else:
                assert -1000 < mttl - rttl < 1000 + read_ms, \
                    f"db {db} key {key!r}: PTTL {mttl} vs {rttl} ({read_ms:.0f} ms of reads)"
    assert m("DEBUG", "DIGEST") == r("DEBUG", "DIGEST")
    return m_space


# --------------------------------------------------------------------------- data


def fill_every_type(m):
    """Every type and encoding, TTLs, several dbs. m: a raw connection on db 0."""
    ok(m, "SET", "str", "hello")
    ok(m, "SET", "int", 12345)
    ok(m, "SET", "negint", -77)
    ok(m, "SET", "binary", bytes(range(256)) * 3)
    ok(m, "SET", "empty", "")
    ok(m, "SET", "large", b"".join(b"%07d," % i for i in range(12800)))  # 100 KiB, 102400 B
    ok(m, "SET", "largerandom", os.urandom(100 * 1024))
    ok(m, "SET", "ttl:str", "v", "EX", 1000)
    ok(m, "SET", "ttl:pxat", "v", "PXAT", int(time.time() * 1000) + 500_000)
    ok(m, "RPUSH", "list:small", "a", "b", "c", 1, 2)
    ok(m, "RPUSH", "list:big", *[f"element-{i}" * 3 for i in range(2000)])
    ok(m, "RPUSH", "list:ttl", "x")
    ok(m, "PEXPIRE", "list:ttl", 800_000)
    ok(m, "HSET", "hash:small", "f1", "v1", "f2", 2, "f3", "")
    ok(m, "HSET", "hash:big", *[x for i in range(600) for x in (f"field{i}", f"value{i}" * 5)])
    ok(m, "HSET", "hash:longval", "f", "v" * 200)
    ok(m, "SADD", "set:int", 1, 2, 3, -4, 10**12)
    ok(m, "SADD", "set:bigint", *range(1000))
    ok(m, "SADD", "set:str", "x", "y", "z")
    ok(m, "SADD", "set:big", *[f"member{i}" for i in range(700)])
    ok(m, "ZADD", "zset:small", 1.5, "a", -2, "b", "inf", "c", 0, "d")
    ok(m, "ZADD", "zset:big", *[x for i in range(500) for x in (i / 3, f"m{i}")])
    ok(m, "XADD", "stream", "1-1", "f", "v")
    ok(m, "XADD", "stream", "2-0", "f", "w", "g", "x")
    for i in range(300):
        ok(m, "XADD", "stream:big", f"{1000 + i}-{i % 3}", "n", i, "payload", "p" * (i % 50))
    ok(m, "XDEL", "stream:big", "1005-2")
    ok(m, "XGROUP", "CREATE", "stream:big", "g1", "0")
    ok(m, "XGROUP", "CREATE", "stream:big", "g2", "$")
    ok(m, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", 5, "STREAMS", "stream:big", ">")
    ok(m, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", 3, "STREAMS", "stream:big", ">")
    ok(m, "XACK", "stream:big", "g1", "1000-0", "1002-2")
    ok(m, "XGROUP", "CREATE", "stream:empty", "g", "$", "MKSTREAM")
    ok(m, "PFADD", "hll:sparse", "a", "b", "c")
    ok(m, "PFADD", "hll:dense", *[f"e{i}" for i in range(5000)])
    ok(m, "SETBIT", "bits", 1000, 1)
    ok(m, "GEOADD", "geo", 13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania")
    for db in (1, 7, 15):
        ok(m, "SELECT", db)
        ok(m, "SET", f"db{db}:str", f"value in {db}")
        ok(m, "RPUSH", f"db{db}:list", db, db + 1)
        ok(m, "HSET", f"db{db}:hash", "db", db)
        ok(m, "SET", f"db{db}:ttl", "t", "EX", 2000)
    ok(m, "SELECT", 0)


def test_full_sync_of_every_type(server_factory, replica_factory):
    master = start_master(server_factory)
    m = master.raw()
    fill_every_type(m)
    replica = replica_factory(master)
    space = assert_converged(master, replica)
    assert set(space) == {0, 1, 7, 15}
    assert space[0][1] == 3 and space[7] == (4, 1)
    r = replica.raw()
    assert r("GET", "binary") == bytes(range(256)) * 3
    assert len(r("GET", "largerandom")) == 100 * 1024
    assert r("PFCOUNT", "hll:dense") == m("PFCOUNT", "hll:dense")


def test_full_sync_of_many_keys_across_shards(server_factory, replica_factory):
    master = start_master(server_factory)
    m = master.raw()
    m.send_many([("SET", f"key:{i}", f"value:{i}" * (1 + i % 7)) for i in range(20000)])
    for _ in range(20000):
        assert m.read() == "OK"
    m.send_many([("HSET", f"h:{i}", "a", i, "b", i * 2) for i in range(2000)])
    for _ in range(2000):
        assert m.read() == 2
    replica = replica_factory(master)
    sync_replica(master)
    r = replica.raw()
    assert r("DBSIZE") == 22000
    assert r("DEBUG", "DIGEST") == m("DEBUG", "DIGEST")


# --------------------------------------------------------------------------- the stream


def streaming_workload(m):
    """Writes of every family on a raw master connection (db 0 at the start and the end)."""
    now_ms = int(time.time() * 1000)
    # strings
    ok(m, "SET", "s:plain", "v1")
    ok(m, "APPEND", "s:plain", "-tail")
    ok(m, "APPEND", "s:new", "created by append")
    for _ in range(3):
        ok(m, "INCR", "s:counter")
    ok(m, "INCRBY", "s:counter", 10)
    ok(m, "DECRBY", "s:counter", 4)
    ok(m, "INCRBYFLOAT", "s:float", "1.1")
    ok(m, "INCRBYFLOAT", "s:float", "2.25e3")
    ok(m, "INCRBYFLOAT", "s:float", "-0.1")
    ok(m, "SETEX", "s:setex", 1000, "x")
    ok(m, "PSETEX", "s:psetex", 900_000, "x")
    ok(m, "SET", "s:ex", "y", "EX", 1000)
    ok(m, "SET", "s:px", "z", "PX", 700_000)
    ok(m, "SET", "s:exat", "z", "EXAT", now_ms // 1000 + 3000)
    ok(m, "SET", "s:getex", "g")
    ok(m, "GETEX", "s:getex", "EX", 2000)
    ok(m, "SET", "s:getexpersist", "h", "EX", 100)
    ok(m, "GETEX", "s:getexpersist", "PERSIST")
    ok(m, "SET", "s:keepttl", "a", "EX", 1000)
    ok(m, "SET", "s:keepttl", "b", "KEEPTTL")
    ok(m, "SET", "s:getset", "old")
    ok(m, "SET", "s:getset", "new", "GET")
    ok(m, "SETNX", "s:setnx", 1)
    ok(m, "SETNX", "s:setnx", 2)
    ok(m, "SETRANGE", "s:range", 5, "abc")
    ok(m, "SET", "s:gone", "x")
    ok(m, "GETDEL", "s:gone")
    ok(m, "SETBIT", "s:bits", 77, 1)
    ok(m, "SET", "s:bitop1", "abc")
    ok(m, "BITOP", "XOR", "s:bitopdest", "s:bitop1", "s:plain")
    ok(m, "MSETNX", "s:msetnx1", 1, "s:msetnx2", 2)
    # lists
    ok(m, "LPUSH", "l:a", *range(20))
    ok(m, "RPOP", "l:a")
    ok(m, "RPOP", "l:a", 2)
    ok(m, "LPOP", "l:a")
    for _ in range(3):
        ok(m, "LMOVE", "l:a", "l:b", "LEFT", "RIGHT")
    ok(m, "RPOPLPUSH", "l:a", "l:c")
    ok(m, "LINSERT", "l:b", "BEFORE", "15", "inserted")
    ok(m, "LINSERT", "l:b", "AFTER", "14", "after14")
    ok(m, "LSET", "l:a", 0, "set-by-lset")
    ok(m, "LREM", "l:a", 0, "5")
    ok(m, "LTRIM", "l:a", 1, 8)
    ok(m, "RPUSHX", "l:a", "pushx")
    ok(m, "LPUSHX", "l:none", "nothing")
    ok(m, "LMPOP", 2, "l:none", "l:a", "RIGHT", "COUNT", 2)
    # hashes
    ok(m, "HSET", "h:a", *[x for i in range(10) for x in (f"f{i}", i)])
    ok(m, "HDEL", "h:a", "f3", "f4")
    ok(m, "HINCRBYFLOAT", "h:a", "fl", "2.5")
    ok(m, "HINCRBYFLOAT", "h:a", "fl", "0.1")
    ok(m, "HINCRBY", "h:a", "f1", 100)
    ok(m, "HSETNX", "h:a", "f1", "no")
    ok(m, "HSETNX", "h:a", "new", "yes")
    ok(m, "HMSET", "h:b", "x", 1, "y", 2)
    # sets (plain names: different shards)
    ok(m, "SADD", "seta", *range(1, 21))
    ok(m, "SADD", "setb", *range(10, 31))
    ok(m, "SADD", "setwords", *[f"w{i}" for i in range(30)])
    ok(m, "SPOP", "seta")
    ok(m, "SPOP", "seta", 3)
    ok(m, "SPOP", "setwords", 5)
    ok(m, "SMOVE", "setb", "setc", 15)
    ok(m, "SMOVE", "setb", "setc", 30)
    ok(m, "SINTERSTORE", "setinter", "seta", "setb")
    ok(m, "SUNIONSTORE", "setunion", "seta", "setb", "setc")
    ok(m, "SDIFFSTORE", "setdiff", "setb", "seta")
    ok(m, "SREM", "setb", 11, 12)
    # sorted sets
    ok(m, "ZADD", "za", *[x for i in range(15) for x in (i * 1.5, f"m{i}")])
    ok(m, "ZADD", "zb", 1, "m1", 2, "x", 3, "y")
    ok(m, "ZINCRBY", "za", 2.5, "m1")
    ok(m, "ZINCRBY", "za", -1, "new")
    ok(m, "ZPOPMIN", "za", 2)
    ok(m, "ZPOPMAX", "za")
    ok(m, "ZUNIONSTORE", "zunion", 2, "za", "zb", "WEIGHTS", 1, 2)
    ok(m, "ZINTERSTORE", "zinter", 2, "za", "zb", "AGGREGATE", "MAX")
    ok(m, "ZRANGESTORE", "zrange", "za", 0, 4)
    ok(m, "ZREMRANGEBYSCORE", "za", 10, 12)
    ok(m, "ZADD", "za", "GT", "CH", 100, "m14", 1, "m13")
    # streams
    for i in range(10):
        ok(m, "XADD", "xa", "*", "i", i)
    ok(m, "XADD", "xa", "MAXLEN", "~", 1000, "*", "capped", 1)
    ok(m, "XTRIM", "xa", "MAXLEN", 8)
    ok(m, "XGROUP", "CREATE", "xa", "grp", "0")
    ok(m, "XGROUP", "CREATE", "xa", "late", "$")
    ok(m, "XGROUP", "CREATECONSUMER", "xa", "late", "idle-consumer")
    # (new consumers only: test_stream_group_changes_without_new_consumers covers the rest)
    ok(m, "XREADGROUP", "GROUP", "grp", "c1", "COUNT", 3, "STREAMS", "xa", ">")
    ok(m, "XREADGROUP", "GROUP", "grp", "c2", "COUNT", 2, "STREAMS", "xa", ">")
    ok(m, "XADD", "xb", "5-1", "a", "b")
    ok(m, "XADD", "xb", "*", "a", "c")
    ok(m, "XDEL", "xb", "5-1")
    ok(m, "XSETID", "xb", "999999999999999-5")
    # HyperLogLog
    ok(m, "PFADD", "hll1", "a", "b", "c")
    ok(m, "PFADD", "hll2", *[f"x{i}" for i in range(100)])
    ok(m, "PFMERGE", "hllm", "hll1", "hll2")
    # expiries
    ok(m, "SET", "e:a", 1)
    ok(m, "EXPIRE", "e:a", 1000)
    ok(m, "SET", "e:b", 1)
    ok(m, "PEXPIRE", "e:b", 500_000)
    ok(m, "SET", "e:c", 1, "EX", 1000)
    ok(m, "PERSIST", "e:c")
    ok(m, "SET", "e:d", 1)
    ok(m, "EXPIREAT", "e:d", now_ms // 1000 + 4000)
    ok(m, "SET", "e:e", 1)
    ok(m, "PEXPIREAT", "e:e", now_ms + 600_000)
    ok(m, "SET", "e:past", 1)
    ok(m, "EXPIRE", "e:past", -1)           # deletes the key
    ok(m, "SET", "e:nx", 1, "EX", 100)
    ok(m, "EXPIRE", "e:nx", 5000, "GT")
    ok(m, "HSET", "e:hash", "f", "v")
    ok(m, "EXPIRE", "e:hash", 3000)
    # many keys at once, across shards
    ok(m, "MSET", *[x for i in range(50) for x in (f"mset:{i}", f"v{i}")])
    ok(m, "MSET", "mset:0", "again", "single", "one")
    ok(m, "SET", "ren:src", "moving")
    ok(m, "PEXPIRE", "ren:src", 777_000)
    ok(m, "RENAME", "ren:src", "ren:dst")
    ok(m, "RPUSH", "ren:list", 1, 2, 3)
    ok(m, "RENAME", "ren:list", "h:b")        # overwrites a hash with a list
    ok(m, "SET", "ren:nx", 1)
    ok(m, "RENAMENX", "ren:nx", "s:plain")    # refused: the destination exists
    ok(m, "RENAMENX", "ren:nx", "ren:nx2")
    ok(m, "COPY", "h:a", "copy:hash")
    ok(m, "COPY", "za", "copy:zset")
    ok(m, "COPY", "xa", "copy:stream")
    ok(m, "COPY", "s:plain", "copy:hash", "REPLACE")
    ok(m, "COPY", "seta", "copy:db5", "DB", 5)
    ok(m, "SET", "move:me", "to db 6")
    ok(m, "MOVE", "move:me", 6)
    ok(m, "SORT", "l:b", "ALPHA", "STORE", "sorted")
    # scripts
    ok(m, "EVAL", "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[2])",
       2, "sc:a", "sc:b", "value")
    ok(m, "EVAL", "redis.call('RPUSH', KEYS[1], 'a', 'b'); redis.call('LPOP', KEYS[1]); "
                  "redis.call('HSET', KEYS[2], 'k', 'v'); return 1", 2, "sc:list", "sc:hash")
    ok(m, "EVAL", "local t = redis.call('TIME'); redis.call('SET', KEYS[1], t[1] .. '.' .. t[2]);"
                  " return 1", 1, "sc:time")
    ok(m, "EVAL", "redis.call('SET', KEYS[1], tostring(math.random())); "
                  "redis.call('SADD', KEYS[2], math.random(1000000)); return 1",
       2, "sc:random", "sc:randomset")
    ok(m, "EVAL", "redis.call('SPOP', KEYS[1]); redis.call('SET', KEYS[2], 'x', 'EX', 500);"
                  " return 1", 2, "setc", "sc:ex")
    sha = ok(m, "SCRIPT", "LOAD", "return redis.call('INCRBY', KEYS[1], ARGV[1])")
    ok(m, "EVALSHA", sha, 1, "sc:counter", 7)
    ok(m, "EVALSHA", sha, 1, "sc:counter", 8)
    ok(m, "EVAL", "return redis.call('GET', KEYS[1])", 1, "sc:a")  # a read-only script
    # transactions
    m.send_many([("MULTI",), ("SET", "tx:a", 1), ("INCR", "tx:a"), ("LPUSH", "tx:list", "x", "y"),
                 ("SADD", "seta", 99), ("HSET", "h:a", "tx", "yes"), ("SPOP", "setb"),
                 ("INCRBYFLOAT", "tx:float", "0.5"), ("EXPIRE", "tx:a", 1000), ("EXEC",)])
    replies = [m.read() for _ in range(10)]
    assert replies[0] == "OK" and replies[1:9] == ["QUEUED"] * 8, replies
    assert isinstance(replies[9], list) and len(replies[9]) == 8, replies
    m.send_many([("MULTI",), ("SET", "tx:discarded", 1), ("DISCARD",)])
    assert [m.read() for _ in range(3)] == ["OK", "QUEUED", "OK"]
    # other dbs
    ok(m, "SELECT", 3)
    ok(m, "SET", "db3:str", "three")
    ok(m, "RPUSH", "db3:list", 1, 2, 3)
    ok(m, "INCRBYFLOAT", "db3:float", "3.3")
    ok(m, "SELECT", 1)
    ok(m, "SET", "swap:from1", "one")
    ok(m, "HSET", "swap:hash1", "db", 1)
    ok(m, "SELECT", 2)
    ok(m, "SET", "swap:from2", "two")
    ok(m, "ZADD", "swap:z2", 2, "two")
    ok(m, "SWAPDB", 1, 2)
    ok(m, "SET", "after:swap", "written in db 2 after SWAPDB")   # still db 2
    ok(m, "SELECT", 4)
    ok(m, "MSET", *[x for i in range(20) for x in (f"db4:{i}", i)])
    ok(m, "FLUSHDB")
    ok(m, "SET", "db4:after-flush", "kept")
    ok(m, "SELECT", 0)
    # deletions
    ok(m, "DEL", "mset:1", "mset:2", "mset:3", "no-such-key", "l:c")
    ok(m, "UNLINK", "mset:4", "set:none", "hll2")
    ok(m, "SET", "overwritten", "string")
    ok(m, "DEL", "overwritten")
    ok(m, "RPUSH", "overwritten", "now a list")


def test_stream_of_every_family_converges(pair):
    master, replica = pair
    m = master.raw()
    streaming_workload(m)
    space = assert_converged(master, replica)
    assert set(space) == {0, 1, 2, 3, 4, 5, 6}
    r = replica.raw()
    ok(r, "SELECT", 1)
    assert r("GET", "swap:from2") == b"two" and r("GET", "swap:from1") is None
    ok(r, "SELECT", 4)
    assert r("DBSIZE") == 1


def edge_workload(m, other):
    """Writes whose effect on the replica is easy to get wrong. m and other: raw connections
    to the master, on db 0."""
    now_ms = int(time.time() * 1000)
    # a script that selects another db, and one that fails after a write
    ok(m, "EVAL", "redis.call('SELECT', 3); redis.call('SET', KEYS[1], 'in db 3'); return 1",
       1, "script:db3")
    ok(m, "SET", "script:db0", "still db 0")   # the caller's db did not change
    reply = m("EVAL", "redis.call('SET', KEYS[1], 'written'); "
                      "return redis.call('INCR', KEYS[2])", 2, "script:partial", "script:db0")
    assert isinstance(reply, RespError), reply
    # a transaction that switches dbs, and one with a command that fails at run time
    m.send_many([("MULTI",), ("SELECT", 5), ("SET", "tx:db5", 5), ("SWAPDB", 5, 6),
                 ("SET", "tx:db5b", 55), ("SELECT", 0), ("SET", "tx:db0", 0), ("EXEC",)])
    replies = [m.read() for _ in range(8)]
    assert replies[-1] == ["OK", "OK", "OK", "OK", "OK", "OK"], replies
    m.send_many([("MULTI",), ("SET", "tx:ok", 1), ("LPUSH", "tx:ok", "x"), ("SET", "tx:ok2", 2),
                 ("EXEC",)])
    replies = [m.read() for _ in range(5)]
    assert isinstance(replies[-1][1], RespError), replies
    # WATCH that aborts: nothing written
    ok(m, "WATCH", "watched")
    ok(other, "SET", "watched", "by another client")
    m.send_many([("MULTI",), ("SET", "watched", "mine"), ("SET", "watch:other", 1), ("EXEC",)])
    assert [m.read() for _ in range(4)][-1] is None
    # store commands whose result is empty delete the destination
    ok(m, "SET", "dest:inter", "old")
    ok(m, "SADD", "src:a", 1, 2)
    ok(m, "SADD", "src:b", 3)
    assert m("SINTERSTORE", "dest:inter", "src:a", "src:b") == 0
    ok(m, "ZADD", "dest:zunion", 1, "x")
    assert m("ZUNIONSTORE", "dest:zunion", 1, "no:such:zset") == 0
    ok(m, "RPUSH", "dest:sort", "x")
    assert m("SORT", "no:such:list", "STORE", "dest:sort") == 0
    # RESTORE with a relative TTL, RESTORE over a key, RESTORE ... IDLETIME
    payload = m("DUMP", "src:a")
    ok(m, "RESTORE", "restored:ttl", 600_000, payload)
    ok(m, "RESTORE", "restored:abs", now_ms + 700_000, payload, "ABSTTL")
    ok(m, "RESTORE", "dest:inter", 0, payload, "REPLACE")
    # expiries in the past delete; a TTL carried by RENAME, COPY and MOVE
    ok(m, "SET", "past:1", 1)
    ok(m, "PEXPIREAT", "past:1", now_ms - 1000)
    ok(m, "SET", "past:2", 1)
    ok(m, "GETEX", "past:2", "PXAT", now_ms - 1000)
    ok(m, "SET", "past:3", 1, "PXAT", now_ms + 500_000)
    ok(m, "EXPIRE", "past:3", -5)
    ok(m, "SET", "ttl:src", "v", "PX", 900_000)
    ok(m, "RENAME", "ttl:src", "ttl:renamed")
    ok(m, "COPY", "ttl:renamed", "ttl:copied", "DB", 4)
    ok(m, "SET", "ttl:moved", "m", "EX", 800)
    ok(m, "MOVE", "ttl:moved", 7)
    ok(m, "SET", "ttl:overwritten", "v", "EX", 800)
    ok(m, "SET", "ttl:overwritten", "w")        # SET drops the TTL
    ok(m, "SET", "ttl:kept", "v", "EX", 800)
    ok(m, "APPEND", "ttl:kept", "w")            # APPEND keeps it
    ok(m, "RENAME", "ttl:kept", "ttl:kept")     # renaming a key to itself
    # blocking pops with multiple keys, in another db, served at once
    ok(m, "SELECT", 9)
    ok(m, "RPUSH", "db9:list", 1, 2, 3)
    ok(m, "ZADD", "db9:zset", 1, "a", 2, "b")
    assert m("BLMPOP", 1, 2, "db9:none", "db9:list", "LEFT", "COUNT", 2) == \
        [b"db9:list", [b"1", b"2"]]
    assert m("BZMPOP", 1, 1, "db9:zset", "MAX") == [b"db9:zset", [[b"b", b"2"]]]
    ok(m, "SELECT", 0)
    # streams: NOMKSTREAM, MINID trimming, explicit ids, deletion of a whole group
    assert m("XADD", "no:stream", "NOMKSTREAM", "*", "f", "v") is None
    for i in range(1, 11):
        ok(m, "XADD", "edge:stream", f"{i}-0", "f", i)
    ok(m, "XTRIM", "edge:stream", "MINID", "4")
    ok(m, "XGROUP", "CREATE", "edge:stream", "gone", "0")
    ok(m, "XGROUP", "DESTROY", "edge:stream", "gone")
    # bit and geo stores
    ok(m, "SETBIT", "bits:a", 3, 1)
    ok(m, "SETBIT", "bits:b", 100, 1)
    ok(m, "BITOP", "OR", "bits:or", "bits:a", "bits:b", "no:such:bits")
    ok(m, "BITFIELD", "bits:field", "SET", "u8", 0, 200, "INCRBY", "u8", 0, 100)
    ok(m, "GEOADD", "geo:a", 13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania")
    ok(m, "GEOSEARCHSTORE", "geo:near", "geo:a", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km",
       "STOREDIST")
    # MSETNX that fails, DEL over many shards, FLUSHALL in a transaction with writes after
    assert m("MSETNX", "msetnx:new", 1, "script:db0", 2) == 0
    ok(m, "MSET", *[x for i in range(30) for x in (f"many:{i}", i)])
    assert m("DEL", *[f"many:{i}" for i in range(0, 30, 2)]) == 15


def test_edge_cases_of_the_stream(pair):
    master, replica = pair
    m = master.raw()
    edge_workload(m, master.raw())
    space = assert_converged(master, replica)
    assert {0, 3, 4, 6, 7, 9} <= set(space), space
    r = replica.raw()
    assert r("EXISTS", "script:partial", "dest:inter", "dest:zunion", "dest:sort",
             "past:1", "past:2", "past:3", "watch:other") == 2


def test_flushall_in_a_transaction_then_writes(pair):
    master, replica = pair
    m = master.raw()
    fill_every_type(m)
    m.send_many([("MULTI",), ("SET", "before", 1), ("FLUSHALL",), ("SET", "after", 2),
                 ("SELECT", 3), ("SET", "after3", 3), ("EXEC",)])
    assert [m.read() for _ in range(7)][-1] == ["OK", "OK", "OK", "OK", "OK"]
    space = assert_converged(master, replica)
    assert space == {0: (1, 0), 3: (1, 0)}, space


def test_stream_after_full_sync_of_existing_data(server_factory, replica_factory):
    """Data present at the full sync, then writes over it: both must compose."""
    master = start_master(server_factory)
    m = master.raw()
    fill_every_type(m)
    replica = replica_factory(master)
    ok(m, "RPUSH", "list:big", "tail")
    ok(m, "LPOP", "list:big", 10)
    ok(m, "HDEL", "hash:big", "field1")
    ok(m, "SREM", "set:bigint", 5)
    ok(m, "SADD", "set:int", "notanint")
    ok(m, "ZREM", "zset:big", "m3")
    ok(m, "XADD", "stream:big", "*", "more", 1)
    ok(m, "XREADGROUP", "GROUP", "g2", "carol", "STREAMS", "stream:big", ">")
    ok(m, "APPEND", "large", "!")
    ok(m, "PERSIST", "ttl:str")
    ok(m, "PFADD", "hll:sparse", "d")
    ok(m, "SELECT", 7)
    ok(m, "DEL", "db7:list")
    ok(m, "SELECT", 0)
    assert_converged(master, replica)


def test_writes_during_full_sync(server_factory, replica_factory):
    """Writes that race with the snapshot of a full sync: what the RDB holds and what the
    stream carries must add up to the master's state."""
    master = start_master(server_factory)
    m = master.raw()
    m.send_many([("SET", f"k{i}", "x" * 100) for i in range(30000)])
    for _ in range(30000):
        assert m.read() == "OK"
    stop = threading.Event()
    errors = []
    counts = []

    def writer(conn, worker):
        n = 0
        try:
            while not stop.is_set():
                i = (n * 7919 + worker) % 30000
                conn.send_many([("INCR", f"c{worker}:{n % 50}"), ("APPEND", f"k{i}", "y"),
                                ("RPUSH", f"list{worker}", n), ("DEL", f"k{(i + 1) % 30000}"),
                                ("HSET", f"hash{n % 20}", f"w{worker}", n)])
                for _ in range(5):
                    reply = conn.read()
                    if isinstance(reply, RespError):
                        errors.append(reply)
                n += 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        counts.append(n)

    threads = [threading.Thread(target=writer, args=(master.raw(), w)) for w in range(3)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.2)
        replica = replica_factory(master)
        time.sleep(0.3)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=10)
    assert not errors, errors[:5]
    assert min(counts) > 10, counts
    assert_converged(master, replica)


def test_global_commands_during_full_sync(server_factory, replica_factory):
    """SWAPDB, FLUSHDB, MOVE and cross-shard RENAME/MSET racing with the snapshot of a full
    sync."""
    master = start_master(server_factory)
    m = master.raw()
    for db in (0, 1):
        ok(m, "SELECT", db)
        m.send_many([("SET", f"k{i}", f"db{db}-{i}") for i in range(20000)])
        for _ in range(20000):
            assert m.read() == "OK"
    ok(m, "SELECT", 0)
    stop = threading.Event()
    errors, rounds = [], []

    def churn(conn):
        n = 0
        try:
            while not stop.is_set():
                i = n % 20000
                commands = [("SWAPDB", 0, 1), ("SET", f"k{i}", f"churn{n}"),
                            ("RENAME", f"k{(i + 7) % 20000}", f"renamed{n}"),
                            ("MSET", f"m{n % 100}", n, f"k{(i + 13) % 20000}", n),
                            ("MOVE", f"k{(i + 29) % 20000}", 2), ("SELECT", 2),
                            ("SET", f"in2:{n}", n)]
                if n % 25 == 24:
                    commands.append(("FLUSHDB",))
                commands.append(("SELECT", 0))
                conn.send_many(commands)
                for cmd in commands:
                    reply = conn.read()
                    if isinstance(reply, RespError) and "no such key" not in reply.message:
                        errors.append((cmd, reply))
                n += 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        rounds.append(n)

    thread = threading.Thread(target=churn, args=(master.raw(),))
    thread.start()
    try:
        time.sleep(0.1)
        replica = replica_factory(master)
        time.sleep(0.3)
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not errors, errors[:5]
    assert rounds and rounds[0] > 10, rounds
    assert_converged(master, replica)


def test_value_larger_than_the_backlog(pair):
    master, replica = pair
    m = master.raw()
    big = os.urandom(3 << 20)
    ok(m, "SET", "big", big)
    ok(m, "RPUSH", "biglist", big[:1 << 20], big[1 << 20:])
    assert_converged(master, replica)
    assert replica.raw()("STRLEN", "big") == 3 << 20


# --------------------------------------------------------------------------- blocking


def wait_blocked_clients(master, count):
    probe = master.raw()
    wait_for(lambda: info_fields(probe, "clients").get("blocked_clients") == str(count),
             timeout=5, what=f"{count} blocked clients")


def test_blocking_pops_served_by_a_push(pair):
    master, replica = pair
    m = master.raw()
    blpop, blmove, blmove2 = master.raw(), master.raw(), master.raw()
    blpop.send("BLPOP", "bl:list", 0)
    blmove.send("BLMOVE", "bl:src", "bl:dst", "LEFT", "RIGHT", 0)
    wait_blocked_clients(master, 2)
    assert m("LPUSH", "bl:list", "a", "b", "c") == 3
    assert blpop.read() == [b"bl:list", b"c"]
    assert m("RPUSH", "bl:src", "x", "y") == 2
    assert blmove.read() == b"x"
    # a BLMOVE whose source and destination are the same list
    blmove2.send("BLMOVE", "bl:rot", "bl:rot", "RIGHT", "LEFT", 0)
    wait_blocked_clients(master, 1)
    # MULTI: the push and a pop in one transaction, the blocked client served after it
    m.send_many([("MULTI",), ("RPUSH", "bl:rot", 1, 2, 3), ("RPOP", "bl:rot"), ("EXEC",)])
    assert [m.read() for _ in range(4)][-1] == [3, b"3"]
    assert blmove2.read() == b"2"
    assert_converged(master, replica)
    r = replica.raw()
    assert r("LRANGE", "bl:list", 0, -1) == [b"b", b"a"]
    assert r("LRANGE", "bl:src", 0, -1) == [b"y"]
    assert r("LRANGE", "bl:dst", 0, -1) == [b"x"]
    assert r("LRANGE", "bl:rot", 0, -1) == [b"2", b"1"]


def test_blocking_zset_and_stream_reads(pair):
    master, replica = pair
    m = master.raw()
    bz, xr = master.raw(), master.raw()
    ok(m, "XGROUP", "CREATE", "bx", "g", "$", "MKSTREAM")
    bz.send("BZPOPMIN", "bz", 0)
    xr.send("XREADGROUP", "GROUP", "g", "c", "BLOCK", 0, "STREAMS", "bx", ">")
    wait_blocked_clients(master, 2)
    assert m("ZADD", "bz", 1, "one", 2, "two") == 2
    assert bz.read() == [b"bz", b"one", b"1"]
    assert m("XADD", "bx", "7-1", "f", "v") == b"7-1"
    assert xr.read() == [[b"bx", [[b"7-1", [b"f", b"v"]]]]]
    assert_converged(master, replica)
    r = replica.raw()
    assert r("ZRANGE", "bz", 0, -1) == [b"two"]
    assert r("XPENDING", "bx", "g")[0] == 1



def test_stream_group_changes_without_new_consumers(pair):
    """Changes to a group's pending entries list that create no consumer: XACK, XCLAIM and
    XAUTOCLAIM to an existing consumer, XREADGROUP of new entries by an existing consumer."""
    master, replica = pair
    m = master.raw()
    for i in range(1, 7):
        ok(m, "XADD", "xs", f"1-{i}", "n", i)
    ok(m, "XGROUP", "CREATE", "xs", "g", "0")
    ok(m, "XGROUP", "CREATECONSUMER", "xs", "g", "alice")
    ok(m, "XGROUP", "CREATECONSUMER", "xs", "g", "bob")
    ok(m, "XREADGROUP", "GROUP", "g", "alice", "COUNT", 4, "STREAMS", "xs", ">")
    ok(m, "XREADGROUP", "GROUP", "g", "bob", "COUNT", 1, "STREAMS", "xs", ">")
    ok(m, "XACK", "xs", "g", "1-1")
    ok(m, "XCLAIM", "xs", "g", "bob", 0, "1-2")
    ok(m, "XAUTOCLAIM", "xs", "g", "bob", 0, "1-3", "COUNT", 1)
    ok(m, "XREADGROUP", "GROUP", "g", "alice", "COUNT", 1, "STREAMS", "xs", ">")
    # (Not XREADGROUP of the history, id 0: it counts a delivery that Redis does not send.)
    assert_converged(master, replica)
    r = replica.raw()

    # id, consumer, deliveries; not the idle milliseconds, which go on between the two calls.
    def pending(c):
        return [(e[0], e[1], e[3]) for e in c("XPENDING", "xs", "g", "-", "+", 10, "bob")]
    assert pending(r) == pending(m)


# --------------------------------------------------------------------------- stream cost


class StreamMeter:
    """What one command costs the stream: the bytes a raw replica reads between two marks
    around it. A mark is a SWAPDB of two empty databases: a barrier, which reaches the
    stream after everything written before it on every shard (a plain write may overtake
    the writes of other shards)."""

    MARK = ("SWAPDB", "14", "15")

    def __init__(self, master, m):
        self.m = m
        self.rr = RawReplica.attached(master)

    def _mark(self):
        ok(self.m, *self.MARK)
        seen = self.rr.read_until(lambda a: a[0].upper() == b"SWAPDB")
        return seen, len(encode_command(*self.MARK))

    def cost(self, fn):
        """Runs fn(); returns the stream bytes it caused and the commands it sent."""
        self._mark()
        start = self.rr.offset
        fn()
        seen, mark_bytes = self._mark()
        return self.rr.offset - start - mark_bytes, seen[:-1]

    def close(self):
        self.rr.close()


BIG = 20000  # elements of each big collection: its whole state takes hundreds of KB


def fill_big_collections(m):
    pipelined(m, [("RPUSH", "big:list", *[f"element:{j}" for j in range(i, i + 1000)])
                  for i in range(0, BIG, 1000)])
    pipelined(m, [("ZADD", "big:zset", *[x for j in range(i, i + 1000)
                                         for x in (j, f"member:{j}")])
                  for i in range(0, BIG, 1000)])
    pipelined(m, [("SADD", "big:set", *[f"member:{j}" for j in range(i, i + 1000)])
                  for i in range(0, BIG, 1000)])
    pipelined(m, [("XADD", "big:stream", f"1-{j + 1}", "field", f"value:{j}")
                  for j in range(BIG)])


def rewritten_commands_workload(m):
    """Writes a master sends its replicas in another form than the client's (the ID an XADD
    * took, an approximate trim as the length it left, group reads and claims as XCLAIM and
    XGROUP SETID, blocking pops as pops): a replica must run the forms its master sends."""
    pipelined(m, [("XADD", "rw:s", f"1-{i}", "n", i) for i in range(1, 501)])
    ok(m, "XADD", "rw:s", "MAXLEN", "~", 300, "LIMIT", 300, "*", "n", "approx")
    ok(m, "XADD", "rw:s", "MINID", "~", "1-250", "*", "n", "minid")
    ok(m, "XADD", "rw:s", "MAXLEN", "=", 260, "*", "n", "exact")
    ok(m, "XTRIM", "rw:s", "MAXLEN", "~", 150, "LIMIT", 100)
    ok(m, "XADD", "rw:s", "NOMKSTREAM", "*", "n", "nomk")
    ok(m, "XADD", "rw:s", f"{2 ** 42}-*", "n", "seq")
    ok(m, "XGROUP", "CREATE", "rw:s", "g", "0")
    ok(m, "XGROUP", "CREATE", "rw:s", "late", "$", "ENTRIESREAD", 5)
    ok(m, "XREADGROUP", "GROUP", "g", "alice", "COUNT", 5, "STREAMS", "rw:s", ">")
    ok(m, "XREADGROUP", "GROUP", "g", "bob", "COUNT", 3, "NOACK", "STREAMS", "rw:s", ">")
    ok(m, "XREADGROUP", "GROUP", "g", "alice", "COUNT", 2, "STREAMS", "rw:s", "0")
    first = m("XPENDING", "rw:s", "g", "-", "+", 10)
    ok(m, "XDEL", "rw:s", first[1][0])
    ok(m, "XCLAIM", "rw:s", "g", "carol", 0, first[0][0], "IDLE", 5000, "RETRYCOUNT", 7)
    ok(m, "XCLAIM", "rw:s", "g", "carol", 0, first[2][0], first[1][0], "JUSTID",
       "LASTID", f"{2 ** 42}-5")
    ok(m, "XAUTOCLAIM", "rw:s", "g", "dave", 0, "0", "COUNT", 10)
    ok(m, "XACK", "rw:s", "g", first[3][0])
    ok(m, "EVAL", "return redis.call('XADD', KEYS[1], '*', 'n', 'lua')", 1, "rw:s")
    ok(m, "RPUSH", "rw:list", *range(20))
    ok(m, "ZADD", "rw:z", *[x for i in range(20) for x in (i, f"m{i}")])
    ok(m, "SADD", "rw:set", *range(20))
    ok(m, "BLPOP", "rw:list", 0)
    ok(m, "BLMPOP", 0, 2, "rw:none", "rw:list", "RIGHT", "COUNT", 3)
    ok(m, "LMPOP", 2, "rw:none", "rw:list", "LEFT", "COUNT", 2)
    ok(m, "BLMOVE", "rw:list", "rw:dst", "LEFT", "RIGHT", 0)
    ok(m, "BRPOPLPUSH", "rw:list", "rw:dst", 0)
    ok(m, "BZPOPMAX", "rw:z", 0)
    ok(m, "BZMPOP", 0, 1, "rw:z", "MIN", "COUNT", 2)
    ok(m, "ZMPOP", 2, "rw:none", "rw:z", "MAX", "COUNT", 2)
    ok(m, "SPOP", "rw:set", 3)
    ok(m, "SMOVE", "rw:set", "rw:set2", 5)


def test_rewritten_commands_converge(pair):
    master, replica = pair
    rewritten_commands_workload(master.raw())
    assert_converged(master, replica)


def test_writes_to_big_collections_cost_the_stream_what_changed(pair):
    """Pops, moves, blocking pops (at once and served by a push), stream appends, trims and
    consumer-group reads on collections of 20000 elements: each reaches the stream as the
    commands that make its change (Redis's rewrites: BLPOP as LPOP, XADD * with the ID it
    took, XREADGROUP as XCLAIM and XGROUP SETID...), never as the collection's whole state,
    and the replica converges. The destinations d0..d4 land on several shards."""
    master, replica = pair
    m = master.raw()
    fill_big_collections(m)
    ok(m, "XGROUP", "CREATE", "big:stream", "g", "0")
    dests = [f"d{i}" for i in range(5)]
    meter = StreamMeter(master, m)
    costs = {}

    def measure(name, *command):
        costs[name] = meter.cost(lambda: m(*command))

    try:
        measure("BLPOP", "BLPOP", "big:list", 0)
        measure("BRPOP", "BRPOP", "empty", "big:list", 0)
        measure("LMPOP", "LMPOP", 2, "empty", "big:list", "RIGHT", "COUNT", 3)
        measure("BLMPOP", "BLMPOP", 0, 2, "empty", "big:list", "LEFT", "COUNT", 2)
        for d in dests:
            measure(f"LMOVE {d}", "LMOVE", "big:list", d, "LEFT", "RIGHT")
            measure(f"RPOPLPUSH {d}", "RPOPLPUSH", "big:list", d)
            measure(f"BLMOVE {d}", "BLMOVE", "big:list", d, "RIGHT", "LEFT", 0)
            measure(f"BRPOPLPUSH {d}", "BRPOPLPUSH", "big:list", d, 0)
            measure(f"LMOVE into big {d}", "LMOVE", d, "big:list", "LEFT", "LEFT")
            measure(f"SMOVE {d}", "SMOVE", "big:set", f"set:{d}", f"member:{dests.index(d)}")
        measure("LMOVE rotate", "LMOVE", "big:list", "big:list", "LEFT", "RIGHT")
        measure("BZPOPMIN", "BZPOPMIN", "big:zset", 0)
        measure("BZPOPMAX", "BZPOPMAX", "empty", "big:zset", 0)
        measure("ZMPOP", "ZMPOP", 2, "empty", "big:zset", "MIN", "COUNT", 2)
        measure("BZMPOP", "BZMPOP", 0, 2, "empty", "big:zset", "MAX", "COUNT", 2)
        measure("SPOP", "SPOP", "big:set", 2)
        measure("XADD *", "XADD", "big:stream", "*", "field", "new")
        measure("XADD ms-*", "XADD", "big:stream", f"{2 ** 42}-*", "field", "new")
        measure("XADD MAXLEN ~", "XADD", "big:stream", "MAXLEN", "~", BIG - 500, "*", "f", "v")
        measure("XADD MINID ~ LIMIT", "XADD", "big:stream", "MINID", "~", "1-1000", "LIMIT",
                100, "*", "f", "v")
        measure("XTRIM MAXLEN ~", "XTRIM", "big:stream", "MAXLEN", "~", BIG - 1000)
        measure("XTRIM MAXLEN =", "XTRIM", "big:stream", "MAXLEN", BIG - 1100)
        measure("XDEL", "XDEL", "big:stream", f"1-{BIG - 5}")
        measure("XREADGROUP", "XREADGROUP", "GROUP", "g", "alice", "COUNT", 3, "STREAMS",
                "big:stream", ">")
        measure("XREADGROUP NOACK", "XREADGROUP", "GROUP", "g", "alice", "COUNT", 2, "NOACK",
                "STREAMS", "big:stream", ">")
        pending = m("XPENDING", "big:stream", "g", "-", "+", 10)
        first = pending[0][0]
        measure("XCLAIM", "XCLAIM", "big:stream", "g", "bob", 0, first)
        measure("XCLAIM JUSTID", "XCLAIM", "big:stream", "g", "carol", 0, pending[1][0],
                "JUSTID")
        measure("XAUTOCLAIM", "XAUTOCLAIM", "big:stream", "g", "dave", 0, "0", "COUNT", 2)
        measure("XACK", "XACK", "big:stream", "g", first)
        measure("XGROUP CREATECONSUMER", "XGROUP", "CREATECONSUMER", "big:stream", "g", "erin")
        measure("XGROUP DELCONSUMER", "XGROUP", "DELCONSUMER", "big:stream", "g", "carol")
        measure("XGROUP SETID", "XGROUP", "SETID", "big:stream", "g", "1-100")
        measure("XGROUP CREATE", "XGROUP", "CREATE", "big:stream", "g2", "$")
        measure("XGROUP DESTROY", "XGROUP", "DESTROY", "big:stream", "g2")
        measure("XSETID", "XSETID", "big:stream", f"{2 ** 43}-0")
        measure("EXPIRE", "EXPIRE", "big:set", 1000)
        measure("EVAL XADD *", "EVAL", "return redis.call('XADD', KEYS[1], '*', 'f', 'v')", 1,
                "big:stream")

        # Served by a push: a BLMOVE into the big list, from a key on each shard.
        for d in dests:
            waiter = master.raw()
            waiter.send("BLMOVE", f"src:{d}", "big:list", "LEFT", "LEFT", 0)
            wait_blocked_clients(master, 1)
            costs[f"served BLMOVE src:{d}"] = meter.cost(lambda: m("RPUSH", f"src:{d}", "x"))
            assert waiter.read() == b"x"
        waiter = master.raw()
        waiter.send("BZPOPMIN", "zsrc", 0)
        wait_blocked_clients(master, 1)
        costs["served BZPOPMIN"] = meter.cost(lambda: m("ZADD", "zsrc", 1, "a", 2, "b"))
        assert waiter.read() == [b"zsrc", b"a", b"1"]
        ok(m, "XGROUP", "CREATE", "big:stream", "g3", "$")
        waiter.send("XREADGROUP", "GROUP", "g3", "frank", "BLOCK", 0, "STREAMS", "big:stream",
                    ">")
        wait_blocked_clients(master, 1)
        costs["served XREADGROUP"] = meter.cost(
            lambda: m("XADD", "big:stream", "*", "field", "served"))
        assert waiter.read()[0][0] == b"big:stream"
    finally:
        meter.close()
    too_big = {name: (size, [a[0].decode() for a in seen]) for name, (size, seen) in costs.items()
               if size > 1500}
    assert not too_big, "\n".join(f"{name}: {v}" for name, v in too_big.items())
    assert_converged(master, replica)


# --------------------------------------------------------------------------- expiry


def test_active_expiry_reaches_the_replica(pair):
    master, replica = pair
    m = master.raw()
    ok(m, "SET", "keep", "me")
    for i in range(20):
        ok(m, "SET", f"short:{i}", i, "PX", 1000 + i * 5)
    ok(m, "SET", "pexpire", "v")
    ok(m, "PEXPIRE", "pexpire", 1000)
    ok(m, "RPUSH", "listexp", 1)
    ok(m, "PEXPIRE", "listexp", 1050)
    ok(m, "SELECT", 2)
    ok(m, "SET", "db2:short", 1, "PX", 1000)
    ok(m, "SELECT", 0)
    sync_replica(master)
    r = replica.raw()
    assert r("DBSIZE") == 23
    # No reads of these keys on the master: its active expiry deletes them and sends DEL. (A
    # replica hides keys past their deadline from reads, but not from DBSIZE/INFO keyspace.)
    wait_for(lambda: keyspace(r).get(0, (0, 0)) == (1, 0), timeout=8, interval=0.05,
             what="the replica's db0 to hold only the key without TTL")
    wait_for(lambda: 2 not in keyspace(r), timeout=8, interval=0.05,
             what="the replica's db2 to be empty")
    assert r("GET", "keep") == b"me"
    assert_converged(master, replica)


def test_lazy_expiry_on_access_reaches_the_replica(server_factory, replica_factory):
    """With active expiry off, a read on the master that finds the key past its deadline
    deletes it and sends DEL."""
    master = start_master(server_factory)
    m = master.raw()
    ok(m, "DEBUG", "SET-ACTIVE-EXPIRE", 0)
    replica = replica_factory(master)
    ok(m, "SET", "lazy", "v", "PX", 50)
    ok(m, "SET", "lazy2", "v", "PX", 50)
    sync_replica(master)
    r = replica.raw()
    assert r("DBSIZE") == 2
    time.sleep(0.1)
    assert m("GET", "lazy") is None
    assert m("EXISTS", "lazy2") == 0
    wait_for(lambda: r("DBSIZE") == 0, timeout=5, what="the replica's DBSIZE to reach 0")


def test_keys_expiring_during_the_full_sync(server_factory, replica_factory):
    """Keys that expire on the master around the snapshot: none may stay on the replica."""
    master = start_master(server_factory)
    m = master.raw()
    m.send_many([("SET", f"exp:{i}", i, "PX", 100 + (i * 37) % 1400) for i in range(5000)])
    for _ in range(5000):
        assert m.read() == "OK"
    m.send_many([("SET", f"keep:{i}", i) for i in range(100)])
    for _ in range(100):
        assert m.read() == "OK"
    replica = replica_factory(master)
    r = replica.raw()
    wait_for(lambda: keyspace(r).get(0) == (100, 0), timeout=15, interval=0.1,
             what="the replica to hold only the 100 keys without TTL")
    assert_converged(master, replica)


# --------------------------------------------------------------------------- WAIT, ROLE, INFO


def test_wait_role_and_info_with_a_replica(pair):
    master, replica = pair
    m = master.raw()
    ok(m, "SET", "a", 1)
    assert m("WAIT", 1, 1000) == 1
    ok(m, "SET", "b", 2)
    start = time.monotonic()
    assert m("WAIT", 2, 200) == 1
    elapsed = time.monotonic() - start
    assert 0.18 <= elapsed < 2, elapsed

    info = info_fields(m, "replication")
    assert info["role"] == "master"
    assert info["connected_slaves"] == "1"
    assert re.fullmatch(r"[0-9a-f]{40}", info["master_replid"]), info
    offset = int(info["master_repl_offset"])
    assert offset > 0
    assert info["repl_backlog_active"] == "1"
    assert int(info["repl_backlog_size"]) >= 1 << 20
    assert int(info["repl_backlog_first_byte_offset"]) >= 1
    assert int(info["repl_backlog_histlen"]) > 0
    slave = dict(kv.split("=") for kv in info["slave0"].split(","))
    assert slave["ip"] == "127.0.0.1" and slave["port"] == str(replica.port), slave
    assert slave["state"] == "online"
    assert int(slave["offset"]) <= offset and int(slave["lag"]) >= 0

    role = m("ROLE")
    assert role[0] == b"master" and isinstance(role[1], int) and role[1] >= offset
    assert len(role[2]) == 1
    ip, port, ack = role[2][0]
    assert (ip, port) == (b"127.0.0.1", str(replica.port).encode())
    assert isinstance(ack, bytes) and int(ack) <= role[1]

    rinfo = replica.info()
    assert rinfo["role"] == "slave" and rinfo["master_port"] == str(master.port)
    assert rinfo["master_replid"] == info["master_replid"]
    # The replica's processed offset catches up with the master's.
    wait_for(lambda: int(replica.info()["master_repl_offset"]) ==
             int(info_fields(m, "replication")["master_repl_offset"]), timeout=5,
             what="the replica's offset to reach the master's")


def test_wait_counts_two_replicas(server_factory, replica_factory):
    master = start_master(server_factory)
    ok(master.raw(), "RPUSH", "before", 1, 2)
    r1 = replica_factory(master)
    r2 = replica_factory(master)
    m = master.raw()
    ok(m, "SET", "k", "v")
    assert m("WAIT", 2, 5000) == 2
    start = time.monotonic()
    assert m("WAIT", 3, 100) == 2
    assert time.monotonic() - start >= 0.09
    info = info_fields(m, "replication")
    assert info["connected_slaves"] == "2"
    ports = {dict(kv.split("=") for kv in info[f"slave{i}"].split(","))["port"] for i in (0, 1)}
    assert ports == {str(r1.port), str(r2.port)}
    assert sorted(int(p) for _ip, p, _ack in m("ROLE")[2]) == sorted([r1.port, r2.port])
    streaming_workload(m)
    sync_replica(master, replicas=2)
    assert_converged(master, r1, wait=False)
    assert_converged(master, r2, wait=False)


def test_wait_after_concurrent_writes_covers_them(pair):
    """Clients writing to keys of every shard at once, each in its own db, each one waiting
    for its own write: once WAIT has counted the replica, the replica serves that write."""
    master, replica = pair
    failures = []
    conns = [(master.raw(), replica.raw()) for _ in range(4)]

    def worker(w, m, r):
        try:
            assert m("SELECT", w) == "OK" and r("SELECT", w) == "OK"
            for i in range(120):
                key = f"w{w}:{i}"
                m.send_many([("SET", key, i), ("RPUSH", f"list{i % 5}", key),
                             ("WAIT", 1, 5000)])
                replies = [m.read() for _ in range(3)]
                if replies[0] != "OK" or replies[2] != 1:
                    failures.append((key, replies))
                    return
                got = r("GET", key)
                if got != str(i).encode():
                    failures.append((key, "replica has", got))
                    return
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append((w, e))

    threads = [threading.Thread(target=worker, args=(w, m, r)) for w, (m, r) in enumerate(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not failures, failures[:5]
    assert_converged(master, replica)


@pytest.mark.xfail(TARGET == "damselfly", strict=True,
                   reason="damselfly's WAIT waits for the stream's offset at the time of the "
                          "WAIT, not for the offset of the client's own last write")
def test_wait_counts_acks_of_the_clients_own_writes(server_factory):
    """WAIT counts the replicas that acknowledged the writes of the connection that sent it:
    a connection that wrote nothing is answered at once, whatever other clients wrote."""
    master = start_master(server_factory)
    m, idle = master.raw(), master.raw()
    rr = RawReplica(master)
    try:
        rr.handshake()
        rr.psync()
        ok(m, "SET", "k", "v")
        rr.read_until(lambda c: c[:2] == [b"SET", b"k"])
        # The replica never acknowledges anything; `idle` never wrote.
        start = time.monotonic()
        assert idle("WAIT", 1, 1000) == 1
        assert time.monotonic() - start < 0.5
        assert m("WAIT", 1, 100) == 0
    finally:
        rr.close()


def test_master_without_replicas_never_journaled(server_factory):
    master = start_master(server_factory)
    m = master.raw()
    ok(m, "SET", "a", 1)
    ok(m, "LPUSH", "b", 1)
    info = info_fields(m, "replication")
    assert info["role"] == "master" and info["connected_slaves"] == "0"
    assert info["master_repl_offset"] == "0"
    assert m("ROLE") == [b"master", 0, []]
    assert m("WAIT", 1, 50) == 0
    assert m("WAIT", 0, 0) == 0


# --------------------------------------------------------------------------- raw replicas


class RawReplica:
    """A replica driven by hand on a socket: reads the handshake replies, the RDB bulk and
    the stream's commands, counting the stream bytes as a replica's offset."""

    def __init__(self, master, rcvbuf=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(10)
        self.sock.connect((master.host, master.port))
        self.buf = bytearray()
        self.replid = None
        self.offset = None  # the replica's offset: the last stream byte it holds

    @classmethod
    def attached(cls, master):
        """A raw replica past its handshake and a full resync: it reads the stream next."""
        rr = cls(master)
        rr.handshake()
        rr.psync()
        return rr

    def close(self):
        self.sock.close()

    def send(self, *args):
        self.sock.sendall(encode_command(*args))

    def _fill(self, deadline=None):
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no data from the master")
            self.sock.settimeout(remaining)
        try:
            chunk = self.sock.recv(1 << 16)
        finally:
            self.sock.settimeout(10)
        if not chunk:
            raise ConnectionError(f"closed by the master; unread: {bytes(self.buf[:200])!r}")
        self.buf += chunk

    def line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        end = self.buf.index(b"\r\n")
        out = bytes(self.buf[:end])
        del self.buf[:end + 2]
        return out

    def exact(self, n):
        while len(self.buf) < n:
            self._fill()
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def call(self, *args):
        self.send(*args)
        return self.line()

    def handshake(self, listening_port=1234, capa=True):
        assert self.call("REPLCONF", "listening-port", listening_port) == b"+OK"
        if capa:
            assert self.call("REPLCONF", "capa", "eof", "capa", "psync2") == b"+OK"

    def read_rdb(self):
        """The RDB bulk: '$<n>\\r\\n' and n bytes (no CRLF after them), or '$EOF:<mark>' and
        the payload up to the 40-byte mark; keep-alive newlines before it are skipped."""
        while True:
            while not self.buf:
                self._fill()
            if self.buf[:1] == b"\n":
                del self.buf[:1]
                continue
            break
        header = self.line()
        assert header.startswith(b"$"), header
        if header.startswith(b"$EOF:"):
            mark = header[5:]
            assert len(mark) == 40
            while True:
                idx = self.buf.find(mark)
                if idx >= 0:
                    payload = bytes(self.buf[:idx])
                    del self.buf[:idx + 40]
                    return payload
                self._fill()
        return self.exact(int(header[1:]))

    def psync(self, replid="?", offset=-1):
        """PSYNC; returns the reply line. A +FULLRESYNC sets replid/offset and reads the RDB
        (kept in .rdb); a +CONTINUE keeps the offset asked for (minus one)."""
        reply = self.call("PSYNC", replid, offset)
        if reply.startswith(b"+FULLRESYNC "):
            _, self.replid, off = reply.decode().split(" ")
            self.offset = int(off)
            self.rdb = self.read_rdb()
        elif reply.startswith(b"+CONTINUE"):
            self.offset = int(offset) - 1
            if reply != b"+CONTINUE":
                self.replid = reply.decode().split(" ")[1]
        return reply

    def read_command(self, timeout=5.0):
        """The next command of the stream (a list of bytes); advances the offset."""
        deadline = time.monotonic() + timeout
        while True:
            parsed = self._parse_command()
            if parsed is not None:
                args, used = parsed
                del self.buf[:used]
                self.offset += used
                return args
            self._fill(deadline)

    def _parse_command(self):
        buf = self.buf
        if not buf:
            return None
        assert buf[:1] == b"*", f"stream data is not a RESP array: {bytes(buf[:100])!r}"
        end = buf.find(b"\r\n")
        if end < 0:
            return None
        count, pos, args = int(buf[1:end]), end + 2, []
        for _ in range(count):
            end = buf.find(b"\r\n", pos)
            if end < 0:
                return None
            assert buf[pos:pos + 1] == b"$", bytes(buf[pos:pos + 50])
            n = int(buf[pos + 1:end])
            if len(buf) < end + 2 + n + 2:
                return None
            args.append(bytes(buf[end + 2:end + 2 + n]))
            pos = end + 2 + n + 2
        return args, pos

    def read_until(self, predicate, timeout=5.0):
        """Commands up to and including the first one for which predicate(args) is true."""
        seen = []
        deadline = time.monotonic() + timeout
        while True:
            args = self.read_command(timeout=max(0.01, deadline - time.monotonic()))
            seen.append(args)
            if predicate(args):
                return seen

    def read_all_of(self, expected, timeout=5.0):
        """Commands until every one of `expected` has been seen (in any order: the order of
        writes to different shards is checked by test_stream_keeps_the_order_of_writes)."""
        missing = list(expected)
        seen = []
        deadline = time.monotonic() + timeout
        while missing:
            args = self.read_command(timeout=max(0.01, deadline - time.monotonic()))
            seen.append(args)
            if args in missing:
                missing.remove(args)
        return seen

    def catch_up(self, master_conn, timeout=5.0):
        """Reads the stream until the offset reaches the master's master_repl_offset."""
        seen = []
        deadline = time.monotonic() + timeout
        while True:
            target = int(info_fields(master_conn, "replication")["master_repl_offset"])
            if self.offset == target:
                return seen
            assert self.offset < target, (self.offset, target)
            seen.append(self.read_command(timeout=max(0.01, deadline - time.monotonic())))

    def recv_nothing(self, wait=0.2):
        """True when nothing (but PINGs) arrives within `wait` seconds."""
        deadline = time.monotonic() + wait
        try:
            while True:
                self._fill(deadline)
        except TimeoutError:
            pass
        return not bytes(self.buf).replace(encode_command("PING"), b"")

    def read_bytes_to(self, offset, timeout=5.0):
        """The raw stream bytes up to `offset` (a continuation may start inside a command)."""
        deadline = time.monotonic() + timeout
        while len(self.buf) < offset - self.offset:
            self._fill(deadline)
        n = offset - self.offset
        data = bytes(self.buf[:n])
        del self.buf[:n]
        self.offset = offset
        return data

    def ack(self, offset=None):
        self.send("REPLCONF", "ACK", self.offset if offset is None else offset)


def without_pings(commands):
    return [c for c in commands if c[0].upper() != b"PING"]


def slave_entries(master_conn):
    info = info_fields(master_conn, "replication")
    return [dict(kv.split("=") for kv in info[f"slave{i}"].split(","))
            for i in range(int(info["connected_slaves"]))]


def test_raw_psync_full_resync_and_stream(server_factory):
    master = start_master(server_factory)
    m = master.raw()
    ok(m, "SET", "existing", "in the rdb")
    rr = RawReplica(master)
    try:
        rr.handshake(listening_port=1234)
        reply = rr.psync()
        assert re.fullmatch(rb"\+FULLRESYNC [0-9a-f]{40} \d+", reply), reply
        assert rr.rdb.startswith(b"REDIS00"), rr.rdb[:20]
        assert b"existing" in rr.rdb and b"in the rdb" in rr.rdb
        info = info_fields(m, "replication")
        assert info["master_replid"] == rr.replid
        assert int(info["master_repl_offset"]) >= rr.offset
        # the master's writes arrive as commands (perhaps after a SELECT)
        ok(m, "SET", "foo", "bar")
        ok(m, "RPUSH", "list", "a", "b")
        expected = [[b"SET", b"foo", b"bar"], [b"RPUSH", b"list", b"a", b"b"]]
        seen = without_pings(rr.read_all_of(expected))
        assert sorted(c for c in seen if c[0].upper() != b"SELECT") == sorted(expected), seen
        assert [c for c in seen if c[0].upper() == b"SELECT"] in ([], [[b"SELECT", b"0"]])
        ok(m, "SELECT", 3)
        ok(m, "SET", "in3", "x")
        seen = without_pings(rr.read_until(lambda c: c[0].upper() == b"SET"))
        assert seen == [[b"SELECT", b"3"], [b"SET", b"in3", b"x"]], seen
        ok(m, "SELECT", 0)
        rr.catch_up(m)
        # the replica's ACK shows up as its offset in INFO
        rr.ack()
        wait_for(lambda: any(s["port"] == "1234" and s["offset"] == str(rr.offset)
                             for s in slave_entries(m)), timeout=5,
                 what=f"INFO replication to show the ACKed offset {rr.offset}")
        entry = [s for s in slave_entries(m) if s["port"] == "1234"][0]
        assert entry["ip"] == "127.0.0.1" and entry["state"] == "online", entry
        assert [b"127.0.0.1", b"1234", str(rr.offset).encode()] in m("ROLE")[2]
    finally:
        rr.close()
    wait_for(lambda: info_fields(m, "replication")["connected_slaves"] == "0", timeout=5,
             what="the closed replica to leave INFO")


def test_replicas_announced_address(server_factory):
    """REPLCONF ip-address and listening-port are what INFO and ROLE show; a replica that
    announced neither shows its connection's address and port 0."""
    master = start_master(server_factory)
    m = master.raw()
    announced, silent = RawReplica(master), RawReplica(master)
    try:
        announced.handshake(listening_port=7777)
        assert announced.call("REPLCONF", "ip-address", "10.1.2.3") == b"+OK"
        announced.psync()
        assert silent.psync().startswith(b"+FULLRESYNC")
        wait_for(lambda: len(slave_entries(m)) == 2, timeout=5, what="two replicas online")
        entries = sorted((e["ip"], e["port"], e["state"]) for e in slave_entries(m))
        assert entries == [("10.1.2.3", "7777", "online"), ("127.0.0.1", "0", "online")]
        assert sorted(m("ROLE")[2]) == [[b"10.1.2.3", b"7777", b"0"],
                                        [b"127.0.0.1", b"0", b"0"]]
    finally:
        announced.close()
        silent.close()


ORDER_BUG = ("damselfly's stream does not keep the order of writes to different shards, "
             "even when each was acknowledged before the next was sent")


@pytest.mark.xfail(TARGET == "damselfly", strict=True, reason=ORDER_BUG)
def test_stream_keeps_the_order_of_writes(server_factory):
    """A client that waits for each reply before its next write: its writes reach the stream
    in that order, whatever shards their keys are on (a replica's state is always a state
    the master went through)."""
    master = start_master(server_factory)
    m = master.raw()
    rr = RawReplica(master)
    try:
        rr.handshake()
        rr.psync()
        for i in range(1000):
            assert m("SET", f"order:{i}", i) == "OK"
        got = []
        while len(got) < 1000:
            args = rr.read_command()
            if args[0].upper() == b"SET":
                got.append(int(args[2]))
        inversions = [(a, b) for a, b in zip(got, got[1:]) if b < a]
        assert not inversions, f"{len(inversions)} writes out of order, e.g. {inversions[:5]}"
    finally:
        rr.close()


def stream_units(commands):
    """The units of stream commands: a MULTI ... EXEC block as one list of commands, any
    other command (but SELECT and PING) as a list of itself."""
    units, block = [], None
    for args in commands:
        name = args[0].upper()
        if name == b"MULTI":
            block = []
        elif name == b"EXEC":
            units.append(block)
            block = None
        elif name not in (b"SELECT", b"PING"):
            if block is not None:
                block.append(args)
            else:
                units.append([args])
    assert block is None, f"a MULTI without its EXEC: {block}"
    return units


def written_keys(unit):
    return sorted(k for a in unit for k in (a[1::2] if a[0].upper() == b"MSET" else a[1:2]))


def test_deadlines_reach_the_stream_as_absolute_times(server_factory):
    """Every TTL a write sets goes as an absolute time in ms (SET ... PXAT, PEXPIREAT), as
    Redis 7 sends them, whatever form the client used; GETDEL goes as DEL."""
    master = start_master(server_factory)
    m = master.raw()
    rr = RawReplica.attached(master)
    try:
        now_s = int(time.time())
        ok(m, "SET", "t", "v", "EX", 200)
        ok(m, "SET", "t", "v", "px", 100_000)
        ok(m, "SET", "t", "v", "exat", now_s + 100)
        ok(m, "SET", "t", "v", "pxat", now_s * 1000 + 100_000)
        ok(m, "SETEX", "t", 100, "v")
        ok(m, "PSETEX", "t", 100_000, "v")
        ok(m, "EXPIRE", "t", 100)
        ok(m, "GETEX", "t", "EXAT", now_s + 100)
        ok(m, "SET", "g", "v")
        ok(m, "GETDEL", "g")
        got = [a for a in rr.catch_up(m) if a[0].upper() not in (b"SELECT", b"PING")]
        # Each key's own order: t and g may be on different shards (see ORDER_BUG).
        got = [a for a in got if a[1] == b"t"] + [a for a in got if a[1] == b"g"]
        shapes = [b" ".join(a[:4] if a[0] == b"SET" else a[:2]) for a in got]
        assert shapes == [b"SET t v PXAT"] * 6 + [b"PEXPIREAT t"] * 2 + [
            b"SET g v", b"DEL g"], got
        deadlines = [int(a[4]) for a in got[:6]] + [int(a[2]) for a in got[6:8]]
        assert all(abs(d - (now_s + 100) * 1000) < 105_000 for d in deadlines), deadlines
    finally:
        rr.close()


def test_transactions_are_atomic_in_the_stream(server_factory):
    """What a transaction, a script or an MSET writes reaches the replica as one unit (one
    command, or one MULTI/EXEC block), so that a replica's readers never see half of it."""
    master = start_master(server_factory)
    m = master.raw()
    rr = RawReplica(master)
    try:
        rr.handshake()
        rr.psync()
        m.send_many([("MULTI",), ("SET", "ta", 1), ("SET", "tb", 2), ("INCR", "tc"), ("EXEC",)])
        assert [m.read() for _ in range(5)][-1] == ["OK", "OK", 1]
        ok(m, "EVAL", "redis.call('SET', KEYS[1], 1); redis.call('SET', KEYS[2], 2)", 2,
           "sa", "sb")
        ok(m, "MSET", "ma", 1, "mb", 2, "mc", 3, "md", 4)
        # One write in a transaction, and a transaction that changes nothing: no block.
        m.send_many([("MULTI",), ("SET", "one", 1), ("GET", "one"), ("EXEC",)])
        assert [m.read() for _ in range(4)][-1] == ["OK", b"1"]
        m.send_many([("MULTI",), ("DEL", "missing"), ("EXEC",)])
        assert [m.read() for _ in range(3)][-1] == [0]
        units = stream_units(rr.catch_up(m))
        assert sorted(written_keys(unit) for unit in units) == [
            [b"ma", b"mb", b"mc", b"md"], [b"one"], [b"sa", b"sb"], [b"ta", b"tb", b"tc"]], units
        assert [[b"SET", b"one", b"1"]] in units
    finally:
        rr.close()


def test_concurrent_transactions_across_shards_stay_whole(server_factory, replica_factory):
    """Clients running MULTI/EXEC blocks, scripts and MSETs over keys of several shards at
    once: every one reaches the stream as one unit holding all its writes (the groups of
    transactions that share shards end in the same order on each), and a redis-server
    replica converges."""
    master = start_master(server_factory)
    replica = replica_factory(master)
    m = master.raw()
    rr = RawReplica(master)
    errors = []
    rounds = 150

    def client(worker):
        conn = master.raw()
        try:
            for i in range(rounds):
                tag = f"{worker}:{i}"
                keys = [f"k{(worker * 7 + i + j) % 40}" for j in range(4)]
                kind = i % 3
                if kind == 0:
                    conn.send_many([("MULTI",)] + [("SET", k, tag) for k in keys] +
                                   [("INCR", f"count{worker}"), ("EXEC",)])
                    replies = [conn.read() for _ in range(7)]
                    assert replies[-1] == ["OK"] * 4 + [i // 3 + 1], replies
                elif kind == 1:
                    assert conn("MSET", *[x for k in keys for x in (k, tag)]) == "OK"
                else:
                    script = "for _, k in ipairs(KEYS) do redis.call('SET', k, ARGV[1]) end"
                    assert conn("EVAL", script, 4, *keys, tag) is None
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    try:
        rr.handshake()
        rr.psync()
        threads = [threading.Thread(target=client, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not errors, errors[:3]
        units = stream_units(rr.catch_up(m, timeout=20))
        by_tag = {}
        for unit in units:
            tags = {a[-1] if a[0].upper() == b"SET" else None for a in unit
                    if a[0].upper() in (b"SET", b"MSET")}
            tags |= {a[2 * j + 2] for a in unit if a[0].upper() == b"MSET"
                     for j in range(len(a) // 2)}
            tags.discard(None)
            for tag in tags:
                assert tag not in by_tag, f"{tag} written in two units: {by_tag[tag]}, {unit}"
                by_tag[tag] = unit
            assert len(tags) <= 1, f"a unit mixes transactions: {unit}"
        assert len(by_tag) == 4 * rounds
        for tag, unit in by_tag.items():
            assert len(written_keys(unit)) >= 4, (tag, unit)
        assert_converged(master, replica)
        if TARGET == "damselfly":  # no group had to be sent as plain commands
            assert "as separate commands" not in master.log_text()
    finally:
        rr.close()


def test_raw_wait_sends_getack_and_counts_the_ack(server_factory):
    master = start_master(server_factory)
    m = master.raw()
    rr = RawReplica(master)
    try:
        rr.handshake()
        rr.psync()
        ok(m, "SET", "k", "v")
        rr.read_until(lambda c: c[:2] == [b"SET", b"k"])
        # No ACK: WAIT times out with 0; the master asked with REPLCONF GETACK *.
        start = time.monotonic()
        assert m("WAIT", 1, 300) == 0
        assert time.monotonic() - start >= 0.28
        getack = rr.read_until(lambda c: c[0].upper() == b"REPLCONF")[-1]
        assert [a.upper() for a in getack] == [b"REPLCONF", b"GETACK", b"*"], getack
        # A WAIT in progress returns as soon as the replica's ACK covers the write.
        ok(m, "SET", "k2", "v2")
        m.send("WAIT", 1, 5000)
        start = time.monotonic()
        rr.read_until(lambda c: c[0].upper() == b"REPLCONF" and c[1].upper() == b"GETACK")
        rr.ack()
        assert m.read() == 1
        assert time.monotonic() - start < 3
        # an ACK below the write's offset does not count
        ok(m, "SET", "k3", "v3")
        rr.read_until(lambda c: c[:2] == [b"SET", b"k3"])
        rr.ack(rr.offset - 5)
        assert m("WAIT", 1, 200) == 0
    finally:
        rr.close()


def test_raw_sync_sends_the_rdb_then_the_stream(server_factory):
    master = start_master(server_factory)
    m = master.raw()
    ok(m, "HSET", "h", "f", "v")
    rr = RawReplica(master)
    try:
        rr.send("SYNC")
        rdb = rr.read_rdb()   # no +FULLRESYNC line before the bulk
        assert rdb.startswith(b"REDIS00") and b"h" in rdb
        rr.offset = 0
        ok(m, "SET", "after", "sync")
        seen = without_pings(rr.read_until(lambda c: c[0].upper() == b"SET"))
        assert seen[-1] == [b"SET", b"after", b"sync"], seen
        assert len(slave_entries(m)) == 1
    finally:
        rr.close()


def test_psync_continuation_from_the_backlog(server_factory):
    master = start_master(server_factory)
    m = master.raw()
    rr = RawReplica(master)
    rr.handshake(listening_port=1234)
    rr.psync()
    replid = rr.replid
    ok(m, "SET", "k1", "v1")
    rr.read_until(lambda c: c[:2] == [b"SET", b"k1"])
    rr.catch_up(m)
    offset = rr.offset
    rr.close()
    wait_for(lambda: info_fields(m, "replication")["connected_slaves"] == "0", timeout=5,
             what="the replica to be gone")
    # writes while no replica is connected still go to the backlog
    ok(m, "SET", "k2", "v2")
    ok(m, "INCR", "counter")
    ok(m, "LPUSH", "list", "x")
    rr2 = RawReplica(master)
    try:
        rr2.handshake(listening_port=1235)
        reply = rr2.psync(replid, offset + 1)
        assert reply == b"+CONTINUE " + replid.encode(), reply
        expected = [[b"SET", b"k2", b"v2"], [b"INCR", b"counter"], [b"LPUSH", b"list", b"x"]]
        seen = without_pings(rr2.read_all_of(expected))
        assert sorted(c for c in seen if c[0].upper() != b"SELECT") == sorted(expected), seen
        rr2.catch_up(m)   # the offsets agree byte for byte
        ok(m, "SET", "k3", "v3")
        assert without_pings(rr2.read_until(lambda c: c[0].upper() == b"SET")) == \
            [[b"SET", b"k3", b"v3"]]
        rr2.catch_up(m)
        resumed_at = rr2.offset
    finally:
        rr2.close()
    wait_for(lambda: info_fields(m, "replication")["connected_slaves"] == "0", timeout=5,
             what="the replica to be gone")
    # nothing written since: a continuation at the master's offset, with no data
    rr3 = RawReplica(master)
    try:
        rr3.handshake(listening_port=1236)
        assert rr3.psync(replid, resumed_at + 1) == b"+CONTINUE " + replid.encode()
        assert rr3.offset == resumed_at
        ok(m, "SET", "k4", "v4")
        assert without_pings(rr3.read_until(lambda c: c[0].upper() == b"SET")) == \
            [[b"SET", b"k4", b"v4"]]
    finally:
        rr3.close()


def test_psync_that_cannot_continue_gets_a_full_resync(server_factory):
    master = start_master(server_factory)
    m = master.raw()
    first = RawReplica(master)
    first.handshake()
    first.psync()
    replid = first.replid
    ok(m, "SET", "k", "v")
    first.catch_up(m)
    first.close()
    current = int(info_fields(m, "replication")["master_repl_offset"])
    for asked_replid, asked_offset in (("wrongid", 1), ("0" * 40, current + 1),
                                       (replid, current + 2),   # beyond the master's offset
                                       (replid, 0)):             # before the backlog
        rr = RawReplica(master)
        try:
            rr.handshake()
            reply = rr.psync(asked_replid, asked_offset)
            assert reply.startswith(b"+FULLRESYNC "), (asked_replid, asked_offset, reply)
            assert rr.replid == replid and rr.offset >= current
            assert rr.rdb.startswith(b"REDIS00")
        finally:
            rr.close()


def test_psync_continuation_limits_follow_the_backlog(server_factory):
    """With the smallest backlog (16 KiB), a continuation is served from its first byte held,
    not from the byte before; INFO's first byte offset and histlen add up to the offset."""
    master = start_master(server_factory)
    m = master.raw()
    assert m("CONFIG", "SET", "repl-backlog-size", 16384) == "OK"
    first = RawReplica(master)
    first.handshake()
    first.psync()
    replid = first.replid
    value = "v" * 1000
    for i in range(200):   # about 200 KB through a 16 KiB backlog
        ok(m, "SET", f"k{i}", value)
    first.catch_up(m)
    first.close()
    info = info_fields(m, "replication")
    offset = int(info["master_repl_offset"])
    first_byte = int(info["repl_backlog_first_byte_offset"])
    histlen = int(info["repl_backlog_histlen"])
    assert info["repl_backlog_size"] == "16384"
    assert first_byte + histlen - 1 == offset, info
    assert 16384 <= histlen < 100_000 and first_byte > 1, info
    rr = RawReplica(master)
    try:
        rr.handshake()
        assert rr.psync(replid, first_byte - 1).startswith(b"+FULLRESYNC")
    finally:
        rr.close()
    rr = RawReplica(master)
    try:
        rr.handshake()
        assert rr.psync(replid, first_byte) == b"+CONTINUE " + replid.encode()
        assert rr.offset == first_byte - 1
        data = rr.read_bytes_to(offset)   # histlen bytes (from inside a command, perhaps)
        assert data.endswith(encode_command("SET", "k199", value)), data[-100:]
        assert rr.recv_nothing()
    finally:
        rr.close()


def test_continue_without_psync2_capability_omits_the_replid(server_factory):
    master = start_master(server_factory)
    m = master.raw()
    rr = RawReplica(master)
    rr.handshake()
    rr.psync()
    ok(m, "SET", "k", "v")
    rr.catch_up(m)
    replid, offset = rr.replid, rr.offset
    rr.close()
    rr2 = RawReplica(master)
    try:
        rr2.handshake(capa=False)
        assert rr2.psync(replid, offset + 1) == b"+CONTINUE"
    finally:
        rr2.close()


# --------------------------------------------------------------------------- replica restarts


def test_replica_restart_without_data_resyncs(server_factory, replica_factory):
    master = start_master(server_factory)
    m = master.raw()
    fill_every_type(m)
    replica = replica_factory(master)
    assert_converged(master, replica)
    assert replica.stop() is None
    wait_for(lambda: info_fields(m, "replication")["connected_slaves"] == "0", timeout=5,
             what="the master to drop the stopped replica")
    streaming_workload(m)
    ok(m, "DEL", "str", "list:big")
    replica.start()
    assert_converged(master, replica)


def test_replica_restart_with_its_rdb_continues(server_factory, replica_factory):
    """A replica stopped with SHUTDOWN SAVE keeps its master's replid and offset in its RDB
    and asks for a continuation on restart; the master answers +CONTINUE from its backlog."""
    master = start_master(server_factory)
    m = master.raw()
    fill_every_type(m)
    replica = replica_factory(master)
    streaming_workload(m)
    assert_converged(master, replica)
    replica.shutdown_save()
    wait_for(lambda: info_fields(m, "replication")["connected_slaves"] == "0", timeout=5,
             what="the master to drop the stopped replica")
    ok(m, "SET", "while:down", "1")
    ok(m, "RPUSH", "list:small", "appended while down")
    ok(m, "SPOP", "set:big", 10)
    ok(m, "SELECT", 7)
    ok(m, "DEL", "db7:str")
    ok(m, "SELECT", 0)
    replica.start()
    assert_converged(master, replica)
    log = replica.log_text()
    assert "Successful partial resynchronization with master" in log, log[-3000:]


def test_killed_replica_link_resumes_with_a_continuation(pair):
    """CLIENT KILL of the replica's link on the master: the replica reconnects, asks for
    PSYNC <replid> <offset+1> and gets a continuation with what was written meanwhile."""
    master, replica = pair
    m = master.raw()
    streaming_workload(m)
    sync_replica(master)
    link = replica.raw()("CLIENT", "LIST", "TYPE", "master").decode()
    laddr = re.search(r"laddr=(\S+)", link).group(1)
    assert m("CLIENT", "KILL", "ADDR", laddr) == 1
    for i in range(50):
        ok(m, "RPUSH", "while:relinking", i)
        ok(m, "SET", f"relink:{i}", i)
    replica.wait_link_up()
    assert_converged(master, replica)
    log = replica.log_text()
    assert "Successful partial resynchronization with master" in log, log[-3000:]
    assert log.count("Full resync from master") == 1, log[-3000:]


def test_replica_connection_is_a_replica_client(pair):
    master, replica = pair
    m = master.raw()
    listed = m("CLIENT", "LIST", "TYPE", "replica").decode().splitlines()
    assert len(listed) == 1 and " flags=S " in listed[0], listed
    assert m("CLIENT", "LIST", "TYPE", "slave").decode().splitlines() == listed
    # connected_clients leaves replicas out: only this connection
    assert info_fields(m, "clients")["connected_clients"] == "1"
    assert m("CLIENT", "KILL", "TYPE", "replica") == 1
    replica.wait_link_up()
    ok(m, "SET", "k", "v")
    assert_converged(master, replica)


def test_eviction_reaches_the_replica(server_factory, replica_factory):
    """Keys the master evicts past maxmemory are deleted on the replica too (which does not
    evict on its own)."""
    master = start_master(server_factory)
    m = master.raw()
    replica = replica_factory(master)
    used = int(info_fields(m, "memory")["used_memory"])
    assert m("CONFIG", "SET", "maxmemory-policy", "allkeys-random") == "OK"
    assert m("CONFIG", "SET", "maxmemory", used + (8 << 20)) == "OK"
    value = os.urandom(50 * 1024)
    for i in range(0, 500, 10):   # 25 MB
        m.send_many([("SET", f"big:{j}", value) for j in range(i, i + 10)])
        for _ in range(10):
            assert m.read() == "OK"
    assert int(info_fields(m, "stats")["evicted_keys"]) > 0
    assert m("DBSIZE") < 500
    # No more evictions while the keyspaces are compared (Redis evicts before any command,
    # reads included, and the replies to the reads take memory).
    assert m("CONFIG", "SET", "maxmemory", 0) == "OK"
    assert_converged(master, replica)


def test_replica_gone_during_full_sync(server_factory, replica_factory):
    """Replicas that close their connection before or while reading the RDB: the master drops
    them and serves the next one."""
    master = start_master(server_factory)
    m = master.raw()
    m.send_many([("SET", f"k{i}", "x" * 1000) for i in range(5000)])
    for _ in range(5000):
        assert m.read() == "OK"
    for read_bytes in (0, 1000):
        rr = RawReplica(master, rcvbuf=4096)
        rr.handshake()
        assert rr.call("PSYNC", "?", -1).startswith(b"+FULLRESYNC")
        if read_bytes:
            while len(rr.buf) < read_bytes:
                rr._fill()
        rr.close()
    wait_for(lambda: info_fields(m, "replication")["connected_slaves"] == "0", timeout=10,
             what="the master to drop the replicas that left")
    assert m("PING") == "PONG"
    replica = replica_factory(master)
    ok(m, "SET", "after", 1)
    assert_converged(master, replica)


# --------------------------------------------------------------------------- authentication


def test_replica_authenticates_to_a_master_with_a_password(server_factory, replica_factory):
    master = start_master(server_factory, "--requirepass=secret")
    m = mraw(master)
    fill_every_type(m)
    anonymous = RawReplica(master)
    try:
        noauth = b"-NOAUTH Authentication required."
        assert anonymous.call("REPLCONF", "listening-port", 1) == noauth
        assert anonymous.call("PSYNC", "?", -1) == noauth
        assert anonymous.call("SYNC") == noauth
    finally:
        anonymous.close()
    replica = replica_factory(master, extra=["--masterauth", "secret"])
    streaming_workload(m)
    assert_converged(master, replica)


# --------------------------------------------------------------------------- functions


LIBRARY = ("#!lua name=replib\n"
           "redis.register_function('rset', function(keys, args) "
           "return redis.call('SET', keys[1], args[1]) end)")


def test_functions_in_the_full_sync(server_factory, replica_factory):
    master = start_master(server_factory)
    m = master.raw()
    assert m("FUNCTION", "LOAD", LIBRARY) == b"replib"
    replica = replica_factory(master)
    assert replica.raw()("FUNCTION", "LIST")[0][1] == b"replib"
    assert m("FCALL", "rset", 1, "fk", "fv") == "OK"
    assert_converged(master, replica)


def test_function_changes_reach_the_replica(pair):
    master, replica = pair
    m, r = master.raw(), replica.raw()
    assert m("FUNCTION", "LOAD", LIBRARY) == b"replib"
    sync_replica(master)
    assert [lib[1] for lib in r("FUNCTION", "LIST")] == [b"replib"]
    assert m("FCALL", "rset", 1, "fk", "fv") == "OK"
    assert m("FUNCTION", "DELETE", "replib") == "OK"
    sync_replica(master)
    assert r("FUNCTION", "LIST") == []
    assert r("GET", "fk") == b"fv"


def test_publish_reaches_the_replicas_subscribers(pair):
    master, replica = pair
    sub = replica.raw()
    assert sub("SUBSCRIBE", "news") == [b"subscribe", b"news", 1]
    assert master.raw()("PUBLISH", "news", "hello") == 0   # no subscriber on the master
    sub.sock.settimeout(2)
    assert sub.read() == [b"message", b"news", b"hello"]


# --------------------------------------------------------------------------- errors


def test_replication_command_errors(server_factory):
    master = start_master(server_factory)
    c = master.raw()
    not_int = err("ERR value is not an integer or out of range")
    assert c("REPLCONF", "listening-port", "x") == not_int
    assert c("REPLCONF", "foo", "bar") == err("ERR Unrecognized REPLCONF option: foo")
    assert c("REPLCONF", "listening-port") == err("ERR syntax error")
    assert c("REPLCONF", "capa", "eof", "listening-port") == err("ERR syntax error")
    assert c("REPLCONF") == "OK"
    assert c("REPLCONF", "capa", "eof", "capa", "psync2", "ip-address", "10.0.0.1",
             "rdb-only", 0) == "OK"
    assert c("REPLCONF", "rdb-only", "x") == not_int
    assert c("PSYNC", "a") == err("ERR wrong number of arguments for 'psync' command")
    assert c("PSYNC") == err("ERR wrong number of arguments for 'psync' command")
    assert c("PSYNC", "?", "x") == not_int
    assert c("SYNC", "x") == err("ERR wrong number of arguments for 'sync' command")
    assert c("WAIT", 1) == err("ERR wrong number of arguments for 'wait' command")
    assert c("WAIT", "x", 0) == not_int
    assert c("WAIT", 1, -1) == err("ERR timeout is negative")
    assert c("ROLE", "x") == err("ERR wrong number of arguments for 'role' command")
    # REPLCONF ACK and GETACK from a client that is not a replica: no reply at all
    c.send_many([("REPLCONF", "ACK", 5), ("PING",), ("REPLCONF", "GETACK", "*"), ("PING",),
                 ("REPLCONF", "ACK", "x"), ("ECHO", "last")])
    assert [c.read() for _ in range(3)] == ["PONG", "PONG", b"last"]
    assert c("REPLCONF", "ACK") == err("ERR syntax error")
    # SYNC and PSYNC are refused inside MULTI, which then fails at EXEC
    for cmd in (("SYNC",), ("PSYNC", "?", -1)):
        c.send_many([("MULTI",), cmd, ("EXEC",)])
        assert [c.read() for _ in range(3)] == [
            "OK", err("ERR Command not allowed inside a transaction"),
            err("EXECABORT Transaction discarded because of previous errors.")], cmd
    c.send_many([("MULTI",), ("WAIT", 0, 0), ("EXEC",)])
    assert [c.read() for _ in range(3)] == ["OK", "QUEUED", [0]]
    assert c("PING") == "PONG"
    assert info_fields(c, "replication")["connected_slaves"] == "0"


def test_replication_commands_are_refused_in_scripts(server_factory):
    master = start_master(server_factory)
    c = master.raw()
    reply = c("EVAL", "return redis.call('WAIT', 0, 0)", 0)
    assert isinstance(reply, RespError) and "not allowed from script" in reply.message, reply
    reply = c("EVAL", "return redis.call('PSYNC', '?', -1)", 0)
    assert isinstance(reply, RespError) and "not allowed from script" in reply.message, reply


# --------------------------------------------------------------------------- slow replicas


def test_replica_over_its_output_buffer_limit_is_dropped(server_factory):
    master = start_master(server_factory)
    m = master.raw()
    assert m("CONFIG", "SET", "client-output-buffer-limit", "replica 1mb 1mb 0") == "OK"
    limits = m("CONFIG", "GET", "client-output-buffer-limit")[1]
    assert b"slave 1048576 1048576 0" in limits, limits
    rr = RawReplica(master, rcvbuf=4096)
    try:
        rr.handshake(listening_port=4321)
        rr.psync()
        wait_for(lambda: len(slave_entries(m)) == 1, timeout=5, what="the replica online")
        value = b"v" * (100 * 1024)
        written = 0
        deadline = time.monotonic() + 20
        # The replica never reads: once the kernel's buffers are full, the master's output
        # buffer for it grows past 1 MiB and the master drops it.
        while slave_entries(m):
            assert written < 64 << 20, "the replica was not dropped after 64 MiB"
            assert time.monotonic() < deadline, f"not dropped after {written} bytes"
            m.send_many([("SET", f"big:{written // len(value) + i}", value) for i in range(10)])
            for _ in range(10):
                assert m.read() == "OK"
            written += 10 * len(value)
        # the master stays healthy
        assert m("PING") == "PONG"
        assert m("SET", "after", "drop") == "OK" and m("GET", "after") == b"drop"
        info = info_fields(m, "replication")
        assert info["connected_slaves"] == "0"
        # the master closed the connection: draining it ends with EOF
        rr.sock.settimeout(10)
        drained = 0
        while True:
            try:
                chunk = rr.sock.recv(1 << 20)
            except ConnectionResetError:
                break
            except socket.timeout:
                pytest.fail(f"the dropped replica's connection is still open ({drained} B read)")
            if not chunk:
                break
            drained += len(chunk)
            assert drained < 256 << 20
    finally:
        rr.close()
    # a new replica can still attach
    rr2 = RawReplica(master)
    try:
        rr2.handshake()
        assert rr2.psync().startswith(b"+FULLRESYNC")
        assert b"after" in rr2.rdb
    finally:
        rr2.close()


NOREPLICAS = "NOREPLICAS Not enough good replicas to write."


def test_min_replicas_to_write(server_factory, replica_factory):
    """min-replicas-to-write / min-replicas-max-lag (and their min-slaves-* names): writes
    are refused with -NOREPLICAS while fewer replicas than asked are online and acknowledged
    within max-lag seconds; reads, no-writes scripts and EXEC of reads go through."""
    master = start_master(server_factory)
    m, other = master.raw(), master.raw()
    ok(m, "SET", "x", "before")
    assert m("MULTI") == "OK" and m("INCR", "n") == "QUEUED"
    ok(other, "CONFIG", "SET", "min-replicas-to-write", 1)
    assert other("CONFIG", "GET", "min-slaves-to-write") == [b"min-slaves-to-write", b"1"]
    assert other("CONFIG", "GET", "min-replicas-max-lag") == [b"min-replicas-max-lag", b"10"]
    # A transaction queued before the setting changed is refused at EXEC.
    assert m("EXEC") == err(
        "EXECABORT Transaction discarded because of: " + NOREPLICAS)
    assert info_fields(m, "replication")["min_slaves_good_slaves"] == "0"
    assert m("SET", "x", 1) == err(NOREPLICAS)
    assert m("GET", "x") == b"before"
    assert m("MULTI") == "OK" and m("GET", "x") == "QUEUED"
    assert m("EXEC") == [b"before"]
    # Scripts: a write inside an unflagged one, any flagged one without no-writes.
    reply = m("EVAL", "return redis.call('set', KEYS[1], 1)", 1, "x")
    assert isinstance(reply, RespError) and str(reply).startswith(NOREPLICAS), reply
    assert m("EVAL", "#!lua\nreturn redis.call('get', KEYS[1])", 1, "x") == err(NOREPLICAS)
    assert m("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", 1, "x") == \
        b"before"
    assert m("EVAL", "return redis.call('get', KEYS[1])", 1, "x") == b"before"
    assert m("FUNCTION", "LOAD",
             "#!lua name=lib\nredis.register_function('f', function() return 1 end)") == \
        err(NOREPLICAS)
    # A pipeline's writes are refused one by one too.
    m.send_many([("SET", "p", i) for i in range(5)])
    assert [m.read() for _ in range(5)] == [err(NOREPLICAS)] * 5
    # max-lag 0 turns the check off, as in Redis.
    ok(m, "CONFIG", "SET", "min-replicas-max-lag", 0)
    ok(m, "SET", "x", 1)
    assert "min_slaves_good_slaves" not in info_fields(m, "replication")
    ok(m, "CONFIG", "SET", "min-slaves-max-lag", 2)

    replica = replica_factory(master)
    wait_for(lambda: info_fields(m, "replication")["min_slaves_good_slaves"] == "1",
             timeout=5, what="the replica to count as good")
    ok(m, "SET", "x", 2)
    ok(m, "CONFIG", "SET", "min-replicas-to-write", 2)
    assert m("SET", "x", 3) == err(NOREPLICAS)
    ok(m, "CONFIG", "SET", "min-replicas-to-write", 1)
    # A replica that stops acknowledging stops counting after max-lag seconds.
    replica.proc.send_signal(signal.SIGSTOP)
    try:
        wait_for(lambda: m("SET", "x", 4) == err(NOREPLICAS), timeout=8, interval=0.1,
                 what="writes to be refused once the replica lags")
    finally:
        replica.proc.send_signal(signal.SIGCONT)
    wait_for(lambda: m("SET", "x", 5) == "OK", timeout=8, interval=0.1,
             what="writes to be accepted once the replica acknowledges again")
    ok(m, "CONFIG", "SET", "min-replicas-to-write", 0)
