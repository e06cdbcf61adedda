#!/usr/bin/env bash
# Memory benchmark: damselfly against redis-server, side by side in one run. For each case
# (a: DEBUG POPULATE 5000000 key 1024; b: DEBUG POPULATE 10000000 key 16) each server is
# started in turn (the starting server alternates per case; only one server runs at a time),
# pinned to CPU 0 on one thread, and filled in STEPS steps with DEBUG POPULATE at growing
# counts (count*k/STEPS for k = 1..STEPS; DEBUG POPULATE keeps the keys that exist, so each
# step adds the next slice of keys), sent by redis-cli pinned to CPU 1. Before the fill and
# after every step it records the server's resident set size (VmRSS in /proc/PID/status),
# INFO memory's used_memory and DBSIZE, which must equal the count of the step. Prints, per
# case, a markdown table of RSS and used_memory per key and the ratio damselfly /
# redis-server, and the RSS curve of the fill, with any step that grew RSS by more than
# twice the mean step flagged as a jump; docs/benchmarks.md records the results.
#
# Usage: tools/memory-bench.sh
# Environment (defaults in brackets):
#   CASES [a b]             which cases to run
#   SCALE [1]               multiplies both cases' key counts (e.g. 0.01 for a quick check)
#   COUNT_A [5000000], SIZE_A [1024], TARGET_A [0.68]   case a: keys, value bytes, target
#   COUNT_B [10000000], SIZE_B [16], TARGET_B [0.37]    case b: keys, value bytes, target
#   COUNT_SHAPES [1000000], SIZE_SHAPES [1024]  the value-shape cases json, text and binary
#                           (not in the default CASES): instead of DEBUG POPULATE's
#                           zero-padded values, each step sends `SET key:N value` with
#                           values from tools/value-gen.py (JSON records, random printable
#                           ASCII, random bytes) through redis-cli --pipe; no target
#                           (targets: at most this ratio of damselfly's RSS per key to
#                           redis-server's)
#   STEPS [10]              fill steps per server and case (the points of the RSS curve)
#   BASE_PORT [6620]        damselfly listens on BASE_PORT, redis-server on BASE_PORT + 1
#   REDIS_SERVER [redis-server], REDIS_CLI [redis-cli]
#   DAMSELFLY_FLAGS []      extra flags for damselfly, e.g. --compress_values=false
#   SKIP_BUILD              1: use the existing build-opt/damselfly
#   DRY_RUN                 1: run a second redis-server in damselfly's place (to check the
#                           script itself; the ratios should come out near 1.00)
#   QUIET_MAX [10]          "other CPU" percentage above which the CPUs count as busy
#   QUIET_BUDGET [60]       seconds, in total, to spend waiting for quiet CPUs before fills
#   STEP_TIMEOUT [600]      seconds one DEBUG POPULATE step may take before it counts as a hang
#   TIME_LIMIT [3600]       seconds; the whole run (build included) stops with an error
#                           rather than run past this
#
# Memory does not depend on CPU noise the way throughput does, but the fill times that the
# tables also show do, so every fill is preceded by a wait for quiet CPUs and its "other
# CPU %" (busy time of CPUs 0-1 that belongs to neither the server nor redis-cli) is shown.
# Before a server is started the script checks that MemAvailable covers a rough estimate of
# what the case needs, so that a mistyped count does not push the machine into the OOM
# killer.
#
# Stops at the first failure (a server that does not start, dies, answers DEBUG POPULATE
# with anything but OK, does not answer within STEP_TIMEOUT, or holds a DBSIZE other than the
# count), prints the commands that reproduce it and exits non-zero; the logs are kept.
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"

cases="${CASES:-a b}"
scale="${SCALE:-1}"
count_a="${COUNT_A:-5000000}"
size_a="${SIZE_A:-1024}"
target_a="${TARGET_A:-0.68}"
count_b="${COUNT_B:-10000000}"
size_b="${SIZE_B:-16}"
target_b="${TARGET_B:-0.37}"
count_shapes="${COUNT_SHAPES:-1000000}"
size_shapes="${SIZE_SHAPES:-1024}"
shape_cases="json text binary"
steps="${STEPS:-10}"
base_port="${BASE_PORT:-6620}"
quiet_max="${QUIET_MAX:-10}"
quiet_budget="${QUIET_BUDGET:-60}"
step_timeout="${STEP_TIMEOUT:-600}"
time_limit="${TIME_LIMIT:-3600}"
dry_run="${DRY_RUN:-0}"
redis_server="${REDIS_SERVER:-redis-server}"
redis_cli="${REDIS_CLI:-redis-cli}"
damselfly_flags="${DAMSELFLY_FLAGS:-}"

require_counts "$count_a" "$size_a" "$count_b" "$size_b" "$count_shapes" "$size_shapes" "$steps" "$base_port" "$quiet_max" \
  "$step_timeout" "$time_limit"
require_quiet_budget
for v in "$scale" "$target_a" "$target_b"; do
  [[ "$v" =~ ^[0-9]*\.?[0-9]+$ ]] || die_usage "bad number '$v'"
done
for c in $cases; do
  [[ " a b $shape_cases " == *" $c "* ]] || die_usage "unknown case '$c' (a, b, $shape_cases)"
done
[[ -n "${cases// /}" ]] || die_usage "CASES is empty"
require_two_cpus redis-cli
require_commands "$redis_server" "$redis_cli"

cd "$(dirname "$0")/.."
bin="$PWD/build-opt"
SECONDS=0  # bash's elapsed-time counter, for TIME_LIMIT

# The servers, in table order; the second one is the baseline.
names=("damselfly" "redis-server")
ports=("$base_port" "$((base_port + 1))")
cmds=(
  "$bin/damselfly --proactor_threads=1 --port=${ports[0]} --bind=127.0.0.1 --logtostderr $damselfly_flags"
  "$redis_server --port ${ports[1]} --bind 127.0.0.1 --save '' --appendonly no --enable-debug-command yes"
)
if [[ "$dry_run" == 1 ]]; then
  names[0]="redis-server (dry run, in damselfly's place)"
  cmds[0]="$redis_server --port ${ports[0]} --bind 127.0.0.1 --save '' --appendonly no --enable-debug-command yes"
fi

# The cases: key count (scaled), value size, target ratio.
declare -A case_count=() case_size=() case_target=()
case_count[a]="$(awk -v c="$count_a" -v s="$scale" 'BEGIN { printf "%d", c * s + 0.5 }')"
case_count[b]="$(awk -v c="$count_b" -v s="$scale" 'BEGIN { printf "%d", c * s + 0.5 }')"
case_size[a]="$size_a"
case_size[b]="$size_b"
case_target[a]="$target_a"
case_target[b]="$target_b"
for c in $shape_cases; do
  case_count[$c]="$(awk -v c="$count_shapes" -v s="$scale" 'BEGIN { printf "%d", c * s + 0.5 }')"
  case_size[$c]="$size_shapes"
  case_target[$c]="-"
done
for c in $cases; do
  ((case_count[$c] >= steps)) || die_usage "case $c: ${case_count[$c]} keys is fewer than STEPS"
done

# logdir, keep_logs (set when something failed), server_pid, load_pid (the redis-cli run)
init_logdir
require_ports_free 2 "${ports[@]}"

if [[ "${SKIP_BUILD:-0}" != 1 && "$dry_run" != 1 ]]; then
  build_release damselfly damselfly
fi
if [[ "$dry_run" != 1 ]]; then
  [[ -x "$bin/damselfly" ]] || die_usage "$bin/damselfly is missing (build it, or unset SKIP_BUILD)"
fi
commit="$(built_commit)"

# A field of /proc/PID/status, in kB (VmRSS, VmHWM).
proc_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# cli <port> <seconds> <args...>: one redis-cli command pinned to CPU 1, in the background
# so that a signal to this script is acted on at once; prints the reply (CRs removed).
cli() {
  local port=$1 secs=$2 rc=0
  shift 2
  timeout "$secs" taskset -c 1 "$redis_cli" -p "$port" "$@" >"$logdir/cli.out" 2>&1 &
  load_pid=$!
  wait "$load_pid" || rc=$?
  load_pid=""
  tr -d '\r' <"$logdir/cli.out"
  return "$rc"
}

# fill <port> <seconds> <case> <keys before> <keys after>: adds keys up to <keys after>, by
# DEBUG POPULATE (cases a, b) or by SET through redis-cli --pipe (value-shape cases, the
# generator on CPU 1 as well); prints OK, or what went wrong.
fill() {
  local port=$1 secs=$2 c=$3 from=$4 to=$5 rc=0
  if [[ "$c" == a || "$c" == b ]]; then
    cli "$port" "$secs" debug populate "$to" key "${case_size[$c]}"
    return
  fi
  timeout "$secs" taskset -c 1 bash -c "python3 tools/value-gen.py $c ${case_size[$c]} $from $to |
    $redis_cli -p $port --pipe" >"$logdir/cli.out" 2>&1 &
  load_pid=$!
  wait "$load_pid" || rc=$?
  load_pid=""
  if grep -q "errors: 0, replies: $((to - from))\$" "$logdir/cli.out"; then
    echo OK
  else
    tail -n 3 "$logdir/cli.out" | tr -d '\r'
  fi
  return "$rc"
}

# What fill does for <case> <keys after>, for messages.
fill_desc() {
  if [[ "$1" == a || "$1" == b ]]; then echo "DEBUG POPULATE $2 key ${case_size[$1]}"
  else echo "SET key:N (tools/value-gen.py $1 ${case_size[$1]}) up to $2 keys"; fi
}

used_memory() {
  cli "$1" 30 info memory | awk -F: '$1 == "used_memory" { v = $2 } END { print v == "" ? "-" : v }'
}

# fail <server index> <case> <message> <log> [<count>]: reports a failure and stops the
# script, with the commands that reproduce it.
fail() {
  keep_logs=1
  echo "memory-bench: ${names[$1]}, case $2: $3" >&2
  show_server_log "$4"
  echo "  reproduce with:" >&2
  echo "    taskset -c 0 ${cmds[$1]} &" >&2
  local k n
  for ((k = 1; k <= ${5:-0}; k++)); do
    n=$((case_count[$2] * k / steps))
    echo "    $(fill_desc "$2" "$n"); $redis_cli -p ${ports[$1]} DBSIZE" >&2
  done
  echo "memory-bench: stopped; logs are in $logdir" >&2
  exit 1
}

# Results, per server index and case: r_base_rss / r_rss / r_hwm (kB), r_base_used / r_used
# (bytes), r_keys (final DBSIZE), r_secs (fill seconds), r_noise (other CPU % during the fill),
# r_curve (RSS in kB before the fill and after each step, space-separated).
declare -A r_base_rss=() r_rss=() r_hwm=() r_base_used=() r_used=() r_keys=() r_secs=() \
  r_noise=() r_curve=() r_used_curve=()

# run_server <server index> <case>: starts the server, fills it step by step, records the
# results, stops it.
run_server() {
  local i=$1 c=$2 port=${ports[$1]} count=${case_count[$2]} size=${case_size[$2]}
  local log="$logdir/case$c.$i.server.log"
  require_ports_free 1 "$port"
  # Rough upper estimate of what one server needs for the case: 2x (value + 100 bytes) per
  # key, plus 1 GiB.
  local need_kb avail_kb
  need_kb=$(awk -v n="$count" -v s="$size" 'BEGIN { printf "%d", (2 * n * (s + 100)) / 1024 + 1048576 }')
  avail_kb=$(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)
  if ((avail_kb < need_kb)); then
    echo "memory-bench: case $c needs up to $((need_kb / 1024)) MiB; only $((avail_kb / 1024)) MiB available" >&2
    keep_logs=1
    exit 1
  fi
  echo "  case $c: ${names[$i]}: $count keys x $size bytes in $steps steps" >&2
  start_server "${cmds[$i]}" "$log"
  wait_listening "$port" 100 || fail "$i" "$c" "did not start listening on port $port" "$log"
  sleep 1  # let start-up allocations settle

  r_base_rss[$i,$c]=$(proc_kb "$server_pid" VmRSS)
  r_base_used[$i,$c]=$(used_memory "$port") ||
    fail "$i" "$c" "INFO memory failed: ${r_base_used[$i,$c]}" "$log"
  r_curve[$i,$c]="${r_base_rss[$i,$c]}"
  r_used_curve[$i,$c]="${r_base_used[$i,$c]}"

  wait_quiet filling
  local k n reply rc keys rss t0 p0 c0 b0 fill_ns=0 busy=0 server_ticks=0 client_ticks=0 budget
  for ((k = 1; k <= steps; k++)); do
    n=$((count * k / steps))
    budget=$((time_limit - SECONDS))
    if ((budget <= 0)); then
      fail "$i" "$c" "TIME_LIMIT=${time_limit}s reached before step $k" "$log" "$k"
    fi
    if ((budget > step_timeout)); then budget=$step_timeout; fi
    p0=$(proc_ticks "$server_pid")
    c0=$(child_ticks)
    b0=$(cpu01_busy)
    t0=$(now_ns)
    rc=0
    reply="$(fill "$port" "$budget" "$c" "$((count * (k - 1) / steps))" "$n")" || rc=$?
    fill_ns=$((fill_ns + $(now_ns) - t0))
    if ! kill -0 "$server_pid" 2>/dev/null; then
      wait "$server_pid" 2>/dev/null || rc=$?
      server_pid=""
      fail "$i" "$c" "the server died during $(fill_desc "$c" "$n") (exit status $rc)" \
        "$log" "$k"
    fi
    server_ticks=$((server_ticks + $(proc_ticks "$server_pid") - p0))
    client_ticks=$((client_ticks + $(child_ticks) - c0))
    busy=$((busy + $(cpu01_busy) - b0))
    if ((rc == 124)); then
      fail "$i" "$c" "$(fill_desc "$c" "$n") did not answer within ${budget}s (hang?)" \
        "$log" "$k"
    fi
    if ((rc != 0)) || [[ "$reply" != OK ]]; then
      fail "$i" "$c" "$(fill_desc "$c" "$n"): exit status $rc, reply '$reply'" \
        "$log" "$k"
    fi
    keys="$(cli "$port" 30 dbsize)" || fail "$i" "$c" "DBSIZE failed: $keys" "$log" "$k"
    if [[ "$keys" != "$n" ]]; then
      fail "$i" "$c" "DBSIZE is '$keys' after $(fill_desc "$c" "$n"); expected $n" \
        "$log" "$k"
    fi
    rss=$(proc_kb "$server_pid" VmRSS)
    r_curve[$i,$c]+=" $rss"
    r_used_curve[$i,$c]+=" $(used_memory "$port")"
    echo "    step $k: $n keys, RSS $(mib "$rss") MiB" >&2
  done
  r_keys[$i,$c]=$keys
  r_secs[$i,$c]=$(awk -v ns="$fill_ns" 'BEGIN { printf "%.1f", ns / 1e9 }')
  r_noise[$i,$c]=$(pct $((busy - server_ticks - client_ticks)) "$fill_ns" 2)

  sleep 1  # the final numbers, after a moment's rest (e.g. incremental rehashing, purging)
  r_rss[$i,$c]=$(proc_kb "$server_pid" VmRSS)
  r_hwm[$i,$c]=$(proc_kb "$server_pid" VmHWM)
  r_used[$i,$c]=$(used_memory "$port") || fail "$i" "$c" "INFO memory failed" "$log"

  # A clean exit on SIGTERM is checked too; freeing gigabytes can take a few seconds.
  stop_server "${names[$i]}" "$log" 300
}

unclean=0
echo "memory-bench: cases '$cases', SCALE=$scale, $steps steps per fill" >&2
ci=0
for c in $cases; do
  for ((s = 0; s < ${#names[@]}; s++)); do
    run_server $(((ci + s) % ${#names[@]})) "$c"
  done
  ci=$((ci + 1))
done

# per_key <final> <base> <keys> <unit bytes>: (final - base) * unit / keys, in bytes.
per_key() {
  awk -v f="$1" -v b="$2" -v n="$3" -v u="$4" 'BEGIN {
    if (f !~ /^[0-9]+$/ || b !~ /^[0-9]+$/) print "-"; else printf "%.1f", (f - b) * u / n }'
}
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b == 0) print "-"; else printf "%.2f", a / b }'
}
as_mib() { if [[ "$1" =~ ^[0-9]+$ ]]; then mib "$1"; else echo "-"; fi; }
bytes_mib() {
  if [[ "$1" =~ ^[0-9]+$ ]]; then awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'
  else echo "-"; fi
}

scaled=""
if [[ "$scale" != 1 ]]; then scaled=" (SCALE=$scale: the targets are stated for the full counts)"; fi
echo
echo "Filled in $steps steps (cases a, b: DEBUG POPULATE; others: SET from tools/value-gen.py)," \
  "one thread each on CPU 0; $(machine_desc)," \
  "commit $commit"
echo
echo "| case | server | keys (DBSIZE) | RSS before, MiB | RSS after, MiB | peak RSS, MiB" \
  "| used_memory before, MiB | used_memory after, MiB | RSS bytes/key | used_memory bytes/key" \
  "| RSS/key ratio (damselfly / redis) | target | fill s | other CPU % |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"
declare -A rss_per_key=()
for c in $cases; do
  for ((i = 0; i < ${#names[@]}; i++)); do
    rss_per_key[$i,$c]=$(per_key "${r_rss[$i,$c]}" "${r_base_rss[$i,$c]}" "${case_count[$c]}" 1024)
  done
  rt="$(ratio "${rss_per_key[0,$c]}" "${rss_per_key[1,$c]}")"
  met="$(awk -v r="$rt" -v t="${case_target[$c]}" 'BEGIN {
    if (r !~ /^[0-9.]+$/) print "-"; else if (r <= t) print "met"; else print "missed" }')"
  for ((i = 0; i < ${#names[@]}; i++)); do
    if ((i == 0)); then
      rcol="**$rt**"
      tcol="<= ${case_target[$c]}: $met$scaled"
      [[ "${case_target[$c]}" == - ]] && tcol="-"
    else
      rcol="1.00 (baseline)"
      tcol=""
    fi
    echo "| $c: ${case_count[$c]} x ${case_size[$c]} B | ${names[$i]} | ${r_keys[$i,$c]}" \
      "| $(as_mib "${r_base_rss[$i,$c]}") | $(as_mib "${r_rss[$i,$c]}") | $(as_mib "${r_hwm[$i,$c]}")" \
      "| $(bytes_mib "${r_base_used[$i,$c]}") | $(bytes_mib "${r_used[$i,$c]}")" \
      "| ${rss_per_key[$i,$c]}" \
      "| $(per_key "${r_used[$i,$c]}" "${r_base_used[$i,$c]}" "${case_count[$c]}" 1)" \
      "| $rcol | $tcol | ${r_secs[$i,$c]} | ${r_noise[$i,$c]} |"
  done
done

# The RSS curves: per step, the RSS, the increment over the previous point, that increment
# relative to the mean increment of the fill ((final - before) / steps: what every step
# would add if RSS grew in proportion to the keys), and used_memory. A step that adds more
# than twice the mean is a jump (e.g. a table doubling), not proportional growth.
jumps=0
for c in $cases; do
  echo
  echo "RSS while filling, case $c (${case_count[$c]} x ${case_size[$c]} B; step k fills keys" \
    "up to ${case_count[$c]}*k/$steps; \"x mean\" is the step's RSS increment over the mean" \
    "increment of the fill; **JUMP** marks more than 2x):"
  echo
  hdr="| step | keys"
  sep="|---:|---:"
  for ((i = 0; i < ${#names[@]}; i++)); do
    hdr+=" | ${names[$i]} RSS, MiB | +MiB | x mean | used_memory, MiB"
    sep+="|---:|---:|---:|---:"
  done
  echo "$hdr |"
  echo "$sep|"
  declare -A curve=() ucurve=() inc=() mean=()
  for ((i = 0; i < ${#names[@]}; i++)); do
    read -ra pts <<<"${r_curve[$i,$c]}"
    read -ra upts <<<"${r_used_curve[$i,$c]}"
    for ((k = 0; k <= steps; k++)); do
      curve[$i,$k]=${pts[k]}
      ucurve[$i,$k]=${upts[k]}
    done
    for ((k = 1; k <= steps; k++)); do inc[$i,$k]=$((pts[k] - pts[k - 1])); done
    mean[$i]=$(awk -v a="${pts[0]}" -v b="${pts[steps]}" -v n="$steps" 'BEGIN { print (b - a) / n }')
  done
  row="| 0 | 0"
  for ((i = 0; i < ${#names[@]}; i++)); do
    row+=" | $(mib "${curve[$i,0]}") | | | $(bytes_mib "${ucurve[$i,0]}")"
  done
  echo "$row |"
  for ((k = 1; k <= steps; k++)); do
    row="| $k | $((case_count[$c] * k / steps))"
    for ((i = 0; i < ${#names[@]}; i++)); do
      x=$(awk -v d="${inc[$i,$k]}" -v m="${mean[$i]}" 'BEGIN { printf "%.2f", (m > 0 ? d / m : 0) }')
      if awk -v d="${inc[$i,$k]}" -v m="${mean[$i]}" 'BEGIN { exit !(m > 0 && d > 2 * m) }'; then
        x="**$x JUMP**"
        jumps=$((jumps + 1))
        echo "memory-bench: case $c, ${names[$i]}: RSS jumped at step $k" \
          "(+$(mib "${inc[$i,$k]}") MiB, mean step +$(mib "${mean[$i]}") MiB)" >&2
      fi
      row+=" | $(mib "${curve[$i,$k]}") | $(mib "${inc[$i,$k]}") | $x | $(bytes_mib "${ucurve[$i,$k]}")"
    done
    echo "$row |"
  done
  unset curve ucurve inc mean
done

if [[ "$unclean" == 1 ]]; then
  echo "memory-bench: there were problems (see above); logs are in $logdir" >&2
  exit 1
fi
echo "memory-bench: done in ${SECONDS}s; $jumps jump(s) in the RSS curves" >&2
