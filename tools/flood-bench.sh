#!/usr/bin/env bash
# Write-flood benchmark (issue #19 point 6): tools/flood_load's 4 clients write 1 KiB values
# as fast as they can over a key space of 3x maxmemory for FLOOD_SECONDS, against each case
# in turn, sampling the server's RSS every 100 ms and checking that reads keep working.
# Before each flood the same server runs an unfilled pass: 4x the memory limit and one pass
# over the key space, so it never fills; its write rate is "unfilled". "full" is the rate of
# the flood once its replies cover 1.5x maxmemory (tools/flood_load.cc). Prints a markdown
# table: those rates, peak RSS against maxmemory, stored writes, OOM errors, failed reads,
# the slowest read, and whether the case met issue #19's bounds:
#   evicting cases (redis:allkeys-lru, memcached, damselfly*:cache): no failed write, peak
#     RSS at most 1.10 x maxmemory, rate once full at least 0.8 x the unfilled rate;
#   non-evicting cases (redis:noeviction, memcached:-M, damselfly*:noeviction): writes past
#     maxmemory get -OOM / SERVER_ERROR out of memory, and no read fails.
# The reference servers are measured against the same bounds for comparison only. "first
# key found" counts the samples at which f:0, written first, was still there: memcached -M
# unlinks an item whose overwrite it refuses, so it loses f:0 once the flood wraps around,
# where redis-server's noeviction keeps the old value.
#
# CONTAINER=1 adds the container case: build-opt/damselfly in an image made from the
# Dockerfile's runtime stage, run by ../shared/tools/docker-check with --memory=256m and no
# flags (maxmemory then derives from the cgroup limit), host network; the flood runs from
# the host with maxmemory taken as 256 MiB, and the check fails if the kernel OOM-killed the
# container or it stopped running.
#
# Usage: tools/flood-bench.sh
# Environment (defaults in brackets):
#   CASES   of: redis:noeviction redis:allkeys-lru memcached memcached:-M
#           damselfly:noeviction damselfly-mc:noeviction damselfly:cache damselfly-mc:cache
#           damselfly:<maxmemory-policy> (e.g. damselfly:allkeys-lru)
#           [all of them; damselfly*:cache is skipped while the binary has no --cache_mode]
#   MAXMEMORY_MB [256], FLOOD_SECONDS [60], CONNS [4], PIPELINE [16], VALUE_SIZE [1024]
#   BASE_PORT [6421] (RESP), MC_PORT [11421] (memcache), PIN [1] (0: pin nothing)
#   DAMSELFLY [build-opt/damselfly], DAMSELFLY_THREADS [2] (above 1: not pinned)
#   CONTAINER [0], DOCKER_CHECK [../shared/tools/docker-check/check.sh]
#   SKIP_BUILD  1: use the existing build-opt/damselfly and build-opt/tools/flood_load
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."

cases="${CASES:-redis:noeviction redis:allkeys-lru memcached memcached:-M damselfly:noeviction damselfly-mc:noeviction damselfly:cache damselfly-mc:cache}"
maxmemory_mb="${MAXMEMORY_MB:-256}"
seconds="${FLOOD_SECONDS:-60}"
conns="${CONNS:-4}"
pipeline="${PIPELINE:-16}"
value_size="${VALUE_SIZE:-1024}"
base_port="${BASE_PORT:-6421}"
mc_port="${MC_PORT:-11421}"
pin="${PIN:-1}"
damselfly="${DAMSELFLY:-build-opt/damselfly}"
damselfly_threads="${DAMSELFLY_THREADS:-2}"
container="${CONTAINER:-0}"
check="${DOCKER_CHECK:-$(pwd)/../shared/tools/docker-check/check.sh}"
flood=build-opt/tools/flood_load

require_counts "$maxmemory_mb" "$seconds" "$conns" "$pipeline" "$value_size" "$base_port" \
  "$mc_port" "$damselfly_threads"
require_two_cpus flood_load
require_commands redis-server redis-cli memcached
require_ports_free 2 "$base_port" "$mc_port"
maxmemory=$((maxmemory_mb << 20))
load_prefix="taskset -c 1"
if [[ "$pin" != 1 ]]; then load_prefix=env; fi

init_logdir
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then build_release "damselfly and flood_load" damselfly flood_load; fi
[[ -x "$flood" ]] || die_usage "$flood not built"

flood_args="--conns=$conns --pipeline=$pipeline --value_size=$value_size --seconds=$seconds"

# record <case> <unfilled run's output> <flood output>: appends the case's row to the results.
record() {
  awk -v c="$1" '
    FILENAME == ARGV[1] && $1 == "writes" { for (i = 2; i <= NF; i++) if ($i ~ /^per_sec=/) unfilled = substr($i, 9) }
    FILENAME == ARGV[2] { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[$1 "." kv[1]] = kv[2] } }
    END {
      evicting = c ~ /allkeys-|:cache$/ || c == "memcached"
      if (unfilled == "") unfilled = v["throughput.unfilled_per_sec"]  # the container case
      full = v["throughput.filled_per_sec"]; ratio = unfilled > 0 ? full / unfilled : 0
      peak = v["rss.peak_over_maxmemory"]
      if (c ~ /^container/) {  # docker-check has already failed the run on an OOM kill
        verdict = "not OOM-killed, " (v["reads.failed"] == 0 ? "reads work" : "READS FAILED")
      } else if (evicting) {
        ok = v["writes.oom"] == 0 && v["writes.other_errors"] == 0 && v["reads.failed"] == 0
        verdict = (ok ? "no failed write" : "WRITES FAILED") ", RSS " (peak <= 1.10 ? "<=" : ">") \
          " 1.10x, rate " (ratio >= 0.8 ? ">=" : "<") " 0.8x"
      } else {
        verdict = (v["writes.oom"] > 0 ? "OOM errors" : "NO OOM ERROR") ", " \
          (v["reads.failed"] == 0 ? "reads work" : "READS FAILED")
      }
      printf "| %s | %d | %d | %.2f | %.0f | %.2f | %d | %d | %d | %d/%d | %.0f | %s |\n", c,
        unfilled, full, ratio, v["rss.peak_bytes"] / 1048576, peak,
        v["writes.ok"], v["writes.oom"], v["reads.failed"], v["reads.first_key_hits"],
        v["rss.samples"], v["reads.max_latency_ms"], verdict
    }' "$2" "$3" >>"$logdir/results"
}

# flood_server <case> <limit MiB> <output> <flood_load arguments...>: starts the case's server
# with that memory limit, floods it, stops it.
flood_server() {
  local case=$1 limit_mb=$2 out=$3 kind=${1%%:*} policy=${1#*:} port=$base_port protocol=resp cmd
  local limit=$(($2 << 20))
  shift 3
  case "$kind" in
    redis)
      cmd="redis-server --port $base_port --bind 127.0.0.1 --save '' --appendonly no --dir $logdir --maxmemory $limit --maxmemory-policy $policy"
      ;;
    memcached)
      cmd="memcached -p $mc_port -U 0 -l 127.0.0.1 -t 1 -c 1024 -m $limit_mb"
      [[ "$policy" == -M ]] && cmd+=" -M"
      if ((EUID == 0)); then cmd+=" -u root"; fi
      port=$mc_port
      protocol=memcache
      ;;
    damselfly | damselfly-mc)
      cmd="$damselfly --port=$base_port --bind=127.0.0.1 --proactor_threads=$damselfly_threads --maxmemory=$limit --dbfilename="
      case "$policy" in
        cache) cmd+=" --cache_mode=true" ;;
        noeviction) ;;
        *) cmd+=" --maxmemory_policy=$policy" ;;
      esac
      if [[ "$kind" == damselfly-mc ]]; then
        cmd+=" --memcached_port=$mc_port"
        port=$mc_port
        protocol=memcache
      fi
      ;;
    *) die_usage "unknown case '$case'" ;;
  esac
  local pinned=0
  [[ "$pin" == 1 && ! ("$kind" == damselfly* && "$damselfly_threads" -gt 1) ]] && pinned=1
  start_listening "$cmd" "$out.server" "$port" "$pinned" "$case"
  $load_prefix "$flood" $flood_args --port="$port" --protocol="$protocol" --pid="$server_pid" \
    "$@" >"$out" 2>"$out.err" &
  load_pid=$!
  if ! wait "$load_pid"; then
    keep_logs=1
    cat "$out.err" >&2
    show_server_log "$out.server"
    echo "$bench_name: the flood failed against $case (logs: $logdir)" >&2
    exit 1
  fi
  load_pid=""
  stop_server "$case" "$out.server" 100
}

# run_case <case>: the unfilled run (one pass over the key space with 4x the memory limit,
# so the server never fills), then the flood with the limit; records the row.
run_case() {
  local case=$1 log="$logdir/${1//:/_}"
  # (--helpfull exits 1, so its output is taken whole rather than piped under pipefail.)
  if [[ "$case" == damselfly*:cache && "$("$damselfly" --helpfull 2>&1 || true)" != *"-cache_mode "* ]]; then
    echo "| $case | skipped: this damselfly has no --cache_mode |" >>"$logdir/results"
    return
  fi
  echo "  $case" >&2
  flood_server "$case" $((4 * maxmemory_mb)) "$log.unfilled" --maxmemory="$maxmemory" --passes=1
  flood_server "$case" "$maxmemory_mb" "$log.out" --maxmemory="$maxmemory"
  record "$case" "$log.unfilled" "$log.out"
}

# run_container: the container case (see the header).
run_container() {
  [[ -x "$check" ]] || die_usage "docker-check not found at $check (set DOCKER_CHECK)"
  local ctx="$logdir/container" out="$logdir/container.out" rc="$logdir/container.rc"
  mkdir -p "$ctx/tools"
  cp "$damselfly" "$ctx/damselfly"
  cp tools/docker-healthcheck.sh "$ctx/tools/"
  sed -n '/^FROM debian:bookworm-slim/,$p' Dockerfile |
    sed 's|^COPY --from=build /src/build-opt/damselfly |COPY damselfly |' >"$ctx/Dockerfile"
  echo "  container (--memory=256m, no flags)" >&2
  # docker-check gives each check 60 s, less than a flood and its start: the first check
  # starts the flood in its own session, the next ones wait for its exit status (written
  # to $rc) in steps of at most 50 s, and the last one asks podman whether the kernel
  # OOM-killed the container.
  local flood_cmd="$(pwd)/$flood $flood_args --maxmemory=$((256 << 20)) --port=$base_port"
  flood_cmd+=" --pid=\$(\$DOCKER_CHECK_ENGINE inspect -f '{{.State.Pid}}' \"\$DOCKER_CHECK_CONTAINER\")"
  local wait_rc="for i in \$(seq 50); do [ -s $rc ] && break; sleep 1; done"
  local -a waits=()
  local w
  for ((w = 0; w < (seconds + 30) / 50; w++)); do waits+=(--check "$wait_rc; true"); done
  if ! "$check" "$ctx" damselfly:flood-bench --network host --run-opt --memory=256m \
    --probe "redis-cli -p $base_port PING | grep -qx PONG" \
    --check "setsid bash -c \"$flood_cmd >$out 2>$logdir/container.err; echo \\\$? >$rc\" </dev/null >/dev/null 2>&1 &" \
    "${waits[@]}" --check "$wait_rc; test \"\$(cat $rc)\" = 0" \
    --check "test \"\$(\$DOCKER_CHECK_ENGINE inspect -f '{{.State.OOMKilled}} {{.State.Running}}' \"\$DOCKER_CHECK_CONTAINER\")\" = 'false true'" \
    --no-healthcheck --rm-image -- --port="$base_port" --memcached_port="$mc_port" \
    >"$logdir/container.check" 2>&1; then
    keep_logs=1
    tail -n 30 "$logdir/container.check" >&2
    cat "$logdir/container.err" >&2 || true
    echo "$bench_name: the container case failed (logs: $logdir)" >&2
    exit 1
  fi
  record "container (256m)" /dev/null "$out"
}

echo "flood-bench: $(machine_desc); damselfly $(built_commit); load: $(uptime | sed 's/.*load/load/')" >&2
for c in $cases; do run_case "$c"; done
if [[ "$container" == 1 ]]; then run_container; fi

echo
echo "Write flood: $conns clients, $value_size-byte values over 3x maxmemory ($maxmemory_mb MiB), ${seconds} s per case. $(machine_desc)."
echo
echo "| case | writes/s unfilled | writes/s full | full / unfilled | peak RSS MiB | peak RSS / maxmemory | stored | OOM errors | failed reads | first key found | max read ms | bounds |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
cat "$logdir/results"
echo
echo "load at the end: $(uptime | sed 's/.*load/load/')"
