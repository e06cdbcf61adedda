"""The write flood of issue #19 point 6, scaled down for CI: tools/flood_load's 4 clients
write 1 KiB values as fast as they can over a key space of 3x maxmemory (one pass, a few
seconds) while the server's RSS is sampled every 100 ms and reads are checked.

Without eviction, writes past maxmemory get Redis's -OOM error (memcached's SERVER_ERROR
out of memory) and reads keep working: validated on redis-server. With an evicting policy
(allkeys-lru on redis-server, --cache_mode on damselfly) no write fails and reads keep
working; on damselfly, the whole RSS stays within 10% over maxmemory (its ~11 MiB start-up
footprint of code, stacks and rings, a sixth of this small limit, included: eviction.h) and
the write rate once full stays within 20% of the rate while unfilled. The cache-mode tests skip until the binary knows
--cache_mode. The full-sized flood is tools/flood-bench.sh.
"""

import functools
import os
import subprocess

import pytest

from conftest import REPO_ROOT, TARGET, damselfly_binary

MAXMEMORY = 64 << 20
OOM = "-OOM command not allowed when used memory > 'maxmemory'."


def _flood_binary():
    return os.path.join(os.path.dirname(damselfly_binary()), "tools", "flood_load")


@functools.lru_cache(maxsize=None)
def _damselfly_knows(flag):
    out = subprocess.run([damselfly_binary(), "--helpfull"], capture_output=True, text=True,
                         timeout=30)
    return f"-{flag} " in out.stdout + out.stderr


@pytest.fixture(autouse=True)
def _need_flood_load():
    if not os.access(_flood_binary(), os.X_OK):
        pytest.skip(f"{_flood_binary()} is not built (tools/build.sh opt flood_load)")


def flood(srv, port, protocol="resp"):
    """Runs one pass of the flood against srv; returns {line head: {key: value}}."""
    proc = subprocess.run(
        [_flood_binary(), f"--port={port}", f"--protocol={protocol}", f"--maxmemory={MAXMEMORY}",
         "--passes=1", "--seconds=60", f"--pid={srv.proc.pid}"],
        capture_output=True, text=True, timeout=90, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    result = {}
    for line in proc.stdout.splitlines():
        head, _, rest = line.partition(" ")
        rest, _, first_error = rest.partition(" first_error=")  # the last field, with spaces
        if head != "timeline":
            result[head] = dict(kv.split("=", 1) for kv in rest.split(" "))
            if first_error:
                result[head]["first_error"] = first_error
    return result


def assert_rss_bounded(r):
    assert int(r["rss"]["peak_bytes"]) <= 1.10 * MAXMEMORY, r["rss"]


def under_asan(srv):
    with open(f"/proc/{srv.proc.pid}/maps") as maps:
        return "libasan" in maps.read()


def assert_reads_kept_working(r, first_key_always=False):
    assert r["reads"]["failed"] == "0"
    assert int(r["reads"]["checks"]) >= 2
    if first_key_always:  # nothing evicts: the first key written is there at every sample
        assert r["reads"]["first_key_hits"] == r["rss"]["samples"]


def test_flood_without_eviction_gets_oom_and_reads_work(server_factory):
    srv = server_factory(f"--maxmemory={MAXMEMORY}")
    r = flood(srv, srv.port)
    assert int(r["writes"]["oom"]) > 0
    assert r["writes"]["other_errors"] == "0"
    assert r["writes"]["first_error"] == OOM
    assert int(r["writes"]["ok"]) * 1024 < 1.5 * MAXMEMORY
    assert_reads_kept_working(r, first_key_always=True)


@pytest.mark.damselfly_only
def test_memcache_flood_without_eviction_gets_server_error(mc_server_factory):
    srv = mc_server_factory(f"--maxmemory={MAXMEMORY}")
    r = flood(srv, srv.mc_port, "memcache")
    assert int(r["writes"]["oom"]) > 0
    assert r["writes"]["other_errors"] == "0"
    assert_reads_kept_working(r, first_key_always=True)


def _evicting_server(server_factory):
    if TARGET == "redis":
        return server_factory(f"--maxmemory={MAXMEMORY}", "--maxmemory-policy=allkeys-lru")
    if not _damselfly_knows("cache_mode"):
        pytest.skip("this damselfly has no --cache_mode yet (issue #19 point 1)")
    return server_factory(f"--maxmemory={MAXMEMORY}", "--cache_mode=true")


def test_flood_with_eviction_never_fails_a_write(server_factory):
    # The unfilled rate is timed over the first 32 MiB, about 0.15 s, on a machine whose
    # neighbours can take a core for that long; so the rate ratio must reach 0.8 in the best
    # of up to three floods, each on a fresh server. Every flood must pass the rest.
    throughputs = []
    for _ in range(3):
        srv = _evicting_server(server_factory)
        r = flood(srv, srv.port)
        assert r["writes"]["oom"] == "0" and r["writes"]["other_errors"] == "0"
        assert int(r["writes"]["ok"]) * 1024 >= 3 * MAXMEMORY - 1024
        assert_reads_kept_working(r)
        # redis-server's RSS runs about 20% over maxmemory here; under AddressSanitizer RSS
        # is its shadow memory and quarantine, and the rates are its own.
        if TARGET != "damselfly" or under_asan(srv):
            return
        assert_rss_bounded(r)
        throughputs.append(r["throughput"])
        if float(r["throughput"]["filled_over_unfilled"]) >= 0.8:
            return
    pytest.fail(f"the write rate once full fell below 0.8x the unfilled rate: {throughputs}")


@pytest.mark.damselfly_only
def test_memcache_flood_in_cache_mode_never_fails_a_store(mc_server_factory):
    if not _damselfly_knows("cache_mode"):
        pytest.skip("this damselfly has no --cache_mode yet (issue #19 point 1)")
    srv = mc_server_factory(f"--maxmemory={MAXMEMORY}", "--cache_mode=true")
    r = flood(srv, srv.mc_port, "memcache")
    assert r["writes"]["oom"] == "0" and r["writes"]["other_errors"] == "0"
    assert_reads_kept_working(r)
    if not under_asan(srv):
        assert_rss_bounded(r)
