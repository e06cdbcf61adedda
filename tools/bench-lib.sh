# Helpers shared by tools/echo-bench.sh, tools/redis-bench.sh and tools/memory-bench.sh.
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

# bench_cleanup: the EXIT trap that init_logdir installs.
bench_cleanup() {
  if [[ -n "$load_pid" ]]; then kill -TERM "$load_pid" 2>/dev/null || true; fi
  if [[ -n "$server_pid" ]]; then
    kill -KILL "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
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
