#!/usr/bin/python3
"""Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/), once; the
outputs are committed, so the fuzzers and CI need neither this script nor redis-server.

  tools/gen-fuzz-corpus.py [--redis-server redis-server]

Seeds are valid input, so the fuzzers start from deep inside each format:
  resp_parser_fuzz      requests of tests/resp_session.txt as multibulk, inline forms,
                        quotes, empty requests, pipelines;
  memcache_parser_fuzz  the sections of tests/memcache_session.txt and
                        memcache_meta_session.txt (classic and meta commands);
  http_parser_fuzz      scrapes and status-page requests, with and without bodies;
  restore_fuzz          DUMP payloads of every type and encoding redis-server 7.0 writes;
  rdb_load_fuzz         files redis-server 7.0 SAVEs: each type, expiries, several
                        databases, a function library, without compression, without
                        checksum (a zero CRC, as rdbchecksum no writes).
Every seed starts with the fuzz target's control byte (see each target's comment), except
rdb_load_fuzz's, which are whole files. Deterministic for a given redis-server, except
the ctime/used-mem AUX fields of the files.
"""

import argparse
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
sys.path.insert(0, os.path.join(ROOT, "tests"))
import test_memcache_session  # noqa: E402  (its session file reader)

MAX_SEED_BYTES = 4096  # libFuzzer's default -max_len; longer seeds would raise it


def write_seeds(target, seeds):
    """seeds: {name: bytes}. Replaces the target's directory."""
    out = os.path.join(CORPUS, target)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for name, data in seeds.items():
        assert len(data) <= MAX_SEED_BYTES * 4, (target, name, len(data))
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"{target}: {len(seeds)} seeds, {sum(map(len, seeds.values()))} bytes")


def multibulk(argv):
    out = b"*%d\r\n" % len(argv)
    for arg in argv:
        out += b"$%d\r\n%s\r\n" % (len(arg), arg)
    return out


def resp_seeds():
    commands = []
    with open(os.path.join(ROOT, "tests", "resp_session.txt"), encoding="latin-1") as f:
        for line in f:
            line = line.strip().lstrip("~")
            if not line or line.startswith("#") or line.startswith("!"):
                continue
            commands.append([a.encode("latin-1").decode("unicode_escape").encode("latin-1")
                             for a in shlex.split(line)])
    seeds = {}
    # Control byte (resp_parser_fuzz.cc): bit 0 tight limits, bit 1 unauthenticated,
    # bits 2-7 the read size.
    for i in range(0, len(commands), 8):
        seeds[f"session-{i // 8:02d}"] = bytes([(i * 4) & 0xFC]) + b"".join(
            multibulk(argv) for argv in commands[i:i + 8])
    handmade = {
        "inline-ping": b"PING\r\n",
        "inline-lf-only": b"SET a b\nGET a\n",
        "inline-quotes": b'SET "a b" "c\\x41\\n\\"d"\r\nGET \'x y\'\r\n',
        "inline-unbalanced": b'SET "a b\r\n',
        "inline-blank-lines": b"\r\n\r\n   \r\nPING\r\n",
        "inline-nul": b"GET a\x00b\r\n",
        "empty-multibulk": b"*0\r\n*-1\r\nPING\r\n",
        "pipeline": multibulk([b"SET", b"k", b"v"]) * 3 + multibulk([b"MGET", b"k", b"k"]),
        "binary-bulk": multibulk([b"SET", b"\x00\r\n\xff", bytes(range(64))]),
        "empty-bulk": multibulk([b"SET", b"", b""]),
        "bad-bulk-len": b"*2\r\n$3\r\nGET\r\n$-5\r\nx\r\n",
        "bad-mbulk-len": b"*abc\r\n",
        "big-mbulk-len": b"*1048577\r\n",
        "big-bulk-len": b"*2\r\n$3\r\nSET\r\n$536870913\r\n",
        "bulk-without-crlf": b"*1\r\n$4\r\nPINGxx",
        "mixed": b"PING\r\n" + multibulk([b"ECHO", b"hi"]) + b"ECHO there\r\n",
        "many-args": multibulk([b"DEL"] + [b"k%d" % i for i in range(12)]),
    }
    for i, (name, stream) in enumerate(handmade.items()):
        seeds[name] = bytes([(i * 4 + (i % 4)) & 0xFF]) + stream
    write_seeds("resp_parser_fuzz", seeds)


def memcache_seeds():
    seeds = {}
    # Control byte (memcache_parser_fuzz.cc): bit 0 tight limits, bit 1 strict keys, bits
    # 2-7 the read size.
    for name in test_memcache_session.SESSION_FILES:
        sections, current = [], []
        with open(os.path.join(ROOT, "tests", name), encoding="latin-1") as f:
            for line in f:
                line = line.rstrip("\n")
                if line.startswith("# ----"):
                    sections.append(current)
                    current = []
                elif line and not line.startswith("#") and not line.startswith("@"):
                    template = line.lstrip("~").replace("{cas}", "12345")
                    template = re.sub(r"\{now[+-]\d+\}", "1800000000", template)
                    current.append(test_memcache_session.expand(template, b"12345"))
        sections.append(current)
        stem = name.removesuffix(".txt").removeprefix("memcache_")
        for i, section in enumerate(s for s in sections if s):
            stream = b""
            for request in section:
                if len(stream) + len(request) > MAX_SEED_BYTES - 1:
                    break
                stream += request
            seeds[f"{stem}-{i:02d}"] = bytes([(i * 4) & 0xFC]) + stream
    handmade = {
        "set-noreply": b"set k 0 0 1 noreply\r\nx\r\nget k\r\n",
        "set-bad-data": b"set k 0 0 1\r\nxyz\r\nget k\r\n",
        "set-too-large": b"set k 0 0 2000000\r\n",
        "cas": b"gets k\r\ncas k 0 0 1 12345\r\ny\r\n",
        "gat": b"gat 100 a b c\r\ngats 0 a\r\n",
        "incr-decr": b"incr n 18446744073709551615\r\ndecr n 1\r\n",
        "meta-base64": b"mg YWJj b k v\r\nms YQ== 1 b\r\nx\r\nmd YQ== b q\r\nmn\r\n",
        "meta-arith": b"ma n N0 J13 D2 MI\r\nma n MD q O1 t v\r\n",
        "meta-set-modes": b"ms k 1 MA\r\nx\r\nms k 1 MP I\r\ny\r\nms k 1 ME T0 F5 C1\r\nz\r\n",
        "stats": b"stats\r\nstats items\r\nstats cachedump 1 0\r\nversion\r\nverbosity 1\r\n",
        "long-key": b"get " + b"k" * 251 + b"\r\n",
        "control-key": b"set a\x01b 0 0 1\r\nx\r\n",
        "flush-quit": b"flush_all 10\r\nflush_all noreply\r\nquit\r\n",
    }
    for i, (name, stream) in enumerate(handmade.items()):
        seeds[name] = bytes([(i * 4 + (i % 4)) & 0xFF]) + stream
    write_seeds("memcache_parser_fuzz", seeds)


def http_seeds():
    seeds = {
        "get-metrics": b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n",
        "get-root-10": b"GET / HTTP/1.0\r\n\r\n",
        "keep-alive-pipeline": b"GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n"
                               b"GET /?x=1 HTTP/1.1\r\nConnection: close\r\n\r\n",
        "post-body": b"POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
                     b"GET / HTTP/1.1\r\n\r\n",
        "chunked": b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        "two-lengths": b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        "http2": b"GET / HTTP/2.0\r\n\r\n",
        "prometheus": b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:6379\r\n"
                      b"User-Agent: Prometheus/2.42.0\r\nAccept: application/openmetrics-text;"
                      b"version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\n"
                      b"Accept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n",
        "basic-auth": b"GET /metrics HTTP/1.1\r\nAuthorization: Basic ZGVmYXVsdDpzZWNyZXQ=\r\n\r\n",
        "lf-only": b"GET / HTTP/1.1\nHost: a\n\n",
        "folding": b"GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
        "head": b"HEAD /metrics HTTP/1.1\r\nConnection: keep-alive\r\n\r\n",
        "resp-inline": b"GET key\r\n",
        "resp-multibulk": b"*1\r\n$4\r\nPING\r\n",
    }
    # Control byte (http_parser_fuzz.cc): bit 0 tight limits, bits 1-7 the read size.
    seeds = {name: bytes([(i * 2 + i % 2) & 0xFF]) + data
             for i, (name, data) in enumerate(seeds.items())}
    # What the fuzzer found (src/facade/http_parser_test.cc has their tests): a body in a
    # later read (reads of 8 bytes), a 16-capital method whose first read ends before its
    # space (reads of 16 bytes).
    seeds["found-body-later"] = (bytes([7 << 1]) +
                                 b"POST /m HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc")
    seeds["found-method-16"] = bytes([15 << 1]) + b"M" * 16 + b" / HTTP/1.1\r\n\r\n"
    write_seeds("http_parser_fuzz", seeds)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Each entry: (name, commands that build the keys). The server runs with small encoding
# thresholds so that the big encodings (hash tables, skiplists, several quicklist and
# stream nodes) appear with a few elements.
DATASETS = [
    ("string-int", [["SET", "k", "12345"], ["SET", "n", "-7"],
                    ["SET", "big", "9223372036854775807"]]),
    ("string-raw", [["SET", "k", "hello world"], ["SET", "e", ""],
                    ["SET", "bin", b"\x00\xff\r\n"]]),
    ("string-lzf", [["SET", "k", "abcabcabc" * 20]]),
    ("list-listpack", [["RPUSH", "k", "a", "1", "-300", "70000", "b" * 40]]),
    ("list-quicklist", [["RPUSH", "k"] + [f"e{i}" for i in range(12)]]),
    ("list-plain-node", [["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100"],
                         ["RPUSH", "k", "small", "p" * 150, "tail"]]),
    ("hash-listpack", [["HSET", "k", "f1", "v1", "f2", "2", "f3", "-3"]]),
    ("hash-table", [["HSET", "k"] + [x for i in range(8) for x in (f"f{i}", f"v{i}")]]),
    ("set-intset16", [["SADD", "k", "1", "2", "-3", "300"]]),
    ("set-intset64", [["SADD", "k", "1", "5000000000", "-9223372036854775808"]]),
    ("set-table", [["SADD", "k", "a", "b", "c", "d", "e", "f", "g"]]),
    ("zset-listpack", [["ZADD", "k", "1", "a", "2.5", "b", "-inf", "c"]]),
    ("zset-skiplist", [["ZADD", "k"] + [x for i in range(8) for x in (f"{i * 1.5}", f"m{i}")]
                       + ["inf", "top"]]),
    ("stream-simple", [["XADD", "k", "1-1", "f", "v"], ["XADD", "k", "1-2", "f", "w"],
                       ["XADD", "k", "2-0", "g", "x", "h", "y"]]),
    ("stream-nodes-deleted", [["XADD", "k", f"{i}-0", "f", str(i)] for i in range(1, 10)]
                             + [["XDEL", "k", "3-0", "4-0"], ["XTRIM", "k", "MINID", "2"]]),
    ("stream-groups", [["XADD", "k", "1-0", "a", "1"], ["XADD", "k", "2-0", "a", "2"],
                       ["XADD", "k", "3-0", "b", "3"],
                       ["XGROUP", "CREATE", "k", "g1", "0"],
                       ["XGROUP", "CREATE", "k", "g2", "$"],
                       ["XREADGROUP", "GROUP", "g1", "alice", "COUNT", "2", "STREAMS", "k", ">"],
                       ["XREADGROUP", "GROUP", "g1", "bob", "STREAMS", "k", ">"],
                       ["XACK", "k", "g1", "1-0"],
                       ["XGROUP", "CREATECONSUMER", "k", "g2", "carol"]]),
    ("stream-empty-group", [["XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"]]),
]

CONFIG = ["--save", "", "--appendonly", "no", "--enable-debug-command", "yes",
          "--hash-max-listpack-entries", "4", "--set-max-intset-entries", "6",
          "--zset-max-listpack-entries", "4", "--list-max-listpack-size", "4",
          "--stream-node-max-entries", "3"]


def redis_seeds(binary):
    tmp = tempfile.mkdtemp(prefix="fuzz-corpus-")
    port = free_port()
    server = subprocess.Popen([binary, "--port", str(port), "--dir", tmp, *CONFIG],
                              stdout=subprocess.DEVNULL)
    try:
        client = redis.Redis(port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        payloads, files = {}, {}

        def save(name):
            client.save()
            with open(os.path.join(tmp, "dump.rdb"), "rb") as f:
                files[name] = f.read()

        for name, commands in DATASETS:
            client.flushall()
            client.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1073741824")
            for argv in commands:
                client.execute_command(*argv)
            payload = client.dump("k")
            # Control byte (restore_fuzz.cc) 0: the value bytes get a fresh footer.
            payloads[name] = b"\x00" + payload[:-10]
            save(name)
        # One payload as DUMP sent it, footer and all (control byte 1).
        payloads["with-footer"] = b"\x01" + client.dump("k")

        client.flushall()
        for name, commands in DATASETS[:8]:
            for argv in commands:
                if argv[0] != "DEBUG":
                    client.execute_command(argv[0], f"{name}:{argv[1]}", *argv[2:])
        client.pexpire("string-raw:k", 100000000)
        client.select(3)
        client.set("db3", "x", px=200000000)
        client.select(0)
        client.execute_command("FUNCTION", "LOAD",
                               "#!lua name=lib\nredis.register_function('f', function() "
                               "return 1 end)")
        save("mixed-expiry-dbs-function")
        client.config_set("rdbcompression", "no")
        save("mixed-no-compression")
        # rdbchecksum is immutable at run time; "no" writes a zero CRC, which loaders skip.
        files["mixed-no-checksum"] = files["mixed-expiry-dbs-function"][:-8] + bytes(8)
        client.flushall()
        save("empty")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(tmp)
    write_seeds("restore_fuzz", payloads)
    write_seeds("rdb_load_fuzz", files)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--redis-server", default="redis-server")
    args = parser.parse_args()
    resp_seeds()
    memcache_seeds()
    http_seeds()
    redis_seeds(args.redis_server)


if __name__ == "__main__":
    main()
