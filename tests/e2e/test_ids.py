"""Ids in every operation (API.md section 1, "Ids" and "Ids in the path";
section 8, "Which error comes first").

A world name or shape id that breaks the id rule is a 400 invalid-value,
on HTTP and on the stream alike, before anything is looked up; a valid
name that does not exist stays a 404, and a refused PUT creates nothing.

The operations come from the served OpenAPI document, so a route with a
{world} or {id} cannot be left out. The verdict on each name comes from the
rule as API.md writes it (ID_RULE) after Python's own RFC 3986 decoding
(urllib.parse), never from the daemon."""

import json
import re
import urllib.parse

import harness
from harness import PROBLEM_TYPES, DaemonCase, check_problem_body, malformed_body
from wire import body_item, sphere

# API.md section 1: "1-64 characters of [A-Za-z0-9._:-]", matched whole.
ID_RULE = re.compile(rb"[A-Za-z0-9._:-]{1,64}")
RULE_TEXT = "[A-Za-z0-9._:-]"
METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
PRESENT = "present"  # a world that exists, holding the shape "s"

# Path segments as written in a request line (percent-encoded where HTTP
# needs it); the rule's verdict on each is rule_allows(segment).
SEGMENTS = [
    "w0", "a.b_c:d-e", "7", "x" * 64, "%41rena", "a%3Ab", "%78" * 64, "-", "..", "_:",
    "", "x" * 65, "%78" * 65, "bad!name", "a%20b", "%C3%A9", "a%2Fb", "a%2fb", "a%00b", "a%",
    "a%4", "a%zz", "a%25b", "%252F", "a+b", "a,b", "a;b", "a@b", "a~b", "a*b", "a'b", "a=b",
    "a%3Fb", "a%23b", "a%0Ab", "a%7Fb", "a%FFb",
]

# A body each body-taking operation accepts, so that a valid name gets the
# operation's own answer. A new operation must add one here.
BODIES = {
    ("PUT", "/v1/worlds/{world}"): {"skin": 0.01},
    ("PUT", "/v1/worlds/{world}/shapes/{id}"): {"shape": sphere(1)},
    ("POST", "/v1/worlds/{world}/batch"): {"remove": []},
    ("POST", "/v1/worlds/{world}/contacts"): {},
    ("POST", "/v1/worlds/{world}/raycast"): {"rays": []},
    ("POST", "/v1/worlds/{world}/sweep"): {"shape": sphere(1), "translation": [1, 0, 0]},
    ("POST", "/v1/worlds/{world}/overlap"): {"shape": sphere(1)},
}


def rule_allows(segment):
    """The id rule's verdict on a path segment as sent."""
    return ID_RULE.fullmatch(urllib.parse.unquote_to_bytes(segment)) is not None


def decoded(segment):
    return urllib.parse.unquote(segment)


def param_operations(doc):
    """(method, template, takes a body) of every operation with a path parameter."""
    out = []
    for template, item in doc["paths"].items():
        if "{" not in template:
            continue
        for method, op in item.items():
            # HEAD is its GET without a body (test_hostile_http.Head): no problem to read
            if method in METHODS and method != "head":
                out.append((method.upper(), template, "requestBody" in op))
    return out


def fill(template, world, id_):
    return template.replace("{world}", world).replace("{id}", id_)


class PathIds(DaemonCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = cls.daemon.request("GET", "/v1/openapi.json")
        assert r.status == 200, r.describe()
        cls.ops = param_operations(r.json)
        # A path that is itself a documented path without parameters is
        # that operation's, not a broken id.
        cls.literal = {t for t in r.json["paths"] if "{" not in t}
        for method, path, body in (("PUT", "/v1/worlds/" + PRESENT, {}),
                                   ("PUT", "/v1/worlds/%s/shapes/s" % PRESENT, {"shape": sphere(1)})):
            r = cls.daemon.request(method, path, body)
            assert r.status == 201, r.describe()

    def body_for(self, method, template, takes_body):
        if not takes_body:
            return None
        self.assertIn((method, template), BODIES, "add a body for %s %s to BODIES" % (method, template))
        return BODIES[(method, template)]

    def cases(self):
        """(method, template, body, which parameter, the path) for every
        operation, segment and parameter; the other parameter is valid, and
        a shape id is tried in the world that exists."""
        for method, template, takes_body in self.ops:
            body = self.body_for(method, template, takes_body)
            for seg in SEGMENTS:
                if "{world}" in template:
                    yield method, template, body, "world", seg, fill(template, seg, "s")
                if "{id}" in template and fill(template, PRESENT, seg) not in self.literal:
                    yield method, template, body, "id", seg, fill(template, PRESENT, seg)

    def assertIdProblem(self, p, param, what):
        """p is the problem of a path id that breaks the rule."""
        check_problem_body(self, p, 400, "invalid-value", None, what)
        self.assertNotIn("pointer", p, "a path id has no JSON pointer: " + what)
        self.assertIn("world name" if param == "world" else "shape id", p["detail"], what)
        self.assertIn(RULE_TEXT, p["detail"], what)

    def assertOnlyPresent(self):
        names = [w["name"] for w in self.ok("GET", "/v1/worlds")["worlds"]]
        self.assertEqual(names, [PRESENT], "a refused request created a world")
        ids = [s["id"] for s in self.ok("GET", "/v1/worlds/%s/export" % PRESENT)["shapes"]]
        self.assertEqual(ids, ["s"], "a refused request stored a shape")

    def test_the_document_lists_every_world_operation(self):
        # Cannot pass on an empty or shrunken document.
        found = {(m, t) for m, t, _ in self.ops}
        self.assertGreaterEqual(len(found), 13, found)
        for key in BODIES:
            self.assertIn(key, found)
        self.assertEqual(sum(rule_allows(s) for s in SEGMENTS), 10, "the oracle's verdicts moved")

    def test_a_name_that_breaks_the_rule_is_a_400(self):
        for method, template, body, param, seg, path in self.cases():
            if rule_allows(seg):
                continue
            with self.subTest(method=method, path=path):
                what = "%s %s" % (method, path)
                r = self.req(method, path, body)
                self.assertEqual(r.status, 400, what + " -> " + r.describe())
                self.assertTrue(r.content_type.startswith(PROBLEM_TYPES[r.requested]), what)
                self.assertIdProblem(r.json, param, what + " -> " + r.describe())
        self.assertOnlyPresent()

    def test_a_file_name_keeps_no_rule(self):
        # {file} names a compiled-in file: whatever the segment, a name the
        # server does not hold is a 404, never the id rule's 400.
        files = [(m, t) for m, t, _ in self.ops if "{file}" in t]
        self.assertEqual(files, [("GET", "/inspect/{file}")])
        for method, template in files:
            for seg in SEGMENTS:
                path = template.replace("{file}", seg)
                if path in self.literal:
                    continue
                with self.subTest(path=path):
                    self.assertProblem(self.req(method, path), 404, "not-found", context=path)

    def test_the_id_is_judged_before_the_body(self):
        for method, template, takes_body in self.ops:
            if not takes_body:
                continue
            path = fill(template, "bad!name", "s")
            media = harness.MEDIA_TYPES[harness.ENCODING]
            for data in (malformed_body()[0], harness.encode_body([1]), harness.encode_body({"nope": 1})):
                with self.subTest(method=method, path=path, body=data):
                    r = self.req(method, path, data=data, headers={"Content-Type": media})
                    self.assertProblem(r, 400, "invalid-value", context="%s %s %s" % (method, path, data))
                    self.assertIn("world name", r.json["detail"])
        self.assertOnlyPresent()

    def test_a_valid_unknown_name_is_a_404(self):
        for method, template, body, param, seg, path in self.cases():
            if not rule_allows(seg):
                continue
            with self.subTest(method=method, path=path):
                what = "%s %s" % (method, path)
                r = self.req(method, path, body)
                if method == "PUT" and (param == "id" or "{id}" not in template):
                    # the name is fine: the PUT creates what it names
                    self.assertEqual(r.status, 201, what + " -> " + r.describe())
                    got = r.json["name"] if param == "world" else r.json["id"]
                    self.assertEqual(got, decoded(seg), what)
                    self.ok("DELETE", path, status=204)
                else:
                    self.assertProblem(r, 404, "not-found", context=what)
        self.assertOnlyPresent()

    def test_the_stream_answers_as_http(self):
        cases = [c for c in self.cases() if not (rule_allows(c[4]) and c[0] in ("PUT", "DELETE"))]
        s = self.daemon.stream()
        try:
            s.send(*[{"id": i, "method": m, "path": path, **({"body": b} if b is not None else {})}
                     for i, (m, _, b, _, _, path) in enumerate(cases)])
            replies = [s.read_line() for _ in cases]
        finally:
            s.close()
        for i, (method, template, body, param, seg, path) in enumerate(cases):
            with self.subTest(method=method, path=path):
                reply = replies[i]
                self.assertEqual(reply.get("id"), i, reply)
                r = self.req(method, path, body)
                self.assertEqual(reply["status"], r.status, "%s %s: stream %s, HTTP %s" % (
                    method, path, reply, r.describe()))
                if r.status >= 400:
                    self.assertEqual(reply["body"], r.json, "%s %s: the problems differ" % (method, path))
                if not rule_allows(seg):
                    self.assertIdProblem(reply["body"], param, "stream %s %s -> %s" % (method, path, reply))
        self.assertOnlyPresent()

    def test_the_stream_decodes_the_path_as_http(self):
        s = self.daemon.stream()
        try:
            s.send({"id": 1, "method": "PUT", "path": "/v1/worlds/a%3Ab", "body": {}},
                   {"id": 2, "method": "PUT", "path": "/v1/worlds/%41rena/shapes/%37", "body": {"shape": sphere(1)}})
            self.assertEqual(s.read_line()["status"], 201)
            reply = s.read_line()
            self.assertEqual(reply["status"], 404, reply)  # no world "Arena" yet
        finally:
            s.close()
        self.assertEqual(self.ok("GET", "/v1/worlds/a:b")["name"], "a:b")
        self.ok("DELETE", "/v1/worlds/a%3ab", status=204)
        self.assertOnlyPresent()

    def test_stream_only_characters(self):
        # What an HTTP request line cannot carry raw, a stream path can: the
        # same character percent-encoded over HTTP gets the same problem.
        pairs = [("a b", "a%20b"), ("\u00e9", "%C3%A9"), ("a\tb", "a%09b"), ("a\u007fb", "a%7Fb"),
                 ("a/b", None), ("a%b", "a%25b")]
        s = self.daemon.stream()
        try:
            for raw, encoded in pairs:
                with self.subTest(name=raw):
                    s.send({"id": raw, "method": "PUT", "path": "/v1/worlds/%s/shapes/x" % raw,
                            "body": {"shape": sphere(1)}})
                    reply = s.read_line()
                    if encoded is None:  # a real '/' makes another path
                        check_problem_body(self, reply["body"], 404, "no-route", None, str(reply))
                        continue
                    self.assertFalse(rule_allows(encoded))
                    self.assertIdProblem(reply["body"], "world", str(reply))
                    r = self.req("PUT", "/v1/worlds/%s/shapes/x" % encoded, {"shape": sphere(1)})
                    self.assertEqual(reply["body"], r.json, r.describe())
        finally:
            s.close()
        self.assertOnlyPresent()

    def test_a_wrong_method_is_a_405_whatever_the_ids(self):
        for method, path in (("POST", "/v1/worlds/bad!name"), ("PATCH", "/v1/worlds/"),
                             ("GET", "/v1/worlds/%s/batch" % ("x" * 65)),
                             ("POST", "/v1/worlds//shapes/a%2Fb"), ("PUT", "/v1/worlds/a%00b/pairs")):
            with self.subTest(method=method, path=path):
                r = self.req(method, path, {} if method in ("POST", "PUT", "PATCH") else None)
                self.assertProblem(r, 405, "method-not-allowed", context=method + " " + path)
                self.assertTrue(r.headers.get("allow"), r.describe())

    def test_other_paths_stay_no_route(self):
        for path in ("/v1/worlds/bad!name/nope", "/v1/worlds/a/b", "/v1/worlds/w/shapes", "/v1//worlds/w"):
            with self.subTest(path=path):
                self.assertProblem(self.req("GET", path), 404, "no-route", context=path)

    def test_ids_in_bodies(self):
        # Body ids keep the same rule and type, with a pointer to the id.
        w = "/v1/worlds/" + PRESENT
        for bad in ("", "x" * 65, "bad!", "a b", "\u00e9", "a/b", -1):
            cases = [
                (w + "/batch", {"upsert": [body_item(bad, sphere(1))]}, "/upsert/0/id"),
                (w + "/batch", {"move": [{"id": bad, "pose": {}}]}, "/move/0/id"),
                (w + "/batch", {"remove": [bad]}, "/remove/0"),
                (w + "/contacts", {"ids": ["s", bad]}, "/ids/1"),
            ]
            for path, body, pointer in cases:
                with self.subTest(path=path, body=body):
                    p = self.assertProblem(self.req("POST", path, body), 400, "invalid-value", pointer,
                                           "POST %s %s" % (path, json.dumps(body)))
                    if not isinstance(bad, int):
                        self.assertIn(RULE_TEXT, p["detail"])
            with self.subTest(import_id=bad):
                body = {"settings": {}, "shapes": [body_item(bad, sphere(1))]}
                self.assertProblem(self.req("PUT", "/v1/worlds/imported", body), 400, "invalid-value",
                                   "/shapes/0/id")
        self.assertOnlyPresent()
        # The longest valid id is taken.
        long_id = "y" * 64
        self.ok("POST", w + "/batch", {"upsert": [body_item(long_id, sphere(1))]})
        self.ok("GET", "%s/shapes/%s" % (w, long_id))
        self.ok("DELETE", "%s/shapes/%s" % (w, long_id), status=204)


TOKEN = "ids-T0ken"


class PathIdsWithToken(DaemonCase):
    """401 and a transport's 413 come before the id."""

    FLAGS = ("--token", TOKEN, "--max-body", "1024")

    def test_without_the_token_a_bad_id_is_a_401(self):
        auth = {"Authorization": "Bearer " + TOKEN}
        for method, path in (("PUT", "/v1/worlds/bad!name"), ("GET", "/v1/worlds/w/shapes/" + "z" * 65),
                             ("DELETE", "/v1/worlds/")):
            with self.subTest(method=method, path=path):
                body = {} if method == "PUT" else None
                self.assertProblem(self.req(method, path, body), 401, "unauthorized", context=path)
                self.assertProblem(self.req(method, path, body, headers=auth), 400, "invalid-value", context=path)
                s = self.daemon.stream()
                try:
                    s.send({"id": 1, "method": method, "path": path})
                    check_problem_body(self, s.read_line()["body"], 401, "unauthorized", None, path)
                    s.send({"id": 2, "method": method, "path": path, "headers": auth})
                    check_problem_body(self, s.read_line()["body"], 400, "invalid-value", None, path)
                finally:
                    s.close()

    def test_a_body_over_the_limit_is_refused_first(self):
        auth = {"Authorization": "Bearer " + TOKEN}
        r = self.req("PUT", "/v1/worlds/bad!name", data=" " * 2048, headers=auth)
        self.assertProblem(r, 413, "body-too-large", context="PUT /v1/worlds/bad!name with 2 KiB")
        names = [w["name"] for w in self.ok("GET", "/v1/worlds", headers=auth)["worlds"]]
        self.assertEqual(names, [])
