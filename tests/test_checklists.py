#!/usr/bin/env python3
"""tests/checklists.py against a copy of the files it reads: the copy as
committed passes, and each planted miss (a route, a shape type, a metric,
a suite that skips a step of docs/HACKING.md) is reported, naming the
place and the step. The expected lines are written out here, not taken
from a run.

    python3 tests/test_checklists.py"""

import glob
import os
import re
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import checklists  # noqa: E402

READ = [
    "server/api/router.c", "docs/API.md", "docs/openapi.json", "tests/e2e/wire.py",
    "tests/check_server_routes.c", "core/include/cq/shape.h", "core/src/names.c", "core/src/collide.c",
    "tests/check_dispatch.c", "proto/src/decode_shape.c", "inspector/www/shapes.js",
    "clients/c/include/cqc_types.h", "clients/c/src/dec_shape.c", "clients/c/src/enc.c",
    "clients/python/collisiond_client/geometry.py",
    "tests/fuzz/fuzz_decode.h", "tests/fuzz/fuzz_request.dict", "tests/fuzz/fuzz_differential.dict",
    "tests/fuzz/fuzz_msgpack.dict", "tests/suites.h",
]
READ_GLOBS = ["server/ops/metrics*.c", "tests/check_*.c"]

EP = "(HACKING.md, adding an endpoint, step %d)"
SH = "(HACKING.md, adding a shape type, step %d)"


# The steps of each HACKING.md checklist that tests/checklists.py checks,
# as the planted misses below see them named.
CHECKED = {
    "adding an endpoint": {4, 6, 7},
    "adding a shape type": {2, 3, 5, 6, 7, 8, 9, 10},
    "adding a metric": {3},
    "adding a Check suite": {1, 2},
}


def hacking_steps(text):
    """{checklist: {step number: its text}} of docs/HACKING.md."""
    steps = {}
    for part in re.split(r"^## ", text, flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        items = re.split(r"^(\d+)\. ", body, flags=re.M)
        steps[title.strip().lower().replace("check suite", "Check suite")] = {
            int(n): t for n, t in zip(items[1::2], items[2::2])}
    return steps


class HackingSteps(unittest.TestCase):
    def test_the_checked_steps_are_the_ones_the_guide_says(self):
        with open(os.path.join(ROOT, "docs", "HACKING.md"), encoding="utf-8") as f:
            steps = hacking_steps(f.read())
        for checklist, numbers in CHECKED.items():
            self.assertIn(checklist, steps, "docs/HACKING.md has no section \"%s\"" % checklist)
            said = {n for n, t in steps[checklist].items() if "tests/checklists.py" in t}
            self.assertEqual(said, numbers, "docs/HACKING.md, %s: the steps that cite tests/checklists.py"
                             % checklist)


class Checklists(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="checklists-")
        paths = READ + [os.path.relpath(p, ROOT) for g in READ_GLOBS for p in glob.glob(os.path.join(ROOT, g))]
        for path in paths:
            os.makedirs(os.path.join(self.root, os.path.dirname(path)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, path), os.path.join(self.root, path))

    def tearDown(self):
        shutil.rmtree(self.root)

    def edit(self, path, old, new):
        full = os.path.join(self.root, path)
        with open(full) as f:
            text = f.read()
        self.assertIn(old, text, "%s no longer holds the text the test plants a miss in" % path)
        with open(full, "w") as f:
            f.write(text.replace(old, new, 1))

    def misses(self):
        return checklists.misses_of(self.root)

    def test_the_tree_keeps_every_step(self):
        self.assertEqual(self.misses(), [])

    def test_a_new_route_that_misses_every_listed_step(self):
        self.edit("server/api/router.c", '    {"GET", "/v1/worlds", cqd_h_world_list,',
                  '    {"GET", "/v1/worlds/{world}/stats", cqd_h_world_stats, CQD_ROUTE_OPEN, "worldStats", NULL,'
                  ' NULL},\n    {"GET", "/v1/worlds", cqd_h_world_list,')
        name = "GET /v1/worlds/{world}/stats"
        self.assertEqual(self.misses(), [
            "%s: docs/API.md has no heading or table row `%s` %s" % (name, name, EP % 4),
            "%s: not in tests/check_server_routes.c endpoints[] with cqd_h_world_stats %s" % (name, EP % 6),
            "%s: not in tests/e2e/wire.py ENDPOINTS %s" % (name, EP % 7),
            "%s: CQD_ROUTE_OPEN and tests/e2e/wire.py OPEN_PATHS disagree %s" % (name, EP % 7),
        ])

    def test_a_route_whose_body_flag_and_wire_row_part(self):
        self.edit("tests/e2e/wire.py", '("POST", "/v1/worlds/{world}/sweep", True)',
                  '("POST", "/v1/worlds/{world}/sweep", False)')
        self.edit("tests/e2e/wire.py", '    ("GET", "/metrics", False),\n', "")
        self.edit("tests/e2e/wire.py", '("GET", "/readyz", False),',
                  '("GET", "/readyz", False), ("GET", "/livez", False),')
        self.assertEqual(self.misses(), [
            "GET /metrics: not in tests/e2e/wire.py ENDPOINTS %s" % (EP % 7),
            "POST /v1/worlds/{world}/sweep: tests/e2e/wire.py ENDPOINTS says takes_body=False, the route's "
            "CQD_ROUTE_BODY says otherwise %s" % (EP % 7),
            "GET /livez: in tests/e2e/wire.py ENDPOINTS but no route %s" % (EP % 7),
        ])

    def test_a_route_mentioned_in_passing_is_not_documented(self):
        # section 7's row names it with its query; section 13 mentions it in prose only
        self.edit("docs/API.md", "| `GET /metrics/fallbacks?limit=N` |", "| fallbacks |")
        self.edit("docs/API.md", "### `POST /v1/worlds/{world}/raycast`", "### Ray casts")
        self.assertEqual(self.misses(), [
            "GET /metrics/fallbacks: docs/API.md has no heading or table row `GET /metrics/fallbacks` %s" % (EP % 4),
            "POST /v1/worlds/{world}/raycast: docs/API.md has no heading or table row "
            "`POST /v1/worlds/{world}/raycast` %s" % (EP % 4),
        ])

    def test_a_new_shape_type_that_misses_every_listed_step(self):
        self.edit("core/include/cq/shape.h", "    CQ_CONVEX,\n", "    CQ_CONVEX,\n    CQ_CYLINDER,\n")
        s = "CQ_CYLINDER (cylinder): "
        self.assertEqual(self.misses(), [
            s + 'core/src/names.c lacks [CQ_CYLINDER] = "cylinder" ' + SH % 2,
            s + r"core/src/collide.c lacks \[CQ_CYLINDER\]\[CQ_\w+\]|\[CQ_\w+\]\[CQ_CYLINDER\] " + SH % 3,
            s + "tests/check_dispatch.c lacks [CQ_CYLINDER] = " + SH % 3,
            s + r'proto/src/decode_shape.c lacks \{CQ_CYLINDER, "[^"]+", \w+_fields\} ' + SH % 5,
            s + "docs/API.md section 2.2 lacks | `cylinder` | " + SH % 7,
            s + 'inspector/www/shapes.js lacks case "cylinder": ' + SH % 8,
            s + "clients/c/include/cqc_types.h lacks CQC_CYLINDER " + SH % 9,
            s + 'clients/c/src/dec_shape.c lacks "cylinder" ' + SH % 9,
            s + 'clients/c/src/enc.c lacks "cylinder" ' + SH % 9,
            s + 'clients/python/collisiond_client/geometry.py lacks {"type": "cylinder" ' + SH % 9,
            s + "tests/fuzz/fuzz_decode.h lacks case CQ_CYLINDER: " + SH % 10,
            s + r'tests/fuzz/fuzz_request.dict lacks "\"cylinder\"" ' + SH % 10,
            s + r'tests/fuzz/fuzz_differential.dict lacks "\x22cylinder\x22" ' + SH % 10,
            s + r'tests/fuzz/fuzz_msgpack.dict lacks "\xa8cylinder" ' + SH % 10,
            s + 'docs/openapi.json Shape lacks a oneOf schema mapped from "cylinder" ' + SH % 6,
            s + 'docs/openapi.json FallbackRecord.shapes enum lacks "cylinder" ' + SH % 6,
        ])

    def test_a_shape_type_with_half_its_places(self):
        # the mapping names a schema the oneOf does not hold; the API.md row elsewhere than 2.2
        self.edit("docs/openapi.json", '"$ref": "#/components/schemas/MeshShape"\n',
                  '"$ref": "#/components/schemas/PlaneShape"\n')
        self.edit("docs/API.md", "| `mesh` | `vertices`", "| mesh | `vertices`")
        s = "CQ_MESH (mesh): "
        self.assertEqual(self.misses(), [
            s + "docs/API.md section 2.2 lacks | `mesh` | " + SH % 7,
            s + 'docs/openapi.json Shape lacks a oneOf schema mapped from "mesh" ' + SH % 6,
        ])

    def test_an_undocumented_metric(self):
        self.edit("server/ops/metrics.c", '"collisiond_worlds_folded"', '"collisiond_worlds_fold"')
        self.assertEqual(self.misses(), [
            "collisiond_worlds_fold: not in docs/API.md section 12 as `collisiond_worlds_fold` "
            "(HACKING.md, adding a metric, step 3)"])

    def test_a_suite_that_never_runs(self):
        self.edit("tests/suites.h", "    X(tri_tri)       \\\n", "")
        self.edit("tests/check_sap.c", 'suite_create("sap")', 'suite_create("broadphase")')
        self.assertEqual(self.misses(), [
            "sap_suite (tests/check_sap.c): its suite_create name is not \"sap\", which CK_RUN_SUITE and "
            "tests/run_suites.py use (HACKING.md, adding a Check suite, step 1)",
            "tri_tri_suite (tests/check_tri_tri.c): not in tests/suites.h CQ_SUITES, so it never runs "
            "(HACKING.md, adding a Check suite, step 2)",
        ])


if __name__ == "__main__":
    unittest.main()
