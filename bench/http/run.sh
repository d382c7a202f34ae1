#!/bin/sh
# `make bench-http`: POST /v1/pair through wrk against collisiond, then
# against nginx returning the same answer as a static body, with the same
# wrk settings; prints the rates and their ratio (issue 5's goal: >= 0.6).
# Between them, bench/http/floor.c's http-floor (FLOOR) runs libmicrohttpd
# as the daemon does and answers with the same fixed body, once as it is
# and once after parsing the request with jansson as the daemon does: what
# the libraries issue 5 names leave of nginx's rate before any of the
# daemon's own work.
# With TICK (build/cq-tick, for its json2mp), the same request goes as a
# MessagePack body (pair_mp.lua) to the daemon and to nginx serving the
# daemon's MessagePack answer from a file (its `return` takes text only);
# nginx serving the JSON answer from a file too says what the file costs
# it. A daemon without MessagePack is reported and skipped, not failed.
# Then sends the same request pipelined over the stream transport
# (stream_pairs.py: its rate and the daemon's CPU per request), and loads
# the 10,000-box scene into a world over HTTP and reports the latency of
# its contacts query over HTTP and over the stream transport (scene.py).
#
#   bench/http/run.sh DAEMON SCENE_FILE FLOOR [TICK]
#
# Settings (environment):
#   WRK_THREADS=2 WRK_CONNECTIONS=64 WRK_DURATION=10s   wrk -t -c -d, for every server
#   SERVER_THREADS=$(nproc)   the daemon's and http-floor's threads, nginx's worker_processes
#   STREAM_REQUESTS=50000     pipelined stream pair requests
#   CONTACTS_QUERIES=200      timed contacts requests
# The servers listen on ephemeral loopback ports and log only errors (nginx
# has access_log off; the daemon runs at --log-level error --access-log off). Each wrk run is
# preceded by a 2 s warm-up with the same settings. Everything runs on this
# machine, so wrk competes with the server for the cores, and on a shared
# machine the rates swing with the other tenants' load: cpu_ratio (nginx's
# CPU time per request over the daemon's) is the steadier comparison.
set -eu

[ $# -eq 3 ] || [ $# -eq 4 ] || { echo "usage: $0 DAEMON SCENE_FILE FLOOR [TICK]" >&2; exit 2; }
daemon=$1
scene=$2
floor=$3
tick=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
threads=${WRK_THREADS:-2}
conns=${WRK_CONNECTIONS:-64}
duration=${WRK_DURATION:-10s}
workers=${SERVER_THREADS:-$(nproc)}
queries=${CONTACTS_QUERIES:-200}
for tool in wrk nginx python3; do
    command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] ||
        { echo "$0: $tool is missing (make bench-http installs it)" >&2; exit 1; }
done
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-http.XXXXXX")
daemon_pid=
nginx_pid=
floor_pid=
cleanup() {
    [ -z "$floor_pid" ] || kill "$floor_pid" 2>/dev/null || true
    [ -z "$nginx_pid" ] || kill "$nginx_pid" 2>/dev/null || true
    [ -z "$daemon_pid" ] || kill "$daemon_pid" 2>/dev/null || true
    [ -z "$floor_pid" ] || wait "$floor_pid" 2>/dev/null || true
    [ -z "$nginx_pid" ] || wait "$nginx_pid" 2>/dev/null || true
    [ -z "$daemon_pid" ] || wait "$daemon_pid" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits until something accepts connections on 127.0.0.1:$1.
wait_port() {
    python3 - "$1" <<'EOF'
import socket, sys, time
deadline = time.monotonic() + 10
while True:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        break
    except OSError:
        if time.monotonic() > deadline:
            sys.exit("nothing listens on port " + sys.argv[1])
        time.sleep(0.05)
EOF
}

# Waits until server $4 (process $2, logging to $3) has written its port
# file $1; exits when it dies first or takes over 10 s.
wait_file() {
    i=0
    until [ -s "$1" ]; do
        i=$((i + 1))
        if [ $i -gt 200 ] || ! kill -0 "$2" 2>/dev/null; then
            cat "$3" >&2
            echo "$0: $4 did not start" >&2
            exit 1
        fi
        sleep 0.05
    done
}

# CPU seconds used so far by process $1 and its descendants (nginx's workers).
cpu_seconds() {
    python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from scene import cpu_seconds; print(cpu_seconds(int(sys.argv[2])))' \
        "$here" "$1"
}

# Runs wrk against $1 (a URL) served by process $2, with the wrk script $3
# (default pair.lua), and prints the requests
# per second and the server's CPU microseconds per request (which the other
# tenants of a shared machine disturb far less than the rate); fails on
# socket errors or non-2xx answers, which would make the rate meaningless.
# It runs in a command substitution, whose exit cannot end this script, so
# each caller checks that it printed its two numbers.
rate() {
    script=${3:-$here/pair.lua}
    wrk -t"$threads" -c"$conns" -d2s -s "$script" "$1" >/dev/null
    cpu0=$(cpu_seconds "$2")
    wrk -t"$threads" -c"$conns" -d"$duration" -s "$script" "$1" >"$tmp/wrk.out"
    cpu1=$(cpu_seconds "$2")
    if grep -q -e 'Non-2xx' -e 'Socket errors' "$tmp/wrk.out"; then
        cat "$tmp/wrk.out" >&2
        echo "$0: wrk saw errors against $1" >&2
        exit 1
    fi
    n=$(awk '/ requests in / { print $1 }' "$tmp/wrk.out")
    rps=$(awk '/^Requests\/sec:/ { print $2 }' "$tmp/wrk.out")
    python3 -c 'import sys; print("%s %.1f" % (sys.argv[1], 1e6 * (float(sys.argv[4]) - float(sys.argv[3])) / int(sys.argv[2])))' \
        "$rps" "$n" "$cpu0" "$cpu1"
}

# The daemon, on ephemeral ports, keeping nothing on disk.
"$daemon" --listen 127.0.0.1:0 --stream-listen 127.0.0.1:0 --port-file "$tmp/ports" --data-dir "" \
    --threads "$workers" --log-level error --access-log off 2>"$tmp/daemon.log" &
daemon_pid=$!
wait_file "$tmp/ports" "$daemon_pid" "$tmp/daemon.log" "$daemon"
port=$(cut -d' ' -f1 "$tmp/ports")

# The daemon's answer to pair.lua's request becomes nginx's static body.
sed -n 's/^wrk\.body = \[\[\(.*\)\]\]$/\1/p' "$here/pair.lua" >"$tmp/request.json"
python3 - "$port" "$tmp/request.json" "$tmp/answer.json" <<'EOF'
import sys, urllib.request
port, request, answer = sys.argv[1:]
body = open(request, "rb").read().strip()
req = urllib.request.Request("http://127.0.0.1:%s/v1/pair" % port, data=body,
                             headers={"Content-Type": "application/json"})
with urllib.request.urlopen(req) as r:
    open(answer, "wb").write(r.read())
EOF
if grep -q '[$]' "$tmp/answer.json"; then
    echo "$0: the answer holds a '\$', which nginx would read as a variable" >&2
    exit 1
fi

set -- $(rate "http://127.0.0.1:$port/v1/pair" "$daemon_pid")
[ $# -eq 2 ] || exit 1
collisiond_rps=$1
collisiond_cpu=$2

# The same request in MessagePack, and the daemon's MessagePack answer for
# nginx (mp_status: the daemon's status for it; anything but 200 skips the
# MessagePack rates).
mp_status=
if [ -n "$tick" ]; then
    "$tick" json2mp "$tmp/request.json" "$tmp/request.mp"
    export PAIR_MP_BODY="$tmp/request.mp"
    mp_status=$(python3 "$here/fetch_answer.py" "$port" "$tmp/request.mp" "$tmp/answer.mp")
fi
if [ "$mp_status" = 200 ]; then
    set -- $(rate "http://127.0.0.1:$port/v1/pair" "$daemon_pid" "$here/pair_mp.lua")
    [ $# -eq 2 ] || exit 1
    collisiond_mp_rps=$1
    collisiond_mp_cpu=$2
fi

# Starts http-floor with the daemon's answer and thread count on a free
# port ($1: empty, or --parse); sets floor_pid and floor_port. It runs in
# this shell, not in a command substitution, so the cleanup can stop it and
# nothing it holds open can keep a substitution waiting.
start_floor() {
    rm -f "$tmp/floor-port"
    "$floor" "$tmp/floor-port" "$tmp/answer.json" "$workers" $1 >"$tmp/floor.log" 2>&1 &
    floor_pid=$!
    wait_file "$tmp/floor-port" "$floor_pid" "$tmp/floor.log" "$floor"
    floor_port=$(cat "$tmp/floor-port")
}

stop_floor() {
    kill "$floor_pid"
    wait "$floor_pid" 2>/dev/null || true
    floor_pid=
}

start_floor ""
set -- $(rate "http://127.0.0.1:$floor_port/v1/pair" "$floor_pid")
stop_floor
[ $# -eq 2 ] || exit 1
floor_rps=$1
floor_cpu=$2
start_floor --parse
set -- $(rate "http://127.0.0.1:$floor_port/v1/pair" "$floor_pid")
stop_floor
[ $# -eq 2 ] || exit 1
floor_parse_rps=$1
floor_parse_cpu=$2

# nginx on a free port with a private prefix.
nginx_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
user=
[ "$(id -u)" -ne 0 ] || user="user $(id -un);"
# The files nginx serves: the JSON answer, and the MessagePack one (or,
# when the daemon gave none, the JSON one in its place).
mkdir -p "$tmp/static/v1"
cp "$tmp/answer.json" "$tmp/static/v1/pair.json"
if [ -f "$tmp/answer.mp" ]; then cp "$tmp/answer.mp" "$tmp/static/v1/pair.mp"; else cp "$tmp/answer.json" "$tmp/static/v1/pair.mp"; fi
python3 - "$here/nginx.conf.in" "$tmp/nginx.conf" "$tmp/answer.json" "$user" "$workers" "$tmp" "$nginx_port" <<'EOF'
import sys
template, out, answer, user, workers, prefix, port = sys.argv[1:]
body = open(answer).read().strip().replace("\\", "\\\\").replace("'", "\\'")
conf = open(template).read()
for key, value in (("USER", user), ("WORKERS", workers), ("PREFIX", prefix), ("PORT", port), ("BODY", body)):
    conf = conf.replace("@%s@" % key, value)
open(out, "w").write(conf)
EOF
"$nginx_bin" -p "$tmp" -e "$tmp/error.log" -c "$tmp/nginx.conf" -g 'daemon off;' &
nginx_pid=$!
wait_port "$nginx_port"
set -- $(rate "http://127.0.0.1:$nginx_port/v1/pair" "$nginx_pid")
[ $# -eq 2 ] || exit 1
nginx_rps=$1
nginx_cpu=$2
set -- $(rate "http://127.0.0.1:$nginx_port/v1/pair.json" "$nginx_pid")
[ $# -eq 2 ] || exit 1
nginx_file_rps=$1
nginx_file_cpu=$2
if [ "$mp_status" = 200 ]; then
    set -- $(rate "http://127.0.0.1:$nginx_port/v1/pair.mp" "$nginx_pid" "$here/pair_mp.lua")
    [ $# -eq 2 ] || exit 1
    nginx_mp_rps=$1
    nginx_mp_cpu=$2
fi
kill "$nginx_pid"
wait "$nginx_pid" 2>/dev/null || true
nginx_pid=

echo "wrk -t$threads -c$conns -d$duration, server threads $workers, answer $(wc -c <"$tmp/answer.json") bytes"
echo "nginx_rps $nginx_rps"
echo "collisiond_rps $collisiond_rps"
python3 -c 'import sys; print("ratio %.3f" % (float(sys.argv[2]) / float(sys.argv[1])))' "$nginx_rps" "$collisiond_rps"
echo "floor_rps $floor_rps"
echo "floor_parse_rps $floor_parse_rps"
echo "nginx_cpu_us_per_req $nginx_cpu"
echo "collisiond_cpu_us_per_req $collisiond_cpu"
echo "floor_cpu_us_per_req $floor_cpu"
echo "floor_parse_cpu_us_per_req $floor_parse_cpu"
python3 -c 'import sys; print("cpu_ratio %.3f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$nginx_cpu" "$collisiond_cpu"
echo "nginx_file_rps $nginx_file_rps"
echo "nginx_file_cpu_us_per_req $nginx_file_cpu"
[ -z "$mp_status" ] || echo "collisiond_mp_status $mp_status"
if [ "$mp_status" = 200 ]; then
    echo "msgpack request $(wc -c <"$tmp/request.mp") bytes, answer $(wc -c <"$tmp/answer.mp") bytes"
    echo "nginx_mp_rps $nginx_mp_rps"
    echo "collisiond_mp_rps $collisiond_mp_rps"
    python3 -c 'import sys; print("mp_ratio %.3f" % (float(sys.argv[2]) / float(sys.argv[1])))' "$nginx_mp_rps" "$collisiond_mp_rps"
    echo "nginx_mp_cpu_us_per_req $nginx_mp_cpu"
    echo "collisiond_mp_cpu_us_per_req $collisiond_mp_cpu"
elif [ -n "$mp_status" ]; then
    echo "$0: the daemon answered $mp_status to a MessagePack POST /v1/pair: no MessagePack rates" >&2
fi

python3 "$here/stream_pairs.py" --stream-port "$(cut -d' ' -f2 "$tmp/ports")" --body "$tmp/request.json" \
    --requests "${STREAM_REQUESTS:-50000}" --pid "$daemon_pid"

python3 "$here/scene.py" --port "$port" --stream-port "$(cut -d' ' -f2 "$tmp/ports")" --scene "$scene" \
    --queries "$queries" --pid "$daemon_pid"
