"""Behaviour only damselfly has (its own flags); skipped when the target is redis-server."""

import subprocess

import pytest

from conftest import damselfly_binary

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
