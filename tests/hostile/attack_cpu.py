"""Item 3 (and item 6, which they cause): requests cheap to send and
quadratic or worse to serve. Thousands of coincident spheres (every two
a pair) imported in a few hundred KB, then contacts and GET /pairs on
them, each retried as soon as it ends; a hundred thousand rays through
thousands of coincident boxes; large hulls swept over a mesh; and one
coincident sphere PUT after another (each PUT, and its replay at the
restart, costs as much as the world is large). The attacker reads only
the status line of an answer and then leaves, as the issue's did.

Each world is made before any attack starts (SETUPS); a coincident
import the daemon refuses is tried again at half the size, so the queries
run on the largest such world it accepts."""

import json
import math
import random
import time

COINCIDENT = 3000
SMALLEST = 50
QUERY_TIMEOUT = 30
RAY_BOXES = 1414          # the most coincident boxes the default pair cap takes: 998,991 overlaps
RAYS = 100000
MESH_GRID = 200           # 80,000 triangles
HULLS = 300
HULL_POINTS = 64
HULL_RADIUS = 30.0
REFUSED_PAUSE = 0.05


def coincident(n, prefix, shape, **extra):
    items = [dict({"id": "%s%d" % (prefix, i), "shape": shape, "pose": {"position": [0.0, 0.0, 0.0]}}, **extra)
             for i in range(n)]
    return {"settings": {}, "shapes": items}


def put_world(daemon, world, body):
    """One world made before the attacks start: its status (503s retried
    for a while: the daemon may still be snapshotting the setup before)."""
    for _ in range(30):
        status, _ = daemon.request("PUT", "/v1/worlds/" + world, body, timeout=QUERY_TIMEOUT)
        if status != 503:
            return status
        time.sleep(1)
    return status


def made(status, world):
    return None if status in (200, 201) else "PUT /v1/worlds/%s: status %s" % (world, status)


def import_largest(daemon, world, make):
    """Imports make(n) for n = COINCIDENT, halved while refused (4xx: the
    pair cap): None, or why no such world was made."""
    n = COINCIDENT
    while n >= SMALLEST:
        status = put_world(daemon, world, make(n))
        if status in (200, 201):
            return None
        n //= 2
    return "no world of %d or more coincident shapes accepted (last status %s)" % (SMALLEST, status)


def query_loop(i, ctx, jobs):
    name, method, path, body = jobs[i]
    payload = json.dumps(body).encode() if body is not None else None
    while ctx.running():
        ctx.authorised(name, method, path, payload, timeout=QUERY_TIMEOUT, status_only=True)


def setup_pairs(daemon):
    sphere = {"type": "sphere", "radius": 1}
    return import_largest(daemon, "pq", lambda n: coincident(n, "p", sphere))


def pairs(ctx):
    jobs = [("3 contacts coincident", "POST", "/v1/worlds/pq/contacts", {}),
            ("3 GET pairs coincident", "GET", "/v1/worlds/pq/pairs", None)]
    ctx.threads(len(jobs), query_loop, ctx, jobs)


def rays_body(rng):
    rays = [{"origin": [-10.0, rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4)], "direction": [1.0, 0.0, 0.0]}
            for _ in range(RAYS)]
    return {"rays": rays}


def setup_rays(daemon):
    """Boxes of mask 0 form no pairs, but the pair cap counts their
    overlaps, so RAY_BOXES is the most it takes; every ray meets every box."""
    box = {"type": "box", "half_extents": [0.5, 0.5, 0.5]}
    return made(put_world(daemon, "rq", coincident(RAY_BOXES, "r", box, mask=0)), "rq")


def rays(ctx):
    ctx.threads(1, query_loop, ctx, [("3 raycast coincident", "POST", "/v1/worlds/rq/raycast",
                                      rays_body(random.Random(3)))])


def mesh_shape():
    g = MESH_GRID
    verts = [[float(x), 0.0, float(z)] for z in range(g + 1) for x in range(g + 1)]
    tris = []
    for z in range(g):
        for x in range(g):
            i = z * (g + 1) + x
            tris += [[i, i + g + 1, i + 1], [i + 1, i + g + 1, i + g + 2]]
    return {"type": "mesh", "vertices": verts, "triangles": tris}


def hull(rng):
    pts = []
    for _ in range(HULL_POINTS):
        u, t = rng.uniform(-1, 1), rng.uniform(0, 2 * math.pi)
        r = math.sqrt(1 - u * u) * HULL_RADIUS
        pts.append([r * math.cos(t), u * HULL_RADIUS, r * math.sin(t)])
    return {"type": "convex", "points": pts}


def setup_hulls_on_mesh(daemon):
    rng = random.Random(7)
    shapes = [{"id": "mesh", "shape": mesh_shape(), "pose": {"position": [0.0, 0.0, 0.0]}}]
    for i in range(HULLS):
        shapes.append({"id": "h%d" % i, "shape": hull(rng), "velocity": [50.0, -50.0, 0.0],
                       "pose": {"position": [rng.uniform(0, MESH_GRID), 0.0, rng.uniform(0, MESH_GRID)]}})
    return made(put_world(daemon, "hm", {"settings": {}, "shapes": shapes}), "hm")


def hulls_on_mesh(ctx):
    ctx.threads(1, query_loop, ctx, [("3 contacts dt hulls+mesh", "POST", "/v1/worlds/hm/contacts", {"dt": 1})])


def setup_coincident_puts(daemon):
    return made(put_world(daemon, "pp", {}), "pp")


def coincident_puts(ctx):
    """Each PUT adds a pair with every shape before it; a refused one is
    the daemon's right."""
    body = {"shape": {"type": "sphere", "radius": 1}, "pose": {"position": [0.0, 0.0, 0.0]}}
    i = 0
    while ctx.running():
        a = ctx.authorised("3 coincident PUT", "PUT", "/v1/worlds/pp/shapes/c%d" % i, body, timeout=QUERY_TIMEOUT)
        if a.status in (200, 201):
            i += 1
        else:
            ctx.pause(REFUSED_PAUSE)  # the attacker's own CPU stays modest


ATTACKS = [("pairs", pairs), ("rays", rays), ("hulls-mesh", hulls_on_mesh), ("coincident-puts", coincident_puts)]
# Made before the attacks start (soak.py): the capacity attack fills the
# shape slot budget in its first second, and would leave these refused.
SETUPS = {"pairs": setup_pairs, "rays": setup_rays, "hulls-mesh": setup_hulls_on_mesh,
          "coincident-puts": setup_coincident_puts}
