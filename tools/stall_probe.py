#!/usr/bin/env python3
"""Sends one command and measures how long it holds the server (tools/lazyfree-bench.sh).

usage: stall_probe.py PORT COMMAND [ARG ...]

One process, one thread (no GIL hand-offs in the timings): a connection sends COMMAND
without waiting, and a second connection pings the server back to back for a second
meanwhile. Prints one line:

  reply_ms=R worst_ping_ms=W pings=N

R is when COMMAND's reply had arrived (checked between pings, so to within one ping);
W is the slowest PING round trip, which shows how long the server (its one thread)
stopped answering others. Exits 1 when the reply is an error or does not come.
"""

import socket
import sys
import time


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        arg = arg.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(out)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    port, command = int(sys.argv[1]), sys.argv[2:]
    runner = socket.create_connection(("127.0.0.1", port))
    pinger = socket.create_connection(("127.0.0.1", port))
    for _ in range(1000):  # warm up the connection and the caches
        pinger.sendall(b"PING\r\n")
        pinger.recv(64)
    start = time.perf_counter()
    runner.sendall(encode(command))
    runner.setblocking(False)
    reply, reply_ms, worst, pings = b"", None, 0.0, 0
    while time.perf_counter() < start + 1.0 or reply_ms is None:
        if time.perf_counter() > start + 60:
            sys.exit("stall_probe: no reply within 60 s")
        sent = time.perf_counter()
        pinger.sendall(b"PING\r\n")
        pinger.recv(64)
        worst = max(worst, time.perf_counter() - sent)
        pings += 1
        if reply_ms is None:
            try:
                reply += runner.recv(4096)
            except BlockingIOError:
                pass
            if reply.endswith(b"\r\n"):
                reply_ms = (time.perf_counter() - start) * 1000
    if reply.startswith(b"-"):
        sys.exit(f"stall_probe: {reply.decode(errors='replace').strip()}")
    print(f"reply_ms={reply_ms:.2f} worst_ping_ms={worst * 1000:.2f} pings={pings}")


if __name__ == "__main__":
    main()
