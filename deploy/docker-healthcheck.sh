#!/bin/bash
# The container's HEALTHCHECK: GET /healthz on the daemon's HTTP port, with
# bash's /dev/tcp (the runtime image has no HTTP client, and needs none).
# Exit 0 when the daemon answers 200 within 2 seconds, else 1.
listen=${COLLISIOND_LISTEN:-127.0.0.1:7878}
port=${listen##*:}
host=${listen%:*}
case $host in
    "" | 0.0.0.0 | "[::]") host=127.0.0.1 ;;
esac
host=${host#[}
host=${host%]}
exec 3<>"/dev/tcp/$host/$port" || exit 1
printf 'GET /healthz HTTP/1.0\r\nHost: %s\r\n\r\n' "$host" >&3 || exit 1
IFS= read -r -t 2 status_line <&3 || exit 1
case $status_line in
    "HTTP/1."?" 200 "*) exit 0 ;;
esac
exit 1
