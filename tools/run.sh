#!/usr/bin/env bash
# Installs what is missing, builds the release binary into build-opt/ and starts
# damselfly in the foreground with its defaults (RESP on 6379, memcached on 11211).
# Arguments go to the server and override those:
#   tools/run.sh --port=7000 --proactor_threads=2
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh --build-only
BUILD_JOBS="${BUILD_JOBS:-$(nproc)}" tools/build.sh opt damselfly
exec build-opt/damselfly --memcached_port=11211 "$@"
