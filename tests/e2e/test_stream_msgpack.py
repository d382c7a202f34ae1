"""The stream transport's MessagePack frames (docs/API.md section 11): a
connection whose first byte is 0xce carries frames of 0xce, a 4-byte
big-endian length N and N bytes of one envelope map, both ways. Pipelined
requests answered in order, ids echoed byte for byte, envelope and check
errors with their pointers, lost framing, truncated and oversized frames
(nothing applied, the daemon still serving), numbers of every width, NaN
and Inf, the budgets and back-pressure, and a JSON connection beside a
MessagePack one. Envelopes the tests must control byte for byte are
written out by hand; python3-msgpack packs the rest and unpacks every
reply (an independent codec)."""

import re
import socket
import struct
import time

import held
from harness import DaemonCase, check_problem_body, import_msgpack
from wire import body_item, pair, posed, sphere

PAIR = pair(posed(sphere(1)), posed(sphere(1.5), (3, 0, 0)))
# Spheres of radius 1 and 1.5 whose centres are 3 apart: 0.5 apart along +x.
PAIR_ANSWER = {"overlap": False, "distance": 0.5, "depth": 0.0, "normal": [1.0, 0.0, 0.0], "points": [],
               "witness": {"a": [1.0, 0.0, 0.0], "b": [1.5, 0.0, 0.0]}, "algorithm": "sphere_sphere",
               "fallback": None}
HEALTH = {"id": 0, "method": "GET", "path": "/healthz"}
TIMEOUT = 1.0  # --timeout of the classes that set it


def mstr(text):
    """A fixstr (up to 31 bytes): 0xa0 + length, then the bytes."""
    b = text.encode() if isinstance(text, str) else text
    assert len(b) < 32
    return bytes([0xA0 + len(b)]) + b


def mmap(*items):
    """A fixmap of the encoded keys and values given in turn."""
    assert len(items) % 2 == 0 and len(items) // 2 < 16
    return bytes([0x80 + len(items) // 2]) + b"".join(items)


# {"method": "GET", "path": "/healthz"}, by hand.
HEALTH_ENV = mmap(mstr("method"), mstr("GET"), mstr("path"), mstr("/healthz"))


def padded(message, size, packb):
    """message packed with an ignored header "pad" sized so that the
    envelope is exactly size bytes."""
    for k in range(size, -1, -1):
        m = dict(message, headers=dict(message.get("headers", {}), pad="x" * k))
        env = packb(m)
        if len(env) == size:
            return env
    raise AssertionError("cannot pad to %d bytes" % size)


def requests_total(text, route, status):
    """collisiond_requests_total{route, status} summed over methods (0 when absent)."""
    total = 0.0
    for line in text.splitlines():
        m = re.match(r'^collisiond_requests_total\{(.*)\} (\S+)$', line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1)))
        if labels.get("route") == route and labels.get("status") == str(status):
            total += float(m.group(2))
    return total


def metric(daemon, name):
    """The value of an unlabelled sample in /metrics."""
    text = daemon.request("GET", "/metrics").raw.decode()
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


class MsgpackCase(DaemonCase):
    """A daemon and one MessagePack connection per test."""

    def setUp(self):
        self.msgpack = import_msgpack()
        self.s = self.daemon.stream_msgpack()

    def tearDown(self):
        self.s.close()

    def packb(self, value, **kw):
        return self.msgpack.packb(value, use_bin_type=True, **kw)

    def roundtrip(self, message):
        self.s.send(message)
        reply = self.s.read()
        self.assertIsNotNone(reply, "the server closed the stream after %r" % (message,))
        return reply

    def assertReplyProblem(self, reply, status, id_, slug=None, pointer=None):
        self.assertEqual(reply.get("id"), id_, reply)
        self.assertEqual(reply.get("status"), status, reply)
        self.assertIsInstance(reply.get("body"), dict, reply)
        check_problem_body(self, reply["body"], status, slug, pointer, str(reply))

    def assertServes(self, what):
        reply = self.roundtrip({"id": "ok", "method": "GET", "path": "/healthz"})
        self.assertEqual((reply["id"], reply["status"]), ("ok", 200), "%s: the connection should stay usable" % what)

    def shapes(self, world):
        return self.ok("GET", "/v1/worlds/" + world)["shapes"]


class StreamMsgpack(MsgpackCase):

    def test_pipelined_requests_answered_in_order(self):
        msgs = [
            {"id": 1, "method": "PUT", "path": "/v1/worlds/arena", "body": {"skin": 0}},
            {"id": 2, "method": "POST", "path": "/v1/worlds/arena/batch", "body": {"upsert": [
                body_item("a", sphere(1)), body_item("b", sphere(1), (1.5, 0, 0))]}},
            {"id": 3, "method": "POST", "path": "/v1/worlds/arena/contacts", "body": {}},
            {"id": 4, "method": "POST", "path": "/v1/pair", "body": PAIR},
            {"id": 5, "method": "POST", "path": "/v1/pairs", "body": {"pairs": [
                PAIR, pair(posed(sphere(1)), posed(sphere(0.5), (0, 1, 0)))]}},
            {"id": "six", "method": "GET", "path": "/v1/worlds/arena/shapes/b"},
            {"id": 7, "method": "DELETE", "path": "/v1/worlds/arena"},
            {"id": 8, "method": "GET", "path": "/v1/worlds/arena"},
        ]
        self.s.send(*msgs)
        r = [self.s.read() for _ in msgs]
        self.assertEqual([x["id"] for x in r], [1, 2, 3, 4, 5, "six", 7, 8])
        self.assertEqual([x["status"] for x in r], [201, 200, 200, 200, 200, 200, 204, 404], r)
        self.assertEqual(r[1]["body"], {"upserted": 2, "moved": 0, "removed": 0, "shapes": 2})
        # Unit spheres 1.5 apart: 0.5 deep along +x, the point on b's surface.
        (c,) = r[2]["body"]["pairs"]
        self.assertEqual((c["a"], c["b"], c["overlap"], c["depth"], c["normal"]), ("a", "b", True, 0.5, [1.0, 0.0, 0.0]))
        self.assertEqual(c["points"], [{"position": [0.5, 0.0, 0.0], "depth": 0.5, "feature": "f0.f0"}])
        self.assertEqual(r[3]["body"], PAIR_ANSWER)
        # The second pair: radius 1 and 0.5, centres 1 apart on y: 0.5 deep along +y.
        second = r[4]["body"]["results"][1]
        self.assertEqual((second["overlap"], second["depth"], second["normal"]), (True, 0.5, [0.0, 1.0, 0.0]))
        self.assertEqual(r[4]["body"]["results"][0], PAIR_ANSWER)
        self.assertEqual(r[5]["body"]["id"], "b")
        self.assertIsNone(r[6]["body"], "a 204 reply has a nil body")
        check_problem_body(self, r[7]["body"], 404, "not-found", None)

    def test_same_answers_as_json_over_http(self):
        n = 100
        self.s.send(*[{"id": i, "method": "POST", "path": "/v1/pair", "body": PAIR} for i in range(n)])
        replies = [self.s.read() for _ in range(n)]
        self.assertEqual([x["id"] for x in replies], list(range(n)))
        http = self.daemon.request("POST", "/v1/pair", PAIR).json
        for x in replies:
            self.assertEqual(x["status"], 200, x)
            self.assertEqual(x["body"], http, "the MessagePack and JSON answers differ")

    def test_reply_bytes(self):
        # The reply map starts with "id" (the request's bytes) and "status";
        # every real is a float64, whole or not.
        self.s.send(mmap(mstr("id"), b"\x01", mstr("method"), mstr("POST"), mstr("path"), mstr("/v1/pair"),
                         mstr("body"), self.packb(PAIR)))
        raw = self.s.read_raw()
        self.assertEqual(raw[:14], b"\x84\xa2id\x01\xa6status\xcc\xc8")
        at = raw.index(b"\xa8distance")
        self.assertEqual(raw[at + 9:at + 18], b"\xcb" + struct.pack(">d", 0.5))
        at = raw.index(b"\xa6normal")
        self.assertEqual(raw[at + 7:at + 35], b"\x93" + b"".join(b"\xcb" + struct.pack(">d", v) for v in (1, 0, 0)))

    def test_ids_echoed_verbatim(self):
        # Each id's bytes come back as they were sent, right after the
        # reply's "id" key, whatever their encoding: a non-minimal uint16
        # 5, a str8 "x", a uint64 beyond int64, a float32, a map.
        ids = [b"\x07", b"\xd0\xfd", b"\xcd\x00\x05", b"\xa4tick", b"\xd9\x01x", b"\xcf" + b"\xff" * 8,
               b"\xca" + struct.pack(">f", 1.5), b"\xcb" + struct.pack(">d", -0.25), b"\xc3",
               mmap(mstr("k"), b"\x92\x01\x02"), b"\x90", b"\xc0"]
        for id_bytes in ids:
            with self.subTest(id=id_bytes.hex()):
                self.s.send(mmap(mstr("id"), id_bytes, mstr("method"), mstr("GET"), mstr("path"), mstr("/healthz")))
                raw = self.s.read_raw()
                self.assertEqual(raw[1:4], b"\xa2id")
                self.assertEqual(raw[4:4 + len(id_bytes)], id_bytes)
                self.assertEqual(raw[4 + len(id_bytes):11 + len(id_bytes)], b"\xa6status")
        # No id: nil.
        self.s.send(HEALTH_ENV)
        raw = self.s.read_raw()
        self.assertEqual(raw[1:5], b"\xa2id\xc0")
        # Decoded: the same values.
        for id_ in (12, "tick-9", {"k": [1, "x"]}, None, -(2 ** 63), 2 ** 64 - 1):
            self.assertEqual(self.roundtrip({"id": id_, "method": "GET", "path": "/healthz"})["id"], id_)

    def test_request_id_and_headers(self):
        reply = self.roundtrip({"id": 1, "method": "GET", "path": "/healthz",
                                "headers": {"x-request-ID": "tick-77", "Accept": "text/plain"}})
        self.assertEqual((reply["status"], reply.get("request_id")), (200, "tick-77"), reply)
        reply = self.roundtrip({"id": 2, "method": "GET", "path": "/healthz", "headers": None, "body": None})
        self.assertEqual(reply["status"], 200, reply)
        self.assertRegex(reply.get("request_id", ""), r"^[A-Za-z0-9._:-]{1,64}$", "a generated id: %s" % reply)
        reply = self.roundtrip({"id": 3, "method": "DELETE", "path": "/v1/pair"})
        self.assertReplyProblem(reply, 405, 3, "method-not-allowed")
        self.assertEqual(reply["headers"], {"Allow": "POST"}, reply)

    def test_envelope_errors_keep_the_id_and_the_connection(self):
        cases = [
            ({"id": 5, "method": "GET"}, 5, "missing-field", "/path"),
            ({"id": 6, "path": "/healthz"}, 6, "missing-field", "/method"),
            ({"id": 7, "method": "GET", "path": "/healthz", "pad": 1}, 7, "unknown-field", "/pad"),
            ({"id": 8, "method": 8, "path": "/healthz"}, 8, "wrong-type", "/method"),
            ({"id": 9, "method": "GET", "path": None}, 9, "wrong-type", "/path"),
            ({"id": 10, "method": "GET", "path": "/healthz", "headers": [1]}, 10, "wrong-type", "/headers"),
            ({"id": 11, "method": "GET", "path": "/healthz", "headers": {"X-Request-Id": 1}}, 11, "wrong-type",
             "/headers/X-Request-Id"),
            ({"id": 12, "method": "GET", "path": "/healthz", "headers": {"authorization": "a", "Authorization": "b"}},
             12, "invalid-value", "/headers/Authorization"),
            ({"id": 13, "method": "GET", "path": "/heal\0thz"}, 13, "invalid-value", "/path"),
            ([1, 2], None, "wrong-type", None),
            ("GET /healthz", None, "wrong-type", None),
        ]
        for message, id_, slug, pointer in cases:
            with self.subTest(message=message):
                self.assertReplyProblem(self.roundtrip(self.packb(message)), 400, id_, slug, pointer)
                self.assertServes(str(message))

    def test_handler_errors_with_pointers(self):
        bad = pair({"shape": {"type": "box", "half_extents": [1, -1, 1]}}, posed(sphere(1)))
        self.assertReplyProblem(self.roundtrip({"id": 1, "method": "POST", "path": "/v1/pair", "body": bad}), 400, 1,
                                "invalid-value", "/a/shape/half_extents/1")
        self.assertReplyProblem(self.roundtrip({"id": 2, "method": "POST", "path": "/v1/pair", "body": {"a": 1}}),
                                400, 2, "wrong-type", "/a")
        self.assertReplyProblem(self.roundtrip({"id": 3, "method": "GET", "path": "/v1/nope"}), 404, 3, "no-route")
        self.assertReplyProblem(self.roundtrip({"id": 4, "method": "POST", "path": "/v1/pair"}), 400, 4)
        self.assertReplyProblem(self.roundtrip({"id": 5, "method": "POST", "path": "/v1/pair", "body": [1]}), 400, 5,
                                "wrong-type")

    def test_frames_failing_the_check(self):
        # Each is answered 400 malformed-msgpack with a nil id (nothing of
        # such a frame is trusted), and the connection goes on.
        get = (mstr("method"), mstr("GET"), mstr("path"), mstr("/healthz"))
        post = (mstr("method"), mstr("POST"), mstr("path"), mstr("/v1/pair"))
        sphere_a = self.packb(posed(sphere(1)))
        cases = {
            "duplicate envelope key": mmap(mstr("id"), b"\x01", mstr("id"), b"\x02", *get),
            "duplicate body key": mmap(mstr("id"), b"\x01", *post, mstr("body"),
                                       mmap(mstr("a"), sphere_a, mstr("a"), sphere_a)),
            "non-str key": mmap(b"\x01", b"\x01", *get),
            "ext value": mmap(mstr("id"), b"\xd4\x01\x00", *get),
            "ext in the body": mmap(*post, mstr("body"), mmap(mstr("a"), b"\xc7\x01\x05\x00")),
            "bin value": mmap(mstr("id"), b"\xc4\x01\x00", *get),
            "0xc1": mmap(mstr("id"), b"\xc1", *get),
            "invalid UTF-8 value": mmap(mstr("method"), b"\xa2\xc3\x28", mstr("path"), mstr("/healthz")),
            "invalid UTF-8 key": mmap(b"\xa2\xff\xfe", b"\x01", *get),
            "trailing bytes": HEALTH_ENV + b"\xc0",
            "a count past the bytes left": b"\x85" + HEALTH_ENV[1:],
            "a length past the bytes left": mmap(mstr("method"), b"\xd9\xc8GET", mstr("path"), mstr("/healthz")),
            "a 4 GiB array header": mmap(mstr("id"), b"\xdd\xff\xff\xff\xff", *get),
            "nesting past 32 in the body": mmap(*post, mstr("body"), mmap(mstr("a"), b"\x91" * 40 + b"\x01")),
        }
        for what, env in cases.items():
            with self.subTest(what=what):
                reply = self.roundtrip(env)
                self.assertReplyProblem(reply, 400, None, "malformed-msgpack", None)
                self.assertRegex(reply["body"]["detail"], r"\d", "the detail should say where: %s" % reply)
                self.assertServes(what)

    def test_numbers_of_every_width(self):
        # The same pair with every number in another encoding: radius 1 as
        # a uint64, 1.5 as a float32, the position as a uint16, an int16
        # and an int64; and all floats as float32. The same answer.
        by_hand = mmap(
            mstr("a"), mmap(mstr("shape"), mmap(mstr("type"), mstr("sphere"), mstr("radius"),
                                                b"\xcf" + (1).to_bytes(8, "big")),
                            mstr("pose"), mmap(mstr("position"), b"\x93\xd0\x00\xcc\x00\xcb" + bytes(8))),
            mstr("b"), mmap(mstr("shape"), mmap(mstr("type"), mstr("sphere"), mstr("radius"),
                                                b"\xca" + struct.pack(">f", 1.5)),
                            mstr("pose"), mmap(mstr("position"), b"\x93\xcd\x00\x03\xd1\x00\x00\xd3" + bytes(8))))
        single = self.packb({"id": 2, "method": "POST", "path": "/v1/pair",
                             "body": pair(posed(sphere(1.0)), posed(sphere(1.5), (3.0, 0.0, 0.0)))},
                            use_single_float=True)
        self.assertIn(b"\xca", single)
        self.s.send(mmap(mstr("id"), b"\x01", mstr("method"), mstr("POST"), mstr("path"), mstr("/v1/pair"),
                         mstr("body"), by_hand), single)
        for id_ in (1, 2):
            reply = self.s.read()
            self.assertEqual((reply["id"], reply["status"]), (id_, 200), reply)
            self.assertEqual(reply["body"], PAIR_ANSWER)

    def test_nan_and_inf_are_refused_at_their_pointer(self):
        nan, inf = float("nan"), float("inf")
        cases = [
            (pair(posed(sphere(nan)), posed(sphere(1))), "/a/shape/radius"),
            (pair(posed(sphere(1)), posed(sphere(1), (inf, 0, 0))), "/b/pose/position/0"),
            (pair(posed(sphere(1)), posed(sphere(1), (0, 0, -inf))), "/b/pose/position/2"),
            (pair(posed(sphere(1)), posed(sphere(1)), skin=nan), "/skin"),
        ]
        for body, pointer in cases:
            with self.subTest(pointer=pointer):
                reply = self.roundtrip({"id": 1, "method": "POST", "path": "/v1/pair", "body": body})
                self.assertReplyProblem(reply, 400, 1, "invalid-value", pointer)
        # A float32 NaN, by hand.
        body = mmap(mstr("a"), mmap(mstr("shape"), mmap(mstr("type"), mstr("sphere"), mstr("radius"),
                                                        b"\xca\x7f\xc0\x00\x00")),
                    mstr("b"), self.packb(posed(sphere(1))))
        reply = self.roundtrip(mmap(mstr("id"), b"\x02", mstr("method"), mstr("POST"), mstr("path"), mstr("/v1/pair"),
                                    mstr("body"), body))
        self.assertReplyProblem(reply, 400, 2, "invalid-value", "/a/shape/radius")
        # Nothing of a refused request is applied.
        self.ok("PUT", "/v1/worlds/nan", {}, status=201)
        reply = self.roundtrip({"id": 3, "method": "POST", "path": "/v1/worlds/nan/batch", "body": {"upsert": [
            body_item("a", sphere(1)), body_item("b", sphere(1), (nan, 0, 0))]}})
        self.assertReplyProblem(reply, 400, 3, "invalid-value", "/upsert/1/pose/position/0")
        self.assertEqual(self.shapes("nan"), 0)

    def test_integer_fields_take_ints_only(self):
        reply = self.roundtrip({"id": 1, "method": "PUT", "path": "/v1/worlds/ints", "body": {"capacity": 16.0}})
        self.assertReplyProblem(reply, 400, 1, "wrong-type", "/capacity")
        reply = self.roundtrip(mmap(mstr("id"), b"\x02", mstr("method"), mstr("PUT"), mstr("path"),
                                    mstr("/v1/worlds/ints"), mstr("body"), mmap(mstr("capacity"), b"\xcd\x00\x10")))
        self.assertEqual((reply["id"], reply["status"]), (2, 201), reply)
        self.assertEqual(reply["body"]["settings"]["capacity"], 16)

    def test_text_and_json_bodies_are_str(self):
        reply = self.roundtrip({"id": 1, "method": "GET", "path": "/metrics"})
        self.assertEqual(reply["status"], 200)
        self.assertIsInstance(reply["body"], str)
        self.assertIn("collisiond_requests_total", reply["body"])
        reply = self.roundtrip({"id": 2, "method": "GET", "path": "/v1/openapi.json"})
        self.assertEqual(reply["status"], 200)
        self.assertIsInstance(reply["body"], str)
        self.assertEqual(self.daemon.request("GET", "/v1/openapi.json").raw.decode(), reply["body"])

    def test_refused_frames_are_counted(self):
        before = self.daemon.request("GET", "/metrics").raw.decode()
        self.assertReplyProblem(self.roundtrip(HEALTH_ENV + b"\x00"), 400, None, "malformed-msgpack")
        self.assertReplyProblem(self.roundtrip({"id": 1, "method": "GET"}), 400, 1, "missing-field", "/path")
        after = self.daemon.request("GET", "/metrics").raw.decode()
        self.assertEqual(requests_total(after, "unmatched", 400) - requests_total(before, "unmatched", 400), 2)

    def test_split_writes(self):
        frame = self.s.frame(self.packb({"id": 11, "method": "POST", "path": "/v1/pair", "body": PAIR}))
        for i in range(0, len(frame), 3):
            self.s.send_raw(frame[i:i + 3])
            time.sleep(0.001)
        reply = self.s.read()
        self.assertEqual((reply["id"], reply["status"], reply["body"]), (11, 200, PAIR_ANSWER))


class StreamMsgpackFraming(MsgpackCase):
    """Lost framing, and frames cut short by the client's end of input:
    answered once, then the connection closes; nothing after is run."""

    def test_bad_mark_loses_the_framing(self):
        self.ok("PUT", "/v1/worlds/lost", {}, status=201)
        batch = self.s.frame(self.packb({"id": 3, "method": "POST", "path": "/v1/worlds/lost/batch",
                                         "body": {"upsert": [body_item("a", sphere(1))]}}))
        for junk in (b"{", b"\xcf\x00\x00\x00\x00\x00\x00\x00\x01\xc0", b"\x00"):
            with self.subTest(junk=junk.hex()):
                s = self.daemon.stream_msgpack(timeout=5)
                try:
                    s.send(HEALTH)
                    s.send_raw(junk + batch)
                    frames, closed = s.read_until_closed()
                finally:
                    s.close()
                self.assertTrue(closed, "lost framing should close the connection")
                self.assertEqual([(f["id"], f["status"]) for f in frames], [(0, 200), (None, 400)], frames)
                check_problem_body(self, frames[1]["body"], 400, "malformed-msgpack", None)
                self.assertIn("0x%02x" % junk[0], frames[1]["body"]["detail"])
        self.assertEqual(self.shapes("lost"), 0, "a frame after lost framing must not run")

    def test_zero_length_loses_the_framing(self):
        self.ok("PUT", "/v1/worlds/zero", {}, status=201)
        batch = self.s.frame(self.packb({"id": 3, "method": "POST", "path": "/v1/worlds/zero/batch",
                                         "body": {"upsert": [body_item("a", sphere(1))]}}))
        self.s.send(HEALTH)
        self.s.send_raw(b"\xce\x00\x00\x00\x00" + batch)
        frames, closed = self.s.read_until_closed()
        self.assertTrue(closed)
        self.assertEqual([(f["id"], f["status"]) for f in frames], [(0, 200), (None, 400)], frames)
        check_problem_body(self, frames[1]["body"], 400, "malformed-msgpack", None)
        self.assertEqual(self.shapes("zero"), 0)

    def test_truncated_frame_then_close_applies_nothing(self):
        self.ok("PUT", "/v1/worlds/cut", {}, status=201)
        batch = self.s.frame(self.packb({"id": 1, "method": "POST", "path": "/v1/worlds/cut/batch",
                                         "body": {"upsert": [body_item("a", sphere(1)), body_item("b", sphere(1))]}}))
        for cut in (3, 5, len(batch) // 2, len(batch) - 1):
            with self.subTest(cut=cut):
                s = self.daemon.stream_msgpack(timeout=5)
                try:
                    s.send(HEALTH)
                    s.send_raw(batch[:cut])
                    s.sock.shutdown(socket.SHUT_WR)
                    frames, closed = s.read_until_closed()
                finally:
                    s.close()
                self.assertTrue(closed)
                self.assertEqual([(f["id"], f["status"]) for f in frames], [(0, 200), (None, 400)], frames)
                check_problem_body(self, frames[1]["body"], 400, "malformed-msgpack", None)
                self.assertEqual(self.shapes("cut"), 0, "a truncated frame must not run")
        self.assertServes("after truncated frames on other connections")


class StreamMsgpackFrameLimit(MsgpackCase):

    FLAGS = ("--max-body", "4096")

    def test_frame_at_the_limit_is_served(self):
        env = padded({"id": 1, "method": "POST", "path": "/v1/pair", "body": PAIR}, 4096, self.packb)
        reply = self.roundtrip(env)
        self.assertEqual((reply["id"], reply["status"]), (1, 200), reply)

    def test_frame_over_max_body_is_refused_and_nothing_applied(self):
        self.ok("PUT", "/v1/worlds/big", {}, status=201)
        env = padded({"id": 2, "method": "POST", "path": "/v1/worlds/big/batch",
                      "body": {"upsert": [body_item("a", sphere(1))]}}, 4097, self.packb)
        self.s.send(HEALTH, env, HEALTH)
        frames, closed = self.s.read_until_closed()
        self.assertTrue(closed, "a frame over --max-body closes the connection, as an overlong line does")
        self.assertEqual([(f["id"], f["status"]) for f in frames], [(0, 200), (None, 413)], frames)
        check_problem_body(self, frames[1]["body"], 413, "body-too-large", None)
        self.assertIn("4097", frames[1]["body"]["detail"])
        self.assertEqual(self.shapes("big"), 0, "nothing of the refused frame is applied")
        # The daemon goes on serving, on both encodings.
        s = self.daemon.stream_msgpack()
        try:
            s.send(HEALTH)
            self.assertEqual(s.read()["status"], 200)
        finally:
            s.close()
        self.ok("GET", "/healthz")

    def test_huge_length_is_refused_at_its_prefix(self):
        # 4 GiB announced, none of it sent: refused at once, nothing waited for.
        t0 = time.monotonic()
        self.s.send_raw(b"\xce\xff\xff\xff\xff")
        frames, closed = self.s.read_until_closed()
        self.assertLess(time.monotonic() - t0, 5)
        self.assertTrue(closed)
        self.assertEqual([(f["id"], f["status"]) for f in frames], [(None, 413)], frames)


class StreamMsgpackTimer(MsgpackCase):

    FLAGS = ("--timeout", "1")

    def test_stalled_half_frame_is_cut_off(self):
        self.s.send_raw(self.s.frame(self.packb(HEALTH))[:9])
        t0 = time.monotonic()
        frames, closed = self.s.read_until_closed()
        took = time.monotonic() - t0
        self.assertTrue(closed, "a half frame that stalls should be cut off")
        self.assertEqual(frames, [])
        self.assertGreaterEqual(took, TIMEOUT * 0.8, "cut off before --timeout")
        self.assertLess(took, TIMEOUT * 4, "cut off long after --timeout")


class StreamMsgpackBudget(MsgpackCase):
    """Frames are held against --max-buffered as lines are: one that would
    pass it is answered 503 (id nil) in its place, its rest dropped by
    count, and the connection stays usable."""

    FLAGS = ("--max-buffered", "64K", "--max-body", "1M")

    def test_a_frame_past_the_budget_is_shed_in_its_place(self):
        frame = self.s.frame(padded({"id": 1, "method": "GET", "path": "/healthz"}, 200 * 1024, self.packb))
        self.s.send(HEALTH)
        self.s.send_raw(frame[:100 * 1024])  # unfinished, and already past 64 KiB
        self.assertEqual(self.s.read()["status"], 200)
        shed = self.s.read()  # answered before the frame ends
        self.assertReplyProblem(shed, 503, None, "unavailable", None)
        self.assertEqual(shed["headers"], {"Retry-After": "1"}, shed)
        self.assertIn("--max-buffered", shed["body"]["detail"])
        self.s.send_raw(frame[100 * 1024:])  # its rest is dropped
        self.s.send({"id": 2, "method": "GET", "path": "/healthz"})
        after = self.s.read()
        self.assertEqual((after["id"], after["status"]), (2, 200))
        self.assertEqual(metric(self.daemon, "collisiond_request_bytes_buffered"), 0)


class StreamMsgpackInflight(MsgpackCase):
    """--max-inflight counts frames as requests: with two HTTP answers held
    in flight, a frame is answered 503 with Retry-After at once."""

    FLAGS = ("--max-inflight", "2") + held.FLAGS

    def test_503_beyond_max_inflight(self):
        holding = held.hold_answers(self, 2)
        try:
            deadline = time.monotonic() + 20
            while self.daemon.request("POST", "/v1/pair", body=PAIR).status != 503:
                self.assertLess(time.monotonic(), deadline, "the held answers never filled --max-inflight")
                time.sleep(0.05)
            self.s.send({"id": 1, "method": "POST", "path": "/v1/pair", "body": PAIR}, HEALTH)
            shed, health = self.s.read(), self.s.read()
            self.assertReplyProblem(shed, 503, 1, "unavailable", None)
            self.assertEqual(shed["headers"], {"Retry-After": "1"}, shed)
            self.assertEqual((health["id"], health["status"]), (0, 200), "a health check is never shed")
        finally:
            for s in holding:
                s.close()
        deadline = time.monotonic() + 20
        while True:
            reply = self.roundtrip({"id": 2, "method": "POST", "path": "/v1/pair", "body": PAIR})
            if reply["status"] == 200:
                break
            self.assertLess(time.monotonic(), deadline, "still shed after the held answers were dropped")
            time.sleep(0.05)
        self.assertEqual(reply["body"], PAIR_ANSWER)


class StreamMsgpackUnread(DaemonCase):
    """Back-pressure: a MessagePack client that pipelines many frames and
    reads no reply is paused, then closed after --timeout, while another
    client is served throughout."""

    FLAGS = ("--timeout", "1", "--max-connections", "2")

    def test_client_that_does_not_read_is_closed(self):
        a = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        a.settimeout(6)
        a.connect(("127.0.0.1", self.daemon.stream_port))
        b = self.daemon.stream_msgpack(timeout=2)
        try:
            packb = b.pack
            a.sendall(b.frame(packb(HEALTH)))
            self.assertEqual(a.recv(4096)[:1], b"\xce")
            # About 17 MB of replies (the OpenAPI document, 200 times) that A never reads.
            a.sendall(b.frame(packb({"id": 1, "method": "GET", "path": "/v1/openapi.json"})) * 200)
            t0 = time.monotonic()
            freed = None
            while time.monotonic() - t0 < TIMEOUT * 6:
                t = time.monotonic()
                b.send(HEALTH)
                self.assertEqual(b.read()["status"], 200, "another client must keep being served")
                self.assertLess(time.monotonic() - t, TIMEOUT, "another client waited")
                if metric(self.daemon, "collisiond_stream_connections") == 1:
                    freed = time.monotonic() - t0
                    break
                time.sleep(0.2)
            self.assertIsNotNone(freed, "the client that does not read should be closed")
            self.assertGreaterEqual(freed, TIMEOUT * 0.8, "closed before --timeout")
            self.assertIn("took no reply bytes", self.daemon.log_text())
        finally:
            a.close()
            b.close()


class StreamBothEncodings(DaemonCase):
    """A JSON connection and a MessagePack one side by side, on one world:
    each answered in its own encoding, each seeing the other's changes."""

    def test_side_by_side(self):
        j = self.daemon.stream(encoding="json")
        m = self.daemon.stream_msgpack()
        try:
            m.send({"id": "m1", "method": "PUT", "path": "/v1/worlds/both", "body": {}})
            self.assertEqual(m.read()["status"], 201)
            j.send_raw("\n ")  # an empty line, then blanks before the object: still JSON lines
            j.send({"id": "j1", "method": "POST", "path": "/v1/worlds/both/batch", "body": {"upsert": [
                body_item("a", sphere(1)), body_item("b", sphere(1), (1.5, 0, 0))]}})
            jr = j.read_line()
            self.assertEqual((jr["id"], jr["body"].get("shapes")), ("j1", 2), jr)
            m.send({"id": "m2", "method": "POST", "path": "/v1/worlds/both/contacts", "body": {}})
            j.send({"id": "j2", "method": "POST", "path": "/v1/worlds/both/contacts", "body": {}})
            mc, jc = m.read(), j.read_line()
            self.assertEqual((mc["id"], jc["id"]), ("m2", "j2"))
            self.assertEqual(mc["body"], jc["body"], "the same answer in both encodings")
            self.assertEqual([(p["a"], p["b"], p["depth"]) for p in mc["body"]["pairs"]], [("a", "b", 0.5)])
            # A JSON connection is not switched by a 0xce later on: that
            # line is just bad JSON.
            j.send_raw(b"\xce\x00\x00\x00\x01\xc0\n")
            self.assertEqual(j.read_line()["status"], 400)
            j.send({"id": "j3", "method": "GET", "path": "/healthz"})
            self.assertEqual(j.read_line()["id"], "j3")
        finally:
            j.close()
            m.close()


class StreamMsgpackAuth(DaemonCase):

    FLAGS = ("--token", "tok")

    def test_auth_through_headers(self):
        s = self.daemon.stream_msgpack()
        try:
            s.send({"id": 1, "method": "GET", "path": "/v1/worlds"},
                   {"id": 2, "method": "GET", "path": "/v1/worlds", "headers": {"Authorization": "Bearer nope"}},
                   {"id": 3, "method": "GET", "path": "/v1/worlds", "headers": {"AUTHORIZATION": "Bearer tok"}},
                   {"id": 4, "method": "GET", "path": "/healthz"})
            r = [s.read() for _ in range(4)]
            self.assertEqual([(x["id"], x["status"]) for x in r], [(1, 401), (2, 401), (3, 200), (4, 200)], r)
            check_problem_body(self, r[0]["body"], 401, "unauthorized", None)
            self.assertEqual(r[2]["body"], {"worlds": []})
        finally:
            s.close()
