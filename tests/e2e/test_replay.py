"""Record and replay (issue 6): a daemon started with --record writes every
request it answers, over HTTP and the stream, with its response; `collisiond
replay FILE --against URL` re-sends them to a fresh daemon and reports each
response that differs. The oracles: the statuses the session itself saw, the
token the session used (never in the file), and a response tampered by hand
at a known byte."""

import base64
import json
import os
import socket
import subprocess
import tempfile
import threading
import time
import unittest

import harness
import mp
from harness import Daemon, once, strict_msgpack
from wire import box, pose, sphere

TOKEN = "rec-T0ken-9f3a"
REPLAY_TIMEOUT = 60


def drive_session(d):
    """Every endpoint, every shape type, errors and both transports, in the
    run's encoding; returns what the client saw, in order: (transport,
    method, path, status), and each request's (body format, response
    format), "msgpack" or None for JSON or no body."""
    seen, formats = [], []

    def http(method, path, body=None, data=None, token=True, headers=None, expect=None):
        h = {"Authorization": "Bearer " + TOKEN} if token else {}
        h.update(headers or {})
        r = d.request(method, path, body, data=data, headers=h)
        if expect is not None and r.status != expect:
            raise AssertionError("%s %s: expected %d, got %s" % (method, path, expect, r.describe()))
        seen.append(("http", method, path.split("?")[0], r.status))
        if data is not None:
            sent = harness.format_of(h.get("Content-Type", "application/json"))
        else:
            sent = harness.ENCODING if body is not None else None
        formats.append((sent if sent != "json" else None, "msgpack" if r.format == "msgpack" else None))
        return r

    w = "/v1/worlds/arena"
    http("GET", "/healthz", token=False, expect=200)
    http("GET", "/readyz", token=False, expect=200)
    http("GET", "/v1/worlds", token=False, expect=401)
    http("GET", "/v1/worlds", token=False, headers={"Authorization": "Bearer wrong"}, expect=401)
    http("POST", "/v1/pair", {"a": {"shape": sphere(1)}, "b": {"shape": sphere(1.5), "pose": pose([3, 0, 0])}},
         expect=200)
    http("POST", "/v1/pairs", {"pairs": [
        {"a": {"shape": box(1, 1, 1)},
         "b": {"shape": {"type": "capsule", "radius": 0.5, "half_height": 1}, "pose": pose([0, 2, 0])}},
        {"a": {"shape": {"type": "convex", "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]}},
         "b": {"shape": {"type": "triangle", "vertices": [[0, 0.5, -1], [0, 0.5, 1], [1, 0.5, 0]]}}}]}, expect=200)
    http("PUT", w, {"skin": 0.02}, expect=201)
    shapes = {
        "ground": {"shape": {"type": "plane", "normal": [0, 1, 0], "offset": 0}, "layer": 4},
        "crate": {"shape": box(0.5, 0.5, 0.5), "pose": pose([0.8, 0.5, 0]), "layer": 2},
        "ball": {"shape": sphere(0.5), "pose": pose([0, 0.45, 0]), "velocity": [2, 0, 0]},
        "pill": {"shape": {"type": "capsule", "radius": 0.4, "half_height": 0.5}, "pose": pose([-1, 0.9, 0])},
        "rock": {"shape": {"type": "convex", "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.2, 0.2, 0.2]],
                           "radius": 0.05}, "pose": pose([2, 0, 2])},
        "tri": {"shape": {"type": "triangle", "vertices": [[3, 0, 0], [4, 0, 0], [3, 1, 0]]}},
        "terrain": {"shape": {"type": "mesh", "vertices": [[-10, -0.1, -10], [10, -0.1, -10], [10, -0.1, 10],
                                                            [-10, -0.1, 10]],
                              "triangles": [[0, 1, 2], [0, 2, 3]]}},
    }
    for sid, body in shapes.items():
        http("PUT", w + "/shapes/" + sid, body, expect=201)
    http("PUT", w + "/shapes/crate", shapes["crate"], expect=200)
    http("POST", w + "/batch", {
        "upsert": [{"id": "bullet", "shape": sphere(0.05), "pose": pose([-6, 1, 0]), "velocity": [400, 0, 0],
                    "layer": 8}],
        "move": [{"id": "pill", "pose": pose([-0.6, 0.9, 0], rotation=[0, 0.3826834, 0, 0.9238795])}],
        "remove": ["tri"]}, expect=200)
    http("GET", w + "/shapes/crate", expect=200)
    http("GET", w + "?pretty=1", headers={"Accept": "application/json"}, expect=200)  # pretty is JSON text
    http("GET", "/v1/worlds", expect=200)
    http("GET", w + "/pairs", expect=200)
    http("POST", w + "/contacts", {"dt": 0.0166}, expect=200)
    http("POST", w + "/contacts", {"ids": ["ball"]}, expect=200)
    http("POST", w + "/raycast", {"rays": [{"origin": [-5, 0.9, 0], "direction": [1, 0, 0]},
                                           {"origin": [0, 10, 0], "direction": [0, -1, 0], "mask": 4}]}, expect=200)
    http("POST", w + "/raycast", {"rays": [{"origin": [0.8, 10, 0], "direction": [0, -1, 0]}], "all": True},
         expect=200)
    http("POST", w + "/sweep", {"shape": sphere(0.25), "pose": pose([-5, 0.5, 0]), "translation": [10, 0, 0]},
         expect=200)
    http("POST", w + "/overlap", {"shape": sphere(1), "pose": pose([0.5, 0.5, 0])}, expect=200)
    exported = http("GET", w + "/export", expect=200)
    http("PUT", "/v1/worlds/arena-copy", data=exported.raw, headers={"Content-Type": exported.content_type},
         expect=201)
    http("GET", "/metrics", expect=200)
    http("GET", "/metrics/fallbacks?limit=5", expect=200)
    http("GET", "/v1/openapi.json", expect=200)
    # errors
    http("POST", "/v1/pair", {"a": {"shape": box(1, -1, 1)}, "b": {"shape": sphere(1)}}, expect=400)
    http("POST", "/v1/pair", data=b"\xff\xfe{", headers={"X-Request-Id": "bad-bytes"}, expect=400)
    http("POST", "/v1/pair", data='{"a": 1,', expect=400)
    http("PUT", w + "/shapes/floor", {"shape": {"type": "plane", "normal": [0, 1, 0], "offset": 0},
                                      "velocity": [1, 0, 0]}, expect=400)
    http("POST", w + "/batch", {"remove": ["nobody"]}, expect=400)
    http("GET", "/v1/worlds/nope", expect=404)
    http("GET", w + "/shapes/none", expect=404)
    http("GET", "/v1/nothing", expect=404)
    http("DELETE", "/v1/pair", expect=405)
    # the stream transport, pipelined; ?pretty is ignored there
    s = d.stream()
    try:
        hdr = {"Authorization": "Bearer " + TOKEN}
        lines = [
            {"id": 1, "method": "POST", "path": w + "/batch", "headers": hdr,
             "body": {"move": [{"id": "ball", "pose": pose([0.1, 0.45, 0])}]}},
            {"id": 2, "method": "POST", "path": w + "/contacts?pretty=1",
             "headers": dict(hdr, **{"X-Request-Id": "tick-2"}), "body": {"dt": 0.0166}},
            {"id": 3, "method": "GET", "path": w + "/shapes/ball"},
        ]
        s.send(*lines)
        for line, want in zip(lines, (200, 200, 401)):
            reply = s.read_line()
            if reply["status"] != want:
                raise AssertionError("stream %s: expected %d, got %s" % (line["path"], want, reply))
            seen.append(("stream", line["method"], line["path"].split("?")[0], reply["status"]))
            # a stream request's formats are its connection's, body or not
            msgpack = "msgpack" if harness.ENCODING == "msgpack" else None
            formats.append((msgpack, msgpack))
    finally:
        s.close()
    http("DELETE", w + "/shapes/ball", expect=204)
    http("DELETE", "/v1/worlds/arena-copy", expect=204)
    http("GET", "/v1/worlds", expect=200)
    return seen, formats


def record_value(rec, key):
    """A record's "body" or "response" as the value sent or answered: a
    base64 member decoded (to bytes, or to its value when its format
    member says MessagePack), any other as it is."""
    v = rec[key]
    if key not in rec.get("base64", []):
        return v
    raw = base64.b64decode(v)
    if rec.get("body_format" if key == "body" else "response_format") == "msgpack":
        return strict_msgpack(raw)
    return raw


def replay(path, url, *extra, token=TOKEN):
    argv = [harness.DAEMON, "replay", path, "--against", url] + list(extra)
    if token:
        argv += ["--token", token]
    return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=REPLAY_TIMEOUT)


def summary(proc):
    lines = proc.stdout.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""


class RecordReplay(unittest.TestCase):
    """One recorded session, replayed against fresh daemons."""

    @classmethod
    def setUpClass(cls):
        tmp = tempfile.TemporaryDirectory(prefix="collisiond-replay-")
        cls.addClassCleanup(tmp.cleanup)
        cls.dir = tmp.name
        cls.recording = os.path.join(cls.dir, "session.jsonl")
        d = Daemon(["--token", TOKEN, "--record", cls.recording])
        cls.addClassCleanup(d.cleanup)
        d.start()
        try:
            cls.seen, cls.formats = drive_session(d)
        finally:
            rc = d.stop()
        if rc != 0:
            raise AssertionError("the recording daemon exited with %s: %s" % (rc, d.log_tail()))
        with open(cls.recording, "rb") as f:
            cls.raw = f.read()
        cls.lines = cls.raw.splitlines()

    def against_fresh_daemon(self, path, *extra, token=TOKEN):
        """Runs the replay of path against a new daemon; returns the process."""
        d = Daemon(["--token", TOKEN])
        self.addCleanup(d.cleanup)
        d.start()
        try:
            started = time.monotonic()
            proc = replay(path, "http://127.0.0.1:%d" % d.http_port, *extra, token=token)
            self.took = time.monotonic() - started
        finally:
            rc = d.stop()
        self.assertEqual(rc, 0, d.log_tail())
        return proc

    def tampered(self, name, edits):
        """A copy of the recording with edits {line index: new line bytes}."""
        lines = list(self.lines)
        for i, line in edits.items():
            lines[i] = line
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(b"".join(line + b"\n" for line in lines))
        return path

    def index_of(self, method, path_suffix, nth=0):
        found = [i for i, line in enumerate(self.lines)
                 if json.loads(line)["method"] == method and json.loads(line)["path"].endswith(path_suffix)]
        return found[nth]

    def test_every_request_is_recorded_in_order(self):
        records = [json.loads(line) for line in self.lines]
        self.assertEqual(len(records), len(self.seen))
        for i, (rec, (transport, method, path, status)) in enumerate(zip(records, self.seen)):
            with self.subTest(seq=i + 1, path=path):
                self.assertEqual(rec["seq"], i + 1)
                self.assertEqual((rec["transport"], rec["method"], rec["path"], rec["status"]),
                                 (transport, method, path, status))
                self.assertEqual(set(rec) - {"base64", "accept", "body_format", "response_format"},
                                 {"seq", "time", "transport", "method", "path", "query", "request_id",
                                  "authorization", "body", "status", "duration_us", "response"})
                self.assertIsInstance(rec["duration_us"], int)
                self.assertGreaterEqual(rec["duration_us"], 0)
                # MessagePack is named; JSON, the default, is not
                body_format, response_format = self.formats[i]
                self.assertEqual(rec.get("body_format"), body_format, rec)
                self.assertEqual(rec.get("response_format"), response_format, rec)
                if response_format:
                    self.assertEqual(rec.get("accept"), "msgpack", rec)
        # bodies are embedded as sent, responses as answered
        batch = records[self.index_of("POST", "/arena/batch")]
        self.assertEqual(record_value(batch, "body")["remove"], ["tri"])
        self.assertEqual(record_value(batch, "response"), {"upserted": 1, "moved": 1, "removed": 1, "shapes": 7})
        bad = [r for r in records if r["request_id"] == "bad-bytes"][0]
        self.assertEqual(bad["base64"], ["body"])
        self.assertEqual(bad["body"], "//57")  # base64 of ff fe 7b
        pretty = [r for r in records if r["query"] == "pretty=1" and r["transport"] == "http"][0]
        self.assertIsInstance(pretty["response"], str)
        self.assertIn("\n  \"name\": \"arena\"", pretty["response"])
        stream = [r for r in records if r["transport"] == "stream"]
        self.assertEqual([r["request_id"] for r in stream][1], "tick-2")
        self.assertEqual([r["authorization"] for r in stream], ["redacted", "redacted", None])
        deleted = [r for r in records if r["method"] == "DELETE" and r["status"] == 204][0]
        self.assertIsNone(deleted["response"])
        self.assertIsNone(deleted["body"])

    def test_the_token_is_never_written(self):
        self.assertNotIn(TOKEN.encode(), self.raw)
        auth = [json.loads(line)["authorization"] for line in self.lines]
        self.assertEqual(set(auth), {None, "redacted"})
        self.assertEqual(auth[:4], [None, None, None, "redacted"])

    def test_replay_reproduces_every_response(self):
        proc = self.against_fresh_daemon(self.recording)
        self.assertEqual(proc.returncode, 0, proc.stdout.decode() + proc.stderr.decode())
        self.assertEqual(summary(proc), "replayed %d, differing 0" % len(self.lines))
        self.assertLess(self.took, 10.0, "a replay should take seconds")

    def tamper_contacts(self):
        """The contacts record with its stats.broadphase_pairs count
        changed by hand: (its index, the new line, the byte of the response
        changed, what the replay must report)."""
        i = self.index_of("POST", "/arena/contacts")
        line = self.lines[i]
        rec = json.loads(line)
        if rec.get("response_format") == "msgpack":
            response = base64.b64decode(rec["response"])
            key = b"\xb0broadphase_pairs"  # the key as a fixstr of 16 bytes
            at = response.index(key) + len(key)
            self.assertLess(response[at], 10, "broadphase_pairs should be a small fixint")
            changed = response[:at] + bytes([(response[at] + 1) % 10]) + response[at + 1:]
            new = line.replace(rec["response"].encode(), base64.b64encode(changed))
            return i, new, "body (MessagePack, compared as values): first difference at /stats/broadphase_pairs " \
                           "(byte %d" % at
        start = line.index(b'"response":') + len(b'"response":')
        response = line[start:-1]  # raw JSON up to the record's closing brace
        self.assertEqual(json.loads(response)["stats"], rec["response"]["stats"])
        at = response.index(b'"broadphase_pairs":') + len(b'"broadphase_pairs":')
        digit = response[at:at + 1]
        other = str((int(digit) + 1) % 10).encode()
        return i, line[:start + at] + other + line[start + at + 1:], "body: first difference at byte %d;" % at

    def test_a_tampered_response_is_the_one_difference(self):
        i, line, report = self.tamper_contacts()
        path = self.tampered("tampered.jsonl", {i: line})
        proc = self.against_fresh_daemon(path)
        out = proc.stdout.decode()
        self.assertEqual(proc.returncode, 1, out + proc.stderr.decode())
        self.assertEqual(summary(proc), "replayed %d, differing 1" % len(self.lines))
        self.assertIn("seq %d: POST /v1/worlds/arena/contacts" % (i + 1), out)
        self.assertIn(report, out)
        self.assertNotIn("status:", out)
        self.assertEqual(out.count("seq "), 1, out)

    def test_stop_on_first_and_a_changed_status(self):
        i = self.index_of("GET", "/v1/worlds", nth=2)  # the first authorised list
        j = self.index_of("DELETE", "/shapes/ball")
        rec_i = self.lines[i].replace(b'"status":200', b'"status":202')
        rec_j = self.lines[j].replace(b'"status":204', b'"status":200')
        path = self.tampered("two.jsonl", {i: rec_i, j: rec_j})
        proc = self.against_fresh_daemon(path, "--stop-on-first")
        out = proc.stdout.decode()
        self.assertEqual(proc.returncode, 1, out)
        self.assertEqual(summary(proc), "replayed %d, differing 1" % (i + 1))
        self.assertIn("status: expected 202, got 200", out)
        proc = self.against_fresh_daemon(path)
        self.assertEqual(summary(proc), "replayed %d, differing 2" % len(self.lines))

    def test_strict_compares_metrics(self):
        proc = self.against_fresh_daemon(self.recording, "--strict")
        out = proc.stdout.decode()
        self.assertEqual(proc.returncode, 1, out)
        reported = [line.split(" (request id")[0].split(": ", 1)[1] for line in out.splitlines()
                    if line.startswith("seq ")]
        self.assertIn("GET /metrics", reported)
        # nothing else varies (no timing is written in other response bodies)
        self.assertLessEqual(set(reported), {"GET /metrics", "GET /metrics/fallbacks?limit=5"}, out)

    def test_without_the_token_authorised_requests_are_refused(self):
        proc = self.against_fresh_daemon(self.recording, token=None)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("status: expected 201, got 401", proc.stdout.decode())


def drive_msgpack_session(d):
    """Requests in MessagePack, JSON asking for MessagePack, and one plain
    JSON request; returns [(body bytes sent or None, asked for MessagePack,
    status)] in order."""
    seen = []
    auth = {"Authorization": "Bearer " + TOKEN}

    def send(method, path, value=None, accept=True, json_body=None, expect=200):
        if json_body is not None:
            h = dict(auth, **({"Accept": mp.MEDIA} if accept else {}))
            r = d.request(method, path, json_body, headers=h)
            sent = json.dumps(json_body, separators=(",", ":")).encode()
        else:
            r = mp.request(d, method, path, value, accept=accept, headers=auth)
            sent = None if value is None else mp.packb(value)
        if r.status != expect:
            raise AssertionError("%s %s: expected %d, got %s" % (method, path, expect, r.describe()))
        seen.append((sent, accept, r.status, json_body is not None))
        return r

    w = "/v1/worlds/mpw"
    send("POST", "/v1/pair", {"a": {"shape": sphere(1)}, "b": {"shape": sphere(1.5), "pose": pose([3, 0, 0])}})
    send("PUT", w, {"skin": 0.02}, expect=201)
    send("PUT", w + "/shapes/ball", {"shape": sphere(0.5), "pose": pose([0, 0.45, 0]), "velocity": [2, 0, 0]},
         expect=201)
    send("PUT", w + "/shapes/crate", {"shape": box(0.5, 0.5, 0.5), "pose": pose([0.8, 0.5, 0])}, expect=201)
    send("POST", w + "/contacts", json_body={"dt": 0.0166})
    send("POST", "/v1/pair", {"a": {"shape": box(1, -1, 1)}, "b": {"shape": sphere(1)}}, expect=400)
    send("POST", w + "/contacts", json_body={"dt": 0.0166}, accept=False)
    send("GET", w + "/shapes/ball")
    return seen


@once("sends MessagePack and JSON itself, whatever the run's encoding")
class RecordReplayMsgpack(unittest.TestCase):
    """A session in MessagePack: recorded with its formats, replayed with
    them, and its answers compared as values."""

    @classmethod
    def setUpClass(cls):
        tmp = tempfile.TemporaryDirectory(prefix="collisiond-replay-mp-")
        cls.addClassCleanup(tmp.cleanup)
        cls.dir = tmp.name
        cls.recording = os.path.join(cls.dir, "session.jsonl")
        d = Daemon(["--token", TOKEN, "--record", cls.recording])
        cls.addClassCleanup(d.cleanup)
        d.start()
        try:
            cls.seen = drive_msgpack_session(d)
        finally:
            rc = d.stop()
        if rc != 0:
            raise AssertionError("the recording daemon exited with %s: %s" % (rc, d.log_tail()))
        with open(cls.recording, "rb") as f:
            cls.lines = f.read().splitlines()

    against_fresh_daemon = RecordReplay.against_fresh_daemon
    tampered = RecordReplay.tampered

    def test_formats_are_recorded(self):
        records = [json.loads(line) for line in self.lines]
        self.assertEqual(len(records), len(self.seen))
        for i, (rec, (sent, accept, status, json_body)) in enumerate(zip(records, self.seen)):
            with self.subTest(seq=i + 1, path=rec["path"]):
                self.assertEqual(rec["status"], status)
                binary_body = sent is not None and not json_body
                self.assertEqual(rec.get("body_format"), "msgpack" if binary_body else None)
                self.assertEqual(rec.get("accept"), "msgpack" if accept else None)
                self.assertEqual(rec.get("response_format"), "msgpack" if accept else None)
                if binary_body:
                    self.assertEqual(base64.b64decode(rec["body"]), sent)
                elif sent is not None:
                    self.assertEqual(rec["body"], json.loads(sent))
                if accept:
                    self.assertIn("response", rec["base64"])
                    answer = mp.unpackb(base64.b64decode(rec["response"]))
                    self.assertIsInstance(answer, dict)
                else:
                    self.assertIsInstance(rec["response"], dict)
        pair = mp.unpackb(base64.b64decode(records[0]["response"]))
        self.assertEqual((pair["overlap"], pair["distance"]), (False, 0.5))
        problem = mp.unpackb(base64.b64decode(records[5]["response"]))
        self.assertEqual((problem["status"], problem["type"]), (400, "urn:collisiond:problem:invalid-value"))

    def test_replay_reproduces_every_answer(self):
        proc = self.against_fresh_daemon(self.recording)
        self.assertEqual(proc.returncode, 0, proc.stdout.decode() + proc.stderr.decode())
        self.assertEqual(summary(proc), "replayed %d, differing 0" % len(self.lines))

    def recorded_response_replaced(self, i, answer, **pack):
        """Line i with its response replaced by answer packed with pack."""
        rec = json.loads(self.lines[i])
        rec["response"] = base64.b64encode(msgpack_packb(answer, **pack)).decode()
        return json.dumps(rec, separators=(",", ":")).encode()

    def test_another_encoding_of_the_same_values_is_no_difference(self):
        rec = json.loads(self.lines[0])
        answer = mp.unpackb(base64.b64decode(rec["response"]))
        # every float of this answer (0, 0.5, 1, 1.5, 2) is a float32 exactly
        line = self.recorded_response_replaced(0, answer, use_single_float=True)
        self.assertNotEqual(line, self.lines[0])
        proc = self.against_fresh_daemon(self.tampered("float32.jsonl", {0: line}))
        self.assertEqual(proc.returncode, 0, proc.stdout.decode() + proc.stderr.decode())
        self.assertEqual(summary(proc), "replayed %d, differing 0" % len(self.lines))

    def test_a_changed_value_is_reported_where_it_is(self):
        rec = json.loads(self.lines[0])
        answer = mp.unpackb(base64.b64decode(rec["response"]))
        answer["witness"]["b"][0] = 2.25
        line = self.recorded_response_replaced(0, answer)
        proc = self.against_fresh_daemon(self.tampered("changed.jsonl", {0: line}))
        out = proc.stdout.decode()
        self.assertEqual(proc.returncode, 1, out + proc.stderr.decode())
        self.assertEqual(summary(proc), "replayed %d, differing 1" % len(self.lines))
        self.assertIn("seq 1: POST /v1/pair", out)
        self.assertIn("body (MessagePack, compared as values): first difference at /witness/b/0 (byte ", out)
        self.assertIn("expected: 2.25\n", out)
        self.assertIn("got:      1.5\n", out)

    def test_a_count_beyond_the_bytes_is_compared_as_bytes(self):
        """A recorded answer whose array32 header claims 2^32 - 1 elements
        in 5 bytes (msgpuck's own check takes it as valid) differs, and is
        never walked: the replay reports it and exits 1."""
        for forged in (b"\xdd\xff\xff\xff\xff", b"\x92\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff"):
            with self.subTest(forged=forged.hex()):
                rec = json.loads(self.lines[0])
                rec["response"] = base64.b64encode(forged).decode()
                line = json.dumps(rec, separators=(",", ":")).encode()
                proc = self.against_fresh_daemon(self.tampered("count-%s.jsonl" % forged.hex(), {0: line}))
                out = proc.stdout.decode()
                self.assertEqual(proc.returncode, 1, out + proc.stderr.decode())
                self.assertEqual(summary(proc), "replayed %d, differing 1" % len(self.lines))
                self.assertIn("seq 1: POST /v1/pair", out)


def msgpack_packb(value, **options):
    return mp.msgpack.packb(value, use_bin_type=True, **options)


class ReplayErrors(unittest.TestCase):
    """Usage, file and connection errors exit 2."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="collisiond-replay-")
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name

    def run_replay(self, *args):
        return subprocess.run([harness.DAEMON, "replay"] + list(args), stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=REPLAY_TIMEOUT)

    def closed_port(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        return port

    def test_usage(self):
        rec = os.path.join(self.dir, "r.jsonl")
        with open(rec, "w") as f:
            f.write('{"seq":1,"method":"GET","path":"/healthz","status":200,"response":{"status":"ok"}}\n')
        self.assertEqual(self.run_replay().returncode, 2)
        self.assertEqual(self.run_replay(rec).returncode, 2)
        self.assertEqual(self.run_replay(rec, "--against", "ftp://127.0.0.1:1").returncode, 2)
        self.assertEqual(self.run_replay(rec, "--against", "http://127.0.0.1:1", "--bogus").returncode, 2)
        self.assertEqual(self.run_replay(rec, rec, "--against", "http://127.0.0.1:1").returncode, 2)
        self.assertEqual(self.run_replay("--help").returncode, 0)
        missing = self.run_replay(os.path.join(self.dir, "nope"), "--against", "http://127.0.0.1:1")
        self.assertEqual(missing.returncode, 2)
        self.assertIn(b"cannot open", missing.stderr)
        refused = self.run_replay(rec, "--against", "http://127.0.0.1:%d" % self.closed_port())
        self.assertEqual(refused.returncode, 2)
        self.assertIn(b"cannot connect", refused.stderr)

    def test_a_line_that_is_not_a_record(self):
        rec = os.path.join(self.dir, "bad.jsonl")
        with open(rec, "w") as f:
            f.write('{"seq":1,"method":"GET","path":"/healthz","status":200}\n\nnot json\n')
        d = Daemon()
        self.addCleanup(d.cleanup)
        d.start()
        try:
            proc = self.run_replay(rec, "--against=http://127.0.0.1:%d" % d.http_port)
        finally:
            d.stop()
        self.assertEqual(proc.returncode, 2)
        self.assertIn(b"bad.jsonl:3: not a record", proc.stderr)
        self.assertIn(b"replayed 1, differing 1", proc.stdout)  # the first one had an empty body recorded


class Listener:
    """A plain HTTP/1.1 server on a loopback socket: keeps the bytes of
    every request it reads and answers each 200 with {"status":"ok"}, so a
    test sees exactly what the replay put on the wire."""

    ANSWER = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{"status":"ok"}'

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.05)  # to see self.done: closing the socket does not wake accept()
        self.port = self.sock.getsockname()[1]
        self.requests = []  # the bytes of each request, head and body
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(REPLAY_TIMEOUT)
                self.converse(conn)

    def converse(self, conn):
        buf = b""
        while True:
            end = buf.find(b"\r\n\r\n")
            if end >= 0:
                head = buf[:end + 4]
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                if len(buf) >= len(head) + length:
                    self.requests.append(buf[:len(head) + length])
                    buf = buf[len(head) + length:]
                    conn.sendall(self.ANSWER)
                    continue
            try:
                chunk = conn.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk

    def close(self):
        self.done.set()
        self.thread.join(10)
        self.sock.close()


@once("the recordings are written by hand; nothing is sent in the run's encoding")
class ReplayWire(unittest.TestCase):
    """What replay sends, seen by a plain socket listener: every field it
    takes from a record line keeps the server's rules, or the line is
    refused with its number before anything of it is sent."""

    GOOD = '{"seq":1,"method":"GET","path":"/healthz","request_id":"tick-1","status":200,"response":{"status":"ok"}}'

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="collisiond-replay-")
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name

    def replay_lines(self, name, lines, *extra):
        """Replays lines against a new listener; (process, requests received)."""
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write("".join(line + "\n" for line in lines))
        listener = Listener()
        try:
            proc = replay(path, "http://127.0.0.1:%d" % listener.port, *extra, token=None)
        finally:
            listener.close()
        return proc, listener.requests

    def test_a_refused_record_is_never_sent(self):
        cases = [
            ("injected-id.jsonl",
             '{"seq":2,"method":"GET","path":"/healthz","request_id":"a\\r\\nX-Injected: yes\\r\\nContent-Length: 0",'
             '"status":200,"response":{"status":"ok"}}',
             'the request id "a\\x0d\\x0aX-Injected: yes\\x0d\\x0aContent-Length: 0" has the byte 0x0D at offset 1'),
            ("spaced-id.jsonl", '{"seq":2,"method":"GET","path":"/healthz","request_id":"tick 2","status":200}',
             'the request id "tick 2" has the byte 0x20 at offset 4 (only [A-Za-z0-9._:-])'),
            ("twice.jsonl", '{"seq":2,"method":"GET","path":"/healthz","path":"/x","status":200}',
             'member "path" appears twice'),
            ("nul.jsonl", '{"seq":2,"method":"GET","path":"/healthz\\u0000/../metrics","status":200}',
             '"path" holds a NUL byte at offset 8'),
        ]
        for name, bad, why in cases:
            with self.subTest(case=name):
                proc, got = self.replay_lines(name, [self.GOOD, bad, self.GOOD])
                err = proc.stderr.decode("utf-8", "replace")
                self.assertEqual(proc.returncode, 2, proc.stdout.decode() + err)
                self.assertIn("%s:2: not a record: %s" % (name, why), err)
                self.assertEqual(len(got), 1, got)  # the first line only
                self.assertTrue(got[0].startswith(b"GET /healthz HTTP/1.1\r\n"), got[0])
                self.assertIn(b"\r\nX-Request-Id: tick-1\r\n", got[0])
                self.assertNotIn(b"X-Injected", b"".join(got))

    def test_a_token_with_a_control_character_is_refused(self):
        line = self.GOOD.replace('"status":200', '"authorization":"redacted","status":200')
        proc, got = self.replay_lines("auth.jsonl", [line], "--token", "t\r\nX-Injected: yes")
        self.assertEqual(proc.returncode, 2, proc.stdout.decode() + proc.stderr.decode())
        self.assertIn(b"the token holds a control character (byte 0x0D)", proc.stderr)
        self.assertEqual(got, [])
        proc, got = self.replay_lines("auth.jsonl", [line], "--token", "t0ken")
        self.assertEqual(proc.returncode, 0, proc.stdout.decode() + proc.stderr.decode())
        self.assertEqual(len(got), 1, got)
        self.assertIn(b"\r\nAuthorization: Bearer t0ken\r\n", got[0])


class RecordingFile(unittest.TestCase):
    """COLLISIOND_RECORD, and a recording that cannot be opened."""

    def test_environment_variable(self):
        tmp = tempfile.TemporaryDirectory(prefix="collisiond-replay-")
        self.addCleanup(tmp.cleanup)
        rec = os.path.join(tmp.name, "env.jsonl")
        d = Daemon(env={"COLLISIOND_RECORD": rec})
        self.addCleanup(d.cleanup)
        d.start()
        try:
            self.assertEqual(d.request("GET", "/healthz").status, 200)
        finally:
            self.assertEqual(d.stop(), 0)
        with open(rec) as f:
            records = [json.loads(line) for line in f]
        self.assertEqual([(r["seq"], r["path"], record_value(r, "response")) for r in records],
                         [(1, "/healthz", {"status": "ok"})])
        self.assertEqual(os.stat(rec).st_mode & 0o777, 0o600)

    def test_unwritable_recording_keeps_serving(self):
        d = Daemon(["--record", "/nonexistent-collisiond-dir/rec.jsonl"])
        self.addCleanup(d.cleanup)
        d.start()
        try:
            self.assertEqual(d.request("GET", "/healthz").status, 200)
            self.assertEqual(d.request("PUT", "/v1/worlds/w", {}).status, 201)
        finally:
            self.assertEqual(d.stop(), 0)
        self.assertIn("cannot record to /nonexistent-collisiond-dir/rec.jsonl", d.log_text())


if __name__ == "__main__":
    unittest.main()
