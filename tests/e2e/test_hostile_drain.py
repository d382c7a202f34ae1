"""The drain does not wait for long queries (issue 25, item 3 with the
drain): on SIGTERM a query still computing stops at its next check of the
clock, as at --request-timeout, and is answered 503 "unavailable" with
Retry-After, so a supervisor's stop timeout (Kubernetes: 30 s, the same as
--request-timeout's default) is not spent waiting for it.

A raycast of seconds runs over HTTP and another over the stream when the
signal lands. Oracle: their statuses (both would be 200 after the whole
computation if the drain waited) and the daemon's exit status."""

import json
import signal
import socket
import time
import unittest

from harness import Daemon, once
from test_hostile_hol import http_request, read_response
from wire import body_item, box

SHAPES = 1000
RAYS = 35000  # seconds of one core: still running when the signal lands


@once("raw JSON requests on raw sockets; the drain does not depend on the encoding")
class DrainStopsQueries(unittest.TestCase):

    def test_long_queries_answer_503_on_sigterm(self):
        d = Daemon(("--request-timeout", "300"))
        self.addCleanup(d.cleanup)
        d.start()
        shapes = [body_item("b%04d" % i, box(1, 1, 1)) for i in range(SHAPES)]
        put = d.request("PUT", "/v1/worlds/w", {"settings": {"durability": "none"}, "shapes": shapes})
        self.assertEqual(put.status, 201, put.describe())
        rays = {"rays": [{"origin": [0, 10, 0.0001 * (i % 1000)], "direction": [0, -1, 0]} for i in range(RAYS)]}
        h = socket.create_connection(("127.0.0.1", d.http_port), timeout=60)
        h.sendall(http_request("POST", "/v1/worlds/w/raycast", json.dumps(rays).encode()))
        s = socket.create_connection(("127.0.0.1", d.stream_port), timeout=60)
        s.sendall(json.dumps({"id": "r", "method": "POST", "path": "/v1/worlds/w/raycast", "body": rays}).encode()
                  + b"\n")
        time.sleep(1.0)  # both read and under way (each computes for seconds)
        d.signal(signal.SIGTERM)
        status, body = read_response(h)
        self.assertEqual(status, 503, body[:300])
        self.assertIn("shutting down", json.loads(body)["detail"])
        data = b""
        while not data.endswith(b"\n"):
            more = s.recv(1 << 20)
            self.assertTrue(more, "the stream closed before its reply")
            data += more
        reply = json.loads(data)
        self.assertEqual((reply["id"], reply["status"]), ("r", 503), str(reply)[:300])
        self.assertEqual(reply["body"]["type"], "urn:collisiond:problem:unavailable")
        self.assertEqual(d.wait(20), 0, d.log_tail())
        h.close()
        s.close()
