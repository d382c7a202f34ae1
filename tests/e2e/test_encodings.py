"""The same answer in either encoding (API.md section 1: JSON and
MessagePack bodies have one schema): a representative request of every
endpoint that takes or gives a body, and a set of refused ones, each sent
four ways — JSON and MessagePack, over HTTP and over the stream — must get
the same status and the same answer compared as values, or the same
problem.

"The same" is exact: numbers bit for bit (the daemon writes shortest
round-trip JSON and float64 MessagePack, so both read back as the same
double; a JSON "-0" is read as the double -0 here, so a signed zero is not
lost by Python's JSON reader), bool never equal to a number, key order
ignored. Problems must agree in status, type and pointer; title and detail
may differ only where they name the format. Each way has a world of its
own, so all four start each step from the same state.

This module compares the encodings with each other: whether the answers
are right is what the rest of the suite checks against its oracles, in
both encodings. It sends both encodings itself, so it runs in the JSON
pass only."""

import json
import math
import re
import struct
import unittest

import harness
from harness import MEDIA_TYPES, PROBLEM_TYPES, DaemonCase, StreamClient, once
from wire import body_item, box, pair, pose, posed, sphere

WAYS = [("json", "http"), ("msgpack", "http"), ("json", "stream"), ("msgpack", "stream")]
ONE_RUN = "sends both encodings itself"
TOKEN = "enc-T0ken"
AUTH = {"Authorization": "Bearer " + TOKEN}

# Words by which a problem's title or detail may name the body's format,
# with the format's own name for a mapping ("a JSON object", "a MessagePack map").
FORMAT_WORDS = re.compile(r"\b(JSON object|MessagePack map|JSON|MessagePack|msgpack|json)\b")


def exact_json(raw):
    """strict_json, but "-0" read as the double -0 (Python reads it as
    the integer 0, which would hide a sign MessagePack keeps)."""

    def integer(text):
        return -0.0 if text == "-0" else int(text)

    def pairs(items):
        out = {}
        for k, v in items:
            if k in out:
                raise ValueError("duplicate key %r in response" % k)
            out[k] = v
        return out

    def constant(name):
        raise ValueError("non-JSON constant %s in response" % name)

    text = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else raw
    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant, parse_int=integer)


class ExactStream(StreamClient):
    """A stream client whose JSON replies are read by exact_json."""

    def _take(self):
        if self.encoding == "json":
            if b"\n" not in self.buf:
                return None
            line, _, self.buf = self.buf.partition(b"\n")
            return exact_json(line)
        return super()._take()


def bits(x):
    return struct.pack("<d", float(x))


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def difference(a, b, where=""):
    """The first place where the values a and b differ, or None: numbers
    by their double's bits (integers beyond 2**53 exactly), no bool equal
    to a number, objects by their members whatever the order."""
    here = where or "/"
    if is_number(a) and is_number(b):
        if isinstance(a, int) and isinstance(b, int):
            return None if a == b else "%s: %r != %r" % (here, a, b)
        return None if bits(a) == bits(b) else "%s: %r != %r (as doubles)" % (here, a, b)
    if type(a) is not type(b):
        return "%s: %r (%s) != %r (%s)" % (here, a, type(a).__name__, b, type(b).__name__)
    if isinstance(a, dict):
        if set(a) != set(b):
            return "%s: members %s != %s" % (here, sorted(a), sorted(b))
        for k in a:
            d = difference(a[k], b[k], "%s/%s" % (where, k))
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d items != %d" % (here, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            d = difference(x, y, "%s/%d" % (where, i))
            if d:
                return d
        return None
    return None if a == b else "%s: %r != %r" % (here, a, b)


def renamed(value, world):
    """value with the world's name replaced by "{world}" in every string,
    so the answers of the four ways' worlds compare equal."""
    if isinstance(value, str):
        return value.replace(world, "{world}") if world else value
    if isinstance(value, dict):
        return {renamed(k, world): renamed(v, world) for k, v in value.items()}
    if isinstance(value, list):
        return [renamed(v, world) for v in value]
    return value


def problem_key(p):
    """What two ways' problems must share: status, type, pointer, and
    title and detail up to the words that name the format."""
    return {"status": p.get("status"), "type": p.get("type"), "pointer": p.get("pointer"),
            "title": FORMAT_WORDS.sub("<format>", p.get("title", "")),
            "detail": FORMAT_WORDS.sub("<format>", p.get("detail", ""))}


class Comparator(unittest.TestCase):
    """The comparison itself must be able to fail."""

    def test_differences_are_found(self):
        base = {"a": [1, 0.1, None, True, "x"], "b": {"c": 0, "d": 4294967295}}
        self.assertIsNone(difference(base, {"b": {"d": 4294967295, "c": 0.0}, "a": [1.0, 0.1, None, True, "x"]}))
        bad = [
            {"a": [1, 0.1, None, True, "x"], "b": {"c": -0.0, "d": 4294967295}},               # a signed zero
            {"a": [1, 0.1 + 2 ** -56, None, True, "x"], "b": {"c": 0, "d": 4294967295}},       # one ulp
            {"a": [True, 0.1, None, True, "x"], "b": {"c": 0, "d": 4294967295}},               # bool vs 1
            {"a": [1, 0.1, 0, True, "x"], "b": {"c": 0, "d": 4294967295}},                     # null vs 0
            {"a": [1, 0.1, None, True, "y"], "b": {"c": 0, "d": 4294967295}},                  # string
            {"a": [1, 0.1, None, True], "b": {"c": 0, "d": 4294967295}},                       # length
            {"a": [1, 0.1, None, True, "x"], "b": {"c": 0, "d": 4294967295, "e": 1}},          # extra member
            {"a": [1, 0.1, None, True, "x"], "b": {"c": 0, "d": 4294967296}},                  # integer
        ]
        for other in bad:
            with self.subTest(other=other):
                self.assertIsNotNone(difference(base, other))
        self.assertEqual(exact_json(b"[-0,0,-0.0]")[0], 0)
        self.assertLess(math.copysign(1, exact_json(b"[-0]")[0]), 0)
        self.assertEqual(problem_key({"title": "Wrong JSON type"}), problem_key({"title": "Wrong MessagePack type"}))
        self.assertEqual(problem_key({"detail": "the body must be a JSON object"}),
                         problem_key({"detail": "the body must be a MessagePack map"}))
        self.assertNotEqual(problem_key({"detail": "the body must be a JSON object"}),
                            problem_key({"detail": "the body must be a MessagePack array"}))
        self.assertNotEqual(problem_key({"detail": "radius must be a number"}),
                            problem_key({"detail": "radius must be a string"}))


class Answer:
    """One way's answer: status, decoded body (None when there is none),
    and the Allow and Retry-After it carried."""

    def __init__(self, way, status, body, allow=None, retry_after=None, content_type=None):
        self.way, self.status, self.body = way, status, body
        self.allow = None if allow is None else sorted(m.strip() for m in allow.split(",") if m.strip())
        self.retry_after = retry_after
        self.content_type = content_type

    def describe(self):
        return "%s/%s: %s %s" % (self.way[0], self.way[1], self.status, json.dumps(self.body)[:400])


class SameAnswers(DaemonCase):
    """Sends each case four ways and compares the answers."""

    HEADERS = {}

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.streams = {enc: ExactStream(cls.daemon.stream_port, harness.IO_TIMEOUT, enc) for enc in ("json", "msgpack")}
        cls.next_id = 0

    @classmethod
    def tearDownClass(cls):
        for s in cls.streams.values():
            s.close()
        super().tearDownClass()

    @staticmethod
    def world_of(way):
        return "enc-%s-%s" % way

    def send(self, way, method, path, body, headers):
        encoding, transport = way
        if transport == "http":
            r = self.daemon.request(method, path, body, headers=headers, encoding=encoding)
            decoded = None
            if r.raw:
                self.assertIsNotNone(r.format, "%s %s %s: %s" % (way, method, path, r.describe()))
                decoded = exact_json(r.raw) if r.format == "json" else r.json
                self.assertIsNone(r.json_error, "%s %s %s: %s" % (way, method, path, r.describe()))
            return Answer(way, r.status, decoded, r.headers.get("allow"), r.headers.get("retry-after"),
                          r.content_type)
        type(self).next_id += 1
        message = {"id": self.next_id, "method": method, "path": path}
        if headers:
            message["headers"] = dict(headers)
        if body is not None:
            message["body"] = body
        s = self.streams[encoding]
        s.send(message)
        reply = s.read_line()
        self.assertIsNotNone(reply, "%s: the stream closed after %s %s" % (way, method, path))
        self.assertEqual(reply.get("id"), self.next_id, reply)
        h = reply.get("headers", {})
        return Answer(way, reply["status"], reply.get("body"), h.get("Allow"), h.get("Retry-After"))

    def check(self, method, template, body=None, status=200, headers=None, slug=None, pointer=None, rename=True):
        """Sends the case four ways (template's {w} is each way's world,
        whose name reads "{world}" in the answer unless rename is False);
        the JSON-over-HTTP answer must have status (and, for a problem,
        slug and pointer), and the other three must agree with it."""
        hdrs = dict(self.HEADERS, **(headers or {}))
        answers = []
        for way in WAYS:
            world = self.world_of(way)
            path = template.replace("{w}", world)
            a = self.send(way, method, path, body, hdrs)
            if rename:
                a.body = renamed(a.body, world)
            answers.append(a)
        what = "%s %s %s" % (method, template, json.dumps(body)[:200])
        first = answers[0]
        self.assertEqual(first.status, status, "%s: %s" % (what, first.describe()))
        if status >= 400:
            self.assertIsInstance(first.body, dict, first.describe())
            if slug is not None:
                self.assertEqual(first.body.get("type"), harness.PROBLEM_TYPE_PREFIX + slug, first.describe())
            if pointer is not None:
                self.assertEqual(first.body.get("pointer", ""), pointer, first.describe())
        for a in answers:
            if a.way[1] == "http" and a.body is not None:
                types = PROBLEM_TYPES if a.status >= 400 else MEDIA_TYPES
                self.assertTrue(a.content_type.startswith(types[a.way[0]]),
                                "%s: %s answered %r" % (what, a.way, a.content_type))
        for a in answers[1:]:
            self.assertEqual(a.status, first.status, "%s:\n  %s\n  %s" % (what, first.describe(), a.describe()))
            self.assertEqual((a.allow, a.retry_after), (first.allow, first.retry_after),
                             "%s: Allow/Retry-After\n  %s\n  %s" % (what, first.describe(), a.describe()))
            if first.status >= 400:
                self.assertIsInstance(a.body, dict, a.describe())
                self.assertEqual(problem_key(a.body), problem_key(first.body),
                                 "%s: the problems differ\n  %s\n  %s" % (what, first.describe(), a.describe()))
                continue
            d = difference(first.body, a.body)
            self.assertIsNone(d, "%s: %s\n  %s\n  %s" % (what, d, first.describe(), a.describe()))
        return first.body


# Numbers whose shortest digits are long, a tiny and a huge one, a -0.
ODD = [0.1 + 0.2, 1 / 3, -2.5e-7, 123456789.12345679, 1e-300, 6.02214076e23]
TETRA = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
ROT = [0.18257418583505536, 0.3651483716701107, 0.5477225575051661, 0.7302967433402214]  # unit


def world_shapes():
    """An import holding one shape of each type, at odd numbers."""
    return [
        body_item("ball", sphere(ODD[1]), (ODD[0], -0.0, 2.5), velocity=[40, 0, ODD[2]], layer=1, mask=7),
        {"id": "crate", "shape": box(0.5, ODD[1], 1.25), "pose": {"position": [1.1, 0.2, 2.4], "rotation": ROT},
         "layer": 2, "mask": 4294967295},
        body_item("pill", {"type": "capsule", "radius": 0.3, "half_height": 0.7}, (-1, 0.5, 2)),
        body_item("rock", {"type": "convex", "points": TETRA + [[0.3, 0.3, 0.3]], "radius": 0.05}, (0.4, 1.2, 2)),
        body_item("tri", {"type": "triangle", "vertices": [[3, 0, 0], [4, 0, 0], [3, 1, 0]]}),
        body_item("ground", {"type": "plane", "normal": [0, 1, 0], "offset": -1}),
        body_item("terrain", {"type": "mesh", "vertices": [[-9, -0.5, -9], [9, -0.5, -9], [9, -0.5, 9], [-9, -0.5, 9]],
                              "triangles": [[0, 2, 1], [0, 3, 2]]}),
        body_item(7, sphere(0.25), (ODD[3] * 1e-8, 0.1, 2.2)),
    ]


@once(ONE_RUN)
class Scenario(SameAnswers):
    """A world's life, step by step the same in each way's world."""

    FLAGS = ("--max-pairs", "3", "--max-rays", "6", "--max-batch", "20")

    def test_a_world_step_by_step(self):
        self.check("PUT", "/v1/worlds/{w}", {"settings": {"skin": 0.05, "capacity": 64}, "shapes": world_shapes()},
                   status=201)
        self.check("PUT", "/v1/worlds/{w}/shapes/extra",
                   {"shape": box(0.25, 0.5, ODD[1]), "pose": {"position": [2, 0.5, 2], "axes": [[0, 0, 1], [0, 1, 0],
                                                                                               [-1, 0, 0]]},
                    "velocity": [ODD[0], 0, -1], "layer": 4, "mask": 6}, status=201)
        self.check("PUT", "/v1/worlds/{w}/shapes/extra", {"shape": sphere(0.6), "pose": pose((2, 0.5, 2.1))},
                   status=200)
        self.check("POST", "/v1/worlds/{w}/batch", {
            "upsert": [body_item("bullet", sphere(0.05), (-6, 0.4, 2), velocity=[400, 0, 0], layer=8)],
            "move": [{"id": "pill", "pose": pose((-0.6, 0.45, 2), rotation=ROT), "velocity": [0, -9.81, 0]}],
            "remove": ["tri"]})
        self.check("GET", "/v1/worlds/{w}")
        self.check("GET", "/v1/worlds/{w}/shapes/extra")
        self.check("GET", "/v1/worlds/{w}/shapes/7")
        self.assertTrue(self.check("GET", "/v1/worlds/{w}/pairs")["pairs"])
        # Each query below must find something, or its answers would agree
        # trivially: touching pairs, the bullet's impact, hits, an overlap.
        touching = self.check("POST", "/v1/worlds/{w}/contacts", {})
        self.assertTrue(touching["pairs"] and all(p["points"] for p in touching["pairs"] if p["overlap"]), touching)
        for body in ({"dt": 0.0166}, {"ids": ["ball", "bullet"], "dt": 0.05}):
            self.assertTrue(self.check("POST", "/v1/worlds/{w}/contacts", body)["toi"], body)
        rays = [{"origin": [-5, 0.45, 2], "direction": [1, 0, 0]},
                {"origin": [0.4, 10, 2], "direction": [ODD[0], -1, ODD[2]], "max_distance": 100, "mask": 2},
                {"origin": [0, 10, 0], "direction": [0, 1, 0]}]
        hits = self.check("POST", "/v1/worlds/{w}/raycast", {"rays": rays})["hits"]
        self.assertEqual([h is not None for h in hits], [True, True, False], hits)
        self.assertGreater(len(self.check("POST", "/v1/worlds/{w}/raycast", {"rays": rays, "all": True})["hits"][0]), 1)
        self.assertIsNotNone(self.check("POST", "/v1/worlds/{w}/sweep", {
            "shape": sphere(0.2), "pose": pose((-5, 0.45, 2)), "translation": [10, ODD[2], 0]})["hit"])
        self.check("POST", "/v1/worlds/{w}/sweep", {"shape": box(0.1, 0.1, 0.1), "pose": pose((0, 50, 0)),
                                                    "translation": [0, 1, 0], "mask": 1})
        self.assertGreater(len(self.check("POST", "/v1/worlds/{w}/overlap", {"shape": sphere(1.5),
                                                                           "pose": pose((0.5, 0.5, 2))})["ids"]), 2)
        self.check("POST", "/v1/worlds/{w}/overlap", {"shape": box(1, 1, 1), "pose": pose((0, 0.5, 2)), "mask": 2})
        self.check("GET", "/v1/worlds/{w}/export")
        self.check("GET", "/v1/worlds", rename=False)  # every way's world, as each way sees them
        # refused: the world stays as it was (the exports still agree)
        self.check("POST", "/v1/worlds/{w}/batch", {"move": [{"id": "ball", "pose": pose((0, 0, 0))},
                                                             {"id": "ghost", "pose": pose((1, 0, 0))}]},
                   status=400, pointer="/move/1")
        self.check("POST", "/v1/worlds/{w}/batch", {"upsert": [body_item("x", sphere(-1))]}, status=400,
                   slug="invalid-value", pointer="/upsert/0/shape/radius")
        self.check("POST", "/v1/worlds/{w}/batch", {"remove": ["s%d" % i for i in range(21)]}, status=422,
                   slug="over-limit")
        self.check("PUT", "/v1/worlds/{w}/shapes/extra", {"shape": sphere(1), "scale": 2}, status=400,
                   slug="unknown-field", pointer="/scale")
        self.check("POST", "/v1/worlds/{w}/raycast", {"rays": rays * 3}, status=422, slug="over-limit")
        self.check("POST", "/v1/worlds/{w}/raycast", {"rays": [{"origin": [0, 0, 0]}]}, status=400,
                   slug="missing-field", pointer="/rays/0/direction")
        self.check("POST", "/v1/worlds/{w}/contacts", {"dt": "soon"}, status=400, slug="wrong-type", pointer="/dt")
        self.check("GET", "/v1/worlds/{w}/shapes/nope", status=404, slug="not-found")
        self.check("GET", "/v1/worlds/{w}/export")
        self.check("DELETE", "/v1/worlds/{w}/shapes/extra", status=204)
        self.check("DELETE", "/v1/worlds/{w}", status=204)
        self.check("GET", "/v1/worlds/{w}", status=404, slug="not-found")

    def test_pair_tests(self):
        a = {"shape": box(1, 0.5, ODD[1]), "pose": {"position": [0, 0, 0], "rotation": ROT}}
        b = {"shape": box(0.5, 0.5, 0.5), "pose": {"position": [1.2, ODD[0], -0.1]}}
        explained = self.check("POST", "/v1/pair", pair(a, b, explain=True))
        self.assertEqual(len(explained["axes"]), 15, explained)
        self.check("POST", "/v1/pair", pair(a, b, skin=0.5))
        self.check("POST", "/v1/pair", pair(posed(sphere(1)), posed(sphere(ODD[1]), (3, ODD[2], 0))))
        hull = {"shape": {"type": "convex", "points": TETRA, "radius": 0.1}, "pose": pose((0.2, 0.3, 0.1))}
        capsule = {"shape": {"type": "capsule", "radius": 0.4, "half_height": 1}, "pose": pose((0, 0, 0), ROT)}
        tri = {"shape": {"type": "triangle", "vertices": [[0, 0.5, -1], [0, 0.5, 1], [1, 0.5, 0]]}}
        self.check("POST", "/v1/pairs", {"pairs": [pair(hull, capsule), pair(capsule, tri, explain=True),
                                                   pair(hull, tri)]})
        self.check("POST", "/v1/pairs", {"pairs": []})

    def test_refused_requests(self):
        good = posed(sphere(1))
        self.check("POST", "/v1/pair", pair(good, good, colour="red"), status=400, slug="unknown-field",
                   pointer="/colour")
        self.check("POST", "/v1/pair", {"a": good}, status=400, slug="missing-field", pointer="/b")
        self.check("POST", "/v1/pair", pair({"shape": {"type": "sphere", "radius": "1"}}, good), status=400,
                   slug="wrong-type", pointer="/a/shape/radius")
        self.check("POST", "/v1/pair", pair(good, good, explain=1), status=400, slug="wrong-type", pointer="/explain")
        self.check("POST", "/v1/pair", [good, good], status=400, slug="wrong-type", pointer="")
        self.check("POST", "/v1/pair", pair({"shape": box(1, -1, 1)}, good), status=400, slug="invalid-value",
                   pointer="/a/shape/half_extents/1")
        self.check("POST", "/v1/pair", pair(good, {"shape": sphere(1), "pose": {"rotation": [0, 0, 0, 2]}}),
                   status=400, slug="invalid-value", pointer="/b/pose/rotation")
        self.check("POST", "/v1/pair", pair(good, posed(sphere(1), (1e51, 0, 0))), status=400, slug="invalid-value",
                   pointer="/b/pose/position/0")
        self.check("POST", "/v1/pairs", {"pairs": [pair(good, good)] * 4}, status=422, slug="over-limit")
        self.check("POST", "/v1/pair", status=400)
        self.check("GET", "/v1/worlds/ghost", status=404, slug="not-found")
        self.check("PUT", "/v1/worlds/bad!name", {}, status=400, slug="invalid-value")
        self.check("GET", "/v1/nope", status=404, slug="no-route")
        self.check("DELETE", "/v1/pair", status=405, slug="method-not-allowed")
        self.check("PUT", "/v1/worlds/{w}/raycast", {"rays": []}, status=405, slug="method-not-allowed")


@once(ONE_RUN)
class Unauthorized(SameAnswers):
    """401 in both encodings; with the token the same answer."""

    FLAGS = ("--token", TOKEN)

    def test_the_token_is_asked_the_same_way(self):
        body = pair(posed(sphere(1)), posed(sphere(1), (2.5, 0, 0)))
        self.check("POST", "/v1/pair", body, status=401, slug="unauthorized")
        self.check("POST", "/v1/pair", body, headers={"Authorization": "Bearer wrong"}, status=401,
                   slug="unauthorized")
        self.check("GET", "/v1/worlds", status=401, slug="unauthorized")
        self.check("POST", "/v1/pair", body, headers=AUTH)
        self.check("PUT", "/v1/worlds/{w}", {"skin": 0.25}, headers=AUTH, status=201)
        self.check("GET", "/v1/worlds/{w}", headers=AUTH)

