"""Fixtures that start the server under test and connect clients to it.

Target selection (environment):
  DAMSELFLY_TEST_TARGET   "damselfly" (default) or "redis" (the reference redis-server 7.0,
                          used to validate the tests themselves).
  DAMSELFLY_BUILD_DIR     where the damselfly binary lives; default "build-opt", relative to
                          the repository root.

Fixtures:
  server          a server shared by the tests of one module; every test starts from an
                  empty keyspace (FLUSHALL) and the clients it opened are closed after it.
                  A crashed shared server is restarted for the next test and the crash is
                  reported as an error of the test during which it happened.
  server_factory  server_factory("--requirepass=secret", "--dbnum=4") starts a fresh server
                  with extra flags (damselfly flag form; translated for redis-server), stopped
                  at the end of the test.
  target          "damselfly" or "redis".

Markers:
  damselfly_only  the test covers behaviour only damselfly has; skipped against redis.

When a test fails, the stderr of every server it used is attached to its report.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import redis

from resp_client import RawConnection

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("DAMSELFLY_TEST_TARGET", "damselfly").strip().lower()
HOST = "127.0.0.1"
STARTUP_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "ThreadSanitizer", "==ERROR")


def damselfly_binary():
    build_dir = os.environ.get("DAMSELFLY_BUILD_DIR", "build-opt")
    if not os.path.isabs(build_dir):
        build_dir = os.path.join(REPO_ROOT, build_dir)
    return os.path.join(build_dir, "damselfly")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "damselfly_only: behaviour only damselfly has; skipped against redis-server")
    if TARGET not in ("damselfly", "redis"):
        raise pytest.UsageError(
            f"DAMSELFLY_TEST_TARGET must be 'damselfly' or 'redis', not {TARGET!r}")


def pytest_report_header(config):
    binary = damselfly_binary() if TARGET == "damselfly" else shutil.which("redis-server")
    return f"server under test: {TARGET} ({binary})"


def pytest_sessionstart(session):
    if TARGET == "damselfly":
        binary = damselfly_binary()
        if not os.access(binary, os.X_OK):
            pytest.exit(f"damselfly binary not found or not executable: {binary} "
                        "(build it, set DAMSELFLY_BUILD_DIR, or run with "
                        "DAMSELFLY_TEST_TARGET=redis)", returncode=4)
    elif shutil.which("redis-server") is None:
        pytest.exit("redis-server not found in PATH", returncode=4)


def pytest_collection_modifyitems(config, items):
    if TARGET == "damselfly":
        return
    skip = pytest.mark.skip(reason="damselfly-only behaviour; target is redis-server")
    for item in items:
        if "damselfly_only" in item.keywords:
            item.add_marker(skip)


# --------------------------------------------------------------------------- servers


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def redis_args(extra):
    """Translates damselfly-style flags (--name=value, --flag) to redis-server arguments."""
    renames = {"dbnum": "databases"}
    out = []
    for arg in extra:
        if not arg.startswith("--"):
            out.append(arg)
            continue
        name, eq, value = arg[2:].partition("=")
        name = renames.get(name, name)
        out.append("--" + name)
        out.append(value if eq else "yes")
    return out


class ServerHandle:
    """One running server process plus the clients the current test opened to it."""

    def __init__(self, extra_args=(), target=TARGET):
        self.host = HOST
        self.target = target
        self.extra_args = list(extra_args)
        self.workdir = tempfile.mkdtemp(prefix="damselfly-test-")
        self.log_path = os.path.join(self.workdir, "server.log")
        self.proc = None
        self.port = None
        self.password = None
        for arg in self.extra_args:
            if arg.startswith("--requirepass="):
                self.password = arg.split("=", 1)[1]
        self._clients = []
        self.expect_exit = False  # set by tests that make the server exit (SHUTDOWN)

    # ------------------------------------------------------------- lifecycle

    def command_line(self, port):
        if self.target == "redis":
            return ["redis-server", "--port", str(port), "--bind", HOST, "--save", "",
                    "--appendonly", "no", "--dir", self.workdir] + redis_args(self.extra_args)
        return [damselfly_binary(), f"--port={port}", f"--bind={HOST}",
                "--proactor_threads=2"] + self.extra_args

    def start(self):
        last_error = None
        for _attempt in range(3):  # a port picked as free can be taken before the bind
            self.port = free_port()
            env = dict(os.environ)
            env.setdefault("GLOG_logtostderr", "1")
            log = open(self.log_path, "ab")
            log.write(f"=== starting: {' '.join(self.command_line(self.port))}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(self.command_line(self.port), stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         cwd=self.workdir, env=env)
            log.close()
            try:
                self._wait_ready()
                return self
            except Exception as e:  # noqa: BLE001 - retried, then re-raised
                last_error = e
                self._kill()
                if "Address already in use" not in self.log_text():
                    break
        raise RuntimeError(f"server did not start: {last_error}\n--- server log ---\n"
                           f"{self.log_tail()}")

    def _wait_ready(self):
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with code {self.proc.returncode}")
            try:
                with socket.create_connection((HOST, self.port), timeout=1) as s:
                    s.settimeout(1)
                    s.sendall(b"*1\r\n$4\r\nPING\r\n")
                    reply = s.recv(64)
                    # +PONG, or -NOAUTH when a password is required: either way it serves.
                    if reply[:1] in (b"+", b"-"):
                        return
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError(f"server did not answer PING within {STARTUP_TIMEOUT_S} s")

    def is_alive(self):
        return self.proc is not None and self.proc.poll() is None

    def _kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        """SIGTERM, then SIGKILL after 5 s. Returns a problem description, or None."""
        self.close_clients()
        problem = None
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                problem = f"server ignored SIGTERM for {STOP_TIMEOUT_S} s and was killed"
            # 0 is a graceful exit; -SIGTERM means no handler (test_sigterm covers that).
            # Anything else is a crash or a sanitizer's exit code.
            if problem is None and self.proc.returncode not in (0, -signal.SIGTERM):
                problem = f"server exited with code {self.proc.returncode} after SIGTERM"
        else:
            problem = f"server had already exited (code {self.proc.returncode})"
        text = self.log_text()
        if problem is None and any(m in text for m in SANITIZER_MARKERS):
            problem = "sanitizer report in the server log"
        return problem

    def cleanup_files(self):
        shutil.rmtree(self.workdir, ignore_errors=True)

    # --------------------------------------------------------------- clients

    def client(self, **kw):
        """A redis-py client (RESP2). Closed at the end of the test."""
        kw.setdefault("socket_timeout", 10)
        kw.setdefault("socket_connect_timeout", 10)
        c = redis.Redis(host=self.host, port=self.port, **kw)
        self._clients.append(c)
        return c

    def raw(self, timeout=10.0):
        """A raw RESP connection (resp_client.RawConnection). Closed at the end of the test."""
        c = RawConnection(self.host, self.port, timeout=timeout)
        self._clients.append(c)
        return c

    def cli(self, *args, check=True, input=None):
        """Runs `redis-cli -h HOST -p PORT args...` and returns its stdout (text)."""
        cmd = ["redis-cli", "-h", self.host, "-p", str(self.port)] + [str(a) for a in args]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=10, input=input)
        if check and res.returncode != 0:
            raise AssertionError(f"{cmd} exited {res.returncode}: {res.stderr}")
        return res.stdout

    def close_clients(self):
        for c in self._clients:
            try:
                c.close()
            except Exception:  # noqa: BLE001 - best effort at teardown
                pass
        self._clients = []

    # ------------------------------------------------------------------- logs

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_tail(self, max_chars=20000):
        text = self.log_text()
        return text if len(text) <= max_chars else "...\n" + text[-max_chars:]

    def __repr__(self):
        return f"<{self.target} server on {self.host}:{self.port}>"


def _register(request, srv):
    servers = getattr(request.node, "_servers_used", None)
    if servers is None:
        servers = request.node._servers_used = []
    servers.append(srv)


@pytest.fixture(scope="session")
def target():
    return TARGET


@pytest.fixture(scope="module")
def _module_server():
    holder = {"srv": ServerHandle().start(), "retired": [], "last_test": None}
    yield holder
    problems = []
    for srv in holder["retired"]:
        srv.stop()
        if srv.retired_reason:
            problems.append(f"{srv}: {srv.retired_reason}\n--- server log ---\n{srv.log_tail()}")
    for srv in [holder["srv"]]:
        problem = srv.stop()
        if problem:
            problems.append(f"{srv}: {problem}\n--- server log ---\n{srv.log_tail()}")
        else:
            srv.cleanup_files()
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def _answers_ping(srv):
    try:
        with RawConnection(srv.host, srv.port, timeout=5) as c:
            return c("PING") == "PONG"
    except Exception:  # noqa: BLE001 - any failure means "not healthy"
        return False


@pytest.fixture
def server(request, _module_server):
    srv = _module_server["srv"]
    if not srv.is_alive():
        # It died during the previous test, which reported it; start a new one.
        srv.retired_reason = None
        _module_server["retired"].append(srv)
        srv = _module_server["srv"] = ServerHandle().start()
    elif not _answers_ping(srv):
        srv.retired_reason = (f"stopped answering PING after {_module_server['last_test']}; "
                              "killed and replaced")
        _module_server["retired"].append(srv)
        srv._kill()
        srv = _module_server["srv"] = ServerHandle().start()
    _module_server["last_test"] = request.node.nodeid
    _register(request, srv)
    yield srv
    srv.close_clients()
    if not srv.is_alive():
        pytest.fail(f"the server died during this test (code {srv.proc.returncode})\n"
                    f"--- server log ---\n{srv.log_tail()}", pytrace=False)


@pytest.fixture(autouse=True)
def _flushall_between_tests(request):
    """Every test that uses the shared server starts from an empty keyspace."""
    if "server" in request.fixturenames:
        srv = request.getfixturevalue("server")
        with RawConnection(srv.host, srv.port, timeout=10) as c:
            reply = c("FLUSHALL")
        if reply != "OK":
            pytest.fail(f"FLUSHALL before the test answered {reply!r}", pytrace=False)
    yield


@pytest.fixture
def server_factory(request):
    started = []

    def start(*extra_args):
        srv = ServerHandle(extra_args)
        _register(request, srv)
        started.append(srv)
        return srv.start()

    yield start
    problems = []
    for srv in started:
        problem = srv.stop()
        if problem and not srv.expect_exit:
            problems.append(f"{srv}: {problem}\n--- server log ---\n{srv.log_tail()}")
        else:
            srv.cleanup_files()
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        for srv in getattr(item, "_servers_used", []):
            rep.sections.append((f"server log: {srv} ({srv.log_path})", srv.log_tail()))
