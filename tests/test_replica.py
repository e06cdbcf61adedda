"""Replication, the replica's side: the server under test follows a master (REPLICAOF host
port, or --replicaof at start-up) and converges with it: the full resync (a sized RDB bulk, or
the EOF-marked form of a diskless master), the command stream (every family, MULTI/EXEC,
SELECT), PSYNC continuations after a dropped link, REPLICAOF NO ONE, read-only refusals,
masterauth, a master that goes away, ROLE, INFO replication and CLIENT LIST's master client.

The master is a redis-server 7.0, except in the tests that name a master of the target's own
kind (damselfly following damselfly). Convergence is test_replication's: same keys per db,
types, values, digests and TTLs after WAIT 1 on the master.

Validated against redis-server 7.0 as the replica (DAMSELFLY_TEST_TARGET=redis).
"""

import re
import signal
import socket
import time

import pytest

from conftest import HOST, TARGET, ServerHandle, _server_factory
from helpers import info_fields, wait_for
from resp_client import encode_command
from test_replication import (LINK_UP_TIMEOUT_S, assert_converged, edge_workload,
                              fill_every_type, ok, rewritten_commands_workload,
                              streaming_workload, sync_replica)


@pytest.fixture
def redis_master_factory(request):
    """redis_master_factory(*flags): a redis-server master (damselfly-style flags), with DEBUG
    allowed and disk-based full syncs unless the flags say otherwise."""
    factory = _server_factory(request, lambda extra: ServerHandle(extra, target="redis"))
    start = next(factory)

    def start_master(*extra):
        defaults = ["--enable-debug-command=local", "--repl-diskless-sync=no"]
        names = {arg.split("=")[0] for arg in extra}
        return start(*[d for d in defaults if d.split("=")[0] not in names], *extra)

    yield start_master
    next(factory, None)


# redis-server as the replica under test: DEBUG DIGEST and DIGEST-VALUE compare the data.
TARGET_FLAGS = ("--enable-debug-command=local",) if TARGET == "redis" else ()


def start_server(server_factory, *extra):
    return server_factory(*TARGET_FLAGS, *extra)


def replica_of(server_factory, master, *extra):
    """The server under test, made a replica of master with REPLICAOF; waits for the link."""
    replica = start_server(server_factory, *extra)
    assert replica.raw()("REPLICAOF", HOST, master.port) == "OK"
    wait_link_up(replica)
    return replica


def link_status(replica):
    return info_fields(replica.raw(), "replication").get("master_link_status")


def wait_link_up(replica, timeout=LINK_UP_TIMEOUT_S):
    wait_for(lambda: link_status(replica) == "up", timeout=timeout, interval=0.05,
             what=f"{replica} to report master_link_status:up")


def wait_link_down(replica, timeout=LINK_UP_TIMEOUT_S):
    wait_for(lambda: link_status(replica) == "down", timeout=timeout, interval=0.05,
             what=f"{replica} to report master_link_status:down")


def test_full_sync_then_stream_from_a_redis_master(redis_master_factory, server_factory):
    master = redis_master_factory()
    m = master.raw()
    fill_every_type(m)
    replica = replica_of(server_factory, master)
    space = assert_converged(master, replica)
    assert set(space) == {0, 1, 7, 15}
    streaming_workload(m)
    assert_converged(master, replica)


def test_diskless_master_sends_the_eof_form(redis_master_factory, server_factory):
    """A diskless master streams the file as $EOF:<40-byte mark> ... <mark> to a replica that
    said capa eof."""
    master = redis_master_factory("--repl-diskless-sync=yes", "--repl-diskless-sync-delay=0")
    m = master.raw()
    fill_every_type(m)
    replica = replica_of(server_factory, master)
    assert_converged(master, replica)
    assert "diskless" in master.log_text().lower()


def test_edge_cases_of_the_stream(redis_master_factory, server_factory):
    master = redis_master_factory()
    replica = replica_of(server_factory, master)
    edge_workload(master.raw(), master.raw())
    assert_converged(master, replica)


def test_commands_the_master_rewrites(redis_master_factory, server_factory):
    """XADD with the ID it took, approximate trims as "MAXLEN = n" (with the LIMIT Redis
    keeps), group reads as XCLAIM and XGROUP SETID, blocking pops as pops."""
    master = redis_master_factory()
    replica = replica_of(server_factory, master)
    rewritten_commands_workload(master.raw())
    assert_converged(master, replica)


def test_transactions_and_scripts_of_the_master(redis_master_factory, server_factory):
    master = redis_master_factory()
    replica = replica_of(server_factory, master)
    m = master.raw()
    ok(m, "MULTI")
    for i in range(100):
        m("RPUSH", "tx:list", i)
        m("INCR", "tx:counter")
    assert len(ok(m, "EXEC")) == 200
    ok(m, "EVAL", "for i=1,500 do redis.call('SET', 'lua:'..i, i) end return 1", 0)
    ok(m, "SELECT", 5)
    ok(m, "SET", "in5", "five")
    assert_converged(master, replica)
    r = replica.raw()
    assert r("LLEN", "tx:list") == 100 and r("GET", "tx:counter") == b"100"
    ok(r, "SELECT", 5)
    assert r("GET", "in5") == b"five"


def test_many_keys_pipelined(redis_master_factory, server_factory):
    master = redis_master_factory()
    m = master.raw()
    m.send_many([("SET", f"before:{i}", "v" * (i % 50)) for i in range(20000)])
    for _ in range(20000):
        assert m.read() == "OK"
    replica = replica_of(server_factory, master)
    m.send_many([("HSET", f"after:{i}", "f", i) for i in range(20000)])
    for _ in range(20000):
        assert m.read() == 1
    sync_replica(master)
    r = replica.raw()
    assert r("DBSIZE") == 40000
    assert r("DEBUG", "DIGEST") == m("DEBUG", "DIGEST")


def test_damselfly_follows_its_own_kind(server_factory):
    """A master of the target's own kind: damselfly following damselfly."""
    master = start_server(server_factory, "--proactor_threads=4" if TARGET == "damselfly" else
                          "--repl-diskless-sync=no")
    m = master.raw()
    fill_every_type(m)
    replica = replica_of(server_factory, master)
    streaming_workload(m)
    rewritten_commands_workload(m)
    assert_converged(master, replica)


def test_read_only_replica_refuses_writes(redis_master_factory, server_factory):
    master = redis_master_factory()
    replica = replica_of(server_factory, master)
    ok(master.raw(), "SET", "k", "from master")
    sync_replica(master)
    r = replica.raw()
    readonly = "READONLY You can't write against a read only replica."
    for command in (("SET", "k", "v"), ("DEL", "k"), ("LPUSH", "l", 1), ("INCR", "n"),
                    ("EXPIRE", "k", 10), ("FLUSHALL",)):
        reply = r(*command)
        assert str(reply) == readonly, (command, reply)
    # Pipelined writes too (the dispatcher runs a pipeline's commands as one batch).
    r.send_many([("GET", "k"), ("SET", "a", 1), ("SET", "b", 2), ("GET", "k")])
    replies = [r.read() for _ in range(4)]
    assert replies[0] == replies[3] == b"from master"
    assert [str(x) for x in replies[1:3]] == [readonly, readonly]
    assert r("GET", "k") == b"from master" and r("EXISTS", "a", "b") == 0
    assert r("CONFIG", "GET", "replica-read-only") == [b"replica-read-only", b"yes"]
    ok(r, "CONFIG", "SET", "replica-read-only", "no")
    assert r("SET", "local", "1") == "OK"
    assert r("CONFIG", "GET", "slave-read-only") == [b"slave-read-only", b"no"]
    ok(r, "CONFIG", "SET", "slave-read-only", "yes")
    assert str(r("SET", "local", "2")) == readonly


def test_replica_ignores_min_replicas_to_write(redis_master_factory, server_factory):
    """min-replicas-to-write refuses a master's writes, never a replica's (as in Redis)."""
    master = redis_master_factory()
    replica = replica_of(server_factory, master)
    r = replica.raw()
    ok(r, "CONFIG", "SET", "replica-read-only", "no")
    ok(r, "CONFIG", "SET", "min-replicas-to-write", 1)
    ok(r, "SET", "local", 1)
    ok(r, "REPLICAOF", "NO", "ONE")
    assert str(r("SET", "local", 2)) == "NOREPLICAS Not enough good replicas to write."
    ok(r, "CONFIG", "SET", "min-replicas-to-write", 0)
    ok(r, "SET", "local", 3)


def test_read_only_replica_refuses_writes_of_scripts_and_transactions(redis_master_factory,
                                                                      server_factory):
    master = redis_master_factory()
    replica = replica_of(server_factory, master)
    ok(master.raw(), "SET", "k", "v")
    sync_replica(master)
    r = replica.raw()
    reply = r("EVAL", "return redis.call('SET', 'x', '1')", 0)
    assert str(reply).startswith("READONLY You can't write against a read only replica."), reply
    # A script that declares no flags may write: refused before it runs.
    assert str(r("EVAL", "#!lua\nreturn redis.call('GET', 'k')", 0)) == (
        "READONLY You can't write against a read only replica.")
    assert r("EVAL", "#!lua flags=no-writes\nreturn redis.call('GET', 'k')", 0) == b"v"
    assert r("EVAL", "return redis.call('GET', 'k')", 0) == b"v"
    library = ("#!lua name=lib\n"
               "redis.register_function('w', function(keys) return redis.call('SET', keys[1], 1) "
               "end)\nredis.register_function{function_name='r', flags={'no-writes'}, "
               "callback=function(keys) return redis.call('GET', keys[1]) end}")
    assert str(r("FUNCTION", "LOAD", library)).startswith("READONLY")
    ok(master.raw(), "FUNCTION", "LOAD", library)  # a replica gets its functions from there
    sync_replica(master)
    assert str(r("FCALL", "w", 1, "x")) == (
        "READONLY You can't write against a read only replica.")
    assert r("FCALL", "r", 1, "k") == b"v"
    for change in (("FUNCTION", "DELETE", "lib"), ("FUNCTION", "FLUSH")):
        assert str(r(*change)) == "READONLY You can't write against a read only replica."
    assert r("FCALL", "r", 1, "k") == b"v"
    assert r("MULTI") == "OK"
    assert str(r("SET", "x", "1")) == "READONLY You can't write against a read only replica."
    assert r("GET", "k") == "QUEUED"
    assert str(r("EXEC")).startswith("EXECABORT")
    assert r("EXISTS", "x") == 0


def test_role_info_and_the_master_client(redis_master_factory, server_factory):
    master = redis_master_factory()
    replica = replica_of(server_factory, master)
    m = master.raw()
    ok(m, "SET", "x", "1")
    sync_replica(master)
    r = replica.raw()
    fields = info_fields(r, "replication")
    m_fields = info_fields(m, "replication")
    assert fields["role"] == "slave"
    assert fields["master_host"] == HOST and fields["master_port"] == str(master.port)
    assert fields["master_link_status"] == "up" and fields["master_sync_in_progress"] == "0"
    assert fields["slave_read_only"] == "1"
    assert fields["master_replid"] == m_fields["master_replid"]
    wait_for(lambda: info_fields(r, "replication")["slave_repl_offset"] ==
             info_fields(m, "replication")["master_repl_offset"], timeout=5,
             what="the replica's offset to reach the master's")
    role = r("ROLE")
    assert role[:4] == [b"slave", HOST.encode(), master.port, b"connected"], role
    assert role[4] >= 0
    listed = r("CLIENT", "LIST", "TYPE", "master").decode().splitlines()
    assert len(listed) == 1 and " flags=M " in listed[0], listed
    assert re.search(rf" addr={re.escape(HOST)}:{master.port} ", listed[0]), listed
    assert f":{master.port} " not in r("CLIENT", "LIST", "TYPE", "normal").decode()
    # The master sees a replica at the port the replica listens on.
    assert f"port={replica.port}," in m_fields["slave0"]
    assert r("CONFIG", "GET", "replicaof") == [b"replicaof", f"{HOST} {master.port}".encode()]


def test_replicaof_replies(redis_master_factory, server_factory):
    master = redis_master_factory()
    replica = replica_of(server_factory, master)
    r = replica.raw()
    assert r("REPLICAOF", HOST, master.port) == "OK Already connected to specified master"
    assert r("SLAVEOF", HOST, master.port) == "OK Already connected to specified master"
    assert str(r("REPLICAOF", HOST, "notaport")) == "ERR Invalid master port"
    assert str(r("REPLICAOF", HOST, 70000)) == "ERR Invalid master port"
    assert str(r("REPLICAOF", HOST)).startswith("ERR wrong number of arguments")
    assert link_status(replica) == "up"


def test_replicaof_no_one_keeps_the_data_and_writes(redis_master_factory, server_factory):
    master = redis_master_factory()
    m = master.raw()
    fill_every_type(m)
    replica = replica_of(server_factory, master)
    assert_converged(master, replica)
    r = replica.raw()
    assert r("REPLICAOF", "NO", "ONE") == "OK"
    assert info_fields(r, "replication")["role"] == "master"
    assert r("ROLE")[0] == b"master"
    assert r("CONFIG", "GET", "replicaof") == [b"replicaof", b""]
    assert r("GET", "str") == b"hello"
    assert r("SET", "mine", "1") == "OK"
    ok(m, "SET", "after-promotion", "1")
    time.sleep(0.2)
    assert r("EXISTS", "after-promotion") == 0
    # Following again replaces what it wrote meanwhile (a full resync).
    assert r("REPLICAOF", HOST, master.port) == "OK"
    wait_link_up(replica)
    assert_converged(master, replica)
    assert r("EXISTS", "mine") == 0


def test_link_kill_resumes_with_a_continuation_in_the_same_db(redis_master_factory,
                                                               server_factory):
    """The master drops the link; the replica asks PSYNC <replid> <offset+1> and continues,
    in the db the stream had selected (the master sends no new SELECT)."""
    master = redis_master_factory()
    replica = replica_of(server_factory, master)
    m = master.raw()
    ok(m, "SELECT", 3)
    ok(m, "SET", "db3:before", "1")
    sync_replica(master)
    assert m("CLIENT", "KILL", "TYPE", "replica") == 1
    for i in range(50):
        ok(m, "SET", f"db3:while:{i}", i)
    wait_link_up(replica)
    assert_converged(master, replica)
    log = master.log_text()
    assert "Partial resynchronization request" in log and "accepted" in log, log[-3000:]
    assert log.count("Starting BGSAVE for SYNC") == 1, log[-3000:]


def test_client_kill_of_the_master_client_reconnects(redis_master_factory, server_factory):
    master = redis_master_factory()
    replica = replica_of(server_factory, master)
    r = replica.raw()
    assert r("CLIENT", "KILL", "TYPE", "master") == 1
    # The link goes, and comes back with a continuation.
    wait_for(lambda: "Partial resynchronization request" in master.log_text(), timeout=10,
             what="the replica to ask for a continuation")
    wait_link_up(replica)
    ok(master.raw(), "SET", "after", "kill")
    assert_converged(master, replica)


def test_master_down_then_back(redis_master_factory, server_factory):
    master = redis_master_factory()
    m = master.raw()
    ok(m, "SET", "k", "before")
    replica = replica_of(server_factory, master)
    sync_replica(master)
    master.proc.send_signal(signal.SIGKILL)
    master.proc.wait()
    wait_link_down(replica)
    r = replica.raw()
    assert r("GET", "k") == b"before"  # replica-serve-stale-data yes
    fields = info_fields(r, "replication")
    assert int(fields["master_link_down_since_seconds"]) >= 0
    assert r("ROLE")[3] in (b"connect", b"connecting")
    master.expect_exit = True


def test_stale_replica_refuses_commands_when_told(redis_master_factory, server_factory):
    """replica-serve-stale-data no: while the link is down, only commands flagged stale
    (INFO, CONFIG, REPLICAOF...; not PING) run."""
    master = redis_master_factory()
    ok(master.raw(), "SET", "k", "v")
    replica = replica_of(server_factory, master)
    sync_replica(master)
    r = replica.raw()
    ok(r, "CONFIG", "SET", "replica-serve-stale-data", "no")
    assert r("CONFIG", "GET", "slave-serve-stale-data") == [b"slave-serve-stale-data", b"no"]
    assert r("GET", "k") == b"v"  # the link is up
    master.proc.send_signal(signal.SIGKILL)
    master.proc.wait()
    master.expect_exit = True
    wait_link_down(replica)
    masterdown = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
    assert str(r("GET", "k")) == masterdown
    assert str(r("DBSIZE")) == masterdown
    r.send_many([("GET", "k"), ("GET", "k"), ("PING",)])  # PING has no stale flag
    assert [str(r.read()) for _ in range(3)] == [masterdown] * 3
    assert info_fields(r, "replication")["master_link_status"] == "down"
    ok(r, "CONFIG", "SET", "replica-serve-stale-data", "yes")
    assert r("GET", "k") == b"v"
    ok(r, "CONFIG", "SET", "replica-serve-stale-data", "no")
    assert r("REPLICAOF", "NO", "ONE") == "OK"
    assert r("GET", "k") == b"v"  # a master again


def test_master_with_a_password(redis_master_factory, server_factory):
    master = redis_master_factory("--requirepass=secret")
    m = master.raw()
    assert m("AUTH", "secret") == "OK"
    ok(m, "SET", "k", "v")
    replica = start_server(server_factory)
    r = replica.raw()
    assert r("REPLICAOF", HOST, master.port) == "OK"
    time.sleep(1.5)
    assert link_status(replica) == "down"  # NOAUTH: the link never comes up
    ok(r, "CONFIG", "SET", "masterauth", "secret")
    assert r("CONFIG", "GET", "masterauth") == [b"masterauth", b"secret"]
    wait_link_up(replica)  # the next attempt, a second later
    assert_converged(master, replica)


def test_repl_timeout_drops_a_silent_master(redis_master_factory, server_factory):
    master = redis_master_factory()
    replica = replica_of(server_factory, master)
    r = replica.raw()
    ok(r, "CONFIG", "SET", "repl-timeout", 2)
    assert r("CONFIG", "GET", "repl-timeout") == [b"repl-timeout", b"2"]
    master.proc.send_signal(signal.SIGSTOP)
    try:
        wait_link_down(replica, timeout=10)
    finally:
        master.proc.send_signal(signal.SIGCONT)
    wait_link_up(replica)


@pytest.mark.damselfly_only
def test_replicaof_flag_at_start_up(redis_master_factory, server_factory):
    master = redis_master_factory()
    fill_every_type(master.raw())
    replica = server_factory(f"--replicaof={HOST} {master.port}")
    wait_link_up(replica)
    assert_converged(master, replica)


@pytest.mark.damselfly_only
def test_replicaof_flag_must_be_host_and_port():
    bad = ServerHandle(["--replicaof=localhost"])
    bad.expect_exit = True
    with pytest.raises(RuntimeError, match="server did not start"):
        bad.start()
    assert "--replicaof must be \"host port\"" in bad.log_text()
    bad.cleanup_files()


# --------------------------------------------------------------------------- a scripted master


# An RDB with no key: header, EOF opcode, a zero checksum (not checked).
EMPTY_RDB = b"REDIS0009\xff" + b"\x00" * 8
REPLID = "a" * 40


class ScriptedMaster:
    """The test plays the master on a socket: it answers the handshake and sends what the test
    says, so that offsets, PSYNC arguments and the ACKs can be checked byte for byte."""

    def __init__(self):
        self.listener = socket.create_server((HOST, 0))
        self.listener.settimeout(LINK_UP_TIMEOUT_S)
        self.port = self.listener.getsockname()[1]
        self.conn = None
        self.buf = b""

    def accept(self):
        if self.conn is not None:
            self.conn.close()
        self.conn, _ = self.listener.accept()
        self.conn.settimeout(10)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            data = self.conn.recv(65536)
            assert data, "the replica closed the link"
            self.buf += data
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read_command(self):
        header = self._line()
        assert header.startswith(b"*"), header
        args = []
        for _ in range(int(header[1:])):
            length = int(self._line()[1:])
            while len(self.buf) < length + 2:
                self.buf += self.conn.recv(65536)
            args.append(self.buf[:length])
            self.buf = self.buf[length + 2:]
        return args

    def handshake(self):
        """Answers PING, AUTH and REPLCONF; returns the PSYNC (or SYNC) command."""
        while True:
            args = self.read_command()
            name = args[0].upper()
            if name in (b"PSYNC", b"SYNC"):
                return args
            self.send(b"+PONG\r\n" if name == b"PING" else b"+OK\r\n")

    def read_ack(self):
        args = self.read_command()
        assert [a.upper() for a in args[:2]] == [b"REPLCONF", b"ACK"], args
        return int(args[2])

    def send(self, data):
        self.conn.sendall(data)

    def close(self):
        for s in (self.conn, self.listener):
            if s is not None:
                s.close()


@pytest.fixture
def scripted_master():
    master = ScriptedMaster()
    yield master
    master.close()


def assert_first_psync(psync):
    """A replica that never followed this master: damselfly asks PSYNC ? -1, redis-server
    PSYNC with its own replid and offset + 1 (its own history, which a master that shares
    it could continue); either gets a full resync from any other master."""
    assert psync[0] == b"PSYNC" and len(psync) == 3, psync
    assert psync[1:] == [b"?", b"-1"] or len(psync[1]) == 40, psync


def commands(*cmds):
    return b"".join(encode_command(*c) for c in cmds)


def test_scripted_master_offsets_acks_and_an_interrupted_transaction(scripted_master,
                                                                     server_factory):
    fm = scripted_master
    replica = start_server(server_factory)
    r = replica.raw()
    assert r("REPLICAOF", HOST, fm.port) == "OK"
    fm.accept()
    assert_first_psync(fm.handshake())
    fm.send(f"+FULLRESYNC {REPLID} 100\r\n".encode())
    fm.send(b"\n")  # a keep-alive while the snapshot is made
    fm.send(b"$%d\r\n" % len(EMPTY_RDB) + EMPTY_RDB)
    stream = commands(("SELECT", 2), ("SET", "a", "1"), ("PING",), ("RPUSH", "l", "x", "y"))
    fm.send(stream)
    wait_link_up(replica)
    ok(r, "SELECT", 2)
    wait_for(lambda: r("LLEN", "l") == 2, timeout=5, what="the stream to be applied")
    assert r("GET", "a") == b"1"
    # GETACK is answered with the offset of what came before it; the ACK a second later
    # counts the GETACK too.
    getack = commands(("REPLCONF", "GETACK", "*"))
    fm.send(getack)
    offset = 100 + len(stream)
    acks = [fm.read_ack()]
    while acks[-1] != offset:
        acks.append(fm.read_ack())
    assert all(a <= offset for a in acks), acks
    offset += len(getack)
    while fm.read_ack() != offset:
        pass
    # The link drops inside a transaction: the replica asks to continue from its MULTI, in
    # the db the stream selected.
    fm.send(commands(("MULTI",), ("SET", "b", "1")))
    time.sleep(0.3)
    assert r("EXISTS", "b") == 0
    fm.accept()
    assert fm.handshake() == [b"PSYNC", REPLID.encode(), str(offset + 1).encode()]
    fm.send(b"+CONTINUE\r\n")
    tx = commands(("MULTI",), ("SET", "b", "1"), ("INCR", "n"), ("EXEC",))
    fm.send(tx)
    wait_for(lambda: r("GET", "b") == b"1", timeout=5, what="the transaction to be applied")
    assert r("GET", "n") == b"1" and r("GET", "a") == b"1"
    offset += len(tx)
    while fm.read_ack() != offset:
        pass
    assert info_fields(r, "replication")["slave_repl_offset"] == str(offset)


def test_scripted_master_eof_form_and_bad_replies(scripted_master, server_factory):
    fm = scripted_master
    replica = start_server(server_factory)
    r = replica.raw()
    assert r("REPLICAOF", HOST, fm.port) == "OK"
    # A PSYNC refused: the link is retried a second later.
    fm.accept()
    fm.handshake()
    fm.send(b"-ERR no, not now\r\n")
    fm.accept()
    assert_first_psync(fm.handshake())
    # Diskless: $EOF:<mark>, the file, the mark; what follows is the stream.
    mark = b"0123456789abcdefghij0123456789abcdefghij"
    fm.send(f"+FULLRESYNC {REPLID} 0\r\n".encode() + b"$EOF:" + mark + b"\r\n")
    fm.send(EMPTY_RDB[:5])
    time.sleep(0.1)
    fm.send(EMPTY_RDB[5:] + mark)
    assert fm.read_ack() == 0
    fm.send(commands(("SET", "k", "v")))
    wait_for(lambda: r("GET", "k") == b"v", timeout=5, what="the stream to be applied")
    # A protocol error in the stream drops the link; not knowing where the stream stands,
    # the replica asks for a full resync.
    fm.send(b"*1\r\n$x\r\n")
    fm.accept()
    assert fm.handshake() == [b"PSYNC", b"?", b"-1"]
