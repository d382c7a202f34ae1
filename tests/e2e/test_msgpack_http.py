"""MessagePack over HTTP (API.md section 1): a body is MessagePack by its
Content-Type, an answer by the request's Accept (RFC 9110 q-values; JSON
on a tie, for */*, or when Accept is absent), problems too, as
application/problem+msgpack; negotiated answers carry Vary: Accept.
Oracles: closed-form geometry (two unit spheres with centres 3 apart are
1 apart, nearest at x = 1 and x = 2, normal +x), the problem fields of
API.md section 3, and media types and headers as the negotiation rules
give them. Bodies are packed and read by python3-msgpack, not by the
daemon's own code."""

import msgpack

from harness import DaemonCase, check_problem_body
from wire import pair, posed, sphere

MP = "application/msgpack"
PROBLEM_MP = "application/problem+msgpack"
TOKEN = "mp-T0ken"

# Two unit spheres with centres 3 apart on x.
SPHERES = pair(posed(sphere(1)), posed(sphere(1), (3, 0, 0)))


def pack(value):
    return msgpack.packb(value, use_bin_type=True)


def unpack(raw):
    # strict_map_key: every key the daemon writes is a string
    return msgpack.unpackb(raw, raw=False, strict_map_key=True)


def vary_has_accept(r):
    return "accept" in [v.strip().lower() for v in r.headers.get("vary", "").split(",")]


class MessagePackCase(DaemonCase):

    def send(self, method, path, value=None, data=None, content_type=MP, accept=None, headers=None):
        """A request whose body is value packed as MessagePack (or data as
        is), sent with content_type and, when given, Accept."""
        hdrs = dict(headers or {})
        if accept is not None:
            hdrs["Accept"] = accept
        if value is not None:
            data = pack(value)
        if data is not None:
            hdrs["Content-Type"] = content_type
        return self.daemon.request(method, path, data=data, headers=hdrs)

    def mp_answer(self, r, status=200):
        """r is a MessagePack answer with status; returns its value."""
        self.assertEqual(r.status, status, r.describe())
        self.assertEqual(r.content_type, MP, r.describe())
        self.assertTrue(vary_has_accept(r), "no Vary: Accept: %s" % r.headers)
        return unpack(r.raw)

    def mp_problem(self, r, status, slug, pointer=None):
        """r is an application/problem+msgpack answer; returns its fields."""
        self.assertEqual(r.status, status, r.describe())
        self.assertEqual(r.content_type, PROBLEM_MP, r.describe())
        self.assertTrue(vary_has_accept(r), "no Vary: Accept: %s" % r.headers)
        p = unpack(r.raw)
        self.assertIsInstance(p, dict)
        check_problem_body(self, p, status, slug, pointer, r.describe())
        return p

    def assertSpheresAnswer(self, got):
        self.assertIs(got["overlap"], False, got)
        self.assertAlmostEqual(got["distance"], 1.0, places=12)
        self.assertEqual(got["depth"], 0)
        for k, want in zip(got["normal"], (1, 0, 0)):
            self.assertAlmostEqual(k, want, places=12)
        for k, want in zip(got["witness"]["a"], (1, 0, 0)):
            self.assertAlmostEqual(k, want, places=12)
        for k, want in zip(got["witness"]["b"], (2, 0, 0)):
            self.assertAlmostEqual(k, want, places=12)


class MessagePackHTTP(MessagePackCase):

    def test_pair_in_and_out(self):
        got = self.mp_answer(self.send("POST", "/v1/pair", SPHERES, accept=MP))
        self.assertSpheresAnswer(got)
        self.assertEqual(got["algorithm"], "sphere_sphere")

    def test_msgpack_body_json_answer_without_accept(self):
        r = self.send("POST", "/v1/pair", SPHERES)
        self.assertEqual(r.status, 200, r.describe())
        self.assertTrue(r.content_type.startswith("application/json"), r.content_type)
        self.assertTrue(vary_has_accept(r), "the JSON answer was negotiated too: %s" % r.headers)
        self.assertSpheresAnswer(r.json)
        # the same answer as a JSON request's, field for field
        self.assertEqual(r.json, self.ok("POST", "/v1/pair", SPHERES))

    def test_json_body_msgpack_answer(self):
        r = self.daemon.request("POST", "/v1/pair", SPHERES, headers={"Accept": MP})
        got = self.mp_answer(r)
        self.assertSpheresAnswer(got)
        self.assertEqual(got, self.ok("POST", "/v1/pair", SPHERES))

    def test_content_type_aliases_and_parameters(self):
        for ct in ("application/x-msgpack", "application/vnd.msgpack", "Application/MsgPack",
                   "application/msgpack; charset=binary"):
            with self.subTest(content_type=ct):
                self.assertSpheresAnswer(self.mp_answer(self.send("POST", "/v1/pair", SPHERES, content_type=ct,
                                                                  accept=MP)))

    def test_other_content_types_are_json(self):
        # curl -d sends application/x-www-form-urlencoded: still read as JSON
        text = msgpack.packb(SPHERES)  # bytes that are no JSON
        for ct in ("application/x-www-form-urlencoded", "text/plain", "application/json"):
            with self.subTest(content_type=ct):
                r = self.send("POST", "/v1/pair", data=b'{"a":{"shape":{"type":"sphere","radius":1}},'
                              b'"b":{"shape":{"type":"sphere","radius":1},"pose":{"position":[3,0,0]}}}',
                              content_type=ct)
                self.assertSpheresAnswer(self.ok_json(r))
                self.assertProblem(self.send("POST", "/v1/pair", data=text, content_type=ct), 400, "malformed-json")

    def ok_json(self, r):
        self.assertEqual(r.status, 200, r.describe())
        self.assertTrue(r.content_type.startswith("application/json"), r.content_type)
        return r.json

    def test_unknown_field_problem(self):
        body = dict(SPHERES, bogus=1)
        p = self.mp_problem(self.send("POST", "/v1/pair", body, accept=MP), 400, "unknown-field", "/bogus")
        self.assertEqual(p["title"], "Unknown field")
        self.assertIn("bogus", p["detail"])
        # the same problem in JSON when Accept does not ask
        self.assertEqual(self.assertProblem(self.send("POST", "/v1/pair", body), 400, "unknown-field", "/bogus"), p)

    def test_wrong_type_inside_a_msgpack_body(self):
        body = pair(posed(sphere("one")), posed(sphere(1)))
        p = self.mp_problem(self.send("POST", "/v1/pair", body, accept=MP), 400, "wrong-type", "/a/shape/radius")
        self.assertEqual(p["title"], "Wrong type")  # not "Wrong JSON type": the body was MessagePack
        self.assertEqual(p["detail"], "a.shape.radius must be a number")

    def test_malformed_msgpack(self):
        cases = {
            "truncated array": b"\x92\x01",
            "reserved byte": b"\xc1",
            "trailing bytes": pack({}) + b"\x00",
            "non-string key": b"\x81\x01\x02",
            "huge declared map": b"\xdf\xff\xff\xff\xff",
        }
        for what, data in cases.items():
            with self.subTest(what=what):
                p = self.mp_problem(self.send("POST", "/v1/pair", data=data, accept=MP), 400, "malformed-msgpack")
                self.assertEqual(p["title"], "Malformed MessagePack")
                self.assertNotIn("pointer", p)
                # without Accept the same problem comes as JSON
                self.assertProblem(self.send("POST", "/v1/pair", data=data), 400, "malformed-msgpack")

    def test_root_must_be_a_map(self):
        for value in ([1, 2], 7, "x", None):
            with self.subTest(value=value):
                p = self.mp_problem(self.send("POST", "/v1/pair", data=pack(value), accept=MP), 400, "wrong-type")
                self.assertIn("MessagePack map", p["detail"])

    def test_not_found_and_no_route(self):
        self.mp_problem(self.send("GET", "/v1/worlds/nope", accept=MP), 404, "not-found")
        self.mp_problem(self.send("GET", "/v1/nope", accept=MP), 404, "no-route")
        r = self.send("DELETE", "/v1/pair", accept=MP)
        self.mp_problem(r, 405, "method-not-allowed")
        self.assertEqual(r.headers.get("allow"), "POST")

    def test_accept_q_values(self):
        cases = [
            ("application/json;q=0.5, application/msgpack", True),
            ("application/msgpack;q=0.9, application/json;q=0.8", True),
            ("application/msgpack;q=0", False),
            ("application/msgpack;q=0, */*", False),
            ("application/msgpack, application/json", False),  # a tie
            ("*/*", False),
            ("application/*", False),
            ("text/html", False),  # nothing we make: JSON, not a 406
            ("application/x-msgpack", True),
            ("application/json;q=0, */*", True),
        ]
        for accept, wants_mp in cases:
            with self.subTest(accept=accept):
                r = self.daemon.request("GET", "/healthz", headers={"Accept": accept})
                if wants_mp:
                    self.assertEqual(self.mp_answer(r), {"status": "ok"})
                else:
                    self.assertEqual(r.status, 200, r.describe())
                    self.assertTrue(r.content_type.startswith("application/json"), r.content_type)
                    self.assertEqual(r.json, {"status": "ok"})

    def test_vary(self):
        for accept in (None, MP):
            with self.subTest(accept=accept):
                r = self.send("GET", "/v1/worlds", accept=accept)
                self.assertEqual(r.status, 200)
                self.assertTrue(vary_has_accept(r), r.headers)
        # One type whatever Accept says: nothing varies.
        for path in ("/metrics", "/v1/openapi.json", "/inspect/"):
            with self.subTest(path=path):
                r = self.send("GET", path, accept=MP)
                self.assertEqual(r.status, 200, r.describe())
                self.assertNotIn("msgpack", r.content_type)
                self.assertNotIn("vary", r.headers)
        # A 204 has no body to vary.
        self.ok("PUT", "/v1/worlds/v", {}, status=201)
        r = self.send("DELETE", "/v1/worlds/v", accept=MP)
        self.assertEqual((r.status, r.raw), (204, b""))
        self.assertNotIn("vary", r.headers)

    def test_world_round_trip(self):
        # A world made, filled and queried in MessagePack only.
        self.assertEqual(self.mp_answer(self.send("PUT", "/v1/worlds/m", {}, accept=MP), 201)["name"], "m")
        put = self.send("PUT", "/v1/worlds/m/shapes/s1", {"shape": sphere(1)}, accept=MP)
        self.assertEqual(self.mp_answer(put, 201)["id"], "s1")
        ray = {"rays": [{"origin": [-5, 0, 0], "direction": [1, 0, 0]}]}
        got = self.mp_answer(self.send("POST", "/v1/worlds/m/raycast", ray, accept=MP))
        hit = got["hits"][0]
        self.assertEqual(hit["id"], "s1")
        # the unit sphere's surface at x = -1, facing the ray
        self.assertAlmostEqual(hit["distance"], 4.0, places=12)
        for k, want in zip(hit["point"] + hit["normal"], (-1, 0, 0, -1, 0, 0)):
            self.assertAlmostEqual(k, want, places=12)


class MessagePackAuth(MessagePackCase):

    FLAGS = ("--token", TOKEN)

    def test_401_in_msgpack(self):
        for auth in (None, "Bearer wrong"):
            with self.subTest(auth=auth):
                headers = {"Authorization": auth} if auth else {}
                r = self.send("POST", "/v1/pair", SPHERES, accept=MP, headers=headers)
                self.mp_problem(r, 401, "unauthorized")
                self.assertEqual(r.headers.get("www-authenticate"), "Bearer")

    def test_the_token_passes_in_msgpack(self):
        r = self.send("POST", "/v1/pair", SPHERES, accept=MP, headers={"Authorization": "Bearer " + TOKEN})
        self.assertSpheresAnswer(self.mp_answer(r))


class MessagePackRequestMemory(MessagePackCase):
    """--max-request-memory holds for a MessagePack body too, though it
    builds no tree: the decoders' arrays come from the request's budget."""

    FLAGS = ("--max-request-memory", "1M")

    def test_decoded_rays_are_charged(self):
        self.ok("PUT", "/v1/worlds/w", {}, status=201)
        # A decoded ray is 64 bytes (seven doubles and a 32-bit mask, padded):
        # 16,000 of them fit in 1 MiB, 16,500 do not. The bodies are one byte
        # an (empty) ray, far under --max-body.
        under = self.send("POST", "/v1/worlds/w/raycast", {"rays": [[]] * 16000}, accept=MP)
        self.mp_problem(under, 400, "wrong-type", "/rays/0")
        over = self.send("POST", "/v1/worlds/w/raycast", {"rays": [[]] * 16500}, accept=MP)
        p = self.mp_problem(over, 413, "body-too-large")
        self.assertIn("--max-request-memory", p["detail"])
        self.assertNotIn("retry-after", over.headers)  # the same body would fail again
        ray = {"rays": [{"origin": [0, 0, 0], "direction": [0, 1, 0]}]}
        self.assertEqual(self.mp_answer(self.send("POST", "/v1/worlds/w/raycast", ray, accept=MP)), {"hits": [None]})
