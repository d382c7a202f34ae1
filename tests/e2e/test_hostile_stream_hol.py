"""Head-of-line blocking on the stream (issue 25, item 6; test_hostile_hol
is HTTP's): a long stream request holds a thread of the stream's handler
pool, never the stream connections of others.

The daemon runs with --threads 2, the size libuv's pool had when the
stream ran its requests there. Three raycasts that each take seconds run
at once on three stream connections (more than there were threads, so
before the handler pool every thread was busy in one and the rest
waited). Meanwhile, on eight other stream connections, /healthz and a
small /v1/pair must each be answered, and every long request must still
be unanswered when they all are. The oracle is the order of the answers
on the wire, not a clock: a probe that had to wait for a long request
would arrive after it."""

import json
import select
import socket

from harness import DaemonCase, once
from test_hostile_hol import run_probes
from wire import body_item, box

SHAPES = 1000  # coincident boxes: no ray can skip one
RAYS = 35000   # each ray tests every box: seconds of one core per raycast
LONG = 3
PROBE_CONNECTIONS = 8
PAIR = {"a": {"shape": {"type": "sphere", "radius": 1}},
        "b": {"shape": {"type": "sphere", "radius": 1}, "pose": {"position": [1.5, 0, 0]}}}


class Line:
    """A raw JSON-lines stream connection."""

    def __init__(self, port, timeout=120):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def send(self, message):
        self.sock.sendall(json.dumps(message).encode() + b"\n")

    def reply(self):
        while b"\n" not in self.buf:
            more = self.sock.recv(1 << 20)
            if not more:
                raise AssertionError("closed before a reply")
            self.buf += more
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)

    def close(self):
        self.sock.close()


@once("raw JSON lines on raw sockets; the pool does not depend on the encoding")
class LongStreamRequests(DaemonCase):
    FLAGS = ("--threads", "2")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        shapes = [body_item("b%04d" % i, box(1, 1, 1)) for i in range(SHAPES)]
        put = cls.daemon.request("PUT", "/v1/worlds/hol", {"settings": {"durability": "none"}, "shapes": shapes})
        assert put.status == 201, put.describe()
        cls.rays = [{"origin": [0, 10, 0.0001 * (i % 1000)], "direction": [0, -1, 0]} for i in range(RAYS)]

    def probe(self, conn, results, i):
        try:
            for k in range(3):
                conn.send({"id": "h%d" % k, "method": "GET", "path": "/healthz"})
                r = conn.reply()
                assert (r["id"], r["status"]) == ("h%d" % k, 200), r
                conn.send({"id": "p%d" % k, "method": "POST", "path": "/v1/pair", "body": PAIR})
                r = conn.reply()
                assert (r["id"], r["status"]) == ("p%d" % k, 200), r
                assert r["body"]["overlap"] is True, r
            results[i] = True
        except Exception as e:  # noqa: BLE001 (reported by the main thread)
            results[i] = e

    def test_probes_pass_long_stream_requests(self):
        port = self.daemon.stream_port
        # Every probe connection is open and has been served once before the long requests start.
        probes = [Line(port, timeout=60) for _ in range(PROBE_CONNECTIONS)]
        for p in probes:
            p.send({"id": 0, "method": "GET", "path": "/healthz"})
            self.assertEqual(p.reply()["status"], 200)
        longs = [Line(port) for _ in range(LONG)]
        for i, s in enumerate(longs):
            s.send({"id": "long%d" % i, "method": "POST", "path": "/v1/worlds/hol/raycast", "body": {"rays": self.rays}})
        for r in run_probes(self.probe, probes):
            self.assertIs(r, True, "a probe connection failed: %r" % (r,))
        ready, _, _ = select.select([s.sock for s in longs], [], [], 0)
        self.assertEqual(ready, [], "a long raycast answered before the probes were done: the probes waited for it"
                         " (or it was not long)")
        for i, s in enumerate(longs):
            r = s.reply()
            self.assertEqual((r["id"], r["status"]), ("long%d" % i, 200), str(r)[:300])
            self.assertEqual(len(r["body"]["hits"]), RAYS)
            s.close()
        for p in probes:
            p.close()
