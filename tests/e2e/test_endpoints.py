"""Every endpoint of API.md answers with its documented status and body
shape; request ids and ?pretty=1."""

import json
import re

import harness
from harness import DaemonCase, json_only
from wire import body_item, box, pair, pose, posed, sphere


def find_key(value, key):
    """The first value stored under key anywhere in a JSON document."""
    if isinstance(value, dict):
        if key in value:
            return value[key]
        value = list(value.values())
    if isinstance(value, list):
        for v in value:
            found = find_key(v, key)
            if found is not None:
                return found
    return None


class Endpoints(DaemonCase):

    def test_pair_and_pairs(self):
        a = posed(sphere(1))
        b = posed(sphere(1), (0.5, 0, 0))
        one = self.ok("POST", "/v1/pair", pair(a, b))
        for k in ("overlap", "distance", "depth", "normal", "points", "algorithm", "fallback"):
            self.assertIn(k, one)
        many = self.ok("POST", "/v1/pairs", {"pairs": [pair(a, b), pair(b, a)]})
        self.assertEqual(list(many), ["results"])
        self.assertEqual(len(many["results"]), 2)
        self.assertEqual(many["results"][0], one, "/v1/pairs item 0 differs from /v1/pair of the same pair")
        self.assertEqual(self.ok("POST", "/v1/pairs", {"pairs": []}), {"results": []})

    def test_world_lifecycle(self):
        w = "/v1/worlds/life"
        self.ok("PUT", w, {"skin": 0.02}, status=201)
        self.ok("PUT", w, {"skin": 0.05}, status=200)
        info = self.ok("GET", w)
        self.assertEqual(find_key(info, "skin"), 0.05, "GET %s does not show the new skin: %s" % (w, info))
        self.assertEqual(find_key(info, "shapes"), 0, "GET %s: %s" % (w, info))

        listing = self.ok("GET", "/v1/worlds")
        self.assertEqual(list(listing), ["worlds"])
        self.assertIn({"name": "life", "shapes": 0}, [
            {"name": x.get("name"), "shapes": x.get("shapes")} for x in listing["worlds"]])

        self.ok("DELETE", w, status=204)
        self.assertProblem(self.req("GET", w), 404, "not-found", context="GET after DELETE")
        self.assertProblem(self.req("DELETE", w), 404, "not-found", context="DELETE twice")
        names = [x["name"] for x in self.ok("GET", "/v1/worlds")["worlds"]]
        self.assertNotIn("life", names)

    def test_allow_on_success_lists_every_method(self):
        # Allow is optional on a success, but when sent it must be the
        # path's whole method set
        self.ok("PUT", "/v1/worlds/allow", {}, status=201)
        cases = [("GET", "/v1/worlds/allow", 200), ("DELETE", "/v1/worlds/allow", 204)]
        for method, path, status in cases:
            r = self.req(method, path)
            self.assertEqual(r.status, status, r.describe())
            if "allow" in r.headers:
                got = {m.strip() for m in r.headers["allow"].split(",")}
                self.assertTrue({"GET", "PUT", "DELETE"} <= got,
                                "%s %s -> %d with a wrong Allow: %r" % (method, path, status, r.headers["allow"]))

    def test_world_put_without_body_is_default_settings(self):
        r = self.req("PUT", "/v1/worlds/nobody")
        self.assertEqual(r.status, 201, r.describe())
        self.ok("DELETE", "/v1/worlds/nobody", status=204)

    def test_worlds_are_listed_sorted_with_counts(self):
        for name in ("zeta", "alpha", "mid"):
            self.ok("PUT", "/v1/worlds/" + name, {}, status=201)
        self.ok("PUT", "/v1/worlds/mid/shapes/1", {"shape": sphere(1)}, status=201)
        self.ok("PUT", "/v1/worlds/mid/shapes/2", {"shape": sphere(1), "pose": pose((5, 0, 0))}, status=201)
        got = [(x["name"], x["shapes"]) for x in self.ok("GET", "/v1/worlds")["worlds"]
               if x["name"] in ("zeta", "alpha", "mid")]
        self.assertEqual(got, [("alpha", 0), ("mid", 2), ("zeta", 0)])
        for name in ("zeta", "alpha", "mid"):
            self.ok("DELETE", "/v1/worlds/" + name, status=204)

    def test_shape_lifecycle(self):
        w = "/v1/worlds/shapes"
        self.ok("PUT", w, {"skin": 0}, status=201)
        body = {"shape": box(1, 2, 3), "pose": pose((1, 2, 3)), "velocity": [0, 0, 1], "layer": 2, "mask": 3}
        self.ok("PUT", w + "/shapes/crate", body, status=201)
        got = self.ok("GET", w + "/shapes/crate")
        self.assertClose(got, {"id": "crate", "shape": box(1, 2, 3),
                               "pose": {"position": [1, 2, 3], "axes": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]},
                               "velocity": [0, 0, 1], "layer": 2, "mask": 3}, 1e-12)
        # replacing under the same id is 200 and defaults layer and mask to all bits
        self.ok("PUT", w + "/shapes/crate", {"shape": sphere(2)}, status=200)
        got = self.ok("GET", w + "/shapes/crate")
        self.assertEqual(got["shape"], sphere(2))
        self.assertEqual((got["layer"], got["mask"]), (4294967295, 4294967295))
        self.assertEqual(got["velocity"], [0, 0, 0])
        self.assertEqual(find_key(self.ok("GET", w), "shapes"), 1)

        self.ok("DELETE", w + "/shapes/crate", status=204)
        self.assertProblem(self.req("GET", w + "/shapes/crate"), 404, "not-found")
        self.assertProblem(self.req("DELETE", w + "/shapes/crate"), 404, "not-found")
        self.ok("DELETE", w, status=204)

    def test_integer_ids_are_their_decimal_string(self):
        w = "/v1/worlds/ints"
        self.ok("PUT", w, {}, status=201)
        self.ok("POST", w + "/batch", {"upsert": [body_item(7, sphere(1)), body_item("8", sphere(1), (1, 0, 0))]})
        self.assertEqual(self.ok("GET", w + "/shapes/7")["id"], "7")
        self.ok("POST", w + "/batch", {"remove": [8]})
        self.assertProblem(self.req("GET", w + "/shapes/8"), 404, "not-found")
        self.ok("DELETE", w, status=204)

    def test_batch_upsert_move_remove(self):
        w = "/v1/worlds/batch"
        self.ok("PUT", w, {}, status=201)
        self.ok("POST", w + "/batch", {"upsert": [body_item("a", sphere(1)), body_item("b", sphere(1), (5, 0, 0)),
                                                  body_item("c", box(1, 1, 1), (0, 5, 0))]})
        self.ok("POST", w + "/batch", {"move": [{"id": "a", "pose": pose((0, 0, 9)), "velocity": [1, 2, 3]}],
                                       "remove": ["c"]})
        exported = self.ok("GET", w + "/export")
        self.assertEqual([s["id"] for s in exported["shapes"]], ["a", "b"])
        a = exported["shapes"][0]
        self.assertEqual(a["pose"]["position"], [0, 0, 9])
        self.assertEqual(a["velocity"], [1, 2, 3])
        # a batch may refer to what its own earlier ops created
        self.ok("POST", w + "/batch", {"upsert": [body_item("d", sphere(1))],
                                       "move": [{"id": "d", "pose": pose((3, 3, 3))}]})
        self.assertEqual(self.ok("GET", w + "/shapes/d")["pose"]["position"], [3, 3, 3])
        self.ok("DELETE", w, status=204)

    def test_world_queries_answer_their_shapes(self):
        w = "/v1/worlds/q"
        self.ok("PUT", w, {"skin": 0}, status=201)
        self.ok("POST", w + "/batch", {"upsert": [body_item("a", sphere(1)), body_item("b", sphere(1), (1.5, 0, 0))]})
        self.assertEqual(self.ok("GET", w + "/pairs"), {"pairs": [["a", "b"]]})
        c = self.ok("POST", w + "/contacts", {})
        self.assertEqual(sorted(c), ["pairs", "stats", "toi"])
        self.assertEqual([(p["a"], p["b"]) for p in c["pairs"]], [("a", "b")])
        self.assertEqual(c["toi"], [])
        self.assertIsInstance(c["stats"], dict)
        c2 = self.ok("POST", w + "/contacts", {"ids": ["b"], "dt": 0.0166})
        self.assertEqual([(p["a"], p["b"]) for p in c2["pairs"]], [("a", "b")])
        r = self.ok("POST", w + "/raycast", {"rays": [{"origin": [-10, 0, 0], "direction": [1, 0, 0]}]})
        self.assertEqual(list(r), ["hits"])
        self.assertEqual(r["hits"][0]["id"], "a")
        s = self.ok("POST", w + "/sweep", {"shape": sphere(0.5), "pose": pose((-0.5, 10, 0)),
                                           "translation": [0, -20, 0]})
        self.assertEqual(list(s), ["hit"])
        self.assertEqual(s["hit"]["id"], "a")
        s = self.ok("POST", w + "/sweep", {"shape": sphere(0.5), "pose": pose((0, 10, 0)),
                                           "translation": [0, 20, 0]})
        self.assertEqual(s, {"hit": None})
        o = self.ok("POST", w + "/overlap", {"shape": sphere(0.5), "pose": pose((0.75, 0, 0))})
        self.assertEqual(o, {"ids": ["a", "b"]})
        self.ok("DELETE", w, status=204)

    def test_operations_endpoints(self):
        r = self.req("GET", "/healthz")
        self.assertEqual(r.status, 200, r.describe())
        r = self.req("GET", "/readyz")
        self.assertEqual(r.status, 200, r.describe())
        m = self.daemon.request("GET", "/metrics")  # over HTTP: the stream carries no content type
        self.assertEqual(m.status, 200, m.describe())
        self.assertTrue(m.content_type.startswith("text/plain"), m.content_type)
        self.assertIn("version=0.0.4", m.content_type)
        self.assertIn(b"# TYPE collisiond_requests_total counter", self.req("GET", "/metrics").raw)
        f = self.ok("GET", "/metrics/fallbacks?limit=5")
        self.assertEqual(list(f), ["fallbacks"])
        self.assertIsInstance(f["fallbacks"], list)
        self.assertLessEqual(len(f["fallbacks"]), 5)
        doc = self.ok("GET", "/v1/openapi.json")
        self.assertTrue(doc["openapi"].startswith("3.1"))

    def test_request_id_is_echoed(self):
        r = self.req("GET", "/v1/worlds", headers={"X-Request-Id": "6f1c2b9e-0d4a-4c57-9b1e-7a3d2f00c1aa"})
        self.assertEqual(r.headers.get("x-request-id"), "6f1c2b9e-0d4a-4c57-9b1e-7a3d2f00c1aa")
        # on errors too
        r = self.req("GET", "/v1/worlds/none", headers={"X-Request-Id": "err-1"})
        self.assertEqual(r.status, 404)
        self.assertEqual(r.headers.get("x-request-id"), "err-1")

    def test_request_id_is_sanitised(self):
        r = self.req("GET", "/v1/worlds", headers={"X-Request-Id": 'ab<script>"x"; y'})
        rid = r.headers.get("x-request-id")
        self.assertTrue(rid, "no X-Request-Id on the response")
        self.assertIsNone(re.search(r'[<>";\s]', rid), "unsafe characters echoed: %r" % rid)
        self.assertTrue(rid.startswith("ab"), "the safe characters should be kept: %r" % rid)
        r = self.req("GET", "/v1/worlds", headers={"X-Request-Id": "x" * 300})
        rid = r.headers.get("x-request-id")
        self.assertTrue(rid and len(rid) <= 64, "an over-long id must be cut to 64: %r" % rid)

    def test_request_id_is_generated_when_absent(self):
        ids = set()
        for _ in range(3):
            r = self.req("GET", "/healthz")
            rid = r.headers.get("x-request-id")
            self.assertTrue(rid, "no X-Request-Id generated")
            self.assertRegex(rid, r"^[\x21-\x7e]{1,64}$")
            ids.add(rid)
        self.assertEqual(len(ids), 3, "generated request ids repeat: %s" % ids)

    @json_only("?pretty=1 indents JSON text; it does nothing to MessagePack")
    def test_pretty(self):
        body = pair(posed(box(1, 1, 1)), posed(box(1, 1, 1), (1.5, 0.2, 0)), explain=True)
        compact = self.req("POST", "/v1/pair", body)
        pretty = self.req("POST", "/v1/pair?pretty=1", body)
        self.assertEqual(compact.status, 200, compact.describe())
        self.assertEqual(pretty.status, 200, pretty.describe())
        self.assertNotIn(b"\n", compact.raw.rstrip(b"\n"), "the default output should be compact")
        if harness.TRANSPORT == "stream":  # a reply is one line: ?pretty is ignored (API.md 11)
            self.assertEqual(pretty.raw, compact.raw)
            return
        self.assertIn(b"\n  ", pretty.raw, "?pretty=1 should indent")
        self.assertEqual(pretty.json, compact.json)
        self.assertEqual(json.loads(pretty.raw), json.loads(compact.raw))
        # errors pretty-print as well and stay equal in value
        bad = self.req("GET", "/v1/worlds/none?pretty=1")
        self.assertProblem(bad, 404, "not-found")
        self.assertIn(b"\n", bad.raw.rstrip(b"\n"))

    def test_import_replaces_the_world(self):
        self.ok("PUT", "/v1/worlds/src", {"skin": 0.25}, status=201)
        self.ok("POST", "/v1/worlds/src/batch", {"upsert": [
            body_item("p", box(1, 2, 3), (1, 1, 1), velocity=[1, 0, 0], layer=5, mask=6),
            body_item("q", {"type": "capsule", "radius": 0.5, "half_height": 1}, (4, 0, 0)),
            body_item("r", {"type": "convex", "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]}, (0, 9, 0)),
            body_item("t", {"type": "triangle", "vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]]}, (0, 0, 7)),
            body_item("g", {"type": "plane", "normal": [0, 1, 0], "offset": -10}),
            body_item("m", {"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0], [0, 0, 1], [1, 0, 1]],
                            "triangles": [[0, 2, 1], [1, 2, 3]]}, (20, 0, 0)),
        ]})
        exported = self.ok("GET", "/v1/worlds/src/export")
        self.assertEqual(sorted(exported), ["settings", "shapes"])
        self.assertEqual(exported["settings"]["skin"], 0.25)
        self.assertEqual([s["id"] for s in exported["shapes"]], ["g", "m", "p", "q", "r", "t"])
        for s in exported["shapes"]:
            self.assertEqual(sorted(s), ["id", "layer", "mask", "pose", "shape", "velocity"], s)

        # import into a new world: 201, then the export is the same document
        self.ok("PUT", "/v1/worlds/dst", exported, status=201)
        self.assertEqual(self.ok("GET", "/v1/worlds/dst/export"), exported)
        # import into an existing world replaces its content: 200
        self.ok("PUT", "/v1/worlds/other", {}, status=201)
        self.ok("PUT", "/v1/worlds/other/shapes/old", {"shape": sphere(1)}, status=201)
        self.ok("PUT", "/v1/worlds/other", exported, status=200)
        self.assertEqual(self.ok("GET", "/v1/worlds/other/export"), exported)
        self.assertProblem(self.req("GET", "/v1/worlds/other/shapes/old"), 404, "not-found")
        for name in ("src", "dst", "other"):
            self.ok("DELETE", "/v1/worlds/" + name, status=204)
