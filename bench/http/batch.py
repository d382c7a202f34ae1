#!/usr/bin/env python3
"""Time per pair of POST /v1/pairs against the batch size (docs/PERFORMANCE.md).

  batch.py --daemon build/collisiond --pairs PAIRS [--sizes 1,100,10000] [--pairs-per-size 20000] [--runs 3]

Starts the daemon on an ephemeral loopback port (no data directory, errors
only in its log), then for each batch size B sends --pairs-per-size pairs of
cq-gen's pairs file as POST /v1/pairs requests of B pairs each, one after
the other on one keep-alive connection. The bodies are encoded before the
clock starts; a request is timed from sending it to the last byte of the
answer. Prints, per B, `key value` lines: the wall time per pair (best of
--runs rounds) and the daemon's CPU time per pair in that best round (steadier
on a shared machine), then stops the daemon.
"""
import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def read_pairs(path):
    """cq-gen's pairs as API values: each box with its axes pose."""
    out = []
    with open(path) as f:
        for line in f:
            v = [float(x) for x in line.split()]
            if len(v) != 30:
                continue
            out.append({"a": box(v[:15]), "b": box(v[15:])})
    return out


def box(v):
    return {"shape": {"type": "box", "half_extents": v[3:6]},
            "pose": {"position": v[0:3], "axes": [v[6:9], v[9:12], v[12:15]]}}


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(daemon, tmp):
    ports = os.path.join(tmp, "ports")
    log = open(os.path.join(tmp, "daemon.log"), "w")
    proc = subprocess.Popen([daemon, "--listen", "127.0.0.1:0", "--port-file", ports, "--data-dir", "",
                             "--log-level", "error", "--access-log", "off"], stderr=log)
    deadline = time.monotonic() + 10
    while not (os.path.exists(ports) and os.path.getsize(ports) > 0):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            sys.exit("batch.py: %s did not start (see %s)" % (daemon, log.name))
        time.sleep(0.05)
    with open(ports) as f:
        return proc, int(f.read().split()[0])


def round_trip(conn, body):
    conn.request("POST", "/v1/pairs", body=body, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    raw = r.read()
    if r.status != 200:
        sys.exit("batch.py: POST /v1/pairs: %d %s" % (r.status, raw[:300]))
    return raw


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--sizes", default="1,100,10000")
    ap.add_argument("--pairs-per-size", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    pairs = read_pairs(args.pairs)
    with tempfile.TemporaryDirectory(prefix="batch-") as tmp:
        proc, port = start(args.daemon, tmp)
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            conn.connect()
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for size in (int(s) for s in args.sizes.split(",")):
                count = max(1, args.pairs_per_size // size)
                bodies = [json.dumps({"pairs": [pairs[(k * size + i) % len(pairs)] for i in range(size)]},
                                     separators=(",", ":")).encode() for k in range(count)]
                round_trip(conn, bodies[0])  # warm-up
                best = None
                for _ in range(args.runs):
                    c0, t0 = cpu_seconds(proc.pid), time.perf_counter()
                    answer = 0
                    for body in bodies:
                        answer += len(round_trip(conn, body))
                    wall, cpu = time.perf_counter() - t0, cpu_seconds(proc.pid) - c0
                    if best is None or wall < best[0]:
                        best = (wall, cpu, answer)
                n = count * size
                print("batch_%d_requests %d" % (size, count))
                print("batch_%d_us_per_pair %.2f" % (size, 1e6 * best[0] / n))
                print("batch_%d_daemon_cpu_us_per_pair %.2f" % (size, 1e6 * best[1] / n))
                print("batch_%d_answer_bytes_per_pair %.0f" % (size, best[2] / n))
                sys.stdout.flush()
            conn.close()
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
