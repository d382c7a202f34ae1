#!/bin/bash
# The container's health check: GET PATH (/healthz by default, or /readyz)
# on the daemon's HTTP port, with bash's /dev/tcp (the runtime image has no
# HTTP client, and needs none). Exit 0 when the daemon answers 200 within
# 2 seconds, else 1.
#
#   collisiond-healthcheck            liveness: the process serves HTTP (the
#                                     image's HEALTHCHECK; also during recovery)
#   collisiond-healthcheck /readyz    readiness: recovered and not draining
#                                     (deploy/compose.yml, for depends_on)
path=${1:-/healthz}
case $path in
    /healthz | /readyz) ;;
    *) echo "usage: collisiond-healthcheck [/healthz|/readyz]" >&2; exit 2 ;;
esac
listen=${COLLISIOND_LISTEN:-127.0.0.1:7878}
port=${listen##*:}
host=${listen%:*}
case $host in
    "" | 0.0.0.0 | "[::]") host=127.0.0.1 ;;
esac
host=${host#[}
host=${host%]}
exec 3<>"/dev/tcp/$host/$port" || exit 1
printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$path" "$host" >&3 || exit 1
IFS= read -r -t 2 status_line <&3 || exit 1
case $status_line in
    "HTTP/1."?" 200 "*) exit 0 ;;
esac
exit 1
