#!/usr/bin/env bash
# Checks that an idle proactor pool sleeps: starts the helio echo server with 2 threads
# (io_uring, then epoll), leaves it idle for SECONDS (default 10) and reads its CPU time
# from /proc/PID/stat. Fails when either used 1% of a CPU or more.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${SECONDS_IDLE:-10}"
bin=build-opt/helio/examples/echo_server
[[ -x $bin ]] || tools/build.sh opt echo_server >/dev/null

ticks=$(getconf CLK_TCK)
status=0
for mode in uring epoll; do
  flags=(--proactor_threads=2 --port=0)
  [[ $mode == epoll ]] && flags+=(--force_epoll)
  "$bin" "${flags[@]}" 2>/dev/null &
  pid=$!
  sleep 0.5  # start-up is not idleness
  # Fields 14 and 15 of /proc/PID/stat: user and system time in clock ticks.
  read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
  sleep "$seconds"
  read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
  kill "$pid"; wait "$pid" || true
  used=$(( (u1 - u0) + (s1 - s0) ))
  pct=$(awk -v t="$used" -v hz="$ticks" -v s="$seconds" 'BEGIN {printf "%.2f", 100 * t / hz / s}')
  echo "idle $mode pool, 2 threads, ${seconds}s: $used ticks of CPU = ${pct}% of one CPU"
  awk -v p="$pct" 'BEGIN {exit !(p < 1.0)}' || status=1
done
exit $status
