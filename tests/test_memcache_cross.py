"""One keyspace, two protocols: memcache commands and RESP commands see the same strings in
database 0 (issue #6). damselfly only: memcached has no RESP port.
"""

import pytest

pytestmark = pytest.mark.damselfly_only


def test_resp_set_is_readable_through_memcache(mc_server):
    r = mc_server.client()
    raw = mc_server.mc_raw()
    assert r.set("k", "from-resp") is True
    # A key stored through RESP has flags 0.
    assert raw.call(b"get k\r\n") == b"VALUE k 0 9\r\nfrom-resp\r\nEND\r\n"
    assert raw.call(b"mg k v f\r\n") == b"VA 9 f0\r\nfrom-resp\r\n"
    assert mc_server.mc_client().get(b"k") == b"from-resp"


def test_memcache_set_is_readable_through_resp(mc_server):
    r = mc_server.client()
    c = mc_server.mc_client()
    c.set(b"k", b"from-mc", flags=5)
    assert r.get("k") == b"from-mc"
    assert r.exists("k") == 1
    assert r.type("k") == b"string"
    c.set(b"bin", bytes(range(256)))
    assert r.get("bin") == bytes(range(256))


def test_resp_del_hides_the_key_from_memcache(mc_server):
    r = mc_server.client()
    c = mc_server.mc_client()
    c.set(b"k", b"v")
    assert r.delete("k") == 1
    assert c.get(b"k") is None
    assert c.delete(b"k") is False


def test_memcache_delete_hides_the_key_from_resp(mc_server):
    r = mc_server.client()
    r.set("k", "v")
    assert mc_server.mc_client().delete(b"k") is True
    assert r.get("k") is None


def test_resp_set_after_gets_makes_cas_fail(mc_server):
    r = mc_server.client()
    c = mc_server.mc_client()
    c.set(b"k", b"v1")
    value, cas = c.gets(b"k")
    assert value == b"v1"
    assert r.set("k", "changed-by-resp") is True
    assert c.cas(b"k", b"v2", cas) is False  # EXISTS
    assert r.get("k") == b"changed-by-resp"
    # A fresh gets gives a cas that works.
    _, cas = c.gets(b"k")
    assert c.cas(b"k", b"v3", cas) is True
    assert r.get("k") == b"v3"


def test_resp_append_changes_the_cas(mc_server):
    r = mc_server.client()
    c = mc_server.mc_client()
    c.set(b"k", b"v1")
    _, cas = c.gets(b"k")
    r.append("k", "x")
    assert c.cas(b"k", b"v2", cas) is False
    assert c.get(b"k") == b"v1x"


def test_flags_survive_memcache_append_and_prepend(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"set k 77 0 3\r\nmid\r\n")
    raw.call(b"append k 0 0 1\r\n>\r\n")
    raw.call(b"prepend k 0 0 1\r\n<\r\n")
    assert raw.call(b"get k\r\n") == b"VALUE k 77 5\r\n<mid>\r\nEND\r\n"
    assert mc_server.client().get("k") == b"<mid>"


def test_resp_overwrite_resets_flags(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"set k 77 0 1\r\nx\r\n")
    mc_server.client().set("k", "y")
    assert raw.call(b"get k\r\n") == b"VALUE k 0 1\r\ny\r\nEND\r\n"


def test_incr_across_protocols(mc_server):
    r = mc_server.client()
    c = mc_server.mc_client()
    r.set("n", 10)
    assert c.incr(b"n", 5) == 15
    assert r.incr("n") == 16
    assert c.decr(b"n", 6) == 10
    assert int(r.get("n")) == 10


def test_memcache_ttl_is_visible_through_resp(mc_server):
    r = mc_server.client()
    raw = mc_server.mc_raw()
    raw.call(b"set k 0 100 1\r\nx\r\n")
    assert 98 <= r.ttl("k") <= 100
    r.expire("k", 50)
    reply = raw.call(b"mg k t\r\n")
    assert reply in (b"HD t50\r\n", b"HD t49\r\n"), reply
    r.persist("k")
    assert raw.call(b"mg k t\r\n") == b"HD t-1\r\n"


def test_memcache_sees_database_0_only(mc_server):
    r0 = mc_server.client(db=0)
    r1 = mc_server.client(db=1)
    c = mc_server.mc_client()
    r1.set("only-in-1", "x")
    assert c.get(b"only-in-1") is None
    assert c.add(b"only-in-1", b"mc") is True  # free in database 0
    c.set(b"k", b"mc")
    assert r0.get("k") == b"mc"
    assert r1.get("k") is None
    assert r1.get("only-in-1") == b"x"


def test_flush_all_empties_database_0_only(mc_server):
    r0 = mc_server.client(db=0)
    r1 = mc_server.client(db=1)
    r0.set("k", "0")
    r1.set("k", "1")
    assert mc_server.mc_client().flush_all() is True
    assert r0.get("k") is None
    assert r1.get("k") == b"1"


def test_memcache_sees_a_list_key_as_a_miss(mc_server):
    """A RESP list is no memcached item: retrievals and changes miss it, never crash;
    a store replaces it and flush_all removes it."""
    r = mc_server.client()
    raw = mc_server.mc_raw()
    r.rpush("l", "a", "b")
    assert raw.call(b"get l\r\n") == b"END\r\n"
    assert raw.call(b"gets l\r\n") == b"END\r\n"
    assert raw.call(b"get x l y\r\n") == b"END\r\n"
    assert raw.call(b"gat 100 l\r\n") == b"END\r\n"
    assert raw.call(b"mg l v\r\n") == b"EN\r\n"
    assert raw.call(b"me l\r\n") == b"EN\r\n"
    assert raw.call(b"incr l 1\r\n") == b"NOT_FOUND\r\n"
    assert raw.call(b"append l 0 0 1\r\nx\r\n") == b"NOT_STORED\r\n"
    assert raw.call(b"touch l 10\r\n") == b"NOT_FOUND\r\n"
    # N vivifies missing keys only: the list is neither a hit nor replaced.
    assert raw.call(b"mg l v N30\r\n") == b"EN\r\n"
    assert raw.call(b"ma l N30\r\n") == b"NF\r\n"
    assert r.lrange("l", 0, -1) == [b"a", b"b"]
    assert r.ttl("l") == -1
    assert raw.call(b"flush_all\r\n") == b"OK\r\n"
    assert r.exists("l") == 0
    r.rpush("l", "a")
    assert raw.call(b"set l 0 0 1\r\nv\r\n") == b"STORED\r\n"
    assert r.get("l") == b"v"
