"""GET /metrics judged by the Prometheus Python client's own parser
(python3-prometheus-client, not ours) after a mix of every route, method
and status on both transports: no two samples share a name and labels,
every family has TYPE and HELP, request series carry the method, counts
move by exactly the requests made, histograms are well formed, the
process_* families agree with what /proc says from outside, and the
world label is capped by --metrics-worlds."""

import json
import math
import os
import subprocess
import sys
import time

from harness import DaemonCase
from wire import ENDPOINTS, body_item, fill, pair, posed, sphere

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "exposition-token"
AUTH = {"Authorization": "Bearer " + TOKEN}
MAX_BODY = 65536
# The methods the daemon counts by name (API.md, Metrics); any other is "other".
KNOWN_METHODS = {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"}
REQUEST_FAMILIES = ("collisiond_requests", "collisiond_request_duration_seconds")


def client_python():
    """An interpreter that can import prometheus_client: this one, or the
    Debian one the package installs into (the tests may run under another,
    such as a pyenv build that does not see /usr/lib/python3/dist-packages)."""
    for exe in (sys.executable, "/usr/bin/python3"):
        if exe and os.access(exe, os.X_OK) and subprocess.run(
                [exe, "-c", "import prometheus_client.parser"], capture_output=True).returncode == 0:
            return exe
    return None


def client_parse(text):
    """The families prometheus_client reads from text (prom_client_parse.py)."""
    exe = client_python()
    if exe is None:
        raise AssertionError("no python3 can import prometheus_client: apt-get install python3-prometheus-client "
                             "(make deps)")
    r = subprocess.run([exe, os.path.join(HERE, "prom_client_parse.py")], input=text.encode(), capture_output=True,
                       timeout=60)
    if r.returncode != 0:
        raise AssertionError("prometheus_client rejects the exposition: %s" % r.stderr.decode()[-2000:])
    return json.loads(r.stdout)


def route_of(method, path):
    """The route label API.md promises: the template of the endpoint the
    method and path name (even when a {world} or {id} is not a valid name),
    else "unmatched"."""
    segs = path.split("?")[0].split("/")
    for m, template, _ in ENDPOINTS:
        t = template.split("/")
        if m == method and len(t) == len(segs) and all(
                a == b or (a.startswith("{") and b) for a, b in zip(t, segs)):
            return template
    return "unmatched"


def method_label(method):
    return method if method in KNOWN_METHODS else "other"


def samples_of(families, family):
    return [s for f in families if f["name"] == family for s in f["samples"]]


def value_of(families, name, labels=None):
    for f in families:
        for n, l, v in f["samples"]:
            if n == name and (labels is None or l == labels):
                return v
    return None


class Exposition(DaemonCase):
    FLAGS = ("--token", TOKEN, "--max-body", str(MAX_BODY))

    @classmethod
    def setUpClass(cls):
        cls.launched_after = time.time()
        super().setUpClass()
        cls.launched_before = time.time()

    def setUp(self):
        self.tally = {}

    def count(self, method, route, status):
        key = (method, route, str(status))
        self.tally[key] = self.tally.get(key, 0) + 1

    def http(self, method, path, body=None, data=None, auth=True, expect=None):
        """One HTTP request, tallied under the labels it must be counted with."""
        headers = dict(AUTH) if auth is True else ({"Authorization": auth} if auth else {})
        r = self.daemon.request(method, path, body, data=data, headers=headers)
        if expect is not None:
            self.assertEqual(r.status, expect, "%s %s -> %s" % (method, path, r.describe()))
        # HEAD runs its GET route and is counted on that route's row (API.md section 1)
        as_method = "GET" if method == "HEAD" and route_of("GET", path) != "unmatched" else method
        self.count(method_label(as_method), route_of(as_method, path), r.status)
        return r

    def scrape(self):
        r = self.daemon.request("GET", "/metrics", headers=AUTH)
        self.assertEqual(r.status, 200, r.describe())
        return client_parse(r.raw.decode("utf-8"))

    def requests_by_labels(self, families, family="collisiond_requests", sample="collisiond_requests_total"):
        out = {}
        for n, labels, v in samples_of(families, family):
            if n == sample:
                out[(labels.get("method"), labels.get("route"), labels.get("status"))] = v
        return out

    def drive_http(self):
        world = {"shapes": [body_item("s1", sphere(1)), body_item("s2", sphere(1), (1, 0, 0))]}
        self.http("GET", "/healthz", auth=None, expect=200)
        self.http("GET", "/readyz", auth=None, expect=200)
        self.http("PUT", "/v1/worlds/arena", world, expect=201)
        self.http("PUT", "/v1/worlds/arena", {}, expect=200)
        self.http("PUT", "/v1/worlds/bad!name", {}, expect=400)   # a name that breaks the id rule: 400 on the PUT route
        self.http("GET", "/v1/worlds/nope", expect=404)
        self.http("DELETE", "/v1/worlds/nope", expect=404)
        self.http("PUT", "/v1/worlds/arena/shapes/s3", {"shape": sphere(1), "pose": {"position": [5, 0, 0]}},
                  expect=201)
        self.http("GET", "/v1/worlds/arena/shapes/zz", expect=404)
        self.http("DELETE", "/v1/worlds/arena/shapes/s3", expect=204)
        self.http("POST", "/v1/pair", pair(posed(sphere(-1)), posed(sphere(1))), expect=400)
        self.http("POST", "/v1/pair", data="{not json", expect=400)
        self.http("POST", "/v1/worlds", expect=405)
        self.http("PATCH", "/v1/pair", expect=405)
        self.http("BREW", "/v1/pair", expect=405)
        self.http("get", "/v1/worlds", expect=405)                 # methods are case-sensitive
        self.http("GET", "/no/such/path", expect=404)
        self.http("BREW", "/no/such/path", expect=404)
        self.http("GET", "/v1/worlds", auth=None, expect=401)
        self.http("GET", "/v1/worlds", auth="Bearer wrong", expect=401)
        self.http("GET", "/no/such/path", auth=None, expect=401)
        self.http("BREW", "/v1/pair", auth=None, expect=401)
        # every endpoint once, whatever it answers (the world goes last)
        for method, template, has_body in sorted(ENDPOINTS, key=lambda e: e[0] == "DELETE"):
            self.http(method, fill(template, "arena", "s1"), {} if has_body else None)
        self.http("HEAD", "/healthz", auth=None)
        self.http("PUT", "/v1/worlds/arena", {}, expect=201)        # created again
        status, _, _ = self.daemon.raw_http(
            ("POST /v1/pairs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
             "Content-Length: %d\r\nConnection: close\r\n\r\n" % (TOKEN, MAX_BODY + 1000)).encode()
            + b" " * (MAX_BODY + 1000))
        self.assertEqual(status, 413)
        self.count("POST", "/v1/pairs", 413)

    def drive_stream(self):
        s = self.daemon.stream()
        lines = [
            {"id": 1, "method": "GET", "path": "/v1/worlds", "headers": AUTH},
            {"id": 2, "method": "GET", "path": "/v1/worlds"},
            {"id": 3, "method": "PUT", "path": "/v1/worlds/streamed", "headers": AUTH, "body": {}},
            {"id": 4, "method": "GET", "path": "/v1/worlds/nope", "headers": AUTH},
            {"id": 5, "method": "BREW", "path": "/v1/worlds", "headers": AUTH},
            {"id": 6, "method": "DELETE", "path": "/v1/worlds/streamed", "headers": AUTH},
            {"id": 7, "method": "POST", "path": "/v1/pair", "headers": AUTH, "body": {"a": 1}},
        ]
        want = {1: 200, 2: 401, 3: 201, 4: 404, 5: 405, 6: 204, 7: 400}
        s.send(*lines)
        for line in lines:
            reply = s.read_line()
            self.assertEqual(reply["status"], want[reply["id"]], reply)
            sent = lines[reply["id"] - 1]
            self.count(method_label(sent["method"]), route_of(sent["method"], sent["path"]), reply["status"])
        s.send(s.malformed()[0])                                     # not a request: no method, no route
        self.assertEqual(s.read_line()["status"], 400)
        self.count("other", "unmatched", 400)
        s.send_oversized(MAX_BODY + 10)                              # too long: 413, then closed
        replies, closed = s.read_until_closed()
        self.assertEqual([r["status"] for r in replies], [413])
        self.assertTrue(closed)
        self.count("other", "unmatched", 413)
        s.close()

    def check_families(self, families):
        names = [f["name"] for f in families]
        self.assertEqual(len(names), len(set(names)), "a family appears twice (split?): %s" % names)
        seen = set()
        for f in families:
            self.assertNotEqual(f["type"], "unknown", "%s has no TYPE" % f["name"])
            self.assertTrue(f["documentation"], "%s has no HELP" % f["name"])
            for n, labels, _ in f["samples"]:
                key = (n, tuple(sorted(labels.items())))
                self.assertFalse(key in seen, "%s%s appears twice" % (n, labels))
                seen.add(key)

    def check_request_labels(self, families):
        allowed = KNOWN_METHODS | {"other"}
        for fam in REQUEST_FAMILIES:
            samples = samples_of(families, fam)
            self.assertTrue(samples, fam)
            for n, labels, _ in samples:
                self.assertIn(labels.get("method"), allowed, "%s%s" % (n, labels))
                self.assertIn("route", labels, "%s%s" % (n, labels))
                self.assertIn("status", labels, "%s%s" % (n, labels))
                if labels["route"] != "unmatched":
                    self.assertIn((labels["method"], labels["route"]), {(m, t) for m, t, _ in ENDPOINTS},
                                  "%s%s: a route with a method it does not have" % (n, labels))

    def check_histograms(self, families):
        for f in families:
            if f["type"] != "histogram":
                continue
            series = {}
            for n, labels, v in f["samples"]:
                key = tuple(sorted((k, x) for k, x in labels.items() if k != "le"))
                s = series.setdefault(key, {"buckets": [], "count": None, "sum": None})
                if n.endswith("_bucket"):
                    s["buckets"].append((float(labels["le"]), v))
                elif n.endswith("_count"):
                    s["count"] = v
                elif n.endswith("_sum"):
                    s["sum"] = v
            for key, s in series.items():
                what = "%s%s" % (f["name"], dict(key))
                les = [le for le, _ in s["buckets"]]
                counts = [c for _, c in s["buckets"]]
                self.assertTrue(les and les[-1] == math.inf, "%s: no +Inf bucket" % what)
                self.assertEqual(les, sorted(set(les)), what)
                self.assertEqual(counts, sorted(counts), "%s: buckets not cumulative" % what)
                self.assertEqual(counts[-1], s["count"], "%s: +Inf != _count" % what)
                self.assertIsNotNone(s["sum"], what)

    def test_every_route_method_and_status(self):
        before = self.scrape()
        self.drive_http()
        self.drive_stream()
        after = self.scrape()
        self.check_families(after)
        self.check_request_labels(after)
        self.check_histograms(after)
        expect = dict(self.tally)
        expect[("GET", "/metrics", "200")] = expect.get(("GET", "/metrics", "200"), 0) + 1  # the first scrape
        statuses = {k[2] for k in expect}
        for want in ("200", "201", "204", "400", "401", "404", "405", "413"):
            self.assertIn(want, statuses, "the mix should include a %s" % want)
        counters = [self.requests_by_labels(before), self.requests_by_labels(after)]
        counts = [self.requests_by_labels(fams, "collisiond_request_duration_seconds",
                                          "collisiond_request_duration_seconds_count") for fams in (before, after)]
        for name, (b, a) in (("requests_total", counters), ("request_duration_seconds_count", counts)):
            moved = {k: a.get(k, 0) - b.get(k, 0) for k in set(a) | set(b)}
            moved = {k: v for k, v in moved.items() if v}
            self.assertEqual(moved, expect, "%s moved by other amounts than the requests made" % name)

    def test_process_families(self):
        pid = self.daemon.proc.pid
        fams = self.scrape()
        self.check_families(fams)
        types = {f["name"]: f["type"] for f in fams}
        for name, t in (("process_cpu_seconds", "counter"), ("process_resident_memory_bytes", "gauge"),
                        ("process_virtual_memory_bytes", "gauge"), ("process_open_fds", "gauge"),
                        ("process_max_fds", "gauge"), ("process_start_time_seconds", "gauge")):
            self.assertEqual(types.get(name), t, name)
        status = {}
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                status[k] = v.split()
        rss = value_of(fams, "process_resident_memory_bytes")
        vm_rss = int(status["VmRSS"][0]) * 1024
        self.assertTrue(vm_rss / 2 <= rss <= vm_rss * 2, "resident %d, VmRSS %d" % (rss, vm_rss))
        vm = value_of(fams, "process_virtual_memory_bytes")
        vm_size = int(status["VmSize"][0]) * 1024
        self.assertTrue(vm_size / 2 <= vm <= vm_size * 2, "virtual %d, VmSize %d" % (vm, vm_size))
        fds = len(os.listdir("/proc/%d/fd" % pid))
        self.assertLessEqual(abs(value_of(fams, "process_open_fds") - fds), 3, "open fds vs /proc/PID/fd: %d" % fds)
        with open("/proc/%d/limits" % pid) as f:
            soft = [line.split()[3] for line in f if line.startswith("Max open files")][0]
        self.assertEqual(value_of(fams, "process_max_fds"), float(soft))
        start = value_of(fams, "process_start_time_seconds")
        # /proc/stat's boot time is whole seconds, so the start may read up to 1 s early
        self.assertTrue(self.launched_after - 2 <= start <= self.launched_before + 1,
                        "start %.2f, launched between %.2f and %.2f" % (start, self.launched_after,
                                                                       self.launched_before))
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        outside = (int(fields[11]) + int(fields[12])) / ticks      # utime, stime (fields 14, 15)
        cpu = value_of(fams, "process_cpu_seconds_total")
        for _ in range(20):
            self.daemon.request("POST", "/v1/pairs", {"pairs": [pair(posed(sphere(1)), posed(sphere(1)))] * 500},
                                headers=AUTH)
        later = value_of(self.scrape(), "process_cpu_seconds_total")
        self.assertLessEqual(cpu, outside + 0.02)
        self.assertGreaterEqual(later, outside)
        self.assertGreaterEqual(later, cpu)


    def test_journal_families(self):
        """The journal's families are there without a data directory too
        (zeros: nothing is written), with the buckets API.md names."""
        for _ in range(2):
            self.http("PUT", "/v1/worlds/journal-less", {}, expect=201)  # a change, never journaled here
            self.http("DELETE", "/v1/worlds/journal-less", expect=204)
        fams = self.scrape()
        self.check_families(fams)
        self.check_histograms(fams)
        types = {f["name"]: f["type"] for f in fams}
        # 1, 2.5, 5 µs ... 1 s, 2.5 s, then +Inf (API.md, section 12)
        want = [m * 10.0 ** e for e in range(-6, 1) for m in (1, 2.5, 5)][:-1] + [math.inf]
        for name in ("collisiond_journal_write_seconds", "collisiond_journal_fsync_seconds"):
            self.assertEqual(types.get(name), "histogram", name)
            les = [float(l["le"]) for n, l, _ in samples_of(fams, name) if n == name + "_bucket"]
            self.assertEqual(len(les), len(want), les)
            for got, expect in zip(les, want):
                self.assertTrue(got == expect or abs(got - expect) <= 1e-12 * expect, (les, want))
            self.assertEqual(value_of(fams, name + "_count"), 0)
            self.assertEqual(value_of(fams, name + "_sum"), 0)
        # prometheus_client names a counter's family without its _total
        self.assertEqual(types.get("collisiond_journal_bytes"), "counter")
        self.assertEqual(value_of(fams, "collisiond_journal_bytes_total"), 0)


class MetricsWorldCap(DaemonCase):
    FLAGS = ("--metrics-worlds", "2")

    def test_the_largest_worlds_keep_their_series(self):
        sizes = {"a": 0, "b": 3, "c": 2, "d": 3}
        for name, n in sizes.items():
            shapes = [body_item("s%d" % i, sphere(1), (10 * i, 0, 0)) for i in range(n)]
            self.ok("PUT", "/v1/worlds/" + name, {"shapes": shapes}, status=201)
        r = self.daemon.request("GET", "/metrics")
        fams = client_parse(r.raw.decode("utf-8"))
        shapes = {l["world"]: v for n, l, v in samples_of(fams, "collisiond_world_shapes")}
        self.assertEqual(shapes, {"b": 3, "d": 3, "(other)": 2})
        pairs = {l["world"] for n, l, v in samples_of(fams, "collisiond_world_broadphase_pairs")}
        self.assertEqual(pairs, {"b", "d", "(other)"})
        self.assertEqual(value_of(fams, "collisiond_worlds_folded"), 2)
        self.assertEqual(value_of(fams, "collisiond_worlds"), 4)
