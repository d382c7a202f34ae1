"""Request builders and the endpoint list of API.md section 2."""

import math


def sphere(radius):
    return {"type": "sphere", "radius": radius}


def box(hx, hy, hz):
    return {"type": "box", "half_extents": [hx, hy, hz]}


def pose(position, rotation=None, axes=None):
    p = {"position": list(position)}
    if rotation is not None:
        p["rotation"] = list(rotation)
    if axes is not None:
        p["axes"] = [list(a) for a in axes]
    return p


def posed(shape, position=(0, 0, 0), rotation=None, axes=None):
    return {"shape": shape, "pose": pose(position, rotation, axes)}


def pair(a, b, **options):
    body = {"a": a, "b": b}
    body.update(options)
    return body


def body_item(id_, shape, position=(0, 0, 0), **extra):
    """A shape of a batch upsert or an import."""
    item = {"id": id_, "shape": shape, "pose": pose(position)}
    item.update(extra)
    return item


# Every endpoint of API.md: (method, path template, takes a body).
ENDPOINTS = [
    ("POST", "/v1/pair", True),
    ("POST", "/v1/pairs", True),
    ("GET", "/v1/worlds", False),
    ("PUT", "/v1/worlds/{world}", True),
    ("GET", "/v1/worlds/{world}", False),
    ("DELETE", "/v1/worlds/{world}", False),
    ("GET", "/v1/worlds/{world}/export", False),
    ("PUT", "/v1/worlds/{world}/shapes/{id}", True),
    ("GET", "/v1/worlds/{world}/shapes/{id}", False),
    ("DELETE", "/v1/worlds/{world}/shapes/{id}", False),
    ("POST", "/v1/worlds/{world}/batch", True),
    ("GET", "/v1/worlds/{world}/pairs", False),
    ("POST", "/v1/worlds/{world}/contacts", True),
    ("POST", "/v1/worlds/{world}/raycast", True),
    ("POST", "/v1/worlds/{world}/sweep", True),
    ("POST", "/v1/worlds/{world}/overlap", True),
    ("GET", "/metrics", False),
    ("GET", "/metrics/fallbacks", False),
    ("GET", "/healthz", False),
    ("GET", "/readyz", False),
    ("GET", "/v1/openapi.json", False),
    ("GET", "/inspect", False),
    ("GET", "/inspect/", False),
    ("GET", "/inspect/{file}", False),
]

# The endpoints that stay open when a token is configured, and what each
# answers to a GET of fill(template) (/inspect/s: no such file).
OPEN_PATHS = {"/healthz": 200, "/readyz": 200, "/inspect": 301, "/inspect/": 200, "/inspect/{file}": 404}


def fill(template, world="w", id_="s"):
    return template.replace("{world}", world).replace("{id}", id_).replace("{file}", id_)


def round_hull(rng, points):
    """A convex shape of points random points on the unit sphere, to 6
    decimals (a smaller body)."""
    pts = []
    for _ in range(points):
        z, t = rng.uniform(-1, 1), rng.uniform(0, 2 * math.pi)
        r = math.sqrt(1 - z * z)
        pts.append([round(r * math.cos(t), 6), round(r * math.sin(t), 6), round(z, 6)])
    return {"type": "convex", "points": pts}
