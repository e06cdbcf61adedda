"""maxmemory: past it, commands that add data get Redis's -OOM error (memcache stores get
memcached's SERVER_ERROR), while reads and deletes keep working. The policy is
noeviction; used_memory is published by each shard `hz` times a second."""

import os

import pytest
import redis

from helpers import wait_for

pytestmark = pytest.mark.damselfly_only

OOM = "OOM command not allowed when used memory > 'maxmemory'."


def _fill_until_oom(r, value):
    for i in range(10_000):
        try:
            r.set(f"fill:{i}", value)
        except redis.ResponseError as e:
            return i, str(e)
    raise AssertionError("maxmemory never refused a write")


def test_writes_get_oom_past_maxmemory_and_reads_still_work(server_factory):
    srv = server_factory("--maxmemory=4mb", "--hz=100")
    r = srv.client()
    assert r.config_get("maxmemory") == {"maxmemory": str(4 << 20)}
    value = os.urandom(65536)  # random: neither packed nor compressed, 64 KiB each
    stored, error = _fill_until_oom(r, value)
    assert error == OOM
    assert 4 <= stored <= 200  # 4 MiB / 64 KiB = 64, plus up to 10 ms of writes before it shows
    assert r.get("fill:0") == value
    with pytest.raises(redis.ResponseError, match="^OOM command not allowed"):
        r.append("fill:0", "x")
    # Deleting frees memory; once the shards publish it, writes work again.
    r.delete(*[f"fill:{i}" for i in range(stored)])
    wait_for(lambda: _set_or_none(r, "after", "ok"), what="writes accepted after DEL", timeout=5)


def test_memcache_stores_get_server_error_past_maxmemory(mc_server_factory):
    srv = mc_server_factory("--maxmemory=4mb", "--hz=100")
    mc = srv.mc_raw()
    value = os.urandom(65536)
    for i in range(10_000):
        reply = mc.call(b"set k%d 0 0 %d\r\n" % (i, len(value)) + value + b"\r\n")
        if reply != b"STORED\r\n":
            break
    assert reply == b"SERVER_ERROR out of memory storing object\r\n"
    assert mc.call(b"ms other 2\r\nhi\r\n") == b"SERVER_ERROR out of memory storing object\r\n"
    assert mc.call(b"get k0\r\n").startswith(b"VALUE k0 0 65536\r\n")
    assert mc.call(b"delete k0\r\n") == b"DELETED\r\n"


def _set_or_none(r, key, value):
    try:
        return r.set(key, value)
    except redis.ResponseError:
        return None
