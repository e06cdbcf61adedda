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

die_usage() { echo "echo-bench: $1" >&2; exit 2; }
for v in "$duration" "$warmup"; do
  [[ "$v" =~ ^[0-9]+(\.[0-9]+)?$ ]] || die_usage "bad duration '$v'"
done
for v in "$rounds" "$conns" "$pipeline" "$size" "$base_port" "$quiet_max"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || die_usage "bad number '$v'"
done
[[ "$quiet_budget" =~ ^[0-9]+$ ]] || die_usage "bad QUIET_BUDGET '$quiet_budget'"
[[ "$(nproc)" -ge 2 ]] || die_usage "needs 2 CPUs (server on CPU 0, load on CPU 1)"
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

logdir="$(mktemp -d /tmp/echo-bench.XXXXXX)"
keep_logs=0  # set when something failed
server_pid=""
load_pid=""
cleanup() {
  if [[ -n "$load_pid" ]]; then kill -TERM "$load_pid" 2>/dev/null || true; fi
  if [[ -n "$server_pid" ]]; then kill -KILL "$server_pid" 2>/dev/null || true; fi
  if [[ "$keep_logs" == 0 ]]; then rm -rf "$logdir"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  echo "building release binaries..." >&2
  if ! tools/build.sh opt echo_server plain_epoll_echo echo_load >"$logdir/build.log" 2>&1; then
    keep_logs=1
    tail -n 30 "$logdir/build.log" >&2
    echo "echo-bench: build failed (full log: $logdir/build.log)" >&2
    exit 1
  fi
fi

clk_tck="$(getconf CLK_TCK)"
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
now_ns() { date +%s%N; }

# utime + stime of a process, in clock ticks.
proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# Busy (not idle or iowait) clock ticks of CPUs 0 and 1 together.
cpu01_busy() {
  awk '$1 == "cpu0" || $1 == "cpu1" { b += $2 + $3 + $4 + $7 + $8 + $9 } END { print b }' \
    /proc/stat
}

# Percentage of both CPUs' time: pct <ticks> <nanoseconds> <cpus>.
pct() { awk -v t="$1" -v ns="$2" -v n="$3" -v hz="$clk_tck" \
  'BEGIN { v = 100 * t / (hz * ns / 1e9 * n); printf "%.0f", v < 0 ? 0 : v }'; }

# Waits, out of quiet_budget, until CPUs 0-1 are at most quiet_max % busy for 0.5 s.
wait_quiet() {
  local b0 t0 busy
  while true; do
    b0=$(cpu01_busy)
    t0=$(now_ns)
    sleep 0.5
    busy=$(pct $(($(cpu01_busy) - b0)) $(($(now_ns) - t0)) 2)
    if ((busy <= quiet_max)); then return; fi
    if ((quiet_budget <= 0)); then
      echo "  (CPUs 0-1 are $busy% busy with other work; measuring anyway)" >&2
      return
    fi
    echo "  (CPUs 0-1 are $busy% busy with other work; waiting)" >&2
    sleep 1
    quiet_budget=$((quiet_budget - 2))
  done
}

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
  if port_open "$port"; then
    echo "echo-bench: port $port is already in use; set BASE_PORT" >&2
    exit 1
  fi
  # shellcheck disable=SC2086  # cmds[] entries are word lists on purpose
  taskset -c 0 ${cmds[$i]} >"$log" 2>&1 &
  server_pid=$!
  local waited=0
  until port_open "$port"; do
    if ! kill -0 "$server_pid" 2>/dev/null || ((waited >= 50)); then
      echo "echo-bench: ${names[$i]} did not start listening on $port (log: $log)" >&2
      results[i]+="FAILED "
      failed[i]=1
      keep_logs=1
      kill -KILL "$server_pid" 2>/dev/null || true
      wait "$server_pid" 2>/dev/null || true
      server_pid=""
      return
    fi
    sleep 0.1
    waited=$((waited + 1))
  done

  local attempt m_rate m_cpu m_noise
  for attempt in 1 2 3; do
    wait_quiet
    if ! measure "$i" "$prefix.$attempt"; then
      results[i]+="FAILED "
      failed[i]=1
      keep_logs=1
      break
    fi
    if ((m_noise > quiet_max && attempt < 3 && quiet_budget > 0)); then
      echo "  (other CPU was $m_noise% during that run; measuring again)" >&2
      quiet_budget=$((quiet_budget - run_seconds))
      continue
    fi
    results[i]+="$m_rate "
    cpu[i]+="$m_cpu "
    noise[i]+="$m_noise "
    break
  done

  # A clean exit on SIGTERM is part of what is checked.
  kill -TERM "$server_pid" 2>/dev/null || true
  local n=0
  while kill -0 "$server_pid" 2>/dev/null && ((n < 50)); do
    sleep 0.1
    n=$((n + 1))
  done
  if kill -0 "$server_pid" 2>/dev/null; then
    echo "echo-bench: ${names[$i]} ignored SIGTERM for 5s; killed it (log: $log)" >&2
    kill -KILL "$server_pid" 2>/dev/null || true
    unclean=1
    keep_logs=1
  fi
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

median() {
  tr ' ' '\n' | { grep -E '^[0-9]+$' || true; } | sort -n |
    awk '{ v[NR] = $1 }
         END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2];
               else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
as_list() { sed 's/ *$//; s/ /, /g' <<<"$1"; }

# Ratio of each of server $1's runs to the baseline's run in the same round.
round_ratios() {
  local -a a b
  local r out=""
  read -ra a <<<"${results[$1]}"
  read -ra b <<<"${results[$baseline]}"
  for ((r = 0; r < ${#a[@]}; r++)); do
    if [[ "${a[r]}" =~ ^[0-9]+$ && "${b[r]:-}" =~ ^[0-9]+$ ]]; then
      out+="$(awk -v x="${a[r]}" -v y="${b[r]}" 'BEGIN { printf "%.2f", x / y }') "
    else
      out+="- "
    fi
  done
  as_list "$out"
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
  "$(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), kernel $(uname -r), $(date -u +%F)"
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
  echo "| ${names[$i]} | $med | $ratio | $(as_list "${results[$i]}") | $(round_ratios "$i") |" \
    "$(as_list "${cpu[$i]}") | $(as_list "${noise[$i]}") |"
done

if [[ " ${failed[*]} " == *" 1 "* || "$unclean" == 1 ]]; then
  echo "echo-bench: there were failures; logs are in $logdir" >&2
  exit 1
fi
