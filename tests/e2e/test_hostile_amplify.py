"""Answers that would be far larger than their request (issue 25, item 3):
--max-response refuses them with 422 and the size they would have had
(or, refused before they are built, a lower bound of it), holding no
more than a few times the limit while it finds out. The world is 500
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
WANTED = re.compile(r"the answer would be (at least )?(\d+) bytes; this server sends at most (\d+) \(--max-response\)")


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
        self.assertEqual(int(m.group(3)), LIMIT)
        return int(m.group(2)), bool(m.group(1))

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
        wanted, bound = self.refused_size("POST", "/v1/worlds/heap/contacts", {})
        whole = self.whole_size("POST", "/v1/worlds/heap/contacts", {})
        self.assertGreater(wanted, LIMIT)
        # 124,750 pairs are far more than 1 MiB holds: refused before they are built
        self.assertTrue(bound)
        self.assertLessEqual(wanted, whole)

    def test_pairs_past_the_limit_are_refused(self):
        self.assertGreater(self.refused_size("GET", "/v1/worlds/heap/pairs")[0], LIMIT)

    def test_the_daemon_serves_small_answers_after(self):
        self.refused_size("POST", "/v1/worlds/heap/contacts", {})
        got = self.ok("POST", "/v1/worlds/heap/contacts", {"ids": ["s000", "s001"]})
        # Every sphere touches every other: the pairs with s000 or s001.
        touched = {tuple(sorted((p["a"], p["b"]))) for p in got["pairs"]}
        self.assertEqual(len(touched), 2 * (SPHERES - 1) - 1)
        self.assertTrue(all("s000" in t or "s001" in t for t in touched))
        self.assertEqual(self.req("GET", "/healthz").status, 200)


MIB = 1 << 20
# 1,414 coincident spheres: 998,991 pairs, every one touching, just under
# the default --max-world-pairs; the import is about 80 KB.
COINCIDENT = 1414


def status_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s for %d" % (key, pid))


class ContactsMemory(DaemonCase):
    """A contacts answer that cannot be sent is refused holding about what
    the limit allows, not an array of every touching pair (312 bytes each,
    311 MiB here). The world's own per-pair storage (its pair cache and the
    contact pass's work arrays, bounded by --max-world-pairs, kept by the
    world) is paid by a first query; the peak resident size (VmHWM, reset
    through clear_refs) of the same query again is then held to a few
    times the limit."""

    FLAGS = ("--max-response", "1M")

    def test_refusing_a_huge_contacts_answer_holds_a_few_times_the_limit(self):
        shapes = [body_item("s%04d" % i, sphere(1.0), (0, 0, 0)) for i in range(COINCIDENT)]
        r = self.daemon.request("PUT", "/v1/worlds/same", {"settings": {}, "shapes": shapes})
        self.assertIn(r.status, (200, 201), r.describe())
        self.refused_size("POST", "/v1/worlds/same/contacts", {})
        pid = self.daemon.proc.pid
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")  # the peak starts again from the resident size
        before = status_kib(pid, "VmRSS")
        wanted, bound = self.refused_size("POST", "/v1/worlds/same/contacts", {})
        peak = status_kib(pid, "VmHWM")
        pairs = COINCIDENT * (COINCIDENT - 1) // 2
        grew = (peak - before) * 1024
        self.assertLess(grew, 16 * LIMIT, "contacts peaked %d MiB above its start" % (grew // MIB))
        self.assertTrue(bound)
        self.assertGreaterEqual(wanted, pairs * 40)  # no encoding of a pair is shorter
        got = self.ok("POST", "/v1/worlds/same/contacts", {"ids": ["s0000"]})
        self.assertEqual(len(got["pairs"]), COINCIDENT - 1)

    refused_size = MaxResponse.refused_size
