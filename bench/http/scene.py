#!/usr/bin/env python3
"""Contacts latency over HTTP, for `make bench-http`.

  scene.py --port PORT --scene FILE [--world bench] [--skin 0] [--queries 200] [--dt S] [--pid PID]

Loads the scene of ../shared/bench/gen.py ("L DT", then one box a line:
cx cy cz hx hy hz qx qy qz qw vx vy vz) into a new world with one
PUT /v1/worlds/{world} and one POST /v1/worlds/{world}/batch, then times
`--queries` POST /v1/worlds/{world}/contacts requests on one keep-alive
connection, each from sending the request to the last byte of the answer
(the answer is parsed once, outside the timing, for the counts). Prints
name value lines: the load time, the pair counts, the answer size, the
client-side p50 / p99 / max latency in ms and, given the daemon's --pid,
its CPU time per query (steadier than the latency on a shared machine).
"""
import argparse
import http.client
import json
import math
import os
import sys
import time


def read_scene(path):
    with open(path) as f:
        half, dt = (float(x) for x in f.readline().split())
        boxes = [[float(x) for x in line.split()] for line in f if line.strip()]
    return half, dt, boxes


def upserts(boxes):
    out = []
    for k, b in enumerate(boxes):
        out.append({"id": "b%05d" % k,
                    "shape": {"type": "box", "half_extents": b[3:6]},
                    "pose": {"position": b[0:3], "rotation": b[6:10]},
                    "velocity": b[10:13]})
    return out


def call(conn, method, path, body):
    """One request; returns (status, raw answer bytes)."""
    data = json.dumps(body, separators=(",", ":")).encode()
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    return r.status, r.read()


def must(conn, method, path, body, ok):
    status, raw = call(conn, method, path, body)
    if status not in ok:
        sys.exit("%s %s: %d %s" % (method, path, status, raw[:500].decode(errors="replace")))
    return raw


def cpu_seconds(pid):
    """utime + stime of a local process (Linux /proc)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(sorted_values, q):
    """Nearest-rank percentile of an ascending list."""
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--scene", required=True)
    ap.add_argument("--world", default="bench")
    ap.add_argument("--skin", type=float, default=0.0)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--dt", type=float, default=None, help="pass dt to contacts (CCD); default none")
    ap.add_argument("--pid", type=int, default=None, help="the daemon's process id, to report its CPU time")
    args = ap.parse_args()

    _, _, boxes = read_scene(args.scene)
    conn = http.client.HTTPConnection(args.host, args.port, timeout=120)
    base = "/v1/worlds/" + args.world
    t0 = time.perf_counter()
    must(conn, "PUT", base, {"skin": args.skin, "capacity": len(boxes)}, (200, 201))
    must(conn, "POST", base + "/batch", {"upsert": upserts(boxes)}, (200,))
    load_ms = 1e3 * (time.perf_counter() - t0)

    query = {} if args.dt is None else {"dt": args.dt}
    times, first, size, cpu = [], None, 0, 0.0
    for _ in range(args.queries):
        c = cpu_seconds(args.pid) if args.pid else 0.0
        t = time.perf_counter()
        raw = must(conn, "POST", base + "/contacts", query, (200,))
        times.append(1e3 * (time.perf_counter() - t))
        cpu += cpu_seconds(args.pid) - c if args.pid else 0.0
        answer = json.loads(raw)
        if first is None:
            first, size = answer, len(raw)
    conn.close()

    times.sort()
    print("scene_shapes %d" % len(boxes))
    print("scene_load_ms %.1f" % load_ms)
    print("contacts_queries %d" % len(times))
    print("contacts_broadphase_pairs %d" % first["stats"]["broadphase_pairs"])
    print("contacts_pairs %d" % len(first["pairs"]))
    print("contacts_answer_bytes %d" % size)
    print("contacts_p50_ms %.3f" % percentile(times, 0.50))
    print("contacts_p99_ms %.3f" % percentile(times, 0.99))
    print("contacts_max_ms %.3f" % times[-1])
    if args.pid:
        print("contacts_daemon_cpu_ms %.3f" % (1e3 * cpu / len(times)))


if __name__ == "__main__":
    main()
