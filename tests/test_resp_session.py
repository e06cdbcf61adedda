"""Reply-for-reply comparison of damselfly with redis-server 7.0 on a script of string, key,
connection and server commands (tests/resp_session.txt; its header gives the format).

Both servers are started here (redis-server with DEBUG enabled), each script line is sent
to both over one connection each, and the raw replies must be the same bytes. A line
marked "~" is a difference kept on purpose: its replies must differ, so the list stays
true. Runs with the damselfly target only (it starts its own redis-server).
SESSION_TRACE=1 prints every command and both replies.
"""

import os
import shlex

import pytest

from conftest import TARGET, ServerHandle
from resp_client import RawConnection

SESSION = os.path.join(os.path.dirname(os.path.abspath(__file__)), "resp_session.txt")
MAX_REPORTED = 25


def load_session():
    """[(line number, argv as bytes, known difference) or (line number, "!2"/"!3", False)]."""
    entries = []
    with open(SESSION, encoding="latin-1") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            if line in ("!2", "!3"):
                entries.append((number, line, False))
                continue
            known = line.startswith("~")
            argv = [arg.encode("latin-1").decode("unicode_escape").encode("latin-1")
                    for arg in shlex.split(line[1:] if known else line)]
            entries.append((number, argv, known))
    return entries


@pytest.fixture
def servers():
    handles = [ServerHandle(["--enable-debug-command=yes"], target="redis").start(),
               ServerHandle([], target="damselfly").start()]
    yield handles
    for handle in handles:
        handle.stop()
        handle.cleanup_files()


@pytest.mark.skipif(TARGET != "damselfly", reason="compares damselfly with redis-server")
def test_session_matches_redis(servers):
    ref, target = (RawConnection(s.host, s.port) for s in servers)
    trace = os.environ.get("SESSION_TRACE") == "1"
    mismatches, surprises = [], []
    for number, argv, known in load_session():
        if isinstance(argv, str):  # protocol switch
            for conn in (ref, target):
                conn.send("HELLO", argv[1])
                conn.read_raw_reply()
            continue
        replies = []
        for conn in (ref, target):
            conn.send(*argv)
            replies.append(conn.read_raw_reply())
        if trace:
            print(number, argv, replies)
        same = replies[0] == replies[1]
        if not same and not known:
            mismatches.append(f"line {number}: {argv}\n  redis:     {replies[0]!r}\n"
                              f"  damselfly: {replies[1]!r}")
        elif same and known:
            surprises.append(f"line {number}: {argv} no longer differs; drop its '~'")
    assert not mismatches, "\n".join(mismatches[:MAX_REPORTED])
    assert not surprises, "\n".join(surprises)
