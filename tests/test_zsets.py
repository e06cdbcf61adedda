"""Sorted-set commands with Redis 7.0's exact replies and error texts (validated against
redis-server 7.0 with DAMSELFLY_TEST_TARGET=redis)."""

import threading

import pytest
import redis

from helpers import err

SYNTAX = err("ERR syntax error")
NOT_INT = err("ERR value is not an integer or out of range")
NOT_FLOAT = err("ERR value is not a valid float")
WRONGTYPE = err("WRONGTYPE Operation against a key holding the wrong kind of value")
SCORE_RANGE = err("ERR min or max is not a float")
LEX_RANGE = err("ERR min or max not valid string range item")


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


# ------------------------------------------------------------------------------- ZADD


def test_zadd_flags(c, encoding):
    assert c("ZADD", "z", "1", "a", "2", "b") == 2
    assert c("OBJECT", "ENCODING", "z") == encoding.encode()
    assert c("ZADD", "z", "NX", "10", "a", "3", "c") == 1
    assert c("ZADD", "z", "XX", "10", "a", "4", "d") == 0
    assert c("ZADD", "z", "XX", "CH", "11", "a", "4", "d") == 1
    assert c("ZADD", "z", "GT", "CH", "5", "a", "12", "b") == 1
    assert c("ZADD", "z", "LT", "CH", "5", "a", "20", "b") == 1
    assert c("ZADD", "z", "ch", "5", "a", "12", "b", "1", "new") == 1  # b unchanged
    assert c("ZADD", "z", "INCR", "1", "a") == b"6"
    assert c("ZADD", "z", "NX", "INCR", "1", "a") is None
    assert c("ZADD", "z", "XX", "INCR", "1", "missing") is None
    assert c("ZADD", "z", "GT", "INCR", "-1", "a") is None
    assert c("ZADD", "z", "LT", "INCR", "-1", "a") == b"5"
    assert c("ZADD", "nokey", "XX", "1", "a") == 0
    assert c("EXISTS", "nokey") == 0
    assert c("ZRANGE", "z", "0", "-1", "WITHSCORES") == [
        b"new", b"1", b"c", b"3", b"a", b"5", b"b", b"12"]


def test_zadd_errors(c):
    assert c("ZADD", "z", "NX", "XX", "1", "a") == err(
        "ERR XX and NX options at the same time are not compatible")
    for flags in (("GT", "LT"), ("GT", "NX"), ("LT", "NX")):
        assert c("ZADD", "z", *flags, "1", "a") == err(
            "ERR GT, LT, and/or NX options at the same time are not compatible")
    assert c("ZADD", "z", "INCR", "1", "a", "2", "b") == err(
        "ERR INCR option supports a single increment-element pair")
    assert c("ZADD", "z", "1", "a", "2") == SYNTAX
    assert c("ZADD", "z", "NX", "1") == SYNTAX
    assert c("ZADD", "z") == arity("zadd")
    assert c("ZADD", "z", "1") == arity("zadd")
    for bad in ("nan", "abc", "1e500", "1e-500", " 1", "1 ", "", "1\x002"):
        assert c("ZADD", "z", bad, "a") == NOT_FLOAT, bad
    # A bad score anywhere adds nothing.
    assert c("ZADD", "z", "1", "a", "x", "b") == NOT_FLOAT
    assert c("EXISTS", "z") == 0
    assert c("ZADD", "z", "inf", "a") == 1
    assert c("ZADD", "z", "INCR", "-inf", "a") == err("ERR resulting score is not a number (NaN)")
    assert c("ZINCRBY", "z", "-inf", "a") == err("ERR resulting score is not a number (NaN)")
    assert c("ZSCORE", "z", "a") == b"inf"
    assert c("SET", "s", "v") == "OK"
    assert c("ZADD", "s", "1", "a") == WRONGTYPE


def test_score_texts(c, encoding):
    assert c("ZADD", "z", "1e-5", "a", "0x10", "hex", "-0", "negzero", "+inf", "pinf",
             "-inf", "ninf", "123456789012345678", "big", "1.5", "f", "1e20", "e") == 8
    assert c.raw_call("ZSCORE", "z", "a") == b"$22\r\n1.0000000000000001e-05\r\n"
    assert c("ZSCORE", "z", "hex") == b"16"
    assert c("ZSCORE", "z", "pinf") == b"inf"
    assert c("ZSCORE", "z", "ninf") == b"-inf"
    assert c("ZSCORE", "z", "big") == b"1.2345678901234568e+17"
    assert c("ZSCORE", "z", "e") == b"1e+20"
    assert c("ZMSCORE", "z", "f", "missing", "hex") == [b"1.5", None, b"16"]
    assert c("ZINCRBY", "z", "0.1", "f") == b"1.6000000000000001"


def test_resp3_replies(c, encoding):
    c("HELLO", "3")
    c("ZADD", "z", "1", "a", "2.5", "b")
    assert c.raw_call("ZSCORE", "z", "b") == b",2.5\r\n"
    assert c.raw_call("ZSCORE", "z", "x") == b"_\r\n"
    assert c.raw_call("ZINCRBY", "z", "1", "a") == b",2\r\n"
    assert c.raw_call("ZRANGE", "z", "0", "-1", "WITHSCORES") == \
        b"*2\r\n*2\r\n$1\r\na\r\n,2\r\n*2\r\n$1\r\nb\r\n,2.5\r\n"
    assert c.raw_call("ZRANGE", "z", "0", "-1") == b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    assert c.raw_call("ZMSCORE", "z", "a", "x") == b"*2\r\n,2\r\n_\r\n"
    assert c.raw_call("ZUNION", "1", "z", "WITHSCORES") == \
        b"*2\r\n*2\r\n$1\r\na\r\n,2\r\n*2\r\n$1\r\nb\r\n,2.5\r\n"
    assert c.raw_call("ZRANDMEMBER", "z", "-1", "WITHSCORES").startswith(b"*1\r\n*2\r\n")
    assert c.raw_call("ZPOPMIN", "z") == b"*2\r\n$1\r\na\r\n,2\r\n"
    assert c.raw_call("ZPOPMAX", "z", "1") == b"*1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n"
    c("ZADD", "z", "1", "a")
    assert c.raw_call("ZMPOP", "1", "z", "MIN") == b"*2\r\n$1\r\nz\r\n*1\r\n*2\r\n$1\r\na\r\n,1\r\n"
    assert c.raw_call("ZMPOP", "1", "z", "MIN") == b"_\r\n"


# ------------------------------------------------------------------- reads and ranges


def test_single_member_reads(c, encoding):
    c("ZADD", "z", "1", "a", "2", "b", "3", "c")
    assert c("ZCARD", "z") == 3
    assert c("ZCARD", "missing") == 0
    assert c("ZSCORE", "missing", "a") is None
    assert c("ZMSCORE", "missing", "a", "b") == [None, None]
    assert c("ZRANK", "z", "c") == 2
    assert c("ZREVRANK", "z", "c") == 0
    assert c("ZRANK", "z", "x") is None
    assert c("ZRANK", "missing", "x") is None
    assert c("ZMSCORE", "z") == arity("zmscore")
    assert c("ZRANK", "z") == arity("zrank")
    assert c("ZCARD") == arity("zcard")


def test_zrange_by_rank(c, encoding):
    c("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d")
    assert c("ZRANGE", "z", "0", "-1") == [b"a", b"b", b"c", b"d"]
    assert c("ZRANGE", "z", "-2", "-1") == [b"c", b"d"]
    assert c("ZRANGE", "z", "-100", "1") == [b"a", b"b"]
    assert c("ZRANGE", "z", "2", "1") == []
    assert c("ZRANGE", "z", "10", "20") == []
    assert c("ZRANGE", "z", "0", "9223372036854775807") == [b"a", b"b", b"c", b"d"]
    assert c("ZRANGE", "z", "0", "1", "REV", "WITHSCORES") == [b"d", b"4", b"c", b"3"]
    assert c("ZREVRANGE", "z", "1", "-1") == [b"c", b"b", b"a"]
    assert c("ZRANGE", "missing", "0", "-1") == []
    assert c("ZRANGE", "z", "0", "x") == NOT_INT
    assert c("ZRANGE", "z", "0", "-1", "LIMIT", "0", "1") == err(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
    assert c("ZRANGE", "z", "0", "-1", "REV", "REV") == SYNTAX
    assert c("ZRANGE", "z", "0", "-1", "BYSCORE", "BYLEX") == SYNTAX
    assert c("ZREVRANGE", "z", "0", "-1", "REV") == SYNTAX
    assert c("ZRANGE", "z", "0") == arity("zrange")


def test_zrange_by_score(c, encoding):
    c("ZADD", "z", "-inf", "m", "1", "a", "2", "b", "3", "c", "inf", "p")
    assert c("ZRANGEBYSCORE", "z", "-inf", "+inf") == [b"m", b"a", b"b", b"c", b"p"]
    assert c("ZRANGEBYSCORE", "z", "(1", "3") == [b"b", b"c"]
    assert c("ZRANGEBYSCORE", "z", "(1", "(3") == [b"b"]
    assert c("ZRANGEBYSCORE", "z", "3", "1") == []
    assert c("ZRANGEBYSCORE", "z", "(inf", "+inf") == []
    assert c("ZRANGEBYSCORE", "z", "-inf", "(-inf") == []
    assert c("ZRANGEBYSCORE", "z", "1", "3", "WITHSCORES", "LIMIT", "1", "5") == [
        b"b", b"2", b"c", b"3"]
    assert c("ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "1", "-1") == [b"a", b"b", b"c", b"p"]
    assert c("ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "-1", "2") == []
    assert c("ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "0", "0") == []
    assert c("ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "100", "1") == []
    assert c("ZREVRANGEBYSCORE", "z", "3", "(1", "WITHSCORES") == [b"c", b"3", b"b", b"2"]
    assert c("ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", "1", "2") == [b"c", b"b"]
    assert c("ZRANGEBYSCORE", "z", "x", "1") == SCORE_RANGE
    assert c("ZRANGEBYSCORE", "z", "1", "nan") == SCORE_RANGE
    assert c("ZRANGEBYSCORE", "z", "1", "3", "LIMIT", "x", "1") == NOT_INT
    assert c("ZRANGEBYSCORE", "z", "1", "3", "LIMIT", "1") == SYNTAX
    assert c("ZRANGEBYSCORE", "z", "1", "3", "REV") == SYNTAX
    assert c("ZCOUNT", "z", "-inf", "+inf") == 5
    assert c("ZCOUNT", "z", "(1", "3") == 2
    assert c("ZCOUNT", "z", "3", "1") == 0
    assert c("ZCOUNT", "z", "a", "1") == SCORE_RANGE
    assert c("ZCOUNT", "missing", "0", "1") == 0


def test_lex_ranges(c, encoding):
    c("ZADD", "z", "0", "a", "0", "b", "0", "c", "0", "d", "0", "aa", "0", "", "0", b"b\x00c",
      "0", b"\xff")
    assert c("ZRANGEBYLEX", "z", "-", "+") == [
        b"", b"a", b"aa", b"b", b"b\x00c", b"c", b"d", b"\xff"]
    assert c("ZRANGEBYLEX", "z", "[b", "(d") == [b"b", b"b\x00c", b"c"]
    assert c("ZRANGEBYLEX", "z", "(b", "[c") == [b"b\x00c", b"c"]
    assert c("ZRANGEBYLEX", "z", "[", "(a") == [b""]
    assert c("ZRANGEBYLEX", "z", "(c", "[c") == []
    assert c("ZRANGEBYLEX", "z", "+", "-") == []
    assert c("ZRANGEBYLEX", "z", "-", "[c", "LIMIT", "1", "2") == [b"a", b"aa"]
    assert c("ZREVRANGEBYLEX", "z", "[d", "(a", "LIMIT", "0", "2") == [b"d", b"c"]
    assert c("ZRANGE", "z", "[d", "(a", "BYLEX", "REV") == [b"d", b"c", b"b\x00c", b"b", b"aa"]
    assert c("ZLEXCOUNT", "z", "-", "+") == 8
    assert c("ZLEXCOUNT", "z", "[b", "[d") == 4
    assert c("ZLEXCOUNT", "missing", "-", "+") == 0
    for bad in ("b", "", "+x", "-x"):
        assert c("ZRANGEBYLEX", "z", bad, "+") == LEX_RANGE, bad
        assert c("ZLEXCOUNT", "z", "-", bad) == LEX_RANGE, bad
    assert c("ZRANGEBYLEX", "z", "-", "+", "WITHSCORES") == err(
        "ERR syntax error, WITHSCORES not supported in combination with BYLEX")
    assert c("ZREMRANGEBYLEX", "z", "[b", "(d") == 3
    assert c("ZREMRANGEBYLEX", "z", "-", "+") == 5
    assert c("EXISTS", "z") == 0


def test_remove_ranges(c, encoding):
    c("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f")
    assert c("ZREMRANGEBYRANK", "z", "0", "0") == 1
    assert c("ZREMRANGEBYRANK", "z", "-1", "-1") == 1
    assert c("ZREMRANGEBYRANK", "z", "10", "20") == 0
    assert c("ZREMRANGEBYRANK", "z", "x", "1") == NOT_INT
    assert c("ZREMRANGEBYSCORE", "z", "(2", "4") == 2
    assert c("ZREMRANGEBYSCORE", "z", "x", "4") == SCORE_RANGE
    assert c("ZRANGE", "z", "0", "-1", "WITHSCORES") == [b"b", b"2", b"e", b"5"]
    assert c("ZREMRANGEBYSCORE", "z", "-inf", "+inf") == 2
    assert c("EXISTS", "z") == 0
    assert c("ZREMRANGEBYSCORE", "missing", "1", "2") == 0
    assert c("ZREM", "missing", "a") == 0
    c("ZADD", "z", "1", "a", "2", "b")
    assert c("ZREM", "z", "a", "a", "x") == 1
    assert c("ZREM", "z", "b") == 1
    assert c("EXISTS", "z") == 0
    assert c("ZREM", "z") == arity("zrem")


# --------------------------------------------------------------------------- pops


def test_pops(c, encoding):
    c("ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e")
    assert c("ZPOPMIN", "z") == [b"a", b"1"]
    assert c("ZPOPMAX", "z") == [b"e", b"5"]
    assert c("ZPOPMIN", "z", "2") == [b"b", b"2", b"c", b"3"]
    assert c("ZPOPMAX", "z", "100") == [b"d", b"4"]
    assert c("EXISTS", "z") == 0
    assert c("ZPOPMIN", "z") == []
    assert c("ZPOPMIN", "z", "0") == []
    for bad in ("-1", "x"):
        assert c("ZPOPMIN", "z", bad) == err("ERR value is out of range, must be positive")
    assert c("ZPOPMIN", "z", "1", "2") == SYNTAX
    c("SET", "s", "v")
    assert c("ZPOPMIN", "s", "0") == WRONGTYPE


def test_zmpop(c, encoding):
    c("ZADD", "z1", "1", "a", "2", "b")
    c("ZADD", "z2", "5", "x")
    assert c("ZMPOP", "2", "missing", "z1", "MIN") == [b"z1", [[b"a", b"1"]]]
    assert c("ZMPOP", "2", "z1", "z2", "MAX", "COUNT", "10") == [b"z1", [[b"b", b"2"]]]
    assert c("ZMPOP", "2", "z1", "z2", "max") == [b"z2", [[b"x", b"5"]]]
    assert c("ZMPOP", "2", "z1", "z2", "MIN") is None
    assert c.raw_call("ZMPOP", "1", "z1", "MIN") == b"*-1\r\n"
    for bad in ("0", "-1", "x"):
        assert c("ZMPOP", bad, "z1", "MIN") == err("ERR numkeys should be greater than 0")
    assert c("ZMPOP", "3", "z1", "MIN") == SYNTAX
    assert c("ZMPOP", "1", "z1", "MIDDLE") == SYNTAX
    for bad in ("0", "-1", "x"):
        assert c("ZMPOP", "1", "z1", "MIN", "COUNT", bad) == err(
            "ERR count should be greater than 0")
    assert c("ZMPOP", "1", "z1", "MIN", "COUNT", "1", "COUNT", "1") == SYNTAX
    c("SET", "s", "v")
    assert c("ZMPOP", "2", "missing", "s", "MIN") == WRONGTYPE
    c("ZADD", "z1", "1", "a")
    assert c("ZMPOP", "2", "z1", "s", "MIN") == [b"z1", [[b"a", b"1"]]]
    assert c("ZMPOP", "1") == arity("zmpop")


# ------------------------------------------------------------ set operations, stores


def test_union_inter_diff(c, encoding):
    c("ZADD", "u1{t}", "1", "a", "2", "b", "3", "c")
    c("ZADD", "u2{t}", "1", "b", "2", "c", "3", "d")
    assert c("ZUNION", "2", "u1{t}", "u2{t}", "WITHSCORES") == [
        b"a", b"1", b"b", b"3", b"d", b"3", b"c", b"5"]
    assert c("ZUNION", "2", "u1{t}", "u2{t}", "WEIGHTS", "2", "3", "WITHSCORES") == [
        b"a", b"2", b"b", b"7", b"d", b"9", b"c", b"12"]
    assert c("ZUNION", "2", "u1{t}", "u2{t}", "AGGREGATE", "MIN", "WITHSCORES") == [
        b"a", b"1", b"b", b"1", b"c", b"2", b"d", b"3"]
    assert c("ZINTER", "2", "u1{t}", "u2{t}", "AGGREGATE", "max", "WITHSCORES") == [
        b"b", b"2", b"c", b"3"]
    assert c("ZINTER", "3", "u1{t}", "u2{t}", "missing{t}") == []
    assert c("ZDIFF", "2", "u1{t}", "u2{t}", "WITHSCORES") == [b"a", b"1"]
    assert c("ZDIFF", "2", "missing{t}", "u1{t}") == []
    assert c("ZINTERCARD", "2", "u1{t}", "u2{t}") == 2
    assert c("ZINTERCARD", "2", "u1{t}", "u2{t}", "LIMIT", "1") == 1
    assert c("ZINTERCARD", "2", "u1{t}", "u2{t}", "LIMIT", "0") == 2
    # inf * 0 weights give 0, inf + -inf sums give 0, as in Redis.
    assert c("ZUNION", "2", "u1{t}", "u2{t}", "WEIGHTS", "inf", "-inf", "WITHSCORES") == [
        b"d", b"-inf", b"b", b"0", b"c", b"0", b"a", b"inf"]
    assert c("ZINTER", "2", "u1{t}", "u2{t}", "WEIGHTS", "inf", "0", "WITHSCORES") == [
        b"b", b"inf", b"c", b"inf"]


def test_plain_sets_as_inputs(c, encoding):
    c("ZADD", "z{t}", "1", "a", "2", "b", "3", "c")
    c("SADD", "s{t}", "b", "c", "d")
    c("SADD", "i{t}", "1", "2")
    assert c("ZUNION", "2", "z{t}", "s{t}", "WITHSCORES") == [
        b"a", b"1", b"d", b"1", b"b", b"3", b"c", b"4"]
    assert c("ZINTER", "2", "z{t}", "s{t}", "WEIGHTS", "1", "10", "WITHSCORES") == [
        b"b", b"12", b"c", b"13"]
    assert c("ZDIFF", "2", "s{t}", "z{t}", "WITHSCORES") == [b"d", b"1"]
    assert c("ZINTERCARD", "2", "s{t}", "z{t}") == 2
    assert c("ZUNIONSTORE", "dst{t}", "2", "i{t}", "s{t}", "AGGREGATE", "MAX") == 5
    assert c("ZRANGE", "dst{t}", "0", "-1", "WITHSCORES") == [
        b"1", b"1", b"2", b"1", b"b", b"1", b"c", b"1", b"d", b"1"]
    assert c("ZRANGE", "s{t}", "0", "-1") == WRONGTYPE


def test_set_operation_errors(c):
    c("ZADD", "u1{t}", "1", "a")
    c("SET", "s{t}", "v")
    for cmd in ("ZUNION", "ZINTER", "ZDIFF", "ZINTERCARD"):
        assert c(cmd, "0", "u1{t}") == err(
            f"ERR at least 1 input key is needed for '{cmd.lower()}' command")
        assert c(cmd, "x", "u1{t}") == NOT_INT
        assert c(cmd, "2", "u1{t}") == SYNTAX
        assert c(cmd, "1", "s{t}") == WRONGTYPE
    assert c("ZUNIONSTORE", "d{t}", "0", "u1{t}") == err(
        "ERR at least 1 input key is needed for 'zunionstore' command")
    # WRONGTYPE comes before the option errors.
    assert c("ZUNION", "2", "u1{t}", "s{t}", "WEIGHTS", "x", "1") == WRONGTYPE
    assert c("ZUNION", "1", "u1{t}", "WEIGHTS", "x") == err("ERR weight value is not a float")
    assert c("ZUNION", "1", "u1{t}", "WEIGHTS") == SYNTAX
    assert c("ZUNION", "1", "u1{t}", "AGGREGATE", "avg") == SYNTAX
    assert c("ZUNION", "1", "u1{t}", "AGGREGATE") == SYNTAX
    assert c("ZDIFF", "1", "u1{t}", "WEIGHTS", "1") == SYNTAX
    assert c("ZUNIONSTORE", "d{t}", "1", "u1{t}", "WITHSCORES") == SYNTAX
    assert c("ZINTERCARD", "1", "u1{t}", "WITHSCORES") == SYNTAX
    for bad in ("-1", "x"):
        assert c("ZINTERCARD", "1", "u1{t}", "LIMIT", bad) == err("ERR LIMIT can't be negative")
    assert c("ZUNIONSTORE", "d{t}", "1") == arity("zunionstore")
    assert c("EXISTS", "d{t}") == 0


def test_stores(c, encoding):
    c("ZADD", "u1{t}", "1", "a", "2", "b", "3", "c")
    c("ZADD", "u2{t}", "1", "b", "2", "c", "3", "d")
    c("SET", "dst{t}", "old")
    c("EXPIRE", "dst{t}", "100")
    assert c("ZUNIONSTORE", "dst{t}", "2", "u1{t}", "u2{t}") == 4
    assert c("TTL", "dst{t}") == -1
    assert c("ZRANGE", "dst{t}", "0", "-1", "WITHSCORES") == [
        b"a", b"1", b"b", b"3", b"d", b"3", b"c", b"5"]
    assert c("ZINTERSTORE", "dst{t}", "2", "u1{t}", "u2{t}", "WEIGHTS", "1", "2") == 2
    assert c("ZRANGE", "dst{t}", "0", "-1", "WITHSCORES") == [b"b", b"4", b"c", b"7"]
    assert c("ZDIFFSTORE", "u1{t}", "2", "u1{t}", "u2{t}") == 1
    assert c("ZRANGE", "u1{t}", "0", "-1") == [b"a"]
    assert c("ZINTERSTORE", "dst{t}", "2", "u1{t}", "missing{t}") == 0
    assert c("EXISTS", "dst{t}") == 0
    assert c("ZRANGESTORE", "dst{t}", "u2{t}", "0", "-1") == 3
    assert c("ZRANGESTORE", "dst{t}", "u2{t}", "+inf", "(1", "BYSCORE", "REV", "LIMIT", "0",
             "1") == 1
    assert c("ZRANGE", "dst{t}", "0", "-1", "WITHSCORES") == [b"d", b"3"]
    assert c("ZRANGESTORE", "dst{t}", "u2{t}", "[c", "+", "BYLEX") == 2
    assert c("ZRANGESTORE", "dst{t}", "missing{t}", "0", "-1") == 0
    assert c("EXISTS", "dst{t}") == 0
    assert c("ZRANGESTORE", "dst{t}", "u2{t}", "0", "-1", "WITHSCORES") == SYNTAX
    c("SET", "s{t}", "v")
    assert c("ZRANGESTORE", "dst{t}", "s{t}", "0", "-1") == WRONGTYPE
    assert c("ZRANGESTORE", "s{t}", "u2{t}", "0", "0") == 1
    assert c("TYPE", "s{t}") == "zset"
    assert c("ZRANGESTORE", "dst{t}", "u2{t}", "0") == arity("zrangestore")


# -------------------------------------------------------------- random, scan, types


def test_zrandmember(c, encoding):
    members = {b"a": b"1", b"b": b"2", b"c": b"3"}
    c("ZADD", "z", "1", "a", "2", "b", "3", "c")
    assert c("ZRANDMEMBER", "z") in members
    assert c("ZRANDMEMBER", "missing") is None
    assert c("ZRANDMEMBER", "missing", "5") == []
    assert c("ZRANDMEMBER", "z", "0") == []
    assert sorted(c("ZRANDMEMBER", "z", "10")) == [b"a", b"b", b"c"]
    assert c("ZRANDMEMBER", "z", "1")[0] in members
    r = c
    r("ZADD", "big", *[x for i in range(300) for x in (str(i), f"m{i}")])
    few = r("ZRANDMEMBER", "big", "50", "WITHSCORES")
    assert len(set(few[::2])) == 50 and all(m == b"m" + s for m, s in zip(few[::2], few[1::2]))
    two = c("ZRANDMEMBER", "z", "2")
    assert len(set(two)) == 2 and set(two) <= set(members)
    many = c("ZRANDMEMBER", "z", "-20", "WITHSCORES")
    assert len(many) == 40
    for m, s in zip(many[::2], many[1::2]):
        assert members[m] == s
    assert c("ZRANDMEMBER", "z", "x") == NOT_INT
    assert c("ZRANDMEMBER", "z", "1", "x") == SYNTAX
    assert c("ZRANDMEMBER", "z", "1", "WITHSCORES", "x") == SYNTAX
    assert c("ZRANDMEMBER", "z", "-9223372036854775808") == err(
        "ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807")
    assert c("ZRANDMEMBER", "z", "-9223372036854775807", "WITHSCORES") == err(
        "ERR value is out of range")
    c("SET", "s", "v")
    assert c("ZRANDMEMBER", "s", "0") == WRONGTYPE


def test_zscan(c, server, encoding):
    c("ZADD", "z", "1", "a", "2.5", "b", "3", "c", "1e20", "big")
    cursor, items = c("ZSCAN", "z", "0", "MATCH", "[ab]*")
    assert cursor == b"0"
    assert dict(zip(items[::2], items[1::2])) == {b"a": b"1", b"b": b"2.5", b"big": b"1e+20"}
    assert c("ZSCAN", "missing", "0") == [b"0", []]
    assert c("ZSCAN", "z", "x") == err("ERR invalid cursor")
    assert c("ZSCAN", "z", "0", "COUNT", "0") == SYNTAX
    assert c("ZSCAN", "z", "0", "COUNT", "x") == NOT_INT
    assert c("ZSCAN", "z", "0", "FOO") == SYNTAX
    r = server.client()
    r.zadd("big", {f"m{i}": i for i in range(500)})
    seen = {m: s for m, s in r.zscan_iter("big", count=20)}
    assert len(seen) == 500 and seen[b"m7"] == 7.0


def test_type_encoding_memory_scan(c, server):
    r = server.client()
    r.config_set("zset-max-listpack-entries", 4)
    r.config_set("zset-max-listpack-value", 8)
    try:
        r.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4})
        assert r.type("z") == b"zset"
        assert r.object("encoding", "z") == b"listpack"
        small = r.memory_usage("z")
        r.zadd("z", {"e": 5})
        assert r.object("encoding", "z") == b"skiplist"
        assert r.memory_usage("z") > small
        r.zrem("z", "a", "b", "c")
        assert r.object("encoding", "z") == b"skiplist"
        r.zadd("v", {"12345678": 1})
        assert r.object("encoding", "v") == b"listpack"
        r.zadd("v", {"123456789": 1})
        assert r.object("encoding", "v") == b"skiplist"
        r.zunionstore("u", ["z"])
        assert r.object("encoding", "u") == b"listpack"
        r.config_set("zset-max-listpack-entries", 1)
        r.zunionstore("u", ["z"])
        assert r.object("encoding", "u") == b"skiplist"
        r.set("str", "x")
        assert sorted(r.scan(0, _type="zset", count=1000)[1]) == [b"u", b"v", b"z"]
    finally:
        r.config_set("zset-max-listpack-entries", 128)
        r.config_set("zset-max-listpack-value", 64)


def test_rename_copy_move(server, encoding):
    r = server.client()
    r.zadd("src", {"x": 1, "y": 2.5, "z": float("-inf"), b"\x00bin": 7})
    expect = [(b"z", float("-inf")), (b"x", 1.0), (b"y", 2.5), (b"\x00bin", 7.0)]
    for dst in ("dst", "other:1", "other:2", "other:3"):
        assert r.rename("src", dst)
        assert r.zrange(dst, 0, -1, withscores=True) == expect
        assert r.object("encoding", dst) == encoding.encode()
        assert r.copy(dst, "src")
        assert r.zrange("src", 0, -1, withscores=True) == expect
        r.delete(dst)
    assert r.move("src", 1)
    r1 = server.client(db=1)
    assert r1.zrange("src", 0, -1, withscores=True) == expect
    assert r1.object("encoding", "src") == encoding.encode()


def test_binary_members_and_large_counts(server, encoding):
    r = server.client()
    members = {bytes([i, 0, 255 - i]): i for i in range(200)}
    assert r.zadd("z", members) == 200
    assert r.zcard("z") == 200
    assert r.zscore("z", bytes([5, 0, 250])) == 5.0
    assert r.zrange("z", 0, 2) == [bytes([0, 0, 255]), bytes([1, 0, 254]), bytes([2, 0, 253])]
    assert r.zrank("z", bytes([150, 0, 105])) == 150
    assert r.zremrangebyrank("z", 0, -101) == 100
    assert r.zcard("z") == 100


def test_cross_shard_store_is_atomic(server):
    """ZUNIONSTORE over keys on every shard while others ZADD: each result is a union of
    states the sources had together (the counts of a and b always match)."""
    r = server.client()
    keys = [f"src:{i}" for i in range(8)]
    for k in keys:
        r.zadd(k, {"a": 0, "b": 0})
    stop = threading.Event()
    errors = []

    def writer(k):
        w = server.client()
        while not stop.is_set():
            p = w.pipeline(transaction=True)
            p.zincrby(k, 1, "a")
            p.zincrby(k, 1, "b")
            p.execute()

    def checker():
        ch = server.client()
        for _ in range(200):
            ch.zunionstore("dst", keys)
            sa, sb = ch.zscore("dst", "a"), ch.zscore("dst", "b")
            if sa != sb:
                errors.append((sa, sb))
    threads = [threading.Thread(target=writer, args=(k,)) for k in keys[:4]]
    for t in threads:
        t.start()
    checker()
    stop.set()
    for t in threads:
        t.join()
    assert errors == []
