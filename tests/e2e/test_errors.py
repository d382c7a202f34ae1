"""Every error status of API.md section 3 through real HTTP, with the
problem+json body, the JSON pointer of the bad field, and nothing changed
by a rejected request."""

from harness import DaemonCase, json_only
from wire import ENDPOINTS, body_item, box, fill, pair, pose, sphere

GOOD_A = {"shape": sphere(1), "pose": pose((0, 0, 0))}
GOOD_B = {"shape": sphere(1), "pose": pose((3, 0, 0))}


class BadRequests(DaemonCase):
    """400: malformed JSON, wrong types, unknown and missing fields,
    invalid values, each with the pointer of the field at fault."""

    def post_pair_text(self, text):
        return self.req("POST", "/v1/pair", data=text)

    def bad(self, path, body, slug, pointer, method="POST"):
        r = self.req(method, path, body)
        return self.assertProblem(r, 400, slug, pointer, "%s %s %s" % (method, path, body))

    @json_only("the line and column of a JSON syntax error")
    def test_malformed_json_gives_line_and_column(self):
        text = '{\n  "a": {"shape": {"type": "sphere", "radius": 1}},\n  "b": ]\n}'
        p = self.assertProblem(self.post_pair_text(text), 400, "malformed-json", context=text)
        detail = p["detail"].lower()
        self.assertRegex(detail, r"line\D{0,3}3\b", "the detail should name line 3: %r" % p["detail"])
        self.assertRegex(detail, r"column\D{0,3}\d+", "the detail should name a column: %r" % p["detail"])

    @json_only("truncated, empty and non-UTF-8 JSON text (test_msgpack_hostile.py has the MessagePack cases)")
    def test_truncated_and_empty_bodies(self):
        self.assertProblem(self.post_pair_text('{"a": {'), 400, "malformed-json")
        self.assertProblem(self.post_pair_text('{"a": 1} trailing'), 400, "malformed-json")
        r = self.post_pair_text("")
        self.assertProblem(r, 400, context="empty body on POST /v1/pair")
        r = self.post_pair_text("\xff\xfe{}")
        self.assertProblem(r, 400, context="invalid UTF-8")

    @json_only("duplicate keys in JSON text (test_msgpack_hostile.py has the MessagePack cases)")
    def test_duplicate_key(self):
        text = ('{"a": {"shape": {"type": "sphere", "radius": 1}}, '
                '"b": {"shape": {"type": "sphere", "radius": 1}}, "skin": 0, "skin": 1}')
        self.assertProblem(self.post_pair_text(text), 400, "malformed-json", context=text)
        nested = ('{"a": {"shape": {"type": "sphere", "radius": 1, "radius": 2}}, '
                  '"b": {"shape": {"type": "sphere", "radius": 1}}}')
        self.assertProblem(self.post_pair_text(nested), 400, "malformed-json", context=nested)

    @json_only("a JSON number that overflows a double; MessagePack has no such number")
    def test_overflowing_number(self):
        text = '{"a": {"shape": {"type": "sphere", "radius": 1e999}}, "b": {"shape": {"type": "sphere", "radius": 1}}}'
        p = self.assertProblem(self.post_pair_text(text), 400, context=text)
        self.assertIn(p["type"].rsplit(":", 1)[1], ("malformed-json", "invalid-value"), p)
        if p["type"].endswith("invalid-value"):
            self.assertEqual(p.get("pointer"), "/a/shape/radius")
        text = '{"skin": -1e999}'
        self.assertProblem(self.req("PUT", "/v1/worlds/ovf", data=text), 400, context=text)
        self.assertProblem(self.req("GET", "/v1/worlds/ovf"), 404, "not-found", "",
                           "the rejected PUT created the world")

    def test_body_must_be_an_object(self):
        self.assertProblem(self.req("POST", "/v1/pair", [1, 2]), 400, "wrong-type", "")
        self.assertProblem(self.req("POST", "/v1/pair", "pair"), 400, "wrong-type", "")

    def test_wrong_type(self):
        self.bad("/v1/pair", pair({"shape": {"type": "sphere", "radius": "1"}}, GOOD_B), "wrong-type",
                 "/a/shape/radius")
        self.bad("/v1/pair", pair(GOOD_A, {"shape": box(1, 1, 1), "pose": {"position": [0, "1", 0]}}),
                 "wrong-type", "/b/pose/position/1")
        self.bad("/v1/pair", pair(GOOD_A, GOOD_B, explain="yes"), "wrong-type", "/explain")
        self.bad("/v1/pairs", {"pairs": {"a": 1}}, "wrong-type", "/pairs")
        self.bad("/v1/pair", {"a": [], "b": GOOD_B}, "wrong-type", "/a")

    def test_unknown_field(self):
        self.bad("/v1/pair", pair(GOOD_A, GOOD_B, colour="red"), "unknown-field", "/colour")
        self.bad("/v1/pair", pair({"shape": {"type": "sphere", "radius": 1, "height": 2}}, GOOD_B),
                 "unknown-field", "/a/shape/height")
        self.bad("/v1/pair", pair(GOOD_A, {"shape": sphere(1), "pose": {"position": [0, 0, 0], "scale": 2}}),
                 "unknown-field", "/b/pose/scale")
        self.bad("/v1/pairs", {"pairs": [pair(GOOD_A, GOOD_B), pair(GOOD_A, GOOD_B, x=1)]}, "unknown-field",
                 "/pairs/1/x")

    def test_missing_field(self):
        self.bad("/v1/pair", {"a": GOOD_A}, "missing-field", "/b")
        self.bad("/v1/pair", pair({"pose": pose((0, 0, 0))}, GOOD_B), "missing-field", "/a/shape")
        self.bad("/v1/pair", pair({"shape": {"type": "box"}}, GOOD_B), "missing-field", "/a/shape/half_extents")
        self.bad("/v1/pair", pair({"shape": {"radius": 1}}, GOOD_B), "missing-field", "/a/shape/type")

    def test_invalid_values_point_at_the_field(self):
        # (body, slug, pointer); slug None where either wrong-type or
        # invalid-value describes the fault (an array of the wrong length)
        cases = [
            (pair({"shape": box(1, -1, 1)}, GOOD_B), "invalid-value", "/a/shape/half_extents/1"),
            (pair(GOOD_A, {"shape": sphere(-0.5)}), "invalid-value", "/b/shape/radius"),
            (pair({"shape": {"type": "cone", "radius": 1}}, GOOD_B), "invalid-value", "/a/shape/type"),
            (pair({"shape": {"type": "capsule", "radius": 1, "half_height": -1}}, GOOD_B), "invalid-value",
             "/a/shape/half_height"),
            (pair({"shape": {"type": "box", "half_extents": [1, 1]}}, GOOD_B), None, "/a/shape/half_extents"),
            (pair({"shape": {"type": "convex", "points": []}}, GOOD_B), None, "/a/shape/points"),
            (pair({"shape": {"type": "triangle", "vertices": [[0, 0, 0], [1, 0, 0]]}}, GOOD_B), None,
             "/a/shape/vertices"),
            (pair({"shape": sphere(1), "pose": {"position": [0, 0, 0], "rotation": [0, 0, 0, 2]}}, GOOD_B),
             "invalid-value", "/a/pose/rotation"),
            (pair(GOOD_A, {"shape": sphere(1), "pose": {"axes": [[1, 0, 0], [0, 1, 0], [0, 0, -1]]}}),
             "invalid-value", "/b/pose/axes/*"),
            (pair(GOOD_A, {"shape": sphere(1), "pose": {"axes": [[1, 0, 0], [0.1, 1, 0], [0, 0, 1]]}}),
             "invalid-value", "/b/pose/axes/*"),
            (pair(GOOD_A, {"shape": sphere(1), "pose": {"axes": [[1, 0, 0], [0, 0.6, 0.8], [0, 0.8, 0.6]]}}),
             "invalid-value", "/b/pose/axes/*"),
            (pair(GOOD_A, GOOD_B, skin=-0.1), "invalid-value", "/skin"),
        ]
        for body, slug, pointer in cases:
            with self.subTest(pointer=pointer):
                self.bad("/v1/pair", body, slug, pointer)

    def test_quaternion_within_tolerance_is_normalised(self):
        r = self.req("POST", "/v1/pair", pair({"shape": sphere(1), "pose": pose((0, 0, 0), rotation=[0, 0, 0, 1.0005])},
                                              GOOD_B))
        self.assertEqual(r.status, 200, r.describe())
        self.assertAlmostEqual(r.json["distance"], 1.0, delta=1e-9)

    def test_world_level_validation(self):
        self.ok("PUT", "/v1/worlds/v", {}, status=201)
        self.bad("/v1/worlds/v", {"skin": -1}, "invalid-value", "/skin", method="PUT")
        self.bad("/v1/worlds/v", {"skin": 0, "gravity": 9.8}, "unknown-field", "/gravity", method="PUT")
        self.bad("/v1/worlds/v/shapes/s", {"shape": {"type": "plane", "normal": [0, 2, 0], "offset": 0}},
                 "invalid-value", "/shape/normal", method="PUT")
        self.bad("/v1/worlds/v/shapes/s", {"shape": sphere(1), "layer": 4294967296}, None, "/layer", method="PUT")
        self.bad("/v1/worlds/v/shapes/s", {"shape": sphere(1), "mask": -1}, None, "/mask", method="PUT")
        self.bad("/v1/worlds/v/shapes/s", {"shape": sphere(1), "velocity": [0, 1]}, None, "/velocity",
                 method="PUT")
        self.bad("/v1/worlds/v/batch", {"upsert": [body_item("bad id", sphere(1))]}, "invalid-value", "/upsert/0/id")
        self.bad("/v1/worlds/v/batch", {"upsert": [body_item("x" * 65, sphere(1))]}, "invalid-value", "/upsert/0/id")
        self.bad("/v1/worlds/v/batch", {"upsert": [body_item(-1, sphere(1))]}, None, "/upsert/0/id")
        self.bad("/v1/worlds/v/raycast", {"rays": [{"origin": [0, 0, 0], "direction": [0, 0, 0]}]},
                 "invalid-value", "/rays/0/direction")
        self.bad("/v1/worlds/v/raycast", {"rays": [{"origin": [0, 0, 0], "direction": [1, 0, 0], "max_distance": -1}]},
                 "invalid-value", "/rays/0/max_distance")
        self.bad("/v1/worlds/v/sweep", {"shape": sphere(1)}, "missing-field", "/translation")
        self.bad("/v1/worlds/v/contacts", {"dt": -1}, "invalid-value", "/dt")
        self.bad("/v1/worlds/v/overlap", {"shape": sphere(1), "mask": "all"}, "wrong-type", "/mask")
        self.assertEqual(self.ok("GET", "/v1/worlds/v/export")["shapes"], [], "a rejected request stored something")
        self.ok("DELETE", "/v1/worlds/v", status=204)


class NotFoundAndMethods(DaemonCase):
    """404 for unknown worlds, shapes and paths; 400 for ids that break the
    rule; 405 with Allow."""

    def test_unknown_world_on_every_world_endpoint(self):
        bodies = {
            "/v1/worlds/{world}/shapes/{id}": {"shape": sphere(1)},
            "/v1/worlds/{world}/batch": {"remove": []},
            "/v1/worlds/{world}/contacts": {},
            "/v1/worlds/{world}/raycast": {"rays": []},
            "/v1/worlds/{world}/sweep": {"shape": sphere(1), "translation": [1, 0, 0]},
            "/v1/worlds/{world}/overlap": {"shape": sphere(1)},
        }
        for method, template, _ in ENDPOINTS:
            if "{world}" not in template or (method == "PUT" and template == "/v1/worlds/{world}"):
                continue
            path = fill(template, "ghost", "s")
            with self.subTest(method=method, path=path):
                body = bodies.get(template) if method in ("PUT", "POST") else None
                self.assertProblem(self.req(method, path, body), 404, "not-found", context=method + " " + path)

    def test_unknown_shape(self):
        self.ok("PUT", "/v1/worlds/nf", {}, status=201)
        self.assertProblem(self.req("GET", "/v1/worlds/nf/shapes/nope"), 404, "not-found")
        self.assertProblem(self.req("DELETE", "/v1/worlds/nf/shapes/nope"), 404, "not-found")
        r = self.req("POST", "/v1/worlds/nf/batch", {"move": [{"id": "nope", "pose": pose((1, 0, 0))}]})
        self.assertIn(r.status, (400, 404), r.describe())
        self.assertProblem(r, r.status, pointer="/move/0")
        r = self.req("POST", "/v1/worlds/nf/contacts", {"ids": ["nope"]})
        self.assertIn(r.status, (400, 404), r.describe())
        self.assertProblem(r, r.status, pointer="/ids/0")
        self.ok("DELETE", "/v1/worlds/nf", status=204)

    def test_unknown_paths(self):
        for path in ("/v1/nope", "/v2/pair", "/", "/v1/worlds/w/shapes", "/v1/worlds/w/shapes/s/extra",
                     "/metrics/nope"):
            with self.subTest(path=path):
                self.assertProblem(self.req("GET", path), 404, context=path)
        self.assertProblem(self.req("GET", "/v1/nope"), 404, "no-route")

    def test_invalid_ids_in_paths(self):
        # a name that can never exist is a bad request (test_ids.py tries every operation)
        for path in ("/v1/worlds/" + "x" * 65, "/v1/worlds/bad!name", "/v1/worlds/a%20b",
                     "/v1/worlds/w/shapes/" + "y" * 65):
            with self.subTest(path=path):
                self.assertProblem(self.req("GET", path), 400, "invalid-value", context=path)

    def test_wrong_method_gives_405_with_allow(self):
        cases = [
            ("DELETE", "/v1/pair", {"POST"}),
            ("GET", "/v1/pairs", {"POST"}),
            ("POST", "/v1/worlds", {"GET"}),
            ("POST", "/v1/worlds/w", {"GET", "PUT", "DELETE"}),
            ("PATCH", "/v1/worlds/w/shapes/s", {"GET", "PUT", "DELETE"}),
            ("GET", "/v1/worlds/w/batch", {"POST"}),
            ("POST", "/v1/worlds/w/pairs", {"GET"}),
            ("GET", "/v1/worlds/w/contacts", {"POST"}),
            ("PUT", "/v1/worlds/w/raycast", {"POST"}),
            ("DELETE", "/v1/worlds/w/export", {"GET"}),
            ("POST", "/metrics", {"GET"}),
            ("POST", "/healthz", {"GET"}),
            ("PUT", "/v1/openapi.json", {"GET"}),
        ]
        for method, path, allowed in cases:
            with self.subTest(method=method, path=path):
                r = self.req(method, path, {} if method in ("POST", "PUT", "PATCH") else None)
                self.assertProblem(r, 405, "method-not-allowed", context=method + " " + path)
                allow = {m.strip() for m in r.headers.get("allow", "").split(",") if m.strip()}
                self.assertTrue(allowed <= allow, "Allow %r lacks %s" % (r.headers.get("allow"), allowed))
                self.assertNotIn(method, allow)
                self.assertTrue(allow <= {"GET", "PUT", "POST", "DELETE", "HEAD"}, allow)


class BodyLimit(DaemonCase):
    """413: a body over --max-body is refused before it is buffered."""

    FLAGS = ("--max-body", "1024")

    def head(self, length, extra=""):
        return ("POST /v1/pair HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                "Content-Length: %d\r\n%s\r\n" % (length, extra)).encode()

    def check_413(self, status, headers, body, what):
        self.assertEqual(status, 413, "%s: got %s %r" % (what, status, body[:300]))
        self.assertTrue(headers.get("content-type", "").startswith("application/problem+json"), headers)
        from harness import check_problem_body, strict_json
        check_problem_body(self, strict_json(body), 413, "body-too-large", None, what)

    def test_content_length_over_the_limit(self):
        # only the head is sent: the answer may not wait for the body
        status, headers, body = self.daemon.raw_http(self.head(5000), read_timeout=5)
        self.check_413(status, headers, body, "Content-Length 5000 > 1024, no body sent")
        status, headers, body = self.daemon.raw_http(self.head(1025) + b"x" * 1025)
        self.check_413(status, headers, body, "Content-Length 1025 > 1024 with the body")
        r = self.req("GET", "/healthz")
        self.assertEqual(r.status, 200, "the daemon should still serve after a 413")

    def test_chunked_body_over_the_limit(self):
        head = (b"POST /v1/pair HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"400\r\n" + b" " * 1024 + b"\r\n"
        status, headers, body = self.daemon.raw_http(head + chunk + chunk + b"0\r\n\r\n")
        self.check_413(status, headers, body, "chunked body of 2048 bytes > 1024")

    def test_body_at_the_limit_is_accepted(self):
        text = '{"a":{"shape":{"type":"sphere","radius":1}},"b":{"shape":{"type":"sphere","radius":1}}}'
        data = text + " " * (1024 - len(text))
        self.assertEqual(len(data), 1024)
        r = self.req("POST", "/v1/pair", data=data)
        self.assertEqual(r.status, 200, r.describe())
        r = self.req("POST", "/v1/pair", data=data + " ")
        self.assertProblem(r, 413, "body-too-large", context="1025 bytes")


class RequestLimits(DaemonCase):
    """422: well-formed requests over a per-request limit."""

    FLAGS = ("--max-pairs", "2", "--max-rays", "2", "--max-hull-points", "4",
             "--max-mesh-triangles", "7", "--max-batch", "3")

    def test_pairs_limit(self):
        p = pair(GOOD_A, GOOD_B)
        r = self.req("POST", "/v1/pairs", {"pairs": [p, p]})
        self.assertEqual(r.status, 200, r.describe())
        self.assertProblem(self.req("POST", "/v1/pairs", {"pairs": [p, p, p]}), 422, "over-limit",
                           context="3 pairs with --max-pairs 2")

    def test_rays_limit(self):
        self.ok("PUT", "/v1/worlds/rays", {}, status=201)
        ray = {"origin": [0, 0, 0], "direction": [1, 0, 0]}
        self.ok("POST", "/v1/worlds/rays/raycast", {"rays": [ray, ray]})
        self.assertProblem(self.req("POST", "/v1/worlds/rays/raycast", {"rays": [ray, ray, ray]}), 422, "over-limit")

    def test_hull_points_limit(self):
        four = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
        ok = pair({"shape": {"type": "convex", "points": four}}, GOOD_B)
        self.assertEqual(self.req("POST", "/v1/pair", ok).status, 200)
        five = pair({"shape": {"type": "convex", "points": four + [[1, 1, 1]]}}, GOOD_B)
        self.assertProblem(self.req("POST", "/v1/pair", five), 422, "over-limit")

    def test_mesh_and_batch_limits(self):
        self.ok("PUT", "/v1/worlds/lim", {}, status=201)
        tetra = {"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]],
                 "triangles": [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]}
        self.ok("PUT", "/v1/worlds/lim/shapes/tetra", {"shape": tetra}, status=201)
        octa = {"type": "mesh", "vertices": [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]],
                "triangles": [[x, y, z] for x in (0, 1) for y in (2, 3) for z in (4, 5)]}
        self.assertProblem(self.req("PUT", "/v1/worlds/lim/shapes/octa", {"shape": octa}), 422, "over-limit",
                           context="8 triangles with --max-mesh-triangles 7")
        many_vertices = {"type": "mesh", "vertices": [[i, 0, 0] for i in range(7)] + [[0, 0, 1]],
                         "triangles": [[0, 1, 7]]}
        self.assertProblem(self.req("PUT", "/v1/worlds/lim/shapes/v8", {"shape": many_vertices}), 422, "over-limit",
                           context="8 vertices with --max-mesh-triangles 7")
        before = self.ok("GET", "/v1/worlds/lim/export")
        items = [body_item("s%d" % i, sphere(1), (3 * i, 0, 0)) for i in range(4)]
        self.assertProblem(self.req("POST", "/v1/worlds/lim/batch", {"upsert": items}), 422, "over-limit")
        self.assertEqual(self.ok("GET", "/v1/worlds/lim/export"), before, "a rejected batch changed the world")
        self.ok("POST", "/v1/worlds/lim/batch", {"upsert": items[:3]})


class RejectedChangesNothing(DaemonCase):
    """A rejected batch, import or shape PUT leaves the world as it was."""

    def setUp(self):
        self.req("DELETE", "/v1/worlds/keep")
        self.ok("PUT", "/v1/worlds/keep", {"skin": 0.1}, status=201)
        self.ok("POST", "/v1/worlds/keep/batch", {"upsert": [
            body_item("a", sphere(1)), body_item("b", box(1, 1, 1), (1.5, 0, 0), velocity=[1, 0, 0]),
            body_item("c", sphere(0.5), (0, 4, 0), layer=2, mask=2)]})
        self.before = self.ok("GET", "/v1/worlds/keep/export")

    def assertUnchanged(self, what):
        self.assertEqual(self.ok("GET", "/v1/worlds/keep/export"), self.before, "%s changed the world" % what)

    def test_batch_with_one_invalid_upsert(self):
        body = {"upsert": [body_item("d", sphere(1), (9, 9, 9)), body_item("e", sphere(-1))],
                "move": [{"id": "a", "pose": pose((5, 5, 5))}], "remove": ["c"]}
        self.assertProblem(self.req("POST", "/v1/worlds/keep/batch", body), 400, "invalid-value",
                           "/upsert/1/shape/radius")
        self.assertUnchanged("a batch with an invalid upsert")

    def test_batch_with_an_unknown_remove(self):
        body = {"upsert": [body_item("d", sphere(1))], "move": [{"id": "a", "pose": pose((5, 5, 5))}],
                "remove": ["c", "zzz"]}
        r = self.req("POST", "/v1/worlds/keep/batch", body)
        self.assertIn(r.status, (400, 404), r.describe())
        self.assertProblem(r, r.status, pointer="/remove/1")
        self.assertUnchanged("a batch removing an unknown id")

    def test_batch_with_a_bad_move(self):
        body = {"move": [{"id": "a", "pose": pose((5, 5, 5))},
                         {"id": "b", "pose": {"position": [0, 0, 0], "rotation": [0, 0, 0, 3]}}]}
        self.assertProblem(self.req("POST", "/v1/worlds/keep/batch", body), 400, "invalid-value",
                           "/move/1/pose/rotation")
        self.assertUnchanged("a batch with a bad move")

    def test_batch_moving_what_it_removed(self):
        body = {"move": [{"id": "c", "pose": pose((1, 1, 1))}], "remove": ["c", "c"]}
        r = self.req("POST", "/v1/worlds/keep/batch", body)
        self.assertIn(r.status, (400, 404), r.describe())
        self.assertProblem(r, r.status, pointer="/remove/1")
        self.assertUnchanged("a batch removing twice")

    def test_rejected_import(self):
        bad = {"settings": {"skin": 0}, "shapes": [body_item("x", sphere(1)), body_item("y", box(1, 1, -1))]}
        self.assertProblem(self.req("PUT", "/v1/worlds/keep", bad), 400, "invalid-value",
                           "/shapes/1/shape/half_extents/2")
        self.assertUnchanged("a rejected import")

    def test_rejected_shape_put(self):
        r = self.req("PUT", "/v1/worlds/keep/shapes/a", {"shape": sphere(1), "pose": pose((0, 0, 0)), "layer": "x"})
        self.assertProblem(r, 400, "wrong-type", "/layer")
        r = self.req("PUT", "/v1/worlds/keep/shapes/g", {"shape": {"type": "plane", "normal": [0, 1, 0], "offset": 0},
                                                        "velocity": [1, 0, 0]})
        self.assertProblem(r, 400, pointer="/velocity")
        self.assertUnchanged("a rejected shape PUT")

    def test_rejected_settings(self):
        self.assertProblem(self.req("PUT", "/v1/worlds/keep", {"skin": "big"}), 400, "wrong-type", "/skin")
        self.assertUnchanged("rejected settings")

