"""What the scripting tests share (test_scripting.py, test_functions.py,
test_script_concurrency.py): Redis 7.0's error texts, the suffix Redis appends to an error
raised inside a script, and key names spread over the server's shards."""

import hashlib

from conftest import TARGET
from helpers import err

NOSCRIPT = err("NOSCRIPT No matching script. Please use EVAL.")
KEYS_GT_ARGS = err("ERR Number of keys can't be greater than number of args")
KEYS_NEGATIVE = err("ERR Number of keys can't be negative")
NOT_INTEGER = err("ERR value is not an integer or out of range")
RO_WRITE = "ERR Write commands are not allowed from read-only scripts."
NOTBUSY = err("NOTBUSY No scripts in execution right now.")


def sha1(script):
    return hashlib.sha1(script.encode()).hexdigest()


def script_error(message, script, line=1):
    """The error an uncaught error inside EVAL gets: Redis appends where it happened."""
    return err(f"{message} script: {sha1(script)}, on @user_script:{line}.")


def function_error(message, function, line):
    """The same for an error inside a function (FCALL)."""
    return err(f"{message} script: {function}, on @user_function:{line}.")


def keys_on_distinct_shards(server, count, prefix):
    """`count` key names on as many shards as the server has, taking turns (DEBUG KEYSHARD
    on damselfly; against redis-server any names do)."""
    names = [f"{prefix}:{i}" for i in range(count)]
    if TARGET != "damselfly":
        return names
    conn = server.raw()
    by_shard = {}
    n = 0
    while len(by_shard) < 2 or min(len(v) for v in by_shard.values()) < count:
        name = f"{prefix}:{n}"
        n += 1
        by_shard.setdefault(conn("DEBUG", "KEYSHARD", name), []).append(name)
        assert n < 10000, "DEBUG KEYSHARD put every key on one shard"
    shards = sorted(by_shard)
    return [by_shard[shards[i % len(shards)]][i // len(shards)] for i in range(count)]
