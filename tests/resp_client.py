"""A tiny raw-socket RESP client for the integration tests.

redis-py 4.x has no RESP3 and post-processes many replies (it strips the "ERR " prefix of
errors, turns INFO into a dict, SET into a bool, ...). The tests that care about exact
bytes on the wire use this client instead: it sends commands as RESP multibulk (or any raw
bytes), and parses RESP2 and RESP3 replies into plain Python values:

    +simple      -> str                      $bulk / =verbatim -> bytes (verbatim: Verbatim)
    :int, (big   -> int                      ,double           -> float
    #t / #f      -> bool                     _ , $-1 , *-1     -> None
    *array, >push-> list (push: Push)        ~set              -> RespSet (a list)
    %map         -> dict                     -error / !blob    -> RespError (returned, not raised)
    |attribute   -> skipped, the value it annotates is returned

It can also hand back the raw bytes of one reply (read_raw_reply) or everything the server
sends until it closes the connection (read_until_closed).
"""

import socket
import time


class RespError(Exception):
    """An error reply. Compares equal to another RespError with the same full text."""

    def __init__(self, message):
        super().__init__(message)
        self.message = message

    def __eq__(self, other):
        return isinstance(other, RespError) and other.message == self.message

    __hash__ = None

    def __repr__(self):
        return f"RespError({self.message!r})"

    def __str__(self):
        return self.message


class Verbatim(bytes):
    """A RESP3 verbatim string; .format holds its 3-letter type ("txt", "mkd")."""

    format = ""


class Push(list):
    """A RESP3 out-of-band push message."""


class RespSet(list):
    """A RESP3 set (kept as a list: its elements need not be hashable)."""


class ConnectionClosed(Exception):
    """The server closed the connection before a full reply arrived."""


def encode_command(*args):
    """Returns the RESP multibulk encoding of one command."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        if isinstance(arg, bytes):
            data = arg
        elif isinstance(arg, str):
            data = arg.encode()
        elif isinstance(arg, (int, float)):
            data = repr(arg).encode() if isinstance(arg, float) else str(arg).encode()
        else:
            raise TypeError(f"cannot encode {type(arg).__name__} as a RESP argument")
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


class RawConnection:
    """One TCP connection speaking RESP. Not thread-safe."""

    def __init__(self, host, port, timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buf = bytearray()
        self._pos = 0
        self._mark = None  # start of the reply whose raw bytes are being captured
        self.closed = False

    # ----------------------------------------------------------------- sending

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, *args):
        self.sock.sendall(encode_command(*args))

    def send_many(self, commands):
        """Sends every command (a sequence of argument tuples) in one write."""
        self.sock.sendall(b"".join(encode_command(*c) for c in commands))

    def __call__(self, *args):
        """Sends one command and returns its parsed reply."""
        self.send(*args)
        return self.read()

    execute = __call__

    # ----------------------------------------------------------------- reading

    def _fill(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            self.closed = True
            raise ConnectionClosed("connection closed by the server")
        keep_from = self._pos if self._mark is None else self._mark
        if keep_from > (1 << 20):
            del self._buf[:keep_from]
            self._pos -= keep_from
            if self._mark is not None:
                self._mark = 0
        self._buf += chunk

    def _line(self):
        while True:
            idx = self._buf.find(b"\r\n", self._pos)
            if idx >= 0:
                line = bytes(self._buf[self._pos : idx])
                self._pos = idx + 2
                return line
            self._fill()

    def _exact(self, n):
        while len(self._buf) - self._pos < n + 2:
            self._fill()
        data = bytes(self._buf[self._pos : self._pos + n])
        if self._buf[self._pos + n : self._pos + n + 2] != b"\r\n":
            raise ValueError(f"bulk payload not followed by CRLF: {bytes(self._buf[self._pos:self._pos+n+2])!r}")
        self._pos += n + 2
        return data

    def read(self):
        """Parses and returns the next reply."""
        line = self._line()
        if not line:
            raise ValueError("empty reply line")
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            return RespError(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"(":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"!":
            return RespError(self._exact(int(rest)).decode(errors="replace"))
        if kind == b"=":
            data = self._exact(int(rest))
            v = Verbatim(data[4:])
            v.format = data[:3].decode()
            return v
        if kind == b"_":
            return None
        if kind == b"#":
            return rest == b"t"
        if kind == b",":
            return float(rest)
        if kind in (b"*", b">", b"~"):
            n = int(rest)
            if n < 0:
                return None
            items = [self.read() for _ in range(n)]
            if kind == b">":
                return Push(items)
            if kind == b"~":
                return RespSet(items)
            return items
        if kind == b"%":
            n = int(rest)
            result = {}
            for _ in range(n):
                k = self.read()
                if isinstance(k, list):
                    k = tuple(k)
                result[k] = self.read()
            return result
        if kind == b"|":
            n = int(rest)
            for _ in range(2 * n):
                self.read()
            return self.read()
        raise ValueError(f"unknown RESP type byte in line {line!r}")

    def read_raw_reply(self):
        """Returns the exact bytes of the next reply."""
        self._mark = self._pos
        try:
            self.read()
            return bytes(self._buf[self._mark : self._pos])
        finally:
            self._mark = None

    def raw_call(self, *args):
        """Sends one command and returns the raw bytes of its reply."""
        self.send(*args)
        return self.read_raw_reply()

    def read_until_closed(self, timeout=5.0):
        """Returns every byte the server sends until it closes the connection.

        Raises TimeoutError when the connection is still open after `timeout` seconds.
        """
        deadline = time.monotonic() + timeout
        data = bytes(self._buf[self._pos :])
        self._buf.clear()
        self._pos = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"connection still open; received so far: {data[:300]!r}")
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                continue
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                self.closed = True
                return data
            data += chunk

    def recv_available(self, wait=0.2):
        """Returns the bytes that arrive within `wait` seconds (b"" when none)."""
        data = bytes(self._buf[self._pos :])
        self._buf.clear()
        self._pos = 0
        deadline = time.monotonic() + wait
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return data
            self.sock.settimeout(remaining)
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                return data
            if not chunk:
                self.closed = True
                return data
            data += chunk

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
