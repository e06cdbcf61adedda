"""Memcache classic text protocol, through pymemcache and raw bytes (issue #6).

Runs against damselfly's --memcached_port, and against a real memcached 1.6 with
DAMSELFLY_TEST_TARGET=memcached to validate the tests. Expiry is tested with times already
in the past, negative exptimes, or an exptime of 1 s with a wait of at most 2.5 s.
"""

import re
import time

import pytest
from pymemcache.exceptions import MemcacheClientError

from helpers import wait_for

THIRTY_DAYS = 60 * 60 * 24 * 30
MAX_U64 = 2**64 - 1

# The fields of "stats" the issue requires.
STATS_FIELDS = ("pid", "uptime", "time", "version", "curr_connections", "total_connections",
                "cmd_get", "cmd_set", "cmd_touch", "get_hits", "get_misses", "delete_hits",
                "delete_misses", "incr_hits", "incr_misses", "cas_hits", "cas_misses",
                "cas_badval", "curr_items", "total_items", "bytes", "evictions",
                "limit_maxbytes", "threads")


def stats(conn, *args):
    """ "stats [args]" through a raw connection, as {name: value-string}."""
    reply = conn.call(b" ".join([b"stats"] + [a.encode() for a in args]) + b"\r\n")
    lines = reply.split(b"\r\n")
    assert lines[-2:] == [b"END", b""], reply
    out = {}
    for line in lines[:-2]:
        word, name, value = line.decode().split(" ", 2)
        assert word == "STAT", line
        out[name] = value
    return out


def value_of(conn, key):
    """(flags, data) of key through a raw "get", or None when it is missing."""
    reply = conn.call(b"get " + key + b"\r\n")
    if reply == b"END\r\n":
        return None
    m = re.fullmatch(rb"VALUE (\S+) (\d+) (\d+)\r\n(.*)\r\nEND\r\n", reply, re.S)
    assert m and m.group(1) == key and int(m.group(3)) == len(m.group(4)), reply
    return int(m.group(2)), m.group(4)


# --------------------------------------------------------------------------- storage


def test_set_get_with_flags(mc_server):
    raw = mc_server.mc_raw()
    assert raw.call(b"set k 42 0 5\r\nhello\r\n") == b"STORED\r\n"
    assert value_of(raw, b"k") == (42, b"hello")
    # Flags are 32-bit; the largest value round-trips.
    assert raw.call(b"set k 4294967295 0 1\r\nx\r\n") == b"STORED\r\n"
    assert value_of(raw, b"k") == (4294967295, b"x")
    # An empty value.
    assert raw.call(b"set e 0 0 0\r\n\r\n") == b"STORED\r\n"
    assert raw.call(b"get e\r\n") == b"VALUE e 0 0\r\n\r\nEND\r\n"
    c = mc_server.mc_client()
    assert c.set(b"p", b"v1") is True
    assert c.get(b"p") == b"v1"
    assert c.get(b"missing") is None


def test_values_damselfly_compresses(mc_server):
    # damselfly keeps these LZF-compressed (512 B to 64 KiB, repetitive); no reply may show it.
    raw = mc_server.mc_raw()
    values = {b"padded": b"value:7" + b"\0" * 1017, b"runs": b"ab" * 5000,
              b"json": b"".join(b'{"id":%d,"ok":true},' % i for i in range(60))[:1000]}
    for key, value in values.items():
        assert raw.call(b"set %s 5 0 %d\r\n%s\r\n" % (key, len(value), value)) == b"STORED\r\n"
    for key, value in values.items():
        assert value_of(raw, key) == (5, value)
    reply = raw.call(b"get " + b" ".join(values) + b"\r\n")
    assert reply == b"".join(b"VALUE %s 5 %d\r\n%s\r\n" % (k, len(v), v)
                             for k, v in values.items()) + b"END\r\n"
    assert raw.call(b"append runs 0 0 2\r\nzz\r\n") == b"STORED\r\n"
    assert value_of(raw, b"runs") == (5, b"ab" * 5000 + b"zz")
    assert raw.call(b"prepend json 0 0 1\r\n[\r\n") == b"STORED\r\n"
    assert value_of(raw, b"json") == (5, b"[" + values[b"json"])


def test_add_replace(mc_server):
    c = mc_server.mc_client()
    assert c.add(b"a", b"1") is True
    assert c.add(b"a", b"2") is False  # NOT_STORED: exists
    assert c.get(b"a") == b"1"
    assert c.replace(b"b", b"1") is False  # NOT_STORED: missing
    assert c.get(b"b") is None
    assert c.replace(b"a", b"3", flags=7) is True
    assert value_of(mc_server.mc_raw(), b"a") == (7, b"3")


def test_append_prepend_keep_flags(mc_server):
    raw = mc_server.mc_raw()
    assert raw.call(b"set k 9 0 3\r\nmid\r\n") == b"STORED\r\n"
    # append and prepend ignore their own flags and exptime.
    assert raw.call(b"append k 1 0 4\r\n-end\r\n") == b"STORED\r\n"
    assert raw.call(b"prepend k 2 -1 6\r\nstart-\r\n") == b"STORED\r\n"
    assert value_of(raw, b"k") == (9, b"start-mid-end")
    assert raw.call(b"append nokey 0 0 1\r\nx\r\n") == b"NOT_STORED\r\n"
    assert raw.call(b"prepend nokey 0 0 1\r\nx\r\n") == b"NOT_STORED\r\n"
    assert value_of(raw, b"nokey") is None
    c = mc_server.mc_client()
    assert c.append(b"k", b"!") is True
    assert c.prepend(b"k", b"<") is True
    assert c.get(b"k") == b"<start-mid-end!"


def test_cas(mc_server):
    c = mc_server.mc_client()
    c.set(b"k", b"v1")
    value, cas = c.gets(b"k")
    assert value == b"v1" and int(cas) > 0
    # A store by someone else changes the cas unique.
    c.set(b"k", b"v2")
    value2, cas2 = c.gets(b"k")
    assert value2 == b"v2" and cas2 != cas
    assert c.cas(b"k", b"mine", cas) is False  # EXISTS
    assert c.get(b"k") == b"v2"
    assert c.cas(b"k", b"mine", cas2) is True  # STORED
    assert c.get(b"k") == b"mine"
    assert c.cas(b"k", b"again", cas2) is False  # the successful cas changed it again
    assert c.cas(b"missing", b"x", cas2) is None  # NOT_FOUND
    raw = mc_server.mc_raw()
    assert raw.call(b"cas missing 0 0 1 1\r\nx\r\n") == b"NOT_FOUND\r\n"
    # cas with flags, and with noreply.
    _, cas3 = c.gets(b"k")
    assert raw.call(b"cas k 5 0 2 %s noreply\r\nok\r\n" % cas3) == b""
    assert value_of(raw, b"k") == (5, b"ok")


def test_gets_many_keys(mc_server):
    c = mc_server.mc_client()
    keys = [b"key:%d" % i for i in range(100)]
    for k in keys[::2]:
        c.set(k, b"v-" + k)
    got = c.get_many(keys)
    assert got == {k: b"v-" + k for k in keys[::2]}
    with_cas = c.gets_many(keys)
    assert set(with_cas) == set(keys[::2])
    # Each key's cas unique is what gets reports for it alone. (memcached numbers all items
    # from one counter; the protocol only needs a key's unique to change with each store.)
    for k, (_, cas) in with_cas.items():
        assert c.gets(k)[1] == cas and int(cas) > 0


def test_get_repeated_keys_and_order(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"set a 1 0 1\r\nA\r\n")
    raw.call(b"set b 2 0 1\r\nB\r\n")
    # Items come back in request order, once per occurrence; misses are left out.
    assert raw.call(b"get b x a b\r\n") == (b"VALUE b 2 1\r\nB\r\nVALUE a 1 1\r\nA\r\n"
                                            b"VALUE b 2 1\r\nB\r\nEND\r\n")
    assert raw.call(b"get nothing here\r\n") == b"END\r\n"


def test_noreply_storage(mc_server):
    raw = mc_server.mc_raw()
    assert raw.call(b"set k 0 0 1 noreply\r\na\r\n") == b""
    assert raw.call(b"add k 0 0 1 noreply\r\nb\r\n") == b""  # NOT_STORED, silently
    assert raw.call(b"replace k 0 0 1 noreply\r\nc\r\n") == b""
    assert raw.call(b"append k 0 0 1 noreply\r\nd\r\n") == b""
    assert raw.call(b"prepend k 0 0 1 noreply\r\ne\r\n") == b""
    assert value_of(raw, b"k") == (0, b"ecd")
    c = mc_server.mc_client()
    assert c.set(b"n", b"1", noreply=True) is True
    assert c.get(b"n") == b"1"


# --------------------------------------------------------------------------- expiry


def test_exptime_in_the_past_expires_at_once(mc_server):
    raw = mc_server.mc_raw()
    now = int(time.time())
    cases = {
        b"neg": b"-1",                            # negative: already expired
        b"abs_past": b"%d" % (now - 1000),        # absolute unix time in the past
        b"just_over_30d": b"%d" % (THIRTY_DAYS + 1),  # absolute: 1970 plus 30 days
    }
    for key, exptime in cases.items():
        assert raw.call(b"set %s 0 %s 1\r\nx\r\n" % (key, exptime)) == b"STORED\r\n"
        assert value_of(raw, key) is None, (key, exptime)


def test_exptime_in_the_future_keeps_the_item(mc_server):
    raw = mc_server.mc_raw()
    now = int(time.time())
    cases = {
        b"rel_30d": b"%d" % THIRTY_DAYS,   # the largest relative exptime
        b"abs_future": b"%d" % (now + 3600),
        b"rel_100": b"100",
        b"never": b"0",
    }
    for key, exptime in cases.items():
        assert raw.call(b"set %s 3 %s 1\r\nx\r\n" % (key, exptime)) == b"STORED\r\n"
        assert value_of(raw, key) == (3, b"x"), (key, exptime)


def test_short_ttl_expires_and_touch_gat_gats_extend_it(mc_server):
    raw = mc_server.mc_raw()
    assert raw.call(b"set plain 0 1 1\r\nx\r\n") == b"STORED\r\n"
    # 2 s, not 1, so that a stall before the touch cannot let them expire first.
    for key in (b"touched", b"gat", b"gats"):
        assert raw.call(b"set %s 0 2 1\r\nx\r\n" % key) == b"STORED\r\n"
    assert raw.call(b"touch touched 100\r\n") == b"TOUCHED\r\n"
    assert raw.call(b"gat 100 gat\r\n") == b"VALUE gat 0 1\r\nx\r\nEND\r\n"
    reply = raw.call(b"gats 100 gats\r\n")
    assert re.fullmatch(rb"VALUE gats 0 1 \d+\r\nx\r\nEND\r\n", reply), reply
    # memcached's clock has 1 s steps: an exptime of 1 is gone within 2 s.
    wait_for(lambda: value_of(raw, b"plain") is None, timeout=2.5, interval=0.1,
             what="the item set with exptime 1 to expire")
    for key in (b"touched", b"gat", b"gats"):
        assert value_of(raw, key) == (0, b"x"), key


def test_touch(mc_server):
    c = mc_server.mc_client()
    raw = mc_server.mc_raw()
    c.set(b"k", b"v")
    assert c.touch(b"k", 100) is True
    assert c.touch(b"missing", 100) is False
    assert raw.call(b"touch missing 10\r\n") == b"NOT_FOUND\r\n"
    assert raw.call(b"touch k 10 noreply\r\n") == b""
    assert c.get(b"k") == b"v"
    # A negative exptime expires the item.
    assert raw.call(b"touch k -1\r\n") == b"TOUCHED\r\n"
    assert c.get(b"k") is None


def test_gat_gats(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"set a 5 0 2\r\naa\r\n")
    raw.call(b"set b 6 0 2\r\nbb\r\n")
    assert raw.call(b"gat 100 a missing b\r\n") == (b"VALUE a 5 2\r\naa\r\n"
                                                    b"VALUE b 6 2\r\nbb\r\nEND\r\n")
    reply = raw.call(b"gats 0 a b\r\n")
    m = re.fullmatch(rb"VALUE a 5 2 (\d+)\r\naa\r\nVALUE b 6 2 (\d+)\r\nbb\r\nEND\r\n", reply)
    assert m and m.group(1) != m.group(2), reply
    # gats and gets agree on the cas unique.
    reply = raw.call(b"gets a\r\n")
    assert reply == b"VALUE a 5 2 %s\r\naa\r\nEND\r\n" % m.group(1), reply
    assert raw.call(b"gat 100 missing\r\n") == b"END\r\n"
    # gat with a negative exptime returns the item, which is then gone.
    assert raw.call(b"gat -1 a\r\n") == b"VALUE a 5 2\r\naa\r\nEND\r\n"
    assert raw.call(b"get a\r\n") == b"END\r\n"


# --------------------------------------------------------------------------- incr/decr


def test_incr_decr(mc_server):
    c = mc_server.mc_client()
    c.set(b"n", b"10")
    assert c.incr(b"n", 5) == 15
    assert c.decr(b"n", 3) == 12
    assert c.decr(b"n", 100) == 0  # decr stops at 0
    assert c.incr(b"missing", 1) is None
    assert c.decr(b"missing", 1) is None
    assert c.incr(b"n", 0) == 0
    # The stored value is the number (memcached may pad it with spaces after a shrink;
    # the protocol says clients must not rely on either).
    assert int(c.get(b"n")) == 0


def test_incr_wraps_at_2_64(mc_server):
    c = mc_server.mc_client()
    c.set(b"n", str(MAX_U64).encode())
    assert c.incr(b"n", 1) == 0
    c.set(b"n", b"5")
    assert c.incr(b"n", MAX_U64) == 4
    c.set(b"n", str(MAX_U64 - 1).encode())
    assert c.incr(b"n", 1) == MAX_U64
    assert c.get(b"n") == str(MAX_U64).encode()
    assert c.decr(b"n", MAX_U64) == 0


def test_incr_result_grows_the_value(mc_server):
    c = mc_server.mc_client()
    c.set(b"n", b"99")
    assert c.incr(b"n", 1) == 100
    assert c.get(b"n") == b"100"
    c.set(b"n", b"007")  # leading zeros are fine
    assert c.incr(b"n", 1) == 8


def test_incr_decr_errors(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"set s 0 0 3\r\nabc\r\n")
    raw.call(b"set n 0 0 1\r\n1\r\n")
    non_numeric = b"CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
    assert raw.call(b"incr s 1\r\n") == non_numeric
    assert raw.call(b"decr s 1\r\n") == non_numeric
    # Values that are not a 64-bit unsigned number: negative, too big, empty.
    for value in (b"-1", b"18446744073709551616", b""):
        raw.call(b"set v 0 0 %d\r\n%s\r\n" % (len(value), value))
        assert raw.call(b"incr v 1\r\n") == non_numeric, value
    bad_delta = b"CLIENT_ERROR invalid numeric delta argument\r\n"
    for delta in (b"abc", b"-1", b"18446744073709551616"):
        assert raw.call(b"incr n %s\r\n" % delta) == bad_delta, delta
        assert raw.call(b"decr n %s\r\n" % delta) == bad_delta, delta
    assert raw.call(b"incr n 1 noreply\r\n") == b""
    assert raw.call(b"incr n 1\r\n") == b"3\r\n"
    assert raw.call(b"incr missing 1\r\n") == b"NOT_FOUND\r\n"
    c = mc_server.mc_client()
    with pytest.raises(MemcacheClientError):
        c.incr(b"s", 1)


# --------------------------------------------------------------------------- delete, flush


def test_delete(mc_server):
    c = mc_server.mc_client()
    raw = mc_server.mc_raw()
    c.set(b"k", b"v")
    assert c.delete(b"k") is True
    assert c.delete(b"k") is False
    assert raw.call(b"delete k\r\n") == b"NOT_FOUND\r\n"
    c.set(b"k", b"v")
    assert raw.call(b"delete k noreply\r\n") == b""
    assert c.get(b"k") is None
    # "delete <key> 0" is accepted for old clients; any other time is an error.
    c.set(b"k", b"v")
    assert raw.call(b"delete k 0\r\n") == b"DELETED\r\n"
    assert raw.call(b"delete k 5\r\n") == (
        b"CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n")


def test_flush_all(mc_server):
    c = mc_server.mc_client()
    raw = mc_server.mc_raw()
    c.set_many({b"a": b"1", b"b": b"2"})
    assert c.flush_all() is True
    assert c.get_many([b"a", b"b"]) == {}
    c.set(b"a", b"1")
    assert raw.call(b"flush_all noreply\r\n") == b""
    assert c.get(b"a") is None
    c.set(b"a", b"1")
    assert raw.call(b"flush_all 0\r\n") == b"OK\r\n"
    assert c.get(b"a") is None


def test_flush_all_with_delay(mc_server_factory):
    srv = mc_server_factory()  # a server of its own: the pending flush must not leak
    c = srv.mc_client()
    c.set(b"old", b"1")
    assert c.flush_all(delay=2) is True
    assert c.get(b"old") == b"1"  # not yet
    wait_for(lambda: c.get(b"old") is None, timeout=3.5, interval=0.1,
             what="the delayed flush_all")
    # Items stored after the flush are kept. memcached's clock has 1 s steps and it also
    # drops items stored within the second the flush happened, so wait for the next one.
    time.sleep(1.1)
    c.set(b"new", b"2")
    assert c.get(b"new") == b"2"


# --------------------------------------------------------------------------- misc


def test_version(mc_server):
    raw = mc_server.mc_raw()
    reply = raw.call(b"version\r\n")
    assert re.fullmatch(rb"VERSION [0-9][^\s]*\r\n", reply), reply
    assert mc_server.mc_client().version() == reply[8:-2]


def test_verbosity(mc_server):
    raw = mc_server.mc_raw()
    assert raw.call(b"verbosity 1\r\n") == b"OK\r\n"
    assert raw.call(b"verbosity 0\r\n") == b"OK\r\n"
    assert raw.call(b"verbosity 0 noreply\r\n") == b""
    assert raw.call(b"verbosity\r\n") == b"ERROR\r\n"


def test_quit_closes_the_connection(mc_server):
    raw = mc_server.mc_raw()
    raw.send(b"set k 0 0 1\r\nv\r\nquit\r\nget k\r\n")
    # STORED, then the connection closes: the get after quit is not answered.
    assert raw.read_until_closed() == b"STORED\r\n"
    c = mc_server.mc_client()
    assert c.get(b"k") == b"v"
    c.quit()
    assert mc_server.mc_client().get(b"k") == b"v"


def test_stats_fields(mc_server):
    raw = mc_server.mc_raw()
    st = stats(raw)
    missing = [f for f in STATS_FIELDS if f not in st]
    assert not missing, f"missing stats: {missing}"
    for name in STATS_FIELDS:
        if name != "version":
            assert re.fullmatch(r"\d+", st[name]), (name, st[name])
    assert int(st["pid"]) == mc_server.proc.pid
    assert abs(int(st["time"]) - time.time()) <= 5
    assert st["version"] == raw.call(b"version\r\n")[8:-2].decode()
    assert int(st["curr_connections"]) >= 1
    assert int(st["limit_maxbytes"]) > 0
    assert int(st["threads"]) >= 1


def test_stats_limit_maxbytes_is_maxmemory(mc_server_factory):
    # memcached's -m is the store's memory limit: damselfly's maxmemory.
    srv = mc_server_factory("--maxmemory=123456789")
    assert stats(srv.mc_raw())["limit_maxbytes"] == "123456789"


def test_stats_counters_move(mc_server_factory):
    srv = mc_server_factory()  # fresh counters
    raw = srv.mc_raw()
    before = stats(raw)
    assert before["curr_items"] == "0" and before["evictions"] == "0"
    raw.call(b"set a 0 0 1\r\n1\r\n")
    raw.call(b"set b 0 0 1\r\n2\r\n")
    raw.call(b"set c 0 0 3\r\nabc\r\n")
    raw.call(b"set c 0 0 3\r\nxyz\r\n")                  # 4 sets, 3 items
    raw.call(b"get a b missing\r\n")                     # 2 hits, 1 miss
    raw.call(b"get nope\r\n")                            # 1 miss
    raw.call(b"touch a 100\r\ntouch nope 100\r\n")       # 2 touches
    raw.call(b"incr a 1\r\nincr nope 1\r\n")             # 1 hit, 1 miss
    cas = raw.call(b"gets b\r\n").split(b"\r\n")[0].split()[4]
    raw.call(b"cas b 0 0 1 %s\r\nB\r\n" % cas)           # cas hit
    raw.call(b"cas b 0 0 1 %s\r\nB\r\n" % cas)           # cas badval
    raw.call(b"cas nope 0 0 1 1\r\nB\r\n")               # cas miss
    raw.call(b"delete c\r\ndelete nope\r\n")             # 1 hit, 1 miss
    time.sleep(1.1)  # uptime has 1 s steps
    after = stats(raw)

    def delta(name):
        return int(after[name]) - int(before[name])

    assert delta("cmd_set") == 7        # 4 sets + 3 cas
    assert delta("cmd_get") == 5        # one per key: a, b, missing, nope, and gets b
    assert delta("get_hits") == 3
    assert delta("get_misses") == 2
    assert delta("cmd_touch") == 2
    assert delta("incr_hits") == 1 and delta("incr_misses") == 1
    assert delta("cas_hits") == 1 and delta("cas_badval") == 1 and delta("cas_misses") == 1
    assert delta("delete_hits") == 1 and delta("delete_misses") == 1
    assert int(after["curr_items"]) == 2  # a, b
    assert delta("total_items") >= 5      # a, b, c twice, cas b (incr may count too)
    assert int(after["bytes"]) > 0
    assert delta("uptime") >= 1
    # A new connection is counted.
    with srv.mc_raw() as second:
        now = stats(second)
    assert int(now["curr_connections"]) == int(after["curr_connections"]) + 1
    assert int(now["total_connections"]) >= int(after["total_connections"]) + 1
