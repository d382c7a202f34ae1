"""The typed calls, one per endpoint of docs/API.md, shared by Client (each
call runs at once and returns its answer) and Pipeline (each call is queued
and returns a Reply). Bodies and answers are plain dicts and lists, exactly
the documented JSON values; the helpers in geometry.py build the common ones.
"""
import re

_ID_RULE = re.compile(r"[A-Za-z0-9._:-]{1,64}\Z")
_READ_POSTS = ("/contacts", "/raycast", "/sweep", "/overlap")


def segment(name):
    """A world name or shape id as a path segment: as it is when it keeps the
    id rule, percent-encoded otherwise (so the daemon refuses it with a 400
    instead of its bytes changing the path). Integers are ids too."""
    name = str(name)
    if _ID_RULE.match(name):
        return name
    return "".join(c if c.isalnum() and c.isascii() else "".join("%%%02X" % b for b in c.encode("utf-8"))
                   for c in name)


def is_mutation(method, path):
    """Whether a request may change what the daemon holds: every PUT, DELETE
    and POST but the stateless pair tests and the world queries. Such a
    request is never resent after a lost reply (errors.OutcomeUnknown)."""
    if method in ("GET", "HEAD"):
        return False
    if method != "POST":
        return True
    bare = path.split("?", 1)[0]
    return not (bare in ("/v1/pair", "/v1/pairs") or
                (bare.startswith("/v1/worlds/") and bare.endswith(_READ_POSTS)))


class Call:
    """One request: method, path, body (None: no body) and whether it may
    change state."""

    __slots__ = ("method", "path", "body", "mutation", "request_id")

    def __init__(self, method, path, body=None, mutation=None, request_id=None):
        self.method, self.path, self.body = method, path, body
        self.mutation = is_mutation(method, path) if mutation is None else mutation
        self.request_id = request_id


def _settings(skin, capacity, extra):
    body = dict(extra)
    if skin is not None:
        body["skin"] = skin
    if capacity is not None:
        body["capacity"] = capacity
    return body


def _some(**fields):
    """The fields whose value is not None."""
    return {k: v for k, v in fields.items() if v is not None}


def moves(ids, positions, rotations=None, velocities=None):
    """The move list of a batch from parallel sequences: ids, positions
    ([x, y, z] each), optional rotations ([x, y, z, w] quaternions) and
    optional velocities. A move without a velocity keeps the stored one.
    The sequences' items are used as they are (tuples are fine), not copied."""
    if rotations is None and velocities is None:
        return [{"id": i, "pose": {"position": p}} for i, p in zip(ids, positions)]
    if velocities is None:
        return [{"id": i, "pose": {"position": p, "rotation": q}} for i, p, q in zip(ids, positions, rotations)]
    if rotations is None:
        return [{"id": i, "pose": {"position": p}, "velocity": v} for i, p, v in zip(ids, positions, velocities)]
    return [{"id": i, "pose": {"position": p, "rotation": q}, "velocity": v}
            for i, p, q, v in zip(ids, positions, rotations, velocities)]


class Api:
    """The calls. A subclass defines _submit(Call) and returns what it gives."""

    def _submit(self, call):
        raise NotImplementedError

    def request(self, method, path, body=None, mutation=None, request_id=None):
        """Any request: method, path (with its ?query), body (a value, or None).
        mutation overrides is_mutation's rule for the reconnect rule;
        request_id is sent as X-Request-Id."""
        return self._submit(Call(method, path, body, mutation, request_id))

    # ---- operations ------------------------------------------------------

    def health(self):
        """GET /healthz: {"status": "ok"} while the daemon serves."""
        return self._submit(Call("GET", "/healthz"))

    def ready(self):
        """GET /readyz: {"status": "ready"}, or Unavailable while starting or draining."""
        return self._submit(Call("GET", "/readyz"))

    # ---- stateless pair tests ----------------------------------------------

    def pair(self, a, b, skin=None, explain=None):
        """POST /v1/pair: the contact result of a against b, each
        {"shape": S, "pose": P} (geometry.body builds one)."""
        return self._submit(Call("POST", "/v1/pair", dict(_some(skin=skin, explain=explain), a=a, b=b)))

    def pairs(self, items):
        """POST /v1/pairs: {"results": [...]} for items [{"a", "b", ...}, ...], in order."""
        return self._submit(Call("POST", "/v1/pairs", {"pairs": list(items)}))

    # ---- worlds ------------------------------------------------------------

    def create_world(self, world, skin=None, capacity=None, **settings):
        """PUT /v1/worlds/{world} with settings: creates the world, or updates
        an existing one's settings keeping its shapes. The world summary."""
        return self._submit(Call("PUT", "/v1/worlds/" + segment(world), _settings(skin, capacity, settings)))

    def list_worlds(self):
        """GET /v1/worlds: {"worlds": [{"name", "shapes"}, ...]}."""
        return self._submit(Call("GET", "/v1/worlds"))

    def get_world(self, world):
        """GET /v1/worlds/{world}: the summary and stats."""
        return self._submit(Call("GET", "/v1/worlds/" + segment(world)))

    def delete_world(self, world):
        """DELETE /v1/worlds/{world}: None."""
        return self._submit(Call("DELETE", "/v1/worlds/" + segment(world)))

    def export_world(self, world):
        """GET /v1/worlds/{world}/export: {"settings", "shapes"}."""
        return self._submit(Call("GET", "/v1/worlds/%s/export" % segment(world)))

    def import_world(self, world, document):
        """PUT /v1/worlds/{world} with an export document: replaces the world's
        content atomically (creating it if needed). The world summary."""
        return self._submit(Call("PUT", "/v1/worlds/" + segment(world), document))

    # ---- shapes ------------------------------------------------------------

    def put_shape(self, world, id, shape, pose=None, velocity=None, layer=None, mask=None):
        """PUT /v1/worlds/{world}/shapes/{id}: inserts or replaces; the stored shape."""
        body = dict(_some(pose=pose, velocity=velocity, layer=layer, mask=mask), shape=shape)
        return self._submit(Call("PUT", "/v1/worlds/%s/shapes/%s" % (segment(world), segment(id)), body))

    def get_shape(self, world, id):
        """GET /v1/worlds/{world}/shapes/{id}: the stored shape."""
        return self._submit(Call("GET", "/v1/worlds/%s/shapes/%s" % (segment(world), segment(id))))

    def delete_shape(self, world, id):
        """DELETE /v1/worlds/{world}/shapes/{id}: None."""
        return self._submit(Call("DELETE", "/v1/worlds/%s/shapes/%s" % (segment(world), segment(id))))

    def batch(self, world, upsert=None, move=None, remove=None):
        """POST /v1/worlds/{world}/batch, all or nothing: upserts, then moves
        (moves() builds them from arrays), then removes (ids).
        {"upserted", "moved", "removed", "shapes"}."""
        body = _some(upsert=upsert, move=move, remove=remove)
        return self._submit(Call("POST", "/v1/worlds/%s/batch" % segment(world), body))

    def move(self, world, ids, positions, rotations=None, velocities=None):
        """A batch of moves from parallel arrays (see moves())."""
        return self.batch(world, move=moves(ids, positions, rotations, velocities))

    # ---- queries -----------------------------------------------------------

    def broadphase_pairs(self, world):
        """GET /v1/worlds/{world}/pairs: {"pairs": [[a, b], ...]}."""
        return self._submit(Call("GET", "/v1/worlds/%s/pairs" % segment(world)))

    def contacts(self, world, ids=None, dt=None):
        """POST /v1/worlds/{world}/contacts: {"pairs", "toi", "stats"}; dt
        (seconds) sweeps fast shapes (CCD), ids limits the pairs to those ids'."""
        return self._submit(Call("POST", "/v1/worlds/%s/contacts" % segment(world), _some(ids=ids, dt=dt)))

    def raycast(self, world, rays, all=False):
        """POST /v1/worlds/{world}/raycast: {"hits": [...]}, one per ray
        (geometry.ray builds one): the closest hit or None, or with all=True
        the list of every hit."""
        body = {"rays": list(rays)}
        if all:
            body["all"] = True
        return self._submit(Call("POST", "/v1/worlds/%s/raycast" % segment(world), body))

    def sweep(self, world, shape, pose, translation, mask=None):
        """POST /v1/worlds/{world}/sweep: {"hit": {"id", "time", "point", "normal"} or None}."""
        body = dict(_some(mask=mask), shape=shape, pose=pose, translation=translation)
        return self._submit(Call("POST", "/v1/worlds/%s/sweep" % segment(world), body))

    def overlap(self, world, shape, pose=None, mask=None):
        """POST /v1/worlds/{world}/overlap: {"ids": [...]} the query shape touches."""
        body = dict(_some(pose=pose, mask=mask), shape=shape)
        return self._submit(Call("POST", "/v1/worlds/%s/overlap" % segment(world), body))
