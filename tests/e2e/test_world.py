"""World queries against brute force and hand-computed answers: contacts
and broadphase pairs over random spheres (with layers and masks), ray
casts, sweeps, overlaps and CCD impacts."""

import math
import random

import oracle as o
from harness import DaemonCase, encoded_key
from wire import body_item, box, pose, sphere

TOL = 1e-9


def random_spheres(rng, count, lo, hi, rmin, rmax, margin_of):
    """count spheres whose every pair stays clear of the thresholds
    margin_of(pair) checks (so rounding cannot flip an oracle verdict)."""
    while True:
        spheres = [("s%02d" % i, [rng.uniform(lo, hi) for _ in range(3)], rng.uniform(rmin, rmax),
                    rng.choice([1, 2, 4, 3]), rng.choice([1, 2, 4, 5, 7, 6]))
                   for i in range(count)]
        if all(margin_of(a, b) for i, a in enumerate(spheres) for b in spheres[i + 1:]):
            return spheres


class Contacts(DaemonCase):

    SKIN = 0.05

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        rng = random.Random(7)

        def clear(a, b):
            gap = o.norm(o.sub(b[1], a[1])) - a[2] - b[2]
            axis = [abs(b[1][k] - a[1][k]) - a[2] - b[2] - cls.SKIN for k in range(3)]
            return abs(gap) > 1e-6 and abs(gap - cls.SKIN) > 1e-6 and all(abs(x) > 1e-6 for x in axis)

        cls.spheres = random_spheres(rng, 48, 0, 9, 0.3, 1.3, clear)
        d = cls.daemon
        r = d.request("PUT", "/v1/worlds/c", {"skin": cls.SKIN})
        assert r.status == 201, r.describe()
        items = [body_item(i, sphere(rad), c, layer=layer, mask=mask) for i, c, rad, layer, mask in cls.spheres]
        r = d.request("POST", "/v1/worlds/c/batch", {"upsert": items})
        assert r.status == 200, r.describe()

    def brute_contacts(self, only=None):
        out = []
        for i, a in enumerate(self.spheres):
            for b in self.spheres[i + 1:]:
                if only and a[0] not in only and b[0] not in only:
                    continue
                if not o.layers_meet(a[3], a[4], b[3], b[4]):
                    continue
                dist, depth, n = o.sphere_sphere(a[1], a[2], b[1], b[2])
                if dist <= self.SKIN:
                    out.append((a[0], b[0], dist, depth, n))
        return out

    def test_contacts_equal_brute_force(self):
        got = self.ok("POST", "/v1/worlds/c/contacts", {})
        expected = self.brute_contacts()
        self.assertGreater(len(expected), 5, "the scene should have contacts")
        self.assertEqual([(p["a"], p["b"]) for p in got["pairs"]], [(a, b) for a, b, *_ in expected])
        for p, (a, b, dist, depth, n) in zip(got["pairs"], expected):
            what = "%s-%s: %s" % (a, b, p)
            self.assertTrue(p["overlap"], what)
            self.assertEqual(p["algorithm"], "sphere_sphere", what)
            self.assertAlmostEqual(p["distance"], dist, delta=TOL, msg=what)
            self.assertAlmostEqual(p["depth"], depth, delta=TOL, msg=what)
            self.assertClose(p["normal"], n, TOL, what)
        self.assertEqual(got["toi"], [])

    def test_contacts_filtered_by_ids(self):
        only = ["s03", "s17"]
        got = self.ok("POST", "/v1/worlds/c/contacts", {"ids": only})
        self.assertEqual([(p["a"], p["b"]) for p in got["pairs"]], [(a, b) for a, b, *_ in self.brute_contacts(only)])

    def test_broadphase_pairs_equal_fattened_boxes(self):
        expected = []
        for i, a in enumerate(self.spheres):
            for b in self.spheres[i + 1:]:
                if not o.layers_meet(a[3], a[4], b[3], b[4]):
                    continue
                if all(abs(b[1][k] - a[1][k]) <= a[2] + b[2] + self.SKIN for k in range(3)):
                    expected.append([a[0], b[0]])
        got = self.ok("GET", "/v1/worlds/c/pairs")
        self.assertEqual(got, {"pairs": expected})

    def test_contacts_are_deterministic_across_insertion_order(self):
        first = self.daemon.request("POST", "/v1/worlds/c/contacts", {})
        again = self.daemon.request("POST", "/v1/worlds/c/contacts", {})
        # everything before the stats must be the same bytes
        cut = first.raw.rfind(encoded_key("stats"))
        self.assertGreater(cut, 0, first.describe())
        self.assertEqual(first.raw[:cut], again.raw[:cut], "the same query gave different bytes")
        # the same shapes inserted in reverse order, one batch each
        self.ok("PUT", "/v1/worlds/c-rev", {"skin": self.SKIN}, status=201)
        for i, c, rad, layer, mask in reversed(self.spheres):
            self.ok("PUT", "/v1/worlds/c-rev/shapes/" + i, {"shape": sphere(rad), "pose": pose(c),
                                                           "layer": layer, "mask": mask}, status=201)
        rev = self.daemon.request("POST", "/v1/worlds/c-rev/contacts", {})
        a, b = first.json, rev.json
        a.pop("stats", None)
        b.pop("stats", None)
        self.assertEqual(a, b, "insertion order changed the contacts")
        self.ok("DELETE", "/v1/worlds/c-rev", status=204)

    def test_world_info_counts(self):
        info = self.ok("GET", "/v1/worlds/c")
        listing = {w["name"]: w["shapes"] for w in self.ok("GET", "/v1/worlds")["worlds"]}
        self.assertEqual(listing["c"], len(self.spheres))
        self.assertIn(len(self.spheres), _numbers(info), "GET /v1/worlds/c shows no shape count: %s" % info)


def _numbers(value):
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers(v)]
    if isinstance(value, list):
        return [x for v in value for x in _numbers(v)]
    return [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else []


class BoxHysteresis(DaemonCase):
    """Box-box face-axis hysteresis keeps the axis the previous answer used
    (the pair cache holds its identity): a contacts query repeated on a
    world that did not change answers the same bytes."""

    C, S = math.cos(math.radians(5)), math.sin(math.radians(5))

    def test_issue_pair_answers_the_same_bytes(self):
        c, s = self.C, self.S
        self.ok("PUT", "/v1/worlds/h", {}, status=201)
        self.ok("PUT", "/v1/worlds/h/shapes/a", {"shape": box(1, 1, 1)}, status=201)
        self.ok("PUT", "/v1/worlds/h/shapes/b", {"shape": box(0.25, 1, 1),
                                                 "pose": pose((1.1, 0.9, 0), axes=[[c, s, 0], [-s, c, 0], [0, 0, 1]])},
                status=201)
        answers = [self.req("POST", "/v1/worlds/h/contacts", {}) for _ in range(4)]
        for r in answers[1:]:
            self.assertEqual(r.raw, answers[0].raw, "an unchanged world changed its answer")
        p = answers[0].json["pairs"][0]
        # along B's x axis, B's near face against A's corner (1, 1):
        # c + s - (1.1 c + 0.9 s - 0.25); A0 would be 1 - (1.1 - 0.25 c - s), 48 % deeper
        self.assertAlmostEqual(p["depth"], c + s - (1.1 * c + 0.9 * s - 0.25), delta=TOL)
        self.assertClose(p["normal"], [c, s, 0], TOL)
        self.ok("DELETE", "/v1/worlds/h", status=204)

    def test_random_box_world_repeats_its_answer(self):
        rng = random.Random(2040)
        self.ok("PUT", "/v1/worlds/crowd", {}, status=201)

        def item(i):
            axes = o.quat_axes(o.unit([rng.gauss(0, 1) for _ in range(4)]))
            return {"id": "b%03d" % i, "shape": box(*[rng.uniform(0.2, 1) for _ in range(3)]),
                    "pose": pose([rng.uniform(-6, 6) for _ in range(3)], axes=axes)}
        items = [item(i) for i in range(300)]
        self.ok("POST", "/v1/worlds/crowd/batch", {"upsert": items})
        for step in range(3):
            first = self.req("POST", "/v1/worlds/crowd/contacts", {})
            again = self.req("POST", "/v1/worlds/crowd/contacts", {})
            self.assertGreater(len(first.json["pairs"]), 100)
            self.assertEqual(first.raw, again.raw, "step %d: an unchanged world changed its answer" % step)
            moves = [{"id": it["id"], "pose": pose([x + rng.uniform(-0.01, 0.01) for x in it["pose"]["position"]],
                                                   axes=it["pose"]["axes"])} for it in items]
            self.ok("POST", "/v1/worlds/crowd/batch", {"move": moves})
        self.ok("DELETE", "/v1/worlds/crowd", status=204)


class Queries(DaemonCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        d = cls.daemon
        # "turned" is turned 45 degrees about z: a quaternion of half that angle
        s, c = math.sin(math.pi / 8), math.cos(math.pi / 8)
        # layer 1 for all but "hidden" (layer 2), so masks can tell them apart
        r = d.request("PUT", "/v1/worlds/r", {"settings": {"skin": 0}, "shapes": [
            body_item("ball", sphere(2), (0, 0, 10), layer=1),
            body_item("far", sphere(1), (0, 0, 20), layer=1),
            body_item("crate", box(1, 2, 3), (10, 0, 0), layer=1),
            {"id": "turned", "shape": box(1, 1, 1), "pose": {"position": [0, -10, 0], "rotation": [0, 0, s, c]},
             "layer": 1},
            body_item("hidden", sphere(1), (-10, 0, 0), layer=2, mask=2),
        ]})
        assert r.status == 201, r.describe()

    def hit(self, got, id_, distance, point=None, normal=None, tol=TOL):
        self.assertIsNotNone(got, "expected a hit on %s" % id_)
        self.assertEqual(got["id"], id_, got)
        self.assertAlmostEqual(got["distance"], distance, delta=tol, msg=str(got))
        if point is not None:
            self.assertClose(got["point"], point, tol, str(got))
        if normal is not None:
            self.assertClose(got["normal"], normal, tol, str(got))
        self.assertAlmostEqual(o.norm(got["normal"]), 1.0, delta=1e-9)

    def test_raycast_closest(self):
        rays = [
            {"origin": [0, 0, 0], "direction": [0, 0, 1]},
            {"origin": [0, 0, 0], "direction": [1, 0, 0]},
            {"origin": [0, 0, 0], "direction": [0, 1, 0]},
            {"origin": [0, 0, 0], "direction": [0, 0, 1], "max_distance": 5},
            {"origin": [0, 0, 0], "direction": [0, 0, 2]},
            {"origin": [0, 0, 0], "direction": [0, -1, 0]},
            {"origin": [0, 0, 0], "direction": [-1, 0, 0], "mask": 1},
            {"origin": [0, 0, 0], "direction": [-1, 0, 0], "mask": 2},
            {"origin": [0, 0, 10], "direction": [1, 0, 0]},
            {"origin": [0, 0, 0], "direction": [0, 0, 1], "max_distance": 8},
        ]
        hits = self.ok("POST", "/v1/worlds/r/raycast", {"rays": rays})["hits"]
        self.assertEqual(len(hits), len(rays))
        self.hit(hits[0], "ball", 8, [0, 0, 8], [0, 0, -1])
        self.hit(hits[1], "crate", 9, [9, 0, 0], [-1, 0, 0])
        self.assertIsNone(hits[2])
        self.assertIsNone(hits[3], "max_distance 5 stops short of the ball")
        self.hit(hits[4], "ball", 8, [0, 0, 8], [0, 0, -1])
        # the turned box shows its edge: 10 - sqrt(2) away
        self.hit(hits[5], "turned", 10 - math.sqrt(2), [0, -10 + math.sqrt(2), 0])
        self.assertIsNone(hits[6], "layer 2 is not in mask 1")
        self.hit(hits[7], "hidden", 9, [-9, 0, 0], [1, 0, 0])
        self.hit(hits[8], "ball", 0, [0, 0, 10], [-1, 0, 0])
        self.hit(hits[9], "ball", 8, [0, 0, 8], [0, 0, -1])

    def test_raycast_all(self):
        rays = [{"origin": [0, 0, -5], "direction": [0, 0, 1]}, {"origin": [0, 0, 0], "direction": [0, 1, 0]},
                {"origin": [0, 0, 0], "direction": [0, 0, 1], "max_distance": 10}]
        hits = self.ok("POST", "/v1/worlds/r/raycast", {"rays": rays, "all": True})["hits"]
        self.assertEqual(len(hits), 3)
        self.assertEqual([h["id"] for h in hits[0]], ["ball", "far"])
        self.hit(hits[0][0], "ball", 13, [0, 0, 8], [0, 0, -1])
        self.hit(hits[0][1], "far", 24, [0, 0, 19], [0, 0, -1])
        self.assertEqual(hits[1], [])
        self.assertEqual([h["id"] for h in hits[2]], ["ball"])

    def test_sweeps(self):
        def sweep(shape, start, translation, **kw):
            body = {"shape": shape, "pose": pose(start), "translation": translation}
            body.update(kw)
            return self.ok("POST", "/v1/worlds/r/sweep", body)["hit"]

        h = sweep(sphere(1), (0, 0, 0), [20, 0, 0])
        self.assertEqual(h["id"], "crate")
        self.assertAlmostEqual(h["time"], 0.4, delta=1e-6)
        self.assertClose(h["point"], [9, 0, 0], 1e-5)
        self.assertClose(h["normal"], [1, 0, 0], 1e-6)
        h = sweep(sphere(1), (0, 0, 0), [0, 0, 20])
        self.assertEqual(h["id"], "ball")
        self.assertAlmostEqual(h["time"], 0.35, delta=1e-6)
        self.assertClose(h["point"], [0, 0, 8], 1e-5)
        self.assertClose(h["normal"], [0, 0, 1], 1e-6)
        h = sweep(box(0.5, 0.5, 0.5), (0, 0, 0), [20, 0, 0])
        self.assertEqual(h["id"], "crate")
        self.assertAlmostEqual(h["time"], 0.425, delta=1e-6)
        self.assertAlmostEqual(h["point"][0], 9, delta=1e-5)
        self.assertClose(h["normal"], [1, 0, 0], 1e-6)
        self.assertIsNone(sweep(sphere(1), (0, 0, 0), [0, 5, 0]))
        self.assertIsNone(sweep(sphere(1), (0, 0, 0), [20, 0, 0], mask=2))
        h = sweep(sphere(1), (0, 0, 0), [-20, 0, 0], mask=2)
        self.assertEqual(h["id"], "hidden")
        self.assertAlmostEqual(h["time"], 0.4, delta=1e-6)
        h = sweep(sphere(1), (10, 0, 0), [1, 0, 0])
        self.assertEqual((h["id"], h["time"]), ("crate", 0))

    def test_overlap_query(self):
        def overlap(shape, at, **kw):
            body = {"shape": shape, "pose": pose(at)}
            body.update(kw)
            return self.ok("POST", "/v1/worlds/r/overlap", body)["ids"]

        self.assertEqual(overlap(sphere(12), (0, 0, 0)), ["ball", "crate", "hidden", "turned"])
        self.assertEqual(overlap(sphere(12), (0, 0, 0), mask=1), ["ball", "crate", "turned"])
        self.assertEqual(overlap(sphere(12), (0, 0, 0), mask=2), ["hidden"])
        self.assertEqual(overlap(box(1, 1, 7), (0, 0, 14)), ["ball", "far"])
        self.assertEqual(overlap(sphere(0.5), (0, 0, 0)), [])
        self.assertEqual(overlap(sphere(1), (11.5, 0, 0)), ["crate"])
        self.assertEqual(overlap(sphere(1), (12.5, 0, 0)), [])


class RandomQueries(DaemonCase):
    """Random spheres and axis-aligned boxes: rays and overlaps against
    brute force over every shape."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        rng = random.Random(99)
        cls.spheres = [("b%02d" % i, [rng.uniform(-20, 20) for _ in range(3)], rng.uniform(0.5, 3)) for i in range(30)]
        cls.boxes = [("c%02d" % i, [rng.uniform(-20, 20) for _ in range(3)], [rng.uniform(0.5, 3) for _ in range(3)])
                     for i in range(20)]
        items = [body_item(i, sphere(r), c) for i, c, r in cls.spheres] + \
                [body_item(i, box(*h), c) for i, c, h in cls.boxes]
        r = cls.daemon.request("PUT", "/v1/worlds/rq", {"settings": {"skin": 0}, "shapes": items})
        assert r.status == 201, r.describe()
        cls.rng = rng

    def test_random_rays(self):
        rays, expected = [], []
        while len(rays) < 200:
            origin = [self.rng.uniform(-30, 30) for _ in range(3)]
            target = [self.rng.uniform(-15, 15) for _ in range(3)]
            d = o.unit(o.sub(target, origin))
            cands = []
            for i, c, r in self.spheres:
                t = o.ray_sphere(origin, d, c, r)
                if t is not None:
                    cands.append((t, i))
            for i, c, h in self.boxes:
                hit = o.ray_aabb(origin, d, o.sub(c, h), o.add(c, h))
                if hit is not None:
                    cands.append((hit[0], i))
            cands.sort()
            if len(cands) >= 2 and cands[1][0] - cands[0][0] < 1e-6:
                continue  # a near tie: either id may win within rounding
            if any(t == 0 for t, _ in cands):
                continue
            rays.append({"origin": origin, "direction": d})
            expected.append(cands[0] if cands else None)
        hits = self.ok("POST", "/v1/worlds/rq/raycast", {"rays": rays})["hits"]
        for ray, e, h in zip(rays, expected, hits):
            what = "ray %s -> %s (expected %s)" % (ray, h, e)
            if e is None:
                self.assertIsNone(h, what)
            else:
                self.assertIsNotNone(h, what)
                self.assertEqual(h["id"], e[1], what)
                self.assertAlmostEqual(h["distance"], e[0], delta=1e-7, msg=what)
                self.assertClose(h["point"], o.add(ray["origin"], o.scale(ray["direction"], e[0])), 1e-6, what)
        self.assertGreater(sum(1 for e in expected if e), 50, "too few rays hit: the test would prove little")

    def test_random_overlaps(self):
        checked = 0
        for _ in range(40):
            q = [self.rng.uniform(-20, 20) for _ in range(3)]
            radius = self.rng.uniform(2, 9)
            gaps = {i: o.norm(o.sub(c, q)) - r - radius for i, c, r in self.spheres}
            gaps.update({i: o.point_aabb_distance(q, o.sub(c, h), o.add(c, h)) - radius for i, c, h in self.boxes})
            if any(abs(g) < 1e-6 for g in gaps.values()):
                continue
            expected = sorted(i for i, g in gaps.items() if g <= 0)
            got = self.ok("POST", "/v1/worlds/rq/overlap", {"shape": sphere(radius), "pose": pose(q)})["ids"]
            self.assertEqual(got, expected, "sphere r=%g at %s" % (radius, q))
            checked += len(expected)
        self.assertGreater(checked, 20)


class CCD(DaemonCase):

    def test_first_impact(self):
        self.ok("PUT", "/v1/worlds/ccd", {"settings": {"skin": 0}, "shapes": [
            body_item("fast", sphere(0.5), (0, 0, 0), velocity=[100, 0, 0]),
            body_item("target", sphere(0.5), (10, 0, 0)),
            body_item("slow", sphere(0.5), (0, 30, 0), velocity=[0.1, 0, 0]),
            body_item("mark", sphere(0.5), (1.5, 30, 0)),
        ]}, status=201)
        got = self.ok("POST", "/v1/worlds/ccd/contacts", {"dt": 0.2})
        self.assertEqual(got["pairs"], [])
        self.assertEqual(len(got["toi"]), 1, got["toi"])
        t = got["toi"][0]
        self.assertEqual((t["id"], t["other"]), ("fast", "target"))
        # contact when the centres are 1 apart: x = 9 of the 20 travelled
        self.assertAlmostEqual(t["time"], 0.45, delta=1e-6)
        self.assertClose(t["point"], [9.5, 0, 0], 1e-5)
        self.assertClose(t["normal"], [1, 0, 0], 1e-6)
        self.assertEqual(self.ok("POST", "/v1/worlds/ccd/contacts", {})["toi"], [], "no dt, no CCD")
        short = self.ok("POST", "/v1/worlds/ccd/contacts", {"dt": 0.05})
        self.assertEqual(short["toi"], [], "5 units of travel do not reach the target")


class RayTreeOnDemand(DaemonCase):
    """The ray tree is brought up to date by the first cast after a change
    (docs/API.md, GET /v1/worlds/{world}); every answer is exact before
    and after, here checked against where the shapes were put."""

    def stale(self):
        return self.ok("GET", "/v1/worlds/t")["stats"]["bvh_stale"]

    def cast_down(self, x):
        r = self.ok("POST", "/v1/worlds/t/raycast",
                    {"rays": [{"origin": [x, 10, 0], "direction": [0, -1, 0]}]})
        return r["hits"][0]

    def test_first_cast_after_a_change_refreshes(self):
        self.ok("PUT", "/v1/worlds/t", {"shapes": [body_item("a", sphere(1), (0, 0, 0)),
                                                  body_item("b", sphere(1), (5, 0, 0))]}, status=201)
        self.assertTrue(self.stale(), "shapes came: the tree waits for a cast")
        hit = self.cast_down(5)
        self.assertEqual(hit["id"], "b")
        self.assertAlmostEqual(hit["distance"], 9, delta=1e-9)
        self.assertFalse(self.stale(), "the cast brought the tree up to date")
        self.ok("POST", "/v1/worlds/t/batch", {"move": [{"id": "b", "pose": pose((20, 3, 0))}]})
        self.assertTrue(self.stale(), "a move leaves the tree behind")
        self.assertIsNone(self.cast_down(5), "b moved away")
        self.assertFalse(self.stale())
        self.ok("POST", "/v1/worlds/t/batch", {"move": [{"id": "b", "pose": pose((40, 0, 0))}]})
        r = self.ok("POST", "/v1/worlds/t/overlap", {"shape": sphere(1), "pose": pose((40, 1.5, 0))})
        self.assertEqual(r["ids"], ["b"])
        self.assertFalse(self.stale(), "an overlap query refreshes it too")
