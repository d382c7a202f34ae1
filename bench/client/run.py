#!/usr/bin/env python3
"""`make bench-client`: the C client's tick round trip beside the daemon's CPU.

  run.py --daemon build/collisiond --tick build/examples/tick [--world N:TICKS ...]
         [--runs 3] [--warmup 2] [--daemon-cpu C] [--client-cpu C] [--raw FILE]

For each N, starts collisiond (one request thread, pinned to --daemon-cpu)
and runs examples/tick (pinned to --client-cpu) for --warmup ticks not
counted (the buffers grow, the daemon builds its trees), then TICKS unpaced
ticks of N boxes: one move batch, contacts with dt and 8 rays per round trip. tick
reads the daemon's user + system CPU from /proc/PID/stat before and after
its loop, and libcqc counts its own time encoding requests and decoding
replies (cqc_get_stats). The issue's goal: the client's encode + decode per
tick at most 0.3x the daemon's CPU for that tick. examples/tick.py (the
Python client) is run the same way, its figure read from its summary line's
client encode+decode. Each figure is the best (least) over --runs; the ratio
is of one run's figures (the best run's), never across runs. --raw keeps
the `key value` lines for bench/table.py --client.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

GOAL = 0.3
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def pinned(cpu, argv):
    return ["taskset", "-c", str(cpu)] + argv if cpu is not None and cpu >= 0 else argv


class Daemon:
    """collisiond on ephemeral loopback ports, pinned to one CPU."""

    def __init__(self, binary, cpu):
        self.tmp = tempfile.TemporaryDirectory(prefix="bench-client-")
        ports = os.path.join(self.tmp.name, "ports")
        self.log = open(os.path.join(self.tmp.name, "daemon.log"), "wb")
        argv = pinned(cpu, [binary, "--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0",
                            "--port-file", ports, "--data-dir", "", "--log-level", "error",
                            "--access-log", "off", "--threads", "1",
                            # scenes of 100,000 boxes: past the default --max-world-capacity (65536)
                            "--max-world-capacity", "1000000", "--max-shapes-total", "4000000"])
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log)
        deadline, text = time.monotonic() + 15, ""
        while not text.endswith("\n"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                sys.exit("run.py: the daemon did not start")
            try:
                with open(ports) as f:
                    text = f.read()
            except FileNotFoundError:
                pass
            time.sleep(0.02)
        self.stream_port = int(text.split()[1])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)
        self.log.close()
        self.tmp.cleanup()


def c_tick(args, d, n, ticks):
    argv = pinned(args.client_cpu, [args.tick, "--port", str(d.stream_port), "--boxes", str(n), "--ticks",
                                    str(ticks), "--free-run", "--warmup", str(args.warmup),
                                    "--daemon-pid", str(d.proc.pid)])
    out = subprocess.run(argv, stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout
    enc = re.search(r"client encode ([\d.]+) us \+ decode ([\d.]+) us", out)
    cpu = re.search(r"daemon_cpu_us_per_tick ([\d.]+)", out)
    p50 = re.search(r"p50_ms=([\d.]+)", out)
    return {"encode_us": float(enc.group(1)), "decode_us": float(enc.group(2)),
            "client_us": float(enc.group(1)) + float(enc.group(2)),
            "daemon_cpu_us": float(cpu.group(1)), "round_trip_p50_ms": float(p50.group(1))}


def py_tick(args, d, n, ticks):
    script = os.path.join(ROOT, "examples", "tick.py")
    if not os.path.exists(script):
        return {}
    argv = pinned(args.client_cpu, ["/usr/bin/python3", script, "--port", str(d.stream_port), "--boxes", str(n),
                                    "--ticks", str(ticks)])
    p = subprocess.run(argv, stdout=subprocess.PIPE, universal_newlines=True)
    m = re.search(r"client encode\+decode ([\d.]+) ms per tick", p.stdout) if p.returncode == 0 else None
    return {"py_client_us": 1e3 * float(m.group(1))} if m else {}


def table_rows(values):
    """Markdown rows (bench/table.py's columns) from `N key value` lines."""
    rows = []
    for n in sorted({k[0] for k in values}):
        v = {k[1]: x for k, x in values.items() if k[0] == n}
        if "client_us" not in v:
            continue
        ratio = v["client_us"] / v["daemon_cpu_us"] if v.get("daemon_cpu_us") else float("nan")
        rows.append("| C client tick, %s boxes: encode + decode per tick, µs | %.0f | daemon CPU for the tick, µs | "
                    "%.0f | %.2f | ≤ %.1f | %s |" % ("{:,}".format(n), v["client_us"], v["daemon_cpu_us"], ratio,
                                                     GOAL, "met" if ratio <= GOAL else "missed"))
        rows.append("| C client tick, %s boxes: round trip p50, ms | %.2f | — | | | — | |"
                    % ("{:,}".format(n), v["round_trip_p50_ms"]))
        if "py_client_us" in v:
            rows.append("| Python client tick, %s boxes: client time per tick, µs | %.0f | daemon CPU for the tick, µs"
                        " | %.0f | %.2f | — | |" % ("{:,}".format(n), v["py_client_us"], v["daemon_cpu_us"],
                                                   v["py_client_us"] / v["daemon_cpu_us"]))
    return rows


def read_values(lines):
    values = {}
    for line in lines:
        words = line.split()
        if len(words) == 3:
            values[(int(words[0]), words[1])] = float(words[2])
    return values


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--tick", required=True)
    ap.add_argument("--world", action="append", default=[], metavar="N:TICKS")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=2)
    cpus = sorted(os.sched_getaffinity(0))
    ap.add_argument("--daemon-cpu", type=int, default=cpus[0])
    ap.add_argument("--client-cpu", type=int, default=cpus[1] if len(cpus) > 1 else cpus[0])
    ap.add_argument("--raw")
    args = ap.parse_args()
    worlds = [tuple(int(x) for x in w.split(":")) for w in args.world] or [(10000, 60), (100000, 10)]
    best = {}
    for k in range(args.runs):
        for n, ticks in worlds:
            print("run %d/%d: %d boxes" % (k + 1, args.runs, n), file=sys.stderr)
            d = Daemon(args.daemon, args.daemon_cpu)
            try:
                r = c_tick(args, d, n, ticks)
                r.update(py_tick(args, d, n, max(2, ticks // 4)))
            finally:
                d.stop()
            # The best run is the one whose client time is least; its own
            # daemon CPU stands beside it, so the ratio is of one run.
            if n not in best or r["client_us"] < best[n]["client_us"]:
                best[n] = r
    lines = ["%d %s %.3f" % (n, key, x) for n in sorted(best) for key, x in sorted(best[n].items())]
    if args.raw:
        with open(args.raw, "w") as f:
            f.write("\n".join(lines) + "\n")
    for line in lines:
        print(line)
    print()
    print("| figure | collisiond | peer | peer value | ratio | goal | met? |")
    print("|---|---|---|---|---|---|---|")
    for row in table_rows(read_values(lines)):
        print(row)


if __name__ == "__main__":
    main()
