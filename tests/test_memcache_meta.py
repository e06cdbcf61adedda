"""Memcache meta commands: mg, ms, md, ma, mn (issue #6).

Expected bytes are memcached 1.6.18's (DAMSELFLY_TEST_TARGET=memcached validates them).
Remaining TTLs ('t' flag) are checked within 1 s: memcached's clock has 1 s steps.
"""

import base64
import re

import pytest


def ttl_of(reply):
    """The value of the 't' flag in a meta reply line."""
    m = re.search(rb" t(-?\d+)[ \r]", reply)
    assert m, reply
    return int(m.group(1))


def cas_of(reply):
    m = re.search(rb" c(\d+)[ \r]", reply)
    assert m, reply
    return int(m.group(1))


def assert_ttl(reply, expected):
    assert expected - 1 <= ttl_of(reply) <= expected, (reply, expected)


# --------------------------------------------------------------------------- mg


def test_mg_flags(mc_server):
    raw = mc_server.mc_raw()
    assert raw.call(b"ms foo 2 T90 F5\r\nhi\r\n") == b"HD\r\n"
    assert raw.call(b"mg foo v\r\n") == b"VA 2\r\nhi\r\n"
    assert raw.call(b"mg foo\r\n") == b"HD\r\n"  # a hit without a value
    assert raw.call(b"mg foo s v\r\n") == b"VA 2 s2\r\nhi\r\n"
    assert raw.call(b"mg foo f\r\n") == b"HD f5\r\n"
    # Returned flags come in request order; O (opaque) is echoed; q does not hide hits.
    reply = raw.call(b"mg foo k v f t s c Oabc q\r\n")
    m = re.fullmatch(rb"VA 2 kfoo f5 t(\d+) s2 c(\d+) Oabc\r\nhi\r\n", reply)
    assert m, reply
    assert_ttl(reply, 90)
    reply = raw.call(b"mg foo Oxyz t c f\r\n")
    assert re.fullmatch(rb"HD Oxyz t\d+ c\d+ f5\r\n", reply), reply
    # The cas unique is the one gets reports.
    gets = raw.call(b"gets foo\r\n")
    assert gets == b"VALUE foo 5 2 %d\r\nhi\r\nEND\r\n" % cas_of(reply)
    # No exptime: t is -1.
    raw.call(b"set forever 0 0 1\r\nx\r\n")
    assert raw.call(b"mg forever t v\r\n") == b"VA 1 t-1\r\nx\r\n"


def test_mg_miss(mc_server):
    raw = mc_server.mc_raw()
    assert raw.call(b"mg miss v\r\n") == b"EN\r\n"
    assert raw.call(b"mg miss\r\n") == b"EN\r\n"
    # On a miss, k and O are still echoed, other flags are not.
    assert raw.call(b"mg miss k v f t c s Oxy\r\n") == b"EN kmiss Oxy\r\n"
    # q hides the miss entirely.
    assert raw.call(b"mg miss v q\r\n") == b""
    assert raw.call(b"mg miss v q k Oxy\r\n") == b""


def test_mg_quiet_pipeline(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"set b 0 0 1\r\nB\r\n")
    # The classic use of q: pipelined gets, only hits answer, mn marks the end.
    reply = raw.call(b"mg a v q O1\r\nmg b v q O2\r\nmg c v q O3\r\n")
    assert reply == b"VA 1 O2\r\nB\r\n"


def test_mg_touch_and_vivify(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"set k 3 0 1\r\nv\r\n")
    # T updates the TTL on a hit.
    assert_ttl(raw.call(b"mg k v T30 t\r\n"), 30)
    assert_ttl(raw.call(b"mg k t\r\n"), 30)
    assert raw.call(b"mg missing T30 v\r\n") == b"EN\r\n"
    # N on a miss creates an empty item and tells this client it won (W); later
    # clients see Z (someone else won). N on a hit does nothing special.
    reply = raw.call(b"mg viv N30 v c t\r\n")
    assert re.fullmatch(rb"VA 0 c\d+ t\d+ W\r\n\r\n", reply), reply
    assert_ttl(reply, 30)
    reply = raw.call(b"mg viv N30 v c t\r\n")
    assert re.fullmatch(rb"VA 0 c\d+ t\d+ Z\r\n\r\n", reply), reply
    assert raw.call(b"mg viv v\r\n") == b"VA 0 Z\r\n\r\n"
    assert raw.call(b"mg k N30 v\r\n") == b"VA 1\r\nv\r\n"
    # Storing the real value clears the win token.
    assert raw.call(b"ms viv 3\r\nnew\r\n") == b"HD\r\n"
    assert raw.call(b"mg viv v\r\n") == b"VA 3\r\nnew\r\n"


def test_mg_base64_keys(mc_server):
    raw = mc_server.mc_raw()
    key = b"bin\x00\x01 \r\n"  # bytes a plain key cannot have
    enc = base64.b64encode(key)
    assert raw.call(b"ms %s 3 b\r\nabc\r\n" % enc) == b"HD\r\n"
    # With b, k returns the key in base64 and the reply carries b.
    assert raw.call(b"mg %s b k v\r\n" % enc) == b"VA 3 k%s b\r\nabc\r\n" % enc
    assert raw.call(b"mg %s b v\r\n" % enc) == b"VA 3\r\nabc\r\n"
    assert raw.call(b"md %s b\r\n" % enc) == b"HD\r\n"
    assert raw.call(b"mg %s b k v\r\n" % enc) == b"EN k%s b\r\n" % enc
    # A key that base64-decodes to a plain key is the same item as that plain key.
    raw.call(b"set foo 0 0 2\r\nhi\r\n")
    assert raw.call(b"mg %s b v\r\n" % base64.b64encode(b"foo")) == b"VA 2\r\nhi\r\n"
    # Invalid base64.
    for bad in (b"!!!", b"foo", b"k"):
        assert raw.call(b"mg %s b v\r\n" % bad) == b"CLIENT_ERROR error decoding key\r\n"
    # ms swallows the data block of a key it cannot decode.
    assert raw.call(b"ms !!! 2 b\r\nhi\r\n") == b"CLIENT_ERROR error decoding key\r\n"


def test_meta_errors(mc_server):
    raw = mc_server.mc_raw()
    assert raw.call(b"mg k v v\r\n") == b"CLIENT_ERROR duplicate flag\r\n"
    assert raw.call(b"mg k Y\r\n") == b"CLIENT_ERROR invalid flag\r\n"
    assert raw.call(b"mg k Tabc\r\n") == b"CLIENT_ERROR bad token in command line format\r\n"
    assert raw.call(b"mg k N\r\n") == b"CLIENT_ERROR bad token in command line format\r\n"
    assert raw.call(b"mg k O%s\r\n" % (b"x" * 33)) == b"CLIENT_ERROR opaque token too long\r\n"
    assert raw.call(b"mg k O%s\r\n" % (b"x" * 31)) == b"EN O%s\r\n" % (b"x" * 31)
    assert raw.call(b"mg\r\n") == b"ERROR\r\n"
    assert raw.call(b"MG k\r\n") == b"ERROR\r\n"
    # P and L are proxy hints, ignored.
    assert raw.call(b"mg k Pfoo Lbar v\r\n") == b"EN\r\n"
    assert raw.call(b"ms k\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert raw.call(b"ms k abc\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert raw.call(b"ms k 1 T1 T2\r\nz\r\n") == b"CLIENT_ERROR duplicate flag\r\n"
    assert raw.call(b"ms k 1 Tabc\r\nz\r\n") == b"CLIENT_ERROR bad token in command line format\r\n"
    assert raw.call(b"ms k 1 Fabc\r\nz\r\n") == b"CLIENT_ERROR bad command line format\r\n"
    assert raw.call(b"ms k 1 MX\r\nz\r\n") == b"CLIENT_ERROR invalid mode for ms M token\r\n"
    assert raw.call(b"md k x\r\n") == b"CLIENT_ERROR invalid or duplicate flag\r\n"
    assert raw.call(b"md\r\n") == b"ERROR\r\n"
    assert raw.call(b"ma k Mx\r\n") == b"CLIENT_ERROR invalid mode for ma M token\r\n"
    for delta in (b"abc", b"-1", b"18446744073709551616"):
        assert raw.call(b"ma k D%s\r\n" % delta) == b"CLIENT_ERROR invalid or duplicate flag\r\n"
    # After all that, nothing was stored and the connection works.
    assert raw.call(b"mg k v\r\n") == b"EN\r\n"


# --------------------------------------------------------------------------- ms


def test_ms_basic(mc_server):
    raw = mc_server.mc_raw()
    assert raw.call(b"ms k 5 F7 T100\r\nhello\r\n") == b"HD\r\n"
    assert raw.call(b"get k\r\n") == b"VALUE k 7 5\r\nhello\r\nEND\r\n"
    assert_ttl(raw.call(b"mg k t\r\n"), 100)
    # Without F, flags are 0; without T, no expiry.
    assert raw.call(b"ms k 2\r\nhi\r\n") == b"HD\r\n"
    assert raw.call(b"mg k f t v\r\n") == b"VA 2 f0 t-1\r\nhi\r\n"
    assert raw.call(b"ms k 0\r\n\r\n") == b"HD\r\n"
    assert raw.call(b"mg k s v\r\n") == b"VA 0 s0\r\n\r\n"
    # q hides HD; k, O and c are returned.
    assert raw.call(b"ms k 1 q\r\nx\r\n") == b""
    reply = raw.call(b"ms k 1 k O9 c\r\ny\r\n")
    m = re.fullmatch(rb"HD kk O9 c(\d+)\r\n", reply)
    assert m, reply
    assert raw.call(b"gets k\r\n") == b"VALUE k 0 1 %s\r\ny\r\nEND\r\n" % m.group(1)
    # A negative T stores an item that is already expired.
    assert raw.call(b"ms k 1 T-1\r\nz\r\n") == b"HD\r\n"
    assert raw.call(b"mg k v\r\n") == b"EN\r\n"


def test_ms_modes(mc_server):
    raw = mc_server.mc_raw()
    assert raw.call(b"ms k 1 ME\r\na\r\n") == b"HD\r\n"     # add
    assert raw.call(b"ms k 1 ME\r\nb\r\n") == b"NS\r\n"
    assert raw.call(b"ms k 1 MA\r\nc\r\n") == b"HD\r\n"     # append
    assert raw.call(b"ms k 1 MP\r\nd\r\n") == b"HD\r\n"     # prepend
    assert raw.call(b"mg k v\r\n") == b"VA 3\r\ndac\r\n"
    assert raw.call(b"ms k 1 MR F3\r\ne\r\n") == b"HD\r\n"  # replace
    assert raw.call(b"mg k v f\r\n") == b"VA 1 f3\r\ne\r\n"
    assert raw.call(b"ms k 1 MS\r\nf\r\n") == b"HD\r\n"     # set
    assert raw.call(b"mg k v f\r\n") == b"VA 1 f0\r\nf\r\n"
    for mode in (b"MR", b"MA", b"MP"):
        assert raw.call(b"ms nokey 1 %s\r\nx\r\n" % mode) == b"NS\r\n", mode
    assert raw.call(b"mg nokey v\r\n") == b"EN\r\n"
    # q does not hide NS.
    assert raw.call(b"ms k 1 q ME O5\r\ng\r\n") == b"NS O5\r\n"


def test_ms_cas(mc_server):
    raw = mc_server.mc_raw()
    cas = cas_of(raw.call(b"ms k 1 c\r\na\r\n"))
    assert raw.call(b"ms k 1 C%d\r\nb\r\n" % (cas + 1000)) == b"EX\r\n"
    assert raw.call(b"ms nokey 1 C%d\r\nb\r\n" % cas) == b"NF\r\n"
    reply = raw.call(b"ms k 1 C%d c\r\nb\r\n" % cas)
    assert reply.startswith(b"HD c") and cas_of(reply) != cas, reply
    assert raw.call(b"ms k 1 C%d\r\nc\r\n" % cas) == b"EX\r\n"  # the store changed it
    assert raw.call(b"mg k v\r\n") == b"VA 1\r\nb\r\n"
    # The cas of an ms agrees with the classic cas command.
    cas = cas_of(raw.call(b"mg k c\r\n"))
    assert raw.call(b"cas k 0 0 1 %d\r\nd\r\n" % cas) == b"STORED\r\n"


def test_ms_invalidate(mc_server):
    raw = mc_server.mc_raw()
    cas = cas_of(raw.call(b"ms k 1 c\r\na\r\n"))
    # I with an older cas stores the value but marks it stale (X); the first fetch
    # wins the recache (W).
    assert raw.call(b"ms k 1 I C%d\r\nb\r\n" % (cas - 1)) == b"HD\r\n"
    assert raw.call(b"mg k v\r\n") == b"VA 1 X W\r\nb\r\n"
    assert raw.call(b"mg k v\r\n") == b"VA 1 Z X\r\nb\r\n"


# --------------------------------------------------------------------------- md


def test_md(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"ms k 1\r\na\r\n")
    assert raw.call(b"md k\r\n") == b"HD\r\n"
    assert raw.call(b"md k\r\n") == b"NF\r\n"
    assert raw.call(b"md k k O1\r\n") == b"NF kk O1\r\n"
    # q hides HD only.
    assert raw.call(b"md k q\r\n") == b"NF\r\n"
    raw.call(b"ms k 1\r\na\r\n")
    assert raw.call(b"md k q\r\n") == b""
    assert raw.call(b"mg k v\r\n") == b"EN\r\n"


def test_md_cas_and_invalidate(mc_server):
    raw = mc_server.mc_raw()
    cas = cas_of(raw.call(b"ms k 1 c\r\na\r\n"))
    assert raw.call(b"md k C%d\r\n" % (cas + 1)) == b"EX\r\n"
    assert raw.call(b"md k q C%d O2\r\n" % (cas + 1)) == b"EX O2\r\n"
    # I marks the item stale and gives it a new cas instead of deleting it; T sets its TTL.
    assert raw.call(b"md k I T30 C%d\r\n" % cas) == b"HD\r\n"
    reply = raw.call(b"mg k v c t\r\n")
    assert re.fullmatch(rb"VA 1 c(\d+) t(\d+) X W\r\na\r\n", reply), reply
    assert cas_of(reply) != cas
    assert_ttl(reply, 30)
    reply = raw.call(b"mg k v c\r\n")
    assert re.fullmatch(rb"VA 1 c\d+ Z X\r\na\r\n", reply), reply
    # A new value clears the stale state.
    assert raw.call(b"ms k 1\r\nb\r\n") == b"HD\r\n"
    assert raw.call(b"mg k v\r\n") == b"VA 1\r\nb\r\n"


# --------------------------------------------------------------------------- ma


def test_ma(mc_server):
    raw = mc_server.mc_raw()
    assert raw.call(b"ma n\r\n") == b"NF\r\n"
    assert raw.call(b"ma n q\r\n") == b"NF\r\n"  # q hides HD only
    raw.call(b"set n 0 0 2\r\n10\r\n")
    assert raw.call(b"ma n\r\n") == b"HD\r\n"
    assert raw.call(b"ma n v\r\n") == b"VA 2\r\n12\r\n"
    assert raw.call(b"ma n v D5\r\n") == b"VA 2\r\n17\r\n"
    assert raw.call(b"ma n v MI D3\r\n") == b"VA 2\r\n20\r\n"
    assert raw.call(b"ma n v M+\r\n") == b"VA 2\r\n21\r\n"
    assert raw.call(b"ma n v MD D5\r\n") == b"VA 2\r\n16\r\n"
    assert raw.call(b"ma n v M-\r\n") == b"VA 2\r\n15\r\n"
    assert raw.call(b"ma n v MD D100\r\n") == b"VA 1\r\n0\r\n"  # stops at 0
    assert raw.call(b"ma n v D18446744073709551615\r\n") == b"VA 20\r\n18446744073709551615\r\n"
    assert raw.call(b"ma n v D2\r\n") == b"VA 1\r\n1\r\n"  # wraps
    assert raw.call(b"ma n k O4 q\r\n") == b""
    assert raw.call(b"ma n k O4\r\n") == b"HD kn O4\r\n"
    # The stored number may be space-padded after it shrank (memcached rewrites it in
    # place); clients must not rely on either form.
    assert int(raw.call(b"mg n v\r\n").split(b"\r\n")[1]) == 3
    raw.call(b"set s 0 0 3\r\nabc\r\n")
    assert raw.call(b"ma s v\r\n") == (
        b"CLIENT_ERROR cannot increment or decrement non-numeric value\r\n")


def test_ma_ttl_and_cas(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"set n 0 0 1\r\n1\r\n")
    reply = raw.call(b"ma n v t c\r\n")
    assert re.fullmatch(rb"VA 1 t-1 c\d+\r\n2\r\n", reply), reply
    cas = cas_of(reply)
    assert raw.call(b"ma n C%d v\r\n" % (cas + 1)) == b"EX\r\n"
    reply = raw.call(b"ma n C%d v c\r\n" % cas)
    assert reply.startswith(b"VA 1 c") and cas_of(reply) != cas and reply.endswith(b"\r\n3\r\n")
    assert_ttl(raw.call(b"ma n v T100 t\r\n"), 100)
    assert_ttl(raw.call(b"mg n t\r\n"), 100)


def test_ma_autovivify(mc_server):
    raw = mc_server.mc_raw()
    # N creates a missing item with value J (default 0), and does not apply the delta.
    assert raw.call(b"ma a N0 J10 v\r\n") == b"VA 2\r\n10\r\n"
    assert raw.call(b"ma a N0 J10 v\r\n") == b"VA 2\r\n11\r\n"  # exists: J ignored
    assert raw.call(b"ma b N0 v MD\r\n") == b"VA 1\r\n0\r\n"
    reply = raw.call(b"ma c N100 J7 v t\r\n")
    assert reply.startswith(b"VA 1 t") and reply.endswith(b"\r\n7\r\n"), reply
    assert_ttl(reply, 100)
    # J without N does not create.
    assert raw.call(b"ma d J7 v\r\n") == b"NF\r\n"
    assert raw.call(b"get a b c d\r\n") == (b"VALUE a 0 2\r\n11\r\nVALUE b 0 1\r\n0\r\n"
                                            b"VALUE c 0 1\r\n7\r\nEND\r\n")


# --------------------------------------------------------------------------- mn


def test_mn(mc_server):
    raw = mc_server.mc_raw()
    raw.send(b"mn\r\n")
    assert raw.readline() == b"MN\r\n"
    raw.send(b"mn extra tokens\r\n")
    assert raw.readline() == b"MN\r\n"


@pytest.mark.parametrize("command", [b"mg", b"md", b"ma"])
def test_meta_commands_mix_with_classic_ones(mc_server, command):
    raw = mc_server.mc_raw()
    raw.call(b"set n 4 0 1\r\n5\r\n")
    reply = raw.call(command + b" n k O1\r\n")
    assert reply == b"HD kn O1\r\n", reply
    expected = {b"mg": b"VALUE n 4 1\r\n5\r\nEND\r\n", b"md": b"END\r\n",
                b"ma": b"VALUE n 4 1\r\n6\r\nEND\r\n"}[command]
    assert raw.call(b"get n\r\n") == expected
