#!/usr/bin/env bash
# Configures and builds one flavour of the tree.
# Usage: tools/build.sh opt|dbg|asan [ninja targets...]
#   opt  -> build-opt/  (Release)
#   dbg  -> build-dbg/  (Debug)
#   asan -> build-asan/ (Debug + AddressSanitizer + UBSan)
set -euo pipefail
cd "$(dirname "$0")/.."

flavour="${1:-opt}"
shift || true
case "$flavour" in
  opt)  dir=build-opt;  args=(-DCMAKE_BUILD_TYPE=Release) ;;
  dbg)  dir=build-dbg;  args=(-DCMAKE_BUILD_TYPE=Debug) ;;
  asan) dir=build-asan; args=(-DCMAKE_BUILD_TYPE=Debug -DSANITIZE=ON) ;;
  *) echo "usage: $0 opt|dbg|asan [targets...]" >&2; exit 2 ;;
esac

jobs="${BUILD_JOBS:-$(nproc)}"
if [[ ! -f "$dir/build.ninja" ]]; then
  cmake -S . -B "$dir" -G Ninja "${args[@]}"
fi
cmake --build "$dir" -j "$jobs" ${@:+--target "$@"}
