"""Stateless pair tests against independent oracles: analytic
sphere-sphere, the seed's fixed OBB case (000_77d43b0b9a30f755.txt) with
its 15 axes re-derived from box corners, quaternion poses."""

import math
import random
import re
import struct

import oracle as o
from harness import DaemonCase
from wire import box, pair, posed, sphere

# The seed's fixed case: centres, half extents, local unit axes as rows
# (AxisX, AxisY, AxisZ), and the figures the seed reports.
SEED_A = {"center": [0.0, 0.0, 0.0], "half": [0.833764, 1.887452, 1.823530],
          "axes": [[-0.443449, 0.528599, -0.723834], [0.293785, 0.848689, 0.439793],
                   [0.846784, -0.017626, -0.531645]]}
SEED_B = {"center": [-2.171778, -2.012874, 2.111567], "half": [1.061493, 1.044604, 1.472044],
          "axes": [[-0.319965, -0.256745, 0.911978], [0.917602, 0.155652, 0.365758],
                   [-0.235857, 0.953863, 0.185786]]}
SEED_AXIS = "A1xB2"
SEED_GAP = 0.14671521          # the seed's full-SAT gap (its corner oracle: 0.1467154)
SEED_FACE_GAP = -0.0076251     # the seed's largest gap over the 6 face axes
# The seed's figures are single precision from six-digit axes; the daemon
# works in double on (orthonormalised) axes: they agree to about 1e-6.
SEED_TOL = 2e-6
# Per-axis gaps re-derived here from the raw six-digit axes.
AXIS_TOL = 1e-5


def seed_request(explain):
    def side(b):
        return {"shape": box(*b["half"]), "pose": {"position": b["center"], "axes": b["axes"]}}
    return pair(side(SEED_A), side(SEED_B), explain=explain)


def bits(x):
    """x's IEEE double, bit for bit (a number read from JSON digits or MessagePack)."""
    return struct.pack("<d", float(x))


def unit_check(tc, v, what):
    tc.assertEqual(len(v), 3, what)
    tc.assertAlmostEqual(o.norm(v), 1.0, delta=1e-9, msg="%s is not unit: %s" % (what, v))


class SpherePairs(DaemonCase):

    def test_random_sphere_pairs_match_the_closed_form(self):
        rng = random.Random(20240501)
        cases = []
        while len(cases) < 60:
            ca = [rng.uniform(-5, 5) for _ in range(3)]
            cb = [rng.uniform(-5, 5) for _ in range(3)]
            ra, rb = rng.uniform(0.1, 3), rng.uniform(0.1, 3)
            gap = o.norm(o.sub(cb, ca)) - ra - rb
            if abs(gap) < 1e-6 or o.norm(o.sub(cb, ca)) < 1e-3:
                continue
            cases.append((ca, ra, cb, rb))
        body = {"pairs": [pair(posed(sphere(ra), ca), posed(sphere(rb), cb)) for ca, ra, cb, rb in cases]}
        results = self.ok("POST", "/v1/pairs", body)["results"]
        self.assertEqual(len(results), len(cases))
        for (ca, ra, cb, rb), r in zip(cases, results):
            dist, depth, n = o.sphere_sphere(ca, ra, cb, rb)
            what = "spheres %s r=%g and %s r=%g -> %s" % (ca, ra, cb, rb, r)
            self.assertEqual(r["algorithm"], "sphere_sphere", what)
            self.assertIsNone(r["fallback"], what)
            self.assertEqual(r["overlap"], depth > 0, what)
            self.assertAlmostEqual(r["distance"], dist, delta=1e-9, msg=what)
            self.assertAlmostEqual(r["depth"], depth, delta=1e-9, msg=what)
            unit_check(self, r["normal"], what)
            self.assertClose(r["normal"], n, 1e-9, what)
            if depth > 0:
                self.assertNotIn("witness", r, what)
                self.assertEqual(len(r["points"]), 1, what)
                on_b = o.sub(cb, o.scale(n, rb))
                self.assertClose(r["points"][0]["position"], on_b, 1e-9, what)
                self.assertAlmostEqual(r["points"][0]["depth"], depth, delta=1e-9, msg=what)
            else:
                self.assertEqual(r["points"], [], what)
                self.assertClose(r["witness"], {"a": o.add(ca, o.scale(n, ra)), "b": o.sub(cb, o.scale(n, rb))},
                                 1e-9, what)

    def test_swapping_mirrors_the_result(self):
        a, b = posed(sphere(1), (0.3, 0.1, 0)), posed(sphere(2), (1, 1, 1))
        ab = self.ok("POST", "/v1/pair", pair(a, b))
        ba = self.ok("POST", "/v1/pair", pair(b, a))
        self.assertAlmostEqual(ab["depth"], ba["depth"], delta=1e-12)
        self.assertClose(ba["normal"], o.scale(ab["normal"], -1), 1e-12)

    def test_skin(self):
        a, b = posed(sphere(1)), posed(sphere(1.5), (3, 0, 0))
        self.assertFalse(self.ok("POST", "/v1/pair", pair(a, b, skin=0.4))["overlap"])
        r = self.ok("POST", "/v1/pair", pair(a, b, skin=0.6))
        self.assertTrue(r["overlap"], r)
        self.assertAlmostEqual(r["distance"], 0.5, delta=1e-12)
        self.assertEqual(r["depth"], 0)

    def test_concentric_spheres_never_invent_a_normal(self):
        r = self.ok("POST", "/v1/pair", pair(posed(sphere(1), (2, 2, 2)), posed(sphere(0.5), (2, 2, 2))))
        self.assertTrue(r["overlap"], r)
        if "normal" in r:
            unit_check(self, r["normal"], "normal")
        else:
            self.assertIsInstance(r["fallback"], dict, "no normal and no fallback: %s" % r)
            self.assertEqual(r["fallback"].get("reason"), "coincident_features", r)
            self.assertEqual(r["fallback"].get("action"), "dropped", r)


class BoxPairs(DaemonCase):

    def test_seed_obb_case_with_explain(self):
        r = self.ok("POST", "/v1/pair", seed_request(explain=True))
        self.assertFalse(r["overlap"], "the seed's boxes do not touch: %s" % r)
        self.assertEqual(r["algorithm"], "sat_box_box")
        self.assertEqual(r["sat"]["axis"], SEED_AXIS, r["sat"])
        self.assertAlmostEqual(r["sat"]["gap"], SEED_GAP, delta=SEED_TOL)
        # the SAT gap is a lower bound of the Euclidean distance
        self.assertGreaterEqual(r["distance"], r["sat"]["gap"] - 1e-9)
        self.assertEqual(r["depth"], 0)
        unit_check(self, r["normal"], "normal")

        axes = r["axes"]
        expected_names = ["A0", "A1", "A2", "B0", "B1", "B2"] + [
            "A%dxB%d" % (i, j) for i in range(3) for j in range(3)]
        self.assertEqual([a["name"] for a in axes], expected_names)
        ca = o.box_corners(SEED_A["center"], SEED_A["half"], SEED_A["axes"])
        cb = o.box_corners(SEED_B["center"], SEED_B["half"], SEED_B["axes"])
        for (name, axis), got in zip(o.sat_axes(SEED_A["axes"], SEED_B["axes"]), axes):
            self.assertFalse(got.get("skipped", False), "no seed axis is degenerate: %s" % got)
            self.assertAlmostEqual(got["gap"], o.projected_gap(ca, cb, axis), delta=AXIS_TOL,
                                   msg="axis %s: %s" % (name, got))
        face_gap = max(a["gap"] for a in axes[:6])
        self.assertAlmostEqual(face_gap, SEED_FACE_GAP, delta=SEED_TOL)
        self.assertEqual(max(axes, key=lambda a: a["gap"])["name"], SEED_AXIS)

    def test_seed_obb_case_reports_one_gap(self):
        """sat.gap, the explain row of A1xB2 and the distance (the closest
        points lie on two edges, along A1xB2) are one quantity: the same
        double (so, in JSON, the same digits), whichever box is named first."""
        gaps = []
        for req in (seed_request(explain=True), seed_request(explain=True)):
            if gaps:
                req = pair(req["b"], req["a"], explain=True)
            r = self.ok("POST", "/v1/pair", req)
            name = "A1xB2" if not gaps else "A2xB1"
            self.assertEqual(r["sat"]["axis"], name, r["sat"])
            row = [a for a in r["axes"] if a["name"] == name]
            self.assertEqual(len(row), 1, r["axes"])
            self.assertEqual(bits(row[0]["gap"]), bits(r["sat"]["gap"]), r)
            self.assertEqual(bits(r["distance"]), bits(r["sat"]["gap"]), r)
            gaps.append(r["sat"]["gap"])
        self.assertEqual(bits(gaps[0]), bits(gaps[1]), "swapping the boxes changed the gap")
        self.assertAlmostEqual(gaps[0], SEED_GAP, delta=SEED_TOL)

    def test_seed_obb_case_without_explain(self):
        r = self.ok("POST", "/v1/pair", seed_request(explain=False))
        self.assertNotIn("axes", r)
        self.assertEqual(r["sat"]["axis"], SEED_AXIS)
        self.assertAlmostEqual(r["sat"]["gap"], SEED_GAP, delta=SEED_TOL)

    def test_parallel_boxes_skip_degenerate_axes(self):
        r = self.ok("POST", "/v1/pair", pair(posed(box(1, 1, 1)), posed(box(1, 1, 1), (3, 0.5, 0)), explain=True))
        self.assertEqual(r["sat"]["axis"], "A0")
        self.assertAlmostEqual(r["sat"]["gap"], 1.0, delta=1e-12)
        self.assertAlmostEqual(r["distance"], 1.0, delta=1e-9)
        self.assertClose(r["normal"], [1, 0, 0], 1e-9)
        skipped = [a["name"] for a in r["axes"] if a.get("skipped")]
        self.assertEqual(skipped, ["A0xB0", "A1xB1", "A2xB2"], "parallel boxes: AixBi are degenerate")
        for a in r["axes"]:
            if not a.get("skipped"):
                self.assertIn("gap", a, a)

    def test_box_box_face_contact(self):
        # B rests 0.25 deep in A's top face: depth 0.25, normal +y, four points
        r = self.ok("POST", "/v1/pair", pair(posed(box(2, 1, 2)), posed(box(0.5, 0.5, 0.5), (0, 1.25, 0))))
        self.assertTrue(r["overlap"])
        self.assertAlmostEqual(r["depth"], 0.25, delta=1e-12)
        self.assertClose(r["normal"], [0, 1, 0], 1e-12)
        self.assertEqual(len(r["points"]), 4, r["points"])
        for p in r["points"]:
            self.assertAlmostEqual(p["depth"], 0.25, delta=1e-12)
            self.assertAlmostEqual(abs(p["position"][0]), 0.5, delta=1e-12)
            self.assertAlmostEqual(abs(p["position"][2]), 0.5, delta=1e-12)
            self.assertRegex(p["feature"], r"^[vef]\d+\.[vef]\d+$")

    def test_quaternion_pose(self):
        # a box of half extents (1, 2, 3) turned 90 degrees about z is 2 wide
        # along x: a unit sphere at x = 3.5 is 0.5 away
        s = math.sqrt(0.5)
        q = [0, 0, s, s]
        r = self.ok("POST", "/v1/pair", pair(posed(box(1, 2, 3), rotation=q), posed(sphere(1), (3.5, 0, 0))))
        self.assertEqual(r["algorithm"], "sphere_box")
        self.assertAlmostEqual(r["distance"], 0.5, delta=1e-9)
        self.assertClose(r["normal"], [1, 0, 0], 1e-9)
        # the same pose given as axes (the oracle's quaternion matrix)
        axes = o.quat_axes(q)
        r2 = self.ok("POST", "/v1/pair", pair(posed(box(1, 2, 3), axes=axes), posed(sphere(1), (3.5, 0, 0))))
        self.assertAlmostEqual(r2["distance"], 0.5, delta=1e-9)
        # an arbitrary rotation: the distance from the sphere centre to the
        # box is measured in the box frame
        q = o.unit([0.3, -0.2, 0.5, 0.8])
        axes = o.quat_axes(q)
        center = [4.0, 1.0, -0.5]
        local = [o.dot(center, axes[i]) for i in range(3)]
        dist = o.point_aabb_distance(local, [-1, -2, -3], [1, 2, 3]) - 0.75
        self.assertGreater(dist, 0.01)
        r3 = self.ok("POST", "/v1/pair", pair(posed(box(1, 2, 3), rotation=q), posed(sphere(0.75), center)))
        self.assertAlmostEqual(r3["distance"], dist, delta=1e-9)

    def test_mixed_shapes_are_answered(self):
        shapes = [sphere(0.5), box(0.5, 0.5, 0.5), {"type": "capsule", "radius": 0.3, "half_height": 0.5},
                  {"type": "convex", "points": [[-0.5, -0.5, -0.5], [0.5, -0.5, -0.5], [0, 0.5, -0.5], [0, 0, 0.5]]},
                  {"type": "convex", "points": [[0, 0, 0], [0.3, 0, 0]], "radius": 0.2},
                  {"type": "triangle", "vertices": [[-0.5, 0, -0.5], [0.5, 0, -0.5], [0, 0, 0.5]]}]
        pairs = [pair(posed(a), posed(b, (0.3, 0.2, 0.1))) for a in shapes for b in shapes]
        results = self.ok("POST", "/v1/pairs", {"pairs": pairs})["results"]
        self.assertEqual(len(results), len(pairs))
        for p, r in zip(pairs, results):
            what = "%s vs %s -> %s" % (p["a"]["shape"]["type"], p["b"]["shape"]["type"], r)
            self.assertIsInstance(r["overlap"], bool, what)
            self.assertGreaterEqual(r["distance"], 0, what)
            self.assertGreaterEqual(r["depth"], 0, what)
            self.assertIsInstance(r["algorithm"], str, what)
            if "normal" in r:
                unit_check(self, r["normal"], what)
            else:
                self.assertIsNotNone(r["fallback"], what)
            self.assertLessEqual(len(r["points"]), 4, what)


# A "-0" in the bytes of JSON: a minus sign, a zero, and no digit or point
# after it (so -0.5 and 1e-07 are not matches).
NEGATIVE_ZERO = re.compile(rb"-0(?![0-9.])")


def negative_zero(r):
    """Where r's answer writes a zero with its sign bit set, or None: in
    JSON text the pattern above (Python reads "-0" as the integer 0), in
    MessagePack a float -0.0 in the decoded value."""
    if r.format != "msgpack":
        m = NEGATIVE_ZERO.search(r.raw)
        return None if m is None else "byte %d" % m.start()
    return _negative_zero_in(r.json, "")


def _negative_zero_in(value, where):
    if isinstance(value, float) and value == 0 and math.copysign(1, value) < 0:
        return where or "/"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        found = _negative_zero_in(v, "%s/%s" % (where, k))
        if found:
            return found
    return None


def signs(r, *path):
    """The signs (+1 or -1) of the numbers of the array at path in r's
    answer, as written: "-0" in JSON text is negative."""
    node = r.json
    for k in path:
        node = node[k]
    if r.format != "msgpack":
        key = b'"%s":[' % path[-1].encode()
        start = r.raw.index(key) + len(key)
        texts = r.raw[start:r.raw.index(b"]", start)].split(b",")
        return [-1 if t.strip().startswith(b"-") else 1 for t in texts]
    return [int(math.copysign(1, x)) for x in node]


class NegativeZeros(DaemonCase):
    """Answers spell zero one way: mirrored pairs (B run first, the normal
    negated) and exact touching (depth -(0)) used to write -0."""

    def test_answers_have_no_negative_zero(self):
        above = lambda shape, y: posed(shape, (0, y, 0))
        cases = [pair(above(box(1, 1, 1), 1.5), posed(box(1, 1, 1))),      # normal [-0,-1,-0]
                 pair(above(box(1, 1, 1), 2), posed(box(1, 1, 1))),        # touching: depth -0 too
                 pair(above(sphere(1), 2), posed(sphere(1))),
                 pair(above(box(1, 1, 1), 3), posed(box(1, 1, 1)), explain=True)]
        for body in cases:
            r = self.req("POST", "/v1/pair", body)
            self.assertEqual(r.status, 200, r.describe())
            self.assertIsNone(negative_zero(r), r.describe())
        # the oracle's own check: the same pattern does find the old spelling
        self.assertIsNotNone(NEGATIVE_ZERO.search(b'"normal":[-0,-1,-0]'))
        self.assertEqual(_negative_zero_in({"normal": [-0.0, -1.0, -0.0]}, ""), "/normal/0")
        self.assertEqual(self.ok("POST", "/v1/pair", cases[0])["normal"], [0, -1, 0])
        self.assertEqual(self.ok("POST", "/v1/pair", cases[1])["points"][0]["depth"], 0)

    def test_negative_zero_in_a_request_is_accepted(self):
        self.ok("PUT", "/v1/worlds/nz", {}, status=201)
        r = self.req("PUT", "/v1/worlds/nz/shapes/s", {"shape": sphere(1), "pose": {"position": [-0.0, 1, -0.0]}})
        self.assertEqual(r.status, 201, r.describe())
        self.assertEqual(r.json["pose"]["position"], [0, 1, 0])
        self.assertEqual(signs(r, "pose", "position"), [1, 1, 1], r.describe())
        self.assertIsNone(negative_zero(self.req("GET", "/v1/worlds/nz/shapes/s")))
        # the export is the stored world, bit for bit: the client's -0 stays
        exported = self.req("GET", "/v1/worlds/nz/export")
        self.assertEqual(exported.json["shapes"][0]["pose"]["position"], [0, 1, 0], exported.describe())
        self.assertEqual(signs(exported, "shapes", 0, "pose", "position"), [-1, 1, -1], exported.describe())
        self.ok("DELETE", "/v1/worlds/nz", status=204)
