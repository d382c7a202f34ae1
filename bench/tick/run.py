#!/usr/bin/env python3
"""`make bench-tick`: the game tick over the wire beside its in-process cost.

  run.py --daemon build/collisiond --tick build/cq-tick --peers build/cq-peers --data DIR
         [--world N:TICKS ...] [--warmup 2] [--runs 3] [--modes M,M,...]
         [--daemon-cpu C] [--client-cpu C] [--raw FILE]
  run.py --from FILE      (the table and the goals again, from a --raw FILE)

Starts collisiond on ephemeral loopback ports (nothing on disk, errors
only in the log, one request thread) pinned with taskset to one CPU, and
runs build/cq-tick's client pinned to another, so the daemon's work and
the client's do not take turns on one core. For each --world N:TICKS
(DIR/scene-N-7.txt, `cq-gen scene N 7`) and each of --runs rounds it
runs, one after another:

- `cq-tick inproc`: the same ticks in process, cq_world_apply of the
  moves then cq_world_contacts with dt, on the daemon's CPU;
- `cq-peers world SCENE - TICKS WARMUP`: Bullet's in-process frame on
  the same scene and motion, on the daemon's CPU;
- `cq-tick wire`: the scene imported into a world, then every mode
  (stream+MessagePack, stream+JSON, HTTP+MessagePack, HTTP+JSON), each
  with --warmup untimed ticks and TICKS timed ones, every request encoded
  before the clock starts. The modes' order rotates from round to round.

Each figure is the best over the rounds (least time) with the worst beside
it; ratios are of the bests, all from this one run. Prints every
program's `key value` lines (prefixed nN.) as they come, then a Markdown
table and each goal, met or missed, with its figures. --raw keeps those
lines in FILE, which `bench/table.py --tick FILE` turns into its rows.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

MODES = ["stream_msgpack", "stream_json", "http_msgpack", "http_json"]
MODE_TEXT = {"stream_msgpack": "stream+MessagePack", "stream_json": "stream+JSON",
             "http_msgpack": "HTTP+MessagePack", "http_json": "HTTP+JSON"}
# The goals: (N, mode, peer: "inproc" or "bullet", the bound on figure / peer).
GOALS = [(10000, "stream_msgpack", "inproc", 1.5), (10000, "stream_msgpack", "bullet", 1.0),
         (100000, "stream_msgpack", "inproc", 1.3)]
# What the wire figures are: the daemon's CPU time and the client's wall time per tick.
FIGURES = [("daemon_cpu_per_tick_us", "daemon CPU"), ("wall_per_tick_us", "client wall time")]
# Large enough for a tick of 100,000 moves in JSON (about 26 MB, and 20-30
# times that once parsed) and for the import of the scene.
# The scenes reach 100,000 boxes, past the default --max-world-capacity (65536).
DAEMON_LIMITS = ["--max-body", "256M", "--max-request-memory", "8G", "--max-buffered", "1G",
                 "--max-world-capacity", "1000000", "--max-shapes-total", "4000000"]


def pinned(cpu, argv):
    return ["taskset", "-c", str(cpu)] + argv


def run(argv, prefix, out):
    """Runs one program; its key value lines are printed with prefix and
    kept in the list out, and come back as a dict. Any failure ends the
    benchmark."""
    p = subprocess.run(argv, stdout=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        sys.stdout.write(p.stdout)
        sys.exit("run.py: %s exited with %d" % (" ".join(argv), p.returncode))
    values = {}
    for line in p.stdout.splitlines():
        words = line.split()
        if len(words) == 2:
            out.append("%s%s %s" % (prefix, words[0], words[1]))
            print(out[-1], flush=True)
            try:
                values[words[0]] = float(words[1])
            except ValueError:
                pass
    return values


class Daemon:
    """collisiond on ephemeral loopback ports, pinned to one CPU."""

    def __init__(self, binary, cpu):
        self.tmp = tempfile.TemporaryDirectory(prefix="bench-tick-")
        ports = os.path.join(self.tmp.name, "ports")
        self.log = open(os.path.join(self.tmp.name, "daemon.log"), "wb")
        argv = pinned(cpu, [binary, "--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0",
                            "--port-file", ports, "--data-dir", "", "--log-level", "error",
                            "--access-log", "off", "--threads", "1"] + DAEMON_LIMITS)
        # taskset execs the daemon, so the child's pid is the daemon's.
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.monotonic() + 15
        text = ""
        while not text.endswith("\n"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                sys.exit("run.py: the daemon did not start: " + self.log_text())
            try:
                with open(ports) as f:
                    text = f.read()
            except FileNotFoundError:
                pass
            time.sleep(0.02)
        self.http_port, self.stream_port = (int(x) for x in text.split())

    def log_text(self):
        with open(self.log.name, "rb") as f:
            return f.read()[-2000:].decode(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        self.tmp.cleanup()


# ---- the figures -----------------------------------------------------------

def read_values(lines):
    """{N: {key: [value per round]}} from the nN.key value lines."""
    out = {}
    for line in lines:
        words = line.split()
        if len(words) != 2 or not words[0].startswith("n") or "." not in words[0]:
            continue
        n, key = words[0][1:].split(".", 1)
        try:
            out.setdefault(int(n), {}).setdefault(key, []).append(float(words[1]))
        except ValueError:
            pass
    return out


def fmt(v):
    if v >= 1e4:
        return "{:,.0f}".format(v)
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def spread(values):
    """'best / worst' of times (one figure when they print the same)."""
    best, worst = min(values), max(values)
    return fmt(best) if fmt(best) == fmt(worst) else "%s / %s" % (fmt(best), fmt(worst))


def peer_of(v, peer):
    key = "inproc_per_tick_us" if peer == "inproc" else "bullet_world_frame_ms"
    scale = 1.0 if peer == "inproc" else 1000.0  # Bullet prints ms
    return [x * scale for x in v.get(key, [])]


PEER_TEXT = {"inproc": "cq in process (cq_world_apply + cq_world_contacts)",
             "bullet": "Bullet in-process frame (btCollisionWorld, dbvt)"}


def goal_of(n, mode, peer):
    for gn, gmode, gpeer, bound in GOALS:
        if (gn, gmode, gpeer) == (n, mode, peer):
            return bound
    return None


def row(label, values, peer, peer_values, bound):
    if not values or not peer_values:
        return "| %s | %s | %s | | | | missing |" % (label, spread(values) if values else "—", PEER_TEXT[peer])
    ratio = min(values) / min(peer_values)
    if bound is None:
        goal, met = "—", ""
    else:
        goal = ("≤ %g" % bound) if peer == "inproc" else "< 1"
        met = "yes" if (ratio <= bound if peer == "inproc" else ratio < bound) else "no"
    return "| %s | %s | %s | %s | %.3f | %s | %s |" % (label, spread(values), PEER_TEXT[peer], spread(peer_values),
                                                        ratio, goal, met)


def table_rows(data):
    """The rows of the one table (bench/table.py's columns), per N."""
    rows = []
    for n in sorted(data):
        v, boxes = data[n], "{:,} boxes".format(n)
        inproc, bullet = peer_of(v, "inproc"), peer_of(v, "bullet")
        rows.append(row("tick in process, %s, µs" % boxes, inproc, "bullet", bullet, None))
        for mode in MODES:
            if "%s_unsupported" % mode in v and not v.get("%s_wall_per_tick_us" % mode):
                rows.append("| tick over %s, %s | the daemon does not take MessagePack | %s | %s | | %s | missing |"
                            % (MODE_TEXT[mode], boxes, PEER_TEXT["inproc"], spread(inproc) if inproc else "",
                               "≤ %g" % goal_of(n, mode, "inproc") if goal_of(n, mode, "inproc") else "—"))
                continue
            for key, what in FIGURES:
                values = v.get("%s_%s" % (mode, key), [])
                if not values:
                    continue
                label = "tick over %s, %s, %s µs/tick" % (MODE_TEXT[mode], boxes, what)
                rows.append(row(label, values, "inproc", inproc, goal_of(n, mode, "inproc")))
                if goal_of(n, mode, "bullet") is not None:
                    rows.append(row(label, values, "bullet", bullet, goal_of(n, mode, "bullet")))
    return rows


def goal_lines(data):
    """Each goal, met or missed, for the daemon's CPU and the client's wall time."""
    lines = []
    for n, mode, peer, bound in GOALS:
        v = data.get(n, {})
        peer_values = peer_of(v, peer)
        text = ("%s tick at %s boxes <= %gx the in-process cost" % (MODE_TEXT[mode], "{:,}".format(n), bound)
                if peer == "inproc" else
                "%s tick at %s boxes below Bullet's in-process frame" % (MODE_TEXT[mode], "{:,}".format(n)))
        for key, what in FIGURES:
            values = v.get("%s_%s" % (mode, key), [])
            if not values or not peer_values:
                why = " (the daemon does not take MessagePack)" if "%s_unsupported" % mode in v else ""
                lines.append("goal: %s (%s): not measured%s" % (text, what, why))
                continue
            ratio = min(values) / min(peer_values)
            met = ratio <= bound if peer == "inproc" else ratio < bound
            lines.append("goal: %s (%s): %s: %s µs against %s µs, %.2fx" % (
                text, what, "met" if met else "missed", fmt(min(values)), fmt(min(peer_values)), ratio))
    return lines


def report(data, head):
    print()
    print(head)
    print()
    print("| figure | collisiond | peer | peer value | ratio | goal | met? |")
    print("|---|---|---|---|---|---|---|")
    for r in table_rows(data):
        print(r)
    print()
    for line in goal_lines(data):
        print(line)


# ---- the run ---------------------------------------------------------------

def cpus(args):
    allowed = sorted(os.sched_getaffinity(0))
    daemon = allowed[0] if args.daemon_cpu is None else args.daemon_cpu
    others = [c for c in allowed if c != daemon]
    client = (others[0] if others else daemon) if args.client_cpu is None else args.client_cpu
    for c in (daemon, client):
        if c not in allowed:
            sys.exit("run.py: CPU %d is not one this process may use (%s)" % (c, allowed))
    return daemon, client


def one_round(k, args, daemon, cpu, out):
    modes = args.modes[k % len(args.modes):] + args.modes[:k % len(args.modes)]  # alternate the order
    for n, ticks in args.world:
        scene = os.path.join(args.data, "scene-%d-7.txt" % n)
        prefix = "n%d." % n
        print("round %d/%d: %d boxes" % (k + 1, args.runs, n), file=sys.stderr)
        run(pinned(cpu[0], [args.tick, "inproc", scene, str(ticks), str(args.warmup)]), prefix, out)
        run(pinned(cpu[0], [args.peers, "world", scene, "-", str(ticks), str(args.warmup)]), prefix, out)
        run(pinned(cpu[1], [args.tick, "wire", scene, str(ticks), str(args.warmup),
                            "--http-port", str(daemon.http_port), "--stream-port", str(daemon.stream_port),
                            "--pid", str(daemon.proc.pid), "--world", "tick-%d" % n, "--modes", ",".join(modes)]),
            prefix, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon")
    ap.add_argument("--tick")
    ap.add_argument("--peers")
    ap.add_argument("--data")
    ap.add_argument("--world", action="append", default=[], metavar="N:TICKS")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--daemon-cpu", type=int)
    ap.add_argument("--client-cpu", type=int)
    ap.add_argument("--raw")
    ap.add_argument("--from", dest="source", metavar="FILE")
    args = ap.parse_args()
    if args.source:
        with open(args.source) as f:
            report(read_values(f), "(from %s)" % args.source)
        return
    if not (args.daemon and args.tick and args.peers and args.data and args.world):
        ap.error("--daemon, --tick, --peers, --data and --world are needed")
    args.world = [tuple(int(x) for x in w.split(":")) for w in args.world]
    args.modes = args.modes.split(",")
    for m in args.modes:
        if m not in MODES:
            ap.error("unknown mode %s (%s)" % (m, ", ".join(MODES)))
    cpu = cpus(args)
    lines = []
    load0, t0 = open("/proc/loadavg").read().split()[0], time.time()
    daemon = Daemon(args.daemon, cpu[0])
    try:
        for k in range(args.runs):
            one_round(k, args, daemon, cpu, lines)
    finally:
        daemon.stop()
    head = ("%d round(s), %.0f s; the daemon and the in-process programs on CPU %d, the client on CPU %d; "
            "load average %s at the start, %s at the end. Each figure: best / worst over the rounds."
            % (args.runs, time.time() - t0, cpu[0], cpu[1], load0, open("/proc/loadavg").read().split()[0]))
    if args.raw:
        with open(args.raw, "w") as f:
            f.write("\n".join(lines + ["# " + head]) + "\n")
    data = read_values(lines)
    report(data, head)


if __name__ == "__main__":
    main()
