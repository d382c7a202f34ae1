#!/usr/bin/env python3
"""Contacts latency over HTTP and the stream transport, for `make bench-http`.

  scene.py --port PORT [--stream-port PORT] --scene FILE [--world bench] [--skin 0] [--queries 200]
           [--dt S] [--pid PID]

Loads a scene of the project's generator (`build/cq-gen scene N SEED`:
"L DT", then one box a line: cx cy cz hx hy hz qx qy qz qw vx vy vz) into
a new world with one PUT /v1/worlds/{world} and one
POST /v1/worlds/{world}/batch, then times
`--queries` POST /v1/worlds/{world}/contacts requests on one keep-alive
connection, each from sending the request to the last byte of the answer
(the answer is parsed once, outside the timing, for the counts). Prints
name value lines: the load time, the pair counts, the answer size, the
client-side p50 / p99 / max latency in ms and, given the daemon's --pid,
its CPU time per query (steadier than the latency on a shared machine).
With --stream-port, the same queries are then timed over the JSON-lines
stream transport, one line at a time on one connection (stream_* lines).
"""
import argparse
import http.client
import json
import math
import os
import socket
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


def process_tree(pid):
    """pid and its descendants (the children of each of its threads)."""
    kids = []
    for task in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, task)) as f:
            kids += [int(k) for k in f.read().split()]
    return [pid] + [p for k in kids for p in process_tree(k)]


def cpu_seconds(pid):
    """utime + stime of a local process and its descendants (Linux /proc;
    nginx answers from worker processes)."""
    ticks = 0
    for p in process_tree(pid):
        with open("/proc/%d/stat" % p) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


class Stream:
    """One connection to the stream listener, a request line at a time."""

    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=120)
        self.buf = b""

    def call(self, line):
        self.sock.sendall(line)
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                sys.exit("stream: the daemon closed the connection")
            self.buf += chunk
        reply, _, self.buf = self.buf.partition(b"\n")
        return reply


def timed(queries, pid, send):
    """Runs send() queries times; returns (sorted latencies in ms, the
    daemon's CPU seconds per query, the first answer's bytes)."""
    times, cpu, first = [], 0.0, None
    for _ in range(queries):
        c = cpu_seconds(pid) if pid else 0.0
        t = time.perf_counter()
        raw = send()
        times.append(1e3 * (time.perf_counter() - t))
        cpu += cpu_seconds(pid) - c if pid else 0.0
        if first is None:
            first = raw
    times.sort()
    return times, cpu / queries, first


def report(prefix, times, cpu, pid):
    print("%s_p50_ms %.3f" % (prefix, percentile(times, 0.50)))
    print("%s_p99_ms %.3f" % (prefix, percentile(times, 0.99)))
    print("%s_max_ms %.3f" % (prefix, times[-1]))
    if pid:
        print("%s_daemon_cpu_ms %.3f" % (prefix, 1e3 * cpu))


def percentile(sorted_values, q):
    """Nearest-rank percentile of an ascending list."""
    return sorted_values[max(0, math.ceil(q * len(sorted_values)) - 1)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--stream-port", type=int, default=None, help="also time the queries over the stream transport")
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
    times, cpu, raw = timed(args.queries, args.pid, lambda: must(conn, "POST", base + "/contacts", query, (200,)))
    conn.close()
    first = json.loads(raw)
    print("scene_shapes %d" % len(boxes))
    print("scene_load_ms %.1f" % load_ms)
    print("contacts_queries %d" % len(times))
    print("contacts_broadphase_pairs %d" % first["stats"]["broadphase_pairs"])
    print("contacts_pairs %d" % len(first["pairs"]))
    print("contacts_answer_bytes %d" % len(raw))
    report("contacts", times, cpu, args.pid)

    if args.stream_port:
        stream = Stream(args.host, args.stream_port)
        line = json.dumps({"id": 1, "method": "POST", "path": base + "/contacts", "body": query},
                          separators=(",", ":")).encode() + b"\n"
        times, cpu, reply = timed(args.queries, args.pid, lambda: stream.call(line))
        stream.sock.close()
        got = json.loads(reply)
        if got.get("status") != 200 or len(got["body"]["pairs"]) != len(first["pairs"]):
            sys.exit("stream: unexpected reply %s" % reply[:500].decode(errors="replace"))
        report("stream_contacts", times, cpu, args.pid)


if __name__ == "__main__":
    main()
