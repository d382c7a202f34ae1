"""Limits of the stream transport (docs/API.md section 11): the progress
timer cuts off a half line that stalls and a client that leaves its
replies unread (freeing its --max-connections slot while other clients
are served), and refused lines are counted in /metrics like any request.
The daemons run with --timeout 1, so every wait here is a few seconds."""

import re
import socket
import time

from harness import DaemonCase, check_problem_body

HEALTH = {"id": 0, "method": "GET", "path": "/healthz"}
HEALTH_LINE = b'{"id":0,"method":"GET","path":"/healthz"}\n'
TIMEOUT = 1.0  # --timeout below


def requests_total(text, route, status):
    """collisiond_requests_total{route, status} in an exposition (0 when absent)."""
    for line in text.splitlines():
        m = re.match(r'^collisiond_requests_total\{(.*)\} (\S+)$', line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(1)))
        if labels.get("route") == route and labels.get("status") == str(status):
            return float(m.group(2))
    return 0.0


def served(port, timeout=2.0):
    """True when a new stream connection answers /healthz; False when the
    server closes it instead (over --max-connections)."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError:
        return False
    try:
        s.sendall(HEALTH_LINE)
        buf = b""
        while b"\n" not in buf:
            b = s.recv(4096)
            if not b:
                return False
            buf += b
        return b'"status":200' in buf
    except (ConnectionResetError, BrokenPipeError):
        return False
    finally:
        s.close()


class StreamProgressTimer(DaemonCase):

    FLAGS = ("--timeout", "1", "--max-body", "4096", "--access-log", "all")  # a refused 400's line is read

    def test_stalled_half_line_is_cut_off(self):
        s = self.daemon.stream(timeout=6)
        try:
            whole = s.encode({"id": 1, "method": "GET", "path": "/healthz"})
            s.send_raw(whole[:len(whole) // 2])
            t0 = time.monotonic()
            lines, closed = s.read_until_closed()
            took = time.monotonic() - t0
        finally:
            s.close()
        self.assertTrue(closed, "a half line that stalls should be cut off")
        self.assertEqual(lines, [])
        self.assertGreaterEqual(took, TIMEOUT * 0.8, "cut off before --timeout")
        self.assertLess(took, TIMEOUT * 4, "cut off long after --timeout")

    def test_slow_line_with_progress_is_served(self):
        # Longer than --timeout in all, but never a second without a byte.
        s = self.daemon.stream(timeout=6)
        line = s.encode({"id": 2, "method": "GET", "path": "/healthz"})
        try:
            for piece in (line[:10], line[10:20], line[20:30], line[30:]):
                s.send_raw(piece)
                time.sleep(0.4)
            reply = s.read_line()
        finally:
            s.close()
        self.assertIsNotNone(reply, "a line that keeps moving must not be cut off")
        self.assertEqual((reply["id"], reply["status"]), (2, 200), reply)

    def test_refused_lines_are_counted(self):
        before = self.daemon.request("GET", "/metrics").raw.decode()
        s = self.daemon.stream(timeout=6)
        try:
            bad, slug = s.malformed()
            s.send(bad)
            reply = s.read_line()
            self.assertEqual((reply["id"], reply["status"]), (None, 400), reply)
            self.assertRegex(reply.get("request_id", ""), r"^[A-Za-z0-9._:-]{1,64}$", reply)
            check_problem_body(self, reply["body"], 400, slug, None)
            s.send({"id": 4, "method": "GET", "path": "/healthz", "headers": {"X-Request-Id": "tick-9", "Accept": 2}})
            reply = s.read_line()
            self.assertEqual((reply["id"], reply["status"], reply.get("request_id")), (4, 400, "tick-9"), reply)
            check_problem_body(self, reply["body"], 400, "wrong-type", "/headers/Accept")
        finally:
            s.close()
        s = self.daemon.stream(timeout=6)
        try:
            s.send_oversized(5000)
            lines, closed = s.read_until_closed()
        finally:
            s.close()
        self.assertTrue(closed)
        self.assertEqual([(x["id"], x["status"]) for x in lines], [(None, 413)], lines)
        after = self.daemon.request("GET", "/metrics").raw.decode()
        self.assertEqual(requests_total(after, "unmatched", 400) - requests_total(before, "unmatched", 400), 2,
                         "two refused lines should be counted as unmatched 400s")
        self.assertEqual(requests_total(after, "unmatched", 413) - requests_total(before, "unmatched", 413), 1,
                         "the overlong line should be counted as an unmatched 413")
        log = self.daemon.log_text()
        self.assertIn('"request_id":"tick-9"', log, "a refused line should have its access-log line")


class StreamUnreadReplies(DaemonCase):

    FLAGS = ("--timeout", "1", "--max-connections", "2")

    def test_client_that_does_not_read_is_closed(self):
        port = self.daemon.stream_port
        # A small receive window, so the replies back up at the server soon.
        a = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        a.settimeout(6)
        a.connect(("127.0.0.1", port))
        b = self.daemon.stream(timeout=2)
        try:
            a.sendall(HEALTH_LINE)
            self.assertIn(b'"status":200', a.recv(4096))
            b.send(HEALTH)
            self.assertEqual(b.read_line()["status"], 200)
            self.assertFalse(served(port), "a third connection should be refused with --max-connections 2")

            # About 17 MB of replies (the OpenAPI document, 200 times) that A never reads.
            n = 200
            a.sendall(b'{"id":1,"method":"GET","path":"/v1/openapi.json"}\n' * n)
            t0 = time.monotonic()
            freed = None
            while time.monotonic() - t0 < TIMEOUT * 6:
                t = time.monotonic()
                b.send(HEALTH)
                self.assertEqual(b.read_line()["status"], 200, "another client must keep being served")
                self.assertLess(time.monotonic() - t, TIMEOUT, "another client waited")
                if served(port):
                    freed = time.monotonic() - t0
                    break
                time.sleep(0.2)
            self.assertIsNotNone(freed, "the client that does not read should be closed, freeing its slot")
            self.assertGreaterEqual(freed, TIMEOUT * 0.8, "closed before --timeout")

            self.assertIn("took no reply bytes", self.daemon.log_text(), "why the connection was closed")
        finally:
            a.close()
            b.close()


def metric(daemon, name):
    """The value of an unlabelled sample in /metrics."""
    text = daemon.request("GET", "/metrics").raw.decode()
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(m.group(1)) if m else None


def padded_health(s, rid, size):
    """A /healthz request about size bytes long in s's encoding (a padding
    header the server ignores)."""
    return s.padded({"id": rid, "method": "GET", "path": "/healthz"}, size)


class StreamBufferBudget(DaemonCase):
    """Stream lines are held against --max-buffered like HTTP bodies: a
    line that would pass it is answered 503 in its place (id null: it was
    never read) and the connection stays usable."""

    FLAGS = ("--max-buffered", "64K", "--max-body", "1M")

    def test_a_line_past_the_budget_is_shed_in_its_place(self):
        shed_before = metric(self.daemon, "collisiond_requests_shed_total")
        s = self.daemon.stream(timeout=5)
        try:
            s.send(HEALTH)
            line = padded_health(s, 1, 200 * 1024)
            s.send_raw(line[: 100 * 1024])  # unfinished, and already past 64 KiB
            self.assertEqual(s.read_line()["status"], 200)
            shed = s.read_line()  # answered before the line ends
            self.assertEqual(shed["status"], 503, shed)
            self.assertIsNone(shed["id"])
            check_problem_body(self, shed["body"], 503, "unavailable", None)
            self.assertIn("--max-buffered", shed["body"]["detail"])
            s.send_raw(line[100 * 1024:])  # its rest is dropped
            s.send({"id": 2, "method": "GET", "path": "/healthz"})
            after = s.read_line()
            self.assertEqual((after["id"], after["status"]), (2, 200))
        finally:
            s.close()
        self.assertEqual(metric(self.daemon, "collisiond_request_bytes_buffered"), 0)
        self.assertGreater(metric(self.daemon, "collisiond_requests_shed_total"), shed_before)

    def test_held_lines_share_the_budget(self):
        a = self.daemon.stream(timeout=5)
        b = self.daemon.stream(timeout=5)
        try:
            held = padded_health(a, 3, 40 * 1024)
            a.send_raw(held[:-10])  # 40 KiB held for A
            time.sleep(0.3)
            b.send_raw(padded_health(b, 4, 40 * 1024))  # with A's, past 64 KiB
            refused = b.read_line()
            self.assertEqual((refused["id"], refused["status"]), (None, 503))
            b.send(HEALTH)  # a line's first 4 KiB are free: health checks always pass
            self.assertEqual(b.read_line()["status"], 200)
            a.send_raw(held[-10:])  # A's line ends: its bytes are given back
            self.assertEqual(a.read_line()["id"], 3)
            b.send_raw(padded_health(b, 5, 40 * 1024))
            self.assertEqual(b.read_line()["status"], 200)
        finally:
            a.close()
            b.close()

    def wait_until_freed(self):
        """Waits for the server to free every stream connection and give
        back their bytes. Once it has freed them nothing of theirs is read
        any more, so a zero of the bytes then is final (while one is open,
        its next read could charge more)."""
        deadline = time.monotonic() + 5
        while (metric(self.daemon, "collisiond_stream_connections") != 0 or
               metric(self.daemon, "collisiond_request_bytes_buffered") != 0):
            self.assertLess(time.monotonic(), deadline, "stream connections or bytes still held after their clients left")
            time.sleep(0.1)

    def test_closed_connections_give_their_bytes_back(self):
        self.wait_until_freed()  # the connections of the tests before
        for _ in range(3):
            s = self.daemon.stream(timeout=5)
            lines = b"".join(padded_health(s, 10 + i, 8 * 1024) for i in range(12))
            s.send_raw(lines + lines[:-3000])  # queued, running and unfinished lines
            # The first reply shows the server has the connection; the rest
            # are never read.
            self.assertEqual(s.read_line()["status"], 200)
            self.assertGreaterEqual(metric(self.daemon, "collisiond_stream_connections"), 1)
            s.close()
            # Before the next connection: until the server has seen this
            # close, this connection's held lines count against the budget,
            # and the next one's first line could be refused for them.
            self.wait_until_freed()
        s = self.daemon.stream(timeout=5)
        try:
            s.send_raw(padded_health(s, 99, 60 * 1024))  # the whole budget is there again
            self.assertEqual(s.read_line()["status"], 200)
        finally:
            s.close()
