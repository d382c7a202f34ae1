"""The authorised clients the soak protects: a steady mix of cheap
requests over HTTP keep-alive connections, fresh connections (as a load
balancer's probe makes them) and stream connections in both encodings.
Every answer is checked against an analytic oracle, never against what
the daemon said before (every victim connects from 127.0.0.2, the
attackers from 127.0.0.1, so a limit per address tells them apart, as
it would tell a fleet from an attacker); one client of each transport
also sends a body of 200 KB every round, which a squatted --max-buffered
would shed. Two unit spheres d apart are d - 2 apart; after
moving b to x = d, contacts holds the one pair (a, b) of depth 2 - d
exactly when d < 2; the box stored at setup reads back as it was put."""

import http.client
import json
import random
import socket
import threading
import time

from harness import StreamClient
from record import Clock

# The victims' source address; the attackers use 127.0.0.1.
SOURCE = ("127.0.0.2", 0)
TOL = 1e-9
IO_TIMEOUT = 5.0
PAUSE = 0.1       # between one client's requests
PROBE_EVERY = 0.25
LARGE = 200 << 10  # the body one victim of each transport also sends, every round
BOX = {"type": "box", "half_extents": [0.5, 0.25, 1.0]}
BOX_AT = [10.0, 5.0, -3.0]
# HTTP clients on separate keep-alive connections (libmicrohttpd spreads
# connections over its threads), then one stream client per encoding.
KINDS = (("http", 2), ("stream-json", 1), ("stream-msgpack", 1))


def sphere(r):
    return {"type": "sphere", "radius": r}


def world_body():
    """A victim's world: spheres a and b 3 apart, a box far from both."""
    return {"settings": {}, "shapes": [
        {"id": "a", "shape": sphere(1), "pose": {"position": [0.0, 0.0, 0.0]}},
        {"id": "b", "shape": sphere(1), "pose": {"position": [3.0, 0.0, 0.0]}},
        {"id": "s", "shape": BOX, "pose": {"position": BOX_AT}}]}


def close(got, want):
    return isinstance(got, (int, float)) and abs(got - want) <= TOL


def check_pair(body, d):
    """Unit spheres d apart: separated by d - 2, or d < 2 and 2 - d deep."""
    if not isinstance(body, dict):
        return "pair at %.6f: got %r" % (d, body)
    want = (d < 2, max(0.0, d - 2), max(0.0, 2 - d))
    got = (body.get("overlap"), body.get("distance"), body.get("depth"))
    if got[0] is not want[0] or not close(got[1], want[1]) or not close(got[2], want[2]):
        return "pair at %.6f: want (overlap, distance, depth) %s, got %s" % (d, want, json.dumps(body)[:200])
    return None


def check_pairs(body, ds):
    """POST /v1/pairs of unit spheres ds apart: each result as check_pair."""
    results = body.get("results") if isinstance(body, dict) else None
    if not isinstance(results, list) or len(results) != len(ds):
        return "pairs: want %d results, got %s" % (len(ds), json.dumps(body)[:200])
    for got, d in zip(results, ds):
        problem = check_pair(got, d)
        if problem:
            return problem
    return None


def check_batch(body):
    want = {"upserted": 0, "moved": 1, "removed": 0, "shapes": 3}
    return None if body == want else "batch: want %s, got %s" % (want, json.dumps(body)[:200])


def check_contacts(body, d):
    pairs = body.get("pairs") if isinstance(body, dict) else None
    if d > 2:
        return None if pairs == [] else "contacts at %.6f: want none, got %s" % (d, json.dumps(body)[:200])
    ok = (isinstance(pairs, list) and len(pairs) == 1 and pairs[0].get("a") == "a" and pairs[0].get("b") == "b"
          and close(pairs[0].get("depth"), 2 - d) and all(close(g, w) for g, w in zip(pairs[0].get("normal", []),
                                                                                      (1, 0, 0))))
    return None if ok else "contacts at %.6f: want a-b depth %.6f, got %s" % (d, 2 - d, json.dumps(body)[:200])


def check_shape(body):
    ok = (isinstance(body, dict) and body.get("shape") == BOX
          and all(close(g, w) for g, w in zip(body.get("pose", {}).get("position", []), BOX_AT)))
    return None if ok else "shape s: got %s" % json.dumps(body)[:200]


def check_health(body):
    return None if body == {"status": "ok"} else "healthz: got %r" % (body,)


def pick_distance(rng):
    """Away from 2, where touching would hang on the last bit."""
    d = rng.uniform(1.2, 1.8)
    return d + 1.0 if rng.random() < 0.5 else d


class Durable:
    """What a victim's world must hold after a restart: b where the last
    acknowledged move put it, or where a later move whose answer was lost
    put it."""

    def __init__(self):
        self.acked = 3.0
        self.unsure = []

    def sent(self, d):
        self.unsure.append(d)

    def acknowledged(self, d):
        self.acked, self.unsure = d, []

    def allowed(self):
        return [self.acked] + self.unsure


class Victim:
    """One authorised client: call(method, path, body) -> (status, body)
    over its transport; run() loops its mix until the deadline."""

    rec = None
    deadline = 0.0
    sends_large = False

    def __init__(self, kind, index, daemon):
        self.kind, self.world = kind, "v-%s-%d" % (kind, index)
        self.daemon = daemon
        self.rng = random.Random(hash(self.world) & 0xFFFF)
        self.durable = Durable()

    def step(self, op, method, path, body, check):
        if time.monotonic() >= self.deadline:
            return False
        clock = Clock()
        try:
            status, got = self.call(method, path, body)
            problem = check(got) if status == 200 else "%s %s: status %s %s" % (
                method, path, status, json.dumps(got)[:200])
        except (OSError, http.client.HTTPException, ValueError) as e:
            self.reset()
            status, problem = None, "%s %s: %s: %s" % (method, path, type(e).__name__, e)
        self.rec.client("%s/%s" % (self.kind, op), clock.started, clock.latency(), problem)
        return status == 200 and not problem

    def large(self):
        """A body of about LARGE bytes, as a client's tick may be: a budget
        of request bytes (--max-buffered) squatted by others would shed it."""
        ds = [pick_distance(self.rng) for _ in range(LARGE // 120)]
        body = {"pairs": [{"a": {"shape": sphere(1)}, "b": {"shape": sphere(1), "pose": {"position": [d, 0.0, 0.0]}}}
                          for d in ds]}
        self.step("pairs %d KB" % (LARGE >> 10), "POST", "/v1/pairs", body, lambda b: check_pairs(b, ds))

    def round(self):
        w = "/v1/worlds/" + self.world
        d = pick_distance(self.rng)
        self.step("healthz", "GET", "/healthz", None, check_health)
        if self.sends_large:
            self.large()
        self.step("pair", "POST", "/v1/pair", {"a": {"shape": sphere(1)}, "b": {
            "shape": sphere(1), "pose": {"position": [d, 0.0, 0.0]}}}, lambda b: check_pair(b, d))
        self.durable.sent(d)
        if self.step("batch", "POST", w + "/batch", {"move": [{"id": "b", "pose": {"position": [d, 0.0, 0.0]}}]},
                     check_batch):
            self.durable.acknowledged(d)
            self.step("contacts", "POST", w + "/contacts", {}, lambda b: check_contacts(b, d))
        self.step("shape", "GET", w + "/shapes/s", None, check_shape)

    def run(self):
        while time.monotonic() < self.deadline:
            self.round()
            time.sleep(PAUSE)
        self.reset()


class HttpVictim(Victim):
    """Requests on one keep-alive connection, reopened after a failure."""

    conn = None

    def call(self, method, path, body):
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.daemon.http_port, timeout=IO_TIMEOUT,
                                                   source_address=SOURCE)
        headers = self.daemon.auth()
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=headers)
        r = self.conn.getresponse()
        raw = r.read()
        return r.status, json.loads(raw) if raw else None

    def reset(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class SourcedStream(StreamClient):
    """The e2e tests' stream client, connected from SOURCE."""

    def __init__(self, port, encoding):
        self.encoding = encoding
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=IO_TIMEOUT, source_address=SOURCE)
        self.buf = b""


class StreamVictim(Victim):
    """Requests on one stream connection, one at a time."""

    sc = None
    next_id = 0

    pad = 0

    def large(self):
        """A line of about LARGE bytes with a short answer (a long one
        would be shed while others hold --max-stream-reply-total): a pair
        test padded with a header the daemon ignores."""
        d = pick_distance(self.rng)
        self.pad = LARGE
        try:
            self.step("pair padded %d KB" % (LARGE >> 10), "POST", "/v1/pair", {"a": {"shape": sphere(1)}, "b": {
                "shape": sphere(1), "pose": {"position": [d, 0.0, 0.0]}}}, lambda b: check_pair(b, d))
        finally:
            self.pad = 0

    def call(self, method, path, body):
        if self.sc is None:
            self.sc = SourcedStream(self.daemon.stream_port, self.kind.split("-")[1])
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "path": path, "headers": self.daemon.auth()}
        if self.pad:
            message["headers"] = dict(message["headers"], **{"X-Pad": "p" * self.pad})
        if body is not None:
            message["body"] = body
        self.sc.send(message)
        reply = self.sc.read_line()
        if reply is None:
            raise ConnectionResetError("the stream closed")
        if reply.get("id") != self.next_id:
            raise ValueError("reply id %r to request %d" % (reply.get("id"), self.next_id))
        return reply.get("status"), reply.get("body")

    def reset(self):
        if self.sc is not None:
            self.sc.close()
            self.sc = None


def probe(daemon, rec, deadline):
    """A load balancer's probe: /healthz on a fresh connection, 4 a second."""
    while time.monotonic() < deadline:
        clock = Clock()
        try:
            status, body = daemon.request("GET", "/healthz", timeout=IO_TIMEOUT, source=SOURCE)
            problem = check_health(body) if status == 200 else "healthz: status %s" % status
        except (OSError, http.client.HTTPException) as e:
            problem = "healthz: %s: %s" % (type(e).__name__, e)
        rec.client("probe/healthz", clock.started, clock.latency(), problem)
        time.sleep(PROBE_EVERY)


def make(daemon):
    """Every victim, their worlds not yet created."""
    out = []
    for kind, n in KINDS:
        cls = HttpVictim if kind == "http" else StreamVictim
        out.extend(cls(kind, i, daemon) for i in range(n))
    for v in out:  # the first of each transport
        v.sends_large = v.world in ("v-http-0", "v-stream-json-0")
    return out


def setup(daemon, victims):
    """Creates each victim's world; raises when the daemon refuses."""
    for v in victims:
        status, body = daemon.request("PUT", "/v1/worlds/" + v.world, world_body())
        if status != 201:
            raise RuntimeError("creating %s: %s %s" % (v.world, status, body))


def run(daemon, rec, deadline, victims):
    """Runs the victims and the probe until deadline; returns what each
    world must hold after a restart: {world: [allowed x of b]}."""
    for v in victims:
        v.rec, v.deadline = rec, deadline
    threads = [threading.Thread(target=v.run) for v in victims]
    threads.append(threading.Thread(target=probe, args=(daemon, rec, deadline)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {v.world: v.durable.allowed() for v in victims}


def check_restored(daemon, expected):
    """After a restart, the problems with the victims' worlds (none: [])."""
    problems = []
    for world, allowed in sorted(expected.items()):
        try:
            status, body = daemon.request("GET", "/v1/worlds/%s/shapes/b" % world)
        except (OSError, http.client.HTTPException) as e:
            problems.append("%s: %s" % (world, e))
            continue
        x = body.get("pose", {}).get("position", [None])[0] if isinstance(body, dict) else None
        if status != 200 or not any(close(x, a) for a in allowed):
            problems.append("%s: b at %s after the restart (status %s), acknowledged %s"
                            % (world, x, status, allowed))
    return problems

