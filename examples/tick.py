#!/usr/bin/env python3
"""A game server's tick loop against collisiond, with the Python client.

    examples/tick.py [--host 127.0.0.1] [--port 7879] [--boxes 10000] [--ticks 600] [--token T]

Fills a world with N boxes drifting in a cube, then runs --ticks ticks at
--hz (60) a second. Each tick moves every box (bouncing off the cube's
walls) and sends, pipelined in one write and one round trip: the move
batch, the contacts with dt (so fast boxes are swept), and a few ray casts
down through the cube. Once a second it prints the latency percentiles of
that second's ticks (the round trip: encoding, the daemon's work, decoding)
and the ticks missed (a round trip that ran past the next tick's start);
at the end one summary line, and exits 0. The cube's size keeps the number
of touching pairs near the number of boxes whatever N.

--port is the daemon's stream port (--stream-listen, default 7879). Run it
from the repository (it finds clients/python itself) or with the client
installed (pip install ./clients/python).
"""
import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))
from collisiond_client import Client, CollisiondError, NotFound, geometry as g, moves  # noqa: E402

UPSERT_CHUNK = 5000  # boxes per batch while filling the world (well under --max-batch and --max-body)


class Boxes:
    """N boxes in the cube [-L, L]^3: ids, positions and velocities as lists."""

    def __init__(self, n, seed):
        rnd = random.Random(seed)
        self.L = max(4.0, 1.1 * n ** (1 / 3))  # about one box per 10 cubic units
        L = self.L
        self.ids = ["b%d" % i for i in range(n)]
        self.half = [(rnd.uniform(0.2, 0.6), rnd.uniform(0.2, 0.6), rnd.uniform(0.2, 0.6)) for _ in range(n)]
        self.pos = [[rnd.uniform(-L, L) for _ in range(3)] for _ in range(n)]
        self.vel = [[rnd.uniform(-2, 2) for _ in range(3)] for _ in range(n)]
        self.rot = [g.quat_axis_angle((rnd.random() + 0.1, rnd.random(), rnd.random()), rnd.uniform(0, 6.28))
                    for _ in range(n)]

    def upserts(self):
        for i in range(0, len(self.ids), UPSERT_CHUNK):
            yield [{"id": self.ids[k], "shape": g.box(*self.half[k]),
                    "pose": {"position": self.pos[k], "rotation": self.rot[k]}, "velocity": self.vel[k]}
                   for k in range(i, min(i + UPSERT_CHUNK, len(self.ids)))]

    def advance(self, dt):
        """Moves every box by v dt; a coordinate leaving [-L, L] reverses that velocity component."""
        L = self.L
        for p, v in zip(self.pos, self.vel):
            for k in 0, 1, 2:
                x = p[k] + v[k] * dt
                if x > L or x < -L:
                    v[k] = -v[k]
                    x = p[k] + v[k] * dt
                p[k] = x


def percentile(sorted_values, q):
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def describe(lat_ms):
    s = sorted(lat_ms)
    return "p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms" % (
        percentile(s, 0.5), percentile(s, 0.9), percentile(s, 0.99), s[-1] if s else 0.0)


def one_tick(client, world, boxes, dt, rays):
    """The tick's one round trip: moves, contacts with dt, ray casts. Returns
    (touching pairs, ray hits)."""
    p = client.pipeline()
    p.batch(world, move=moves(boxes.ids, boxes.pos, None, boxes.vel))
    contacts = p.contacts(world, dt=dt)
    hits = p.raycast(world, rays)
    p.execute()
    return len(contacts.result()["pairs"]), sum(h is not None for h in hits.result()["hits"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=7879, help="the daemon's stream port")
    ap.add_argument("--boxes", type=int, default=10000)
    ap.add_argument("--ticks", type=int, default=600)
    ap.add_argument("--token", default=os.environ.get("COLLISIOND_TOKEN"), help="bearer token (or $COLLISIOND_TOKEN)")
    ap.add_argument("--hz", type=float, default=60.0)
    ap.add_argument("--rays", type=int, default=8, help="ray casts per tick")
    ap.add_argument("--world", default="tick-py")
    ap.add_argument("--encoding", default="auto", choices=["auto", "msgpack", "json"])
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    if args.boxes < 1 or args.ticks < 1 or args.hz <= 0:
        ap.error("--boxes, --ticks and --hz must be positive")

    boxes = Boxes(args.boxes, args.seed)
    period = 1.0 / args.hz
    rays = [g.ray((boxes.L * (2 * k / max(args.rays - 1, 1) - 1), boxes.L + 1, 0), (0, -1, 0))
            for k in range(args.rays)]
    try:
        with Client(args.host, args.port, token=args.token, encoding=args.encoding, timeout=30) as c:
            # A fresh, ephemeral world: a game's moves are never journaled (and
            # a world's durability is chosen when it is created, so an earlier
            # run's world goes first).
            try:
                c.delete_world(args.world)
            except NotFound:
                pass
            c.import_world(args.world, {"settings": {"capacity": args.boxes, "durability": "none"}, "shapes": []})
            for chunk in boxes.upserts():
                c.batch(args.world, upsert=chunk)
            print("world %s: %d boxes in a cube of half-size %.1f, %s, %g Hz"
                  % (args.world, args.boxes, boxes.L, c.encoding, args.hz), flush=True)
            all_ms, window, missed, touching, hit = [], [], 0, 0, 0
            before = dict(c.timings)  # the client's own encode and decode time, from here on
            start = time.perf_counter()
            for k in range(args.ticks):
                boxes.advance(period)
                t0 = time.perf_counter()
                touching, hit = one_tick(c, args.world, boxes, period, rays)
                t1 = time.perf_counter()
                window.append(1e3 * (t1 - t0))
                # Deadlines this tick ran past: the ticks that could not start on time.
                late = int((t1 - start) / period) - (k + 1)
                if late > 0:
                    missed += late
                    start += late * period  # skip them, as a game server does
                if len(window) == int(args.hz) or k == args.ticks - 1:
                    print("ticks %d-%d: %s; %d touching pairs, %d/%d rays hit; missed %d so far"
                          % (k + 1 - len(window) + 1, k + 1, describe(window), touching, hit, len(rays), missed),
                          flush=True)
                    all_ms += window
                    window = []
                sleep = start + (k + 1) * period - time.perf_counter()
                if sleep > 0:
                    time.sleep(sleep)
            t = {k: c.timings[k] - before[k] for k in before}
            client_ms = 1e3 * (t["encode_s"] + t["decode_s"]) / args.ticks
            c.delete_world(args.world)
    except CollisiondError as e:
        print("tick.py: %s" % e, file=sys.stderr)
        return 1
    print("summary: %d ticks of %d boxes over %s: %s; client encode+decode %.2f ms per tick; "
          "missed %d ticks" % (args.ticks, args.boxes, c.encoding, describe(all_ms), client_ms, missed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
