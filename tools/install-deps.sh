#!/usr/bin/env bash
# Installs the Debian 12 packages damselfly needs to build and test. Idempotent and
# non-interactive: packages already present are skipped, so running it twice is cheap.
# Usage: tools/install-deps.sh [--build-only]   (--build-only: skip test peers and clients)
set -euo pipefail

BUILD_PKGS=(
  build-essential cmake ninja-build ccache pkg-config
  liburing-dev libboost-fiber-dev libboost-context-dev
  libabsl-dev libmimalloc-dev libgoogle-glog-dev libgflags-dev libssl-dev
  libgtest-dev libgmock-dev
  liblua5.1-0-dev lua-cjson-dev lua-bitop-dev
  # The fuzz flavour (tools/build.sh fuzz): clang, and its runtime libraries, which hold
  # libFuzzer (-fsanitize=fuzzer) and clang's ASAN/UBSan.
  clang-14 libclang-rt-14-dev
)
# Peers and clients the tests and benchmarks drive (RQ 1.13 and Celery 5.2 are Debian 12's:
# tests/test_apps.py runs their workers; Sidekiq 6.4 too: tests/test_script_apps.py).
TEST_PKGS=(
  redis-server redis-tools memcached libmemcached-tools prometheus
  python3 python3-pytest python3-redis python3-pymemcache python3-prometheus-client
  python3-rq python3-celery ruby-sidekiq
  curl netcat-openbsd procps util-linux
)

test_deps=1
[[ "${1:-}" == "--build-only" ]] && test_deps=0
pkgs=("${BUILD_PKGS[@]}")
((test_deps)) && pkgs+=("${TEST_PKGS[@]}")
# node and npm run BullMQ (tests/test_script_apps.py); a node already installed otherwise
# (a newer one than Debian's) is kept.
if ((test_deps)) && ! { command -v node && command -v npm; } >/dev/null; then
  pkgs+=(nodejs npm)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # Debian's redis-server and memcached packages start system services; tests start their own.
  for svc in redis-server memcached prometheus; do
    if command -v systemctl >/dev/null && systemctl is-active --quiet "$svc" 2>/dev/null; then
      $SUDO systemctl stop "$svc" || true
      $SUDO systemctl disable "$svc" >/dev/null 2>&1 || true
    fi
  done
fi

# The node applications of the tests (BullMQ), at the exact versions of
# tests/apps/package-lock.json, into the git-ignored tests/apps/node_modules; again only
# when the lock file changed since the last install.
apps="$(dirname "$0")/../tests/apps"
if ((test_deps)) && [[ ! "$apps/node_modules/.package-lock.json" -nt "$apps/package-lock.json" ]]
then
  echo "install-deps: npm ci in tests/apps"
  (cd "$apps" && npm ci --no-audit --no-fund --loglevel=error)
fi
