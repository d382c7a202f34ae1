"""Starts the real collisiond on ephemeral loopback ports and talks to it.

Every test class that needs a daemon starts its own (DaemonCase.FLAGS are
its extra flags) and stops it in tearDownClass; a daemon that does not exit
with status 0 on SIGTERM fails the class, so a crash or a sanitizer report
at exit is never silent. Only the Python standard library is used, and
python3-msgpack by the MessagePack tests (imported only when they run).
"""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

# Path of the binary under test; run.py sets it.
DAEMON = None

START_TIMEOUT = 15.0
STOP_TIMEOUT = 15.0
IO_TIMEOUT = 15.0

PROBLEM_TYPE_PREFIX = "urn:collisiond:problem:"


def strict_json(raw):
    """Parses a response body, refusing what a correct server never sends:
    duplicate keys and the non-JSON constants NaN and Infinity."""

    def pairs(items):
        out = {}
        for k, v in items:
            if k in out:
                raise ValueError("duplicate key %r in response" % k)
            out[k] = v
        return out

    def constant(name):
        raise ValueError("non-JSON constant %s in response" % name)

    text = raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else raw
    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


class Response:
    """One HTTP response: status, lower-cased headers, raw body, and the
    parsed JSON body when the body is JSON."""

    def __init__(self, status, headers, raw):
        self.status = status
        self.headers = headers
        self.raw = raw
        self.content_type = headers.get("content-type", "")
        self.json = None
        self.json_error = None
        if raw and ("json" in self.content_type):
            try:
                self.json = strict_json(raw)
            except ValueError as e:
                self.json_error = str(e)

    def describe(self):
        body = self.raw[:600].decode("utf-8", "replace")
        return "HTTP %d (%s) %s" % (self.status, self.content_type, body)


class Daemon:
    """A collisiond process on ephemeral ports with --data-dir ''."""

    def __init__(self, flags=(), env=None):
        if not DAEMON:
            raise RuntimeError("harness.DAEMON is not set (run tests through run.py)")
        self.tmp = tempfile.TemporaryDirectory(prefix="collisiond-e2e-")
        self.port_file = os.path.join(self.tmp.name, "ports")
        self.log_path = os.path.join(self.tmp.name, "stderr.log")
        self.flags = list(flags)
        self.env = dict(os.environ)
        if env:
            self.env.update(env)
        self.proc = None
        self.http_port = None
        self.stream_port = None
        self.returncode = None

    def start(self):
        argv = [DAEMON, "--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0",
                "--port-file", self.port_file, "--data-dir", "", "--threads", "2"] + self.flags
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self._log, env=self.env)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("collisiond exited with status %d at start-up: %s"
                                   % (self.proc.returncode, self.log_tail()))
            try:
                with open(self.port_file) as f:
                    text = f.read()
            except FileNotFoundError:
                text = ""
            if text.endswith("\n"):
                parts = text.split()
                self.http_port, self.stream_port = int(parts[0]), int(parts[1])
                return self
            time.sleep(0.01)
        self.kill()
        raise RuntimeError("collisiond wrote no port file within %.0f s: %s" % (START_TIMEOUT, self.log_tail()))

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=STOP_TIMEOUT):
        """Waits for exit; returns the status, or None on timeout."""
        try:
            self.returncode = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        return self.returncode

    def stop(self):
        """SIGTERM, wait, and return the exit status (killed: -9)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            if self.wait() is None:
                self.kill()
                self.returncode = -9
        else:
            self.returncode = self.proc.returncode
        self._log.close()
        return self.returncode

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def cleanup(self):
        self.kill()
        if not self._log.closed:
            self._log.close()
        self.tmp.cleanup()

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def log_tail(self, n=2000):
        text = self.log_text()
        return "stderr: " + (text[-n:] if text else "(empty)")

    # HTTP

    def request(self, method, path, body=None, data=None, headers=None):
        """One request on a fresh connection. body is encoded as compact
        JSON; data is sent as is (bytes or str)."""
        hdrs = dict(headers or {})
        if body is not None:
            data = json.dumps(body, separators=(",", ":"))
        if isinstance(data, str):
            data = data.encode("utf-8")
        if data is not None:
            hdrs.setdefault("Content-Type", "application/json")
        conn = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=IO_TIMEOUT)
        try:
            conn.request(method, path, body=data, headers=hdrs)
            r = conn.getresponse()
            raw = r.read()
            headers_ = {k.lower(): v for k, v in r.getheaders()}
            return Response(r.status, headers_, raw)
        finally:
            conn.close()

    def raw_http(self, payload, read_timeout=IO_TIMEOUT):
        """Writes payload on a raw socket (a write failing because the
        server already answered and closed is tolerated), then reads until
        the server closes; returns (status, headers, body bytes) of the
        first response."""
        s = socket.create_connection(("127.0.0.1", self.http_port), timeout=read_timeout)
        try:
            try:
                s.sendall(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass
            chunks = []
            while True:
                try:
                    b = s.recv(65536)
                except ConnectionResetError:
                    break
                except socket.timeout:
                    break
                if not b:
                    break
                chunks.append(b)
                if _complete_response(b"".join(chunks)):
                    break
            return _parse_raw_response(b"".join(chunks))
        finally:
            s.close()

    # stream transport

    def stream(self, timeout=IO_TIMEOUT):
        return StreamClient(self.stream_port, timeout)

    def stream_msgpack(self, timeout=IO_TIMEOUT):
        return MsgpackStreamClient(self.stream_port, timeout)


def _split_head(data):
    i = data.find(b"\r\n\r\n")
    if i < 0:
        return None, None
    return data[:i].decode("latin-1"), data[i + 4:]


def _complete_response(data):
    head, rest = _split_head(data)
    if head is None:
        return False
    for line in head.split("\r\n")[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == "content-length":
            return len(rest) >= int(v.strip())
    return False


def _parse_raw_response(data):
    head, rest = _split_head(data)
    if head is None:
        return None, {}, data
    lines = head.split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, rest


class StreamClient:
    """A connection to the JSON-lines stream listener."""

    def __init__(self, port, timeout):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def send_raw(self, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.sock.sendall(data)

    def send(self, *messages):
        """Sends every message (dicts are encoded) as one write, one line each."""
        lines = []
        for m in messages:
            lines.append(m if isinstance(m, str) else json.dumps(m, separators=(",", ":")))
        self.send_raw("".join(line + "\n" for line in lines))

    def read_line(self):
        """The next reply line parsed, or None at end of stream."""
        while b"\n" not in self.buf:
            b = self.sock.recv(65536)
            if not b:
                return None
            self.buf += b
        line, _, self.buf = self.buf.partition(b"\n")
        return strict_json(line)

    def read_until_closed(self):
        """Reads every remaining line until the server closes; returns
        (lines, closed) where closed is False on a read timeout."""
        lines = []
        try:
            while True:
                b = self.sock.recv(65536)
                if not b:
                    break
                self.buf += b
        except socket.timeout:
            return self._lines(lines), False
        except ConnectionResetError:
            pass
        return self._lines(lines), True

    def _lines(self, lines):
        for line in self.buf.split(b"\n"):
            if line.strip():
                lines.append(strict_json(line))
        self.buf = b""
        return lines

    def close(self):
        self.sock.close()


def import_msgpack():
    """python3-msgpack, which only the MessagePack tests need: also when
    they run under an interpreter that does not see Debian's packages
    (a pyenv build), as test_exposition.py's parser may."""
    try:
        import msgpack
    except ImportError:
        debian = "/usr/lib/python3/dist-packages"
        if debian not in sys.path:
            sys.path.append(debian)
        try:
            import msgpack
        except ImportError:
            raise AssertionError("python3-msgpack is needed: apt-get install python3-msgpack (make test-deps)")
    return msgpack


def strict_msgpack(raw):
    """Unpacks one MessagePack value, refusing what a correct server never
    sends: duplicate or non-str keys, bin, ext, trailing bytes."""
    msgpack = import_msgpack()

    def pairs(items):
        out = {}
        for k, v in items:
            if not isinstance(k, str):
                raise ValueError("non-str key %r in response" % (k,))
            if k in out:
                raise ValueError("duplicate key %r in response" % k)
            out[k] = v
        return out

    def ext(code, data):
        raise ValueError("ext value (type %d) in response" % code)

    value = msgpack.unpackb(raw, raw=False, object_pairs_hook=pairs, ext_hook=ext, strict_map_key=False)
    if _has_bytes(value):
        raise ValueError("bin value in response")
    return value


def _has_bytes(v):
    if isinstance(v, (bytes, bytearray)):
        return True
    if isinstance(v, dict):
        return any(_has_bytes(x) for x in v.values())
    if isinstance(v, list):
        return any(_has_bytes(x) for x in v)
    return False


class MsgpackStreamClient:
    """A MessagePack connection to the stream listener (docs/API.md section
    11): every frame is 0xce, the envelope's length as 4 bytes big-endian,
    then the envelope, one map."""

    def __init__(self, port, timeout):
        self.msgpack = import_msgpack()
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    @staticmethod
    def frame(envelope):
        """A frame around the envelope's bytes."""
        return b"\xce" + len(envelope).to_bytes(4, "big") + envelope

    def pack(self, message):
        return self.msgpack.packb(message, use_bin_type=True)

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, *messages):
        """Sends every message as one write, one frame each: a dict is
        packed, bytes are an envelope sent as they are."""
        self.send_raw(b"".join(self.frame(m if isinstance(m, bytes) else self.pack(m)) for m in messages))

    def _fill(self, n):
        while len(self.buf) < n:
            b = self.sock.recv(65536)
            if not b:
                return False
            self.buf += b
        return True

    def read_raw(self):
        """The next reply frame's envelope bytes, or None at end of stream."""
        if not self._fill(5):
            return None
        if self.buf[0] != 0xCE:
            raise ValueError("a reply frame starts with 0x%02x, not 0xce" % self.buf[0])
        n = int.from_bytes(self.buf[1:5], "big")
        if not self._fill(5 + n):
            return None
        raw, self.buf = self.buf[5:5 + n], self.buf[5 + n:]
        return raw

    def read(self):
        """The next reply frame unpacked, or None at end of stream."""
        raw = self.read_raw()
        return None if raw is None else strict_msgpack(raw)

    def read_until_closed(self):
        """Reads every remaining frame until the server closes; returns
        (frames, closed) where closed is False on a read timeout. A frame
        cut short by the close is an error."""
        frames = []
        closed = True
        try:
            while True:
                b = self.sock.recv(65536)
                if not b:
                    break
                self.buf += b
        except socket.timeout:
            closed = False
        except ConnectionResetError:
            pass
        while self.buf:
            if len(self.buf) < 5 or len(self.buf) < 5 + int.from_bytes(self.buf[1:5], "big"):
                raise ValueError("the stream ended inside a reply frame: %r" % self.buf[:40])
            frames.append(self.read())
        return frames, closed

    def close(self):
        self.sock.close()


def describe_difference(expected, got, tol, path=""):
    """The first place where got differs from expected, or None. Numbers
    compare within tol (absolute); "$any" in expected matches any value and
    "$string" any non-empty string; objects must have the same keys."""
    where = path or "/"
    if expected == "$any":
        return None
    if expected == "$string":
        if isinstance(got, str) and got:
            return None
        return "%s: expected a non-empty string, got %r" % (where, got)
    if isinstance(expected, bool) or isinstance(got, bool):
        if expected is got:
            return None
        return "%s: expected %r, got %r" % (where, expected, got)
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        if abs(expected - got) <= tol:
            return None
        return "%s: expected %r (tolerance %g), got %r" % (where, expected, tol, got)
    if isinstance(expected, dict) and isinstance(got, dict):
        missing = sorted(set(expected) - set(got))
        extra = sorted(set(got) - set(expected))
        if missing or extra:
            return "%s: keys differ: missing %s, unexpected %s (got %s)" % (
                where, missing, extra, json.dumps(got)[:300])
        for k in expected:
            d = describe_difference(expected[k], got[k], tol, path + "/" + k)
            if d:
                return d
        return None
    if isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            return "%s: expected %d items, got %d: %s" % (where, len(expected), len(got), json.dumps(got)[:300])
        for i, (e, g) in enumerate(zip(expected, got)):
            d = describe_difference(e, g, tol, "%s/%d" % (path, i))
            if d:
                return d
        return None
    if expected == got and type(expected) is type(got):
        return None
    return "%s: expected %r, got %r" % (where, expected, got)


class DaemonCase(unittest.TestCase):
    """A test class with one daemon of its own, started with FLAGS (and
    ENV) before its first test and stopped after its last."""

    FLAGS = ()
    ENV = None
    daemon = None

    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(cls.FLAGS, cls.ENV)
        cls.addClassCleanup(cls.daemon.cleanup)
        cls.daemon.start()

    @classmethod
    def tearDownClass(cls):
        rc = cls.daemon.stop()
        if rc != 0:
            raise AssertionError("collisiond (flags %s) exited with status %s after SIGTERM; %s"
                                 % (list(cls.FLAGS), rc, cls.daemon.log_tail(4000)))

    # shortcuts

    def req(self, method, path, body=None, **kw):
        return self.daemon.request(method, path, body, **kw)

    def ok(self, method, path, body=None, status=200, **kw):
        """Sends a request that must succeed with status; returns its JSON
        body (None for 204)."""
        r = self.daemon.request(method, path, body, **kw)
        self.assertEqual(r.status, status, "%s %s %s -> %s" % (method, path, _short(body), r.describe()))
        if status == 204:
            self.assertEqual(r.raw, b"", "204 must have no body")
            return None
        self.assertTrue(r.content_type.startswith("application/json"),
                        "%s %s: content type %r" % (method, path, r.content_type))
        self.assertIsNone(r.json_error, r.json_error)
        return r.json

    def assertProblem(self, r, status, slug=None, pointer=None, context=""):
        """r is a problem+json response with status (and slug, and pointer;
        a pointer ending in "/*" also accepts a pointer inside that field)."""
        what = "%s -> %s" % (context, r.describe())
        self.assertEqual(r.status, status, what)
        self.assertTrue(r.content_type.startswith("application/problem+json"),
                        "content type %r: %s" % (r.content_type, what))
        self.assertIsNone(r.json_error, what)
        self.assertIsInstance(r.json, dict, what)
        check_problem_body(self, r.json, status, slug, pointer, what)
        return r.json

    def assertClose(self, got, expected, tol, msg=""):
        d = describe_difference(expected, got, tol)
        if d:
            self.fail("%s: %s" % (msg, d) if msg else d)


def check_problem_body(tc, p, status, slug, pointer, what=""):
    """The fields of a problem body (API.md section 3)."""
    tc.assertTrue(set(p) <= {"type", "title", "status", "detail", "pointer"},
                  "problem has unexpected fields %s: %s" % (sorted(set(p)), what))
    for k in ("type", "title", "status", "detail"):
        tc.assertIn(k, p, "problem lacks %r: %s" % (k, what))
    tc.assertEqual(p["status"], status, what)
    tc.assertTrue(isinstance(p["title"], str) and p["title"], what)
    tc.assertTrue(isinstance(p["detail"], str) and p["detail"], what)
    tc.assertTrue(p["type"].startswith(PROBLEM_TYPE_PREFIX), what)
    if slug is not None:
        tc.assertEqual(p["type"], PROBLEM_TYPE_PREFIX + slug, what)
    if pointer is not None and pointer.endswith("/*"):
        # the field or any element inside it (a finer pointer is as good)
        got = p.get("pointer", "")
        tc.assertTrue(got == pointer[:-2] or got.startswith(pointer[:-1]),
                      "pointer %r is not at or inside %r: %s" % (got, pointer[:-2], what))
    elif pointer is not None:
        tc.assertEqual(p.get("pointer", ""), pointer, what)


def _short(body):
    if body is None:
        return ""
    text = json.dumps(body)
    return text if len(text) < 300 else text[:300] + "..."
