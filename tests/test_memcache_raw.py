"""Memcache text protocol on raw sockets: errors, limits, framing (issue #6).

These are the cases where clients and servers break: oversized keys and values, data blocks
of the wrong length, requests split into 1-byte writes, binary values, pipelines. Expected
bytes are memcached 1.6.18's (DAMSELFLY_TEST_TARGET=memcached validates them).
"""

import os
import socket
import time

BAD_FORMAT = b"CLIENT_ERROR bad command line format\r\n"
TOO_LARGE = b"SERVER_ERROR object too large for cache\r\n"
BAD_CHUNK = b"CLIENT_ERROR bad data chunk\r\n"
ITEM_SIZE_MAX = 1 << 20  # memcached's default -I, and damselfly's default limit

K250 = b"k" * 250
K251 = b"k" * 251


def test_key_length_limit(mc_server):
    raw = mc_server.mc_raw()
    assert raw.call(b"set %s 1 0 1\r\nx\r\n" % K250) == b"STORED\r\n"
    assert raw.call(b"get %s\r\n" % K250) == b"VALUE %s 1 1\r\nx\r\nEND\r\n" % K250
    for request in (b"get %s\r\n", b"get a %s b\r\n", b"gets %s\r\n", b"gat 0 %s\r\n",
                    b"delete %s\r\n", b"incr %s 1\r\n", b"decr %s 1\r\n",
                    b"touch %s 1\r\n", b"mg %s v\r\n", b"md %s\r\n", b"ma %s\r\n"):
        assert raw.call(request % K251) == BAD_FORMAT, request
    # A storage command with a bad key does not swallow its data block: memcached reads
    # the block as the next command line, which is unknown.
    assert raw.call(b"set %s 0 0 1\r\nx\r\n" % K251) == BAD_FORMAT + b"ERROR\r\n"
    assert raw.call(b"ms %s 1\r\nx\r\n" % K251) == BAD_FORMAT + b"ERROR\r\n"
    assert raw.call(b"get %s\r\n" % K250) == b"VALUE %s 1 1\r\nx\r\nEND\r\n" % K250


def test_get_with_a_bad_key_sends_no_partial_items(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"set a 0 0 1\r\nA\r\n")
    assert raw.call(b"get a %s a\r\n" % K251) == BAD_FORMAT


def test_value_over_the_item_size_limit_is_swallowed(mc_server):
    raw = mc_server.mc_raw()
    old = b"VALUE k 0 3\r\nold\r\nEND\r\n"
    for size in (ITEM_SIZE_MAX + 1, 2 * ITEM_SIZE_MAX):
        # The whole data block is dropped: the next command on the connection works.
        # A "set" that fails this way also deletes the old value (memcached: "avoid stale
        # data persisting in cache because we failed alloc").
        raw.call(b"set k 0 0 3\r\nold\r\n")
        request = b"set k 0 0 %d\r\n%s\r\nget k\r\n" % (size, b"v" * size)
        assert raw.call(request) == TOO_LARGE + b"END\r\n", size
    size = ITEM_SIZE_MAX + 1
    block = b"v" * size
    # The other storage commands keep the old value.
    raw.call(b"set k 0 0 3\r\nold\r\n")
    for line in (b"add k 0 0 %d\r\n", b"replace k 0 0 %d\r\n", b"append k 0 0 %d\r\n",
                 b"prepend k 0 0 %d\r\n", b"cas k 0 0 %d 1\r\n"):
        assert raw.call(line % size + block + b"\r\nget k\r\n") == TOO_LARGE + old, line
    # noreply hides the error too.
    assert raw.call(b"set k 0 0 %d noreply\r\n%s\r\n" % (size, block)) == b""
    assert raw.call(b"get k\r\n") == b"END\r\n"
    # Meta set deletes the old value like set, in every mode; errors are returned even
    # with q, and no flag is echoed.
    for flags in (b"T0", b"q", b"k O1 c", b"ME", b"MA", b"MP", b"MR", b"I C1"):
        raw.call(b"set k 0 0 3\r\nold\r\n")
        assert raw.call(b"ms k %d %s\r\n%s\r\n" % (size, flags, block)) == TOO_LARGE, flags
        assert raw.call(b"get k\r\n") == b"END\r\n"
    raw.call(b"set abc 0 0 3\r\nold\r\n")
    assert raw.call(b"ms YWJj %d b\r\n%s\r\nget abc\r\n" % (size, block)) == TOO_LARGE + b"END\r\n"


def test_value_over_the_limit_sent_in_pieces(mc_server):
    raw = mc_server.mc_raw()
    size = ITEM_SIZE_MAX + 100
    raw.send(b"set k 0 0 %d\r\n" % size)
    block = b"\r\n" * (size // 2) + b"\r\n"  # a block that looks like empty lines
    for i in range(0, len(block), 65536):
        raw.send(block[i:i + 65536])
        time.sleep(0.001)
    assert raw.call(b"") == TOO_LARGE
    assert raw.call(b"get k\r\n") == b"END\r\n"


def test_large_value_round_trips(mc_server):
    raw = mc_server.mc_raw()
    value = os.urandom(1_000_000)  # under the limit with any item header
    assert raw.call(b"set big 3 0 %d\r\n%s\r\n" % (len(value), value)) == b"STORED\r\n"
    assert raw.call(b"get big\r\n") == b"VALUE big 3 %d\r\n%s\r\nEND\r\n" % (len(value), value)
    c = mc_server.mc_client()
    assert c.get(b"big") == value


def test_unknown_commands(mc_server):
    raw = mc_server.mc_raw()
    for line in (b"bogus\r\n", b"GET a\r\n", b"\r\n", b"get\r\n", b"gets\r\n", b"gat\r\n",
                 b"set a 0 0\r\n", b"incr a\r\n", b"delete\r\n", b"touch a\r\n", b"mg\r\n",
                 b"verbosity\r\n", b"MN\r\n"):
        assert raw.call(line) == b"ERROR\r\n", line
    assert raw.call(b"version\r\n").startswith(b"VERSION ")


def test_malformed_numbers(mc_server):
    raw = mc_server.mc_raw()
    # The data block after a malformed storage line is read as a command: "ERROR".
    for line in (b"set a -1 0 1\r\n", b"set a abc 0 1\r\n", b"set a 0 abc 1\r\n",
                 b"set a 0 0 abc\r\n", b"set a 0 0 -1\r\n", b"cas a 0 0 1 abc\r\n",
                 b"ms a -1\r\n", b"ms a abc\r\n", b"ms a 1x\r\n", b"ms a -1 q\r\n"):
        assert raw.call(line + b"x\r\n") == BAD_FORMAT + b"ERROR\r\n", line
    # noreply hides the error, not the ERROR of the block read as a command.
    assert raw.call(b"set a 0 0 -1 noreply\r\nx\r\n") == b"ERROR\r\n"
    bad_exptime = b"CLIENT_ERROR invalid exptime argument\r\n"
    assert raw.call(b"touch a abc\r\n") == bad_exptime
    assert raw.call(b"gat abc a\r\n") == bad_exptime
    assert raw.call(b"flush_all abc\r\n") == bad_exptime
    assert raw.call(b"verbosity abc\r\n") == BAD_FORMAT


def test_data_block_of_the_wrong_length(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"set k 0 0 3\r\nold\r\n")
    # One byte too many: the 3 + 2 bytes after the line do not end in "\r\n"; what is left
    # ("\n") is an empty command line.
    assert raw.call(b"set k 0 0 3\r\nabcd\r\n") == BAD_CHUNK + b"ERROR\r\n"
    assert raw.call(b"get k\r\n") == b"VALUE k 0 3\r\nold\r\nEND\r\n"
    # One byte short: the block takes the first byte of what follows ("x"), and the rest
    # of that line is an unknown command.
    assert raw.call(b"set k 0 0 3\r\nab\r\nxyz\r\n") == BAD_CHUNK + b"ERROR\r\n"
    assert raw.call(b"get k\r\n") == b"VALUE k 0 3\r\nold\r\nEND\r\n"
    # The same for meta set.
    assert raw.call(b"ms k 3\r\nabcd\r\n") == BAD_CHUNK + b"ERROR\r\n"
    assert raw.call(b"get k\r\n") == b"VALUE k 0 3\r\nold\r\nEND\r\n"


def test_request_split_into_one_byte_writes(mc_server):
    raw = mc_server.mc_raw()
    value = b"a\r\nb\x00c"
    requests = (b"set k 7 0 %d\r\n%s\r\n" % (len(value), value) + b"get k\r\n"
                + b"incr n 1\r\nset n 0 0 2\r\n41\r\nincr n 1\r\n"
                + b"mg k v f\r\nbogus\r\nmn\r\n")
    for i in range(len(requests)):
        raw.send(requests[i:i + 1])
    expected = (b"STORED\r\n" + b"VALUE k 7 %d\r\n%s\r\nEND\r\n" % (len(value), value)
                + b"NOT_FOUND\r\nSTORED\r\n42\r\n"
                + b"VA %d f7\r\n%s\r\n" % (len(value), value) + b"ERROR\r\n")
    assert raw.read_until_mn() == expected


def test_lf_only_line_endings(mc_server):
    raw = mc_server.mc_raw()
    # Command lines may end with "\n" alone; data blocks still end with "\r\n".
    raw.send(b"set k 0 0 1\nx\r\nget k\nmn\n")
    assert raw.read_until_mn() == b"STORED\r\nVALUE k 0 1\r\nx\r\nEND\r\n"


def test_binary_values(mc_server):
    raw = mc_server.mc_raw()
    every_byte = bytes(range(256))
    tricky = b"\r\nEND\r\nVALUE x 0 1\r\n\r\n"
    for key, value in ((b"bin", every_byte), (b"tricky", tricky), (b"nul", b"\x00" * 10)):
        assert raw.call(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(value), value)) == b"STORED\r\n"
        assert raw.call(b"get %s\r\n" % key) == (b"VALUE %s 0 %d\r\n%s\r\nEND\r\n"
                                                 % (key, len(value), value))
    c = mc_server.mc_client()
    assert c.get(b"bin") == every_byte
    assert c.get_many([b"bin", b"tricky"]) == {b"bin": every_byte, b"tricky": tricky}
    assert raw.call(b"append bin 0 0 2\r\n\r\n\r\n") == b"STORED\r\n"
    assert c.get(b"bin") == every_byte + b"\r\n"


def test_pipelined_requests_reply_in_order(mc_server):
    raw = mc_server.mc_raw()
    requests = []
    expected = []
    for i in range(200):
        key = b"key:%d" % i
        value = b"value-%d" % i
        requests.append(b"set %s %d 0 %d\r\n%s\r\n" % (key, i, len(value), value))
        expected.append(b"STORED\r\n")
        requests.append(b"get %s missing\r\n" % key)
        expected.append(b"VALUE %s %d %d\r\n%s\r\nEND\r\n" % (key, i, len(value), value))
        if i % 10 == 0:
            requests.append(b"delete %s noreply\r\n" % key)  # no reply
            requests.append(b"mg %s v\r\n" % key)
            expected.append(b"EN\r\n")
            requests.append(b"bogus\r\n")
            expected.append(b"ERROR\r\n")
        else:
            requests.append(b"mg %s f v\r\n" % key)
            expected.append(b"VA %d f%d\r\n%s\r\n" % (len(value), i, value))
    requests.append(b"get " + b" ".join(b"key:%d" % i for i in range(1, 200, 10)) + b"\r\n")
    expected.append(b"".join(b"VALUE key:%d %d %d\r\nvalue-%d\r\n" % (i, i, len(b"value-%d" % i), i)
                             for i in range(1, 200, 10)) + b"END\r\n")
    assert raw.call(b"".join(requests)) == b"".join(expected)


def test_many_keys_in_one_get(mc_server):
    raw = mc_server.mc_raw()
    raw.call(b"set a 0 0 1\r\nA\r\n")
    keys = b" ".join([b"a", b"miss"] * 1000)  # a 7 kB line: longer than other lines may be
    assert raw.call(b"get %s\r\n" % keys) == b"VALUE a 0 1\r\nA\r\n" * 1000 + b"END\r\n"


def test_overlong_command_line_closes_the_connection(mc_server):
    raw = mc_server.mc_raw()
    raw.send(b"x" * 4096)  # no newline; not a get
    assert raw.read_until_closed() == b""
    assert mc_server.mc_raw().call(b"version\r\n").startswith(b"VERSION ")


def test_client_that_disconnects_mid_request(mc_server):
    for partial in (b"set k 0 0 10\r\nabc", b"get k", b"set k 0 0 %d\r\n" % (ITEM_SIZE_MAX + 1)):
        s = socket.create_connection((mc_server.host, mc_server.mc_port))
        s.sendall(partial)
        s.close()
    raw = mc_server.mc_raw()
    assert raw.call(b"get k\r\n") == b"END\r\n"


def test_append_past_the_item_size_limit_is_not_stored(mc_server):
    """memcached cannot allocate the joined item: NOT_STORED (NS for ms), item unchanged."""
    raw = mc_server.mc_raw()
    half = b"x" * 700000
    assert raw.call(b"set o 0 0 %d\r\n" % len(half) + half + b"\r\n") == b"STORED\r\n"
    assert raw.call(b"append o 0 0 %d\r\n" % len(half) + half + b"\r\n") == b"NOT_STORED\r\n"
    assert raw.call(b"ms o %d MA\r\n" % len(half) + half + b"\r\n") == b"NS\r\n"
    assert raw.call(b"mg o s\r\n") == b"HD s700000\r\n"
