"""Connection-level commands: PING, ECHO, QUIT, RESET, HELLO, AUTH, SELECT, CLIENT."""

import pytest
import redis

from helpers import err, parse_client_line

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
