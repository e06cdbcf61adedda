#!/usr/bin/env bash
# Echo benchmark: helio's echo_server on one io_uring thread and on one epoll thread,
# against tools/plain_epoll_echo, measured side by side in one run. Each round starts every
# server in turn (the starting server rotates per round), pinned to CPU 0, and loads it from
# tools/echo_load pinned to CPU 1. Prints a markdown table of the per-server medians and the
# ratio to the plain epoll loop; docs/benchmarks.md records the results.
#
# Usage: tools/echo-bench.sh
# Environment (defaults in brackets):
#   ROUNDS [3]        rounds; each round measures every server once
#   SECONDS [5]       measured seconds per run (DURATION is accepted too)
#   WARMUP [1]        warm-up seconds per run, not measured
#   CONNS [32]        client connections
#   PIPELINE [16]     messages in flight per connection
#   SIZE [32]         message size, bytes
#   BASE_PORT [6480]  the servers listen on BASE_PORT, +1, +2
#   SKIP_BUILD        1: use the existing build-opt/ binaries
#   QUIET_MAX [10]    "other CPU" percentage above which a run counts as disturbed
#   QUIET_BUDGET [60] seconds, in total, to spend waiting for quiet CPUs and re-running
#                     disturbed runs; once spent, runs are taken as they come
#
# Unrelated processes on CPUs 0-1 distort the numbers, so each run's "other CPU %" is
# reported: the busy time of the two CPUs that belongs to neither the server nor the load
# generator, as a share of both CPUs. A run is preceded by a wait for quiet CPUs, and a
# disturbed run is measured again (at most twice), within QUIET_BUDGET.
#
# Exits non-zero if any run failed or a server did not exit on SIGTERM; the logs are kept.
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"

# SECONDS is bash's own elapsed-time counter, so an inherited value keeps ticking; take
# what the caller passed from this process's initial environment instead.
env_seconds="$(tr '\0' '\n' </proc/$$/environ | sed -n 's/^SECONDS=//p')"
duration="${DURATION:-${env_seconds:-5}}"
rounds="${ROUNDS:-3}"
warmup="${WARMUP:-1}"
conns="${CONNS:-32}"
pipeline="${PIPELINE:-16}"
size="${SIZE:-32}"
base_port="${BASE_PORT:-6480}"
quiet_max="${QUIET_MAX:-10}"
quiet_budget="${QUIET_BUDGET:-60}"

for v in "$duration" "$warmup"; do
  [[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die_usage "bad duration '$v'"
done
require_counts "$rounds" "$conns" "$pipeline" "$size" "$base_port" "$quiet_max"
require_quiet_budget
require_two_cpus load
run_seconds="$(awk -v w="$warmup" -v d="$duration" 'BEGIN { printf "%d", w + d + 0.999 }')"
# Hard bound on one load run: echo_load stops itself, this only catches a wedged client.
load_timeout=$((run_seconds + 20))

cd "$(dirname "$0")/.."
bin="$PWD/build-opt"

# The servers, in table order.
names=("helio io_uring" "helio epoll" "plain epoll")
ports=("$base_port" "$((base_port + 1))" "$((base_port + 2))")
cmds=(
  "$bin/helio/examples/echo_server --port=${ports[0]} --proactor_threads=1"
  "$bin/helio/examples/echo_server --port=${ports[1]} --proactor_threads=1 --force_epoll"
  "$bin/tools/plain_epoll_echo --port=${ports[2]}"
)
baseline=2  # index of the plain epoll loop

init_logdir  # logdir, keep_logs (set when something failed), server_pid, load_pid

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  build_release binaries echo_server plain_epoll_echo echo_load
fi

# Per server: the runs' msgs/s (or FAILED), server CPU % and other CPU %, space-separated.
declare -a results=("" "" "") cpu=("" "" "") noise=("" "" "") failed=(0 0 0)
unclean=0

# measure <server index> <log prefix>: one load run against the running server. Sets
# m_rate, m_cpu, m_noise, or returns non-zero when echo_load failed.
measure() {
  local i=$1 err="$2.load.err" p0 b0 t0 dt rc=0 out server_ticks client_ticks
  p0=$(proc_ticks "$server_pid")
  b0=$(cpu01_busy)
  t0=$(now_ns)
  # In the background so that a signal to this script is acted on at once (bash runs
  # traps only between foreground commands); timeout passes the kill on to echo_load.
  timeout "$load_timeout" taskset -c 1 "$bin/tools/echo_load" \
    --port="${ports[$i]}" --conns="$conns" --pipeline="$pipeline" --size="$size" \
    --seconds="$duration" --warmup="$warmup" >"$2.load.out" 2>"$err" &
  load_pid=$!
  wait "$load_pid" || rc=$?
  load_pid=""
  dt=$(($(now_ns) - t0))
  out="$(cat "$2.load.out")"
  if ((rc != 0)) || [[ "$out" != *msgs_per_sec=* ]]; then
    echo "echo-bench: load against ${names[$i]} failed (rc=$rc): $(cat "$err")" >&2
    return 1
  fi
  echo "    ${names[$i]}: $out" >&2
  server_ticks=$(($(proc_ticks "$server_pid") - p0))
  client_ticks=$(sed -n 's/.*cpu_sec=\([0-9.]*\).*/\1/p' <<<"$out" |
    awk -v hz="$clk_tck" '{ printf "%d", $1 * hz }')
  m_rate=$(sed -n 's/.*msgs_per_sec=\([0-9]*\).*/\1/p' <<<"$out")
  m_cpu=$(pct "$server_ticks" "$dt" 1)
  m_noise=$(pct $(($(cpu01_busy) - b0 - server_ticks - client_ticks)) "$dt" 2)
}

# run_server <server index> <round>: starts the server, measures it (again if the run was
# disturbed), stops it, and records the outcome.
run_server() {
  local i=$1 port=${ports[$1]} prefix="$logdir/${names[$1]// /_}.round$2"
  local log="$prefix.server.log"
  require_ports_free 1 "$port"
  start_server "${cmds[$i]}" "$log"
  if ! wait_listening "$port" 50; then
    echo "echo-bench: ${names[$i]} did not start listening on $port (log: $log)" >&2
    results[i]+="FAILED "
    failed[i]=1
    keep_logs=1
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    return
  fi

  local attempt m_rate m_cpu m_noise
  for attempt in 1 2 3; do
    wait_quiet
    if ! measure "$i" "$prefix.$attempt"; then
      results[i]+="FAILED "
      failed[i]=1
      keep_logs=1
      break
    fi
    if remeasure "$m_noise" "$attempt" "$run_seconds"; then continue; fi
    results[i]+="$m_rate "
    cpu[i]+="$m_cpu "
    noise[i]+="$m_noise "
    break
  done

  # A clean exit on SIGTERM is part of what is checked.
  stop_server "${names[$i]}" "$log" 50
}

echo "echo-bench: $rounds rounds x ${#names[@]} servers, ${duration}s (+${warmup}s warm-up)" \
  "each, conns=$conns pipeline=$pipeline size=$size" >&2
for ((r = 1; r <= rounds; r++)); do
  echo "  round $r" >&2
  for ((k = 0; k < ${#names[@]}; k++)); do
    run_server $(((r - 1 + k) % ${#names[@]})) "$r"
  done
done

base_median="$(median <<<"${results[$baseline]}")"
echo
echo "conns=$conns pipeline=$pipeline size=$size, $rounds rounds of ${duration}s;" \
  "$(machine_desc)"
echo
echo "| server | msgs/s (median) | vs plain epoll | runs (msgs/s) | per-round ratio" \
  "| server CPU % | other CPU % |"
echo "|---|---:|---:|---|---|---|---|"
for ((i = 0; i < ${#names[@]}; i++)); do
  med="$(median <<<"${results[$i]}")"
  ratio="n/a"
  if [[ -n "$med" && -n "$base_median" ]]; then
    ratio="$(awk -v a="$med" -v b="$base_median" 'BEGIN { printf "%.2f", a / b }')"
  fi
  if [[ "${failed[$i]}" == 1 ]]; then med="${med:+$med, }FAILED"; fi
  echo "| ${names[$i]} | $med | $ratio | $(as_list "${results[$i]}")" \
    "| $(round_ratios "${results[$i]}" "${results[$baseline]}") |" \
    "$(as_list "${cpu[$i]}") | $(as_list "${noise[$i]}") |"
done

if [[ " ${failed[*]} " == *" 1 "* || "$unclean" == 1 ]]; then
  echo "echo-bench: there were failures; logs are in $logdir" >&2
  exit 1
fi
