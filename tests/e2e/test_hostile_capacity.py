"""One server-wide budget of shape slots (issue 25, item 2: --max-shapes-total).

A world preallocates about 1.4 KiB per slot of its "capacity", so a
20-byte `PUT {"capacity": 100000}` cost about 140 MB of address space,
and the defaults allowed 10,000 of them. Every world's storage is now
charged to one budget before it is allocated: a world, a capacity, a
batch, a shape PUT or an import that would take more is refused with 422
over-limit, nothing changed, and a deleted world gives its slots back.
A restart with a smaller budget keeps every acknowledged world and only
refuses new storage. Oracles: the slot counts worked out here from the
capacities asked for (exact sizes: the budget is in round numbers), the
worlds' shapes read back with GET, VmRSS from /proc."""

import os
import tempfile
import time
import unittest

from harness import Daemon, DaemonCase
from test_hostile_store import scrape
from wire import body_item, sphere

BUDGET = 20000
CAPACITY = 4096
READY_TIMEOUT = 30


def slots_reserved(d):
    got = [v for n, labels, v in scrape(d) if n == "collisiond_shape_slots_reserved" and not labels]
    if len(got) != 1:
        raise AssertionError("collisiond_shape_slots_reserved: %d samples" % len(got))
    return got[0]


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for %d" % pid)


def spheres(prefix, n):
    return [body_item("%s%d" % (prefix, i), sphere(0.1), (3 * i, 0, 0)) for i in range(n)]


class Budgeted(DaemonCase):
    FLAGS = ("--max-shapes-total", str(BUDGET))

    def tearDown(self):
        for w in self.ok("GET", "/v1/worlds")["worlds"]:
            self.ok("DELETE", "/v1/worlds/" + w["name"], status=204)

    def assertOverBudget(self, r, pointer=None):
        p = self.assertProblem(r, 422, "over-limit", pointer)
        self.assertIn("--max-shapes-total", p["detail"])
        self.assertIn(str(BUDGET), p["detail"])

    def ids(self, world):
        return sorted(s["id"] for s in self.ok("GET", "/v1/worlds/%s/export" % world)["shapes"])

    def test_capacity_puts_refused_once_full(self):
        fits = BUDGET // CAPACITY  # 4 worlds: 16384 slots
        for i in range(fits):
            self.ok("PUT", "/v1/worlds/cap%d" % i, {"capacity": CAPACITY}, status=201)
        self.assertEqual(slots_reserved(self.daemon), fits * CAPACITY)
        rss = rss_bytes(self.daemon.proc.pid)
        for i in range(fits, fits + 60):  # would be 60 x 4096 x 1.4 KiB, about 350 MB
            self.assertOverBudget(self.req("PUT", "/v1/worlds/cap%d" % i, {"capacity": CAPACITY}), "/capacity")
            self.assertEqual(self.req("GET", "/v1/worlds/cap%d" % i).status, 404)
        grown = rss_bytes(self.daemon.proc.pid) - rss
        self.assertLess(grown, 32 << 20, "RSS grew by %d bytes over refused worlds" % grown)
        self.assertEqual(len(self.ok("GET", "/v1/worlds")["worlds"]), fits)
        self.assertEqual(slots_reserved(self.daemon), fits * CAPACITY)
        # 20000 - 16384 = 3616 left: three worlds of the default capacity (1024), not four
        self.ok("PUT", "/v1/worlds/small", {}, status=201)
        self.ok("PUT", "/v1/worlds/small2", {}, status=201)
        self.ok("PUT", "/v1/worlds/small3", {}, status=201)
        self.assertOverBudget(self.req("PUT", "/v1/worlds/small4", {}))
        # raising a capacity past it is refused, the settings as they were
        self.assertOverBudget(self.req("PUT", "/v1/worlds/small", {"capacity": 2048}), "/capacity")
        self.assertEqual(self.ok("GET", "/v1/worlds/small")["stats"]["capacity"], 1024)
        # deleting a world gives its slots back
        self.ok("DELETE", "/v1/worlds/cap0", status=204)
        self.assertEqual(slots_reserved(self.daemon), (fits - 1) * CAPACITY + 3 * 1024)
        self.ok("PUT", "/v1/worlds/again", {"capacity": CAPACITY}, status=201)
        self.assertEqual(slots_reserved(self.daemon), fits * CAPACITY + 3 * 1024)
        total = sum(self.ok("GET", "/v1/worlds/" + w["name"])["stats"]["capacity"]
                    for w in self.ok("GET", "/v1/worlds")["worlds"])
        self.assertEqual(total, slots_reserved(self.daemon))

    def test_growth_past_budget_refused_world_unchanged(self):
        # b holds 16 slots, the filler all but 40 of the rest
        self.ok("PUT", "/v1/worlds/b", {"capacity": 16}, status=201)
        self.ok("PUT", "/v1/worlds/filler", {"capacity": BUDGET - 16 - 40}, status=201)
        first = spheres("s", 10)
        self.ok("POST", "/v1/worlds/b/batch", {"upsert": first})
        want = sorted(s["id"] for s in first)
        # 60 shapes need 44 more slots: refused whole
        r = self.req("POST", "/v1/worlds/b/batch", {"upsert": spheres("t", 50)})
        self.assertOverBudget(r)
        self.assertEqual(self.ids("b"), want)
        self.assertEqual(self.ok("GET", "/v1/worlds/b")["stats"]["capacity"], 16)
        # an import of the same is refused too, the old content kept
        r = self.req("PUT", "/v1/worlds/b", {"settings": {"capacity": 16}, "shapes": first + spheres("t", 50)})
        self.assertOverBudget(r, "/settings/capacity")
        self.assertEqual(self.ids("b"), want)
        # 56 shapes: exactly the budget (the storage grows to what fits, not a doubling past it)
        more = spheres("t", 46)
        self.ok("POST", "/v1/worlds/b/batch", {"upsert": more})
        want = sorted(want + [s["id"] for s in more])
        self.assertEqual(self.ids("b"), want)
        self.assertEqual(slots_reserved(self.daemon), BUDGET)
        # full: one more shape is refused, a replaced one is not
        r = self.req("PUT", "/v1/worlds/b/shapes/u", {"shape": sphere(1), "pose": {"position": [0, 9, 0]}})
        self.assertOverBudget(r)
        self.assertEqual(self.req("GET", "/v1/worlds/b/shapes/u").status, 404)
        self.ok("PUT", "/v1/worlds/b/shapes/s0", {"shape": sphere(2)})
        self.assertEqual(self.ids("b"), want)
        # a removal leaves the storage (and its charge) as it was: still full
        self.ok("POST", "/v1/worlds/b/batch", {"remove": ["s1"]})
        self.ok("PUT", "/v1/worlds/b/shapes/u", {"shape": sphere(1)}, status=201)  # reuses s1's slot
        self.assertOverBudget(self.req("PUT", "/v1/worlds/c", {"capacity": 1}), "/capacity")
        self.ok("DELETE", "/v1/worlds/filler", status=204)
        self.ok("PUT", "/v1/worlds/c", {"capacity": 1}, status=201)
        self.assertEqual(slots_reserved(self.daemon), 56 + 1)


class Defaults(DaemonCase):
    def test_largest_default_capacity_and_the_gauge(self):
        # 100000 was the old default cap: 140 MB for 20 bytes
        r = self.req("PUT", "/v1/worlds/huge", {"capacity": 100000})
        self.assertProblem(r, 422, "over-limit", "/capacity")
        self.assertIn("--max-world-capacity", r.value["detail"])
        self.assertEqual(slots_reserved(self.daemon), 0)
        self.ok("PUT", "/v1/worlds/big", {"capacity": 65536}, status=201)
        self.ok("PUT", "/v1/worlds/plain", {}, status=201)
        self.assertEqual(slots_reserved(self.daemon), 65536 + 1024)
        self.ok("DELETE", "/v1/worlds/big", status=204)
        self.assertEqual(slots_reserved(self.daemon), 1024)


class RestartWithSmallerBudget(unittest.TestCase):
    """Recovery charges what it brings back, whatever the new budget or
    --max-world-capacity say; only new storage is refused after it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="collisiond-data-")
        self.addCleanup(self.tmp.cleanup)
        self.dir = os.path.join(self.tmp.name, "data")

    def start(self, *flags):
        d = Daemon(["--data-dir", self.dir] + list(flags))
        self.addCleanup(d.cleanup)
        d.start()
        deadline = time.monotonic() + READY_TIMEOUT
        while d.request("GET", "/readyz").status != 200:
            if d.proc.poll() is not None or time.monotonic() > deadline:
                self.fail("collisiond did not become ready: %s" % d.log_tail())
            time.sleep(0.01)
        return d

    def ok(self, d, method, path, body=None, status=(200, 201, 204)):
        r = d.request(method, path, body)
        self.assertIn(r.status, status, "%s %s -> %s" % (method, path, r.describe()))
        return r.json

    def contents(self, d):
        worlds = sorted(w["name"] for w in self.ok(d, "GET", "/v1/worlds")["worlds"])
        return {w: sorted(s["id"] for s in self.ok(d, "GET", "/v1/worlds/%s/export" % w)["shapes"]) for w in worlds}

    def test_restart_keeps_worlds_then_refuses_new_ones(self):
        d = self.start("--max-shapes-total", "10000")
        for i in range(4):
            self.ok(d, "PUT", "/v1/worlds/w%d" % i, {"capacity": 2000}, status=(201,))
            self.ok(d, "POST", "/v1/worlds/w%d/batch" % i, {"upsert": spheres("s%d_" % i, 3 + i)})
        self.ok(d, "PUT", "/v1/worlds/grown", {"capacity": 8}, status=(201,))
        self.ok(d, "POST", "/v1/worlds/grown/batch", {"upsert": spheres("g", 20)})  # 8 -> 32 slots
        before = self.contents(d)
        self.assertEqual(slots_reserved(d), 4 * 2000 + 32)
        d.proc.kill()  # the journal only: every world comes back through it
        d.proc.wait()
        for round_ in ("journal", "snapshot"):
            d = self.start("--max-shapes-total", "3000", "--max-world-capacity", "1000")
            self.assertEqual(self.contents(d), before, round_)
            self.assertEqual(slots_reserved(d), 4 * 2000 + 32, round_)
            r = d.request("PUT", "/v1/worlds/new", {"capacity": 1})
            self.assertEqual(r.status, 422, r.describe())
            self.assertIn("--max-shapes-total", r.json["detail"])
            r = d.request("POST", "/v1/worlds/grown/batch", {"upsert": spheres("h", 20)})
            self.assertEqual(r.status, 422, r.describe())
            self.assertEqual(self.contents(d), before, round_)
            self.assertEqual(d.stop(), 0, d.log_tail())  # a clean stop: the next round starts from its snapshot
        d = self.start("--max-shapes-total", "3000", "--max-world-capacity", "1000")
        for i in range(4):
            self.ok(d, "DELETE", "/v1/worlds/w%d" % i, status=(204,))
        self.assertEqual(slots_reserved(d), 32)
        self.ok(d, "PUT", "/v1/worlds/new", {"capacity": 1000}, status=(201,))
        self.assertEqual(slots_reserved(d), 1032)
        self.assertEqual(d.stop(), 0, d.log_tail())


if __name__ == "__main__":
    unittest.main()
