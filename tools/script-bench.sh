#!/usr/bin/env bash
# Lua scripts: damselfly against redis-server, side by side in one run, with redis-benchmark
# sending EVALSHA. Only one server runs at a time, each started fresh per round, the
# starting server alternating per round. Servers:
#   damselfly    --proactor_threads=1 pinned to CPU 0, redis-benchmark pinned to CPU 1
#   redis        redis-server pinned to CPU 0, redis-benchmark pinned to CPU 1
#   damselfly2   --proactor_threads=2 on CPUs 0-1, redis-benchmark --threads 2 on CPUs 0-1
#                too: whether scripts on different keys run in parallel (its ratio to the
#                one-thread damselfly), on this 2-CPU machine where the server and the load
#                then share both CPUs
# Tests, against each server (CLIENTS connections, PIPELINE commands in flight each):
#   evalsha3     EVALSHA of a script making 3 calls on its one key (INCR, GET, EXPIRE), keys
#                drawn from KEYSPACE keys
#   bullmq       a BullMQ-like queue in two phases: JOBS EVALSHAs of an "add" script (INCR the
#                id counter, HSET the job hash, LPUSH its id on the wait list), then JOBS of a
#                "process" script (RPOPLPUSH wait -> active, HSET the result into the job
#                hash, LREM it from active, ZADD it to completed). As in BullMQ, the job
#                hash's key is built inside the script from a prefix in ARGV: a key the
#                script does not declare. Reported: add/s, process/s, and jobs/s (added and
#                processed: 1 / (1 / add + 1 / process)); afterwards ZCARD completed must be
#                JOBS and the wait and active lists empty
#   bullmqtag    the same with a hash-tag prefix (bull:{bench}:wait ...), as BullMQ users on
#                Redis Cluster name their queues: every key of the queue, the job hashes
#                included, lives on one shard, and damselfly runs the scripts there
# Per run: the server's CPU (% of one CPU, and microseconds per EVALSHA), redis-benchmark's
# CPU (% of one CPU: near 100 means the load, not the server, set the pace) and the "other
# CPU %" of redis-bench.sh (busy time on CPUs 0-1 that is neither the server's nor the
# load's). Prints markdown tables: the median over the rounds, every round's value (the
# spread), the ratio to redis-server's median and, for damselfly2, to the one-thread
# damselfly's. A server that refuses SCRIPT LOAD (as damselfly did before scripting) is
# reported as n/a with its error, not as a failure; a server that dies, hangs or loses jobs
# is reported and the script exits 1.
#
# Usage: tools/script-bench.sh
# Environment (defaults in brackets):
#   SERVERS [damselfly redis damselfly2]  which servers, in table order
#   TESTS [evalsha3 bullmq bullmqtag]
#   ROUNDS [3]
#   REQUESTS [1000000]  EVALSHAs per evalsha3 run
#   JOBS [300000]       jobs per bullmq run (as many adds, then as many process calls)
#   CLIENTS [50]        redis-benchmark connections (-c)
#   PIPELINE [16]       commands in flight per connection (-P)
#   KEYSPACE [100000]   evalsha3's key space (-r)
#   SIZE [128]          bytes of a job's data
#   BASE_PORT [6760]    damselfly, redis-server and damselfly2 listen on BASE_PORT + 0, 1, 2
#   REDIS_SERVER [redis-server], REDIS_BENCHMARK [redis-benchmark], REDIS_CLI [redis-cli]
#   DAMSELFLY_FLAGS []  extra flags for damselfly (both configurations)
#   DAMSELFLY_BIN [build-opt/damselfly]
#   DRY_RUN             1: redis-server in damselfly's places (checks the script; the ratios
#                       should come out near 1.00, damselfly2's with the load sharing CPUs)
#   SKIP_BUILD          1: use the existing build-opt/damselfly
#   QUIET_MAX [10], QUIET_BUDGET [60]  as in tools/redis-bench.sh
#   TIME_LIMIT [600]    seconds; no round starts that would likely end after it
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"

servers="${SERVERS:-damselfly redis damselfly2}"
tests="${TESTS:-evalsha3 bullmq bullmqtag}"
rounds="${ROUNDS:-3}"
requests="${REQUESTS:-1000000}"
jobs="${JOBS:-300000}"
clients="${CLIENTS:-50}"
pipeline="${PIPELINE:-16}"
keyspace="${KEYSPACE:-100000}"
size="${SIZE:-128}"
base_port="${BASE_PORT:-6760}"
quiet_max="${QUIET_MAX:-10}"
quiet_budget="${QUIET_BUDGET:-60}"
time_limit="${TIME_LIMIT:-600}"
dry_run="${DRY_RUN:-0}"
redis_server="${REDIS_SERVER:-redis-server}"
redis_benchmark="${REDIS_BENCHMARK:-redis-benchmark}"
redis_cli="${REDIS_CLI:-redis-cli}"
damselfly_flags="${DAMSELFLY_FLAGS:-}"
# Hard bound on one redis-benchmark invocation; a run that takes longer counts as a hang.
load_timeout="${LOAD_TIMEOUT:-120}"

require_counts "$rounds" "$requests" "$jobs" "$clients" "$pipeline" "$keyspace" "$size" \
  "$base_port" "$quiet_max" "$time_limit"
require_quiet_budget
for s in $servers; do
  [[ " damselfly redis damselfly2 " == *" $s "* ]] ||
    die_usage "unknown server '$s' (damselfly, redis, damselfly2)"
done
for t in $tests; do
  [[ " evalsha3 bullmq bullmqtag " == *" $t "* ]] ||
    die_usage "unknown test '$t' (evalsha3, bullmq, bullmqtag)"
done
[[ -n "${servers// /}" && -n "${tests// /}" ]] || die_usage "SERVERS and TESTS must not be empty"
require_two_cpus "the load"
require_commands "$redis_server" "$redis_benchmark" "$redis_cli"

cd "$(dirname "$0")/.."
damselfly_bin="${DAMSELFLY_BIN:-$PWD/build-opt/damselfly}"
SECONDS=0

# The scripts. KEYS and ARGV are documented per script; numbers come back as integers.
# KEYS[1] the counter. Returns its new value.
evalsha3_script="local v = redis.call('incr', KEYS[1])
redis.call('get', KEYS[1])
redis.call('expire', KEYS[1], 3600)
return v"
# KEYS[1] wait list, KEYS[2] id counter; ARGV[1] job key prefix, ARGV[2] job data.
add_script="local id = redis.call('incr', KEYS[2])
redis.call('hset', ARGV[1] .. id, 'name', 'bench', 'data', ARGV[2], 'attemptsMade', 0)
redis.call('lpush', KEYS[1], id)
return id"
# KEYS[1] wait list, KEYS[2] active list, KEYS[3] completed sorted set; ARGV[1] job key
# prefix, ARGV[2] the job's result. Returns the job id, or nil when the wait list is empty.
process_script="local id = redis.call('rpoplpush', KEYS[1], KEYS[2])
if not id then return nil end
redis.call('hset', ARGV[1] .. id, 'returnvalue', ARGV[2], 'finishedOn', id)
redis.call('lrem', KEYS[2], -1, id)
redis.call('zadd', KEYS[3], id, id)
return id"
payload="$(head -c "$size" /dev/zero | tr '\0' 'x')"

# Per server (in SERVERS order): name, port, command line, server CPUs, load CPUs, load
# threads.
names=() ports=() cmds=() server_cpus=() load_cpus=() load_threads=() kinds=()
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
      server_cpus+=("0,1") load_cpus+=("0,1") load_threads+=(2)
      ;;
  esac
  kinds+=("$s")
  ports+=("$p")
  if [[ "$dry_run" == 1 && "$s" != redis ]]; then
    names[-1]="redis-server in place of ${names[-1]} (dry run)"
    cmds[-1]="$(redis_cmd "$p")"
  fi
done
baseline=-1 single=-1  # indexes of redis-server and of the one-thread damselfly
for ((i = 0; i < ${#names[@]}; i++)); do
  [[ "${kinds[$i]}" == redis ]] && baseline=$i
  [[ "${kinds[$i]}" == damselfly ]] && single=$i
done

init_logdir
require_ports_free 1 "${ports[@]}"
needs_damselfly=0
[[ "$dry_run" != 1 && " $servers " == *" damselfly"* ]] && needs_damselfly=1
if ((needs_damselfly)); then
  if [[ "${SKIP_BUILD:-0}" != 1 && -z "${DAMSELFLY_BIN:-}" ]]; then
    build_release damselfly damselfly
  fi
  [[ -x "$damselfly_bin" ]] || die_usage "$damselfly_bin is missing (build it, or unset SKIP_BUILD)"
fi
commit="$(built_commit)"
unclean=0
declare -A notes=()
note() { notes["$1"]=1; }

cli() { timeout 10 "$redis_cli" -p "${ports[$1]}" "${@:2}" 2>&1 | tr -d '\r'; }

# bench <server index> <out> <err> <n> <command...>: one redis-benchmark run of the command,
# in the background so that a signal to this script is acted on at once. Returns its exit
# status (124 on timeout).
bench() {
  local i=$1 out=$2 err=$3 n=$4 rc=0 threads=()
  shift 4
  ((load_threads[i] > 1)) && threads=(--threads "${load_threads[$i]}")
  timeout "$load_timeout" taskset -c "${load_cpus[$i]}" "$redis_benchmark" -p "${ports[$i]}" \
    -c "$clients" -P "$pipeline" -n "$n" -r "$keyspace" "${threads[@]}" --csv "$@" \
    >"$out" 2>"$err" &
  load_pid=$!
  wait "$load_pid" || rc=$?
  load_pid=""
  return "$rc"
}

# rps_of <out>: the requests/s of redis-benchmark's CSV line (empty if none).
rps_of() { awk -F'"' 'NR > 1 && $4 ~ /^[0-9.]+$/ { printf "%.0f\n", $4 }' "$1" | tail -n 1; }

# Results: res[server,test,metric] is a space-separated list of the rounds' values.
declare -A res=()
metrics_of() {
  case "$1" in
    evalsha3) echo "rps cpu us_per_op ccpu noise" ;;
    bullmq*) echo "jobs_per_sec add_per_sec process_per_sec cpu us_per_op ccpu noise" ;;
  esac
}

# measure <server index> <test> <prefix> <server log>: one measurement. Returns 0 with m[]
# filled, 3 when the server refused SCRIPT LOAD (m_reason says why), 1 on a failure
# (reported).
measure() {
  local i=$1 t=$2 prefix=$3 p0 c0 b0 t0 dt rc=0 sticks cticks ops sha add_sha proc_sha
  local r q=bull:bench
  [[ "$t" == bullmqtag ]] && q="bull:{bench}"
  # Scripts are loaded (and the data set emptied) outside the measured time; flushed
  # first, because damselfly learns how a cached script uses keys (bullmq and bullmqtag
  # send the same scripts with other keys).
  r="$(cli "$i" flushall)"
  if [[ "$r" != OK ]]; then m_reason="FLUSHALL answered: $r"; return 1; fi
  cli "$i" script flush >/dev/null
  unset m
  declare -gA m=()
  case "$t" in
    evalsha3) sha="$(cli "$i" script load "$evalsha3_script")" ;;
    bullmq*)
      add_sha="$(cli "$i" script load "$add_script")"
      proc_sha="$(cli "$i" script load "$process_script")"
      # Either answer, checked below; the second is the one that failed if any did.
      sha="$add_sha"
      [[ "$sha" =~ ^[0-9a-f]{40}$ ]] && sha="$proc_sha"
      ;;
  esac
  if ! [[ "$sha" =~ ^[0-9a-f]{40}$ ]]; then
    m_reason="SCRIPT LOAD answered: $(head -n 1 <<<"$sha" | sed "s/, with args beginning with:.*//")"
    return 3
  fi
  p0=$(proc_ticks "$server_pid")
  c0=$(child_ticks)
  b0=$(cpu01_busy)
  t0=$(now_ns)
  case "$t" in
    evalsha3)
      bench "$i" "$prefix.out" "$prefix.err" "$requests" \
        evalsha "$sha" 1 "counter:__rand_int__" || rc=$?
      m[rps]=$(rps_of "$prefix.out")
      ops=$requests
      ;;
    bullmq*)
      bench "$i" "$prefix.add.out" "$prefix.add.err" "$jobs" evalsha "$add_sha" 2 \
        "$q:wait" "$q:id" "$q:job:" "$payload" || rc=$?
      if ((rc == 0)); then
        bench "$i" "$prefix.proc.out" "$prefix.proc.err" "$jobs" evalsha "$proc_sha" 3 \
          "$q:wait" "$q:active" "$q:completed" "$q:job:" "done" || rc=$?
      fi
      m[add_per_sec]=$(rps_of "$prefix.add.out")
      m[process_per_sec]=$(rps_of "$prefix.proc.out" 2>/dev/null || true)
      ops=$((2 * jobs))
      ;;
  esac
  dt=$(($(now_ns) - t0))
  if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    echo "$bench_name: ${names[$i]} died during $t" >&2
    show_server_log "$4"
    note "${names[$i]} died during $t (log $4)"
    return 1
  fi
  sticks=$(($(proc_ticks "$server_pid") - p0))
  cticks=$(($(child_ticks) - c0))
  # redis-benchmark reports error replies on stderr (sometimes without failing); it warns
  # when CONFIG GET is not supported.
  if ((rc != 0)) || cat "$prefix".*err 2>/dev/null | grep -qv '^WARNING: Could not fetch'; then
    m_reason="$(cat "$prefix".*err 2>/dev/null | grep -v '^WARNING: Could not fetch' |
      head -n 1)"
    ((rc == 124)) && m_reason="no result within ${load_timeout}s (hang?)"
    echo "$bench_name: ${names[$i]}: $t failed: ${m_reason:-exit status $rc}" >&2
    note "${names[$i]}: $t failed: ${m_reason:-exit status $rc} (logs $prefix.*)"
    return 1
  fi
  if [[ "$t" == bullmq* ]]; then
    local done_jobs left
    done_jobs="$(cli "$i" zcard "$q:completed")"
    left="$(cli "$i" eval "return redis.call('llen', KEYS[1]) + redis.call('llen', KEYS[2])" \
      2 "$q:wait" "$q:active")"
    if [[ "$done_jobs" != "$jobs" || "$left" != 0 ]]; then
      echo "$bench_name: ${names[$i]}: bullmq completed '$done_jobs' of $jobs jobs, '$left'" \
        "left in wait and active" >&2
      note "${names[$i]}: bullmq lost jobs (completed $done_jobs of $jobs)"
      return 1
    fi
    m[jobs_per_sec]=$(awk -v a="${m[add_per_sec]}" -v p="${m[process_per_sec]}" \
      'BEGIN { printf "%.0f", 1 / (1 / a + 1 / p) }')
  fi
  m[cpu]=$(pct "$sticks" "$dt" 1)
  m[ccpu]=$(pct "$cticks" "$dt" 1)
  # Server CPU time per EVALSHA, in microseconds.
  m[us_per_op]=$(awk -v t="$sticks" -v hz="$clk_tck" -v n="$ops" \
    'BEGIN { printf "%.2f", t / hz * 1e6 / n }')
  m[noise]=$(pct $(($(cpu01_busy) - b0 - sticks - cticks)) "$dt" 2)
  m_secs=$(((dt + 999999999) / 1000000000))
  local k line=""
  for k in $(metrics_of "$t"); do line+="$k=${m[$k]} "; done
  echo "    ${names[$i]} $t: $line" >&2
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
ratio_to() {  # ratio_to <server index> <baseline index> <test> <metric>
  if (($2 < 0 || $1 == $2)); then echo "-"; return; fi
  ratio "$(fmedian <<<"${res[$1,$3,$4]:-}")" "$(fmedian <<<"${res[$2,$3,$4]:-}")"
}

echo
echo "redis-benchmark -c $clients -P $pipeline: evalsha3 $requests EVALSHAs over $keyspace" \
  "keys, bullmq $jobs jobs of $size bytes; $done_rounds rounds; $(machine_desc)," \
  "commit $commit"
for t in $tests; do
  echo
  if [[ "$t" == evalsha3 ]]; then
    main=rps
    echo "EVALSHA of a script making 3 calls (INCR, GET, EXPIRE) on its one key:"
    echo
    echo "| server | EVALSHA/s median | per round | ratio to redis | ratio to 1 thread" \
      "| server CPU % | server us/EVALSHA | load CPU % | other CPU % |"
    echo "|---|---:|---|---:|---:|---|---:|---|---|"
  else
    main=jobs_per_sec
    if [[ "$t" == bullmq ]]; then
      echo "BullMQ-like queue: add then process (scripts with an undeclared job key):"
    else
      echo "The same, with a hash-tag prefix (bull:{bench}:...): the queue on one shard:"
    fi
    echo
    echo "| server | jobs/s median | per round | add/s median | process/s median" \
      "| ratio to redis | ratio to 1 thread | server CPU % | server us/EVALSHA | load CPU %" \
      "| other CPU % |"
    echo "|---|---:|---|---:|---:|---:|---:|---|---:|---|---|"
  fi
  for ((i = 0; i < ${#names[@]}; i++)); do
    vals="${res[$i,$t,$main]:-}"
    row="| ${names[$i]} | $(cell "$vals") | $(as_list "$vals")"
    if [[ "$t" == bullmq* ]]; then
      row+=" | $(cell "${res[$i,$t,add_per_sec]:-}") | $(cell "${res[$i,$t,process_per_sec]:-}")"
    fi
    one_thread="-"
    [[ "${kinds[$i]}" == damselfly2 ]] && one_thread="$(ratio_to "$i" "$single" "$t" "$main")"
    row+=" | $(ratio_to "$i" "$baseline" "$t" "$main") | $one_thread"
    row+=" | $(as_list "${res[$i,$t,cpu]:-}") | $(cell "${res[$i,$t,us_per_op]:-}")"
    row+=" | $(as_list "${res[$i,$t,ccpu]:-}") | $(as_list "${res[$i,$t,noise]:-}") |"
    echo "$row"
  done
done
echo
echo "Ratios are of the medians. damselfly 2 threads shares both CPUs with its load."
for n in "${!notes[@]}"; do echo "- $n"; done | sort

if [[ "$unclean" == 1 ]]; then
  echo "$bench_name: there were problems (see above); logs are in $logdir" >&2
  exit 1
fi
echo "$bench_name: done in ${SECONDS}s" >&2
