#!/usr/bin/env bash
# Idle-connection memory: damselfly against redis-server, side by side in one run. Each
# round starts each server in turn (the starting server alternates per round; only one
# server runs at a time), pinned to CPU 0 on one thread (damselfly --proactor_threads=1).
# tools/idle_conn_load.py, pinned to CPU 1, opens CONNECTIONS connections, sends one PING
# on each, and once all of them sit idle reads the server's resident set size (VmRSS);
# then it closes them and reads it again. Prints a markdown table of the RSS growth per
# idle connection (median and every round), the share of that growth the server gave
# back after the close, and the ratio damselfly / redis-server; docs/benchmarks.md
# records the results.
#
# Usage: tools/idle-conn-bench.sh
# Environment (defaults in brackets):
#   ROUNDS [3]          rounds; each round measures both servers once
#   CONNECTIONS [10000] idle connections per run
#   SETTLE [10]         seconds to wait after the connections went idle (and after they
#                       closed) before reading RSS; damselfly parks a connection that has
#                       been idle for --conn_park_idle_ms (1000 by default)
#   BASE_PORT [6630]    damselfly listens on BASE_PORT, redis-server on BASE_PORT + 1
#   REDIS_SERVER [redis-server]
#   DAMSELFLY_FLAGS []  extra flags for damselfly, e.g. --conn_park_idle_ms=0
#   SKIP_BUILD          1: use the existing build-opt/damselfly
#   DAMSELFLY_BINARY    measure this binary instead of building build-opt/damselfly (e.g.
#                       a copy of main's, for a before/after comparison)
#
# Needs CONNECTIONS + 64 open files in the client and CONNECTIONS + 64 in the server: the
# script raises its soft limit (ulimit -n) to the hard limit.
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"

rounds="${ROUNDS:-3}"
connections="${CONNECTIONS:-10000}"
settle="${SETTLE:-10}"
base_port="${BASE_PORT:-6630}"
redis_server="${REDIS_SERVER:-redis-server}"
damselfly_flags="${DAMSELFLY_FLAGS:-}"

require_counts "$rounds" "$connections" "$settle" "$base_port"
require_two_cpus "the client"
require_commands "$redis_server" python3 taskset
ulimit -n "$(ulimit -Hn)"
need=$((connections + 64))
(($(ulimit -n) >= need)) || die_usage "needs $need open files; the hard limit is $(ulimit -Hn)"

cd "$(dirname "$0")/.."
binary="${DAMSELFLY_BINARY:-}"
init_logdir
if [[ -z "$binary" ]]; then
  binary=build-opt/damselfly
  if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    build_release damselfly damselfly
  fi
  commit="$(built_commit)"
else
  commit="binary $binary"
fi
[[ -x "$binary" ]] || die_usage "$binary is missing (build it, or unset SKIP_BUILD)"

names=("damselfly" "redis-server")
ports=("$base_port" "$((base_port + 1))")
cmds=(
  "$binary --proactor_threads=1 --port=${ports[0]} --bind=127.0.0.1 --logtostderr $damselfly_flags"
  "$redis_server --port ${ports[1]} --bind 127.0.0.1 --save '' --appendonly no --maxclients $need"
)
per_conn=("" "")
returned=("" "")
base_rss=("" "")

run_server() {
  local i=$1 port=${ports[$1]} log="$logdir/${names[$1]}.round$2.log" out
  require_ports_free 1 "$port"
  start_server "${cmds[$i]}" "$log"
  if ! wait_listening "$port" 100; then
    keep_logs=1
    show_server_log "$log"
    echo "$bench_name: ${names[$i]} did not start listening on port $port" >&2
    exit 1
  fi
  sleep 0.5
  if ! out="$(taskset -c 1 python3 tools/idle_conn_load.py --port "$port" --pid "$server_pid" \
    --connections "$connections" --settle "$settle" 2>"$logdir/load.err")"; then
    keep_logs=1
    cat "$logdir/load.err" >&2
    show_server_log "$log"
    echo "$bench_name: the load failed against ${names[$i]}; reproduce with:" >&2
    echo "  ${cmds[$i]} &" >&2
    echo "  python3 tools/idle_conn_load.py --port $port --pid \$! --connections $connections" >&2
    exit 1
  fi
  stop_server "${names[$i]}" "$log" 100
  per_conn[i]+="$(jq -r .per_conn_bytes <<<"$out") "
  returned[i]+="$(jq -r .returned_pct <<<"$out") "
  base_rss[i]+="$(jq -r .before_kib <<<"$out") "
  echo "    ${names[$i]}: $out" >&2
}

echo "idle-conn-bench: $connections idle connections, $rounds rounds, SETTLE=${settle}s" >&2
run_rounds "$rounds" 100000 2

echo "Idle connections: $connections connections, each sent one PING, then idle;" \
  "$done_rounds rounds; damselfly $commit ${damselfly_flags:+($damselfly_flags) }on" \
  "$(machine_desc); both servers on one thread pinned to CPU 0."
echo
echo "| server | RSS per idle connection, bytes (median) | per round | RSS returned after close, % (per round) | RSS before, KiB (per round) |"
echo "|---|---:|---|---|---|"
for i in 0 1; do
  echo "| ${names[$i]} | $(median <<<"${per_conn[i]}") | $(as_list "${per_conn[i]}")" \
    "| $(as_list "${returned[i]}") | $(as_list "${base_rss[i]}") |"
done
echo
d="$(median <<<"${per_conn[0]}")"
r="$(median <<<"${per_conn[1]}")"
echo "Ratio damselfly / redis-server (medians): $(awk -v d="$d" -v r="$r" \
  'BEGIN { printf "%.2f", d / r }'); per round: $(round_ratios "${per_conn[0]}" "${per_conn[1]}")."
