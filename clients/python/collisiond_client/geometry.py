"""Builders for the values the calls take (docs/API.md, section 2): shapes,
poses, bodies of a pair test, rays, and the quaternion arithmetic a game
loop needs to turn things. Quaternions are [x, y, z, w] (glTF order), as
the daemon reads them."""
import math


def sphere(radius):
    return {"type": "sphere", "radius": radius}


def capsule(radius, half_height):
    """A capsule whose core segment runs along local Y, from -half_height to +half_height."""
    return {"type": "capsule", "radius": radius, "half_height": half_height}


def box(hx, hy, hz):
    """A box of half extents hx, hy, hz."""
    return {"type": "box", "half_extents": [hx, hy, hz]}


def convex(points, radius=None):
    """The hull of points ([x, y, z] each), rounded by radius when given."""
    shape = {"type": "convex", "points": [list(p) for p in points]}
    if radius is not None:
        shape["radius"] = radius
    return shape


def triangle(a, b, c):
    return {"type": "triangle", "vertices": [list(a), list(b), list(c)]}


def plane(normal, offset):
    """The half-space normal . x <= offset (normal a unit vector); static only."""
    return {"type": "plane", "normal": list(normal), "offset": offset}


def mesh(vertices, triangles):
    return {"type": "mesh", "vertices": [list(v) for v in vertices], "triangles": [list(t) for t in triangles]}


def pose(position=(0.0, 0.0, 0.0), rotation=None):
    """A pose: position, and rotation as a unit quaternion [x, y, z, w] (None: none)."""
    p = {"position": list(position)}
    if rotation is not None:
        p["rotation"] = list(rotation)
    return p


def body(shape, position=(0.0, 0.0, 0.0), rotation=None):
    """One side of a pair test: {"shape", "pose"}."""
    return {"shape": shape, "pose": pose(position, rotation)}


def ray(origin, direction, max_distance=None, mask=None):
    """One ray of a raycast; direction need not be unit (the daemon normalises it)."""
    r = {"origin": list(origin), "direction": list(direction)}
    if max_distance is not None:
        r["max_distance"] = max_distance
    if mask is not None:
        r["mask"] = mask
    return r


IDENTITY = (0.0, 0.0, 0.0, 1.0)


def quat_axis_angle(axis, angle):
    """The unit quaternion turning by angle (radians) about axis (any non-zero length)."""
    x, y, z = axis
    n = math.sqrt(x * x + y * y + z * z)
    if n == 0.0:
        raise ValueError("a rotation axis must not be zero")
    s = math.sin(0.5 * angle) / n
    return (x * s, y * s, z * s, math.cos(0.5 * angle))


def quat_multiply(a, b):
    """a * b: the rotation b, then a."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def quat_normalize(q):
    """q scaled to unit length (the daemon refuses one off by more than 1e-3)."""
    n = math.sqrt(sum(c * c for c in q))
    if n == 0.0:
        raise ValueError("a zero quaternion is no rotation")
    return tuple(c / n for c in q)


def quat_rotate(q, v):
    """The vector v turned by the unit quaternion q."""
    x, y, z, w = q
    vx, vy, vz = v
    # v + 2 w (u x v) + 2 u x (u x v), u = (x, y, z)
    cx, cy, cz = y * vz - z * vy, z * vx - x * vz, x * vy - y * vx
    ddx, ddy, ddz = y * cz - z * cy, z * cx - x * cz, x * cy - y * cx
    return (vx + 2 * (w * cx + ddx), vy + 2 * (w * cy + ddy), vz + 2 * (w * cz + ddz))


def quat_integrate(q, omega, dt):
    """q turned by the angular velocity omega (radians per second, world axes) over dt."""
    wx, wy, wz = omega
    speed = math.sqrt(wx * wx + wy * wy + wz * wz)
    if speed == 0.0:
        return tuple(q)
    return quat_normalize(quat_multiply(quat_axis_angle(omega, speed * dt), q))
