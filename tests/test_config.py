"""CONFIG GET / SET / RESETSTAT and INFO sections, through redis-py and raw RESP.
Validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis)."""

import re

import pytest
import redis

from helpers import err


def test_config_get_exact_and_patterns(server):
    c = server.client()
    assert c.config_get("maxmemory") == {"maxmemory": "0"}
    assert c.config_get("databases") == {"databases": "16"}
    assert c.config_get("port") == {"port": str(server.port)}
    slowlog = c.config_get("slowlog-*")
    assert slowlog["slowlog-log-slower-than"] == "10000"
    assert slowlog["slowlog-max-len"] == "128"
    assert c.config_get("no-such-parameter") == {}
    # Several patterns; a parameter matched twice is listed once.
    got = server.raw()("CONFIG", "GET", "hz", "h?", "maxmemory-policy")
    assert sorted(zip(got[::2], got[1::2])) == [(b"hz", b"10"), (b"maxmemory-policy", b"noeviction")]


def test_config_get_lists_a_name_and_its_alias(server):
    """A pattern matching a parameter and its old name lists both, as Redis 7.0 does."""
    got = server.raw()("CONFIG", "GET", "maxmemory", "maxmemory*", "*of")
    pairs = dict(zip(got[::2], got[1::2]))
    assert len(pairs) * 2 == len(got)  # no name twice
    assert pairs[b"replicaof"] == pairs[b"slaveof"] == b""
    assert pairs[b"maxmemory-clients"] == b"0"
    assert {b"maxmemory", b"maxmemory-policy", b"maxmemory-samples"} <= set(pairs)
    assert server.raw()("CONFIG", "GET", "slave-read-only") == [b"slave-read-only", b"yes"]


def test_config_hidden_and_immutable(server):
    c = server.raw()
    # A test knob: listed only when named.
    assert c("CONFIG", "GET", "key-load-delay") == [b"key-load-delay", b"0"]
    assert b"key-load-delay" not in c("CONFIG", "GET", "*")[::2]
    assert c("CONFIG", "SET", "daemonize", "yes") == err(
        "ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config")


def test_config_get_echoes_an_exact_name_as_given(server):
    c = server.raw()
    assert c("CONFIG", "GET", "HZ") == [b"HZ", b"10"]


def test_config_set_runtime_values(server):
    c = server.client()
    try:
        assert c.config_set("maxmemory", "1gb")
        assert c.config_get("maxmemory") == {"maxmemory": str(1 << 30)}
        assert c.info("memory")["maxmemory"] == 1 << 30
        assert c.config_set("maxmemory", "10k")
        assert c.config_get("maxmemory") == {"maxmemory": "10000"}
        assert c.config_set("maxmemory-policy", "ALLKEYS-LRU")
        assert c.config_get("maxmemory-policy") == {"maxmemory-policy": "allkeys-lru"}
        assert c.config_set("hz", "1000")  # clamped
        assert c.config_get("hz") == {"hz": "500"}
        assert c.info("server")["hz"] == 500
        assert c.config_set("hz", "0")
        assert c.config_get("hz") == {"hz": "1"}
        # Several at once.
        assert c.execute_command("CONFIG", "SET", "slowlog-max-len", "5",
                                 "slowlog-log-slower-than", "-1") == b"OK"
        assert c.config_get("slowlog-max-len") == {"slowlog-max-len": "5"}
        assert c.config_get("slowlog-log-slower-than") == {"slowlog-log-slower-than": "-1"}
    finally:
        c.execute_command("CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", "noeviction",
                          "hz", "10", "slowlog-max-len", "128", "slowlog-log-slower-than", "10000")


@pytest.mark.parametrize("args, error", [
    (["foo", "bar"], "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"),
    (["databases", "3"],
     "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"),
    (["maxmemory", "abc"],
     "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"),
    (["maxmemory", "-1"],
     "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"),
    (["maxmemory", "10xb"],
     "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"),
    (["hz", "abc"],
     "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer"),
    (["hz", "-1"],
     "ERR CONFIG SET failed (possibly related to argument 'hz') - argument must be between 0 and 2147483647 inclusive"),
    (["slowlog-log-slower-than", "-5"],
     "ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument must be between -1 and 9223372036854775807 inclusive"),
    (["slowlog-max-len", "-1"],
     "ERR CONFIG SET failed (possibly related to argument 'slowlog-max-len') - argument must be between 0 and 9223372036854775807 inclusive"),
    (["maxmemory-policy", "foo"],
     "ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"),
    (["hz", "10", "hz", "11"],
     "ERR CONFIG SET failed (possibly related to argument 'hz') - duplicate parameter"),
    (["hz", "10", "maxmemory"], "ERR syntax error"),
    (["hz"], "ERR wrong number of arguments for 'config|set' command"),
])
def test_config_set_errors(server, args, error):
    c = server.raw()
    assert c("CONFIG", "SET", *args) == err(error)


def test_config_set_is_all_or_nothing(server):
    c = server.raw()
    assert c("CONFIG", "SET", "maxmemory", "5mb", "hz", "abc") == err(
        "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer")
    assert c("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"0"]


def test_config_subcommand_errors(server):
    c = server.raw()
    assert c("CONFIG", "GET") == err("ERR wrong number of arguments for 'config|get' command")
    assert c("CONFIG", "RESETSTAT", "x") == err(
        "ERR wrong number of arguments for 'config|resetstat' command")
    assert c("CONFIG", "FOO") == err("ERR unknown subcommand 'FOO'. Try CONFIG HELP.")
    help_lines = c("CONFIG", "HELP")
    assert help_lines[0] == "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"


def test_requirepass_at_run_time(server):
    admin = server.client()
    try:
        assert admin.config_set("requirepass", "s3cret")
        assert admin.config_get("requirepass") == {"requirepass": "s3cret"}
        assert admin.ping()  # connections made before keep their state
        fresh = redis.Redis(host=server.host, port=server.port)
        try:
            with pytest.raises(redis.AuthenticationError):
                fresh.get("x")
            assert fresh.execute_command("AUTH", "s3cret")
            assert fresh.ping()
        finally:
            fresh.close()
    finally:
        admin.config_set("requirepass", "")


def test_resetstat(server):
    c = server.client()
    c.set("a", "1")
    c.get("a")
    with pytest.raises(redis.ResponseError):
        c.execute_command("GET")
    assert c.info("commandstats")["cmdstat_get"]["calls"] >= 1
    assert c.config_resetstat()
    info = c.info("all")
    assert "cmdstat_get" not in info and "cmdstat_set" not in info
    assert "errorstat_ERR" not in info
    assert info["keyspace_hits"] == 0 and info["keyspace_misses"] == 0
    assert info["total_error_replies"] == 0


# ------------------------------------------------------------------------- INFO


DEFAULT_SECTIONS = ["Server", "Clients", "Memory", "Persistence", "Stats", "Replication",
                    "CPU", "Modules", "Errorstats", "Cluster", "Keyspace"]


def sections(text):
    text = text.decode()
    return [line[2:] for line in text.split("\r\n") if line.startswith("# ")]


def test_info_default_and_all_sections(server):
    c = server.raw()
    c("SET", "k", "v")
    default = sections(c("INFO"))
    assert default == DEFAULT_SECTIONS
    everything = sections(c("INFO", "everything"))
    all_sections = sections(c("INFO", "all"))
    assert "Commandstats" in all_sections and "Commandstats" in everything
    for section in DEFAULT_SECTIONS:
        assert section in all_sections
    assert sections(c("INFO", "commandstats")) == ["Commandstats"]
    assert sections(c("INFO", "server", "keyspace")) == ["Server", "Keyspace"]


def test_info_field_names(server):
    c = server.client()
    c.config_resetstat()
    c.set("k", "v", ex=100)
    c.get("k")
    c.get("missing")
    with pytest.raises(redis.ResponseError):
        c.execute_command("NOSUCH")
    with pytest.raises(redis.ResponseError):
        c.execute_command("GET")
    info = c.info("everything")
    for field in ("redis_version", "redis_mode", "os", "arch_bits", "process_id", "run_id",
                  "tcp_port", "uptime_in_seconds", "uptime_in_days", "hz", "configured_hz",
                  "connected_clients", "blocked_clients", "maxclients",
                  "used_memory", "used_memory_human", "used_memory_rss", "used_memory_peak",
                  "maxmemory", "maxmemory_policy", "mem_fragmentation_ratio",
                  "loading", "rdb_changes_since_last_save", "rdb_bgsave_in_progress",
                  "aof_enabled",
                  "total_connections_received", "total_commands_processed",
                  "instantaneous_ops_per_sec", "total_net_input_bytes",
                  "total_net_output_bytes", "rejected_connections", "expired_keys",
                  "evicted_keys", "keyspace_hits", "keyspace_misses", "total_error_replies",
                  "role", "connected_slaves", "master_replid", "master_repl_offset",
                  "used_cpu_sys", "used_cpu_user", "cluster_enabled"):
        assert field in info, field
    assert info["keyspace_hits"] == 1 and info["keyspace_misses"] == 1
    assert info["db0"]["keys"] == 1 and info["db0"]["expires"] == 1
    assert info["errorstat_ERR"] in ({"count": 2}, "count=2")  # redis-py parses it either way
    assert info["cmdstat_set"]["calls"] == 1
    assert info["cmdstat_get"]["calls"] == 2
    assert info["cmdstat_get"]["rejected_calls"] == 1
    assert set(info["cmdstat_get"]) == {"calls", "usec", "usec_per_call", "rejected_calls",
                                       "failed_calls"}
    assert info["total_net_input_bytes"] > 0 and info["total_net_output_bytes"] > 0


def test_commandstats_failed_calls(server):
    c = server.client()
    c.config_resetstat()
    c.set("n", "abc")
    with pytest.raises(redis.ResponseError):
        c.execute_command("INCR", "n")
    stats = c.info("commandstats")["cmdstat_incr"]
    assert stats["calls"] == 1 and stats["failed_calls"] == 1 and stats["rejected_calls"] == 0


def test_commandstats_per_subcommand(server):
    c = server.raw()
    c("CONFIG", "RESETSTAT")
    c("CONFIG", "GET", "hz")
    c("CONFIG", "GET", "port")
    c("CONFIG", "SET", "hz")  # wrong arity: rejected
    text = c("INFO", "commandstats").decode()
    lines = dict(line.split(":", 1) for line in text.split("\r\n")[1:] if line)
    assert lines["cmdstat_config|get"].startswith("calls=2,")
    assert lines["cmdstat_config|set"].startswith("calls=0,")
    assert lines["cmdstat_config|set"].endswith(",rejected_calls=1,failed_calls=0")


def test_info_latencystats(server):
    c = server.raw()
    assert c("CONFIG", "RESETSTAT") == "OK"
    c("SET", "k", "v")
    for _ in range(10):
        c("GET", "k")
    c("CONFIG", "GET", "maxmemory")
    text = c("INFO", "latencystats").decode()
    assert text.startswith("# Latencystats\r\n")
    lines = dict(line.split(":", 1) for line in text.split("\r\n")[1:] if line)
    pattern = re.compile(r"p50=(\d+\.\d{3}),p99=(\d+\.\d{3}),p99\.9=(\d+\.\d{3})")
    for name in ("set", "get", "config|get", "config|resetstat"):
        match = pattern.fullmatch(lines[f"latency_percentiles_usec_{name}"])
        assert match, lines
        p50, p99, p999 = (float(v) for v in match.groups())
        assert 0 < p50 <= p99 <= p999 < 1_000_000
    assert "latency_percentiles_usec_del" not in lines  # only commands that ran
    pairs = c("CONFIG", "GET", "latency-tracking*")
    assert dict(zip(pairs[::2], pairs[1::2])) == {
        b"latency-tracking-info-percentiles": b"50 99 99.9", b"latency-tracking": b"yes"}
    # Not in the default INFO; in "everything".
    assert b"# Latencystats" not in c("INFO")
    assert b"# Latencystats" in c("INFO", "everything")
    assert c("CONFIG", "RESETSTAT") == "OK"
    lines = c("INFO", "latencystats").decode().split("\r\n")
    assert [line.split(":")[0] for line in lines[1:] if line] == [
        "latency_percentiles_usec_config|resetstat"]


def test_collection_limits_and_their_ziplist_aliases(server):
    c = server.client()
    # Redis 7.0's defaults (set-max-listpack-* are Redis 7.2's, absent from 7.0).
    got = c.config_get("*-max-*")
    for name, value in [("list-max-listpack-size", "-2"), ("list-max-ziplist-size", "-2"),
                        ("hash-max-listpack-entries", "512"), ("hash-max-ziplist-value", "64"),
                        ("zset-max-listpack-entries", "128"), ("zset-max-ziplist-value", "64"),
                        ("set-max-intset-entries", "512")]:
        assert got[name] == value, name
    assert c.config_get("list-compress-depth") == {"list-compress-depth": "0"}
    try:
        # An alias and its name are one parameter.
        assert c.config_set("zset-max-ziplist-entries", "7")
        assert c.config_get("zset-max-listpack-entries") == {"zset-max-listpack-entries": "7"}
        assert c.config_set("list-max-listpack-size", "-6")
        assert c.config_get("list-max-ziplist-size") == {"list-max-ziplist-size": "-6"}
        with pytest.raises(redis.ResponseError) as e:
            c.config_set("list-compress-depth", "-1")
        assert str(e.value) == ("CONFIG SET failed (possibly related to argument "
                                "'list-compress-depth') - argument must be between 0 and "
                                "2147483647 inclusive")
        with pytest.raises(redis.ResponseError) as e:
            c.config_set("hash-max-listpack-entries", "-1")
        assert "argument must be between 0 and 9223372036854775807 inclusive" in str(e.value)
    finally:
        c.config_set("zset-max-listpack-entries", "128")
        c.config_set("list-max-listpack-size", "-2")


def test_redis_parameters_set_only_at_start_up_are_immutable(server):
    """Parameters Redis takes only from its configuration file (io-threads, always-show-logo,
    syslog-enabled...) refuse CONFIG SET; the run-time ones damselfly has no use for
    (activerehashing) take it; maxmemory-clients takes its off value."""
    c = server.client()
    for name, value in (("io-threads", "1"), ("always-show-logo", "no"),
                        ("syslog-enabled", "no"), ("unixsocket", ""), ("daemonize", "no")):
        with pytest.raises(Exception, match=f"possibly related to argument '{name}'\\) - "
                                            "can't set immutable config"):
            c.config_set(name, value)
    assert c.config_set("activerehashing", "yes")
    assert c.config_get("activerehashing") == {"activerehashing": "yes"}
    assert c.config_set("maxmemory-clients", "0")
    assert c.config_get("maxmemory-clients") == {"maxmemory-clients": "0"}
