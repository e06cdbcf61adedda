#!/usr/bin/env bash
# Streams, HyperLogLog, bitmaps and geo (issue #20's benchmarks): damselfly against
# redis-server, side by side in one run, each server on one thread pinned to CPU 0, the load
# pinned to CPU 1, every server started fresh (for tput per round, both servers up and the
# one not measured idle; for mem one at a time). Built on
# tools/collections-bench.sh (same measurement, checks and tables; the memory part and the
# helpers both use are in tools/bench-lib.sh). Two parts:
#
# tput  Throughput per core, ROUNDS rounds, each command unpipelined and at -P 32, CLIENTS
#       connections, one load invocation per command and server: each test runs on one
#       server and right after on the other (which goes first alternates per test and per
#       round), so that the machine's drift over minutes does not enter the ratio. The load is LOADER: tools/resp_load (the default) or redis-benchmark.
#       redis-benchmark parses every reply in full, and at -P 32 its one core saturates
#       below either server (about 2.5M simple replies/s, 60k XREAD replies/s): its ratios
#       there are the load generator's. resp_load sends the same requests (redis-benchmark's
#       __rand_int__ and -r as --rand, -n as --requests) and only skims the replies. The
#       commands:
#         XADD        XADD bench:xadd * f1 v1 f2 v2 f3 v3 f4 v4 f5 v5
#         XREAD       XREAD COUNT 10 STREAMS bench:stream 0-0 (a prepared stream of MEMBERS
#                     entries of 5 fields: the first 10 entries each time)
#         XREADGROUP  XREADGROUP GROUP g alice COUNT 1 STREAMS bench:group > (a stream
#                     prepared with more entries than sent: each call delivers a new one)
#         XACK        XACK bench:acks g <rand>-0 -r MEMBERS (a stream of IDs 1-0 ..
#                     MEMBERS-0, all delivered to the group first: each call acknowledges a
#                     random pending ID, or finds it acknowledged)
#         PFADD       PFADD bench:pfadd element:<rand> -r MEMBERS
#         PFCOUNT     PFCOUNT bench:hll (a prepared HyperLogLog of MEMBERS elements)
#         SETBIT      SETBIT bench:setbit:<rand> 8191 1 -r MEMBERS (redis-benchmark's <rand>
#                     has leading zeros, which a bit offset may not have: the bitmaps are
#                     many, of 1 KiB, and each call sets or sets again their last bit;
#                     the check counts them: more than before, or all MEMBERS)
#         BITCOUNT    BITCOUNT bench:bits (a prepared bitmap of BITS bits)
#         GEOADD      GEOADD bench:geoadd 13.<rand> 52.<rand> element:<rand> -r MEMBERS
#         GEOSEARCH   GEOSEARCH bench:geo FROMLONLAT 13.4 52.5 BYRADIUS 10 km COUNT 10 ASC (a
#                     prepared geo set of MEMBERS points in a 1 x 1 degree box around it);
#                     N/4 requests
#       After each run a check with redis-cli confirms that the command did its work. Prints
#       a markdown table of the medians, the ratio damselfly / redis-server, and the server's
#       CPU time per request (ns/request: where to look for hot spots) per command and
#       pipeline depth; targets >= 1.0x unpipelined and >= 1.5x at -P 32.
# mem   Memory of streams: per dataset, each server in turn is started, filled by
#       tools/coll_load (XADD key * f1 v1 ... f5 v5, one pipelined connection), checked (DBSIZE
#       and XLEN of the first and last key), and measured: RSS delta and used_memory delta.
#       Datasets (keys x entries; SCALE multiplies the entries of stream1m, the keys of
#       stream1k):
#         stream1m  one stream of 1M entries
#         stream1k  1000 streams of 1000 entries
#         streamrand  one stream of 1M entries whose values are 8-32 random printable
#                   bytes (coll_load --style=random: a payload that does not compress)
#       Target: at most redis-server's (ratio <= 1.0).
#
# A command the server does not know (or any error reply) is reported as n/a with the
# server's error text, not as a failure. A server that dies or hangs is reported (and
# restarted for the rest); the script then exits non-zero at the end and keeps its logs.
#
# Usage: tools/types-bench.sh
# Environment (defaults in brackets):
#   PARTS [tput mem]    which parts to run, in this order
#   TESTS [XADD XREAD XREADGROUP XACK PFADD PFCOUNT SETBIT BITCOUNT GEOADD GEOSEARCH]
#   PIPELINES [1 32]    pipeline depths for tput
#   DATASETS [stream1m stream1k streamrand]
#   QUICK               1: a smoke test: SCALE=0.1 ROUNDS=1 N1=10000 N32=100000 unless set
#   ROUNDS [3]          tput rounds
#   N1 [100000]         requests per command unpipelined (-n; N1/4 for GEOSEARCH)
#   N32 [1000000]       requests per command at the deeper pipeline (likewise)
#   CLIENTS [50]        connections (redis-benchmark -c, resp_load --conns)
#   LOADER [resp_load]  resp_load or redis-benchmark
#   MEMBERS [10000]     member space for tput (-r) and size of the prepared keys
#   BITS [1000000]      the size of BITCOUNT's bitmap
#   SCALE [1]           multiplies the mem datasets (see above)
#   BASE_PORT [6740]    damselfly listens on BASE_PORT, redis-server on BASE_PORT + 1
#   REDIS_SERVER [redis-server], REDIS_BENCHMARK [redis-benchmark], REDIS_CLI [redis-cli]
#   DAMSELFLY_FLAGS []  extra flags for damselfly
#   DAMSELFLY_BIN [build-opt/damselfly]  the damselfly binary (SKIP_BUILD=1 is then implied
#                       for it)
#   DRY_RUN             1: a second redis-server in damselfly's place (checks the script;
#                       ratios should come out near 1.00)
#   SKIP_BUILD          1: use the existing build-opt/damselfly and build-opt/tools/coll_load
#                       and resp_load
#   QUIET_MAX [10], QUIET_BUDGET [60]  as in tools/redis-bench.sh
#   TPUT_TIME_LIMIT [420]  seconds for the tput part; no round starts that would likely end
#                       after it
#   TIME_LIMIT [1500]   seconds for the whole run (build included); a mem dataset that would
#                       start after it is skipped, and a fill that runs past it is stopped
#
# Times on the test machine (2 vCPUs): the full run takes about 10 minutes when the CPUs are
# quiet; QUICK=1 about 2.
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"

quick="${QUICK:-0}"
if [[ "$quick" == 1 ]]; then
  q_scale=0.1 q_rounds=1 q_n1=10000 q_n32=100000
else
  q_scale=1 q_rounds=3 q_n1=100000 q_n32=1000000
fi
parts="${PARTS:-tput mem}"
tests="${TESTS:-XADD XREAD XREADGROUP XACK PFADD PFCOUNT SETBIT BITCOUNT GEOADD GEOSEARCH}"
pipelines="${PIPELINES:-1 32}"
datasets="${DATASETS:-stream1m stream1k streamrand}"
rounds="${ROUNDS:-$q_rounds}"
n1="${N1:-$q_n1}"
n32="${N32:-$q_n32}"
clients="${CLIENTS:-50}"
members="${MEMBERS:-10000}"
bits="${BITS:-1000000}"
scale="${SCALE:-$q_scale}"
base_port="${BASE_PORT:-6740}"
quiet_max="${QUIET_MAX:-10}"
quiet_budget="${QUIET_BUDGET:-60}"
tput_time_limit="${TPUT_TIME_LIMIT:-420}"
time_limit="${TIME_LIMIT:-1500}"
dry_run="${DRY_RUN:-0}"
redis_server="${REDIS_SERVER:-redis-server}"
redis_benchmark="${REDIS_BENCHMARK:-redis-benchmark}"
redis_cli="${REDIS_CLI:-redis-cli}"
damselfly_flags="${DAMSELFLY_FLAGS:-}"
# Hard bound on one load invocation; a run that takes longer counts as a hang.
load_timeout="${LOAD_TIMEOUT:-120}"
check_loader

require_counts "$rounds" "$n1" "$n32" "$clients" "$members" "$bits" "$base_port" "$quiet_max" \
  "$tput_time_limit" "$time_limit" $pipelines
require_quiet_budget
[[ "$scale" =~ ^[0-9]*\.?[0-9]+$ ]] || die_usage "bad SCALE '$scale'"
all_tests="XADD XREAD XREADGROUP XACK PFADD PFCOUNT SETBIT BITCOUNT GEOADD GEOSEARCH"
all_datasets="stream1m stream1k streamrand"
for p in $parts; do [[ " tput mem " == *" $p "* ]] || die_usage "unknown part '$p' (tput, mem)"; done
for t in $tests; do [[ " $all_tests " == *" $t "* ]] || die_usage "unknown test '$t' ($all_tests)"; done
for d in $datasets; do
  [[ " $all_datasets " == *" $d "* ]] || die_usage "unknown dataset '$d' ($all_datasets)"
done
[[ -n "${parts// /}" ]] || die_usage "PARTS is empty"
require_two_cpus "the load"
require_commands "$redis_server" "$redis_benchmark" "$redis_cli"

setup_pair
setup_loader

# probe <port> <test>: the number the test's check looks at (see check), or "?".
probe() {
  local port=$1 v=""
  case "$2" in
    XADD) v="$(cli "$port" xlen bench:xadd)" ;;
    XREAD) v="$(cli "$port" xlen bench:stream)" ;;
    XREADGROUP) v="$(cli "$port" xpending bench:group g | head -n 1)" ;;
    XACK) v="$(cli "$port" xpending bench:acks g | head -n 1)" ;;
    PFADD) v="$(cli "$port" pfcount bench:pfadd)" ;;
    PFCOUNT) v="$(cli "$port" pfcount bench:hll)" ;;
    SETBIT) v="$(cli "$port" --scan --pattern 'bench:setbit:*' | grep -c '^bench:setbit:' || true)" ;;
    BITCOUNT) v="$(cli "$port" strlen bench:bits)" ;;
    GEOADD) v="$(cli "$port" zcard bench:geoadd)" ;;
    GEOSEARCH) v="$(cli "$port" zcard bench:geo)" ;;
  esac
  if [[ "$v" =~ ^[0-9]+$ ]]; then echo "$v"; else echo "?"; fi
}

# pipe <port>: sends the commands on stdin (one per line, words split on spaces) with
# redis-cli --pipe; false unless every reply came back without an error.
pipe() {
  awk '{ printf "*%d\r\n", NF; for (i = 1; i <= NF; i++) printf "$%d\r\n%s\r\n", length($i), $i }' |
    timeout 120 "$redis_cli" -p "$1" --pipe >"$logdir/pipe.out" 2>&1 || true
  grep -q 'errors: 0, replies:' "$logdir/pipe.out"
}

########################################################################################
# tput

# The redis-benchmark options of a test, and its command: redis-benchmark takes the first
# word that is not an option as the start of the command, so the command goes last.
test_opts() {
  case "$1" in
    XACK | PFADD | GEOADD) echo "-r $members" ;;
    SETBIT) echo "-r $members" ;;
  esac
}
test_cmd() {
  case "$1" in
    XADD) echo "XADD bench:xadd * f1 v1 f2 v2 f3 v3 f4 v4 f5 v5" ;;
    XREAD) echo "XREAD COUNT 10 STREAMS bench:stream 0-0" ;;
    XREADGROUP) echo "XREADGROUP GROUP g alice COUNT 1 STREAMS bench:group >" ;;
    XACK) echo "XACK bench:acks g __rand_int__-0" ;;
    PFADD) echo "PFADD bench:pfadd element:__rand_int__" ;;
    PFCOUNT) echo "PFCOUNT bench:hll" ;;
    SETBIT) echo "SETBIT bench:setbit:__rand_int__ 8191 1" ;;
    BITCOUNT) echo "BITCOUNT bench:bits" ;;
    GEOADD) echo "GEOADD bench:geoadd 13.__rand_int__ 52.__rand_int__ element:__rand_int__" ;;
    GEOSEARCH) echo "GEOSEARCH bench:geo FROMLONLAT 13.4 52.5 BYRADIUS 10 km COUNT 10 ASC" ;;
  esac
}

# The requests of a test at pipeline depth $2: N1 or N32 (N32 for any depth above 1), a
# quarter of it for GEOSEARCH (hundreds of candidates per call).
test_n() {
  local n=$n1
  if (($2 > 1)); then n=$n32; fi
  case "$1" in GEOSEARCH) n=$((n / 4)) ;; esac
  echo "$n"
}

# prepare <server index> <test> <n> <pipeline>: gives the test the data it reads. Returns 0
# when ready, 3 when the server refused (p_reason says why), 1 on a failure.
prepare() {
  local i=$1 t=$2 n=$3 slack=$((clients * $4)) port=${ports[$1]} rc=0
  p_reason=""
  case "$t" in
    XREAD | PFCOUNT | BITCOUNT | GEOSEARCH)
      # Prepared once per server start.
      if [[ -n "${prepared[$i,$t]:-}" ]]; then return 0; fi
      case "$t" in
        XREAD) load "$port" 120 --type=stream --key=bench:stream --members="$members" || rc=$? ;;
        PFCOUNT)
          seq 0 $((members - 1)) | awk '{ printf " e%d", $1 } NR % 100 == 0 { print "" }' |
            sed 's/^/PFADD bench:hll/' | pipe "$port" || rc=3
          ;;
        BITCOUNT) [[ "$(cli "$port" setbit bench:bits $((bits - 1)) 1)" == 0 ]] || rc=3 ;;
        GEOSEARCH)
          # Points in a 1 x 1 degree box around the search's centre.
          awk -v m="$members" 'BEGIN { srand(7); for (j = 0; j < m; j++)
            printf "GEOADD bench:geo %.6f %.6f m%d\n", 12.9 + rand(), 52.0 + rand(), j }' |
            pipe "$port" || rc=3
          ;;
      esac
      if ((rc == 3)); then p_reason="$(head -c 200 "$logdir/pipe.out" 2>/dev/null)"; fi
      if ((rc == 0)); then prepared[$i,$t]=1; fi
      ;;
    XREADGROUP)
      # Every call delivers one new entry: more entries than calls (each client rounds its
      # requests up to a whole pipeline).
      cli "$port" del bench:group >/dev/null
      load "$port" 300 --type=stream --key=bench:group --members=$((n + slack)) || rc=$?
      if ((rc == 0)) && [[ "$(cli "$port" xgroup create bench:group g 0)" != OK ]]; then
        rc=3 p_reason="XGROUP CREATE failed"
      fi
      ;;
    XACK)
      # IDs 1-0 .. MEMBERS-0, every one pending in group g.
      cli "$port" del bench:acks >/dev/null
      load "$port" 120 --type=stream --style=element --key=bench:acks --members="$members" ||
        rc=$?
      if ((rc == 0)) && ! [[ "$(cli "$port" xgroup create bench:acks g 0)" == OK &&
        "$(cli "$port" xreadgroup group g alice count "$members" streams bench:acks '>' |
          wc -l)" -gt "$members" ]]; then
        rc=3 p_reason="XGROUP CREATE or XREADGROUP failed"
      fi
      ;;
  esac
  if ((rc == 3)) && [[ -z "$p_reason" ]]; then p_reason="$(load_error)"; fi
  return "$rc"
}

# check <server index> <test> <n> <pipeline> <probe before>: true if the key the test
# worked on shows the work (see probe); otherwise says what it found.
check() {
  local t=$2 n=$3 slack=$((clients * $4)) before=$5 now ok=0
  now="$(probe "${ports[$1]}" "$t")"
  if [[ "$now" =~ ^[0-9]+$ ]]; then
    case "$t" in
      XADD | XREADGROUP) ((now >= before + n && now <= before + n + slack)) && ok=1 ;;
      XREAD | PFCOUNT | BITCOUNT | GEOSEARCH) ((now == before && now > 0)) && ok=1 ;;
      XACK) ((now < before)) && ok=1 ;;
      PFADD) ((now >= 1 && now <= members + members / 20)) && ok=1 ;;
      GEOADD) ((now >= 1 && now <= members)) && ok=1 ;;
      # A run at -P 32 after the -P 1 one may find all MEMBERS bitmaps there already.
      SETBIT) ((now <= members && (now > before || now == members))) && ok=1 ;;
    esac
  fi
  if ((ok)); then return 0; fi
  c_found="$t: probe gave '$now' after -n $n (before: $before)"
  return 1
}


# Results per server, pipeline and test: space-separated per-round values (rps, or n/a or
# failed), server CPU %, server ns/request, other CPU %.
declare -A rps=() cpu=() nsreq=() noise=() prepared=()

# Per server index: the running server's pid and log, and how often it was started.
declare -a pids=("" "") logs=("" "") starts=(0 0)

# run_test <server index> <round> <pipeline> <test>: measures one test on one server (again
# when the run was disturbed), starting the server first if it is not running (the first
# time in a round, or after a crash), and records the result.
run_test() {
  local i=$1 r=$2 p=$3 t=$4 prefix="$logdir/${names[$1]// /_}.round$2" n attempt before rc k
  n=$(test_n "$t" "$p")
  server_pid="${pids[$i]}"
  if [[ -n "$server_pid" ]]; then
    server_gone "$i" "${logs[$i]}" "the runs before $t -P $p" || true
  fi
  if [[ -z "$server_pid" ]]; then
    starts[i]=$((starts[i] + 1))
    logs[i]="$prefix.start${starts[i]}.server.log"
    for k in "${!prepared[@]}"; do [[ "$k" == "$i,"* ]] && unset "prepared[$k]"; done
    if ! start "$i" "${logs[$i]}"; then
      rps[$i,$p,$t]+="failed "
      note "${names[$i]}: did not start (log ${logs[$i]})"
      pids[i]=""
      return
    fi
  fi
  for attempt in 1 2 3; do
    rc=0
    prepare "$i" "$t" "$n" "$p" || rc=$?
    if ((rc != 0)); then
      if ((rc == 3)); then
        m_status=n/a m_reason="preparing: $p_reason"
      else
        m_status=failed m_reason="preparing failed: $(load_error)"
        note "${names[$i]}: $t -P $p: $m_reason"
        unclean=1
        keep_logs=1
        server_gone "$i" "${logs[$i]}" "preparing $t" || true
      fi
      break
    fi
    before="$(probe "${ports[$i]}" "$t")"
    [[ "$before" =~ ^[0-9]+$ ]] || before=0
    wait_quiet
    measure "$i" "$t" "$p" "$n" "$prefix.$t.P$p.$attempt" "${logs[$i]}"
    if [[ "$m_status" != ok ]]; then break; fi
    if remeasure "$m_noise" "$attempt" "$m_secs"; then continue; fi
    break
  done
  if [[ "$m_status" == ok ]] && ! check "$i" "$t" "$n" "$p" "$before"; then
    note "${names[$i]}: $t -P $p, round $r: check failed: $c_found"
    echo "$bench_name: ${names[$i]}: $t -P $p: check failed: $c_found" >&2
    unclean=1
  fi
  if [[ "$m_status" == ok ]]; then
    rps[$i,$p,$t]+="$m_rps "
    cpu[$i,$p,$t]+="$m_cpu "
    nsreq[$i,$p,$t]+="$m_ns "
    noise[$i,$p,$t]+="$m_noise "
    echo "    ${names[$i]} $t -P $p: $m_rps rps, CPU %: server $m_cpu, other $m_noise;" \
      "server ns/request $m_ns" >&2
  else
    rps[$i,$p,$t]+="$m_status "
    if [[ "$m_status" == n/a ]]; then note "${names[$i]}: $t: n/a: $m_reason"; fi
    echo "    ${names[$i]} $t -P $p: $m_status: $m_reason" >&2
  fi
  pids[i]="$server_pid"
  other_server_pids="${pids[*]}"  # for bench_cleanup
}

# run_round <round>: both servers run through the round (pinned to CPU 0; the one not
# measured sits idle), and each test is measured on one and then at once on the other, the
# first alternating per test and per round. The two runs of a pair are seconds apart: this
# machine's speed drifts by up to 2x over minutes (its neighbours on the host), and rounds
# of one whole server after the other turned that drift into noise in the ratios.
run_round() {
  local r=$1 p t k pair=0
  for p in $pipelines; do
    for t in $tests; do
      for k in 0 1; do run_test $(((r + pair + k) % 2)) "$r" "$p" "$t"; done
      pair=$((pair + 1))
    done
  done
  for k in 0 1; do
    if [[ -n "${pids[$k]}" ]]; then
      server_pid="${pids[$k]}"
      stop_server "${names[$k]}" "${logs[$k]}" 100
      pids[k]=""
    fi
  done
  other_server_pids=""
}

run_tput() {
  local i p t
  for ((i = 0; i < 2; i++)); do
    for p in $pipelines; do
      for t in $tests; do rps[$i,$p,$t]="" cpu[$i,$p,$t]="" nsreq[$i,$p,$t]="" noise[$i,$p,$t]=""; done
    done
  done
  echo "$bench_name: tput: up to $rounds rounds x 2 servers; tests: $tests; pipelines: $pipelines;" \
    "-c $clients -r $members, BITCOUNT of $bits bits, -n $n1 unpipelined, -n $n32 pipelined" >&2
  local r round_start longest_round=0 time_limit=$((SECONDS + tput_time_limit))
  done_rounds=0
  for ((r = 1; r <= rounds; r++)); do
    if ((r > 1 && SECONDS + longest_round > time_limit)); then
      echo "$bench_name: stopping after $done_rounds rounds: another would likely end after" \
        "TPUT_TIME_LIMIT" >&2
      break
    fi
    round_start=$SECONDS
    echo "  round $r" >&2
    run_round "$r"
    done_rounds=$r
    if ((SECONDS - round_start > longest_round)); then longest_round=$((SECONDS - round_start)); fi
  done

  local a b ma mb rt target op na nb
  echo
  echo "Throughput: $tput_loader, $clients connections, -r $members; BITCOUNT of $bits bits; -n $n1" \
    "unpipelined, -n $n32 pipelined (a quarter for GEOSEARCH); $done_rounds rounds;" \
    "$(machine_desc), commit $commit"
  echo
  echo "| command | pipeline | ${names[0]} rps (median) | redis rps (median) | ratio | target" \
    "| per-round ratios | ${names[0]} runs | redis runs | server ns/request, median (${names[0]}; redis)" \
    "| ns/request ratio | server CPU % (${names[0]}; redis) | other CPU % (${names[0]}; redis) |"
  echo "|---|---:|---:|---:|---:|---|---|---|---|---|---:|---|---|"
  for p in $pipelines; do
    if ((p == 1)); then op=">=" target=1.0; else op=">=" target=1.5; fi
    for t in $tests; do
      a="${rps[0,$p,$t]}"
      b="${rps[1,$p,$t]}"
      ma="$(median_or "$a")"
      mb="$(median_or "$b")"
      rt="$(ratio "$ma" "$mb")"
      na="$(median_or "${nsreq[0,$p,$t]}")"
      nb="$(median_or "${nsreq[1,$p,$t]}")"
      echo "| $t | $p | $ma | $mb | **$rt** | $op $target: $(verdict "$rt" "$op" "$target")" \
        "| $(round_ratios "$a" "$b") | $(as_list "$a") | $(as_list "$b")" \
        "| $na; $nb | $(ratio "$na" "$nb")" \
        "| $(as_list "${cpu[0,$p,$t]}"); $(as_list "${cpu[1,$p,$t]}")" \
        "| $(as_list "${noise[0,$p,$t]}"); $(as_list "${noise[1,$p,$t]}") |"
    done
  done
}

########################################################################################
# mem

# Per dataset: type, keys, entries per key, entries per command (always 1 for streams), key
# prefix, and a rough upper estimate of redis-server's bytes per entry (about 1.5x what it
# took here), to refuse a dataset the machine's free memory cannot hold; then coll_load's
# --style (short when not given).
declare -A ds_type=() ds_keys=() ds_members=() ds_per=() ds_prefix=() ds_est=() ds_style=()
add_dataset() {
  ds_type[$1]=$2 ds_keys[$1]=$3 ds_members[$1]=$4 ds_per[$1]=$5 ds_prefix[$1]=$6 ds_est[$1]=$7
  ds_style[$1]=${8:-short}
}
add_dataset stream1m stream 1 1000000 1 x: 60
add_dataset stream1k stream 1000 1000 1 X: 60
add_dataset streamrand stream 1 1000000 1 r: 200 random
for d in $all_datasets; do
  # SCALE shrinks the one stream's length, the many streams' count.
  if ((ds_keys[$d] == 1)); then
    ds_members[$d]="$(awk -v c="${ds_members[$d]}" -v s="$scale" 'BEGIN { printf "%d", c * s + 0.5 }')"
  else
    ds_keys[$d]="$(awk -v c="${ds_keys[$d]}" -v s="$scale" 'BEGIN { printf "%d", c * s + 0.5 }')"
  fi
  if ((ds_keys[$d] < 1 || ds_members[$d] < 1)); then die_usage "SCALE=$scale leaves dataset $d empty"; fi
done

# key_size <port> <key>: mem_server's check of a dataset's key (bench-lib.sh).
key_size() { cli "$1" xlen "$2"; }

for part in $parts; do
  case "$part" in
    tput) run_tput ;;
    mem) run_mem entry entries 1.0 "XADD key * f1 v1 ... f5 v5, " ;;
  esac
done

finish_run
