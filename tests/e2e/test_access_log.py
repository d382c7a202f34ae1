"""Access logging (--access-log, --access-log-sample, --slow-request;
docs/API.md section 14): for each mode a known mix of requests over HTTP
and the stream, and exactly the requests whose access lines the mode's
rule (written out here, from the documentation, not from the daemon)
says must appear.

The rule: off logs nothing; all logs every request; errors and sample log
a request that is slow (at least --slow-request ms) or answered 401, 413,
422 or 5xx, whatever its route; sample also logs the 1st, (N+1)th,
(2N+1)th... of the other requests ("ordinary"), counted in the order they
finish, never a probe (/healthz, /readyz) or a scrape (/metrics,
/metrics/fallbacks). The tests never rely on a request being slow or
fast: --slow-request is 0 (every request is slow) or an hour (none is)."""

import json
import math
import tempfile
import threading
import time
import unittest

from harness import Daemon
from wire import pair, posed, sphere

TOKEN = "t0ken"
AUTH = {"Authorization": "Bearer " + TOKEN}
NEVER_SLOW = ("--slow-request", "3600000")
ALWAYS_SLOW = ("--slow-request", "0")
READY_TIMEOUT = 30.0

QUIET = "quiet"        # a probe or a scrape
ORDINARY = "ordinary"  # neither quiet nor an operator's error

PAIR = pair(posed(sphere(1)), posed(sphere(1), (1.5, 0, 0)))


def operator_error(status):
    return status >= 500 or status in (401, 413, 422)


def expected_ids(mix, mode, sample=None, slow=False):
    """The keys of the requests of mix (in the order they were sent, one
    after another) that must have an access line under mode."""
    out, ordinary = [], 0
    for key, kind, status in mix:
        if mode == "off":
            continue
        if mode == "all" or slow or operator_error(status):
            out.append(key)
        elif mode == "sample" and kind == ORDINARY:
            if ordinary % sample == 0:
                out.append(key)
            ordinary += 1
    return out


def access_lines(daemon):
    """The daemon's access lines (msg "request"), parsed."""
    lines = []
    for text in daemon.log_text().splitlines():
        if text.strip():
            rec = json.loads(text)
            if rec.get("msg") == "request":
                lines.append(rec)
    return lines


def line_key(rec):
    """The request id the test gave, or for the one line that cannot carry
    one (a stream line over --max-body) its transport and status."""
    rid = rec["request_id"]
    if rid.startswith(("h-", "s-", "c-", "ready-")):
        return rid
    return "%s-%d" % (rec["transport"], rec["status"])


class Mix(unittest.TestCase):
    """One daemon per mode, with a token, small limits, a data directory and
    a journal write that fails, so that the mix has each status."""

    MODE_FLAGS = ()
    MODE_ENV = {}
    mix = None

    @classmethod
    def setUpClass(cls):
        data = tempfile.TemporaryDirectory(prefix="collisiond-access-")
        cls.addClassCleanup(data.cleanup)
        flags = ("--token", TOKEN, "--max-body", "4096", "--max-pairs", "2", "--data-dir", data.name) + cls.MODE_FLAGS
        # The 2nd journal write fails: the world's PUT is the 1st, a shape's PUT the 2nd (answered 503).
        cls.daemon = Daemon(flags, dict(cls.MODE_ENV, COLLISIOND_FAILPOINT="journal_write:2"))
        cls.addClassCleanup(cls.daemon.cleanup)
        cls.daemon.start()
        cls.mix = wait_ready(cls.daemon) + drive_mix(cls.daemon)
        rc = cls.daemon.stop()
        if rc != 0:
            raise AssertionError("collisiond exited with %s: %s" % (rc, cls.daemon.log_tail()))

    def check(self, mode, sample=None, slow=False):
        got = [line_key(r) for r in access_lines(self.daemon)]
        want = expected_ids(self.mix, mode, sample, slow)
        self.assertEqual(got, want, "access lines under %s (sample %s, slow %s)" % (mode, sample, slow))
        for rec in access_lines(self.daemon):
            self.assertEqual(set(rec), {"time", "level", "msg", "request_id", "transport", "method", "route",
                                        "path", "status", "duration_us"}, rec)
            self.assertEqual(rec["level"], "info", rec)


def wait_ready(d):
    """Polls /readyz (recovery runs after the port file is written); returns
    [(key, kind, status)] of the polls: probes, answered 503 until ready."""
    polls, deadline = [], time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        rid = "ready-%d" % len(polls)
        status = d.request("GET", "/readyz", headers={"X-Request-Id": rid}).status
        polls.append((rid, QUIET, status))
        if status == 200:
            return polls
        time.sleep(0.05)
    raise AssertionError("not ready after %.0f s: %s" % (READY_TIMEOUT, d.log_tail()))


def drive_mix(d):
    """Sends the mix one request after another and checks each status;
    returns [(key, kind, status)] in the order sent."""
    mix = []

    def http(key, kind, status, method, path, body=None, auth=True, data=None):
        headers = {"X-Request-Id": key}
        if auth:
            headers.update(AUTH)
        r = d.request(method, path, body, data=data, headers=headers)
        if r.status != status:
            raise AssertionError("%s %s: expected %d, got %s" % (method, path, status, r.describe()))
        mix.append((key, kind, status))

    http("h-healthz", QUIET, 200, "GET", "/healthz", auth=False)
    http("h-readyz", QUIET, 200, "GET", "/readyz", auth=False)
    http("h-metrics", QUIET, 200, "GET", "/metrics")
    http("h-fallbacks", QUIET, 200, "GET", "/metrics/fallbacks")
    http("h-metrics-401", QUIET, 401, "GET", "/metrics", auth=False)
    http("h-world", ORDINARY, 201, "PUT", "/v1/worlds/w", {})
    for i in range(4):
        http("h-pair-%d" % i, ORDINARY, 200, "POST", "/v1/pair", PAIR)
    http("h-404", ORDINARY, 404, "GET", "/v1/worlds/nope")
    http("h-400", ORDINARY, 400, "POST", "/v1/pair", {"a": 1})
    http("h-405", ORDINARY, 405, "DELETE", "/v1/pair")
    http("h-401", ORDINARY, 401, "GET", "/v1/worlds", auth=False)
    http("h-413", ORDINARY, 413, "POST", "/v1/pair", data="x" * 5000)
    http("h-422", ORDINARY, 422, "POST", "/v1/pairs", {"pairs": [PAIR, PAIR, PAIR]})
    http("h-503", ORDINARY, 503, "PUT", "/v1/worlds/w/shapes/s", {"shape": sphere(1)})
    http("h-pair-4", ORDINARY, 200, "POST", "/v1/pair", PAIR)

    s = d.stream()
    try:
        def line(key, kind, status, method, path, body=None, auth=True, headers=None):
            hdrs = {"X-Request-Id": key}
            if auth:
                hdrs.update(AUTH)
            hdrs.update(headers or {})
            msg = {"id": key, "method": method, "path": path, "headers": hdrs}
            if body is not None:
                msg["body"] = body
            s.send(msg)
            reply = s.read_line()
            if reply is None or reply["status"] != status:
                raise AssertionError("stream %s %s: expected %d, got %s" % (method, path, status, reply))
            mix.append((key, kind, status))

        line("s-healthz", QUIET, 200, "GET", "/healthz", auth=False)
        line("s-metrics", QUIET, 200, "GET", "/metrics")
        for i in range(3):
            line("s-pair-%d" % i, ORDINARY, 200, "POST", "/v1/pair", PAIR)
        line("s-404", ORDINARY, 404, "GET", "/v1/worlds/nope")
        # An envelope the stream refuses (a header of the wrong type) still has its request id.
        line("s-400", ORDINARY, 400, "GET", "/healthz", headers={"Accept": 2})
        line("s-401", ORDINARY, 401, "GET", "/v1/worlds", auth=False)
        line("s-422", ORDINARY, 422, "POST", "/v1/pairs", {"pairs": [PAIR, PAIR, PAIR]})
        line("s-pair-3", ORDINARY, 200, "POST", "/v1/pair", PAIR)
        # Over --max-body: answered 413 without a request id, then the connection closes.
        s.send_oversized(5000)
        lines, closed = s.read_until_closed()
        if not closed or [x["status"] for x in lines] != [413]:
            raise AssertionError("stream line over --max-body: %s (closed %s)" % (lines, closed))
        mix.append(("stream-413", ORDINARY, 413))
    finally:
        s.close()
    return mix


class ModeOff(Mix):
    MODE_FLAGS = ("--access-log", "off") + ALWAYS_SLOW  # not even slow requests

    def test_nothing_is_logged(self):
        self.check("off")
        self.assertIn('"msg":"stopped"', self.daemon.log_text(), "other lines are still written")


class ModeErrors(Mix):
    MODE_FLAGS = ("--access-log", "errors") + NEVER_SLOW

    def test_operator_errors_only(self):
        self.check("errors")


class ModeErrorsSlow(Mix):
    MODE_FLAGS = ("--access-log", "errors") + ALWAYS_SLOW

    def test_every_slow_request(self):
        self.check("errors", slow=True)


class ModeSample(Mix):
    MODE_FLAGS = ("--access-log", "sample", "--access-log-sample", "3") + NEVER_SLOW

    def test_errors_and_one_in_three(self):
        self.check("sample", 3)


class ModeSampleSlow(Mix):
    MODE_FLAGS = ("--access-log", "sample", "--access-log-sample", "3") + ALWAYS_SLOW

    def test_every_slow_request(self):
        self.check("sample", 3, slow=True)


class ModeAll(Mix):
    MODE_FLAGS = ("--access-log", "all") + NEVER_SLOW

    def test_every_request(self):
        self.check("all")


class ModeDefault(Mix):
    """No --access-log: sample, 1 in 1000 (only the threshold is set, to keep timing out)."""
    MODE_FLAGS = NEVER_SLOW

    def test_default_is_sample_1000(self):
        self.check("sample", 1000)


class ModeFromEnvironment(Mix):
    MODE_FLAGS = NEVER_SLOW
    MODE_ENV = {"COLLISIOND_ACCESS_LOG": "errors"}

    def test_environment_sets_the_mode(self):
        self.check("errors")


class SampleAcrossThreads(unittest.TestCase):
    """1 in N is one count over every thread: M ordinary requests from
    concurrent clients, over both transports, give ceil(M / N) lines."""

    N = 7

    def test_count(self):
        d = Daemon(("--access-log", "sample", "--access-log-sample", str(self.N)) + NEVER_SLOW)
        self.addCleanup(d.cleanup)
        d.start()
        per_client, errors = 40, []

        def http_client(c):
            try:
                for i in range(per_client):
                    r = d.request("POST", "/v1/pair", PAIR, headers={"X-Request-Id": "c-h%d-%d" % (c, i)})
                    if r.status != 200:
                        errors.append(r.describe())
            except Exception as e:  # reported below, in the test's thread
                errors.append(repr(e))

        def stream_client(c):
            s = d.stream()
            try:
                s.send(*[{"id": i, "method": "POST", "path": "/v1/pair", "body": PAIR,
                          "headers": {"X-Request-Id": "c-s%d-%d" % (c, i)}} for i in range(per_client)])
                for _ in range(per_client):
                    reply = s.read_line()
                    if reply is None or reply["status"] != 200:
                        errors.append(repr(reply))
            except Exception as e:
                errors.append(repr(e))
            finally:
                s.close()

        clients = [threading.Thread(target=http_client, args=(c,)) for c in range(3)]
        clients += [threading.Thread(target=stream_client, args=(c,)) for c in range(2)]
        for t in clients:
            t.start()
        for t in clients:
            t.join()
        self.assertEqual(errors, [])
        # Probes and scrapes in between are not counted.
        for _ in range(5):
            self.assertEqual(d.request("GET", "/healthz").status, 200)
            self.assertEqual(d.request("GET", "/metrics").status, 200)
        self.assertEqual(d.stop(), 0, d.log_tail())
        m = 5 * per_client
        ids = [r["request_id"] for r in access_lines(d)]
        self.assertTrue(all(i.startswith("c-") for i in ids), ids)
        self.assertEqual(len(ids), math.ceil(m / self.N), "lines for %d requests, 1 in %d" % (m, self.N))


class LevelAndAccessAreApart(unittest.TestCase):
    """--log-level filters the plain lines, --access-log the access lines."""

    def run_daemon(self, *flags):
        d = Daemon(flags)
        self.addCleanup(d.cleanup)
        d.start()
        self.assertEqual(d.request("GET", "/v1/worlds/nope", headers={"X-Request-Id": "h-x"}).status, 404)
        s = d.stream()  # its connection makes a debug line
        try:
            s.send({"id": 1, "method": "GET", "path": "/v1/worlds/nope", "headers": {"X-Request-Id": "s-x"}})
            self.assertEqual(s.read_line()["status"], 404)
        finally:
            s.close()
        self.assertEqual(d.stop(), 0, d.log_tail())
        return [json.loads(t) for t in d.log_text().splitlines() if t.strip()]

    def test_error_level_keeps_access_lines(self):
        recs = self.run_daemon("--log-level", "error", "--access-log", "all")
        self.assertEqual([(r["msg"], r["request_id"]) for r in recs], [("request", "h-x"), ("request", "s-x")], recs)

    def test_debug_level_without_access_lines(self):
        recs = self.run_daemon("--log-level", "debug", "--access-log", "off")
        self.assertNotIn("request", [r["msg"] for r in recs], recs)
        self.assertIn("stream: connection accepted (1 open)", [r["msg"] for r in recs if r["level"] == "debug"], recs)
        self.assertIn("stopped", [r["msg"] for r in recs], recs)
