#!/usr/bin/env bash
# Configures and builds one flavour of the tree.
# Usage: tools/build.sh opt|dbg|asan|fuzz [ninja targets...]
#   opt  -> build-opt/  (Release)
#   dbg  -> build-dbg/  (Debug)
#   asan -> build-asan/ (Debug + AddressSanitizer + UBSan)
#   fuzz -> build-fuzz/ (clang, libFuzzer + ASAN + UBSan, Debug at -O1; FUZZ_CC/FUZZ_CXX pick
#           the compiler); without targets it builds the fuzzers only (tests/fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."

flavour="${1:-opt}"
shift || true
case "$flavour" in
  opt)  dir=build-opt;  args=(-DCMAKE_BUILD_TYPE=Release) ;;
  dbg)  dir=build-dbg;  args=(-DCMAKE_BUILD_TYPE=Debug) ;;
  asan) dir=build-asan; args=(-DCMAKE_BUILD_TYPE=Debug -DSANITIZE=ON) ;;
  fuzz) dir=build-fuzz
        args=(-DCMAKE_BUILD_TYPE=Debug -DFUZZ=ON
              -DCMAKE_C_COMPILER="${FUZZ_CC:-clang-14}" -DCMAKE_CXX_COMPILER="${FUZZ_CXX:-clang++-14}")
        [[ $# -gt 0 ]] || set -- fuzzers ;;
  *) echo "usage: $0 opt|dbg|asan|fuzz [targets...]" >&2; exit 2 ;;
esac

jobs="${BUILD_JOBS:-$(nproc)}"
if [[ ! -f "$dir/build.ninja" ]]; then
  cmake -S . -B "$dir" -G Ninja "${args[@]}"
fi
cmake --build "$dir" -j "$jobs" ${@:+--target "$@"}
