"""Every call of the client against the real daemon, in both encodings,
checked against answers worked out by hand (distances of spheres and boxes,
ray hits, times of impact) rather than against the client's own output."""
import math

from support import Daemon, per_encoding
from collisiond_client import BadRequest, MethodNotAllowed, NotFound, geometry as g

D = None


def setUpModule():
    global D
    D = Daemon()


def tearDownModule():
    status = D.stop()
    if status != 0:
        raise AssertionError("collisiond exited with %s: %s" % (status, D.log_text()))


def close(test, got, want, tol=1e-9):
    test.assertEqual(len(got), len(want), (got, want))
    for a, b in zip(got, want):
        test.assertAlmostEqual(a, b, delta=tol, msg=(got, want))


class Calls:
    ENCODING = None

    def setUp(self):
        self.c = D.client(self.ENCODING)
        self.w = "calls-%s-%s" % (self.ENCODING, self._testMethodName)
        self.addCleanup(self.c.close)

    def test_health_and_ready(self):
        self.assertEqual(self.c.health(), {"status": "ok"})
        self.assertEqual(self.c.ready(), {"status": "ready"})

    def test_pair_of_spheres(self):
        # Radii 1 and 1, centres 3 apart: separated by 3 - 2 = 1 along +x.
        r = self.c.pair(g.body(g.sphere(1)), g.body(g.sphere(1), (3, 0, 0)))
        self.assertFalse(r["overlap"])
        self.assertAlmostEqual(r["distance"], 1.0)
        close(self, r["normal"], [1, 0, 0])
        # 1.5 apart: they overlap by 2 - 1.5 = 0.5.
        r = self.c.pair(g.body(g.sphere(1)), g.body(g.sphere(1), (1.5, 0, 0)))
        self.assertTrue(r["overlap"])
        self.assertAlmostEqual(r["depth"], 0.5)

    def test_pair_skin_and_box(self):
        # A unit sphere 2.5 above a unit box's centre: 0.5 above its top face.
        a, b = g.body(g.box(1, 1, 1)), g.body(g.sphere(1), (0, 2.5, 0))
        r = self.c.pair(a, b)
        self.assertFalse(r["overlap"])
        self.assertAlmostEqual(r["distance"], 0.5)
        close(self, r["normal"], [0, 1, 0])
        self.assertTrue(self.c.pair(a, b, skin=0.6)["overlap"])

    def test_pairs_in_order(self):
        gaps = [3.0, 0.5, 2.25, 10.0]
        items = [{"a": g.body(g.sphere(1)), "b": g.body(g.sphere(1), (d, 0, 0))} for d in gaps]
        results = self.c.pairs(items)["results"]
        self.assertEqual(len(results), len(gaps))
        for d, r in zip(gaps, results):
            self.assertEqual(r["overlap"], d <= 2)
            self.assertAlmostEqual(r["distance"], max(d - 2, 0.0))
            self.assertAlmostEqual(r["depth"], max(2 - d, 0.0))

    def test_world_lifecycle(self):
        made = self.c.create_world(self.w, skin=0.02, capacity=64)
        self.assertEqual((made["name"], made["shapes"]), (self.w, 0))
        self.assertEqual((made["settings"]["skin"], made["settings"]["capacity"]), (0.02, 64))
        self.c.put_shape(self.w, "a", g.sphere(1))
        again = self.c.create_world(self.w, skin=0.5)  # settings change, shapes stay
        self.assertEqual((again["settings"]["skin"], again["shapes"]), (0.5, 1))
        self.assertIn({"name": self.w, "shapes": 1, "durability": "full"}, self.c.list_worlds()["worlds"])
        got = self.c.get_world(self.w)
        self.assertEqual((got["name"], got["stats"]["shapes"]), (self.w, 1))
        self.assertIsNone(self.c.delete_world(self.w))
        with self.assertRaises(NotFound) as e:
            self.c.get_world(self.w)
        self.assertEqual((e.exception.status, e.exception.slug), (404, "not-found"))

    def test_shapes(self):
        self.c.create_world(self.w)
        stored = self.c.put_shape(self.w, "crate", g.box(0.5, 1, 0.25), g.pose((1, 2, 3)), velocity=[3, 0, 0],
                                  layer=2, mask=6)
        self.assertEqual(stored["id"], "crate")
        self.assertEqual(stored["shape"], {"type": "box", "half_extents": [0.5, 1, 0.25]})
        self.assertEqual((stored["layer"], stored["mask"], stored["velocity"]), (2, 6, [3, 0, 0]))
        self.assertEqual(self.c.get_shape(self.w, "crate"), stored)
        self.assertEqual(self.c.put_shape(self.w, 7, g.sphere(1))["id"], "7")  # an integer id is a string id
        self.assertIsNone(self.c.delete_shape(self.w, "crate"))
        with self.assertRaises(NotFound):
            self.c.get_shape(self.w, "crate")

    def test_rotation_from_a_quaternion(self):
        # A quarter turn about z takes local x to world +y and local y to -x.
        self.c.create_world(self.w)
        q = g.quat_axis_angle((0, 0, 1), math.pi / 2)
        axes = self.c.put_shape(self.w, "r", g.box(1, 1, 1), g.pose((0, 0, 0), q))["pose"]["axes"]
        for got, want in zip(axes, [[0, 1, 0], [-1, 0, 0], [0, 0, 1]]):
            close(self, got, want, 1e-12)

    def test_batch_and_moves(self):
        self.c.create_world(self.w)
        up = [{"id": "s%d" % i, "shape": g.sphere(1), "pose": g.pose((10.0 * i, 0, 0))} for i in range(3)]
        self.assertEqual(self.c.batch(self.w, upsert=up),
                         {"upserted": 3, "moved": 0, "removed": 0, "shapes": 3})
        r = self.c.batch(self.w, move=[{"id": "s0", "pose": g.pose((5, 0, 0))}], remove=["s2"])
        self.assertEqual(r, {"upserted": 0, "moved": 1, "removed": 1, "shapes": 2})
        # From arrays: s1 next to s0 with a velocity, s0 turned.
        q = g.quat_axis_angle((1, 0, 0), math.pi)
        r = self.c.move(self.w, ["s0", "s1"], [(5, 0, 0), (6.5, 0, 0)], [q, g.IDENTITY], [(0, 1, 0), (2, 0, 0)])
        self.assertEqual(r["moved"], 2)
        s1 = self.c.get_shape(self.w, "s1")
        self.assertEqual((s1["pose"]["position"], s1["velocity"]), ([6.5, 0, 0], [2, 0, 0]))
        close(self, self.c.get_shape(self.w, "s0")["pose"]["axes"][1], [0, -1, 0], 1e-12)
        # Without velocities a move keeps the stored one.
        self.c.move(self.w, ["s1"], [(7, 0, 0)])
        self.assertEqual(self.c.get_shape(self.w, "s1")["velocity"], [2, 0, 0])

    def test_export_import(self):
        self.c.create_world(self.w, skin=0.01)
        self.c.put_shape(self.w, "a", g.sphere(1), g.pose((1, 2, 3)))
        self.c.put_shape(self.w, "b", g.box(1, 2, 3), layer=4)
        doc = self.c.export_world(self.w)
        self.assertEqual([s["id"] for s in doc["shapes"]], ["a", "b"])
        copy = self.w + "-copy"
        self.assertEqual(self.c.import_world(copy, doc)["shapes"], 2)
        self.assertEqual(self.c.export_world(copy), doc)

    def test_broadphase_pairs_and_contacts(self):
        self.c.create_world(self.w)
        self.c.batch(self.w, upsert=[
            {"id": "s1", "shape": g.sphere(1), "pose": g.pose((0, 0, 0))},
            {"id": "s2", "shape": g.sphere(1), "pose": g.pose((1.5, 0, 0))},
            {"id": "far", "shape": g.sphere(1), "pose": g.pose((50, 0, 0))}])
        self.assertEqual(self.c.broadphase_pairs(self.w), {"pairs": [["s1", "s2"]]})
        r = self.c.contacts(self.w)
        self.assertEqual([(p["a"], p["b"]) for p in r["pairs"]], [("s1", "s2")])
        self.assertAlmostEqual(r["pairs"][0]["depth"], 0.5)
        close(self, r["pairs"][0]["normal"], [1, 0, 0])
        self.assertEqual(self.c.contacts(self.w, ids=["far"])["pairs"], [])

    def test_contacts_time_of_impact(self):
        # A bullet (radius 0.1) at x = 0 flying at 100/s toward a wall whose
        # face is at x = 9.5: over dt = 0.2 it travels 20 and first touches
        # when its centre reaches 9.4, at 9.4 / 20 = 0.47 of dt.
        self.c.create_world(self.w)
        self.c.put_shape(self.w, "wall", g.box(0.5, 5, 5), g.pose((10, 0, 0)))
        self.c.put_shape(self.w, "bullet", g.sphere(0.1), g.pose((0, 0, 0)), velocity=[100, 0, 0])
        toi = self.c.contacts(self.w, dt=0.2)["toi"]
        self.assertEqual([(t["id"], t["other"]) for t in toi], [("bullet", "wall")])
        self.assertAlmostEqual(toi[0]["time"], 0.47, delta=1e-6)
        close(self, toi[0]["normal"], [1, 0, 0], 1e-6)

    def test_raycast(self):
        self.c.create_world(self.w)
        self.c.put_shape(self.w, "b", g.box(0.5, 0.5, 0.5), g.pose((0, 10, 0)))
        self.c.put_shape(self.w, "s", g.sphere(1), g.pose((0, 0, 0)))
        # Straight down from y = 50: the box's top face at 10.5, 39.5 away.
        down = g.ray((0, 50, 0), (0, -2, 0))
        hit = self.c.raycast(self.w, [down, g.ray((5, 50, 0), (0, -1, 0))])["hits"]
        self.assertEqual((hit[0]["id"], hit[1]), ("b", None))
        self.assertAlmostEqual(hit[0]["distance"], 39.5)
        close(self, hit[0]["point"], [0, 10.5, 0])
        close(self, hit[0]["normal"], [0, 1, 0])
        every = self.c.raycast(self.w, [down], all=True)["hits"][0]
        self.assertEqual([h["id"] for h in every], ["b", "s"])
        self.assertAlmostEqual(every[1]["distance"], 49.0)  # the sphere's top at y = 1
        short = self.c.raycast(self.w, [g.ray((0, 50, 0), (0, -1, 0), max_distance=39)])["hits"]
        self.assertEqual(short, [None])

    def test_sweep_and_overlap(self):
        self.c.create_world(self.w)
        self.c.put_shape(self.w, "s", g.sphere(1), g.pose((0, 0, 0)), layer=1)
        self.c.put_shape(self.w, "t", g.sphere(1), g.pose((0, 10, 0)), layer=2)
        # Radius 0.25 from x = -5 moving 10 along x touches s when its centre
        # reaches -1.25: 3.75 of 10 = 0.375.
        hit = self.c.sweep(self.w, g.sphere(0.25), g.pose((-5, 0, 0)), [10, 0, 0])["hit"]
        self.assertEqual(hit["id"], "s")
        self.assertAlmostEqual(hit["time"], 0.375, delta=1e-6)
        self.assertIsNone(self.c.sweep(self.w, g.sphere(0.25), g.pose((-5, 0, 0)), [10, 0, 0], mask=2)["hit"])
        self.assertEqual(self.c.overlap(self.w, g.sphere(20))["ids"], ["s", "t"])
        self.assertEqual(self.c.overlap(self.w, g.sphere(1.5), g.pose((0, 8, 0)))["ids"], ["t"])
        self.assertEqual(self.c.overlap(self.w, g.sphere(20), mask=1)["ids"], ["s"])

    def test_raw_request_and_errors(self):
        self.assertIn("worlds", self.c.request("GET", "/v1/worlds"))
        with self.assertRaises(MethodNotAllowed) as e:
            self.c.request("POST", "/v1/worlds/x")
        self.assertIn("PUT", e.exception.allow)
        with self.assertRaises(NotFound) as e:
            self.c.request("GET", "/v1/nowhere")
        self.assertEqual(e.exception.slug, "no-route")

    def test_bad_names_are_refused_not_rerouted(self):
        # "a/shapes/b" would be another path if it were not escaped.
        self.c.create_world("a")
        for name in ("a/shapes/b", "bad name", "", "x" * 65):
            with self.assertRaises(BadRequest) as e:
                self.c.get_world(name)
            self.assertEqual((e.exception.slug, e.exception.pointer), ("invalid-value", None))


per_encoding(globals(), Calls)
