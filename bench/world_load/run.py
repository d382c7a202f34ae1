#!/usr/bin/python3
"""Worlds under game load over HTTP, against the real daemon (`make bench`).

  run.py --daemon build/collisiond --data build/data [--puts 300] [--seconds 3]
         [--hz 60] [--daemon-cpu N] [--client-cpu N] [--work DIR] [--raw FILE]

The daemon runs on --daemon-cpu (by default the first CPU this process may
use; -1: any), the client on --client-cpu (by default any: pinned beside
other tenants' jobs a client's wake-ups wait for that CPU, and its wall
times grew by milliseconds in trials).

Two measurements, each on daemons of its own started here on loopback
ports (--threads 2, --access-log all), with the project's scenes
(build/cq-gen scene N 7: "L DT", then cx cy cz hx hy hz qx qy qz qw vx vy vz
a box a line):

- One shape PUT into a world of the 60,000 boxes of scene-60000-7 and the
  same PUT into an empty world, alternately, --puts times each, every PUT
  of a new id and DELETEd again (untimed) so that each one meets the same
  world; with --data-dir '' and with a data directory. Each PUT's time is
  read twice: the daemon's own duration (the access line's duration_us)
  and the client's wall time (request sent to answer read, one keep-alive
  connection). Medians.
- A world of the 10,000 boxes of scene-10000-7 moved by cq-gen's rule at
  --hz (one MessagePack batch of every box a tick, sent on schedule, or at
  once when the daemon is behind) for --seconds, once durable and once
  with the world setting "durability": "none", each in a fresh data
  directory (--snapshot-every 0, so nothing written is compacted away),
  and once with "durability": "shapes" (the middle mode: moves not journaled):
  the bytes the data directory gained from before the world was created to
  after the last tick, and collisiond_journal_bytes_total where /metrics
  has it. When the daemon refuses a setting, or accepts it without
  reporting it back, its row says so instead of a figure.

Prints `key value` lines (bench/table.py's load_http_rows reads them).
"""
import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import msgpack
import numpy

START_TIMEOUT = 60
CHUNK = 20000  # upserts per loading batch: 60,000 boxes in one JSON body pass --max-body


def read_scene(path):
    with open(path) as f:
        half, dt = (float(x) for x in f.readline().split())
        boxes = [[float(x) for x in line.split()] for line in f if line.strip()]
    return half, dt, boxes


def upsert(k, b):
    return {"id": "b%05d" % k, "shape": {"type": "box", "half_extents": b[3:6]},
            "pose": {"position": b[0:3], "rotation": b[6:10]}, "velocity": b[10:13]}


class Daemon:
    """One collisiond on ephemeral loopback ports, its stderr (the access log) in a file."""

    def __init__(self, binary, work, data_dir, cpu, flags=()):
        self.work = work
        self.port_file = os.path.join(work, "ports")
        self.log_path = os.path.join(work, "stderr.log")
        argv = [binary, "--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0", "--port-file", self.port_file,
                "--data-dir", data_dir, "--threads", "2", "--access-log", "all"] + list(flags)
        if cpu is not None:
            argv = ["taskset", "-c", str(cpu)] + argv
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)
        self.port = self.wait_port()
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=300)
        self.conn.connect()
        self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle wait in a timed PUT
        self.wait_ready()

    def wait_port(self):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                sys.exit("run.py: collisiond exited at start-up; see %s" % self.log_path)
            try:
                with open(self.port_file) as f:
                    text = f.read()
            except FileNotFoundError:
                text = ""
            if text.endswith("\n"):
                return int(text.split()[0])
            time.sleep(0.01)
        self.stop()
        sys.exit("run.py: collisiond wrote no port file; see %s" % self.log_path)

    def wait_ready(self):
        deadline = time.monotonic() + START_TIMEOUT
        while self.request("GET", "/readyz")[0] != 200:
            if time.monotonic() > deadline:
                sys.exit("run.py: collisiond never became ready")
            time.sleep(0.02)

    def request(self, method, path, body=None, ctype="application/json"):
        """One request on the keep-alive connection: (status, answer bytes)."""
        data = json.dumps(body, separators=(",", ":")).encode() if ctype == "application/json" and body is not None \
            else body
        headers = {"Content-Type": ctype} if data is not None else {}
        self.conn.request(method, path, body=data, headers=headers)
        r = self.conn.getresponse()
        return r.status, r.read()

    def must(self, method, path, body=None, ok=(200, 201, 204), ctype="application/json"):
        status, raw = self.request(method, path, body, ctype)
        if status not in ok:
            self.stop()
            sys.exit("run.py: %s %s: %d %s" % (method, path, status, raw[:300].decode(errors="replace")))
        return raw

    def metric(self, name):
        """The sum of a metric's samples in /metrics, or None when it has none."""
        text = self.must("GET", "/metrics").decode()
        values = [float(line.split()[-1]) for line in text.splitlines()
                  if line.startswith(name) and line[len(name):len(name) + 1] in (" ", "{")]
        return sum(values) if values else None

    def access_durations(self, method, route):
        """duration_us of every access line of method on route, in the order logged."""
        self.log.flush()
        out = []
        with open(self.log_path) as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec.get("msg") == "request" and rec.get("method") == method and rec.get("route") == route:
                    out.append((rec.get("path"), rec["duration_us"]))
        return out

    def stop(self):
        self.conn.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def load_world(d, name, boxes, settings):
    d.must("PUT", "/v1/worlds/" + name, settings)
    items = [upsert(k, b) for k, b in enumerate(boxes)]
    for i in range(0, len(items), CHUNK):
        d.must("POST", "/v1/worlds/%s/batch" % name, {"upsert": items[i:i + CHUNK]})


def timed_put(d, world, k, box):
    """PUT of a new shape (client wall time, s), then its DELETE (untimed)."""
    body = json.dumps({"shape": {"type": "box", "half_extents": box[3:6]},
                       "pose": {"position": box[0:3], "rotation": box[6:10]}}, separators=(",", ":")).encode()
    path = "/v1/worlds/%s/shapes/put%d" % (world, k)
    d.must("GET", "/healthz")  # untimed: whatever the last change left running is done before the clock starts
    t0 = time.perf_counter()
    d.conn.request("PUT", path, body=body, headers={"Content-Type": "application/json"})
    r = d.conn.getresponse()
    raw = r.read()
    t = time.perf_counter() - t0
    if r.status != 201:
        sys.exit("run.py: PUT %s: %d %s" % (path, r.status, raw[:300].decode(errors="replace")))
    d.must("DELETE", path)
    return t


def put_figures(args, mode, data_dir, boxes):
    """One daemon: PUTs into the empty and the full world, alternately. Key -> value."""
    work = tempfile.mkdtemp(prefix="put-%s-" % mode, dir=args.work)
    d = Daemon(args.daemon, work, data_dir, args.daemon_cpu)
    try:
        d.must("PUT", "/v1/worlds/empty", {})
        load_world(d, "full", boxes, {"capacity": len(boxes) + 1024})
        wall = {"empty": [], "full": []}
        for k in range(args.puts):
            for world in ("empty", "full"):
                wall[world].append(timed_put(d, world, k, boxes[k % len(boxes)]))
        logged = d.access_durations("PUT", "/v1/worlds/{world}/shapes/{id}")
    finally:
        d.stop()
    out = {}
    for world in ("empty", "full"):
        own = [us for path, us in logged if path.startswith("/v1/worlds/%s/" % world)]
        out["put_%s_%s_daemon_us" % (mode, world)] = statistics.median(own)
        out["put_%s_%s_client_us" % (mode, world)] = 1e6 * statistics.median(wall[world])
    for kind in ("daemon", "client"):
        out["put_%s_%s_ratio" % (mode, kind)] = (out["put_%s_full_%s_us" % (mode, kind)]
                                                 / out["put_%s_empty_%s_us" % (mode, kind)])
    out["put_%s_shapes" % mode] = len(boxes)
    out["put_reps"] = args.puts
    return out


def dir_bytes(path):
    """Bytes of every file under path (st_size, as du -sb counts them)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except FileNotFoundError:
                pass
    return total


class Ticker:
    """cq-gen's motion rule over the scene, as one MessagePack move batch a
    tick. Python cannot build 10,000 moves 60 times a second, so the body is
    packed once and each tick writes the new positions and velocities into
    it in place (every float is packed as a float64, so every move has the
    same layout), the motion computed with numpy as bench/world.c does it."""

    MARK = (1.25e300, 1.5e300, 1.75e300, -1.25e300, -1.5e300, -1.75e300)  # found again in the packed bytes

    def __init__(self, half, dt, boxes):
        self.half, self.dt = half, dt
        self.pos = numpy.array([b[0:3] for b in boxes], dtype=numpy.float64)
        self.vel = numpy.array([b[10:13] for b in boxes], dtype=numpy.float64)
        moves = [msgpack.packb(self.move(k, b, b[0:3], b[10:13])) for k, b in enumerate(boxes)]
        size = len(moves[0])
        if any(len(m) != size for m in moves):
            sys.exit("run.py: the moves do not pack to one size")
        probe = msgpack.packb(self.move(0, boxes[0], self.MARK[0:3], self.MARK[3:6]))
        offsets = [probe.index(b"\xcb" + struct.pack(">d", m)) + 1 for m in self.MARK]
        packer = msgpack.Packer()
        head = packer.pack_map_header(1) + packer.pack("move") + packer.pack_array_header(len(boxes))
        self.body = bytearray(head + b"".join(moves))
        self.views = [numpy.ndarray((len(boxes),), dtype=">f8", buffer=self.body, offset=len(head) + off,
                                    strides=(size,)) for off in offsets]

    @staticmethod
    def move(k, b, position, velocity):
        return {"id": "b%05d" % k, "pose": {"position": [float(x) for x in position], "rotation": b[6:10]},
                "velocity": [float(x) for x in velocity]}

    def next_body(self):
        nxt = self.pos + self.vel * self.dt
        out = (nxt < -self.half) | (nxt > self.half)
        self.vel[out] = -self.vel[out]
        nxt[out] = self.pos[out] + self.vel[out] * self.dt
        self.pos = nxt
        for i in range(3):
            self.views[i][:] = self.pos[:, i]
            self.views[3 + i][:] = self.vel[:, i]
        return bytes(self.body)


def durability_accepted(d, name, mode):
    """Whether the world reports the durability mode back (GET /v1/worlds/{world})."""
    summary = json.loads(d.must("GET", "/v1/worlds/" + name))
    settings = summary.get("settings", {})
    return settings.get("durability", summary.get("durability")) == mode


def run_ticks(d, name, ticker, seconds, hz):
    """Ticks on schedule for seconds (late ticks go at once, none are dropped); returns (ticks, elapsed)."""
    t0 = time.monotonic()
    ticks = 0
    while time.monotonic() - t0 < seconds:
        due = t0 + ticks / hz
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        d.must("POST", "/v1/worlds/%s/batch" % name, ticker.next_body(), ok=(200,), ctype="application/msgpack")
        ticks += 1
    return ticks, time.monotonic() - t0


# kind of world: the "durability" its settings name (None: the default, everything kept)
LOAD_KINDS = (("durable", None), ("shapes", "shapes"), ("ephemeral", "none"))


def load_figures(args, kind, mode, scene):
    """One daemon with a fresh data directory, one world of the kind under tick load."""
    half, dt, boxes = scene
    work = tempfile.mkdtemp(prefix="ticks-%s-" % kind, dir=args.work)
    data_dir = os.path.join(work, "data")
    os.mkdir(data_dir)
    d = Daemon(args.daemon, work, data_dir, args.daemon_cpu, ["--snapshot-every", "0"])
    out = {}
    try:
        before, journal0 = dir_bytes(data_dir), d.metric("collisiond_journal_bytes_total")
        settings = {"capacity": len(boxes)}
        if mode:
            settings["durability"] = mode
            status, _ = d.request("PUT", "/v1/worlds/w", settings)
            if status not in (200, 201) or not durability_accepted(d, "w", mode):
                return {"load_%s_available" % kind: 0, "load_%s_status" % kind: status}
            out["load_%s_available" % kind] = 1
        load_world(d, "w", boxes, settings)
        ticks, elapsed = run_ticks(d, "w", Ticker(half, dt, boxes), args.seconds, args.hz)
        after, journal1 = dir_bytes(data_dir), d.metric("collisiond_journal_bytes_total")
    finally:
        d.stop()
    out.update({"load_%s_bytes" % kind: after - before, "load_%s_ticks" % kind: ticks,
                "load_%s_hz" % kind: ticks / elapsed, "load_%s_seconds" % kind: elapsed,
                "load_shapes": len(boxes), "load_hz": args.hz})
    if journal0 is not None and journal1 is not None:
        out["load_%s_journal_bytes" % kind] = journal1 - journal0
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--data", required=True, help="the directory of cq-gen's scene files")
    ap.add_argument("--puts", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--hz", type=float, default=60)
    ap.add_argument("--daemon-cpu", type=int)
    ap.add_argument("--client-cpu", type=int)
    ap.add_argument("--work", help="where the daemons' files go (a temporary directory, removed after)")
    ap.add_argument("--raw", help="also write the key value lines to this file")
    args = ap.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    if args.daemon_cpu is None:
        args.daemon_cpu = cpus[0]
    elif args.daemon_cpu < 0:
        args.daemon_cpu = None
    if args.client_cpu is not None and args.client_cpu >= 0:
        os.sched_setaffinity(0, {args.client_cpu})
    top = tempfile.mkdtemp(prefix="world-load-", dir=args.work)
    args.work = top
    try:
        _, _, full = read_scene(os.path.join(args.data, "scene-60000-7.txt"))
        out = {}
        out.update(put_figures(args, "mem", "", full))
        data_dir = os.path.join(top, "put-data")
        os.mkdir(data_dir)
        out.update(put_figures(args, "disk", data_dir, full))
        scene = read_scene(os.path.join(args.data, "scene-10000-7.txt"))
        for kind, mode in LOAD_KINDS:
            out.update(load_figures(args, kind, mode, scene))
    finally:
        shutil.rmtree(top, ignore_errors=True)
    lines = "".join("%s %s\n" % (k, ("%.4f" % v) if isinstance(v, float) and not v.is_integer() else int(v))
                    for k, v in out.items())
    sys.stdout.write(lines)
    if args.raw:
        with open(args.raw, "w") as f:
            f.write(lines)


if __name__ == "__main__":
    main()
