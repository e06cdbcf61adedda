"""ROLE, WAIT, REPLICAOF, FAILOVER, CLUSTER, READONLY/READWRITE/ASKING and MODULE as a
standalone Redis 7.0 master without replicas, cluster mode or modules answers them;
validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis). The refusal of MODULE
LOAD is damselfly's own; REPLICAOF host port is tests/test_replica.py's."""

import time

import pytest
import redis

from helpers import err, info_fields, parse_client_line, wait_for

CLUSTER_DISABLED = err("ERR This instance has cluster support disabled")


def test_role_is_master_without_replicas(server):
    c = server.raw()
    assert c("ROLE") == [b"master", 0, []]
    assert c("ROLE", "x") == err("ERR wrong number of arguments for 'role' command")
    assert server.client().role() == [b"master", 0, []]
    c3 = server.raw()
    c3("HELLO", "3")
    assert c3("ROLE") == [b"master", 0, []]


def test_wait_replies_at_once_when_nothing_to_wait_for(server):
    c = server.raw()
    c("SET", "k", "v")
    assert c("WAIT", "0", "0") == 0
    assert c("WAIT", "-1", "0") == 0
    assert server.client().wait(0, 0) == 0


def test_wait_times_out_with_no_replica(server):
    c = server.raw()
    start = time.monotonic()
    assert c("WAIT", "1", "150") == 0
    assert time.monotonic() - start >= 0.14


def test_wait_errors(server):
    c = server.raw()
    assert c("WAIT") == err("ERR wrong number of arguments for 'wait' command")
    assert c("WAIT", "1") == err("ERR wrong number of arguments for 'wait' command")
    assert c("WAIT", "a", "-1") == err("ERR value is not an integer or out of range")
    assert c("WAIT", "1", "a") == err("ERR timeout is not an integer or out of range")
    assert c("WAIT", "1", "1.5") == err("ERR timeout is not an integer or out of range")
    assert c("WAIT", "0", "-1") == err("ERR timeout is negative")


def test_wait_inside_multi_does_not_block(server):
    c = server.raw()
    assert c("MULTI") == "OK"
    assert c("WAIT", "1", "0") == "QUEUED"
    assert c("EXEC") == [0]


def test_wait_not_allowed_in_scripts(server):
    c = server.raw()
    reply = c("EVAL", "return redis.call('wait', 0, 0)", "0")
    assert isinstance(reply, Exception)
    assert str(reply).startswith("ERR This Redis command is not allowed from script")


def _blocked_client(server):
    """A client blocked in WAIT 1 0, and its id."""
    waiting = server.raw()
    client_id = waiting("CLIENT", "ID")
    waiting.send("WAIT", "1", "0")
    c = server.raw()
    wait_for(lambda: "b" in parse_client_line(c("CLIENT", "LIST", "ID", str(client_id)))["flags"],
             what="WAIT to block")
    return waiting, client_id, c


def test_wait_forever_ends_on_client_unblock(server):
    waiting, client_id, c = _blocked_client(server)
    assert info_fields(c, "clients")["blocked_clients"] == "1"
    assert c("CLIENT", "UNBLOCK", str(client_id)) == 1
    assert waiting.read() == 0
    assert waiting("PING") == "PONG"

    waiting, client_id, c = _blocked_client(server)
    assert c("CLIENT", "UNBLOCK", str(client_id), "ERROR") == 1
    assert waiting.read() == err("UNBLOCKED client unblocked via CLIENT UNBLOCK")


def test_wait_client_hanging_up_is_released(server):
    waiting, client_id, c = _blocked_client(server)
    waiting.close()
    wait_for(lambda: c("CLIENT", "LIST", "ID", str(client_id)) == b"",
             what="the hung-up client to go")
    assert c("CLIENT", "UNBLOCK", str(client_id)) == 0


def test_replicaof_no_one_and_arguments(server):
    c = server.raw()
    assert c("REPLICAOF", "NO", "ONE") == "OK"
    assert c("slaveof", "no", "one") == "OK"
    assert c("REPLICAOF", "NO") == err("ERR wrong number of arguments for 'replicaof' command")
    for port in ("two", "-1", "70000"):
        assert c("REPLICAOF", "no", port) == err("ERR Invalid master port")
    assert c("ROLE") == [b"master", 0, []]


def test_failover_parsing_then_no_replicas(server):
    c = server.raw()
    no_replicas = err("ERR FAILOVER requires connected replicas.")
    assert c("FAILOVER") == no_replicas
    assert c("FAILOVER", "FORCE") == no_replicas
    assert c("FAILOVER", "TO", "127.0.0.1", "1", "FORCE", "TIMEOUT", "5") == no_replicas
    assert c("FAILOVER", "ABORT") == err("ERR No failover in progress.")
    assert c("FAILOVER", "ABORT", "x") == err("ERR syntax error")
    assert c("FAILOVER", "TO") == err("ERR syntax error")
    assert c("FAILOVER", "FORCE", "FORCE") == err("ERR syntax error")
    assert c("FAILOVER", "TIMEOUT", "5", "TIMEOUT", "6") == err("ERR syntax error")
    assert c("FAILOVER", "TIMEOUT", "0") == err("ERR FAILOVER timeout must be greater than 0")
    assert c("FAILOVER", "TIMEOUT", "-5") == err("ERR FAILOVER timeout must be greater than 0")
    assert c("FAILOVER", "TIMEOUT", "x") == err("ERR value is not an integer or out of range")
    assert c("FAILOVER", "TO", "h", "x") == err("ERR value is not an integer or out of range")


def test_cluster_support_disabled(server):
    c = server.raw()
    for cmd in (("CLUSTER", "INFO"), ("CLUSTER", "SLOTS"), ("CLUSTER", "NODES"),
                ("CLUSTER", "SHARDS"), ("CLUSTER", "KEYSLOT", "foo"), ("CLUSTER", "MYID"),
                ("CLUSTER", "HELP"), ("cluster", "addslots", "1", "2"), ("READONLY",),
                ("READWRITE",), ("ASKING",)):
        assert c(*cmd) == CLUSTER_DISABLED, cmd
    assert c("CLUSTER") == err("ERR wrong number of arguments for 'cluster' command")
    assert c("CLUSTER", "KEYSLOT") == err(
        "ERR wrong number of arguments for 'cluster|keyslot' command")
    assert c("CLUSTER", "INFO", "x") == err(
        "ERR wrong number of arguments for 'cluster|info' command")
    assert c("CLUSTER", "foo") == err("ERR unknown subcommand 'foo'. Try CLUSTER HELP.")
    assert c("READONLY", "x") == err("ERR wrong number of arguments for 'readonly' command")


def test_redis_py_sees_a_non_cluster_server(server):
    r = server.client()
    with pytest.raises(redis.ResponseError, match="cluster support disabled"):
        r.execute_command("CLUSTER", "SLOTS")
    assert r.set("k", "v") and r.get("k") == b"v"


def test_module_list_and_help(server):
    c = server.raw()
    assert c("MODULE", "LIST") == []
    help_lines = c("MODULE", "HELP")
    assert help_lines[0] == "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert help_lines[-2:] == ["HELP", "    Prints this help."]
    assert c("MODULE") == err("ERR wrong number of arguments for 'module' command")
    assert c("MODULE", "LIST", "x") == err(
        "ERR wrong number of arguments for 'module|list' command")
    assert c("MODULE", "LOAD") == err("ERR wrong number of arguments for 'module|load' command")
    assert c("MODULE", "foo") == err("ERR unknown subcommand 'foo'. Try MODULE HELP.")
    assert server.client().module_list() == []


@pytest.mark.damselfly_only
def test_module_load_is_refused(server):
    c = server.raw()
    for cmd in (("MODULE", "LOAD", "/tmp/x.so"), ("MODULE", "LOADEX", "/tmp/x.so"),
                ("MODULE", "UNLOAD", "x")):
        assert c(*cmd) == err("ERR damselfly does not load modules"), cmd
    assert c("MODULE", "LIST") == []
