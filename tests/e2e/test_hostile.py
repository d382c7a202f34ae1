"""Hostile input (issue 8, sections Input, Geometry and Protocol) through
real HTTP and the stream transport: whatever arrives is answered with a
clear status (a problem+json body for a refused request, finite numbers for
an answered one) within a generous time bound, the daemon keeps serving
others, and the world it holds is byte-identical afterwards.

The time bounds are not benchmarks: they catch a hang or a quadratic blow-up
on a CI machine with two slow cores, possibly under AddressSanitizer."""

import json
import math
import random
import socket
import threading
import time

from harness import (DaemonCase, _complete_response, _parse_raw_response, check_problem_body, json_only,
                     strict_json)
from wire import body_item, box, pair, pose, posed, sphere

FAST = 2.0   # seconds for one hostile request of ordinary size
SLOW = 10.0  # seconds for one of several megabytes
MAX_PROBLEM_BYTES = 4096  # a problem body never echoes a huge input back

KEEP = "keep"
TETRA = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
KEEP_SHAPES = [
    body_item("a", sphere(1)),
    body_item("b", box(1, 1, 1), (1.5, 0, 0), velocity=[1, 0, 0]),
    body_item("c", {"type": "convex", "points": TETRA, "radius": 0.1}, (0, 4, 0), layer=2, mask=2),
    body_item("d", {"type": "capsule", "radius": 0.5, "half_height": 1}, (0, -4, 0)),
    body_item("m", {"type": "mesh", "vertices": TETRA, "triangles": [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]},
              (10, 0, 0)),
]
# Two unit spheres whose centres are 3 apart: distance 3 - 1 - 1 = 1.
PROBE_PAIR = pair(posed(sphere(1)), posed(sphere(1), (3, 0, 0)))

# The paths a hostile body is sent to: the stateless pair test and every
# request that would change the world if it were accepted.
MUTATING = [("PUT", "/v1/worlds/keep/shapes/n"), ("POST", "/v1/worlds/keep/batch"),
            ("PUT", "/v1/worlds/keep")]
TARGETS = [("POST", "/v1/pair")] + MUTATING


# Members that are always numbers (or vectors of numbers) in an answer: a
# null there is how the writer spells a non-finite double.
NUMERIC = {"distance", "depth", "time", "gap", "position", "point", "normal", "a", "b", "radius", "offset",
           "half_extents", "half_height", "velocity", "rotation", "skin"}


def nonfinite(value, where=""):
    """The JSON pointer of the first number in value that is not finite
    (Python reads 1e999 as inf) or written as null where a number belongs,
    or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return where or "/"
    if isinstance(value, dict):
        items = value.items()
        for k, v in items:
            if v is None and k in NUMERIC:
                return "%s/%s (null)" % (where, k)
    elif isinstance(value, list):
        items = enumerate(value)
        if None in value and any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            return "%s (null in a vector)" % (where or "/")
    else:
        return None
    for k, v in items:
        bad = nonfinite(v, "%s/%s" % (where, k))
        if bad:
            return bad
    return None


def magnitude(value):
    """The largest absolute number in a JSON value (0 when none)."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return max([magnitude(v) for v in value] + [0])
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return abs(value)
    return 0


def broken_invariant(value, slack, where=""):
    """The first place in an answer that breaks the contract of API.md
    whatever the input: a normal that is not unit, a negative distance or
    depth, a manifold point deeper outside than slack (the touching
    tolerance, relative to the request's coordinates), a time of impact
    outside [0, 1]. None when there is none."""
    if isinstance(value, list):
        for i, v in enumerate(value):
            bad = broken_invariant(v, slack, "%s/%d" % (where, i))
            if bad:
                return bad
        return None
    if not isinstance(value, dict):
        return None
    for k, v in value.items():
        here = "%s/%s" % (where, k)
        if k == "normal" and isinstance(v, list) and len(v) == 3:
            length = math.sqrt(sum(x * x for x in v))
            if abs(length - 1) > 1e-6:
                return "%s = %r is not a unit vector" % (here, v)
        elif k in ("distance", "depth") and isinstance(v, (int, float)) and v < 0 and "/points/" not in here:
            return "%s = %r < 0" % (here, v)
        elif k == "depth" and isinstance(v, (int, float)) and v < -slack:
            return "%s = %r < -%g" % (here, v, slack)
        elif k == "time" and isinstance(v, (int, float)) and not 0 <= v <= 1:
            return "%s = %r is outside [0, 1]" % (here, v)
        bad = broken_invariant(v, slack, here)
        if bad:
            return bad
    return None


def exchange(port, payload, timeout, shut_write=False):
    """Writes payload on a new connection from a second thread while this
    one reads, so an answer sent before the server took the whole payload
    (a 413 on the head) is read before a reset can discard it. Returns
    (status, headers, body, seconds); status is None when the server closed
    the connection without a complete response, and "timeout" when it did
    neither within timeout."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)

    def write():
        try:
            s.sendall(payload)
            if shut_write:
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server answered and closed first

    writer = threading.Thread(target=write)
    t0 = time.monotonic()
    writer.start()
    data = b""
    timed_out = False
    try:
        while not _complete_response(data):
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                break
            except socket.timeout:
                timed_out = True
                break
            if not b:
                break
            data += b
    finally:
        took = time.monotonic() - t0
        try:
            s.shutdown(socket.SHUT_RDWR)  # wakes a writer blocked in sendall
        except OSError:
            pass
        writer.join()
        s.close()
    if not _complete_response(data):
        return ("timeout" if timed_out else None), {}, data, took
    status, headers, body = _parse_raw_response(data)
    return status, headers, body, took


def http_head(method, path, extra=()):
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1", "Content-Type: application/json"]
    return ("\r\n".join(lines + list(extra)) + "\r\n\r\n").encode()


def stream_line(id_, method, path, body_text=None):
    """A stream request line with body_text (JSON text, inserted verbatim)."""
    head = '{"id":%s,"method":%s,"path":%s' % (json.dumps(id_), json.dumps(method), json.dumps(path))
    return (head + ("" if body_text is None else ',"body":' + body_text) + "}\n").encode("utf-8", "surrogateescape")


class HostileCase(DaemonCase):
    """A daemon holding world "keep" (KEEP_SHAPES), and the checks run after
    each group of hostile requests."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        d = cls.daemon
        for method, path, body, status in (("PUT", "/v1/worlds/keep", {"skin": 0.05}, 201),
                                           ("POST", "/v1/worlds/keep/batch", {"upsert": KEEP_SHAPES}, 200)):
            r = d.request(method, path, body)
            if r.status != status:
                raise AssertionError("setting up %s: %s" % (path, r.describe()))
        r = d.request("GET", "/v1/worlds/keep/export")
        if r.status != 200 or len(r.json["shapes"]) != len(KEEP_SHAPES):
            raise AssertionError("export of the new world: " + r.describe())
        cls.before = r.raw

    def assertIntact(self, what):
        """The daemon lives, "keep" is byte-identical, and a normal request
        is answered right over HTTP and over a new stream connection."""
        self.assertIsNone(self.daemon.proc.poll(), "collisiond died after %s; %s" % (what, self.daemon.log_tail()))
        r = self.req("GET", "/v1/worlds/keep/export")
        self.assertEqual(r.status, 200, "%s: export -> %s" % (what, r.describe()))
        self.assertEqual(r.raw, self.before, "%s changed world keep" % what)
        r = self.req("POST", "/v1/pair", PROBE_PAIR)
        self.assertEqual(r.status, 200, "%s: the probe pair -> %s" % (what, r.describe()))
        self.assertEqual(r.json["distance"], 1.0, what)
        s = self.daemon.stream(timeout=FAST * 5)
        try:
            s.send({"id": "probe", "method": "POST", "path": "/v1/pair", "body": PROBE_PAIR})
            reply = s.read_line()
        finally:
            s.close()
        self.assertEqual((reply["id"], reply["status"], reply["body"]["distance"]), ("probe", 200, 1.0),
                         "%s: the stream probe -> %r" % (what, reply))

    def assertRefused(self, status, content_type, raw, took, statuses, bound, what):
        """A refused HTTP request: one of statuses, a small problem body, in time."""
        text = raw[:300].decode("utf-8", "replace")
        self.assertIn(status, statuses, "%s -> %s %s" % (what, status, text))
        self.assertTrue(content_type.startswith("application/problem+json"),
                        "%s: content type %r" % (what, content_type))
        self.assertLessEqual(len(raw), MAX_PROBLEM_BYTES, "%s: a problem body of %d bytes" % (what, len(raw)))
        check_problem_body(self, strict_json(raw), status, None, None, what)
        self.assertLess(took, bound, "%s: answered in %.2f s" % (what, took))

    def refuse_http(self, method, path, data, statuses=(400,), bound=FAST, what=""):
        """Sends data (bytes or str) to path; it must be refused."""
        t0 = time.monotonic()
        r = self.req(method, path, data=data)
        took = time.monotonic() - t0
        what = "%s %s %s" % (method, path, what)
        self.assertRefused(r.status, r.content_type, r.raw, took, statuses, bound, what)
        return r.json

    def refuse_stream(self, lines, statuses=(400,), bound=FAST, what=""):
        """Sends each of lines (bytes) on one stream connection, then a probe
        on the same connection: each line must get a refusal reply (its id,
        or null when the line is not JSON) and the connection must stay
        usable."""
        s = self.daemon.stream(timeout=bound * 5)
        try:
            for i, line in enumerate(lines):
                t0 = time.monotonic()
                s.send_raw(line)
                reply = s.read_line()
                took = time.monotonic() - t0
                where = "%s, stream line %d (%r...)" % (what, i, line[:80])
                self.assertIsNotNone(reply, "%s: the connection was closed" % where)
                self.assertIn(reply["status"], statuses, "%s -> %r" % (where, str(reply)[:300]))
                self.assertLess(took, bound, "%s: answered in %.2f s" % (where, took))
                body = reply["body"]
                self.assertLessEqual(len(json.dumps(body)), MAX_PROBLEM_BYTES, where)
                check_problem_body(self, body, reply["status"], None, None, where)
            s.send({"id": "same", "method": "GET", "path": "/healthz"})
            reply = s.read_line()
            self.assertEqual((reply["id"], reply["status"]), ("same", 200),
                             "%s: the connection should stay usable: %r" % (what, reply))
        finally:
            s.close()


@json_only("hostile JSON text: nesting, huge strings, duplicate keys, bad UTF-8 and numbers in JSON syntax "
           "(test_msgpack_hostile.py has the MessagePack twins)")
class HostileBodies(HostileCase):
    """Bodies no parser should choke on, over HTTP and the stream, with the
    default --max-body (16 MiB)."""

    FLAGS = ("--timeout", "10")
    MAX_BODY = 16 * 1024 * 1024

    def everywhere(self, text, statuses=(400,), bound=FAST, what=""):
        """text refused on every target over HTTP and over the stream."""
        for method, path in TARGETS:
            self.refuse_http(method, path, text, statuses, bound, what)
        raw = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
        self.refuse_stream([stream_line(i, m, p, raw.decode("utf-8", "surrogateescape"))
                            for i, (m, p) in enumerate(TARGETS)], statuses, bound, what)

    def test_deep_nesting(self):
        n = 300000
        for name, text in (("arrays", "[" * n + "]" * n),
                           ("objects", '{"a":' * n + "1" + "}" * n),
                           ("arrays in a field", '{"a":' + "[" * n + "]" * n + "}"),
                           ("objects in a shape", '{"a":{"shape":' + '{"x":' * n + "1" + "}" * (n + 2)),
                           ("unclosed", "[" * n)):
            with self.subTest(name):
                self.everywhere(text, what="%d levels of %s" % (n, name))
        self.assertIntact("deep nesting")

    def test_huge_strings(self):
        mb = "x" * (4 * 1024 * 1024)
        cases = [
            ("a 4 MB field value", '{"a":"%s","b":1}' % mb),
            ("a 4 MB key", '{"%s":1}' % mb),
            ("a 4 MB shape type", '{"shape":{"type":"%s","radius":1}}' % mb),
        ]
        for name, text in cases:
            with self.subTest(name):
                self.everywhere(text, bound=SLOW, what=name)
        batch = json.dumps({"upsert": [body_item(mb, sphere(1))]})
        self.refuse_http("POST", "/v1/worlds/keep/batch", batch, bound=SLOW, what="a 4 MB shape id")
        self.refuse_http("PUT", "/v1/worlds/keep/shapes/n", json.dumps({"shape": sphere(1), "pad": mb}),
                         bound=SLOW, what="a 4 MB unknown field")
        self.refuse_stream([stream_line(1, "PUT", "/v1/worlds/" + mb)], (400, 404), SLOW, "a 4 MB path")
        self.assertIntact("huge strings")

    def test_duplicate_keys(self):
        upsert = json.dumps(body_item("n", sphere(1)))
        cases = [
            '{"a":1,"a":1}',
            '{"shape":{"type":"sphere","radius":1,"radius":1}}',
            '{"upsert":[%s],"upsert":[%s]}' % (upsert, upsert),
            '{"upsert":[{"id":"n","id":"o","shape":{"type":"sphere","radius":1}}]}',
            '{"settings":{"skin":0,"skin":1},"shapes":[]}',
            '{"shapes":[],"shapes":[]}',
        ]
        for text in cases:
            with self.subTest(text):
                self.everywhere(text, what="duplicate keys " + text)
        self.assertIntact("duplicate keys")

    def test_invalid_utf8(self):
        sequences = [b"\xff", b"\xfe\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82",
                     b"\x80", b"\xf8\x88\x80\x80\x80"]
        for seq in sequences:
            for shape in ((b'{"shape":{"type":"sph' + seq + b'ere","radius":1}}'),
                          (b'{"upsert":[{"id":"n' + seq + b'","shape":{"type":"sphere","radius":1}}]}'),
                          (b'{"' + seq + b'":1}'),
                          (b'{"shape":{"type":"sphere","radius":1}}' + seq)):
                with self.subTest(seq=seq, body=shape):
                    self.everywhere(shape, what="invalid UTF-8 %r" % seq)
        self.refuse_http("POST", "/v1/pair", '{"a":"\\ud800"}', what="a lone surrogate escape")
        self.refuse_http("POST", "/v1/pair", '{"a":"\\udc00\\ud800"}', what="reversed surrogates")
        self.assertIntact("invalid UTF-8")

    def test_nul_in_keys_and_strings(self):
        cases = [
            '{"upsert":[{"id":"n\\u0000x","shape":{"type":"sphere","radius":1}}]}',
            '{"shape":{"type":"sphere\\u0000x","radius":1}}',
            '{"shape":{"type":"sphere","radius":1},"layer\\u0000":1}',
            '{"a\\u0000":1}',
            '{"\\u0000":1}',
            '{"remove":["a\\u0000"]}',
        ]
        for text in cases:
            with self.subTest(text):
                self.everywhere(text, what="NUL " + text)
        # a path that would name "keep" if it were cut at the NUL
        self.refuse_stream([b'{"id":1,"method":"DELETE","path":"/v1/worlds/keep\\u0000x"}\n',
                            b'{"id":2,"method":"DELETE","path":"/v1/worlds/keep/shapes/a\\u0000"}\n',
                            b'{"id":3,"method":"DEL\\u0000ETE","path":"/v1/worlds/keep"}\n'],
                           (400, 404, 405), what="NUL in a stream path or method")
        self.assertIntact("NUL characters")

    def test_numbers_that_overflow_a_double(self):
        for big in ("1e999", "-1e999", "1" + "0" * 400, "-" + "9" * 400, "1" * 400 + ".5", "0." + "0" * 400 + "1e999"):
            for text in ('{"shape":{"type":"sphere","radius":%s}}' % big,
                         '{"shape":{"type":"sphere","radius":1},"pose":{"position":[%s,0,0]}}' % big,
                         '{"upsert":[{"id":%s,"shape":{"type":"sphere","radius":1}}]}' % big,
                         '{"move":[{"id":"a","pose":{"position":[0,%s,0]}}]}' % big,
                         '{"settings":{"skin":%s},"shapes":[]}' % big,
                         '{"skin":%s}' % big,
                         '{"a":{"shape":{"type":"sphere","radius":1}},"b":{"shape":{"type":"sphere","radius":1}},'
                         '"skin":%s}' % big):
                with self.subTest(text[:120]):
                    self.everywhere(text, what="overflow " + text[:80])
        self.assertIntact("overflowing numbers")

    def test_empty_and_non_object_bodies(self):
        for text in ("", " ", "\r\n", "null", "[]", "[{}]", '"x"', "1", "-0", "true", "false", "{", "}", "{}x"):
            for method, path in [("POST", "/v1/pair"), ("POST", "/v1/pairs"), ("PUT", "/v1/worlds/keep/shapes/n"),
                                 ("POST", "/v1/worlds/keep/sweep"), ("POST", "/v1/worlds/keep/overlap"),
                                 ("POST", "/v1/worlds/keep/raycast")]:
                with self.subTest(body=text, path=path):
                    self.refuse_http(method, path, text, what="body %r" % text)
            if text.strip() and text not in ("null",):
                for method, path in MUTATING + [("POST", "/v1/worlds/keep/contacts")]:
                    self.refuse_http(method, path, text, what="body %r" % text)
        lines = [stream_line(i, "POST", "/v1/pair", body) for i, body in enumerate(
            (None, "null", "[]", '"x"', "1", "true", "{}"))]
        lines += [stream_line(9, "POST", "/v1/worlds/keep/batch", body) for body in ("[]", '"x"', "1", "false")]
        lines += [b"null\n", b"[]\n", b'"x"\n', b"1\n", b"{}\n", b'{"id":1}\n', b'{"id":1,"method":"GET"}\n',
                  b'{"id":1,"path":"/healthz"}\n', b'{"id":1,"method":1,"path":"/healthz"}\n',
                  b'{"id":1,"method":"GET","path":["/healthz"]}\n', b'{"id":1,"method":"GET","path":"/healthz","x":1}\n']
        self.refuse_stream(lines, what="empty and non-object bodies")
        self.assertIntact("empty and non-object bodies")

    def wrong_type_cases(self, body, prefix=()):
        """(path, value) for every field of body and every JSON value of
        another type."""
        others = [None, True, "s", 1.5, [], {}]

        def kind(v):
            return type(v).__name__ if not isinstance(v, (int, float)) or isinstance(v, bool) else "number"

        def walk(value, path):
            if path:
                for other in others:
                    if kind(other) != kind(value):
                        yield path, other
            if isinstance(value, dict):
                for k, v in value.items():
                    yield from walk(v, path + (k,))
            elif isinstance(value, list):
                for i, v in enumerate(value):
                    yield from walk(v, path + (i,))

        return list(walk(body, tuple(prefix)))

    @staticmethod
    def replaced(body, path, value):
        body = json.loads(json.dumps(body))
        node = body
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
        return body

    def test_wrong_type_at_every_field_of_a_pair(self):
        bodies = [
            pair({"shape": {"type": "convex", "points": TETRA, "radius": 0.1},
                  "pose": {"position": [0, 0, 0], "rotation": [0, 0, 0, 1]}},
                 {"shape": box(1, 1, 1), "pose": {"position": [3, 0, 0], "axes": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}},
                 skin=0.01, explain=True),
            pair({"shape": {"type": "capsule", "radius": 1, "half_height": 2}, "pose": pose((0, 0, 0))},
                 {"shape": {"type": "triangle", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]]},
                  "pose": pose((5, 0, 0))}),
        ]
        lines = []
        expected = []
        for body in bodies:
            r = self.req("POST", "/v1/pair", body)
            self.assertEqual(r.status, 200, "the unaltered body must be valid: " + r.describe())
            for path, value in self.wrong_type_cases(body):
                if path[-1] == "pose" and value is None:
                    continue  # "pose": null is the identity (docs/API.md 2.1)
                pointer = "".join("/%s" % k for k in path)
                bad = self.replaced(body, path, value)
                with self.subTest(pointer=pointer, value=value):
                    p = self.refuse_http("POST", "/v1/pair", json.dumps(bad), what="%s = %r" % (pointer, value))
                    self.assertEqual((p["type"], p.get("pointer")), ("urn:collisiond:problem:wrong-type", pointer),
                                     "%s = %r: %r" % (pointer, value, p))
                lines.append(stream_line(len(lines), "POST", "/v1/pair", json.dumps(bad)))
                expected.append(pointer)
            # the same inside /v1/pairs, once per field
            for path, value in self.wrong_type_cases(body, ())[::6]:
                if path[-1] == "pose" and value is None:
                    continue
                pointer = "/pairs/1" + "".join("/%s" % k for k in path)
                bad = {"pairs": [body, self.replaced(body, path, value)]}
                with self.subTest(pointer=pointer, value=value):
                    p = self.refuse_http("POST", "/v1/pairs", json.dumps(bad), what="%s = %r" % (pointer, value))
                    self.assertEqual(p.get("pointer"), pointer, p)
        # all of them again, pipelined on one stream connection
        s = self.daemon.stream(timeout=FAST * 10)
        try:
            s.send_raw(b"".join(lines))
            for i, pointer in enumerate(expected):
                reply = s.read_line()
                self.assertEqual((reply["id"], reply["status"], reply["body"].get("pointer")), (i, 400, pointer),
                                 str(reply)[:300])
        finally:
            s.close()
        self.assertIntact("wrong types")

    def test_oversized_hull_and_ray_count(self):
        points = [[i * 1e-3, (i * 7919 % 1000) * 1e-3, (i * 104729 % 1000) * 1e-3] for i in range(100000)]
        hull = {"type": "convex", "points": points}
        self.refuse_http("POST", "/v1/pair", json.dumps(pair(posed(hull), posed(sphere(1)))), (413, 422), SLOW,
                         "a 100,000-point hull")
        self.refuse_http("PUT", "/v1/worlds/keep/shapes/n", json.dumps({"shape": hull}), (413, 422), SLOW,
                         "a 100,000-point hull")
        self.refuse_http("POST", "/v1/worlds/keep/batch", json.dumps({"upsert": [body_item("n", hull)]}),
                         (413, 422), SLOW, "a 100,000-point hull")
        self.refuse_stream([stream_line(1, "PUT", "/v1/worlds/keep/shapes/n", json.dumps({"shape": hull}))],
                           (413, 422), SLOW, "a 100,000-point hull")
        ray = '{"origin":[0,0,0],"direction":[1,0,0]}'
        rays = '{"rays":[' + ",".join([ray] * 1000000) + "]}"
        status, headers, raw, took = exchange(
            self.daemon.http_port,
            http_head("POST", "/v1/worlds/keep/raycast", ["Content-Length: %d" % len(rays)]) + rays.encode(), SLOW * 3)
        self.assertRefused(status, headers.get("content-type", ""), raw, took, (413, 422), SLOW,
                           "a million rays (%d bytes)" % len(rays))
        self.assertIntact("a huge hull and a million rays")

    def test_body_just_over_the_limit(self):
        n = self.MAX_BODY + 1
        pad = b'{"a":"' + b"x" * (n - 8) + b'"}'
        self.assertEqual(len(pad), n)
        head = http_head("POST", "/v1/worlds/keep/batch", ["Content-Length: %d" % n])
        status, headers, raw, took = exchange(self.daemon.http_port, head, SLOW)
        self.assertRefused(status, headers.get("content-type", ""), raw, took, (413,), FAST,
                           "Content-Length %d, no body sent" % n)
        status, headers, raw, took = exchange(self.daemon.http_port, head + pad, SLOW * 2)
        self.assertRefused(status, headers.get("content-type", ""), raw, took, (413,), SLOW,
                           "Content-Length %d with the body" % n)
        chunk = 1 << 20
        chunked = http_head("POST", "/v1/worlds/keep/batch", ["Transfer-Encoding: chunked"]) + b"".join(
            b"%x\r\n%s\r\n" % (len(pad[i:i + chunk]), pad[i:i + chunk]) for i in range(0, n, chunk)) + b"0\r\n\r\n"
        status, headers, raw, took = exchange(self.daemon.http_port, chunked, SLOW * 2)
        self.assertRefused(status, headers.get("content-type", ""), raw, took, (413,), SLOW,
                           "a chunked body of %d bytes" % n)
        s = self.daemon.stream(timeout=SLOW * 2)
        try:
            t0 = time.monotonic()
            try:
                s.send_raw(b'{"id":1,"method":"POST","path":"/v1/worlds/keep/batch","body":' + pad + b"}\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused and closed before the whole line was written
            lines, closed = s.read_until_closed()
            took = time.monotonic() - t0
        finally:
            s.close()
        self.assertTrue(closed, "a line over --max-body should close the connection")
        self.assertEqual([(x["id"], x["status"]) for x in lines], [(None, 413)], str(lines)[:300])
        self.assertLess(took, SLOW)
        self.assertIntact("bodies over --max-body")

    def test_sixteen_megabytes_of_tiny_values(self):
        # just under --max-body, so the body is read and parsing starts
        room = self.MAX_BODY - 200
        zeros = ",".join(["0"] * (room // 2))
        cases = [
            ("POST", "/v1/pair", '{"a":{"shape":{"type":"convex","points":[%s]}},"b":{"shape":{"type":"sphere",'
                                 '"radius":1}}}' % zeros),
            ("PUT", "/v1/worlds/keep/shapes/n", '{"shape":{"type":"convex","points":[[%s]]}}' % zeros),
            ("POST", "/v1/worlds/keep/raycast", '{"rays":[%s]}' % zeros),
            ("POST", "/v1/worlds/keep/batch", '{"remove":[%s]}' % zeros),
        ]
        for method, path, text in cases:
            self.assertLessEqual(len(text), self.MAX_BODY)
            with self.subTest(path=path):
                # 8 million values take far more than --max-request-memory
                self.refuse_http(method, path, text, (413,), SLOW, "%d bytes of tiny values" % len(text))
        self.assertIntact("16 MiB of tiny values")


class HostileGeometry(HostileCase):
    """Extreme but well-formed geometry: every answer is finite and keeps the
    contract (unit normals, distances and depths >= 0, times in [0, 1]), or
    the request is refused with 400/422; never a hang."""

    TINY = 5e-324

    def shapes(self):
        """(name, shape) of extreme shapes: huge ones both far beyond any
        scene (1e300) and at 1e50."""
        t = self.TINY
        out = [
            ("sphere 5e-324", sphere(t)),
            ("sphere max", sphere(1.7976931348623157e308)),
            ("box 5e-324", box(t, t, t)),
            ("box flat", box(1, 0, 1)),
            ("box point", box(0, 0, 0)),
            ("capsule 5e-324", {"type": "capsule", "radius": t, "half_height": t}),
            ("convex all equal", {"type": "convex", "points": [[1, 1, 1]] * 8}),
            ("convex collinear", {"type": "convex", "points": [[i, 2 * i, 3 * i] for i in range(6)]}),
            ("convex coplanar", {"type": "convex", "points": [[i, j, 0] for i in range(3) for j in range(3)]}),
            ("convex coplanar rounded", {"type": "convex", "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0]], "radius": 0.5}),
            ("convex tiny", {"type": "convex", "points": [[t * x for x in p] for p in TETRA]}),
            ("triangle all equal", {"type": "triangle", "vertices": [[1, 2, 3]] * 3}),
            ("triangle collinear", {"type": "triangle", "vertices": [[0, 0, 0], [1, 1, 1], [2, 2, 2]]}),
        ]
        for h in (1e300, 1e50):
            out += [
                ("sphere %g" % h, sphere(h)),
                ("sphere %g" % (1 / h), sphere(1 / h)),
                ("box %g" % h, box(h, h, h)),
                ("box %g x %g" % (h, 1 / h), box(h, 1 / h, 1)),
                ("capsule %g long, %g thin" % (h, 1 / h), {"type": "capsule", "radius": 1 / h, "half_height": h}),
                ("convex %g" % h, {"type": "convex", "points": [[h * x for x in p] for p in TETRA]}),
                ("convex ratio %g" % h, {"type": "convex", "points": [[0, 0, 0], [h, 0, 0], [0, 1 / h, 0], [0, 0, 1]]}),
                ("triangle %g" % h, {"type": "triangle", "vertices": [[-h, -h, 0], [h, -h, 0], [0, h, 0]]}),
                ("triangle sliver %g" % h, {"type": "triangle", "vertices": [[0, 0, 0], [h, 0, 0], [h, 1 / h, 0]]}),
            ]
        return out

    def poses(self):
        out = [("origin", pose((0, 0, 0))),
               ("near max", pose((1.7e308, -1.7e308, 0))),
               ("at 5e-324", pose((self.TINY, 0, 0), rotation=[0, 0.6, 0, 0.8]))]
        for h in (1e300, 1e50):
            out += [("at %g" % h, pose((h, h, -h))),
                    ("at -%g rotated" % h, pose((-h, 0, h), rotation=[0.3826834323650898, 0, 0, 0.9238795325112867]))]
        return out

    def assertSound(self, status, body, took, what, allowed=(200, 400, 422), request=None):
        self.assertIn(status, allowed, "%s -> %s %s" % (what, status, str(body)[:300]))
        self.assertLess(took, FAST, "%s took %.2f s" % (what, took))
        bad = nonfinite(body)
        self.assertIsNone(bad, "%s: a non-finite number at %s: %s" % (what, bad, str(body)[:300]))
        if status < 300:
            # skin plus the touching tolerance of the box and triangle tests
            # (1e-12 of the coordinates' magnitude), with room to spare
            slack = (request or {}).get("skin", 0) + 1e-9 * min(magnitude(request), 1e50)
            bad = broken_invariant(body, slack)
            self.assertIsNone(bad, "%s: %s: %s" % (what, bad, str(body)[:400]))
        else:
            check_problem_body(self, body, status, None, None, what)

    def timed(self, method, path, body):
        t0 = time.monotonic()
        r = self.req(method, path, body)
        took = time.monotonic() - t0
        self.assertIsNone(r.json_error, "%s %s %s: %s" % (method, path, json.dumps(body)[:200], r.json_error))
        return r.status, r.json, took

    def extreme_pairs(self):
        """(what, pair body): each extreme shape against an ordinary box and
        sphere and against each other extreme shape, at extreme poses."""
        shapes, poses = self.shapes(), self.poses()
        out = []
        plain = [("unit box", box(1, 1, 1)), ("unit sphere", sphere(1))]
        for i, (na, sa) in enumerate(shapes):
            for j, (nb, sb) in enumerate(plain + shapes):
                pa_name, pa = poses[(i + j) % len(poses)]
                pb_name, pb = poses[(i + 2 * j + 1) % len(poses)]
                out.append(("%s %s vs %s %s" % (na, pa_name, nb, pb_name),
                            pair({"shape": sa, "pose": pa}, {"shape": sb, "pose": pb}, explain=True)))
                out.append(("%s vs %s both at origin" % (na, nb), pair(posed(sa), posed(sb, (0.5, 0, 0)))))
        return out

    def test_pair(self):
        cases = self.extreme_pairs()
        for what, body in cases:
            status, answer, took = self.timed("POST", "/v1/pair", body)
            self.assertSound(status, answer, took, "/v1/pair " + what, request=body)
        self.assertIntact("extreme pairs")

    def test_pairs_and_stream(self):
        cases = self.extreme_pairs()
        step = 50
        for k in range(0, len(cases), step):
            chunk = cases[k:k + step]
            status, answer, took = self.timed("POST", "/v1/pairs", {"pairs": [b for _, b in chunk]})
            # a batch is refused as a whole when one pair is refused
            self.assertSound(status, answer, took, "/v1/pairs from %d" % k, request={"pairs": [b for _, b in chunk]})
            if status == 200:
                self.assertEqual(len(answer["results"]), len(chunk))
        s = self.daemon.stream(timeout=FAST * 10)
        try:
            s.send(*[{"id": i, "method": "POST", "path": "/v1/pair", "body": b} for i, (_, b) in enumerate(cases)])
            t0 = time.monotonic()
            for i, (what, body) in enumerate(cases):
                reply = s.read_line()
                self.assertEqual(reply["id"], i)
                self.assertSound(reply["status"], reply["body"], 0, "stream " + what, request=body)
            self.assertLess(time.monotonic() - t0, FAST * 10, "%d extreme pairs on the stream" % len(cases))
        finally:
            s.close()
        self.assertIntact("extreme /v1/pairs and stream pairs")

    def test_world_queries(self):
        # the world holds shapes of size 1e50: its touching tolerance scales with them
        WORLD_SCALE = {"magnitude": 1e50}
        self.ok("PUT", "/v1/worlds/geo", {"skin": 0.01}, status=201)
        h, t = 1e300, self.TINY
        stored = []
        for i, (name, shape) in enumerate(self.shapes()):
            pname, p = self.poses()[i % len(self.poses())]
            velocity = [[h, -h, 0], [t, 0, 0], [0, 0, 0], [1e50, 1e50, -1e50], [1e308, 1e308, 1e308]][i % 5]
            body = {"shape": shape, "pose": p, "velocity": velocity}
            status, answer, took = self.timed("PUT", "/v1/worlds/geo/shapes/s%d" % i, body)
            self.assertSound(status, answer, took, "PUT %s at %s" % (name, pname), (200, 201, 400, 422))
            if magnitude(body) <= 1e50:
                self.assertEqual(status, 201, "%s at %s, velocity %s: %s" % (name, pname, velocity, answer))
            if status == 201:
                stored.append("s%d" % i)
        for k, offset in enumerate((-h, -1e50)):
            plane = {"type": "plane", "normal": [0, 1, 0], "offset": offset}
            status, answer, took = self.timed("PUT", "/v1/worlds/geo/shapes/ground%d" % k, {"shape": plane})
            self.assertSound(status, answer, took, "a plane at offset %g" % offset, (200, 201, 400, 422))
        status, answer, took = self.timed("GET", "/v1/worlds/geo/pairs", None)
        self.assertSound(status, answer, took, "broadphase pairs", request=WORLD_SCALE)
        for body in ({}, {"dt": 0.0166}, {"dt": 1e300}, {"dt": 1e50}, {"dt": t}, {"ids": stored[::4], "dt": 1}):
            status, answer, took = self.timed("POST", "/v1/worlds/geo/contacts", body)
            self.assertSound(status, answer, took, "contacts %s" % body, request=WORLD_SCALE)
        rays = [{"origin": o, "direction": d} for o in ([0, 0, 0], [h, h, -h], [1e50, -1e50, 1e50], [-1.7e308, 0, 0],
                                                      [t, t, t])
                for d in ([1, 0, 0], [t, 0, 0], [h, h, h], [1e50, 1e50, 0], [1.7e308, 1.7e308, 0], [-1, 1e-300, 0])]
        rays += [dict(r, max_distance=m) for r in rays[:6] for m in (h, t, 1e50, 3.4028234663852886e38,
                                                                    1.7976931348623157e308)]
        for all_ in (False, True):
            for ray in rays:
                status, answer, took = self.timed("POST", "/v1/worlds/geo/raycast", {"rays": [ray], "all": all_})
                self.assertSound(status, answer, took, "raycast %s all=%s" % (ray, all_), request=WORLD_SCALE)
        status, answer, took = self.timed("POST", "/v1/worlds/geo/raycast", {"rays": rays, "all": True})
        self.assertSound(status, answer, took, "all the extreme rays at once", request=WORLD_SCALE)
        for name, shape in self.shapes()[::3]:
            for pname, p in self.poses():
                for tr in ([h, 0, 0], [1e50, -1e50, 0], [t, 0, 0], [0, 0, 0], [-1.7e308, 1.7e308, 0]):
                    status, answer, took = self.timed("POST", "/v1/worlds/geo/sweep",
                                                      {"shape": shape, "pose": p, "translation": tr})
                    self.assertSound(status, answer, took, "sweep %s at %s by %s" % (name, pname, tr), request=WORLD_SCALE)
                status, answer, took = self.timed("POST", "/v1/worlds/geo/overlap", {"shape": shape, "pose": p})
                self.assertSound(status, answer, took, "overlap %s at %s" % (name, pname), request=WORLD_SCALE)
        status, answer, took = self.timed("GET", "/v1/worlds/geo/export", None)
        self.assertSound(status, answer, took, "export of extreme shapes")
        self.ok("DELETE", "/v1/worlds/geo", status=204)
        self.assertIntact("extreme world queries")


@json_only("broken HTTP and JSON-lines framing built from JSON text (test_msgpack_hostile.py breaks "
           "MessagePack bodies and frames)")
class HostileProtocol(HostileCase):
    """Broken HTTP and stream framing, with a short --timeout so a stalled
    client is cut off within seconds."""

    TIMEOUT = 2.0
    FLAGS = ("--timeout", "2", "--max-body", "65536")

    def raw(self, payload, timeout=FAST * 5, shut_write=False):
        return exchange(self.daemon.http_port, payload, timeout, shut_write)

    def test_content_length_larger_than_sent(self):
        body = json.dumps({"upsert": [body_item("n", sphere(1))]}).encode()
        head = http_head("POST", "/v1/worlds/keep/batch", ["Content-Length: %d" % (len(body) + 100)])
        status, headers, raw, took = self.raw(head + body, timeout=self.TIMEOUT * 5)
        self.assertNotEqual(status, "timeout", "a body that never comes should be cut off after --timeout")
        self.assertLess(took, self.TIMEOUT + 3, "cut off %.1f s after the body stalled" % took)
        if status is not None:
            self.assertIn(status, (400, 408, 413), "%s %r" % (status, raw[:300]))
        self.assertIntact("a Content-Length larger than the body")

    def test_content_length_smaller_than_sent(self):
        body = json.dumps(PROBE_PAIR).encode()
        head = http_head("POST", "/v1/pair", ["Content-Length: %d" % (len(body) - 5)])
        status, headers, raw, took = self.raw(head + body)
        self.assertRefused(status, headers.get("content-type", ""), raw, took, (400,), FAST,
                           "a body cut by its Content-Length")
        # A complete request, then bytes that are no request: the first is
        # answered, the rest is a malformed request (400) or closed.
        data = http_head("POST", "/v1/pair", ["Content-Length: %d" % len(body)]) + body + b"GARBAGE{}\r\n\r\n"
        s = socket.create_connection(("127.0.0.1", self.daemon.http_port), timeout=FAST * 5)
        try:
            s.sendall(data)
            got = b""
            t0 = time.monotonic()
            while True:
                try:
                    b = s.recv(65536)
                except (ConnectionResetError, socket.timeout):
                    break
                if not b:
                    break
                got += b
            took = time.monotonic() - t0
        finally:
            s.close()
        self.assertTrue(got.startswith(b"HTTP/1.1 200"), got[:300])
        first_end = got.index(b"\r\n\r\n") + 4
        status, headers, first = _parse_raw_response(got)
        length = int(headers["content-length"])
        self.assertEqual(strict_json(first[:length])["distance"], 1.0)
        rest = got[first_end + length:]
        if rest:
            self.assertTrue(rest.startswith(b"HTTP/1.1 400"), "after the garbage: %r" % rest[:300])
        self.assertLess(took, self.TIMEOUT + 3, "the connection should be answered and closed")
        self.assertIntact("bytes after a Content-Length")

    def test_random_bytes_on_both_listeners(self):
        rng = random.Random(8)
        for k in range(12):
            noise = bytes(rng.getrandbits(8) for _ in range(rng.choice((1, 17, 700, 4096, 60000))))
            with self.subTest(http=k):
                status, headers, raw, took = self.raw(noise, timeout=self.TIMEOUT * 5, shut_write=True)
                self.assertNotEqual(status, "timeout", "random bytes on HTTP: neither answered nor closed")
                self.assertLess(took, self.TIMEOUT + 3)
                if status is not None:
                    self.assertTrue(400 <= status < 500, "random bytes -> %s %r" % (status, raw[:200]))
            with self.subTest(stream=k):
                s = self.daemon.stream(timeout=self.TIMEOUT * 5)
                try:
                    s.send_raw(noise + b"\n")
                    s.send({"id": "after", "method": "GET", "path": "/healthz"})
                    t0 = time.monotonic()
                    while True:
                        reply = s.read_line()
                        self.assertIsNotNone(reply, "random bytes closed the stream connection")
                        if reply["id"] == "after":
                            break
                        self.assertEqual((reply["id"], reply["status"]), (None, 400), str(reply)[:300])
                        check_problem_body(self, reply["body"], 400, None, None, "random bytes on the stream")
                    self.assertEqual(reply["status"], 200)
                    self.assertLess(time.monotonic() - t0, FAST)
                finally:
                    s.close()
        self.assertIntact("random bytes")

    def test_long_request_line_and_headers(self):
        status, headers, raw, took = self.raw(b"GET /v1/worlds/" + b"a" * 100000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        self.assertIn(status, (414, 431), "a 100 kB request line -> %s %r" % (status, raw[:200]))
        self.assertLess(took, FAST)
        many = ["X-Pad-%d: %s" % (i, "v" * 90) for i in range(1000)]
        status, headers, raw, took = self.raw(http_head("GET", "/v1/worlds", many))
        self.assertEqual(status, 431, "100 kB of headers -> %s %r" % (status, raw[:200]))
        self.assertLess(took, FAST)
        status, headers, raw, took = self.raw(http_head("GET", "/v1/worlds", ["X-Big: " + "v" * 100000]))
        self.assertEqual(status, 431, "one 100 kB header -> %s %r" % (status, raw[:200]))
        self.assertLess(took, FAST)
        self.assertIntact("long request lines and headers")

    def cut(self, payload):
        """Sends payload and closes at once (a client that died)."""
        s = socket.create_connection(("127.0.0.1", self.daemon.http_port), timeout=FAST)
        try:
            s.sendall(payload)
        finally:
            s.close()

    def test_requests_cut_short(self):
        body = json.dumps({"upsert": [body_item("n", sphere(1))], "remove": ["a"]}).encode()
        head = http_head("POST", "/v1/worlds/keep/batch", ["Content-Length: %d" % (len(body) + 1)])
        self.cut(head + body)  # the whole JSON, but not the whole body
        self.cut(head + body[:len(body) // 2])
        full = http_head("POST", "/v1/worlds/keep/batch", ["Content-Length: %d" % len(body)]) + body
        self.cut(full[:full.index(b"Content-Length") + 9])  # mid-headers
        self.cut(full[:full.index(b"\r\n\r\n") + 2])  # the head without its blank line
        chunked = http_head("POST", "/v1/worlds/keep/batch", ["Transfer-Encoding: chunked"])
        self.cut(chunked + b"%x\r\n" % len(body) + body + b"\r\n")  # no last chunk
        for cut_at in (len(body) // 2, len(body) - 1):
            s = self.daemon.stream(timeout=FAST)
            try:
                s.send_raw(stream_line(1, "POST", "/v1/worlds/keep/batch", body.decode())[:cut_at])
            finally:
                s.close()
        time.sleep(0.2)  # let the server see the closed connections
        self.assertIntact("requests cut short")
        # the same world change, sent whole, does apply (so the cuts were the reason)
        r = self.req("POST", "/v1/worlds/keep/batch", data=body)
        self.assertEqual(r.status, 200, r.describe())
        ids = [s["id"] for s in self.ok("GET", "/v1/worlds/keep/export")["shapes"]]
        self.assertEqual(sorted(ids), sorted([s["id"] for s in KEEP_SHAPES if s["id"] != "a"] + ["n"]))
        self.ok("POST", "/v1/worlds/keep/batch", {"upsert": [KEEP_SHAPES[0]], "remove": ["n"]})
        self.assertIntact("the batch undone")

    def test_stalled_stream_line_and_long_line(self):
        s = self.daemon.stream(timeout=self.TIMEOUT * 5)
        try:
            s.send_raw(b'{"id":1,"method":"POST","path":"/v1/worlds/keep/batch","body":{"remove":["a"]')
            t0 = time.monotonic()
            lines, closed = s.read_until_closed()
            took = time.monotonic() - t0
        finally:
            s.close()
        self.assertTrue(closed and lines == [], "a stalled half line should be closed without a reply: %r" % lines)
        self.assertLess(took, self.TIMEOUT + 3)
        s = self.daemon.stream(timeout=self.TIMEOUT * 5)
        try:
            try:
                s.send_raw(b'{"id":1,"method":"GET","path":"/' + b"a" * 100000 + b'"}\n')
            except (BrokenPipeError, ConnectionResetError):
                pass
            lines, closed = s.read_until_closed()
        finally:
            s.close()
        self.assertTrue(closed)
        self.assertEqual([(x["id"], x["status"]) for x in lines], [(None, 413)], str(lines)[:300])
        self.assertIntact("stalled and long stream lines")
