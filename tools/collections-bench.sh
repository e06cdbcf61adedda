#!/usr/bin/env bash
# Collections (lists, hashes, sets, sorted sets): damselfly against redis-server, side by side
# in one run, each server on one thread pinned to CPU 0, the load pinned to CPU 1, only one
# server running at a time and every server started fresh. Two parts:
#
# tput  Throughput per core, ROUNDS rounds (the starting server alternates per round), each
#       command unpipelined and at -P 32, CLIENTS connections, values of SIZE bytes, members
#       drawn from element:0..MEMBERS-1 (-r MEMBERS), one load invocation per command. The
#       load is LOADER: tools/resp_load (the default) or redis-benchmark. redis-benchmark
#       parses every reply in full, and at -P 32 its one core saturates near either server
#       (about 2.5M simple replies/s, about 200k replies of 100 elements): its ratios there
#       are partly the load generator's. resp_load sends the same commands as
#       redis-benchmark's tests (-t lpush is LPUSH mylist <SIZE bytes>, -t hset HSET myhash
#       element:<rand> <value>, -t sadd SADD myset element:<rand>, -t zadd ZADD myzset
#       <rand> element:<rand>, -t lpop LPOP mylist) and only skims the replies. The commands:
#         LPUSH, LPOP       -t lpush, -t lpop on mylist (LPOP runs on a list topped up with
#                           tools/coll_load to hold every element it pops)
#         LRANGE_100        LRANGE mylist 0 99; N/4 requests. redis-benchmark (-t lrange_100)
#                           first LPUSHes as many elements as it sends LRANGEs; for
#                           resp_load tools/coll_load fills mylist to 100 elements first
#         HSET, SADD, ZADD  -t hset, -t sadd, -t zadd -r MEMBERS (myhash, myset, myzset)
#         HGET, SISMEMBER,  HGET bench:hash / SISMEMBER bench:set / ZSCORE bench:zset
#         ZSCORE            element:__rand_int__ -r MEMBERS, against a hash, set, sorted set
#                           of exactly MEMBERS members prepared by tools/coll_load
#         SPOP              SPOP bench:spop, a set prepared with more members than SPOPs sent
#         ZRANGE            ZRANGE bench:zset100 0 99 (a prepared 100-member sorted set);
#                           N/4 requests
#       After each run a check with redis-cli confirms that the command did its work (the
#       list grew or shrank by what was sent, the set was emptied by SPOP, the prepared
#       collections kept their size). Prints a markdown table of the medians and the ratio
#       damselfly / redis-server per command and pipeline depth; targets >= 1.0x
#       unpipelined and >= 1.5x at -P 32.
# mem   Memory: per dataset, each server in turn is started, filled by tools/coll_load over
#       one pipelined connection, checked (DBSIZE and the size of the first and last key),
#       and measured: RSS delta (VmRSS after the fill minus before) and used_memory delta
#       (INFO memory), then stopped. Datasets (keys x members; SCALE multiplies the keys,
#       and the list's length):
#         hash10    1M hashes of 10 fields   HSET h:<i> f0 v0 ... f9 v9
#         set10     1M sets of 10 members    SADD s:<i> m0 ... m9
#         zset100   100K sorted sets of 100  ZADD z:<i> <score> m0 ... (100 per command)
#         list10m   one list of 10M elements RPUSH l:0 m0 ... (100 per command)
#         hashbig   10K hashes of 10K fields (100 per command)
#         setbig    10K sets of 10K members
#         zsetbig   10K sorted sets of 10K members
#       Members are short strings ("m<j>", "f<j>"/"v<j>"), never integers; sorted-set scores
#       are pseudo-random integers below 1,000,000. Prints a markdown table of both servers'
#       deltas and the ratio per dataset; target <= 0.6x redis-server's RSS delta.
#
# A command the server does not know (or any error reply) is reported as n/a with the
# server's error text, not as a failure, so the script can run before every family exists.
# A server that dies or hangs is reported (and restarted for the rest); the script then
# exits non-zero at the end and keeps its logs.
#
# Usage: tools/collections-bench.sh
# Environment (defaults in brackets):
#   PARTS [tput mem]    which parts to run, in this order
#   TESTS [LPUSH LPOP LRANGE_100 HSET HGET SADD SISMEMBER SPOP ZADD ZRANGE ZSCORE]
#   PIPELINES [1 32]    pipeline depths for tput
#   DATASETS [hash10 set10 zset100 list10m hashbig setbig zsetbig]
#   QUICK               1: a smoke test: SCALE=0.01 ROUNDS=1 N1=10000 N32=100000 unless set
#   ROUNDS [3]          tput rounds
#   N1 [100000]         requests per command unpipelined (-n; N1/4 for LRANGE_100, ZRANGE)
#   N32 [1000000]       requests per command at the deeper pipeline (likewise)
#   CLIENTS [50]        connections (redis-benchmark -c, resp_load --conns)
#   LOADER [resp_load]  resp_load or redis-benchmark
#   SIZE [16]           value bytes for LPUSH and HSET (-d)
#   MEMBERS [10000]     member space for tput (-r) and size of the prepared collections
#   SCALE [1]           multiplies the mem datasets' key counts (the list's length)
#   BASE_PORT [6720]    damselfly listens on BASE_PORT, redis-server on BASE_PORT + 1
#   REDIS_SERVER [redis-server], REDIS_BENCHMARK [redis-benchmark], REDIS_CLI [redis-cli]
#   DAMSELFLY_FLAGS []  extra flags for damselfly
#   DAMSELFLY_BIN [build-opt/damselfly]  the damselfly binary (e.g. another tree's build;
#                       SKIP_BUILD=1 is then implied for it)
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
# Times on the test machine (2 vCPUs, 23 GiB): the full run takes about 15 minutes when the
# CPUs are quiet, most of it in the three big datasets (redis-server fills zsetbig in about
# 90 s), and up to TIME_LIMIT when other work shares them; redis-server needs up to about
# 11 GiB for zsetbig, and a dataset is skipped (and reported so) when MemAvailable does not
# cover an estimate of its needs.
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"

quick="${QUICK:-0}"
if [[ "$quick" == 1 ]]; then
  q_scale=0.01 q_rounds=1 q_n1=10000 q_n32=100000
else
  q_scale=1 q_rounds=3 q_n1=100000 q_n32=1000000
fi
parts="${PARTS:-tput mem}"
tests="${TESTS:-LPUSH LPOP LRANGE_100 HSET HGET SADD SISMEMBER SPOP ZADD ZRANGE ZSCORE}"
pipelines="${PIPELINES:-1 32}"
datasets="${DATASETS:-hash10 set10 zset100 list10m hashbig setbig zsetbig}"
rounds="${ROUNDS:-$q_rounds}"
n1="${N1:-$q_n1}"
n32="${N32:-$q_n32}"
clients="${CLIENTS:-50}"
size="${SIZE:-16}"
members="${MEMBERS:-10000}"
scale="${SCALE:-$q_scale}"
base_port="${BASE_PORT:-6720}"
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

require_counts "$rounds" "$n1" "$n32" "$clients" "$size" "$members" "$base_port" "$quiet_max" \
  "$tput_time_limit" "$time_limit" $pipelines
require_quiet_budget
[[ "$scale" =~ ^[0-9]*\.?[0-9]+$ ]] || die_usage "bad SCALE '$scale'"
all_tests="LPUSH LPOP LRANGE_100 HSET HGET SADD SISMEMBER SPOP ZADD ZRANGE ZSCORE"
all_datasets="hash10 set10 zset100 list10m hashbig setbig zsetbig"
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

# card <port> <key>: the size of a collection whatever its type (0 when missing), or "?".
card() {
  local type
  type="$(cli "$1" type "$2")"
  case "$type" in
    list) cli "$1" llen "$2" ;;
    hash) cli "$1" hlen "$2" ;;
    set) cli "$1" scard "$2" ;;
    zset) cli "$1" zcard "$2" ;;
    none) echo 0 ;;
    *) echo "?" ;;
  esac
}

########################################################################################
# tput

# The redis-benchmark options of a test, and its custom command (for a -t test: empty for
# redis-benchmark, what that test sends for resp_load, whose --rand comes from -r):
# redis-benchmark takes the first word that is not an option as the start of the command,
# so the command goes last.
test_opts() {
  case "$1" in
    LPUSH | LPOP | LRANGE_100) echo "-t ${1,,}" ;;
    HSET | SADD | ZADD) echo "-t ${1,,} -r $members" ;;
    HGET | SISMEMBER | ZSCORE) echo "-r $members" ;;
  esac
}
test_cmd() {
  case "$1" in
    LPUSH | LRANGE_100 | HSET | SADD | ZADD | LPOP) if [[ "$tput_loader" == resp_load ]]; then
      resp_test_cmd "$1"
    fi ;;
    HGET) echo "HGET bench:hash element:__rand_int__" ;;
    SISMEMBER) echo "SISMEMBER bench:set element:__rand_int__" ;;
    SPOP) echo "SPOP bench:spop" ;;
    ZRANGE) echo "ZRANGE bench:zset100 0 99" ;;
    ZSCORE) echo "ZSCORE bench:zset element:__rand_int__" ;;
  esac
}

# resp_test_cmd <test>: what redis-benchmark sends for its -t tests, for resp_load.
resp_test_cmd() {
  # A printable value of SIZE bytes that does not repeat within 36 (redis-benchmark's is
  # random printable bytes).
  local data="" alphabet=0123456789abcdefghijklmnopqrstuvwxyz
  while ((${#data} < size)); do data+=$alphabet; done
  data="${data:0:size}"
  case "$1" in
    LPUSH) echo "LPUSH mylist $data" ;;
    LPOP) echo "LPOP mylist" ;;
    LRANGE_100) echo "LRANGE mylist 0 99" ;;
    HSET) echo "HSET myhash element:__rand_int__ $data" ;;
    SADD) echo "SADD myset element:__rand_int__" ;;
    ZADD) echo "ZADD myzset __rand_int__ element:__rand_int__" ;;
  esac
}

# The requests of a test at pipeline depth $2: N1 or N32 (N32 for any depth above 1), a
# quarter of it for the commands that reply 100 elements.
test_n() {
  local n=$n1
  if (($2 > 1)); then n=$n32; fi
  case "$1" in LRANGE_100 | ZRANGE) n=$((n / 4)) ;; esac
  echo "$n"
}

# The key a test's check looks at.
test_key() {
  case "$1" in
    LPUSH | LPOP | LRANGE_100) echo mylist ;;
    HSET) echo myhash ;;
    SADD) echo myset ;;
    ZADD) echo myzset ;;
    HGET) echo bench:hash ;;
    SISMEMBER) echo bench:set ;;
    ZSCORE) echo bench:zset ;;
    ZRANGE) echo bench:zset100 ;;
    SPOP) echo bench:spop ;;
  esac
}

# prepare <server index> <test> <n> <pipeline>: gives the test the data it reads. Returns 0
# when ready, 3 when the server refused (p_reason says why), 1 on a failure.
prepare() {
  local i=$1 t=$2 n=$3 slack=$((clients * $4)) port=${ports[$1]} rc=0 have
  p_reason=""
  case "$t" in
    HGET | SISMEMBER | ZSCORE | ZRANGE)
      # Prepared once per server start.
      if [[ -n "${prepared[$t]:-}" ]]; then return 0; fi
      local type=hash m=$members
      case "$t" in SISMEMBER) type=set ;; ZSCORE) type=zset ;; ZRANGE) type=zset m=100 ;; esac
      load "$port" 120 --type="$type" --style=element --key="$(test_key "$t")" \
        --members="$m" || rc=$?
      if ((rc == 0)); then prepared[$t]=1; fi
      ;;
    SPOP)
      # redis-benchmark rounds each client's requests up to a whole pipeline, so up to
      # CLIENTS x pipeline more than -n may be sent; none may find the set empty.
      cli "$port" del bench:spop >/dev/null
      load "$port" 120 --type=set --style=element --key=bench:spop --members=$((n + slack)) ||
        rc=$?
      ;;
    LRANGE_100)
      have="$(card "$port" mylist)"
      if [[ "$tput_loader" == resp_load && "$have" =~ ^[0-9]+$ ]] && ((have < 100)); then
        load "$port" 120 --type=list --style=element --key=mylist --members=$((100 - have)) ||
          rc=$?
      fi
      ;;
    LPOP)
      have="$(card "$port" mylist)"
      if [[ "$have" =~ ^[0-9]+$ ]] && ((have < n + slack)); then
        load "$port" 120 --type=list --style=element --key=mylist --members=$((n + slack - have)) ||
          rc=$?
      fi
      ;;
  esac
  if ((rc == 3)); then p_reason="$(load_error)"; fi
  return "$rc"
}

# check <server index> <test> <n> <pipeline> <size before>: true if the collection the test
# worked on has the size it should have; otherwise says what it found.
check() {
  local t=$2 n=$3 slack=$((clients * $4)) before=$5 now ok=0
  now="$(card "${ports[$1]}" "$(test_key "$t")")"
  if [[ "$now" =~ ^[0-9]+$ ]]; then
    case "$t" in
      LPUSH) ((now >= before + n && now <= before + n + slack)) && ok=1 ;;
      LRANGE_100)
        if [[ "$tput_loader" == resp_load ]]; then
          ((now == before && now >= 100)) && ok=1
        else
          ((now >= before + n && now <= before + n + slack)) && ok=1
        fi
        ;;
      LPOP) ((now <= before - n && now >= before - n - slack)) && ok=1 ;;
      HSET | SADD | ZADD) ((now >= 1 && now <= members)) && ok=1 ;;
      HGET | SISMEMBER | ZSCORE) ((now == members)) && ok=1 ;;
      ZRANGE) ((now == 100)) && ok=1 ;;
      SPOP) ((now <= slack)) && ok=1 ;;
    esac
  fi
  if ((ok)); then return 0; fi
  c_found="$(test_key "$t") held '$now' members after -n $n (before: $before)"
  return 1
}


# test_sent <test> <n>: the requests a load invocation of n sends (measure's CPU per
# request): redis-benchmark's LRANGE_100 also sends n preparing LPUSHes.
test_sent() {
  if [[ "$1" == LRANGE_100 && "$tput_loader" == redis-benchmark ]]; then echo $(($2 * 2)); else echo "$2"; fi
}

# Results per server, pipeline and test: space-separated per-round values (rps, or n/a or
# failed), server CPU %, server ns/request, other CPU %.
declare -A rps=() cpu=() nsreq=() noise=() prepared=()

# run_server <server index> <round>: starts the server, runs every test at every pipeline
# depth against it (a disturbed run again, a test after a crash on a restarted server),
# stops it.
run_server() {
  local i=$1 r=$2 prefix="$logdir/${names[$1]// /_}.round$2" starts=0
  local log="$prefix.server.log" p t n attempt before rc
  for p in $pipelines; do
    for t in $tests; do
      n=$(test_n "$t" "$p")
      if [[ -n "$server_pid" ]]; then server_gone "$i" "$log" "the runs before $t -P $p" || true; fi
      if [[ -z "$server_pid" ]]; then
        starts=$((starts + 1))
        log="$prefix.start$starts.server.log"
        prepared=()
        if ! start "$i" "$log"; then
          rps[$i,$p,$t]+="failed "
          note "${names[$i]}: did not start (log $log)"
          continue
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
            server_gone "$i" "$log" "preparing $t" || true
          fi
          break
        fi
        before="$(card "${ports[$i]}" "$(test_key "$t")")"
        [[ "$before" =~ ^[0-9]+$ ]] || before=0
        wait_quiet
        measure "$i" "$t" "$p" "$n" "$prefix.$t.P$p.$attempt" "$log"
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
    done
  done
  if [[ -n "$server_pid" ]]; then stop_server "${names[$i]}" "$log" 100; fi
}

run_tput() {
  local i p t
  for ((i = 0; i < 2; i++)); do
    for p in $pipelines; do
      for t in $tests; do rps[$i,$p,$t]="" cpu[$i,$p,$t]="" nsreq[$i,$p,$t]="" noise[$i,$p,$t]=""; done
    done
  done
  echo "$bench_name: tput: up to $rounds rounds x 2 servers; tests: $tests; pipelines: $pipelines;" \
    "-c $clients -d $size -r $members, -n $n1 unpipelined, -n $n32 pipelined" >&2
  run_rounds "$rounds" "$((SECONDS + tput_time_limit))" 2

  local a b ma mb rt target op na nb
  echo
  echo "Throughput: $tput_loader, $clients connections, -d $size -r $members; -n $n1 unpipelined," \
    "-n $n32 pipelined (a quarter for LRANGE_100 and ZRANGE); $done_rounds rounds;" \
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
  if [[ " $tests " == *" LRANGE_100 "* && "$tput_loader" == redis-benchmark ]]; then
    echo
    echo "LRANGE_100's server ns/request covers the invocation's preparing LPUSHes as well" \
      "(its CPU time over both)."
  fi
}

########################################################################################
# mem

# Per dataset: type, keys, members per key, members per command, key prefix, and a rough
# upper estimate of redis-server's bytes per member (about 1.5x what it took here), to
# refuse a dataset the machine's free memory cannot hold.
declare -A ds_type=() ds_keys=() ds_members=() ds_per=() ds_prefix=() ds_est=()
add_dataset() {
  ds_type[$1]=$2 ds_keys[$1]=$3 ds_members[$1]=$4 ds_per[$1]=$5 ds_prefix[$1]=$6 ds_est[$1]=$7
}
add_dataset hash10 hash 1000000 10 10 h: 40
add_dataset set10 set 1000000 10 10 s: 100
add_dataset zset100 zset 100000 100 100 z: 30
add_dataset list10m list 1 10000000 100 l: 20
add_dataset hashbig hash 10000 10000 100 H: 120
add_dataset setbig set 10000 10000 100 S: 100
add_dataset zsetbig zset 10000 10000 100 Z: 170
for d in $all_datasets; do
  # SCALE shrinks the key count; the one list's length instead.
  if [[ "${ds_type[$d]}" == list ]]; then
    ds_members[$d]="$(awk -v c="${ds_members[$d]}" -v s="$scale" 'BEGIN { printf "%d", c * s + 0.5 }')"
  else
    ds_keys[$d]="$(awk -v c="${ds_keys[$d]}" -v s="$scale" 'BEGIN { printf "%d", c * s + 0.5 }')"
  fi
  if ((ds_keys[$d] < 1 || ds_members[$d] < 1)); then die_usage "SCALE=$scale leaves dataset $d empty"; fi
done

# key_size <port> <key>: mem_server's check of a dataset's key (bench-lib.sh).
key_size() { card "$@"; }

for part in $parts; do
  case "$part" in
    tput) run_tput ;;
    mem) run_mem member members 0.6 "" ;;
  esac
done

finish_run
