"""Pre-auth budget squatting over the stream (issue 25, item 1;
test_hostile_budget is HTTP's). A stream request's token is inside its
line or frame, so it can be read only once the request has arrived, and
the bytes before that are held against --max-buffered. What bounds a
client that sends most of a line and then a byte every so often is the
pace: from --min-body-grace seconds after a request's first byte on, each
window of at least --min-body-grace seconds must bring --min-body-rate
bytes a second, however many came before, or the request is dropped and
its connection closed (docs/API.md, limits).

Oracles: whether the server closed a connection, the daemon's own gauge
of bytes held (collisiond_request_bytes_buffered) against what was sent,
and the status of an authorised request that needs the budget."""

import json
import socket
import struct
import time

from harness import DaemonCase, once
from test_hostile_budget import AUTH, MIB, TOKEN, buffered, closed_within, connect
from test_hostile_hol import http_request, read_response

SQUATTERS = 4
SQUAT_BYTES = 1900 * 1024  # of --max-buffered 8M: four of them hold nearly all of it
BIG_BODY = 2 * MIB         # an authorised body that needs the budget they held


def squat_line():
    """Most of a JSON line with no token: never ended."""
    return b'{"id":1,"method":"PUT","path":"/v1/worlds/x","body":{"pad":"' + b"x" * SQUAT_BYTES


def squat_frame():
    """Most of a MessagePack frame (its prefix declares a little more)."""
    return b"\xce" + struct.pack(">I", SQUAT_BYTES + 1000) + b"\x84" + b"\xa0" * SQUAT_BYTES


def read_line_reply(s):
    """The one JSON-lines reply s receives (the connection must not close first)."""
    data = b""
    while not data.endswith(b"\n"):
        more = s.recv(65536)
        assert more, "closed before the reply"
        data += more
    return json.loads(data)


@once("raw lines and frames on raw sockets: no body is decoded")
class StreamSquatting(DaemonCase):
    FLAGS = ("--token", TOKEN, "--max-buffered", "8M", "--min-body-rate", "1K", "--min-body-grace", "1")

    def big_put(self):
        body = json.dumps({"settings": {"durability": "none"}}).encode()
        body += b" " * (BIG_BODY - len(body))
        s = connect(self.daemon.http_port, timeout=20)
        s.sendall(http_request("PUT", "/v1/worlds/big", body, AUTH))
        status, answer = read_response(s)
        s.close()
        return status, answer

    def squat(self, payload):
        port = self.daemon.stream_port
        squatters = [connect(port) for _ in range(SQUATTERS)]
        for s in squatters:
            s.sendall(payload)
        time.sleep(0.3)
        held = buffered(self.daemon.http_port)
        self.assertGreater(held, SQUATTERS * SQUAT_BYTES * 0.9, "the partial requests are not held: no squat")
        # A byte every 0.25 s each: the timeout (30 s) never fires, the pace does.
        open_ = list(squatters)
        for _ in range(40):
            for s in list(open_):
                try:
                    s.sendall(b"x")
                except OSError:
                    open_.remove(s)
                    continue
                if closed_within(s, 0.25 / SQUATTERS):
                    open_.remove(s)
            if not open_:
                break
        for s in squatters:
            s.close()
        self.assertEqual(len(open_), 0, "%d of %d dripping stream connections were still open after 10 s"
                         % (len(open_), SQUATTERS))
        self.assertLess(buffered(self.daemon.http_port), MIB, "the closed squatters still hold their bytes")
        status, answer = self.big_put()
        self.assertIn(status, (201, 200), answer[:300])

    def test_dripping_lines_are_cut(self):
        self.squat(squat_line())

    def test_dripping_frames_are_cut(self):
        self.squat(squat_frame())

    def test_slow_but_honest_line_is_served(self):
        """12 KB at 4 KB a second: 3 s, past the grace and a window."""
        line = json.dumps({"id": "slow", "method": "PUT", "path": "/v1/worlds/slow",
                           "headers": {"Authorization": "Bearer " + TOKEN},
                           "body": {"settings": {"durability": "none"}}}).encode()
        line = line[:-1] + b" " * (12000 - len(line)) + b"}\n"
        s = connect(self.daemon.stream_port, timeout=20)
        for i in range(0, len(line), 400):
            s.sendall(line[i:i + 400])
            time.sleep(0.1)
        reply = read_line_reply(s)
        s.close()
        self.assertEqual((reply["id"], reply["status"]), ("slow", 201), str(reply)[:300])

    def test_line_typed_by_hand_is_served(self):
        """A short line a byte at a time (as typed into nc), 3 s for its
        60 bytes, far below the rate: it holds no budget (its first 4 KiB
        are not charged), so only --timeout bounds it."""
        line = b'{"id":"typed","method":"GET","path":"/healthz"}' + b" " * 12 + b"\n"
        s = connect(self.daemon.stream_port, timeout=20)
        for i in range(len(line)):
            s.sendall(line[i:i + 1])
            time.sleep(3.0 / len(line))
        reply = read_line_reply(s)
        s.close()
        self.assertEqual((reply["id"], reply["status"]), ("typed", 200), str(reply)[:300])
