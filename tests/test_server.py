"""Server commands: COMMAND, INFO, DBSIZE, FLUSHDB, FLUSHALL, TIME, SHUTDOWN."""

import os
import re
import signal
import subprocess
import time

import pytest

from helpers import err, info_fields, parse_info, wait_for


# ---------------------------------------------------------------------------- COMMAND


def test_command_count(server):
    c = server.raw()
    count = c("COMMAND", "COUNT")
    assert isinstance(count, int) and count > 0
    assert c("COMMAND", "COUNT", "x") == err(
        "ERR wrong number of arguments for 'command|count' command")
    everything = c("COMMAND")
    assert isinstance(everything, list) and len(everything) == count
    names = {entry[0] for entry in everything}
    for name in (b"get", b"set", b"ping", b"info", b"command", b"client"):
        assert name in names


def test_command_list_and_filters(server):
    c = server.raw()
    names = c("COMMAND", "LIST")
    top = [n for n in names if b"|" not in n]
    assert len(top) == c("COMMAND", "COUNT") and len(set(names)) == len(names)
    for name in (b"get", b"config", b"config|get", b"client|list", b"object|encoding"):
        assert name in names
    assert sorted(c("COMMAND", "LIST", "FILTERBY", "ACLCAT", "HyperLogLog")) == [
        b"pfadd", b"pfcount", b"pfdebug", b"pfmerge", b"pfselftest"]
    assert sorted(c("COMMAND", "LIST", "filterby", "pattern", "CONFIG*")) == [
        b"config", b"config|get", b"config|help", b"config|resetstat", b"config|rewrite",
        b"config|set"]
    assert sorted(c("COMMAND", "LIST", "FILTERBY", "PATTERN", "*|get")) == [
        b"config|get", b"slowlog|get"]
    assert c("COMMAND", "LIST", "FILTERBY", "MODULE", "search") == []
    assert c("COMMAND", "LIST", "FILTERBY", "ACLCAT", "nope") == []
    for bad in (("FILTERBY",), ("FILTERBY", "foo", "bar"), ("foo", "bar", "baz"),
                ("FILTERBY", "ACLCAT", "hash", "x")):
        assert c("COMMAND", "LIST", *bad) == err("ERR syntax error"), bad


def test_command_info_shape(server):
    c = server.raw()
    reply = c("COMMAND", "INFO", "get", "set", "nosuchcommand")
    assert isinstance(reply, list) and len(reply) == 3
    get, set_, missing = reply
    assert missing is None
    # name, arity, flags, first key, last key, step (Redis 7 adds acl categories, tips,
    # key specs and subcommands after these).
    assert get[:2] == [b"get", 2]
    assert get[3:6] == [1, 1, 1]
    assert isinstance(get[2], list) and "readonly" in get[2]
    assert set_[:2] == [b"set", -3]
    assert set_[3:6] == [1, 1, 1]
    assert "write" in set_[2]
    assert len(get) >= 6 and len(set_) >= 6


def test_command_docs_shape(server):
    c = server.raw()
    reply = c("COMMAND", "DOCS", "get")
    # RESP2: a flat array [name, doc-map-as-flat-array].
    assert isinstance(reply, list) and len(reply) == 2 and reply[0] == b"get"
    doc = dict(zip(reply[1][0::2], reply[1][1::2]))
    for field in (b"summary", b"since", b"group"):
        assert field in doc
    assert doc[b"group"] == b"string"
    assert isinstance(c("HELLO", "3"), dict)
    reply3 = c("COMMAND", "DOCS", "get")
    assert isinstance(reply3, dict) and set(reply3) == {b"get"}
    assert b"summary" in reply3[b"get"]


# ------------------------------------------------------------------------------- INFO


def test_info_default_sections(server):
    c = server.raw()
    reply = c("INFO")
    assert isinstance(reply, bytes)
    assert b"\r\n" in reply and not reply.startswith(b"\r\n")
    sections = parse_info(reply)
    for name in ("server", "clients", "memory", "stats", "keyspace"):
        assert name in sections, f"INFO lacks section {name}: {list(sections)}"


def test_info_server(server):
    c = server.raw()
    reply = c("INFO", "server")
    assert reply.startswith(b"# Server\r\n")
    f = parse_info(reply)["server"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", f["redis_version"]), f["redis_version"]
    assert f["tcp_port"] == str(server.port)
    assert "uptime_in_seconds" in f
    # Only the requested section.
    assert set(parse_info(reply)) == {"server"}


def test_info_section_names_case_insensitive(server):
    c = server.raw()
    assert c("INFO", "SERVER").startswith(b"# Server\r\n")


def test_info_clients_counts_connections(server):
    first = server.raw()
    others = [server.raw() for _ in range(2)]
    for o in others:
        assert o("PING") == "PONG"
    f = info_fields(first, "clients")
    assert "connected_clients" in f
    wait_for(lambda: info_fields(first, "clients")["connected_clients"] == "3",
             what="connected_clients == 3")
    others[0].close()
    wait_for(lambda: info_fields(first, "clients")["connected_clients"] == "2",
             what="connected_clients == 2 after a disconnect")


def test_info_memory(server):
    c = server.raw()
    f = info_fields(c, "memory")
    assert int(f["used_memory"]) > 0
    assert "used_memory_human" in f
    # The split monitoring tools read, and the counters the Redis test suite waits on.
    assert int(f["used_memory_overhead"]) + int(f["used_memory_dataset"]) == int(f["used_memory"])
    assert f["used_memory_peak_perc"].endswith("%")
    int(f["mem_fragmentation_bytes"])  # Redis's is sampled by its cron: no equation holds
    for zero in ("lazyfree_pending_objects", "mem_not_counted_for_evict", "mem_aof_buffer"):
        assert f[zero] == "0"


def test_info_stats_keyspace_hits_and_misses(server):
    c = server.raw()
    f = info_fields(c, "stats")
    for field in ("expired_keys", "keyspace_hits", "keyspace_misses", "total_commands_processed",
                  "total_connections_received", "evicted_keys"):
        assert field in f, field
    hits, misses = int(f["keyspace_hits"]), int(f["keyspace_misses"])
    c("SET", "present", "v")
    c("GET", "present")
    c("GET", "present")
    c("GET", "absent")
    f = info_fields(c, "stats")
    assert int(f["keyspace_hits"]) - hits == 2
    assert int(f["keyspace_misses"]) - misses == 1


def test_info_keyspace(server):
    c = server.raw()
    assert c("INFO", "keyspace") == b"# Keyspace\r\n"
    c("SET", "a", "1")
    c("SET", "b", "2", "EX", "100")
    c("SELECT", "3")
    c("SET", "c", "3")
    f = info_fields(c, "keyspace")
    m = re.fullmatch(r"keys=(\d+),expires=(\d+),avg_ttl=(\d+)", f["db0"])
    assert m, f["db0"]
    assert m.group(1, 2) == ("2", "1")
    assert re.fullmatch(r"keys=1,expires=0,avg_ttl=\d+", f["db3"]), f["db3"]
    assert set(f) == {"db0", "db3"}


# ------------------------------------------------------------ DBSIZE / FLUSHDB / FLUSHALL


def test_dbsize(server):
    c = server.raw()
    assert c("DBSIZE") == 0
    for i in range(25):
        c("SET", f"key:{i}", i)
    assert c("DBSIZE") == 25
    c("DEL", "key:0")
    assert c("DBSIZE") == 24
    assert c("DBSIZE", "x") == err("ERR wrong number of arguments for 'dbsize' command")


def test_flushdb_only_current_db(server):
    c = server.raw()
    c("SET", "k", "db0")
    c("SELECT", "1")
    c("SET", "k", "db1")
    assert c("FLUSHDB") == "OK"
    assert c("DBSIZE") == 0
    c("SELECT", "0")
    assert c("GET", "k") == b"db0"
    assert c("FLUSHDB", "SYNC") == "OK"
    assert c("DBSIZE") == 0
    assert c("FLUSHDB", "ASYNC") == "OK"
    assert c("FLUSHDB", "foo") == err("ERR syntax error")


def test_flushall_all_dbs(server):
    c = server.raw()
    for db in (0, 1, 7):
        c("SELECT", db)
        c("SET", "k", db)
    assert c("FLUSHALL") == "OK"
    for db in (0, 1, 7):
        c("SELECT", db)
        assert c("DBSIZE") == 0
    c("SET", "x", "1")
    assert c("FLUSHALL", "ASYNC") == "OK"
    assert c("DBSIZE") == 0
    assert c("FLUSHALL", "SYNC") == "OK"
    assert c("FLUSHALL", "foo") == err("ERR syntax error")


def test_lazy_free_of_flushall_async_and_unlink(debug_server):
    """FLUSHALL ASYNC and UNLINK of a large collection answer at once and free the memory
    after (damselfly: on the shard's thread, in steps); INFO counts what they freed, a
    key per key of a flushed database and one per unlinked value, as Redis does. Small
    values are freed at once and not counted."""
    c = debug_server.raw()

    def memory():
        return info_fields(c, "memory")

    assert c("DEBUG", "POPULATE", "200000", "key", "100") == "OK"
    assert c("FLUSHALL", "ASYNC") == "OK"
    assert c("DBSIZE") == 0
    assert c("GET", "key:1") is None
    wait_for(lambda: memory()["lazyfree_pending_objects"] == "0", what="the flush freed")
    assert memory()["lazyfreed_objects"] == "200000"

    assert c("SADD", "big", *[f"member:{i}" for i in range(10000)]) == 10000
    assert c("SADD", "small", "a", "b") == 2
    assert c("SET", "string", "x" * 1000) == "OK"
    used_with_big = int(memory()["used_memory"])
    assert c("UNLINK", "big", "small", "string", "missing") == 3
    assert c("EXISTS", "big", "small", "string") == 0
    wait_for(lambda: memory()["lazyfreed_objects"] == "200001", what="the set freed")
    assert memory()["lazyfree_pending_objects"] == "0"
    wait_for(lambda: int(memory()["used_memory"]) < used_with_big - 200_000,
             what="used_memory down by the set")
    assert c("CONFIG", "RESETSTAT") == "OK"
    assert memory()["lazyfreed_objects"] == "0"


@pytest.mark.parametrize("config", ["lazyfree-lazy-user-del", "lazyfree-lazy-user-flush",
                                    "lazyfree-lazy-expire", "lazyfree-lazy-eviction"])
def test_lazyfree_configs(debug_server, config):
    """Redis's lazyfree-lazy-* switches: yes/no, and each makes its deletions of a large
    value lazy, which lazyfreed_objects shows."""
    c = debug_server.raw()
    assert c("CONFIG", "GET", config) == [config.encode(), b"no"]
    assert c("CONFIG", "SET", config, "maybe") == err(
        f"ERR CONFIG SET failed (possibly related to argument '{config}') - argument must be "
        "'yes' or 'no'")
    assert c("CONFIG", "SET", config, "yes") == "OK"
    assert c("CONFIG", "GET", config) == [config.encode(), b"yes"]

    def lazyfreed():
        return int(info_fields(c, "memory")["lazyfreed_objects"])

    def big_set(key):
        assert c("SADD", key, *[f"member:{i}" for i in range(1000)]) == 1000

    try:
        if config == "lazyfree-lazy-user-del":
            big_set("big")
            assert c("DEL", "big") == 1
            wait_for(lambda: lazyfreed() == 1, what="DEL freed lazily")
        elif config == "lazyfree-lazy-user-flush":
            assert c("DEBUG", "POPULATE", "1000") == "OK"
            assert c("FLUSHALL") == "OK"
            wait_for(lambda: lazyfreed() == 1000, what="FLUSHALL freed lazily")
            assert c("DEBUG", "POPULATE", "10") == "OK"
            assert c("FLUSHDB", "SYNC") == "OK"  # an explicit mode wins
            assert lazyfreed() == 1000
        elif config == "lazyfree-lazy-expire":
            big_set("big")
            assert c("PEXPIRE", "big", "1") == 1
            time.sleep(0.01)
            assert c("EXISTS", "big") == 0
            wait_for(lambda: lazyfreed() == 1, what="the expired set freed lazily")
        else:
            big_set("big")
            assert c("CONFIG", "SET", "maxmemory-policy", "allkeys-random") == "OK"
            assert c("CONFIG", "SET", "maxmemory", "1") == "OK"

            def evicted():
                c("SET", "probe", "x")  # a write evicts first (its own reply may be OOM)
                return c("EXISTS", "big") == 0

            wait_for(evicted, what="the set evicted")
            assert c("CONFIG", "SET", "maxmemory", "0") == "OK"
            wait_for(lambda: lazyfreed() >= 1, what="the evicted set freed lazily")
    finally:
        c("CONFIG", "SET", "maxmemory", "0")
        c("CONFIG", "SET", "maxmemory-policy", "noeviction")
        c("CONFIG", "SET", config, "no")


# ------------------------------------------------------------------------------- TIME


def test_time(server):
    c = server.raw()
    before = time.time()
    reply = c("TIME")
    after = time.time()
    assert isinstance(reply, list) and len(reply) == 2
    secs, usecs = reply
    assert secs.isdigit() and usecs.isdigit()
    assert 0 <= int(usecs) < 1_000_000
    t = int(secs) + int(usecs) / 1e6
    assert before - 2 <= t <= after + 2
    assert c("TIME", "x") == err("ERR wrong number of arguments for 'time' command")


# --------------------------------------------------------------------------- SHUTDOWN


def _assert_exits_after(srv, *shutdown_args):
    srv.expect_exit = True
    c = srv.raw()
    c.send("SHUTDOWN", *shutdown_args)
    # A successful SHUTDOWN sends no reply: the connection just closes.
    assert c.read_until_closed(timeout=10) == b""
    try:
        code = srv.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        raise AssertionError("server still running 10 s after SHUTDOWN")
    assert code == 0


def test_shutdown(server_factory):
    srv = server_factory()
    srv.raw()("SET", "k", "v")
    _assert_exits_after(srv)


def test_shutdown_nosave(server_factory):
    srv = server_factory()
    _assert_exits_after(srv, "NOSAVE")


def test_sigterm_graceful_exit(server_factory):
    srv = server_factory()
    srv.expect_exit = True
    srv.raw()("SET", "k", "v")
    srv.proc.send_signal(signal.SIGTERM)
    try:
        code = srv.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        raise AssertionError("server still running 5 s after SIGTERM")
    assert code == 0, f"exit code after SIGTERM: {code}"


def test_shutdown_syntax_error_keeps_running(server):
    c = server.raw()
    assert c("SHUTDOWN", "FOO") == err("ERR syntax error")
    assert c("PING") == "PONG"


# ------------------------------------------------------------------ DEBUG and MEMORY


@pytest.fixture
def debug_server(server_factory, target):
    # redis-server 7 refuses DEBUG unless enabled; damselfly always allows it.
    return server_factory("--enable-debug-command=yes") if target == "redis" else server_factory()


def test_debug_populate(debug_server):
    c = debug_server.raw()
    assert c("SET", "key:5", "mine") == "OK"
    assert c("DEBUG", "POPULATE", "1000") == "OK"
    assert c("DBSIZE") == 1000
    assert c("GET", "key:7") == b"value:7"
    assert c("GET", "key:5") == b"mine"  # existing keys are kept
    assert c("DEBUG", "POPULATE", "10", "p", "20") == "OK"
    assert c("GET", "p:3") == b"value:3" + b"\0" * 13
    assert c("DEBUG", "POPULATE", "10", "q", "3") == "OK"
    assert c("GET", "q:3") == b"val"
    assert c("DEBUG", "POPULATE", "-1") == err("ERR value is out of range, must be positive")
    assert c("DEBUG", "POPULATE", "x") == err("ERR value is out of range, must be positive")
    assert c("DEBUG", "OBJECT", "nosuch") == err("ERR no such key")
    assert "encoding:embstr" in c("DEBUG", "OBJECT", "key:7")


def test_debug_pause_cron_stops_active_expiry(debug_server):
    c = debug_server.raw()
    assert c("DEBUG", "PAUSE-CRON", "1") == "OK"
    c("SET", "short", "v", "PX", "20")
    time.sleep(0.3)
    assert c("DBSIZE") == 1  # expired, but no cycle ran to delete it (DBSIZE does not)
    assert c("DEBUG", "PAUSE-CRON", "0") == "OK"
    wait_for(lambda: c("DBSIZE") == 0, what="active expiry after PAUSE-CRON 0")


def test_memory_usage(debug_server):
    c = debug_server.raw()
    assert c("MEMORY", "USAGE", "nosuch") is None
    c("SET", "small", "v")
    c("SET", "big", os.urandom(10000))  # random: damselfly cannot compress it
    small, big = c("MEMORY", "USAGE", "small"), c("MEMORY", "USAGE", "big")
    assert 0 < small < 200
    assert 10000 <= big < 12000
    assert c("MEMORY", "FOO") == err("ERR unknown subcommand 'FOO'. Try MEMORY HELP.")


MEMORY_STATS_FIELDS = [
    b"peak.allocated", b"total.allocated", b"startup.allocated", b"replication.backlog",
    b"clients.slaves", b"clients.normal", b"cluster.links", b"aof.buffer", b"lua.caches",
    b"functions.caches", b"overhead.total", b"keys.count", b"keys.bytes-per-key",
    b"dataset.bytes", b"dataset.percentage", b"peak.percentage", b"allocator.allocated",
    b"allocator.active", b"allocator.resident", b"allocator-fragmentation.ratio",
    b"allocator-fragmentation.bytes", b"allocator-rss.ratio", b"allocator-rss.bytes",
    b"rss-overhead.ratio", b"rss-overhead.bytes", b"fragmentation", b"fragmentation.bytes"]


def test_memory_stats(server):
    """MEMORY STATS: Redis 7.0's fields in its order, a db.N map for each database with keys
    (after functions.caches), integers for bytes and counts."""
    c = server.raw()
    stats = c("MEMORY", "STATS")
    assert stats[0::2] == MEMORY_STATS_FIELDS
    values = dict(zip(stats[0::2], stats[1::2]))
    assert values[b"keys.count"] == 0 and values[b"total.allocated"] > 0
    assert values[b"peak.allocated"] >= values[b"total.allocated"]
    c("SET", "a", "v")
    c("SELECT", 2)
    c("SET", "b", "v")
    c("EXPIRE", "b", 100)
    stats = c("MEMORY", "STATS")
    names = stats[0::2]
    assert names[10:12] == [b"db.0", b"db.2"] and names[12:] == MEMORY_STATS_FIELDS[10:]
    db2 = stats[stats.index(b"db.2") + 1]
    assert db2[0::2] == [b"overhead.hashtable.main", b"overhead.hashtable.expires",
                         b"overhead.hashtable.slot-to-keys"]
    assert all(isinstance(v, int) and v > 0 for v in db2[1:4:2])
    assert dict(zip(names, stats[1::2]))[b"keys.count"] == 2
    c("HELLO", "3")
    assert set(c("MEMORY", "STATS")) >= {b"keys.count", b"db.0"}  # a map under RESP3
    assert c("MEMORY", "STATS", "x") == err(
        "ERR wrong number of arguments for 'memory|stats' command")


def test_memory_doctor_purge_and_malloc_stats(server):
    c = server.raw()
    assert c("MEMORY", "DOCTOR") == (
        b"Hi Sam, this instance is empty or is using very little memory, my issues detector "
        b"can't be used in these conditions. Please, leave for your mission on Earth and fill "
        b"it with some data. The new Sam and I will be back to our programming as soon as I "
        b"finished rebooting.\n")
    assert c("MEMORY", "PURGE") == "OK"
    assert isinstance(c("MEMORY", "MALLOC-STATS"), bytes)
    assert c("MEMORY", "HELP")[:2] == ["MEMORY <subcommand> [<arg> [value] [opt] ...]. "
                                      "Subcommands are:", "DOCTOR"]
    assert c("MEMORY", "DOCTOR", "x") == err(
        "ERR wrong number of arguments for 'memory|doctor' command")
