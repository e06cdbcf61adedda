"""Behaviour only damselfly has (its own flags); skipped when the target is redis-server."""

import os
import random
import subprocess
import time

import pytest

from conftest import damselfly_binary, free_port
from helpers import err, info_fields, json_records
from resp_client import RawConnection

pytestmark = pytest.mark.damselfly_only


def test_help_lists_flags():
    res = subprocess.run([damselfly_binary(), "--help"], capture_output=True, text=True,
                         timeout=10)
    text = res.stdout + res.stderr
    for flag in ("proactor_threads", "port", "bind", "requirepass"):
        assert flag in text, f"--help does not mention --{flag}"


@pytest.mark.parametrize("threads", [1, 4])
def test_keys_spread_over_shards(server_factory, threads):
    # Later flags override earlier ones (gflags), so this replaces --proactor_threads=2.
    srv = server_factory(f"--proactor_threads={threads}")
    c = srv.raw()
    c.send_many([("SET", f"key:{i}", i) for i in range(2000)])
    for _ in range(2000):
        assert c.read() == "OK"
    assert c("DBSIZE") == 2000
    assert len(c("KEYS", "*")) == 2000
    assert c("GET", "key:0") == b"0"
    assert c("GET", "key:1999") == b"1999"


def test_force_epoll(server_factory):
    srv = server_factory("--force_epoll")
    c = srv.raw()
    assert c("SET", "k", "v") == "OK"
    assert c("GET", "k") == b"v"
    assert c("INCR", "n") == 1


def test_pipeline_to_a_remote_shard_is_squashed(server):
    """1,000 pipelined commands for one shard cost a handful of hops, not 1,000."""
    probe = server.raw()

    def counters():
        stats = info_fields(probe, "stats")
        return int(stats["total_shard_hops"]), int(stats["total_remote_commands"])

    for _attempt in range(4):  # connections land on threads round-robin: find a remote one
        c = server.raw()
        hops_before, remote_before = counters()
        c.send_many([("SET", "{same}:%d" % i, i) for i in range(1000)])
        for _ in range(1000):
            assert c.read() == "OK"
        hops, remote = counters()
        hops, remote = hops - hops_before, remote - remote_before
        if remote == 0:
            continue  # this connection shares the shard's thread: ran inline
        assert remote >= 1000
        assert hops <= 1000 // 64 + 4, f"{hops} hops for {remote} remote commands"
        return
    pytest.fail("no connection landed away from the shard of {same}")


def _start_raw(args, env):
    port = free_port()
    proc = subprocess.Popen([damselfly_binary(), f"--port={port}", "--bind=127.0.0.1",
                             "--proactor_threads=1"] + args,
                            env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            return proc, RawConnection("127.0.0.1", port)
        except OSError:
            time.sleep(0.05)
    proc.kill()
    pytest.fail("damselfly did not start")


def test_flags_from_environment_and_flagfile(tmp_path):
    flagfile = tmp_path / "damselfly.flags"
    flagfile.write_text("--dbnum=3\n")
    proc, c = _start_raw([f"--flagfile={flagfile}"], {"DAMSELFLY_REQUIREPASS": "sekret"})
    try:
        assert c("PING") == err("NOAUTH Authentication required.")
        assert c("AUTH", "sekret") == "OK"
        assert c("SELECT", "2") == "OK"
        assert c("SELECT", "3") == err("ERR DB index is out of range")
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_command_line_overrides_environment():
    proc, c = _start_raw(["--dbnum=5"], {"DAMSELFLY_dbnum": "2"})
    try:
        assert c("SELECT", "4") == "OK"
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_compressed_values_take_less_memory(server_factory):
    # A 1 KiB JSON document compresses to a few hundred bytes; 1 KiB of random bytes does
    # not, and takes its exact size. With --compress_values=false the JSON takes its
    # 7-bit packed size (896 bytes).
    json = json_records(1024)
    for flags, json_range in (((), (100, 600)), (("--compress_values=false",), (896, 1000))):
        c = server_factory(*flags).raw()
        c("SET", "json", json)
        c("SET", "random", os.urandom(1024))
        c("SET", "padded", b"value:1" + b"\0" * 1017)
        assert json_range[0] <= c("MEMORY", "USAGE", "json") < json_range[1], flags
        assert 1024 <= c("MEMORY", "USAGE", "random") < 1100
        assert c("GET", "json") == json
        used = c("MEMORY", "USAGE", "padded")
        assert (used < 150) if not flags else (used >= 896), flags
        memory = info_fields(c, "memory")
        count = int(memory["compressed_strings"])
        assert count == (0 if flags else 2), flags
        assert int(memory["compressed_strings_bytes"]) == 1024 * count
        if count:
            assert 0 < int(memory["compressed_strings_used_memory"]) < 600
        c("DEL", "json", "padded")
        assert int(info_fields(c, "memory")["compressed_strings"]) == 0


def test_appended_values_are_not_compressed(server):
    # APPEND and SETRANGE rebuild the whole value; compressing it again on every one would
    # cost far more than the change, so such values stay uncompressed until the next SET.
    # RENAME keeps each kind as it is.
    c = server.raw()
    json = json_records(1024)
    c("SET", "k", json)
    compressed = c("MEMORY", "USAGE", "k")
    assert compressed < 600
    assert c("APPEND", "k", b',{"id":1}') == 1033
    assert c("MEMORY", "USAGE", "k") > 896  # packed, no longer compressed
    assert c("GET", "k") == json + b',{"id":1}'
    assert c("RENAME", "k", "k2") == "OK"
    assert c("MEMORY", "USAGE", "k2") > 896
    assert c("OBJECT", "ENCODING", "k2") == b"raw"
    c("SET", "k2", json)
    assert c("MEMORY", "USAGE", "k2") == compressed
    assert c("RENAME", "k2", "k3") == "OK"
    assert c("MEMORY", "USAGE", "k3") == compressed
    assert c("SETRANGE", "k3", "0", "[") == 1024
    assert c("MEMORY", "USAGE", "k3") > 896
    assert c("GET", "k3") == b"[" + json[1:]


def test_stream_closed_nodes_are_compressed(server):
    # 5000 entries of five small fields: 50 nodes of ~2.9 KiB as Redis keeps them; here
    # every node but the last is an LZF image of under 1 KiB, which MEMORY USAGE counts.
    # Values that do not repeat (random printable bytes) take about their size.
    c = server.raw()
    fields = ["f1", "v1", "f2", "v2", "f3", "v3", "f4", "v4", "f5", "v5"]
    c.send_many([("XADD", "s", f"{i}-0", *fields) for i in range(1, 5001)])
    for i in range(1, 5001):
        assert c.read() == f"{i}-0".encode()
    assert 10000 < c("MEMORY", "USAGE", "s") < 60000
    assert c("XRANGE", "s", "2500", "2501") == [[b"2500-0", [f.encode() for f in fields]],
                                                 [b"2501-0", [f.encode() for f in fields]]]
    assert c("XDEL", "s", "2500-0", "17-0") == 2
    assert c("XLEN", "s") == 4998
    assert c("MEMORY", "USAGE", "s") < 60000
    rng = random.Random(5)
    values = []
    for i in range(1, 1001):
        value = "".join(chr(32 + rng.randrange(95)) for _ in range(8 + rng.randrange(25)))
        values.append(value.encode())
        c.send_many([("XADD", "r", f"{i}-0", "f", value)])
    for i in range(1, 1001):
        assert c.read() == f"{i}-0".encode()
    assert c("MEMORY", "USAGE", "r") > 1000 * 20
    assert [e[1][1] for e in c("XRANGE", "r", "-", "+")] == values
