"""The append-only file (appendonly yes): Redis 7.0's multi-part AOF in dir/appendonlydir,
loaded at start-up after a restart or a kill -9, rewritten by BGREWRITEAOF and the
auto-aof-rewrite rules, turned on and off with CONFIG SET, moved between damselfly and
redis-server 7.0 both ways, cut after a crash mid-command (aof-load-truncated).

Validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis) where the behaviour is
Redis's.
"""

import os
import shutil
import signal
import threading
import time

import pytest

from conftest import ServerHandle, TARGET
from helpers import wait_for
from test_persistence import check_every_type, fill_every_type

AOF_DIR = "appendonlydir"
MANIFEST = "appendonly.aof.manifest"

needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None or TARGET != "damselfly",
                                 reason="needs redis-server, and damselfly as the target")


def aof_path(srv, name=""):
    return os.path.join(srv.workdir, AOF_DIR, name)


def manifest_lines(srv):
    with open(aof_path(srv, MANIFEST)) as f:
        return f.read().splitlines()


def incr_files(srv):
    return [line.split()[1] for line in manifest_lines(srv) if line.endswith("type i")]


def incr_bytes(srv):
    return b"".join(open(aof_path(srv, name), "rb").read() for name in incr_files(srv))


def persistence(c):
    return c.info("persistence")


def wait_rewritten(c, rewrites=None):
    """Waits for the AOF to be on with no rewrite running (and at least `rewrites` done:
    Redis counts the rewrite that turned the AOF on, not the base it creates at start-up)."""
    def done():
        p = persistence(c)
        return (p["aof_enabled"] == 1 and p["aof_rewrite_in_progress"] == 0
                and p["aof_rewrite_scheduled"] == 0
                and (rewrites is None or p["aof_rewrites"] >= rewrites))
    wait_for(done, timeout=10, what="the AOF rewrite")


def wait_in_aof(srv, marker):
    """Waits until `marker` (bytes) is in the incremental files: what came before it was
    written (a write reaches the file just after its reply)."""
    wait_for(lambda: marker in incr_bytes(srv), timeout=5, what=f"{marker!r} in the AOF")


def mark(srv, c, marker):
    """Writes `marker` in database 15 and waits for it to be in the AOF."""
    c.execute_command("SELECT", 15)
    c.set("marker", marker)
    c.execute_command("SELECT", 0)
    wait_in_aof(srv, marker.encode())


def kill9_and_start(srv):
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait(timeout=10)
    srv.close_clients()
    return srv.start()


def test_every_type_survives_a_kill(server_factory):
    srv = server_factory("--appendonly=yes")
    c = srv.client()
    wait_rewritten(c)
    assert manifest_lines(srv) == ["file appendonly.aof.1.base.rdb seq 1 type b",
                                   "file appendonly.aof.1.incr.aof seq 1 type i"]
    fill_every_type(c)
    mark(srv, c, "marker-1")
    srv = kill9_and_start(srv)
    c = srv.client()
    check_every_type(c)
    # It goes on appending to the same file, after a SELECT.
    c.set("after", "marker-2")
    wait_in_aof(srv, b"marker-2")
    srv = kill9_and_start(srv)
    assert srv.client().get("after") == b"marker-2"
    assert incr_files(srv) == ["appendonly.aof.1.incr.aof"]


def test_the_writes_replicas_get_rewritten_reach_the_aof(server_factory):
    """Commands whose replay would differ (time, chance, blocking) go to the AOF as their
    effects, as to replicas: the reloaded dataset is the one that was written."""
    srv = server_factory("--appendonly=yes")
    c = srv.client()
    wait_rewritten(c)
    c.rpush("q", "a", "b", "c")
    assert c.blpop("q", 1) == (b"q", b"a")
    ids = [c.xadd("s", {"f": i}) for i in range(5)]
    c.xgroup_create("s", "g", id="0")
    c.xreadgroup("g", "alice", {"s": ">"}, count=2)
    c.sadd("set", *range(20))
    popped = c.spop("set", 3)
    c.set("f", "1.5")
    c.incrbyfloat("f", "0.25")
    c.set("ttl", "v", ex=100)
    with c.pipeline(transaction=True) as p:
        p.incr("counter").lpush("tx", "1").execute()
    c.execute_command("SELECT", 9)
    c.set("nine", "9")
    c.execute_command("SELECT", 0)
    mark(srv, c, "marker-3")
    # (A consumer's seen-time is the replay's, on Redis too.)
    before = {k: c.dump(k) for k in c.keys("*") if k != b"s"}
    srv = kill9_and_start(srv)
    c = srv.client()
    assert {k: c.dump(k) for k in c.keys("*") if k != b"s"} == before
    assert c.lrange("q", 0, -1) == [b"b", b"c"]
    assert [e[0] for e in c.xrange("s")] == ids
    assert c.xpending("s", "g")["pending"] == 2
    assert not set(popped) & c.smembers("set") and c.scard("set") == 17
    assert c.get("f") == b"1.75"
    assert 90 < c.ttl("ttl") <= 100
    c.execute_command("SELECT", 9)
    assert c.get("nine") == b"9"


def test_bgrewriteaof_replaces_the_base_and_drops_old_files(server_factory):
    srv = server_factory("--appendonly=yes")
    c = srv.client()
    wait_rewritten(c)
    for i in range(100):
        c.set(f"k{i}", i)
    rewrites = persistence(c)["aof_rewrites"]
    assert srv.cli("BGREWRITEAOF") == "Background append only file rewriting started\n"
    wait_rewritten(c, rewrites=rewrites + 1)
    assert manifest_lines(srv) == ["file appendonly.aof.2.base.rdb seq 2 type b",
                                   "file appendonly.aof.2.incr.aof seq 2 type i"]
    assert sorted(os.listdir(aof_path(srv))) == [
        "appendonly.aof.2.base.rdb", "appendonly.aof.2.incr.aof", MANIFEST]
    p = persistence(c)
    assert p["aof_last_bgrewrite_status"] == "ok" and p["aof_last_write_status"] == "ok"
    assert p["aof_base_size"] > 0 and p["aof_current_size"] >= p["aof_base_size"]
    c.set("k5", "after")
    c.delete("k6")
    mark(srv, c, "marker-4")
    srv = kill9_and_start(srv)
    c = srv.client()
    assert c.dbsize() == 99
    assert c.get("k5") == b"after" and c.get("k6") is None and c.get("k99") == b"99"


def test_auto_rewrite_when_the_aof_doubles(server_factory):
    srv = server_factory("--appendonly=yes")
    c = srv.client()
    wait_rewritten(c)
    rewrites = persistence(c)["aof_rewrites"]
    c.config_set("auto-aof-rewrite-min-size", "100kb")
    assert c.config_get("auto-aof-rewrite-*") == {"auto-aof-rewrite-percentage": "100",
                                                  "auto-aof-rewrite-min-size": "102400"}
    for i in range(300):
        c.set(f"key{i}", "v" * 500)
    wait_for(lambda: persistence(c)["aof_rewrites"] > rewrites, timeout=10,
             what="an automatic rewrite")
    wait_rewritten(c)
    c.config_set("auto-aof-rewrite-percentage", 0)  # no more
    srv = kill9_and_start(srv)
    assert srv.client().dbsize() == 300


def test_config_set_appendonly_yes_writes_the_dataset_first(server_factory):
    srv = server_factory()
    c = srv.client()
    assert c.config_get("append*") == {"appendonly": "no", "appendfsync": "everysec",
                                       "appendfilename": "appendonly.aof",
                                       "appenddirname": "appendonlydir"}
    assert persistence(c)["aof_enabled"] == 0
    for i in range(50):
        c.rpush("list", i)
    c.config_set("appendonly", "yes")
    wait_rewritten(c)
    c.rpush("list", "after")
    wait_in_aof(srv, b"after")
    srv.extra_args = ["--appendonly=yes"]
    srv = kill9_and_start(srv)
    c = srv.client()
    assert c.llen("list") == 51 and c.lindex("list", -1) == b"after"
    # Turned off, the files stay as they were and writes no longer reach them.
    c.config_set("appendonly", "no")
    assert persistence(c)["aof_enabled"] == 0
    size = len(incr_bytes(srv))
    c.rpush("list", "not-in-the-aof")
    assert len(incr_bytes(srv)) == size


def test_a_new_incremental_file_starts_empty(server_factory):
    """A file left under the name the next incremental file takes (a crashed attempt's)
    is emptied, not appended to."""
    srv = server_factory()
    c = srv.client()
    os.mkdir(aof_path(srv))
    with open(aof_path(srv, "appendonly.aof.1.incr.aof"), "wb") as f:
        f.write(resp("SET", "stale", "1"))
    c.config_set("appendonly", "yes")
    wait_rewritten(c)
    mark(srv, c, "marker-8")
    srv.extra_args = ["--appendonly=yes"]
    srv = kill9_and_start(srv)
    c = srv.client()
    assert c.get("stale") is None
    c.execute_command("SELECT", 15)
    assert c.get("marker") == b"marker-8"


def test_a_command_cut_by_a_crash_is_dropped(server_factory):
    srv = server_factory("--appendonly=yes")
    c = srv.client()
    wait_rewritten(c)
    c.set("kept", "1")
    mark(srv, c, "marker-5")
    assert srv.stop() is None
    incr = aof_path(srv, incr_files(srv)[-1])
    whole = open(incr, "rb").read()
    # A transaction whose EXEC never came, then half a command.
    with open(incr, "ab") as f:
        f.write(b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$4\r\nlost\r\n$1\r\n1\r\n"
                b"*3\r\n$3\r\nSET\r\n$5\r\nhal")
    srv.start()
    c = srv.client()
    assert c.get("kept") == b"1" and c.get("lost") is None
    # Cut where the MULTI began (Redis: after the last whole command, and before the MULTI
    # at the next load).
    assert open(incr, "rb").read().startswith(whole)
    if TARGET == "damselfly":
        assert open(incr, "rb").read() == whole
    assert srv.stop() is None
    with open(incr, "ab") as f:
        f.write(b"*3\r\n$3\r\nSET\r\n$5\r\nhal")
    srv.extra_args = ["--appendonly=yes", "--aof_load_truncated=no"]
    srv.expect_exit = True
    with pytest.raises(RuntimeError, match="server did not start"):
        srv.start()
    assert srv.proc.returncode == 1


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


@pytest.mark.parametrize("preamble", [False, True], ids=["commands", "rdb-preamble"])
def test_a_pre_7_aof_is_upgraded(server_factory, preamble):
    """A Redis 6 appendonly.aof (commands, perhaps after an RDB preamble) becomes the base
    of a manifest in appendonlydir, as Redis 7.0 upgrades it."""
    srv = server_factory()
    c = srv.client()
    prefix = b""
    if preamble:
        c.set("from-rdb", "1")
        c.rpush("list", "a")
        assert c.save()
        prefix = open(os.path.join(srv.workdir, "dump.rdb"), "rb").read()
        os.remove(os.path.join(srv.workdir, "dump.rdb"))
    assert srv.stop() is None
    commands = (resp("SELECT", 0) + resp("SET", "from-aof", "1") + resp("RPUSH", "list", "b")
                + resp("SELECT", 3) + resp("SET", "three", "3"))
    with open(os.path.join(srv.workdir, "appendonly.aof"), "wb") as f:
        f.write(prefix + commands)
    srv.extra_args = ["--appendonly=yes"]
    srv.start()
    c = srv.client()
    assert c.get("from-aof") == b"1"
    assert c.lrange("list", 0, -1) == ([b"a", b"b"] if preamble else [b"b"])
    assert (c.get("from-rdb") == b"1") == preamble
    c.execute_command("SELECT", 3)
    assert c.get("three") == b"3"
    assert not os.path.exists(os.path.join(srv.workdir, "appendonly.aof"))
    assert manifest_lines(srv) == ["file appendonly.aof seq 1 type b",
                                   "file appendonly.aof.1.incr.aof seq 1 type i"]
    c.execute_command("SELECT", 0)
    mark(srv, c, "marker-7")
    srv = kill9_and_start(srv)
    assert srv.client().lrange("list", 0, -1)[-1] == b"b"


def test_appendfsync_always_keeps_every_acknowledged_write(server_factory):
    """With appendfsync always a reply leaves once its write is on disk: a kill -9 right
    after the replies loses none of them."""
    srv = server_factory("--appendonly=yes")
    c = srv.client()
    wait_rewritten(c)
    c.config_set("appendfsync", "always")
    assert c.config_get("appendfsync") == {"appendfsync": "always"}
    if srv.target == "damselfly":
        c.config_set("aof-write-delay", 100_000)  # a slow disk: 0.1 s per write
    with c.pipeline(transaction=False) as p:
        for i in range(500):
            p.set(f"k{i}", i)
        p.execute()
    c.incr("counter")
    with c.pipeline(transaction=True) as p:
        p.rpush("list", "a").rpush("list", "b").execute()
    c.eval("redis.call('set', 'from-script', 1)", 0)
    srv = kill9_and_start(srv)
    c = srv.client()
    assert c.dbsize() == 503
    assert c.get("k499") == b"499" and c.get("counter") == b"1"
    assert c.lrange("list", 0, -1) == [b"a", b"b"] and c.get("from-script") == b"1"
    assert c.config_get("appendfsync") == {"appendfsync": "everysec"}  # not a flag here
    with pytest.raises(Exception, match="argument"):
        c.config_set("appendfsync", "sometimes")


@pytest.mark.damselfly_only
def test_a_slow_disk_slows_the_writers_instead_of_growing_the_buffer(server_factory):
    """appendfsync everysec on a disk slower than the writes: once more than aof-buffer-limit
    bytes wait for it, a client's writing batches get their replies when the backlog is back
    under the limit, so the buffer stays near it (redis-server's write() blocks its main
    thread instead); readers are not held; every write reaches the file."""
    srv = server_factory("--appendonly=yes")
    c = srv.client()
    wait_rewritten(c)
    c.config_set("aof-buffer-limit", "1mb")
    assert c.config_get("aof-buffer-limit") == {"aof-buffer-limit": str(1 << 20)}
    c.config_set("aof-write-delay", 50_000)  # a slow disk: 0.05 s per write
    peak, stop = [0], threading.Event()

    def watch():
        w = srv.client()
        while not stop.is_set():
            peak[0] = max(peak[0], persistence(w)["aof_buffer_length"])
            assert w.get("k0:0") in (None, b"x" * 10_000)  # a reader is served meanwhile
            time.sleep(0.002)

    watcher = threading.Thread(target=watch)
    watcher.start()
    start = time.monotonic()
    try:
        for batch in range(20):  # 20 batches of 1 MB
            with c.pipeline(transaction=False) as p:
                for i in range(100):
                    p.set(f"k{batch}:{i}", "x" * 10_000)
                p.execute()
    finally:
        stop.set()
        watcher.join(timeout=10)
    elapsed = time.monotonic() - start
    # A batch may start before the backlog is seen, and one more is merged while its
    # client waits: the limit and two batches at most.
    assert 0 < peak[0] <= 3 << 20, peak[0]
    assert elapsed >= 0.75  # held: each batch past the limit waits for a write pass (0.05 s)
    c.config_set("aof-write-delay", 0)
    wait_for(lambda: persistence(c)["aof_buffer_length"] == 0, timeout=10, what="the backlog")
    srv = kill9_and_start(srv)
    c = srv.client()
    assert c.dbsize() == 2000 and c.get("k19:99") == b"x" * 10_000


@pytest.mark.damselfly_only
def test_the_base_is_always_rdb(server_factory):
    c = server_factory().client()
    assert c.config_get("aof-use-rdb-preamble") == {"aof-use-rdb-preamble": "yes"}
    with pytest.raises(Exception, match="immutable"):
        c.config_set("aof-use-rdb-preamble", "no")


@pytest.mark.damselfly_only
def test_writes_are_refused_while_the_aof_cannot_be_written(server_factory):
    """As Redis: MISCONF for writes and PING while the AOF's last write failed."""
    srv = server_factory("--appendonly=yes")
    c = srv.client()
    wait_rewritten(c)
    c.set("before", "1")
    # The rewrite's new incremental file is the disk that is always full.
    os.symlink("/dev/full", aof_path(srv, "appendonly.aof.2.incr.aof"))
    rewrites = persistence(c)["aof_rewrites"]
    c.execute_command("BGREWRITEAOF")
    wait_rewritten(c, rewrites=rewrites + 1)
    c.set("accepted", "1")  # before the failure is known
    wait_for(lambda: persistence(c)["aof_last_write_status"] == "err", timeout=5,
             what="the write error")
    with pytest.raises(Exception, match="MISCONF Errors writing to the AOF file: No space left"):
        c.set("refused", "1")
    with pytest.raises(Exception, match="MISCONF"):
        c.ping()
    with pytest.raises(Exception, match="MISCONF"):
        c.eval("return redis.call('set', 'x', 1)", 0)
    assert c.get("before") == b"1"  # reads go on
    # Turned off, nothing can fail any more.
    c.config_set("appendonly", "no")
    c.set("after", "1")
    assert c.ping()


@needs_redis
def test_redis_server_and_damselfly_load_each_others_aof(server_factory):
    srv = server_factory("--appendonly=yes")
    c = srv.client()
    wait_rewritten(c)
    fill_every_type(c)
    mark(srv, c, "marker-6")
    assert srv.stop() is None
    redis_srv = ServerHandle(target="redis")
    shutil.copytree(aof_path(srv), os.path.join(redis_srv.workdir, AOF_DIR))
    redis_srv.extra_args = ["--appendonly=yes"]
    try:
        redis_srv.start()
        r = redis_srv.client()
        check_every_type(r)
        r.set("from-redis", "1")
        r.lpush("list", "pushed-by-redis")
        assert redis_srv.stop() is None
        shutil.rmtree(aof_path(srv))
        shutil.copytree(os.path.join(redis_srv.workdir, AOF_DIR), aof_path(srv))
    finally:
        redis_srv.stop()
        redis_srv.cleanup_files()
    srv.start()
    c = srv.client()
    assert c.get("from-redis") == b"1"
    assert c.lpop("list") == b"pushed-by-redis"
    c.delete("from-redis")
    check_every_type(c)
