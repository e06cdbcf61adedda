"""tools/hitrate_load in its CI size (the full benchmark is tools/cache-bench.sh): the trace
is a function of the seed, and replayed against an evicting server (allkeys-lru on
redis-server, --cache_mode on damselfly, which skips until the binary has the flag) every
miss is stored without an error and the hit ratios land where a cache holding about a
quarter of the keys puts them. On damselfly, cache mode does at least as well as its
allkeys-lru on a shifting hot set, nearly as well on Zipf, and keeps the hot set through a
scan that flushes LRU's."""

import functools
import os
import subprocess

import pytest

from conftest import TARGET, damselfly_binary

SMALL = ["--keys=100000", "--warmup=100000", "--requests=100000", "--value_size=100",
         "--hot_keys=1000"]


def _loader():
    return os.path.join(os.path.dirname(damselfly_binary()), "tools", "hitrate_load")


@pytest.fixture(autouse=True)
def _need_loader():
    if not os.access(_loader(), os.X_OK):
        pytest.skip(f"{_loader()} is not built (tools/build.sh opt hitrate_load)")


def run(*args):
    proc = subprocess.run([_loader(), *SMALL, *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = {}
    for line in proc.stdout.splitlines():
        words = line.split(" ")
        out[words[0]] = dict(w.split("=", 1) for w in words[1:] if "=" in w)
    return out


@functools.lru_cache(maxsize=None)
def _damselfly_knows(flag):
    out = subprocess.run([damselfly_binary(), "--helpfull"], capture_output=True, text=True,
                         timeout=30)
    return f"-{flag} " in out.stdout + out.stderr


def distinct(*args):
    """The trace's distinct keys (hitrate_load --distinct: no server)."""
    proc = subprocess.run([_loader(), *SMALL, "--distinct", *args], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("distinct_keys="), proc.stdout
    return int(proc.stdout.split("=")[1])


def test_the_trace_depends_only_on_the_seed():
    shift = ["--workload=shift", "--shift_every=20000"]
    assert distinct(*shift) == distinct(*shift)
    assert distinct(*shift) != distinct(*shift, "--seed=2")
    # Zipf 0.99 over 100k keys: 200k requests touch about a third of them.
    assert 25_000 < distinct() < 45_000


def _evicting_server(server_factory, maxmemory):
    if TARGET == "redis":
        return server_factory(f"--maxmemory={maxmemory}", "--maxmemory-policy=allkeys-lru")
    if not _damselfly_knows("cache_mode"):
        pytest.skip("this damselfly has no --cache_mode yet (issue #19 point 1)")
    return server_factory(f"--maxmemory={maxmemory}", "--cache_mode=true")


@pytest.mark.parametrize("workload", [["--workload=zipf"], ["--workload=zipf", "--zipf=0.8"],
                                      ["--workload=shift", "--shift_every=20000"],
                                      ["--workload=scan", "--scan_keys=40000",
                                       "--after_scan=100000", "--window=2000"]])
def test_replay_against_an_evicting_server(server_factory, workload):
    srv = _evicting_server(server_factory, 4 << 20)
    out = run(f"--port={srv.port}", *workload)
    assert out["run"]["set_errors"] == "0"
    assert int(out["measured"]["requests"]) >= 100_000
    assert 0.3 < float(out["measured"]["hit_ratio"]) < 0.95, out["measured"]
    assert 0 < int(srv.client().dbsize()) < 100_000
    if "--workload=scan" in workload:
        assert out["phase=scan"]["hits"] == "0"  # the scan's keys occur nowhere else
        assert out["recovery"]["recovery_requests"] != "never"


def _ratio_pair(server_factory, workload):
    """Cache mode's measured output and allkeys-lru's on the same damselfly and trace."""
    if not _damselfly_knows("cache_mode"):
        pytest.skip("this damselfly has no --cache_mode yet (issue #19 point 1)")
    outs = []
    for flags in (["--cache_mode=true"], ["--maxmemory_policy=allkeys-lru"]):
        srv = server_factory(f"--maxmemory={4 << 20}", *flags)
        outs.append(run(f"--port={srv.port}", *workload))
    return outs


# The targets cache mode reaches at this size (docs/benchmarks.md has the reduced-size
# comparison with redis-server and memcached): at least LRU's ratio on a shifting hot set;
# on Zipf within 0.05 of it (0.815-0.84 against 0.84 here, 2 shards of a few thousand
# keys; at the reduced size the two tie); a hot set that the scan does not flush (LRU's
# drops by 0.1 or more).
@pytest.mark.damselfly_only
@pytest.mark.parametrize("workload,margin", [(["--workload=zipf"], 0.05),
                                             (["--workload=shift", "--shift_every=20000"], 0.01)])
def test_cache_mode_against_lru(server_factory, workload, margin):
    cache, lru = _ratio_pair(server_factory, workload)
    assert float(cache["measured"]["hit_ratio"]) >= float(lru["measured"]["hit_ratio"]) - margin


@pytest.mark.damselfly_only
def test_cache_mode_keeps_the_hot_set_through_a_scan(server_factory):
    cache, lru = _ratio_pair(server_factory, ["--workload=scan", "--scan_keys=40000",
                                              "--after_scan=100000", "--window=2000"])
    before = float(cache["recovery"]["baseline_hot_hit_ratio"])
    assert float(cache["recovery"]["first_window_hot_hit_ratio"]) >= before - 0.05, cache
    assert float(lru["recovery"]["first_window_hot_hit_ratio"]) < \
        float(lru["recovery"]["baseline_hot_hit_ratio"]) - 0.1, lru
