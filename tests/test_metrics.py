"""GET /metrics: the Prometheus text format (checked by prometheus_client's parser and by
promtool), the values against INFO, and a real Prometheus scraping damselfly.
damselfly only: redis-server has no /metrics."""

import json
import re
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import REPO_ROOT
from helpers import wait_for

pytestmark = pytest.mark.damselfly_only

# Every metric docs/metrics.md promises (family names, as the parser reports them:
# counters without their _total suffix).
REQUIRED_FAMILIES = {
    "damselfly_instance_info": "gauge",
    "damselfly_uptime_in_seconds": "gauge",
    "damselfly_connected_clients": "gauge",
    "damselfly_blocked_clients": "gauge",
    "damselfly_memory_used_bytes": "gauge",
    "damselfly_memory_max_bytes": "gauge",
    "damselfly_memory_used_rss_bytes": "gauge",
    "damselfly_compressed_strings": "gauge",
    "damselfly_compressed_strings_bytes": "gauge",
    "damselfly_compressed_strings_memory_bytes": "gauge",
    "damselfly_commands_processed": "counter",
    "damselfly_commands": "counter",
    "damselfly_commands_duration_seconds": "counter",
    "damselfly_keyspace_hits": "counter",
    "damselfly_keyspace_misses": "counter",
    "damselfly_expired_keys": "counter",
    "damselfly_evicted_keys": "counter",
    "damselfly_db_keys": "gauge",
    "damselfly_db_keys_expiring": "gauge",
    "damselfly_net_input_bytes": "counter",
    "damselfly_net_output_bytes": "counter",
    "damselfly_connections_received": "counter",
    "damselfly_rejected_connections": "counter",
    "damselfly_errors": "counter",
    "damselfly_thread_commands_processed": "counter",
    "damselfly_thread_connected_clients": "gauge",
    "damselfly_thread_loop_sleeps": "counter",
    "damselfly_thread_idle_polls_won": "counter",
    "damselfly_thread_idle_polls_lost": "counter",
    "damselfly_shard_keys": "gauge",
    "damselfly_shard_memory_used_bytes": "gauge",
    "damselfly_commands_latency_seconds": "histogram",
    "damselfly_memcache_current_connections": "gauge",
    "damselfly_memcache_connections": "counter",
    "damselfly_memcache_commands": "counter",
    "damselfly_memcache_items": "counter",
    "damselfly_loading_dump_file": "gauge",
    "damselfly_rdb_changes_since_last_save": "gauge",
    "damselfly_rdb_bgsave_in_progress": "gauge",
    "damselfly_rdb_last_save_timestamp_seconds": "gauge",
    "damselfly_rdb_last_bgsave_status": "gauge",
    "damselfly_rdb_last_bgsave_duration_seconds": "gauge",
    "damselfly_rdb_current_bgsave_duration_seconds": "gauge",
    "damselfly_rdb_saves": "counter",
    "damselfly_rdb_last_load_loaded_keys": "gauge",
    "damselfly_rdb_last_load_expired_keys": "gauge",
}


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        assert response.status == 200
        return response.read().decode()


def families(text):
    return {f.name: f for f in text_string_to_metric_families(text)}


def sample(fams, family, name, **labels):
    for s in fams[family].samples:
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    return None


def test_parses_with_prometheus_client(server):
    c = server.client()
    c.set("a", "1")
    c.set("b", "2", ex=100)
    c.get("a")
    c.get("missing")
    with pytest.raises(Exception):
        c.execute_command("NOSUCHCOMMAND")
    fams = families(scrape(server.port))
    for name, kind in REQUIRED_FAMILIES.items():
        assert name in fams, name
        assert fams[name].type == kind, name
        assert fams[name].documentation, name
    assert sample(fams, "damselfly_commands", "damselfly_commands_total", cmd="set") == 2
    assert sample(fams, "damselfly_commands", "damselfly_commands_total", cmd="get") == 2
    assert sample(fams, "damselfly_commands_duration_seconds",
                  "damselfly_commands_duration_seconds_total", cmd="set") > 0
    assert sample(fams, "damselfly_db_keys", "damselfly_db_keys", db="db0") == 2
    assert sample(fams, "damselfly_db_keys_expiring", "damselfly_db_keys_expiring", db="db0") == 1
    assert sample(fams, "damselfly_keyspace_hits", "damselfly_keyspace_hits_total") == 1
    assert sample(fams, "damselfly_keyspace_misses", "damselfly_keyspace_misses_total") == 1
    assert sample(fams, "damselfly_errors", "damselfly_errors_total", err="ERR") >= 1
    assert sample(fams, "damselfly_connected_clients", "damselfly_connected_clients") >= 1
    # One series per thread (the test server runs 2), so an imbalance shows.
    assert len(fams["damselfly_thread_commands_processed"].samples) == 2
    shard_keys = [s.value for s in fams["damselfly_shard_keys"].samples]
    assert sum(shard_keys) == 2


def test_quick_exchange_is_polled(server):
    """A client sending request after request keeps its thread polling between them
    (--proactor_idle_poll_us): most of those idle spells end without a sleep."""
    c = server.client()
    if c.info("server")["multiplexing_api"] != "io_uring":
        pytest.skip("only io_uring polls")

    def totals():
        fams = families(scrape(server.port))
        return [sum(s.value for s in fams[f"damselfly_thread_{name}"].samples)
                for name in ("idle_polls_won", "loop_sleeps")]

    c.ping()
    won_before, sleeps_before = totals()
    for _ in range(2000):
        c.ping()
    won, sleeps = totals()
    won, sleeps = won - won_before, sleeps - sleeps_before
    # Python's round trip leaves the server idle for tens of microseconds: most spells end
    # within the 50 us poll, some do not (a descheduled client, the scrapes).
    assert won > 1000, f"{won} polls won, {sleeps} sleeps"


def test_memcache_traffic_is_counted(mc_server):
    mc = mc_server.mc_raw()

    def counters():
        fams = families(scrape(mc_server.port))
        out = {(s.labels["command"], s.labels["status"]): s.value
               for s in fams["damselfly_memcache_commands"].samples
               if s.name == "damselfly_memcache_commands_total"}
        out["items"] = sample(fams, "damselfly_memcache_items", "damselfly_memcache_items_total")
        out["processed"] = sample(fams, "damselfly_commands_processed",
                                  "damselfly_commands_processed_total")
        out["open"] = sample(fams, "damselfly_memcache_current_connections",
                             "damselfly_memcache_current_connections")
        return out

    before = counters()
    assert mc.call(b"set a 0 0 1\r\nx\r\n") == b"STORED\r\n"
    assert mc.call(b"get a b\r\n").endswith(b"END\r\n")  # one hit, one miss
    assert mc.call(b"delete nosuch\r\n") == b"NOT_FOUND\r\n"
    assert mc.call(b"cas a 0 0 1 12345\r\ny\r\n") == b"EXISTS\r\n"
    after = counters()
    delta = {k: after[k] - before[k] for k in after}
    # As in memcached's stats, cas counts in cmd_set too; a get of two keys counts per key.
    assert delta[("set", "hit")] == 2
    assert delta[("get", "hit")] == 1 and delta[("get", "miss")] == 1
    assert delta[("delete", "miss")] == 1
    assert delta[("cas", "badval")] == 1
    assert delta["items"] == 1
    assert after["open"] >= 1
    # Each call sends its command and an mn (meta no-op): 8 commands processed. A scrape
    # counts none.
    assert delta["processed"] == 8


def test_latency_histogram(server):
    c = server.client()
    c.config_resetstat()
    for i in range(50):
        c.set(f"k{i}", "v")
    fams = families(scrape(server.port))
    buckets = [(s.labels["le"], s.value) for s in fams["damselfly_commands_latency_seconds"].samples
               if s.name.endswith("_bucket") and s.labels["cmd"] == "set"]
    assert buckets[-1] == ("+Inf", 50)
    assert [v for _, v in buckets] == sorted(v for _, v in buckets)  # cumulative
    assert buckets[0][0] == "1e-07" and buckets[-2][0] == "1"
    assert sample(fams, "damselfly_commands_latency_seconds",
                  "damselfly_commands_latency_seconds_count", cmd="set") == 50
    total = sample(fams, "damselfly_commands_latency_seconds",
                   "damselfly_commands_latency_seconds_sum", cmd="set")
    assert 0 < total < 1


def test_values_match_info(server):
    c = server.client()
    for i in range(10):
        c.set(f"k{i}", "v")
    info = c.info("all")
    fams = families(scrape(server.port))
    assert sample(fams, "damselfly_db_keys", "damselfly_db_keys", db="db0") == info["db0"]["keys"]
    # Counters only grow between the INFO and the scrape.
    processed = sample(fams, "damselfly_commands_processed", "damselfly_commands_processed_total")
    assert processed >= info["total_commands_processed"]
    assert sample(fams, "damselfly_net_input_bytes", "damselfly_net_input_bytes_total") >= \
        info["total_net_input_bytes"]
    assert sample(fams, "damselfly_commands", "damselfly_commands_total", cmd="set") == \
        info["cmdstat_set"]["calls"]


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_promtool_check_metrics(server):
    c = server.client()
    c.set("a", "1")
    c.get("a")
    text = scrape(server.port)
    result = subprocess.run(["promtool", "check", "metrics"], input=text.encode(),
                            capture_output=True, timeout=30)
    assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()
    assert result.stdout.decode().strip() == "" and result.stderr.decode().strip() == ""


def documented_metrics():
    with open(os.path.join(REPO_ROOT, "docs", "metrics.md")) as f:
        return set(re.findall(r"^\| `(damselfly_[a-z_]+)` \|", f.read(), re.M))


def exposed_metrics(text):
    return {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")}


def test_docs_list_every_metric(server):
    c = server.client()
    c.set("a", "1")
    with pytest.raises(Exception):
        c.execute_command("NOSUCH")
    assert exposed_metrics(scrape(server.port)) == documented_metrics()


def dashboard_queries():
    with open(os.path.join(REPO_ROOT, "tools", "grafana-dashboard.json")) as f:
        dashboard = json.load(f)
    return [target["expr"].replace("$__rate_interval", "1m").replace("$instance", ".*")
            for panel in dashboard["panels"] for target in panel["targets"]]


def test_dashboard_uses_only_exposed_metrics(server):
    exposed = exposed_metrics(scrape(server.port))
    for query in dashboard_queries():
        for name in re.findall(r"damselfly_[a-z_]+", query):
            # A histogram's series are its family name plus _bucket, _sum or _count.
            family = re.sub(r"_(bucket|sum|count)$", "", name)
            assert name in exposed or family in exposed, (name, query)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prometheus_query(port, query, strict=False):
    """The query's result vector; [] while Prometheus is not up yet (unless strict)."""
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            body = json.loads(response.read())
    except OSError as e:
        if strict:
            raise AssertionError(f"{query}: {e}") from e
        return []
    assert body["status"] == "success"
    return body["data"]["result"]


@pytest.mark.skipif(shutil.which("prometheus") is None, reason="prometheus not installed")
def test_real_prometheus_scrapes(server):
    workdir = tempfile.mkdtemp(prefix="damselfly-prometheus-")
    config = os.path.join(workdir, "prometheus.yml")
    with open(config, "w") as f:
        f.write(f"""global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: damselfly
    static_configs:
      - targets: ['127.0.0.1:{server.port}']
""")
    port = free_port()
    log = open(os.path.join(workdir, "prometheus.log"), "wb")
    proc = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={workdir}/data",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        def up():
            result = prometheus_query(port, 'up{job="damselfly"} == 1')
            return len(result) == 1
        assert wait_for(up, timeout=60, interval=0.2), open(os.path.join(workdir, "prometheus.log")).read()[-3000:]

        def set_count():
            result = prometheus_query(port, 'damselfly_commands_total{job="damselfly",cmd="set"}')
            return float(result[0]["value"][1]) if result else 0.0

        before = set_count()
        c = server.client()
        for i in range(25):
            c.set(f"key{i}", "value")
        assert wait_for(lambda: set_count() >= before + 25, timeout=30, interval=0.2), set_count()
        # Every query of the Grafana dashboard is valid PromQL over these series.
        for query in dashboard_queries():
            prometheus_query(port, query, strict=True)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(workdir, ignore_errors=True)
