#!/usr/bin/python3
"""Generates docs/commands.md and docs/flags.md from a damselfly binary, so they cannot
drift from the code: commands come from the server's command registry (COMMAND DOCS and
COMMAND INFO over RESP), flags from the binary's --helpxml.

  tools/gen-docs.py [--binary build-opt/damselfly]          rewrite both files
  tools/gen-docs.py [--binary build-opt/damselfly] --check  exit 1 if either is stale

The notes on semantics that differ from Redis live in NOTES below; --check also fails
when a note names a command the registry does not have.
"""

import argparse
import os
import socket
import subprocess
import sys
import time
import re
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Where a command's behaviour differs from Redis 7.0's. Keys: "command" or
# "command|subcommand", lower case.
NOTES = {
    "acl|list": "Rules naming single commands come in name order (Redis: its hash table's "
                "order, which changes from one start to the next).",
    "acl|setuser": "skip-sanitize-payload and sanitize-payload are kept and shown; RESTORE "
                   "checks every payload whatever the user. The memcached port's clients "
                   "authenticate with requirepass, not as ACL users.",
    "memory|stats": "allocator.allocated and .active are used_memory (what the shards hold), "
                    ".resident the RSS; startup.allocated and clients.normal are 0 (client "
                    "buffers show in RSS only, as in INFO).",
    "memory|malloc-stats": "mimalloc's statistics report.",
    "replicaof": "Follows a redis-server or damselfly master; the replica expires keys and "
                 "evicts on its own (docs/architecture.md, \"Following a master\").",
    "slaveof": "As REPLICAOF.",
    "wait": "Counts the replicas that acknowledged everything written so far (not only the "
            "calling client's writes).",
    "psync": "Continues from the backlog or sends a full resync (a disk-based snapshot); "
             "the stream carries a MULTI/EXEC, a script or a write spanning shards as one "
             "unit.",
    "sync": "A full resync (a disk-based snapshot), then the stream.",
    "failover": "With replicas, refused: none can take over from damselfly.",
    "module|load": "damselfly loads no modules: refused with an error.",
    "module|loadex": "damselfly loads no modules: refused with an error.",
    "module|unload": "No module is ever loaded: refused with an error.",
    "dump": "Redis 7.0's payload (RDB 10 + CRC64), byte for byte where both servers keep the "
            "same encoding; a small set of strings (listpack, as Redis 7.2) is written as a "
            "plain SET, which Redis 7.0 can load.",
    "restore": "Payloads of Redis 7.0 and 6.x (RDB 9 encodings) load.",
    "debug": "POPULATE (also TYPE and ELEMENTS), OBJECT, DIGEST and DIGEST-VALUE (Redis's "
             "digests; keys past their deadline not yet reclaimed are left out), RELOAD, "
             "PROTOCOL, SET-ACTIVE-EXPIRE, KEYSHARD, SLEEP (stops the thread running it, not "
             "the whole server) and HELP.",
    "latency": "Events recorded: command, fast-command, expire-cycle (each thread keeps its "
               "own samples; LATENCY merges them).",
    "latency|histogram": "Counts come from damselfly's histograms (1/32 buckets): a duration "
                         "less than 1/128 above a power of two is counted at the next label, "
                         "where Redis counts it at that power's.",
    "object|idletime": "Exact to the second under 17 minutes idle, then to the minute, the "
                       "hour, the day (13 bits per key: src/core/access_stamp.h).",
    "keys": "Returns at most --keys_output_limit keys.",
    "unlink": "A large hash, set or sorted set is freed after the reply on its shard's own "
              "thread, 4096 elements per step between other work; a large list or stream in "
              "one step.",
    "flushall": "ASYNC frees the keys after the reply on each shard's own thread, in steps "
                "between other work.",
    "flushdb": "ASYNC: as FLUSHALL ASYNC.",
    "client|no-evict": "Stored and shown as flag e in CLIENT LIST; no effect until client "
                       "eviction exists.",
    "client|pause": "Holds RESP clients only, not the memcached port. Held clients resume in "
                    "arrival order per proactor thread.",
    "client|list": "oll and omem are 0 and obl counts every pending reply byte (one reply "
                   "buffer, no reply list); rbp is 0.",
    "client|reply": "OFF inside MULTI drops EXEC's whole reply (Redis sends its array header "
                    "alone).",
}

# The memcached text protocol on --memcached_port (database 0). Its commands are parsed by
# src/facade/memcache_parser.cc, not the RESP registry, so they are listed here.
MEMCACHE_COMMANDS = [
    ("set / add / replace / append / prepend", "<key> <flags> <exptime> <bytes> [noreply]",
     "Store commands; append/prepend keep the item's flags and expiry."),
    ("cas", "<key> <flags> <exptime> <bytes> <cas unique> [noreply]", "Store if unchanged since gets."),
    ("get / gets", "<key>*", "One or more keys; gets adds the cas unique."),
    ("gat / gats", "<exptime> <key>*", "Get and touch."),
    ("touch", "<key> <exptime> [noreply]", "Update the expiry."),
    ("incr / decr", "<key> <delta> [noreply]",
     "64-bit unsigned: incr wraps, decr stops at 0. Results are never space-padded."),
    ("delete", "<key> [noreply]", ""),
    ("flush_all", "[delay] [noreply]", "Empties database 0 (now, or once the delay passes); its memory is freed after, in "
     "steps, as FLUSHALL ASYNC's."),
    ("version / verbosity / quit", "", "version reports memcached 1.6.18 compatibility."),
    ("stats", "[reset | items | slabs | sizes | conns]",
     "General stats with memcached's field names; items/slabs/sizes/conns are empty."),
    ("mg / ms / md / ma / mn / me", "<key> <flags>*",
     "Meta commands with flags b c f k O q s t v T N R I C F M D J; me gives fixed "
     "values for fields without a meaning here."),
]


OUR_SOURCE = re.compile(r"(?:^|/)((?:src|helio)/\w+/[\w.]+)$")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Resp:
    """Just enough RESP2 to ask COMMAND DOCS and COMMAND INFO."""

    def __init__(self, port):
        for _ in range(100):
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError(f"damselfly did not listen on {port}")
        self.file = self.sock.makefile("rb")

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for arg in args:
            arg = arg.encode()
            out += b"$%d\r\n%s\r\n" % (len(arg), arg)
        self.sock.sendall(out)
        return self.read()

    def read(self):
        line = self.file.readline()[:-2]
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b"-"):
            return rest.decode()
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)[:-2]
            return data.decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError(f"unexpected reply {line!r}")


def pairs(flat):
    return dict(zip(flat[::2], flat[1::2]))


def render_arg(arg):
    """An argument tree of COMMAND DOCS as the syntax line Redis's docs print."""
    a = pairs(arg)
    kind, flags = a["type"], a.get("flags", [])
    if kind == "pure-token":
        text = a["token"]
    elif kind in ("oneof", "block"):
        parts = [render_arg(sub) for sub in a["arguments"]]
        text = " | ".join(parts) if kind == "oneof" else " ".join(parts)
        if a.get("token"):
            text = f"{a['token']} {text}"
        if kind == "oneof" and "optional" not in flags:
            text = f"<{text}>"
    else:
        text = a["name"]
        if a.get("token"):
            text = f"{a['token']} {text}"
    if "multiple" in flags:
        text = f"{text} [{text} ...]"
    if "optional" in flags:
        text = f"[{text}]"
    return text


def syntax(name, doc):
    words = [name.replace("|", " ").upper()]
    words += [render_arg(arg) for arg in doc.get("arguments", [])]
    return " ".join(words)


def md_escape(text):
    return text.replace("|", "\\|")


def commands_markdown(binary):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("DAMSELFLY_")}
    server = subprocess.Popen([binary, f"--port={port}", "--bind=127.0.0.1", "--proactor_threads=1"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        resp = Resp(port)
        docs = pairs(resp.call("COMMAND", "DOCS"))
        infos = {info[0]: info for info in resp.call("COMMAND", "INFO") if info}
    finally:
        server.terminate()
        server.wait(timeout=10)

    rows = []  # (group, name, syntax, summary, since, flags, note)
    for name, flat in docs.items():
        doc = pairs(flat)
        info = infos.get(name)
        flags = ", ".join(info[2]) if info else ""
        subcommands = pairs(doc.get("subcommands", []))
        rows.append((doc["group"], name, syntax(name, doc), doc["summary"], doc["since"], flags,
                     NOTES.get(name, "")))
        for sub_name, sub_flat in subcommands.items():
            sub = pairs(sub_flat)
            rows.append((doc["group"], sub_name, syntax(sub_name, sub), sub["summary"], sub["since"],
                         "", NOTES.get(sub_name, "")))
    known = {row[1] for row in rows}
    unknown = sorted(set(NOTES) - known)
    if unknown:
        sys.exit(f"gen-docs: NOTES name commands the registry does not have: {unknown}")

    out = [
        "# Commands",
        "",
        "Generated by `tools/gen-docs.py` from the command registry (`COMMAND DOCS`, "
        "`COMMAND INFO`); do not edit by hand. `tests/test_docs.py` fails when this file is "
        "stale.",
        "",
        f"damselfly serves {sum(1 for r in rows if '|' not in r[1])} RESP commands "
        f"({sum(1 for r in rows if '|' in r[1])} subcommands) with Redis 7.0 semantics, and the "
        "memcached text protocol on `--memcached_port`. *Notes* say where behaviour differs "
        "from Redis.",
        "",
    ]
    for group in sorted({row[0] for row in rows}):
        out += [f"## {group}", "", "| command | syntax | summary | since | flags | notes |",
                "|---|---|---|---|---|---|"]
        for _, name, syn, summary, since, flags, note in sorted(r for r in rows if r[0] == group):
            out.append(f"| {md_escape(name.upper())} | `{md_escape(syn)}` | {md_escape(summary)} "
                       f"| {since} | {flags} | {md_escape(note)} |")
        out.append("")
    out += ["## memcached protocol (`--memcached_port`)", "",
            "Served from database 0 of the same keyspace, so RESP and memcached clients see "
            "the same keys. Limits and errors as memcached 1.6 gives them (keys up to 250 "
            "bytes, values up to `--max_item_size`).", "",
            "| command | arguments | notes |", "|---|---|---|"]
    for name, args, note in MEMCACHE_COMMANDS:
        out.append(f"| {name} | `{md_escape(args)}` | {md_escape(note)} |")
    out.append("")
    return "\n".join(out)


def flags_markdown(binary):
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("DAMSELFLY_")}
    xml = subprocess.run([binary, "--helpxml"], env=env, capture_output=True, text=True).stdout
    ours = []
    for flag in ET.fromstring(xml).iter("flag"):
        # Ours are defined under src/<layer>/ and helio/<part>/; the rest are glog's and
        # gflags' own flags (their sources are src/*.cc of those projects).
        match = OUR_SOURCE.search(flag.findtext("file"))
        if not match:
            continue
        component = match.group(1)
        ours.append((flag.findtext("name"), flag.findtext("type"), flag.findtext("default"),
                     flag.findtext("meaning"), component))
    out = [
        "# Flags",
        "",
        "Generated by `tools/gen-docs.py` from `damselfly --helpxml`; do not edit by hand. "
        "`tests/test_docs.py` fails when this file is stale.",
        "",
        "Every flag can be given as `--name=value`, in a `--flagfile`, or as an environment "
        "variable `DAMSELFLY_name` (or `DAMSELFLY_NAME`); command-line flags win. glog's "
        "flags (`--logtostderr`, `--v`, `--log_dir`, ...) work too and are not listed.",
        "",
        "| flag | type | default | meaning | defined in |",
        "|---|---|---|---|---|",
    ]
    for name, kind, default, meaning, component in sorted(ours):
        shown = f"`{default}`" if default != "" else "(empty)"
        out.append(f"| `--{name}` | {kind} | {shown} | {md_escape(meaning)} | {component} |")
    out.append("")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=str(ROOT / "build-opt" / "damselfly"))
    parser.add_argument("--check", action="store_true", help="fail if the docs are stale")
    args = parser.parse_args()
    outputs = {ROOT / "docs" / "commands.md": commands_markdown(args.binary),
               ROOT / "docs" / "flags.md": flags_markdown(args.binary)}
    stale = [path for path, text in outputs.items()
             if not path.exists() or path.read_text() != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is stale: run tools/gen-docs.py", file=sys.stderr)
        sys.exit(1 if stale else 0)
    for path in stale:
        path.write_text(outputs[path])
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
