#!/usr/bin/env bash
# lazyfree-bench.sh: how long freeing a large database or value holds the server, damselfly
# against redis-server 7.0, one thread each pinned to CPU 0, the probe on CPU 1.
#
# For each case the server is filled, then tools/stall_probe.py sends the command while a
# second connection pings back to back: "reply" is when the command's reply arrived, "worst
# PING" the slowest ping round trip meanwhile (how long the server stopped answering).
#   FLUSHALL ASYNC, FLUSHALL   after DEBUG POPULATE $KEYS key $VALUE
#   UNLINK, DEL <type>         of one hash, set, sorted set or list of $MEMBERS elements
#                              (tools/coll_load)
# Each case runs $ROUNDS times on each server; the table shows the medians and the spread.
#
#   tools/lazyfree-bench.sh                      # 5M keys, 2M members, 3 rounds
#   KEYS=1000000 MEMBERS=500000 ROUNDS=1 tools/lazyfree-bench.sh
#   SKIP_BUILD=1 SERVERS=damselfly tools/lazyfree-bench.sh
#
# Settings: KEYS, VALUE (bytes), MEMBERS, ROUNDS, SERVERS ("damselfly redis"), BASE_PORT
# (7400), SKIP_BUILD=1 (use build-opt as it is), DAMSELFLY_BIN.
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."

keys=${KEYS:-5000000}
value=${VALUE:-200}
members=${MEMBERS:-2000000}
rounds=${ROUNDS:-3}
servers=${SERVERS:-damselfly redis}
base_port=${BASE_PORT:-7400}
damselfly_bin=${DAMSELFLY_BIN:-build-opt/damselfly}
require_counts "$keys" "$value" "$members" "$rounds" "$base_port"
require_two_cpus stall_probe
require_commands redis-server redis-cli python3 taskset
init_logdir
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then build_release "damselfly and coll_load" damselfly coll_load; fi
coll_load=build-opt/tools/coll_load
[[ -x "$coll_load" && -x "$damselfly_bin" ]] || die_usage "build-opt lacks damselfly or coll_load"

cases=("FLUSHALL ASYNC" "FLUSHALL")
for type in hash set zset list; do cases+=("UNLINK $type" "DEL $type"); done

# fill <port> <case>: puts in what <case> frees.
fill() {
  local port=$1 type
  case "$2" in
    FLUSHALL*) redis-cli -p "$port" DEBUG POPULATE "$keys" key "$value" >/dev/null ;;
    *)
      type=${2#* }
      taskset -c 1 "$coll_load" --port="$port" --type="$type" --key="big:$type" --keys=1 \
        --members="$members" --per-command=100 >/dev/null
      ;;
  esac
}

# command_of <case>: the command line stall_probe sends.
command_of() {
  case "$1" in
    FLUSHALL*) echo "$1" ;;
    *) echo "${1% *} big:${1#* }" ;;
  esac
}

declare -A reply worst
port=$base_port
for server in $servers; do
  port=$((port + 1))
  require_ports_free 1 "$port"
  case "$server" in
    damselfly) cmd="$damselfly_bin --port=$port --proactor_threads=1 --dir=$logdir" ;;
    redis) cmd="redis-server --port $port --save '' --appendonly no --dir $logdir --enable-debug-command yes" ;;
    *) die_usage "unknown server '$server'" ;;
  esac
  start_listening "$cmd" "$logdir/$server.log" "$port" 1 "$server"
  for c in "${cases[@]}"; do
    for ((r = 0; r < rounds; r++)); do
      fill "$port" "$c"
      sleep 0.5
      # shellcheck disable=SC2046
      out=$(taskset -c 1 python3 tools/stall_probe.py "$port" $(command_of "$c"))
      reply["$server,$c"]+="$(sed 's/.*reply_ms=\([0-9.]*\).*/\1/' <<<"$out") "
      worst["$server,$c"]+="$(sed 's/.*worst_ping_ms=\([0-9.]*\).*/\1/' <<<"$out") "
      redis-cli -p "$port" FLUSHALL >/dev/null
    done
  done
  stop_server "$server" "$logdir/$server.log" 100
done

# stats <values>: "median (min-max)" of decimal values.
stats() {
  tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g |
    awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                              printf "%.1f (%.1f-%.1f)", m, v[1], v[NR] }'
}

echo "# $(machine_desc); damselfly $(built_commit); $keys keys of $value bytes, $members members, $rounds rounds"
echo "# ms: median (min-max)"
header="| case |"
rule="|---|"
for server in $servers; do
  header+=" $server reply | $server worst PING |"
  rule+="---:|---:|"
done
echo "$header"
echo "$rule"
for c in "${cases[@]}"; do
  line="| $c |"
  for server in $servers; do
    line+=" $(stats "${reply["$server,$c"]}") | $(stats "${worst["$server,$c"]}") |"
  done
  echo "$line"
done
