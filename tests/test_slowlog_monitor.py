"""SLOWLOG and MONITOR, validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis)."""

import re
import time

import pytest

from helpers import err

MONITOR_LINE = re.compile(r'^\d{10}\.\d{6} \[(\d+) ([0-9.]+:\d+|lua)\] (.*)$')


@pytest.fixture
def slowlog_all(server):
    """Logs every command for the test, with a clean slow log."""
    c = server.raw()
    assert c("CONFIG", "SET", "slowlog-log-slower-than", "0") == "OK"
    assert c("SLOWLOG", "RESET") == "OK"
    yield c
    c("CONFIG", "SET", "slowlog-log-slower-than", "10000", "slowlog-max-len", "128")
    c("SLOWLOG", "RESET")


def test_slowlog_entries(server, slowlog_all):
    c = slowlog_all
    other = server.raw()
    assert other("CLIENT", "SETNAME", "worker") == "OK"
    assert other("SET", "key", "value") == "OK"
    entries = c("SLOWLOG", "GET", "2")
    assert len(entries) == 2
    newest, older = entries
    assert newest[0] > older[0]  # ids grow
    entry_id, stamp, duration, args, addr, name = newest
    assert args == [b"SET", b"key", b"value"]
    assert abs(stamp - time.time()) < 60 and duration >= 0
    assert re.match(rb"^127\.0\.0\.1:\d+$", addr) and name == b"worker"
    assert older[3] == [b"CLIENT", b"SETNAME", b"worker"]


def test_slowlog_redacts_credentials(server, slowlog_all):
    c = slowlog_all
    c("ACL", "SETUSER", "slowlog-user", "on", ">secret")  # refused by damselfly; logged
    c("ACL", "DELUSER", "slowlog-user")
    assert c("CONFIG", "SET", "maxmemory", "0", "requirepass", "") == "OK"
    logged = [entry[3] for entry in reversed(c("SLOWLOG", "GET", "3"))]
    assert logged == [
        [b"ACL", b"SETUSER", b"(redacted)", b"(redacted)", b"(redacted)"],
        [b"ACL", b"DELUSER", b"slowlog-user"],
        [b"CONFIG", b"SET", b"maxmemory", b"0", b"requirepass", b"(redacted)"],
    ]


def test_slowlog_len_reset_and_default_count(server, slowlog_all):
    c = slowlog_all
    for i in range(15):
        c("SET", f"k{i}", "v")
    assert c("SLOWLOG", "LEN") >= 15
    assert len(c("SLOWLOG", "GET")) == 10
    assert len(c("SLOWLOG", "GET", "-1")) >= 15
    assert c("SLOWLOG", "GET", "0") == []
    assert c("SLOWLOG", "RESET") == "OK"
    assert c("SLOWLOG", "LEN") <= 1  # the RESET itself may be logged


def test_slowlog_max_len_and_disabling(server, slowlog_all):
    c = slowlog_all
    assert c("CONFIG", "SET", "slowlog-max-len", "3") == "OK"
    for i in range(10):
        c("SET", f"k{i}", "v")
    entries = c("SLOWLOG", "GET", "-1")
    assert len(entries) == 3
    assert [e[3] for e in entries] == [[b"SET", b"k9", b"v"], [b"SET", b"k8", b"v"],
                                       [b"SET", b"k7", b"v"]]
    assert c("CONFIG", "SET", "slowlog-log-slower-than", "-1") == "OK"
    c("SLOWLOG", "RESET")
    c("SET", "x", "y")
    assert c("SLOWLOG", "LEN") == 0


def test_slowlog_shortens_long_commands(server, slowlog_all):
    c = slowlog_all
    c("DEL", *[f"k{i}" for i in range(40)])
    c("SET", "big", "x" * 200)
    big, many = c("SLOWLOG", "GET", "2")
    assert big[3] == [b"SET", b"big", b"x" * 128 + b"... (72 more bytes)"]
    assert len(many[3]) == 32
    assert many[3][-1] == b"... (10 more arguments)"
    assert many[3][30] == b"k29"


def test_slowlog_errors(server):
    c = server.raw()
    assert c("SLOWLOG", "GET", "-2") == err("ERR count should be greater than or equal to -1")
    assert c("SLOWLOG", "GET", "abc") == err("ERR count should be greater than or equal to -1")
    assert c("SLOWLOG", "GET", "1", "2") == err(
        "ERR unknown subcommand or wrong number of arguments for 'GET'. Try SLOWLOG HELP.")
    assert c("SLOWLOG", "get", "1", "2") == err(
        "ERR unknown subcommand or wrong number of arguments for 'get'. Try SLOWLOG HELP.")
    assert c("SLOWLOG", "LEN", "x") == err("ERR wrong number of arguments for 'slowlog|len' command")
    assert c("SLOWLOG") == err("ERR wrong number of arguments for 'slowlog' command")
    assert c("SLOWLOG", "HELP")[0] == "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"


# ------------------------------------------------------------------------- MONITOR


def read_monitor_lines(monitor, count, timeout=5.0):
    lines = []
    deadline = time.monotonic() + timeout
    while len(lines) < count and time.monotonic() < deadline:
        reply = monitor.read()
        lines.append(reply)
    return lines


def test_monitor_streams_commands_of_every_client(server):
    monitor = server.raw()
    assert monitor("MONITOR") == "OK"
    a, b = server.raw(), server.raw()
    assert a("SET", "k", 'a"b\\c') == "OK"
    assert b("SELECT", "2") == "OK"
    assert b("GET", "nokey") is None
    assert a("set", "bin", b"a\x01\xff\n") == "OK"
    b("GET")  # an arity error: not shown
    b("CONFIG", "GET", "hz")  # admin commands are not shown
    assert a("AUTH", "x") == err(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?")
    assert b("PING") == "PONG"
    lines = read_monitor_lines(monitor, 6)
    parsed = [MONITOR_LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert [(m.group(1), m.group(3)) for m in parsed] == [
        ("0", '"SET" "k" "a\\"b\\\\c"'),
        ("2", '"SELECT" "2"'),
        ("2", '"GET" "nokey"'),
        ("0", '"set" "bin" "a\\x01\\xff\\n"'),
        ("0", '"AUTH" "(redacted)"'),
        ("2", '"PING"'),
    ]


def test_monitor_sees_many_threads_and_pipelines(server):
    monitor = server.raw()
    assert monitor("MONITOR") == "OK"
    clients = [server.raw() for _ in range(4)]
    for n, c in enumerate(clients):
        c.send_many([("SET", f"key:{n}:{i}", "v") for i in range(5)])
    for c in clients:
        for _ in range(5):
            assert c.read() == "OK"
    lines = read_monitor_lines(monitor, 20)
    assert len(lines) == 20
    keys = sorted(re.search(r'"(key:\d+:\d+)"', line).group(1) for line in lines)
    assert keys == sorted(f"key:{n}:{i}" for n in range(4) for i in range(5))
    # Each client's commands arrive in its order.
    for n in range(4):
        mine = [line for line in lines if f'"key:{n}:' in line]
        assert mine == sorted(mine, key=lambda l: int(re.search(rf'key:{n}:(\d+)', l).group(1)))


def test_monitor_ends_when_its_client_leaves(server):
    monitor = server.raw()
    assert monitor("MONITOR") == "OK"
    monitor.close()
    c = server.client()
    for i in range(20):
        c.set(f"k{i}", "v")
    assert c.ping()


def test_monitor_shows_queued_commands_when_exec_runs_them(server):
    monitor = server.raw()
    assert monitor("MONITOR") == "OK"
    c = server.raw()
    assert c("MULTI") == "OK"
    assert c("SET", "k", "v") == "QUEUED"
    assert c("GET", "k") == "QUEUED"
    assert c("EXEC") == ["OK", b"v"]
    assert c("MULTI") == "OK"
    assert c("SET", "k") == err("ERR wrong number of arguments for 'set' command")
    assert c("EXEC") == err("EXECABORT Transaction discarded because of previous errors.")
    lines = read_monitor_lines(monitor, 6)
    assert [MONITOR_LINE.match(line).group(3) for line in lines] == [
        '"MULTI"', '"SET" "k" "v"', '"GET" "k"', '"EXEC"', '"MULTI"', '"EXEC"']
    stamps = [float(line.split(" ")[0]) for line in lines[:4]]
    assert stamps == sorted(stamps)


def test_monitor_shows_a_script_before_its_commands(server):
    """EVAL*, FCALL* show as they start, whether they run or fail; the commands their
    script calls follow with "lua" for the client, and an EXEC after its commands."""
    monitor = server.raw()
    assert monitor("MONITOR") == "OK"
    c = server.raw()
    assert c("EVALSHA", "0" * 40, "0") == err("NOSCRIPT No matching script. Please use EVAL.")
    assert c("EVAL", "return 1", "-1") == err("ERR Number of keys can't be negative")
    assert c("EVAL", "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])",
             "1", "mk", "v") == b"v"
    assert c("MULTI") == "OK"
    assert c("EVAL_RO", "return redis.call('get', 'mk')", "0") == "QUEUED"
    assert c("EXEC") == [b"v"]
    assert c("FUNCTION", "LOAD", "REPLACE", "#!lua name=monlib\n"
             "redis.register_function('monf', function() return redis.call('ping') end)") == \
        b"monlib"
    assert c("FCALL", "monf", "0") == "PONG"
    assert c("FCALL", "nosuch", "0") == err("ERR Function not found")
    lines = read_monitor_lines(monitor, 12)
    parsed = [MONITOR_LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert [(m.group(2) == "lua", m.group(3)) for m in parsed] == [
        (False, '"EVALSHA" "' + "0" * 40 + '" "0"'),
        (False, '"EVAL" "return 1" "-1"'),
        (False, '"EVAL" "redis.call(\'set\', KEYS[1], ARGV[1]) return '
                'redis.call(\'get\', KEYS[1])" "1" "mk" "v"'),
        (True, '"set" "mk" "v"'),
        (True, '"get" "mk"'),
        (False, '"MULTI"'),
        (False, '"EVAL_RO" "return redis.call(\'get\', \'mk\')" "0"'),
        (True, '"get" "mk"'),
        (False, '"EXEC"'),
        (False, '"FUNCTION" "LOAD" "REPLACE" "#!lua name=monlib\\nredis.register_function('
                '\'monf\', function() return redis.call(\'ping\') end)"'),
        (False, '"FCALL" "monf" "0"'),
        (True, '"ping"'),
    ]
    assert c("FUNCTION", "DELETE", "monlib") == "OK"


def test_monitor_connection_keeps_serving_its_client(server):
    monitor = server.raw()
    assert monitor("SELECT", "3") == "OK"
    assert monitor("MONITOR") == "OK"
    # Its own command: the reply first, then the command's line.
    assert monitor("PING") == "PONG"
    assert MONITOR_LINE.match(monitor.read()).group(3) == '"PING"'
    assert monitor("ECHO", "hi") == b"hi"
    assert MONITOR_LINE.match(monitor.read()).group(3) == '"ECHO" "hi"'
    # Keyspace commands are refused, as for a replica; errors are not shown.
    replica = err("ERR Replica can't interact with the keyspace")
    for command in (("GET", "k"), ("SET", "k", "v"), ("DBSIZE",), ("KEYS", "*"), ("SCAN", "0"),
                    ("FLUSHALL",)):
        assert monitor(*command) == replica, command
    assert monitor("GET") == err("ERR wrong number of arguments for 'get' command")
    # WATCH has keys but no read or write flag: it runs; what follows it is still checked.
    monitor.send_many([("WATCH", "k"), ("GET", "k"), ("SET", "k", "v")])
    assert monitor.read() == "OK"
    assert MONITOR_LINE.match(monitor.read()).group(3) == '"WATCH" "k"'
    assert monitor.read() == replica
    assert monitor.read() == replica
    # MONITOR again: ignored, no reply.
    monitor.send("MONITOR")
    other = server.raw()
    assert other("SET", "x", "1") == "OK"
    assert MONITOR_LINE.match(monitor.read()).group(3) == '"SET" "x" "1"'
    # RESET ends monitoring and resets the connection.
    assert monitor("RESET") == "RESET"
    assert other("SET", "y", "2") == "OK"
    assert monitor("GET", "x") == b"1"  # database 0 again
    assert monitor.recv_available(0.2) == b""


def test_monitor_quit_and_monitor_inside_exec(server):
    monitor = server.raw()
    assert monitor("MONITOR") == "OK"
    assert monitor.raw_call("QUIT") == b"+OK\r\n"
    assert monitor.read_until_closed() == b""
    c = server.raw()
    assert c("MULTI") == "OK"
    assert c("MONITOR") == "QUEUED"
    assert c("EXEC") == [err("ERR MONITOR isn't allowed for DENY BLOCKING client")]
    assert c("SET", "k", "v") == "OK"


def test_monitor_stream_and_replies_interleave_in_order(server):
    monitor = server.raw()
    assert monitor("MONITOR") == "OK"
    other = server.raw()
    monitor.send_many([("PING",), ("ECHO", "a"), ("GET", "k")])
    assert monitor.read() == "PONG"
    assert MONITOR_LINE.match(monitor.read()).group(3) == '"PING"'
    assert monitor.read() == b"a"
    assert MONITOR_LINE.match(monitor.read()).group(3) == '"ECHO" "a"'
    assert monitor.read() == err("ERR Replica can't interact with the keyspace")
    for i in range(200):
        other.send("SET", f"k{i}", "v" * 100)
    for i in range(200):
        assert other.read() == "OK"
    lines = read_monitor_lines(monitor, 200)
    assert [MONITOR_LINE.match(line).group(3) for line in lines] == [
        f'"SET" "k{i}" "{"v" * 100}"' for i in range(200)]
    assert monitor("PING") == "PONG"


# ------------------------------------------------------------ SLOWLOG and EXEC


def test_slowlog_logs_the_commands_exec_runs_not_exec(server, slowlog_all):
    c = server.raw()
    assert c("MULTI") == "OK"
    assert c("SET", "a", "1") == "QUEUED"
    assert c("GET", "a") == "QUEUED"
    assert c("EXEC") == ["OK", b"1"]
    logged = [entry[3] for entry in slowlog_all("SLOWLOG", "GET", "-1")]
    mine = [args for args in logged if args[0] in (b"MULTI", b"SET", b"GET", b"EXEC")]
    assert mine == [[b"GET", b"a"], [b"SET", b"a", b"1"], [b"MULTI"]]


def test_exec_counts_its_commands_and_skips_the_slowlog(server):
    c = server.raw()
    assert c("CONFIG", "RESETSTAT") == "OK"
    assert c("MULTI") == "OK"
    assert c("SET", "a", "1") == "QUEUED"
    assert c("INCR", "a") == "QUEUED"
    assert c("EXEC") == ["OK", 2]
    stats = c("INFO", "commandstats").decode()
    for name in ("set", "incr", "multi", "exec"):
        assert f"cmdstat_{name}:calls=1," in stats, name
    info = c("COMMAND", "INFO", "EXEC")[0]
    assert info[2] == ["noscript", "loading", "stale", "skip_slowlog"]
