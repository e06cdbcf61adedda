"""Geo commands with Redis 7.0's exact replies and error texts (validated against
redis-server 7.0 with DAMSELFLY_TEST_TARGET=redis)."""

import math
import random

import pytest

from helpers import err

SYNTAX = err("ERR syntax error")
NOT_INT = err("ERR value is not an integer or out of range")
NOT_FLOAT = err("ERR value is not a valid float")
WRONGTYPE = err("WRONGTYPE Operation against a key holding the wrong kind of value")
UNIT = err("ERR unsupported unit provided. please use M, KM, FT, MI")
MEMBER = err("ERR could not decode requested zset member")


def arity(cmd):
    return err(f"ERR wrong number of arguments for '{cmd}' command")


@pytest.fixture
def c(server):
    return server.raw()


@pytest.fixture(params=["listpack", "skiplist"])
def encoding(request, server):
    """Runs the test with both encodings (skiplist: zset-max-listpack-entries 0)."""
    r = server.client()
    old = r.config_get("zset-max-listpack-entries")["zset-max-listpack-entries"]
    r.config_set("zset-max-listpack-entries", 128 if request.param == "listpack" else 0)
    yield request.param
    r.config_set("zset-max-listpack-entries", old)


def sicily(c, key="Sicily"):
    assert c("GEOADD", key, "13.361389", "38.115556", "Palermo",
             "15.087269", "37.502669", "Catania") == 2


# ------------------------------------------------------------------------------ GEOADD

def test_geoadd_scores_and_options(c, encoding):
    sicily(c)
    assert c("OBJECT", "ENCODING", "Sicily") == encoding.encode()
    assert c("ZRANGE", "Sicily", "0", "-1", "WITHSCORES") == [
        b"Palermo", b"3479099956230698", b"Catania", b"3479447370796909"]
    assert c("GEOADD", "k", "1", "2", "m") == 1
    assert c("GEOADD", "k", "XX", "3", "4", "m", "5", "6", "n") == 0
    assert c("ZCARD", "k") == 1
    assert c("GEOADD", "k", "nx", "ch", "7", "8", "m", "5", "6", "n") == 1
    assert c("GEOADD", "k", "CH", "7", "8", "m", "5", "6", "n") == 1  # m moves
    assert c("GEOADD", "k", "ch", "7", "8", "m", "5", "6", "n", "9", "9", "o") == 1
    assert c("GEOADD", "k", "7", "8", "m", "1", "1", "p") == 1
    assert c("GEOADD", "nokey", "XX", "1", "2", "m") == 0
    assert c("EXISTS", "nokey") == 0


def test_geoadd_errors(c):
    assert c("GEOADD", "k", "200", "100", "x") == err(
        "ERR invalid longitude,latitude pair 200.000000,100.000000")
    assert c("GEOADD", "k", "0", "85.06", "x") == err(
        "ERR invalid longitude,latitude pair 0.000000,85.060000")
    assert c("GEOADD", "k", "-180.0000001", "0", "x") == err(
        "ERR invalid longitude,latitude pair -180.000000,0.000000")
    assert c("GEOADD", "k", "1", "-85.052", "x") == err(
        "ERR invalid longitude,latitude pair 1.000000,-85.052000")
    for bad in ("abc", "nan", "1e500", " 1", "", "1\x002"):
        assert c("GEOADD", "k", bad, "1", "x") == NOT_FLOAT, bad
        assert c("GEOADD", "k", "1", bad, "x") == NOT_FLOAT, bad
    # A bad pair anywhere adds nothing.
    assert c("GEOADD", "k", "1", "2", "a", "1", "x", "b") == NOT_FLOAT
    assert c("EXISTS", "k") == 0
    assert c("GEOADD", "k", "1", "2", "x", "3") == SYNTAX
    assert c("GEOADD", "k", "NX", "XX", "1", "2", "x") == SYNTAX
    assert c("GEOADD", "k", "nx", "ch", "xx") == SYNTAX
    assert c("GEOADD", "k", "nx", "ch", "ch") == SYNTAX
    assert c("GEOADD", "k", "GT", "1", "2", "x") == SYNTAX
    assert c("GEOADD", "k", "GT", "1", "2") == NOT_FLOAT
    assert c("GEOADD", "k", "1", "2") == arity("geoadd")
    assert c("GEOADD", "k") == arity("geoadd")
    assert c("SET", "s", "v") == "OK"
    assert c("GEOADD", "s", "1", "2", "x") == WRONGTYPE
    # The pair is checked before the key's type, as Redis parses before it looks.
    assert c("GEOADD", "s", "1", "200", "x") == err(
        "ERR invalid longitude,latitude pair 1.000000,200.000000")


def test_geoadd_is_zadd_for_events_and_watch(server):
    c = server.raw()
    sub = server.raw()
    c("CONFIG", "SET", "notify-keyspace-events", "KEA")
    try:
        sub("SUBSCRIBE", "__keyspace@0__:g")
        assert c("GEOADD", "g", "1", "2", "m") == 1
        assert sub.read() == [b"message", b"__keyspace@0__:g", b"zadd"]
        w = server.raw()
        w("WATCH", "g")
        w("MULTI")
        w("GET", "x")
        assert c("GEOADD", "g", "NX", "1", "2", "m") == 0  # no change: the watch holds
        assert w("EXEC") == [None]
        w("WATCH", "g")
        w("MULTI")
        w("GET", "x")
        assert c("GEOADD", "g", "3", "4", "m") == 0
        assert sub.read() == [b"message", b"__keyspace@0__:g", b"zadd"]
        assert w("EXEC") is None
    finally:
        c("CONFIG", "SET", "notify-keyspace-events", "")


# ------------------------------------------------------------------ GEOPOS GEOHASH GEODIST

def test_geopos_geohash_exact_texts(c, encoding):
    sicily(c)
    assert c.raw_call("GEOPOS", "Sicily", "Palermo", "nope") == (
        b"*2\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n*-1\r\n")
    assert c("GEOHASH", "Sicily", "Palermo", "Catania", "nope") == [
        b"sqc8b49rny0", b"sqdtr74hyu0", None]
    assert c("GEOPOS", "Sicily") == []
    assert c("GEOHASH", "Sicily") == []
    assert c("GEOPOS", "nokey", "a", "b") == [None, None]
    assert c("GEOHASH", "nokey", "a") == [None]
    c("HELLO", "3")
    assert c.raw_call("GEOPOS", "Sicily", "Catania", "nope") == (
        b"*2\r\n*2\r\n,15.08726745843887329\r\n,37.50266842333162032\r\n_\r\n")
    assert c.raw_call("GEOHASH", "Sicily", "nope") == b"*1\r\n_\r\n"


def test_edges_poles_and_antimeridian(c):
    assert c("GEOADD", "e", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw",
             "0", "0", "zero", "179.9999", "0", "east", "-179.9999", "0", "west") == 5
    assert c("ZSCORE", "e", "ne") == b"13510798882111488"
    assert c("ZSCORE", "e", "sw") == b"0"
    assert c("GEOPOS", "e", "ne", "sw", "zero", "east", "west") == [
        [b"180", b"85.0511287799999991"],
        [b"-179.99999731779098511", b"-85.05112751263942528"],
        [b"0.00000268220901489", b"0.00000126736058093"],
        [b"179.99990075826644897", b"0.00000126736058093"],
        [b"-179.99990075826644897", b"0.00000126736058093"]]
    assert c("GEOHASH", "e", "ne", "sw", "zero", "east", "west") == [
        b"bp05b5048p0", b"00bh0hbj200", b"s0000000000", b"xbpbpbpbj80", b"80000000420"]
    assert c("GEODIST", "e", "east", "west") == b"22.0766"
    assert c("GEODIST", "e", "ne", "sw", "km") == b"18919.8446"
    # From exactly 180 Redis's cells miss the western side: so do ours.
    assert c("GEOSEARCH", "e", "FROMLONLAT", "180", "0", "BYRADIUS", "50", "m", "ASC",
             "WITHDIST") == [[b"east", b"11.0392"]]
    assert c("GEOSEARCH", "e", "FROMMEMBER", "west", "BYBOX", "100", "100", "m", "ASC") == [
        b"west", b"east"]
    assert c("GEORADIUS", "e", "180", "85.05112878", "10", "km") == [b"ne"]
    assert c("GEORADIUS", "e", "-180", "-85.05112878", "1", "m", "WITHDIST") == [
        [b"sw", b"0.1433"]]
    # Scores no GEOADD made still decode (as Redis converts them).
    c("ZADD", "e", "-1", "neg", "1e300", "huge")
    assert c("GEOPOS", "e", "neg")[0] is not None
    assert len(c("GEOHASH", "e", "huge")[0]) == 11


def test_geodist(c, encoding):
    sicily(c)
    assert c("GEODIST", "Sicily", "Palermo", "Catania") == b"166274.1516"
    assert c("GEODIST", "Sicily", "Palermo", "Catania", "m") == b"166274.1516"
    assert c("GEODIST", "Sicily", "Palermo", "Catania", "KM") == b"166.2742"
    assert c("GEODIST", "Sicily", "Palermo", "Catania", "mi") == b"103.3182"
    assert c("GEODIST", "Sicily", "Palermo", "Catania", "Ft") == b"545518.8700"
    assert c("GEODIST", "Sicily", "Palermo", "Palermo") == b"0.0000"
    assert c("GEODIST", "Sicily", "Palermo", "nope") is None
    assert c("GEODIST", "nokey", "a", "b") is None
    assert c("GEODIST", "Sicily", "Palermo", "Catania", "yards") == UNIT
    # The unit is checked before the key.
    assert c("GEODIST", "nokey", "a", "b", "yards") == UNIT
    assert c("GEODIST", "Sicily", "Palermo", "Catania", "km", "x") == SYNTAX
    assert c("GEODIST", "Sicily", "Palermo") == arity("geodist")
    assert c("GEOPOS") == arity("geopos")
    assert c("GEOHASH") == arity("geohash")
    c("SET", "s", "v")
    for cmd in (("GEOPOS", "s", "a"), ("GEOHASH", "s", "a"), ("GEODIST", "s", "a", "b")):
        assert c(*cmd) == WRONGTYPE, cmd


# ----------------------------------------------------------------------------- searches

def test_georadius_options(c, encoding):
    sicily(c)
    assert c("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "ASC") == [
        [b"Catania", b"56.4413"], [b"Palermo", b"190.4424"]]
    assert c("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST", "DESC") == [
        [b"Palermo", b"190.4424"], [b"Catania", b"56.4413"]]
    assert c("GEORADIUS", "Sicily", "15", "37", "200", "km") == [b"Palermo", b"Catania"]
    assert c("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHCOORD", "WITHDIST",
             "WITHHASH", "COUNT", "1") == [
        [b"Catania", b"56.4413", 3479447370796909,
         [b"15.08726745843887329", b"37.50266842333162032"]]]
    assert c("GEORADIUS_RO", "Sicily", "15", "37", "200000", "m", "withhash") == [
        [b"Palermo", 3479099956230698], [b"Catania", 3479447370796909]]
    assert c("GEORADIUS", "Sicily", "15", "37", "124.2731", "mi", "WITHDIST") == [
        [b"Palermo", b"118.3357"], [b"Catania", b"35.0711"]]
    assert c("GEORADIUS", "Sicily", "15", "37", "118", "mi", "WITHDIST") == [
        [b"Catania", b"35.0711"]]
    assert c("GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km", "WITHDIST") == [
        [b"Palermo", b"0.0000"], [b"Catania", b"166.2742"]]
    assert c("GEORADIUSBYMEMBER_RO", "Sicily", "Catania", "100", "km") == [b"Catania"]
    assert c("GEORADIUS", "Sicily", "15", "37", "1", "km") == []
    assert c("GEORADIUS", "Sicily", "15", "37", "0", "km") == []
    assert c("GEORADIUSBYMEMBER", "Sicily", "Catania", "0", "km") == [b"Catania"]
    assert c("GEORADIUS", "nokey", "15", "37", "1", "km") == []
    # A missing key skips the member and the radius.
    assert c("GEORADIUSBYMEMBER", "nokey", "x", "bad", "furlong") == []
    assert c("GEORADIUS", "nokey", "15", "37", "bad", "km") == err("ERR need numeric radius")


def test_georadius_errors(c):
    sicily(c)
    cases = [
        (("GEORADIUS", "Sicily", "15", "37", "-1", "km"), err("ERR radius cannot be negative")),
        (("GEORADIUS", "Sicily", "15", "37", "x", "km"), err("ERR need numeric radius")),
        (("GEORADIUS", "Sicily", "15", "37", "1", "yd"), UNIT),
        (("GEORADIUS", "Sicily", "200", "37", "1", "km"),
         err("ERR invalid longitude,latitude pair 200.000000,37.000000")),
        (("GEORADIUS", "Sicily", "x", "37", "1", "km"), NOT_FLOAT),
        (("GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT", "0"),
         err("ERR COUNT must be > 0")),
        (("GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT", "-3"),
         err("ERR COUNT must be > 0")),
        (("GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT", "x"), NOT_INT),
        (("GEORADIUS", "Sicily", "15", "37", "1", "km", "COUNT"), SYNTAX),
        (("GEORADIUS", "Sicily", "15", "37", "1", "km", "ANY"),
         err("ERR the ANY argument requires COUNT argument")),
        (("GEORADIUS", "Sicily", "15", "37", "1", "km", "BYBOX", "1", "1", "km"), SYNTAX),
        (("GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE"), SYNTAX),
        (("GEORADIUS", "Sicily", "15", "37", "1", "km", "STORE", "d", "WITHDIST"),
         err("ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and "
             "WITHCOORD options")),
        (("GEORADIUS", "Sicily", "15", "37", "1", "km", "STOREDIST", "d", "WITHCOORD"),
         err("ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and "
             "WITHCOORD options")),
        (("GEORADIUS_RO", "Sicily", "15", "37", "1", "km", "STORE", "d"), SYNTAX),
        (("GEORADIUSBYMEMBER_RO", "Sicily", "Palermo", "1", "km", "STOREDIST", "d"), SYNTAX),
        (("GEORADIUSBYMEMBER", "Sicily", "nope", "1", "km"), MEMBER),
        (("GEORADIUSBYMEMBER", "Sicily", "Palermo", "1", "km", "FROMMEMBER", "x"), SYNTAX),
        (("GEORADIUS", "Sicily", "15", "37", "1"), arity("georadius")),
        (("GEORADIUS_RO", "Sicily", "15", "37", "1"), arity("georadius_ro")),
        (("GEORADIUSBYMEMBER", "Sicily", "x", "1"), arity("georadiusbymember")),
        (("GEORADIUSBYMEMBER_RO", "Sicily", "x", "1"), arity("georadiusbymember_ro")),
    ]
    for cmd, reply in cases:
        assert c(*cmd) == reply, cmd
    c("SET", "s", "v")
    assert c("GEORADIUS", "s", "x", "y", "z", "w") == WRONGTYPE
    assert c("GEORADIUSBYMEMBER", "s", "m", "1", "km") == WRONGTYPE


def test_geosearch(c, encoding):
    sicily(c)
    c("GEOADD", "Sicily", "12.758489", "38.788135", "edge1", "17.241510", "38.788135", "edge2")
    assert c("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km",
             "ASC") == [b"Catania", b"Palermo"]
    assert c("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km",
             "ASC", "WITHCOORD", "WITHDIST", "WITHHASH") == [
        [b"Catania", b"56.4413", 3479447370796909,
         [b"15.08726745843887329", b"37.50266842333162032"]],
        [b"Palermo", b"190.4424", 3479099956230698,
         [b"13.36138933897018433", b"38.11555639549629859"]],
        [b"edge2", b"279.7403", 3481342659049484,
         [b"17.24151045083999634", b"38.78813451624225195"]],
        [b"edge1", b"279.7405", 3479273021651468,
         [b"12.7584877610206604", b"38.78813451624225195"]]]
    assert c("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km",
             "DESC", "COUNT", "2") == [b"Catania", b"edge1"]
    assert c("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "200", "200", "km",
             "ASC", "WITHDIST") == [[b"Palermo", b"0.0000"], [b"edge1", b"91.4007"]]
    assert c("GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYBOX", "200", "200", "km",
             "ASC", "COUNT", "1", "ANY") == [b"Palermo"]
    assert c("GEOSEARCH", "Sicily", "FROMLONLAT", "0", "0", "BYBOX", "1", "1", "km") == []
    assert c("GEOSEARCH", "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "0", "0", "km") == []
    assert c("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km") == []


def test_geosearch_count_any(c):
    # ANY stops at the first COUNT members found (in the cells' order), then sorts them only
    # when asked; without ANY, COUNT keeps the nearest.
    for i in range(20):
        c("GEOADD", "pts", str(10 + i * 0.001), "10", f"p{i}")
    assert c("GEOSEARCH", "pts", "FROMLONLAT", "10.0105", "10", "BYRADIUS", "10", "km",
             "COUNT", "3") == [b"p10", b"p11", b"p9"]
    assert c("GEOSEARCH", "pts", "FROMLONLAT", "10.0105", "10", "BYRADIUS", "10", "km",
             "COUNT", "3", "ANY") == [b"p0", b"p1", b"p2"]
    assert c("GEOSEARCH", "pts", "FROMLONLAT", "10.0105", "10", "BYRADIUS", "10", "km",
             "COUNT", "3", "ANY", "DESC") == [b"p0", b"p1", b"p2"]
    assert c("GEOSEARCH", "pts", "FROMLONLAT", "10.0105", "10", "BYRADIUS", "10", "km",
             "COUNT", "100") == c("GEOSEARCH", "pts", "FROMLONLAT", "10.0105", "10",
                                  "BYRADIUS", "10", "km", "ASC")


def test_geosearch_errors(c):
    sicily(c)
    FROM = err("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for geosearch")
    BY = err("ERR exactly one of BYRADIUS and BYBOX can be specified for geosearch")
    cases = [
        (("geosearch", "Sicily", "BYRADIUS", "1", "km", "ASC", "DESC"), FROM),
        (("geosearch", "Sicily", "FROMMEMBER", "Palermo", "ASC", "DESC", "WITHDIST"), BY),
        (("geosearch", "Sicily", "FROMMEMBER", "Palermo", "FROMLONLAT", "1", "2", "BYRADIUS",
          "1", "km"), SYNTAX),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "FROMMEMBER", "Palermo", "BYRADIUS",
          "1", "km"), SYNTAX),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "BYBOX", "1",
          "1", "km"), SYNTAX),
        (("geosearch", "Sicily", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"), MEMBER),
        # The member is looked up where it appears: before a later syntax error.
        (("geosearch", "Sicily", "FROMMEMBER", "nope", "BYRADIUS", "1", "km", "junk"), MEMBER),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "junk"), SYNTAX),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "200", "BYRADIUS", "1", "km"),
         err("ERR invalid longitude,latitude pair 1.000000,200.000000")),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "yd"), UNIT),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "x", "km"),
         err("ERR need numeric radius")),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYBOX", "x", "1", "km"),
         err("ERR need numeric width")),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYBOX", "1", "x", "km"),
         err("ERR need numeric height")),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYBOX", "-1", "1", "km"),
         err("ERR height or width cannot be negative")),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYBOX", "1", "1", "yd"), UNIT),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYBOX", "1", "1"), SYNTAX),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "ANY"),
         err("ERR the ANY argument requires COUNT argument")),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "STORE", "d"),
         SYNTAX),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "STOREDIST"),
         SYNTAX),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "WITHDIST"), SYNTAX),
        (("geosearch", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS"), arity("geosearch")),
        (("GEOSEARCH", "nokey", "BYRADIUS", "1", "km", "ASC", "DESC"),
         err("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH")),
        (("geosearchstore", "d", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km",
          "WITHDIST"),
         err("ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD "
             "options")),
        (("geosearchstore", "d", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km",
          "STORE", "x"), SYNTAX),
        (("geosearchstore", "d", "Sicily", "BYRADIUS", "1", "km", "ASC", "DESC"),
         err("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for "
             "geosearchstore")),
        (("geosearchstore", "d", "Sicily", "FROMLONLAT", "1", "2", "BYRADIUS"),
         arity("geosearchstore")),
    ]
    for cmd, reply in cases:
        assert c(*cmd) == reply, cmd
    c("SET", "s", "v")
    assert c("GEOSEARCH", "s", "FROMMEMBER", "x", "BYRADIUS", "1", "km") == WRONGTYPE
    assert c("GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "x", "BYRADIUS", "1", "km") == WRONGTYPE


def test_resp3_search_replies(c):
    sicily(c)
    c("HELLO", "3")
    assert c.raw_call("GEOSEARCH", "Sicily", "FROMMEMBER", "Catania", "BYRADIUS", "1", "km",
                      "WITHCOORD", "WITHDIST", "WITHHASH") == (
        b"*1\r\n*4\r\n$7\r\nCatania\r\n$6\r\n0.0000\r\n:3479447370796909\r\n"
        b"*2\r\n,15.08726745843887329\r\n,37.50266842333162032\r\n")
    assert c.raw_call("GEODIST", "Sicily", "Palermo", "Catania", "km") == b"$8\r\n166.2742\r\n"
    assert c.raw_call("GEODIST", "Sicily", "Palermo", "nope") == b"_\r\n"
    assert c.raw_call("GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km") == \
        b"*0\r\n"


# ---------------------------------------------------------------------------- the stores

@pytest.mark.parametrize("dst", ["dst", "{Sicily}dst", "other-key-9"])
def test_stores(c, dst):
    sicily(c)
    assert c("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", dst) == 2
    assert c("ZRANGE", dst, "0", "-1", "WITHSCORES") == [
        b"Palermo", b"3479099956230698", b"Catania", b"3479447370796909"]
    assert c("TTL", dst) == -1
    assert c("GEORADIUSBYMEMBER", "Sicily", "Palermo", "200", "km", "STOREDIST", dst) == 2
    assert c("ZRANGE", dst, "0", "-1", "WITHSCORES") == [
        b"Palermo", b"0", b"Catania", b"166.27415156960032"]
    assert c("GEORADIUS", "Sicily", "15", "37", "200", "km", "COUNT", "1", "STOREDIST", dst) == 1
    assert c("ZRANGE", dst, "0", "-1", "WITHSCORES") == [b"Catania", b"56.441257870158204"]
    assert c("GEOSEARCHSTORE", dst, "Sicily", "FROMLONLAT", "15", "37", "BYBOX", "400", "400",
             "km", "STOREDIST") == 2
    assert c("ZRANGE", dst, "0", "-1", "WITHSCORES") == [
        b"Catania", b"56.441257870158204", b"Palermo", b"190.44242984775784"]
    assert c("GEOSEARCHSTORE", dst, "Sicily", "FROMLONLAT", "15", "37", "BYRADIUS", "100000",
             "m", "COUNT", "1") == 1
    assert c("ZRANGE", dst, "0", "-1", "WITHSCORES") == [b"Catania", b"3479447370796909"]
    # An empty result deletes the destination, whatever it held.
    c("SET", dst, "string", "EX", "100")
    assert c("GEOSEARCHSTORE", dst, "Sicily", "FROMLONLAT", "0", "0", "BYRADIUS", "1",
             "km") == 0
    assert c("EXISTS", dst) == 0
    c("SET", dst, "string")
    assert c("GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", dst) == 0
    assert c("EXISTS", dst) == 0
    c("SET", dst, "string", "EX", "100")
    assert c("GEOSEARCHSTORE", dst, "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1",
             "km") == 1
    assert c("TYPE", dst) == "zset"
    assert c("TTL", dst) == -1
    # The source may be the destination.
    assert c("GEOSEARCHSTORE", "Sicily", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1",
             "km", "STOREDIST") == 1
    assert c("ZRANGE", "Sicily", "0", "-1", "WITHSCORES") == [b"Palermo", b"0"]


def test_store_events(server):
    c = server.raw()
    sub = server.raw()
    sicily(c)
    c("CONFIG", "SET", "notify-keyspace-events", "KEA")
    try:
        sub("PSUBSCRIBE", "__keyspace@0__:d*")
        assert c("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "d1") == 2
        assert sub.read() == [b"pmessage", b"__keyspace@0__:d*", b"__keyspace@0__:d1",
                              b"georadiusstore"]
        assert c("GEOSEARCHSTORE", "d2", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1",
                 "km") == 1
        assert sub.read() == [b"pmessage", b"__keyspace@0__:d*", b"__keyspace@0__:d2",
                              b"geosearchstore"]
        assert c("GEOSEARCHSTORE", "d2", "Sicily", "FROMLONLAT", "0", "0", "BYRADIUS", "1",
                 "km") == 0
        assert sub.read() == [b"pmessage", b"__keyspace@0__:d*", b"__keyspace@0__:d2", b"del"]
    finally:
        c("CONFIG", "SET", "notify-keyspace-events", "")


def test_store_in_multi(c):
    sicily(c)
    c("MULTI")
    c("GEOSEARCHSTORE", "d", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km")
    c("GEORADIUS", "Sicily", "15", "37", "200", "km", "STORE", "e")
    c("GEORADIUS", "Sicily", "15", "37", "200", "km", "WITHDIST")
    assert c("EXEC") == [1, 2, [[b"Palermo", b"190.4424"], [b"Catania", b"56.4413"]]]
    assert c("ZCARD", "d") == 1
    assert c("ZCARD", "e") == 2


def test_command_info_key_specs(c):
    assert c("COMMAND", "GETKEYS", "GEORADIUS", "src", "1", "2", "3", "km", "STORE", "dst") == [
        b"src", b"dst"]
    assert c("COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "src", "m", "3", "km", "STOREDIST",
             "dst") == [b"src", b"dst"]
    assert c("COMMAND", "GETKEYS", "GEOSEARCHSTORE", "dst", "src", "FROMMEMBER", "m",
             "BYRADIUS", "1", "km") == [b"dst", b"src"]
    info = c("COMMAND", "INFO", "GEOADD", "GEOSEARCH", "GEORADIUS_RO")
    assert [i[:3] for i in info] == [[b"geoadd", -5, ["write", "denyoom"]],
                                      [b"geosearch", -7, ["readonly"]],
                                      [b"georadius_ro", -6, ["readonly"]]]
    assert info[0][6] == ["@write", "@geo", "@slow"]


# ------------------------------------------------------------------- against a model

def haversine(lon1, lat1, lon2, lat2):
    r = 6372797.560856
    lat1r, lat2r = math.radians(lat1), math.radians(lat2)
    u = math.sin((lat2r - lat1r) / 2)
    v = math.sin((math.radians(lon2) - math.radians(lon1)) / 2)
    return 2 * r * math.asin(math.sqrt(u * u + math.cos(lat1r) * math.cos(lat2r) * v * v))


def test_radius_matches_a_model(c):
    # Seeded random points around random centres: the search finds exactly the members the
    # haversine model puts in the radius (those within 1 m of the edge are not asserted: the
    # model uses the typed coordinates, the server the cell centres).
    rng = random.Random(20)
    for round_ in range(8):
        c("DEL", "pts")
        lon, lat = rng.uniform(-179, 179), rng.uniform(-60, 60)
        radius_km = rng.choice([1, 10, 100, 300])
        points = {}
        args = []
        for i in range(200):
            plon = max(-180, min(180, lon + rng.uniform(-3, 3) * radius_km / 100))
            plat = max(-85, min(85, lat + rng.uniform(-3, 3) * radius_km / 100))
            points[f"m{i}"] = (plon, plat)
            args += [f"{plon:.6f}", f"{plat:.6f}", f"m{i}"]
        c("GEOADD", "pts", *args)
        found = {m.decode() for m in c("GEORADIUS", "pts", f"{lon:.6f}", f"{lat:.6f}",
                                       str(radius_km), "km")}
        for m, (plon, plat) in points.items():
            d = haversine(float(f"{lon:.6f}"), float(f"{lat:.6f}"), float(f"{plon:.6f}"),
                          float(f"{plat:.6f}"))
            if abs(d - radius_km * 1000) < 1:
                continue
            assert (m in found) == (d < radius_km * 1000), (round_, m, d)
