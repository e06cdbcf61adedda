"""FUNCTION and FCALL (issue 17) beyond test_functions.py's command-by-command checks:
DUMP payloads exchanged with a real redis-server both ways and Redis's RESTORE errors,
LIST and STATS in RESP3 byte for byte, the shebang's quoting and engine name, maxmemory
with the functions' flags, busy functions with FUNCTION STATS and KILL. Validated against
redis-server (DAMSELFLY_TEST_TARGET=redis)."""

import threading
import time

import pytest
import redis

from helpers import wait_for
from resp_client import RespError

OOM = "OOM command not allowed when used memory > 'maxmemory'."


def lib(name, *functions):
    """A library's code: each function is (name, body) or (name, body, flags, description)."""
    lines = [f"#!lua name={name}"]
    for f in functions:
        fname, body = f[0], f[1]
        flags = ", ".join(f"'{x}'" for x in (f[2] if len(f) > 2 else ()))
        desc = f", description='{f[3]}'" if len(f) > 3 else ""
        lines.append(
            f"redis.register_function{{function_name='{fname}', "
            f"callback=function(keys, args) {body} end, flags={{{flags}}}{desc}}}"
        )
    return "\n".join(lines)


@pytest.fixture(autouse=True)
def _flush_functions(server):
    server.client().function_flush()
    yield
    r = server.client()
    r.config_set("maxmemory", 0)
    r.config_set("busy-reply-threshold", 5000)
    r.function_flush()


def error_of(call):
    with pytest.raises(redis.ResponseError) as e:
        call()
    return str(e.value)


def test_load_and_fcall(server):
    r = server.client()
    assert r.function_load(lib("mylib", ("setter", "return redis.call('set', keys[1], args[1])"))) == b"mylib"
    assert r.fcall("setter", 1, "k", "v") == b"OK"
    assert r.get("k") == b"v"
    assert r.fcall("SETTER", 1, "k", "w") == b"OK"  # function names are case-insensitive
    assert r.get("k") == b"w"
    assert error_of(lambda: r.function_load(lib("mylib", ("other", "return 1")))) == "Library 'mylib' already exists"
    assert r.function_load(lib("mylib", ("other", "return 1")), replace=True) == b"mylib"
    assert error_of(lambda: r.fcall("setter", 1, "k", "v")) == "Function not found"
    assert r.fcall("other", 0) == 1


def test_load_errors(server):
    r = server.client()
    r.function_load(lib("a", ("f", "return 1")))
    cases = [
        (lib("b", ("F", "return 1")), "Function F already exists"),
        ("return 1", "Missing library metadata"),
        ("#!lua name=x", "Invalid library metadata"),
        ("#!lua\nreturn 1", "Library name was not given"),
        ("#!lua name=x name=y\nreturn 1", "Invalid metadata value, name argument was given multiple times"),
        ("#!lua nam=x\nreturn 1", "Invalid metadata value given: nam=x"),
        ("#!lua name=a-b\nreturn 1",
         "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"),
        ("#!js name=x\nreturn 1", "Engine 'js' not found"),
        ("#!lua name=x\nreturn 1", "No functions registered"),
        ('#!lua "name=x\nreturn 1', "Invalid library metadata"),
    ]
    for code, message in cases:
        assert error_of(lambda: r.function_load(code)) == message, code
    assert error_of(lambda: r.execute_command("FUNCTION", "LOAD", "x", lib("c", ("g", "return 1")))) == (
        "Unknown option given: x")
    assert error_of(lambda: r.execute_command("FUNCTION", "LOAD")) == (
        "wrong number of arguments for 'function|load' command")
    assert r.function_load('#!LUA "name=q"\nredis.register_function(\'q\', function() return 7 end)') == b"q"
    assert r.fcall("q", 0) == 7
    assert len(r.function_list()) == 2


def test_fcall_errors_and_flags(server):
    r = server.client()
    r.function_load(lib("lib",
                        ("writer", "return redis.call('set', keys[1], 'x')"),
                        ("reader", "return redis.call('get', keys[1])", ["no-writes"]),
                        ("sneaky", "return redis.call('set', keys[1], 'y')", ["no-writes"])))
    assert error_of(lambda: r.fcall("nope", 0)) == "Function not found"
    assert error_of(lambda: r.fcall("writer", "x")) == "Bad number of keys provided"
    assert error_of(lambda: r.fcall("writer", -1)) == "Number of keys can't be negative"
    assert error_of(lambda: r.fcall("writer", 2, "k")) == "Number of keys can't be greater than number of args"
    assert error_of(lambda: r.execute_command("FCALL", "writer")) == "wrong number of arguments for 'fcall' command"
    assert error_of(lambda: r.fcall_ro("writer", 1, "k")) == (
        "Can not execute a script with write flag using *_ro command.")
    assert r.fcall("writer", 1, "k") == b"OK"
    assert r.fcall_ro("reader", 1, "k") == b"x"
    assert "Write commands are not allowed from read-only scripts" in error_of(lambda: r.fcall("sneaky", 1, "k"))
    # From a script: FCALL is a no-script command.
    assert "This Redis command is not allowed from script" in error_of(
        lambda: r.eval("return redis.call('fcall', 'writer', 1, 'k')", 0))
    p = r.pipeline(transaction=True)
    p.fcall("writer", 1, "k2")
    p.fcall_ro("reader", 1, "k2")
    assert p.execute() == [b"OK", b"x"]


def test_list_resp2_and_resp3(server):
    r = server.client()
    code = lib("lib1", ("f1", "return 1", ["allow-oom", "no-writes"], "one"))
    r.function_load(code)
    r.function_load(lib("other", ("f2", "return 2")))
    assert r.execute_command("FUNCTION", "LIST", "LIBRARYNAME", "LIB*", "WITHCODE") == [[
        b"library_name", b"lib1", b"engine", b"LUA", b"functions",
        [[b"name", b"f1", b"description", b"one", b"flags", [b"no-writes", b"allow-oom"]]],
        b"library_code", code.encode()]]
    assert r.execute_command("FUNCTION", "LIST", "libraryname", "oth*") == [[
        b"library_name", b"other", b"engine", b"LUA", b"functions",
        [[b"name", b"f2", b"description", None, b"flags", []]]]]
    assert len(r.execute_command("FUNCTION", "LIST")) == 2
    assert error_of(lambda: r.execute_command("FUNCTION", "LIST", "LIBRARYNAME")) == (
        "library name argument was not given")
    assert error_of(lambda: r.execute_command("FUNCTION", "LIST", "WITHCODE", "WITHCODE")) == (
        "Unknown argument WITHCODE")
    c = server.raw()
    c("HELLO", "3")
    c.send("FUNCTION", "LIST", "LIBRARYNAME", "other")
    assert c.read_raw_reply() == (
        b"*1\r\n%3\r\n$12\r\nlibrary_name\r\n$5\r\nother\r\n$6\r\nengine\r\n$3\r\nLUA\r\n"
        b"$9\r\nfunctions\r\n*1\r\n%3\r\n$4\r\nname\r\n$2\r\nf2\r\n$11\r\ndescription\r\n_\r\n"
        b"$5\r\nflags\r\n~0\r\n")
    c.send("FUNCTION", "LIST", "LIBRARYNAME", "lib1")
    assert b"$5\r\nflags\r\n~2\r\n+no-writes\r\n+allow-oom\r\n" in c.read_raw_reply()
    c.send("FUNCTION", "STATS")
    assert c.read_raw_reply() == (
        b"%2\r\n$14\r\nrunning_script\r\n_\r\n$7\r\nengines\r\n%1\r\n$3\r\nLUA\r\n%2\r\n"
        b"$15\r\nlibraries_count\r\n:2\r\n$15\r\nfunctions_count\r\n:2\r\n")


def test_delete_flush_stats_kill_help(server):
    r = server.client()
    r.function_load(lib("a", ("f1", "return 1"), ("f2", "return 2")))
    assert r.function_stats() == [b"running_script", None, b"engines",
                                  [b"LUA", [b"libraries_count", 1, b"functions_count", 2]]]
    assert error_of(lambda: r.function_delete("nope")) == "Library not found"
    assert r.function_delete("a") in (True, b"OK")
    assert error_of(lambda: r.fcall("f1", 0)) == "Function not found"
    r.function_load(lib("a", ("f1", "return 1")))
    assert error_of(lambda: r.execute_command("FUNCTION", "FLUSH", "x")) == (
        "FUNCTION FLUSH only supports SYNC|ASYNC option")
    assert error_of(lambda: r.execute_command("FUNCTION", "FLUSH", "SYNC", "ASYNC")) == (
        "unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP.")
    assert r.execute_command("FUNCTION", "FLUSH", "ASYNC") == b"OK"
    assert r.function_list() == []
    assert error_of(lambda: r.function_kill()) == "NOTBUSY No scripts in execution right now."
    help_lines = r.execute_command("FUNCTION", "HELP")
    assert len(help_lines) == 40 and help_lines[-1] == b"    Prints this help."


def crc64(data):
    poly, table = 0x95AC9329AC4BC9B5, []
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    crc = 0
    for x in data:
        crc = table[(crc ^ x) & 0xFF] ^ (crc >> 8)
    return crc


def payload(body):
    """A FUNCTION DUMP payload around `body`: RDB version 10 and the CRC64, little endian."""
    data = body + b"\x0a\x00"
    return data + crc64(data).to_bytes(8, "little")


def rdb_string(data):
    """A raw RDB string: 6- or 14-bit length, then the bytes."""
    n = len(data)
    return (bytes([n]) if n < 64 else bytes([0x40 | n >> 8, n & 0xFF])) + data


def test_dump_and_restore(server):
    r = server.client()
    assert r.function_dump() == payload(b"")
    code = lib("alpha", ("alpha_one", "return 'alpha says ' .. (args[1] or 'nothing')"),
               ("alpha_two", "return 2", ["no-writes"], "two"))
    r.function_load(code)
    dump = r.function_dump()
    assert dump[:1] == b"\xf5" and dump[-10:-8] == b"\x0a\x00"
    assert dump[-8:] == crc64(dump[:-8]).to_bytes(8, "little")
    r.function_flush()
    assert r.function_restore(dump) in (True, b"OK")
    assert r.fcall("alpha_one", 0, "x") == b"alpha says x"
    assert error_of(lambda: r.function_restore(dump)) == "Library alpha already exists"
    assert error_of(lambda: r.function_restore(dump, "APPEND")) == "Library alpha already exists"
    assert r.function_restore(dump, "REPLACE") in (True, b"OK")
    r.function_load(lib("beta", ("b1", "return 1")))
    assert r.function_restore(dump, "FLUSH") in (True, b"OK")
    assert [entry[1] for entry in r.function_list()] == [b"alpha"]
    r.function_delete("alpha")
    r.function_load(lib("gamma", ("alpha_one", "return 3")))
    assert error_of(lambda: r.function_restore(dump, "REPLACE")) == "Function alpha_one already exists"
    assert r.fcall("alpha_one", 0) == 3

    corrupt = bytearray(dump)
    corrupt[5] ^= 1
    assert error_of(lambda: r.function_restore(bytes(corrupt))) == "DUMP payload version or checksum are wrong"
    newer = payload(b"")[:-10] + b"\x0b\x00"
    assert error_of(lambda: r.function_restore(newer + crc64(newer).to_bytes(8, "little"))) == (
        "DUMP payload version or checksum are wrong")
    assert error_of(lambda: r.function_restore(b"short")) == "DUMP payload version or checksum are wrong"
    assert error_of(lambda: r.function_restore(dump, "bad")) == (
        "Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
    assert error_of(lambda: r.execute_command("FUNCTION", "RESTORE", dump, "FLUSH", "x")) == (
        "unknown subcommand or wrong number of arguments for 'RESTORE'. Try FUNCTION HELP.")
    assert error_of(lambda: r.function_restore(payload(b"\x01\x03abc"))) == "given type is not a function"
    assert error_of(lambda: r.function_restore(payload(b"\xf5\x7f"))) == "Failed loading library payload"
    assert error_of(lambda: r.function_restore(payload(b"\xf5\x05#!lua"))) == "Invalid library metadata"
    twice = b"".join(b"\xf5" + rdb_string(c.encode()) for c in [lib("d", ("d1", "return 1"))] * 2)
    assert error_of(lambda: r.function_restore(payload(twice))) == "Library 'd' already exists"


@pytest.mark.damselfly_only
def test_dump_restore_with_redis_server_both_ways(server, server_factory):
    """A payload of redis-server 7.0 (LZF-compressed code) restores here, and ours there."""
    import shutil
    import subprocess
    from conftest import free_port

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ref = redis.Redis(port=port, socket_timeout=10)
        wait_for(lambda: _pings(ref), what="redis-server up", timeout=10)
        ours = server.client()
        code = lib("shared", ("shared_one", "return 'shared shared shared shared ' .. #keys"),
                   ("shared_two", "return 2", ["no-writes"], "the second"))
        ref.function_load(code)
        theirs = ref.function_dump()
        assert theirs[1:2] == b"\xc3"  # compressed by Redis
        assert ours.function_restore(theirs) in (True, b"OK")
        assert ours.fcall("shared_one", 1, "k") == b"shared shared shared shared 1"
        assert normalized(ours.function_list(withcode=True)) == normalized(ref.function_list(withcode=True))
        ref.function_flush()
        assert ref.function_restore(ours.function_dump()) in (True, b"OK")
        assert ref.fcall("shared_one", 0) == b"shared shared shared shared 0"
        assert normalized(ref.function_list(withcode=True)) == normalized(ours.function_list(withcode=True))
    finally:
        proc.terminate()
        proc.wait(10)


def normalized(listing):
    """FUNCTION LIST with each library's functions sorted (Redis lists them in hash order)."""
    return [entry[:5] + [sorted(entry[5])] + entry[6:] for entry in listing]


def _pings(c):
    try:
        return c.ping()
    except redis.ConnectionError:
        return False


def test_maxmemory(server):
    r = server.client()
    r.function_load(lib("lib", ("plain", "return 1"), ("oom", "return redis.call('set', 'x', '1')", ["allow-oom"]),
                        ("ro", "return 3", ["no-writes"])))
    dump = r.function_dump()
    r.set("filler", "x" * 10000)
    r.config_set("maxmemory", 1)
    wait_for(lambda: _refused(lambda: r.fcall("plain", 0)), what="OOM for FCALL", timeout=5)
    assert error_of(lambda: r.fcall("plain", 0)) == OOM
    assert r.fcall("oom", 0) == b"OK"
    assert r.fcall("ro", 0) == 3
    assert error_of(lambda: r.function_load(lib("x", ("x1", "return 1")))) == OOM
    assert error_of(lambda: r.function_restore(dump, "REPLACE")) == OOM
    r.config_set("maxmemory", 0)
    assert r.fcall("plain", 0) == 1


def _refused(call):
    try:
        call()
        return False
    except redis.ResponseError:
        return True


def test_busy_function_stats_and_kill(server):
    r = server.client()
    r.function_load(lib("spin", ("spin", "local a = 1 while true do a = a + 1 end", ["no-writes"])))
    r.config_set("busy-reply-threshold", 50)
    runner = server.client()
    result = {}

    def run():
        try:
            result["reply"] = runner.fcall("spin", 0)
        except redis.ResponseError as e:
            result["error"] = str(e)

    t = threading.Thread(target=run)
    t.start()
    other = server.client()
    wait_for(lambda: _refused(other.ping), what="BUSY", timeout=5)
    assert error_of(other.ping) == (
        "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.")
    stats = other.function_stats()
    assert stats[1][:4] == [b"name", b"spin", b"command", [b"FCALL", b"spin", b"0"]]
    assert stats[1][4] == b"duration_ms" and stats[1][5] >= 50
    assert error_of(other.script_kill) == (
        "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.")
    assert other.function_kill() in (True, b"OK")
    t.join(10)
    assert "Script killed by user with" in result["error"]
    assert other.ping()


def test_concurrent_fcall_while_libraries_are_replaced(server):
    """Clients on every thread call a transfer function between accounts (on different
    shards, keys declared) while another client replaces the library again and again:
    every call sees a whole library, and the total never changes."""
    r = server.client()
    accounts = [f"account:{i}" for i in range(8)]
    for a in accounts:
        r.set(a, 1000)

    def transfer_lib(version):
        return lib("bank", ("transfer",
                            f"-- version {version}\n"
                            "local n = tonumber(args[1]) "
                            "if tonumber(redis.call('get', keys[1])) < n then return 0 end "
                            "redis.call('decrby', keys[1], n) redis.call('incrby', keys[2], n) return 1"),
                   ("total", "local t = 0 for _, k in ipairs(keys) do t = t + redis.call('get', k) end return t",
                    ["no-writes"]))

    r.function_load(transfer_lib(0))
    errors, stop = [], threading.Event()

    def client(seed):
        c = server.client()
        i = seed
        try:
            while not stop.is_set():
                a, b = accounts[i % 8], accounts[(i * 3 + 1) % 8]
                if a != b:
                    c.fcall("transfer", 2, a, b, 7)
                i += 1
        except Exception as e:  # noqa: BLE001 - any failure fails the test
            errors.append(e)

    def replacer():
        c = server.client()
        try:
            for version in range(1, 40):
                c.function_load(transfer_lib(version), replace=True)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=client, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    rep = threading.Thread(target=replacer)
    rep.start()
    rep.join(30)
    time.sleep(0.2)
    stop.set()
    for t in threads:
        t.join(30)
    assert errors == []
    assert r.fcall_ro("total", len(accounts), *accounts) == 8000
    assert sum(int(r.get(a)) for a in accounts) == 8000


def test_function_using_undeclared_keys(server):
    """A function that builds its keys from a prefix (as BullMQ's scripts do) runs
    unmodified: the keys are found as it reaches them."""
    r = server.client()
    r.function_load(lib("queue", ("push",
                                  "for i = 1, 20 do redis.call('rpush', args[1] .. ':' .. i, args[2]) end "
                                  "local n = 0 for i = 1, 20 do n = n + redis.call('llen', args[1] .. ':' .. i) end "
                                  "return n")))
    for round_ in range(1, 4):
        assert r.fcall("push", 0, "q", f"job{round_}") == 20 * round_
    assert r.lrange("q:7", 0, -1) == [b"job1", b"job2", b"job3"]
    info = r.info("memory")
    assert info["number_of_functions"] == 1 and info["number_of_libraries"] == 1
