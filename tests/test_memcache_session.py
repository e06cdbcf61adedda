"""Byte-for-byte comparison of damselfly's memcache port with a real memcached 1.6.

tests/memcache_session.txt (classic and meta commands) and tests/memcache_meta_session.txt
(the meta commands' flag combinations) are scripts of raw requests (memcache_session.txt's
header gives the format). Each request is sent, followed by "mn\\r\\n", over one connection
to a memcached the test starts and over one connection to damselfly, and the replies up to
"MN\\r\\n" must be the same bytes once the differences memcached allows are normalised (see
normalise()). A request marked "~" is a difference we keep on purpose (the comment above it
says why): its replies must differ, so that the list stays true.

The comparison runs on damselfly only (it starts its own memcached for the expected bytes);
the check of the script itself (two memcacheds) runs with any target.
SESSION_TRACE=1 prints every request and both replies.
"""

import os
import re
import time

import pytest

from conftest import McClosed, McConnection

SESSION_DIR = os.path.dirname(os.path.abspath(__file__))
SESSION_FILES = ("memcache_session.txt", "memcache_meta_session.txt")
META_CODES = (b"VA", b"HD", b"EN", b"NS", b"EX", b"NF")
MAX_REPORTED = 25


def load_session(name):
    """[(line number, request template, known difference)] from a session file.

    A line "~<request>" is a known difference; "@sleep <seconds>" pauses the session (its
    template is returned as is)."""
    entries = []
    with open(os.path.join(SESSION_DIR, name), encoding="latin-1") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                known = line.startswith("~")
                entries.append((number, line[1:] if known else line, known))
    return entries


def sleep_of(template):
    """The pause an "@sleep <seconds>" line asks for, else None."""
    m = re.fullmatch(r"@sleep (\d+(?:\.\d+)?)", template)
    return float(m.group(1)) if m else None


def expand(template, last_cas):
    """The request bytes of a session line: escapes and {...} expansions resolved."""
    out = bytearray()
    i = 0
    while i < len(template):
        ch = template[i]
        if ch == "\\":
            nxt = template[i + 1]
            if nxt == "x":
                out.append(int(template[i + 2:i + 4], 16))
                i += 4
                continue
            out += {"r": b"\r", "n": b"\n", "t": b"\t", "\\": b"\\"}[nxt]
            i += 2
        elif ch == "{":
            end = template.index("}", i)
            out += expansion(template[i + 1:end], last_cas)
            i = end + 1
        else:
            out.append(ord(ch))
            i += 1
    return bytes(out)


def expansion(name, last_cas):
    if name == "allbytes":
        return bytes(range(256))
    if name == "cas":
        assert last_cas is not None, "{cas} before any reply carried a cas unique"
        return last_cas
    m = re.fullmatch(r"now([+-]\d+)", name)
    if m:
        return b"%d" % (int(time.time()) + int(m.group(1)))
    m = re.fullmatch(r"(\d+)\*(.)", name)
    if m:
        return m.group(2).encode("latin-1") * int(m.group(1))
    raise ValueError(f"unknown expansion {{{name}}}")


def reply_items(reply):
    """Splits reply bytes into [line, data block or None] pairs (lines without "\\r\\n")."""
    items = []
    pos = 0
    while pos < len(reply):
        end = reply.find(b"\r\n", pos)
        if end < 0:
            items.append([reply[pos:], None])
            break
        line = reply[pos:end]
        pos = end + 2
        words = line.split(b" ")
        size = None
        if words[0] == b"VALUE" and len(words) >= 4 and words[3].isdigit():
            size = int(words[3])
        elif words[0] == b"VA" and len(words) >= 2 and words[1].isdigit():
            size = int(words[1])
        if size is None:
            items.append([line, None])
        else:
            items.append([line, reply[pos:pos + size]])
            pos += size + 2
    return items


def normalise(reply):
    """(normalised reply, [remaining TTLs and ages], [cas uniques]) of one reply.

    What memcached allows to differ between servers, and nothing else, is normalised:
      - the VERSION text: a version string is the server's own;
      - cas uniques (the 5th word of VALUE lines, the 'c' token of meta replies): the
        protocol only promises a unique 64-bit number per item version; the numbers
        themselves depend on each server's counter ({cas} in the script feeds each server
        its own numbers back, so cas semantics are still compared); "c0", which ms sends
        when it stored nothing, is not a cas unique and stays;
      - remaining TTLs (the 't' token of meta replies, when positive) and ages (the 'l'
        token, seconds since the last access) are returned apart and compared within 1 s:
        memcached's clock moves in 1 s steps and the two servers do not tick at the same
        instant;
      - in me's "ME <key> exp= la= cas= fetch= cls= size=" line, the cas as above, exp and
        la as TTLs and ages, and cls and size, which are memcached's slab allocator's;
      - a number followed by spaces in a data block: memcached rewrites a number that got
        shorter after incr/decr in place and pads it with spaces, and protocol.txt says
        clients must not rely on the padding being there or not; the block is compared
        without the spaces (and its length word adjusted).
    """
    ttls, cas = [], []
    out = []
    for line, block in reply_items(reply):
        words = line.split(b" ")
        if words[0] == b"VERSION":
            words = [b"VERSION", b"<version>"]
        elif words[0] == b"VALUE" and len(words) == 5:
            cas.append(words[4])
            words[4] = b"<cas>"
        elif words[0] in META_CODES:
            for i in range(1, len(words)):
                if re.fullmatch(rb"c\d+", words[i]) and words[i] != b"c0":
                    cas.append(words[i][1:])
                    words[i] = b"c<cas>"
                elif re.fullmatch(rb"[tl]\d+", words[i]):
                    ttls.append(int(words[i][1:]))
                    words[i] = words[i][:1] + b"<seconds>"
        elif words[0] == b"ME":
            for i in range(2, len(words)):
                name, _, value = words[i].partition(b"=")
                if name == b"cas":
                    cas.append(value)
                    words[i] = b"cas=<cas>"
                elif name == b"la" or (name == b"exp" and value != b"-1"):
                    # memcached's exp is minus the remaining TTL, -1 without one.
                    ttls.append(abs(int(value)))
                    words[i] = name + (b"=-" if value.startswith(b"-") else b"=") + b"<seconds>"
                elif name in (b"cls", b"size"):
                    words[i] = name + b"=<slab>"
        if block is not None and re.fullmatch(rb"\d+ +", block):
            block = block.rstrip(b" ")
            words[3 if words[0] == b"VALUE" else 1] = b"%d" % len(block)
        out.append(b" ".join(words) + b"\r\n" + (b"" if block is None else block + b"\r\n"))
    return b"".join(out), ttls, cas


class SessionPeer:
    """One server's side of the session: its connection and the last cas it returned."""

    def __init__(self, name, host, port):
        self.name = name
        self.host = host
        self.port = port
        self.conn = McConnection(host, port, timeout=10)
        self.last_cas = None

    def run(self, template):
        """Sends one request; returns its normalised reply, TTLs, and whether it closed."""
        request = expand(template, self.last_cas)
        closed = False
        own_mn = sum(1 for line in request.split(b"\n") if re.fullmatch(rb"mn( .*)?\r?", line))
        try:
            reply = self.conn.call(request, own_mn)
        except McClosed as e:
            reply = e.received
            closed = True
            self.conn.close()
            self.conn = McConnection(self.host, self.port, timeout=10)
        normalised, ttls, cas = normalise(reply)
        if cas:
            self.last_cas = cas[-1]
        return normalised + (b"<connection closed>" if closed else b""), ttls

    def close(self):
        self.conn.close()


def short(data, limit=300):
    return repr(data) if len(data) <= limit else repr(data[:limit]) + f"... ({len(data)} bytes)"


def seconds_match(expected, actual):
    return len(expected) == len(actual) and all(abs(a - b) <= 1 for a, b in zip(expected, actual))


@pytest.mark.damselfly_only
@pytest.mark.parametrize("script", SESSION_FILES)
def test_session_matches_memcached(mc_server, memcached_factory, script):
    reference = memcached_factory()
    expected_side = SessionPeer("memcached", reference.host, reference.mc_port)
    actual_side = SessionPeer("damselfly", mc_server.host, mc_server.mc_port)
    trace = os.environ.get("SESSION_TRACE") == "1"
    mismatches = []
    entries = load_session(script)
    try:
        for number, template, known_difference in entries:
            if sleep_of(template) is not None:
                time.sleep(sleep_of(template))
                continue
            expected, expected_ttls = expected_side.run(template)
            try:
                actual, actual_ttls = actual_side.run(template)
            except OSError as e:  # a timeout: damselfly did not answer; the stream is lost
                mismatches.append(f"line {number}: {template[:120]}\n  memcached: "
                                  f"{short(expected)}\n  damselfly: no reply ({e})")
                break
            if trace:
                print(f"{number}: {template[:120]}\n  memcached {short(expected)}\n"
                      f"  damselfly {short(actual)}")
            same = actual == expected and seconds_match(expected_ttls, actual_ttls)
            if same == known_difference:
                what = "a listed difference is gone" if known_difference else "differs"
                mismatches.append(f"line {number} ({what}): {template[:120]}\n"
                                  f"  memcached: {short(expected)} seconds {expected_ttls}\n"
                                  f"  damselfly: {short(actual)} seconds {actual_ttls}")
    finally:
        expected_side.close()
        actual_side.close()
    assert not mismatches, (f"{len(mismatches)} of {len(entries)} replies differ from "
                            f"memcached's (first {MAX_REPORTED}):\n"
                            + "\n".join(mismatches[:MAX_REPORTED]))


@pytest.mark.parametrize("script", SESSION_FILES)
def test_session_script_is_valid_against_memcached(memcached_factory, script):
    """The script and the normalisation, checked with two memcacheds: every request is
    answered, and the normalised replies do not depend on timing or on the server (known
    differences aside: some show memcached's clock)."""
    a = memcached_factory()
    b = memcached_factory()
    side_a = SessionPeer("a", a.host, a.mc_port)
    side_b = SessionPeer("b", b.host, b.mc_port)
    try:
        for number, template, known_difference in load_session(script):
            if sleep_of(template) is not None:
                time.sleep(sleep_of(template))
                continue
            ra = side_a.run(template)
            rb = side_b.run(template)
            if not known_difference:
                assert ra[0] == rb[0] and seconds_match(ra[1], rb[1]), (number, template, ra, rb)
    finally:
        side_a.close()
        side_b.close()
