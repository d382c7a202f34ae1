"""The stream transport (API.md section 11), JSON lines or MessagePack
frames as the run's encoding says: pipelining, ids, bad messages, auth
through "headers", and the message limit."""

from harness import DaemonCase, check_problem_body, json_only
from wire import body_item, pair, posed, sphere

PAIR = pair(posed(sphere(1)), posed(sphere(1.5), (3, 0, 0)))


class Stream(DaemonCase):

    def setUp(self):
        self.s = self.daemon.stream()

    def tearDown(self):
        self.s.close()

    def roundtrip(self, message):
        self.s.send(message)
        reply = self.s.read_line()
        self.assertIsNotNone(reply, "the server closed the stream after %s" % message)
        return reply

    def assertReplyProblem(self, reply, status, id_, slug=None, pointer=None):
        self.assertEqual(reply.get("id"), id_, reply)
        self.assertEqual(reply.get("status"), status, reply)
        self.assertIsInstance(reply.get("body"), dict, reply)
        check_problem_body(self, reply["body"], status, slug, pointer, str(reply))

    def test_pipelined_requests_answered_in_order(self):
        msgs = [
            {"id": 1, "method": "PUT", "path": "/v1/worlds/arena", "body": {"skin": 0}},
            {"id": 2, "method": "POST", "path": "/v1/worlds/arena/batch", "body": {"upsert": [
                body_item("a", sphere(1)), body_item("b", sphere(1), (1.5, 0, 0))]}},
            {"id": 3, "method": "POST", "path": "/v1/worlds/arena/contacts", "body": {}},
            {"id": "four", "method": "GET", "path": "/v1/worlds/arena/shapes/b"},
            {"id": 5, "method": "DELETE", "path": "/v1/worlds/arena"},
            {"id": 6, "method": "GET", "path": "/v1/worlds/arena"},
        ]
        self.s.send(*msgs)
        replies = [self.s.read_line() for _ in msgs]
        self.assertEqual([r["id"] for r in replies], [1, 2, 3, "four", 5, 6])
        self.assertEqual([r["status"] for r in replies], [201, 200, 200, 200, 204, 404], replies)
        self.assertEqual([(p["a"], p["b"]) for p in replies[2]["body"]["pairs"]], [("a", "b")])
        self.assertEqual(replies[3]["body"]["id"], "b")
        self.assertIn(replies[4].get("body"), (None,), "a 204 reply has no body: %s" % replies[4])
        for r in replies[:5]:
            allow = r.get("headers", {}).get("Allow")
            if allow is not None:
                self.assertTrue({"GET", "PUT", "DELETE"} <= {m.strip() for m in allow.split(",")},
                                "a success reply with a wrong Allow: %s" % r)
        check_problem_body(self, replies[5]["body"], 404, "not-found", None)

    def test_many_pipelined_pairs(self):
        n = 200
        self.s.send(*[{"id": i, "method": "POST", "path": "/v1/pair", "body": PAIR} for i in range(n)])
        replies = [self.s.read_line() for _ in range(n)]
        self.assertEqual([r["id"] for r in replies], list(range(n)))
        http = self.daemon.request("POST", "/v1/pair", PAIR).json
        for r in replies:
            self.assertEqual(r["status"], 200, r)
            self.assertEqual(r["body"], http, "the stream and HTTP answers differ")

    def test_pipelined_batches_keep_order_and_effects(self):
        # The server answers pipelined lines in batches, a batch cut short
        # when it runs long (slow contacts queries here) and at every line
        # refused on the loop (the bad ones): whatever the cuts, each reply
        # must come in its line's place and see every mutation before it.
        # Rows of touching spheres (0.8 apart along x, 1 apart across).
        cells = [body_item("s%d" % i, sphere(0.45), (0.8 * (i % 15), i // 15 % 15, i // 225)) for i in range(2000)]
        self.assertEqual(self.roundtrip({"id": 0, "method": "PUT", "path": "/v1/worlds/w", "body": {"skin": 0}})
                         ["status"], 201)
        self.assertEqual(self.roundtrip({"id": 0, "method": "POST", "path": "/v1/worlds/w/batch",
                                         "body": {"upsert": cells}})["status"], 200)
        lines, expect = [], []
        for k in range(24):
            lines.append({"id": "up%d" % k, "method": "POST", "path": "/v1/worlds/w/batch",
                          "body": {"upsert": [body_item("m%d" % k, sphere(0.2), (100 + 3 * k, 0, 0))]}})
            expect.append(("up%d" % k, 200, 2001 + k))
            lines.append({"id": "c%d" % k, "method": "POST", "path": "/v1/worlds/w/contacts", "body": {}})
            expect.append(("c%d" % k, 200, None))
            lines.append({"id": "g%d" % k, "method": "GET", "path": "/v1/worlds/w"})
            expect.append(("g%d" % k, 200, 2001 + k))
            if k % 7 == 3:
                lines.append(self.s.not_an_envelope())
                expect.append((None, 400, None))
        self.s.send(*lines)
        replies = [self.s.read_line() for _ in lines]
        self.assertEqual([(r["id"], r["status"]) for r in replies], [(i, s) for i, s, _ in expect])
        for r, (_, _, shapes) in zip(replies, expect):
            if shapes is not None:
                self.assertEqual(r["body"]["shapes"], shapes, "a reply missed a mutation before it: %s" % r["id"])
        contacts = [r["body"]["pairs"] for r in replies if str(r["id"]).startswith("c")]
        self.assertEqual(len(contacts[0]), 14 * 133 + 4, "14 touching neighbours in each full row of 15")
        for pairs in contacts:
            self.assertEqual(pairs, contacts[0], "the spheres added far away touch nothing")

    @json_only("lines of JSON text that are no envelope (test_msgpack_hostile.py has the MessagePack cases)")
    def test_bad_lines_keep_the_connection(self):
        for line in ("this is not json", "[1, 2, 3]", '"text"', "42", '{"id": 1, "method": "GET"',
                     "{}", '{"method": "GET"}', '{"id": 3, "id": 4, "method": "GET", "path": "/healthz"}'):
            with self.subTest(line=line):
                reply = self.roundtrip(line)
                self.assertReplyProblem(reply, 400, None)
                ok = self.roundtrip({"id": 9, "method": "GET", "path": "/healthz"})
                self.assertEqual((ok["id"], ok["status"]), (9, 200), "the connection should stay usable")

    def test_envelope_errors_keep_the_id(self):
        reply = self.roundtrip({"id": 5, "method": "GET"})
        self.assertReplyProblem(reply, 400, 5)
        reply = self.roundtrip({"id": 6, "method": "GET", "path": "/healthz", "color": 1})
        self.assertReplyProblem(reply, 400, 6)
        reply = self.roundtrip({"id": 7, "method": 7, "path": "/healthz"})
        self.assertReplyProblem(reply, 400, 7)

    def test_handler_errors(self):
        bad = pair({"shape": {"type": "box", "half_extents": [1, -1, 1]}}, posed(sphere(1)))
        self.assertReplyProblem(self.roundtrip({"id": 1, "method": "POST", "path": "/v1/pair", "body": bad}), 400, 1,
                                "invalid-value", "/a/shape/half_extents/1")
        self.assertReplyProblem(self.roundtrip({"id": 2, "method": "GET", "path": "/v1/nope"}), 404, 2, "no-route")
        self.assertReplyProblem(self.roundtrip({"id": 3, "method": "DELETE", "path": "/v1/pair"}), 405, 3,
                                "method-not-allowed")
        self.assertReplyProblem(self.roundtrip({"id": 4, "method": "POST", "path": "/v1/pair"}), 400, 4)

    @json_only("blank lines and CRLF line ends are JSON-lines framing")
    def test_crlf_and_blank_lines(self):
        self.s.send_raw('\n\r\n{"id": 1, "method": "GET", "path": "/readyz"}\r\n')
        reply = self.s.read_line()
        self.assertEqual((reply["id"], reply["status"]), (1, 200), reply)

    def test_request_id_header(self):
        reply = self.roundtrip({"id": 1, "method": "GET", "path": "/healthz", "headers": {"X-Request-Id": "tick-77"}})
        self.assertEqual(reply["status"], 200)
        self.assertEqual(reply.get("request_id"), "tick-77", reply)
        reply = self.roundtrip({"id": 2, "method": "GET", "path": "/healthz"})
        self.assertRegex(reply.get("request_id", ""), r"^[A-Za-z0-9._:-]{1,64}$", "a generated id: %s" % reply)

    def test_split_writes(self):
        line = self.s.encode({"id": 11, "method": "POST", "path": "/v1/pair", "body": PAIR})
        for i in range(0, len(line), 7):
            self.s.send_raw(line[i:i + 7])
        reply = self.s.read_line()
        self.assertEqual((reply["id"], reply["status"]), (11, 200), reply)

    def test_abandoned_connection(self):
        other = self.daemon.stream()
        half = other.encode({"id": 1, "method": "POST", "path": "/v1/pair", "body": PAIR})
        other.send_raw(half[:len(half) // 2])
        other.close()
        other = self.daemon.stream()
        other.send(*[{"id": i, "method": "POST", "path": "/v1/pair", "body": PAIR} for i in range(50)])
        other.close()  # replies never read
        self.assertEqual(self.roundtrip({"id": 1, "method": "GET", "path": "/healthz"})["status"], 200)


class StreamAuth(DaemonCase):

    FLAGS = ("--token", "tok")

    def test_auth_through_headers(self):
        s = self.daemon.stream()
        try:
            s.send({"id": 1, "method": "GET", "path": "/v1/worlds"},
                   {"id": 2, "method": "GET", "path": "/v1/worlds", "headers": {"Authorization": "Bearer nope"}},
                   {"id": 3, "method": "GET", "path": "/v1/worlds", "headers": {"Authorization": "Bearer tok"}},
                   {"id": 4, "method": "GET", "path": "/healthz"},
                   {"id": 5, "method": "POST", "path": "/v1/pair", "body": PAIR})
            r = [s.read_line() for _ in range(5)]
            self.assertEqual([x["id"] for x in r], [1, 2, 3, 4, 5])
            self.assertEqual([x["status"] for x in r], [401, 401, 200, 200, 401], r)
            check_problem_body(self, r[0]["body"], 401, "unauthorized", None)
            self.assertEqual(r[2]["body"], {"worlds": []})
        finally:
            s.close()


class StreamLineLimit(DaemonCase):

    FLAGS = ("--max-body", "4096")

    def test_line_over_max_body_closes_the_connection(self):
        s = self.daemon.stream(timeout=5)
        try:
            s.send({"id": 1, "method": "GET", "path": "/healthz"})
            self.assertEqual(s.read_line()["status"], 200)
            s.send_oversized(5000)
            lines, closed = s.read_until_closed()
            self.assertTrue(closed, "the server should close a connection whose line passes --max-body")
            self.assertEqual(len(lines), 1, "expected one 413 reply before the close: %s" % lines)
            self.assertEqual((lines[0].get("id"), lines[0].get("status")), (None, 413), lines[0])
            check_problem_body(self, lines[0]["body"], 413, "body-too-large", None)
        finally:
            s.close()
        # a line that never ends is cut off as well
        s = self.daemon.stream(timeout=5)
        try:
            s.send_raw(s.encode({"id": 3, "pad": "x" * 10000})[:-10])
            _, closed = s.read_until_closed()
            self.assertTrue(closed, "a 10000-byte unfinished message with --max-body 4096 should be refused")
        finally:
            s.close()

    def test_line_under_max_body_is_served(self):
        s = self.daemon.stream()
        try:
            message = s.padded({"id": 1, "method": "POST", "path": "/v1/pair", "body": PAIR}, 4000)
            self.assertGreater(len(message), 3990)
            s.send(message)
            self.assertEqual(s.read_line()["status"], 200)
        finally:
            s.close()
        self.assertEqual(self.daemon.request("GET", "/healthz").status, 200)


class StreamUnbuildableReply(DaemonCase):
    """A reply the server cannot build (out of memory; forced here with the
    stream_reply failpoint on the third reply) ends the connection: the
    replies before it still arrive, its request ran, and no line after it
    runs."""

    ENV = {"COLLISIOND_FAILPOINT": "stream_reply:3"}

    def test_replies_before_it_arrive_and_nothing_after_it_runs(self):
        shape = {"shape": sphere(1)}
        msgs = [
            {"id": 1, "method": "PUT", "path": "/v1/worlds/u", "body": {}},
            {"id": 2, "method": "PUT", "path": "/v1/worlds/u/shapes/a", "body": shape},
            {"id": 3, "method": "PUT", "path": "/v1/worlds/u/shapes/b", "body": shape},
            {"id": 4, "method": "PUT", "path": "/v1/worlds/u/shapes/c", "body": shape},
            {"id": 5, "method": "GET", "path": "/healthz"},
        ]
        s = self.daemon.stream(timeout=10)
        try:
            s.send(*msgs)
            lines, closed = s.read_until_closed()
        finally:
            s.close()
        self.assertTrue(closed, "the connection should close after the reply that could not be built")
        self.assertEqual([(r.get("id"), r.get("status")) for r in lines], [(1, 201), (2, 201)], lines)
        self.assertEqual(self.req("GET", "/v1/worlds/u/shapes/a").status, 200)
        self.assertEqual(self.req("GET", "/v1/worlds/u/shapes/b").status, 200, "the request whose reply failed ran")
        self.assertEqual(self.req("GET", "/v1/worlds/u/shapes/c").status, 404, "a line after it ran")
        s = self.daemon.stream()
        try:
            s.send({"id": 6, "method": "GET", "path": "/healthz"})
            self.assertEqual(s.read_line()["status"], 200)
        finally:
            s.close()
