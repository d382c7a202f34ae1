"""HTTP/1.1 spoken by hand, for attacks that break its rules or must not
read all they provoke: one exchange on a fresh socket, reading until a
whole answer, the server's close, a time bound or a byte cap."""

import json
import socket
import time

READ_CHUNK = 65536


class Answer:
    """What one exchange got: status (None: no answer), lower-cased
    headers, the body (cut at the byte cap), whether the server closed,
    and the seconds until the first byte and until the end."""

    def __init__(self):
        self.status = None
        self.headers = {}
        self.body = b""
        self.closed = False
        self.first_byte = None
        self.elapsed = 0.0
        self.raw = b""


def head_of(data):
    """(status, headers, rest) of the first response head in data, or None."""
    i = data.find(b"\r\n\r\n")
    if i < 0:
        return None
    lines = data[:i].decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        status = -1
    return status, headers, data[i + 4:]


def request_bytes(method, path, body=None, headers=None, version="HTTP/1.1"):
    """A request's bytes; body (bytes, or a value sent as JSON) gets its
    Content-Length; headers is a list of (name, value), sent as given."""
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body, separators=(",", ":")).encode()
    lines = ["%s %s %s" % (method, path, version), "Host: x"]
    lines += ["%s: %s" % (k, v) for k, v in (headers or [])]
    if body is not None:
        lines += ["Content-Type: application/json", "Content-Length: %d" % len(body)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")


def exchange(port, payload, timeout, cap=1 << 20, status_only=False, head_only=False, wait_close=False):
    """Sends payload on a fresh connection and reads one answer: whole
    (by its Content-Length), or just its status line when status_only, or
    until cap bytes; head_only: an answer to HEAD, with no body;
    wait_close: then on until the server closes (or timeout)."""
    a = Answer()
    t0 = time.monotonic()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError:
        a.elapsed = time.monotonic() - t0
        return a
    try:
        s.settimeout(timeout)
        try:
            s.sendall(payload)
        except OSError:
            pass
        _read(s, a, t0, timeout, cap, status_only, head_only, wait_close)
    finally:
        s.close()
    a.elapsed = time.monotonic() - t0
    return a


def _read(s, a, t0, timeout, cap, status_only, head_only, wait_close):
    data = b""
    while time.monotonic() - t0 < timeout:
        try:
            b = s.recv(READ_CHUNK)
        except socket.timeout:
            break
        except OSError:
            a.closed = True
            break
        if not b:
            a.closed = True
            break
        if a.first_byte is None:
            a.first_byte = time.monotonic() - t0
        data += b
        if not wait_close and _done(a, data, cap, status_only, head_only):
            break
    a.raw = data[:cap]
    got = head_of(data)
    if got is not None:
        a.status, a.headers, a.body = got[0], got[1], got[2][:cap]
    elif data.startswith(b"HTTP/"):
        try:
            a.status = int(data.split(b" ", 2)[1])
        except (IndexError, ValueError):
            a.status = -1


def _done(a, data, cap, status_only, head_only):
    if status_only and b"\r\n" in data:
        return True
    got = head_of(data)
    if got is None:
        return len(data) >= cap
    status, headers, rest = got
    if status == 100:  # an interim answer: the caller decides
        return True
    if head_only:
        return True
    n = int(headers.get("content-length", "0") or 0)
    return len(rest) >= n or len(data) >= cap
