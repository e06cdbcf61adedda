"""memccapable (libmemcached-tools) in text mode against the memcache port (issue #6).

memcached 1.6.18 passes all 27 checks of `memccapable -a` (the ascii protocol); the binary
protocol checks (-b) are out of scope: damselfly serves the text protocol only. Each check
is reported on its own line as "<name>   [pass]" / "[FAIL]" / "[skip]"; the test requires
exactly the checks below to pass, and tells which did not.
"""

import re
import shutil
import subprocess

import pytest

ASCII_CHECKS_MEMCACHED_PASSES = (
    "ascii version", "ascii quit", "ascii verbosity", "ascii set", "ascii set noreply",
    "ascii get", "ascii gets", "ascii mget", "ascii flush", "ascii flush noreply",
    "ascii add", "ascii add noreply", "ascii replace", "ascii replace noreply", "ascii cas",
    "ascii cas noreply", "ascii delete", "ascii delete noreply", "ascii incr",
    "ascii incr noreply", "ascii decr", "ascii decr noreply", "ascii append",
    "ascii append noreply", "ascii prepend", "ascii prepend noreply", "ascii stat",
)
CHECK_LINE = re.compile(r"^(ascii .*?)\s+\[(pass|FAIL|skip)\]\s*$")


def run_memccapable(host, port):
    """{check name: "pass" | "FAIL" | "skip"} and the full output."""
    binary = shutil.which("memccapable")
    if binary is None:
        pytest.fail("memccapable not found (libmemcached-tools; tools/install-deps.sh)",
                    pytrace=False)
    # -t: per-operation timeout, so a server that does not answer fails a check instead
    # of hanging the run.
    res = subprocess.run([binary, "-h", host, "-p", str(port), "-a", "-t", "2"],
                         capture_output=True, text=True, timeout=120)
    output = res.stdout + res.stderr
    results = {}
    for line in output.splitlines():
        m = CHECK_LINE.match(line)
        if m:
            results[m.group(1)] = m.group(2)
    return results, output


def test_memccapable_ascii(mc_server):
    results, output = run_memccapable(mc_server.host, mc_server.mc_port)
    not_passed = {name: results.get(name, "not run")
                  for name in ASCII_CHECKS_MEMCACHED_PASSES if results.get(name) != "pass"}
    assert not not_passed, f"memccapable checks that did not pass: {not_passed}\n{output}"
    unknown = set(results) - set(ASCII_CHECKS_MEMCACHED_PASSES)
    assert not unknown, f"memccapable ran checks this test does not know: {unknown}"
