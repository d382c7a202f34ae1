#!/usr/bin/env python3
"""The game tick through the Python client, beside the daemon's CPU for it.

  tick_py.py --daemon build/collisiond --data DIR [--world N:TICKS ...] [--warmup 2] [--runs 3]
             [--encodings msgpack,json] [--daemon-cpu C] [--client-cpu C]

The tick of bench/tick (`make bench-tick`) on the same cq-gen scenes
(DIR/scene-N-7.txt, `cq-gen scene N 7`), sent by collisiond_client: every
box moved by the scene's rule (position, rotation, velocity) in one batch,
then the contacts with dt, pipelined in one write. collisiond runs on
ephemeral loopback ports pinned to one CPU (taskset), this process on
another. For each N, encoding and round (the encodings' order alternates)
it prints bench/tick's `nN.key value` lines:

- pyclient_ENC_wall_per_tick_us: the tick's round trip, building the
  move list included;
- pyclient_ENC_client_build_per_tick_us: building the move list (dicts);
- pyclient_ENC_client_encode_per_tick_us, ..._client_decode_per_tick_us:
  the client's encoding of the requests and decoding of the replies
  (Client.timings), and their sum ..._client_codec_per_tick_us;
- pyclient_ENC_daemon_cpu_per_tick_us: the daemon's CPU time over the
  timed ticks (its process CPU clock), ..._daemon_cpu_stat_per_tick_us the
  same from utime + stime of /proc/PID/stat;
- pyclient_ENC_touching_pairs: the last tick's touching pairs.

then a Markdown table of the bests (worst beside), each client figure with
the daemon's CPU per tick and their ratio.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "clients", "python"))
try:
    import msgpack  # noqa: F401
except ImportError:  # a Python that does not see Debian's packages (as tests/e2e/mp.py)
    sys.path.append("/usr/lib/python3/dist-packages")
from collisiond_client import Client, have_msgpack, moves  # noqa: E402

# The scenes reach 100,000 boxes, past the default --max-world-capacity (65536).
DAEMON_LIMITS = ["--max-body", "256M", "--max-request-memory", "8G", "--max-buffered", "1G",
                 "--max-world-capacity", "1000000", "--max-shapes-total", "4000000"]
UPSERT_CHUNK = 20000
FIGURES = [("client_codec_per_tick_us", "client encode+decode"), ("client_build_per_tick_us", "client move list"),
           ("wall_per_tick_us", "client wall time")]


class Scene:
    """A cq-gen scene: L, dt and per box centre, half extents, quaternion, velocity."""

    def __init__(self, path):
        with open(path) as f:
            words = f.read().split()
        self.L, self.dt = float(words[0]), float(words[1])
        nums = [float(w) for w in words[2:]]
        rows = [nums[k:k + 13] for k in range(0, len(nums) - 12, 13)]
        self.ids = ["b%d" % k for k in range(len(rows))]
        self.pos = [r[0:3] for r in rows]
        self.half = [r[3:6] for r in rows]
        self.rot = [r[6:10] for r in rows]
        self.vel = [r[10:13] for r in rows]

    def advance(self):
        """cq-gen's rule (bench/tick/scene.c): a coordinate leaving [-L, L]
        reverses that velocity component and moves by the reversed one."""
        L, dt = self.L, self.dt
        for p, v in zip(self.pos, self.vel):
            for i in 0, 1, 2:
                x = p[i] + v[i] * dt
                if x < -L or x > L:
                    v[i] = -v[i]
                    x = p[i] + v[i] * dt
                p[i] = x


def pid_cpu(pid):
    """(process CPU clock, utime + stime from /proc) of pid, in seconds."""
    try:
        clock = time.clock_gettime(((~pid) << 3) | 2)  # Linux: CPUCLOCK_SCHED of the process pid
    except OSError:
        clock = -1.0
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return clock, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Daemon:
    def __init__(self, binary, cpu):
        self.tmp = tempfile.TemporaryDirectory(prefix="bench-pyclient-")
        ports = os.path.join(self.tmp.name, "ports")
        self.log = open(os.path.join(self.tmp.name, "daemon.log"), "wb")
        argv = ["taskset", "-c", str(cpu), binary, "--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0",
                "--port-file", ports, "--data-dir", "", "--log-level", "error", "--access-log", "off",
                "--threads", "1"] + DAEMON_LIMITS
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline, text = time.monotonic() + 15, ""
        while not text.endswith("\n"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                sys.exit("tick_py.py: the daemon did not start")
            try:
                with open(ports) as f:
                    text = f.read()
            except FileNotFoundError:
                time.sleep(0.02)
        self.port = int(text.split()[1])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(60)
        self.log.close()
        self.tmp.cleanup()


def load(client, world, scene):
    client.import_world(world, {"settings": {"capacity": len(scene.ids)}, "shapes": []})
    for i in range(0, len(scene.ids), UPSERT_CHUNK):
        client.batch(world, upsert=[{"id": scene.ids[k], "shape": {"type": "box", "half_extents": scene.half[k]},
                                     "pose": {"position": scene.pos[k], "rotation": scene.rot[k]},
                                     "velocity": scene.vel[k]}
                                    for k in range(i, min(i + UPSERT_CHUNK, len(scene.ids)))])


def one_mode(daemon, scene, world, encoding, ticks, warmup, out, prefix):
    name = "pyclient_%s" % encoding
    with Client("127.0.0.1", daemon.port, encoding=encoding, timeout=600) as c:
        load(c, world, scene)
        wall = build = 0.0
        touching = 0
        for k in range(warmup + ticks):
            if k == warmup:
                cpu0, t0 = pid_cpu(daemon.proc.pid), dict(c.timings)
            scene.advance()
            a = time.perf_counter()
            m = moves(scene.ids, scene.pos, scene.rot, scene.vel)
            b = time.perf_counter()
            p = c.pipeline()
            p.batch(world, move=m)
            contacts = p.contacts(world, dt=scene.dt)
            p.execute()
            e = time.perf_counter()
            if k >= warmup:
                wall, build = wall + e - a, build + b - a
            touching = len(contacts.result()["pairs"])
        cpu1 = pid_cpu(daemon.proc.pid)
        enc = c.timings["encode_s"] - t0["encode_s"]
        dec = c.timings["decode_s"] - t0["decode_s"]
        c.delete_world(world)
    figures = [("wall_per_tick_us", wall), ("client_build_per_tick_us", build), ("client_encode_per_tick_us", enc),
               ("client_decode_per_tick_us", dec), ("client_codec_per_tick_us", enc + dec)]
    if cpu0[0] >= 0 and cpu1[0] >= 0:
        figures.append(("daemon_cpu_per_tick_us", cpu1[0] - cpu0[0]))
    figures.append(("daemon_cpu_stat_per_tick_us", cpu1[1] - cpu0[1]))
    for key, seconds in figures:
        out.append("%s%s_%s %.1f" % (prefix, name, key, 1e6 * seconds / ticks))
        print(out[-1], flush=True)
    out.append("%s%s_touching_pairs %d" % (prefix, name, touching))
    print(out[-1], flush=True)


def fmt(v):
    return "{:,.0f}".format(v) if v >= 100 else "%.1f" % v


def spread(values):
    best, worst = min(values), max(values)
    return fmt(best) if fmt(best) == fmt(worst) else "%s / %s" % (fmt(best), fmt(worst))


def report(lines, encodings):
    data = {}
    for line in lines:
        key, value = line.split()
        n, key = key[1:].split(".", 1)
        data.setdefault(int(n), {}).setdefault(key, []).append(float(value))
    print()
    print("| figure | collisiond | peer | peer value | ratio | goal | met? |")
    print("|---|---|---|---|---|---|---|")
    text = {"msgpack": "stream+MessagePack", "json": "stream+JSON"}
    for n in sorted(data):
        v = data[n]
        for enc in encodings:
            cpu = v.get("pyclient_%s_daemon_cpu_per_tick_us" % enc) or v.get("pyclient_%s_daemon_cpu_stat_per_tick_us"
                                                                             % enc)
            for key, what in FIGURES:
                values = v.get("pyclient_%s_%s" % (enc, key))
                if not values or not cpu:
                    continue
                print("| Python client tick over %s, %s boxes, %s µs/tick | %s | daemon CPU for the same tick | "
                      "%s | %.3f | — | |" % (text[enc], "{:,}".format(n), what, spread(values), spread(cpu),
                                            min(values) / min(cpu)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--data", required=True, help="the directory of cq-gen's scene-N-7.txt files")
    ap.add_argument("--world", action="append", default=[], metavar="N:TICKS")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--encodings", default="msgpack,json")
    ap.add_argument("--daemon-cpu", type=int)
    ap.add_argument("--client-cpu", type=int)
    args = ap.parse_args()
    worlds = [tuple(int(x) for x in w.split(":")) for w in (args.world or ["10000:20", "100000:5"])]
    encodings = args.encodings.split(",")
    if "msgpack" in encodings and not have_msgpack():
        sys.exit("tick_py.py: MessagePack needs python3-msgpack (or --encodings json)")
    allowed = sorted(os.sched_getaffinity(0))
    dcpu = allowed[0] if args.daemon_cpu is None else args.daemon_cpu
    others = [c for c in allowed if c != dcpu] or [dcpu]
    ccpu = others[0] if args.client_cpu is None else args.client_cpu
    os.sched_setaffinity(0, {ccpu})
    daemon = Daemon(args.daemon, dcpu)
    lines = []
    try:
        for k in range(args.runs):
            order = encodings[k % len(encodings):] + encodings[:k % len(encodings)]
            for n, ticks in worlds:
                for enc in order:
                    print("round %d/%d: %d boxes, %s" % (k + 1, args.runs, n, enc), file=sys.stderr)
                    # Every mode starts from the scene as cq-gen wrote it.
                    scene = Scene(os.path.join(args.data, "scene-%d-7.txt" % n))
                    one_mode(daemon, scene, "pytick-%d" % n, enc, ticks, args.warmup, lines, "n%d." % n)
    finally:
        daemon.stop()
    report(lines, encodings)


if __name__ == "__main__":
    main()
