"""Hostile recordings (issue 25, item 5): every field replay takes from a
record line keeps what the server could have recorded, or the line is
refused with its number before anything of it is sent. Complements
test_replay.ReplayWire (request id, NUL, duplicate members): the method
must be one a route takes, unless the record holds the answer a method
without a route gets, and the path must be origin-form."""

import os
import tempfile
import unittest

from harness import once
from test_replay import Listener, replay

GOOD = '{"seq":1,"method":"GET","path":"/healthz","request_id":"tick-1","status":200,"response":{"status":"ok"}}'


@once("the recordings are written by hand; nothing is sent in the run's encoding")
class ReplayTargets(unittest.TestCase):

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="collisiond-replay-")
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name

    def replay_lines(self, name, lines):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write("".join(line + "\n" for line in lines))
        listener = Listener()
        try:
            proc = replay(path, "http://127.0.0.1:%d" % listener.port, token=None)
        finally:
            listener.close()
        return proc, listener.requests

    def test_forged_targets_are_refused(self):
        cases = [
            ("brew.jsonl", '{"seq":2,"method":"BREW","path":"/v1/worlds/victim","status":200}',
             'no route takes the method "BREW", yet status 200 was recorded'),
            ("patch.jsonl", '{"seq":2,"method":"PATCH","path":"/v1/worlds/victim","status":204}',
             'no route takes the method "PATCH", yet status 204 was recorded'),
            ("spaced.jsonl", '{"seq":2,"method":"DELETE /v1/worlds/victim HTTP/1.1\\r\\nX:","path":"/x",'
             '"status":200}', 'no route takes the method "DELETE /v1/worlds/victim HTTP/1.1\\x0d\\x0aX:"'),
            ("absolute.jsonl", '{"seq":2,"method":"GET","path":"http://elsewhere/v1/worlds","status":200}',
             'the path "http://elsewhere/v1/worlds" does not start with \'/\''),
            ("empty-path.jsonl", '{"seq":2,"method":"GET","path":"","status":404}',
             'the path "" does not start with \'/\''),
        ]
        for name, bad, why in cases:
            with self.subTest(case=name):
                proc, got = self.replay_lines(name, [GOOD, bad, GOOD])
                err = proc.stderr.decode("utf-8", "replace")
                self.assertEqual(proc.returncode, 2, proc.stdout.decode() + err)
                self.assertIn("%s:2: not a record: %s" % (name, why), err)
                self.assertEqual(len(got), 1, got)  # the first line only
                self.assertTrue(got[0].startswith(b"GET /healthz HTTP/1.1\r\n"), got[0])

    def test_what_the_server_records_still_replays(self):
        """A method no route takes, answered as the server answers it, and
        HEAD on a GET route are records the server writes: they replay."""
        lines = [GOOD,
                 '{"seq":2,"method":"BREW","path":"/v1/pair","status":405}',
                 '{"seq":3,"method":"PATCH","path":"/nowhere","status":404}',
                 '{"seq":4,"method":"HEAD","path":"/healthz","status":200}']
        proc, got = self.replay_lines("fine.jsonl", lines)
        self.assertIn(b"replayed 4", proc.stdout, proc.stderr)
        self.assertEqual([g.split(b" ", 1)[0] for g in got], [b"GET", b"BREW", b"PATCH", b"HEAD"])
