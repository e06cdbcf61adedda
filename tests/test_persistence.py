"""Snapshots over the wire: SAVE, BGSAVE, LASTSAVE, restarts that load dump.rdb, files that
move between damselfly and redis-server 7.0 both ways, SHUTDOWN SAVE/NOSAVE, SIGTERM with
save rules, CONFIG of dir/dbfilename/save, kill -9 during a save, corrupt files.

Validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis) where the behaviour is
Redis's; the cross-server tests need redis-server and are skipped without it.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

from conftest import ServerHandle, TARGET, free_port
from helpers import wait_for


def fill_every_type(c):
    c.set("str", "hello")
    c.set("int", 12345)
    c.set("big", "x" * 5000)
    c.set("ttl", "v", ex=1000)
    c.rpush("list", *[f"e{i}" for i in range(300)])
    c.rpush("smalllist", "a", "b")
    c.hset("hash", mapping={f"f{i}": f"v{i}" for i in range(5)})
    c.hset("bighash", mapping={f"f{i}": f"v{i}" * 20 for i in range(300)})
    c.sadd("intset", 1, 2, 3)
    c.sadd("strset", "x", "y")
    c.sadd("bigset", *[f"m{i}" for i in range(300)])
    c.zadd("zset", {"a": 1.5, "b": -2})
    c.zadd("bigzset", {f"m{i}": i / 3 for i in range(300)})
    c.xadd("stream", {"f": "v"}, id="1-1")
    c.xadd("stream", {"f": "w", "g": "x"}, id="2-0")
    c.execute_command("SELECT", 5)
    c.set("db5", "five")
    c.execute_command("SELECT", 0)


def check_every_type(c):
    assert c.get("str") == b"hello"
    assert c.get("int") == b"12345"
    assert c.get("big") == b"x" * 5000
    assert 990 < c.ttl("ttl") <= 1000
    assert c.lrange("list", 0, -1) == [f"e{i}".encode() for i in range(300)]
    assert c.lrange("smalllist", 0, -1) == [b"a", b"b"]
    assert c.hgetall("hash") == {f"f{i}".encode(): f"v{i}".encode() for i in range(5)}
    assert c.hlen("bighash") == 300 and c.hget("bighash", "f7") == b"v7" * 20
    assert c.smembers("intset") == {b"1", b"2", b"3"}
    assert c.smembers("strset") == {b"x", b"y"}
    assert c.scard("bigset") == 300
    assert c.zrange("zset", 0, -1, withscores=True) == [(b"b", -2.0), (b"a", 1.5)]
    assert c.zscore("bigzset", "m7") == pytest.approx(7 / 3)
    assert c.xrange("stream") == [(b"1-1", {b"f": b"v"}), (b"2-0", {b"f": b"w", b"g": b"x"})]
    c.execute_command("SELECT", 5)
    assert c.get("db5") == b"five"
    c.execute_command("SELECT", 0)
    assert c.dbsize() == 14


def restart(srv):
    assert srv.stop() is None
    return srv.start()


def test_save_then_restart_loads_every_type(server_factory):
    srv = server_factory()
    c = srv.client()
    fill_every_type(c)
    assert c.save() is True
    assert os.path.exists(os.path.join(srv.workdir, "dump.rdb"))
    srv = restart(srv)
    check_every_type(srv.client())


def test_bgsave_and_lastsave(server_factory):
    srv = server_factory()
    c = srv.client()
    before = c.lastsave()
    time.sleep(1.1)
    c.set("k", "v")
    assert c.info("persistence")["rdb_changes_since_last_save"] >= 1
    assert c.execute_command("BGSAVE") in (b"Background saving started", "Background saving started",
                                           True)
    wait_for(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0)
    info = c.info("persistence")
    assert info["rdb_last_bgsave_status"] == "ok"
    assert info["rdb_changes_since_last_save"] == 0
    assert c.lastsave() > before
    with pytest.raises(Exception, match="syntax error"):
        c.execute_command("BGSAVE", "NOW")


def test_config_of_dir_dbfilename_and_save(server_factory, tmp_path):
    c = server_factory().client()
    with pytest.raises(Exception, match="can't set protected config"):
        c.config_set("dir", str(tmp_path))
    with pytest.raises(Exception, match="can't set protected config"):
        c.config_set("dbfilename", "x.rdb")
    srv = server_factory("--enable_protected_configs")
    c = srv.client()
    assert c.config_set("dbfilename", "other.rdb")
    assert c.config_get("dbfilename") == {"dbfilename": "other.rdb"}
    with pytest.raises(Exception, match="dbfilename can't be a path, just a filename"):
        c.config_set("dbfilename", "a/b.rdb")
    assert c.config_set("dir", str(tmp_path))
    assert c.config_get("dir") == {"dir": str(tmp_path)}
    with pytest.raises(Exception, match="No such file or directory"):
        c.config_set("dir", str(tmp_path / "missing"))
    c.set("k", "v")
    assert c.save()
    assert (tmp_path / "other.rdb").exists()
    assert c.config_set("save", "3600 1 300 100")
    assert c.config_get("save") == {"save": "3600 1 300 100"}
    with pytest.raises(Exception, match="Invalid save parameters"):
        c.config_set("save", "3600")
    assert c.config_set("save", "")
    assert c.config_get("save") == {"save": ""}
    assert c.config_set("rdbcompression", "no")
    assert c.config_get("rdbcompression") == {"rdbcompression": "no"}


MISCONF_RDB = "MISCONF Redis is configured to save RDB snapshots"


def test_a_failed_bgsave_refuses_writes_while_save_rules_are_set(server_factory, tmp_path):
    """stop-writes-on-bgsave-error (on by default): after a background save fails, writes
    and PING get MISCONF while save rules are set, until the setting is turned off, the
    rules are cleared or a save succeeds."""
    gone = tmp_path / "gone"
    gone.mkdir()
    srv = server_factory("--enable_protected_configs", "--save=3600 1")
    c = srv.client()
    assert c.config_get("stop-writes-on-bgsave-error") == {"stop-writes-on-bgsave-error": "yes"}
    c.set("k", "v")
    assert c.config_set("dir", str(gone))
    gone.rmdir()  # the server's working directory is no more: the save cannot be written
    c.execute_command("BGSAVE")
    wait_for(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0)
    assert c.info("persistence")["rdb_last_bgsave_status"] == "err"
    for command in (("SET", "k", "w"), ("PING",)):
        with pytest.raises(Exception, match=MISCONF_RDB):
            c.execute_command(*command)
    assert c.get("k") == b"v"  # reads go on
    assert c.config_set("stop-writes-on-bgsave-error", "no")
    assert c.set("k", "w")
    assert c.config_set("stop-writes-on-bgsave-error", "yes")
    with pytest.raises(Exception, match=MISCONF_RDB):
        c.set("k", "x")
    assert c.config_set("save", "")
    assert c.set("k", "x")
    assert c.config_set("save", "3600 1")
    with pytest.raises(Exception, match=MISCONF_RDB):
        c.set("k", "y")
    assert c.config_set("dir", str(tmp_path))
    c.execute_command("BGSAVE")
    wait_for(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0)
    assert c.info("persistence")["rdb_last_bgsave_status"] == "ok"
    assert c.set("k", "y")


def test_save_rules_save_by_themselves(server_factory):
    srv = server_factory("--save=1 1")
    c = srv.client()
    c.set("k", "v")
    wait_for(lambda: c.info("persistence")["rdb_changes_since_last_save"] == 0, timeout=5)
    assert os.path.exists(os.path.join(srv.workdir, "dump.rdb"))


@pytest.mark.damselfly_only
def test_shutdown_save_nosave_and_sigterm(server_factory):
    srv = server_factory()
    c = srv.client()
    c.set("k", "v1")
    srv.expect_exit = True
    try:
        c.shutdown(save=True)
    except Exception:  # noqa: BLE001 - the connection closes
        pass
    srv.proc.wait(timeout=10)
    srv.start()
    c = srv.client()
    assert c.get("k") == b"v1"
    c.set("k", "v2")
    try:
        c.shutdown(nosave=True)
    except Exception:  # noqa: BLE001
        pass
    srv.proc.wait(timeout=10)
    srv.start()
    assert srv.client().get("k") == b"v1"
    # SIGTERM saves when save rules are set.
    srv.stop()
    srv.extra_args = ["--save=3600 1"]
    srv.start()
    c = srv.client()
    c.set("k", "v3")
    srv.stop()
    srv.start()
    assert srv.client().get("k") == b"v3"


needs_redis = pytest.mark.skipif(shutil.which("redis-server") is None or TARGET != "damselfly",
                                 reason="needs redis-server, and damselfly as the target")


@needs_redis
def test_redis_server_loads_damselfly_snapshot(server_factory, request):
    srv = server_factory()
    c = srv.client()
    fill_every_type(c)
    assert c.save()
    redis_srv = ServerHandle(target="redis")
    shutil.copy(os.path.join(srv.workdir, "dump.rdb"), os.path.join(redis_srv.workdir, "dump.rdb"))
    redis_srv.extra_args = ["--dbfilename=dump.rdb"]
    try:
        redis_srv.start()
        check_every_type(redis_srv.client())
    finally:
        redis_srv.stop()
        redis_srv.cleanup_files()


@needs_redis
def test_damselfly_loads_redis_server_snapshot(server_factory):
    redis_srv = ServerHandle(target="redis")
    try:
        redis_srv.start()
        c = redis_srv.client()
        fill_every_type(c)
        assert c.save()
        redis_file = os.path.join(redis_srv.workdir, "dump.rdb")
        srv = server_factory()
        assert srv.stop() is None
        shutil.copy(redis_file, os.path.join(srv.workdir, "dump.rdb"))
        srv.start()
        check_every_type(srv.client())
    finally:
        redis_srv.stop()
        redis_srv.cleanup_files()


@pytest.mark.damselfly_only
def test_kill_during_bgsave_keeps_the_previous_file(server_factory):
    srv = server_factory()
    c = srv.client()
    c.set("first", "1")
    assert c.save()
    dump = os.path.join(srv.workdir, "dump.rdb")
    before = open(dump, "rb").read()
    pipe = c.pipeline(transaction=False)
    for i in range(200000):
        pipe.set(f"k{i}", "v" * 100)
    pipe.execute()
    c.execute_command("BGSAVE")
    srv.proc.send_signal(signal.SIGKILL)
    srv.proc.wait(timeout=10)
    assert open(dump, "rb").read() == before or open(dump, "rb").read()[:9] == b"REDIS0010"
    srv.start()
    c = srv.client()
    assert c.get("first") == b"1"


@pytest.mark.damselfly_only
def test_corrupt_or_truncated_file_refuses_to_start(server_factory):
    srv = server_factory()
    c = srv.client()
    c.set("k", "v" * 100)
    c.rpush("l", *range(100))
    assert c.save()
    assert srv.stop() is None
    dump = os.path.join(srv.workdir, "dump.rdb")
    good = open(dump, "rb").read()
    for bad in (good[: len(good) // 2],                                  # truncated
                good[:20] + bytes([good[20] ^ 0xFF]) + good[21:],         # flipped byte
                b"NOTREDIS" + good[8:]):                                  # bad magic
        open(dump, "wb").write(bad)
        srv.expect_exit = True
        with pytest.raises(RuntimeError, match="server did not start"):
            srv.start()
        assert srv.proc.returncode == 1
        assert "Failed loading" in srv.log_text() or "Wrong signature" in srv.log_text()
    open(dump, "wb").write(good)
    srv.expect_exit = False
    srv.start()
    assert srv.client().get("k") == b"v" * 100


# --- the load at start-up: -LOADING meanwhile, progress in INFO, stopped by a shutdown.

LOADING = b"-LOADING Redis is loading the dataset in memory\r\n"
LOADED_KEYS = 3000


def ask(port, request):
    """One request on a fresh connection; the first reply bytes."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(request)
        return s.recv(1 << 16)


def save_keys_and_stop(srv):
    c = srv.client()
    pipe = c.pipeline(transaction=False)
    for i in range(LOADED_KEYS):
        pipe.set(f"key:{i}", "value")
    pipe.execute()
    assert c.save()
    assert srv.stop() is None


def start_loading(srv, *extra):
    """Restarts srv slowed down per loaded key (key-load-delay) and returns once it answers,
    without waiting for the load to end."""
    srv.extra_args += ["--key_load_delay=1000", *extra]
    if srv.target == "redis":  # Redis serves clients between loaded chunks of this size
        srv.extra_args.append("--loading-process-events-interval-bytes=1024")
    srv._pick_ports()
    with open(srv.log_path, "ab") as log:
        srv.proc = subprocess.Popen(srv.command_line(srv.port), stdout=log,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=srv.workdir, env=dict(os.environ, GLOG_logtostderr="1"))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            return ask(srv.port, b"PING\r\n")
        except OSError:
            time.sleep(0.005)
    raise AssertionError("the server never answered")


def test_clients_get_loading_error_while_the_snapshot_loads(server_factory):
    srv = server_factory()
    save_keys_and_stop(srv)
    assert start_loading(srv) == LOADING
    assert ask(srv.port, b"GET key:1\r\n") == LOADING
    assert ask(srv.port, b"LASTSAVE\r\n").startswith(b":")  # a command flagged `loading`
    info = ask(srv.port, b"INFO persistence\r\n").decode()
    assert "loading:1\r\n" in info
    fields = dict(line.split(":", 1) for line in info.split("\r\n") if ":" in line)
    assert int(fields["loading_total_bytes"]) > 0
    assert 0 <= float(fields["loading_loaded_perc"]) <= 100
    assert int(fields["loading_start_time"]) > 0
    wait_for(lambda: ask(srv.port, b"PING\r\n") == b"+PONG\r\n", timeout=60)
    c = srv.client()
    assert c.dbsize() == LOADED_KEYS
    assert c.info("persistence")["loading"] == 0


def test_sigterm_during_the_load_exits_without_saving(server_factory):
    srv = server_factory()
    save_keys_and_stop(srv)
    dump = os.path.join(srv.workdir, "dump.rdb")
    before = open(dump, "rb").read()
    assert start_loading(srv, "--save=1 1") == LOADING  # save rules would save at SIGTERM
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(timeout=10) == 0
    assert open(dump, "rb").read() == before
    srv.start()
    assert srv.client().dbsize() == LOADED_KEYS


@pytest.mark.damselfly_only
def test_memcache_and_metrics_during_the_load(server_factory):
    srv = server_factory()
    save_keys_and_stop(srv)
    mc_port = free_port()
    assert start_loading(srv, f"--memcached_port={mc_port}") == LOADING
    assert ask(mc_port, b"get key:1\r\n") == b"SERVER_ERROR loading the dataset in memory\r\n"
    assert ask(mc_port, b"version\r\n").startswith(b"VERSION ")
    with urllib.request.urlopen(f"http://127.0.0.1:{srv.port}/metrics", timeout=10) as page:
        assert "\ndamselfly_loading_dump_file 1\n" in page.read().decode()
    assert "Loading dump.rdb" in srv.log_text()
    wait_for(lambda: ask(srv.port, b"PING\r\n") == b"+PONG\r\n", timeout=60)
    assert ask(mc_port, b"get key:1\r\n") == b"VALUE key:1 0 5\r\nvalue\r\nEND\r\n"
    assert "DB loaded from disk: 3000 keys" in srv.log_text()


@pytest.mark.damselfly_only
def test_snapshot_cron(server_factory):
    srv = server_factory()
    c = srv.client()
    assert c.config_get("snapshot_cron") == {"snapshot_cron": ""}
    for bad in ("* * * *", "61 * * * *", "* * * * mon-"):
        with pytest.raises(Exception, match="invalid|5 fields"):
            c.config_set("snapshot_cron", bad)
    # Every minute: the first save comes at the next minute's start.
    assert c.config_set("snapshot_cron", "* * * * *")
    assert c.config_get("snapshot_cron") == {"snapshot_cron": "* * * * *"}
    c.set("k", "v")
    wait_for(lambda: c.info("persistence")["rdb_saves"] >= 1, timeout=65)
    assert os.path.exists(os.path.join(srv.workdir, "dump.rdb"))
    assert c.config_set("snapshot_cron", "")
    # A bad flag refuses to start.
    bad = ServerHandle(["--snapshot_cron=0 0 31 13 *"])
    bad.expect_exit = True
    with pytest.raises(RuntimeError, match="server did not start"):
        bad.start()
    assert "Invalid --snapshot_cron" in bad.log_text()
    bad.cleanup_files()
