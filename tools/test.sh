#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: unit tests (CTest) in the
# release and the ASAN+UBSan builds, then the integration tests (pytest) when present.
# Usage: tools/test.sh [--quick]   (--quick: release build only, no sanitizers, no fuzzing,
#                                   no container)
# Without --quick it also runs each libFuzzer target for FUZZ_SECONDS (default 30) from the
# committed seeds (tools/fuzz.sh: a clang build in build-fuzz/; a crash fails the run), and
# ends with tools/docker-test.sh (the Docker image built and checked with podman) when
# ../shared/tools/docker-check is there (or DOCKER_CHECK names it).
# A sanitizer report fails the run (halt_on_error, and UBSan without recovery).
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[[ "${1:-}" == "--quick" ]] && quick=1

tools/install-deps.sh
export BUILD_JOBS="${BUILD_JOBS:-2}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"

flavours=(opt)
[[ $quick -eq 1 ]] || flavours+=(asan)

for flavour in "${flavours[@]}"; do
  echo "=== build ($flavour) ==="
  tools/build.sh "$flavour"
  echo "=== unit tests ($flavour) ==="
  ctest --test-dir "build-$flavour" --output-on-failure -j "$BUILD_JOBS" --timeout 300
done

if compgen -G "tests/*_test.py" >/dev/null || compgen -G "tests/test_*.py" >/dev/null; then
  for flavour in "${flavours[@]}"; do
    echo "=== integration tests ($flavour) ==="
    # The application tests (marked apps: RQ, Celery, Sidekiq and BullMQ workers, redis-py
    # locks) take seconds each and exercise the same server paths as the others: release
    # build only.
    select=()
    [[ "$flavour" == opt ]] || select=(-m "not apps")
    DAMSELFLY_BUILD_DIR="build-$flavour" /usr/bin/python3 -m pytest -q "${select[@]}" tests/
  done
fi

if [[ $quick -eq 0 ]]; then
  echo "=== fuzz smoke run ==="
  tools/fuzz.sh all "${FUZZ_SECONDS:-30}"
  echo "=== container test ==="
  if [[ -x "${DOCKER_CHECK:-../shared/tools/docker-check/check.sh}" ]]; then
    tools/docker-test.sh
  else
    echo "skipped: no docker-check at ${DOCKER_CHECK:-../shared/tools/docker-check/check.sh}"
  fi
fi
