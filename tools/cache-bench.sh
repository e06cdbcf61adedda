#!/usr/bin/env bash
# Cache hit-rate benchmark (issue #19 point 5): the same generated request sequences
# replayed by tools/hitrate_load (GET; on a miss, SET) against redis-server (allkeys-lru,
# allkeys-lfu), memcached (its default segmented LRU) and damselfly (cache mode, and each
# maxmemory-policy), all with the same memory limit. Prints two markdown tables: the hit
# ratios per workload and server, and per run the keys each server held at the end, its
# memory figures and its request rate.
#
# Workloads (see tools/hitrate_load.cc): zipf99 and zipf80 (Zipf 0.99 and 0.8 over KEYS
# keys), shift (a hot set of SHIFT_EVERY/8 keys taking 90% of the requests, so each of its
# keys is asked for about 7 times before the set moves, every SHIFT_EVERY requests), scan (zipf99 interrupted by one scan of new keys whose values
# alone are twice the memory limit; reports the hot set's (the KEYS/100 most popular keys)
# hit ratio before the scan, in the first WINDOW requests after it, and how many requests
# after it the ratio was back within 0.01 of its level before). Every workload first runs
# WARMUP requests that are not counted, then REQUESTS measured ones (scan: REQUESTS before
# the scan and AFTER_SCAN after it, both counted).
#
# The memory limit: each workload's "distinct data" is its distinct keys (counted by
# hitrate_load --distinct on the trace itself, scan keys excluded) times VALUE_SIZE + 64
# bytes (a nominal per-item cost: the key and the server's item metadata); the limit is
# FIT (0.25) of it, rounded to whole MiB because memcached's -m takes megabytes, and every
# server gets exactly that many bytes. What the limit counts differs:
#   redis-server  maxmemory bounds used_memory: its allocator's allocated bytes (keys,
#                 values, dict tables, client buffers); fragmentation and RSS are not bound.
#   memcached     -m bounds the slab pages (1 MiB each) holding items (header, key, value,
#                 rounded up to the slab class size); its hash table and connection
#                 buffers are outside the limit.
#   damselfly     maxmemory bounds used_memory as its shards count it (see INFO memory).
# So the same limit does not hold the same number of keys; the second table shows how many
# each held at the end ("held" as a share of the distinct keys), with used memory and RSS,
# so that a hit ratio can be read against what it cost.
#
# Usage: tools/cache-bench.sh
# Environment (defaults in brackets):
#   SERVERS        which servers, of: redis:allkeys-lru redis:allkeys-lfu memcached
#                  damselfly:cache damselfly:<maxmemory-policy> damselfly-mc:cache (damselfly's
#                  memcache port) [all but damselfly-mc:cache; damselfly:allkeys-lru and
#                  damselfly:allkeys-lfu stand for its policies]
#   WORKLOADS      [zipf99 zipf80 shift scan]
#   SMALL          1: a CI-sized run (KEYS 200000, WARMUP/REQUESTS/AFTER_SCAN 200000,
#                  SHIFT_EVERY 50000, WINDOW 5000), seconds per run
#   KEYS [10000000], WARMUP [10000000], REQUESTS [10000000], AFTER_SCAN [10000000]
#   SHIFT_EVERY [2000000], WINDOW [100000], VALUE_SIZE [200], FIT [0.25], SEED [1]
#   CONNS [4], PIPELINE [32]   hitrate_load's connections and GETs in flight on each
#   BASE_PORT [6420]     RESP port (redis-server, damselfly); memcache port: MC_PORT [11420]
#   DAMSELFLY [build-opt/damselfly], DAMSELFLY_THREADS [1], DAMSELFLY_FLAGS []
#   SKIP_BUILD     1: use the existing build-opt/damselfly and build-opt/tools/hitrate_load
#   PIN [1]        0: pin nothing (on a machine loaded by other jobs, a pinned server and
#                  client wait for their CPU on every round trip; hit ratios are the same)
#
# Servers run one at a time, a fresh process per run, pinned to CPU 0 unless PIN=0 (redis-server,
# memcached -t 1, damselfly --proactor_threads=1; with DAMSELFLY_THREADS above 1 damselfly
# is not pinned), hitrate_load pinned to CPU 1. A damselfly variant whose flag or policy
# the binary does not know is reported as skipped, not failed. Hit ratios do not depend on
# CPU noise; request rates do (the output says how busy the machine was).
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"
cd "$(dirname "$0")/.."

if [[ "${SMALL:-0}" == 1 ]]; then
  : "${KEYS:=200000}" "${WARMUP:=200000}" "${REQUESTS:=200000}" "${AFTER_SCAN:=200000}"
  : "${SHIFT_EVERY:=50000}" "${WINDOW:=5000}"
fi
keys="${KEYS:-10000000}"
warmup="${WARMUP:-10000000}"
requests="${REQUESTS:-10000000}"
after_scan="${AFTER_SCAN:-10000000}"
shift_every="${SHIFT_EVERY:-2000000}"
window="${WINDOW:-100000}"
value_size="${VALUE_SIZE:-200}"
fit="${FIT:-0.25}"
seed="${SEED:-1}"
conns="${CONNS:-4}"
pipeline="${PIPELINE:-32}"
base_port="${BASE_PORT:-6420}"
mc_port="${MC_PORT:-11420}"
damselfly="${DAMSELFLY:-build-opt/damselfly}"
damselfly_threads="${DAMSELFLY_THREADS:-1}"
damselfly_flags="${DAMSELFLY_FLAGS:-}"
servers="${SERVERS:-redis:allkeys-lru redis:allkeys-lfu memcached damselfly:cache damselfly:allkeys-lru damselfly:allkeys-lfu}"
workloads="${WORKLOADS:-zipf99 zipf80 shift scan}"
pin="${PIN:-1}"
loader=build-opt/tools/hitrate_load
load_prefix="taskset -c 1"
if [[ "$pin" != 1 ]]; then load_prefix=env; fi

require_counts "$keys" "$requests" "$after_scan" "$shift_every" "$window" "$value_size" \
  "$conns" "$pipeline" "$base_port" "$mc_port" "$damselfly_threads" "$seed"
[[ "$warmup" =~ ^[0-9]+$ ]] || die_usage "bad WARMUP '$warmup'"
[[ "$fit" =~ ^0?\.[0-9]+$ ]] || die_usage "bad FIT '$fit' (a fraction below 1)"
require_two_cpus hitrate_load
require_commands redis-server redis-cli memcached
require_ports_free 2 "$base_port" "$mc_port"

init_logdir
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then build_release "damselfly and hitrate_load" damselfly hitrate_load; fi
[[ -x "$loader" ]] || die_usage "$loader not built"

hot_keys=$((keys / 100))
# workload_args <workload>: hitrate_load's arguments for it, scan keys aside.
workload_args() {
  local common="--keys=$keys --warmup=$warmup --requests=$requests --value_size=$value_size --seed=$seed"
  case "$1" in
    zipf99) echo "$common --workload=zipf --zipf=0.99 --hot_keys=$hot_keys" ;;
    zipf80) echo "$common --workload=zipf --zipf=0.8 --hot_keys=$hot_keys" ;;
    shift) echo "$common --workload=shift --hot_keys=$((shift_every / 8)) --shift_every=$shift_every --hot_fraction=0.9" ;;
    scan) echo "$common --workload=scan --zipf=0.99 --hot_keys=$hot_keys --after_scan=$after_scan --window=$window" ;;
    *) die_usage "unknown workload '$1'" ;;
  esac
}

# mc_stats <port>: memcached's "stats" as "name value" lines.
mc_stats() {
  exec 3<>"/dev/tcp/127.0.0.1/$1"
  printf 'stats\r\n' >&3
  local line
  while IFS= read -r -t 5 line <&3; do
    line="${line%$'\r'}"
    [[ "$line" == END ]] && break
    echo "${line#STAT }"
  done
  exec 3>&-
}

# damselfly_knows <flag>: true if the damselfly binary has the flag.
# (--helpfull exits 1, so its output is taken whole rather than piped under pipefail.)
damselfly_knows() {
  local help
  help="$("$damselfly" --helpfull 2>&1 || true)"
  [[ "$help" == *"-$1 "* ]]
}

# run_one <workload> <server> <limit bytes> <scan keys>: starts the server, replays the
# workload, appends "<workload> <server> key=value..." to results, stops the server.
run_one() {
  local workload=$1 server=$2 limit=$3 scan_keys=$4 log="$logdir/$1.${2//:/_}"
  local kind=${server%%:*} policy=${server#*:} port=$base_port protocol=resp cmd
  case "$kind" in
    redis)
      cmd="redis-server --port $base_port --bind 127.0.0.1 --save '' --appendonly no --dir $logdir --maxmemory $limit --maxmemory-policy $policy"
      ;;
    memcached)
      cmd="memcached -p $mc_port -U 0 -l 127.0.0.1 -t 1 -c 1024 -m $((limit >> 20))"
      if ((EUID == 0)); then cmd+=" -u root"; fi
      port=$mc_port
      protocol=memcache
      ;;
    damselfly | damselfly-mc)
      [[ -x "$damselfly" ]] || { echo "$workload $server skipped=no_binary" >>"$logdir/results"; return; }
      cmd="$damselfly --port=$base_port --bind=127.0.0.1 --proactor_threads=$damselfly_threads --maxmemory=$limit --dbfilename= $damselfly_flags"
      if [[ "$policy" == cache ]]; then
        if ! damselfly_knows cache_mode; then
          echo "$workload $server skipped=no_cache_mode_flag" >>"$logdir/results"
          return
        fi
        cmd+=" --cache_mode=true"
      fi
      if [[ "$kind" == damselfly-mc ]]; then
        cmd+=" --memcached_port=$mc_port"
        port=$mc_port
        protocol=memcache
      fi
      ;;
    *) die_usage "unknown server '$server'" ;;
  esac
  local pinned=0
  [[ "$pin" == 1 && ! ("$kind" == damselfly* && "$damselfly_threads" -gt 1) ]] && pinned=1
  start_listening "$cmd" "$log.server" "$port" "$pinned" "$server"
  if [[ "$kind" == damselfly* && "$policy" != cache ]]; then
    if [[ "$(redis-cli -p "$base_port" config set maxmemory-policy "$policy" 2>&1)" != OK ]]; then
      echo "$workload $server skipped=policy_unknown" >>"$logdir/results"
      stop_server "$server" "$log.server" 50
      return
    fi
  fi
  local args
  args="$(workload_args "$workload") --scan_keys=$scan_keys --protocol=$protocol --port=$port --conns=$conns --pipeline=$pipeline"
  echo "  $workload on $server (limit $((limit >> 20)) MiB)" >&2
  $load_prefix "$loader" $args >"$log.out" 2>"$log.err" &
  load_pid=$!
  if ! wait "$load_pid"; then
    keep_logs=1
    cat "$log.err" >&2
    show_server_log "$log.server"
    echo "$bench_name: failed: $load_prefix $loader $args" >&2
    exit 1
  fi
  load_pid=""
  local held used rss
  rss=$(($(awk '/^VmRSS:/ { print $2 }' "/proc/$server_pid/status") * 1024))
  if [[ "$protocol" == memcache && "$kind" == memcached ]]; then
    mc_stats "$mc_port" >"$log.stats"
    held=$(awk '$1 == "curr_items" { print $2 }' "$log.stats")
    used=$(awk '$1 == "bytes" { print $2 }' "$log.stats")
  else
    held=$(redis-cli -p "$base_port" dbsize)
    used=$(redis-cli -p "$base_port" info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }')
  fi
  stop_server "$server" "$log.server" 100
  {
    printf '%s %s limit=%s held=%s used=%s rss=%s ' "$workload" "$server" "$limit" "$held" "$used" "$rss"
    awk '$1 == "measured" { printf "hit_ratio=%s ", substr($4, 11) }
         $1 == "phase=after_scan" { printf "after_scan=%s ", substr($4, 11) }
         $1 == "recovery" { for (i = 2; i <= NF; i++) printf "%s ", $i }
         $1 == "run" { for (i = 2; i <= NF; i++) if ($i !~ /^first_set_error/) printf "%s ", $i }' "$log.out"
    echo
  } >>"$logdir/results"
}

echo "cache-bench: $(machine_desc); damselfly $(built_commit); load: $(uptime | sed 's/.*load/load/')" >&2
for workload in $workloads; do
  distinct=$("$loader" --distinct $(workload_args "$workload") --scan_keys=1 | sed 's/distinct_keys=//')
  limit_mib=$(awk -v d="$distinct" -v v="$value_size" -v f="$fit" \
    'BEGIN { m = int(d * (v + 64) * f / 1048576 + 0.5); print m < 4 ? 4 : m }')
  limit=$((limit_mib << 20))
  scan_keys=$((2 * limit / value_size))
  echo "$workload distinct=$distinct limit_mib=$limit_mib scan_keys=$scan_keys" >>"$logdir/distinct"
  for server in $servers; do run_one "$workload" "$server" "$limit" "$scan_keys"; done
done

# get <line> <key>: the value of key=value in a results line ("-" if absent).
field() { tr ' ' '\n' <<<"$1" | awk -F= -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "-" }'; }

echo
echo "Hit ratio (measured requests; scan: before and after the scan together). $(machine_desc)."
echo "KEYS=$keys WARMUP=$warmup REQUESTS=$requests VALUE_SIZE=$value_size FIT=$fit SEED=$seed"
echo
header="| server |"
rule="|---|"
for w in $workloads; do
  header+=" $w |"
  rule+="---:|"
done
if [[ " $workloads " == *" scan "* ]]; then
  header+=" scan: hot set before / first window after | scan: back within 0.01 after |"
  rule+="---:|---:|"
fi
echo "$header"
echo "$rule"
for server in $servers; do
  row="| $server |"
  for w in $workloads; do
    line=$(grep "^$w $server " "$logdir/results" || true)
    if [[ "$line" == *skipped=* ]]; then row+=" skipped ($(field "$line" skipped)) |"; continue; fi
    row+=" $(field "$line" hit_ratio)"
    [[ "$(field "$line" set_errors)" != 0 ]] && row+=" ($(field "$line" set_errors) SET errors)"
    row+=" |"
  done
  if [[ " $workloads " == *" scan "* ]]; then
    line=$(grep "^scan $server " "$logdir/results" || true)
    if [[ "$line" == *skipped=* || -z "$line" ]]; then
      row+=" - | - |"
    else
      row+=" $(field "$line" baseline_hot_hit_ratio) / $(field "$line" first_window_hot_hit_ratio) |"
      rec=$(field "$line" recovery_requests)
      [[ "$rec" != never ]] && rec+=" requests ($(field "$line" hot_set_passes) hot-set sizes, $(field "$line" scan_lengths) scans)"
      row+=" $rec |"
    fi
  fi
  echo "$row"
done

echo
echo "Per run: memory limit, keys held at the end (share of the workload's distinct keys), used memory (redis/damselfly used_memory, memcached stats bytes), RSS, requests/s."
echo
echo "| workload | server | limit MiB | distinct keys | held | held / distinct | used MiB | RSS MiB | requests/s |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
while read -r w server rest; do
  [[ "$rest" == *skipped=* ]] && continue
  line="$w $server $rest"
  distinct=$(awk -v w="$w" '$1 == w { sub("distinct=", "", $2); print $2 }' "$logdir/distinct")
  awk -v w="$w" -v s="$server" -v d="$distinct" -v l="$(field "$line" limit)" -v h="$(field "$line" held)" \
    -v u="$(field "$line" used)" -v r="$(field "$line" rss)" -v q="$(field "$line" requests_per_sec)" \
    'BEGIN { printf "| %s | %s | %d | %d | %d | %.1f%% | %.0f | %.0f | %d |\n", w, s, l / 1048576, d, h, 100 * h / d, u / 1048576, r / 1048576, q }'
done <"$logdir/results"
echo
echo "load at the end: $(uptime | sed 's/.*load/load/')"
