#!/usr/bin/env bash
# MSET and MGET of 10 keys: damselfly and redis-server side by side in one run. Each round
# starts each server in turn (one at a time, the first one rotating per round), pinned to
# CPU 0, and loads it with redis-benchmark pinned to CPU 1: `-t mset` (10 keys of
# key:__rand_int__), then a custom `MGET` of 10 such keys, unpipelined and at -P 16. The
# servers:
#   damselfly-1t   --proactor_threads=1: one shard, so every MSET/MGET takes the
#                  single-shard path (no transaction)
#   damselfly-2t   --proactor_threads=2 on CPUs 0-1 (it shares CPU 1 with the load, so its
#                  figures are a lower bound): two shards, so nearly every MSET/MGET is a
#                  cross-shard VLL transaction (schedule hop + execution hop). Both threads on
#                  CPU 0 would measure the runtime's cost of two busy threads on one core
#                  instead (a hop then waits for the other thread's time slice).
#   redis-server
# Prints a markdown table of the per-server medians and the ratios to redis-server;
# docs/benchmarks.md records the results.
#
# Usage: tools/mset-bench.sh
# Environment (defaults in brackets):
#   ROUNDS [3], N1 [100000] requests unpipelined, N16 [400000] requests at -P 16,
#   CLIENTS [50], SIZE [16] value bytes, KEYSPACE [100000], BASE_PORT [6690],
#   SKIP_BUILD (1: use the existing build-opt/damselfly), QUIET_MAX [10], QUIET_BUDGET [60]
#   REDIS_SERVER [redis-server], REDIS_BENCHMARK [redis-benchmark]
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"

rounds="${ROUNDS:-3}"
n1="${N1:-100000}"
n16="${N16:-400000}"
clients="${CLIENTS:-50}"
size="${SIZE:-16}"
keyspace="${KEYSPACE:-100000}"
base_port="${BASE_PORT:-6690}"
quiet_max="${QUIET_MAX:-10}"
quiet_budget="${QUIET_BUDGET:-60}"
redis_server="${REDIS_SERVER:-redis-server}"
redis_benchmark="${REDIS_BENCHMARK:-redis-benchmark}"
load_timeout="${LOAD_TIMEOUT:-120}"

require_counts "$rounds" "$n1" "$n16" "$clients" "$size" "$keyspace" "$base_port" "$quiet_max"
require_quiet_budget
require_two_cpus client
require_commands "$redis_server" "$redis_benchmark"

cd "$(dirname "$0")/.."
bin="$PWD/build-opt"
names=("damselfly-1t" "damselfly-2t" "redis-server")
ports=("$base_port" "$((base_port + 1))" "$((base_port + 2))")
cmds=(
  "$bin/damselfly --proactor_threads=1 --port=${ports[0]} --bind=127.0.0.1 --logtostderr"
  "taskset -c 0,1 $bin/damselfly --proactor_threads=2 --port=${ports[1]} --bind=127.0.0.1 --logtostderr"
  "$redis_server --port ${ports[2]} --bind 127.0.0.1 --save '' --appendonly no"
)
mget="MGET"
for ((k = 0; k < 10; k++)); do mget+=" key:__rand_int__"; done
tests=("MSET" "MGET")
test_args=("-t mset" "$mget")
pipelines=(1 16)
pipeline_n=("$n1" "$n16")

init_logdir
unclean=0
require_ports_free 1 "${ports[@]}"
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then build_release damselfly damselfly; fi
[[ -x "$bin/damselfly" ]] || die_usage "$bin/damselfly is missing"
commit="$(built_commit)"

declare -A rps=()
# measure <server> <test> <pipeline index> <log prefix>: one redis-benchmark invocation;
# appends its requests/s to rps[server,test,pipeline].
measure() {
  local i=$1 t=$2 p=$3 out="$4.out" err="$4.err" rc=0 v
  # shellcheck disable=SC2086  # test_args[] entries are word lists on purpose
  timeout "$load_timeout" taskset -c 1 "$redis_benchmark" -p "${ports[$i]}" -c "$clients" \
    -d "$size" -r "$keyspace" -n "${pipeline_n[$p]}" -P "${pipelines[$p]}" --csv \
    ${test_args[$t]} >"$out" 2>"$err" &
  load_pid=$!
  wait "$load_pid" || rc=$?
  load_pid=""
  if ((rc != 0)) || ! kill -0 "$server_pid" 2>/dev/null ||
    grep -qv '^WARNING: Could not fetch server CONFIG' "$err"; then
    keep_logs=1
    echo "$bench_name: ${names[$i]} ${tests[$t]} -P ${pipelines[$p]} failed (rc=$rc); logs in $logdir" >&2
    exit 1
  fi
  v=$(awk -F'"' 'NR == 2 { printf "%.0f", $4 }' "$out")
  echo "    ${names[$i]} ${tests[$t]} -P ${pipelines[$p]}: $v rps" >&2
  rps[$i,$t,$p]+="$v "
}

for ((r = 1; r <= rounds; r++)); do
  echo "  round $r" >&2
  for ((k = 0; k < ${#names[@]}; k++)); do
    i=$(((r - 1 + k) % ${#names[@]}))
    log="$logdir/${names[$i]}.round$r.log"
    start_server "${cmds[$i]}" "$log"
    wait_listening "${ports[$i]}" 100 || { keep_logs=1; show_server_log "$log"; exit 1; }
    for ((p = 0; p < ${#pipelines[@]}; p++)); do
      for ((t = 0; t < ${#tests[@]}; t++)); do
        wait_quiet
        measure "$i" "$t" "$p" "$logdir/${names[$i]}.round$r.$t.$p"
      done
    done
    stop_server "${names[$i]}" "$log" 50
  done
done

echo
echo "redis-benchmark -c $clients -d $size -r $keyspace, 10 keys per command;" \
  "-n $n1 unpipelined, -n $n16 at -P 16; $rounds rounds; $(machine_desc), commit $commit"
echo
echo "| test | pipeline | damselfly-1t rps | damselfly-2t rps | redis rps | ratio 1t | ratio 2t" \
  "| per-round ratios 1t | per-round ratios 2t |"
echo "|---|---:|---:|---:|---:|---:|---:|---|---|"
for ((p = 0; p < ${#pipelines[@]}; p++)); do
  for ((t = 0; t < ${#tests[@]}; t++)); do
    a="${rps[0,$t,$p]}" b="${rps[1,$t,$p]}" c="${rps[2,$t,$p]}"
    ma="$(median <<<"$a")" mb="$(median <<<"$b")" mc="$(median <<<"$c")"
    echo "| ${tests[$t]} | ${pipelines[$p]} | $ma | $mb | $mc" \
      "| $(awk -v a="$ma" -v c="$mc" 'BEGIN { printf "%.2f", a / c }')" \
      "| $(awk -v b="$mb" -v c="$mc" 'BEGIN { printf "%.2f", b / c }')" \
      "| $(round_ratios "$a" "$c") | $(round_ratios "$b" "$c") |"
  done
done
if [[ "$unclean" == 1 ]]; then exit 1; fi
echo "$bench_name: done in ${SECONDS}s" >&2
