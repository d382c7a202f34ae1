"""Golden fixtures: hand-written expected responses (tests/e2e/golden/*.json)
compared with the daemon's as parsed JSON.

A fixture holds "setup" requests (each with its expected status), the
"request", the expected "status", "content_type" and "response", and the
"tolerance" for numbers. In "response", "$any" matches any value and
"$string" any non-empty string; "unordered_points" maps a JSON pointer of
the response to a list of points expected in any order."""

import glob
import json
import os
import unittest

from harness import MEDIA_TYPES, PROBLEM_TYPES, DaemonCase, describe_difference

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def resolve(doc, pointer):
    for part in pointer.strip("/").split("/"):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def expected_type(fixture_type, encoding):
    """The fixture's content type (written for JSON) in the encoding the
    request asked for: the values are the same in either."""
    for types in (MEDIA_TYPES, PROBLEM_TYPES):
        if fixture_type == types["json"]:
            return types[encoding]
    return fixture_type


class Comparator(unittest.TestCase):
    """The fixture comparison itself must be able to fail."""

    def test_differences_are_found(self):
        want = {"a": [1, 2.5], "b": {"c": None, "d": "x"}, "e": "$any", "f": "$string"}
        self.assertIsNone(describe_difference(want, {"a": [1, 2.5 + 1e-10], "b": {"c": None, "d": "x"},
                                                     "e": [3], "f": "text"}, 1e-9))
        bad = [
            {"a": [1, 2.6], "b": {"c": None, "d": "x"}, "e": 0, "f": "t"},           # number off
            {"a": [1], "b": {"c": None, "d": "x"}, "e": 0, "f": "t"},                # length
            {"a": [1, 2.5], "b": {"c": None, "d": "x", "z": 1}, "e": 0, "f": "t"},   # extra key
            {"a": [1, 2.5], "b": {"c": None}, "e": 0, "f": "t"},                     # missing key
            {"a": [1, 2.5], "b": {"c": 0, "d": "x"}, "e": 0, "f": "t"},              # null vs 0
            {"a": [1, 2.5], "b": {"c": None, "d": "x"}, "e": 0, "f": ""},            # empty string
            {"a": [True, 2.5], "b": {"c": None, "d": "x"}, "e": 0, "f": "t"},        # bool vs number
        ]
        for got in bad:
            with self.subTest(got=got):
                self.assertIsNotNone(describe_difference(want, got, 1e-9))


class Golden(DaemonCase):

    def test_fixtures(self):
        files = sorted(glob.glob(os.path.join(GOLDEN, "*.json")))
        self.assertGreaterEqual(len(files), 10, "golden fixtures missing from %s" % GOLDEN)
        for path in files:
            name = os.path.basename(path)
            with self.subTest(fixture=name):
                with open(path) as f:
                    fx = json.load(f)
                self.run_fixture(name, fx)

    def run_fixture(self, name, fx):
        for step in fx.get("setup", []):
            r = self.daemon.request(step["method"], step["path"], step.get("body"))
            self.assertEqual(r.status, step["status"], "%s setup %s %s: %s" % (name, step["method"], step["path"],
                                                                              r.describe()))
        req = fx["request"]
        r = self.daemon.request(req["method"], req["path"], req.get("body"))
        what = "%s: %s %s -> %s" % (name, req["method"], req["path"], r.describe())
        self.assertEqual(r.status, fx["status"], what)
        want_type = expected_type(fx["content_type"], r.requested)
        self.assertTrue(r.content_type.startswith(want_type), "content type %r: %s" % (r.content_type, what))
        self.assertIsNone(r.json_error, what)
        diff = describe_difference(fx["response"], r.json, fx["tolerance"])
        if diff:
            self.fail("%s\n  first difference: %s" % (what, diff))
        for pointer, points in fx.get("unordered_points", {}).items():
            got = sorted(resolve(r.json, pointer))
            want = sorted(points)
            diff = describe_difference(want, got, fx["tolerance"], pointer)
            if diff:
                self.fail("%s\n  %s (compared sorted)" % (what, diff))
