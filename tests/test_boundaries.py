#!/usr/bin/env python3
"""tests/boundaries.py against a small tree of its own: a clean one passes,
and each planted violation is reported, naming its file or symbol and its
rule. The expected lines are written out here, not taken from a run.

    python3 tests/test_boundaries.py"""

import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import boundaries  # noqa: E402

MARKERS = {
    "core/include/cq/api.h": '#define CQ_API __attribute__((visibility("default")))\n',
    "proto/include/cqp/api.h": '#define CQP_API __attribute__((visibility("default")))\n',
}

# A tree that keeps every rule: one source per archive.
CLEAN = {
    "core/include/cq/pub.h": '#include "cq/api.h"\n/// Public.\nCQ_API int cq_pub(void);\n',
    "core/src/priv.h": "int cq__helper(void);\n",
    "core/src/a.c": '#include "cq/pub.h"\n#include "priv.h"\n'
                    "int cq__helper(void) { return 1; }\nint cq_pub(void) { return cq__helper(); }\n",
    "proto/include/cqp/p.h": '#include "cqp/api.h"\n#include "cq/pub.h"\n/// Public.\nCQP_API int cqp_p(void);\n',
    "proto/src/b.c": '#include "cqp/p.h"\nint cqp_p(void) { return 2; }\nint cqp__q(void) { return 3; }\n',
    "server/state/s.h": "int cqd_s(void);\n",
    "server/state/s.c": '#include "s.h"\n#include "cqp/p.h"\nint cqd_s(void) { return 4; }\n',
    "server/replay/r.c": "int cqd_r(void) { return 5; }\n",
    "clients/c/src/c.c": "int cqc_c(void) { return 6; }\n",
    "tests/t.c": '#include "priv.h"\n#include "state/s.h"\n',
}
ARCHIVE_SOURCES = {
    "libcq.a": ["core/src/a.c"],
    "libcqp.a": ["proto/src/b.c"],
    "libcqd.a": ["server/state/s.c"],
    "libcqr.a": ["server/replay/r.c"],
    "libcqc.a": ["clients/c/src/c.c"],
}
INCLUDES = ["-Icore/include", "-Iproto/include", "-Iserver"]


def write(root, files):
    for path, text in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(text)


def build(root):
    """The five archives of root's sources, as the Makefile builds them."""
    out = os.path.join(root, "build")
    os.makedirs(out, exist_ok=True)
    for archive, srcs in ARCHIVE_SOURCES.items():
        objs = []
        for i, src in enumerate(srcs):
            obj = os.path.join(out, "%s.%d.o" % (archive, i))
            cc = [os.environ.get("CC", "cc"), "-std=c11", "-fvisibility=hidden", *INCLUDES]
            subprocess.run(cc + ["-c", src, "-o", obj], cwd=root, check=True)
            objs.append(obj)
        subprocess.run(["ar", "rcs", os.path.join(out, archive), *objs], check=True)
    return out


def check(files):
    with tempfile.TemporaryDirectory() as root:
        write(root, {**MARKERS, **CLEAN, **files})
        seen = {"files": 0, "includes": 0, "symbols": 0}
        out = build(root)
        bad = [v.replace(out + "/", "") for v in boundaries.violations(root, out, seen)]
        return sorted(bad), seen


class Boundaries(unittest.TestCase):
    def test_clean_tree_passes(self):
        bad, seen = check({})
        self.assertEqual(bad, [])
        self.assertEqual(seen["symbols"], 7)

    def test_private_header_from_another_layer(self):
        bad, _ = check({"proto/src/b.c": '#include "../../core/src/priv.h"\n' + CLEAN["proto/src/b.c"]})
        self.assertEqual(bad, ["proto/src/b.c:1: includes core/src/priv.h, one of core's private headers, "
                               "which only bench, core, tests may include (rule include)"])

    def test_server_header_from_core(self):
        bad, _ = check({"core/src/priv.h": '#include "state/s.h"\n' + CLEAN["core/src/priv.h"]})
        self.assertEqual(bad, ["core/src/priv.h:1: includes server/state/s.h, one of the server's own headers, "
                               "which only server, tests may include (rule include)"])

    def test_upper_layer_public_header_from_core(self):
        bad, _ = check({"core/src/priv.h": '#include "cqp/p.h"\n' + CLEAN["core/src/priv.h"]})
        self.assertEqual(bad, ["core/src/priv.h:1: includes proto/include/cqp/p.h, one of proto's public "
                               "headers, which only bench, proto, server, tests may include (rule include)"])

    def test_forbidden_library(self):
        bad, _ = check({"core/src/priv.h": "#include <jansson.h>\n" + CLEAN["core/src/priv.h"]})
        self.assertEqual(bad, ["core/src/priv.h:1: includes <jansson.h>: core uses no jansson.h (rule library)"])

    def test_unprefixed_symbol(self):
        bad, _ = check({"server/replay/r.c": CLEAN["server/replay/r.c"] + "int replay_main(void) { return 7; }\n"})
        self.assertEqual(bad, ["%s: replay_main: defined without the cqd_ prefix (rule prefix)" % self.at("libcqr.a")])

    def test_public_prefix_without_declaration(self):
        bad, _ = check({"core/src/a.c": CLEAN["core/src/a.c"] + "int cq_stray(void) { return 8; }\n"})
        self.assertEqual(bad, ["%s: cq_stray: no CQ_API declaration in core/include/ names it; internals are "
                               "cq__ (rule public)" % self.at("libcq.a")])

    def test_declared_but_hidden(self):
        # b.c no longer sees the CQP_API declaration, so cqp_p is built hidden.
        bad, _ = check({"proto/src/b.c": "int cqp_p(void) { return 2; }\nint cqp__q(void) { return 3; }\n"})
        self.assertEqual(bad, ["%s: cqp_p: declared CQP_API but built hidden (rule public)" % self.at("libcqp.a")])

    def test_internal_exported_and_marker_outside(self):
        bad, _ = check({"core/src/priv.h": '#include "cq/api.h"\nCQ_API int cq__helper(void);\n'})
        self.assertEqual(bad, ["core/src/priv.h:2: CQ_API outside core/include/ (rule internal)",
                               "%s: cq__helper: internal but exported (rule internal)" % self.at("libcq.a")])

    @staticmethod
    def at(archive):
        return "%s(%s.0.o)" % (archive, archive)


if __name__ == "__main__":
    unittest.main()
