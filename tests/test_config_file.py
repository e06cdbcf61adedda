"""Start-up from a Redis config file: `SERVER CONFIGFILE [options...]` (or `-` for stdin).

The file's syntax (comments, blank lines, surrounding whitespace, sdssplitargs quoting,
case-insensitive names, `include` with relative paths and glob patterns), the order in which
settings apply (later lines win, command-line options after the file win, `save` lines
accumulate), the values that take effect, Redis's "FATAL CONFIG FILE ERROR" block on a bad
line, Debian's stock /etc/redis/redis.conf, and `daemonize yes` with a pidfile and a logfile.
CONFIG REWRITE of the start-up file, loglevel, `supervised systemd`, optional bind addresses,
Redis-style options on a command line without a file, and a stray argument.

Validated against redis-server 7.0 (DAMSELFLY_TEST_TARGET=redis); the damselfly_only tests
cover what damselfly refuses and where it does better than redis-server 7.0.
"""

import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import HOST, TARGET, ServerHandle, _server_factory, damselfly_binary, free_port
from helpers import wait_for
from resp_client import RespError

STOCK_CONF = "/etc/redis/redis.conf"
EXIT_TIMEOUT_S = 20
FATAL_BANNER = re.compile(r"^\*\*\* FATAL CONFIG FILE ERROR \(.*\) \*\*\*$", re.M)


# --------------------------------------------------------------------------- helpers


def server_command(conf_path, port=None, extra=()):
    """[binary, conf_path, the harness's flags..., extra...]: the config file comes first.
    Without a port, the file must set it (no --port/--bind on the command line)."""
    if TARGET == "redis":
        flags = ["--port", str(port), "--bind", HOST] if port else []
        return ["redis-server", conf_path] + flags + list(extra)
    flags = [f"--port={port}", f"--bind={HOST}"] if port else []
    return [damselfly_binary(), conf_path] + flags + ["--proactor_threads=2"] + list(extra)


def server_env():
    env = dict(os.environ)
    env.setdefault("GLOG_logtostderr", "1")
    return env


def write_files(base, files):
    """Writes {relative path: text} under base (text is written as is, bytes too)."""
    for rel, text in files.items():
        path = os.path.join(base, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())


class ConfigFileServer(ServerHandle):
    """A server started as `binary CONF [flags...]` in its workdir (its cwd).

    files: the config text, or {relative path: text} whose first entry is the config file
    given to the server (the others: files it includes). In the texts, {workdir} stands for
    the server's workdir and {port} for its port; a config that sets the port itself
    ({port} in the first file) gets no --port/--bind flags. Flags are Redis-style
    (--name value), given as they are to both targets.
    """

    def __init__(self, files, flags=()):
        super().__init__(flags)
        self.files = {"redis.conf": files} if isinstance(files, str) else dict(files)
        self.conf_path = os.path.join(self.workdir, next(iter(self.files)))
        self.port_in_file = "{port}" in next(iter(self.files.values()))

    def _pick_ports(self):
        super()._pick_ports()
        write_files(self.workdir, {
            rel: text.replace("{workdir}", self.workdir).replace("{port}", str(self.port))
            for rel, text in self.files.items()})

    def command_line(self, port):
        return server_command(self.conf_path, None if self.port_in_file else port,
                              self.extra_args)


@pytest.fixture
def conf_server(request):
    """conf_server(files, *flags) starts a ConfigFileServer; stopped after the test."""
    yield from _server_factory(request, lambda args: ConfigFileServer(args[0], args[1:]))


class CommandLineServer(ServerHandle):
    """A server started without a config file: the harness's flags, then the extra args as
    they are (Redis-style `--name value...` options) for both targets."""

    def command_line(self, port):
        if self.target == "redis":
            return ["redis-server", "--port", str(port), "--bind", HOST,
                    "--dir", self.workdir] + self.extra_args
        return [damselfly_binary(), f"--port={port}", f"--bind={HOST}",
                "--proactor_threads=2"] + self.extra_args


@pytest.fixture
def cmdline_server(request):
    """cmdline_server(*args) starts a CommandLineServer; stopped after the test."""
    yield from _server_factory(request, CommandLineServer)


@pytest.fixture
def tmpdir_clean():
    """A temporary directory, removed after the test."""
    path = tempfile.mkdtemp(prefix="damselfly-conf-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def run_to_exit(cwd, conf_arg, *extra):
    """Runs the server on conf_arg (a path relative to cwd) and waits for it to exit;
    returns (exit status, stderr + stdout). A server that keeps running fails the test."""
    return run_command_to_exit(cwd, server_command(conf_arg, free_port(), extra))


def run_command_to_exit(cwd, cmd):
    """run_to_exit for a whole command line."""
    try:
        res = subprocess.run(cmd, cwd=cwd, env=server_env(), stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        out = (e.stderr or b"") + (e.stdout or b"")
        pytest.fail(f"{cmd} was still running after {EXIT_TIMEOUT_S} s (expected it to exit)"
                    f"\n--- output ---\n{out.decode(errors='replace')[-5000:]}", pytrace=False)
    return res.returncode, (res.stderr + res.stdout).decode(errors="replace")


def fails_with(tmpdir, conf_text, *extra):
    write_files(tmpdir, {"redis.conf": conf_text})
    return run_to_exit(tmpdir, "redis.conf", *extra)


def assert_config_error(status, output, line_no, line, reason=None, reason_prefix=None):
    """Exit status 1 and Redis's block: banner, `at line N`, `>>> 'line'`, the reason."""
    assert status == 1, f"exit status {status}\n{output}"
    assert FATAL_BANNER.search(output), output
    lines = output.splitlines()
    at = f"Reading the configuration file, at line {line_no}"
    assert at in lines, output
    i = lines.index(at)
    assert lines[i + 1] == f">>> '{line}'", output
    if reason is not None:
        assert lines[i + 2] == reason, output
    else:
        assert lines[i + 2].startswith(reason_prefix), output


def config(c, name):
    """CONFIG GET of one exact name, as a str."""
    got = c.config_get(name)
    assert list(got) == [name], got
    return got[name]


def process_alive(pid):
    """True if pid is a live process (a zombie nobody reaps counts as gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("State:"):
                    return line.split()[1] != "Z"
    except OSError:
        return False
    return False


def answers_ping(port):
    try:
        with socket.create_connection((HOST, port), timeout=1) as s:
            s.settimeout(1)
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            return s.recv(64) == b"+PONG\r\n"
    except OSError:
        return False


# --------------------------------------------------------------------------- syntax


def test_values_from_the_file_read_back_with_config_get(conf_server):
    """Each directive in the file sets its parameter, with memory units understood."""
    srv = conf_server(
        "maxmemory 3mb\n"
        "maxmemory-policy allkeys-lru\n"
        "hash-max-listpack-entries 4\n"
        "slowlog-max-len 3\n"
        "slowlog-log-slower-than 0\n"
        "timeout 17\n"
        "dbfilename custom.rdb\n"
        "appendonly no\n"
        "lazyfree-lazy-user-del yes\n"
        "list-max-listpack-size -2\n"
        "hz 25\n")
    c = srv.client()
    assert config(c, "maxmemory") == "3145728"
    assert config(c, "maxmemory-policy") == "allkeys-lru"
    assert config(c, "hash-max-listpack-entries") == "4"
    assert config(c, "slowlog-max-len") == "3"
    assert config(c, "slowlog-log-slower-than") == "0"
    assert config(c, "timeout") == "17"
    assert config(c, "dbfilename") == "custom.rdb"
    assert config(c, "appendonly") == "no"
    assert config(c, "lazyfree-lazy-user-del") == "yes"
    assert config(c, "list-max-listpack-size") == "-2"
    assert config(c, "hz") == "25"
    memory = c.info("memory")
    assert memory["maxmemory"] == 3145728 and memory["maxmemory_policy"] == "allkeys-lru"


def test_settings_from_the_file_take_effect(conf_server):
    """The slowlog and the hash encoding limits the file sets are the ones the server uses."""
    srv = conf_server("slowlog-log-slower-than 0\nslowlog-max-len 3\n"
                      "hash-max-listpack-entries 4\n")
    raw = srv.raw()
    for i in range(6):
        assert raw("SET", f"k{i}", i) == "OK"
    assert raw("SLOWLOG", "LEN") == 3
    assert raw("HSET", "h", "a", 1, "b", 2, "c", 3, "d", 4) == 4
    assert raw("OBJECT", "ENCODING", "h") == b"listpack"
    assert raw("HSET", "h", "e", 5) == 1
    assert raw("OBJECT", "ENCODING", "h") == b"hashtable"


def test_old_ziplist_names_are_accepted_as_aliases(conf_server):
    """hash-max-ziplist-entries in the file sets hash-max-listpack-entries."""
    srv = conf_server("hash-max-ziplist-entries 99\nzset-max-ziplist-value 33\n")
    c = srv.client()
    assert config(c, "hash-max-listpack-entries") == "99"
    assert config(c, "hash-max-ziplist-entries") == "99"
    assert config(c, "zset-max-listpack-value") == "33"


def test_comments_blank_lines_and_surrounding_whitespace_are_skipped(conf_server):
    """Comment lines (indented too), blank lines, tabs, CRLF endings and a last line without
    a newline are all fine."""
    srv = conf_server(
        "# a comment\n"
        "\n"
        "   \t\n"
        "    # an indented comment: maxmemory 1mb\n"
        "\tmaxmemory 2mb   \n"
        "slowlog-max-len\t\t7\r\n"
        "  hz   30  \r\n"
        "#\n"
        "timeout 5")
    c = srv.client()
    assert config(c, "maxmemory") == str(2 << 20)
    assert config(c, "slowlog-max-len") == "7"
    assert config(c, "hz") == "30"
    assert config(c, "timeout") == "5"


def test_directive_names_are_case_insensitive(conf_server):
    """MAXMEMORY-POLICY and Slowlog-Max-Len name the same parameters as in lower case."""
    srv = conf_server("MAXMEMORY-POLICY volatile-ttl\nSlowlog-Max-Len 9\nMaxMemory 1mb\n")
    c = srv.client()
    assert config(c, "maxmemory-policy") == "volatile-ttl"
    assert config(c, "slowlog-max-len") == "9"
    assert config(c, "maxmemory") == str(1 << 20)


def test_later_lines_override_earlier_ones(conf_server):
    """A directive given twice keeps the value of its last line."""
    srv = conf_server("maxmemory 1mb\nhz 5\nmaxmemory-policy allkeys-lru\n"
                      "maxmemory 2mb\nhz 20\nmaxmemory-policy volatile-lfu\n")
    c = srv.client()
    assert config(c, "maxmemory") == str(2 << 20)
    assert config(c, "hz") == "20"
    assert config(c, "maxmemory-policy") == "volatile-lfu"


def test_command_line_options_after_the_file_win(conf_server):
    """--name value options after the file apply after it; what they do not name stays."""
    srv = conf_server("maxmemory-policy volatile-lru\nslowlog-max-len 10\nhz 15\n",
                      "--maxmemory-policy", "allkeys-lru", "--hz", "40")
    c = srv.client()
    assert config(c, "maxmemory-policy") == "allkeys-lru"
    assert config(c, "hz") == "40"
    assert config(c, "slowlog-max-len") == "10"


def test_double_quoted_arguments_take_escapes(conf_server):
    """A double-quoted password may hold spaces and \\x escapes; AUTH takes the unescaped
    string, a wrong one gets WRONGPASS."""
    srv = conf_server('requirepass "se cret\\x21"\n'
                      'masterauth "tab\\there \\"q\\" back\\\\slash \\x4a\\x4B"\n')
    raw = srv.raw()
    assert raw("GET", "k") == RespError("NOAUTH Authentication required.")
    wrong = raw("AUTH", "se cret")
    assert isinstance(wrong, RespError) and wrong.message.startswith("WRONGPASS"), wrong
    assert raw("AUTH", "se cret!") == "OK"
    assert raw("SET", "k", "v") == "OK"
    c = srv.client(password="se cret!")
    assert c.get("k") == b"v"
    assert config(c, "requirepass") == "se cret!"
    assert config(c, "masterauth") == 'tab\there "q" back\\slash JK'


def test_single_quoted_arguments_take_only_the_quote_escape(conf_server):
    """In single quotes \\' is a quote and every other backslash is itself."""
    srv = conf_server("dbfilename 'it\\'s \"a\" dump.rdb'\nmasteruser 'back\\slash\\n'\n")
    c = srv.client()
    assert config(c, "dbfilename") == "it's \"a\" dump.rdb"
    assert config(c, "masteruser") == "back\\slash\\n"


def test_multiple_save_lines_accumulate(conf_server):
    """save lines add their rules to the first one's (the defaults are dropped)."""
    srv = conf_server("save 900 1\nsave 300 10\n")
    assert config(srv.client(), "save") == "900 1 300 10"


def test_an_empty_save_clears_the_rules(conf_server):
    """save "" drops the rules before it; a save line after it starts over."""
    srv = conf_server('save 900 1\nsave 300 10\nsave ""\n')
    assert config(srv.client(), "save") == ""
    srv = conf_server('save 900 1\nsave ""\nsave 60 5\n')
    assert config(srv.client(), "save") == "60 5"


def test_client_output_buffer_limit_lines_set_each_class(conf_server):
    """One client-output-buffer-limit line per class, with memory units; replica is shown
    as slave."""
    srv = conf_server("client-output-buffer-limit normal 1mb 512kb 30\n"
                      "client-output-buffer-limit replica 128mb 32mb 90\n"
                      "client-output-buffer-limit pubsub 16mb 4mb 45\n")
    assert config(srv.client(), "client-output-buffer-limit") == (
        "normal 1048576 524288 30 slave 134217728 33554432 90 pubsub 16777216 4194304 45")


def test_notify_keyspace_events_from_the_file(conf_server):
    """notify-keyspace-events KEA reads back as AKE and the events are published."""
    srv = conf_server("notify-keyspace-events KEA\n")
    c = srv.client()
    assert config(c, "notify-keyspace-events") == "AKE"
    p = c.pubsub()
    try:
        p.subscribe("__keyspace@0__:k", "__keyevent@0__:set")
        for _ in range(2):
            assert p.get_message(timeout=5)["type"] == "subscribe"
        srv.client().set("k", "v")
        got = {(m["channel"], m["data"]) for m in
               (p.get_message(timeout=5) for _ in range(2)) if m}
        assert got == {(b"__keyspace@0__:k", b"set"), (b"__keyevent@0__:set", b"k")}
    finally:
        p.close()


def test_databases_from_the_file_limit_select(conf_server):
    """databases 4: SELECT 3 works, SELECT 4 is out of range."""
    srv = conf_server("databases 4\n")
    raw = srv.raw()
    assert raw("CONFIG", "GET", "databases") == [b"databases", b"4"]
    assert raw("SELECT", 3) == "OK"
    assert raw("SELECT", 4) == RespError("ERR DB index is out of range")


def test_dir_and_dbfilename_place_the_snapshot(tmpdir_clean, conf_server):
    """dir (through a symlink) reads back as its realpath, and SAVE writes dbfilename
    there."""
    data = os.path.join(tmpdir_clean, "data")
    os.mkdir(data)
    link = os.path.join(tmpdir_clean, "link")
    os.symlink(data, link)
    srv = conf_server(f'dir "{link}"\ndbfilename snap.rdb\n')
    c = srv.client()
    assert config(c, "dir") == os.path.realpath(data)
    assert config(c, "dbfilename") == "snap.rdb"
    c.set("k", "v")
    assert c.save()
    assert os.path.getsize(os.path.join(data, "snap.rdb")) > 0


# --------------------------------------------------------------------------- include


def test_include_reads_a_file_relative_to_the_working_directory(conf_server):
    """include of a relative path reads it from the cwd (not the config file's directory),
    in place: lines before it are overridden by it, lines after it override it."""
    srv = conf_server({
        "conf/main.conf": "maxmemory 1mb\nhz 5\ninclude inc/extra.conf\nhz 30\n",
        "inc/extra.conf": "maxmemory 2mb\nhz 20\nslowlog-max-len 11\n",
    })
    c = srv.client()
    assert config(c, "maxmemory") == str(2 << 20)
    assert config(c, "hz") == "30"
    assert config(c, "slowlog-max-len") == "11"


def test_include_with_a_glob_reads_the_matches_in_sorted_order(conf_server):
    """include inc/*.conf reads every match, sorted by name; a pattern that matches nothing
    is skipped."""
    srv = conf_server({
        "redis.conf": "include inc/*.conf\ninclude nothing-here/*.conf\n",
        "inc/20-b.conf": "maxmemory 2mb\n",
        "inc/10-a.conf": "maxmemory 1mb\nslowlog-max-len 12\n",
        "inc/30-c.txt": "maxmemory 3mb\n",
    })
    c = srv.client()
    assert config(c, "maxmemory") == str(2 << 20)
    assert config(c, "slowlog-max-len") == "12"


def test_a_missing_include_file_fails_startup(tmpdir_clean):
    """include of a file that does not exist: exit 1, can't open config file."""
    status, output = fails_with(tmpdir_clean, "hz 10\ninclude missing.conf\n")
    assert status == 1, output
    assert "can't open config file" in output and "missing.conf" in output, output


def test_an_error_in_an_included_file_reports_its_own_line(tmpdir_clean):
    """The line number of a bad line in an included file counts that file's lines."""
    write_files(tmpdir_clean, {"inc/bad.conf": "# comment\nhz 5\nbogus-thing 1\n"})
    status, output = fails_with(tmpdir_clean, "hz 1\nhz 2\nhz 3\nhz 4\ninclude inc/bad.conf\n")
    assert_config_error(status, output, 3, "bogus-thing 1",
                        "Bad directive or wrong number of arguments")


def test_a_dash_reads_the_config_from_stdin(tmpdir_clean):
    """SERVER - reads the config from its standard input."""
    port = free_port()
    write_files(tmpdir_clean, {"stdin.conf": "maxmemory 5mb\nhz 35\n"})
    cmd = server_command("-", port)
    with open(os.path.join(tmpdir_clean, "stdin.conf"), "rb") as conf, \
            open(os.path.join(tmpdir_clean, "server.log"), "wb") as log:
        proc = subprocess.Popen(cmd, stdin=conf, stdout=log, stderr=subprocess.STDOUT,
                                cwd=tmpdir_clean, env=server_env())
    try:
        wait_for(lambda: proc.poll() is not None or answers_ping(port), timeout=10,
                 what="the server to answer PING")
        assert proc.poll() is None, open(os.path.join(tmpdir_clean, "server.log")).read()
        c = redis.Redis(host=HOST, port=port, socket_timeout=10)
        try:
            assert config(c, "maxmemory") == str(5 << 20)
            assert config(c, "hz") == "35"
        finally:
            c.close()
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("conf, line_no, line, reason", [
    ("# a comment\n\nhz 10\nfoo bar\nhz 20\n", 4, "foo bar",
     "Bad directive or wrong number of arguments"),
    ("hz 10\n\n   requirepass \"abc\n", 3, 'requirepass "abc',
     "Unbalanced quotes in configuration line"),
    ('dbfilename "a"b\n', 1, 'dbfilename "a"b', "Unbalanced quotes in configuration line"),
    ("requirepass 'ab'c\n", 1, "requirepass 'ab'c", "Unbalanced quotes in configuration line"),
    ("hz 10\nport abc\n", 2, "port abc", "argument couldn't be parsed into an integer"),
    ("hz 1 2\n", 1, "hz 1 2", "wrong number of arguments"),
], ids=["unknown-directive", "unbalanced-quotes", "text-after-closing-quote",
        "text-after-closing-single-quote", "not-an-integer", "too-many-arguments"])
def test_a_bad_line_fails_startup_with_the_fatal_config_file_error(tmpdir_clean, conf, line_no,
                                                                   line, reason):
    """Exit 1 and Redis's block: the line number, the (trimmed) line and the reason."""
    status, output = fails_with(tmpdir_clean, conf)
    assert_config_error(status, output, line_no, line, reason)


def test_rename_command_renames_or_removes_commands(conf_server):
    """rename-command: the old name is unknown, the new one runs the command (in pipelines,
    MULTI and scripts too); an empty name removes the command; a renamed name renames on."""
    srv = conf_server("rename-command FLUSHALL myflush\nrename-command CONFIG \"\"\n"
                      "rename-command KEYS k2\nrename-command k2 k3\n")
    c = srv.client()
    for command in (("FLUSHALL",), ("CONFIG", "GET", "port"), ("KEYS", "*"), ("k2", "*")):
        with pytest.raises(Exception, match=f"unknown command '{command[0].lower()}'|"
                                            f"unknown command '{command[0]}'"):
            c.execute_command(*command)
    c.set("a", 1)
    assert c.execute_command("k3", "*") == [b"a"]
    assert c.eval("return redis.call('k3', '*')", 0) == [b"a"]
    with pytest.raises(Exception, match="Unknown Redis command called from script"):
        c.eval("return redis.call('keys', '*')", 0)
    # A pipeline of the new name then the old one: the old one stays unknown.
    pipe = c.pipeline(transaction=False)
    pipe.execute_command("k3", "*")
    pipe.execute_command("KEYS", "*")
    got = pipe.execute(raise_on_error=False)
    assert got[0] == [b"a"] and "unknown command" in str(got[1])
    pipe = c.pipeline(transaction=True)
    pipe.execute_command("myflush")
    assert pipe.execute() == [b"OK"]
    assert c.dbsize() == 0


@pytest.mark.parametrize("line,reason", [
    ("rename-command NOPE x", "No such command in rename-command"),
    ("rename-command GET set", "Target command name already exists"),
])
def test_rename_command_errors_fail_startup(tmpdir_clean, line, reason):
    """rename-command of an unknown command, or to a name taken, stops the start."""
    status, output = fails_with(tmpdir_clean, f"hz 10\n{line}\n")
    assert_config_error(status, output, 2, line, reason)


def test_a_bad_enum_value_lists_the_allowed_ones(tmpdir_clean):
    """maxmemory-policy bogus: the reason lists the values it may take."""
    status, output = fails_with(tmpdir_clean, "maxmemory 1mb\nmaxmemory-policy bogus\n")
    assert_config_error(status, output, 2, "maxmemory-policy bogus",
                        reason_prefix="argument(s) must be one of the following")
    assert "allkeys-lru" in output and "noeviction" in output, output


def test_a_missing_config_file_fails_startup(tmpdir_clean):
    """A config file that does not exist: exit 1, can't open config file."""
    status, output = run_to_exit(tmpdir_clean, os.path.join(tmpdir_clean, "nope.conf"))
    assert status == 1, output
    assert "can't open config file" in output and "nope.conf" in output, output


# --------------------------------------------------------------------------- CONFIG REWRITE

REWRITE_SIGNATURE = "# Generated by CONFIG REWRITE"

# Comments, a blank line, a line the tests leave alone, an option under its current name and
# two save lines. ConfigFileServer adds --port/--bind flags, so the rewrite adds port and bind.
REWRITE_CONF = ("# damselfly test config\n"
                "# hash encoding\n"
                "hash-max-listpack-entries 512\n"
                "# end of hash encoding\n"
                "\n"
                "timeout 17\n"
                "save 900 1\n"
                "save 300 10\n")

# A memory size, an enum, the old alias of an option the file names, two save rules, flags
# that read back reordered and a string with a space.
REWRITE_SETTINGS = [("maxmemory", "3mb"), ("maxmemory-policy", "allkeys-lru"),
                    ("hash-max-ziplist-entries", "100"), ("save", "100 5 200 6"),
                    ("notify-keyspace-events", "KEA"), ("masterauth", "a b")]

# Not in REWRITE_SETTINGS, because of what a rewrite of the rewritten file does with it:
# redis-server 7.0 (and damselfly after it) gives the file's one client-output-buffer-limit
# line to the first class (normal, at its default) and appends the pubsub line again, so the
# file settles only at the third rewrite.
PUBSUB_LIMIT = ("client-output-buffer-limit", "pubsub 1mb 0 0")


def config_set_all(srv, settings):
    raw = srv.raw()
    for name, value in settings:
        assert raw("CONFIG", "SET", name, value) == "OK", (name, value)


def config_rewrite(srv):
    """CONFIG REWRITE, which must answer OK; returns the file's bytes."""
    assert srv.raw()("CONFIG", "REWRITE") == "OK"
    with open(srv.conf_path, "rb") as f:
        return f.read()


def split_at_signature(text):
    """The file's lines before and after its one '# Generated by CONFIG REWRITE' line."""
    lines = text.decode().splitlines()
    assert lines.count(REWRITE_SIGNATURE) == 1, lines
    i = lines.index(REWRITE_SIGNATURE)
    return lines[:i], lines[i + 1:]


def non_blank_lines(text):
    return [line for line in text.decode().splitlines() if line.strip()]


def test_config_rewrite_without_a_config_file_is_an_error(server):
    """A server started without a config file has no file to rewrite."""
    assert server.raw()("CONFIG", "REWRITE") == RespError(
        "ERR The server is running without a config file")


def test_config_rewrite_updates_the_files_lines_in_place_and_appends_the_others(conf_server):
    """Comments, blank lines and untouched lines stay; an option the file names gets its new
    value on its own line, under the file's name for it; each save rule takes one save line;
    changed options the file did not name come after '# Generated by CONFIG REWRITE'."""
    srv = conf_server(REWRITE_CONF)
    config_set_all(srv, REWRITE_SETTINGS + [PUBSUB_LIMIT])
    before, after = split_at_signature(config_rewrite(srv))
    assert before[:8] == ["# damselfly test config",
                          "# hash encoding",
                          "hash-max-listpack-entries 100",
                          "# end of hash encoding",
                          "",
                          "timeout 17",
                          "save 100 5",
                          "save 200 6"], before
    assert not any(line.strip() for line in before[8:]), before
    assert {"maxmemory 3mb", "maxmemory-policy allkeys-lru", 'masterauth "a b"',
            "client-output-buffer-limit pubsub 1mb 0 0",
            'notify-keyspace-events "AKE"'} <= set(after), after
    named = [line for line in after if line.split(" ")[0] in (
        "hash-max-listpack-entries", "hash-max-ziplist-entries", "timeout", "save")]
    assert named == [], after


def test_a_server_started_from_the_rewritten_file_has_the_same_config(tmpdir_clean,
                                                                     conf_server):
    """The point of a rewrite: a new server started from the file reads back every CONFIG GET
    value of the old one (but the port, which the test picks anew)."""
    # dir: one that outlives both servers (they save there when they stop).
    srv = conf_server(REWRITE_CONF + f'dir "{tmpdir_clean}"\n')
    config_set_all(srv, REWRITE_SETTINGS + [PUBSUB_LIMIT])
    text = config_rewrite(srv).decode()
    old = srv.client().config_get("*")
    srv.expect_exit = True
    assert srv.stop() is None, srv.log_tail()
    c = conf_server(text).client()
    assert config(c, "maxmemory") == str(3 << 20)
    assert config(c, "maxmemory-policy") == "allkeys-lru"
    assert config(c, "hash-max-listpack-entries") == "100"
    assert config(c, "save") == "100 5 200 6"
    assert config(c, "client-output-buffer-limit").endswith(" pubsub 1048576 0 0")
    assert config(c, "notify-keyspace-events") == "AKE"
    assert config(c, "masterauth") == "a b"
    assert config(c, "timeout") == "17"
    new = c.config_get("*")
    old.pop("port")
    new.pop("port")
    assert new == old


def test_a_rewrite_with_nothing_changed_keeps_the_files_lines(conf_server):
    """A second CONFIG REWRITE with no change in between writes the same lines (redis-server
    7.0 adds a blank line at the end) and a third the same bytes as the second."""
    srv = conf_server(REWRITE_CONF)
    config_set_all(srv, REWRITE_SETTINGS)
    first = config_rewrite(srv)
    second = config_rewrite(srv)
    assert non_blank_lines(second) == non_blank_lines(first)
    assert config_rewrite(srv) == second


def test_save_set_to_empty_leaves_one_empty_save_line(conf_server):
    """CONFIG SET save "" then a rewrite: the file's first save line becomes save "", its
    other save line goes, the lines around them stay."""
    srv = conf_server("save 900 1\n# between\nsave 300 10\nhz 12\n")
    config_set_all(srv, [("save", "")])
    text = config_rewrite(srv)
    assert [line for line in text.decode().splitlines() if line.startswith("save")] == [
        'save ""']
    assert non_blank_lines(text)[:3] == ['save ""', "# between", "hz 12"]


# --------------------------------------------------------------------------- other options


def test_loglevel_reads_back_from_the_file_and_config_set_checks_it(conf_server):
    """loglevel warning reads back; CONFIG SET loglevel debug works, an unknown level is
    refused with the levels listed and changes nothing."""
    srv = conf_server("loglevel warning\n")
    raw = srv.raw()
    assert raw("CONFIG", "GET", "loglevel") == [b"loglevel", b"warning"]
    assert raw("CONFIG", "SET", "loglevel", "debug") == "OK"
    assert raw("CONFIG", "GET", "loglevel") == [b"loglevel", b"debug"]
    assert raw("CONFIG", "SET", "loglevel", "foo") == RespError(
        "ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must "
        "be one of the following: debug, verbose, notice, warning")
    assert raw("CONFIG", "GET", "loglevel") == [b"loglevel", b"debug"]


def receive_until(sock, wanted, timeout=10.0):
    """Datagrams from sock until one has the line `wanted`; returns them all. Fails the
    test, showing what came, if none has it within timeout seconds."""
    got = []
    deadline = time.monotonic() + timeout
    while not any(wanted in d.split(b"\n") for d in got):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            pytest.fail(f"no {wanted!r} within {timeout} s; received {got!r}", pytrace=False)
        sock.settimeout(remaining)
        try:
            got.append(sock.recv(4096))
        except socket.timeout:
            pass
    return got


def test_supervised_systemd_tells_the_notify_socket_the_server_is_ready(tmpdir_clean,
                                                                         monkeypatch,
                                                                         conf_server):
    """supervised systemd with NOTIFY_SOCKET in the environment: a READY=1 datagram reaches
    that socket, and the server serves."""
    path = os.path.join(tmpdir_clean, "notify.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(path)
        monkeypatch.setenv("NOTIFY_SOCKET", path)
        srv = conf_server("supervised systemd\n")
        receive_until(sock, b"READY=1")
        c = srv.client()
        assert c.ping()
        assert config(c, "supervised") == "systemd"
        srv.expect_exit = True
        assert srv.stop() is None, srv.log_tail()


def ipv6_loopback():
    """True if this host has ::1 to bind to."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.parametrize("bind", ["127.0.0.1 -::1", "* -::*"])
def test_bind_with_optional_addresses_serves_on_127_0_0_1(conf_server, bind):
    """An address after '-' is optional (skipped if it cannot be bound): the server starts,
    serves on 127.0.0.1, and on ::1 too when the host has it; CONFIG GET bind shows the
    line."""
    srv = conf_server(f"port {{port}}\nbind {bind}\n")
    c = srv.client()
    assert c.ping()
    assert config(c, "bind") == bind
    if ipv6_loopback():
        c6 = redis.Redis(host="::1", port=srv.port, socket_timeout=10, socket_connect_timeout=10)
        try:
            assert c6.ping()
        finally:
            c6.close()


def test_redis_style_options_on_the_command_line_without_a_config_file(cmdline_server):
    """Without a file, `--save 60 1` (two words for one option), `--appendonly no` (a yes/no
    value) and `--maxmemory-policy allkeys-lru` after the usual flags set those parameters."""
    srv = cmdline_server("--save", "60", "1", "--appendonly", "no",
                         "--maxmemory-policy", "allkeys-lru")
    c = srv.client()
    assert config(c, "save") == "60 1"
    assert config(c, "appendonly") == "no"
    assert config(c, "maxmemory-policy") == "allkeys-lru"


STRAY = "stray-word"


@pytest.mark.parametrize("with_file", [False, True], ids=["no-config-file", "after-the-file"])
def test_an_unexpected_argument_fails_startup_naming_it(tmpdir_clean, with_file):
    """A word on the command line that no option takes: exit 1 with a message that names it
    (redis-server reads it as one more argument of the option or line before it, and says
    that is wrong)."""
    port = free_port()
    if with_file:
        write_files(tmpdir_clean, {"redis.conf": f"port {port}\nbind {HOST}\n"})
        cmd = server_command("redis.conf", extra=[STRAY])
    elif TARGET == "redis":
        cmd = ["redis-server", "--bind", HOST, "--port", str(port), STRAY]
    else:
        cmd = [damselfly_binary(), "--proactor_threads=2", f"--bind={HOST}", f"--port={port}",
               STRAY]
    status, output = run_command_to_exit(tmpdir_clean, cmd)
    assert status == 1, output
    assert STRAY in output, output


# --------------------------------------------------------------------------- real configs


def stock_config():
    """Debian's /etc/redis/redis.conf with daemonize no and the port, bind, dir, pidfile
    and logfile lines pointed at the test's (placeholders filled by ConfigFileServer)."""
    if not os.access(STOCK_CONF, os.R_OK):
        pytest.skip(f"{STOCK_CONF} is not here (the redis-server package installs it)")
    with open(STOCK_CONF) as f:
        text = f.read()
    for directive, value in [("daemonize", "no"), ("port", "{port}"), ("bind", "127.0.0.1"),
                             ("dir", "{workdir}"), ("pidfile", "{workdir}/redis.pid"),
                             ("logfile", '""')]:
        text, n = re.subn(rf"^{directive} .*$", f"{directive} {value}", text, flags=re.M)
        assert n == 1, f"{STOCK_CONF} has {n} active '{directive}' lines"
    return text


def test_debians_stock_redis_conf_works(conf_server):
    """A Redis user's existing redis.conf: it starts, serves, and reports the file's
    values; the pidfile holds the server's pid and is removed at shutdown."""
    srv = conf_server(stock_config())
    c = srv.client()
    assert c.ping()
    assert config(c, "port") == str(srv.port)
    assert config(c, "databases") == "16"
    assert config(c, "appendonly") == "no"
    assert config(c, "hz") == "10"
    assert config(c, "maxmemory-policy") == "noeviction"
    assert config(c, "timeout") == "0"
    assert config(c, "notify-keyspace-events") == ""
    assert config(c, "client-output-buffer-limit") == (
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60")
    assert config(c, "dir") == os.path.realpath(srv.workdir)
    assert c.set("greeting", "hello")
    assert c.get("greeting") == b"hello"
    pidfile = os.path.join(srv.workdir, "redis.pid")
    with open(pidfile) as f:
        assert int(f.read().strip()) == srv.proc.pid
    srv.expect_exit = True
    assert srv.stop() is None, srv.log_tail()
    assert not os.path.exists(pidfile)


def launch_daemon(tmpdir, pidfile, logfile):
    """Runs the server with daemonize yes on a free port: the launched process must exit 0.
    Returns (port, the daemon's pid), or None when the port was taken before it bound."""
    port = free_port()
    conf = os.path.join(tmpdir, "redis.conf")
    write_files(tmpdir, {"redis.conf": (
        f"daemonize yes\nport {port}\nbind {HOST}\n"
        f'pidfile "{pidfile}"\nlogfile "{logfile}"\ndir "{tmpdir}"\n')})
    try:
        res = subprocess.run(server_command(conf), cwd=tmpdir, env=server_env(),
                             stdin=subprocess.DEVNULL, capture_output=True,
                             timeout=EXIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the launched process did not exit within {EXIT_TIMEOUT_S} s "
                    "(it should fork and exit 0)", pytrace=False)
    assert res.returncode == 0, (res.returncode, res.stderr, res.stdout)
    pid = int(wait_for(lambda: os.path.exists(pidfile) and open(pidfile).read().strip(),
                       timeout=10, what="the pidfile"))
    try:
        wait_for(lambda: answers_ping(port) or not process_alive(pid), timeout=10,
                 what="the daemon to answer PING")
    except BaseException:
        kill_if_alive(pid)
        raise
    if process_alive(pid):
        return port, pid
    log = open(logfile).read() if os.path.exists(logfile) else ""
    if "already in use" not in log:
        pytest.fail(f"the daemon exited\n--- log ---\n{log}", pytrace=False)
    for path in (pidfile, logfile):
        if os.path.exists(path):
            os.remove(path)
    return None


def kill_if_alive(pid):
    if process_alive(pid):
        os.kill(pid, signal.SIGKILL)


def test_daemonize_yes_forks_and_writes_the_pidfile_and_logfile(tmpdir_clean):
    """daemonize yes: the launched process exits 0, the daemon's pid is in the pidfile, it
    serves and logs to the logfile; SHUTDOWN NOSAVE ends it and removes the pidfile."""
    pidfile = os.path.join(tmpdir_clean, "daemon.pid")
    logfile = os.path.join(tmpdir_clean, "daemon.log")
    for _attempt in range(3):  # a port picked as free can be taken before the daemon binds
        launched = launch_daemon(tmpdir_clean, pidfile, logfile)
        if launched:
            break
    else:
        pytest.fail("the daemon found its port taken 3 times", pytrace=False)
    port, pid = launched
    try:
        assert process_alive(pid)
        assert os.path.getsize(logfile) > 0
        c = redis.Redis(host=HOST, port=port, socket_timeout=10)
        try:
            assert c.set("k", "v") and c.get("k") == b"v"
            assert config(c, "daemonize") == "yes"
            try:
                c.shutdown(nosave=True)
            except redis.ConnectionError:
                pass
        finally:
            c.close()
        wait_for(lambda: not process_alive(pid), timeout=10, what="the daemon to exit")
        wait_for(lambda: not os.path.exists(pidfile), timeout=5,
                 what="the pidfile to be removed")
    finally:
        kill_if_alive(pid)


# --------------------------------------------------------------------------- damselfly


def test_redis_directives_without_effect_are_accepted_and_reported(conf_server):
    """Directives that tune Redis internals (rehashing, jemalloc, OOM scores) are accepted
    and CONFIG GET shows the file's values."""
    srv = conf_server("activerehashing no\njemalloc-bg-thread no\noom-score-adj no\n")
    c = srv.client()
    assert config(c, "activerehashing") == "no"
    assert config(c, "jemalloc-bg-thread") == "no"
    assert config(c, "oom-score-adj") == "no"


@pytest.mark.damselfly_only
def test_a_directive_damselfly_refuses_fails_startup(tmpdir_clean):
    """loadmodule: damselfly has no modules, so start-up fails naming the directive."""
    status, output = fails_with(tmpdir_clean, "hz 10\nloadmodule /x.so\n")
    assert status == 1, output
    assert "loadmodule" in output, output


@pytest.mark.damselfly_only
def test_a_second_rewrite_with_nothing_changed_leaves_the_file_byte_identical(conf_server):
    """A rewrite of the rewritten file with no change in between writes the same bytes
    (redis-server 7.0 adds a blank line at the end the second time)."""
    srv = conf_server(REWRITE_CONF)
    config_set_all(srv, REWRITE_SETTINGS)
    first = config_rewrite(srv)
    assert config_rewrite(srv) == first


@pytest.mark.damselfly_only
@pytest.mark.parametrize("mode", [0o600, 0o660], ids=oct)
def test_config_rewrite_keeps_the_files_permissions(conf_server, mode):
    """The rewritten file keeps the mode of the file it replaces, so a file only its owner may
    read (it holds masterauth) stays so (redis-server 7.0 makes it 0644 less the umask)."""
    srv = conf_server(REWRITE_CONF)
    os.chmod(srv.conf_path, mode)
    config_set_all(srv, [("masterauth", "a b")])
    _, after = split_at_signature(config_rewrite(srv))
    assert 'masterauth "a b"' in after
    assert stat.S_IMODE(os.stat(srv.conf_path).st_mode) == mode
