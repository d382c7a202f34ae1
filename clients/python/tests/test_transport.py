"""What happens when the connection fails: replies lost behind a proxy
(the reconnect rule: a lost mutation is OutcomeUnknown and never resent,
reads are sent once more), a server that stalls (timeouts), one that sends
garbage or cuts a reply short, and one that is not there."""
import os
import select
import socket
import subprocess
import sys
import threading
import unittest

from support import (HERE, Daemon, FakeServer, Proxy, encode_reply, free_port, msgpack, per_encoding,
                     read_requests)
import collisiond_client
from collisiond_client import (Client, ConnectError, ConnectionLost, InternalError, OutcomeUnknown, PayloadTooLarge,
                               ProblemError, ProtocolError, Unavailable, geometry as g)

D = None


def setUpModule():
    global D
    D = Daemon()


def tearDownModule():
    status = D.stop()
    if status != 0:
        raise AssertionError("collisiond exited with %s: %s" % (status, D.log_text()))


class Reconnect:
    ENCODING = None

    def setUp(self):
        self.proxy = Proxy(D.port)
        self.addCleanup(self.proxy.close)
        self.c = Client("127.0.0.1", self.proxy.port, encoding=self.ENCODING, timeout=10)
        self.addCleanup(self.c.close)
        self.direct = D.client(self.ENCODING)
        self.addCleanup(self.direct.close)
        self.w = "re-%s-%s" % (self.ENCODING, self._testMethodName)
        self.c.create_world(self.w)

    def sent(self, marker):
        """How many times the client's bytes carried marker (a shape id)."""
        return bytes(self.proxy.sent).count(marker.encode())

    def test_lost_mutation_is_unknown_and_not_resent(self):
        self.proxy.drop = 1
        with self.assertRaises(OutcomeUnknown) as e:
            self.c.put_shape(self.w, "late-put", g.sphere(1))
        self.assertFalse(e.exception.timed_out)
        self.assertFalse(self.c.connected)
        # It was applied (the reply, not the request, was lost): "unknown" is the truth.
        self.assertEqual(self.direct.get_shape(self.w, "late-put")["id"], "late-put")
        self.assertEqual(self.sent("late-put"), 1)
        # The next call opens a new connection.
        self.assertEqual(self.c.get_world(self.w)["shapes"], 1)
        self.assertEqual((self.c.reconnects, self.proxy.server.accepted), (1, 2))
        self.assertEqual(self.sent("late-put"), 1)

    def test_lost_read_is_sent_again(self):
        self.c.put_shape(self.w, "here", g.sphere(1))
        self.proxy.drop = 1
        self.assertEqual(self.c.get_shape(self.w, "here")["id"], "here")
        self.assertEqual((self.c.reconnects, self.sent("/shapes/here")), (1, 3))  # the put, the get twice

    def test_reads_are_sent_again_only_once(self):
        self.proxy.drop = 2
        with self.assertRaises(ConnectionLost) as e:
            self.c.get_world(self.w)
        self.assertNotIsInstance(e.exception, OutcomeUnknown)
        self.assertEqual(self.c.get_world(self.w)["name"], self.w)

    def test_without_retry_reads(self):
        c = Client("127.0.0.1", self.proxy.port, encoding=self.ENCODING, retry_reads=False)
        self.addCleanup(c.close)
        c.health()
        self.proxy.drop = 1
        with self.assertRaises(ConnectionLost):
            c.get_world(self.w)
        self.assertEqual(self.proxy.sent.count(b"/v1/worlds/" + self.w.encode()), 2)  # create + this one

    def test_pipeline_with_a_mutation_is_not_resent(self):
        # The tick's batch and queries are lost together: the batch is
        # unknown, the queries lost (they would read a world whose state is
        # unknown), and nothing is sent twice.
        self.proxy.drop = 1
        p = self.c.pipeline()
        batch = p.batch(self.w, upsert=[{"id": "tick-box", "shape": g.sphere(1)}])
        contacts = p.contacts(self.w)
        rays = p.raycast(self.w, [g.ray((0, 5, 0), (0, -1, 0))])
        with self.assertRaises(OutcomeUnknown):
            p.execute()
        self.assertIsInstance(batch.error, OutcomeUnknown)
        for r in (contacts, rays):
            self.assertIsInstance(r.error, ConnectionLost)
            self.assertNotIsInstance(r.error, OutcomeUnknown)
        self.assertEqual(self.sent("tick-box"), 1)
        self.assertEqual(self.sent("/contacts"), 1)

    def test_daemon_gone(self):
        d = Daemon()
        c = d.client(self.ENCODING)
        c.health()
        self.assertEqual(d.stop(), 0)
        # The daemon closed the idle connection: the next call finds it
        # closed before writing, and cannot open another.
        with self.assertRaises(ConnectError):
            c.put_shape(self.w, "x", g.sphere(1))


class Faults:
    """Fake servers, so the bytes that come back are exactly the test's."""
    ENCODING = None

    def serve(self, handler):
        s = FakeServer(handler)
        self.addCleanup(s.close)
        c = Client("127.0.0.1", s.port, encoding=self.ENCODING, timeout=0.5)
        self.addCleanup(c.close)
        return c

    def answering(self, replies_for):
        """A server that answers each batch of requests read with
        replies_for(requests) (bytes), then closes when that is None."""
        enc = self.ENCODING

        def handler(conn):
            buf = bytearray()
            while True:
                reqs = read_requests(conn, enc, buf)
                if not reqs:
                    return
                out = replies_for(reqs)
                if out is None:
                    conn.close()
                    return
                conn.sendall(out)
        return self.serve(handler)

    def ok(self, req):
        return encode_reply({"id": req["id"], "status": 200, "request_id": "r", "body": {"status": "ok"}},
                            self.ENCODING)

    def test_shed_request_answered_with_null_id(self):
        # API.md: a request over --max-buffered is answered in its place
        # with id null and a 503; the connection stays usable, and the
        # replies around it are the right ones.
        def replies(reqs):
            out = []
            for k, req in enumerate(reqs):
                if k == 1:
                    out.append(encode_reply({"id": None, "status": 503, "body": {
                        "type": "urn:collisiond:problem:unavailable", "title": "Service Unavailable",
                        "status": 503, "detail": "over --max-buffered"}}, self.ENCODING))
                else:
                    out.append(self.ok(req))
            return b"".join(out)
        c = self.answering(replies)
        p = c.pipeline()
        p.health(), p.delete_world("w"), p.health()
        got = p.execute(raise_errors=False)
        self.assertEqual(got[0], {"status": "ok"})
        self.assertIsInstance(got[1], Unavailable)
        self.assertNotIsInstance(got[1], OutcomeUnknown)
        self.assertEqual(got[2], {"status": "ok"})
        self.assertEqual(c.health(), {"status": "ok"})

    def test_stalling_server_times_out(self):
        stop = threading.Event()
        self.addCleanup(stop.set)
        c = self.serve(lambda conn: stop.wait(10))
        with self.assertRaises(ConnectionLost) as e:
            c.health()
        self.assertTrue(e.exception.timed_out)
        self.assertNotIsInstance(e.exception, OutcomeUnknown)
        with self.assertRaises(OutcomeUnknown) as e:
            c.delete_world("w")
        self.assertTrue(e.exception.timed_out)

    def test_garbage_instead_of_a_reply(self):
        junk = b"HTTP/1.1 400 Bad Request\r\n\r\n" if self.ENCODING == "msgpack" else b"<html>oops</html>\n"
        c = self.answering(lambda reqs: junk)
        with self.assertRaises(ConnectionLost) as e:
            c.health()
        self.assertIsInstance(e.exception.__cause__, ProtocolError)
        self.assertFalse(c.connected)

    def test_reply_cut_short(self):
        full, enc = self.ok({"id": 1}), self.ENCODING

        def handler(conn):
            read_requests(conn, enc, bytearray())
            conn.sendall(full[:len(full) // 2])
            conn.close()
        c = self.serve(handler)
        with self.assertRaises(ConnectionLost) as e:
            c.health()
        self.assertIn("inside a reply", e.exception.reason)

    def test_reply_for_another_request(self):
        c = self.answering(lambda reqs: self.ok({"id": reqs[0]["id"] + 7}))
        with self.assertRaises(ConnectionLost) as e:
            c.health()
        self.assertIsInstance(e.exception.__cause__, ProtocolError)

    def test_not_an_envelope(self):
        if self.ENCODING == "msgpack":
            payload = msgpack.packb([1, 2, 3])
            junk = b"\xce" + len(payload).to_bytes(4, "big") + payload
        else:
            junk = b"[1, 2, 3]\n"
        c = self.answering(lambda reqs: junk)
        with self.assertRaises(ConnectionLost) as e:
            c.health()
        self.assertIsInstance(e.exception.__cause__, ProtocolError)

    def test_answered_prefix_is_kept(self):
        # Answers the first request of each connection, then closes: in
        # [read, mutation, read] the first is answered, the mutation is
        # unknown and the read after it is lost, not resent past it.
        enc = self.ENCODING

        def handler(conn):
            conn.sendall(self.ok(read_requests(conn, enc, bytearray())[0]))
            conn.shutdown(socket.SHUT_RDWR)
            conn.close()
        server = FakeServer(handler)
        self.addCleanup(server.close)
        c = Client("127.0.0.1", server.port, encoding=enc, timeout=10)
        self.addCleanup(c.close)
        p = c.pipeline()
        first = p.health()
        p.delete_world("w")
        p.health()
        out = p.execute(raise_errors=False)
        self.assertEqual(first.result(), {"status": "ok"})
        self.assertIsInstance(out[1], OutcomeUnknown)
        self.assertIsInstance(out[2], ConnectionLost)
        self.assertNotIsInstance(out[2], OutcomeUnknown)
        self.assertFalse(out[1].timed_out or out[2].timed_out)
        self.assertEqual(server.accepted, 1)  # nothing was sent again

    def test_replies_a_byte_at_a_time(self):
        # Two replies, dribbled: each is cut out whole, in order.
        enc = self.ENCODING

        def handler(conn):
            buf = bytearray()
            while True:
                reqs = read_requests(conn, enc, buf)
                if not reqs:
                    return
                out = b"".join(encode_reply({"id": r["id"], "status": 200, "request_id": "r",
                                             "body": {"n": r["id"], "pad": "x" * 300}}, enc) for r in reqs)
                for k in range(len(out)):
                    conn.sendall(out[k:k + 1])
        c = self.serve(handler)
        c.timeout = 10
        p = c.pipeline()
        p.health()
        p.health()
        self.assertEqual([r["n"] for r in p.execute()], [1, 2])

    def test_idle_connection_closed_by_the_server(self):
        # The server answers one request per connection and closes it, as
        # the daemon closes a quiet one: the next call notices before it
        # writes, so even a mutation goes out whole on a new connection.
        closed = threading.Event()
        enc = self.ENCODING

        def handler(conn):
            reqs = read_requests(conn, enc, bytearray())
            conn.sendall(b"".join(self.ok(r) for r in reqs))
            conn.shutdown(socket.SHUT_RDWR)
            conn.close()
            closed.set()
        c = self.serve(handler)
        self.assertEqual(c.health(), {"status": "ok"})
        self.assertTrue(closed.wait(10))
        # Until the client's side has seen the server's FIN (no clock involved).
        select.select([c._sock], [], [], 10)
        self.assertEqual(c.delete_world("w"), {"status": "ok"})
        self.assertEqual(c.reconnects, 1)

    def test_statuses_map_to_their_classes(self):
        # Replies the daemon gives rarely (503 with Retry-After, 500) or
        # never (418), each mapped by status, the problem's members kept.
        table = [(503, {"Retry-After": "2"}, Unavailable), (500, None, InternalError),
                 (413, None, PayloadTooLarge), (418, None, ProblemError)]

        def replies(reqs):
            out = []
            for r, (status, headers, _) in zip(reqs, table):
                env = {"id": r["id"], "status": status, "request_id": "rid-%d" % r["id"],
                       "body": {"type": "urn:collisiond:problem:slug-%d" % status, "title": "T", "status": status,
                                "detail": "d%d" % status}}
                if headers:
                    env["headers"] = headers
                out.append(encode_reply(env, self.ENCODING))
            return b"".join(out)
        c = self.answering(replies)
        p = c.pipeline()
        for _ in table:
            p.health()
        got = p.execute(raise_errors=False)
        for e, (status, _, cls) in zip(got, table):
            self.assertIs(type(e), cls)
            self.assertEqual((e.status, e.slug, e.detail, e.pointer), (status, "slug-%d" % status, "d%d" % status, None))
        self.assertEqual((got[0].retry_after, got[1].request_id), (2.0, "rid-2"))

    def test_nothing_listening(self):
        c = Client("127.0.0.1", free_port(), encoding=self.ENCODING, connect_timeout=2)
        with self.assertRaises(ConnectError):
            c.health()


per_encoding(globals(), Reconnect, Faults)


class WithoutMsgpack(unittest.TestCase):
    def test_auto_falls_back_to_json_lines(self):
        # A fresh interpreter where `import msgpack` fails: the module loads,
        # "auto" is JSON lines, and a call goes through.
        code = ("import sys; sys.modules['msgpack'] = None; sys.path.insert(0, %r)\n"
                "import collisiond_client as cc\n"
                "c = cc.Client('127.0.0.1', %d)\n"
                "assert not cc.have_msgpack() and c.encoding == 'json', c.encoding\n"
                "print(c.health()['status'])\n"
                "try:\n    cc.Client(encoding='msgpack')\nexcept RuntimeError as e:\n    print('refused')\n"
                % (os.path.dirname(HERE), D.port))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
        self.assertEqual((out.returncode, out.stdout.split()), (0, ["ok", "refused"]), out.stderr)

    def test_msgpack_is_the_default_when_present(self):
        c = collisiond_client.Client("127.0.0.1", D.port)
        self.assertEqual(c.encoding, "msgpack" if collisiond_client.have_msgpack() else "json")
