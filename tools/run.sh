#!/usr/bin/env bash
# Installs what is missing, builds the release binary into build-opt/ and starts
# damselfly in the foreground with its defaults (RESP on 6379, memcached on 11211).
# Arguments go to the server and override those; a Redis configuration file comes first:
#   tools/run.sh --port=7000 --proactor_threads=2
#   tools/run.sh /etc/redis/redis.conf --loglevel warning
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh --build-only
BUILD_JOBS="${BUILD_JOBS:-$(nproc)}" tools/build.sh opt damselfly
config=()
if [[ $# -gt 0 && ( "$1" != -* || "$1" == "-" ) ]]; then
  config=("$1")
  shift
fi
exec build-opt/damselfly "${config[@]}" --memcached_port=11211 "$@"
