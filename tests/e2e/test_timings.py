"""Honest timings (docs/API.md sections 12 and 14): a request's duration
is the same span on both transports, from the whole request having
arrived to its reply being handed to the transport, body decoding
included; and the journal's disk cost is visible in /metrics.

The spans compared are the daemon's own (its access lines, its latency
histogram, its --record lines), never the test's clock. The oracles: the
same 10,000-move batch sent over HTTP and over the stream, interleaved,
must take the same median time within 20 % (the stream used to start its
clock after the line was parsed, 5x less); a request whose last bytes come
after a pause must not count the pause; the three places a request's
duration is written must agree with each other for every request; the
journal counters must move by exactly the bytes the journal files grew
by (os.stat, not the daemon) and by one write and, under --fsync always,
one fdatasync per change made one after another, and by no fdatasync
under --fsync no. Runs in both encodings (the run's)."""

import glob
import json
import os
import socket
import statistics
import tempfile
import time
import unittest

import harness
from harness import Daemon, encode_body
from test_metrics import parse_exposition
from wire import body_item, box

N = 10000
# The same batch runs over each transport one right after the other, in
# alternating order; the median of the pairs' ratios (stream / HTTP) must
# lie within BOUND of 1. A pair shares the machine's load of its moment,
# which on a busy machine swings each span by 2x from one second to the
# next: a median of ratios of neighbours stands that, one of each
# transport's spans alone does not. Pairs are added, from MIN_PAIRS on,
# until the median agrees or MAX_PAIRS were made.
MIN_PAIRS = 5
MAX_PAIRS = 40
BOUND = 0.20
BATCH_ROUTE = {"method": "POST", "route": "/v1/worlds/{world}/batch", "status": "200"}
DURATION = "collisiond_request_duration_seconds"
READY_TIMEOUT = 30.0


def position(i, step):
    """Box i on a 100 x 100 grid 2 apart (half extent 0.4: no two touch), shifted by step."""
    return (2.0 * (i % 100) + step, 2.0 * (i // 100), 0.0)


def moves(step):
    return {"move": [{"id": "b%d" % i, "pose": {"position": list(position(i, step))}} for i in range(N)]}


def scrape(daemon):
    r = daemon.request("GET", "/metrics", encoding="json")
    if r.status != 200:
        raise AssertionError("GET /metrics: %s" % r.describe())
    return parse_exposition(r.raw.decode("utf-8"))


def sample(families, family, name, labels=None):
    """The value of sample name (with exactly labels) of family, 0 when absent."""
    for n, l, v in families.get(family, {"samples": []})["samples"]:
        if n == name and l == (labels or {}):
            return v
    return 0.0


def access_durations(daemon):
    """{request_id: duration_us} of the daemon's access lines."""
    out = {}
    for text in daemon.log_text().splitlines():
        if text.strip():
            rec = json.loads(text)
            if rec.get("msg") == "request":
                out[rec["request_id"]] = rec["duration_us"]
    return out


def wait_ready(daemon):
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if daemon.request("GET", "/readyz").status == 200:
            return
        time.sleep(0.05)
    raise AssertionError("not ready after %.0f s: %s" % (READY_TIMEOUT, daemon.log_tail()))


class TransportTimings(unittest.TestCase):
    """One world of 10,000 boxes; every box moved by one batch, over each
    transport in turn."""

    @classmethod
    def setUpClass(cls):
        tmp = tempfile.TemporaryDirectory(prefix="collisiond-timings-")
        cls.addClassCleanup(tmp.cleanup)
        cls.record = os.path.join(tmp.name, "session.jsonl")
        cls.daemon = Daemon(("--access-log", "all", "--record", cls.record))
        cls.addClassCleanup(cls.daemon.cleanup)
        cls.daemon.start()

    @classmethod
    def tearDownClass(cls):
        rc = cls.daemon.stop()
        if rc != 0:
            raise AssertionError("collisiond exited with %s: %s" % (rc, cls.daemon.log_tail()))

    def batch_http(self, rid, body):
        r = self.daemon.request("POST", "/v1/worlds/arena/batch", body, headers={"X-Request-Id": rid})
        self.assertEqual(r.status, 200, r.describe())
        self.assertEqual(r.json["moved"], N, r.describe())

    def batch_stream(self, rid, body):
        self.conn.send({"id": rid, "method": "POST", "path": "/v1/worlds/arena/batch",
                        "headers": {"X-Request-Id": rid}, "body": body})
        reply = self.conn.read_line()
        self.assertIsNotNone(reply, "the stream closed")
        self.assertEqual((reply["id"], reply["status"]), (rid, 200), reply)
        self.assertEqual(reply["body"]["moved"], N, reply)

    def timed(self, transport, rid, body):
        """Sends the batch; returns its duration in µs by the access log,
        after checking the histogram counted it once with the same span
        and the --record line has it too (read at the end: check_records)."""
        before = scrape(self.daemon)
        (self.batch_http if transport == "http" else self.batch_stream)(rid, body)
        after = scrape(self.daemon)
        count, seconds = (sample(after, DURATION, DURATION + s, BATCH_ROUTE)
                          - sample(before, DURATION, DURATION + s, BATCH_ROUTE) for s in ("_count", "_sum"))
        logged = access_durations(self.daemon)
        with self.subTest(request=rid):
            self.assertEqual(count, 1, "the histogram counted the batch once")
            self.assertIn(rid, logged)
            # the access line cuts the histogram's nanoseconds to microseconds
            self.assertLessEqual(abs(seconds * 1e6 - logged[rid] - 0.5), 0.5 + 1e-3,
                                 "histogram %.3f µs, access line %d µs" % (seconds * 1e6, logged[rid]))
        return logged[rid]

    def check_records(self, durations):
        with open(self.record, "rb") as f:
            recorded = {rec["request_id"]: rec["duration_us"] for rec in map(json.loads, f)}
        for rid, us in durations.items():
            self.assertEqual(recorded.get(rid), us, "%s: the --record line's duration_us" % rid)

    def test_the_same_batch_takes_as_long_on_both_transports(self):
        world = {"shapes": [body_item("b%d" % i, box(0.4, 0.4, 0.4), position(i, 0.0)) for i in range(N)]}
        r = self.daemon.request("PUT", "/v1/worlds/arena", world)
        self.assertEqual(r.status, 201, r.describe())
        bodies = [moves(0.1), moves(0.0)]  # each batch moves every box back or forth
        self.conn = self.daemon.stream()
        self.addCleanup(self.conn.close)
        durations, pairs, ratio = {}, [], None
        for k in range(MAX_PAIRS):
            order = ("http", "stream") if k % 2 == 0 else ("stream", "http")
            spans = {}
            for j, transport in enumerate(order):
                rid = "%s-%d" % (transport, k)
                spans[transport] = durations[rid] = self.timed(transport, rid, bodies[(2 * k + j) % 2])
            pairs.append((spans["http"], spans["stream"]))
            ratio = statistics.median(s / h for h, s in pairs)
            if len(pairs) >= MIN_PAIRS and abs(ratio - 1) <= BOUND:
                break
        self.check_records(durations)
        self.assertLessEqual(abs(ratio - 1), BOUND,
                             "median of stream / HTTP over %d pairs %.2f; (HTTP µs, stream µs): %s"
                             % (len(pairs), ratio, pairs))


# A request sent in two halves PAUSE apart: its span must not hold the
# pause. A unit-sphere pair takes microseconds; half the pause leaves a
# loaded host a wide margin and still fails a clock started at the
# request's first bytes.
PAUSE = 0.4
PAIR = {"a": {"shape": {"type": "sphere", "radius": 1}},
        "b": {"shape": {"type": "sphere", "radius": 1}, "pose": {"position": [1.5, 0, 0]}}}


class ClockStartsAtTheLastByte(unittest.TestCase):
    """A request whose body (or line, or frame) arrives in two parts with a
    pause between them is timed from its last byte: the pause is the
    client's, not the daemon's."""

    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(("--access-log", "all"))
        cls.addClassCleanup(cls.daemon.cleanup)
        cls.daemon.start()

    def span(self, rid):
        durations = access_durations(self.daemon)
        self.assertIn(rid, durations, self.daemon.log_tail())
        return durations[rid]

    def assert_pause_excluded(self, rid):
        us = self.span(rid)
        self.assertLess(us, PAUSE * 1e6 / 2, "%s: %d µs for a request paused %.1f s before its last bytes"
                        % (rid, us, PAUSE))

    def test_http_body_in_two_parts(self):
        body = encode_body(PAIR)
        kind = "msgpack" if harness.ENCODING == "msgpack" else "json"
        head = ("POST /v1/pair HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/%s\r\n"
                "X-Request-Id: paused-http\r\nContent-Length: %d\r\n\r\n" % (kind, len(body))).encode()
        with socket.create_connection(("127.0.0.1", self.daemon.http_port), timeout=10) as s:
            s.sendall(head + body[:len(body) // 2])
            time.sleep(PAUSE)
            s.sendall(body[len(body) // 2:])
            answer = b""
            while not answer.startswith(b"HTTP/1.1 ") or b"\r\n\r\n" not in answer:
                chunk = s.recv(65536)
                if not chunk:
                    break
                answer += chunk
        self.assertTrue(answer.startswith(b"HTTP/1.1 200"), answer[:200])
        self.assert_pause_excluded("paused-http")

    def test_stream_message_in_two_parts(self):
        conn = self.daemon.stream()
        self.addCleanup(conn.close)
        data = conn.encode({"id": "paused", "method": "POST", "path": "/v1/pair",
                            "headers": {"X-Request-Id": "paused-stream"}, "body": PAIR})
        conn.send_raw(data[:len(data) // 2])
        time.sleep(PAUSE)
        conn.send_raw(data[len(data) // 2:])
        reply = conn.read_line()
        self.assertEqual((reply["id"], reply["status"]), ("paused", 200), reply)
        self.assert_pause_excluded("paused-stream")


def journal_bytes(data_dir):
    return sum(os.stat(p).st_size for p in glob.glob(os.path.join(data_dir, "journal-*.log")))


class JournalCase(unittest.TestCase):
    """A daemon with a data directory and FSYNC; no snapshot comes in the way."""

    FSYNC = "always"

    @classmethod
    def setUpClass(cls):
        tmp = tempfile.TemporaryDirectory(prefix="collisiond-journal-metrics-")
        cls.addClassCleanup(tmp.cleanup)
        cls.data = tmp.name
        cls.daemon = Daemon(("--data-dir", cls.data, "--fsync", cls.FSYNC, "--snapshot-every", "0"))
        cls.addClassCleanup(cls.daemon.cleanup)
        cls.daemon.start()
        wait_ready(cls.daemon)

    @classmethod
    def tearDownClass(cls):
        rc = cls.daemon.stop()
        if rc != 0:
            raise AssertionError("collisiond exited with %s: %s" % (rc, cls.daemon.log_tail()))

    def changes(self):
        """Makes one change after another; returns how many were made (each one journal record)."""
        made = 0

        def ok(method, path, body, status):
            nonlocal made
            r = self.daemon.request(method, path, body)
            self.assertEqual(r.status, status, "%s %s: %s" % (method, path, r.describe()))
            made += 1

        shapes = [body_item("b%d" % i, box(0.4, 0.4, 0.4), position(i, 0.0)) for i in range(50)]
        ok("PUT", "/v1/worlds/disk", {"shapes": shapes}, 201)
        for i in range(3):
            ok("PUT", "/v1/worlds/disk/shapes/s%d" % i, {"shape": box(1, 1, 1), "pose": {"position": [0, 9, i]}},
               201)
        for step in (0.1, 0.2):
            ok("POST", "/v1/worlds/disk/batch",
               {"move": [{"id": "b%d" % i, "pose": {"position": list(position(i, step))}} for i in range(50)]}, 200)
        ok("DELETE", "/v1/worlds/disk/shapes/s0", None, 204)
        ok("DELETE", "/v1/worlds/disk", None, 204)
        return made

    def deltas(self):
        """(changes made, journal file growth, and the journal families' moves)."""
        before, size = scrape(self.daemon), journal_bytes(self.data)
        made = self.changes()
        after, grown = scrape(self.daemon), journal_bytes(self.data) - size

        def moved(family, name):
            return sample(after, family, name) - sample(before, family, name)

        return made, grown, {
            "bytes": moved("collisiond_journal_bytes_total", "collisiond_journal_bytes_total"),
            "writes": moved("collisiond_journal_write_seconds", "collisiond_journal_write_seconds_count"),
            "write_s": moved("collisiond_journal_write_seconds", "collisiond_journal_write_seconds_sum"),
            "fsyncs": moved("collisiond_journal_fsync_seconds", "collisiond_journal_fsync_seconds_count"),
            "fsync_s": moved("collisiond_journal_fsync_seconds", "collisiond_journal_fsync_seconds_sum"),
        }

    def check_writes(self, made, grown, m):
        self.assertGreater(grown, 0, "the changes reached the journal")
        self.assertEqual(m["bytes"], grown, "collisiond_journal_bytes_total against the files' growth")
        self.assertEqual(m["writes"], made, "one journal write per change")
        self.assertGreater(m["write_s"], 0)


class JournalAlways(JournalCase):
    FSYNC = "always"

    def test_bytes_writes_and_syncs(self):
        made, grown, m = self.deltas()
        self.check_writes(made, grown, m)
        # one after another, each change waits for a sync of its own
        self.assertEqual(m["fsyncs"], made, m)
        self.assertGreater(m["fsync_s"], 0)


class JournalNoSync(JournalCase):
    FSYNC = "no"

    def test_bytes_and_writes_without_a_sync(self):
        made, grown, m = self.deltas()
        self.check_writes(made, grown, m)
        self.assertEqual(m["fsyncs"], 0, m)


if __name__ == "__main__":
    unittest.main()
