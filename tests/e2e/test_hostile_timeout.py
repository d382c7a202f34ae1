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
centre hits at 9). The count of stopped requests is read from /metrics.

On a mesh, each hull's pair walks thousands of triangles (a tenth of a
second each here: 25 s for MeshPile's 300 without the limit), so the
deadline is read before every such pair and the query stops after about
one second, not after the 256 pairs between two ordinary checks (which
would outlast the client's socket timeout).

A single sweep, overlap or pair batch a test can afford does not take a
second, so FailedChecks runs them under the "deadline" failpoint (every
deadline check finds the deadline passed): a query of more than 256 units
(candidates tested, pairs) is then stopped, one of fewer is not asked and
answers as usual; over HTTP and over the stream."""

import random
import threading

from harness import DaemonCase
from wire import body_item, pair, posed, round_hull, sphere

HULLS = 800
POINTS = 256


def hull(rng):
    """POINTS random points on the unit sphere."""
    return round_hull(rng, POINTS)


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


def grid(n, half):
    """A square mesh of side 2 half in z = 0, n by n cells of two triangles."""
    vs = [[round(-half + 2 * half * i / n, 6), round(-half + 2 * half * j / n, 6), 0]
          for j in range(n + 1) for i in range(n + 1)]
    ts = []
    for j in range(n):
        for i in range(n):
            a = j * (n + 1) + i
            ts += [[a, a + 1, a + n + 2], [a, a + n + 2, a + n + 1]]
    return {"type": "mesh", "vertices": vs, "triangles": ts}


class MeshPile(DaemonCase):
    FLAGS = ("--request-timeout", "1", "--data-dir", "", "--max-body", "64M")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        rng = random.Random(3)
        shapes = [body_item("floor", grid(200, 3))]  # 80,000 triangles
        shapes += [body_item("h%03d" % i, hull(rng), [round(rng.uniform(-.2, .2), 6), round(rng.uniform(-.2, .2), 6), .5])
                   for i in range(300)]
        shapes.append(body_item("pa", sphere(1), (100, 0, 0)))
        shapes.append(body_item("pb", sphere(1), (101.5, 0, 0)))
        r = cls.daemon.request("PUT", "/v1/worlds/mesh", {"settings": {}, "shapes": shapes})
        assert r.status == 201, r.describe()

    def test_mesh_pairs_stop(self):
        for body in ({"ids": ["floor"]}, {"ids": ["floor"], "dt": 1}):
            r = self.req("POST", "/v1/worlds/mesh/contacts", body)
            p = self.assertProblem(r, 503, "timeout", context=str(body))
            self.assertIn("--request-timeout", p["detail"])
        v = self.ok("POST", "/v1/worlds/mesh/contacts", {"ids": ["pb"]})
        self.assertEqual([(k["a"], k["b"]) for k in v["pairs"]], [("pa", "pb")])
        self.assertAlmostEqual(v["pairs"][0]["depth"], 0.5, places=9)


ROW = 400


class FailedChecks(DaemonCase):
    FLAGS = ("--request-timeout", "30", "--data-dir", "")
    ENV = {"COLLISIOND_FAILPOINT": "deadline:1+"}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # unit spheres of radius 0.5 along x, 3 apart: no pairs
        row = [body_item("s%03d" % i, sphere(0.5), (3 * i, 0, 0)) for i in range(ROW)]
        r = cls.daemon.request("PUT", "/v1/worlds/row", {"settings": {}, "shapes": row})
        assert r.status == 201, r.describe()

    # a capsule lying over the whole row: every sphere is a candidate
    OVER_ALL = {"shape": {"type": "capsule", "radius": 1, "half_height": 1.5 * ROW},
                "pose": {"position": [1.5 * (ROW - 1), 0, 0], "axes": [[0, 1, 0], [-1, 0, 0], [0, 0, 1]]}}

    def test_large_shape_queries_stop(self):
        for path, body in (("sweep", dict(self.OVER_ALL, translation=[0, 3, 0])), ("overlap", self.OVER_ALL)):
            r = self.req("POST", "/v1/worlds/row/" + path, body)
            p = self.assertProblem(r, 503, "timeout", context=path)
            self.assertIn("--request-timeout", p["detail"])
            self.assertEqual(r.headers.get("retry-after"), "30", path)

    def test_small_queries_answer(self):
        # a sphere of radius 0.5 from x = -10 along +x meets s000 (at 0) after 9
        v = self.ok("POST", "/v1/worlds/row/sweep", {"shape": sphere(0.5), "pose": {"position": [-10, 0, 0]},
                                                    "translation": [20, 0, 0]})
        self.assertEqual(v["hit"]["id"], "s000")
        self.assertAlmostEqual(v["hit"]["time"], 9 / 20, places=6)
        v = self.ok("POST", "/v1/worlds/row/overlap", {"shape": sphere(1), "pose": {"position": [3, 0.5, 0]}})
        self.assertEqual(v["ids"], ["s001"])
        v = self.ok("POST", "/v1/worlds/row/contacts", {})
        self.assertEqual(v["pairs"], [])

    def test_pair_batches_stop_past_the_stride(self):
        touching = pair(posed(sphere(1)), posed(sphere(1), (1.5, 0, 0)))
        v = self.ok("POST", "/v1/pairs", {"pairs": [touching] * 255})
        self.assertEqual(len(v["results"]), 255)
        self.assertAlmostEqual(v["results"][0]["depth"], 0.5, places=9)
        r = self.req("POST", "/v1/pairs", {"pairs": [touching] * 256})
        self.assertProblem(r, 503, "timeout")

    def test_stream_reply_says_timeout(self):
        s = self.daemon.stream()
        try:
            s.send({"id": 7, "method": "POST", "path": "/v1/worlds/row/overlap", "body": self.OVER_ALL})
            reply = s.read_line()
        finally:
            s.close()
        self.assertEqual((reply["id"], reply["status"]), (7, 503), reply)
        self.assertEqual(reply["body"]["type"], "urn:collisiond:problem:timeout", reply)
        self.assertEqual(str(reply.get("headers", {}).get("Retry-After")), "30", reply)
