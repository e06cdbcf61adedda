#!/usr/bin/env bash
# memcaslap and mc_load against damselfly's memcache port and memcached, side by side in
# one run. Each
# round starts each server in turn (the starting server alternates per round; only one
# server runs at a time), pinned to CPU 0 on one thread (damselfly --proactor_threads=1,
# memcached -t 1), and loads it with memcaslap (libmemcached-tools) on one thread pinned to
# CPU 1. Cases: set, get, and multi-get of MGET_KEYS keys per request ("get k1 ... kN"),
# each with CLIENTS connections, KEY_SIZE-byte keys and SIZE-byte values. Then, with the
# project's own generator tools/mc_load (16 connections, 100,000 preloaded keys, every
# reply checked), the pipelined cases memcaslap cannot make: gets pipelined 16 deep per
# connection, 100-key multi-gets one at a time, and 100-key multi-gets pipelined 8 deep.
# (memcaslap keeps one request in flight per connection and is itself the bottleneck for
# multi-gets: neither server reaches its core's limit under it.) Prints a markdown table
# of the per-server medians and the ratio damselfly / memcached.
#
# Usage: tools/memcache-bench.sh
# Environment (defaults in brackets):
#   ROUNDS [3]            rounds; each round measures both servers once
#   DURATION [5]          seconds per memcaslap run (-t)
#   CLIENTS [50]          memcaslap concurrency (-c): connections, one request in flight each
#   WINDOW [1k]           memcaslap window (-w): keys per connection; a run first SETs them
#                         all (CLIENTS x WINDOW sets), so get runs include those sets
#   KEY_SIZE [16]         key size, bytes
#   SIZE [32]             value size, bytes
#   MGET_KEYS ["10 100"]  keys per multi-get request, one case each (memcaslap -d)
#   BASE_PORT [6690]      damselfly's RESP port; its memcache port is BASE_PORT + 1, and
#                         memcached listens on BASE_PORT + 2
#   MEMCACHED [memcached], MEMCASLAP [memcaslap]
#   SKIP_BUILD            1: use the existing build-opt/damselfly
#   SELF_TEST             1: run memcached in both slots (checks this script without damselfly)
#   QUIET_MAX [10]        "other CPU" percentage above which a run counts as disturbed
#   QUIET_BUDGET [60]     seconds, in total, to spend waiting for quiet CPUs and re-running
#                         disturbed runs; once spent, runs are taken as they come
#   TIME_LIMIT [480]      seconds; no new round is started if it would likely end after this
#
# ops/s is memcaslap's TPS: every key counts as one operation, so a multi-get of 10 keys
# is 10 operations (requests/s is ops/s / keys per request). "server CPU %" and "client CPU
# %" are the server's share of CPU 0 and memcaslap's share of CPU 1 (a client near 100% means
# the client, not the server, set the pace); "other CPU %" is the busy time of CPUs 0-1
# that belongs to neither, as a share of both. A disturbed run is measured again (at most
# twice) within QUIET_BUDGET. Every get run must end with get_misses 0: memcaslap only gets
# keys it has set, so a miss means the server lost or refused a value.
#
# Stops at the first failure (a server that does not start or dies, memcaslap failing,
# hanging or seeing misses), prints the commands that reproduce it and exits non-zero;
# the logs are kept.
set -euo pipefail
source "$(dirname "$0")/bench-lib.sh"

rounds="${ROUNDS:-3}"
duration="${DURATION:-5}"
clients="${CLIENTS:-50}"
window="${WINDOW:-1k}"
key_size="${KEY_SIZE:-16}"
size="${SIZE:-32}"
mget_keys="${MGET_KEYS:-10 100}"
base_port="${BASE_PORT:-6690}"
quiet_max="${QUIET_MAX:-10}"
quiet_budget="${QUIET_BUDGET:-60}"
time_limit="${TIME_LIMIT:-480}"
memcached="${MEMCACHED:-memcached}"
memcaslap="${MEMCASLAP:-memcaslap}"
self_test="${SELF_TEST:-0}"

# shellcheck disable=SC2086  # mget_keys is a word list
require_counts "$rounds" "$duration" "$clients" "$key_size" "$size" "$base_port" \
  "$quiet_max" "$time_limit" $mget_keys
[[ "$window" =~ ^[1-9][0-9]*[kK]?$ ]] || die_usage "bad WINDOW '$window'"
((key_size <= 250)) || die_usage "KEY_SIZE is at most 250"
require_quiet_budget
require_two_cpus memcaslap
require_commands "$memcached" "$memcaslap"
# Hard bound on one memcaslap run; a run that takes longer counts as a hang.
load_timeout=$((duration + 30))

cd "$(dirname "$0")/.."
bin="$PWD/build-opt"
SECONDS=0  # bash's elapsed-time counter, for TIME_LIMIT

# memcached refuses to run as root without -u.
mc_user=""
if [[ "$(id -u)" == 0 ]]; then mc_user="-u root"; fi
memcached_cmd() { echo "$memcached -p $1 -l 127.0.0.1 -U 0 -t 1 $mc_user"; }

# The servers, in table order; the second one is the baseline. ports[] are the memcache
# ports the load goes to.
names=("damselfly" "memcached")
ports=("$((base_port + 1))" "$((base_port + 2))")
damselfly_flags="--proactor_threads=1 --port=$base_port --memcached_port=${ports[0]}"
cmds=(
  "$bin/damselfly $damselfly_flags --bind=127.0.0.1 --logtostderr"
  "$(memcached_cmd "${ports[1]}")"
)
if [[ "$self_test" == 1 ]]; then
  names[0]="memcached (self-test)"
  cmds[0]="$(memcached_cmd "${ports[0]}")"
fi

init_logdir  # logdir, keep_logs (set when something failed), server_pid, load_pid
require_ports_free 1 "$base_port" "${ports[@]}"

if [[ "$self_test" != 1 ]]; then
  if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    build_release damselfly damselfly mc_load
  fi
  [[ -x "$bin/damselfly" ]] || die_usage "$bin/damselfly is missing (build it, or unset SKIP_BUILD)"
fi
[[ -x "$bin/tools/mc_load" ]] || die_usage "$bin/tools/mc_load is missing (tools/build.sh opt mc_load)"
commit="$(built_commit)"

# memcaslap configuration files: key and value sizes, then the command mix (0 = set,
# 1 = get, as proportions).
write_config() {
  printf 'key\n%d %d 1\nvalue\n%d %d 1\ncmd\n0 %s\n1 %s\n' \
    "$key_size" "$key_size" "$size" "$size" "$2" "$3" >"$logdir/$1.cfg"
}
write_config set 1.0 0.0
write_config get 0.0 1.0

# The cases: label, configuration (memcaslap's, or "mc_load"), keys per request, requests
# in flight per connection (mc_load).
case_labels=("set" "get")
case_cfgs=("set" "get")
case_keys=(1 1)
case_pipeline=(1 1)
for k in $mget_keys; do
  case_labels+=("multi-get $k")
  case_cfgs+=("get")
  case_keys+=("$k")
  case_pipeline+=(1)
done
case_labels+=("get, pipelined 16 (mc_load)" "multi-get 100 (mc_load)" "multi-get 100, pipelined 8 (mc_load)")
case_cfgs+=(mc_load mc_load mc_load)
case_keys+=(1 100 100)
case_pipeline+=(16 1 8)

# The load command line of case $2 against server $1.
load_cmd() {
  if [[ "${case_cfgs[$2]}" == mc_load ]]; then
    echo "$bin/tools/mc_load --port=${ports[$1]} --conns=16 --pipeline=${case_pipeline[$2]}" \
      "--mget=${case_keys[$2]} --keys=100000 --size=$size --seconds=$duration --warmup=1"
    return
  fi
  echo "$memcaslap -s 127.0.0.1:${ports[$1]} -F $logdir/${case_cfgs[$2]}.cfg -T 1" \
    "-c $clients -w $window -t ${duration}s -d ${case_keys[$2]}"
}

# The command lines that reproduce a failure against server $1, case $2.
reproducer() {
  echo "  reproduce with:" >&2
  echo "    taskset -c 0 ${cmds[$1]} &" >&2
  echo "    taskset -c 1 $(load_cmd "$1" "$2")" >&2
}

# fail <server index> <case index> <message> <log>: reports a failure and stops the script.
fail() {
  keep_logs=1
  echo "memcache-bench: ${names[$1]}: $3" >&2
  show_server_log "$4"
  reproducer "$1" "$2"
  echo "memcache-bench: stopped; logs are in $logdir" >&2
  exit 1
}

# ops[server,case], cpu[], ccpu[] and noise[] are space-separated lists of the rounds'
# ops/s, server CPU %, client CPU % and other CPU %.
declare -A ops=() cpu=() ccpu=() noise=()
for ((i = 0; i < ${#names[@]}; i++)); do
  for ((j = 0; j < ${#case_labels[@]}; j++)); do
    ops[$i,$j]=""
    cpu[$i,$j]=""
    ccpu[$i,$j]=""
    noise[$i,$j]=""
  done
done
unclean=0

# measure <server index> <case index> <log prefix> <server log>: one memcaslap run against
# the running server. Sets m_ops, m_cpu, m_ccpu, m_noise and m_secs; stops the script on any
# failure.
measure() {
  local i=$1 j=$2 out="$3.out" p0 b0 c0 t0 dt rc=0 server_ticks client_ticks misses
  p0=$(proc_ticks "$server_pid")
  c0=$(child_ticks)
  b0=$(cpu01_busy)
  t0=$(now_ns)
  # In the background so that a signal to this script is acted on at once (bash runs
  # traps only between foreground commands); timeout passes the kill on.
  # shellcheck disable=SC2046  # load_cmd prints a word list on purpose
  timeout "$load_timeout" taskset -c 1 $(load_cmd "$i" "$j") >"$out" 2>&1 &
  load_pid=$!
  # The run ends when memcaslap prints its summary ("Run time: ...") or exits.
  while kill -0 "$load_pid" 2>/dev/null && ! grep -q '^Run time:' "$out"; do sleep 0.05; done
  dt=$(($(now_ns) - t0))
  if ! kill -0 "$server_pid" 2>/dev/null; then
    wait "$server_pid" 2>/dev/null || rc=$?
    server_pid=""
    fail "$i" "$j" "the server died during the run (exit status $rc)" "$4"
  fi
  server_ticks=$(($(proc_ticks "$server_pid") - p0))
  # memcaslap sometimes does not exit after printing its summary: give it 2 s, then stop
  # it (timeout passes the TERM on; its status is then 143) and keep the result.
  local polls=0 stuck=0
  while kill -0 "$load_pid" 2>/dev/null && ((polls < 20)); do
    sleep 0.1
    polls=$((polls + 1))
  done
  if kill -0 "$load_pid" 2>/dev/null; then
    kill -TERM "$load_pid" 2>/dev/null || true
    stuck=1
  fi
  wait "$load_pid" || rc=$?
  load_pid=""
  client_ticks=$(($(child_ticks) - c0))
  if ((rc == 124)); then
    fail "$i" "$j" "the load generator did not finish in ${load_timeout}s (hang?)" "$4"
  fi
  if ((stuck == 1)); then
    echo "  (memcaslap did not exit after its summary; stopped it)" >&2
    rc=0
  fi
  # memcaslap's last line reads "Run time: 5.0s Ops: 1098636 TPS: 274636 Net_rate: 21.3M/s";
  # mc_load prints "keys_per_sec=N ..." and fails by itself on a missing value.
  m_ops=$(awk '/^Run time:/ { for (f = 1; f < NF; f++) if ($f == "TPS:") print $(f + 1) }
               /^keys_per_sec=/ { sub("keys_per_sec=", "", $1); print $1 }' "$out")
  misses=$(awk '$1 == "get_misses:" { print $2 }' "$out")
  if ((rc != 0)) || ! [[ "$m_ops" =~ ^[1-9][0-9]*$ ]]; then
    echo "  the load generator (rc=$rc) said:" >&2
    tail -n 20 "$out" | sed 's/^/    /' >&2
    fail "$i" "$j" "the load generator failed or printed no result" "$4"
  fi
  if [[ "${case_cfgs[$j]}" == get && "$misses" != 0 ]]; then
    fail "$i" "$j" "get_misses is '$misses' (expected 0): values were lost" "$4"
  fi
  m_cpu=$(pct "$server_ticks" "$dt" 1)
  m_ccpu=$(pct "$client_ticks" "$dt" 1)
  m_secs=$(((dt + 999999999) / 1000000000))
  m_noise=$(pct $(($(cpu01_busy) - b0 - server_ticks - client_ticks)) "$dt" 2)
  echo "    ${names[$i]} ${case_labels[$j]}: $m_ops ops/s, CPU %: server $m_cpu," \
    "client $m_ccpu, other $m_noise" >&2
}

# run_server <server index> <round>: starts the server, runs every case against it (again
# if the run was disturbed), stops it.
run_server() {
  local i=$1 port=${ports[$1]} prefix="$logdir/server$1.round$2"
  local log="$prefix.server.log"
  require_ports_free 1 "$port"
  start_server "${cmds[$i]}" "$log"
  wait_listening "$port" 100 || fail "$i" 0 "did not start listening on port $port" "$log"

  local j attempt m_ops m_cpu m_ccpu m_noise m_secs
  for ((j = 0; j < ${#case_labels[@]}; j++)); do
    for attempt in 1 2 3; do
      wait_quiet
      measure "$i" "$j" "$prefix.case$j.$attempt" "$log"
      if remeasure "$m_noise" "$attempt" "$m_secs"; then continue; fi
      break
    done
    ops[$i,$j]+="$m_ops "
    cpu[$i,$j]+="$m_cpu "
    ccpu[$i,$j]+="$m_ccpu "
    noise[$i,$j]+="$m_noise "
  done
  # A clean exit on SIGTERM is part of what is checked.
  stop_server "${names[$i]}" "$log" 50
}

echo "memcache-bench: up to $rounds rounds x ${#names[@]} servers; memcaslap -T 1" \
  "-c $clients -w $window -t ${duration}s, keys $key_size B, values $size B" >&2
run_rounds "$rounds" "$time_limit" "${#names[@]}"

echo
echo "memcaslap -T 1 -c $clients -w $window -t ${duration}s, keys $key_size B, values $size B;" \
  "$done_rounds rounds; server on CPU 0, memcaslap on CPU 1; $(machine_desc), commit $commit"
echo
echo "| case | keys/request | ${names[0]} ops/s (median) | ${names[1]} ops/s (median) | ratio" \
  "| per-round ratios | ${names[0]} runs | ${names[1]} runs" \
  "| server CPU % (${names[0]}; ${names[1]}) | client CPU % (${names[0]}; ${names[1]})" \
  "| other CPU % (${names[0]}; ${names[1]}) |"
echo "|---|---:|---:|---:|---:|---|---|---|---|---|---|"
for ((j = 0; j < ${#case_labels[@]}; j++)); do
  a="${ops[0,$j]}"
  b="${ops[1,$j]}"
  ma="$(median <<<"$a")"
  mb="$(median <<<"$b")"
  ratio="$(awk -v a="$ma" -v b="$mb" 'BEGIN { printf "%.2f", a / b }')"
  echo "| ${case_labels[$j]} | ${case_keys[$j]} | $ma | $mb | $ratio | $(round_ratios "$a" "$b")" \
    "| $(as_list "$a") | $(as_list "$b") | $(as_list "${cpu[0,$j]}"); $(as_list "${cpu[1,$j]}")" \
    "| $(as_list "${ccpu[0,$j]}"); $(as_list "${ccpu[1,$j]}")" \
    "| $(as_list "${noise[0,$j]}"); $(as_list "${noise[1,$j]}") |"
done
echo
echo "ops/s counts keys: requests/s of a multi-get is ops/s / keys per request. Get runs" \
  "start with the $clients x $window SETs that fill memcaslap's window."

if [[ "$unclean" == 1 ]]; then
  echo "memcache-bench: there were problems (see above); logs are in $logdir" >&2
  exit 1
fi
echo "memcache-bench: done in ${SECONDS}s" >&2
