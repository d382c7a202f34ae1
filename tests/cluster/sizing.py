#!/usr/bin/env python3
"""Measures the numbers docs/DEPLOY.md sizes a shard with (not part of any
test target; the numbers depend on the machine):

    sizing.py path/to/collisiond path/to/scene.txt [--boxes N] [--no-data-dir]

scene.txt comes from the project's generator: `make
build/data/scene-100000-7.txt` runs `build/cq-gen scene 100000 7`. One
daemon with one request thread loads the first N boxes (default: all) into
one world and reports: resident memory empty and loaded (so bytes per box),
the cost of one tick (a batch moving every box, then contacts with dt) as the
daemon's CPU time (all its threads; robust to a busy machine) and as the
round trip from a local client, the snapshot written at SIGTERM and the
recovery at the next start. --no-data-dir runs without a journal.
"""
import argparse
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
from cluster import free_ports, request, wait_until

CHUNK = 10000


def rss_kib(pid, field="VmRSS"):
    """Resident memory now (VmRSS) or at its peak (VmHWM), in KiB."""
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(field + r":\s+(\d+) kB", f.read()).group(1))


def cpu_ns(pid):
    """CPU time the process's threads have run, in nanoseconds."""
    total = 0
    for f in glob.glob("/proc/%d/task/*/schedstat" % pid):
        with open(f) as fh:
            total += int(fh.read().split()[0])
    return total


def read_scene(path, n):
    with open(path) as f:
        half, dt = map(float, f.readline().split())
        boxes = [list(map(float, line.split())) for _, line in zip(range(n), f)]
    return half, dt, boxes


def step(boxes, half, dt):
    """The generator's motion rule: move by v*dt, reflect at the cube's walls."""
    for b in boxes:
        for k in range(3):
            x = b[k] + b[10 + k] * dt
            if abs(x) > half:
                b[10 + k] = -b[10 + k]
                x = b[k] + b[10 + k] * dt
            b[k] = x


def log_ms(log, what):
    """The duration of the last log line about what ("... in 12.3 ms"), or NaN."""
    found = float("nan")
    with open(log) as f:
        for line in f:
            m = re.search(what + r".* in ([0-9.]+) ms", line)
            if m:
                found = float(m.group(1))
    return found


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("daemon")
    ap.add_argument("scene")
    ap.add_argument("--boxes", type=int, default=10 ** 9, help="load the first N boxes (default: all)")
    ap.add_argument("--no-data-dir", action="store_true", help="run without a journal (--data-dir '')")
    args = ap.parse_args(argv[1:])
    half, dt, boxes = read_scene(args.scene, args.boxes)
    n = len(boxes)
    root = tempfile.mkdtemp(prefix="collisiond-sizing-")
    data = "" if args.no_data_dir else os.path.join(root, "data")
    http_port, stream_port = free_ports(2)
    log = os.path.join(root, "log")
    argv_d = [args.daemon, "--listen", "127.0.0.1:%d" % http_port, "--stream-listen", "127.0.0.1:%d" % stream_port,
              "--data-dir", data, "--threads", "1",
              "--max-world-capacity", str(max(n, 1024))]
    proc = None

    def start():
        with open(log, "a") as f:
            p = subprocess.Popen(argv_d, stdout=f, stderr=f)
        wait_until("daemon ready", lambda: request(http_port, "GET", "/readyz").status == 200, timeout=120,
                   proc=p, log=log)
        return p

    try:
        proc = start()
        empty = rss_kib(proc.pid)
        assert request(http_port, "PUT", "/v1/worlds/scene", {"capacity": n}).status == 201
        for lo in range(0, n, CHUNK):
            ups = [{"id": i, "shape": {"type": "box", "half_extents": b[3:6]},
                    "pose": {"position": b[0:3], "rotation": b[6:10]}, "velocity": b[10:13]}
                   for i, b in enumerate(boxes[lo:lo + CHUNK], lo)]
            r = request(http_port, "POST", "/v1/worlds/scene/batch", {"upsert": ups}, timeout=120)
            assert r.status == 200, r.body[:300]
        loaded = rss_kib(proc.pid)
        ticks = []
        for _ in range(3):
            step(boxes, half, dt)
            # In batches of CHUNK moves: 100,000 in one body would pass --max-body.
            bodies = [json.dumps({"move": [{"id": i, "pose": {"position": b[0:3], "rotation": b[6:10]},
                                            "velocity": b[10:13]} for i, b in enumerate(boxes[lo:lo + CHUNK], lo)]
                                  }).encode() for lo in range(0, n, CHUNK)]
            c0, t0 = cpu_ns(proc.pid), time.perf_counter()
            for body in bodies:
                r1 = request(http_port, "POST", "/v1/worlds/scene/batch", body, timeout=120)
                assert r1.status == 200, r1.body[:300]
            c1, t1 = cpu_ns(proc.pid), time.perf_counter()
            r2 = request(http_port, "POST", "/v1/worlds/scene/contacts", {"dt": dt}, timeout=120)
            c2, t2 = cpu_ns(proc.pid), time.perf_counter()
            assert r2.status == 200
            ticks.append(((c1 - c0) / 1e6, (t1 - t0) * 1e3, (c2 - c1) / 1e6, (t2 - t1) * 1e3,
                          len(r2.json()["pairs"])))
        after, peak = rss_kib(proc.pid), rss_kib(proc.pid, "VmHWM")
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
        proc = None
        if data:
            snap_ms = log_ms(log, "snapshot")
            data_bytes = sum(os.path.getsize(os.path.join(data, f)) for f in os.listdir(data))
            proc = start()
            recover_ms = log_ms(log, "recovered")
        print("boxes: %d (scene half-size %g)" % (n, half))
        print("RSS empty: %.1f MiB; loaded: %.1f MiB; after 3 ticks: %.1f MiB (peak %.1f MiB); per box: %.0f bytes"
              % (empty / 1024, loaded / 1024, after / 1024, peak / 1024, (after - empty) * 1024 / n))
        for i, (mv_cpu, mv_wall, ct_cpu, ct_wall, pairs) in enumerate(ticks):
            print("tick %d: batch moving every box %.0f ms CPU (%.0f ms round trip), contacts %.1f ms CPU "
                  "(%.1f ms round trip, %d touching pairs)" % (i, mv_cpu, mv_wall, ct_cpu, ct_wall, pairs))
        if data:
            print("snapshot at SIGTERM: %.0f ms; data directory %.1f MiB; recovery at start: %.0f ms"
                  % (snap_ms, data_bytes / 2 ** 20, recover_ms))
    finally:
        if proc and proc.poll() is None:
            proc.terminate()
            proc.wait(60)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
