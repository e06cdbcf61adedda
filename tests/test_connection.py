"""Connection-level commands: PING, ECHO, QUIT, RESET, HELLO, AUTH, SELECT, CLIENT."""

import contextlib
import select
import socket
import time

import pytest
import redis

from helpers import err, info_fields, parse_client_line, wait_for

NOAUTH = err("NOAUTH Authentication required.")
WRONGPASS = err("WRONGPASS invalid username-password pair or user is disabled.")
HELLO_NOAUTH = err(
    "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
    "HELLO AUTH <user> <pass> option can be used to authenticate the client and select "
    "the RESP protocol version at the same time")
HELLO_FIELDS = {b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"}


# ------------------------------------------------------------------------ PING / ECHO


def test_ping(server):
    c = server.raw()
    assert c.raw_call("PING") == b"+PONG\r\n"
    assert c.raw_call("PING", "hello") == b"$5\r\nhello\r\n"
    assert c.raw_call("ping", "") == b"$0\r\n\r\n"
    assert c("PING", "a", "b") == err("ERR wrong number of arguments for 'ping' command")


def test_ping_redis_py(server):
    assert server.client().ping() is True


def test_echo(server):
    c = server.raw()
    assert c.raw_call("ECHO", "hi there") == b"$8\r\nhi there\r\n"
    assert c("ECHO", b"bin\x00\r\nary") == b"bin\x00\r\nary"
    assert c("ECHO", "") == b""
    assert c("ECHO") == err("ERR wrong number of arguments for 'echo' command")
    assert c("ECHO", "a", "b") == err("ERR wrong number of arguments for 'echo' command")


# ------------------------------------------------------------------------ QUIT / RESET


def test_quit_replies_ok_and_closes(server):
    c = server.raw()
    c.send("QUIT")
    assert c.read_until_closed() == b"+OK\r\n"


def test_quit_ignores_pipelined_commands_after_it(server):
    c = server.raw()
    c.send_raw(b"*1\r\n$4\r\nQUIT\r\n*3\r\n$3\r\nSET\r\n$1\r\nq\r\n$1\r\nv\r\n")
    assert c.read_until_closed() == b"+OK\r\n"
    assert server.raw()("EXISTS", "q") == 0


def test_reset_restores_connection_defaults(server):
    c = server.raw()
    assert c("SET", "k0", "in-db0") == "OK"
    assert c("SELECT", "3") == "OK"
    assert c("SET", "k3", "in-db3") == "OK"
    assert c("CLIENT", "SETNAME", "resetme") == "OK"
    assert isinstance(c("HELLO", "3"), dict)
    assert c.raw_call("RESET") == b"+RESET\r\n"
    # Back to RESP2 (nil is $-1), database 0, and no name.
    assert c.raw_call("CLIENT", "GETNAME") == b"$-1\r\n"
    assert c("GET", "k0") == b"in-db0"
    assert c.raw_call("GET", "k3") == b"$-1\r\n"
    assert c("RESET", "x") == err("ERR wrong number of arguments for 'reset' command")


# ------------------------------------------------------------------------------ HELLO


def check_hello_map(m, proto, client_id):
    assert set(m) == HELLO_FIELDS
    assert m[b"server"] == b"redis"
    assert isinstance(m[b"version"], bytes) and m[b"version"]
    assert m[b"proto"] == proto
    assert m[b"id"] == client_id
    assert m[b"mode"] == b"standalone"
    assert m[b"role"] == b"master"
    assert m[b"modules"] == []


def test_hello_2_replies_flat_array(server):
    c = server.raw()
    cid = c("CLIENT", "ID")
    reply = c("HELLO", "2")
    assert isinstance(reply, list) and len(reply) == 14
    m = dict(zip(reply[0::2], reply[1::2]))
    check_hello_map(m, 2, cid)


def test_hello_3_replies_map_and_switches_protocol(server):
    c = server.raw()
    cid = c("CLIENT", "ID")
    c.send("HELLO", "3")
    raw = c.read_raw_reply()
    assert raw.startswith(b"%7\r\n")
    c.send("HELLO", "3")
    check_hello_map(c.read(), 3, cid)
    assert c.raw_call("GET", "missing") == b"_\r\n"
    # HELLO without a version reports the current protocol and does not change it.
    check_hello_map(c("HELLO"), 3, cid)
    # And back to RESP2.
    assert isinstance(c("HELLO", "2"), list)
    assert c.raw_call("GET", "missing") == b"$-1\r\n"


def test_hello_without_version_on_fresh_connection(server):
    c = server.raw()
    cid = c("CLIENT", "ID")
    reply = c("HELLO")
    assert isinstance(reply, list)
    check_hello_map(dict(zip(reply[0::2], reply[1::2])), 2, cid)


def test_hello_setname(server):
    c = server.raw()
    m = c("HELLO", "3", "SETNAME", "hello-name")
    assert m[b"proto"] == 3
    assert c("CLIENT", "GETNAME") == b"hello-name"


def test_hello_errors(server):
    c = server.raw()
    assert c("HELLO", "4") == err("NOPROTO unsupported protocol version")
    assert c("HELLO", "1") == err("NOPROTO unsupported protocol version")
    assert c("HELLO", "abc") == err("ERR Protocol version is not an integer or out of range")
    assert c("HELLO", "3", "FOO") == err("ERR Syntax error in HELLO option 'FOO'")
    assert c("HELLO", "3", "AUTH", "default") == err("ERR Syntax error in HELLO option 'AUTH'")
    assert c("HELLO", "2", "SETNAME") == err("ERR Syntax error in HELLO option 'SETNAME'")
    assert c("HELLO", "3", "SETNAME", "a b") == err(
        "ERR Client names cannot contain spaces, newlines or special characters.")
    # None of the failed HELLOs switched the protocol.
    assert c.raw_call("GET", "missing") == b"$-1\r\n"


# ------------------------------------------------------------------------------- AUTH


def test_auth_without_password_configured(server):
    c = server.raw()
    assert c("AUTH", "whatever") == err(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?")
    # The default user has no password: the two-argument form accepts any password.
    assert c("AUTH", "default", "anything") == "OK"
    assert c("AUTH", "nosuchuser", "x") == WRONGPASS
    assert c("AUTH", "a", "b", "c") == err("ERR syntax error")
    assert c("AUTH") == err("ERR wrong number of arguments for 'auth' command")


def test_requirepass_blocks_commands_until_auth(server_factory):
    srv = server_factory("--requirepass=secret")
    c = srv.raw()
    for cmd in (("PING",), ("GET", "k"), ("SET", "k", "v"), ("SELECT", "1"), ("CLIENT", "ID"),
                ("ECHO", "x"), ("DBSIZE",), ("INFO",)):
        assert c(*cmd) == NOAUTH, cmd
    # Redis looks the command up (and checks its arity) before checking authentication.
    assert c("NOSUCHCOMMAND") == err(
        "ERR unknown command 'NOSUCHCOMMAND', with args beginning with: ")
    assert c("AUTH", "wrong") == WRONGPASS
    assert c("AUTH", "default", "wrong") == WRONGPASS
    assert c("AUTH", "someone", "secret") == WRONGPASS
    assert c("GET", "k") == NOAUTH
    assert c("AUTH", "secret") == "OK"
    assert c("PING") == "PONG"
    assert c("SET", "k", "v") == "OK"
    assert c("GET", "k") == b"v"
    assert c("AUTH", "default", "secret") == "OK"
    # Another connection is still unauthenticated.
    other = srv.raw()
    assert other("GET", "k") == NOAUTH
    assert other("AUTH", "default", "secret") == "OK"
    assert other("GET", "k") == b"v"


def test_requirepass_quit_allowed_before_auth(server_factory):
    srv = server_factory("--requirepass=secret")
    c = srv.raw()
    c.send("QUIT")
    assert c.read_until_closed() == b"+OK\r\n"


def test_requirepass_hello(server_factory):
    srv = server_factory("--requirepass=secret")
    c = srv.raw()
    assert c("HELLO", "3") == HELLO_NOAUTH
    assert c("HELLO") == HELLO_NOAUTH
    assert c("HELLO", "3", "AUTH", "default", "bad") == WRONGPASS
    assert c.raw_call("GET", "k") == b"-NOAUTH Authentication required.\r\n"
    reply = c("HELLO", "3", "AUTH", "default", "secret", "SETNAME", "authed")
    assert isinstance(reply, dict) and reply[b"proto"] == 3
    assert c("CLIENT", "GETNAME") == b"authed"
    assert c.raw_call("GET", "k") == b"_\r\n"


def test_requirepass_reset_deauthenticates(server_factory):
    srv = server_factory("--requirepass=secret")
    c = srv.raw()
    assert c("AUTH", "secret") == "OK"
    assert c("RESET") == "RESET"
    assert c("GET", "k") == NOAUTH


def test_requirepass_clients(server_factory):
    srv = server_factory("--requirepass=secret")
    with pytest.raises(redis.ResponseError) as e:
        srv.client(password="nope").ping()
    assert str(e.value) == "WRONGPASS invalid username-password pair or user is disabled."
    with pytest.raises(redis.AuthenticationError) as e:
        srv.client().get("k")
    assert str(e.value) == "Authentication required."  # redis-py strips "NOAUTH "
    r = srv.client(password="secret")
    assert r.set("k", "v") is True
    assert r.get("k") == b"v"
    out = srv.cli("-a", "secret", "--no-auth-warning", "GET", "k")
    assert out == "v\n"
    assert srv.cli("GET", "k") == "NOAUTH Authentication required.\n\n"


# ----------------------------------------------------------------------------- SELECT


def test_select_range_default_16(server):
    c = server.raw()
    assert c("SELECT", "15") == "OK"
    assert c("SELECT", "0") == "OK"
    assert c("SELECT", "16") == err("ERR DB index is out of range")
    assert c("SELECT", "-1") == err("ERR DB index is out of range")
    assert c("SELECT", "abc") == err("ERR value is not an integer or out of range")
    assert c("SELECT", "99999999999999999999") == err(
        "ERR value is not an integer or out of range")
    assert c("SELECT") == err("ERR wrong number of arguments for 'select' command")
    assert c("SELECT", "1", "2") == err("ERR wrong number of arguments for 'select' command")


def test_select_isolates_databases(server):
    c = server.raw()
    assert c("SET", "k", "zero") == "OK"
    assert c("SELECT", "5") == "OK"
    assert c("GET", "k") is None
    assert c("SET", "k", "five") == "OK"
    assert c("SET", "only5", "x") == "OK"
    assert c("DBSIZE") == 2
    assert c("SELECT", "0") == "OK"
    assert c("GET", "k") == b"zero"
    assert c("DBSIZE") == 1
    # A new connection starts in database 0.
    assert server.raw()("GET", "k") == b"zero"


def test_select_with_dbnum_flag(server_factory):
    srv = server_factory("--dbnum=4")
    c = srv.raw()
    assert c("SELECT", "3") == "OK"
    assert c("SELECT", "4") == err("ERR DB index is out of range")
    assert c("SELECT", "15") == err("ERR DB index is out of range")


# ----------------------------------------------------------------------------- CLIENT


def test_client_setname_getname(server):
    c = server.raw()
    assert c.raw_call("CLIENT", "GETNAME") == b"$-1\r\n"
    assert c("CLIENT", "SETNAME", "worker-1") == "OK"
    assert c("CLIENT", "GETNAME") == b"worker-1"
    for bad in ("a b", "a\nb", "tab\there"):
        assert c("CLIENT", "SETNAME", bad) == err(
            "ERR Client names cannot contain spaces, newlines or special characters."), bad
    assert c("CLIENT", "GETNAME") == b"worker-1"
    # An empty name removes the name.
    assert c("CLIENT", "SETNAME", "") == "OK"
    assert c("CLIENT", "GETNAME") is None
    assert c("CLIENT", "SETNAME") == err(
        "ERR wrong number of arguments for 'client|setname' command")
    assert c("CLIENT", "GETNAME", "x") == err(
        "ERR wrong number of arguments for 'client|getname' command")
    assert c("CLIENT", "FOO") == err("ERR unknown subcommand 'FOO'. Try CLIENT HELP.")


def test_client_id_unique_and_increasing(server):
    a, b = server.raw(), server.raw()
    ida, idb = a("CLIENT", "ID"), b("CLIENT", "ID")
    assert isinstance(ida, int) and isinstance(idb, int)
    assert ida > 0 and idb > ida
    assert a("CLIENT", "ID") == ida


CLIENT_FIELDS = ("id", "addr", "laddr", "fd", "name", "age", "idle", "flags", "db", "sub",
                 "psub", "multi", "qbuf", "qbuf-free", "obl", "oll", "omem", "tot-mem",
                 "events", "cmd", "user", "resp")


def test_client_info(server):
    c = server.raw()
    assert c("CLIENT", "SETNAME", "me") == "OK"
    assert c("SELECT", "2") == "OK"
    cid = c("CLIENT", "ID")
    line = c("CLIENT", "INFO")
    assert isinstance(line, bytes) and line.endswith(b"\n") and line.count(b"\n") == 1
    f = parse_client_line(line)
    for field in CLIENT_FIELDS:
        assert field in f, f"missing field {field} in {line!r}"
    local = c.sock.getsockname()
    assert f["id"] == str(cid)
    assert f["addr"] == f"{local[0]}:{local[1]}"
    assert f["laddr"] == f"127.0.0.1:{server.port}"
    assert f["name"] == "me"
    assert f["db"] == "2"
    assert f["cmd"] == "client|info"
    assert f["user"] == "default"
    assert f["resp"] == "2"
    assert f["multi"] == "-1"


def test_client_list(server):
    a, b = server.raw(), server.raw()
    assert a("CLIENT", "SETNAME", "alpha") == "OK"
    assert b("CLIENT", "SETNAME", "beta") == "OK"
    ida, idb = a("CLIENT", "ID"), b("CLIENT", "ID")
    listing = a("CLIENT", "LIST")
    assert isinstance(listing, bytes) and listing.endswith(b"\n")
    clients = [parse_client_line(line) for line in listing.decode().split("\n") if line]
    by_id = {int(f["id"]): f for f in clients}
    assert by_id[ida]["name"] == "alpha" and by_id[idb]["name"] == "beta"
    assert by_id[ida]["cmd"] == "client|list"
    for f in clients:
        for field in CLIENT_FIELDS:
            assert field in f, f"missing field {field} in {f}"
    only_b = a("CLIENT", "LIST", "ID", str(idb))
    assert [parse_client_line(l)["name"] for l in only_b.decode().split("\n") if l] == ["beta"]
    both = a("CLIENT", "LIST", "ID", str(ida), str(idb))
    assert sorted(parse_client_line(l)["name"] for l in both.decode().split("\n") if l) == [
        "alpha", "beta"]
    assert a("CLIENT", "LIST", "ID", "abc") == err("ERR Invalid client ID")
    assert a("CLIENT", "LIST", "FOO") == err("ERR syntax error")


def test_client_kill_by_id(server):
    killer, victim = server.raw(), server.raw()
    vid = victim("CLIENT", "ID")
    assert killer("CLIENT", "KILL", "ID", str(vid)) == 1
    assert victim.read_until_closed() == b""
    assert killer("CLIENT", "KILL", "ID", str(vid)) == 0
    assert killer("CLIENT", "KILL", "ID", "abc") == err("ERR client-id should be greater than 0")
    assert killer("CLIENT", "KILL", "ID", "1", "2") == err("ERR syntax error")
    assert killer("CLIENT", "KILL") == err(
        "ERR wrong number of arguments for 'client|kill' command")
    assert killer("PING") == "PONG"


def test_client_kill_by_addr(server):
    killer = server.raw()
    v1, v2 = server.raw(), server.raw()
    assert v1("PING") == "PONG" and v2("PING") == "PONG"
    addr1 = "%s:%d" % v1.sock.getsockname()[:2]
    addr2 = "%s:%d" % v2.sock.getsockname()[:2]
    # New form: replies with the number of clients killed.
    assert killer("CLIENT", "KILL", "ADDR", addr1) == 1
    assert v1.read_until_closed() == b""
    assert killer("CLIENT", "KILL", "ADDR", addr1) == 0
    # Old form: +OK, or an error when there is no such client.
    assert killer("CLIENT", "KILL", addr2) == "OK"
    assert v2.read_until_closed() == b""
    assert killer("CLIENT", "KILL", addr2) == err("ERR No such client")
    assert killer("PING") == "PONG"


# ------------------------------------------------------------------------ redis-py


def test_redis_py_connection_commands(server):
    r = server.client(decode_responses=True)
    assert r.echo("hello") == "hello"
    assert r.client_setname("py") is True
    assert r.client_getname() == "py"
    assert isinstance(r.client_id(), int)
    names = [c["name"] for c in r.client_list()]
    assert "py" in names


def test_auth_pipelined_with_a_long_command(server_factory):
    """AUTH and a command of more than 10 arguments in one write: the AUTH must take effect
    before the next command is read (unauthenticated clients are limited to 10 arguments)."""
    srv = server_factory("--requirepass=secret")
    c = srv.raw()
    keys = ["k%d" % i for i in range(15)]
    c.send_many([("AUTH", "secret"), ("DEL", *keys), ("PING",)])
    assert c.read() == "OK"
    assert c.read() == 0
    assert c.read() == "PONG"


# ------------------------------------------------------------ CLIENT PAUSE / UNPAUSE


def nothing_to_read(conn, wait_s=0.2):
    """True when no reply arrives on the raw connection within wait_s seconds."""
    if len(conn._buf) > conn._pos:
        return False
    readable, _, _ = select.select([conn.sock], [], [], wait_s)
    return not readable


def blocked_clients(conn):
    return int(info_fields(conn, "clients")["blocked_clients"])


def wait_blocked(conn, count):
    wait_for(lambda: blocked_clients(conn) == count, what=f"{count} blocked clients")


@contextlib.contextmanager
def paused(admin, *args):
    """CLIENT PAUSE args..., with CLIENT UNPAUSE afterwards even when the test fails (the
    server is shared by the module's tests)."""
    assert admin("CLIENT", "PAUSE", *args) == "OK"
    try:
        yield
    finally:
        admin("CLIENT", "UNPAUSE")


def test_client_pause_errors(server):
    c = server.raw()
    assert c("CLIENT", "PAUSE") == err("ERR wrong number of arguments for 'client|pause' command")
    assert c("CLIENT", "PAUSE", "abc") == err("ERR timeout is not an integer or out of range")
    assert c("CLIENT", "PAUSE", "1.5") == err("ERR timeout is not an integer or out of range")
    assert c("CLIENT", "PAUSE", "99999999999999999999") == err(
        "ERR timeout is not an integer or out of range")
    assert c("CLIENT", "PAUSE", "-1") == err("ERR timeout is negative")
    # The mode is checked before the timeout.
    assert c("CLIENT", "PAUSE", "abc", "READ") == err("ERR CLIENT PAUSE mode must be WRITE or ALL")
    assert c("CLIENT", "PAUSE", "10", "WRITE", "x") == err(
        "ERR unknown subcommand or wrong number of arguments for 'PAUSE'. Try CLIENT HELP.")
    assert c("CLIENT", "UNPAUSE", "x") == err(
        "ERR wrong number of arguments for 'client|unpause' command")
    assert c("CLIENT", "UNPAUSE") == "OK"  # also without a pause
    assert c("CLIENT", "PAUSE", "0", "write") == "OK"  # over at once
    assert c("SET", "k", "v") == "OK"


def test_client_pause_write_holds_writes_only(server):
    admin, reader, writer = server.raw(), server.raw(), server.raw()
    assert admin("SET", "k", "old") == "OK"
    with paused(admin, "100000", "WRITE"):
        assert reader("GET", "k") == b"old"
        assert reader("PING") == "PONG"
        assert reader("INFO", "clients")
        # Refused commands are answered at once.
        assert writer("SET", "k") == err("ERR wrong number of arguments for 'set' command")
        writer.send_many([("GET", "k"), ("SET", "k", "new"), ("GET", "k")])
        assert writer.read() == b"old"  # replies before the held command are sent
        wait_blocked(admin, 1)
        assert nothing_to_read(writer)
        line = [parse_client_line(l) for l in admin("CLIENT", "LIST").decode().split("\n")
                if l and "cmd=set" in l]
        assert len(line) == 1 and line[0]["flags"] == "b" and line[0]["argv-mem"] == "7"
        assert admin("GET", "k") == b"old"
    assert writer.read() == "OK"
    assert writer.read() == b"new"
    assert blocked_clients(admin) == 0


def test_client_pause_all_holds_every_command_until_timeout(server):
    admin, c = server.raw(), server.raw()
    assert admin("CLIENT", "PAUSE", "400", "ALL") == "OK"
    started = time.monotonic()
    try:
        # Validation errors are still immediate.
        assert c("NOSUCH") == err("ERR unknown command 'NOSUCH', with args beginning with: ")
        c.send("PING")
        assert nothing_to_read(c, 0.1)
        assert c.read() == "PONG"
        assert time.monotonic() - started >= 0.35
    finally:
        admin("CLIENT", "UNPAUSE")


def test_client_pause_all_holds_the_pausing_client_too(server):
    admin, c = server.raw(), server.raw()
    assert admin("CLIENT", "PAUSE", "300", "ALL") == "OK"
    admin.send("CLIENT", "UNPAUSE")  # held as well: only the timeout ends this pause
    c.send("PING")
    assert nothing_to_read(admin, 0.1) and nothing_to_read(c, 0)
    assert admin.read() == "OK"
    assert c.read() == "PONG"


def test_client_pause_combines_mode_and_deadline(server):
    admin, c = server.raw(), server.raw()
    started = time.monotonic()
    assert admin("CLIENT", "PAUSE", "800", "WRITE") == "OK"
    # The stronger mode and the later deadline win: ALL until 800 ms.
    assert admin("CLIENT", "PAUSE", "50", "ALL") == "OK"
    time.sleep(0.2)
    c.send("PING")
    assert nothing_to_read(c, 0.1)
    assert c.read() == "PONG"
    assert time.monotonic() - started >= 0.75


def test_client_pause_resumes_in_arrival_order(server_factory, target):
    # One thread in damselfly: each proactor thread keeps its parked clients in order.
    srv = server_factory() if target == "redis" else server_factory("--proactor_threads=1")
    admin = srv.raw()
    clients = [srv.raw() for _ in range(4)]
    with paused(admin, "100000", "WRITE"):
        for i, c in enumerate(clients):
            c.send("APPEND", "order", str(i))
            wait_blocked(admin, i + 1)
    for c in clients:
        assert isinstance(c.read(), int)
    assert admin("GET", "order") == b"0123"


def test_client_pause_multi_exec(server):
    admin, c = server.raw(), server.raw()
    assert admin("SET", "k", "v") == "OK"
    with paused(admin, "100000", "WRITE"):
        # A read-only transaction runs.
        assert c("MULTI") == "OK"
        assert c("GET", "k") == "QUEUED"
        assert c("PING") == "QUEUED"
        assert c("EXEC") == [b"v", "PONG"]
        # A write is held before MULTI queues it.
        assert c("MULTI") == "OK"
        c.send("SET", "k", "w")
        wait_blocked(admin, 1)
    assert c.read() == "QUEUED"
    assert c("EXEC") == ["OK"]
    # An EXEC with a queued write waits for the pause to end.
    assert c("MULTI") == "OK"
    assert c("SET", "k", "x") == "QUEUED"
    with paused(admin, "100000", "WRITE"):
        c.send("EXEC")
        wait_blocked(admin, 1)
        assert admin("GET", "k") == b"w"
    assert c.read() == ["OK"]
    assert admin("GET", "k") == b"x"


def test_client_pause_write_holds_may_replicate_commands_and_write_scripts(server):
    """As Redis 7.0: PUBLISH and PFCOUNT (may-replicate) wait too, and so do EVAL, EVALSHA
    and FCALL unless their script declares no-writes (an EVAL without a shebang counts
    as a write); the *_RO forms and no-writes scripts run, inside EXEC too."""
    admin = server.raw()
    assert admin("PFADD", "pause-hll", "a") == 1
    assert admin("FUNCTION", "LOAD", "REPLACE", "#!lua name=pauselib\n"
                 "redis.register_function('pw', function() return 1 end)\n"
                 "redis.register_function{function_name='pr', callback=function() return 2 end,"
                 " flags={'no-writes'}}") == b"pauselib"
    ro_sha = admin("SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn 3")
    rw_sha = admin("SCRIPT", "LOAD", "return 4")
    held = [("PFCOUNT", "pause-hll"), ("PUBLISH", "pause-ch", "m"), ("EVAL", "return 5", "0"),
            ("EVAL", "#!lua\nreturn 6", "0"), ("EVALSHA", rw_sha, "0"), ("FCALL", "pw", "0")]
    clients = [server.raw() for _ in held]
    try:
        with paused(admin, "100000", "WRITE"):
            reader = server.raw()
            assert reader("EVAL_RO", "return 7", "0") == 7
            assert reader("EVAL", "#!lua flags=no-writes\nreturn 8", "0") == 8
            assert reader("EVALSHA", ro_sha, "0") == 3
            assert reader("FCALL", "pr", "0") == 2
            assert reader("FCALL_RO", "pr", "0") == 2
            assert reader("MULTI") == "OK"
            assert reader("EVALSHA", ro_sha, "0") == "QUEUED"
            assert reader("EXEC") == [3]
            for client, command in zip(clients, held):
                client.send(*command)
            wait_blocked(admin, len(held))
            assert all(nothing_to_read(client, 0.05) for client in clients)
        assert [client.read() for client in clients] == [1, 0, 5, 6, 4, 1]
    finally:
        admin("FUNCTION", "DELETE", "pauselib")


def test_client_pause_inside_exec_starts_after_it(server):
    admin, other = server.raw(), server.raw()
    try:
        assert admin("MULTI") == "OK"
        assert admin("SET", "a{t}", "1") == "QUEUED"
        assert admin("CLIENT", "PAUSE", "100000", "WRITE") == "QUEUED"
        assert admin("SET", "b{t}", "2") == "QUEUED"
        assert admin("EXEC") == ["OK", "OK", "OK"]
        other.send("SET", "c{t}", "3")
        wait_blocked(admin, 1)
        assert admin("GET", "b{t}") == b"2"
        assert admin("GET", "c{t}") is None
    finally:
        admin("CLIENT", "UNPAUSE")
    assert other.read() == "OK"


def test_client_pause_keeps_expired_keys(server):
    admin = server.raw()
    expired = int(info_fields(admin, "stats")["expired_keys"])
    assert admin("MULTI") == "OK"
    assert admin("SET", "a{t}", "1", "PX", "10") == "QUEUED"
    assert admin("SET", "b{t}", "2", "PX", "10") == "QUEUED"
    assert admin("CLIENT", "PAUSE", "100000", "WRITE") == "QUEUED"
    try:
        assert admin("EXEC") == ["OK", "OK", "OK"]
        time.sleep(0.2)  # past their deadline, and several active expiry cycles
        # Reads see them as gone, but neither lazy nor active expiry deletes them.
        assert admin("GET", "a{t}") is None and admin("EXISTS", "b{t}") == 0
        assert admin("DBSIZE") == 2
        assert int(info_fields(admin, "stats")["expired_keys"]) == expired
    finally:
        admin("CLIENT", "UNPAUSE")
    assert admin("GET", "a{t}") is None and admin("GET", "b{t}") is None
    assert int(info_fields(admin, "stats")["expired_keys"]) == expired + 2


def test_client_kill_of_a_held_client(server):
    admin, victim = server.raw(), server.raw()
    vid = victim("CLIENT", "ID")
    with paused(admin, "100000", "WRITE"):
        victim.send("SET", "victim", "1")
        wait_blocked(admin, 1)
        assert admin("CLIENT", "KILL", "ID", str(vid)) == 1
        assert victim.read_until_closed() == b""
        wait_blocked(admin, 0)
    assert admin("GET", "victim") is None  # its command never ran


# -------------------------------------------------------------------- CLIENT REPLY


def test_client_reply_off_on(server):
    c = server.raw()
    c.send_many([("CLIENT", "REPLY", "OFF"), ("PING",), ("NOSUCH",), ("SET", "k"),
                 ("SET", "k", "v"), ("CLIENT", "REPLY", "bad")])
    assert nothing_to_read(c)  # not even errors
    assert c("CLIENT", "REPLY", "ON") == "OK"
    assert c("GET", "k") == b"v"
    assert c("CLIENT", "REPLY") == err("ERR wrong number of arguments for 'client|reply' command")
    assert c("CLIENT", "REPLY", "bad") == err("ERR syntax error")


def test_client_reply_skip(server):
    c = server.raw()
    c.send_many([("CLIENT", "REPLY", "SKIP"), ("SET", "k", "1"), ("GET", "k")])
    assert c.read() == b"1"
    # A refused command's error is skipped too; SKIP SKIP skips one command.
    c.send_many([("CLIENT", "REPLY", "SKIP"), ("NOSUCH",), ("CLIENT", "REPLY", "SKIP"),
                 ("CLIENT", "REPLY", "SKIP"), ("PING", "a"), ("PING", "b")])
    assert c.read() == b"b"
    # ON right after SKIP answers.
    c.send_many([("CLIENT", "REPLY", "SKIP"), ("CLIENT", "REPLY", "ON"), ("PING", "c")])
    assert c.read() == "OK"
    assert c.read() == b"c"
    # SKIP does nothing while replies are off.
    c.send_many([("CLIENT", "REPLY", "OFF"), ("CLIENT", "REPLY", "SKIP"), ("PING", "d"),
                 ("CLIENT", "REPLY", "ON"), ("PING", "e")])
    assert c.read() == "OK"
    assert c.read() == b"e"
    # Pipelined same-shard commands: only the first is skipped.
    c.send_many([("CLIENT", "REPLY", "SKIP"), ("SET", "x", "1"), ("SET", "x", "2"),
                 ("GET", "x")])
    assert c.read() == "OK"
    assert c.read() == b"2"


def test_client_reply_reset(server):
    c = server.raw()
    c.send_many([("CLIENT", "REPLY", "OFF"), ("RESET",), ("PING",)])
    assert c.read() == "RESET"
    assert c.read() == "PONG"
    # A skipped RESET stays skipped.
    c.send_many([("CLIENT", "REPLY", "SKIP"), ("RESET",), ("PING",)])
    assert c.read() == "PONG"


# ------------------------------------------------------------------ CLIENT NO-EVICT


def test_client_no_evict(server):
    c = server.raw()
    assert parse_client_line(c("CLIENT", "INFO"))["flags"] == "N"
    assert c("CLIENT", "NO-EVICT", "on") == "OK"
    assert parse_client_line(c("CLIENT", "INFO"))["flags"] == "e"
    assert c("RESET") == "RESET"  # RESET keeps it
    assert parse_client_line(c("CLIENT", "INFO"))["flags"] == "e"
    assert c("CLIENT", "NO-EVICT", "OFF") == "OK"
    assert parse_client_line(c("CLIENT", "INFO"))["flags"] == "N"
    assert c("CLIENT", "NO-EVICT", "maybe") == err("ERR syntax error")
    assert c("CLIENT", "NO-EVICT") == err(
        "ERR wrong number of arguments for 'client|no-evict' command")


def test_client_list_multi_fields(server):
    admin, c = server.raw(), server.raw()
    cid = c("CLIENT", "ID")
    assert c("MULTI") == "OK"
    assert c("SET", "k", "value") == "QUEUED"
    f = parse_client_line(admin("CLIENT", "LIST", "ID", str(cid)))
    assert f["flags"] == "x" and f["multi"] == "1"
    assert c("DISCARD") == "OK"
    f = parse_client_line(admin("CLIENT", "LIST", "ID", str(cid)))
    assert f["flags"] == "N" and f["multi"] == "-1" and f["multi-mem"] == "0"


# ------------------------------------------------------------------- CLIENT KILL


def test_client_kill_filter_errors(server):
    c = server.raw()
    assert c("CLIENT", "KILL", "TYPE", "wrong_type") == err("ERR Unknown client type 'wrong_type'")
    for bad in ("abc", "0", "-5", "9223372036854775808"):
        assert c("CLIENT", "KILL", "ID", bad) == err("ERR client-id should be greater than 0")
    assert c("CLIENT", "KILL", "SKIPME", "maybe") == err("ERR syntax error")
    assert c("CLIENT", "KILL", "USER", "nouser") == err("ERR No such user 'nouser'")
    assert c("CLIENT", "KILL", "MAXAGE", "10") == err("ERR syntax error")
    assert c("CLIENT", "KILL", "FOO", "bar") == err("ERR syntax error")
    # Filters are checked in order; a filter without its value is a syntax error.
    assert c("CLIENT", "KILL", "ID", "abc", "TYPE", "foo") == err(
        "ERR client-id should be greater than 0")
    assert c("CLIENT", "KILL", "TYPE", "foo", "ID", "abc") == err("ERR Unknown client type 'foo'")
    assert c("CLIENT", "KILL", "ID", "1", "SKIPME") == err("ERR syntax error")
    assert c("CLIENT", "KILL", "ID") == err("ERR No such client")  # the old ip:port form
    assert c("CLIENT", "KILL", "LADDR", "1.2.3.4:5") == 0
    for kind in ("master", "replica", "slave", "pubsub", "MASTER"):
        assert c("CLIENT", "KILL", "TYPE", kind) == 0


def test_client_kill_by_type_and_user(server):
    killer, v1, v2 = server.raw(), server.raw(), server.raw()
    assert v1("PING") == "PONG" and v2("PING") == "PONG"
    v1id = v1("CLIENT", "ID")
    assert killer("CLIENT", "KILL", "TYPE", "normal", "ID", str(v1id)) == 1
    assert v1.read_until_closed() == b""
    assert killer("CLIENT", "KILL", "USER", "default", "SKIPME", "yes") >= 1
    assert v2.read_until_closed() == b""
    assert killer("PING") == "PONG"


def test_client_list_type_and_id_errors(server):
    c = server.raw()
    assert c("CLIENT", "LIST", "TYPE", "wrong") == err("ERR Unknown client type 'wrong'")
    assert c("CLIENT", "LIST", "TYPE") == err("ERR syntax error")
    assert c("CLIENT", "LIST", "ID") == err("ERR syntax error")
    assert c("CLIENT", "LIST", "ID", "-5") == b""
    assert c("CLIENT", "LIST", "TYPE", "pubsub") == b""
    assert c("CLIENT", "LIST", "TYPE", "normal").count(b"\n") >= 1


# ------------------------------------------------------------- CLIENT LIST buffers


def test_client_info_buffers(server):
    c = server.raw()
    f = parse_client_line(c("CLIENT", "INFO"))
    # The command being executed is in the query buffer: *2 $6 client $4 info.
    assert f["qbuf"] == "26" and f["argv-mem"] == "10"
    assert int(f["qbuf-free"]) > 0
    assert f["obl"] == "0" and f["oll"] == "0" and f["omem"] == "0"
    assert int(f["tot-mem"]) >= int(f["qbuf"]) + int(f["qbuf-free"])
    # Pipelined: the replies built before it wait in the reply buffer.
    c.send_many([("PING",), ("CLIENT", "INFO")])
    assert c.read() == "PONG"
    f = parse_client_line(c.read())
    assert f["obl"] == "7" and f["qbuf"] == str(14 + 26)


@pytest.mark.damselfly_only
def test_client_list_reports_unsent_replies(server):
    """A client that does not read its replies: its fiber is blocked sending them, and
    CLIENT LIST shows them in obl (Redis would show them in its reply list: oll, omem)."""
    admin = server.raw()
    assert admin("SET", "big", "x" * (8 << 20)) == "OK"
    slow = server.raw()
    slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sid = slow("CLIENT", "ID")
    slow.send("GET", "big")

    def slow_obl():
        line = admin("CLIENT", "LIST", "ID", str(sid))
        return int(parse_client_line(line)["obl"]) if line else 0

    assert wait_for(lambda: slow_obl() > (1 << 20), what="unsent replies") > 0
    assert admin("CLIENT", "KILL", "ID", str(sid)) == 1


# ---------------------------------------------------------------- CLIENT HELP etc.


def test_client_getredir(server):
    c = server.raw()
    assert c("CLIENT", "GETREDIR") == -1
    assert c("CLIENT", "GETREDIR", "x") == err(
        "ERR wrong number of arguments for 'client|getredir' command")


CLIENT_HELP_ENTRIES = [
    ("CACHING (YES|NO)", [
        "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes."]),
    ("GETREDIR", ["    Return the client ID we are redirecting to when tracking is enabled."]),
    ("GETNAME", ["    Return the name of the current connection."]),
    ("ID", ["    Return the ID of the current connection."]),
    ("INFO", ["    Return information about the current client connection."]),
    ("KILL <ip:port>", ["    Kill connection made from <ip:port>."]),
    ("KILL <option> <value> [<option> <value> [...]]", [
        "    Kill connections. Options are:",
        "    * ADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made from the specified address",
        "    * LADDR (<ip:port>|<unixsocket>:0)",
        "      Kill connections made to specified local address",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Kill connections by type.",
        "    * USER <username>",
        "      Kill connections authenticated by <username>.",
        "    * SKIPME (YES|NO)",
        "      Skip killing current connection (default: yes)."]),
    ("LIST [options ...]", [
        "    Return information about client connections. Options:",
        "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        "      Return clients of specified type."]),
    ("UNPAUSE", ["    Stop the current client pause, resuming traffic."]),
    ("PAUSE <timeout> [WRITE|ALL]",
     ["    Suspend all, or just write, clients for <timeout> milliseconds."]),
    ("REPLY (ON|OFF|SKIP)", ["    Control the replies sent to the current connection."]),
    ("SETNAME <name>", ["    Assign the name <name> to the current connection."]),
    ("UNBLOCK <clientid> [TIMEOUT|ERROR]", ["    Unblock the specified blocked client."]),
    ("TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]", [
        "         [OPTIN] [OPTOUT] [NOLOOP]",
        "    Control server assisted client side caching."]),
    ("TRACKINGINFO", ["    Report tracking status for the current connection."]),
    ("NO-EVICT (ON|OFF)", ["    Protect current client connection from eviction."]),
    ("HELP", ["    Prints this help."]),
]


def test_client_help(server, target):
    lines = server.raw()("CLIENT", "HELP")
    assert lines[0] == "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    # Each subcommand we have, with Redis 7.0's text, in Redis's order.
    position = 0
    for head, body in CLIENT_HELP_ENTRIES:
        index = lines.index(head, position)
        assert lines[index + 1 : index + 1 + len(body)] == body, head
        position = index + 1 + len(body)
    if target == "damselfly":  # SETINFO is Redis 7.2's, which damselfly has too
        heads = [l.split(" ")[0] for l in lines[1:] if not l.startswith(" ")]
        assert "SETINFO" in heads


def test_idle_timeout_closes_idle_clients_only(server):
    """Redis's `timeout`: a client that waits longer for its next request is closed;
    subscribers and clients blocked in a command are not."""
    admin = server.client()
    assert admin.config_get("timeout") == {"timeout": "0"}
    admin.config_set("timeout", 1)
    try:
        assert admin.config_get("timeout") == {"timeout": "1"}
        idle = server.raw(timeout=10)
        assert idle("PING") == "PONG"
        subscriber = server.raw(timeout=10)
        subscriber.send("SUBSCRIBE", "ch")
        assert subscriber.read() == [b"subscribe", b"ch", 1]
        blocked = server.raw(timeout=10)
        blocked.send("BLPOP", "timeout-list", "3.5")
        idle.read_until_closed(timeout=5)  # within a second or so of the deadline
        assert blocked.read() is None  # its own timeout, not the server's idle one
        admin.publish("ch", "m")
        assert subscriber.read() == [b"message", b"ch", b"m"]
    finally:
        admin.config_set("timeout", 0)


def test_idle_timeout_range(server):
    admin = server.client()
    for bad in ("-1", "2147483648", "x"):
        with pytest.raises(redis.ResponseError) as e:
            admin.config_set("timeout", bad)
        assert "argument 'timeout'" in str(e.value)
    assert admin.config_get("timeout") == {"timeout": "0"}


def non_loopback_address():
    """An IPv4 address of this machine other than the loopback, or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: only a route is chosen
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def exchange(host, port, request=b"PING\r\n", timeout=5.0):
    """Sends `request` and returns everything read until the server closes or goes quiet."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        if request:
            s.sendall(request)
        received = b""
        s.settimeout(0.5)
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                return received, False  # still open
            if not chunk:
                return received, True  # closed
            received += chunk


def test_protected_mode_refuses_other_addresses_while_there_is_no_password(server_factory):
    """protected-mode yes, as Redis 7: without a password, a client from another address than
    the loopback gets -DENIED and is closed; loopback clients are served; a password or
    protected-mode no lets others in."""
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no address but the loopback")
    srv = server_factory("--bind=0.0.0.0", "--protected-mode=yes")
    local = srv.client()
    assert local.config_get("protected-mode") == {"protected-mode": "yes"}
    assert exchange("127.0.0.1", srv.port) == (b"+PONG\r\n", False)
    # The refusal comes at once, before any request (one sent might reset the connection).
    reply, closed = exchange(address, srv.port, request=b"")
    assert reply.startswith(b"-DENIED Redis is running in protected mode because protected "
                            b"mode is enabled and no password is set for the default user.")
    assert reply.endswith(b"in order for the server to start accepting connections from the "
                          b"outside.\r\n") and closed
    local.config_set("requirepass", "secret")
    assert exchange(address, srv.port) == (b"-NOAUTH Authentication required.\r\n", False)
    local.execute_command("AUTH", "secret")
    local.config_set("requirepass", "")
    assert exchange(address, srv.port, request=b"")[0].startswith(b"-DENIED")
    local.config_set("protected-mode", "no")
    assert exchange(address, srv.port) == (b"+PONG\r\n", False)


def test_protected_mode_follows_the_default_users_password(server_factory):
    """protected-mode's condition is the default ACL user's: a password given with ACL
    SETUSER lets other addresses in (to authenticate), nopass shuts them out again."""
    address = non_loopback_address()
    if address is None:
        pytest.skip("this machine has no address but the loopback")
    srv = server_factory("--bind=0.0.0.0", "--protected-mode=yes")
    local = srv.raw()
    assert exchange(address, srv.port, request=b"")[0].startswith(b"-DENIED")
    assert local("ACL", "SETUSER", "default", ">secret") == "OK"
    assert exchange(address, srv.port) == (b"-NOAUTH Authentication required.\r\n", False)
    assert local("ACL", "SETUSER", "default", "nopass") == "OK"
    assert exchange(address, srv.port, request=b"")[0].startswith(b"-DENIED")


def server_side_timer(port, client_port):
    """The kernel's timer kind on the server's end of a loopback connection, from
    /proc/net/tcp: 0 none, 2 keepalive (1 retransmit, 3 TIME_WAIT, 4 zero window probe)."""
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            local, remote, state, timer = fields[1], fields[2], fields[3], fields[5]
            if (state == "01" and int(local.split(":")[1], 16) == port
                    and int(remote.split(":")[1], 16) == client_port):
                return int(timer.split(":")[0], 16)
    raise AssertionError(f"no connection from port {client_port} to {port}")


def test_tcp_keepalive_probes_idle_clients(server_factory):
    """tcp-keepalive (300 by default, as Redis): a client's socket has the kernel's
    keepalive timer; 0 turns it off for connections opened after."""
    srv = server_factory()
    c = srv.client()
    assert c.config_get("tcp-keepalive") == {"tcp-keepalive": "300"}
    with socket.create_connection((srv.host, srv.port)) as s:
        s.sendall(b"PING\r\n")
        assert s.recv(100) == b"+PONG\r\n"
        assert server_side_timer(srv.port, s.getsockname()[1]) == 2
    c.config_set("tcp-keepalive", 0)
    with socket.create_connection((srv.host, srv.port)) as s:
        s.sendall(b"PING\r\n")
        assert s.recv(100) == b"+PONG\r\n"
        assert server_side_timer(srv.port, s.getsockname()[1]) == 0
