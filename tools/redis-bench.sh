#!/usr/bin/env bash
# redis-benchmark against damselfly and redis-server, side by side in one run. Each round
# starts each server in turn (the starting server alternates per round; only one server runs
# at a time), pinned to CPU 0 on one thread, and loads it with redis-benchmark pinned to
# CPU 1: SET then GET (one `-t set,get` invocation), unpipelined and at -P 32, 50 clients,
# 256-byte values, keys drawn from a 1M-key space. Prints a markdown table of the per-server
# medians and the ratio damselfly / redis-server; docs/benchmarks.md records the results.
#
# Usage: tools/redis-bench.sh
# Environment (defaults in brackets):
#   ROUNDS [3]          rounds; each round measures both servers once
#   N1 [300000]         requests per test without pipelining (-n)
#   N32 [3000000]       requests per test at -P 32 (-n)
#   CLIENTS [50]        redis-benchmark connections (-c)
#   SIZE [256]          value size, bytes (-d)
#   KEYSPACE [1000000]  key space (-r)
#   BASE_PORT [6590]    damselfly listens on BASE_PORT, redis-server on BASE_PORT + 1
#   REDIS_SERVER [redis-server], REDIS_BENCHMARK [redis-benchmark], REDIS_CLI [redis-cli]
#   DAMSELFLY_FLAGS []  extra flags for damselfly, e.g. --compress_values=false
#   REDIS_FLAGS []      extra arguments for redis-server, e.g. --appendonly yes --dir /tmp/r
#   SKIP_BUILD          1: use the existing build-opt/damselfly
#   QUIET_MAX [10]      "other CPU" percentage above which a run counts as disturbed
#   QUIET_BUDGET [60]   seconds, in total, to spend waiting for quiet CPUs and re-running
#                       disturbed runs; once spent, runs are taken as they come
#   TIME_LIMIT [210]    seconds; no new round is started if it would likely end after this
#                       (counted from the script's start, build included)
#
# Unrelated processes on CPUs 0-1 distort the numbers, so each run's "other CPU %" is
# reported: the busy time of the two CPUs that belongs to neither the server nor
# redis-benchmark, as a share of both CPUs. A run is preceded by a wait for quiet CPUs, and a
# disturbed run is measured again (at most twice), within QUIET_BUDGET. "server CPU %" and
# "client CPU %" are the server's share of CPU 0 and redis-benchmark's share of CPU 1; like
# "other CPU %" they cover one invocation (SET and GET together), so the SET and GET rows show
# the same values, as does "server ns/request" (server CPU time per request). After each
# server's runs, its DBSIZE is checked against the number of distinct keys the SETs should
# have left.
#
# Stops at the first failure (a server that does not start, dies, or makes redis-benchmark
# fail or hang), prints the commands that reproduce it and exits non-zero; the logs are kept.
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"

rounds="${ROUNDS:-3}"
n1="${N1:-300000}"
n32="${N32:-3000000}"
clients="${CLIENTS:-50}"
size="${SIZE:-256}"
keyspace="${KEYSPACE:-1000000}"
base_port="${BASE_PORT:-6590}"
quiet_max="${QUIET_MAX:-10}"
quiet_budget="${QUIET_BUDGET:-60}"
time_limit="${TIME_LIMIT:-210}"
redis_server="${REDIS_SERVER:-redis-server}"
redis_benchmark="${REDIS_BENCHMARK:-redis-benchmark}"
redis_cli="${REDIS_CLI:-redis-cli}"

require_counts "$rounds" "$n1" "$n32" "$clients" "$size" "$keyspace" "$base_port" \
  "$quiet_max" "$time_limit"
require_quiet_budget
require_two_cpus client
require_commands "$redis_server" "$redis_benchmark" "$redis_cli"
# Hard bound on one redis-benchmark invocation (two tests); a run that takes longer counts
# as a hang.
load_timeout="${LOAD_TIMEOUT:-60}"
damselfly_flags="${DAMSELFLY_FLAGS:-}"
redis_flags="${REDIS_FLAGS:-}"

cd "$(dirname "$0")/.."
bin="$PWD/build-opt"
SECONDS=0  # bash's elapsed-time counter, for TIME_LIMIT

# The servers, in table order; the second one is the baseline.
names=("damselfly" "redis-server")
ports=("$base_port" "$((base_port + 1))")
cmds=(
  "$bin/damselfly --proactor_threads=1 --port=${ports[0]} --bind=127.0.0.1 --logtostderr $damselfly_flags"
  "$redis_server --port ${ports[1]} --bind 127.0.0.1 --save '' --appendonly no $redis_flags"
)
# The runs of one round against one server: label, redis-benchmark arguments.
run_labels=("1" "32")
run_n=("$n1" "$n32")
run_args=(
  "-t set,get -c $clients -d $size -r $keyspace -n $n1 --csv"
  "-t set,get -c $clients -d $size -r $keyspace -n $n32 -P 32 --csv"
)
tests=("SET" "GET")

init_logdir  # logdir, keep_logs (set when something failed), server_pid, load_pid
require_ports_free 1 "${ports[@]}"

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  build_release damselfly damselfly
fi
[[ -x "$bin/damselfly" ]] || die_usage "$bin/damselfly is missing (build it, or unset SKIP_BUILD)"
commit="$(built_commit)"

# The command lines that reproduce a failure against server $1, run $2.
reproducer() {
  echo "  reproduce with:" >&2
  echo "    taskset -c 0 ${cmds[$1]} &" >&2
  echo "    taskset -c 1 $redis_benchmark -p ${ports[$1]} ${run_args[$2]}" >&2
}

# fail <server index> <run index> <message> <log>: reports a failure and stops the script.
fail() {
  keep_logs=1
  echo "redis-bench: ${names[$1]}: $3" >&2
  show_server_log "$4"
  reproducer "$1" "$2"
  echo "redis-bench: stopped; logs are in $logdir" >&2
  exit 1
}

# rps[server,run,test] is a space-separated list of the rounds' requests/s; cpu[] and
# noise[] (per server and run) hold the server CPU % and other CPU % of each round.
declare -A rps=() cpu=() ccpu=() nsreq=() noise=()
for ((i = 0; i < ${#names[@]}; i++)); do
  for ((j = 0; j < ${#run_labels[@]}; j++)); do
    cpu[$i,$j]=""
    ccpu[$i,$j]=""
    nsreq[$i,$j]=""
    noise[$i,$j]=""
    for t in "${tests[@]}"; do rps[$i,$j,$t]=""; done
  done
done
unclean=0

# measure <server index> <run index> <log prefix> <server log>: one redis-benchmark
# invocation against the running server. Sets m_rps (an associative array test -> rps),
# m_cpu, m_ccpu (redis-benchmark's CPU %), m_ns (server CPU ns per request), m_noise,
# m_secs (the run's duration); stops the script on any failure.
measure() {
  local i=$1 j=$2 out="$3.out" err="$3.err" p0 b0 c0 t0 dt rc=0 server_ticks client_ticks t
  p0=$(proc_ticks "$server_pid")
  c0=$(child_ticks)
  b0=$(cpu01_busy)
  t0=$(now_ns)
  # In the background so that a signal to this script is acted on at once (bash runs
  # traps only between foreground commands); timeout passes the kill on.
  # shellcheck disable=SC2086  # run_args[] entries are word lists on purpose
  timeout "$load_timeout" taskset -c 1 "$redis_benchmark" -p "${ports[$i]}" ${run_args[$j]} \
    >"$out" 2>"$err" &
  load_pid=$!
  wait "$load_pid" || rc=$?
  load_pid=""
  dt=$(($(now_ns) - t0))
  if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" 2>/dev/null || rc=$?
    server_pid=""
    fail "$i" "$j" "the server died during the run (exit status $rc)" "$4"
  fi
  server_ticks=$(($(proc_ticks "$server_pid") - p0))
  client_ticks=$(($(child_ticks) - c0))
  if ((rc == 124)); then
    fail "$i" "$j" "redis-benchmark did not finish in ${load_timeout}s (hang?)" "$4"
  fi
  # redis-benchmark warns when CONFIG GET is not supported; anything else on stderr is
  # an error (it reports server errors there, sometimes without failing).
  if ((rc != 0)) || grep -qv '^WARNING: Could not fetch server CONFIG' "$err"; then
    echo "redis-benchmark (rc=$rc) said:" >&2
    sed 's/^/    /' "$err" | head -n 20 >&2
    fail "$i" "$j" "redis-benchmark failed" "$4"
  fi
  unset m_rps
  declare -gA m_rps=()
  for t in "${tests[@]}"; do
    m_rps[$t]=$(awk -F'"' -v t="$t" '$2 == t { printf "%.0f", $4 }' "$out")
    if ! [[ "${m_rps[$t]}" =~ ^[1-9][0-9]*$ ]]; then
      echo "  redis-benchmark output:" >&2
      sed 's/^/    /' "$out" >&2
      fail "$i" "$j" "no $t result in the redis-benchmark output" "$4"
    fi
  done
  m_cpu=$(pct "$server_ticks" "$dt" 1)
  m_ccpu=$(pct "$client_ticks" "$dt" 1)
  m_secs=$(((dt + 999999999) / 1000000000))
  # Server CPU time per request, in nanoseconds (SET and GET together).
  m_ns=$(awk -v t="$server_ticks" -v hz="$clk_tck" -v n="${run_n[$j]}" \
    'BEGIN { printf "%.0f", t / hz * 1e9 / (2 * n) }')
  sets[$i]=$((sets[$i] + run_n[$j]))
  m_noise=$(pct $(($(cpu01_busy) - b0 - server_ticks - client_ticks)) "$dt" 2)
  echo "    ${names[$i]} -P ${run_labels[$j]}: SET ${m_rps[SET]} GET ${m_rps[GET]} rps," \
    "CPU %: server $m_cpu, client $m_ccpu, other $m_noise; server ns/request $m_ns" >&2
}

# run_server <server index> <round>: starts the server, runs every run_args[] entry against
# it (again if the run was disturbed), checks its key count, stops it.
run_server() {
  local i=$1 port=${ports[$1]} prefix="$logdir/${names[$1]}.round$2"
  local log="$prefix.server.log"
  require_ports_free 1 "$port"
  start_server "${cmds[$i]}" "$log"
  wait_listening "$port" 100 || fail "$i" 0 "did not start listening on port $port" "$log"

  local j t attempt m_cpu m_ccpu m_ns m_noise m_secs
  for ((j = 0; j < ${#run_labels[@]}; j++)); do
    for attempt in 1 2 3; do
      wait_quiet
      measure "$i" "$j" "$prefix.P${run_labels[$j]}.$attempt" "$log"
      if remeasure "$m_noise" "$attempt" "$m_secs"; then continue; fi
      break
    done
    for t in "${tests[@]}"; do rps[$i,$j,$t]+="${m_rps[$t]} "; done
    cpu[$i,$j]+="$m_cpu "
    ccpu[$i,$j]+="$m_ccpu "
    nsreq[$i,$j]+="$m_ns "
    noise[$i,$j]+="$m_noise "
  done
  # Every SET stored a key, drawn uniformly from the key space: n SETs leave about
  # keyspace * (1 - (1 - 1/keyspace)^n) distinct keys (a re-measured run adds SETs). This
  # checks that the server kept what it acknowledged.
  local k e
  k="$(timeout 10 "$redis_cli" -p "$port" dbsize 2>&1 | tr -d '\r')"
  e="$(awk -v r="$keyspace" -v n="${sets[$i]}" \
    'BEGIN { printf "%.0f", r * (1 - exp(n * log(1 - 1 / r))) }')"
  keys[$i]+="$k "
  if ! awk -v k="$k" -v e="$e" -v r="$keyspace" \
    'BEGIN { d = k - e; exit !(k ~ /^[0-9]+$/ && d * d <= (0.002 * r + 10) ^ 2) }'; then
    echo "redis-bench: ${names[$i]} held '$k' keys after ${sets[$i]} SETs; expected about $e" >&2
    unclean=1
    keep_logs=1
  fi
  sets[$i]=0

  # A clean exit on SIGTERM is part of what is checked.
  stop_server "${names[$i]}" "$log" 50
}

declare -a keys=("" "") sets=(0 0)
echo "redis-bench: up to $rounds rounds x ${#names[@]} servers; -c $clients -d $size" \
  "-r $keyspace, -n $n1 unpipelined and -n $n32 at -P 32" >&2
run_rounds "$rounds" "$time_limit" "${#names[@]}"

echo
echo "redis-benchmark -c $clients -d $size -r $keyspace; -n $n1 unpipelined, -n $n32 at -P 32;" \
  "$done_rounds rounds; $(machine_desc), commit $commit"
echo
echo "| test | pipeline | damselfly rps (median) | redis rps (median) | ratio" \
  "| per-round ratios | damselfly runs | redis runs | server CPU % (damselfly; redis)" \
  "| server ns/request, median (damselfly; redis) | client CPU % (damselfly; redis)" \
  "| other CPU % (damselfly; redis) |"
echo "|---|---:|---:|---:|---:|---|---|---|---|---|---|---|"
for ((j = 0; j < ${#run_labels[@]}; j++)); do
  for t in "${tests[@]}"; do
    a="${rps[0,$j,$t]}"
    b="${rps[1,$j,$t]}"
    ma="$(median <<<"$a")"
    mb="$(median <<<"$b")"
    ratio="$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2f", a / b }')"
    echo "| $t | ${run_labels[$j]} | $ma | $mb | $ratio | $(round_ratios "$a" "$b")" \
      "| $(as_list "$a") | $(as_list "$b") | $(as_list "${cpu[0,$j]}"); $(as_list "${cpu[1,$j]}")" \
      "| $(median <<<"${nsreq[0,$j]}"); $(median <<<"${nsreq[1,$j]}")" \
      "| $(as_list "${ccpu[0,$j]}"); $(as_list "${ccpu[1,$j]}")" \
      "| $(as_list "${noise[0,$j]}"); $(as_list "${noise[1,$j]}") |"
  done
done
echo
echo "Keys at the end of each round (DBSIZE; checked against the SETs sent): damselfly" \
  "$(as_list "${keys[0]}"); redis-server $(as_list "${keys[1]}")."

if [[ "$unclean" == 1 ]]; then
  echo "redis-bench: there were problems (see above); logs are in $logdir" >&2
  exit 1
fi
echo "redis-bench: done in ${SECONDS}s" >&2
