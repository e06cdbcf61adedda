"""Fixtures that start the server under test and connect clients to it.

Target selection (environment):
  DAMSELFLY_TEST_TARGET   "damselfly" (default), "redis" (the reference redis-server 7.0,
                          used to validate the RESP tests) or "memcached" (the reference
                          memcached 1.6, used to validate the memcache tests).
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
  target          "damselfly", "redis" or "memcached".

Memcache fixtures (the server's object has .mc_port, the memcache port, and .port, the RESP
port, which is None for memcached):
  mc_server          a server shared by the tests of one module, serving the memcache text
                     protocol: damselfly started with --memcached_port, or memcached. Every
                     test starts after a flush_all. Clients: mc_client() (pymemcache),
                     mc_raw() (McConnection, raw bytes), client() (redis-py, damselfly only).
  mc_server_factory  mc_server_factory("--flag=value") starts a fresh one (damselfly flags;
                     with flags, a test is skipped against memcached), stopped after the test.
  memcached_factory  memcached_factory() starts a real memcached whatever the target (for
                     the tests that compare damselfly with it byte for byte).
RESP tests (server, server_factory) are skipped when the target is memcached, and memcache
tests are skipped when it is redis.

Markers:
  damselfly_only  the test covers behaviour only damselfly has; skipped against redis and
                  memcached.
  apps            the test drives a real application (an RQ, Celery, Sidekiq or BullMQ worker,
                  redis-py's Lock) and takes seconds; tools/test.sh deselects these in the
                  ASAN run.

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
TARGETS = ("damselfly", "redis", "memcached")
RESP_FIXTURES = ("server", "server_factory")
MEMCACHE_FIXTURES = ("mc_server", "mc_server_factory")
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
        "markers",
        "damselfly_only: behaviour only damselfly has; skipped against redis-server and memcached")
    config.addinivalue_line(
        "markers",
        "apps: drives real applications (RQ, Celery, Sidekiq, BullMQ); tools/test.sh runs these "
        "in the release build only")
    if TARGET not in TARGETS:
        raise pytest.UsageError(
            f"DAMSELFLY_TEST_TARGET must be 'damselfly', 'redis' or 'memcached', not {TARGET!r}")


def pytest_report_header(config):
    binary = {"damselfly": damselfly_binary(), "redis": shutil.which("redis-server"),
              "memcached": shutil.which("memcached")}[TARGET]
    return f"server under test: {TARGET} ({binary})"


def pytest_sessionstart(session):
    if TARGET == "damselfly":
        binary = damselfly_binary()
        if not os.access(binary, os.X_OK):
            pytest.exit(f"damselfly binary not found or not executable: {binary} "
                        "(build it, set DAMSELFLY_BUILD_DIR, or run with "
                        "DAMSELFLY_TEST_TARGET=redis)", returncode=4)
    elif shutil.which(TARGET if TARGET == "memcached" else "redis-server") is None:
        pytest.exit(f"{TARGET} not found in PATH", returncode=4)


def pytest_collection_modifyitems(config, items):
    if TARGET == "damselfly":
        return
    skip = pytest.mark.skip(reason=f"damselfly-only behaviour; target is {TARGET}")
    other_protocol = RESP_FIXTURES if TARGET == "memcached" else MEMCACHE_FIXTURES
    skip_protocol = pytest.mark.skip(reason=f"the target ({TARGET}) does not serve this protocol")
    for item in items:
        if "damselfly_only" in item.keywords:
            item.add_marker(skip)
        elif any(f in getattr(item, "fixturenames", ()) for f in other_protocol):
            item.add_marker(skip_protocol)


# --------------------------------------------------------------------------- servers


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def redis_args(extra):
    """Translates damselfly-style flags (--name=value, --flag) to redis-server arguments."""
    renames = {"dbnum": "databases", "enable_protected_configs": "enable-protected-configs",
               "key_load_delay": "key-load-delay", "aof_load_truncated": "aof-load-truncated"}
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


class LogFile:
    """A process's log at self.log_path, for failure reports."""

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_tail(self, max_chars=20000):
        text = self.log_text()
        return text if len(text) <= max_chars else "...\n" + text[-max_chars:]


class ServerHandle(LogFile):
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

    def _pick_ports(self):
        self.port = free_port()

    def start(self):
        last_error = None
        for _attempt in range(3):  # a port picked as free can be taken before the bind
            self._pick_ports()
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
                    # +PONG, or -NOAUTH when a password is required: either way it serves
                    # (-LOADING: not yet, the snapshot is being loaded).
                    if reply[:1] in (b"+", b"-") and not reply.startswith(b"-LOADING"):
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


def _shared_servers(new_server):
    """Body of a module-scoped fixture: a holder of the server the module's tests share
    (and of those it replaced). At the end, stops them all; fails on any problem."""
    holder = {"srv": new_server().start(), "new": new_server, "retired": [], "last_test": None}
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


def _healthy_shared_server(request, holder, answers):
    """The holder's server for this test, replaced first if it died or does not answer."""
    srv = holder["srv"]
    if not srv.is_alive():
        # It died during the previous test, which reported it; start a new one.
        srv.retired_reason = None
        holder["retired"].append(srv)
        srv = holder["srv"] = holder["new"]().start()
    elif not answers(srv):
        srv.retired_reason = f"stopped answering after {holder['last_test']}; killed and replaced"
        holder["retired"].append(srv)
        srv._kill()
        srv = holder["srv"] = holder["new"]().start()
    holder["last_test"] = request.node.nodeid
    _register(request, srv)
    return srv


def _after_test_on_shared(srv):
    srv.close_clients()
    if not srv.is_alive():
        pytest.fail(f"the server died during this test (code {srv.proc.returncode})\n"
                    f"--- server log ---\n{srv.log_tail()}", pytrace=False)


def _server_factory(request, new_server):
    """Body of a factory fixture: start(*flags) starts a server made by new_server(flags);
    at the end, stops them all and fails on problems (unless a test expected the exit)."""
    started = []

    def start(*extra_args):
        srv = new_server(extra_args)
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


@pytest.fixture(scope="module")
def _module_server():
    yield from _shared_servers(ServerHandle)


def _answers_ping(srv):
    try:
        with RawConnection(srv.host, srv.port, timeout=5) as c:
            return c("PING") == "PONG"
    except Exception:  # noqa: BLE001 - any failure means "not healthy"
        return False


@pytest.fixture
def server(request, _module_server):
    srv = _healthy_shared_server(request, _module_server, _answers_ping)
    yield srv
    _after_test_on_shared(srv)


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
    yield from _server_factory(request, ServerHandle)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed:
        for srv in getattr(item, "_servers_used", []):
            rep.sections.append((f"server log: {srv} ({srv.log_path})", srv.log_tail()))


# --------------------------------------------------------------------------- memcache


class McClosed(Exception):
    """The server closed the connection; .received holds what it sent before that."""

    def __init__(self, received):
        super().__init__(f"connection closed by the server after {received!r}")
        self.received = received


class McConnection:
    """A raw memcache text-protocol connection: bytes in, bytes out.

    call(request) sends the request followed by "mn\\r\\n" (meta no-op) in the same write
    and returns every reply byte before the "MN\\r\\n" that answers it, stepping over data
    blocks ("VALUE ... <bytes>", "VA <bytes>") by their length, so a value that contains
    "MN\\r\\n" cannot end the reply early. Raises McClosed when the server closes first.
    """

    def __init__(self, host, port, timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def send(self, data):
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            raise McClosed(b"") from None

    def _fill(self, received_so_far=b""):
        try:
            chunk = self.sock.recv(1 << 20)
        except ConnectionResetError:  # closed with our unread request bytes pending
            chunk = b""
        if not chunk:
            raise McClosed(received_so_far + bytes(self.buf))
        self.buf += chunk

    def readline(self):
        """One reply line, "\\r\\n" included (waits for it)."""
        while True:
            end = self.buf.find(b"\r\n")
            if end >= 0:
                line = bytes(self.buf[:end + 2])
                del self.buf[:end + 2]
                return line
            self._fill()

    def read_exact(self, n):
        while len(self.buf) < n:
            self._fill()
        data = bytes(self.buf[:n])
        del self.buf[:n]
        return data

    def read_item(self):
        """One reply line plus the data block it announces, if any."""
        line = self.readline()
        words = line.split()
        if line.startswith(b"VALUE ") and len(words) >= 4:
            return line + self.read_exact(int(words[3]) + 2)
        if line.startswith(b"VA ") and len(words) >= 2:
            return line + self.read_exact(int(words[1]) + 2)
        return line

    def read_until_mn(self, count=1):
        """Reads up to the count-th "MN\r\n"; returns what came before the last one."""
        out = b""
        while True:
            try:
                item = self.read_item()
            except McClosed as e:
                raise McClosed(out + e.received) from None
            if item == b"MN\r\n":
                count -= 1
                if count == 0:
                    return out
            out += item

    def call(self, request, own_mn=0):
        """own_mn: how many mn commands the request has itself; their MN lines are kept."""
        self.send(request + b"mn\r\n")
        return self.read_until_mn(own_mn + 1)

    def read_until_closed(self, timeout=5.0):
        """Everything the server sends until it closes the connection."""
        self.sock.settimeout(timeout)
        out = bytes(self.buf)
        self.buf.clear()
        while True:
            try:
                chunk = self.sock.recv(1 << 20)
            except ConnectionResetError:
                return out
            if not chunk:
                return out
            out += chunk

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _wait_memcache_ready(proc, port, deadline):
    """Waits until "version" on the memcache port answers "VERSION ..." (or, when clients
    must authenticate, "CLIENT_ERROR unauthenticated")."""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with code {proc.returncode}")
        try:
            with McConnection(HOST, port, timeout=1) as c:
                c.send(b"version\r\n")
                line = c.readline()
                if line.startswith(b"VERSION ") or line == b"CLIENT_ERROR unauthenticated\r\n":
                    return
        except (OSError, McClosed):
            pass
        time.sleep(0.02)
    raise RuntimeError(f"memcache port {port} did not answer 'version' within "
                       f"{STARTUP_TIMEOUT_S} s")


class _MemcacheClients:
    """Memcache clients for a handle with .mc_port; closed with the handle's other clients."""

    def mc_client(self, **kw):
        """A pymemcache Client whose commands wait for replies (default_noreply=False)."""
        from pymemcache.client.base import Client
        kw.setdefault("connect_timeout", 10)
        kw.setdefault("timeout", 10)
        kw.setdefault("default_noreply", False)
        c = Client((self.host, self.mc_port), **kw)
        self._clients.append(c)
        return c

    def mc_raw(self, timeout=10.0):
        """A raw McConnection to the memcache port."""
        c = McConnection(self.host, self.mc_port, timeout=timeout)
        self._clients.append(c)
        return c


class DamselflyMemcacheHandle(_MemcacheClients, ServerHandle):
    """damselfly with --memcached_port: .port (RESP) and .mc_port (memcache)."""

    def __init__(self, extra_args=()):
        super().__init__(extra_args, target="damselfly")
        self.mc_port = None

    def _pick_ports(self):
        self.port = free_port()
        self.mc_port = free_port()

    def command_line(self, port):
        return super().command_line(port) + [f"--memcached_port={self.mc_port}"]

    def _wait_ready(self):
        super()._wait_ready()
        _wait_memcache_ready(self.proc, self.mc_port, time.monotonic() + STARTUP_TIMEOUT_S)


class MemcachedHandle(_MemcacheClients, ServerHandle):
    """The reference memcached 1.6: one worker thread, no UDP, .mc_port; .port is None."""

    def __init__(self, extra_args=()):
        super().__init__(extra_args, target="memcached")
        self.mc_port = None

    def _pick_ports(self):
        self.port = None
        self.mc_port = free_port()

    def command_line(self, port):
        # memcached refuses to run as root without -u.
        user = ["-u", "root"] if os.geteuid() == 0 else []
        return (["memcached", "-p", str(self.mc_port), "-l", HOST, "-U", "0", "-t", "1"] + user
                + self.extra_args)

    def _wait_ready(self):
        _wait_memcache_ready(self.proc, self.mc_port, time.monotonic() + STARTUP_TIMEOUT_S)

    def client(self, **kw):
        raise AssertionError("memcached has no RESP port")

    def __repr__(self):
        return f"<memcached on {self.host}:{self.mc_port}>"


def _new_memcache_server(extra_args=()):
    if TARGET == "memcached":
        if extra_args:
            pytest.skip(f"damselfly flags {extra_args} have no memcached equivalent here")
        return MemcachedHandle()
    return DamselflyMemcacheHandle(extra_args)


def _mc_answers(srv):
    try:
        with McConnection(srv.host, srv.mc_port, timeout=5) as c:
            return c.call(b"") == b""
    except Exception:  # noqa: BLE001 - any failure means "not healthy"
        return False


@pytest.fixture(scope="module")
def _module_mc_server():
    yield from _shared_servers(_new_memcache_server)


@pytest.fixture
def mc_server(request, _module_mc_server):
    srv = _healthy_shared_server(request, _module_mc_server, _mc_answers)
    with McConnection(srv.host, srv.mc_port, timeout=10) as c:
        reply = c.call(b"flush_all\r\n")
    if reply != b"OK\r\n":
        pytest.fail(f"flush_all before the test answered {reply!r}", pytrace=False)
    yield srv
    _after_test_on_shared(srv)


@pytest.fixture
def mc_server_factory(request):
    yield from _server_factory(request, _new_memcache_server)


@pytest.fixture
def memcached_factory(request):
    if shutil.which("memcached") is None:
        pytest.fail("memcached not found in PATH (tools/install-deps.sh installs it)",
                    pytrace=False)
    yield from _server_factory(request, MemcachedHandle)
