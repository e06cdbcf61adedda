#!/usr/bin/env bash
# Pub/sub and blocking lists: damselfly against redis-server, side by side in one run, with
# tools/pubsub_load (redis-benchmark cannot subscribe). Only one server runs at a time, each
# started fresh per round, the starting server alternating per round. Servers:
#   damselfly    --proactor_threads=1 pinned to CPU 0, the load pinned to CPU 1
#   redis        redis-server pinned to CPU 0, the load pinned to CPU 1
#   damselfly2   --proactor_threads=2 on CPUs 0-1, the load on CPUs 0-1 too (two load
#                threads): how publishing scales with a second thread on this 2-CPU machine,
#                where the server and the load then share both CPUs
# Tests, against each server:
#   pub1, pub10, pub100  S subscribers (1, 10, 100) on one channel; PUBLISHERS connections
#                publish MESSAGES messages of SIZE bytes in all (MESSAGES / 10 for pub100),
#                WINDOW in flight each. Reported: PUBLISH replies per second, and messages
#                delivered per second (summed over the subscribers, which count what they
#                receive; every message must reach every subscriber in its publisher's order
#                and every PUBLISH must answer S)
#   pingpong     BLPOP/LPUSH ping-pong between two clients (see tools/pubsub_load.cc): the
#                round-trip time, two wake-ups of a client parked in BLPOP, p50 and p99 of
#                ITERATIONS round trips
# Per run: the server's CPU (% of one CPU, and microseconds per PUBLISH or per round trip),
# the load's CPU (% of one CPU: near 100 means the load, not the server, set the pace) and
# the "other CPU %" of redis-bench.sh (busy time on CPUs 0-1 that is neither the server's
# nor the load's). Prints markdown tables: the median over the rounds, every round's value
# (the spread), and the ratio to redis-server's median. A server that refuses a command (as
# damselfly did before pub/sub and blocking commands existed) is reported as n/a with its
# error, not as a failure; a server that dies or hangs is reported and the script exits 1.
#
# Usage: tools/pubsub-bench.sh
# Environment (defaults in brackets):
#   SERVERS [damselfly redis damselfly2]  which servers, in table order
#   TESTS [pub1 pub10 pub100 pingpong]
#   ROUNDS [3]
#   MESSAGES [200000]  PUBLISH commands per pub test (a tenth for pub100)
#   PUBLISHERS [2]     publishing connections (spread over the load threads)
#   WINDOW [16]        PUBLISH commands in flight per publisher
#   SIZE [64]          message bytes
#   ITERATIONS [20000] measured ping-pong round trips (after 1000 unmeasured)
#   BASE_PORT [6750]   damselfly, redis-server and damselfly2 listen on BASE_PORT + 0, 1, 2
#   REDIS_SERVER [redis-server]
#   DAMSELFLY_FLAGS [] extra flags for damselfly (both configurations)
#   DAMSELFLY_BIN [build-opt/damselfly]
#   DRY_RUN            1: redis-server in damselfly's places (checks the script; the ratios
#                      should come out near 1.00, damselfly2's with the load sharing CPUs)
#   SKIP_BUILD         1: use the existing build-opt binaries
#   QUIET_MAX [10], QUIET_BUDGET [60]  as in tools/redis-bench.sh
#   TIME_LIMIT [600]   seconds; no round starts that would likely end after it
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"

servers="${SERVERS:-damselfly redis damselfly2}"
tests="${TESTS:-pub1 pub10 pub100 pingpong}"
rounds="${ROUNDS:-3}"
messages="${MESSAGES:-200000}"
publishers="${PUBLISHERS:-2}"
window="${WINDOW:-16}"
size="${SIZE:-64}"
iterations="${ITERATIONS:-20000}"
warmup=1000  # unmeasured ping-pong round trips first
base_port="${BASE_PORT:-6750}"
quiet_max="${QUIET_MAX:-10}"
quiet_budget="${QUIET_BUDGET:-60}"
time_limit="${TIME_LIMIT:-600}"
dry_run="${DRY_RUN:-0}"
redis_server="${REDIS_SERVER:-redis-server}"
damselfly_flags="${DAMSELFLY_FLAGS:-}"
# Hard bound on one load run; pubsub_load's own --timeout is shorter, so it says what was
# missing.
load_timeout="${LOAD_TIMEOUT:-150}"

require_counts "$rounds" "$messages" "$publishers" "$window" "$size" "$iterations" \
  "$base_port" "$quiet_max" "$time_limit"
require_quiet_budget
for s in $servers; do
  [[ " damselfly redis damselfly2 " == *" $s "* ]] ||
    die_usage "unknown server '$s' (damselfly, redis, damselfly2)"
done
for t in $tests; do
  [[ " pub1 pub10 pub100 pingpong " == *" $t "* ]] ||
    die_usage "unknown test '$t' (pub1, pub10, pub100, pingpong)"
done
[[ -n "${servers// /}" && -n "${tests// /}" ]] || die_usage "SERVERS and TESTS must not be empty"
require_two_cpus "the load"
require_commands "$redis_server"

cd "$(dirname "$0")/.."
bin="$PWD/build-opt"
loader="$bin/tools/pubsub_load"
damselfly_bin="${DAMSELFLY_BIN:-$bin/damselfly}"
SECONDS=0

# Per server (in SERVERS order): name, port, command line, server CPUs, load CPUs, load
# threads.
names=() ports=() cmds=() server_cpus=() load_cpus=() load_threads=()
redis_cmd() { echo "$redis_server --port $1 --bind 127.0.0.1 --save '' --appendonly no"; }
damselfly_cmd() {
  echo "$damselfly_bin --proactor_threads=$1 --port=$2 --bind=127.0.0.1 --logtostderr" \
    "$damselfly_flags"
}
for s in $servers; do
  case "$s" in
    damselfly)
      p=$base_port
      names+=("damselfly")
      cmds+=("$(damselfly_cmd 1 "$p")")
      server_cpus+=(0) load_cpus+=(1) load_threads+=(1)
      ;;
    redis)
      p=$((base_port + 1))
      names+=("redis-server")
      cmds+=("$(redis_cmd "$p")")
      server_cpus+=(0) load_cpus+=(1) load_threads+=(1)
      ;;
    damselfly2)
      p=$((base_port + 2))
      names+=("damselfly 2 threads")
      cmds+=("$(damselfly_cmd 2 "$p")")
      server_cpus+=(0,1) load_cpus+=(0,1) load_threads+=(2)
      ;;
  esac
  ports+=("$p")
  if [[ "$dry_run" == 1 && "$s" != redis ]]; then
    names[-1]="redis-server in place of ${names[-1]} (dry run)"
    cmds[-1]="$(redis_cmd "$p")"
  fi
done
baseline=-1  # index of redis-server, the ratios' baseline
for ((i = 0; i < ${#names[@]}; i++)); do [[ "${names[$i]}" == redis-server ]] && baseline=$i; done

init_logdir
require_ports_free 1 "${ports[@]}"
needs_damselfly=0
[[ "$dry_run" != 1 && " $servers " == *" damselfly"* ]] && needs_damselfly=1
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  if ((needs_damselfly)) && [[ -z "${DAMSELFLY_BIN:-}" ]]; then
    build_release "damselfly and pubsub_load" damselfly pubsub_load
  else
    build_release pubsub_load pubsub_load
  fi
fi
[[ -x "$loader" ]] || die_usage "$loader is missing (build it, or unset SKIP_BUILD)"
if ((needs_damselfly)); then
  [[ -x "$damselfly_bin" ]] || die_usage "$damselfly_bin is missing (build it, or unset SKIP_BUILD)"
fi
commit="$(built_commit)"
unclean=0
declare -A notes=()
note() { notes["$1"]=1; }

# The pubsub_load arguments of a test against server $2.
load_args() {
  local t=$1 threads=${load_threads[$2]}
  case "$t" in
    pub1 | pub10 | pub100)
      local subs=${t#pub} n=$messages
      ((subs == 100)) && n=$((messages / 10))
      echo "--mode=publish --subscribers=$subs --publishers=$publishers" \
        "--messages=$(((n + publishers - 1) / publishers)) --window=$window --size=$size" \
        "--threads=$threads --timeout=$((load_timeout - 20))"
      ;;
    pingpong) echo "--mode=pingpong --iterations=$iterations --warmup=$warmup --timeout=20" ;;
  esac
}

# field <name> <file>: the value of name=value in pubsub_load's output line.
field() { tr ' ' '\n' <"$2" | sed -n "s/^$1=//p"; }

# Results: res[server,test,metric] is a space-separated list of the rounds' values.
declare -A res=()
metrics_of() {
  case "$1" in
    pingpong) echo "p50_us p99_us cpu us_per_op ccpu noise" ;;
    *) echo "publishes_per_sec delivered_per_sec cpu us_per_op ccpu noise" ;;
  esac
}

# measure <server index> <test> <prefix> <server log>: one load run. Returns 0 with m[]
# filled, 3 when the server refused a command (m_reason says why), 1 on a failure (reported).
measure() {
  local i=$1 t=$2 out="$3.out" err="$3.err" p0 c0 b0 t0 dt rc=0 sticks cticks ops
  p0=$(proc_ticks "$server_pid")
  c0=$(child_ticks)
  b0=$(cpu01_busy)
  t0=$(now_ns)
  # shellcheck disable=SC2046  # load_args prints a word list on purpose
  timeout "$load_timeout" taskset -c "${load_cpus[$i]}" "$loader" --port="${ports[$i]}" \
    $(load_args "$t" "$i") >"$out" 2>"$err" &
  load_pid=$!
  wait "$load_pid" || rc=$?
  load_pid=""
  dt=$(($(now_ns) - t0))
  if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    echo "$bench_name: ${names[$i]} died during $t" >&2
    show_server_log "$4"
    note "${names[$i]} died during $t (log $4)"
    return 1
  fi
  if ((rc != 0)); then
    # Without the arguments Redis quotes after an unknown command (they differ per run).
    m_reason="$(sed -n 's/^pubsub_load: //p' "$err" | head -n 1 |
      sed 's/, with args beginning with:.*//')"
    if ((rc == 124)); then m_reason="no result within ${load_timeout}s (hang?)"; fi
    if [[ "$m_reason" == *"ERR unknown command"* ]]; then return 3; fi
    echo "$bench_name: ${names[$i]}: $t failed: ${m_reason:-exit status $rc}" >&2
    note "${names[$i]}: $t failed: ${m_reason:-exit status $rc} (log $4)"
    return 1
  fi
  sticks=$(($(proc_ticks "$server_pid") - p0))
  cticks=$(($(child_ticks) - c0))
  unset m
  declare -gA m=()
  if [[ "$t" == pingpong ]]; then
    m[p50_us]=$(field p50_us "$out")
    m[p99_us]=$(field p99_us "$out")
    ops=$(($(field round_trips "$out") + warmup))
  else
    m[publishes_per_sec]=$(field publishes_per_sec "$out")
    m[delivered_per_sec]=$(field delivered_per_sec "$out")
    ops=$(field publishes "$out")
  fi
  m[cpu]=$(pct "$sticks" "$dt" 1)
  m[ccpu]=$(pct "$cticks" "$dt" 1)
  # Server CPU time per PUBLISH or per round trip (the unmeasured ones counted too), in
  # microseconds.
  m[us_per_op]=$(awk -v t="$sticks" -v hz="$clk_tck" -v n="$ops" \
    'BEGIN { printf "%.2f", t / hz * 1e6 / n }')
  m[noise]=$(pct $(($(cpu01_busy) - b0 - sticks - cticks)) "$dt" 2)
  m_secs=$(((dt + 999999999) / 1000000000))
  echo "    ${names[$i]} $t: $(cat "$out"); server CPU ${m[cpu]}%, load CPU ${m[ccpu]}%," \
    "other CPU ${m[noise]}%" >&2
}

# run_server <server index> <round>: starts the server, runs every test against it (again
# if disturbed), stops it.
run_server() {
  local i=$1 prefix="$logdir/s$1.round$2" t attempt rc k
  local log="$prefix.server.log"
  require_ports_free 1 "${ports[$i]}"
  eval "exec taskset -c ${server_cpus[$i]} ${cmds[$i]}" >"$log" 2>&1 &
  server_pid=$!
  if ! wait_listening "${ports[$i]}" 100; then
    echo "$bench_name: ${names[$i]} did not start listening on port ${ports[$i]}" >&2
    show_server_log "$log"
    note "${names[$i]} did not start (log $log)"
    unclean=1
    keep_logs=1
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    return
  fi
  for t in $tests; do
    for attempt in 1 2 3; do
      wait_quiet
      rc=0
      measure "$i" "$t" "$prefix.$t.$attempt" "$log" || rc=$?
      if ((rc == 0)) && remeasure "${m[noise]}" "$attempt" "$m_secs"; then continue; fi
      break
    done
    if ((rc == 3)); then
      note "${names[$i]}: $t n/a: $m_reason"
      continue
    elif ((rc != 0)); then
      unclean=1
      keep_logs=1
      if [[ -z "$server_pid" ]]; then return; fi  # it died: nothing more to measure
      continue
    fi
    for k in $(metrics_of "$t"); do res[$i,$t,$k]+="${m[$k]} "; done
  done
  stop_server "${names[$i]}" "$log" 50
}

echo "$bench_name: up to $rounds rounds x ${#names[@]} servers; tests: $tests" >&2
run_rounds "$rounds" "$time_limit" "${#names[@]}"

# fmedian <values>: the median of decimal values (empty if none), whole from 100 up.
fmedian() {
  tr ' ' '\n' | { grep -E '^[0-9.]+$' || true; } | sort -g |
    awk '{ v[NR] = $1 }
         END { if (NR == 0) exit; m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
               printf(m >= 100 ? "%.0f\n" : "%.2f\n", m) }'
}
ratio() {
  awk -v a="$1" -v b="$2" \
    'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'
}
cell() { local v; v="$(fmedian <<<"$1")"; echo "${v:-n/a}"; }

echo
echo "tools/pubsub_load: $publishers publishers x $window in flight, $size-byte messages," \
  "$messages PUBLISHes per test ($((messages / 10)) for pub100); ping-pong $iterations round" \
  "trips; $done_rounds rounds; $(machine_desc), commit $commit"
for t in $tests; do
  echo
  if [[ "$t" == pingpong ]]; then
    echo "BLPOP/LPUSH ping-pong round trip (two wake-ups), microseconds:"
    echo
    echo "| server | p50 median | p50 per round | p99 median | p99 per round | ratio p50" \
      "| ratio p99 | server CPU % | server us/round trip | load CPU % | other CPU % |"
    echo "|---|---:|---|---:|---|---:|---:|---|---:|---|---|"
  else
    echo "PUBLISH to ${t#pub} subscriber(s):"
    echo
    echo "| server | PUBLISH/s median | per round | delivered/s median | per round | ratio" \
      "| server CPU % | server us/PUBLISH | load CPU % | other CPU % |"
    echo "|---|---:|---|---:|---|---:|---|---:|---|---|"
  fi
  for ((i = 0; i < ${#names[@]}; i++)); do
    if [[ "$t" == pingpong ]]; then
      a="${res[$i,$t,p50_us]:-}" b="${res[$i,$t,p99_us]:-}"
      ra="-" rb="-"
      if ((baseline >= 0)); then
        ra="$(ratio "$(fmedian <<<"$a")" "$(fmedian <<<"${res[$baseline,$t,p50_us]:-}")")"
        rb="$(ratio "$(fmedian <<<"$b")" "$(fmedian <<<"${res[$baseline,$t,p99_us]:-}")")"
      fi
      echo "| ${names[$i]} | $(cell "$a") | $(as_list "$a") | $(cell "$b") | $(as_list "$b")" \
        "| $ra | $rb | $(as_list "${res[$i,$t,cpu]:-}") | $(cell "${res[$i,$t,us_per_op]:-}")" \
        "| $(as_list "${res[$i,$t,ccpu]:-}") | $(as_list "${res[$i,$t,noise]:-}") |"
    else
      a="${res[$i,$t,publishes_per_sec]:-}" b="${res[$i,$t,delivered_per_sec]:-}"
      ra="-"
      if ((baseline >= 0)); then
        b0="${res[$baseline,$t,publishes_per_sec]:-}"
        ra="$(ratio "$(fmedian <<<"$a")" "$(fmedian <<<"$b0")")"
      fi
      echo "| ${names[$i]} | $(cell "$a") | $(as_list "$a") | $(cell "$b") | $(as_list "$b")" \
        "| $ra | $(as_list "${res[$i,$t,cpu]:-}") | $(cell "${res[$i,$t,us_per_op]:-}")" \
        "| $(as_list "${res[$i,$t,ccpu]:-}") | $(as_list "${res[$i,$t,noise]:-}") |"
    fi
  done
done
echo
echo "Ratios are against redis-server's median (for ping-pong, below 1.00 is faster)."
for n in "${!notes[@]}"; do echo "- $n"; done | sort

if [[ "$unclean" == 1 ]]; then
  echo "$bench_name: there were problems (see above); logs are in $logdir" >&2
  exit 1
fi
echo "$bench_name: done in ${SECONDS}s" >&2
