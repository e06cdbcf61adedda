"""The stock redis-cli against the server."""

import shutil

import pytest

pytestmark = pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli missing")


def test_cli_set_get_incr(server):
    assert server.cli("SET", "foo", "bar") == "OK\n"
    assert server.cli("GET", "foo") == "bar\n"
    assert server.cli("INCR", "cnt") == "1\n"
    assert server.cli("INCRBY", "cnt", "41") == "42\n"
    assert server.cli("GET", "missing") == "\n"
    assert server.cli("PING") == "PONG\n"


def test_cli_raw_and_formatted_output(server):
    server.cli("SET", "foo", "bar")
    assert server.cli("--raw", "GET", "foo") == "bar\n"
    assert server.cli("--no-raw", "GET", "foo") == '"bar"\n'
    assert server.cli("--no-raw", "INCR", "n") == "(integer) 1\n"
    assert server.cli("--no-raw", "GET", "missing") == "(nil)\n"
    assert server.cli("--no-raw", "KEYS", "f*") == '1) "foo"\n'
    assert server.cli("--no-raw", "SET", "k", "v") == "OK\n"


def test_cli_errors(server):
    out = server.cli("--no-raw", "GET")
    assert out == "(error) ERR wrong number of arguments for 'get' command\n"
    out = server.cli("--no-raw", "NOSUCHCMD", "x")
    assert out == "(error) ERR unknown command 'NOSUCHCMD', with args beginning with: 'x' \n"


def test_cli_binary_value_escaped(server):
    server.client().set("bin", b"a\x00b\r\n")
    assert server.cli("--no-raw", "GET", "bin") == '"a\\x00b\\r\\n"\n'


def test_cli_stdin_commands(server):
    out = server.cli(input="SET x 1\nINCR x\nGET x\n")
    assert out == "OK\n2\n2\n"


def test_cli_resp3(server):
    out = server.cli("-3", "--no-raw", "HELLO")
    assert '"proto" => (integer) 3' in out
    assert '"server" => "redis"' in out
    assert '"mode" => "standalone"' in out
    assert server.cli("-3", "--no-raw", "GET", "missing") == "(nil)\n"
    server.cli("-3", "SET", "k", "v")
    assert server.cli("-3", "GET", "k") == "v\n"
