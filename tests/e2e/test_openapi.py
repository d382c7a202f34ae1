"""docs/openapi.json: a well-formed OpenAPI 3.1 document covering every
path of API.md, served unchanged at GET /v1/openapi.json."""

import json
import os

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
