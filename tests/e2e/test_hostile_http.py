"""Hostile HTTP framing and headers (issue 25, items 4, 7, 8, 11 and 12):
request smuggling (RFC 9112 section 6.3), escaped separators in a path,
HEAD, HTTP minor versions, a query of thousands of parameters, the bearer
token's blanks and a duplicated Authorization on both transports, and a
stream id past any integer type.

The oracle for smuggling is the wire itself: one request sent gets exactly
one answer, a 400, after which the server closes, and the request hidden
behind it (a DELETE of a world) never runs: the world is still there."""

import socket

from harness import DaemonCase, _split_head, json_only
from wire import ENDPOINTS, body_item, fill, pair, posed, sphere

TOKEN = "tok-25"
AUTH = {"Authorization": "Bearer " + TOKEN}
# Far longer than the read bound below: a server that waits for the
# connection to time out before it answers fails the test.
IDLE_TIMEOUT = 60
READ_BOUND = 20

PAIR_BODY = ('{"a":{"shape":{"type":"sphere","radius":1}},'
             '"b":{"shape":{"type":"sphere","radius":1},"pose":{"position":[3,0,0]}}}').encode()
HIDDEN = b"DELETE /v1/worlds/victim HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n\r\n"


def chunked(data):
    return b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data)


def responses(data, heads=0):
    """The responses in data, each (status line, headers, body), and what
    is left over; a body is framed by the Content-Length, but the first
    heads responses answer HEAD and have none."""
    out = []
    while True:
        head, rest = _split_head(data)
        if head is None:
            return out, data
        lines = head.split("\r\n")
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0")) if len(out) >= heads else 0
        if n > len(rest):
            return out, data
        out.append((lines[0], headers, rest[:n]))
        data = rest[n:]


def exchange(port, payload, bound=READ_BOUND, heads=0):
    """Sends payload on a fresh connection and reads until the server
    closes or bound seconds pass; returns (responses, closed)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=bound)
    data, closed = b"", False
    try:
        try:
            s.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass
        while True:
            try:
                b = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not b:
                closed = True
                break
            data += b
    finally:
        s.close()
    got, _ = responses(data, heads)
    return got, closed


class Smuggling(DaemonCase):
    """Item 4: every message whose body two parties could frame differently
    is answered 400 at once and the connection closed."""

    FLAGS = ("--token", TOKEN, "--timeout", str(IDLE_TIMEOUT))

    def setUp(self):
        if not self.exists():
            self.ok("PUT", "/v1/worlds/victim", {}, status=201, headers=AUTH)

    def exists(self):
        return self.req("GET", "/v1/worlds/victim", headers=AUTH).status == 200

    def head(self, *lines):
        return ("POST /v1/pair HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                "Content-Type: application/json\r\n%s\r\n" % (TOKEN, "".join(l + "\r\n" for l in lines))).encode()

    def cases(self):
        n = len(PAIR_BODY)
        return {
            "CL and TE": self.head("Content-Length: %d" % len(chunked(PAIR_BODY)), "Transfer-Encoding: chunked")
            + chunked(PAIR_BODY) + HIDDEN,
            "TE then CL": self.head("Transfer-Encoding: chunked", "Content-Length: 5") + chunked(PAIR_BODY) + HIDDEN,
            "two equal CL": self.head("Content-Length: %d" % n, "Content-Length: %d" % n) + PAIR_BODY + HIDDEN,
            "two different CL": self.head("Content-Length: %d" % n, "Content-Length: %d" % (n + len(HIDDEN)))
            + PAIR_BODY + HIDDEN,
            "space before the colon": self.head("Transfer-Encoding : chunked") + chunked(PAIR_BODY) + HIDDEN,
            "tab before the colon": self.head("Content-Length\t: %d" % n) + PAIR_BODY + HIDDEN,
            "TE gzip": self.head("Transfer-Encoding: gzip") + PAIR_BODY,
            "TE chunked, chunked": self.head("Transfer-Encoding: chunked, chunked") + chunked(PAIR_BODY),
            "TE gzip, chunked": self.head("Transfer-Encoding: gzip, chunked") + chunked(PAIR_BODY) + HIDDEN,
            "two TE chunked": self.head("Transfer-Encoding: chunked", "Transfer-Encoding: chunked")
            + chunked(PAIR_BODY) + HIDDEN,
            "TE identity": self.head("Transfer-Encoding: identity") + PAIR_BODY,
            "TE chunked and a blank": self.head("Transfer-Encoding: chunked ") + chunked(PAIR_BODY) + HIDDEN,
            "a name with a slash": self.head("X/Y: 1", "Content-Length: %d" % n) + PAIR_BODY + HIDDEN,
        }

    def test_ambiguous_framing_is_400_and_closes(self):
        for name, payload in self.cases().items():
            with self.subTest(case=name):
                got, closed = exchange(self.daemon.http_port, payload)
                self.assertEqual(len(got), 1, "%s: %d responses %s" % (name, len(got), [g[0] for g in got]))
                status_line, headers, body = got[0]
                self.assertIn(" 400 ", status_line, "%s: %s %r" % (name, status_line, body))
                self.assertTrue(headers.get("content-type", "").startswith("application/problem+json"), name)
                self.assertIn(b"invalid-value", body, name)
                self.assertEqual(headers.get("connection", "").lower(), "close", name)
                self.assertTrue(closed, "%s: the connection stayed open after the 400" % name)
                self.assertTrue(self.exists(), "%s: the hidden DELETE ran" % name)

    def test_single_framing_still_serves(self):
        """The refusals above are not all requests refused: one Content-Length,
        or one chunked, is served and the connection kept for the next."""
        n = len(PAIR_BODY)
        for name, payload in (("CL", self.head("Content-Length: %d" % n) + PAIR_BODY),
                              ("TE", self.head("Transfer-Encoding: Chunked") + chunked(PAIR_BODY))):
            with self.subTest(case=name):
                got, _ = exchange(self.daemon.http_port, payload + payload, bound=3)
                self.assertEqual([g[0].split()[1] for g in got], ["200", "200"], name)
                self.assertIn(b'"distance":1', got[1][2], name)


class Paths(DaemonCase):
    """Item 7: a %00 or %2F decodes inside one segment, which then breaks
    the id rule: 400, never the world or shape the bytes before it name."""

    def test_escaped_nul_and_slash_are_400(self):
        self.ok("PUT", "/v1/worlds/w", {"shapes": [body_item("a", sphere(1))]}, status=201)
        for path in ("/v1/worlds/w%00x", "/v1/worlds/w%00", "/v1/worlds/w%2fshapes%2fa",
                     "/v1/worlds/w%2Fshapes%2Fa", "/v1/worlds/w/shapes/a%00b", "/v1/worlds/w%2F/shapes/a"):
            with self.subTest(path=path):
                self.assertProblem(self.req("GET", path), 400, "invalid-value", context=path)
        self.assertEqual(self.req("GET", "/v1/worlds/w/shapes/a").status, 200)


class Head(DaemonCase):
    """Item 8: HEAD is answered wherever GET is, with GET's status and
    headers and no body."""

    FLAGS = ("--token", TOKEN)

    def test_head_mirrors_get(self):
        self.ok("PUT", "/v1/worlds/w", {"shapes": [body_item("s", sphere(1))]}, status=201, headers=AUTH)
        port = self.daemon.http_port
        for method, template, _ in ENDPOINTS:
            if method != "GET" or template.startswith("/metrics"):  # counters move between the two
                continue
            path = fill(template)
            with self.subTest(path=path):
                req = "%%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n" % (path, TOKEN)
                # HEAD then GET on one connection: a body after HEAD would be read as the GET's answer.
                got, _ = exchange(port, (req % "HEAD" + req % "GET" + "GET /nothing HTTP/1.1\r\nHost: x\r\n"
                                         "Connection: close\r\n\r\n").encode(), bound=5, heads=1)
                self.assertEqual(len(got), 3, [g[0] for g in got])
                (hs, hh, hb), (gs, gh, gb) = got[0], got[1]
                self.assertEqual(hs, gs)
                self.assertEqual(hb, b"")
                self.assertEqual(hh.get("content-type"), gh.get("content-type"))
                if "content-length" in hh:
                    self.assertEqual(int(hh["content-length"]), len(gb))

    def test_head_probe_without_token_and_allow(self):
        got, _ = exchange(self.daemon.http_port, b"HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                          heads=1)
        self.assertEqual(got[0][0].split()[1], "200")
        self.assertEqual(got[0][2], b"")
        r = self.req("POST", "/healthz", headers=AUTH)
        self.assertProblem(r, 405, "method-not-allowed")
        self.assertEqual(r.headers.get("allow"), "GET, HEAD")
        r = self.req("PATCH", "/v1/worlds/w", headers=AUTH)
        self.assertEqual(set(r.headers.get("allow").split(", ")), {"GET", "HEAD", "PUT", "DELETE"})
        r = self.req("HEAD", "/v1/pair", headers=AUTH)
        self.assertEqual((r.status, r.headers.get("allow")), (405, "POST"))

    def test_head_on_the_stream(self):
        s = self.daemon.stream()
        s.send({"id": 1, "method": "HEAD", "path": "/v1/worlds", "headers": AUTH},
               {"id": 2, "method": "GET", "path": "/v1/worlds", "headers": AUTH})
        head, get = s.read_line(), s.read_line()
        s.close()
        self.assertEqual((head["status"], get["status"]), (200, 200))
        self.assertIsNone(head.get("body"))
        self.assertIn("worlds", get["body"])


class Versions(DaemonCase):
    """Item 8: HTTP/1.9 is answered as HTTP/1.1, as RFC 9110 section 2.5
    asks of a server that implements 1.1 and gets a higher minor version
    (docs/API.md); HTTP/2.0 as plain text is 505."""

    def test_minor_and_major_versions(self):
        for version, status in (("HTTP/1.9", "200"), ("HTTP/1.2", "200"), ("HTTP/2.0", "505"), ("HTTP/0.9", "505")):
            with self.subTest(version=version):
                got, _ = exchange(self.daemon.http_port,
                                  ("GET /healthz %s\r\nHost: x\r\nConnection: close\r\n\r\n" % version).encode(), 5)
                self.assertEqual(len(got), 1)
                self.assertTrue(got[0][0].startswith("HTTP/1.1 " + status), got[0][0])


class LongQueries(DaemonCase):
    """Item 8: a query of thousands of parameters is answered (it filled
    libmicrohttpd's connection pool, and the 431 meant for it was never sent),
    and the query the handler reads is the one sent."""

    FLAGS = ("--timeout", str(IDLE_TIMEOUT))

    def test_thousands_of_parameters(self):
        for n, form in ((3000, "a"), (1500, "a%d=1"), (2000, "k%d")):
            query = "&".join(form % i if "%d" in form else form for i in range(n)) + "&pretty=1"
            with self.subTest(n=n, form=form):
                got, _ = exchange(self.daemon.http_port, ("GET /v1/worlds?%s HTTP/1.1\r\nHost: x\r\n"
                                                          "Connection: close\r\n\r\n" % query).encode())
                self.assertEqual(len(got), 1, "no answer to a query of %d parameters" % n)
                self.assertEqual(got[0][0].split()[1], "200", got[0])
                self.assertIn(b"\n", got[0][2], "pretty=1 at the end of the query was lost")

    def test_a_query_past_the_buffer_is_answered(self):
        query = "&".join("a%d=1" % i for i in range(3000))
        got, closed = exchange(self.daemon.http_port, ("GET /v1/worlds?%s HTTP/1.1\r\nHost: x\r\n\r\n"
                                                       % query).encode())
        self.assertEqual([g[0].split()[1] for g in got], ["414"])
        self.assertTrue(closed)


class Tokens(DaemonCase):
    """Item 11: the token is trimmed alike on both ends and on both
    transports, and a second Authorization is 400 on both."""

    FLAGS = ("--token", TOKEN)

    GOOD = ["Bearer " + TOKEN, "Bearer " + TOKEN + " ", "Bearer " + TOKEN + "\t", " Bearer " + TOKEN,
            "bearer  " + TOKEN + "  ", "Bearer\t" + TOKEN]
    BAD = ["Bearer " + TOKEN + "x", "Bearer " + TOKEN + " x", "Bearer" + TOKEN, "Bearer", "Bearer  ", TOKEN]

    def http_status(self, *values):
        head = "".join("Authorization: %s\r\n" % v for v in values)
        got, _ = exchange(self.daemon.http_port,
                          ("GET /v1/worlds HTTP/1.1\r\nHost: x\r\n%sConnection: close\r\n\r\n" % head).encode(), 5)
        return int(got[0][0].split()[1])

    def stream_status(self, headers):
        s = self.daemon.stream()
        try:
            s.send({"id": 1, "method": "GET", "path": "/v1/worlds", "headers": headers})
            return s.read_line()["status"]
        finally:
            s.close()

    def test_blanks_around_the_token(self):
        for value, want in [(v, 200) for v in self.GOOD] + [(v, 401) for v in self.BAD]:
            with self.subTest(value=value):
                self.assertEqual(self.http_status(value), want, "HTTP")
                self.assertEqual(self.stream_status({"Authorization": value}), want, "stream")

    def test_a_second_authorization_is_400(self):
        for first, second in (("Bearer " + TOKEN, "Bearer " + TOKEN), ("Bearer " + TOKEN, "Bearer wrong"),
                              ("Bearer wrong", "Bearer " + TOKEN)):
            with self.subTest(first=first, second=second):
                self.assertEqual(self.http_status(first, second), 400, "HTTP")
                self.assertEqual(self.stream_status({"Authorization": first, "authorization": second}), 400,
                                 "stream")


class StreamIds(DaemonCase):
    """Item 12: an id is echoed as the text sent, whatever its size."""

    @json_only("the text of a JSON number (a MessagePack integer has at most 64 bits)")
    def test_numbers_past_int64_and_double_echo(self):
        s = self.daemon.stream()
        try:
            for text in ("18446744073709551616", "-99999999999999999999999", "1e999", "-1.5E+400",
                         "123456789012345678901234567890.5"):
                with self.subTest(id=text):
                    s.send_raw(('{"id":%s,"method":"POST","path":"/v1/pair","body":%s}\n'
                                % (text, PAIR_BODY.decode())).encode())
                    while b"\n" not in s.buf:
                        s.buf += s.sock.recv(65536)
                    line, _, s.buf = s.buf.partition(b"\n")
                    self.assertTrue(line.startswith(('{"id":%s,"status":200,' % text).encode()), line)
                    self.assertIn(b'"distance":1', line)
            # the same number anywhere else is still refused, and what is
            # not a JSON number is no id
            for bad in ('{"id":1,"method":"POST","path":"/v1/pair","body":{"a":18446744073709551616}}',
                        '{"id":01,"method":"GET","path":"/healthz"}',
                        '{"id":18446744073709551616,"method":"GET","path":"/healthz","id":2}'):
                with self.subTest(line=bad):
                    s.send(bad)
                    reply = s.read_line()
                    self.assertEqual(reply["status"], 400, reply)
                    self.assertEqual(reply["body"]["type"], "urn:collisiond:problem:malformed-json", reply)
        finally:
            s.close()

    def test_pairs_still_answer(self):
        s = self.daemon.stream()
        s.send({"id": [1, {"x": None}], "method": "POST", "path": "/v1/pair",
                "body": pair(posed(sphere(1)), posed(sphere(1), (3, 0, 0)))})
        reply = s.read_line()
        s.close()
        self.assertEqual(reply["id"], [1, {"x": None}])
        self.assertEqual(reply["status"], 200)
