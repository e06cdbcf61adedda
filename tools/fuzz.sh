#!/usr/bin/env bash
# Builds and runs libFuzzer targets (tests/fuzz, docs/fuzzing.md) from the committed
# seeds; fails when a target crashes, leaks, times out or trips a sanitizer.
# Usage: tools/fuzz.sh TARGET|all [SECONDS] [libFuzzer options...]
#   TARGET   resp_parser_fuzz memcache_parser_fuzz http_parser_fuzz rdb_load_fuzz
#            restore_fuzz config_file_fuzz acl_rules_fuzz; "all" runs each in turn
#   SECONDS  per target, default 60
# New inputs go to build-fuzz/corpus/TARGET (kept between runs, git-ignored), crashes to
# build-fuzz/artifacts/. FUZZ_NO_BUILD=1 skips the build.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(resp_parser_fuzz memcache_parser_fuzz http_parser_fuzz rdb_load_fuzz restore_fuzz
         config_file_fuzz acl_rules_fuzz)
target="${1:?usage: $0 TARGET|all [SECONDS] [libFuzzer options...]}"
seconds="${2:-60}"
shift $(($# < 2 ? $# : 2))

if [[ "$target" == all ]]; then
  selected=("${TARGETS[@]}")
elif [[ " ${TARGETS[*]} " == *" $target "* ]]; then
  selected=("$target")
else
  echo "unknown target $target (known: ${TARGETS[*]})" >&2
  exit 2
fi

[[ -n "${FUZZ_NO_BUILD:-}" ]] || tools/build.sh fuzz "${selected[@]}"

# Leaks count as failures; a sanitizer report ends the run with the input saved.
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
mkdir -p build-fuzz/artifacts
for t in "${selected[@]}"; do
  case "$t" in
    rdb_load_fuzz|restore_fuzz) dict=tests/fuzz/rdb.dict ;;
    *) dict="tests/fuzz/$t.dict" ;;
  esac
  mkdir -p "build-fuzz/corpus/$t"
  echo "=== fuzz $t (${seconds}s) ==="
  # -timeout: an input that takes a minute is a hang (inputs take milliseconds, but a
  # machine busy with builds stalled one for 13 s); -rss_limit_mb: one that needs 2 GiB is
  # a memory bomb (the loaders must not allocate what the input only claims).
  "build-fuzz/fuzz/$t" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 \
    -dict="$dict" -artifact_prefix="build-fuzz/artifacts/$t-" -print_final_stats=1 "$@" \
    "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t"
done
