"""Head-of-line blocking (issue 25, item 6): a long request holds a
handler thread, never the connections of others.

The daemon runs with --threads 2, so it has two connection threads; three
raycasts that each take seconds run at once on three connections (more
than there are connection threads, so before the handler pool every
connection thread was busy in one). Meanwhile, on eight other kept-alive
connections, /healthz and a small POST /v1/pair must each be answered,
and every long request must still be unanswered when they all are. The
oracle is the order of the answers on the wire, not a clock: a probe that
had to wait for a long request would arrive after it."""

import json
import random
import select
import socket
import threading

from harness import DaemonCase, _split_head, once
from wire import body_item, box, round_hull

SHAPES = 1000  # coincident boxes: no ray can skip one
RAYS = 35000   # each ray tests every box: about 4 s of one core per raycast here
LONG = 3
PROBE_CONNECTIONS = 8
PAIR_BODY = ('{"a":{"shape":{"type":"sphere","radius":1}},'
             '"b":{"shape":{"type":"sphere","radius":1},"pose":{"position":[1.5,0,0]}}}').encode()


def http_request(method, path, body=b"", headers=""):
    head = "%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n" % (
        method, path, len(body), headers)
    return head.encode() + body


def read_response(sock):
    """One response from a kept-alive socket: (status, body)."""
    data = b""
    while True:
        head, rest = _split_head(data)
        if head is not None:
            length = 0
            for line in head.split("\r\n")[1:]:
                k, _, v = line.partition(":")
                if k.strip().lower() == "content-length":
                    length = int(v.strip())
            while len(rest) < length:
                more = sock.recv(1 << 20)
                if not more:
                    raise AssertionError("closed mid-body")
                rest += more
            return int(head.split()[1]), rest[:length]
        more = sock.recv(65536)
        if not more:
            raise AssertionError("closed before an answer")
        data += more


def connect(port, timeout=120):
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def run_probes(probe, conns):
    """Runs probe(conn, results, i) on every connection at once; returns
    each one's result (True, or the exception that ended it)."""
    results = [None] * len(conns)
    threads = [threading.Thread(target=probe, args=(c, results, i)) for i, c in enumerate(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    return results


@once("raw JSON requests on raw sockets; the pool does not depend on the encoding")
class LongRequests(DaemonCase):
    FLAGS = ("--threads", "2")

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        shapes = [body_item("b%04d" % i, box(1, 1, 1)) for i in range(SHAPES)]
        s = connect(cls.daemon.http_port)
        body = json.dumps({"settings": {"durability": "none"}, "shapes": shapes}).encode()
        s.sendall(http_request("PUT", "/v1/worlds/hol", body))
        status, _ = read_response(s)
        s.close()
        assert status == 201, status
        rays = [{"origin": [0, 10, 0.0001 * (i % 1000)], "direction": [0, -1, 0]} for i in range(RAYS)]
        cls.raycast = http_request("POST", "/v1/worlds/hol/raycast", json.dumps({"rays": rays}).encode())

    def probe(self, sock, results, i):
        try:
            for _ in range(3):
                sock.sendall(http_request("GET", "/healthz"))
                status, _ = read_response(sock)
                assert status == 200, status
                sock.sendall(http_request("POST", "/v1/pair", PAIR_BODY))
                status, body = read_response(sock)
                assert status == 200, (status, body)
                assert json.loads(body)["overlap"] is True
            results[i] = True
        except Exception as e:  # noqa: BLE001 (reported by the main thread)
            results[i] = e

    def test_probes_pass_long_requests(self):
        port = self.daemon.http_port
        # Every probe connection is open and has been served once before the long requests start.
        probes = [connect(port, timeout=60) for _ in range(PROBE_CONNECTIONS)]
        for p in probes:
            p.sendall(http_request("GET", "/healthz"))
            self.assertEqual(read_response(p)[0], 200)
        longs = [connect(port) for _ in range(LONG)]
        for s in longs:
            s.sendall(self.raycast)
        for r in run_probes(self.probe, probes):
            self.assertIs(r, True, "a probe connection failed: %r" % (r,))
        ready, _, _ = select.select(longs, [], [], 0)
        self.assertEqual(ready, [], "a long raycast answered before the probes were done: it was not long")
        for s in longs:
            status, body = read_response(s)
            self.assertEqual(status, 200, body[:300])
            self.assertEqual(len(json.loads(body)["hits"]), RAYS)
            s.close()
        for p in probes:
            p.close()


@once("raw JSON requests on raw sockets; the lock does not depend on the encoding")
class ListsPassLongWrites(DaemonCase):
    """A contacts pass holds its world's lock exclusively for seconds (a
    pile of overlapping hulls); listing the worlds and scraping /metrics,
    which report every world's counts, must answer meanwhile: they read
    counts each change published, not the world under its lock."""
    HULLS = 400

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        rng = random.Random(6)
        shapes = [body_item("h%03d" % i, round_hull(rng, 128), [round(rng.uniform(-.2, .2), 6) for _ in range(3)])
                  for i in range(cls.HULLS)]
        s = connect(cls.daemon.http_port)
        s.sendall(http_request("PUT", "/v1/worlds/pile", json.dumps({"shapes": shapes}).encode()))
        status, body = read_response(s)
        s.close()
        assert status == 201, (status, body[:300])

    def test_list_and_scrape_pass_a_long_contacts(self):
        port = self.daemon.http_port
        probe = connect(port, timeout=60)
        long = connect(port)
        long.sendall(http_request("POST", "/v1/worlds/pile/contacts", b"{}"))
        for i in range(20):  # a second or two of lists and scrapes while it runs
            probe.sendall(http_request("GET", "/v1/worlds"))
            status, body = read_response(probe)
            self.assertEqual(status, 200, body[:300])
            worlds = {w["name"]: w for w in json.loads(body)["worlds"]}
            self.assertEqual(worlds["pile"]["shapes"], self.HULLS)
            probe.sendall(http_request("GET", "/metrics"))
            status, body = read_response(probe)
            self.assertEqual(status, 200, body[:300])
            self.assertIn(b'world="pile"', body)
            select.select([], [], [], 0.05)
        ready, _, _ = select.select([long], [], [], 0)
        self.assertEqual(ready, [], "the contacts answered before the lists were done: it was not long")
        status, body = read_response(long)
        self.assertEqual(status, 200, body[:300])
        self.assertEqual(len(json.loads(body)["pairs"]), self.HULLS * (self.HULLS - 1) // 2)
        long.close()
        probe.close()
