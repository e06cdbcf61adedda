#!/usr/bin/env python3
"""Writes RESP `SET key:N value` commands for N in [FROM, TO), for `redis-cli --pipe`.

Usage: tools/value-gen.py SHAPE SIZE FROM TO

Shapes, each SIZE bytes per value:
  json    JSON records ({"id":..,"name":"user..","email":..,"active":..,"score":..}, ...)
          with random numbers: text that repeats its structure, as API payloads and
          serialized objects do; LZF compresses it about 3 to 1
  text    random printable ASCII: packs to 7 bits per character, does not compress
  binary  random bytes: neither packs nor compresses

tools/memory-bench.sh uses it for the value-shape cases. The output depends on the
arguments alone (the generator is seeded with FROM), so every server gets the same data.
"""

import random
import sys

PRINTABLE = bytes(32 + b % 95 for b in range(256))


def json_value(rng, size):
    parts = []
    length = 0
    while length < size:
        n = rng.randrange(1000000)
        record = (b'{"id":%d,"name":"user%d","email":"user%d@example.com","active":%s,'
                  b'"score":%d.%02d},' % (n, n % 9973, n, b"true" if n & 1 else b"false",
                                          n % 1000, n % 100))
        parts.append(record)
        length += len(record)
    return b"".join(parts)[:size]


def text_value(rng, size):
    return rng.randbytes(size).translate(PRINTABLE)


def binary_value(rng, size):
    return rng.randbytes(size)


SHAPES = {"json": json_value, "text": text_value, "binary": binary_value}


def main(argv):
    if len(argv) != 5 or argv[1] not in SHAPES:
        sys.exit(__doc__)
    shape, size, first, end = SHAPES[argv[1]], int(argv[2]), int(argv[3]), int(argv[4])
    rng = random.Random(first)
    out = sys.stdout.buffer
    batch = []
    for n in range(first, end):
        key = b"key:%d" % n
        value = shape(rng, size)
        batch.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" %
                     (len(key), key, len(value), value))
        if len(batch) == 1000:
            out.write(b"".join(batch))
            batch.clear()
    out.write(b"".join(batch))


if __name__ == "__main__":
    main(sys.argv)
