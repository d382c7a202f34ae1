"""docs/openapi.json: a well-formed OpenAPI 3.1 document covering every
path of API.md, served unchanged at GET /v1/openapi.json (whatever Accept
says), describing both wire formats on every operation."""

import json
import os
import re

from harness import DaemonCase
from wire import ENDPOINTS

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "openapi.json")
METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
# Each body type and its MessagePack twin (API.md section 1: the same schema).
TWINS = {"application/json": "application/msgpack", "application/problem+json": "application/problem+msgpack"}
# Documents that are JSON by nature, whatever Accept says.
JSON_ONLY = {("get", "/v1/openapi.json"), ("head", "/v1/openapi.json")}


def load_doc():
    with open(DOC, "rb") as f:
        raw = f.read()
    return raw, json.loads(raw)


def refs(node, out):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref":
                out.append(v)
            else:
                refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)
    return out


def resolve(doc, ref):
    if not ref.startswith("#/"):
        raise KeyError(ref)
    node = doc
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


class OpenAPI(DaemonCase):

    def test_served_document_is_the_file(self):
        raw, doc = load_doc()
        r = self.daemon.request("GET", "/v1/openapi.json")
        self.assertEqual(r.status, 200, r.describe())
        self.assertTrue(r.content_type.startswith("application/json"), r.content_type)
        self.assertEqual(r.json, doc, "the served document differs from docs/openapi.json (rebuild the daemon?)")
        self.assertEqual(r.raw, raw, "the served bytes differ from docs/openapi.json")

    def test_document_is_well_formed(self):
        _, doc = load_doc()
        self.assertRegex(doc.get("openapi", ""), r"^3\.1\.\d+$")
        self.assertTrue(doc["info"]["title"] and doc["info"]["version"])
        for ref in refs(doc, []):
            with self.subTest(ref=ref):
                try:
                    resolve(doc, ref)
                except (KeyError, IndexError, TypeError):
                    self.fail("unresolved $ref %s" % ref)
        for path, item in doc["paths"].items():
            params = {p.strip("{}") for p in path.split("/") if p.startswith("{")}
            declared_here = {resolve(doc, p["$ref"])["name"] if "$ref" in p else p["name"]
                             for p in item.get("parameters", [])}
            for method, op in item.items():
                if method not in METHODS:
                    continue
                with self.subTest(path=path, method=method):
                    self.assertIn("responses", op)
                    self.assertTrue(op.get("operationId"), "operation without operationId")
                    self.assertTrue(op.get("summary"), "operation without summary")
                    declared = declared_here | {resolve(doc, p["$ref"])["name"] if "$ref" in p else p["name"]
                                                for p in op.get("parameters", [])}
                    self.assertTrue(params <= declared, "path parameters %s not declared" % (params - declared))
        ids = [op["operationId"] for item in doc["paths"].values() for m, op in item.items() if m in METHODS]
        self.assertEqual(len(ids), len(set(ids)), "operationIds repeat")
        for name in ("Shape", "Pose", "ContactResult", "Problem"):
            self.assertIn(name, doc["components"]["schemas"])
        self.assertIn("oneOf", doc["components"]["schemas"]["Shape"])

    def test_every_endpoint_is_documented(self):
        _, doc = load_doc()
        for method, template, _ in ENDPOINTS:
            with self.subTest(method=method, path=template):
                self.assertIn(template, doc["paths"])
                self.assertIn(method.lower(), doc["paths"][template])
        documented = {(m.upper(), p) for p, item in doc["paths"].items() for m in item if m in METHODS}
        # HEAD is answered wherever GET is (API.md section 1)
        served = {(m, p) for m, p, _ in ENDPOINTS} | {("HEAD", p) for m, p, _ in ENDPOINTS if m == "GET"}
        self.assertEqual(documented, served, "the document lists other operations")

    def operations(self, doc):
        for path, item in doc["paths"].items():
            for method, op in item.items():
                if method in METHODS:
                    yield path, method, op

    def test_request_bodies_take_both_formats(self):
        _, doc = load_doc()
        checked = 0
        for path, method, op in self.operations(doc):
            if "requestBody" not in op:
                continue
            with self.subTest(path=path, method=method):
                body = op["requestBody"]
                body = resolve(doc, body["$ref"]) if "$ref" in body else body
                content = body["content"]
                self.assertEqual(set(content), {"application/json", "application/msgpack"})
                self.assertEqual(content["application/msgpack"], content["application/json"], "the same schema")
                checked += 1
        self.assertGreaterEqual(checked, 9, "operations with a request body")

    def test_responses_come_in_both_formats(self):
        # Every JSON answer has its MessagePack twin with the same schema and
        # says it varies with Accept; so does every problem. Text, HTML and
        # the inspector's files have one type, as does this document.
        _, doc = load_doc()
        twinned = 0
        for path, method, op in self.operations(doc):
            for status, resp in op["responses"].items():
                with self.subTest(path=path, method=method, status=status):
                    resp = resolve(doc, resp["$ref"]) if "$ref" in resp else resp
                    content = resp.get("content", {})
                    if (method, path) in JSON_ONLY and int(status) < 400:
                        self.assertEqual(set(content), {"application/json"})
                        self.assertNotIn("Vary", resp.get("headers", {}))
                        continue
                    bodies = set(content) & set(TWINS)
                    for t in bodies:
                        self.assertIn(TWINS[t], content, "%s without its MessagePack twin" % t)
                        self.assertEqual(content[TWINS[t]], content[t], "the same schema")
                        twinned += 1
                    if bodies:
                        self.assertEqual(resp["headers"]["Vary"], {"$ref": "#/components/headers/Vary"})
                    self.assertFalse(set(content) & set(TWINS.values()) - {TWINS[t] for t in bodies},
                                     "a MessagePack type without its JSON twin")
                    if int(status) >= 400:
                        self.assertIn("application/problem+json", content, "a problem response")
        self.assertGreaterEqual(twinned, 100, "responses in both formats")

    def test_served_document_ignores_accept(self):
        _, served = load_doc()
        for accept in ("application/msgpack", "application/problem+msgpack, */*;q=0.1"):
            with self.subTest(accept=accept):
                r = self.daemon.request("GET", "/v1/openapi.json", headers={"Accept": accept})
                self.assertEqual(r.status, 200, r.describe())
                self.assertTrue(r.content_type.startswith("application/json"), r.content_type)
                self.assertEqual(r.json, served)
                self.assertNotIn("vary", r.headers)

    def check_file_operations(self, doc, path, item):
        """{file} (the inspector's files) keeps no id rule: no pattern, no
        400; any name it does not hold is a 404."""
        for method, op in item.items():
            if method not in METHODS:
                continue
            with self.subTest(path=path, method=method):
                self.assertNotIn("400", op["responses"], "%s %s: a file name is never a 400" % (method, path))
                self.assertIn("404", op["responses"])
                declared = [resolve(doc, p["$ref"]) if "$ref" in p else p for p in op.get("parameters", [])]
                files = [p for p in declared if p["in"] == "path"]
                self.assertEqual([p["name"] for p in files], ["file"], path)
                self.assertNotIn("pattern", files[0]["schema"], "a file name keeps no id rule")

    def test_path_ids_are_documented_with_their_rule_and_400(self):
        # API.md section 1: 1-64 characters of [A-Za-z0-9._:-], a 400 in
        # every operation when broken. Read from the served document, so a
        # new operation with a {world} or {id} must say so too.
        doc = self.daemon.request("GET", "/v1/openapi.json").json
        rule = re.compile(r"[A-Za-z0-9._:-]{1,64}")
        samples = ["w", "a.b_c:d-e", "x" * 64, "x" * 65, "", "a b", "a/b", "a%41", "\u00e9", "a\nb", "bad!"]
        checked = 0
        for path, item in doc["paths"].items():
            params = set(re.findall(r"\{(\w+)\}", path))
            if not params:
                continue
            self.assertLessEqual(params, {"world", "id", "file"}, path)
            if params == {"file"}:
                self.check_file_operations(doc, path, item)
                continue
            shared = item.get("parameters", [])
            for method, op in item.items():
                if method not in METHODS:
                    continue
                with self.subTest(path=path, method=method):
                    self.assertIn("400", op["responses"], "%s %s does not list its 400" % (method, path))
                    found = op["responses"]["400"]
                    found = resolve(doc, found["$ref"]) if "$ref" in found else found
                    self.assertIn("application/problem+json", found.get("content", {}))
                    declared = [resolve(doc, p["$ref"]) if "$ref" in p else p
                                for p in shared + op.get("parameters", [])]
                    for param in (p for p in declared if p["in"] == "path"):
                        schema = param["schema"]
                        schema = resolve(doc, schema["$ref"]) if "$ref" in schema else schema
                        self.assertEqual(schema.get("type"), "string", param)
                        self.assertEqual(schema.get("maxLength"), 64, param)
                        self.assertEqual(schema.get("minLength"), 1, param)
                        pattern = re.compile(schema["pattern"])
                        for sample in samples:
                            self.assertEqual(pattern.search(sample) is not None, rule.fullmatch(sample) is not None,
                                             "%s's pattern %r on %r" % (param["name"], schema["pattern"], sample))
                    checked += 1
        self.assertGreaterEqual(checked, 13, "operations with a {world} or {id}")
