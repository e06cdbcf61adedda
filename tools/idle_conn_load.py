#!/usr/bin/env python3
"""Idle-connection load for tools/idle-conn-bench.sh: measures what idle clients cost a
server in resident memory, and whether it gets that memory back when they leave.

Against a running server (its port and pid): reads the server's VmRSS, opens N
connections, sends one PING on each and reads its +PONG, waits SETTLE seconds with all of
them idle, reads VmRSS again, closes them all, waits SETTLE seconds and reads VmRSS a third
time. Prints one line of JSON:
  {"before_kib": .., "idle_kib": .., "closed_kib": .., "per_conn_bytes": ..,
   "returned_pct": .., "connections": N}
per_conn_bytes is (idle - before) / N; returned_pct is the share of that growth gone
after the close.

Usage: idle_conn_load.py --port P --pid PID [--connections N] [--settle S]
"""

import argparse
import json
import resource
import selectors
import socket
import sys
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def open_idle(port, count, timeout_s):
    """Opens `count` connections, each of which has sent PING and received +PONG."""
    socks = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
        s.setblocking(False)
        socks.append(s)
    sel = selectors.DefaultSelector()
    for s in socks:
        s.send(b"PING\r\n")
        sel.register(s, selectors.EVENT_READ, bytearray())
    waiting = len(socks)
    deadline = time.monotonic() + timeout_s
    while waiting:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{waiting} connections got no +PONG in {timeout_s}s")
        for key, _ in sel.select(timeout=1.0):
            data = key.fileobj.recv(64)
            if not data:
                raise RuntimeError("server closed a connection")
            key.data.extend(data)
            if key.data.endswith(b"\r\n"):
                if bytes(key.data) != b"+PONG\r\n":
                    raise RuntimeError(f"unexpected reply {bytes(key.data)!r}")
                sel.unregister(key.fileobj)
                waiting -= 1
    sel.close()
    return socks


def measure(port, pid, count, settle_s, timeout_s=60.0):
    before = rss_kib(pid)
    socks = open_idle(port, count, timeout_s)
    time.sleep(settle_s)
    idle = rss_kib(pid)
    for s in socks:
        s.close()
    time.sleep(settle_s)
    closed = rss_kib(pid)
    grown = idle - before
    return {
        "before_kib": before,
        "idle_kib": idle,
        "closed_kib": closed,
        "per_conn_bytes": round(grown * 1024 / count),
        "returned_pct": round(100 * (idle - closed) / grown) if grown > 0 else 100,
        "connections": count,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--connections", type=int, default=10000)
    parser.add_argument("--settle", type=float, default=3.0)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args.connections + 64
    if soft < want:
        if hard < want:
            sys.exit(f"idle_conn_load: needs {want} open files, the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    print(json.dumps(measure(args.port, args.pid, args.connections, args.settle)))


if __name__ == "__main__":
    main()
