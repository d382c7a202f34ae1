#!/usr/bin/env python3
"""`make bench`: collisiond beside its peers, in one run, on the same inputs.

  table.py --cq build/cq-bench --peers build/cq-peers --pairs PAIRS --data DIR
           [--world N:FRAMES ...] [--runs 3] [--cpu N] [--http FILE] [--tick FILE] [--client FILE] [--raw DIR]
           [--load-move N:FRAMES ...] [--load-teleport N ...] [--load-put N:REPS ...] [--load-http FILE]

Runs `cq-bench pairs PAIRS` and `cq-peers pairs PAIRS`, then for each
--world `cq-bench world` and `cq-peers world` on DIR/scene-N-7.txt and
DIR/rays-100000-99-in-N.txt for FRAMES frames, alternating the two programs
so that a burst of load from other tenants of the machine hits both alike;
the whole round is repeated --runs times. Every program runs on the same
CPU (--cpu, by default the first this process may use; -1 leaves them
free): the two virtual cores of a cloud machine can differ by a third in
speed, and a ratio of figures taken on different cores measures the cores.
Both programs print `key value`
lines. Each figure is the best over the runs (least time, highest rate),
shown with the worst after a slash, the spread; ratios are of the bests.
--http adds the rows of a `make bench-http` output (read from FILE),
--tick those of a `make bench-tick` run (bench/tick/run.py's --raw FILE),
--client those of a `make bench-client` run (bench/client/run.py's --raw FILE), and
--raw keeps every program's output there. The --load-* options add the rows
of worlds under game load (bench/world_load/rows.py): `cq-bench load` once
a round on the same CPU, and --load-http the lines of one
bench/world_load/run.py run. Prints Markdown: the figures
with their goals, then the counts that must agree between the programs.
"""
import argparse
import os
import subprocess
import sys
import time

# figure, collisiond key, peer, peer key, lower is better, goal (None: no goal)
PAIR_FIGURES = [
    ("box-box overlap (boolean), ns/pair", "box_box_overlap_ns",
     "Bullet btBoxBoxDetector", "bullet_box_box_ns", True, 0.10),
    ("box-box overlap (boolean, batch of 10,000), ns/pair", "box_box_overlap_batch_ns",
     "Bullet btBoxBoxDetector", "bullet_box_box_ns", True, 0.10),
    ("box-box contacts (manifold), ns/pair", "box_box_contacts_ns",
     "Bullet btBoxBoxDetector", "bullet_box_box_ns", True, 0.5),
    ("box-box contacts (manifold, batch of 10,000), ns/pair", "box_box_contacts_batch_ns",
     "Bullet btBoxBoxDetector", "bullet_box_box_ns", True, 0.5),
    ("box-box contacts (manifold), ns/pair", "box_box_contacts_ns",
     "FCL collide (box-box, 4 contacts)", "fcl_box_box_ns", True, None),
    ("GJK+EPA on 8-point hulls, ns/pair", "gjk_epa_ns",
     "Bullet btGjkEpaSolver2", "bullet_gjk_epa_ns", True, 0.5),
    ("GJK+EPA on 8-point hulls, ns/pair", "gjk_epa_ns",
     "libccd GJK+EPA", "ccd_gjk_epa_ns", True, 0.25),
    ("GJK+EPA on 8-point hulls, ns/pair", "gjk_epa_ns",
     "libccd MPR", "ccd_mpr_ns", True, None),
    ("GJK+EPA on 8-point hulls, with the manifold, ns/pair", "gjk_epa_manifold_ns",
     "Bullet btGjkEpaSolver2 (no manifold)", "bullet_gjk_epa_ns", True, None),
    ("GJK+EPA on 8-point hulls (batch of 10,000), ns/pair", "gjk_epa_batch_ns",
     "Bullet btGjkEpaSolver2 (one call a pair)", "bullet_gjk_epa_ns", True, 0.5),
    ("GJK+EPA on 8-point hulls (batch of 10,000), ns/pair", "gjk_epa_batch_ns",
     "libccd GJK+EPA (one call a pair)", "ccd_gjk_epa_ns", True, 0.25),
]

# figure (with {n} and {frames}), collisiond key, peer, peer key, lower is better, goal when n == 10,000
WORLD_FIGURES = [
    ("world frame, {n} boxes ({frames} frames), ms", "world_frame_ms",
     "Bullet btCollisionWorld (dbvt)", "bullet_world_frame_ms", True, 0.5),
    ("closest-hit rays, {n} boxes, rays/s", "rays_per_s",
     "Bullet rayTest", "bullet_rays_per_s", False, 2.0),
    ("closest-hit rays, {n} boxes, rays/s", "rays_per_s",
     "Bullet rayTest, GJK cast flag", "bullet_gjk_rays_per_s", False, None),
]

# what must agree: label, collisiond key, peer key
PAIR_COUNTS = [
    ("box-box overlaps", "overlaps", "bullet_box_box_overlaps", "Bullet btBoxBoxDetector"),
    ("box-box overlaps", "overlaps", "fcl_box_box_overlaps", "FCL"),
    ("box-box contact points", "contact_points", "bullet_box_box_contact_points", "Bullet btBoxBoxDetector"),
    ("box-box contact points", "contact_points", "fcl_box_box_contact_points", "FCL"),
    ("hull overlaps", "gjk_epa_overlaps", "bullet_gjk_epa_overlaps", "Bullet btGjkEpaSolver2"),
    ("hull overlaps", "gjk_epa_overlaps", "ccd_gjk_epa_overlaps", "libccd GJK+EPA"),
    ("hull overlaps", "gjk_epa_overlaps", "ccd_mpr_overlaps", "libccd MPR"),
]
WORLD_COUNTS = [
    ("touching pairs, {n} boxes", "touching_pairs", "bullet_penetrating_pairs", "Bullet (manifolds with a point at depth >= 0)"),
    ("touching pairs, {n} boxes", "touching_pairs", "bullet_touching_pairs", "Bullet (manifolds with any point)"),
    ("contact points, {n} boxes", "contacts", "bullet_contacts", "Bullet (persistent manifolds)"),
    ("ray hits, {n} boxes", "ray_hits", "bullet_ray_hits", "Bullet rayTest (default subsimplex cast)"),
    ("ray hits, {n} boxes", "ray_hits", "bullet_gjk_ray_hits", "Bullet rayTest (GJK cast flag)"),
]


def run(cmd, raw, name):
    """Runs one program; returns its key -> float lines (fails the bench on error)."""
    out = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True)
    if raw:
        with open(os.path.join(raw, name), "a") as f:
            f.write("$ %s\n%s" % (" ".join(cmd), out.stdout))
    if out.returncode != 0:
        sys.stdout.write(out.stdout)
        sys.exit("table.py: %s exited with %d" % (" ".join(cmd), out.returncode))
    return parse(out.stdout.splitlines())


def parse(lines):
    values = {}
    for line in lines:
        words = line.split()
        if len(words) == 2:
            try:
                values[words[0]] = float(words[1])
            except ValueError:
                pass
    return values


def fmt(v):
    if v >= 1e4:
        return "{:,.0f}".format(v)
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


class Series:
    """One figure's values over the runs."""

    def __init__(self, values, lower_is_better):
        self.values, self.lower = values, lower_is_better

    def best(self):
        return min(self.values) if self.lower else max(self.values)

    def text(self):
        worst = max(self.values) if self.lower else min(self.values)
        if len(self.values) == 1 or fmt(worst) == fmt(self.best()):
            return fmt(self.best())
        return "%s / %s" % (fmt(self.best()), fmt(worst))


def figure_row(label, runs, cq_key, peer, peer_key, lower, goal):
    cq = Series([r[cq_key] for r in runs if cq_key in r], lower)
    pe = Series([r[peer_key] for r in runs if peer_key in r], lower)
    if not cq.values or not pe.values:
        return "| %s | %s | %s | | | | missing |" % (label, cq.values and cq.text() or "—", peer)
    ratio = cq.best() / pe.best()
    if goal is None:
        goal_text, met = "—", ""
    elif lower:
        goal_text, met = "≤ %g" % goal, "yes" if ratio <= goal else "no"
    else:
        goal_text, met = "≥ %g" % goal, "yes" if ratio >= goal else "no"
    return "| %s | %s | %s | %s | %.3f | %s | %s |" % (label, cq.text(), peer, pe.text(), ratio, goal_text, met)


def count_rows(label, runs, cq_key, peer_key, peer):
    cq = {r[cq_key] for r in runs if cq_key in r}
    pe = {r[peer_key] for r in runs if peer_key in r}
    if not cq or not pe:
        return []
    c, p = max(cq), max(pe)
    steady = "" if len(cq) == 1 and len(pe) == 1 else " (varied between runs)"
    rel = "%+.2f%%" % (100.0 * (p - c) / c) if c else "—"
    return ["| %s | %d | %s | %d | %+d (%s)%s |" % (label, c, peer, p, p - c, rel, steady)]


def http_rows(path):
    with open(path) as f:
        h = parse(f.readlines())
    rows = []
    if "collisiond_rps" in h and "nginx_rps" in h:
        ratio = h["collisiond_rps"] / h["nginx_rps"]
        rows.append("| HTTP POST /v1/pair, requests/s (wrk) | %s | nginx, static answer | %s | %.3f | ≥ 0.6 | %s |"
                    % (fmt(h["collisiond_rps"]), fmt(h["nginx_rps"]), ratio, "yes" if ratio >= 0.6 else "no"))
    if "collisiond_mp_rps" in h and "nginx_mp_rps" in h:
        ratio = h["collisiond_mp_rps"] / h["nginx_mp_rps"]
        rows.append("| HTTP POST /v1/pair, MessagePack, requests/s (wrk) | %s | nginx, static MessagePack answer (a file) "
                    "| %s | %.3f | ≥ 0.6 | %s |" % (fmt(h["collisiond_mp_rps"]), fmt(h["nginx_mp_rps"]), ratio,
                                                  "yes" if ratio >= 0.6 else "no"))
    elif "collisiond_mp_status" in h:
        rows.append("| HTTP POST /v1/pair, MessagePack, requests/s (wrk) | answered %d | nginx, static MessagePack answer "
                    "(a file) | | | ≥ 0.6 | missing |" % h["collisiond_mp_status"])
    if "collisiond_mp_cpu_us_per_req" in h and "nginx_mp_cpu_us_per_req" in h:
        rows.append("| HTTP POST /v1/pair, MessagePack, server CPU µs/request | %s | nginx, static MessagePack answer (a file) "
                    "| %s | %.3f | — | |" % (fmt(h["collisiond_mp_cpu_us_per_req"]), fmt(h["nginx_mp_cpu_us_per_req"]),
                                           h["collisiond_mp_cpu_us_per_req"] / h["nginx_mp_cpu_us_per_req"]))
    if "nginx_file_rps" in h and "nginx_rps" in h:
        rows.append("| HTTP POST /v1/pair, nginx's JSON answer from a file, requests/s | %s | nginx, static answer | %s "
                    "| %.3f | — | |" % (fmt(h["nginx_file_rps"]), fmt(h["nginx_rps"]), h["nginx_file_rps"] / h["nginx_rps"]))
    if "collisiond_cpu_us_per_req" in h and "nginx_cpu_us_per_req" in h:
        rows.append("| HTTP POST /v1/pair, server CPU µs/request | %s | nginx, static answer | %s | %.3f | — | |"
                    % (fmt(h["collisiond_cpu_us_per_req"]), fmt(h["nginx_cpu_us_per_req"]),
                       h["collisiond_cpu_us_per_req"] / h["nginx_cpu_us_per_req"]))
    # The libraries alone (bench/http/floor.c): what they leave of nginx's
    # rate before any of the daemon's own work.
    for key, what in (("floor", "libmicrohttpd alone, fixed answer"),
                      ("floor_parse", "libmicrohttpd + jansson parse, fixed answer")):
        if key + "_rps" in h and "nginx_rps" in h:
            rows.append("| HTTP POST /v1/pair, %s, requests/s | %s | nginx, static answer | %s | %.3f | — | |"
                        % (what, fmt(h[key + "_rps"]), fmt(h["nginx_rps"]), h[key + "_rps"] / h["nginx_rps"]))
        if key + "_cpu_us_per_req" in h and "nginx_cpu_us_per_req" in h:
            rows.append("| HTTP POST /v1/pair, %s, server CPU µs/request | %s | nginx, static answer | %s | %.3f | — | |"
                        % (what, fmt(h[key + "_cpu_us_per_req"]), fmt(h["nginx_cpu_us_per_req"]),
                           h[key + "_cpu_us_per_req"] / h["nginx_cpu_us_per_req"]))
    if "stream_pair_rps" in h:
        rows.append("| stream POST /v1/pair, pipelined on one connection, requests/s | %s | — | | | — | |"
                    % fmt(h["stream_pair_rps"]))
    if "stream_pair_cpu_us_per_req" in h:
        rows.append("| stream POST /v1/pair, pipelined, server CPU µs/request | %s | — | | | — | |"
                    % fmt(h["stream_pair_cpu_us_per_req"]))
    shapes = "{:,} boxes".format(int(h["scene_shapes"])) if "scene_shapes" in h else "the scene"
    for prefix, transport in (("contacts", "HTTP"), ("stream_contacts", "stream")):
        for key, what in (("p50_ms", "p50 latency, ms"), ("p99_ms", "p99 latency, ms"),
                          ("daemon_cpu_ms", "daemon CPU per query, ms")):
            if prefix + "_" + key in h:
                rows.append("| %s contacts query, %s, %s | %s | — | | | — | |"
                            % (transport, shapes, what, fmt(h[prefix + "_" + key])))
    return rows


def tick_rows(path):
    """bench/tick/run.py's rows, from the raw lines it kept."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tick"))
    import run as tick_run
    with open(path) as f:
        return tick_run.table_rows(tick_run.read_values(f))


def client_rows(path):
    """bench/client/run.py's rows, from the raw lines it kept."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "client"))
    import run as client_run
    with open(path) as f:
        return client_run.table_rows(client_run.read_values(f))


def load_rows(runs, args):
    """bench/world_load's rows: `cq-bench load` rounds and one run.py output."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "world_load"))
    import rows as load
    http_values = None
    if args.load_http:
        with open(args.load_http) as f:
            http_values = parse(f.readlines())
    return load.rows(runs, args.load_move, args.load_teleport, http_values, fmt)


def load_args(args):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "world_load"))
    import rows as load
    return load.cq_args(args.data, args.load_move, args.load_teleport, args.load_put)


def pair_arg(text):
    return tuple(int(x) for x in text.split(":"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cq", required=True)
    ap.add_argument("--peers", required=True)
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--world", action="append", default=[], metavar="N:FRAMES")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=min(os.sched_getaffinity(0)))
    ap.add_argument("--http")
    ap.add_argument("--tick")
    ap.add_argument("--client")
    ap.add_argument("--raw")
    ap.add_argument("--load-move", action="append", default=[], type=pair_arg, metavar="N:FRAMES")
    ap.add_argument("--load-teleport", action="append", default=[], type=int, metavar="N")
    ap.add_argument("--load-put", action="append", default=[], type=pair_arg, metavar="N:REPS")
    ap.add_argument("--load-http", metavar="FILE")
    args = ap.parse_args()
    worlds = [tuple(int(x) for x in w.split(":")) for w in args.world]
    if args.cpu >= 0:  # the programs inherit it
        if args.cpu not in os.sched_getaffinity(0):
            sys.exit("table.py: --cpu %d is not one of the CPUs this process may use (%s)"
                     % (args.cpu, ", ".join(str(c) for c in sorted(os.sched_getaffinity(0)))))
        os.sched_setaffinity(0, {args.cpu})
    if args.raw:
        os.makedirs(args.raw, exist_ok=True)
        for name in os.listdir(args.raw):
            os.remove(os.path.join(args.raw, name))

    load0, t0 = open("/proc/loadavg").read().split()[0], time.time()
    pairs, world, loads = [], {n: [] for n, _ in worlds}, []
    cq_load = load_args(args)
    for k in range(args.runs):
        print("run %d/%d: pairs" % (k + 1, args.runs), file=sys.stderr)
        r = run([args.cq, "pairs", args.pairs], args.raw, "cq-bench.txt")
        r.update(run([args.peers, "pairs", args.pairs], args.raw, "cq-peers.txt"))
        pairs.append(r)
        for n, frames in worlds:
            print("run %d/%d: world %d" % (k + 1, args.runs, n), file=sys.stderr)
            files = [os.path.join(args.data, "scene-%d-7.txt" % n), os.path.join(args.data, "rays-100000-99-in-%d.txt" % n)]
            r = run([args.cq, "world"] + files + [str(frames)], args.raw, "cq-bench.txt")
            r.update(run([args.peers, "world"] + files + [str(frames)], args.raw, "cq-peers.txt"))
            world[n].append(r)
        if cq_load:
            print("run %d/%d: worlds under game load" % (k + 1, args.runs), file=sys.stderr)
            loads.append(run([args.cq, "load"] + cq_load, args.raw, "cq-bench-load.txt"))

    where = "every program on CPU %d" % args.cpu if args.cpu >= 0 else "programs on any CPU"
    print("%d run(s), %.0f s, %s; load average %s at the start, %s at the end. Each figure: best / worst over the runs."
          % (args.runs, time.time() - t0, where, load0, open("/proc/loadavg").read().split()[0]))
    print()
    print("| figure | collisiond | peer | peer value | ratio | goal | met? |")
    print("|---|---|---|---|---|---|---|")
    for label, cq_key, peer, peer_key, lower, goal in PAIR_FIGURES:
        print(figure_row(label, pairs, cq_key, peer, peer_key, lower, goal))
    for label, cq_key, peer, peer_key, lower, goal in WORLD_FIGURES:
        for n, frames in worlds:
            text = label.format(n="{:,}".format(n), frames=frames)
            print(figure_row(text, world[n], cq_key, peer, peer_key, lower, goal if n == 10000 else None))
    if args.http:
        for row in http_rows(args.http):
            print(row)
    if args.tick:
        for row in tick_rows(args.tick):
            print(row)
    if args.client:
        for row in client_rows(args.client):
            print(row)
    if cq_load or args.load_http:
        for row in load_rows(loads, args):
            print(row)
    print()
    print("| count (must agree) | collisiond | peer | peer value | peer − collisiond |")
    print("|---|---|---|---|---|")
    for label, cq_key, peer_key, peer in PAIR_COUNTS:
        for row in count_rows(label, pairs, cq_key, peer_key, peer):
            print(row)
    for label, cq_key, peer_key, peer in WORLD_COUNTS:
        for n, _ in worlds:
            for row in count_rows(label.format(n="{:,}".format(n)), world[n], cq_key, peer_key, peer):
                print(row)


if __name__ == "__main__":
    main()
