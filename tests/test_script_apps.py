"""Real applications whose logic runs as Lua scripts, unmodified, against the server with its
default flags (issue 17; validated against redis-server 7.0 with DAMSELFLY_TEST_TARGET=redis).

- redis-py's Lock (redis/lock.py): acquire is SET NX PX, and extend, reacquire and release
  are Lua scripts it registers and sends as EVALSHA (EVAL after a NOSCRIPT). Threads contend
  for one lock guarding a read-modify-write counter.
- A Sidekiq-style reliable fetch, written from the behaviour of Sidekiq's public sources:
  the scheduler moves due jobs out of the "schedule" sorted set with a zpopbyscore script
  (it declares only the sorted set), then pushes each into its queue with LPUSH + SADD
  queues in MULTI as Sidekiq's client does; workers fetch with BRPOPLPUSH into a private
  working list, ack with LREM, keep a heartbeat key, and requeue the working lists of dead
  workers with a script that finds them through a set and keys it never declares. One
  worker dies holding jobs; every job must still run exactly once.
- The real Sidekiq (Debian's ruby-sidekiq 6.4, tests/apps/sidekiq_jobs.rb): a Ruby client
  enqueues jobs, some due a second later, and a Sidekiq process runs them; its scheduler
  takes the due ones out of the schedule sorted set with its own Lua zpopbyscore script
  (EVALSHA), and a job that fails with retry: 0 lands in the dead set.
- BullMQ (npm `bullmq`, pinned in tests/apps/package.json, installed by tools/install-deps.sh
  into tests/apps/node_modules): tests/apps/bullmq_smoke.js adds jobs, one by one and in
  bulk (EVALSHA inside MULTI/EXEC), and a Worker processes them; a delayed job, a job
  scheduler's repeated job, a job retried until it succeeds and one that fails for good.
  Its QueueEvents reads the events stream with XREAD BLOCK, so it needs streams too.

A test whose commands the server does not know yet is skipped, naming them (helpers.require):
against damselfly today EVALSHA and SCRIPT (all of them), XADD, XREAD and XTRIM (BullMQ).

All are marked `apps`: they start threads or processes and take seconds, so tools/test.sh
runs them in the release build only.
"""

import json
import os
import shutil
import signal
import subprocess
import threading
import time

import pytest
from redis.exceptions import LockError, LockNotOwnedError

from helpers import require, wait_for

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
APPS_DIR = os.path.join(TESTS_DIR, "apps")
BULLMQ_TIMEOUT_S = 60


def run_threads(targets, timeout):
    """Runs each callable in a thread; re-raises the first exception any of them raised and
    fails if one is still running after `timeout` seconds."""
    errors = []

    def wrap(fn):
        def body():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported to the test below
                errors.append(e)
        return body

    threads = [threading.Thread(target=wrap(fn), daemon=True) for fn in targets]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), f"threads still running after {timeout} s"
    if errors:
        raise errors[0]


# ------------------------------------------------------------------------- redis-py Lock


@pytest.mark.apps
def test_redis_py_lock_serializes_a_counter_under_contention(server):
    require(server, "EVALSHA", "SCRIPT")
    setup = server.client()
    setup.set("counter", 0)
    threads, rounds = 8, 25

    def worker():
        c = server.client()
        for _ in range(rounds):
            lock = c.lock("lock:counter", timeout=5, blocking_timeout=20, sleep=0.001)
            assert lock.acquire()
            try:
                value = int(c.get("counter"))
                c.set("counter", value + 1)  # lost updates would show without the lock
            finally:
                lock.release()  # the release script (EVALSHA)

    run_threads([worker] * threads, timeout=60)
    assert int(setup.get("counter")) == threads * rounds
    assert setup.exists("lock:counter") == 0


@pytest.mark.apps
def test_redis_py_lock_extend_reacquire_release(server):
    require(server, "EVALSHA", "SCRIPT")
    c = server.client()
    lock = c.lock("lock:job", timeout=2)
    assert lock.acquire(blocking=False)
    token = c.get("lock:job")
    assert token == lock.local.token
    assert 1000 < c.pttl("lock:job") <= 2000

    assert lock.extend(10)  # added to the remaining ttl
    assert 11000 < c.pttl("lock:job") <= 12000
    assert lock.extend(3, replace_ttl=True)
    assert 2000 < c.pttl("lock:job") <= 3000
    assert lock.reacquire()  # back to the lock's own timeout
    assert 1000 < c.pttl("lock:job") <= 2000

    other = c.lock("lock:job", timeout=2)
    assert not other.acquire(blocking=False)
    other.local.token = b"not-the-owner"
    with pytest.raises(LockNotOwnedError):
        other.extend(1)
    with pytest.raises(LockNotOwnedError):
        other.reacquire()
    with pytest.raises(LockNotOwnedError):
        other.release()  # forgets the token too
    assert c.get("lock:job") == token

    lock.release()
    assert c.exists("lock:job") == 0
    with pytest.raises(LockError):
        lock.release()  # no token held any more


@pytest.mark.apps
def test_redis_py_lock_expires_and_the_late_owner_cannot_release(server):
    require(server, "EVALSHA", "SCRIPT")
    c = server.client()
    first = c.lock("lock:short", timeout=0.2)
    assert first.acquire(blocking=False)
    second = c.lock("lock:short", timeout=5, blocking_timeout=3, sleep=0.01)
    assert second.acquire()  # once the first one's 200 ms ran out
    with pytest.raises(LockNotOwnedError):
        first.extend(1)
    with pytest.raises(LockNotOwnedError):
        first.release()
    assert second.owned()
    second.release()


@pytest.mark.apps
def test_redis_py_lock_after_script_flush_falls_back_to_eval(server):
    require(server, "EVALSHA", "SCRIPT")
    c = server.client()
    lock = c.lock("lock:flush", timeout=5)
    assert lock.acquire(blocking=False)
    c.script_flush()
    lock.release()  # EVALSHA answers NOSCRIPT; redis-py's Script loads it again
    assert c.exists("lock:flush") == 0


# ------------------------------------------------------------ Sidekiq-style reliable fetch

# The scheduler's pop: the first due job of the sorted set, removed atomically so that two
# schedulers never enqueue one job twice. Only the sorted set is declared.
ZPOPBYSCORE = """
local jobs = redis.call('zrangebyscore', KEYS[1], '-inf', ARGV[1], 'limit', 0, 1)
if jobs[1] then
  redis.call('zrem', KEYS[1], jobs[1])
  return jobs[1]
end
return nil
"""

# Requeues the working lists of dead workers: a worker is dead when its heartbeat key has
# expired. Declares nothing but the set of workers: the heartbeat, working-list and queue
# keys are computed inside, as super_fetch-style recovery does. Returns the number of jobs
# put back.
REQUEUE_ORPHANS = """
local moved = 0
for _, name in ipairs(redis.call('smembers', KEYS[1])) do
  if redis.call('exists', 'heartbeat:' .. name) == 0 then
    local working = 'queue:default|working|' .. name
    while redis.call('rpoplpush', working, 'queue:default') do
      moved = moved + 1
    end
    redis.call('srem', KEYS[1], name)
  end
end
return moved
"""


def sidekiq_push(c, job):
    """Sidekiq's client push: the job onto its queue and the queue into the set of queues."""
    pipe = c.pipeline(transaction=True)
    pipe.sadd("queues", "default")
    pipe.lpush("queue:default", json.dumps(job))
    pipe.execute()


@pytest.mark.apps
def test_sidekiq_style_reliable_fetch_runs_every_job_exactly_once(server):
    require(server, "EVALSHA", "SCRIPT", "BRPOPLPUSH")
    c = server.client()
    immediate, scheduled, workers, crash_after = 200, 100, 4, 5
    total = immediate + scheduled
    for i in range(immediate):
        sidekiq_push(c, {"jid": f"now-{i}", "class": "Work", "args": [i]})
    now = time.time()
    c.zadd("schedule", {json.dumps({"jid": f"later-{i}", "class": "Work", "args": [i]}):
                        now + (i % 10) * 0.05 for i in range(scheduled)})
    heartbeat_ms = 300
    stop = threading.Event()

    def scheduler():
        sc = server.client()
        zpop = sc.register_script(ZPOPBYSCORE)
        deadline = time.monotonic() + 20
        while sc.zcard("schedule") and time.monotonic() < deadline:
            job = zpop(keys=["schedule"], args=[repr(time.time())])
            if job is None:
                time.sleep(0.01)
                continue
            sidekiq_push(sc, json.loads(job))

    def worker(name, dies_after=None):
        wc = server.client()
        requeue = wc.register_script(REQUEUE_ORPHANS)
        working = f"queue:default|working|{name}"
        wc.set(f"heartbeat:{name}", 1, px=heartbeat_ms)
        wc.sadd("workers", name)
        taken = 0
        deadline = time.monotonic() + 30
        while not stop.is_set() and time.monotonic() < deadline:
            wc.set(f"heartbeat:{name}", 1, px=heartbeat_ms)
            if dies_after is None:
                moved = requeue(keys=["workers"])
                if moved:
                    wc.incrby("orphans", moved)
            raw = wc.brpoplpush("queue:default", working, timeout=1)
            if raw is None:
                continue
            taken += 1
            if dies_after is not None:
                if taken == dies_after:
                    return  # dies holding the jobs it took, unacknowledged
                continue
            jid = json.loads(raw)["jid"]
            pipe = wc.pipeline(transaction=True)
            pipe.hincrby("done", jid, 1)  # the job's effect
            pipe.lrem(working, 1, raw)  # the ack
            pipe.execute()
            if wc.hlen("done") == total:
                stop.set()

    def crashing_worker():
        worker("doomed", dies_after=crash_after)

    named = [lambda n=n: worker(f"w{n}") for n in range(workers)]
    run_threads([crashing_worker, scheduler] + named, timeout=45)

    done = {k.decode(): int(v) for k, v in c.hgetall("done").items()}
    assert len(done) == total, f"{total - len(done)} jobs never ran"
    assert all(v == 1 for v in done.values()), {k: v for k, v in done.items() if v != 1}
    assert c.zcard("schedule") == 0
    assert c.llen("queue:default") == 0
    assert c.exists("queue:default|working|doomed") == 0  # requeued by the others
    assert c.sismember("workers", "doomed") == 0
    for n in range(workers):
        assert c.llen(f"queue:default|working|w{n}") == 0
    assert c.smembers("queues") == {b"default"}
    assert c.get("orphans") is not None and int(c.get("orphans")) == crash_after


@pytest.mark.apps
def test_sidekiq_style_zpopbyscore_leaves_future_jobs(server):
    require(server, "EVALSHA", "SCRIPT")
    c = server.client()
    zpop = c.register_script(ZPOPBYSCORE)
    c.zadd("schedule", {"due": 100, "future": 10**10})
    assert zpop(keys=["schedule"], args=["200"]) == b"due"
    assert zpop(keys=["schedule"], args=["200"]) is None
    assert c.zrange("schedule", 0, -1) == [b"future"]


# ------------------------------------------------------------------------- real Sidekiq


def evalsha_calls(conn):
    stats = conn.info("commandstats")
    return stats.get("cmdstat_evalsha", {}).get("calls", 0)


@pytest.mark.apps
def test_sidekiq_runs_immediate_scheduled_and_dead_jobs(server, tmp_path):
    if shutil.which("sidekiq") is None:
        pytest.skip("sidekiq is missing: run tools/install-deps.sh (Debian's ruby-sidekiq)")
    require(server, "EVALSHA", "SCRIPT", "BRPOP")
    c = server.client()
    env = dict(os.environ, REDIS_URL=f"redis://{server.host}:{server.port}")
    immediate, scheduled = 40, 10
    res = subprocess.run(["ruby", "sidekiq_jobs.rb", str(immediate), str(scheduled), "1"],
                         cwd=APPS_DIR, env=env, capture_output=True, text=True, timeout=30)
    assert res.returncode == 0 and "enqueued" in res.stdout, res.stdout + res.stderr
    assert c.llen("queue:default") == immediate + 1
    assert c.zcard("schedule") == scheduled
    evalsha_before = evalsha_calls(c)

    log_path = tmp_path / "sidekiq.log"
    with open(log_path, "wb") as log:
        worker = subprocess.Popen(["sidekiq", "-r", "./sidekiq_jobs.rb", "-c", "5", "-t", "5"],
                                  cwd=APPS_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
    try:
        # Sidekiq's scheduler first waits up to 5 s, then polls every 0.5 s on average.
        try:
            wait_for(lambda: worker.poll() is None and
                     c.hlen("test:done") == immediate + scheduled and c.zcard("schedule") == 0,
                     timeout=30, what="Sidekiq to run the jobs")
        except AssertionError as e:
            pytest.fail(f"{e}\n--- sidekiq log ---\n{log_path.read_text()[-3000:]}",
                        pytrace=False)
        done = {k.decode(): int(v) for k, v in c.hgetall("test:done").items()}
        assert all(v == 1 for v in done.values()), {k: v for k, v in done.items() if v != 1}
        assert sorted(done) == sorted([f"now-{i}" for i in range(immediate)] +
                                      [f"later-{i}" for i in range(scheduled)])
        wait_for(lambda: c.zcard("dead") == 1, timeout=10, what="the broken job to die")
        assert json.loads(c.zrange("dead", 0, -1)[0])["class"] == "BrokenJob"
        assert c.llen("queue:default") == 0
        # The scheduled jobs came out of the sorted set through the Lua script.
        assert evalsha_calls(c) - evalsha_before >= scheduled
    finally:
        if worker.poll() is None:
            worker.send_signal(signal.SIGTERM)
        try:
            code = worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
            code = "killed after 15 s"
    assert code == 0, f"sidekiq exited {code}:\n{log_path.read_text()[-3000:]}"


# --------------------------------------------------------------------------------- BullMQ


def bullmq_ready():
    if shutil.which("node") is None:
        return "node is missing: run tools/install-deps.sh"
    if not os.path.isdir(os.path.join(APPS_DIR, "node_modules", "bullmq")):
        return "tests/apps/node_modules lacks bullmq: run tools/install-deps.sh"
    return None


@pytest.mark.apps
def test_bullmq_worker_delayed_repeated_and_retried_jobs(server):
    missing = bullmq_ready()
    if missing:
        pytest.skip(missing)
    # QueueEvents reads the events stream with XREAD BLOCK; the scripts XADD and XTRIM it.
    require(server, "EVAL", "EVALSHA", "XADD", "XREAD", "XTRIM")
    try:
        res = subprocess.run(["node", "bullmq_smoke.js", str(server.port), server.host],
                             cwd=APPS_DIR, capture_output=True, text=True,
                             timeout=BULLMQ_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"bullmq_smoke.js ran past {BULLMQ_TIMEOUT_S} s\n--- stdout ---\n"
                    f"{e.stdout}\n--- stderr ---\n{e.stderr}", pytrace=False)
    assert res.returncode == 0, f"exit {res.returncode}\n--- stdout ---\n{res.stdout}\n" \
        f"--- stderr ---\n{res.stderr}"
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["plain"] == 30
    assert summary["flakyAttempts"] == [0, 1, 2]
    assert summary["repeats"] >= 3
    assert summary["counts"]["failed"] == 1
    # obliterate removed the queue's keys
    assert server.client().keys("bull:*") == []
