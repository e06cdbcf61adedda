#!/usr/bin/env python3
"""Snapshots: damselfly against redis-server 7.0, side by side, one server at a time.

For each server (damselfly --proactor_threads=THREADS, or redis-server, pinned to
SERVER_CPUS): start it fresh in a temporary directory, load KEYS keys of SIZE bytes of
random printable text (tools/value-gen.py text, sent by redis-cli --pipe pinned to
LOAD_CPUS: SET-loaded, not DEBUG POPULATE), then run BGSAVE while a steady load of RATE
SETs per second (batches of 50 every 2.5 ms, over the same keys) runs, sampling every 5 ms
the resident memory of the server *and its children* (redis-server forks). Reports:
  rss_before   RSS once loaded (MiB)
  peak_ratio   the highest sampled RSS sum during the save / rss_before
  save_s       BGSAVE until INFO says rdb_bgsave_in_progress:0
  p99_ms       the 99th percentile latency of the SET batches during the save
  file_mb      dump.rdb's size
  load_s       a restart that loads the file: until PING answers PONG
The issue's targets (#18): peak_ratio at most 1.01 for damselfly (redis-server's fork
peaks near 2), save_s at most redis-server's with one thread.

Usage: tools/snapshot-bench.py [--keys N] [--size B] [--rate R] [--rounds K]
       [--servers damselfly,redis,damselfly2] [--binary build-opt/damselfly]
Prints a markdown table per round and the medians.
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    """VmRSS of pid plus that of its children (a forked save), in KiB."""
    total = 0
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            pids += [int(p) for p in f.read().split()]
    except OSError:
        pass
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


class Conn:
    """A minimal RESP client: enough for INFO, BGSAVE, PING and pipelined SETs."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self._line()
        if line[:1] == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 16)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if line[:1] == b"-":
            raise RuntimeError(line.decode())
        return line[1:]

    def call(self, *args):
        self.send([args])
        return self.reply()

    def send(self, commands):
        out = []
        for args in commands:
            out.append(b"*%d\r\n" % len(args))
            for a in args:
                a = a if isinstance(a, bytes) else str(a).encode()
                out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        self.sock.sendall(b"".join(out))

    def info(self, section):
        text = self.call("INFO", section).decode()
        return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)


def start_server(kind, port, workdir, args):
    cpus = args.server_cpus
    if kind == "redis":
        cmd = ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
               "--dir", workdir]
    else:
        threads = 2 if kind == "damselfly2" else 1
        cmd = [os.path.abspath(args.binary), f"--port={port}", f"--proactor_threads={threads}",
               "--logtostderr=0"]
        if threads == 2:
            cpus = f"{cpus},{args.load_cpus}"
    proc = subprocess.Popen(["taskset", "-c", cpus] + cmd, cwd=workdir,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    start = time.monotonic()
    while True:
        try:
            c = Conn(port)
            if c.call("PING") == b"PONG":
                return proc, c, time.monotonic() - start
        except (OSError, RuntimeError, ConnectionError):
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"{kind} exited with {proc.returncode}")
        time.sleep(0.01)


def fill(port, args):
    gen = subprocess.Popen([sys.executable, os.path.join(HERE, "value-gen.py"), "text",
                            str(args.size), "0", str(args.keys)], stdout=subprocess.PIPE)
    subprocess.run(["taskset", "-c", args.load_cpus, "redis-cli", "-p", str(port), "--pipe"],
                   stdin=gen.stdout, stdout=subprocess.DEVNULL, check=True)
    gen.wait()


def steady_load(port, args, stop, latencies):
    """RATE SETs a second in batches of 50, until stop is set; records batch latencies."""
    c = Conn(port)
    value = b"y" * args.size
    interval = 50 / args.rate
    n = 0
    next_at = time.monotonic()
    while not stop.is_set():
        batch = [("SET", f"key:{(n + i) * 7919 % args.keys}", value) for i in range(50)]
        n += 50
        t0 = time.monotonic()
        c.send(batch)
        for _ in batch:
            c.reply()
        latencies.append(time.monotonic() - t0)
        next_at += interval
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def measure(kind, args):
    workdir = tempfile.mkdtemp(prefix=f"snapbench-{kind}-")
    port = free_port()
    proc, c, _ = start_server(kind, port, workdir, args)
    try:
        fill(port, args)
        assert int(c.call("DBSIZE")) == args.keys
        time.sleep(1)
        rss_before = rss_kib(proc.pid)
        stop, latencies = threading.Event(), []
        loader = threading.Thread(target=steady_load, args=(port, args, stop, latencies))
        loader.start()
        time.sleep(0.5)
        latencies.clear()
        peak = rss_before
        t0 = time.monotonic()
        c.call("BGSAVE")
        while True:
            peak = max(peak, rss_kib(proc.pid))
            if c.info("persistence").get("rdb_bgsave_in_progress") == "0":
                break
            time.sleep(0.005)
        save_s = time.monotonic() - t0
        stop.set()
        loader.join()
        status = c.info("persistence").get("rdb_last_bgsave_status")
        if status != "ok":
            raise RuntimeError(f"{kind}: BGSAVE status {status}")
        lat = sorted(latencies)
        p99 = lat[int(len(lat) * 0.99)] * 1000 if lat else float("nan")
        file_mb = os.path.getsize(os.path.join(workdir, "dump.rdb")) / 2**20
    finally:
        try:
            c.send([("SHUTDOWN", "NOSAVE")])  # no reply: the connection closes
        except OSError:
            pass
        proc.wait(timeout=60)
    # The restart loads the file.
    proc, c, load_s = start_server(kind, port, workdir, args)
    loaded = int(c.call("DBSIZE"))
    try:
        c.send([("SHUTDOWN", "NOSAVE")])
    except OSError:
        pass
    proc.wait(timeout=60)
    shutil.rmtree(workdir, ignore_errors=True)
    if loaded != args.keys:
        raise RuntimeError(f"{kind}: loaded {loaded} keys of {args.keys}")
    return {"rss_before": rss_before / 1024, "peak_ratio": peak / rss_before, "save_s": save_s,
            "p99_ms": p99, "file_mb": file_mb, "load_s": load_s}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--keys", type=int, default=5_000_000)
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--rate", type=int, default=20_000)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--servers", default="damselfly,redis")
    p.add_argument("--binary", default="build-opt/damselfly")
    p.add_argument("--server-cpus", default="0")
    p.add_argument("--load-cpus", default="1")
    args = p.parse_args()
    fields = ["rss_before", "peak_ratio", "save_s", "p99_ms", "file_mb", "load_s"]
    results = {s: [] for s in args.servers.split(",")}
    for r in range(args.rounds):
        order = list(results) if r % 2 == 0 else list(reversed(results))
        for kind in order:
            m = measure(kind, args)
            results[kind].append(m)
            print(f"round {r + 1} {kind}: " + " ".join(f"{k}={m[k]:.3f}" for k in fields),
                  file=sys.stderr, flush=True)
    print(f"\n{args.keys} keys x {args.size} B of random text, SET load {args.rate}/s during "
          f"BGSAVE, {args.rounds} round(s); medians (per round in brackets)\n")
    print("| server | " + " | ".join(fields) + " |")
    print("|---|" + "---:|" * len(fields))
    for kind, rounds in results.items():
        cells = []
        for k in fields:
            values = [m[k] for m in rounds]
            cell = f"{statistics.median(values):.3f}"
            if len(values) > 1:
                cell += " (" + ", ".join(f"{v:.3f}" for v in values) + ")"
            cells.append(cell)
        print(f"| {kind} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
