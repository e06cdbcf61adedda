"""Memcache meta commands: mg, ms, md, ma, mn (issue #6).

Expected bytes are memcached 1.6.18's (DAMSELFLY_TEST_TARGET=memcached validates them).
Remaining TTLs ('t' flag) are checked within 1 s: memcached's clock has 1 s steps.
"""

import base64
import re
import time

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


def test_mg_hit_before_and_last_access(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"ms k 1\r\nx\r\n")
    # h: whether the item was fetched before this request; l: seconds since its last access.
    assert raw.call(b"mg k h l v\r\n") == b"VA 1 h0 l0\r\nx\r\n"
    assert raw.call(b"mg k l h\r\n") == b"HD l0 h1\r\n"
    # A new value is a new item, not fetched yet.
    raw.call(b"ms k 1\r\ny\r\n")
    assert raw.call(b"mg k h\r\n") == b"HD h0\r\n"
    # u fetches without marking the item; an item created by N counts as fetched.
    raw.call(b"ms u 1\r\nx\r\n")
    assert raw.call(b"mg u u h\r\n") == b"HD h0\r\n"
    assert raw.call(b"mg u h\r\n") == b"HD h0\r\n"
    assert raw.call(b"mg u h\r\n") == b"HD h1\r\n"
    assert raw.call(b"mg viv N30 h l\r\n") == b"HD h0 l0 W\r\n"
    assert raw.call(b"mg viv h\r\n") == b"HD h1 Z\r\n"
    # Classic retrievals and touch fetch the item too (gets also a classic-only one).
    for i, command in enumerate((b"get %s", b"gets %s", b"gat 100 %s", b"touch %s 100")):
        key = b"c%d" % i
        raw.call(b"ms %s 1\r\nx\r\n" % key)
        raw.call(command % key + b"\r\n")
        assert raw.call(b"mg %s h\r\n" % key) == b"HD h1\r\n", command
    raw.call(b"set plain 0 0 1\r\nx\r\n")
    raw.call(b"gets plain\r\n")
    assert raw.call(b"mg plain h\r\n") == b"HD h1\r\n"
    # ma and me do not fetch; me reports the same state as fetch=.
    raw.call(b"ms n 1\r\n5\r\n")
    raw.call(b"ma n\r\n")
    assert re.fullmatch(rb"ME n exp=-1 la=0 cas=\d+ fetch=no cls=\d+ size=\d+\r\n",
                        raw.call(b"me n\r\n"))
    assert raw.call(b"mg n h\r\n") == b"HD h0\r\n"
    assert re.fullmatch(rb"ME n exp=-1 la=0 cas=\d+ fetch=yes .*\r\n", raw.call(b"me n\r\n"))
    # An increment that rewrites the number in place keeps the item (fetched); one that
    # needs more bytes makes a new item.
    raw.call(b"ma n\r\n")
    assert raw.call(b"mg n h v\r\n") == b"VA 1 h1\r\n7\r\n"
    raw.call(b"ma n D3\r\n")
    assert raw.call(b"mg n h v\r\n") == b"VA 2 h0\r\n10\r\n"


def test_mg_last_access_counts_seconds(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"ms k 1\r\nx\r\n")
    time.sleep(2.1)
    # The first fetch marks the item fetched but leaves its last access at the store.
    reply = raw.call(b"mg k l h\r\n")
    m = re.fullmatch(rb"HD l(\d+) h0\r\n", reply)
    assert m and 2 <= int(m.group(1)) <= 3, reply
    m = re.fullmatch(rb"ME k exp=-1 la=(\d+) cas=\d+ fetch=yes .*\r\n", raw.call(b"me k\r\n"))
    assert m and 2 <= int(m.group(1)) <= 3


def test_mg_vivify_ttl(mc_server):
    raw = mc_server.mc_raw()
    # A negative TTL creates the item expired: the request that created it sees it and
    # wins, nobody after.
    assert raw.call(b"mg a N-1 v\r\n") == b"VA 0 W\r\n\r\n"
    assert raw.call(b"mg a v\r\n") == b"EN\r\n"
    assert raw.call(b"mg b N-1 q\r\n") == b"HD W\r\n"
    assert raw.call(b"mg b\r\n") == b"EN\r\n"
    assert raw.call(b"mg c N%d v\r\n" % (int(time.time()) - 100)) == b"VA 0 W\r\n\r\n"
    assert raw.call(b"mg c v\r\n") == b"EN\r\n"
    # N0: no expiry.
    assert raw.call(b"mg d N0 t\r\n") == b"HD t-1 W\r\n"
    assert raw.call(b"mg d t\r\n") == b"HD t-1 Z\r\n"
    # N and T both set a created item's TTL, in flag order.
    assert_ttl(raw.call(b"mg e N30 T60 t\r\n"), 60)
    assert_ttl(raw.call(b"mg e t\r\n"), 60)
    assert_ttl(raw.call(b"mg f T60 N30 t\r\n"), 30)
    assert_ttl(raw.call(b"mg g N-1 T30 t\r\n"), 30)
    assert_ttl(raw.call(b"mg g t\r\n"), 30)
    assert raw.call(b"mg h N30 T-1 v\r\n") == b"VA 0 W\r\n\r\n"
    assert raw.call(b"mg h v\r\n") == b"EN\r\n"


def test_mg_flags_apply_in_request_order(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"ms k 1 T100\r\nx\r\n")
    # t reports the TTL as the flags before it left it.
    assert_ttl(raw.call(b"mg k t T30\r\n"), 100)
    assert_ttl(raw.call(b"mg k t\r\n"), 30)
    assert_ttl(raw.call(b"mg k T50 t\r\n"), 50)
    assert raw.call(b"mg v t N30\r\n") == b"HD t-1 W\r\n"
    assert_ttl(raw.call(b"mg v t\r\n"), 30)
    # R compares with the TTL as the flags before it left it.
    raw.call(b"ms r 1 T100\r\nx\r\n")
    assert re.fullmatch(rb"HD t\d+\r\n", raw.call(b"mg r R30 T10 t\r\n"))
    assert re.fullmatch(rb"HD t\d+ W\r\n", raw.call(b"mg r T10 R30 t\r\n"))
    assert re.fullmatch(rb"HD t\d+ Z\r\n", raw.call(b"mg r R30 t\r\n"))


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


def test_base64_key_echo_follows_memcached(mc_server):
    raw = mc_server.mc_raw()
    # k echoes the decoded key encoded again, which need not be the bytes sent.
    assert raw.call(b"ms YQ=A 1 b k\r\nx\r\n") == b"HD kYQA= b\r\n"
    assert raw.call(b"mg YQ=A b k\r\n") == b"HD kYQA= b\r\n"
    # An item stored by ms with b remembers it: mg shows a hit's key in base64 (and me
    # too), however the request named it.
    raw.call(b"ms YWJj 1 b\r\nx\r\n")  # "abc"
    assert raw.call(b"mg abc k v\r\n") == b"VA 1 kYWJj b\r\nx\r\n"
    assert raw.call(b"me abc\r\n").startswith(b"ME YWJj exp=-1 ")
    # Misses, md, ma and ms echo the key as the request named it.
    assert raw.call(b"md abc k\r\n") == b"HD kabc\r\n"
    assert raw.call(b"mg YWJj b k\r\n") == b"EN kYWJj b\r\n"
    # An item created by mg N or ma N has a plain key, even when the request used b.
    assert raw.call(b"mg YWJj b N0 k\r\n") == b"HD kabc W\r\n"
    assert raw.call(b"me YWJj b\r\n").startswith(b"ME abc exp=-1 ")
    assert raw.call(b"ma YWJk b N0 J5 k v\r\n") == b"VA 1 kYWJk b\r\n5\r\n"
    assert raw.call(b"mg abd k\r\n") == b"HD kabd\r\n"
    # Appending makes a new item with a plain key; touching keeps the item.
    raw.call(b"ms YWJl 1 b\r\nx\r\n")
    assert raw.call(b"mg abe T30 k\r\n") == b"HD kYWJl b\r\n"
    assert raw.call(b"ms YWJl 1 b MA k\r\ny\r\n") == b"HD kYWJl b\r\n"
    assert raw.call(b"mg abe k v\r\n") == b"VA 2 kabe\r\nxy\r\n"


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
    # E (a client-chosen cas, memcached 1.6.21) is not a flag of 1.6.18's.
    assert raw.call(b"mg k E5\r\n") == b"CLIENT_ERROR invalid flag\r\n"
    assert raw.call(b"ms k 1 E5\r\nz\r\n") == b"CLIENT_ERROR invalid flag\r\n"
    assert raw.call(b"md k E5\r\n") == b"CLIENT_ERROR invalid or duplicate flag\r\n"
    assert raw.call(b"ma k E5\r\n") == b"CLIENT_ERROR invalid or duplicate flag\r\n"
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
    # A negative T stores an item that is already expired (it had a cas all the same).
    assert raw.call(b"ms k 1 T-1\r\nz\r\n") == b"HD\r\n"
    assert raw.call(b"mg k v\r\n") == b"EN\r\n"
    assert re.fullmatch(rb"HD c[1-9]\d*\r\n", raw.call(b"ms k 1 T-1 c\r\nz\r\n"))


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


# memcached's answers to ms with C, by mode: (present, cas) -> status. "match" is the
# item's cas, "other" another one, "zero" C0; absent keys are compared with a cas that
# was the item's before it was deleted.
MS_CAS_REPLIES = {
    b"MS": {"match": b"HD", "other": b"EX", "zero": b"EX", "absent": b"NF"},
    b"MR": {"match": b"HD", "other": b"EX", "zero": b"EX", "absent": b"NF"},
    b"ME": {"match": b"NS", "other": b"NS", "zero": b"NS", "absent": b"HD"},  # cas ignored
    b"MA": {"match": b"HD", "other": b"EX", "zero": b"HD", "absent": b"NS"},
    b"MP": {"match": b"HD", "other": b"EX", "zero": b"HD", "absent": b"NS"},
}


@pytest.mark.parametrize("mode", sorted(MS_CAS_REPLIES))
@pytest.mark.parametrize("case", ["match", "other", "zero", "absent"])
def test_ms_cas_in_each_mode(mc_server, mode, case):
    raw = mc_server.mc_raw()
    cas = cas_of(raw.call(b"ms k 1 c\r\na\r\n"))
    if case == "absent":
        raw.call(b"md k\r\n")
    sent = {"match": cas, "other": cas + 1000, "zero": 0, "absent": cas}[case]
    reply = raw.call(b"ms k 1 %s C%d c k O1\r\nb\r\n" % (mode, sent))
    status = MS_CAS_REPLIES[mode][case]
    if status == b"HD":
        assert re.fullmatch(rb"HD c(\d+) kk O1\r\n", reply) and cas_of(reply) != cas, reply
    else:  # a failure echoes c0, and q does not hide it
        assert reply == status + b" c0 kk O1\r\n", reply
        assert raw.call(b"ms k 1 %s C%d c q\r\nb\r\n" % (mode, sent)) == status + b" c0\r\n"


def test_ms_invalidate(mc_server):
    raw = mc_server.mc_raw()
    cas = cas_of(raw.call(b"ms k 1 c\r\na\r\n"))
    # I with an older cas stores the value but marks it stale (X); the first fetch
    # wins the recache (W).
    assert raw.call(b"ms k 1 I C%d\r\nb\r\n" % (cas - 1)) == b"HD\r\n"
    assert raw.call(b"mg k v\r\n") == b"VA 1 X W\r\nb\r\n"
    assert raw.call(b"mg k v\r\n") == b"VA 1 Z X\r\nb\r\n"
    # The stale item keeps the TTL of the one it replaced; C0 compares nothing (EX), a
    # newer cas is EX, and append refuses an older one.
    cas = cas_of(raw.call(b"ms t 1 T100 c\r\na\r\n"))
    assert raw.call(b"ms t 1 T5 I C%d\r\nb\r\n" % (cas - 1)) == b"HD\r\n"
    assert_ttl(raw.call(b"mg t t\r\n"), 100)
    cas = cas_of(raw.call(b"ms t 1 c\r\na\r\n"))
    assert raw.call(b"ms t 1 I C0 c\r\nb\r\n") == b"EX c0\r\n"
    assert raw.call(b"ms t 1 I C%d c\r\nb\r\n" % (cas + 1000)) == b"EX c0\r\n"
    assert raw.call(b"ms t 1 MA I C%d c\r\nb\r\n" % (cas - 1)) == b"EX c0\r\n"
    assert raw.call(b"mg t v\r\n") == b"VA 1\r\na\r\n"
    # A classic set makes a new item whose cas is newer than any read before it.
    raw.call(b"set t 0 50 1\r\nb\r\n")
    assert raw.call(b"ms t 1 I C%d\r\nc\r\n" % cas) == b"HD\r\n"
    assert raw.call(b"mg t v\r\n") == b"VA 1 X W\r\nc\r\n"


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
    assert raw.call(b"md k C0\r\n") == b"EX\r\n"  # memcached's items never have cas 0
    raw.call(b"set plain 0 0 1\r\nx\r\n")
    assert raw.call(b"md plain C0\r\n") == b"EX\r\n"
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
    # md I hands the win token out again.
    raw.call(b"md k I\r\n")
    assert raw.call(b"mg k\r\n") == b"HD X W\r\n"
    raw.call(b"md k I\r\n")
    assert raw.call(b"mg k\r\n") == b"HD X W\r\n"


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


def test_ma_quiet_and_flag_order(mc_server):
    raw = mc_server.mc_raw()
    # q hides the reply of an update, not that of an item N created, nor a failure.
    assert raw.call(b"ma n q v N0\r\n") == b"VA 1\r\n0\r\n"
    assert raw.call(b"ma n q v\r\n") == b""
    assert raw.call(b"ma m q N0 J3\r\n") == b"HD\r\n"
    assert raw.call(b"ma m q C1\r\n") == b"EX\r\n"
    assert raw.call(b"ma x q\r\n") == b"NF\r\n"
    assert raw.call(b"get n m\r\n") == b"VALUE n 0 1\r\n1\r\nVALUE m 0 1\r\n3\r\nEND\r\n"
    # C0 compares nothing.
    raw.call(b"mg n c\r\n")
    assert raw.call(b"ma n C0 v\r\n") == b"VA 1\r\n2\r\n"
    # t, T and N apply in flag order; a negative TTL expires the item after this reply.
    assert raw.call(b"ma t N0 t T30 v\r\n") == b"VA 1 t-1\r\n0\r\n"
    assert_ttl(raw.call(b"ma t t T50 v\r\n"), 30)
    assert_ttl(raw.call(b"ma t T70 t v\r\n"), 70)
    assert raw.call(b"ma u N-1 v\r\n") == b"VA 1\r\n0\r\n"
    assert raw.call(b"mg u v\r\n") == b"EN\r\n"
    assert raw.call(b"ma t T-1 v\r\n") == b"VA 1\r\n3\r\n"
    assert raw.call(b"mg t v\r\n") == b"EN\r\n"


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
