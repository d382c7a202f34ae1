"""Process life: probes, SIGTERM/SIGINT exit 0 (also with open
connections), SIGPIPE survived, --help/--version/bad flags, JSON logs."""

import http.client
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import unittest

import harness
from harness import Daemon
from wire import pair, posed, sphere


class Lifecycle(unittest.TestCase):

    def start(self, *flags):
        d = Daemon(flags)
        self.addCleanup(d.cleanup)
        d.start()
        return d

    def test_sigterm_exits_zero(self):
        d = self.start()
        self.assertEqual(d.request("GET", "/healthz").status, 200)
        self.assertEqual(d.request("GET", "/readyz").status, 200)
        d.signal(signal.SIGTERM)
        rc = d.wait(10)
        self.assertEqual(rc, 0, "exit status after SIGTERM; %s" % d.log_tail())

    def test_sigint_exits_zero(self):
        d = self.start()
        self.assertEqual(d.request("GET", "/readyz").status, 200)
        d.signal(signal.SIGINT)
        self.assertEqual(d.wait(10), 0, d.log_tail())

    def test_sigterm_with_open_connections(self):
        d = self.start()
        s = d.stream()
        s.send({"id": 1, "method": "GET", "path": "/healthz"})
        self.assertEqual(s.read_line()["status"], 200)
        keep = http.client.HTTPConnection("127.0.0.1", d.http_port, timeout=10)
        keep.request("GET", "/v1/worlds")
        self.assertEqual(keep.getresponse().read(), b'{"worlds":[]}')
        # a burst of pipelined requests in flight as the signal lands
        body = pair(posed(sphere(1)), posed(sphere(1), (1, 0, 0)))
        s.send(*[{"id": i, "method": "POST", "path": "/v1/pair", "body": body} for i in range(100)])
        started = time.monotonic()
        d.signal(signal.SIGTERM)
        lines, closed = s.read_until_closed()
        self.assertTrue(closed, "the stream connection should be closed by the drain")
        self.assertEqual([x["id"] for x in lines], list(range(len(lines))), "replies out of order")
        for x in lines:
            self.assertEqual(x["status"], 200, x)
        rc = d.wait(10)
        self.assertEqual(rc, 0, "exit status with open connections; %s" % d.log_tail())
        self.assertLess(time.monotonic() - started, 10)
        s.close()
        keep.close()

    def test_new_connections_during_the_drain_are_not_served(self):
        """While the drain answers the stream's work already read (each
        batch of pairs whole, or 503 once the drain stops it), a new
        HTTP connection gets no answer (closed or refused), and the daemon
        still exits 0."""
        d = self.start()
        s = d.stream()
        batch = {"pairs": [pair(posed(sphere(1)), posed(sphere(1), (1, 0, 0)))] * 2000}
        s.send(*[{"id": i, "method": "POST", "path": "/v1/pairs", "body": batch} for i in range(20)])
        self.assertEqual(s.read_line()["status"], 200)  # the work is under way
        keep = http.client.HTTPConnection("127.0.0.1", d.http_port, timeout=10)
        keep.request("GET", "/readyz")
        ready = keep.getresponse()
        ready.read()
        self.assertEqual(ready.status, 200)
        d.signal(signal.SIGTERM)
        # the drain has begun once /readyz says so (or it has already ended)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                keep.request("GET", "/readyz")
                r = keep.getresponse()
                r.read()
                if r.status == 503:
                    break
            except (OSError, http.client.HTTPException):
                break
            time.sleep(0.01)
        keep.close()
        served = b""
        try:
            c = socket.create_connection(("127.0.0.1", d.http_port), timeout=10)
            c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            served = c.recv(4096)
            c.close()
        except OSError:
            pass  # refused or reset: not served either
        self.assertEqual(served, b"", "a connection opened during the drain was served")
        lines, closed = s.read_until_closed()
        self.assertTrue(closed)
        # the lines read before the signal are answered, in order: whole, or
        # stopped by the drain (a batch past its first deadline check)
        self.assertEqual([x["id"] for x in lines], list(range(1, 1 + len(lines))), "replies out of order")
        for x in lines:
            self.assertIn(x["status"], (200, 503), x)
            if x["status"] == 503:
                self.assertIn("shutting down", x["body"]["detail"], x)
        self.assertEqual(d.wait(10), 0, d.log_tail())
        s.close()

    def test_client_going_away_is_survived(self):
        d = self.start()
        big = {"pairs": [pair(posed(sphere(1)), posed(sphere(1), (1, 0, 0)))] * 2000}
        data = harness.encode_body(big)
        media = harness.MEDIA_TYPES[harness.ENCODING].encode()
        for _ in range(5):
            c = socket.create_connection(("127.0.0.1", d.http_port))
            c.sendall(b"POST /v1/pairs HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nAccept: %s\r\n"
                      b"Content-Length: %d\r\n\r\n" % (media, media, len(data)) + data)
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            c.close()  # reset: the response has nowhere to go
        s = d.stream()
        s.send(*[{"id": i, "method": "POST", "path": "/v1/pairs", "body": big} for i in range(3)])
        s.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()
        time.sleep(0.2)
        self.assertEqual(d.request("GET", "/healthz").status, 200, "the daemon died after clients went away")
        self.assertEqual(d.stop(), 0, d.log_tail())

    def test_help_version_and_bad_flags(self):
        r = subprocess.run([harness.DAEMON, "--help"], capture_output=True, timeout=10)
        self.assertEqual(r.returncode, 0)
        out = r.stdout.decode()
        for flag in ("--listen", "--stream-listen", "--data-dir", "--fsync", "--snapshot-every", "--threads",
                     "--max-body", "--token", "--log-level", "--max-pairs", "--max-rays", "--help", "--version"):
            self.assertIn(flag, out, "--help does not mention %s" % flag)
        r = subprocess.run([harness.DAEMON, "--version"], capture_output=True, timeout=10)
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout.decode(), r"collisiond \d+\.\d+\.\d+")
        for argv in (["--no-such-flag"], ["--fsync", "sometimes"], ["--max-body", "-5"], ["--listen", "nowhere"],
                     ["--log-level", "loud"]):
            with self.subTest(argv=argv):
                # A port file of its own: the daemon renames its file into
                # place, so a flag wrongly accepted must not replace a device.
                ports = os.path.join(self.enterContext(tempfile.TemporaryDirectory()), "ports")
                r = subprocess.run([harness.DAEMON] + argv + ["--data-dir", "", "--port-file", ports],
                                   capture_output=True, timeout=10)
                self.assertEqual(r.returncode, 2, "%s: %s" % (argv, r.stderr.decode()[-500:]))
                self.assertTrue(r.stderr.strip(), "%s: no message on stderr" % argv)

    def test_logs_are_json_lines(self):
        d = self.start("--access-log", "all")  # the default would sample the 404 away
        d.request("POST", "/v1/pair", pair(posed(sphere(1)), posed(sphere(1))), headers={"X-Request-Id": "log-me-1"})
        d.request("GET", "/v1/worlds/nope", headers={"X-Request-Id": "log-me-2"})
        self.assertEqual(d.stop(), 0)
        records = []
        for line in d.log_text().splitlines():
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                self.fail("a log line is not JSON: %r" % line)
            self.assertIsInstance(rec, dict, line)
            for k in ("time", "level", "msg"):
                self.assertIn(k, rec, line)
            records.append(rec)
        mine = {r.get("request_id"): r for r in records}
        self.assertIn("log-me-1", mine, "no log line with the request id")
        self.assertEqual(mine["log-me-1"].get("status"), 200)
        self.assertEqual(mine["log-me-1"].get("route"), "/v1/pair")
        self.assertIn("duration_us", mine["log-me-1"])
        self.assertEqual(mine["log-me-2"].get("status"), 404)

    def test_log_level_error_is_quiet(self):
        # The plain lines below error ("listening", "stopped") are dropped;
        # the access lines have --access-log of their own (test_access_log.py).
        d = self.start("--log-level", "error", "--access-log", "off")
        d.request("GET", "/healthz", headers={"X-Request-Id": "quiet-1"})
        self.assertEqual(d.stop(), 0)
        self.assertEqual(d.log_text(), "")
