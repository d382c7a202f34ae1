"""Starts the real collisiond on ephemeral loopback ports and talks to it.

Every test class that needs a daemon starts its own (DaemonCase.FLAGS are
its extra flags) and stops it in tearDownClass; a daemon that does not exit
with status 0 on SIGTERM fails the class, so a crash or a sanitizer report
at exit is never silent.

Bodies go in one of two encodings (API.md section 1), ENCODING for the
whole run: "json", or "msgpack", where every body= request is sent as
MessagePack with Accept: application/msgpack, every answer is decoded from
MessagePack into the same Python values JSON gives (Response.json, also
.value), and stream connections carry length-prefixed frames. So every
scenario runs in both without change. A test of JSON text itself (raw
JSON bytes, pretty printing, exact JSON bytes) is marked @json_only(why)
and skipped in the other encoding; a test that picks its encodings itself
is marked @once(why) and runs in the JSON pass only. Besides the standard
library only python3-msgpack is used (mp.py finds it).
"""

import functools
import http.client
import json
import math
import os
import re
import signal
import socket
import struct
import subprocess
import tempfile
import time
import unittest

from mp import msgpack

# Path of the binary under test; run.py sets it.
DAEMON = None

# The run's encoding of bodies: "json" or "msgpack" (run.py sets it from
# --encoding or CQ_E2E_ENCODING).
ENCODINGS = ("json", "msgpack")
ENCODING = "json"

# The transport DaemonCase.req and .ok send their requests on: "http", or
# "stream" (one persistent stream connection per daemon, in the run's
# encoding; run.py sets it from --transport or CQ_E2E_TRANSPORT). What
# only HTTP can carry (raw bytes, other headers, another encoding, HEAD)
# goes over HTTP either way; other helpers always use HTTP.
TRANSPORTS = ("http", "stream")
TRANSPORT = "http"
# Headers a stream envelope carries (API.md section 11).
STREAM_HEADERS = ("authorization", "x-request-id")

MEDIA_TYPES = {"json": "application/json", "msgpack": "application/msgpack"}
PROBLEM_TYPES = {"json": "application/problem+json", "msgpack": "application/problem+msgpack"}
# Paths whose successful answer has one type whatever Accept says
# (docs/openapi.json, info): the OpenAPI document is JSON text. Their
# problems are negotiated like any other.
JSON_ALWAYS = ("/v1/openapi.json",)

# A MessagePack stream frame: this byte (MessagePack's uint32 mark), the
# envelope's length as 4 bytes big-endian, then the envelope (API.md 11).
FRAME_MARK = 0xCE
FRAME_PREFIX = 5

START_TIMEOUT = 15.0
STOP_TIMEOUT = 15.0
IO_TIMEOUT = 15.0
# How long wait_for_log waits for a line another thread of the daemon writes.
LOG_TIMEOUT = 30.0

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


def strict_msgpack(raw):
    """Decodes one MessagePack value into what strict_json gives for the
    same JSON, refusing what a correct server never sends: duplicate or
    non-string keys, bin and ext values, invalid UTF-8, trailing bytes and
    non-finite floats (JSON cannot carry them, so neither may MessagePack)."""

    def pairs(items):
        out = {}
        for k, v in items:
            if not isinstance(k, str):
                raise ValueError("non-string key %r in response" % (k,))
            if k in out:
                raise ValueError("duplicate key %r in response" % k)
            out[k] = v
        return out

    def ext(code, data):
        raise ValueError("ext type %d (%d bytes) in response" % (code, len(data)))

    try:
        value = msgpack.unpackb(bytes(raw), raw=False, strict_map_key=True, object_pairs_hook=pairs,
                                ext_hook=ext, use_list=True)
    except ValueError:
        raise
    except Exception as e:  # msgpack's own errors (truncation, depth) are not all ValueErrors
        raise ValueError("not MessagePack: %s: %s" % (type(e).__name__, e))
    _refuse_non_json(value, "")
    return value


def _refuse_non_json(value, where):
    """Raises ValueError at the first value JSON could not hold."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("non-finite number %r at %s in response" % (value, where or "/"))
    if isinstance(value, (bytes, bytearray)):
        raise ValueError("bin value at %s in response" % (where or "/"))
    if isinstance(value, dict):
        for k, v in value.items():
            _refuse_non_json(v, "%s/%s" % (where, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _refuse_non_json(v, "%s/%d" % (where, i))


def encode_body(value, encoding=None):
    """value as the bytes of a request body: compact JSON, or MessagePack
    with str as str, bytes as bin and every float as float64."""
    if (encoding or ENCODING) == "msgpack":
        return msgpack.packb(value, use_bin_type=True, use_single_float=False)
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def format_of(content_type):
    """"json", "msgpack" or None for a Content-Type (parameters ignored)."""
    base = content_type.split(";")[0].strip().lower()
    if base in ("application/msgpack", "application/problem+msgpack"):
        return "msgpack"
    if "json" in base:
        return "json"
    return None


def decode_body(raw, content_type):
    """A response body decoded strictly by its Content-Type."""
    if format_of(content_type) == "msgpack":
        return strict_msgpack(raw)
    return strict_json(raw)


def frame(payload):
    """One MessagePack stream frame around payload (the envelope's bytes)."""
    return bytes([FRAME_MARK]) + struct.pack(">I", len(payload)) + payload


def encode_message(message, encoding=None):
    """The bytes of one stream message: a line of JSON, or a frame."""
    if (encoding or ENCODING) == "msgpack":
        return frame(encode_body(message, "msgpack"))
    return json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n"


def decode_messages(data, encoding=None):
    """The whole stream messages at the start of data, decoded (a cut-off
    last one is left out): for reading replies off a raw socket."""
    out = []
    if (encoding or ENCODING) == "msgpack":
        while len(data) >= FRAME_PREFIX and data[0] == FRAME_MARK:
            n = struct.unpack(">I", data[1:FRAME_PREFIX])[0]
            if len(data) < FRAME_PREFIX + n:
                break
            out.append(strict_msgpack(data[FRAME_PREFIX:FRAME_PREFIX + n]))
            data = data[FRAME_PREFIX + n:]
        return out
    lines = data.split(b"\n")
    return [strict_json(line) for line in lines[:-1] if line.strip()]


def malformed_body(encoding=None):
    """A body cut off inside its first member, in encoding, and the slug
    of the problem it gets: a JSON object missing its value, or a
    MessagePack map of one member whose value is missing."""
    if (encoding or ENCODING) == "msgpack":
        return b"\x81\xa1a", "malformed-msgpack"
    return b'{"a":', "malformed-json"


def encoded_key(name, encoding=None):
    """The bytes that introduce the object member name in an answer: in
    JSON ',"name":' (a member after the first), in MessagePack the key as
    a fixstr. For comparing answers' bytes up to that member."""
    if (encoding or ENCODING) == "msgpack":
        return msgpack.packb(name, use_bin_type=True)
    return b',"%s":' % name.encode()


def json_only(reason):
    """Marks a test method or class as testing JSON text itself (malformed
    JSON, pretty printing, exact JSON bytes): in another encoding it is
    skipped, with reason, since there is no MessagePack twin of what it
    checks. A class is skipped before its setUpClass starts anything."""
    return _json_pass_only("JSON-only: ", reason)


def once(reason):
    """Marks a test method or class that picks each request's encoding
    itself (comparing the encodings, or sending hand-made MessagePack):
    it runs in the JSON pass only, since another pass would repeat it."""
    return _json_pass_only("one pass: ", reason)


def _json_pass_only(prefix, reason):
    if not reason:
        raise ValueError("say why the test runs in the JSON pass only")
    why = prefix + reason

    def mark(obj):
        if isinstance(obj, type):
            inner = obj.__dict__.get("setUpClass")

            def setUpClass(cls):
                if ENCODING != "json":
                    raise unittest.SkipTest(why)
                if inner is not None:
                    inner.__func__(cls)
                else:
                    super(obj, cls).setUpClass()

            obj.setUpClass = classmethod(setUpClass)
            obj.json_pass_only = why
            return obj

        @functools.wraps(obj)
        def test(self, *args, **kw):
            if ENCODING != "json":
                raise unittest.SkipTest(why)
            return obj(self, *args, **kw)

        test.json_pass_only = why
        return test

    return mark


class Response:
    """One HTTP response: status, lower-cased headers, raw body, and the
    decoded body (.json, also .value) when it is JSON or MessagePack.
    requested is the encoding the request asked its answer in."""

    def __init__(self, status, headers, raw, requested="json"):
        self.status = status
        self.headers = headers
        self.raw = raw
        self.requested = requested
        self.content_type = headers.get("content-type", "")
        self.format = format_of(self.content_type)
        self.json = None
        self.json_error = None
        if raw and self.format:
            try:
                self.json = decode_body(raw, self.content_type)
            except ValueError as e:
                self.json_error = str(e)

    @property
    def value(self):
        return self.json

    def describe(self):
        if self.format == "msgpack":
            if self.json_error is None and self.json is not None:
                body = "(decoded) " + json.dumps(self.json)[:600]
            else:
                body = "%s; bytes %s" % (self.json_error, self.raw[:200].hex())
        else:
            body = self.raw[:600].decode("utf-8", "replace")
        return "HTTP %d (%s) %s" % (self.status, self.content_type, body)


def wait_for_ports(proc, port_file, log_tail, timeout=START_TIMEOUT):
    """(http_port, stream_port) once the daemon started as proc has written
    its --port-file; RuntimeError with log_tail() when it exits first or
    writes nothing within timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("collisiond exited with status %d at start-up: %s" % (proc.returncode, log_tail()))
        try:
            with open(port_file) as f:
                text = f.read()
        except FileNotFoundError:
            text = ""
        if text.endswith("\n"):
            parts = text.split()
            return int(parts[0]), int(parts[1])
        time.sleep(0.01)
    raise RuntimeError("collisiond wrote no port file within %.0f s: %s" % (timeout, log_tail()))


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
        self._conn = None  # request_stream's connection, opened on first use
        self._sent = 0

    def start(self):
        argv = [DAEMON, "--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0",
                "--port-file", self.port_file, "--data-dir", "", "--threads", "2"] + self.flags
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self._log, env=self.env)
        try:
            self.http_port, self.stream_port = wait_for_ports(self.proc, self.port_file, self.log_tail)
        except RuntimeError:
            self.kill()
            raise
        return self

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
        if self._conn is not None:
            self._conn.close()
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

    def wait_for_log(self, pattern, timeout=LOG_TIMEOUT):
        """The first match of the regular expression pattern in the log,
        waited for: a line a thread other than the one that answered the
        test (the store's, a watchdog) writes comes when that thread runs,
        which a loaded host may delay past the answer. AssertionError with
        the log's tail after timeout seconds, or when the daemon exits
        without it."""
        deadline = time.monotonic() + timeout
        while True:
            exited = self.proc.poll() is not None  # before the read: its log is then whole
            found = re.search(pattern, self.log_text())
            if found:
                return found
            if exited or time.monotonic() > deadline:
                raise AssertionError("no log line matching %r within %.0f s; %s" % (pattern, timeout, self.log_tail()))
            time.sleep(0.01)

    # HTTP

    def request(self, method, path, body=None, data=None, headers=None, encoding=None):
        """One request on a fresh connection. body (a Python value) is
        encoded in encoding (default ENCODING), which the answer is asked
        in too; data is sent as is (bytes or str), as JSON unless headers
        say otherwise, and asks for nothing (a JSON-syntax test's bytes)."""
        enc = encoding or ENCODING
        hdrs = dict(headers or {})
        if data is None:
            if body is not None:
                data = encode_body(body, enc)
                hdrs.setdefault("Content-Type", MEDIA_TYPES[enc])
            if enc != "json":
                hdrs.setdefault("Accept", MEDIA_TYPES[enc])
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
            return Response(r.status, headers_, raw, _answer_format(hdrs))
        finally:
            conn.close()

    def request_stream(self, method, path, body=None, headers=None):
        """The same request as one envelope on this daemon's persistent
        stream connection (reopened when the server closed it), its reply
        as a Response: status, the reply's headers and request id as
        headers, the body encoded again in the run's encoding under the
        content type HTTP would give it."""
        if self._conn is None:
            self._conn = self.stream()
        self._sent += 1
        message = {"id": self._sent, "method": method, "path": path}
        if headers:
            message["headers"] = dict(headers)
        if body is not None:
            message["body"] = body
        self._conn.send(message)
        reply = self._conn.read_line()
        if reply is None or reply.get("id") != self._sent:
            self._conn.close()
            self._conn = None
            raise AssertionError("stream %s %s: reply %r" % (method, path, reply))
        return stream_response(reply, self._conn.last_raw, path)

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

    def stream(self, timeout=IO_TIMEOUT, encoding=None):
        return StreamClient(self.stream_port, timeout, encoding)

    def stream_msgpack(self, timeout=IO_TIMEOUT):
        return MsgpackStreamClient(self.stream_port, timeout)


def _json_body_text(line, body):
    """The bytes of a JSON reply line's body member, as the daemon wrote
    them (so that a test of number spelling, -0 say, reads them): the
    first "body" member, which must decode to body and end the line."""
    at = line.find(b'"body":')
    if at < 0:
        raise AssertionError("no body member in the reply line %r" % line[:200])
    text = line[at + 7:].decode("utf-8")
    value, end = json.JSONDecoder().raw_decode(text)
    if text[end:].strip() != "}" or value != body:
        raise AssertionError("the body is not the reply line's last member: %r" % line[:200])
    return text[:end].encode("utf-8")


def stream_response(reply, raw, path):
    """A stream reply envelope (raw: its line or envelope bytes) as the
    Response HTTP would have given: a JSON body's own bytes, a MessagePack
    body encoded again."""
    status, body = reply["status"], reply.get("body")
    headers = {k.lower(): v for k, v in (reply.get("headers") or {}).items()}
    if reply.get("request_id"):
        headers["x-request-id"] = reply["request_id"]
    if body is None:
        return Response(status, headers, b"", ENCODING)
    if isinstance(body, str) and status < 400:  # a body that is not JSON (/metrics), or JSON text in a frame
        json_text = path.split("?")[0] in JSON_ALWAYS
        headers["content-type"] = "application/json" if json_text else "text/plain"
        return Response(status, headers, body.encode("utf-8"), ENCODING)
    headers["content-type"] = (PROBLEM_TYPES if status >= 400 else MEDIA_TYPES)[ENCODING]
    body_bytes = _json_body_text(raw, body) if ENCODING == "json" else encode_body(body)
    return Response(status, headers, body_bytes, ENCODING)


def streamable(method, data, headers, encoding):
    """True when request_stream can carry this request as HTTP would."""
    return (TRANSPORT == "stream" and data is None and method != "HEAD" and encoding in (None, ENCODING)
            and all(k.lower() in STREAM_HEADERS for k in (headers or {})))


def _answer_format(headers):
    """The encoding a request's headers ask the answer in (an Accept of
    application/msgpack asks for MessagePack; the harness sends no
    q-values)."""
    accept = next((v for k, v in headers.items() if k.lower() == "accept"), "")
    return "msgpack" if MEDIA_TYPES["msgpack"] in accept else "json"


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
    """A connection to the stream listener: JSON lines, or in the
    msgpack encoding frames (FRAME_MARK, a 4-byte big-endian length, one
    MessagePack envelope), the first byte telling the server which."""

    def __init__(self, port, timeout, encoding=None):
        self.encoding = encoding or ENCODING
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""
        self.last_raw = None  # the bytes of the last reply read (a line, or an envelope)

    def send_raw(self, data):
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.sock.sendall(data)

    def encode(self, message):
        """The bytes of one message: a line of JSON, or a frame."""
        return encode_message(message, self.encoding)

    def send(self, *messages):
        """Sends every message as one write: a dict is encoded (a line, or
        a frame), bytes go as they are (a message encoded already); a str
        is a line of JSON text sent verbatim, which only a JSON connection
        can carry (such a test is @json_only)."""
        out = []
        for m in messages:
            if isinstance(m, str):
                if self.encoding != "json":
                    raise TypeError("a JSON text line on a %s stream: mark the test @json_only" % self.encoding)
                out.append(m.encode("utf-8") + b"\n")
            elif isinstance(m, bytes):
                out.append(m)
            else:
                out.append(self.encode(m))
        self.send_raw(b"".join(out))

    def padded(self, message, size):
        """message encoded with a header X-Pad (accepted and ignored) so
        that its line (without the newline) or its envelope (without the
        frame's prefix) is size bytes, or just under where MessagePack's
        string header grows."""
        overhead = FRAME_PREFIX if self.encoding == "msgpack" else 1

        def build(n):
            m = dict(message, headers=dict(message.get("headers", {}), **{"X-Pad": "p" * n}))
            return self.encode(m)

        n = max(0, size - (len(build(0)) - overhead))
        while n > 0 and len(build(n)) - overhead > size:
            n -= 1
        return build(n)

    def not_an_envelope(self):
        """A message the server refuses before it is a request (400, id
        null) and goes on reading after: a line that is not JSON, or a
        frame holding a string instead of an envelope map."""
        if self.encoding == "msgpack":
            return frame(encode_body("not an envelope", "msgpack"))
        return b"not json\n"

    def malformed(self):
        """A whole message whose envelope does not decode, and the slug of
        the problem it gets: a JSON object cut off, or a frame whose map
        lacks the value of its last member."""
        if self.encoding == "msgpack":
            env = b"\x82" + encode_body("id", "msgpack") + encode_body(3, "msgpack") + encode_body("method", "msgpack")
            return frame(env), "malformed-msgpack"
        return b'{"id": 3, "method": "GET"\n', "malformed-json"

    def send_value(self, value):
        """Sends any value (an array, a string, ...) as one whole message,
        well formed in the connection's encoding but maybe no envelope."""
        self.send_raw(self.encode(value))

    def send_oversized(self, size):
        """Sends one message of more than size bytes (an envelope with a
        long unknown member, refused for its length before it is read); a
        refusal that closes the connection while it is written is
        tolerated."""
        message = self.encode({"id": 1, "pad": "x" * size})
        try:
            self.send_raw(message)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def read_line(self):
        """The next reply decoded (a line, or a frame), or None at end of stream."""
        while True:
            got = self._take()
            if got is not None:
                return got
            b = self.sock.recv(65536)
            if not b:
                return None
            self.buf += b

    read_reply = read_line

    def _take(self):
        """The first whole reply in buf, decoded and removed, or None."""
        if self.encoding != "msgpack":
            if b"\n" not in self.buf:
                return None
            line, _, self.buf = self.buf.partition(b"\n")
            self.last_raw = line
            return strict_json(line)
        if not self.buf:
            return None
        if self.buf[0] != FRAME_MARK:
            raise ValueError("a reply frame starts with 0x%02x, not 0x%02x: %s"
                             % (self.buf[0], FRAME_MARK, self.buf[:40].hex()))
        if len(self.buf) < FRAME_PREFIX:
            return None
        n = struct.unpack(">I", self.buf[1:FRAME_PREFIX])[0]
        if len(self.buf) < FRAME_PREFIX + n:
            return None
        payload, self.buf = self.buf[FRAME_PREFIX:FRAME_PREFIX + n], self.buf[FRAME_PREFIX + n:]
        self.last_raw = payload
        return strict_msgpack(payload)

    def read_until_closed(self):
        """Reads every remaining reply until the server closes; returns
        (replies, closed) where closed is False on a read timeout."""
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
        if self.encoding == "msgpack":
            while self.buf:
                reply = self._take()
                if reply is None:
                    raise ValueError("the stream ended inside a frame: %s" % self.buf[:40].hex())
                lines.append(reply)
            return lines
        for line in self.buf.split(b"\n"):
            if line.strip():
                lines.append(strict_json(line))
        self.buf = b""
        return lines

    def close(self):
        self.sock.close()


def import_msgpack():
    """python3-msgpack, as mp.py found it."""
    return msgpack


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

    def req(self, method, path, body=None, data=None, headers=None, encoding=None):
        """The request on the run's transport (TRANSPORT) when it can go
        there, else over HTTP."""
        if streamable(method, data, headers, encoding):
            return self.daemon.request_stream(method, path, body, headers)
        return self.daemon.request(method, path, body, data=data, headers=headers, encoding=encoding)

    def ok(self, method, path, body=None, status=200, **kw):
        """Sends a request that must succeed with status; returns its
        decoded body (None for 204), which must be in the encoding asked."""
        r = self.req(method, path, body, **kw)
        self.assertEqual(r.status, status, "%s %s %s -> %s" % (method, path, _short(body), r.describe()))
        if status == 204:
            self.assertEqual(r.raw, b"", "204 must have no body")
            return None
        want = "json" if path.split("?")[0] in JSON_ALWAYS else r.requested
        self.assertTrue(r.content_type.startswith(MEDIA_TYPES[want]),
                        "%s %s: content type %r, asked for %s" % (method, path, r.content_type, r.requested))
        self.assertIsNone(r.json_error, r.json_error)
        return r.json

    def assertProblem(self, r, status, slug=None, pointer=None, context=""):
        """r is a problem response with status (and slug, and pointer; a
        pointer ending in "/*" also accepts a pointer inside that field),
        application/problem+json or +msgpack as the request asked."""
        what = "%s -> %s" % (context, r.describe())
        self.assertEqual(r.status, status, what)
        self.assertTrue(r.content_type.startswith(PROBLEM_TYPES[r.requested]),
                        "content type %r, asked for %s: %s" % (r.content_type, r.requested, what))
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
