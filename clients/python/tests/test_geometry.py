"""The quaternion helpers against Rodrigues' rotation formula, and the
shape builders against the documented JSON (docs/API.md, section 2)."""
import math
import random
import unittest

import support  # noqa: F401  (puts the package under test on the path)
from collisiond_client import geometry as g


def rodrigues(axis, angle, v):
    """v turned by angle about the unit vector along axis: v cos t + (k x v) sin t + k (k . v)(1 - cos t)."""
    n = math.sqrt(sum(a * a for a in axis))
    k = [a / n for a in axis]
    c, s = math.cos(angle), math.sin(angle)
    kxv = (k[1] * v[2] - k[2] * v[1], k[2] * v[0] - k[0] * v[2], k[0] * v[1] - k[1] * v[0])
    kv = sum(a * b for a, b in zip(k, v))
    return [v[i] * c + kxv[i] * s + k[i] * kv * (1 - c) for i in range(3)]


class Quaternions(unittest.TestCase):
    def setUp(self):
        self.rnd = random.Random(5)

    def rand_axis(self):
        return [self.rnd.uniform(-1, 1) for _ in range(3)]

    def near(self, a, b, tol=1e-12):
        for x, y in zip(a, b):
            self.assertAlmostEqual(x, y, delta=tol)

    def test_axis_angle_turns_as_rodrigues(self):
        for _ in range(200):
            axis, angle, v = self.rand_axis(), self.rnd.uniform(-7, 7), self.rand_axis()
            q = g.quat_axis_angle(axis, angle)
            self.assertAlmostEqual(sum(c * c for c in q), 1.0, delta=1e-15)
            self.near(g.quat_rotate(q, v), rodrigues(axis, angle, v))

    def test_multiply_composes_right_first(self):
        for _ in range(200):
            a = g.quat_axis_angle(self.rand_axis(), self.rnd.uniform(-3, 3))
            b = g.quat_axis_angle(self.rand_axis(), self.rnd.uniform(-3, 3))
            v = self.rand_axis()
            self.near(g.quat_rotate(g.quat_multiply(a, b), v), g.quat_rotate(a, g.quat_rotate(b, v)))

    def test_integrate_is_a_turn_of_speed_times_dt(self):
        q = g.quat_axis_angle((1, 2, 3), 0.7)
        got = g.quat_integrate(q, (0, 0, 3.0), 0.5)  # 1.5 rad about z, after q
        v = (0.3, -1, 2)
        self.near(g.quat_rotate(got, v), rodrigues((0, 0, 1), 1.5, g.quat_rotate(q, v)))
        self.assertEqual(g.quat_integrate(q, (0, 0, 0), 1.0), q)

    def test_degenerate_inputs(self):
        with self.assertRaises(ValueError):
            g.quat_axis_angle((0, 0, 0), 1)
        with self.assertRaises(ValueError):
            g.quat_normalize((0, 0, 0, 0))
        self.near(g.quat_normalize((0, 0, 0, 2)), g.IDENTITY)


class Builders(unittest.TestCase):
    def test_documented_values(self):
        self.assertEqual(g.box(0.5, 1.0, 0.25), {"type": "box", "half_extents": [0.5, 1.0, 0.25]})
        self.assertEqual(g.convex([(0, 0, 0), (1, 0, 0)], radius=0.05),
                         {"type": "convex", "points": [[0, 0, 0], [1, 0, 0]], "radius": 0.05})
        self.assertEqual(g.mesh([(0, 0, 0), (10, 0, 0), (0, 0, 10)], [(0, 2, 1)]),
                         {"type": "mesh", "vertices": [[0, 0, 0], [10, 0, 0], [0, 0, 10]], "triangles": [[0, 2, 1]]})
        self.assertEqual(g.plane((0, 1, 0), 0), {"type": "plane", "normal": [0, 1, 0], "offset": 0})
        self.assertEqual(g.pose((1, 2, 3)), {"position": [1, 2, 3]})
        self.assertEqual(g.ray((0, 10, 0), (0, -1, 0), max_distance=100, mask=4),
                         {"origin": [0, 10, 0], "direction": [0, -1, 0], "max_distance": 100, "mask": 4})
