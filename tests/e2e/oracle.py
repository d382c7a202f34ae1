"""Independent geometry for the end-to-end tests: closed forms and brute
force written from the definitions, never from the daemon's output."""

import itertools
import math


def add(a, b):
    return [a[0] + b[0], a[1] + b[1], a[2] + b[2]]


def sub(a, b):
    return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def scale(a, s):
    return [a[0] * s, a[1] * s, a[2] * s]


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def norm(a):
    return math.sqrt(dot(a, a))


def unit(a):
    """a scaled to length 1 (any number of components)."""
    n = math.sqrt(sum(x * x for x in a))
    return [x / n for x in a]


def quat_axes(q):
    """The local unit axes (images of x, y, z) of quaternion [x, y, z, w]
    by the textbook rotation-matrix formula, as rows."""
    x, y, z, w = q
    return [
        [1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w)],
        [2 * (x * y - z * w), 1 - 2 * (x * x + z * z), 2 * (y * z + x * w)],
        [2 * (x * z + y * w), 2 * (y * z - x * w), 1 - 2 * (x * x + y * y)],
    ]


def sphere_sphere(ca, ra, cb, rb):
    """(distance, depth, unit normal A->B) of two spheres."""
    d = sub(cb, ca)
    l = norm(d)
    n = scale(d, 1.0 / l)
    gap = l - ra - rb
    return max(gap, 0.0), max(-gap, 0.0), n


def box_corners(center, half, axes):
    """The 8 corners of a box whose local axes (rows) are given in world space."""
    out = []
    for s in itertools.product((-1.0, 1.0), repeat=3):
        p = list(center)
        for i in range(3):
            p = add(p, scale(axes[i], s[i] * half[i]))
        out.append(p)
    return out


def projected_gap(corners_a, corners_b, axis):
    """Gap between the two corner sets projected on axis (world units):
    positive when the projections are disjoint."""
    u = unit(axis)
    pa = [dot(p, u) for p in corners_a]
    pb = [dot(p, u) for p in corners_b]
    return max(min(pb) - max(pa), min(pa) - max(pb))


def sat_axes(axes_a, axes_b):
    """The 15 SAT candidate axes with their names A0..A2, B0..B2, AixBj."""
    out = [("A%d" % i, axes_a[i]) for i in range(3)] + [("B%d" % i, axes_b[i]) for i in range(3)]
    for i in range(3):
        for j in range(3):
            out.append(("A%dxB%d" % (i, j), cross(axes_a[i], axes_b[j])))
    return out


def ray_sphere(origin, direction, center, radius):
    """Distance along the unit direction to the first entry, or None."""
    oc = sub(origin, center)
    b = dot(oc, direction)
    c = dot(oc, oc) - radius * radius
    disc = b * b - c
    if disc < 0:
        return None
    t = -b - math.sqrt(disc)
    if t < 0:
        return 0.0 if c <= 0 else None
    return t


def ray_aabb(origin, direction, lo, hi):
    """Slab test: (distance, outward normal) of the first entry, or None."""
    tmin, tmax, normal = 0.0, math.inf, None
    for k in range(3):
        if direction[k] == 0:
            if origin[k] < lo[k] or origin[k] > hi[k]:
                return None
            continue
        t1 = (lo[k] - origin[k]) / direction[k]
        t2 = (hi[k] - origin[k]) / direction[k]
        n1 = [0.0, 0.0, 0.0]
        n1[k] = -1.0 if direction[k] > 0 else 1.0
        if t1 > t2:
            t1, t2 = t2, t1
        if t1 > tmin:
            tmin, normal = t1, n1
        tmax = min(tmax, t2)
        if tmin > tmax:
            return None
    return tmin, normal


def point_aabb_distance(p, lo, hi):
    """Euclidean distance from p to an axis-aligned box (0 inside)."""
    q = [min(max(p[k], lo[k]), hi[k]) for k in range(3)]
    return norm(sub(p, q))


def layers_meet(la, ma, lb, mb):
    """API.md: a pair collides when each one's layer meets the other's mask."""
    return (la & mb) != 0 and (lb & ma) != 0
