"""Overload (issue 8; docs/API.md "Load shedding"): admission control
answers 503 with Retry-After at once when too many requests or request
bytes are in flight, on both listeners; slow and idle clients do not keep
others from being served and are cut off after --timeout; a flood of
connections leaves the daemon serving normally with its memory bounded.

Requests are held deterministically: "in flight" by an answer the client
does not read, body bytes by a declared body the client withholds. No test
here depends on how fast the machine is, only on generous upper bounds."""

import os
import resource
import socket
import threading
import time

import held
from harness import DaemonCase, check_problem_body, decode_messages, encode_body, encode_message

PAIR = {"a": {"shape": {"type": "sphere", "radius": 1}, "pose": {"position": [0, 0, 0]}},
        "b": {"shape": {"type": "sphere", "radius": 1}, "pose": {"position": [1.5, 0, 0]}}}
FAST = 2.0  # seconds: a refusal or a small request on an idle daemon takes milliseconds


def hold(port, declared):
    """A connection whose request is in flight: headers declaring a body of
    `declared` bytes, no body yet. Returns the socket (the caller closes)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"POST /v1/pair HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % declared)
    return s


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for pid %d" % pid)


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError("no %s in the exposition" % name)


class Shedding:
    """What both admission classes check a refusal with."""

    def poll(self, want, what):
        """Sends POST /v1/pair until it answers want (the daemon notices
        held and released requests a moment after the client acts)."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            r = self.daemon.request("POST", "/v1/pair", body=PAIR)
            if r.status == want:
                return r
            time.sleep(0.05)
        self.fail("POST /v1/pair never answered %d %s" % (want, what))

    def scrape(self):
        """GET /metrics, retried while it is shed: a scrape is work too."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            r = self.daemon.request("GET", "/metrics")
            if r.status == 200:
                return r.raw.decode()
            time.sleep(0.05)
        self.fail("GET /metrics never answered 200")

    def assertShed(self, r, elapsed, what):
        self.assertEqual(r.status, 503, "%s: %s" % (what, r.describe()))
        self.assertEqual(r.headers.get("retry-after"), "1", what)
        self.assertProblem(r, 503, "unavailable", context=what)
        self.assertLess(elapsed, FAST, "%s: a refusal must be immediate" % what)


class Admission(Shedding, DaemonCase):

    FLAGS = ("--max-inflight", "2") + held.FLAGS

    def test_503_beyond_max_inflight_then_normal_service(self):
        holding = held.hold_answers(self, 2)
        try:
            self.poll(503, "with two answers held")
            t0 = time.monotonic()
            r = self.daemon.request("POST", "/v1/pair", body=PAIR)
            self.assertShed(r, time.monotonic() - t0, "a third request over HTTP")
            s = self.daemon.stream()
            try:
                t0 = time.monotonic()
                s.send({"id": 1, "method": "POST", "path": "/v1/pair", "body": PAIR})
                line = s.read_line()
                self.assertLess(time.monotonic() - t0, FAST)
                self.assertEqual(line["id"], 1)
                self.assertEqual(line["status"], 503, line)
                self.assertEqual(line["headers"]["Retry-After"], "1", line)
                check_problem_body(self, line["body"], 503, "unavailable", None, "stream")
            finally:
                s.close()
            # The health probes are never shed: a busy server is not a dead one.
            self.ok("GET", "/healthz")
            self.ok("GET", "/readyz")
            # ... and they alone: other open routes are work like any other.
            for path in ("/inspect", "/inspect/", "/inspect/shapes.js"):
                self.assertShed(self.daemon.request("GET", path), 0, "GET %s over HTTP" % path)
            s = self.daemon.stream()
            try:
                s.send(*({"id": i, "method": "GET", "path": p} for i, p in enumerate(["/inspect", "/inspect/"])))
                self.assertEqual([s.read_line()["status"] for _ in range(2)], [503, 503])
            finally:
                s.close()
        finally:
            for s in holding:
                s.close()
        self.poll(200, "after the held answers were dropped")
        # The second held slot may be released a moment after the first.
        shed = metric(self.scrape(), "collisiond_requests_shed_total")
        self.assertGreaterEqual(shed, 2)


class AdmissionBytes(Shedding, DaemonCase):

    FLAGS = ("--max-buffered", "1000", "--timeout", "10")

    def test_503_beyond_max_buffered(self):
        """A declared body reserves its bytes from its head on; a body that
        would pass --max-buffered is refused before it is read."""
        big = hold(self.daemon.http_port, 800)
        try:
            deadline = time.monotonic() + 20
            while metric(self.req("GET", "/metrics").raw.decode(), "collisiond_request_bytes_buffered") != 800:
                self.assertLess(time.monotonic(), deadline, "the held head was never read")
                time.sleep(0.05)
            t0 = time.monotonic()
            status, headers, body = self.daemon.raw_http(
                b"POST /v1/pair HTTP/1.1\r\nHost: t\r\nContent-Length: 300\r\nConnection: close\r\n\r\n"
                + b" " * 300)
            self.assertLess(time.monotonic() - t0, FAST)
            self.assertEqual(status, 503, body)
            self.assertEqual(headers.get("retry-after"), "1")
            # Requests without a body reserve nothing and still pass.
            self.ok("GET", "/v1/worlds")
            # The held request, once its body arrives, is answered normally.
            big.sendall(b" " * 791 + b"{\"x\": 1}\n")  # the 800 bytes declared
            self.assertEqual(big.recv(4096).split(b" ", 2)[1], b"400")
        finally:
            big.close()
        self.poll(200, "after the held body was released")


class SlowAndIdleClients(DaemonCase):

    FLAGS = ("--timeout", "2", "--max-connections", "2000")

    def test_slowloris_does_not_starve_others(self):
        """300 connections dribble their headers a byte at a time while
        another client's requests are all answered promptly."""
        conns = []
        for _ in range(300):
            s = socket.create_connection(("127.0.0.1", self.daemon.http_port), timeout=10)
            s.sendall(b"GET /healthz HTTP/1.1\r\n")
            conns.append(s)
        stop = threading.Event()

        def dribble():
            while not stop.is_set():
                for s in conns:
                    try:
                        s.send(b"X")
                    except OSError:
                        pass
                stop.wait(0.5)

        t = threading.Thread(target=dribble)
        t.start()
        try:
            worst = 0.0
            for _ in range(40):
                t0 = time.monotonic()
                self.ok("POST", "/v1/pair", PAIR)
                worst = max(worst, time.monotonic() - t0)
            self.assertLess(worst, FAST, "a request waited behind the slow clients")
        finally:
            stop.set()
            t.join()
            for s in conns:
                s.close()

    def test_idle_connections_are_closed_after_the_timeout(self):
        conns = [socket.create_connection(("127.0.0.1", self.daemon.http_port), timeout=10) for _ in range(50)]
        conns[0].sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n")  # a head never finished
        try:
            t0 = time.monotonic()
            for s in conns:
                s.settimeout(max(0.1, 10 - (time.monotonic() - t0)))
                try:
                    self.assertEqual(s.recv(4096), b"", "the daemon sent bytes to an idle client")
                except ConnectionResetError:
                    pass
            elapsed = time.monotonic() - t0
            self.assertGreater(elapsed, 1.5, "closed before --timeout")
            self.assertLess(elapsed, 8, "idle connections were kept past --timeout")
        finally:
            for s in conns:
                s.close()
        self.ok("GET", "/healthz")


class Flood(DaemonCase):

    FLAGS = ("--max-inflight", "64", "--max-connections", "4000")

    def setUp(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = min(hard, 8192)
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 3500:
            self.skipTest("this test needs 3500 file descriptors")

    def flood(self, port, payload, count):
        """count connections opened at once, each sending payload; returns
        the first bytes each received (b"" when closed unanswered)."""
        socks = []
        for _ in range(count):
            s = socket.socket()
            s.settimeout(20)
            s.connect(("127.0.0.1", port))
            socks.append(s)
        for s in socks:
            s.sendall(payload)
        out = []
        for s in socks:
            try:
                out.append(s.recv(4096))
            except OSError:
                out.append(b"")
            s.close()
        return out

    def test_flood_then_normal_service_and_bounded_memory(self):
        pid = self.daemon.proc.pid
        self.ok("POST", "/v1/pair", PAIR)
        pair_request = held.post("/v1/pair", PAIR)
        before = rss_kib(pid)
        for round_ in range(2):
            replies = self.flood(self.daemon.http_port, pair_request, 3000)
            statuses = [r.split(b" ", 2)[1] if r.startswith(b"HTTP/1.1 ") else b"closed" for r in replies]
            counts = {s: statuses.count(s) for s in set(statuses)}
            self.assertLessEqual(set(counts), {b"200", b"503"}, counts)
            for r in replies:
                if b" 503 " in r.split(b"\r\n", 1)[0]:
                    self.assertIn(b"\r\nRetry-After: 1\r\n", r)
            self.assertGreater(counts.get(b"200", 0), 0, counts)
            lines = self.flood(self.daemon.stream_port,
                               encode_message({"id": 1, "method": "POST", "path": "/v1/pair", "body": PAIR}), 1500)
            statuses = [[m["status"] for m in decode_messages(r)] for r in lines]
            self.assertTrue(all(s in ([200], [503]) for s in statuses),
                            [(s, r[:100]) for s, r in zip(statuses, lines) if s != [200]][:3])
        # Abrupt disconnects (RST) in the middle of requests.
        for _ in range(1000):
            s = socket.create_connection(("127.0.0.1", self.daemon.http_port))
            s.sendall(pair_request[:40])
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.close()
        for _ in range(20):
            self.ok("POST", "/v1/pair", PAIR)
        after = rss_kib(pid)
        # Thousands of connections may cost a few tens of MiB of pools and
        # buffers; a leak per connection would show as much more.
        self.assertLess(after - before, 200 * 1024, "RSS grew from %d to %d KiB" % (before, after))
        self.assertEqual(os.waitpid(pid, os.WNOHANG), (0, 0))


class WorldCap(DaemonCase):
    """--max-worlds bounds the memory a client can claim by creating worlds."""

    FLAGS = ("--max-worlds", "3")

    def test_a_world_past_the_cap_is_refused_and_nothing_changes(self):
        for name in ("a", "b", "c"):
            self.ok("PUT", "/v1/worlds/" + name, {}, status=201)
        r = self.req("PUT", "/v1/worlds/d", {})
        self.assertProblem(r, 422, "over-limit", context="a fourth world")
        self.assertEqual(self.req("GET", "/v1/worlds/d").status, 404)
        self.assertEqual([w["name"] for w in self.ok("GET", "/v1/worlds")["worlds"]], ["a", "b", "c"])
        self.ok("PUT", "/v1/worlds/c", {"settings": {"skin": 0.5}})  # configuring one held is not creating
        self.ok("DELETE", "/v1/worlds/a", status=204)
        self.ok("PUT", "/v1/worlds/d", {}, status=201)


class RequestMemory(DaemonCase):
    """--max-request-memory holds what one request's body decodes to (a
    JSON body's tree, and in either encoding the decoders' arrays), the
    same on both listeners (the stream's envelope is not charged twice)."""

    FLAGS = ("--max-request-memory", "1M")

    def bodies(self, n):
        # n empty arrays: each takes over 64 bytes decoded, 3 bytes as JSON
        # text and 1 as MessagePack
        return {"rays": [[]] * n}

    def answer_both(self, body):
        r = self.daemon.request("POST", "/v1/worlds/w/raycast", body)
        s = self.daemon.stream()
        try:
            s.send({"id": 1, "method": "POST", "path": "/v1/worlds/w/raycast", "body": body})
            line = s.read_line()
        finally:
            s.close()
        return r, line

    def test_budget_on_both_listeners(self):
        self.ok("PUT", "/v1/worlds/w", {}, status=201)
        # Under the budget (the decoder's 64 bytes a ray, and in JSON about
        # 0.5 MB of tree, so twice that would not fit): decoded, then
        # refused for what it says.
        r, line = self.answer_both(self.bodies(3000))
        self.assertProblem(r, 400, "wrong-type", "/rays/0", "3,000 arrays over HTTP")
        self.assertEqual(line["status"], 400, line)
        check_problem_body(self, line["body"], 400, "wrong-type", "/rays/0", "3,000 arrays over the stream")
        # 20,000 empty arrays need over 1.2 MB decoded: refused as too large.
        r, line = self.answer_both(self.bodies(20000))
        self.assertProblem(r, 413, "body-too-large", context="20,000 arrays over HTTP")
        self.assertEqual(line["status"], 413, line)
        check_problem_body(self, line["body"], 413, "body-too-large", None, "20,000 arrays over the stream")
        self.ok("POST", "/v1/worlds/w/raycast", {"rays": [{"origin": [0, 0, 0], "direction": [0, 1, 0]}]})
