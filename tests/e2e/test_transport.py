"""HTTP transport behaviour: keep-alive, large bodies, numbers that
round-trip exactly, concurrent clients, slow clients cut off."""

import http.client
import socket
import struct
import threading
import time

import harness
from harness import DaemonCase, decode_body, encode_body, json_only
from wire import body_item, pair, pose, posed, sphere


class Transport(DaemonCase):

    FLAGS = ("--timeout", "1")

    def test_keep_alive(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.daemon.http_port, timeout=10)
        try:
            media = harness.MEDIA_TYPES[harness.ENCODING]
            for i in range(20):
                body = encode_body(pair(posed(sphere(1)), posed(sphere(1), (3 + i, 0, 0))))
                conn.request("POST", "/v1/pair", body=body, headers={"Content-Type": media, "Accept": media})
                r = conn.getresponse()
                self.assertEqual(r.status, 200)
                raw = r.read()
                self.assertAlmostEqual(decode_body(raw, r.getheader("Content-Type", ""))["distance"], 1 + i,
                                       delta=1e-12)
            conn.request("GET", "/v1/nope")
            r = conn.getresponse()
            self.assertEqual(r.status, 404)
            r.read()
            conn.request("GET", "/healthz")
            self.assertEqual(conn.getresponse().status, 200, "an error must not break the connection")
        finally:
            conn.close()

    ROUND_TRIP = [0.1 + 0.2, 5e-324, 2.2250738585072014e-308, 123456789.12345679, -1e-7, 2.0 ** 53 + 2,
                  1.2345678901234567e49, -2.5, 1 / 3]

    def test_numbers_round_trip(self):
        values = self.ROUND_TRIP
        self.ok("PUT", "/v1/worlds/num", {}, status=201)
        for i in range(0, len(values), 3):
            position = values[i:i + 3]
            self.ok("PUT", "/v1/worlds/num/shapes/s%d" % i, {"shape": sphere(values[-1]), "pose": pose(position),
                                                             "velocity": position}, status=201)
            got = self.ok("GET", "/v1/worlds/num/shapes/s%d" % i)
            for want, g, v in zip(position, got["pose"]["position"], got["velocity"]):
                self.assertEqual(struct.pack("<d", float(g)), struct.pack("<d", want),
                                 "position %r came back as %r" % (want, g))
                self.assertEqual(struct.pack("<d", float(v)), struct.pack("<d", want))
            self.assertEqual(got["shape"]["radius"], values[-1])
        self.ok("DELETE", "/v1/worlds/num", status=204)

    @json_only("the shortest digits of a number in JSON text")
    def test_numbers_are_written_shortest(self):
        self.ok("PUT", "/v1/worlds/digits", {}, status=201)
        self.ok("PUT", "/v1/worlds/digits/shapes/s0", {"shape": sphere(1), "pose": pose(self.ROUND_TRIP[:3])},
                status=201)
        raw = self.daemon.request("GET", "/v1/worlds/digits/shapes/s0").raw
        self.assertIn(b"0.30000000000000004", raw)
        self.assertNotRegex(raw.decode(), r"\d{18,}", "more than 17 significant digits")
        self.ok("DELETE", "/v1/worlds/digits", status=204)

    def test_large_requests(self):
        n = 20000
        self.ok("PUT", "/v1/worlds/big", {"settings": {"skin": 0}, "shapes": [
            body_item("w%03d" % i, sphere(0.5), (i * 2.0, 0, 0)) for i in range(200)]}, status=201)
        rays = [{"origin": [(i % 200) * 2.0, 5, 0], "direction": [0, -1, 0]} for i in range(n)]
        hits = self.ok("POST", "/v1/worlds/big/raycast", {"rays": rays})["hits"]
        self.assertEqual(len(hits), n)
        for i in (0, 1, 777, n - 1):
            self.assertEqual(hits[i]["id"], "w%03d" % (i % 200))
            self.assertAlmostEqual(hits[i]["distance"], 4.5, delta=1e-12)
        m = n // 4
        pairs = [pair(posed(sphere(1)), posed(sphere(1), (2 + i * 1e-3, 0, 0))) for i in range(m)]
        results = self.ok("POST", "/v1/pairs", {"pairs": pairs})["results"]
        self.assertEqual(len(results), m)
        self.assertAlmostEqual(results[-1]["distance"], (m - 1) * 1e-3, delta=1e-9)

    def test_concurrent_clients(self):
        errors = []

        def client(k):
            try:
                name = "/v1/worlds/conc%d" % k
                r = self.daemon.request("PUT", name, {"skin": 0})
                assert r.status == 201, r.describe()
                for step in range(15):
                    r = self.daemon.request("POST", name + "/batch", {"upsert": [
                        body_item("a", sphere(1)), body_item("b", sphere(1), (1.5 + step * 0.01, 0, 0))]})
                    assert r.status == 200, r.describe()
                    r = self.daemon.request("POST", name + "/contacts", {})
                    assert r.status == 200, r.describe()
                    depth = r.json["pairs"][0]["depth"]
                    assert abs(depth - (0.5 - step * 0.01)) < 1e-12, (k, step, depth)
                    r = self.daemon.request("GET", "/v1/worlds")
                    assert r.status == 200, r.describe()
            except Exception as e:  # reported below, with the thread's context
                errors.append("client %d: %r" % (k, e))

        threads = [threading.Thread(target=client, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        self.assertEqual(errors, [])

    def test_slow_client_is_cut_off(self):
        s = socket.create_connection(("127.0.0.1", self.daemon.http_port), timeout=10)
        try:
            s.sendall(b"POST /v1/pair HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            started = time.monotonic()
            try:
                data = s.recv(65536)
                while data and not data.endswith(b"\r\n\r\n") and b"\r\n\r\n" not in data:
                    data += s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                data = b""
            took = time.monotonic() - started
            self.assertLess(took, 8, "a client sending nothing for --timeout 1 should be cut off")
        finally:
            s.close()
        self.assertEqual(self.daemon.request("GET", "/healthz").status, 200)
