"""ACL as a server without users of its own shows it: the default user (its password is
requirepass), validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis). Users, their
rules and their checks are in test_acl_users.py."""

import hashlib

import pytest

from helpers import err

HELP_FIRST = "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
NO_ACL_FILE = err(
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
    "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
    "Redis configuration file set) in order to store users in the Redis configuration.")
CATEGORIES = [b"keyspace", b"read", b"write", b"set", b"sortedset", b"list", b"hash",
              b"string", b"bitmap", b"hyperloglog", b"geo", b"stream", b"pubsub", b"admin",
              b"fast", b"slow", b"blocking", b"dangerous", b"connection", b"transaction",
              b"scripting"]


def test_the_default_user(server):
    c = server.raw()
    assert c("ACL", "WHOAMI") == b"default"
    assert c("ACL", "USERS") == [b"default"]
    assert c("ACL", "LIST") == [b"user default on nopass ~* &* +@all"]
    assert c("ACL", "GETUSER", "default") == [
        b"flags", [b"on", b"nopass"], b"passwords", [], b"commands", b"+@all",
        b"keys", b"~*", b"channels", b"&*", b"selectors", []]
    assert c("ACL", "GETUSER", "nobody") is None
    assert server.client().acl_whoami() == "default"


def test_getuser_resp3_flags_are_a_set(server):
    c = server.raw()
    c("HELLO", "3")
    user = c("ACL", "GETUSER", "default")
    assert user[b"flags"] in ({b"on", b"nopass"}, [b"on", b"nopass"])
    assert c("ACL", "GETUSER", "nobody") is None


def test_password_is_requirepass(server_factory):
    srv = server_factory("--requirepass=sec")
    c = srv.raw()
    assert c("AUTH", "default", "sec") == "OK"
    digest = hashlib.sha256(b"sec").hexdigest()
    assert c("ACL", "LIST") == [f"user default on #{digest} ~* &* +@all".encode()]
    user = c("ACL", "GETUSER", "default")
    assert user[1] == [b"on"] and user[3] == [digest.encode()]


def test_auth_failures_in_acl_log(server_factory):
    srv = server_factory("--requirepass=sec")
    admin = srv.raw()
    assert admin("AUTH", "sec") == "OK"
    assert admin("ACL", "LOG", "RESET") == "OK"
    wrongpass = err("WRONGPASS invalid username-password pair or user is disabled.")
    other = srv.raw()
    assert other("AUTH", "bob", "x") == wrongpass
    assert other("AUTH", "bob", "y") == wrongpass
    assert other("HELLO", "3", "AUTH", "alice", "z") == wrongpass
    log = admin("ACL", "LOG")
    assert len(log) == 2
    newest = dict(zip(log[0][::2], log[0][1::2]))
    assert newest[b"count"] == 1 and newest[b"reason"] == b"auth"
    assert newest[b"context"] == b"toplevel" and newest[b"object"] == b"HELLO"
    assert newest[b"username"] == b"alice"
    assert 0 <= float(newest[b"age-seconds"]) < 10
    assert b"cmd=hello" in newest[b"client-info"]
    older = dict(zip(log[1][::2], log[1][1::2]))
    assert older[b"count"] == 2 and older[b"object"] == b"AUTH" and older[b"username"] == b"bob"
    assert len(admin("ACL", "LOG", "1")) == 1
    assert admin("ACL", "LOG", "-1") == []
    assert admin("ACL", "LOG", "x") == err("ERR value is not an integer or out of range")
    assert admin("ACL", "LOG", "RESET") == "OK"
    assert admin("ACL", "LOG") == []


def test_cat(server):
    c = server.raw()
    assert c("ACL", "CAT") == CATEGORIES
    hash_commands = set(c("ACL", "CAT", "HASH"))
    assert {b"hset", b"hget", b"hgetall", b"hincrbyfloat"} <= hash_commands
    assert b"get" not in hash_commands
    assert {b"pfadd", b"pfcount", b"pfmerge"} <= set(c("ACL", "CAT", "hyperloglog"))
    assert c("ACL", "CAT", "nope") == err("ERR Unknown category 'nope'")


def test_dryrun(server):
    c = server.raw()
    assert c("ACL", "DRYRUN", "default", "get", "k") == "OK"
    assert c("ACL", "DRYRUN", "default", "config", "get", "x") == "OK"
    assert c("ACL", "DRYRUN", "default", "nosuch") == err("ERR Command 'nosuch' not found")
    assert c("ACL", "DRYRUN", "default", "config", "foo") == err("ERR Command 'config' not found")
    assert c("ACL", "DRYRUN", "bob", "get", "k") == err("ERR User 'bob' not found")
    assert c("ACL", "DRYRUN", "default", "get") == err(
        "ERR wrong number of arguments for 'get' command")
    assert c("ACL", "DRYRUN", "default", "config", "get") == err(
        "ERR wrong number of arguments for 'config|get' command")


def test_genpass(server):
    c = server.raw()
    for args, length in (((), 64), (("32",), 8), (("1",), 1), (("5",), 2), (("4096",), 1024)):
        password = c("ACL", "GENPASS", *args)
        assert len(password) == length and all(ch in b"0123456789abcdef" for ch in password)
    assert c("ACL", "GENPASS") != c("ACL", "GENPASS")
    bad = err("ERR ACL GENPASS argument must be the number of bits for the output password, "
              "a positive number up to 4096")
    for bits in ("0", "-1", "4097"):
        assert c("ACL", "GENPASS", bits) == bad
    assert c("ACL", "GENPASS", "x") == err("ERR value is not an integer or out of range")


def test_deluser_load_save_help_and_arity(server):
    c = server.raw()
    assert c("ACL", "DELUSER", "default") == err("ERR The 'default' user cannot be removed")
    assert c("ACL", "DELUSER", "nobody", "other") == 0
    assert c("ACL", "LOAD") == NO_ACL_FILE
    assert c("ACL", "SAVE") == NO_ACL_FILE
    assert c("ACL", "HELP")[0] == HELP_FIRST
    assert c("ACL") == err("ERR wrong number of arguments for 'acl' command")
    assert c("ACL", "GETUSER") == err("ERR wrong number of arguments for 'acl|getuser' command")
    assert c("ACL", "WHOAMI", "x") == err("ERR wrong number of arguments for 'acl|whoami' command")
    assert c("ACL", "foo") == err("ERR unknown subcommand 'foo'. Try ACL HELP.")


def test_acl_needs_authentication(server_factory):
    srv = server_factory("--requirepass=sec")
    c = srv.raw()
    assert c("ACL", "WHOAMI") == err("NOAUTH Authentication required.")
