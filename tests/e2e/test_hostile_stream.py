"""Unread stream replies are bounded (issue 25, item 3): one connection
holds at most --max-stream-reply-buffered of replies it has not read, and
all stream connections together at most --max-stream-reply-total, each
passed by no more than the one reply of each connection whose requests
were running when it filled (docs/API.md section 11).

Hostile clients open several connections that pipeline a world's contacts
query, whose answer is about 1.5 MiB, and never read (a small receive
buffer keeps the kernel from taking the replies off the daemon's hands).
The oracles are independent of the daemon under test: a second daemon
without the limits gives each reply's bytes and body, the grid's
neighbours give the number of contact pairs analytically, and the daemon's
memory is read from /proc. While the hostile connections hold the total,
the reply gauge and the daemon's RSS must stay within the bound (far below
what the pipelines would hold unbounded), an HTTP pair query is answered,
and a well-behaved stream client is served its short answers (a probe, a
world's summary) and told 503 with Retry-After for the long one rather
than left waiting. Then every hostile reply must arrive, whole and in
order: the contacts answer itself, or a 503 for a request whose turn came
while its connection had nothing left to wait for.
"""

import os
import socket
import time

import harness
from held import send_buffer_max
from harness import Daemon, DaemonCase, decode_messages, encode_message, FRAME_PREFIX

TOKEN = "hostile-stream-token"
AUTH = {"Authorization": "Bearer " + TOKEN}
GRID = 60              # GRID x GRID spheres, radius 0.6, 1 apart: only the 4-neighbours touch
PAIRS = 2 * GRID * (GRID - 1)
# A grid whose contacts answer (over 5 MiB in either encoding) is more
# than a socket's send buffer can ever take (tcp_wmem's maximum, 4 MiB by
# default): a client that reads nothing never lets its write complete.
STUCK_GRID = 120
OWN = 1 << 20          # --max-stream-reply-buffered below
TOTAL = 8 << 20        # --max-stream-reply-total below
HOSTILE = 12           # connections that never read
PIPELINED = 16         # contacts requests each of them sends
SHORT = 64 << 10       # the longest answer a connection with nothing unwritten gets past the total (API.md)
SMALL_REPLY = SHORT + 1024  # that answer and its envelope, per connection, in the bound
RSS_SLACK = 32 << 20   # allocator and scratch (a worker building a reply) beyond the replies held
CONTACTS = {"method": "POST", "path": "/v1/worlds/w/contacts", "headers": AUTH, "body": {}}
# What the daemon logs before it closes a connection whose replies wait for --timeout.
STUCK_LINE = "took no reply bytes"
# Under AddressSanitizer freed memory waits in a quarantine (256 MiB) that
# RSS would count: keep none, so RSS measures what is held. Ignored by a
# build without it.
NO_QUARANTINE = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "")
                 + ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0"}


def build_world(daemon, grid=GRID):
    put = daemon.request("PUT", "/v1/worlds/w", {}, headers=AUTH)
    assert put.status == 201, put.describe()
    shapes = [{"id": "s%d" % (i * grid + j), "shape": {"type": "sphere", "radius": 0.6},
               "pose": {"position": [float(i), float(j), 0.0]}} for i in range(grid) for j in range(grid)]
    batch = daemon.request("POST", "/v1/worlds/w/batch", {"upsert": shapes}, headers=AUTH)
    assert batch.status == 200, batch.describe()


def read_raw_reply(sock, buf):
    """(one reply's raw bytes, the bytes after it) off a raw socket, in the
    run's encoding; None for the reply when the connection ends first."""
    while True:
        if harness.ENCODING == "msgpack" and len(buf) >= FRAME_PREFIX:
            n = FRAME_PREFIX + int.from_bytes(buf[1:FRAME_PREFIX], "big")
            if len(buf) >= n:
                return buf[:n], buf[n:]
        elif harness.ENCODING != "msgpack" and b"\n" in buf:
            n = buf.index(b"\n") + 1
            return buf[:n], buf[n:]
        more = sock.recv(1 << 20)
        if not more:
            return None, buf
        buf += more


def one_reply(daemon, message):
    """(raw bytes, decoded reply) of one request on a fresh stream connection."""
    s = socket.create_connection(("127.0.0.1", daemon.stream_port), timeout=30)
    try:
        s.sendall(encode_message(message))
        raw, _ = read_raw_reply(s, b"")
    finally:
        s.close()
    assert raw is not None, "the stream closed before its reply"
    return raw, decode_messages(raw)[0]



def gauge(daemon):
    text = daemon.request("GET", "/metrics", headers=AUTH).raw.decode()
    for line in text.splitlines():
        if line.startswith("collisiond_stream_reply_bytes_buffered "):
            return float(line.split()[1])
    raise AssertionError("no collisiond_stream_reply_bytes_buffered in /metrics")


def rss(daemon):
    with open("/proc/%d/status" % daemon.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for the daemon")


def hostile_connection(port):
    """A connection that pipelines PIPELINED contacts queries and reads
    nothing: its receive buffer, set before the handshake, keeps the
    kernel's share of the unread replies small."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(60)
    s.connect(("127.0.0.1", port))
    s.sendall(b"".join(encode_message(dict(CONTACTS, id=i)) for i in range(PIPELINED)))
    return s


class StreamReplyBounds(DaemonCase):

    # The test reads the hostile connections one after another, so the last
    # one takes no reply bytes until the others are read: tens of seconds on
    # a loaded host, past the default --timeout, which would close it
    # (StuckRepliesAreCutOff tests that). An hour is beyond any run.
    # RSS_SLACK counts the scratch of a few threads building replies: with
    # --workers 2 the handler pool has 3, as many as the stream's workers
    # were (--threads 2) before it shared the pool; the default
    # (--max-inflight + 1) lets every hostile connection build at once,
    # each in a malloc arena of its own.
    FLAGS = ("--token", TOKEN, "--max-stream-reply-buffered", "1M", "--max-stream-reply-total", "8M",
             "--timeout", "3600", "--workers", "2")
    ENV = NO_QUARANTINE

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.reference = Daemon(("--token", TOKEN))  # the default limits: nothing here comes near them
        cls.addClassCleanup(cls.reference.cleanup)
        cls.reference.start()
        build_world(cls.reference)
        build_world(cls.daemon)

    @classmethod
    def tearDownClass(cls):
        cls.reference.stop()
        super().tearDownClass()

    def wait_for(self, what, cond, seconds=20):
        deadline = time.monotonic() + seconds
        while not cond():
            if time.monotonic() > deadline:
                self.fail("%s: not within %d s; %s" % (what, seconds, self.daemon.log_tail()))
            time.sleep(0.05)

    def check_held(self, reply_len):
        """Samples the gauge and RSS while the hostile connections hold;
        returns the last gauge."""
        bound = TOTAL + (HOSTILE + 1) * reply_len + HOSTILE * SMALL_REPLY
        unbounded = HOSTILE * PIPELINED * reply_len
        self.wait_for("the hostile replies fill --max-stream-reply-total", lambda: gauge(self.daemon) >= TOTAL)
        for _ in range(20):
            held = gauge(self.daemon)
            self.assertLessEqual(held, bound, "reply bytes held past the total and one reply per connection")
            self.assertGreaterEqual(held, TOTAL, "unread replies were dropped or written nowhere")
            time.sleep(0.1)
        grown = rss(self.daemon) - self.baseline_rss
        self.assertLess(grown, bound + RSS_SLACK,
                        "RSS grew %d MiB for %d MiB of replies held" % (grown >> 20, bound >> 20))
        self.assertLess(grown, unbounded // 3, "RSS near what the unbounded pipelines would hold")
        return held

    def check_others_served(self, ref_body):
        """While the total is held: HTTP answers; a stream connection with
        nothing unwritten is sent short answers, and 503 for a long one."""
        pair = self.daemon.request("POST", "/v1/pair", {
            "a": {"shape": {"type": "sphere", "radius": 1}},
            "b": {"shape": {"type": "sphere", "radius": 1}, "pose": {"position": [3.0, 0.0, 0.0]}}}, headers=AUTH)
        self.assertEqual(pair.status, 200, pair.describe())
        self.assertAlmostEqual(pair.json["distance"], 1.0, places=9)  # centres 3 apart, radii 1 + 1
        self.assertFalse(pair.json["overlap"])
        _, probe = one_reply(self.daemon, {"id": "probe", "method": "GET", "path": "/healthz"})
        self.assertEqual((probe["id"], probe["status"]), ("probe", 200), probe)
        _, summary = one_reply(self.daemon, {"id": "sum", "method": "GET", "path": "/v1/worlds/w", "headers": AUTH})
        self.assertEqual((summary["id"], summary["status"]), ("sum", 200), summary)
        self.assertEqual(summary["body"]["shapes"], GRID * GRID)
        _, busy = one_reply(self.daemon, dict(CONTACTS, id="polite"))
        self.assertEqual((busy["id"], busy["status"]), ("polite", 503), busy)
        self.assertIn("Retry-After", busy.get("headers", {}), busy)
        self.assertIn("--max-stream-reply-total", busy["body"]["detail"], busy)

    def read_hostile(self, sock, ref_body):
        """Every reply of one hostile connection, checked; how many were answers."""
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        buf, answered = b"", 0
        for i in range(PIPELINED):
            raw, buf = read_raw_reply(sock, buf)
            self.assertIsNotNone(raw, "the connection closed before reply %d; %s" % (i, self.daemon.log_tail()))
            reply = decode_messages(raw)[0]
            self.assertEqual(reply["id"], i, "replies out of order")
            if reply["status"] == 200:
                self.assertEqual(reply["body"], ref_body, "reply %d differs from the reference daemon's" % i)
                answered += 1
            else:
                self.assertEqual(reply["status"], 503, reply)
                self.assertIn("Retry-After", reply.get("headers", {}), reply)
        sock.close()
        return answered

    def test_unread_replies_are_bounded_and_all_delivered(self):
        ref_raw, ref = one_reply(self.reference, dict(CONTACTS, id=0))
        self.assertEqual(ref["status"], 200, ref)
        self.assertEqual(len(ref["body"]["pairs"]), PAIRS, "the grid's neighbours, counted by hand")
        reply_len = len(ref_raw)
        self.assertGreater(reply_len, OWN, "a reply should be larger than one connection's allowance")
        _, warm = one_reply(self.daemon, dict(CONTACTS, id=0))
        self.assertEqual(warm["body"], ref["body"])
        self.wait_for("the warm-up reply is freed", lambda: gauge(self.daemon) == 0)
        self.baseline_rss = rss(self.daemon)

        socks = [hostile_connection(self.daemon.stream_port) for _ in range(HOSTILE)]
        try:
            held = self.check_held(reply_len)
            self.check_others_served(ref["body"])
            answered = sum(self.read_hostile(s, ref["body"]) for s in socks)
        finally:
            for s in socks:
                s.close()
        self.assertGreaterEqual(answered * reply_len, held - HOSTILE * SMALL_REPLY,
                                "fewer answers arrived than the gauge said were held")
        self.wait_for("every reply is freed", lambda: gauge(self.daemon) == 0)
        _, after = one_reply(self.daemon, dict(CONTACTS, id="polite"))
        self.assertEqual((after["id"], after["status"]), ("polite", 200), after)
        self.assertEqual(after["body"], ref["body"])


class StuckRepliesAreCutOff(DaemonCase):
    """Replies nobody takes hold the total only until --timeout: their
    connection is closed, the total freed, and a client that was refused
    while it was full is then answered.

    The stuck reply is larger than the kernel can take off the daemon's
    hands, so only the cut-off frees it: a smaller one may be taken whole
    by a send buffer grown meanwhile, emptying the total while it seemed
    full. The refusal can only be seen in the second before the cut-off,
    which a loaded host can let pass before the refused request runs. The
    daemon writes its "took no reply bytes" line before it closes the
    connection and frees the reply, so a 200 with no such line in the log
    read after it is a wrong answer, and a 200 after one is a missed
    window: the stuck client is then sent again."""

    FLAGS = ("--token", TOKEN, "--timeout", "1", "--max-stream-reply-buffered", "1M",
             "--max-stream-reply-total", "2M")
    ATTEMPTS = 10
    PAIRS = 2 * STUCK_GRID * (STUCK_GRID - 1)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        build_world(cls.daemon, STUCK_GRID)
        raw, reply = one_reply(cls.daemon, dict(CONTACTS, id=0))
        assert len(reply["body"]["pairs"]) == cls.PAIRS, "the grid's neighbours, counted by hand"
        assert len(raw) > send_buffer_max() + (1 << 20), \
            "a %d-byte reply fits a send buffer of up to %d bytes" % (len(raw), send_buffer_max())

    def cut(self):
        """How many stuck connections the daemon has said it closes."""
        return self.daemon.log_text().count(STUCK_LINE)

    def wait_full(self, cut_before, deadline):
        """True once the gauge shows the stuck reply fills the total, False
        when its connection was cut before it was seen full."""
        while self.cut() == cut_before:
            self.assertLess(time.monotonic(), deadline, "a stuck reply should fill 2 MiB")
            if gauge(self.daemon) >= 2 << 20:
                return True
            time.sleep(0.05)
        return False

    def refused(self, cut_before):
        """Whether a contacts query made while the total is full is refused
        (503); False for a 200 after the cut (the log is read after the
        answer: a cut that freed the total before the request ran has its
        line in it by then), a failure for any other answer."""
        _, busy = one_reply(self.daemon, dict(CONTACTS, id="polite"))
        if busy["status"] == 200 and self.cut() > cut_before:
            return False
        self.assertEqual((busy["id"], busy["status"]), ("polite", 503), busy)
        return True

    def check_cut_off(self, sock, deadline):
        """The stuck reply is freed and its connection closed."""
        while gauge(self.daemon) != 0:
            self.assertLess(time.monotonic(), deadline + 10, "a stuck reply still held past --timeout")
            time.sleep(0.1)
        got = b""
        try:
            while True:
                more = sock.recv(1 << 16)
                if not more:
                    break
                got += more
        except ConnectionResetError:
            pass
        self.assertLess(len(decode_messages(got)), PIPELINED, "a stuck connection should be closed")

    def refused_while_full(self):
        """A stuck connection fills the total and is cut off; True when a
        request made meanwhile was refused, False when the window passed
        first."""
        cut_before = self.cut()
        sock = hostile_connection(self.daemon.stream_port)
        try:
            deadline = time.monotonic() + 20
            refused = self.wait_full(cut_before, deadline) and self.refused(cut_before)
            self.check_cut_off(sock, deadline)
        finally:
            sock.close()
        return refused

    def test_timeout_frees_the_total(self):
        for _ in range(self.ATTEMPTS):
            if self.refused_while_full():
                break
        else:
            self.fail("--timeout cut the stuck connection before a request could run while it held the "
                      "total, %d times: %s" % (self.ATTEMPTS, self.daemon.log_tail()))
        self.assertIn(STUCK_LINE, self.daemon.log_text())
        _, after = one_reply(self.daemon, dict(CONTACTS, id="polite"))
        self.assertEqual((after["id"], after["status"]), ("polite", 200), after)
        self.assertEqual(len(after["body"]["pairs"]), self.PAIRS)
