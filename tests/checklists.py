#!/usr/bin/env python3
"""Holds the code to the checklists of docs/HACKING.md, where a missed
step can be seen in the sources: a route, a shape type, a metric or a
Check suite that one of the places the checklist names does not know.

    python3 tests/checklists.py [ROOT]

The sources of truth are the route table (server/api/router.c), the
shape type enum (core/include/cq/shape.h), the metric names the daemon
writes (server/ops/metrics*.c) and the suite files (tests/check_*.c);
every other place is read on its own terms and must name each of them.
Every miss is one line naming what is missing, where, and the step of
HACKING.md that adds it. Exits 0 when there is none, 1 otherwise, 2 on
bad usage. The steps a compiler or a Check suite already enforces are
not checked again here (HACKING.md says which test catches them)."""

import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ROUTE_ROW = re.compile(r'\{"([A-Z]+)", "(/[^"]*)", (cqd_h_\w+), ([^,]+),')
WIRE_ENDPOINT = re.compile(r'\("([A-Z]+)", "(/[^"]*)", (True|False)\)')
UNIT_ENDPOINT = re.compile(r'\{"([A-Z]+)", "[^"]*", "(/[^"]*)", (cqd_h_\w+),')
SHAPE_ENUM = re.compile(r"typedef enum cq_shape_type \{(.*?)\} cq_shape_type;", re.S)
SUITE_FN = re.compile(r"^Suite \*(\w+)_suite\(void\)$", re.M)


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def section(text, heading):
    """The lines of a markdown document under heading, to the next heading
    of the same or a higher level."""
    level = heading.split(" ")[0]
    start = text.index("\n" + heading + "\n")
    rest = text[start + len(heading) + 2:]
    m = re.search(r"^#{1,%d} " % len(level), rest, re.M)
    return rest[:m.start()] if m else rest


def step(checklist, number):
    return "(HACKING.md, %s, step %d)" % (checklist, number)


# ---- routes ------------------------------------------------------------

def routes(root):
    """[(method, pattern, handler, flags)] of the route table, in order."""
    rows = ROUTE_ROW.findall(read(root, "server/api/router.c"))
    return [(m, p, h, set(f.replace(" ", "").split("|"))) for m, p, h, f in rows]


def check_routes(root):
    table = routes(root)
    if not table:
        return ["server/api/router.c: no route rows found (has the row's layout changed?)"]
    misses = []
    api = read(root, "docs/API.md")
    wire = read(root, "tests/e2e/wire.py")
    wire_rows = {(m, p): body == "True" for m, p, body in WIRE_ENDPOINT.findall(wire)}
    open_paths = re.search(r"^OPEN_PATHS = \{(.*)\}$", wire, re.M)
    open_paths = set(re.findall(r'"(/[^"]*)":', open_paths.group(1))) if open_paths else set()
    unit = {(m, p): h for m, p, h in UNIT_ENDPOINT.findall(read(root, "tests/check_server_routes.c"))}
    for method, pattern, handler, flags in table:
        name = "%s %s" % (method, pattern)
        if not re.search(r"^(?:### |\| )`%s %s[`? ]" % (method, re.escape(pattern)), api, re.M):
            misses.append("%s: docs/API.md has no heading or table row `%s` %s"
                          % (name, name, step("adding an endpoint", 4)))
        if unit.get((method, pattern)) != handler:
            misses.append("%s: not in tests/check_server_routes.c endpoints[] with %s %s"
                          % (name, handler, step("adding an endpoint", 6)))
        if (method, pattern) not in wire_rows:
            misses.append("%s: not in tests/e2e/wire.py ENDPOINTS %s" % (name, step("adding an endpoint", 7)))
        elif wire_rows[(method, pattern)] != ("CQD_ROUTE_BODY" in flags):
            misses.append("%s: tests/e2e/wire.py ENDPOINTS says takes_body=%s, the route's CQD_ROUTE_BODY says "
                          "otherwise %s" % (name, wire_rows[(method, pattern)], step("adding an endpoint", 7)))
        if ("CQD_ROUTE_OPEN" in flags) != (pattern in open_paths):
            misses.append("%s: CQD_ROUTE_OPEN and tests/e2e/wire.py OPEN_PATHS disagree %s"
                          % (name, step("adding an endpoint", 7)))
    known = {(m, p) for m, p, _, _ in table}
    for method, pattern in sorted(set(wire_rows) - known):
        misses.append("%s %s: in tests/e2e/wire.py ENDPOINTS but no route %s"
                      % (method, pattern, step("adding an endpoint", 7)))
    return misses


# ---- shape types -------------------------------------------------------

def shape_types(root):
    """[(enumerator, wire name)] of cq_shape_type, COUNT aside; the wire
    name is the enumerator's lower-case tail (core/src/names.c is held to
    it below)."""
    m = SHAPE_ENUM.search(read(root, "core/include/cq/shape.h"))
    names = re.findall(r"^\s*(CQ_\w+)", m.group(1), re.M) if m else []
    return [(e, e[3:].lower()) for e in names if e != "CQ_SHAPE_TYPE_COUNT"]


def msgpack_fixstr(name):
    return "\\x%02x%s" % (0xa0 + len(name), name)


def shape_places(root):
    """[(where, its text, what it must hold for (enumerator, name), step)]
    in the order of the shape type checklist."""
    c = "adding a shape type"
    places = [
        ("core/src/names.c", lambda e, n: '[%s] = "%s"' % (e, n), 2),
        ("core/src/collide.c", lambda e, n: re.compile(r"\[%s\]\[CQ_\w+\]|\[CQ_\w+\]\[%s\]" % (e, e)), 3),
        ("tests/check_dispatch.c", lambda e, n: "[%s] =" % e, 3),
        ("proto/src/decode_shape.c", lambda e, n: re.compile(r'\{%s, "[^"]+", \w+_fields\}' % e), 5),
        ("inspector/www/shapes.js", lambda e, n: 'case "%s":' % n, 8),
        ("clients/c/include/cqc_types.h", lambda e, n: "CQC_" + e[3:], 9),
        ("clients/c/src/dec_shape.c", lambda e, n: '"%s"' % n, 9),
        ("clients/c/src/enc.c", lambda e, n: '"%s"' % n, 9),
        ("clients/python/collisiond_client/geometry.py", lambda e, n: '{"type": "%s"' % n, 9),
        ("tests/fuzz/fuzz_decode.h", lambda e, n: "case %s:" % e, 10),
        ("tests/fuzz/fuzz_request.dict", lambda e, n: '"\\"%s\\""' % n, 10),
        ("tests/fuzz/fuzz_differential.dict", lambda e, n: '"\\x22%s\\x22"' % n, 10),
        ("tests/fuzz/fuzz_msgpack.dict", lambda e, n: '"%s"' % msgpack_fixstr(n), 10),
    ]
    out = [(path, read(root, path), want, step(c, n)) for path, want, n in places]
    api = section(read(root, "docs/API.md"), "### 2.2 Shapes")
    out.insert(4, ("docs/API.md section 2.2", api, lambda e, n: "| `%s` |" % n, step(c, 7)))
    return out


def check_shapes(root):
    types = shape_types(root)
    if not types:
        return ["core/include/cq/shape.h: no cq_shape_type enumerators found"]
    misses = []
    for where, text, want, which in shape_places(root):
        for enum, name in types:
            w = want(enum, name)
            if not (w.search(text) if hasattr(w, "search") else w in text):
                shown = w.pattern if hasattr(w, "pattern") else w
                misses.append("%s (%s): %s lacks %s %s" % (enum, name, where, shown, which))
    return misses + check_shape_schemas(root, types)


def check_shape_schemas(root, types):
    """The OpenAPI document's three lists of shape types, read as JSON."""
    schemas = json.loads(read(root, "docs/openapi.json"))["components"]["schemas"]
    shape = schemas.get("Shape", {})
    mapping = shape.get("discriminator", {}).get("mapping", {})
    one_of = {r.get("$ref") for r in shape.get("oneOf", [])}
    fallback = schemas.get("FallbackRecord", {}).get("properties", {}).get("shapes", {}).get("items", {})
    misses = []
    for enum, name in types:
        ref = mapping.get(name)
        if ref is None or ref not in one_of or ref.split("/")[-1] not in schemas:
            misses.append("%s (%s): docs/openapi.json Shape lacks a oneOf schema mapped from \"%s\" %s"
                          % (enum, name, name, step("adding a shape type", 6)))
        if name not in fallback.get("enum", []):
            misses.append("%s (%s): docs/openapi.json FallbackRecord.shapes enum lacks \"%s\" %s"
                          % (enum, name, name, step("adding a shape type", 6)))
    return misses


# ---- metrics -----------------------------------------------------------

def metric_names(root):
    """Every family name the daemon writes, from its metric sources."""
    names = set()
    for f in sorted(os.listdir(os.path.join(root, "server/ops"))):
        if f.startswith("metrics") and f.endswith(".c"):
            names |= set(re.findall(r'"((?:collisiond|process)_[a-z_]+)"', read(root, "server/ops/" + f)))
    return sorted(names)


def check_metrics(root):
    names = metric_names(root)
    if not names:
        return ["server/ops/metrics*.c: no metric names found"]
    doc = section(read(root, "docs/API.md"), "## 12. Metrics")
    return ["%s: not in docs/API.md section 12 as `%s` %s" % (n, n, step("adding a metric", 3))
            for n in names if "`%s`" % n not in doc]


# ---- Check suites ------------------------------------------------------

def check_suites(root):
    listed = set(re.findall(r"X\((\w+)\)", read(root, "tests/suites.h")))
    misses = []
    for f in sorted(os.listdir(os.path.join(root, "tests"))):
        if not (f.startswith("check_") and f.endswith(".c")):
            continue
        text = read(root, "tests/" + f)
        for name in SUITE_FN.findall(text):
            if name not in listed:
                misses.append("%s_suite (tests/%s): not in tests/suites.h CQ_SUITES, so it never runs %s"
                              % (name, f, step("adding a Check suite", 2)))
            if 'suite_create("%s")' % name not in text:
                misses.append('%s_suite (tests/%s): its suite_create name is not "%s", which CK_RUN_SUITE '
                              'and tests/run_suites.py use %s' % (name, f, name, step("adding a Check suite", 1)))
    return misses


CHECKS = (check_routes, check_shapes, check_metrics, check_suites)


def misses_of(root):
    return [m for check in CHECKS for m in check(root)]


def main(argv):
    if len(argv) > 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    misses = misses_of(argv[1] if len(argv) == 2 else ROOT)
    for m in misses:
        print(m)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
