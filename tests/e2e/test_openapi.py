"""docs/openapi.json: a well-formed OpenAPI 3.1 document covering every
path of API.md, served unchanged at GET /v1/openapi.json."""

import json
import os
import re

from harness import DaemonCase
from wire import ENDPOINTS

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "openapi.json")
METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}


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
        self.assertEqual(documented, {(m, p) for m, p, _ in ENDPOINTS}, "the document lists other operations")

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
