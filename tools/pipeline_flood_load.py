#!/usr/bin/env python3
"""Pipelining clients that never read: what they cost a server in resident memory while
they wait, and whether the server gets it back once they leave (issue #21, points 1 and 5).

Against a running server (its port and pid): reads the server's VmRSS, opens N
connections, sends M pipelined requests on each (`GET /metrics` over HTTP with --http,
`INFO` over RESP otherwise) and never reads a reply. While they wait (--hold seconds) it
samples VmRSS every 0.1 s and keeps the peak; then it closes them all (unread replies in
a socket make the close a reset), waits --settle seconds and reads VmRSS again. Prints
one line of JSON:
  {"before_kib": .., "peak_kib": .., "after_kib": .., "per_conn_bytes": ..,
   "returned_pct": .., "connections": N, "requests": M, "sent_all": true}
per_conn_bytes is (peak - before) / N; returned_pct is the share of that growth gone
after the close; sent_all says whether every request reached the server's socket (a
server that stops reading leaves the rest in the client's).

Usage: pipeline_flood_load.py --port P --pid PID [--http] [--connections N]
                              [--requests M] [--hold S] [--settle S]
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


def flood(port, pid, count, requests, http, hold_s, settle_s):
    request = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" if http else b"*1\r\n$4\r\nINFO\r\n"
    payload = request * requests
    before = rss_kib(pid)
    peak = before
    socks = []
    sel = selectors.DefaultSelector()
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.setblocking(False)
        socks.append(s)
        sel.register(s, selectors.EVENT_WRITE, [0])
    # Send every connection's requests as far as the sockets take them; a server that
    # stops reading a connection leaves the rest here, which is the point.
    deadline = time.monotonic() + hold_s
    pending = count
    while time.monotonic() < deadline:
        peak = max(peak, rss_kib(pid))
        if not pending:
            time.sleep(0.1)
            continue
        for key, _ in sel.select(timeout=0.1):
            sent = key.data
            try:
                sent[0] += key.fileobj.send(payload[sent[0]:])
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:  # the server closed it (e.g. a timeout)
                sent[0] = len(payload)
            if sent[0] == len(payload):
                sel.unregister(key.fileobj)
                pending -= 1
    sel.close()
    peak = max(peak, rss_kib(pid))
    for s in socks:
        s.close()
    time.sleep(settle_s)
    after = rss_kib(pid)
    grown = peak - before
    return {
        "before_kib": before,
        "peak_kib": peak,
        "after_kib": after,
        "per_conn_bytes": round(grown * 1024 / count),
        "returned_pct": round(100 * (peak - after) / grown) if grown > 0 else 100,
        "connections": count,
        "requests": requests,
        "sent_all": pending == 0,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--http", action="store_true", help="GET /metrics instead of INFO")
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=4.0)
    parser.add_argument("--settle", type=float, default=5.0)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args.connections + 64
    if soft < want:
        if hard < want:
            sys.exit(f"pipeline_flood_load: needs {want} open files, the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    print(json.dumps(flood(args.port, args.pid, args.connections, args.requests, args.http,
                           args.hold, args.settle)))


if __name__ == "__main__":
    main()
