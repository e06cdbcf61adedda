"""Real applications against the server: an RQ worker and a Celery worker run jobs through
it, and redis-py's PubSub and client-side caching invalidations work (validated against
redis-server 7.0 with DAMSELFLY_TEST_TARGET=redis).

What the applications need from the server, so that a failure can be read:
- RQ 1.13 (Debian 12): its worker waits for jobs in BLPOP (LPOP in --burst mode), listens
  for commands such as "shutdown" on a pub/sub channel (a PubSub.run_in_thread), registers
  itself with MULTI/EXEC pipelines of hashes, sets and sorted sets, and keeps results in a
  stream (XADD) when INFO says the server is at least 5.0.
- Celery 5.2 with kombu's redis transport (Debian 12): the worker waits in BRPOP, takes
  broadcasts (ping, shutdown) through PSUBSCRIBE, and as it starts (then every 10 s)
  restores unacknowledged messages under a redis-py Lock, which releases itself with a Lua
  script (EVALSHA): without scripts the worker stops at once. The result backend publishes
  each result, and AsyncResult.get() waits on a SUBSCRIBE.
- Besides strings, hashes, sets, sorted sets, lists and MULTI/WATCH, the two send (seen with
  MONITOR on redis-server): BLPOP BRPOP SUBSCRIBE UNSUBSCRIBE PSUBSCRIBE PUBLISH, SCRIPT LOAD
  and EVALSHA (Celery, the Lock), XADD and XREVRANGE (RQ's results).
- redis-py 4.3 speaks RESP2 only, so RESP3 invalidation pushes are read through
  resp_client.RawConnection.

A test whose commands the server does not know yet is skipped, naming them (require()):
against damselfly today XADD and XREVRANGE (RQ), EVALSHA and SCRIPT (Celery), CLIENT
TRACKING, and pub/sub and the blocking commands until they land.

The RQ and Celery tests are marked `apps`: they start worker processes and take seconds
each, so tools/test.sh runs them in the release build only; the redis-py tests run in both.
"""

import gc
import os
import queue
import subprocess
import sys
import threading
import time

import pytest

from helpers import require, wait_for
from resp_client import Push

rq = pytest.importorskip("rq", reason="RQ is missing: run tools/install-deps.sh")
pytest.importorskip("celery", reason="Celery is missing: run tools/install-deps.sh")

from rq.command import send_shutdown_command  # noqa: E402 - after the importorskip above
from rq.registry import FailedJobRegistry, FinishedJobRegistry  # noqa: E402

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
WORKER_START_TIMEOUT_S = 60
WAIT_S = 30


class WorkerProcess:
    """A worker subprocess whose output goes to a log file; stopped at the end of the test."""

    def __init__(self, argv, env, log_path):
        self.argv = argv
        self.log_path = log_path
        full_env = dict(os.environ)
        full_env["PYTHONPATH"] = os.pathsep.join(
            p for p in (TESTS_DIR, full_env.get("PYTHONPATH")) if p)
        full_env.update(env)
        with open(log_path, "wb") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=TESTS_DIR, env=full_env)

    def log_tail(self, max_chars=6000):
        with open(self.log_path, "rb") as f:
            text = f.read().decode(errors="replace")
        return text[-max_chars:]

    def describe(self):
        return f"{' '.join(self.argv)}\n--- worker log ---\n{self.log_tail()}"

    def wait(self, timeout):
        """The exit code; fails the test, with the worker's log, if it runs past timeout."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the worker did not exit within {timeout} s: {self.describe()}",
                        pytrace=False)

    def assert_running(self):
        assert self.proc.poll() is None, f"the worker exited ({self.proc.returncode}): " + \
            self.describe()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def workers(tmp_path):
    started = []

    def start(argv, env=None):
        w = WorkerProcess(argv, env or {}, str(tmp_path / f"worker{len(started)}.log"))
        started.append(w)
        return w

    yield start
    for w in started:
        w.stop()


def redis_url(server):
    return f"redis://{server.host}:{server.port}"


def blocked_clients(client):
    return int(client.info("clients")["blocked_clients"])


# ------------------------------------------------------------------------------------- RQ


def rq_worker_argv(server, name, *extra):
    return [sys.executable, "-m", "rq.cli", "worker", "--url", redis_url(server), "--name", name,
            "--disable-job-desc-logging", *extra, "apps"]


@pytest.mark.apps
def test_rq_burst_worker_runs_jobs(server, workers):
    require(server, "SUBSCRIBE", "XADD", "XREVRANGE")
    conn = server.client()
    q = rq.Queue("apps", connection=conn)
    sums = [q.enqueue("apps_rq_jobs.add", i, 10 * i) for i in range(5)]
    blob = bytes(range(256)) * 16
    reversed_blob = q.enqueue("apps_rq_jobs.echo_bytes", blob)
    failing = q.enqueue("apps_rq_jobs.fail", "boom")
    assert q.count == 7

    w = workers(rq_worker_argv(server, "apps-burst", "--burst"))
    assert w.wait(WORKER_START_TIMEOUT_S) == 0, w.describe()

    for i, job in enumerate(sums):
        assert job.get_status(refresh=True) == "finished", w.describe()
        assert job.return_value() == 11 * i
    assert reversed_blob.return_value() == blob[::-1]
    assert failing.get_status(refresh=True) == "failed"
    assert "ValueError: boom" in failing.latest_result().exc_string
    assert q.count == 0
    assert FinishedJobRegistry(queue=q).count == 6
    assert FailedJobRegistry(queue=q).get_job_ids() == [failing.id]
    assert rq.Worker.all(connection=conn) == []  # it unregistered on the way out


@pytest.mark.apps
def test_rq_worker_wakes_from_blpop_and_obeys_pubsub_shutdown(server, workers):
    require(server, "BLPOP", "SUBSCRIBE", "PUBLISH", "XADD", "XREVRANGE")
    conn = server.client()
    w = workers(rq_worker_argv(server, "apps-idle"))
    # With nothing queued the worker parks in BLPOP on rq:queue:apps.
    wait_for(lambda: w.assert_running() or blocked_clients(conn) == 1,
             timeout=WORKER_START_TIMEOUT_S, what="the RQ worker to block in BLPOP")
    q = rq.Queue("apps", connection=conn)
    job = q.enqueue("apps_rq_jobs.add", 2, 3)
    wait_for(lambda: job.get_status(refresh=True) == "finished", timeout=WAIT_S,
             what="the job to finish")
    assert job.return_value() == 5
    # Back in BLPOP for the next job; then "shutdown" arrives on its pub/sub channel.
    wait_for(lambda: blocked_clients(conn) == 1, timeout=WAIT_S, what="the worker to block again")
    assert conn.pubsub_numsub("rq:pubsub:apps-idle") == [(b"rq:pubsub:apps-idle", 1)]
    send_shutdown_command(conn, "apps-idle")
    assert w.wait(WAIT_S) == 0, w.describe()
    assert rq.Worker.all(connection=conn) == []


# --------------------------------------------------------------------------------- Celery


def celery_worker(server, workers):
    return workers([sys.executable, "-m", "celery", "-A", "apps_celery", "worker", "--pool=solo",
                    "--concurrency=1", "--loglevel=INFO", "--hostname=apps@localhost"],
                   {"DAMSELFLY_APPS_REDIS_URL": redis_url(server)})


def run_celery_client(server, w, body):
    """Runs body(app) with a client app of the worker's, then shuts the worker down through a
    broadcast and checks it exits."""
    from apps_celery import make_app

    app = make_app(redis_url(server))
    try:
        body(app)
        app.control.shutdown()
        assert w.wait(WAIT_S) == 0, w.describe()
    except BaseException:
        print(w.describe())
        raise
    finally:
        # Results unsubscribe when collected: let them do it while the server is up; then
        # close the results' subscriber connection, which app.close() leaves open.
        gc.collect()
        app.backend.result_consumer.stop()
        app.close()


@pytest.mark.apps
def test_celery_worker_round_trip(server, workers):
    require(server, "BRPOP", "SUBSCRIBE", "PSUBSCRIBE", "PUBLISH", "EVALSHA", "SCRIPT")
    w = celery_worker(server, workers)

    def body(app):
        # The first task also waits for the worker to start.
        assert app.send_task("apps_celery.add", (2, 3)).get(timeout=WORKER_START_TIMEOUT_S) == 5
        results = [app.send_task("apps_celery.add", (i, i)) for i in range(20)]
        assert [r.get(timeout=WAIT_S) for r in results] == [2 * i for i in range(20)]
        failing = app.send_task("apps_celery.fail", ("boom",))
        with pytest.raises(ValueError, match="boom"):
            failing.get(timeout=WAIT_S)
        assert failing.state == "FAILURE"
        # Broadcast to the worker through the fanout (pub/sub), reply through a list.
        assert app.control.ping(timeout=WAIT_S, limit=1) == [{"apps@localhost": {"ok": "pong"}}]

    run_celery_client(server, w, body)


# -------------------------------------------------------------------------- redis-py PubSub


def next_message(p, timeout=5.0):
    """The next message of a redis-py PubSub, waiting at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = p.get_message(timeout=max(0.0, deadline - time.monotonic()))
        if m is not None:
            return m
    raise AssertionError(f"no pub/sub message within {timeout} s")


def test_pubsub_subscribe_psubscribe_get_message(server_factory):
    # A server of its own: PUBSUB CHANNELS and NUMPAT count every connection's subscriptions.
    srv = server_factory()
    require(srv, "SUBSCRIBE", "PSUBSCRIBE", "PUBLISH", "PUBSUB")
    c = srv.client()
    p = c.pubsub()
    try:
        p.subscribe("news", "sport")
        assert next_message(p) == {"type": "subscribe", "pattern": None, "channel": b"news",
                                   "data": 1}
        assert next_message(p) == {"type": "subscribe", "pattern": None, "channel": b"sport",
                                   "data": 2}
        p.psubscribe("n*")
        assert next_message(p) == {"type": "psubscribe", "pattern": None, "channel": b"n*",
                                   "data": 3}

        assert c.publish("news", "hello") == 2  # the channel and the pattern
        assert next_message(p) == {"type": "message", "pattern": None, "channel": b"news",
                                   "data": b"hello"}
        assert next_message(p) == {"type": "pmessage", "pattern": b"n*", "channel": b"news",
                                   "data": b"hello"}
        assert c.publish("nothing", b"\x00\xff") == 1
        assert next_message(p) == {"type": "pmessage", "pattern": b"n*",
                                   "channel": b"nothing", "data": b"\x00\xff"}
        assert c.publish("weather", "rain") == 0
        assert p.get_message(timeout=0.2) is None

        assert sorted(c.pubsub_channels()) == [b"news", b"sport"]
        assert c.pubsub_channels("s*") == [b"sport"]
        assert c.pubsub_numsub("news", "weather") == [(b"news", 1), (b"weather", 0)]
        assert c.pubsub_numpat() == 1

        p.ping("hi")
        assert next_message(p) == {"type": "pong", "pattern": None, "channel": None,
                                   "data": b"hi"}

        p.unsubscribe("news")
        assert next_message(p) == {"type": "unsubscribe", "pattern": None, "channel": b"news",
                                   "data": 2}
        p.punsubscribe()
        assert next_message(p) == {"type": "punsubscribe", "pattern": None, "channel": b"n*",
                                   "data": 1}
        assert c.publish("news", "late") == 0
        assert c.publish("sport", "goal") == 1
        assert next_message(p)["data"] == b"goal"
        p.unsubscribe()
        assert next_message(p) == {"type": "unsubscribe", "pattern": None, "channel": b"sport",
                                   "data": 0}
        assert c.pubsub_numpat() == 0
        assert c.pubsub_channels() == []
    finally:
        p.close()


def test_pubsub_run_in_thread_keeps_each_publishers_order(server):
    require(server, "SUBSCRIBE", "PUBLISH", "PUBSUB")
    c = server.client()
    received = queue.Queue()
    p = c.pubsub(ignore_subscribe_messages=True)
    p.subscribe(**{"events": lambda m: received.put(m["data"])})
    thread = p.run_in_thread(sleep_time=0.01, daemon=True)
    try:
        wait_for(lambda: c.pubsub_numsub("events") == [(b"events", 1)], timeout=5,
                 what="the subscription")
        publishers, per_publisher = 4, 250

        def publish(n):
            pub = server.client()
            for i in range(per_publisher):
                assert pub.publish("events", f"{n}:{i}") == 1

        threads = [threading.Thread(target=publish, args=(n,)) for n in range(publishers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=WAIT_S)
            assert not t.is_alive()
        got = [received.get(timeout=5).decode() for _ in range(publishers * per_publisher)]
        assert received.empty()
        for n in range(publishers):
            assert [int(m.split(":")[1]) for m in got if m.startswith(f"{n}:")] == \
                list(range(per_publisher))
    finally:
        thread.stop()
        thread.join(timeout=5)
        p.close()
    assert not thread.is_alive()


def test_publish_reaches_every_confirmed_subscriber(server):
    require(server, "SUBSCRIBE", "PUBLISH")
    # What tools/pubsub_load counts on: once a client has its SUBSCRIBE confirmation, a
    # PUBLISH from any other client reaches it, also while earlier subscribers disconnect.
    for round_ in range(4):
        subscribers = [server.raw() for _ in range(50)]
        for s in subscribers:
            s.send("SUBSCRIBE", f"fanout:{round_}")
        for s in subscribers:
            assert s.read() == [b"subscribe", f"fanout:{round_}".encode(), 1]
        assert server.client().publish(f"fanout:{round_}", "hello") == 50
        for s in subscribers:
            assert s.read() == [b"message", f"fanout:{round_}".encode(), b"hello"]
            s.close()


# ------------------------------------------------------------------ client-side caching


def invalidation_subscriber(server):
    """A redis-py PubSub on __redis__:invalidate and its connection's CLIENT ID."""
    c = server.client(client_name="apps-invalidations")
    p = c.pubsub()
    p.subscribe("__redis__:invalidate")
    assert next_message(p)["type"] == "subscribe"
    ids = [int(e["id"]) for e in c.client_list()
           if e["name"] == "apps-invalidations" and e.get("cmd") == "subscribe"]
    assert len(ids) == 1, c.client_list()
    return p, ids[0]


def invalidated_keys(p, timeout=5.0):
    m = next_message(p, timeout)
    assert m["type"] == "message" and m["channel"] == b"__redis__:invalidate", m
    return m["data"]


def test_tracking_redirect_to_redis_py_pubsub(server):
    require(server, "CLIENT TRACKING", "SUBSCRIBE")
    p, redirect_id = invalidation_subscriber(server)
    try:
        writer = server.client()
        writer.mset({"user:1": "a", "user:2": "b", "other": "c"})
        cache = server.client(single_connection_client=True)
        assert cache.client_tracking_on(clientid=redirect_id) == b"OK"
        assert cache.client_getredir() == redirect_id
        info = cache.client_trackinginfo()
        info = {k.decode() if isinstance(k, bytes) else k: v for k, v in zip(info[::2], info[1::2])}
        assert info == {"flags": [b"on"], "redirect": redirect_id, "prefixes": []}

        assert cache.get("user:1") == b"a"
        assert cache.mget("user:2", "other") == [b"b", b"c"]
        writer.set("user:1", "A")
        assert invalidated_keys(p) == [b"user:1"]
        # Once invalidated, a key is no longer tracked until it is read again.
        writer.set("user:1", "AA")
        writer.delete("other")
        assert invalidated_keys(p) == [b"other"]
        writer.hset("user:2:h", "f", "v")  # never read: no message
        writer.flushall()  # every tracked key at once: a null list
        assert invalidated_keys(p) is None
        assert p.get_message(timeout=0.2) is None

        assert cache.client_tracking_off() == b"OK"
        assert cache.client_getredir() == -1
    finally:
        p.close()


def test_tracking_bcast_prefix_and_optin(server):
    require(server, "CLIENT TRACKING", "SUBSCRIBE")
    p, redirect_id = invalidation_subscriber(server)
    try:
        writer = server.client()
        bcast = server.client(single_connection_client=True)
        assert bcast.client_tracking_on(clientid=redirect_id, bcast=True,
                                        prefix=["user:", "session:"]) == b"OK"
        writer.set("user:7", "x")  # not read by anyone: BCAST reports it all the same
        assert invalidated_keys(p) == [b"user:7"]
        writer.set("cart:7", "x")
        writer.set("session:7", "x")
        assert invalidated_keys(p) == [b"session:7"]
        assert bcast.client_tracking_off() == b"OK"

        optin = server.client(single_connection_client=True)
        assert optin.client_tracking_on(clientid=redirect_id, optin=True) == b"OK"
        optin.get("cart:7")  # not cached: no CLIENT CACHING yes before it
        optin.execute_command("CLIENT CACHING", "yes")
        optin.get("user:7")
        writer.mset({"cart:7": "y", "user:7": "y"})
        assert invalidated_keys(p) == [b"user:7"]
        assert p.get_message(timeout=0.2) is None
    finally:
        p.close()


def test_tracking_resp3_invalidation_pushes(server):
    require(server, "CLIENT TRACKING")
    cache = server.raw()
    hello = cache("HELLO", "3")
    assert hello[b"proto"] == 3
    assert cache("CLIENT", "TRACKING", "ON") == "OK"
    writer = server.client()
    writer.set("k", "v1")
    assert cache("GET", "k") == b"v1"
    writer.set("k", "v2")
    assert cache.read() == Push([b"invalidate", [b"k"]])
    # The next request reads a fresh value, which tracks the key again.
    assert cache("GET", "k") == b"v2"
    writer.delete("k")
    assert cache.read() == Push([b"invalidate", [b"k"]])
    assert cache("GET", "k") is None
    writer.flushall()
    assert cache.read() == Push([b"invalidate", None])
    assert cache("PING") == "PONG"


# ------------------------------------------------------------------- redis-py blocking queue


def test_redis_py_blpop_consumers_take_each_item_once(server):
    require(server, "BLPOP")
    producer = server.client()
    consumers, items = 4, 400
    taken = queue.Queue()

    def consume():
        c = server.client()
        while True:
            got = c.blpop(["jobs:high", "jobs:low"], timeout=2)
            if got is None or got[1] == b"stop":
                return
            taken.put(got)

    threads = [threading.Thread(target=consume) for _ in range(consumers)]
    for t in threads:
        t.start()
    wait_for(lambda: blocked_clients(producer) == consumers, timeout=5,
             what="every consumer to block")
    for i in range(items):
        producer.rpush("jobs:high" if i % 3 == 0 else "jobs:low", i)
    producer.rpush("jobs:low", *["stop"] * consumers)
    for t in threads:
        t.join(timeout=WAIT_S)
        assert not t.is_alive()
    got = [taken.get_nowait() for _ in range(taken.qsize())]
    assert sorted(int(v) for _, v in got) == list(range(items))
    assert {k for k, _ in got} == {b"jobs:high", b"jobs:low"}
    assert producer.exists("jobs:high", "jobs:low") == 0

    started = time.monotonic()
    assert producer.blpop("jobs:none", timeout=0.3) is None
    assert 0.29 <= time.monotonic() - started < 1.5


def test_replies_before_a_parked_blpop_leave_at_once(server):
    require(server, "BLPOP")
    # A worker acknowledges a job and asks for the next one in one write (tools/pubsub_load's
    # ping-pong does too): the acknowledgement's reply must not wait for the BLPOP.
    worker = server.raw(timeout=5)
    worker.send_many([("RPUSH", "done", "job1"), ("BLPOP", "jobs", "0")])
    assert worker.read() == 1
    producer = server.client()
    wait_for(lambda: blocked_clients(producer) == 1, timeout=5, what="the BLPOP to park")
    assert producer.rpush("jobs", "job2") == 1
    assert worker.read() == [b"jobs", b"job2"]
