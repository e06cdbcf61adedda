"""Argument parsing and the error texts that echo client input, byte for byte as Redis 7.0
has them (validated with DAMSELFLY_TEST_TARGET=redis): SCAN cursors, database indexes,
the order of EXPIRE's errors, and how an argument with a NUL, CR or LF is echoed."""

import pytest

from helpers import err

NOT_INT = err("ERR value is not an integer or out of range")
INT_RANGE = err("ERR value is out of range, value must between -2147483648 and 2147483647")
DB_RANGE = err("ERR DB index is out of range")
INVALID_CURSOR = err("ERR invalid cursor")
NX_XX_GT_LT = err("ERR NX and XX, GT or LT options at the same time are not compatible")
GT_LT = err("ERR GT and LT options at the same time are not compatible")
EXPIRES = ("EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT")


# ------------------------------------------------------------------------ SCAN cursor

# Redis reads the cursor with strtoul: a sign is allowed ("-1" wraps around to 2^64 - 1),
# leading zeros too, the text ends at a NUL, and an empty cursor is 0.
@pytest.mark.parametrize("cursor", [b"0", b"-1", b"", b"+0", b"-0", b"007", b"0\x00junk",
                                    b"\x00", b"18446744073709551615", b"-18446744073709551615",
                                    b"000000000000000000000018446744073709551615"])
def test_scan_accepts_cursors_as_strtoul_does(server, cursor):
    c = server.raw()
    reply = c("SCAN", cursor)
    assert isinstance(reply, list) and len(reply) == 2, reply
    assert reply[0].isdigit()


def test_scan_cursor_past_every_bucket_ends_the_scan(server):
    c = server.raw()
    c("SET", "k", "v")
    for cursor in ("-1", "18446744073709551615"):
        assert c("SCAN", cursor, "COUNT", "1")[0] == b"0"


@pytest.mark.parametrize("cursor", [b"abc", b" 1", b"\t1", b"1 ", b"1.5", b"0x10", b"-", b"+",
                                    b"+-1", b"--1", b"1e3", b"18446744073709551616",
                                    b"-18446744073709551616", b"99999999999999999999999"])
def test_scan_rejects_cursors_as_redis_does(server, cursor):
    c = server.raw()
    assert c("SCAN", cursor) == INVALID_CURSOR


def test_scan_cursor_error_before_option_errors(server):
    c = server.raw()
    assert c("SCAN", "abc", "COUNT", "0") == INVALID_CURSOR
    assert c("SCAN", "abc", "BOGUS") == INVALID_CURSOR


# ----------------------------------------------------------------------- DB indexes


@pytest.mark.parametrize("index,error", [
    ("abc", NOT_INT), ("", NOT_INT), ("1.0", NOT_INT), (" 1", NOT_INT), ("01", NOT_INT),
    ("+1", NOT_INT), ("-0", NOT_INT), ("9223372036854775808", NOT_INT),
    ("100000000000", INT_RANGE), ("2147483648", INT_RANGE), ("-2147483649", INT_RANGE),
    ("-9223372036854775808", INT_RANGE),
    ("-1", DB_RANGE), ("16", DB_RANGE), ("2147483647", DB_RANGE), ("-2147483648", DB_RANGE),
])
def test_select_errors(server, index, error):
    c = server.raw()
    assert c("SELECT", index) == error
    assert c("SELECT", "15") == "OK"


def test_copy_db_errors(server):
    c = server.raw()
    c("SET", "a", "v")
    assert c("COPY", "a", "b", "DB", "abc") == NOT_INT
    assert c("COPY", "a", "b", "DB", "100000000000") == INT_RANGE
    assert c("COPY", "a", "b", "DB", "16") == DB_RANGE
    assert c("COPY", "a", "b", "DB", "-1") == DB_RANGE
    assert c("COPY", "a", "b", "DB", "1") == 1


# ------------------------------------------------------------- EXPIRE's error order


@pytest.mark.parametrize("cmd", EXPIRES)
def test_expire_options_are_checked_before_the_time(server, cmd):
    c = server.raw()
    c("SET", "k", "v")
    for key in ("k", "missing"):
        assert c(cmd, key, "1.5", "BOGUS", "GT") == err("ERR Unsupported option BOGUS")
        assert c(cmd, key, "abc", "NX", "XX") == NX_XX_GT_LT
        assert c(cmd, key, "abc", "GT", "LT") == GT_LT
        assert c(cmd, key, "abc", "NX", "XX", "BOGUS") == err("ERR Unsupported option BOGUS")
        assert c(cmd, key, "abc", "nx", "NX") == NOT_INT
        assert c(cmd, key, "9223372036854775807", "BOGUS") == err("ERR Unsupported option BOGUS")
        assert c(cmd, key, "abc") == NOT_INT
    assert c("TTL", "k") == -1


def test_expire_time_errors_come_before_the_key_lookup(server):
    c = server.raw()
    for key in ("k", "missing"):
        c("SET", "k", "v")
        assert c("EXPIRE", key, "9223372036854775807", "XX") == err(
            "ERR invalid expire time in 'expire' command")
        assert c("PEXPIRE", key, "9223372036854775807", "NX") == err(
            "ERR invalid expire time in 'pexpire' command")
        assert c("EXPIREAT", key, "-9223372036854775808", "GT") == err(
            "ERR invalid expire time in 'expireat' command")
    assert c("PEXPIREAT", "missing", "9223372036854775807") == 0
    assert c("EXPIRE", "missing", "-9223372036854775", "NX") == 0


def test_expire_repeated_options_are_allowed(server):
    c = server.raw()
    c("SET", "k", "v", "EX", "100")
    assert c("EXPIRE", "k", "200", "GT", "gt", "XX") == 1
    assert c("TTL", "k") == 200
    assert c("EXPIRE", "k", "300", "LT", "LT") == 0


# ------------------------------------------------------- client input echoed in errors

# Redis prints arguments into errors as C strings (printf's %s): a NUL ends them. CR and
# LF become spaces, so the reply stays one line.


def test_unknown_command_name_and_args_end_at_nul(server):
    c = server.raw()
    assert c.raw_call(b"set\x00", "a", "b") == (
        b"-ERR unknown command 'set', with args beginning with: 'a' 'b' \r\n")
    assert c.raw_call(b"foo\x00bar", b"x\x00y", b"\x00abc", b"", b"z") == (
        b"-ERR unknown command 'foo', with args beginning with: 'x' '' '' 'z' \r\n")
    assert c.raw_call(b"foo\r\nbar", b"a\rb", b"c\nd") == (
        b"-ERR unknown command 'foo  bar', with args beginning with: 'a b' 'c d' \r\n")
    assert c.raw_call(b"config\x00", "get", "x") == (
        b"-ERR unknown command 'config', with args beginning with: 'get' 'x' \r\n")


def test_unknown_command_args_budget_counts_what_is_shown(server):
    c = server.raw()
    # The NUL cuts the first argument to 10 bytes, so the second one fits in full.
    long_arg = b"a" * 10 + b"\x00" + b"b" * 200
    assert c(b"foo", long_arg, b"c" * 100) == err(
        f"ERR unknown command 'foo', with args beginning with: '{'a' * 10}' '{'c' * 100}' ")
    assert c(b"foo", b"a" * 122, b"b", b"c") == err(
        f"ERR unknown command 'foo', with args beginning with: '{'a' * 122}' 'b' ")
    assert c(b"foo", b"a" * 150, b"b") == err(
        f"ERR unknown command 'foo', with args beginning with: '{'a' * 128}' ")


def test_unknown_subcommand_ends_at_nul(server):
    c = server.raw()
    assert c.raw_call("CONFIG", b"bogus\x00x") == (
        b"-ERR unknown subcommand 'bogus'. Try CONFIG HELP.\r\n")
    assert c.raw_call("OBJECT", b"enc\x00oding", "k") == (
        b"-ERR unknown subcommand 'enc'. Try OBJECT HELP.\r\n")
    assert c.raw_call("SLOWLOG", b"g\x00et", "1", "2") == (
        b"-ERR unknown subcommand 'g'. Try SLOWLOG HELP.\r\n")
    assert c.raw_call("CONFIG", b"bo\r\ngus") == (
        b"-ERR unknown subcommand 'bo  gus'. Try CONFIG HELP.\r\n")
    assert c.raw_call("OBJECT", b"x" * 200, "k") == (
        b"-ERR unknown subcommand '" + b"x" * 128 + b"'. Try OBJECT HELP.\r\n")


def test_option_names_in_errors_end_at_nul(server):
    c = server.raw()
    assert c.raw_call("EXPIRE", "k", "1", b"bo\x00gus") == b"-ERR Unsupported option bo\r\n"
    assert c.raw_call("EXPIRE", "k", "abc", b"bo\r\ngus") == (
        b"-ERR Unsupported option bo  gus\r\n")
    assert c.raw_call("HELLO", "3", b"x\x00y") == b"-ERR Syntax error in HELLO option 'x'\r\n"
    assert c.raw_call("CONFIG", "SET", b"bo\r\ngus\x00x", "1") == (
        b"-ERR Unknown option or number of arguments for CONFIG SET - 'bo  gus'\r\n")
    assert c.raw_call("CONFIG", "SET", b"maxmemory\x00z", "1", "maxmemory", "2") == (
        b"-ERR Unknown option or number of arguments for CONFIG SET - 'maxmemory'\r\n")
    assert c("PING") == "PONG"


def test_move_and_swapdb_db_errors(server):
    c = server.raw()
    c("SET", "a", "v")
    assert c("MOVE", "a", "abc") == NOT_INT
    assert c("MOVE", "a", "100000000000") == INT_RANGE
    assert c("MOVE", "a", "16") == DB_RANGE
    assert c("SWAPDB", "100000000000", "1") == err("ERR invalid first DB index")
    assert c("SWAPDB", "abc", "1") == err("ERR invalid first DB index")
    assert c("SWAPDB", "16", "abc") == err("ERR invalid second DB index")
    assert c("SWAPDB", "0", "100000000000") == err("ERR invalid second DB index")
    assert c("SWAPDB", "16", "0") == DB_RANGE
    assert c("SWAPDB", "0", "-1") == DB_RANGE
