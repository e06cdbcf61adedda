#!/usr/bin/env bash
# Instructions the server executes per request, for two damselfly binaries: a measure that
# neighbours on a shared machine do not disturb (unlike requests/s or CPU time). Each
# binary runs under callgrind (epoll, one thread) twice, with N and 3N redis-benchmark
# requests of each test in TESTS; the difference divided by 2N times the number of tests
# is the marginal cost per request, free of start-up and shutdown. Repeats ROUNDS times,
# alternating the binaries.
#
# Usage: tools/instr-ab.sh BASE_BINARY NEW_BINARY
# Environment: N [10000], PIPELINE [32], ROUNDS [2], PORT [6797], SIZE [256], KEYSPACE [1000],
#   BASE_FLAGS, NEW_FLAGS [none]: extra flags for each binary (the two may then be the same
#   binary, e.g. BASE_FLAGS=--compress_values=false),
#   TESTS [set,get]: redis-benchmark's -t list (e.g. hset,lpush,lpop,sadd,zadd)
set -euo pipefail
base="${1:?usage: $0 BASE_BINARY NEW_BINARY}"
new="${2:?usage: $0 BASE_BINARY NEW_BINARY}"
n="${N:-10000}"
pipeline="${PIPELINE:-32}"
rounds="${ROUNDS:-2}"
port="${PORT:-6797}"
size="${SIZE:-256}"
keyspace="${KEYSPACE:-1000}"
base_flags="${BASE_FLAGS:-}"
new_flags="${NEW_FLAGS:-}"
tests="${TESTS:-set,get}"
IFS=, read -r -a test_list <<<"$tests"
per_run=${#test_list[@]}  # tests per run: each sends N (or 3N) requests
out="$(mktemp -d /tmp/instr-ab.XXXXXX)"
trap 'rm -rf "$out"' EXIT

# total_instructions <binary> <requests> <flags>: callgrind's total for one server run.
total_instructions() {
  # shellcheck disable=SC2086 # the flags are split on purpose
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$1" $3 --proactor_threads=1 \
    --force_epoll --port="$port" --bind=127.0.0.1 --logtostderr >"$out/server.log" 2>&1 &
  local pid=$! i
  for i in $(seq 1 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.2
  done
  redis-benchmark -p "$port" -t "$tests" -c 10 -d "$size" -r "$keyspace" -n "$2" \
    -P "$pipeline" -q >/dev/null 2>&1
  redis-cli -p "$port" shutdown >/dev/null 2>&1 || true
  wait "$pid" || true
  awk '/^summary:/ { print $2; exit }' "$out/cg.out"
}

for ((r = 1; r <= rounds; r++)); do
  for name in base new; do
    bin="$base" flags="$base_flags"
    [[ "$name" == new ]] && bin="$new" flags="$new_flags"
    small=$(total_instructions "$bin" "$n" "$flags")
    large=$(total_instructions "$bin" $((3 * n)) "$flags")
    echo "round $r $name: $(((large - small) / (2 * per_run * n))) instructions per request" \
      "($tests, -P $pipeline, -d $size)"
  done
done
