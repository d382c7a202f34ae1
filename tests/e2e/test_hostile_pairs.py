"""A per-world cap on broadphase pairs (issue 25, item 3: --max-world-pairs).

Coincident shapes make n (n - 1) / 2 broadphase pairs: a small import can
otherwise hold the world lock for minutes and make one contacts answer
hundreds of megabytes. A batch, import, shape PUT or skin change whose
result crosses the cap is refused whole with 422 and changes nothing.
Oracles: the pair count of the final boxes worked out here (coincident
spheres all overlap; spheres far apart make none), the world's own
shapes and broadphase_pairs read back with GET."""

import unittest

from harness import DaemonCase
from test_durability import Durability
from wire import body_item, sphere

CAP = 10


def spheres(prefix, n, spacing=0.0):
    """n unit spheres along x, spacing apart (0: all coincident)."""
    return [body_item("%s%d" % (prefix, i), sphere(1), (i * spacing, 0, 0)) for i in range(n)]


class SmallCap(DaemonCase):
    FLAGS = ("--max-world-pairs", str(CAP))

    def summary(self, name):
        v = self.ok("GET", "/v1/worlds/" + name)
        return v["shapes"], v["broadphase_pairs"]

    def test_import_over_cap_refused(self):
        # 5 coincident spheres: 10 pairs (at the cap) are accepted, 6 (15) are not
        self.ok("PUT", "/v1/worlds/imp", {"settings": {}, "shapes": spheres("s", 5)}, status=201)
        self.assertEqual(self.summary("imp"), (5, 10))
        r = self.req("PUT", "/v1/worlds/imp", {"settings": {}, "shapes": spheres("t", 6)})
        self.assertProblem(r, 422, "over-limit")
        self.assertIn("broadphase pairs", r.value["detail"])
        self.assertIn(str(CAP), r.value["detail"])
        self.assertEqual(self.summary("imp"), (5, 10))
        r = self.req("PUT", "/v1/worlds/fresh", {"settings": {}, "shapes": spheres("t", 6)})
        self.assertProblem(r, 422, "over-limit")
        self.assertIn("broadphase pairs", r.value["detail"])
        self.assertEqual(self.req("GET", "/v1/worlds/fresh").status, 404)

    def test_batch_and_put_over_cap_refused(self):
        self.ok("PUT", "/v1/worlds/b", {}, status=201)
        self.ok("POST", "/v1/worlds/b/batch", {"upsert": spheres("s", 4)})  # 6 pairs
        self.assertEqual(self.summary("b"), (4, 6))
        r = self.req("POST", "/v1/worlds/b/batch", {"upsert": spheres("t", 2)})  # 15 pairs
        self.assertProblem(r, 422, "over-limit")
        self.assertIn("broadphase pairs", r.value["detail"])
        self.assertEqual(self.summary("b"), (4, 6))
        self.assertEqual(self.req("GET", "/v1/worlds/b/shapes/t0").status, 404)
        self.ok("POST", "/v1/worlds/b/batch", {"upsert": [spheres("t", 1)[0]]})  # 10 pairs: at the cap
        self.assertEqual(self.summary("b"), (5, 10))
        r = self.req("PUT", "/v1/worlds/b/shapes/u", {"shape": sphere(1), "pose": {"position": [0, 0, 0]}})
        self.assertProblem(r, 422, "over-limit")
        self.assertIn("broadphase pairs", r.value["detail"])
        self.assertEqual(self.summary("b"), (5, 10))
        # far apart they make no pairs, so the same count of shapes fits
        far = [dict(s, pose={"position": [100 + 10 * i, 0, 0]}) for i, s in enumerate(spheres("far", 20))]
        self.ok("POST", "/v1/worlds/b/batch", {"upsert": far})
        self.assertEqual(self.summary("b"), (25, 10))
        # moving the far ones onto the crowd crosses the cap
        r = self.req("POST", "/v1/worlds/b/batch",
                     {"move": [{"id": "far0", "pose": {"position": [0, 0, 0]}}]})
        self.assertProblem(r, 422, "over-limit")
        self.assertIn("broadphase pairs", r.value["detail"])
        self.assertEqual(self.summary("b"), (25, 10))

    def test_skin_over_cap_refused(self):
        # 6 spheres 2.5 apart: no pairs at skin 0, all 15 with skin 100
        self.ok("PUT", "/v1/worlds/sk", {"settings": {"skin": 0},
                                         "shapes": spheres("s", 6, spacing=2.5)}, status=201)
        self.assertEqual(self.summary("sk"), (6, 0))
        r = self.req("PUT", "/v1/worlds/sk", {"skin": 100})
        self.assertProblem(r, 422, "over-limit")
        self.assertIn("broadphase pairs", r.value["detail"])
        v = self.ok("GET", "/v1/worlds/sk")
        self.assertEqual(v["settings"]["skin"], 0)
        self.assertEqual(v["broadphase_pairs"], 0)


class DefaultCap(DaemonCase):
    def test_coincident_import_refused_quickly(self):
        # 3,000 coincident spheres would make 4,498,500 pairs, past 1,000,000
        r = self.req("PUT", "/v1/worlds/crowd", {"settings": {}, "shapes": spheres("s", 3000)})
        self.assertProblem(r, 422, "over-limit")
        self.assertIn("broadphase pairs", r.value["detail"])
        self.assertEqual(self.req("GET", "/v1/worlds/crowd").status, 404)

    def test_filtered_crowd_counts(self):
        # mask 0: no pair passes the filters, yet the broadphase tests all
        # 4,498,500 overlaps (100,000 such boxes took 84 s in one import)
        crowd = [dict(s, mask=0) for s in spheres("s", 3000)]
        r = self.req("PUT", "/v1/worlds/masked", {"settings": {}, "shapes": crowd})
        self.assertProblem(r, 422, "over-limit")
        self.assertIn("broadphase pairs", r.value["detail"])
        self.assertEqual(self.req("GET", "/v1/worlds/masked").status, 404)
        # 1,000 of them (499,500 overlaps) fit, and hold no pair
        self.ok("PUT", "/v1/worlds/masked", {"settings": {}, "shapes": crowd[:1000]}, status=201)
        v = self.ok("GET", "/v1/worlds/masked")
        self.assertEqual((v["shapes"], v["broadphase_pairs"]), (1000, 0))


class LoweredCap(unittest.TestCase):
    """A restart with a lower cap gives back every acknowledged change, and
    the world above the new cap may then change but not add pairs."""
    setUp = Durability.setUp
    start = Durability.start
    wait_ready = Durability.wait_ready
    stop = Durability.stop
    ok = Durability.ok

    def pairs(self, d, world):
        v = self.ok(d, "GET", "/v1/worlds/" + world).value
        return v["shapes"], v["broadphase_pairs"]

    def test_restart_with_lower_cap_keeps_acknowledged_changes(self):
        d = self.start("--max-world-pairs", "100")
        self.ok(d, "PUT", "/v1/worlds/w", {"settings": {}, "shapes": spheres("s", 8)})  # 28 pairs
        self.ok(d, "POST", "/v1/worlds/w/batch", {"upsert": spheres("t", 2)})  # 10 coincident: 45
        self.stop(d)
        d = self.start("--max-world-pairs", str(CAP))
        self.assertEqual(self.pairs(d, "w"), (10, 45))
        # no new pair: allowed; moving one sphere away drops 9 pairs
        self.ok(d, "POST", "/v1/worlds/w/batch", {"move": [{"id": "t1", "pose": {"position": [50, 0, 0]}}]})
        self.assertEqual(self.pairs(d, "w"), (10, 36))
        # growth is refused though the world is above the cap already
        r = d.request("POST", "/v1/worlds/w/batch", {"upsert": spheres("u", 1)})
        self.assertEqual(r.status, 422, r.describe())
        self.assertEqual(self.pairs(d, "w"), (10, 36))
        # a new world is held to the new cap
        r = d.request("PUT", "/v1/worlds/v", {"settings": {}, "shapes": spheres("s", 6)})  # 15 pairs
        self.assertEqual(r.status, 422, r.describe())
        self.stop(d)
