"""Hostile conditions around the data directory and /metrics (issue 25,
items 9 and 10): a data directory where no new file can be made (each
snapshot fails) is counted and shown, logged at a bounded rate, and costs
the clients nothing they were told; and churning thousands of
attacker-named worlds leaves the exposition no larger than its bound.

A read-only directory cannot be made for root (which the tests may run
as), so the failpoint journal_create:2+ (failpoint.h) fails every new
journal file after the first with EROFS, as a read-only directory does:
the journal already open keeps taking records, and every snapshot stops
where it would move the journal to a new file."""

import os
import tempfile
import time
import unittest

from harness import Daemon, DaemonCase
from test_metrics import parse_exposition
from wire import body_item, sphere

READY_TIMEOUT = 30
PAD = "p" * 1500  # a shape id cannot be long: the body grows by a pose's worth of digits instead


def scrape(d):
    r = d.request("GET", "/metrics")
    if r.status != 200:
        raise AssertionError("/metrics: %s" % r.describe())
    families = parse_exposition(r.raw.decode("utf-8"))
    return [sample for f in families.values() for sample in f["samples"]]


def value(samples, name):
    got = [v for n, labels, v in samples if n == name and not labels]
    if len(got) != 1:
        raise AssertionError("%s: %d unlabelled samples" % (name, len(got)))
    return got[0]


class ReadOnlyDataDirectory(unittest.TestCase):
    """Item 10."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="collisiond-ro-")
        self.addCleanup(self.tmp.cleanup)
        self.dir = os.path.join(self.tmp.name, "data")

    def start(self, env=None):
        d = Daemon(["--data-dir", self.dir, "--snapshot-every", "4K"], env)
        self.addCleanup(d.cleanup)
        d.start()
        deadline = time.monotonic() + READY_TIMEOUT
        while d.request("GET", "/readyz").status != 200:
            self.assertLess(time.monotonic(), deadline, d.log_tail())
            time.sleep(0.01)
        return d

    def put_shape(self, d, i):
        body = {"shape": sphere(1), "pose": {"position": [i, 0.123456789012345, 0.987654321098765]}}
        r = d.request("PUT", "/v1/worlds/ro/shapes/s%d" % i, body)
        self.assertIn(r.status, (200, 201), "a change was not acknowledged: %s" % r.describe())

    def test_failed_snapshots_are_counted_shown_and_logged_rarely(self):
        d = self.start({"COLLISIOND_FAILPOINT": "journal_create:2+"})
        self.assertEqual(d.request("PUT", "/v1/worlds/ro", {}).status, 201)
        # each write past --snapshot-every asks for a snapshot; they are
        # tried at most once a second, so this takes a few seconds
        written, failures = 0, 0
        deadline = time.monotonic() + 60
        while failures < 3:
            self.assertLess(time.monotonic(), deadline, "fewer than 3 failed snapshots: %s" % d.log_tail())
            for _ in range(20):
                self.put_shape(d, written)
                written += 1
            failures = value(scrape(d), "collisiond_snapshot_failures_total")
        samples = scrape(d)
        self.assertEqual(value(samples, "collisiond_snapshot_last_success_timestamp_seconds"), 0)
        self.assertEqual(value(samples, "collisiond_journal_failed"), 0)
        lines = [l for l in d.log_text().splitlines() if "snapshot" in l and '"error"' in l]
        self.assertEqual(len(lines), 1, "%d failures logged as %d lines: %s" % (failures, len(lines), lines[:4]))
        self.assertIn("Read-only file system", lines[0])
        # nothing was made but the one journal, which holds every change
        names = sorted(os.listdir(self.dir))
        self.assertEqual([n for n in names if n.startswith("journal-")], ["journal-%020d.log" % 1], names)
        self.assertFalse([n for n in names if n.startswith("snapshot-")], names)
        self.assertEqual(d.stop(), 0, d.log_tail())
        # the directory writable again: everything acknowledged is there,
        # and a snapshot now succeeds and shows
        before = time.time()
        d = self.start()
        world = d.request("GET", "/v1/worlds/ro").json
        self.assertEqual(world["stats"]["shapes"], written)
        deadline = time.monotonic() + 60
        while value(scrape(d), "collisiond_snapshot_last_success_timestamp_seconds") == 0:
            self.assertLess(time.monotonic(), deadline, d.log_tail())
            self.put_shape(d, written)
            written += 1
        samples = scrape(d)
        after = time.time()
        stamp = value(samples, "collisiond_snapshot_last_success_timestamp_seconds")
        self.assertTrue(before - 1 <= stamp <= after + 1, (before, stamp, after))
        self.assertEqual(value(samples, "collisiond_snapshot_failures_total"), 0)
        self.assertEqual(d.stop(), 0, d.log_tail())
        # a restart shows the snapshot it recovered from: the shutdown's
        snaps = [n for n in os.listdir(self.dir) if n.startswith("snapshot-") and n.endswith(".snap")]
        self.assertEqual(len(snaps), 1, snaps)
        mtime = os.stat(os.path.join(self.dir, snaps[0])).st_mtime
        d = self.start()
        self.assertAlmostEqual(value(scrape(d), "collisiond_snapshot_last_success_timestamp_seconds"), mtime,
                               delta=0.002)
        self.assertEqual(d.stop(), 0, d.log_tail())

    def test_no_data_directory_shows_zeros(self):
        d = Daemon()
        self.addCleanup(d.cleanup)
        d.start()
        samples = scrape(d)
        self.assertEqual(value(samples, "collisiond_snapshot_failures_total"), 0)
        self.assertEqual(value(samples, "collisiond_snapshot_last_success_timestamp_seconds"), 0)
        self.assertEqual(d.stop(), 0)


class WorldNameChurn(DaemonCase):
    """Item 9: 10,000 attacker-named worlds, created then deleted, leave at
    most --metrics-worlds world labels while they live and, once gone, the
    very series a single world's create and delete leave."""

    BOUND = 100  # the default --metrics-worlds
    N = 10000

    def stream_all(self, lines, batch=500):
        s = self.daemon.stream()
        try:
            for i in range(0, len(lines), batch):
                part = lines[i:i + batch]
                s.send(*part)
                for m in part:
                    reply = s.read_line()
                    self.assertIn(reply["status"], (200, 201, 204), reply)
        finally:
            s.close()

    def series(self):
        return {(n, tuple(sorted(labels.items()))) for n, labels, _ in scrape(self.daemon)}

    def world_labels(self, samples):
        return {labels["world"] for _, labels, _ in samples if "world" in labels}

    def test_churn_keeps_the_bound(self):
        def put(name):
            return {"id": name, "method": "PUT", "path": "/v1/worlds/" + name, "body": {"capacity": 1}}

        def delete(name):
            return {"id": name, "method": "DELETE", "path": "/v1/worlds/" + name}

        def shape(name):
            return {"id": name, "method": "PUT", "path": "/v1/worlds/%s/shapes/a" % name, "body": {"shape": sphere(1)}}

        self.stream_all([put("warm"), shape("warm"), delete("warm")])
        scrape(self.daemon)  # so that the scrape's own series are in the baseline
        baseline = self.series()
        names = ["x%05d-%s" % (i, "evil" * (i % 7)) for i in range(self.N)]
        self.stream_all([put(n) for n in names] + [shape(n) for n in names[::50]])
        live = scrape(self.daemon)
        labels = self.world_labels(live)
        self.assertLessEqual(len(labels), self.BOUND + 1, "%d world labels" % len(labels))
        self.assertIn("(other)", labels)
        self.assertEqual(value(live, "collisiond_worlds_folded"), self.N - self.BOUND)
        self.stream_all([delete(n) for n in names])
        after = self.series()
        self.assertEqual(after, baseline, "series added: %s; gone: %s"
                         % (sorted(after - baseline)[:5], sorted(baseline - after)[:5]))
