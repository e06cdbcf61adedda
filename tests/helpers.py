"""Small helpers shared by the integration tests."""

import socket
import time

import pytest

from resp_client import RawConnection, RespError


def err(message):
    """The error reply with this exact text (as sent after the '-')."""
    return RespError(message)


def json_records(size):
    """`size` bytes of JSON records that differ in their numbers: a value that damselfly
    keeps LZF-compressed (it compresses about 3 to 1)."""
    out = b"".join(b'{"id":%d,"name":"user%d","active":true},' % (i * 7919 % 100000, i % 977)
                   for i in range(size // 30 + 1))
    return out[:size]


def wait_for(predicate, timeout=3.0, interval=0.02, what="condition"):
    """Polls predicate() until it returns a truthy value; returns that value.

    Raises AssertionError after `timeout` seconds, with the last value seen.
    """
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = predicate()
        if last:
            return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {last!r}")
        time.sleep(interval)


def parse_info(payload):
    """Parses an INFO reply (bytes) into {section: {field: value-string}}.

    Section names are lower-case as in the '# Name' header lines.
    """
    text = payload.decode() if isinstance(payload, bytes) else payload
    sections = {}
    current = None
    for line in text.split("\r\n"):
        if not line:
            continue
        if line.startswith("# "):
            current = sections.setdefault(line[2:].strip().lower(), {})
            continue
        assert current is not None, f"INFO field before any section header: {line!r}"
        key, sep, value = line.partition(":")
        assert sep, f"INFO line without ':' : {line!r}"
        current[key] = value
    return sections


def info_fields(conn, section):
    """INFO <section> through a raw connection, as {field: value-string}."""
    reply = conn("INFO", section)
    assert isinstance(reply, bytes), reply
    parsed = parse_info(reply)
    return parsed.get(section.lower(), {})


def parse_client_line(line):
    """Parses one CLIENT LIST / CLIENT INFO line into {field: value}."""
    if isinstance(line, bytes):
        line = line.decode()
    fields = {}
    for token in line.strip().split(" "):
        key, sep, value = token.partition("=")
        assert sep, f"client field without '=': {token!r} in {line!r}"
        fields[key] = value
    return fields


def set_many(conn, pairs):
    """SETs every (key, value) pair through a raw connection, pipelined; checks each OK.

    Used instead of MSET so that tests of other commands do not depend on MSET.
    """
    pairs = list(pairs.items()) if isinstance(pairs, dict) else list(pairs)
    conn.send_many([("SET", k, v) for k, v in pairs])
    for k, _ in pairs:
        reply = conn.read()
        assert reply == "OK", (k, reply)


def read_all(c, timeout=0.3):
    """Every complete reply that arrives within `timeout` seconds of quiet."""
    replies = []
    c.sock.settimeout(timeout)
    try:
        while True:
            replies.append(c.read())
    except (socket.timeout, TimeoutError):
        pass
    finally:
        c.sock.settimeout(10)
    return replies


def require(server, *commands):
    """Skips the test, naming them, when the server lacks some of the commands (or "CLIENT
    TRACKING"): damselfly gains them issue by issue, redis-server has them all. A command the
    server knows is tested, however well it works."""
    missing = []
    with RawConnection(server.host, server.port, timeout=10) as c:
        for name in commands:
            if name == "CLIENT TRACKING":
                reply = c("CLIENT", "TRACKING", "OFF")
                known = not (isinstance(reply, RespError) and "unknown subcommand" in str(reply))
            else:
                known = c("COMMAND", "INFO", name)[0] is not None
            if not known:
                missing.append(name)
    if missing:
        pytest.skip(f"the server lacks {' '.join(missing)}")
