#!/usr/bin/env bash
# Replication: damselfly against redis-server side by side in one run, as the master
# followed by a redis-server replica (SIDE=master, the default), or as the replica of a
# redis-server master (SIDE=replica). One pair runs at a time, started fresh per round,
# the starting one alternating per round; the master is pinned to CPU 0 (damselfly on one
# thread), the replica and redis-benchmark to CPU 1. Per round and server:
#   sync_s      DEBUG POPULATE KEYS keys of SIZE bytes, then a replica starts: seconds
#               until it reports master_link_status:up (snapshot, transfer and load)
#   alone       redis-benchmark -t set,lpush -P 32 -c 50, SIZE-byte values, KEYSPACE keys,
#               N requests per test: requests/s with no replica
#   followed    the same with the replica following: requests/s, and the share of alone
#   caught_up_ms  after the load, milliseconds until WAIT 1 reports the replica has it all
#               (SIDE=replica: the replica is stopped with SIGSTOP during that load and
#               continued after it, so this is its time to apply the load's whole stream)
#   same_data   DEBUG DIGEST of master and replica equal (yes/no)
# Prints each round, then the medians, the spread and the ratio damselfly / redis-server.
#
# Usage: tools/repl-bench.sh
# Environment: SIDE [master], ROUNDS [3], KEYS [1000000], SIZE [64], N [1000000],
#   KEYSPACE [100000], TESTS [set,lpush] (redis-benchmark's -t: mset loads transactions
#   spanning shards), COMMAND (a command for redis-benchmark to load instead of TESTS,
#   e.g. "XADD s MAXLEN ~ 10000 * f v"), PREFILL and PREFILL_N [10000] (a command that
#   redis-benchmark runs PREFILL_N times after DEBUG POPULATE, e.g. "RPUSH q element" to
#   give a COMMAND of "BLMOVE q q LEFT RIGHT 0" a big list), MASTER_THREADS [1] (a
#   damselfly master's threads, on CPUs 0..n-1: with 2 it shares CPU 1 with the load),
#   DAMSELFLY [build-opt/damselfly] (the binary, e.g. an older build to compare with),
#   BASE_PORT [6690] (master BASE_PORT, replica BASE_PORT + 1), SKIP_BUILD (1: use the
#   existing build-opt/damselfly)
set -euo pipefail
cd "$(dirname "$0")/.."
side="${SIDE:-master}"
[[ "$side" == master || "$side" == replica ]] || { echo "SIDE must be master or replica" >&2; exit 2; }
rounds="${ROUNDS:-3}"
keys="${KEYS:-1000000}"
size="${SIZE:-64}"
n="${N:-1000000}"
keyspace="${KEYSPACE:-100000}"
tests="${TESTS:-set,lpush}"
command="${COMMAND:-}"
prefill="${PREFILL:-}"
prefill_n="${PREFILL_N:-10000}"
master_threads="${MASTER_THREADS:-1}"
damselfly="${DAMSELFLY:-build-opt/damselfly}"
master_port="${BASE_PORT:-6690}"
replica_port=$((master_port + 1))
[[ "${SKIP_BUILD:-}" == 1 ]] || BUILD_JOBS="${BUILD_JOBS:-2}" tools/build.sh opt >/dev/null
work="$(mktemp -d /tmp/repl-bench.XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

cli() { redis-cli -p "$1" "${@:2}"; }
wait_ping() {
  for _ in $(seq 500); do
    [[ "$(cli "$1" ping 2>/dev/null)" == PONG ]] && return 0
    sleep 0.02
  done
  echo "server on port $1 did not start" >&2
  exit 1
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

start_master() {
  rm -rf "$work/master" && mkdir -p "$work/master"
  if [[ "$1" == damselfly ]]; then
    taskset -c "0-$((master_threads - 1))" "$damselfly" --port "$master_port" \
      --proactor_threads="$master_threads" --dir="$work/master" >"$work/master/log" 2>&1 &
  else
    taskset -c 0 redis-server --port "$master_port" --save "" --appendonly no \
      --repl-diskless-sync-delay 0 \
      --dir "$work/master" --enable-debug-command yes >"$work/master/log" 2>&1 &
  fi
  master_pid=$!
  pids+=("$master_pid")
  wait_ping "$master_port"
}

start_replica() {
  rm -rf "$work/replica" && mkdir -p "$work/replica"
  if [[ "$1" == damselfly ]]; then
    taskset -c 1 "$damselfly" --port "$replica_port" --proactor_threads=1 \
      --dir="$work/replica" --replicaof="127.0.0.1 $master_port" >"$work/replica/log" 2>&1 &
  else
    taskset -c 1 redis-server --port "$replica_port" --replicaof 127.0.0.1 "$master_port" \
      --save "" --appendonly no --dir "$work/replica" --enable-debug-command yes \
      >"$work/replica/log" 2>&1 &
  fi
  replica_pid=$!
  pids+=("$replica_pid")
}

stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# requests/s of the TESTS (SET and LPUSH) or of the COMMAND, summed as one rate over them.
load() {
  local what=(-t "$tests")
  # The command's words, unglobbed (XADD's "*").
  [[ -z "$command" ]] || read -r -a what <<<"$command"
  taskset -c 1 redis-benchmark -p "$master_port" -P 32 -c 50 -d "$size" \
    -r "$keyspace" -n "$n" -q "${what[@]}" 2>/dev/null | tr '\r' '\n' |
    awk '/requests per second/ { for (i = 1; i <= NF; ++i) if ($i == "requests") s += 1 / $(i - 1); c++ }
         END { printf "%.0f", c / s }'
}

declare -A results
measure() {
  local server="$1" round="$2"
  local master=redis replica=redis
  if [[ "$side" == master ]]; then master="$server"; else replica="$server"; fi
  start_master "$master"
  cli "$master_port" debug populate "$keys" key "$size" >/dev/null
  if [[ -n "$prefill" ]]; then
    local words
    read -r -a words <<<"$prefill"
    taskset -c 1 redis-benchmark -p "$master_port" -P 32 -c 1 -n "$prefill_n" -q "${words[@]}" \
      >/dev/null 2>&1
  fi
  local alone
  alone="$(load)"
  local t0
  t0="$(now_ms)"
  start_replica "$replica"
  wait_ping "$replica_port"
  until cli "$replica_port" info replication | grep -q "master_link_status:up"; do sleep 0.01; done
  local sync_ms=$(($(now_ms) - t0))
  local followed
  [[ "$side" == master ]] || kill -STOP "$replica_pid"
  followed="$(load)"
  [[ "$side" == master ]] || kill -CONT "$replica_pid"
  t0="$(now_ms)"
  local acked
  # redis-server's WAIT waits for the offset of the connection's own last write: a write
  # on the same connection first (a fresh connection's WAIT would answer at once).
  acked="$(printf 'SET __repl_bench__ 1\nWAIT 1 60000\n' | cli "$master_port" | tail -1)"
  local caught_up_ms=$(($(now_ms) - t0))
  local same=no
  [[ "$acked" == 1 && "$(cli "$master_port" debug digest)" == "$(cli "$replica_port" debug digest)" ]] && same=yes
  stop "$replica_pid"
  stop "$master_pid"
  results[$server,$round]="$(awk -v s="$sync_ms" 'BEGIN { printf "%.2f", s / 1000 }') $alone $followed $caught_up_ms $same"
  printf "round %d %-9s sync_s %s alone %s followed %s (%.2f) caught_up_ms %s same_data %s\n" \
    "$round" "$server" "$(cut -d' ' -f1 <<<"${results[$server,$round]}")" "$alone" "$followed" \
    "$(awk -v a="$alone" -v f="$followed" 'BEGIN { print f / a }')" "$caught_up_ms" "$same"
}

echo "# $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs);" \
  "commit $(git rev-parse --short HEAD); SIDE=$side KEYS=$keys SIZE=$size N=$n KEYSPACE=$keyspace" \
  "TESTS=$tests COMMAND=\"$command\" PREFILL=\"$prefill\" PREFILL_N=$prefill_n" \
  "MASTER_THREADS=$master_threads DAMSELFLY=$damselfly"
for round in $(seq "$rounds"); do
  if ((round % 2)); then order=(damselfly redis); else order=(redis damselfly); fi
  for server in "${order[@]}"; do measure "$server" "$round"; done
done

# Median and range of column $2 (1-based) over the rounds of server $1.
stat() {
  for round in $(seq "$rounds"); do cut -d' ' -f"$2" <<<"${results[$1,$round]}"; done | sort -g |
    awk '{ v[NR] = $1 } END { printf "%s (%s-%s)", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
median() { stat "$1" "$2" | cut -d' ' -f1; }
echo
echo "| metric | damselfly | redis-server | ratio |"
echo "|---|---|---|---|"
for col in 1:sync_s 2:alone_rps 3:followed_rps 4:caught_up_ms; do
  c="${col%%:*}" name="${col#*:}"
  echo "| $name | $(stat damselfly "$c") | $(stat redis "$c") |" \
    "$(awk -v a="$(median damselfly "$c")" -v b="$(median redis "$c")" \
      'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }') |"
done
for server in damselfly redis; do
  for round in $(seq "$rounds"); do
    [[ "${results[$server,$round]##* }" == yes ]] || { echo "$server round $round: data differ"; exit 1; }
  done
done
echo "same data on master and replica in every run"
