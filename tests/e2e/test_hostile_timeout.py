"""A per-request deadline (issue 25, item 3: --request-timeout).

A pile of 800 hulls of 256 points, all overlapping, makes 319,600
broadphase pairs (under --max-world-pairs) of GJK and EPA: tens of seconds
of contacts, and a raycast through the pile casts against every hull. With
--request-timeout 1 each such query must come back 503 "timeout" with
Retry-After while it would otherwise still be computing (the client's
15 s socket timeout would fail the test first), /healthz must answer
meanwhile, and the world must answer small queries as before: two unit
spheres far from the pile, 1.5 apart, whose contact and ray hit are worked
out here (depth 0.5 along +x; a ray from 10 before the first sphere's
centre hits at 9). The count of stopped requests is read from /metrics."""

import math
import random
import threading

from harness import DaemonCase
from wire import body_item, sphere

HULLS = 800
POINTS = 256


def hull(rng):
    """POINTS random points on the unit sphere (6 decimals: a smaller body)."""
    pts = []
    for _ in range(POINTS):
        z, t = rng.uniform(-1, 1), rng.uniform(0, 2 * math.pi)
        r = math.sqrt(1 - z * z)
        pts.append([round(r * math.cos(t), 6), round(r * math.sin(t), 6), round(z, 6)])
    return {"type": "convex", "points": pts}


def pile():
    rng = random.Random(25)
    shapes = [body_item("h%03d" % i, hull(rng), [round(rng.uniform(-.2, .2), 6) for _ in range(3)],
                        velocity=[rng.uniform(-9, 9), 0, 0])
              for i in range(HULLS)]
    # the analytic pair, far from the pile
    shapes.append(body_item("pa", sphere(1), (100, 0, 0)))
    shapes.append(body_item("pb", sphere(1), (101.5, 0, 0)))
    return shapes


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


class RequestTimeout(DaemonCase):
    FLAGS = ("--request-timeout", "1", "--data-dir", "", "--max-body", "64M")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = cls.daemon.request("PUT", "/v1/worlds/pile", {"settings": {}, "shapes": pile()})
        assert r.status == 201, r.describe()

    def assertTimedOut(self, r, context):
        p = self.assertProblem(r, 503, "timeout", context=context)
        self.assertIn("--request-timeout", p["detail"])
        self.assertEqual(r.headers.get("retry-after"), "1", context)

    def assertSmallQueriesRight(self):
        v = self.ok("POST", "/v1/worlds/pile/contacts", {"ids": ["pa"]})
        self.assertEqual([(k["a"], k["b"]) for k in v["pairs"]], [("pa", "pb")])
        self.assertAlmostEqual(v["pairs"][0]["depth"], 0.5, places=9)
        self.assertClose(v["pairs"][0]["normal"], [1, 0, 0], 1e-9)
        ray = {"origin": [90, 0, 0], "direction": [1, 0, 0], "max_distance": 50}
        v = self.ok("POST", "/v1/worlds/pile/raycast", {"rays": [ray]})
        self.assertEqual(v["hits"][0]["id"], "pa")
        self.assertAlmostEqual(v["hits"][0]["distance"], 9, places=9)

    def test_long_queries_stop_and_the_world_is_unchanged(self):
        before = metric(self.req("GET", "/metrics").raw.decode(), "collisiond_requests_timed_out_total")
        self.assertEqual(before, 0)
        rays = [{"origin": [-5, 0.01 * (i % 40) - 0.2, 0.01 * (i // 40 % 40) - 0.2], "direction": [1, 0, 0]}
                for i in range(20000)]
        long_queries = [
            ("contacts", {}),
            ("contacts", {"dt": 1}),
            ("raycast", {"rays": rays, "all": True}),
            # from inside every hull: each hits all of them at 0, so none is pruned
            ("raycast", {"rays": [dict(r, origin=[0, r["origin"][1] / 4, r["origin"][2] / 4]) for r in rays]}),
        ]
        for path, body in long_queries:
            what = "%s %s" % (path, sorted(body))
            got = {}
            run = threading.Thread(target=lambda: got.update(r=self.req("POST", "/v1/worlds/pile/" + path, body)))
            run.start()
            # the server answers others while the query runs and after it stopped
            self.assertEqual(self.req("GET", "/healthz").status, 200, what)
            run.join(30)
            self.assertFalse(run.is_alive(), what + " never came back")
            self.assertTimedOut(got["r"], what)
            self.assertSmallQueriesRight()
        after = metric(self.req("GET", "/metrics").raw.decode(), "collisiond_requests_timed_out_total")
        self.assertEqual(after, len(long_queries))
        v = self.ok("GET", "/v1/worlds/pile")
        self.assertEqual(v["shapes"], HULLS + 2)
        self.assertEqual(v["broadphase_pairs"], HULLS * (HULLS - 1) // 2 + 1)
