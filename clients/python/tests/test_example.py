"""examples/tick.py, run as a user runs it, with small sizes, in both encodings."""
import os
import re
import subprocess
import sys

from support import REPO, Daemon, per_encoding

D = None
TOKEN = "tick-token"


def setUpModule():
    global D
    D = Daemon("--token", TOKEN)


def tearDownModule():
    status = D.stop()
    if status != 0:
        raise AssertionError("collisiond exited with %s: %s" % (status, D.log_text()))


class Tick:
    ENCODING = None

    def run_tick(self, *extra):
        argv = [sys.executable, os.path.join(REPO, "examples", "tick.py"), "--port", str(D.port),
                "--boxes", "300", "--ticks", "12", "--encoding", self.ENCODING,
                "--world", "tick-" + self.ENCODING] + list(extra)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if "dist-packages" in p))
        return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)

    def test_runs_its_ticks_and_sums_up(self):
        out = self.run_tick("--token", TOKEN)
        self.assertEqual(out.returncode, 0, out.stderr)
        last = out.stdout.strip().splitlines()[-1]
        self.assertRegex(last, r"^summary: 12 ticks of 300 boxes over %s: p50 [\d.]+ ms, .* missed \d+ ticks$"
                         % self.ENCODING)
        # One progress line for the 12 ticks, with pairs found and rays cast.
        m = re.search(r"ticks 1-12: .*; (\d+) touching pairs, (\d+)/8 rays hit", out.stdout)
        self.assertIsNotNone(m, out.stdout)
        self.assertGreater(int(m.group(1)), 0)

    def test_wrong_token_fails(self):
        out = self.run_tick("--token", "wrong")
        self.assertEqual(out.returncode, 1)
        self.assertIn("401", out.stderr)


per_encoding(globals(), Tick)
