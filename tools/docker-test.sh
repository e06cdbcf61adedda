#!/usr/bin/env bash
# Builds the Dockerfile with podman (no Docker engine needed) and checks a running
# container the way a user meets it: the runtime's default seccomp profile (io_uring
# blocked), 256 MiB of memory, 2 threads, SIGTERM to stop.
#
#   tools/docker-test.sh
#
# Checks, inside the running container: redis-cli PING, SET and GET on the main port; a
# memcached set/get on 11211; GET /metrics over HTTP on the main port; the epoll fallback
# logged exactly once; maxmemory taken from the cgroup limit; the image's HEALTHCHECK;
# and a clean stop (exit code 0 within a second of SIGTERM). Then a container with
# --cpus=1 and no --proactor_threads: one thread, from the cgroup's CPU limit.
# Uses ../shared/tools/docker-check/check.sh (override with DOCKER_CHECK=path).
# Takes about 3 minutes cold (base images and build), under a minute warm.
set -euo pipefail
cd "$(dirname "$0")/.."

check="${DOCKER_CHECK:-$(pwd)/../shared/tools/docker-check/check.sh}"
[[ -x "$check" ]] || { echo "docker-check not found at $check (set DOCKER_CHECK)" >&2; exit 2; }
resp_port="${DOCKER_TEST_RESP_PORT:-16479}"
mc_port="${DOCKER_TEST_MC_PORT:-21311}"
tag="${DOCKER_TEST_TAG:-damselfly:test}"
memory_bytes=$((256 << 20))

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
"$check" . "$tag" -p "$resp_port:6379" -p "$mc_port:11211" --seccomp default \
  --run-opt --memory=256m \
  --probe "redis-cli -p $resp_port PING | grep -qx PONG" \
  --check "redis-cli -p $resp_port SET greeting hello | grep -qx OK" \
  --check "redis-cli -p $resp_port GET greeting | grep -qx hello" \
  --check "printf 'set mc 0 0 2\r\nhi\r\nget mc\r\n' | nc -q1 127.0.0.1 $mc_port | tr -d '\r' | paste -sd' ' | grep -qx 'STORED VALUE mc 0 2 hi END'" \
  --check "printf 'get greeting\r\n' | nc -q1 127.0.0.1 $mc_port | grep -q hello" \
  --check "curl -fsS http://127.0.0.1:$resp_port/metrics | grep -q '^damselfly_connected_clients '" \
  --check "test \"\$(\$DOCKER_CHECK_ENGINE logs \"\$DOCKER_CHECK_CONTAINER\" 2>&1 | grep -c 'falling back to epoll')\" = 1" \
  --check "redis-cli -p $resp_port CONFIG GET maxmemory | tail -1 | awk '{ exit !(\$1 > 0 && \$1 <= $memory_bytes) }'" \
  -- --proactor_threads=2 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
[[ $status == 0 ]] || { echo "docker-test: FAIL (docker-check exit $status)"; exit 1; }

# A clean stop: SIGTERM ends the server (PID 1, no --init) with exit code 0 within 1 s.
read -r stop_s code < <(sed -nE 's/.*stopped in ([0-9.]+)s, exit code ([0-9?]+).*/\1 \2/p' "$log")
if [[ "$code" != 0 ]] || awk -v s="$stop_s" 'BEGIN { exit !(s > 1.0) }'; then
  echo "docker-test: FAIL (stop took ${stop_s}s, exit code $code)"
  exit 1
fi

# A second container, limited to one CPU (--cpus=1) and started without
# --proactor_threads: damselfly must run one thread, not one per host CPU, and say why.
# The image is the one just built (podman's layer cache makes this build a no-op).
set +e
"$check" . "$tag" -p "$resp_port:6379" --seccomp default --run-opt --cpus=1 \
  --probe "redis-cli -p $resp_port PING | grep -qx PONG" \
  --check "redis-cli -p $resp_port INFO server | tr -d '\r' | grep -qx proactor_threads:1" \
  --check "\$DOCKER_CHECK_ENGINE logs \"\$DOCKER_CHECK_CONTAINER\" 2>&1 | grep -q 'cgroup CPU limit 1: 1 proactor threads'" \
  2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
[[ $status == 0 ]] || { echo "docker-test: FAIL (--cpus=1 container, docker-check exit $status)"; exit 1; }
echo "docker-test: PASS (stopped in ${stop_s}s, exit code 0; one thread under --cpus=1)"
