"""Hostile MessagePack over HTTP and the stream (the issue's hostile
suite): bodies the MessagePack check must refuse (a duplicate key, a
non-string key, ext and bin values, the reserved byte 0xc1, invalid UTF-8,
trailing bytes, lengths past the bytes left, 4 GiB claims in 5 bytes,
nesting past the depth limit), non-finite numbers the decoders must
refuse with the field's pointer, a million one-byte elements, bodies and
frames over --max-body, and broken stream framing.

Each case must be answered with its 4xx status and problem type within
FAST seconds (a behaviour bound on a pathological input, not a
benchmark: generous for two slow cores under AddressSanitizer), change
nothing (world "keep" exports the same bytes after it), keep the daemon's
memory bounded (VmRSS) and leave it serving: a pair request answers 200
after each case, on the stream over the same connection when the framing
is intact and over a new one when the daemon closed it.

The hostile bytes are built here by hand (mp() below, struct.pack), not
with a MessagePack library's packer, which would refuse to write most of
them. These tests send MessagePack whatever the run's encoding, so they
run in the JSON pass only."""

import math
import struct
import time
import unittest

import harness
from harness import DaemonCase, check_problem_body, frame, once, strict_msgpack
from test_hostile import exchange
from wire import body_item, box, pair, posed, sphere

FAST = 2.0                    # seconds for one answer
RSS_BOUND_KIB = 200 * 1024    # growth of the daemon's resident memory a case may cause
MAX_BODY = 4 * 1024 * 1024    # --max-body below: room for a million one-byte elements
MILLION = 1000000
MSGPACK = harness.MEDIA_TYPES["msgpack"]
PROBLEM_MSGPACK = harness.PROBLEM_TYPES["msgpack"]


# A hand-written MessagePack encoder: the smallest form of each value, so
# that a case's bytes are what the comment says, plus the two escapes the
# hostile cases need.

class Raw(bytes):
    """Bytes spliced into the output as they are (a hostile value or key)."""


class Pairs(list):
    """A map as a list of (key, value), so a key may repeat."""


def mp(v):
    if isinstance(v, Raw):
        return bytes(v)
    if v is None:
        return b"\xc0"
    if v is True or v is False:
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        return mp_int(v)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        return mp_str(v.encode("utf-8"))
    if isinstance(v, list) and not isinstance(v, Pairs):
        return mp_head(len(v), 0x90, 16, b"\xdc", b"\xdd") + b"".join(mp(x) for x in v)
    items = list(v.items()) if isinstance(v, dict) else list(v)
    return mp_head(len(items), 0x80, 16, b"\xde", b"\xdf") + b"".join(mp(k) + mp(x) for k, x in items)


def mp_int(n):
    if 0 <= n < 128:
        return bytes([n])
    if -32 <= n < 0:
        return struct.pack(">b", n)
    if n >= 0:
        for mark, fmt, top in ((b"\xcc", ">B", 1 << 8), (b"\xcd", ">H", 1 << 16), (b"\xce", ">I", 1 << 32)):
            if n < top:
                return mark + struct.pack(fmt, n)
        return b"\xcf" + struct.pack(">Q", n)
    for mark, fmt, low in ((b"\xd0", ">b", -(1 << 7)), (b"\xd1", ">h", -(1 << 15)), (b"\xd2", ">i", -(1 << 31))):
        if n >= low:
            return mark + struct.pack(fmt, n)
    return b"\xd3" + struct.pack(">q", n)


def mp_str(data):
    """A str header and data, whatever data is (it may be invalid UTF-8)."""
    n = len(data)
    if n < 32:
        return bytes([0xA0 | n]) + data
    if n < 256:
        return b"\xd9" + bytes([n]) + data
    if n < 65536:
        return b"\xda" + struct.pack(">H", n) + data
    return b"\xdb" + struct.pack(">I", n) + data


def mp_head(n, fix, fix_top, mark16, mark32):
    if n < fix_top:
        return bytes([fix | n])
    if n < 65536:
        return mark16 + struct.pack(">H", n)
    return mark32 + struct.pack(">I", n)


# The hostile pieces.
NAN64, INF64, NINF64 = (Raw(b"\xcb" + struct.pack(">d", x)) for x in (math.nan, math.inf, -math.inf))
NAN32, INF32, NINF32 = (Raw(b"\xca" + struct.pack(">f", x)) for x in (math.nan, math.inf, -math.inf))
BAD_UTF8 = {"overlong": b"\xc0\xaf", "lone surrogate": b"\xed\xa0\x80", "truncated": b"\xe2\x82"}


def batch(shape=None, top_extra=()):
    """A batch that would change world "keep" (add n, remove a) were it
    accepted, with shape as n's shape and top_extra members after it."""
    if shape is None:
        shape = Pairs([("type", "sphere"), ("radius", 1)])
    return mp(Pairs([("upsert", [Pairs([("id", "n"), ("shape", shape)])]), ("remove", ["a"])] + list(top_extra)))


def shape_with(*members):
    return Pairs([("type", "sphere"), ("radius", 1)] + list(members))


# (name, body bytes): refused by the MessagePack check, 400 malformed-msgpack.
MALFORMED = [
    ("a duplicate key at the top", batch(top_extra=[("remove", ["b"])])),
    ("a duplicate key nested", batch(shape_with(("radius", 2)))),
    ("an integer key", batch(shape_with((Raw(b"\x01"), 1)))),
    ("a fixext 1 value", batch(Pairs([("type", "sphere"), ("radius", Raw(b"\xd4\x01\x00"))]))),
    ("an ext 8 value", batch(Pairs([("type", "sphere"), ("radius", Raw(b"\xc7\x03\x05abc"))]))),
    ("a bin 8 where a string belongs", batch(Pairs([("type", Raw(b"\xc4\x06sphere")), ("radius", 1)]))),
    ("a bin 8 where a number belongs", batch(Pairs([("type", "sphere"), ("radius", Raw(b"\xc4\x01\x01"))]))),
    ("the reserved byte 0xc1", batch(Pairs([("type", "sphere"), ("radius", Raw(b"\xc1"))]))),
] + [
    ("invalid UTF-8 (%s) in a key" % what, batch(shape_with((Raw(mp_str(b"k" + seq)), 1))))
    for what, seq in BAD_UTF8.items()
] + [
    ("invalid UTF-8 (%s) in a value" % what, batch(Pairs([("type", Raw(mp_str(b"sph" + seq + b"ere"))), ("radius", 1)])))
    for what, seq in BAD_UTF8.items()
] + [
    ("trailing bytes after the body", batch() + b"\xc0"),
    ("a str 32 longer than the bytes left", batch(Pairs([("type", Raw(b"\xdb\x00\x00\x10\x00sphere")),
                                                          ("radius", 1)]))),
    ("an array 32 claiming 4294967295 elements", b"\xdd\xff\xff\xff\xff"),
    ("a map 32 claiming 4294967295 members", b"\xdf\xff\xff\xff\xff"),
    ("33 nested arrays", b"\x91" * 32 + b"\x90"),
]

# (name, value): a non-finite number, refused where a finite one belongs
# with 400 invalid-value and the field's pointer.
NON_FINITE = [("NaN (float64)", NAN64), ("+Inf (float64)", INF64), ("-Inf (float64)", NINF64),
              ("NaN (float32)", NAN32), ("+Inf (float32)", INF32), ("-Inf (float32)", NINF32)]


def non_finite_requests(value):
    """(method, path, body, pointer) placing value in a pair's position and
    in a batch move's velocity."""
    unit = Pairs([("type", "sphere"), ("radius", 1)])
    a = Pairs([("shape", unit), ("pose", Pairs([("position", [value, 0, 0])]))])
    move = Pairs([("id", "a"), ("pose", Pairs([("position", [0, 0, 0])])), ("velocity", [value, 0, 0])])
    return [("POST", "/v1/pair", mp(Pairs([("a", a), ("b", Pairs([("shape", unit)]))])), "/a/pose/position/0"),
            ("POST", "/v1/worlds/keep/batch", mp(Pairs([("move", [move])])), "/move/0/velocity/0")]


def million_fixints(member, n=MILLION):
    """{member: [1, 1, ...]} with n (a million) positive fixints: 1 MB."""
    return mp(Pairs([(member, Raw(b"\xdd" + struct.pack(">I", n) + b"\x01" * n))]))


def nested(depth):
    """depth nested arrays, the innermost empty (depth 1 is [])."""
    return b"\x91" * (depth - 1) + b"\x90"


def envelope(id_, method, path, body_bytes):
    """A stream envelope map with body_bytes (one MessagePack value, maybe
    hostile) as its body, the last member."""
    head = mp(Pairs([("id", id_), ("method", method), ("path", path)]))
    return bytes([head[0] + 1]) + head[1:] + mp("body") + body_bytes


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for pid %d" % pid)


PROBE = pair(posed(sphere(1)), posed(sphere(1), (3, 0, 0)))  # distance 1


class Encoder(unittest.TestCase):
    """The hand encoder against an independent decoder (python3-msgpack),
    so the hostile bytes are what the cases say they are."""

    def test_hand_encoding_decodes_to_the_value(self):
        for v in (PROBE, {"n": [0, 127, 128, 255, 256, 65535, 65536, 2 ** 32, -1, -32, -33, -129, -2 ** 31 - 1]},
                  {"s": ["", "x" * 31, "y" * 32, "z" * 256, "\u00e9"], "f": [0.5, -0.0, 1e300], "b": [True, None]},
                  {"l": list(range(16)), "m": {str(i): i for i in range(16)}}):
            with self.subTest(v=str(v)[:60]):
                self.assertEqual(strict_msgpack(mp(v)), v)
        self.assertEqual(strict_msgpack(million_fixints("ids")), {"ids": [1] * MILLION})
        self.assertEqual(strict_msgpack(nested(3)), [[[]]])
        self.assertEqual(strict_msgpack(envelope(1, "GET", "/healthz", mp(None))),
                         {"id": 1, "method": "GET", "path": "/healthz", "body": None})
        for name, body in MALFORMED:
            with self.subTest(name=name):
                if name.endswith("nested arrays"):  # well formed, only too deep for the daemon
                    value, depth = strict_msgpack(body), 0
                    while isinstance(value, list):
                        value, depth = value[0] if value else None, depth + 1
                    self.assertEqual(depth, 33)
                else:
                    self.assertRaises(ValueError, strict_msgpack, body)
        self.assertTrue(math.isnan(struct.unpack(">f", NAN32[1:])[0]))


@once("sends hand-made MessagePack whatever the run's encoding")
class Hostile(DaemonCase):
    """A daemon holding world "keep", and the checks after each case."""

    FLAGS = ("--max-body", str(MAX_BODY), "--max-batch", str(MILLION), "--timeout", "5")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        d = cls.daemon
        for method, path, body, status in (
                ("PUT", "/v1/worlds/keep", {"skin": 0.05}, 201),
                ("POST", "/v1/worlds/keep/batch", {"upsert": [
                    body_item("a", sphere(1)), body_item("b", box(1, 1, 1), (3, 0, 0), velocity=[1, 0, 0])]}, 200)):
            r = d.request(method, path, body, encoding="json")
            if r.status != status:
                raise AssertionError("setting up %s: %s" % (path, r.describe()))
        cls.before = cls.export()

    @classmethod
    def export(cls):
        r = cls.daemon.request("GET", "/v1/worlds/keep/export", encoding="json")
        assert r.status == 200, r.describe()
        return r.raw

    # one request, and what must hold after it

    def post(self, method, path, data, headers=None):
        """data as a MessagePack body; (response, seconds)."""
        h = {"Content-Type": MSGPACK, "Accept": MSGPACK}
        h.update(headers or {})
        t0 = time.monotonic()
        r = self.daemon.request(method, path, data=data, headers=h)
        return r, time.monotonic() - t0

    def assertAnswered(self, r, took, statuses, slug, pointer, what):
        """r is a problem+msgpack with one of statuses (and slug and
        pointer when given), answered within FAST."""
        self.assertIn(r.status, statuses, "%s -> %s" % (what, r.describe()))
        self.assertLess(took, FAST, "%s: answered in %.2f s" % (what, took))
        if r.status < 400:
            return
        self.assertTrue(r.content_type.startswith(PROBLEM_MSGPACK), "%s: content type %r" % (what, r.content_type))
        self.assertIsNone(r.json_error, "%s: %s" % (what, r.json_error))
        check_problem_body(self, r.json, r.status, slug, pointer, "%s -> %s" % (what, r.describe()))

    def assertIntact(self, what, rss_before=None):
        """Alive, "keep" unchanged, memory bounded, a pair answered."""
        self.assertIsNone(self.daemon.proc.poll(), "collisiond died after %s; %s" % (what, self.daemon.log_tail()))
        self.assertEqual(self.export(), self.before, "%s changed world keep" % what)
        if rss_before is not None:
            grew = rss_kib(self.daemon.proc.pid) - rss_before
            self.assertLess(grew, RSS_BOUND_KIB, "%s: VmRSS grew by %d KiB" % (what, grew))
        r, _ = self.post("POST", "/v1/pair", mp(PROBE))
        self.assertEqual(r.status, 200, "%s: the probe pair -> %s" % (what, r.describe()))
        self.assertEqual(r.json["distance"], 1.0, what)

    # the stream

    def stream(self):
        return self.daemon.stream(timeout=FAST * 5, encoding="msgpack")

    def exchange(self, s, payload, id_, statuses, slug, pointer, what):
        """Sends one frame of payload on s; its reply must be a problem
        with one of statuses in time, for id_ (or null when the envelope
        itself could not be read); s must then answer a probe."""
        t0 = time.monotonic()
        s.send_raw(frame(payload))
        reply = s.read_line()
        took = time.monotonic() - t0
        self.assertIsNotNone(reply, "%s: the daemon closed the connection" % what)
        self.assertIn(reply.get("id"), (id_, None), "%s -> %r" % (what, reply))
        self.assertIn(reply.get("status"), statuses, "%s -> %r" % (what, str(reply)[:300]))
        self.assertLess(took, FAST, "%s: answered in %.2f s" % (what, took))
        if reply["status"] >= 400:
            check_problem_body(self, reply["body"], reply["status"], slug, pointer, "%s -> %r" % (what, reply))
        s.send({"id": "probe", "method": "POST", "path": "/v1/pair", "body": PROBE})
        probe = s.read_line()
        self.assertEqual((probe["id"], probe["status"], probe["body"]["distance"]), ("probe", 200, 1.0),
                         "%s: the same connection should stay usable: %r" % (what, probe))
        return reply

    def assertClosed(self, s, what, answered=()):
        """s is closed by the daemon within FAST, after answering the ids
        in answered (in order) and at most one problem without an id."""
        t0 = time.monotonic()
        replies, closed = s.read_until_closed()
        self.assertTrue(closed, "%s: the connection was not closed" % what)
        self.assertLess(time.monotonic() - t0, FAST + 5, what)
        ids = [r.get("id") for r in replies]
        self.assertEqual(ids[:len(answered)], list(answered), "%s: %r" % (what, replies))
        rest = replies[len(answered):]
        self.assertLessEqual(len(rest), 1, "%s: %r" % (what, replies))
        for r in rest:
            self.assertEqual((r.get("id"), r["status"] // 100), (None, 4), "%s: %r" % (what, r))
            check_problem_body(self, r["body"], r["status"], None, None, what)
        return rest

    # the cases

    def test_malformed_bodies_over_http(self):
        for name, body in MALFORMED:
            with self.subTest(name):
                r, took = self.post("POST", "/v1/worlds/keep/batch", body)
                self.assertAnswered(r, took, (400,), "malformed-msgpack", None, name)
        self.assertIntact("malformed MessagePack bodies")

    def test_malformed_bodies_on_the_stream(self):
        s = self.stream()
        try:
            for i, (name, body) in enumerate(MALFORMED):
                with self.subTest(name):
                    self.exchange(s, envelope(i, "POST", "/v1/worlds/keep/batch", body), i, (400,),
                                  "malformed-msgpack", None, "stream: " + name)
        finally:
            s.close()
        self.assertIntact("malformed MessagePack envelopes")

    def test_the_depth_limit(self):
        # The check's limit (CQP_MP_MAX_DEPTH, the body's root at depth 1):
        # 32 nested arrays pass it and are refused for what they are; 33
        # do not (MALFORMED). On the stream the envelope is one level more.
        r, took = self.post("POST", "/v1/pair", nested(32))
        self.assertAnswered(r, took, (400,), "wrong-type", "", "32 nested arrays")
        s = self.stream()
        try:
            self.exchange(s, envelope(1, "POST", "/v1/pair", nested(31)), 1, (400,), "wrong-type", "",
                          "stream: 31 nested arrays in the envelope")
            self.exchange(s, envelope(2, "POST", "/v1/pair", nested(33)), 2, (400,), "malformed-msgpack", None,
                          "stream: 33 nested arrays in the envelope")
        finally:
            s.close()
        self.assertIntact("nesting at the limit")

    def test_non_finite_numbers(self):
        s = self.stream()
        try:
            for name, value in NON_FINITE:
                for k, (method, path, body, pointer) in enumerate(non_finite_requests(value)):
                    with self.subTest(name, pointer=pointer):
                        r, took = self.post(method, path, body)
                        self.assertAnswered(r, took, (400,), "invalid-value", pointer, "%s at %s" % (name, pointer))
                        self.exchange(s, envelope(k, method, path, body), k, (400,), "invalid-value", pointer,
                                      "stream: %s at %s" % (name, pointer))
        finally:
            s.close()
        self.assertIntact("non-finite numbers")

    def test_four_gib_claims_in_five_bytes(self):
        rss = rss_kib(self.daemon.proc.pid)
        s = self.stream()
        try:
            for i, body in enumerate((b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff")):
                for method, path in (("POST", "/v1/pair"), ("POST", "/v1/worlds/keep/batch"),
                                     ("PUT", "/v1/worlds/keep")):
                    with self.subTest(body=body.hex(), path=path):
                        r, took = self.post(method, path, body)
                        self.assertAnswered(r, took, (400,), "malformed-msgpack", None, "%s %s" % (body.hex(), path))
                        self.exchange(s, envelope(i, method, path, body), i, (400,), "malformed-msgpack", None,
                                      "stream: %s %s" % (body.hex(), path))
        finally:
            s.close()
        self.assertIntact("4 GiB claims", rss)

    def test_a_million_one_byte_elements(self):
        rss = rss_kib(self.daemon.proc.pid)
        moves = million_fixints("move")
        ids = million_fixints("ids")
        # A batch's items are reserved before they are read, so a million
        # of them pass --max-request-memory (413), as in JSON; a tenth of
        # them is read and refused at its first item.
        r, took = self.post("POST", "/v1/worlds/keep/batch", moves)
        self.assertAnswered(r, took, (400, 413), None, None, "a million fixints as moves")
        self.assertMoveRefusal(r.status, r.json, "a million fixints as moves")
        r, took = self.post("POST", "/v1/worlds/keep/batch", million_fixints("move", MILLION // 10))
        self.assertAnswered(r, took, (400,), "wrong-type", "/move/0", "100,000 fixints as moves")
        # contact ids may be integers, but the world has no shape "1": 404 at
        # the first (or 413 if reserving a million ids passes the memory cap)
        r, took = self.post("POST", "/v1/worlds/keep/contacts", ids)
        self.assertAnswered(r, took, (404, 413), None, None, "a million fixints as contact ids")
        if r.status == 404:
            self.assertEqual(r.json.get("pointer"), "/ids/0", r.describe())
        s = self.stream()
        try:
            reply = self.exchange(s, envelope(1, "POST", "/v1/worlds/keep/batch", moves), 1, (400, 413), None, None,
                                  "stream: a million fixints as moves")
            self.assertMoveRefusal(reply["status"], reply["body"], "stream: a million fixints as moves")
            self.exchange(s, envelope(2, "POST", "/v1/worlds/keep/contacts", ids), 2, (404, 413),
                          None, None, "stream: a million fixints as contact ids")
        finally:
            s.close()
        self.assertIntact("a million one-byte elements", rss)

    def assertMoveRefusal(self, status, problem, what):
        """A batch of non-map moves is refused at its first item, or for
        the memory its items would take."""
        want = {400: ("wrong-type", "/move/0"), 413: ("body-too-large", None)}[status]
        check_problem_body(self, problem, status, want[0], want[1], "%s: %r" % (what, problem))

    def test_a_body_over_max_body(self):
        body = mp(Pairs([("pad", "x" * MAX_BODY)]))
        self.assertGreater(len(body), MAX_BODY)
        head = ("POST /v1/worlds/keep/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\nAccept: %s\r\n"
                "Content-Length: %d\r\n\r\n" % (MSGPACK, MSGPACK, len(body))).encode()
        for what, payload in (("the head alone", head), ("the head and the body", head + body)):
            with self.subTest(what):
                status, headers, raw, took = exchange(self.daemon.http_port, payload, FAST * 5)
                r = harness.Response(status if isinstance(status, int) else 0, headers, raw, "msgpack")
                self.assertAnswered(r, took, (413,), "body-too-large", None,
                                    "a %d-byte body, %s" % (len(body), what))
        self.assertIntact("a body over --max-body")

    def test_a_frame_over_max_body(self):
        s = self.stream()
        try:
            s.send({"id": 1, "method": "GET", "path": "/healthz"})
            self.assertEqual(s.read_line()["status"], 200)
            s.send_raw(b"\xce" + struct.pack(">I", MAX_BODY + 1) + b"\x84")  # the prefix, nothing more
            rest = self.assertClosed(s, "a frame of --max-body + 1 bytes")
            self.assertEqual([r["status"] for r in rest], [413], rest)
        finally:
            s.close()
        self.assertIntact("a frame over --max-body")

    def test_truncated_frames(self):
        change = envelope(1, "POST", "/v1/worlds/keep/batch", batch())
        for name, data in (("a prefix alone", frame(change)[:5]),
                           ("a prefix and half the envelope", frame(change)[:5 + len(change) // 2]),
                           ("half a prefix", frame(change)[:3])):
            with self.subTest(name):
                s = self.stream()
                try:
                    s.send_raw(data)
                finally:
                    s.close()  # the client is gone
        time.sleep(0.2)  # let the daemon see the closes
        self.assertIntact("truncated frames")
        # the same change, framed whole, does apply (so the cuts were the reason)
        s = self.stream()
        try:
            s.send_raw(frame(change))
            self.assertEqual(s.read_line()["status"], 200)
        finally:
            s.close()
        r = self.daemon.request("GET", "/v1/worlds/keep/export", encoding="json")
        self.assertEqual(sorted(x["id"] for x in r.json["shapes"]), ["b", "n"], r.describe())
        undo = self.daemon.request("POST", "/v1/worlds/keep/batch", {"upsert": [body_item("a", sphere(1))],
                                                                     "remove": ["n"]}, encoding="json")
        self.assertEqual(undo.status, 200, undo.describe())
        self.assertIntact("the change undone")

    def test_broken_framing_closes_the_connection(self):
        cases = [("a bad prefix byte after a frame", b"\x81\xa1a\x01"),
                 ("a frame of length 0", b"\xce\x00\x00\x00\x00"),
                 ("a JSON line after a frame", b'{"id":2,"method":"GET","path":"/healthz"}\n')]
        for name, data in cases:
            with self.subTest(name):
                s = self.stream()
                try:
                    s.send({"id": 1, "method": "GET", "path": "/healthz"})
                    s.send_raw(data)
                    self.assertClosed(s, name, answered=[1])
                finally:
                    s.close()
        self.assertIntact("broken framing")
