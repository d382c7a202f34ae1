"""Answers that would be far larger than their request (issue 25, item 3):
--max-response refuses them with 422 and the size they would have had,
holding no more than the limit while it finds out. The world is 500
overlapping spheres, 124,750 touching pairs: a contacts answer of many
megabytes in either encoding from a 50 KB import. The oracle for the
size is the same answer taken whole from a second daemon without the
limit."""

import re

from harness import Daemon, DaemonCase
from wire import body_item, sphere

LIMIT = 1 << 20
SPHERES = 500
IMPORT = {"shapes": [body_item("s%03d" % i, sphere(1.0), (0.001 * i, 0, 0)) for i in range(SPHERES)]}
WANTED = re.compile(r"the answer would be (\d+) bytes; this server sends at most (\d+) \(--max-response\)")


class MaxResponse(DaemonCase):
    FLAGS = ("--max-response", "1M")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        r = cls.daemon.request("PUT", "/v1/worlds/heap", {"settings": {}, **IMPORT})
        assert r.status in (200, 201), r.describe()

    def refused_size(self, method, path, body=None):
        r = self.req(method, path, body)
        p = self.assertProblem(r, 422, "over-limit", context=path)
        m = WANTED.search(p["detail"])
        self.assertIsNotNone(m, p["detail"])
        self.assertEqual(int(m.group(2)), LIMIT)
        return int(m.group(1))

    def whole_size(self, method, path, body=None):
        """The answer's length from a daemon with the default limit."""
        other = Daemon()
        try:
            other.start()
            self.assertIn(other.request("PUT", "/v1/worlds/heap", {"settings": {}, **IMPORT}).status, (200, 201))
            r = other.request(method, path, body)
            self.assertEqual(r.status, 200, r.describe())
            return len(r.raw)
        finally:
            other.stop()
            other.cleanup()

    def test_contacts_past_the_limit_are_refused_with_their_size(self):
        wanted = self.refused_size("POST", "/v1/worlds/heap/contacts", {})
        whole = self.whole_size("POST", "/v1/worlds/heap/contacts", {})
        self.assertGreater(whole, LIMIT)
        self.assertEqual(wanted, whole)

    def test_pairs_past_the_limit_are_refused(self):
        self.assertGreater(self.refused_size("GET", "/v1/worlds/heap/pairs"), LIMIT)

    def test_the_daemon_serves_small_answers_after(self):
        self.refused_size("POST", "/v1/worlds/heap/contacts", {})
        got = self.ok("POST", "/v1/worlds/heap/contacts", {"ids": ["s000", "s001"]})
        # Every sphere touches every other: the pairs with s000 or s001.
        touched = {tuple(sorted((p["a"], p["b"]))) for p in got["pairs"]}
        self.assertEqual(len(touched), 2 * (SPHERES - 1) - 1)
        self.assertTrue(all("s000" in t or "s001" in t for t in touched))
        self.assertEqual(self.req("GET", "/healthz").status, 200)
