#!/bin/bash
# The image's HEALTHCHECK: sends PING on the RESP port and succeeds on +PONG, or on
# -NOAUTH (a server with requirepass is alive too). Uses bash's /dev/tcp: the image has
# no redis-cli.
port="${DAMSELFLY_port:-${DAMSELFLY_PORT:-6379}}"
exec 3<>"/dev/tcp/127.0.0.1/${port}" || exit 1
printf 'PING\r\n' >&3
IFS= read -r -t 2 reply <&3 || exit 1
[[ "$reply" == "+PONG"* || "$reply" == "-NOAUTH"* ]]
