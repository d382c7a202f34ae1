#!/usr/bin/env python3
"""Pipelined POST /v1/pair over the stream transport, for `make bench-http`.

  stream_pairs.py --stream-port PORT --body FILE [--requests 50000] [--pid PID]

Writes --requests copies of one pair request line (the body from FILE,
the one wrk sends over HTTP) on one connection without waiting, while a
second thread reads the replies, and checks that every reply is the same
200 answer in order of ids. Prints name value lines: the requests per
second (a single Python client reads at most some tens of thousands of
lines a second, so this is a floor) and, given the daemon's --pid, its CPU
time per request, which does not depend on the client.
"""
import argparse
import json
import socket
import sys
import threading
import time

from scene import cpu_seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stream-port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--body", required=True, help="a file holding the JSON body of one POST /v1/pair")
    ap.add_argument("--requests", type=int, default=50000)
    ap.add_argument("--pid", type=int, default=None, help="the daemon's process id, to report its CPU time")
    args = ap.parse_args()

    body = json.loads(open(args.body).read())
    n = args.requests
    lines = [json.dumps({"id": i, "method": "POST", "path": "/v1/pair", "body": body},
                        separators=(",", ":")).encode() + b"\n" for i in range(n)]
    sock = socket.create_connection((args.host, args.stream_port), timeout=120)
    got = {"count": 0, "first": None, "last": None}

    def read():
        """Counts reply lines, keeping the first and the last whole."""
        pending = b""
        while got["count"] < n:
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            data = pending + chunk
            end = data.rfind(b"\n")
            if end < 0:
                pending = data
                continue
            done, pending = data[:end], data[end + 1:]
            got["count"] += done.count(b"\n") + 1
            if got["first"] is None:
                got["first"] = done.split(b"\n", 1)[0]
            got["last"] = done.rsplit(b"\n", 1)[-1]

    reader = threading.Thread(target=read)
    cpu0 = cpu_seconds(args.pid) if args.pid else 0.0
    t0 = time.perf_counter()
    reader.start()
    for k in range(0, n, 200):
        sock.sendall(b"".join(lines[k:k + 200]))
    reader.join()
    seconds = time.perf_counter() - t0
    cpu = cpu_seconds(args.pid) - cpu0 if args.pid else 0.0
    sock.close()

    if got["count"] != n:
        sys.exit("stream: %d replies of %d" % (got["count"], n))
    first, last = json.loads(got["first"]), json.loads(got["last"])
    if (first.get("id"), last.get("id")) != (0, n - 1) or first.get("status") != 200 or \
            last.get("status") != 200 or first["body"] != last["body"]:
        sys.exit("stream: unexpected replies %s / %s" % (got["first"][:300], got["last"][:300]))
    print("stream_pair_requests %d" % n)
    print("stream_pair_rps %.1f" % (n / seconds))
    if args.pid:
        print("stream_pair_cpu_us_per_req %.1f" % (1e6 * cpu / n))


if __name__ == "__main__":
    main()
