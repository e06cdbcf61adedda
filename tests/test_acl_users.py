"""Redis 7.0 ACL users: ACL SETUSER and its rules (passwords, key, channel and command rules,
selectors), how ACL GETUSER / ACL LIST describe them, their errors, AUTH and HELLO AUTH as a
user, the permission checks with their NOPERM texts (also inside MULTI and scripts), ACL LOG,
rule changes reaching connections that are already authenticated, the default user, ACL
DRYRUN, ACL SAVE / ACL LOAD with an aclfile, `user` lines in a config file and CONFIG REWRITE.

Validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis). Users live as long as the
server, so the shared server's users are deleted (and the default user restored) after every
test by the autouse fixture _acl_users_reset. Tests marked "redis internals" in a comment cover
details damselfly could do differently without a client noticing much; they pin Redis's
exact behaviour all the same.
"""

import hashlib
import os
import subprocess

import pytest
import redis

from conftest import HOST, ServerHandle, _server_factory, damselfly_binary, free_port, redis_args
from helpers import err, parse_client_line
from resp_client import ConnectionClosed, RawConnection, RespSet

DEFAULT_LINE = b"user default on nopass ~* &* +@all"
# Restores the default user without "reset" (which would add the sanitize-payload flag).
DEFAULT_RESTORE = ("on", "nopass", "resetkeys", "~*", "resetchannels", "&*", "+@all",
                   "clearselectors")
WRONGPASS = err("WRONGPASS invalid username-password pair or user is disabled.")
NOAUTH = err("NOAUTH Authentication required.")
NOPERM_KEY = err("NOPERM this user has no permissions to access one of the keys used as "
                 "arguments")
NOPERM_CHANNEL = err("NOPERM this user has no permissions to access one of the channels used "
                     "as arguments")
EXECABORT = err("EXECABORT Transaction discarded because of previous errors.")
UNKNOWN_RULE = "Unknown command or category name in ACL"
BAD_HASH = ("The password hash must be exactly 64 characters and contain only lowercase "
            "hexadecimal characters")
NO_SUCH_PASSWORD = "The password you are trying to remove from the user does not exist"
LOAD_FAILED = ("WARNING: ACL errors detected, no change to the previously active ACL rules was "
               "performed")
LOG_FIELDS = [b"count", b"reason", b"context", b"object", b"username", b"age-seconds",
              b"client-info"]


# ------------------------------------------------------------------------------------------ helpers


def sha(password):
    data = password if isinstance(password, bytes) else password.encode()
    return hashlib.sha256(data).hexdigest()


def noperm_cmd(name):
    return err(f"NOPERM this user has no permissions to run the '{name}' command")


def dry_cmd(name):
    """ACL DRYRUN's (non-error) reply for a denied command."""
    return f"This user has no permissions to run the '{name}' command".encode()


def dry_key(key):
    return f"This user has no permissions to access the '{key}' key".encode()


def dry_channel(channel):
    return f"This user has no permissions to access the '{channel}' channel".encode()


def setuser_error(rule, reason):
    return err(f"ERR Error in ACL SETUSER modifier '{rule}': {reason}")


def as_dict(flat):
    """A RESP2 flat [k1, v1, k2, v2, ...] array as a dict."""
    assert len(flat) % 2 == 0, flat
    return dict(zip(flat[::2], flat[1::2]))


def getuser(c, name):
    reply = c("ACL", "GETUSER", name)
    return None if reply is None else as_dict(reply)


def acl_log(c, *args):
    return [as_dict(entry) for entry in c("ACL", "LOG", *args)]


def login(srv, user, password="pw"):
    """A raw connection authenticated as user."""
    c = srv.raw()
    assert c("AUTH", user, password) == "OK"
    return c


def assert_closed(c, timeout=5.0):
    """The server closes c (without c sending anything), within timeout."""
    c.sock.settimeout(timeout)
    with pytest.raises((ConnectionClosed, ConnectionResetError)):
        c.read()


def assert_line(actual, head, *commands):
    """actual (bytes) is head followed by the command rules, in any order: redis-server 7.0
    lists single commands in the hash order of its command table, which changes from one run
    to the next."""
    words = actual.decode().split(" ")
    n = len(head.split(" "))
    assert " ".join(words[:n]) == head and sorted(words[n:]) == sorted(commands), actual


def script_error(text, where):
    return err(f"ERR The user executing the script {text} script: {where}.")


@pytest.fixture(autouse=True)
def _acl_users_reset(request):
    """After a test on the shared server: deletes every user but default and restores the
    default user, acl-pubsub-default and the ACL log. Uses a connection opened before the test
    (as the default user), so it works whatever password the test gave the default user."""
    if "server" not in request.fixturenames:
        yield
        return
    srv = request.getfixturevalue("server")
    admin = RawConnection(srv.host, srv.port, timeout=10)
    yield
    try:
        users = admin("ACL", "USERS")
        assert isinstance(users, list), users
        others = [u for u in users if u != b"default"]
        if others:
            admin("ACL", "DELUSER", *others)
        assert admin("ACL", "SETUSER", "default", *DEFAULT_RESTORE) == "OK"
        assert admin("CONFIG", "SET", "acl-pubsub-default", "resetchannels") == "OK"
        assert admin("CONFIG", "SET", "acllog-max-len", "128") == "OK"
        assert admin("ACL", "LOG", "RESET") == "OK"
        assert admin("ACL", "LIST") == [DEFAULT_LINE]
    finally:
        admin.close()


class ConfFileServer(ServerHandle):
    """A server started as `binary CONF [harness flags] [flags]`; args[0] is the config text,
    in which {workdir} stands for the server's working directory."""

    def __init__(self, args):
        super().__init__(args[1:])
        self.conf_path = os.path.join(self.workdir, "redis.conf")
        with open(self.conf_path, "w") as f:
            f.write(args[0].replace("{workdir}", self.workdir))

    def command_line(self, port):
        if self.target == "redis":
            return (["redis-server", self.conf_path, "--port", str(port), "--bind", HOST,
                     "--save", "", "--appendonly", "no"] + redis_args(self.extra_args))
        return ([damselfly_binary(), self.conf_path, f"--port={port}", f"--bind={HOST}",
                 "--proactor_threads=2"] + self.extra_args)


@pytest.fixture
def conf_server_factory(request):
    """conf_server_factory(conf_text, *flags) starts a ConfFileServer; stopped after the test."""
    yield from _server_factory(request, ConfFileServer)


def run_to_exit(cmd, cwd):
    """Runs a server command line that must exit; returns (status, output)."""
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=20,
                         stdin=subprocess.DEVNULL, env=dict(os.environ, GLOG_logtostderr="1"))
    return res.returncode, (res.stdout + res.stderr).decode(errors="replace")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


# ------------------------------------------------------------------------ 1. SETUSER, GETUSER, LIST


def test_setuser_without_rules_creates_a_disabled_user_with_no_permissions(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u") == "OK"
    assert c("ACL", "LIST") == [DEFAULT_LINE, b"user u off resetchannels -@all"]
    assert c("ACL", "GETUSER", "u") == [
        b"flags", [b"off"], b"passwords", [], b"commands", b"-@all", b"keys", b"", b"channels",
        b"", b"selectors", []]
    assert server.raw()("AUTH", "u", "") == WRONGPASS


def test_setuser_with_password_keys_and_a_command(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "alice", "on", ">p1", "~cache:*", "+get") == "OK"
    assert c("ACL", "LIST") == [
        f"user alice on #{sha('p1')} ~cache:* resetchannels -@all +get".encode(), DEFAULT_LINE]
    assert c("ACL", "GETUSER", "alice") == [
        b"flags", [b"on"], b"passwords", [sha("p1").encode()], b"commands", b"-@all +get",
        b"keys", b"~cache:*", b"channels", b"", b"selectors", []]
    assert c("ACL", "USERS") == [b"alice", b"default"]


def test_setuser_adds_to_the_rules_of_an_existing_user(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~a*", "+get") == "OK"
    assert c("ACL", "SETUSER", "u", "~b*", "+set", "&news") == "OK"
    assert c("ACL", "SETUSER", "u") == "OK"  # no rules: no change
    assert_line(c("ACL", "LIST")[1], "user u on nopass ~a* ~b* resetchannels &news -@all",
                "+get", "+set")


def test_getuser_under_resp3_is_a_map_with_flags_as_a_set(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~a*", "+get", "(~s* +set)") == "OK"
    assert c("HELLO", "3")[b"proto"] == 3
    c.send("ACL", "GETUSER", "u")
    assert c.read_raw_reply() == (
        b"%6\r\n$5\r\nflags\r\n~2\r\n$2\r\non\r\n$6\r\nnopass\r\n"
        b"$9\r\npasswords\r\n*0\r\n$8\r\ncommands\r\n$10\r\n-@all +get\r\n"
        b"$4\r\nkeys\r\n$3\r\n~a*\r\n$8\r\nchannels\r\n$0\r\n\r\n"
        b"$9\r\nselectors\r\n*1\r\n%3\r\n$8\r\ncommands\r\n$10\r\n-@all +set\r\n"
        b"$4\r\nkeys\r\n$3\r\n~s*\r\n$8\r\nchannels\r\n$0\r\n\r\n")
    user = c("ACL", "GETUSER", "u")
    assert isinstance(user[b"flags"], RespSet)
    assert c("ACL", "GETUSER", "nosuch") is None


def test_on_and_off(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", ">pw", "+@all") == "OK"
    assert getuser(c, "u")[b"flags"] == [b"on"]
    assert server.raw()("AUTH", "u", "pw") == "OK"
    assert c("ACL", "SETUSER", "u", "off") == "OK"
    assert getuser(c, "u")[b"flags"] == [b"off"]
    assert server.raw()("AUTH", "u", "pw") == WRONGPASS
    assert c("ACL", "SETUSER", "u", "on") == "OK"
    assert server.raw()("AUTH", "u", "pw") == "OK"


def test_hashed_passwords_are_added_and_removed(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "#" + sha("secret"), "+@all") == "OK"
    assert getuser(c, "u")[b"passwords"] == [sha("secret").encode()]
    assert c("ACL", "LIST")[1] == f"user u on #{sha('secret')} resetchannels +@all".encode()
    assert server.raw()("AUTH", "u", "secret") == "OK"
    assert c("ACL", "SETUSER", "u", "!" + sha("secret")) == "OK"
    assert getuser(c, "u")[b"passwords"] == []
    assert server.raw()("AUTH", "u", "secret") == WRONGPASS


def test_plaintext_passwords_keep_their_order_without_duplicates(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", ">p1", ">p2", ">p1") == "OK"
    assert getuser(c, "u")[b"passwords"] == [sha("p1").encode(), sha("p2").encode()]
    assert c("ACL", "SETUSER", "u", "<p1") == "OK"
    assert getuser(c, "u")[b"passwords"] == [sha("p2").encode()]
    assert server.raw()("AUTH", "u", "p1") == WRONGPASS
    assert server.raw()("AUTH", "u", "p2") == "OK"


def test_nopass_resetpass_and_a_password_after_nopass(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", ">p1", ">p2", "nopass") == "OK"
    user = getuser(c, "u")
    assert user[b"flags"] == [b"on", b"nopass"] and user[b"passwords"] == []
    assert server.raw()("AUTH", "u", "anything") == "OK"
    assert c("ACL", "SETUSER", "u", ">p3") == "OK"  # a password turns nopass off
    user = getuser(c, "u")
    assert user[b"flags"] == [b"on"] and user[b"passwords"] == [sha("p3").encode()]
    assert server.raw()("AUTH", "u", "anything") == WRONGPASS
    assert c("ACL", "SETUSER", "u", "nopass", "resetpass") == "OK"
    user = getuser(c, "u")
    assert user[b"flags"] == [b"on"] and user[b"passwords"] == []
    assert server.raw()("AUTH", "u", "") == WRONGPASS
    assert server.raw()("AUTH", "u", "p3") == WRONGPASS


def test_read_write_key_patterns(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "%R~r:*", "%W~w:*", "%RW~rw:*", "~all:*") == "OK"
    assert getuser(c, "u")[b"keys"] == b"%R~r:* %W~w:* ~rw:* ~all:*"
    assert c("ACL", "LIST")[1] == b"user u off %R~r:* %W~w:* ~rw:* ~all:* resetchannels -@all"


@pytest.mark.parametrize("rules, keys", [
    (["~a", "~a"], b"~a"),
    (["~a", "%R~a"], b"~a"),
    (["%R~a", "%W~a"], b"~a"),
    (["%W~a", "%R~a"], b"~a"),
    (["~a", "%R~b", "allkeys"], b"~*"),
    (["~a", "resetkeys", "~b"], b"~b"),
    (["allkeys", "resetkeys"], b""),
])
def test_key_patterns_are_merged(server, rules, keys):
    # Redis internals: a pattern given twice (or R then W) is kept once, as ~pattern.
    c = server.raw()
    assert c("ACL", "SETUSER", "u", *rules) == "OK"
    assert getuser(c, "u")[b"keys"] == keys


def test_channel_patterns(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "&ch*", "&a", "&a") == "OK"
    assert getuser(c, "u")[b"channels"] == b"&ch* &a"
    assert c("ACL", "LIST")[1] == b"user u off resetchannels &ch* &a -@all"
    assert c("ACL", "SETUSER", "u", "allchannels") == "OK"
    assert getuser(c, "u")[b"channels"] == b"&*"
    assert c("ACL", "LIST")[1] == b"user u off &* -@all"
    assert c("ACL", "SETUSER", "u", "resetchannels") == "OK"
    assert getuser(c, "u")[b"channels"] == b""


@pytest.mark.parametrize("rules, described", [
    (["+@all", "-get"], "+@all -get"),
    (["-@all", "+@read", "-keys"], "-@all +@read -keys"),
    (["-config", "+config|get"], "-@all +config|get"),
    (["+@all", "-config", "+config|get"], "+@all -config +config|get"),
    (["+config", "-config|get"], "-@all +config -config|get"),
    (["+config|get", "-config"], "-@all"),
    (["+get", "+set", "-get"], "-@all +set"),
    (["+get", "-@all"], "-@all"),
    (["+@all", "-@all", "+get"], "-@all +get"),
    (["-@all", "+get", "+@string"], "-@all +@string"),
    (["+@hash", "-hset"], "-@all +@hash -hset"),
    (["+acl", "-acl|setuser"], "-@all +acl -acl|setuser"),
    (["+@all", "-@admin", "+config|get"], "+@all -@admin +config|get"),
    (["+@all", "-@dangerous"], "+@all -@dangerous"),
    (["+client|id", "+client"], "-@all +client"),
    (["+select|0", "+select|1"], "-@all +select|0 +select|1"),
    (["+select|0", "+select"], "-@all +select"),
    (["allcommands"], "+@all"),
    (["+@all", "nocommands"], "-@all"),
])
def test_command_rules_as_described_by_getuser_and_list(server, rules, described):
    # Redis internals: Redis replays the rules and drops those a later rule made pointless.
    c = server.raw()
    assert c("ACL", "SETUSER", "u", *rules) == "OK"
    assert getuser(c, "u")[b"commands"] == described.encode()
    assert c("ACL", "LIST")[1] == f"user u off resetchannels {described}".encode()


def test_reset_clears_everything(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", ">pw", "~k*", "&c", "+@all", "(~s* +set)") == "OK"
    assert c("ACL", "SETUSER", "u", "reset") == "OK"
    # Redis internals: reset also sets the sanitize-payload flag.
    assert c("ACL", "GETUSER", "u") == [
        b"flags", [b"off", b"sanitize-payload"], b"passwords", [], b"commands", b"-@all",
        b"keys", b"", b"channels", b"", b"selectors", []]
    assert c("ACL", "LIST")[1] == b"user u off sanitize-payload resetchannels -@all"


def test_selectors_in_getuser_and_list(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~a*", "+get", "(~key* +set)",
             "(%R~x* +@read)") == "OK"
    assert c("ACL", "LIST")[1] == (b"user u on nopass ~a* resetchannels -@all +get "
                                   b"(~key* resetchannels -@all +set) "
                                   b"(%R~x* resetchannels -@all +@read)")
    assert getuser(c, "u")[b"selectors"] == [
        [b"commands", b"-@all +set", b"keys", b"~key*", b"channels", b""],
        [b"commands", b"-@all +@read", b"keys", b"%R~x*", b"channels", b""]]
    assert c("ACL", "SETUSER", "u", "clearselectors") == "OK"
    assert getuser(c, "u")[b"selectors"] == []
    assert c("ACL", "LIST")[1] == b"user u on nopass ~a* resetchannels -@all +get"


def test_a_selector_may_span_arguments_and_be_empty(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "(~a", "+get)", "()") == "OK"
    assert getuser(c, "u")[b"selectors"] == [
        [b"commands", b"-@all +get", b"keys", b"~a", b"channels", b""],
        [b"commands", b"-@all", b"keys", b"", b"channels", b""]]


def test_selectors_grant_what_the_root_does_not(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "+get", "+mset",
             "(~s* +set +mset)") == "OK"
    u = login(server, "u")
    assert u("SET", "s1", "v") == "OK"
    assert u("GET", "s1") == NOPERM_KEY
    assert u("GET", "k1") is None
    # One selector must allow the whole command: k1 by the root, s1 by the selector is not enough.
    assert u("MSET", "k1", "a", "s1", "b") == NOPERM_KEY
    assert u("MSET", "s1", "a", "s2", "b") == "OK"
    # The error is the most relevant one: a key error beats a command error.
    assert u("SET", "k1", "v") == NOPERM_KEY
    assert u("DEL", "k1") == noperm_cmd("del")


def test_setuser_is_all_or_nothing(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "+get") == "OK"
    assert c("ACL", "SETUSER", "u", "off", "+set", "foo") == setuser_error("foo", "Syntax error")
    assert c("ACL", "LIST")[1] == b"user u on nopass resetchannels -@all +get"
    assert c("ACL", "SETUSER", "newuser", "on", "foo") == setuser_error("foo", "Syntax error")
    assert c("ACL", "GETUSER", "newuser") is None
    assert c("ACL", "USERS") == [b"default", b"u"]


def test_users_are_sorted_by_name_bytes(server):
    c = server.raw()
    for name in ("zeta", "Alpha", "beta", "_u", "é"):
        assert c("ACL", "SETUSER", name) == "OK"
    users = [b"Alpha", b"_u", b"beta", b"default", b"zeta", "é".encode()]
    assert c("ACL", "USERS") == users
    assert [line.split(b" ")[1] for line in c("ACL", "LIST")] == users


# ---------------------------------------------------------------------------------------- 2. errors


@pytest.mark.parametrize("rule, reason", [
    ("foo", "Syntax error"),
    ("%X~a", "Syntax error"),
    ("%~a", "Syntax error"),
    ("(foo)", "Syntax error"),
    ("+nosuch", UNKNOWN_RULE),
    ("-nosuch", UNKNOWN_RULE),
    ("+@nosuch", UNKNOWN_RULE),
    ("-@nosuch", UNKNOWN_RULE),
    ("+config|nosuch", UNKNOWN_RULE),
    ("-config|nosuch", UNKNOWN_RULE),
    ("-get|x", UNKNOWN_RULE),  # a first-arg rule can only be added
    ("-select|0", UNKNOWN_RULE),
    ("+config|get|x", "Allowing first-arg of a subcommand is not supported"),
    ("#" + sha("pw")[:63], BAD_HASH),
    ("#" + sha("pw").upper(), BAD_HASH),
    ("#" + "z" * 64, BAD_HASH),
    ("!", BAD_HASH),
    ("<nothere", NO_SUCH_PASSWORD),
    ("!" + sha("nothere"), NO_SUCH_PASSWORD),
])
def test_setuser_rule_errors(server, rule, reason):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", rule) == setuser_error(rule, reason)
    assert c("ACL", "GETUSER", "u") is None


def test_unmatched_parenthesis(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "(~a") == err(
        "ERR Unmatched parenthesis in acl selector starting at '(~a'.")
    assert c("ACL", "SETUSER", "u", "(~a", "+get") == err(
        "ERR Unmatched parenthesis in acl selector starting at '(~a'.")
    assert c("ACL", "GETUSER", "u") is None


def test_patterns_after_the_star_pattern_are_refused(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "allkeys", "allchannels") == "OK"
    keys = ("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does "
            "not have any effect. Try 'resetkeys' to start with an empty list of patterns")
    assert c("ACL", "SETUSER", "u", "~a") == setuser_error("~a", keys)
    assert c("ACL", "SETUSER", "u", "%R~a") == setuser_error("%R~a", keys)
    channels = ("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid "
                "and does not have any effect. Try 'resetchannels' to start with an empty list "
                "of channels")
    assert c("ACL", "SETUSER", "u", "&a") == setuser_error("&a", channels)
    assert c("ACL", "SETUSER", "u", "resetkeys", "~a", "resetchannels", "&a") == "OK"


def test_first_arg_rules_on_commands_without_subcommands(server):
    # Redis 7.0 still takes +cmd|firstarg (deprecated): only that first argument is allowed.
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~*", "+get|x", "+select|0") == "OK"
    assert_line(getuser(c, "u")[b"commands"], "-@all", "+select|0", "+get|x")
    assert c("ACL", "DRYRUN", "u", "get", "x") == "OK"
    assert c("ACL", "DRYRUN", "u", "get", "y") == dry_cmd("get")
    assert c("ACL", "DRYRUN", "u", "select", "0") == "OK"
    assert c("ACL", "DRYRUN", "u", "select", "1") == dry_cmd("select")


def test_usernames_with_spaces_or_nul_are_refused(server):
    c = server.raw()
    refused = err("ERR Usernames can't contain spaces or null characters")
    assert c("ACL", "SETUSER", "a b", "on") == refused
    assert c("ACL", "SETUSER", b"a\x00b") == refused
    assert c("ACL", "USERS") == [b"default"]
    # Redis internals: an empty name is accepted.
    assert c("ACL", "SETUSER", "") == "OK"
    assert c("ACL", "USERS") == [b"", b"default"]


def test_setuser_deluser_dryrun_arity(server):
    c = server.raw()
    assert c("ACL", "SETUSER") == err("ERR wrong number of arguments for 'acl|setuser' command")
    assert c("ACL", "DELUSER") == err("ERR wrong number of arguments for 'acl|deluser' command")
    assert c("ACL", "DRYRUN", "default") == err(
        "ERR wrong number of arguments for 'acl|dryrun' command")


def test_deluser_counts_the_users_deleted_and_refuses_default(server):
    c = server.raw()
    for name in ("a", "b", "c"):
        assert c("ACL", "SETUSER", name) == "OK"
    assert c("ACL", "DELUSER", "a", "a", "b", "nosuch") == 2
    assert c("ACL", "DELUSER", "a") == 0
    assert c("ACL", "DELUSER", "c", "default") == err("ERR The 'default' user cannot be removed")
    assert c("ACL", "USERS") == [b"c", b"default"]  # nothing deleted
    assert c("ACL", "GETUSER", "a") is None


def test_setuser_on_the_default_user_is_allowed(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "default", "-debug", "&news") == setuser_error(
        "&news", "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid "
        "and does not have any effect. Try 'resetchannels' to start with an empty list of "
        "channels")
    assert c("ACL", "SETUSER", "default", "-debug") == "OK"
    assert c("ACL", "LIST") == [b"user default on nopass ~* &* +@all -debug"]


def test_dryrun_commands_keys_and_channels(server):
    c = server.raw()
    assert c("ACL", "LOG", "RESET") == "OK"
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "%R~r*", "&ch", "+get", "+set",
             "+publish", "+copy", "+config|get") == "OK"
    assert c("ACL", "DRYRUN", "u", "get", "k1") == "OK"
    assert c("ACL", "DRYRUN", "u", "set", "k1", "v", "get") == "OK"
    assert c("ACL", "DRYRUN", "u", "set", "k1", "v") == "OK"
    assert c("ACL", "DRYRUN", "u", "del", "k1") == dry_cmd("del")
    assert c("ACL", "DRYRUN", "u", "get", "x1") == dry_key("x1")
    assert c("ACL", "DRYRUN", "u", "get", "r1") == "OK"
    assert c("ACL", "DRYRUN", "u", "set", "r1", "v") == dry_key("r1")
    assert c("ACL", "DRYRUN", "u", "copy", "r1", "k2") == "OK"
    assert c("ACL", "DRYRUN", "u", "copy", "k2", "r1") == dry_key("r1")
    assert c("ACL", "DRYRUN", "u", "publish", "ch", "m") == "OK"
    assert c("ACL", "DRYRUN", "u", "publish", "cx", "m") == dry_channel("cx")
    assert c("ACL", "DRYRUN", "u", "config", "get", "x") == "OK"
    assert c("ACL", "DRYRUN", "u", "config", "set", "x", "y") == dry_cmd("config|set")
    assert c("ACL", "DRYRUN", "u", "get", "a", "b") == err(
        "ERR wrong number of arguments for 'get' command")
    assert c("ACL", "DRYRUN", "nobody", "get", "k") == err("ERR User 'nobody' not found")
    assert c("ACL", "LOG") == []  # DRYRUN denials are not logged


# ------------------------------------------------------------------------------------------ 3. AUTH


def test_auth_as_a_user_and_whoami(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*") == "OK"
    u = server.raw()
    assert u("ACL", "WHOAMI") == b"default"
    assert u("AUTH", "alice", "pw") == "OK"
    assert u("ACL", "WHOAMI") == b"alice"
    assert u("AUTH", "default", "whatever") == "OK"  # default is nopass
    assert u("ACL", "WHOAMI") == b"default"


def test_auth_failures_give_wrongpass_and_keep_the_current_user(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "alice", "on", ">pw", "+@all") == "OK"
    assert c("ACL", "SETUSER", "disabled", "off", ">pw", "+@all") == "OK"
    u = login(server, "alice")
    assert u("AUTH", "alice", "bad") == WRONGPASS
    assert u("AUTH", "disabled", "pw") == WRONGPASS
    assert u("AUTH", "nosuch", "pw") == WRONGPASS
    assert u("AUTH", "a", "b", "c") == err("ERR syntax error")
    assert u("ACL", "WHOAMI") == b"alice"


def test_a_nopass_user_accepts_any_password(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "np", "on", "nopass", "+@all") == "OK"
    for password in ("", "x", "anything at all"):
        assert server.raw()("AUTH", "np", password) == "OK"


def test_auth_with_only_a_password_is_for_the_default_user(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "alice", "on", ">pw", "+@all") == "OK"
    assert server.raw()("AUTH", "pw") == err(
        "ERR AUTH <password> called without any password configured for the default user. "
        "Are you sure your configuration is correct?")


def test_hello_auth_as_a_user(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "alice", "on", ">pw", "+@all") == "OK"
    u = server.raw()
    hello = u("HELLO", "3", "AUTH", "alice", "pw")
    assert hello[b"proto"] == 3 and hello[b"server"] == b"redis"
    assert u("ACL", "WHOAMI") == b"alice"
    v = server.raw()
    assert as_dict(v("HELLO", "2", "AUTH", "alice", "pw", "SETNAME", "conn1"))[b"proto"] == 2
    assert v("CLIENT", "GETNAME") == b"conn1"
    assert v("ACL", "WHOAMI") == b"alice"
    w = server.raw()
    assert w("HELLO", "3", "AUTH", "alice", "bad") == WRONGPASS
    assert w("ACL", "WHOAMI") == b"default"


def test_client_list_shows_the_user(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "alice", "on", ">pw", "+@all") == "OK"
    u = login(server, "alice")
    my_id = u("CLIENT", "ID")
    assert parse_client_line(u("CLIENT", "INFO"))["user"] == "alice"
    users = {int(f["id"]): f["user"]
             for f in map(parse_client_line, c("CLIENT", "LIST").decode().splitlines())}
    assert users[my_id] == "alice"
    assert users[c("CLIENT", "ID")] == "default"


def test_redis_py_with_username_and_password(server):
    assert server.raw()("ACL", "SETUSER", "app", "on", ">s3cret", "~app:*", "+@all") == "OK"
    r = server.client(username="app", password="s3cret")
    assert r.acl_whoami() == "app"
    assert r.set("app:x", "1") is True and r.get("app:x") == b"1"
    with pytest.raises(redis.exceptions.NoPermissionError,
                       match="^this user has no permissions to access one of the keys used as "
                             "arguments$"):
        r.get("other")
    bad = server.client(username="app", password="wrong")
    with pytest.raises(redis.exceptions.RedisError, match="WRONGPASS"):
        bad.ping()


def test_binary_and_long_passwords(server):
    c = server.raw()
    binary = b"\x00\xff a b>\r\n"
    long = b"z" * 5000
    assert c("ACL", "SETUSER", "u", "on", b">" + binary, b">" + long, "+@all") == "OK"
    assert getuser(c, "u")[b"passwords"] == [sha(binary).encode(), sha(long).encode()]
    assert server.raw()("AUTH", "u", binary) == "OK"
    assert server.raw()("AUTH", "u", long) == "OK"
    assert server.raw()("AUTH", "u", long[:-1]) == WRONGPASS
    assert server.raw()("AUTH", "u", binary[:-2]) == WRONGPASS
    assert server.raw()("AUTH", "u", "") == WRONGPASS
    # An empty password is a password like any other.
    assert c("ACL", "SETUSER", "u", ">") == "OK"
    assert getuser(c, "u")[b"passwords"][-1] == sha("").encode()
    assert server.raw()("AUTH", "u", "") == "OK"
    assert c("ACL", "SETUSER", "u", "<") == "OK"
    assert server.raw()("AUTH", "u", "") == WRONGPASS


def test_many_passwords_each_work(server):
    c = server.raw()
    passwords = [f"pw{i}" for i in range(50)]
    assert c("ACL", "SETUSER", "u", "on", "+@all", *(">" + p for p in passwords)) == "OK"
    assert getuser(c, "u")[b"passwords"] == [sha(p).encode() for p in passwords]
    for p in (passwords[0], passwords[25], passwords[-1]):
        assert server.raw()("AUTH", "u", p) == "OK"
    assert c("ACL", "SETUSER", "u", "<pw25") == "OK"
    assert len(getuser(c, "u")[b"passwords"]) == 49
    assert server.raw()("AUTH", "u", "pw25") == WRONGPASS


def test_auth_hello_and_reset_need_no_permission(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "n", "on", "nopass") == "OK"  # no commands at all
    u = login(server, "n", "x")
    assert u("PING") == noperm_cmd("ping")
    assert u("ACL", "WHOAMI") == noperm_cmd("acl|whoami")
    assert u("CLIENT", "ID") == noperm_cmd("client|id")
    assert as_dict(u("HELLO"))[b"proto"] == 2
    assert u("RESET") == "RESET"  # back to the default user
    assert u("ACL", "WHOAMI") == b"default"
    assert u("AUTH", "n", "x") == "OK"
    assert u("AUTH", "default", "x") == "OK"
    assert u("PING") == "PONG"


# ----------------------------------------------------------------------------- 4. permission checks


def test_a_denied_command(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~*", "+get") == "OK"
    u = login(server, "u")
    assert u("SET", "k", "v") == noperm_cmd("set")
    assert u("PING") == noperm_cmd("ping")
    assert u("GET", "k") is None


def test_denied_subcommands_are_named_with_a_bar(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~*", "+@all", "-config|set",
             "-client|kill") == "OK"
    u = login(server, "u")
    assert u("CONFIG", "SET", "maxmemory", "0") == noperm_cmd("config|set")
    assert u("CLIENT", "KILL", "ID", "99999") == noperm_cmd("client|kill")
    assert u("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"0"]


def test_a_denied_key(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "+@all") == "OK"
    u = login(server, "u")
    assert u("SET", "k1", "v") == "OK"
    assert u("SET", "x1", "v") == NOPERM_KEY
    assert u("GET", "x1") == NOPERM_KEY
    assert u("EXISTS", "k1", "x1") == NOPERM_KEY
    assert u("OBJECT", "ENCODING", "x1") == NOPERM_KEY
    assert c("EXISTS", "x1") == 0


def test_a_read_only_key_pattern(server):
    c = server.raw()
    assert c("SET", "r1", "v") == "OK"
    assert c("ACL", "SETUSER", "u", "on", "nopass", "%R~r*", "+@all") == "OK"
    u = login(server, "u")
    assert u("GET", "r1") == b"v"
    assert u("STRLEN", "r1") == 1
    assert u("SET", "r1", "w") == NOPERM_KEY
    assert u("DEL", "r1") == NOPERM_KEY
    assert u("APPEND", "r1", "w") == NOPERM_KEY
    assert c("GET", "r1") == b"v"


def test_a_write_only_key_pattern(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "%W~w*", "+@all") == "OK"
    u = login(server, "u")
    assert u("SET", "w1", "v") == "OK"
    assert u("DEL", "w1") == 1
    assert u("SET", "w1", "v") == "OK"
    assert u("GET", "w1") == NOPERM_KEY
    assert u("SET", "w1", "v", "GET") == NOPERM_KEY  # GET reads the old value
    assert u("INCR", "w2") == NOPERM_KEY  # reads and writes
    assert c("GET", "w1") == b"v"


def test_mset_needs_every_key(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "%W~w*", "+@all") == "OK"
    u = login(server, "u")
    assert u("MSET", "k1", "a", "x", "b") == NOPERM_KEY
    assert c("EXISTS", "k1") == 0  # nothing written
    assert u("MSET", "k1", "a", "w1", "b") == "OK"
    assert u("MGET", "k1", "w1") == NOPERM_KEY


def test_sunionstore_reads_sources_and_writes_the_destination(server):
    c = server.raw()
    assert c("SADD", "r1", "a") == 1 and c("SADD", "r2", "b") == 1
    assert c("ACL", "SETUSER", "u", "on", "nopass", "%R~r*", "%W~w*", "+@all") == "OK"
    u = login(server, "u")
    assert u("SUNIONSTORE", "w1", "r1", "r2") == 2
    assert u("SUNIONSTORE", "r3", "r1") == NOPERM_KEY
    assert u("SUNIONSTORE", "w2", "w1") == NOPERM_KEY
    assert sorted(c("SMEMBERS", "w1")) == [b"a", b"b"]


def test_lmove_needs_read_and_write_on_its_source(server):
    # LMOVE's source key is read and written (an element is removed from it).
    c = server.raw()
    assert c("RPUSH", "r1", "a") == 1 and c("RPUSH", "k1", "b") == 1
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "%R~r*", "%W~w*", "+@all") == "OK"
    u = login(server, "u")
    assert u("LMOVE", "r1", "k2", "LEFT", "RIGHT") == NOPERM_KEY
    assert u("LMOVE", "k1", "r1", "LEFT", "RIGHT") == NOPERM_KEY
    assert u("LMOVE", "k1", "k2", "LEFT", "RIGHT") == b"b"
    assert c("LRANGE", "r1", "0", "-1") == [b"a"]


def test_copy_reads_its_source_and_writes_its_destination(server):
    c = server.raw()
    assert c("SET", "r1", "v") == "OK"
    assert c("ACL", "SETUSER", "u", "on", "nopass", "%R~r*", "%W~w*", "+@all") == "OK"
    u = login(server, "u")
    assert u("COPY", "r1", "w1") == 1
    assert u("COPY", "w1", "r2") == NOPERM_KEY
    assert u("COPY", "r1", "r2") == NOPERM_KEY
    assert c("GET", "w1") == b"v" and c("EXISTS", "r2") == 0


def test_publish_to_a_denied_channel(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "&news.*", "+@all") == "OK"
    u = login(server, "u")
    assert u("PUBLISH", "news.1", "m") == 0
    assert u("PUBLISH", "other", "m") == NOPERM_CHANNEL
    assert u("SPUBLISH", "other", "m") == NOPERM_CHANNEL


def test_subscribe_matches_channels_psubscribe_matches_patterns_literally(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "&foo*", "+@all") == "OK"
    u = login(server, "u", "x")
    assert u("PSUBSCRIBE", "f*") == NOPERM_CHANNEL
    assert u("PSUBSCRIBE", "foo1") == NOPERM_CHANNEL  # a pattern must equal an allowed one
    assert u("SUBSCRIBE", "foo1", "bar") == NOPERM_CHANNEL  # all or nothing
    assert u("SUBSCRIBE", "foo1") == [b"subscribe", b"foo1", 1]
    assert u("PSUBSCRIBE", "foo*") == [b"psubscribe", b"foo*", 2]
    v = login(server, "u", "x")
    assert v("SSUBSCRIBE", "foobar") == [b"ssubscribe", b"foobar", 1]


def test_new_users_get_no_channels_by_default(server):
    c = server.raw()
    assert c("CONFIG", "GET", "acl-pubsub-default") == [b"acl-pubsub-default", b"resetchannels"]
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~*", "+@all") == "OK"
    u = login(server, "u")
    assert u("PUBLISH", "c", "m") == NOPERM_CHANNEL
    assert u("SUBSCRIBE", "c") == NOPERM_CHANNEL
    assert u("GET", "a") is None


def test_commands_without_keys_under_key_restrictions(server):
    c = server.raw()
    assert c("SET", "x", "1") == "OK"
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "+@all") == "OK"
    u = login(server, "u")
    assert u("PING") == "PONG"
    assert u("DBSIZE") == 1
    assert u("KEYS", "*") == [b"x"]  # its pattern is not a key
    assert isinstance(u("INFO", "server"), bytes)
    assert u("ECHO", "hi") == b"hi"


def test_all_commands_but_one(server):
    c = server.raw()
    assert c("SET", "a", "1") == "OK"
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~*", "+@all", "-get") == "OK"
    u = login(server, "u")
    assert u("GET", "a") == noperm_cmd("get")
    assert u("MGET", "a") == [b"1"]


def test_read_category_but_one(server):
    c = server.raw()
    assert c("SET", "a", "1") == "OK"
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~*", "-@all", "+@read", "-keys") == "OK"
    u = login(server, "u")
    assert u("GET", "a") == b"1"
    assert u("KEYS", "*") == noperm_cmd("keys")
    assert u("SET", "a", "2") == noperm_cmd("set")


def test_a_subcommand_allowed_after_its_command_is_denied(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~*", "+@all", "-config",
             "+config|get") == "OK"
    u = login(server, "u")
    assert u("CONFIG", "GET", "maxmemory") == [b"maxmemory", b"0"]
    assert u("CONFIG", "SET", "maxmemory", "0") == noperm_cmd("config|set")
    assert u("CONFIG", "RESETSTAT") == noperm_cmd("config|resetstat")


def test_all_but_dangerous_commands(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~*", "&*", "+@all", "-@dangerous") == "OK"
    u = login(server, "u")
    assert u("SET", "a", "1") == "OK"
    assert u("FLUSHALL") == noperm_cmd("flushall")
    assert u("FLUSHDB") == noperm_cmd("flushdb")
    assert u("KEYS", "*") == noperm_cmd("keys")
    assert c("GET", "a") == b"1"


# ----------------------------------------------------------------------------- 5. MULTI and scripts


def test_a_denied_command_in_multi_is_refused_when_queued(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "&ch", "+@all", "-set") == "OK"
    u = login(server, "u")
    assert u("MULTI") == "OK"
    assert u("GET", "k") == "QUEUED"
    assert u("SET", "k", "v") == noperm_cmd("set")
    assert u("GET", "x") == NOPERM_KEY
    assert u("PUBLISH", "other", "m") == NOPERM_CHANNEL
    assert u("EXEC") == EXECABORT
    assert u("PING") == "PONG"  # no longer in MULTI


def test_rules_changed_between_queueing_and_exec(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "+@all") == "OK"
    u = login(server, "u")
    assert u("MULTI") == "OK"
    assert u("GET", "k") == "QUEUED"
    assert u("SET", "k", "v") == "QUEUED"
    assert c("ACL", "SETUSER", "u", "-get") == "OK"
    assert u("EXEC") == [
        err("NOPERM ACLs rules changed between the moment the transaction was accumulated and "
            "the EXEC call. This command is no longer allowed for the following reason: no "
            "permission to execute the command or subcommand"),
        "OK"]
    assert c("GET", "k") == b"v"


def test_eval_redis_call_of_a_denied_command(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "&ch", "+@all", "-set") == "OK"
    u = login(server, "u")
    script = "return redis.call('set','k','v')"
    sha1 = hashlib.sha1(script.encode()).hexdigest()
    assert u("EVAL", script, "0") == script_error("can't run this command or subcommand",
                                                  f"{sha1}, on @user_script:1")
    script = "return redis.call('get','x')"
    sha1 = hashlib.sha1(script.encode()).hexdigest()
    assert u("EVAL", script, "0") == script_error(
        "can't access at least one of the keys mentioned in the command arguments",
        f"{sha1}, on @user_script:1")
    script = "return redis.call('publish','other','m')"
    sha1 = hashlib.sha1(script.encode()).hexdigest()
    assert u("EVAL", script, "0") == script_error(
        "can't publish to the channel mentioned in the command", f"{sha1}, on @user_script:1")
    assert u("EVAL", "return redis.call('get','k')", "0") is None
    assert c("EXISTS", "k") == 0


def test_eval_redis_pcall_returns_the_denial_as_an_error_table(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "+@all", "-set") == "OK"
    u = login(server, "u")
    assert u("EVAL", "return redis.pcall('set','k','v')", "0") == err(
        "ERR The user executing the script can't run this command or subcommand")
    assert u("EVAL", "local e = redis.pcall('set','k','v'); return e['err']", "0") == (
        b"ERR The user executing the script can't run this command or subcommand")
    assert u("EVAL", "return redis.pcall('get','x')", "0") == err(
        "ERR The user executing the script can't access at least one of the keys mentioned in "
        "the command arguments")


def test_eval_declared_keys_are_checked_before_the_script_runs(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "+@all") == "OK"
    u = login(server, "u")
    assert u("EVAL", "return redis.call('set','k1','v')", "1", "x") == NOPERM_KEY
    assert c("EXISTS", "k1") == 0
    assert u("EVAL", "return 1", "1", "k1") == 1


def test_fcall_of_a_function_running_a_denied_command(server):
    c = server.raw()
    code = ("#!lua name=acl_users_lib\n"
            "redis.register_function('setit', function(keys, args) "
            "return redis.call('set', keys[1], 'v') end)")
    assert c("FUNCTION", "LOAD", "REPLACE", code) == b"acl_users_lib"
    try:
        assert c("ACL", "SETUSER", "u", "on", "nopass", "~*", "+@all", "-set") == "OK"
        u = login(server, "u")
        assert u("FCALL", "setit", "1", "k") == script_error(
            "can't run this command or subcommand", "setit, on @user_function:2")
        assert c("FCALL", "setit", "1", "k") == "OK"
    finally:
        c("FUNCTION", "DELETE", "acl_users_lib")


# --------------------------------------------------------------------------------------- 6. ACL LOG


def test_log_entry_of_a_denied_command(server):
    c = server.raw()
    assert c("ACL", "LOG", "RESET") == "OK"
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~*", "+get") == "OK"
    u = login(server, "u")
    assert u("SET", "k", "v") == noperm_cmd("set")
    log = c("ACL", "LOG")
    assert len(log) == 1 and log[0][::2] == LOG_FIELDS
    entry = as_dict(log[0])
    assert entry[b"count"] == 1
    assert entry[b"reason"] == b"command"
    assert entry[b"context"] == b"toplevel"
    assert entry[b"object"] == b"set"
    assert entry[b"username"] == b"u"
    assert 0 <= float(entry[b"age-seconds"]) < 10
    (u_info,) = [f for f in map(parse_client_line, c("CLIENT", "LIST").decode().splitlines())
                 if f["user"] == "u"]
    assert entry[b"client-info"].startswith(f"id={u_info['id']} ".encode())


def test_log_reasons_and_objects(server):
    c = server.raw()
    assert c("ACL", "LOG", "RESET") == "OK"
    assert c("ACL", "SETUSER", "u", "on", ">pw", "~k*", "&ch", "+@all", "-config|set") == "OK"
    u = login(server, "u")
    assert u("CONFIG", "SET", "maxmemory", "0") == noperm_cmd("config|set")
    assert u("GET", "secret") == NOPERM_KEY
    assert u("PUBLISH", "other", "m") == NOPERM_CHANNEL
    assert u("PSUBSCRIBE", "ch*") == NOPERM_CHANNEL
    assert server.raw()("AUTH", "u", "bad") == WRONGPASS
    got = [(e[b"reason"], e[b"object"], e[b"username"], e[b"context"]) for e in acl_log(c)]
    assert got == [(b"auth", b"AUTH", b"u", b"toplevel"),
                   (b"channel", b"ch*", b"u", b"toplevel"),
                   (b"channel", b"other", b"u", b"toplevel"),
                   (b"key", b"secret", b"u", b"toplevel"),
                   (b"command", b"config|set", b"u", b"toplevel")]


def test_log_contexts_multi_and_lua(server):
    c = server.raw()
    assert c("ACL", "LOG", "RESET") == "OK"
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "+@all", "-set") == "OK"
    u = login(server, "u")
    assert u("MULTI") == "OK"
    assert u("SET", "k", "v") == noperm_cmd("set")
    assert u("GET", "x") == NOPERM_KEY
    assert u("DISCARD") == "OK"
    script = "return redis.call('get','y')"
    assert u("EVAL", script, "0") == script_error(
        "can't access at least one of the keys mentioned in the command arguments",
        f"{hashlib.sha1(script.encode()).hexdigest()}, on @user_script:1")
    got = [(e[b"reason"], e[b"context"], e[b"object"]) for e in acl_log(c)]
    assert got == [(b"key", b"lua", b"y"), (b"key", b"multi", b"x"),
                   (b"command", b"multi", b"set")]


def test_log_groups_repeated_denials_and_moves_them_to_the_top(server):
    c = server.raw()
    assert c("ACL", "LOG", "RESET") == "OK"
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~*", "+@all", "-set", "-del") == "OK"
    u = login(server, "u")
    assert u("SET", "a", "1") == noperm_cmd("set")
    assert u("DEL", "a") == noperm_cmd("del")
    assert u("SET", "b", "2") == noperm_cmd("set")  # same reason, context, object and user
    v = login(server, "u")
    assert v("SET", "c", "3") == noperm_cmd("set")  # another connection: grouped too
    assert [(e[b"object"], e[b"count"]) for e in acl_log(c)] == [(b"set", 3), (b"del", 1)]
    assert c("ACL", "SETUSER", "w", "on", "nopass", "~*", "+@all", "-set") == "OK"
    w = login(server, "w")
    assert w("SET", "a", "1") == noperm_cmd("set")  # another user: a new entry
    assert [(e[b"username"], e[b"count"]) for e in acl_log(c)] == [
        (b"w", 1), (b"u", 3), (b"u", 1)]


def test_log_count_argument_max_len_and_reset(server):
    c = server.raw()
    assert c("ACL", "LOG", "RESET") == "OK"
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "+@all") == "OK"
    assert c("CONFIG", "SET", "acllog-max-len", "2") == "OK"
    u = login(server, "u")
    for key in ("x1", "x2", "x3", "x3"):
        assert u("GET", key) == NOPERM_KEY
    assert [(e[b"object"], e[b"count"]) for e in acl_log(c)] == [(b"x3", 2), (b"x2", 1)]
    assert [e[b"object"] for e in acl_log(c, "1")] == [b"x3"]
    assert c("ACL", "LOG", "RESET") == "OK"
    assert c("ACL", "LOG") == []


def test_log_under_resp3(server):
    c = server.raw()
    assert c("ACL", "LOG", "RESET") == "OK"
    assert c("ACL", "SETUSER", "u", "on", "nopass", "~k*", "+@all") == "OK"
    assert login(server, "u")("GET", "x") == NOPERM_KEY
    assert c("HELLO", "3")[b"proto"] == 3
    (entry,) = c("ACL", "LOG")
    assert list(entry) == LOG_FIELDS
    assert entry[b"count"] == 1 and entry[b"reason"] == b"key" and entry[b"object"] == b"x"
    assert isinstance(entry[b"age-seconds"], float) and 0 <= entry[b"age-seconds"] < 10


# ---------------------------------------------------------------- 7. changes reach open connections


def test_rule_changes_apply_to_authenticated_connections_at_once(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", ">pw", "~*", "+@all") == "OK"
    u1, u2 = login(server, "u"), login(server, "u")
    assert u1("GET", "k") is None
    assert c("ACL", "SETUSER", "u", "-get") == "OK"
    assert u1("GET", "k") == noperm_cmd("get")
    assert u2("GET", "k") == noperm_cmd("get")
    assert c("ACL", "SETUSER", "u", "resetkeys", "~a*", "+get") == "OK"
    assert u1("GET", "k") == NOPERM_KEY
    assert u1("GET", "a1") is None


def test_off_and_password_changes_keep_open_connections(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "u", "on", ">pw", "~*", "+@all") == "OK"
    u = login(server, "u")
    assert c("ACL", "SETUSER", "u", ">other", "<pw") == "OK"
    assert u("PING") == "PONG"
    assert c("ACL", "SETUSER", "u", "resetpass") == "OK"
    assert u("PING") == "PONG"
    assert c("ACL", "SETUSER", "u", "off", "nopass") == "OK"
    assert u("PING") == "PONG"
    assert u("ACL", "WHOAMI") == b"u"
    assert server.raw()("AUTH", "u", "x") == WRONGPASS


def test_deluser_closes_the_users_connections(server):
    c = server.raw()
    for name in ("u", "v", "w"):
        assert c("ACL", "SETUSER", name, "on", ">pw", "~*", "+@all") == "OK"
    u1, u2, v, w = (login(server, "u"), login(server, "u"), login(server, "v"),
                    login(server, "w"))
    assert c("ACL", "DELUSER", "u", "v", "nosuch") == 2
    for conn in (u1, u2, v):
        assert_closed(conn)
    assert w("PING") == "PONG"
    assert c("PING") == "PONG"
    assert server.raw()("AUTH", "u", "pw") == WRONGPASS


def test_deluser_of_ones_own_user_replies_then_closes(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "me", "on", "nopass", "~*", "+@all") == "OK"
    me = login(server, "me")
    assert me("ACL", "DELUSER", "me") == 1
    assert_closed(me)
    assert c("ACL", "USERS") == [b"default"]


def test_channel_changes_close_subscribers_that_lost_their_channels(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "sub", "on", "nopass", "~*", "&news*", "&other", "+@all") == "OK"
    s1, s2, s3 = login(server, "sub"), login(server, "sub"), login(server, "sub")
    assert s1("SUBSCRIBE", "news1") == [b"subscribe", b"news1", 1]
    assert s2("PSUBSCRIBE", "news*") == [b"psubscribe", b"news*", 1]
    assert s3("SUBSCRIBE", "other") == [b"subscribe", b"other", 1]
    plain = login(server, "sub")
    assert c("ACL", "SETUSER", "sub", "resetchannels", "&other") == "OK"
    assert_closed(s1)
    assert_closed(s2)
    assert s3("PING") == [b"pong", b""]
    assert plain("PING") == "PONG"  # not subscribed: kept
    assert c("PUBLISH", "other", "m") == 1


def test_a_pattern_subscriber_is_closed_unless_its_pattern_stays_allowed(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "sub", "on", "nopass", "&*", "+@all") == "OK"
    s1, s2 = login(server, "sub"), login(server, "sub")
    assert s1("PSUBSCRIBE", "news*") == [b"psubscribe", b"news*", 1]
    assert s2("SUBSCRIBE", "news1") == [b"subscribe", b"news1", 1]
    # news1 is still allowed, but the pattern news* is not (patterns compare literally).
    assert c("ACL", "SETUSER", "sub", "resetchannels", "&news1") == "OK"
    assert_closed(s1)
    assert s2("PING") == [b"pong", b""]


def test_removing_subscribe_permission_keeps_subscribers(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "sub", "on", "nopass", "&*", "+@all") == "OK"
    s = login(server, "sub")
    assert s("SUBSCRIBE", "a") == [b"subscribe", b"a", 1]
    assert c("ACL", "SETUSER", "sub", "-subscribe") == "OK"
    assert s("PING") == [b"pong", b""]
    assert s("SUBSCRIBE", "b") == noperm_cmd("subscribe")


# ------------------------------------------------------------------------------ 8. the default user


def test_a_default_password_makes_new_connections_authenticate(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "default", ">dpw") == "OK"
    assert c("PING") == "PONG"  # already authenticated
    assert c("ACL", "LIST") == [f"user default on #{sha('dpw')} ~* &* +@all".encode()]
    n = server.raw()
    assert n("PING") == NOAUTH
    assert n("GET", "k") == NOAUTH
    assert n("ACL", "WHOAMI") == NOAUTH
    assert n("HELLO", "3") == err(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
        "HELLO AUTH <user> <pass> option can be used to authenticate the client and select the "
        "RESP protocol version at the same time")
    assert n("AUTH", "wrong") == WRONGPASS
    assert n("AUTH", "dpw") == "OK"
    assert n("PING") == "PONG"
    m = server.raw()
    assert m("AUTH", "default", "dpw") == "OK"
    assert c("ACL", "SETUSER", "default", "nopass") == "OK"
    assert server.raw()("PING") == "PONG"


def test_a_disabled_default_user_makes_new_connections_authenticate(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "other", "on", ">pw", "+@all") == "OK"
    assert c("ACL", "SETUSER", "default", "off") == "OK"
    n = server.raw()
    assert n("PING") == NOAUTH
    assert n("AUTH", "default", "x") == WRONGPASS
    assert n("AUTH", "other", "pw") == "OK"
    assert n("PING") == "PONG"


def test_requirepass_is_the_default_users_password(server_factory):
    srv = server_factory()
    c = srv.raw()
    assert c("CONFIG", "SET", "requirepass", "x") == "OK"
    assert c("ACL", "LIST") == [f"user default on #{sha('x')} ~* &* +@all".encode()]
    assert c("ACL", "SETUSER", "default", ">y") == "OK"  # a second password
    assert c("ACL", "LIST") == [f"user default on #{sha('x')} #{sha('y')} ~* &* +@all".encode()]
    assert srv.raw()("AUTH", "y") == "OK"
    assert c("CONFIG", "SET", "requirepass", "z") == "OK"  # replaces them all
    assert c("ACL", "LIST") == [f"user default on #{sha('z')} ~* &* +@all".encode()]
    assert srv.raw()("AUTH", "y") == WRONGPASS


def test_restricting_the_default_user_restricts_unauthenticated_connections(server):
    c = server.raw()
    assert c("ACL", "SETUSER", "default", "-debug", "-keys") == "OK"
    (line,) = c("ACL", "LIST")
    assert_line(line, "user default on nopass ~* &* +@all", "-debug", "-keys")
    assert c("ACL", "DRYRUN", "default", "debug", "sleep", "0") == dry_cmd("debug")
    n = server.raw()
    assert n("KEYS", "*") == noperm_cmd("keys")
    assert n("DBSIZE") == 0


# -------------------------------------------------------------------------- 9. aclfile, config file


@pytest.fixture
def aclfile(tmp_path):
    """The path of an ACL file holding just the default user."""
    path = str(tmp_path / "users.acl")
    write(path, "user default on nopass ~* &* +@all\n")
    return path


def test_acl_save_writes_the_users_file(server_factory, aclfile):
    srv = server_factory(f"--aclfile={aclfile}")
    c = srv.raw()
    assert c("ACL", "LIST") == [DEFAULT_LINE]
    assert c("ACL", "SETUSER", "alice", "on", ">pw", "~a*", "+get") == "OK"
    assert c("ACL", "SETUSER", "bob", "on", ">b", "%R~x*", "&ch", "(~y* +set)") == "OK"
    assert c("ACL", "SAVE") == "OK"
    with open(aclfile) as f:
        assert f.read() == (
            f"user alice on #{sha('pw')} ~a* resetchannels -@all +get\n"
            f"user bob on #{sha('b')} %R~x* resetchannels &ch -@all "
            f"(~y* resetchannels -@all +set)\n"
            "user default on nopass ~* &* +@all\n")


def test_users_come_from_the_aclfile_at_start_up(server_factory, aclfile):
    write(aclfile, "user default on nopass ~* &* +@all\nuser alice on >pw ~a* +get\n")
    srv = server_factory(f"--aclfile={aclfile}")
    c = srv.raw()
    assert c("ACL", "LIST") == [
        f"user alice on #{sha('pw')} ~a* resetchannels -@all +get".encode(), DEFAULT_LINE]
    assert c("CONFIG", "GET", "aclfile") == [b"aclfile", aclfile.encode()]
    assert login(srv, "alice")("GET", "a1") is None


def test_acl_load_rereads_the_file_and_disconnects_removed_users(server_factory, aclfile):
    write(aclfile, "user default on nopass ~* &* +@all\nuser alice on >pw ~a* +get\n"
                   "user bob on >b +@all\n")
    srv = server_factory(f"--aclfile={aclfile}")
    c = srv.raw()
    bob = login(srv, "bob", "b")
    write(aclfile, "user default on nopass ~* &* +@all\nuser alice on >pw2 ~a* +get +set\n")
    assert c("ACL", "LOAD") == "OK"
    alice_line, default_line = c("ACL", "LIST")
    assert_line(alice_line, f"user alice on #{sha('pw2')} ~a* resetchannels -@all", "+get", "+set")
    assert default_line == DEFAULT_LINE
    assert_closed(bob)
    # Redis internals: ACL LOAD closes the connections of every user but default, even of
    # users that are in the file again; only bob's is checked here.
    assert c("PING") == "PONG"
    assert srv.raw()("AUTH", "alice", "pw") == WRONGPASS
    assert login(srv, "alice", "pw2")("SET", "a1", "v") == "OK"


def test_acl_load_without_a_default_line_keeps_a_default_user(server_factory, aclfile):
    srv = server_factory(f"--aclfile={aclfile}")
    c = srv.raw()
    write(aclfile, "user alice on nopass +@all\n")
    assert c("ACL", "LOAD") == "OK"
    assert c("ACL", "LIST") == [b"user alice on nopass resetchannels +@all", DEFAULT_LINE]


@pytest.mark.parametrize("text, errors", [
    ("user carol on foo\n", ["{path}:2: Syntax error."]),
    ("usr carol on\n", ["{path}:2 should start with user keyword followed by the username."]),
    ("# a comment\n", ["{path}:2 should start with user keyword followed by the username."]),
    ("user\n", ["{path}:2 should start with user keyword followed by the username."]),
    ("user a b\n", ["{path}:2: Syntax error."]),
    ("user carol on +nosuch\n",
     ["{path}:2: Error in applying operation '+nosuch': Unknown command or category name in "
      "ACL."]),
    ("user carol on\nuser carol off\n", ["WARNING: Duplicate user 'carol' found on line 3."]),
    ("user carol on foo\nuser dave bar\n", ["{path}:2: Syntax error.", "{path}:3: Syntax error."]),
])
def test_acl_load_errors_change_nothing(server_factory, aclfile, text, errors):
    write(aclfile, "user default on nopass ~* &* +@all\nuser alice on nopass +@all\n")
    srv = server_factory(f"--aclfile={aclfile}")
    c = srv.raw()
    alice = login(srv, "alice")
    write(aclfile, "user default on nopass ~* &* +@all\n" + text)
    message = " ".join(e.format(path=aclfile) for e in errors)
    assert c("ACL", "LOAD") == err(f"ERR {message} {LOAD_FAILED}")
    assert c("ACL", "USERS") == [b"alice", b"default"]
    assert alice("PING") == "PONG"


def test_acl_load_of_a_missing_file(server_factory, aclfile):
    srv = server_factory(f"--aclfile={aclfile}")
    os.remove(aclfile)
    c = srv.raw()
    assert c("ACL", "LOAD") == err(
        f"ERR Error loading ACLs, opening file '{aclfile}': No such file or directory")
    assert c("ACL", "SAVE") == "OK"  # and SAVE creates it
    with open(aclfile) as f:
        assert f.read() == "user default on nopass ~* &* +@all\n"


def test_a_missing_aclfile_fails_start_up(tmp_path):
    path = str(tmp_path / "missing.acl")
    handle = ServerHandle([f"--aclfile={path}"])
    try:
        status, output = run_to_exit(handle.command_line(free_port()), handle.workdir)
    finally:
        handle.cleanup_files()
    assert status != 0, output
    assert f"Error loading ACLs, opening file '{path}': No such file or directory" in output


def test_user_lines_in_the_config_file(conf_server_factory):
    srv = conf_server_factory("user alice on >pw ~a* +get\nuser bob on nopass &ch +publish\n")
    c = srv.raw()
    assert c("ACL", "LIST") == [
        f"user alice on #{sha('pw')} ~a* resetchannels -@all +get".encode(),
        b"user bob on nopass resetchannels &ch -@all +publish", DEFAULT_LINE]
    assert login(srv, "alice")("GET", "a") is None
    assert c("ACL", "SAVE") == err(
        "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
        "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
        "Redis configuration file set) in order to store users in the Redis configuration.")


def test_config_rewrite_writes_user_lines(conf_server_factory):
    srv = conf_server_factory("user alice on >pw ~a* +get\n")
    c = srv.raw()
    assert c("ACL", "SETUSER", "bob", "on", "nopass", "~b*", "+@read", "(~c* +set)") == "OK"
    assert c("CONFIG", "REWRITE") == "OK"
    with open(srv.conf_path) as f:
        lines = f.read().splitlines()
    users = [line for line in lines if line.startswith("user ")]
    assert sorted(users) == [
        f"user alice on #{sha('pw')} ~a* resetchannels -@all +get",
        "user bob on nopass ~b* resetchannels -@all +@read (~c* resetchannels -@all +set)",
        "user default on nopass ~* &* +@all"]
    assert c("ACL", "DELUSER", "alice") == 1
    assert c("CONFIG", "REWRITE") == "OK"
    with open(srv.conf_path) as f:
        assert not any(line.startswith("user alice ") for line in f.read().splitlines())


def test_a_server_started_from_rewritten_user_lines_has_the_users(conf_server_factory):
    srv = conf_server_factory("user alice on >pw ~a* +get\n")
    c = srv.raw()
    assert c("ACL", "SETUSER", "bob", "on", "nopass", "~b*", "+@read") == "OK"
    assert c("CONFIG", "REWRITE") == "OK"
    with open(srv.conf_path) as f:
        text = f.read()
    # Without the port and bind lines the rewrite added (the new server gets its own).
    text = "\n".join(line for line in text.splitlines()
                     if not line.startswith(("port ", "bind ")))
    again = conf_server_factory(text + "\n")
    # Redis internals: a `user default ...` line read from a config file gives the default
    # user the sanitize-payload flag in redis-server 7.0; its line is not compared.
    assert again.raw()("ACL", "LIST")[:2] == [
        f"user alice on #{sha('pw')} ~a* resetchannels -@all +get".encode(),
        b"user bob on nopass ~b* resetchannels -@all +@read"]


def test_a_bad_user_line_in_the_config_file_fails_start_up(tmp_path):
    handle = ConfFileServer(["user alice on foo\n"])
    try:
        status, output = run_to_exit(handle.command_line(free_port()), handle.workdir)
    finally:
        handle.cleanup_files()
    assert status == 1, output
    lines = output.splitlines()
    i = lines.index("Reading the configuration file, at line 1")
    assert lines[i + 1:i + 3] == [">>> 'user alice on foo'",
                                  "Error in user declaration 'alice': Syntax error"]


def test_user_lines_and_an_aclfile_together_fail_start_up(aclfile):
    handle = ConfFileServer([f"user alice on >pw +@all\naclfile {aclfile}\n"])
    try:
        status, output = run_to_exit(handle.command_line(free_port()), handle.workdir)
    finally:
        handle.cleanup_files()
    assert status == 1, output
    assert ("Configuring Redis with users defined in redis.conf and at the same setting an ACL "
            "file path is invalid.") in output


# -------------------------------------------------------------------------------------- 10-11. misc


def test_acl_cat_is_unchanged_by_users(server):
    c = server.raw()
    before = c("ACL", "CAT")
    dangerous = set(c("ACL", "CAT", "dangerous"))
    assert c("ACL", "SETUSER", "u", "on", "nopass", "+@all", "-@dangerous", "+flushdb") == "OK"
    assert c("ACL", "CAT") == before
    assert set(c("ACL", "CAT", "dangerous")) == dangerous
    assert {b"flushall", b"flushdb", b"keys", b"debug"} <= dangerous


def test_acl_pubsub_default_allchannels(server):
    c = server.raw()
    assert c("CONFIG", "SET", "acl-pubsub-default", "allchannels") == "OK"
    assert c("ACL", "SETUSER", "u", "on", "nopass", "+@all") == "OK"
    assert c("ACL", "LIST")[1] == b"user u on nopass &* +@all"
    assert login(server, "u")("PUBLISH", "any", "m") == 0
    assert c("ACL", "SETUSER", "v", "resetchannels") == "OK"
    assert c("ACL", "LIST")[2] == b"user v off resetchannels -@all"
    assert c("CONFIG", "SET", "acl-pubsub-default", "resetchannels") == "OK"
    assert c("ACL", "GETUSER", "u")[9] == b"&*"  # existing users keep their channels
    assert c("CONFIG", "SET", "acl-pubsub-default", "foo") == err(
        "ERR CONFIG SET failed (possibly related to argument 'acl-pubsub-default') - "
        "argument(s) must be one of the following: allchannels, resetchannels")
