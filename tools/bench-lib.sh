# Helpers shared by the benchmark scripts (tools/*-bench.sh).
# Sourced, not run: source "$(dirname "$0")/bench-lib.sh" (right after `set -euo pipefail`).
# The benchmarks pin the server to CPU 0 and the client to CPU 1; the helpers work with
# these globals of the calling script:
#   quiet_max, quiet_budget  "other CPU" threshold (%) and the seconds left to spend on it
#   logdir, keep_logs        the run's log directory, and 1 to keep it at exit
#   server_pid, load_pid     the running server and client (empty when none)
#   unclean                  set to 1 by stop_server when a server ignored SIGTERM

bench_name="$(basename "$0" .sh)"  # prefix of messages: echo-bench, redis-bench, ...
clk_tck="$(getconf CLK_TCK)"

# die_usage <message>: prints "<bench>: <message>" to stderr and exits 2.
die_usage() { echo "$bench_name: $1" >&2; exit 2; }

# require_counts <value>...: die_usage unless every value is a positive whole number.
require_counts() {
  local v
  for v in "$@"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || die_usage "bad number '$v'"
  done
}

# require_quiet_budget: die_usage unless quiet_budget is a whole number (0 allowed).
require_quiet_budget() {
  [[ "$quiet_budget" =~ ^[0-9]+$ ]] || die_usage "bad QUIET_BUDGET '$quiet_budget'"
}

# require_two_cpus <client>: die_usage unless the machine has CPUs 0 and 1.
require_two_cpus() {
  [[ "$(nproc)" -ge 2 ]] || die_usage "needs 2 CPUs (server on CPU 0, $1 on CPU 1)"
}

# require_commands <command>...: die_usage unless every command is on PATH (or a path).
require_commands() {
  local b
  for b in "$@"; do
    command -v "$b" >/dev/null || die_usage "'$b' not found"
  done
}

# init_logdir: creates logdir (/tmp/<bench>.XXXXXX), sets keep_logs=0 and empty server_pid
# and load_pid, and installs the traps: on exit, TERM load_pid, KILL and reap server_pid,
# and remove logdir unless keep_logs is 1; SIGINT and SIGTERM exit 130.
init_logdir() {
  logdir="$(mktemp -d "/tmp/$bench_name.XXXXXX")"
  keep_logs=0
  server_pid=""
  load_pid=""
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

# bench_cleanup: the EXIT trap that init_logdir installs. Kills server_pid, and the pids in
# other_server_pids (a script that keeps more than one server running sets it).
bench_cleanup() {
  if [[ -n "$load_pid" ]]; then kill -TERM "$load_pid" 2>/dev/null || true; fi
  local pid
  for pid in "$server_pid" ${other_server_pids:-}; do
    if [[ -n "$pid" ]]; then
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  if [[ "$keep_logs" == 0 ]]; then rm -rf "$logdir"; fi
}

# build_release <what> <target>...: from the repository root, builds the ninja targets with
# tools/build.sh opt into logdir/build.log; on failure keeps the logs, shows the last 30
# lines and exits 1.
build_release() {
  local what=$1
  shift
  echo "building release $what..." >&2
  if ! tools/build.sh opt "$@" >"$logdir/build.log" 2>&1; then
    keep_logs=1
    tail -n 30 "$logdir/build.log" >&2
    echo "$bench_name: build failed (full log: $logdir/build.log)" >&2
    exit 1
  fi
}

# built_commit: prints HEAD's short hash ('?' outside git), plus " + uncommitted changes"
# when src, helio or CMakeLists.txt differ from it. Others may commit while a run goes on.
built_commit() {
  local commit
  commit="$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
  if [[ -n "$(git status --porcelain -- src helio CMakeLists.txt 2>/dev/null)" ]]; then
    commit+=" + uncommitted changes"
  fi
  echo "$commit"
}

# machine_desc: prints "<n> CPUs, <CPU model>, kernel <release>, <UTC date>".
machine_desc() {
  echo "$(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p'), kernel $(uname -r), $(date -u +%F)"
}

# port_open <port>: true if something accepts connections on 127.0.0.1:<port>.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# require_ports_free <exit status> <port>...: exits with <exit status>, saying so, if
# something already listens on one of the ports.
require_ports_free() {
  local status=$1 p
  shift
  for p in "$@"; do
    if port_open "$p"; then
      echo "$bench_name: port $p is already in use; set BASE_PORT" >&2
      exit "$status"
    fi
  done
}

# now_ns: prints the wall-clock time in nanoseconds.
now_ns() { date +%s%N; }

# proc_ticks <pid>: prints utime + stime of a process, in clock ticks.
proc_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# child_ticks: prints cutime + cstime of this shell: the CPU time of the children it has
# waited for, in clock ticks.
child_ticks() { awk '{ print $16 + $17 }' "/proc/$$/stat"; }

# cpu01_busy: prints the busy (not idle or iowait) clock ticks of CPUs 0 and 1 together.
cpu01_busy() {
  awk '$1 == "cpu0" || $1 == "cpu1" { b += $2 + $3 + $4 + $7 + $8 + $9 } END { print b }' \
    /proc/stat
}

# pct <ticks> <nanoseconds> <cpus>: prints <ticks> as a whole percentage of <cpus> CPUs'
# time over <nanoseconds> (negative values print as 0).
pct() { awk -v t="$1" -v ns="$2" -v n="$3" -v hz="$clk_tck" \
  'BEGIN { v = 100 * t / (hz * ns / 1e9 * n); printf "%.0f", v < 0 ? 0 : v }'; }

# wait_quiet [<verb>]: waits, charging quiet_budget 2 s per wait, until CPUs 0-1 are at most
# quiet_max % busy over 0.5 s; once the budget is spent it returns anyway, saying it goes on
# <verb> (default "measuring") anyway.
wait_quiet() {
  local verb="${1:-measuring}" b0 t0 busy
  while true; do
    b0=$(cpu01_busy)
    t0=$(now_ns)
    sleep 0.5
    busy=$(pct $(($(cpu01_busy) - b0)) $(($(now_ns) - t0)) 2)
    if ((busy <= quiet_max)); then return; fi
    if ((quiet_budget <= 0)); then
      echo "  (CPUs 0-1 are $busy% busy with other work; $verb anyway)" >&2
      return
    fi
    echo "  (CPUs 0-1 are $busy% busy with other work; waiting)" >&2
    sleep 1
    quiet_budget=$((quiet_budget - 2))
  done
}

# remeasure <other CPU %> <attempt> <run seconds>: true, after saying so and charging the
# run's seconds to quiet_budget, if a run of attempt <attempt> (of 3) was disturbed (other
# CPU above quiet_max) and budget is left; false if its result stands.
remeasure() {
  if (($1 > quiet_max && $2 < 3 && quiet_budget > 0)); then
    echo "  (other CPU was $1% during that run; measuring again)" >&2
    quiet_budget=$((quiet_budget - $3))
    return 0
  fi
  return 1
}

# start_server <command line> <log>: starts the command line (eval'd, so quoted words such
# as --save '' stay one argument) in the background pinned to CPU 0, output to <log>, and
# sets server_pid to the server's own pid.
start_server() {
  eval "exec taskset -c 0 $1" >"$2" 2>&1 &
  server_pid=$!
}

# wait_listening <port> <polls>: waits, polling every 0.1 s, until port_open <port>; false
# if server_pid exits first or <polls> polls pass.
wait_listening() {
  local waited=0
  until port_open "$1"; do
    if ! kill -0 "$server_pid" 2>/dev/null || ((waited >= $2)); then return 1; fi
    sleep 0.1
    waited=$((waited + 1))
  done
}

# start_listening <command line> <log> <port> <pin: 1|0> <what>: starts the server, pinned
# to CPU 0 when <pin> is 1 (start_server) or free to use both CPUs (a multi-threaded one),
# and waits up to 10 s for <port>; if it does not listen, shows its log, says which <what>
# failed and exits 1 (keeping the logs).
start_listening() {
  if [[ "$4" == 1 ]]; then
    start_server "$1" "$2"
  else
    eval "exec $1" >"$2" 2>&1 &
    server_pid=$!
  fi
  if ! wait_listening "$3" 100; then
    keep_logs=1
    show_server_log "$2"
    echo "$bench_name: $5 did not start: $1" >&2
    exit 1
  fi
}

# stop_server <name> <log> <polls>: SIGTERMs server_pid and waits up to <polls> x 0.1 s for
# it to exit; if it does not, says so, KILLs it and sets unclean=1 and keep_logs=1. Reaps it
# and clears server_pid.
stop_server() {
  kill -TERM "$server_pid" 2>/dev/null || true
  local n=0
  while kill -0 "$server_pid" 2>/dev/null && ((n < $3)); do
    sleep 0.1
    n=$((n + 1))
  done
  if kill -0 "$server_pid" 2>/dev/null; then
    echo "$bench_name: $1 ignored SIGTERM for $(($3 / 10))s; killed it (log: $2)" >&2
    kill -KILL "$server_pid" 2>/dev/null || true
    unclean=1
    keep_logs=1
  fi
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

# show_server_log <log>: prints the last 20 lines of a server log to stderr, indented.
show_server_log() {
  echo "  server log ($1), last lines:" >&2
  tail -n 20 "$1" | sed 's/^/    /' >&2
}

# median: reads space-separated values on stdin and prints the median of the whole numbers
# among them (mean of the middle two, rounded, for an even count; empty if none).
median() {
  tr ' ' '\n' | { grep -E '^[0-9]+$' || true; } | sort -n |
    awk '{ v[NR] = $1 }
         END { if (NR == 0) print ""; else if (NR % 2) print v[(NR + 1) / 2];
               else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# as_list <values>: prints space-separated values as "a, b, c".
as_list() { sed 's/ *$//; s/ /, /g' <<<"$1"; }

# round_ratios <a values> <b values>: prints, as_list style, a[r] / b[r] per round r to two
# decimals, "-" where either is not a whole number.
round_ratios() {
  local -a a b
  local r out=""
  read -ra a <<<"$1"
  read -ra b <<<"$2"
  for ((r = 0; r < ${#a[@]}; r++)); do
    if [[ "${a[r]}" =~ ^[0-9]+$ && "${b[r]:-}" =~ ^[0-9]+$ ]]; then
      out+="$(awk -v x="${a[r]}" -v y="${b[r]}" 'BEGIN { printf "%.2f", x / y }') "
    else
      out+="- "
    fi
  done
  as_list "$out"
}

# run_rounds <rounds> <time limit s> <servers>: calls the caller's run_server <index>
# <round> for every server in every round, the first server alternating per round, and
# starts no round that would likely end after the time limit. Sets done_rounds.
run_rounds() {
  local rounds=$1 time_limit=$2 servers=$3 r k round_start longest_round=0
  done_rounds=0
  for ((r = 1; r <= rounds; r++)); do
    if ((r > 1 && SECONDS + longest_round > time_limit)); then
      echo "$bench_name: stopping after $done_rounds rounds: another would likely end after" \
        "TIME_LIMIT=${time_limit}s (${SECONDS}s so far, the longest round took" \
        "${longest_round}s)" >&2
      break
    fi
    round_start=$SECONDS
    echo "  round $r" >&2
    for ((k = 0; k < servers; k++)); do
      run_server $(((r - 1 + k) % servers)) "$r"
    done
    done_rounds=$r
    if ((SECONDS - round_start > longest_round)); then longest_round=$((SECONDS - round_start)); fi
  done
}

########################################################################################
# Side-by-side collection benchmarks: tools/collections-bench.sh and tools/types-bench.sh.
# Besides the globals above, these use the calling script's
#   names, ports, cmds         per server index (0: damselfly, 1: the baseline): name,
#                              port, command line
#   redis_cli, loader          redis-cli and tools/coll_load
#   notes (declare -A), unclean, time_limit, datasets, scale, commit
#   ds_type, ds_keys, ds_members, ds_per, ds_prefix, ds_est  per mem dataset: type, keys,
#                              members per key and per command, key prefix, and an upper
#                              estimate of redis-server's bytes per member; optionally
#                              ds_style, coll_load's --style (default short)
# and its function key_size <port> <key> (a key's member count, for mem_server's check).

# check_loader: sets tput_loader from LOADER (resp_load, the default, or redis-benchmark),
# or dies. setup_loader (after setup_pair): resp_load, the path of tools/resp_load, built
# unless SKIP_BUILD=1 when the tput part will use it. Use the caller's parts.
check_loader() {
  tput_loader="${LOADER:-resp_load}"
  [[ "$tput_loader" == resp_load || "$tput_loader" == redis-benchmark ]] ||
    die_usage "unknown LOADER '$tput_loader' (resp_load, redis-benchmark)"
}
setup_loader() {
  resp_load="$bin/tools/resp_load"
  if [[ "$tput_loader" == resp_load && " $parts " == *" tput "* ]]; then
    if [[ "${SKIP_BUILD:-0}" != 1 ]]; then build_release resp_load resp_load; fi
    [[ -x "$resp_load" ]] || die_usage "$resp_load is missing (build it, or unset SKIP_BUILD)"
  fi
}

# test_sent <test> <n>: the requests one load invocation of n sends, for measure's CPU per
# request; a script whose load sends more redefines it.
test_sent() { echo "$2"; }

# measure <server index> <test> <pipeline> <n> <log prefix> <server log>: one invocation
# of the load (tput_loader) with the caller's test_opts <test> (redis-benchmark options;
# only -r carries over to resp_load, as --rand) and test_cmd <test>, clients connections,
# size bytes of value (-d, when the caller has a size), load_timeout seconds at most. Sets
# m_status (ok, n/a, failed), m_reason, m_rps, m_cpu, m_ns, m_noise, m_secs.
measure() {
  local i=$1 t=$2 p=$3 n=$4 out="$5.out" err="$5.err" p0 b0 c0 t0 dt rc=0 server_ticks client_ticks
  local args load_bin
  if [[ "$tput_loader" == resp_load ]]; then
    load_bin="$resp_load"
    args="--port=${ports[$i]} --conns=$clients --requests=$n --pipeline=$p"
    args+=" $(test_opts "$t" | sed -n 's/.*-r \([0-9]*\).*/--rand=\1/p') $(test_cmd "$t")"
  else
    load_bin="$redis_benchmark"
    args="-p ${ports[$i]} $(test_opts "$t") -c $clients ${size:+-d $size} -n $n -P $p --csv"
    args+=" $(test_cmd "$t")"
  fi
  m_status=ok m_reason="" m_rps="" m_cpu="" m_ns="" m_noise="" m_secs=0
  # The server may have died since the last test (or die now): 0 then, and server_gone
  # below tells.
  p0=$(proc_ticks "$server_pid" 2>/dev/null) || p0=0
  c0=$(child_ticks)
  b0=$(cpu01_busy)
  t0=$(now_ns)
  # args is a word list on purpose, and XADD's "*" must stay a word: no globbing here.
  local -
  set -f
  # shellcheck disable=SC2086
  timeout "$load_timeout" taskset -c 1 "$load_bin" $args >"$out" 2>"$err" &
  load_pid=$!
  wait "$load_pid" || rc=$?
  load_pid=""
  dt=$(($(now_ns) - t0))
  m_secs=$(((dt + 999999999) / 1000000000))
  if server_gone "$i" "$6" "$t -P $p"; then
    m_status=failed m_reason="server died"
    note "reproduce: taskset -c 0 ${cmds[$i]} & taskset -c 1 $load_bin $args"
    return
  fi
  server_ticks=$(proc_ticks "$server_pid" 2>/dev/null) || server_ticks=$p0
  server_ticks=$((server_ticks - p0))
  client_ticks=$(($(child_ticks) - c0))
  if ((rc == 124)); then
    m_status=failed m_reason="$tput_loader did not finish in ${load_timeout}s (hang?)"
    note "${names[$i]}: $t -P $p: $m_reason; reproduce: taskset -c 0 ${cmds[$i]} &" \
      "taskset -c 1 $load_bin $args"
    unclean=1
    keep_logs=1
    return
  fi
  # Both stop at the first error reply: redis-benchmark says "Error from server: ...",
  # resp_load "resp_load: error reply: ...".
  if grep -qE '^(Error from server|resp_load: error reply): ' "$err"; then
    m_status=n/a
    m_reason="$(sed -nE 's/^(Error from server|resp_load: error reply): //p' "$err" | head -n 1 |
      sed 's/, with args beginning with:.*//; s/ *$//')"
    return
  fi
  # redis-benchmark warns when CONFIG GET is not supported; anything else on stderr is an
  # error.
  if ((rc != 0)) || grep -qv '^WARNING: Could not fetch server CONFIG' "$err"; then
    m_status=failed m_reason="$tput_loader failed (exit status $rc): $(head -c 200 "$err")"
    note "${names[$i]}: $t -P $p: $m_reason"
    unclean=1
    keep_logs=1
    return
  fi
  if [[ "$tput_loader" == resp_load ]]; then
    m_rps=$(sed -n 's/^requests_per_sec=\([0-9]*\).*/\1/p' "$out")
  else
    # The last CSV row is the test's (lrange_100 prints its preparing LPUSH row first).
    m_rps=$(tail -n 1 "$out" | awk -F'"' '{ printf "%.0f", $4 }')
  fi
  if ! [[ "$m_rps" =~ ^[1-9][0-9]*$ ]]; then
    m_status=failed m_reason="no result in the $tput_loader output"
    note "${names[$i]}: $t -P $p: $m_reason ($out)"
    unclean=1
    keep_logs=1
    return
  fi
  m_cpu=$(pct "$server_ticks" "$dt" 1)
  # Server CPU time per request.
  m_ns=$(awk -v t="$server_ticks" -v hz="$clk_tck" -v n="$(test_sent "$t" "$n")" \
    'BEGIN { printf "%.0f", t / hz * 1e9 / n }')
  m_noise=$(pct $(($(cpu01_busy) - b0 - server_ticks - client_ticks)) "$dt" 2)
}

# note <text>: remembers a line for the notes under the tables.
note() { notes["$1"]=1; }

# cli <port> <args...>: one redis-cli command (10 s at most); prints the reply without CRs,
# or redis-cli's complaint (never fails: the callers check what it printed).
cli() {
  local port=$1
  shift
  timeout 10 "$redis_cli" -p "$port" "$@" 2>&1 | tr -d '\r' || true
}

# load <port> <time limit s> <coll_load args...>: runs tools/coll_load pinned to CPU 1 in the
# background (so that a signal to this script is acted on at once). Returns its exit status
# (3: an error reply, whose text is in $logdir/load.err; 124: the time limit).
load() {
  local port=$1 secs=$2 rc=0
  shift 2
  timeout "$secs" taskset -c 1 "$loader" --port="$port" "$@" >"$logdir/load.out" \
    2>"$logdir/load.err" &
  load_pid=$!
  wait "$load_pid" || rc=$?
  load_pid=""
  return "$rc"
}

# The first error the loader met, without the arguments Redis quotes after an unknown
# command (they differ per run and would repeat the note).
load_error() { sed -n 's/^coll_load: //p' "$logdir/load.err" | head -n 1 | sed 's/, with args beginning with:.*//'; }

# start <server index> <log>: starts the server and waits until it listens; false if it
# does not (then server_pid is cleared and the log shown).
start() {
  require_ports_free 1 "${ports[$1]}"
  start_server "${cmds[$1]}" "$2"
  if ! wait_listening "${ports[$1]}" 100; then
    echo "$bench_name: ${names[$1]} did not start listening on port ${ports[$1]}" >&2
    show_server_log "$2"
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    unclean=1
    keep_logs=1
    return 1
  fi
}

# server_gone <server index> <log> <what>: if the server has died, reports it, marks the run
# unclean, clears server_pid and returns true.
server_gone() {
  local rc=0
  if kill -0 "$server_pid" 2>/dev/null; then return 1; fi
  wait "$server_pid" 2>/dev/null || rc=$?
  server_pid=""
  echo "$bench_name: ${names[$1]} died during $3 (exit status $rc)" >&2
  show_server_log "$2"
  note "${names[$1]} died during $3 (exit status $rc; log $2)"
  unclean=1
  keep_logs=1
  return 0
}

# A median that says n/a when no round produced a number.
median_or() {
  local m
  m="$(median <<<"$1")"
  if [[ -n "$m" ]]; then echo "$m"; elif [[ "$1" == *failed* ]]; then echo failed; else echo n/a; fi
}
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    if (a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b == 0) print "n/a"; else printf "%.2f", a / b }'
}
# verdict <ratio> <op> <target>: met, missed or "-" (no ratio).
verdict() {
  awk -v r="$1" -v op="$2" -v t="$3" 'BEGIN {
    if (r !~ /^[0-9.]+$/) print "-";
    else if ((op == ">=" && r >= t) || (op == "<=" && r <= t)) print "met"; else print "missed" }'
}

# proc_kb <pid> <field>: a /proc/<pid>/status field in kB (VmRSS...).
proc_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
# used_memory <port>: INFO's used_memory in bytes, or "-".
used_memory() {
  cli "$1" info memory | awk -F: '$1 == "used_memory" { v = $2 } END { print v == "" ? "-" : v }'
}

# mem_server <server index> <dataset>: starts the server, fills and checks it (DBSIZE, and
# key_size of the first and the last key), records the results in r_*, stops it.
mem_server() {
  local i=$1 d=$2 port=${ports[$1]} log="$logdir/mem.$2.$1.server.log"
  local keys=${ds_keys[$d]} m=${ds_members[$d]} total need_kb avail_kb budget
  total=$((keys * m))
  r_status[$i,$d]=skipped
  if ((SECONDS >= time_limit)); then
    note "$d: ${names[$i]}: skipped: TIME_LIMIT=${time_limit}s reached"
    return
  fi
  need_kb=$((total * ds_est[$d] / 1024 + keys / 4 + 1048576))
  avail_kb=$(awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo)
  if ((avail_kb < need_kb)); then
    note "$d: ${names[$i]}: skipped: needs up to $((need_kb / 1024)) MiB, only $((avail_kb / 1024)) MiB available"
    return
  fi
  echo "  $d: ${names[$i]}: $keys ${ds_type[$d]} keys x $m members" >&2
  r_status[$i,$d]=failed
  start "$i" "$log" || { note "$d: ${names[$i]} did not start (log $log)"; return; }
  sleep 1  # let start-up allocations settle
  if server_gone "$i" "$log" "its start"; then return; fi
  r_rss0[$i,$d]=$(proc_kb "$server_pid" VmRSS)
  r_used0[$i,$d]=$(used_memory "$port")

  wait_quiet filling
  local p0 c0 b0 t0 dt rc=0 server_ticks client_ticks
  p0=$(proc_ticks "$server_pid")
  c0=$(child_ticks)
  b0=$(cpu01_busy)
  t0=$(now_ns)
  budget=$((time_limit - SECONDS))
  ((budget > 10)) || budget=10
  local style=short
  # (A script without ds_style has no such array: its names would read as arithmetic.)
  if declare -p ds_style &> /dev/null; then style=${ds_style[$d]:-short}; fi
  load "$port" "$budget" --type="${ds_type[$d]}" --style="$style" --prefix="${ds_prefix[$d]}" \
    --keys="$keys" --members="$m" --per-command="${ds_per[$d]}" || rc=$?
  dt=$(($(now_ns) - t0))
  if server_gone "$i" "$log" "the fill of $d"; then
    note "reproduce: taskset -c 0 ${cmds[$i]} & $loader --port=$port --type=${ds_type[$d]} --style=$style --prefix=${ds_prefix[$d]} --keys=$keys --members=$m --per-command=${ds_per[$d]}"
    return
  fi
  server_ticks=$(proc_ticks "$server_pid" 2>/dev/null) || server_ticks=$p0
  server_ticks=$((server_ticks - p0))
  client_ticks=$(($(child_ticks) - c0))
  r_secs[$i,$d]=$(awk -v ns="$dt" 'BEGIN { printf "%.1f", ns / 1e9 }')
  r_noise[$i,$d]=$(pct $(($(cpu01_busy) - b0 - server_ticks - client_ticks)) "$dt" 2)
  if ((rc == 3)); then
    r_status[$i,$d]=n/a
    note "$d: ${names[$i]}: n/a: $(load_error)"
  elif ((rc == 124)); then
    r_status[$i,$d]="time limit"
    note "$d: ${names[$i]}: the fill was stopped at TIME_LIMIT=${time_limit}s, after ${r_secs[$i,$d]} s (raise TIME_LIMIT, or the server hung)"
    unclean=1
    keep_logs=1
  elif ((rc != 0)); then
    note "$d: ${names[$i]}: the fill failed (exit status $rc): $(head -c 200 "$logdir/load.err")"
    unclean=1
    keep_logs=1
  else
    # The server kept what it acknowledged: every key, with every member.
    local dbsize first last
    dbsize="$(cli "$port" dbsize)"
    first="$(key_size "$port" "${ds_prefix[$d]}0")"
    last="$(key_size "$port" "${ds_prefix[$d]}$((keys - 1))")"
    if [[ "$dbsize" == "$keys" && "$first" == "$m" && "$last" == "$m" ]]; then
      r_status[$i,$d]=ok
    else
      r_status[$i,$d]=wrong
      note "$d: ${names[$i]}: DBSIZE '$dbsize' (expected $keys), first and last key's size '$first', '$last' (expected $m)"
      unclean=1
      keep_logs=1
    fi
    sleep 1  # the final numbers after a moment's rest (e.g. incremental rehashing)
    if server_gone "$i" "$log" "the checks after the fill of $d"; then
      r_status[$i,$d]=failed
      return
    fi
    r_rss1[$i,$d]=$(proc_kb "$server_pid" VmRSS)
    r_used1[$i,$d]=$(used_memory "$port")
    echo "    filled in ${r_secs[$i,$d]} s; RSS +$(((r_rss1[$i,$d] - r_rss0[$i,$d]) / 1024)) MiB" >&2
  fi
  # Freeing gigabytes can take a while.
  stop_server "${names[$i]}" "$log" 600
}

# delta_mib <status> <after> <before> <unit bytes>: (after - before) * unit in MiB, or the status.
delta_mib() {
  if [[ "$1" != ok ]]; then echo "$1"; return; fi
  awk -v a="$2" -v b="$3" -v u="$4" 'BEGIN {
    if (a !~ /^[0-9]+$/ || b !~ /^[0-9]+$/) print "-"; else printf "%.1f", (a - b) * u / 1048576 }'
}
# per_member <MiB> <count>: bytes per member, or "-".
per_member() {
  awk -v m="$1" -v n="$2" 'BEGIN { if (m !~ /^[0-9.]+$/) print "-"; else printf "%.1f", m * 1048576 / n }'
}

# if_ok <server index> <dataset> <value>: the value if the server's fill succeeded, else "-".
if_ok() { if [[ "${r_status[$1,$2]}" == ok ]]; then echo "$3"; else echo "-"; fi; }

# run_mem <member> <members> <target> <fill>: the mem part: fills each of datasets into
# each server in turn (the first server alternating per dataset) and prints the table;
# <member>/<members> name what a key holds ("entry"/"entries"), <target> is the largest RSS
# ratio that meets the target, <fill> how the loader fills (the table's caption).
run_mem() {
  local member=$1 members=$2 target=$3 fill=$4 d k=0 s
  # Results per server index and dataset: status (ok, n/a, skipped, failed, wrong), RSS
  # before/after (kB), used_memory before/after (bytes), fill seconds, other CPU % of the
  # fill.
  declare -gA r_status=() r_rss0=() r_rss1=() r_used0=() r_used1=() r_secs=() r_noise=()
  echo "$bench_name: mem: datasets $datasets, SCALE=$scale" >&2
  for d in $datasets; do
    for ((s = 0; s < 2; s++)); do mem_server $(((k + s) % 2)) "$d"; done
    k=$((k + 1))
  done

  local scaled="" total rd rr ud ur rt ut
  if [[ "$scale" != 1 ]]; then scaled=" SCALE=$scale: the target is stated for the full datasets."; fi
  echo
  echo "Memory: each dataset loaded into a fresh server by tools/coll_load (${fill}one" \
    "connection, pipelined); $(machine_desc), commit $commit.$scaled"
  echo
  echo "| dataset | keys x $members | ${names[0]} RSS delta, MiB | redis RSS delta, MiB" \
    "| RSS ratio | target | ${names[0]} used_memory delta, MiB | redis used_memory delta, MiB" \
    "| used_memory ratio | RSS bytes/$member (${names[0]}; redis) | fill s (${names[0]}; redis)" \
    "| other CPU % (${names[0]}; redis) |"
  echo "|---|---|---:|---:|---:|---|---:|---:|---:|---|---|---|"
  for d in $datasets; do
    total=$((ds_keys[$d] * ds_members[$d]))
    rd="$(delta_mib "${r_status[0,$d]}" "${r_rss1[0,$d]:-}" "${r_rss0[0,$d]:-}" 1024)"
    rr="$(delta_mib "${r_status[1,$d]}" "${r_rss1[1,$d]:-}" "${r_rss0[1,$d]:-}" 1024)"
    ud="$(delta_mib "${r_status[0,$d]}" "${r_used1[0,$d]:-}" "${r_used0[0,$d]:-}" 1)"
    ur="$(delta_mib "${r_status[1,$d]}" "${r_used1[1,$d]:-}" "${r_used0[1,$d]:-}" 1)"
    rt="$(ratio "$rd" "$rr")"
    ut="$(ratio "$ud" "$ur")"
    echo "| $d | ${ds_keys[$d]} x ${ds_members[$d]} | $rd | $rr | **$rt**" \
      "| <= $target: $(verdict "$rt" "<=" "$target") | $ud | $ur | $ut" \
      "| $(per_member "$rd" "$total"); $(per_member "$rr" "$total")" \
      "| $(if_ok 0 "$d" "${r_secs[0,$d]:-}"); $(if_ok 1 "$d" "${r_secs[1,$d]:-}")" \
      "| $(if_ok 0 "$d" "${r_noise[0,$d]:-}"); $(if_ok 1 "$d" "${r_noise[1,$d]:-}") |"
  done
}

# finish_run: prints the notes under the tables; exits 1, saying where the logs are, when
# the run was unclean.
finish_run() {
  if ((${#notes[@]} > 0)); then
    echo
    echo "Notes:"
    echo
    while IFS= read -r line; do echo "- $line"; done < <(printf '%s\n' "${!notes[@]}" | sort)
  fi
  if [[ "$unclean" == 1 ]]; then
    echo "$bench_name: there were problems (see above); logs are in $logdir" >&2
    exit 1
  fi
  echo "$bench_name: done in ${SECONDS}s" >&2
}

# setup_pair: the setup collections-bench.sh and types-bench.sh share, run from the
# repository root: the two servers side by side (names, ports from base_port, cmds; the
# second one the baseline, and with DRY_RUN=1 redis-server in both columns), the log
# directory, the release build of damselfly and coll_load (unless SKIP_BUILD=1), commit,
# unclean and the notes printed under the tables. Uses the caller's base_port, dry_run,
# redis_server and damselfly_flags.
setup_pair() {
  cd "$(dirname "$0")/.."
  bin="$PWD/build-opt"
  loader="$bin/tools/coll_load"
  damselfly_bin="${DAMSELFLY_BIN:-$bin/damselfly}"
  SECONDS=0  # bash's elapsed-time counter, for the time limits

  # The servers, in table order; the second one is the baseline.
  names=("damselfly" "redis-server")
  ports=("$base_port" "$((base_port + 1))")
  cmds=(
    "$damselfly_bin --proactor_threads=1 --port=${ports[0]} --bind=127.0.0.1 --logtostderr $damselfly_flags"
    "$redis_server --port ${ports[1]} --bind 127.0.0.1 --save '' --appendonly no"
  )
  if [[ "$dry_run" == 1 ]]; then
    names[0]="redis-server (dry run)"
    cmds[0]="$redis_server --port ${ports[0]} --bind 127.0.0.1 --save '' --appendonly no"
  fi

  init_logdir  # logdir, keep_logs (set when something failed), server_pid, load_pid
  require_ports_free 1 "${ports[@]}"
  if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    if [[ "$dry_run" == 1 || -n "${DAMSELFLY_BIN:-}" ]]; then
      build_release coll_load coll_load
    else
      build_release "damselfly and coll_load" damselfly coll_load
    fi
  fi
  [[ -x "$loader" ]] || die_usage "$loader is missing (build it, or unset SKIP_BUILD)"
  if [[ "$dry_run" != 1 ]]; then
    [[ -x "$damselfly_bin" ]] || die_usage "$damselfly_bin is missing (build it, or unset SKIP_BUILD)"
  fi
  commit="$(built_commit)"
  if [[ -n "${DAMSELFLY_BIN:-}" && "$dry_run" != 1 ]]; then commit="damselfly from $damselfly_bin"; fi
  unclean=0
  declare -gA notes=()  # problems and n/a reasons to print under the tables, deduplicated
}
