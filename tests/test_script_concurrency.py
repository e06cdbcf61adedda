"""Scripts and other clients at the same time (issue 17): a script past busy-reply-threshold
(alias lua-time-limit) makes other clients' commands answer BUSY, SCRIPT KILL and FUNCTION
KILL stop a read-only one, a script that wrote is UNKILLABLE and SHUTDOWN NOSAVE still works;
and 16 clients running transfer scripts between accounts on different shards, with their keys
declared or not, never let a reader see a transfer half done.

Validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis). The busy tests start their
own servers (they change busy-reply-threshold, and one ends with SHUTDOWN NOSAVE).
"""

import threading
import time

import pytest

from helpers import err, wait_for
from resp_client import RawConnection
from script_helpers import NOTBUSY, function_error, keys_on_distinct_shards, script_error

BUSY = err("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
           "NOSAVE.")
BUSY_FUNCTION = err("BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                    "SHUTDOWN NOSAVE.")
UNKILLABLE = err("UNKILLABLE Sorry the script already executed write commands against the "
                 "dataset. You can either wait the script termination or kill the server in a "
                 "hard way using the SHUTDOWN NOSAVE command.")


BUSY_LOOP = "local i = 0 while true do i = i + 1 end"


def busy_server(server_factory):
    srv = server_factory()
    assert srv.raw()("CONFIG", "SET", "busy-reply-threshold", "100") == "OK"
    return srv


def test_busy_reply_threshold_is_lua_time_limit(server_factory):
    srv = busy_server(server_factory)
    c = srv.raw()
    assert c("CONFIG", "GET", "lua-time-limit") == [b"lua-time-limit", b"100"]
    assert c("CONFIG", "SET", "lua-time-limit", "200") == "OK"
    assert c("CONFIG", "GET", "busy-reply-threshold") == [b"busy-reply-threshold", b"200"]


def test_script_kill_stops_a_read_only_busy_script(server_factory):
    srv = busy_server(server_factory)
    runner, other = srv.raw(), srv.raw()
    runner.send("EVAL", f"redis.call('get', KEYS[1]) {BUSY_LOOP}", "1", "k")
    wait_for(lambda: other("GET", "k") == BUSY, timeout=5, what="BUSY")
    assert other("SCRIPT", "KILL") == "OK"
    script = f"redis.call('get', KEYS[1]) {BUSY_LOOP}"
    assert runner.read() == script_error("ERR Script killed by user with SCRIPT KILL...", script)
    assert other("SET", "k", "v") == "OK"
    assert runner("GET", "k") == b"v"
    assert other("SCRIPT", "KILL") == NOTBUSY


def test_function_kill_stops_a_busy_function(server_factory):
    srv = busy_server(server_factory)
    runner, other = srv.raw(), srv.raw()
    assert runner("FUNCTION", "LOAD", "#!lua name=busy\nredis.register_function{"
                  "function_name='spin', callback=function(keys) redis.call('get', keys[1]) "
                  f"{BUSY_LOOP} end, flags={{'no-writes'}}}}") == b"busy"
    runner.send("FCALL_RO", "spin", "1", "k")
    wait_for(lambda: other("GET", "k") == BUSY_FUNCTION, timeout=5, what="BUSY")
    assert other("FUNCTION", "KILL") == "OK"
    assert runner.read() == function_error("ERR Script killed by user with SCRIPT KILL...",
                                           "spin", 2)
    assert other("GET", "k") is None


def test_exec_during_a_busy_script_aborts_the_transaction(server_factory):
    """EXEC refused with BUSY answers EXECABORT with that reason and ends the transaction
    (unit/multi's "EXEC and script timeout"); none of the queued commands ran."""
    srv = busy_server(server_factory)
    runner, tx, other = srv.raw(), srv.raw(), srv.raw()
    assert other("SET", "xx", "1") == "OK"
    assert tx("MULTI") == "OK"
    assert tx("INCR", "xx") == "QUEUED"
    runner.send("EVAL", BUSY_LOOP, "0")
    wait_for(lambda: other("GET", "xx") == BUSY, timeout=5, what="BUSY")
    assert tx("EXEC") == err("EXECABORT Transaction discarded because of: BUSY Redis is busy "
                             "running a script. You can only call SCRIPT KILL or SHUTDOWN "
                             "NOSAVE.")
    assert other("SCRIPT", "KILL") == "OK"
    runner.read()
    assert tx("GET", "xx") == b"1"
    assert tx("EXEC") == err("ERR EXEC without MULTI")


def test_a_busy_script_that_wrote_is_unkillable(server_factory):
    srv = busy_server(server_factory)
    runner, other = srv.raw(), srv.raw()
    runner.send("EVAL", f"redis.call('set', KEYS[1], '1') {BUSY_LOOP}", "1", "k")
    wait_for(lambda: other("GET", "k") == BUSY, timeout=5, what="BUSY")
    assert other("SCRIPT", "KILL") == UNKILLABLE
    assert other("FUNCTION", "KILL") == UNKILLABLE
    srv.expect_exit = True
    other.send("SHUTDOWN", "NOSAVE")
    assert srv.proc.wait(timeout=10) == 0


# --------------------------------------------------------------- atomicity under load

# The transfer and the sum, with their keys declared (KEYS) or not (ARGV, numkeys 0): a
# script that reaches keys it did not declare must be just as atomic.
TRANSFER = """
local from = tonumber(redis.call('get', {k}[1]))
local amount = tonumber(ARGV[{a}])
if from < amount then return 0 end
redis.call('decrby', {k}[1], amount)
redis.call('incrby', {k}[2], amount)
return 1"""

SUM = """
local total = 0
for _, k in ipairs({k}) do total = total + tonumber(redis.call('get', k)) end
return total"""

LOAD_SECONDS = 1.5


@pytest.mark.parametrize("declared", [True, False], ids=["declared", "undeclared"])
def test_transfers_between_shards_keep_the_total(server, declared):
    accounts = keys_on_distinct_shards(server, 8, "acct")
    setup = server.raw()
    for k in accounts:
        setup("SET", k, "1000")
    total = 1000 * len(accounts)
    if declared:
        transfer = TRANSFER.format(k="KEYS", a=1)
        total_of = SUM.format(k="KEYS")
    else:
        # ARGV holds the two accounts and then the amount.
        transfer = TRANSFER.format(k="ARGV", a=3)
        total_of = SUM.format(k="ARGV")
    transfer_sha = setup("SCRIPT", "LOAD", transfer).decode()
    sum_sha = setup("SCRIPT", "LOAD", total_of).decode()
    stop = threading.Event()
    errors, sums_seen, transfers = [], [], []

    def transfer_args(a, b, amount):
        if declared:
            return ("EVALSHA", transfer_sha, "2", a, b, amount)
        return ("EVALSHA", transfer_sha, "0", a, b, amount)

    def mover(seed):
        conn = RawConnection(server.host, server.port)
        done = 0
        i = seed
        try:
            while not stop.is_set():
                a = accounts[i % len(accounts)]
                b = accounts[(i * 7 + 3) % len(accounts)]
                i += 1
                if a == b:
                    continue
                reply = conn(*transfer_args(a, b, str(1 + i % 50)))
                if reply not in (0, 1):
                    errors.append(reply)
                    return
                done += reply
        finally:
            conn.close()
            transfers.append(done)

    def reader():
        conn = RawConnection(server.host, server.port)
        numkeys = str(len(accounts)) if declared else "0"
        try:
            while not stop.is_set():
                sums_seen.append(conn("EVALSHA", sum_sha, numkeys, *accounts))
                # A plain multi-key read must not see a transfer half done either.
                sums_seen.append(sum(int(v) for v in conn("MGET", *accounts)))
        finally:
            conn.close()

    # 16 clients: 15 move money, one keeps summing it (with the script and with MGET).
    threads = [threading.Thread(target=mover, args=(n,)) for n in range(15)]
    threads.append(threading.Thread(target=reader))
    for t in threads:
        t.start()
    time.sleep(LOAD_SECONDS)
    stop.set()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert sum(transfers) > 0
    assert sums_seen and all(s == total for s in sums_seen), \
        sorted(set(s for s in sums_seen if s != total))[:5]
    assert sum(int(v) for v in setup("MGET", *accounts)) == total
