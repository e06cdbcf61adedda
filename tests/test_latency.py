"""The latency monitor (CONFIG latency-monitor-threshold, LATENCY ...), validated against
redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis)."""

import re
import time

import pytest

from helpers import err

HELP = [
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the "
    "specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Prints this help.",
]

DISABLED = (
    b"I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis "
    b"instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order "
    b"to enable it. If we weren't in a deep space mission I'd suggest to take a look at "
    b"https://redis.io/topics/latency-monitor.\n")

# Redis's HdrHistogram labels: the end of its bucket of each power of two from 1024 ns, in us.
HISTOGRAM_LABELS = {((1 << p) + (1 << (p - 7)) - 1) // 1000 for p in range(10, 31)}


@pytest.fixture
def debug_server(server_factory, target):
    """A fresh server that accepts DEBUG (redis-server needs enable-debug-command)."""
    extra = ("--enable-debug-command=local",) if target == "redis" else ()
    return server_factory(*extra)


@pytest.fixture
def monitored(debug_server):
    """A client of a fresh server with latency-monitor-threshold 10 and one "command" event
    of about 30 ms."""
    c = debug_server.raw()
    assert c("CONFIG", "SET", "latency-monitor-threshold", "10") == "OK"
    assert c("DEBUG", "SLEEP", "0.03") == "OK"
    return c


def test_threshold_config(server):
    c = server.raw()
    assert c("CONFIG", "GET", "latency-monitor-threshold") == [b"latency-monitor-threshold", b"0"]
    try:
        assert c("CONFIG", "SET", "latency-monitor-threshold", "25") == "OK"
        assert c("CONFIG", "GET", "latency-monitor*") == [b"latency-monitor-threshold", b"25"]
        assert c("CONFIG", "SET", "latency-monitor-threshold", "-1") == err(
            "ERR CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - "
            "argument must be between 0 and 9223372036854775807 inclusive")
        assert c("CONFIG", "SET", "latency-monitor-threshold", "abc") == err(
            "ERR CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - "
            "argument couldn't be parsed into an integer")
        assert c("CONFIG", "GET", "latency-monitor-threshold") == [b"latency-monitor-threshold", b"25"]
    finally:
        c("CONFIG", "SET", "latency-monitor-threshold", "0")


def test_help_and_arity(server):
    c = server.raw()
    assert c("LATENCY", "HELP") == HELP
    assert c("latency", "help", "x") == err("ERR wrong number of arguments for 'latency|help' command")
    assert c("LATENCY") == err("ERR wrong number of arguments for 'latency' command")
    assert c("LATENCY", "HISTORY") == err("ERR wrong number of arguments for 'latency|history' command")
    assert c("LATENCY", "GRAPH") == err("ERR wrong number of arguments for 'latency|graph' command")
    assert c("LATENCY", "GRAPH", "a", "b") == err("ERR wrong number of arguments for 'latency|graph' command")
    assert c("LATENCY", "LATEST", "x") == err("ERR wrong number of arguments for 'latency|latest' command")
    assert c("LATENCY", "DOCTOR", "x") == err("ERR wrong number of arguments for 'latency|doctor' command")
    assert c("LATENCY", "foo") == err("ERR unknown subcommand 'foo'. Try LATENCY HELP.")


def test_no_events(server):
    c = server.raw()
    assert c("LATENCY", "RESET") == 0
    assert c("LATENCY", "LATEST") == []
    assert c("LATENCY", "HISTORY", "command") == []
    assert c("LATENCY", "HISTORY", "blabla") == []
    assert c("LATENCY", "RESET", "blabla", "command") == 0
    assert c("LATENCY", "GRAPH", "command") == err("ERR No samples available for event 'command'")
    assert c("LATENCY", "GRAPH", "blabla") == err("ERR No samples available for event 'blabla'")
    assert c("LATENCY", "DOCTOR") == DISABLED
    assert c.raw_call("LATENCY", "DOCTOR") == b"$%d\r\n%s\r\n" % (len(DISABLED), DISABLED)


def test_fast_commands_are_not_events_below_threshold(server):
    c = server.raw()
    try:
        assert c("CONFIG", "SET", "latency-monitor-threshold", "1000") == "OK"
        for i in range(50):
            c("SET", f"k{i}", "v")
        assert c("LATENCY", "LATEST") == []
        assert c("LATENCY", "DOCTOR").startswith(b"Dave, no latency spike was observed")
    finally:
        c("CONFIG", "SET", "latency-monitor-threshold", "0")


def test_command_event(monitored):
    c = monitored
    now = int(time.time())
    latest = c("LATENCY", "LATEST")
    assert len(latest) == 1
    name, stamp, latency, worst = latest[0]
    assert name == b"command"
    assert abs(stamp - now) <= 2 and 30 <= latency < 1000 and worst == latency
    assert c("LATENCY", "HISTORY", "command") == [[stamp, latency]]
    assert c("LATENCY", "HISTORY", "COMMAND") == []  # event names are case-sensitive here...
    assert c("LATENCY", "GRAPH", "COMMAND") == err("ERR No samples available for event 'COMMAND'")
    # ... and not here; each class counts once.
    assert c("LATENCY", "RESET", "COMMAND", "command", "blabla") == 1
    assert c("LATENCY", "LATEST") == []
    assert c("LATENCY", "RESET") == 0


def test_same_second_keeps_the_worst(monitored):
    c = monitored
    # Sleep into the next second so that the two sleeps below most likely share one.
    first = c("LATENCY", "HISTORY", "command")
    assert c("DEBUG", "SLEEP", "0.05") == "OK"
    assert c("DEBUG", "SLEEP", "0.02") == "OK"
    history = c("LATENCY", "HISTORY", "command")
    assert 1 <= len(history) <= 3 and len(history) >= len(first)
    assert all(a[0] < b[0] for a, b in zip(history, history[1:]))  # one sample per second
    assert max(latency for _, latency in history) >= 50
    assert c("LATENCY", "LATEST")[0][3] >= 50


def test_below_threshold_and_disabled(monitored):
    c = monitored
    assert c("DEBUG", "SLEEP", "0") == "OK"
    assert len(c("LATENCY", "HISTORY", "command")) == 1
    assert c("CONFIG", "SET", "latency-monitor-threshold", "0") == "OK"
    assert c("DEBUG", "SLEEP", "0.03") == "OK"
    assert len(c("LATENCY", "HISTORY", "command")) == 1
    # Samples taken while enabled are still reported.
    assert c("LATENCY", "DOCTOR").startswith(b"Dave, I have observed latency spikes")


def test_graph(monitored):
    c = monitored
    stamp, latency = c("LATENCY", "HISTORY", "command")[0]
    graph = c("LATENCY", "GRAPH", "command")
    lines = graph.decode().split("\n")
    assert lines[0] == f"command - high {latency} ms, low {latency} ms (all time high {latency} ms)"
    assert lines[1] == "-" * 80
    # One sample at the bottom of the scale: four rows of bars, a blank row, its age.
    assert lines[2:6] == [" ", " ", " ", "_"]
    assert lines[6] == " "
    assert re.fullmatch(r"\d", lines[7]) and lines[8] == "s" and lines[9] == ""
    assert len(lines) == 10
    c("HELLO", "3")
    graph3 = c("LATENCY", "GRAPH", "command")
    assert graph3.format == "txt" and graph3.startswith(b"command - high ")


def test_doctor_report(monitored):
    c = monitored
    report = c("LATENCY", "DOCTOR").decode()
    latency = c("LATENCY", "HISTORY", "command")[0][1]
    lines = report.split("\n")
    assert lines[0] == ("Dave, I have observed latency spikes in this Redis instance. You don't "
                        "mind talking about it, do you Dave?")
    assert lines[1] == ""
    assert re.fullmatch(
        rf"1\. command: 1 latency spikes \(average {latency}ms, mean deviation 0ms, period "
        rf"\d+\.\d\d sec\)\. Worst all time event {latency}ms\.", lines[2])
    assert lines[3:6] == ["", "I have a few advices for you:", ""]
    # slowlog-log-slower-than is 10000 us: 10 ms, not above the threshold of 10 ms.
    assert lines[6] == ("- Check your Slow Log to understand what are the commands you are "
                        "running which are too slow to execute. Please check "
                        "https://redis.io/commands/slowlog for more information.")
    assert lines[7].startswith("- Deleting, expiring or evicting (because of maxmemory policy) "
                               "large objects is a blocking operation.")
    assert c("CONFIG", "SET", "latency-monitor-threshold", "5") == "OK"
    assert ("- Your current Slow Log configuration only logs events that are slower than your "
            "configured latency monitor threshold. Please use 'CONFIG SET "
            "slowlog-log-slower-than 5000'.\n") in c("LATENCY", "DOCTOR").decode()
    assert c("CONFIG", "SET", "slowlog-log-slower-than", "-1") == "OK"
    assert ("- There are latency issues with potentially slow commands you are using. Try to "
            "enable the Slow Log Redis feature using the command 'CONFIG SET "
            "slowlog-log-slower-than 5000'. If the Slow log is disabled Redis is not able to "
            "log slow commands execution for you.\n") in c("LATENCY", "DOCTOR").decode()


def check_histogram_entry(entry, calls):
    assert set(entry) == {b"calls", b"histogram_usec"}
    assert entry[b"calls"] == calls
    buckets = entry[b"histogram_usec"]
    assert set(buckets) <= HISTOGRAM_LABELS
    counts = [buckets[k] for k in sorted(buckets)]
    assert counts == sorted(set(counts)) and counts[-1] == calls


def pairs(flat):
    assert len(flat) % 2 == 0
    return dict(zip(flat[::2], flat[1::2]))


def test_histogram_resp2(server):
    c = server.raw()
    assert c("CONFIG", "RESETSTAT") == "OK"
    assert pairs(c("LATENCY", "HISTOGRAM")).keys() == {b"config|resetstat"}
    c("SET", "a", "b")
    c("SET", "c", "d")
    c("GET", "a")
    reply = c("LATENCY", "HISTOGRAM", "set", "blabla", "get", "SET", "config|resetstat",
              "config|nosuch", "get|x")
    assert reply[::2] == [b"set", b"get", b"set", b"config|resetstat"]
    for name, calls in ((b"set", 2), (b"get", 1), (b"config|resetstat", 1)):
        entry = pairs(reply[reply.index(name) + 1])
        entry[b"histogram_usec"] = pairs(entry[b"histogram_usec"])
        check_histogram_entry(entry, calls)
    assert c("LATENCY", "HISTOGRAM", "blabla", "zadd") == []
    everything = pairs(c("LATENCY", "HISTOGRAM"))
    assert {b"set", b"get", b"config|resetstat", b"latency|histogram"} <= everything.keys()


def test_histogram_resp3_and_subcommands(server):
    c = server.raw()
    c("HELLO", "3")
    assert c("CONFIG", "RESETSTAT") == "OK"
    c("CONFIG", "GET", "maxmemory")
    c("SET", "a", "b")
    reply = c("LATENCY", "HISTOGRAM", "config", "set")
    assert set(reply) == {b"config|resetstat", b"config|get", b"set"}
    for entry in reply.values():
        check_histogram_entry(entry, 1)
    assert set(c("LATENCY", "HISTOGRAM", "CONFIG|GET")) == {b"config|get"}
    assert c("LATENCY", "HISTOGRAM", "nosuch") == {}
